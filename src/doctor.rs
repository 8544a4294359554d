//! `ncugate doctor`: is this machine ready to gate? GPUs (name, compute
//! capability, memory, driver and CUDA version) through NVML, loaded at run
//! time so ncugate builds and runs where there is no driver; ncu,
//! compute-sanitizer and nvcc versions; whether ncu may read the performance
//! counters. Exit 0 when ncugate can profile here, 2 when not — never a panic.

use crate::format::format_value;
use crate::runner::process::{CommandSpec, Exit, Finished, ProcessRunner};
use crate::status::Outcome;
use nvml_wrapper::Nvml;
use std::time::Duration;

/// Prints the checks as they run (each may take a while); pass when
/// ncugate can profile here, error when not. `ncu` is the ncu to check
/// ([`crate::config::default_ncu`]).
pub fn run(ncu: &str, processes: &dyn ProcessRunner) -> Outcome {
    let mut ok = true;
    println!("ncugate doctor");
    ok &= gpus();
    for (tool, needed) in [(ncu, true), ("compute-sanitizer", false), ("nvcc", false)] {
        ok &= tool_version(tool, needed, processes);
    }
    ok &= counters();
    audit_library(processes);
    if ok {
        println!("\nready: ncugate can profile and gate on this machine");
        Outcome::Pass
    } else {
        println!(
            "\nnot ready: see the ✗ lines above (ncugate can still gate exported CSV files here)"
        );
        Outcome::Error
    }
}

/// A GPU the driver sees and an ncu that starts: enough for a trial run (`init`).
pub fn can_profile(ncu: &str, processes: &dyn ProcessRunner) -> bool {
    let gpu = Nvml::init()
        .and_then(|n| n.device_count())
        .is_ok_and(|n| n > 0);
    gpu && version(ncu, processes).exit.success()
}

/// `TOOL --version`, given a minute (a tool that hangs must not hang the doctor).
fn version(tool: &str, processes: &dyn ProcessRunner) -> Finished {
    let mut spec = CommandSpec::new(tool, ["--version"]);
    spec.timeout = Some(Duration::from_secs(60));
    processes.run(&spec, &mut |_| {})
}

fn gpus() -> bool {
    let nvml = match Nvml::init() {
        Ok(n) => n,
        Err(e) => {
            println!(
                "✗ GPU: none usable — the NVIDIA driver's NVML library could not be loaded ({e})"
            );
            println!(
                "    fix: run on a machine with an NVIDIA GPU and driver (`nvidia-smi` must work)"
            );
            return false;
        }
    };
    let driver = nvml.sys_driver_version().unwrap_or_else(|_| "?".into());
    let cuda = nvml
        .sys_cuda_driver_version()
        .map(|v| format!("{}.{}", v / 1000, (v % 1000) / 10))
        .unwrap_or_else(|_| "?".into());
    let count = nvml.device_count().unwrap_or(0);
    if count == 0 {
        println!("✗ GPU: the driver ({driver}) sees no GPU");
        return false;
    }
    println!("✓ driver {driver}, CUDA {cuda} (driver API), {count} GPU(s)");
    for i in 0..count {
        match nvml.device_by_index(i) {
            Ok(d) => {
                let name = d.name().unwrap_or_else(|_| "?".into());
                let cc = d
                    .cuda_compute_capability()
                    .map(|c| format!("{}.{}", c.major, c.minor))
                    .unwrap_or_else(|_| "?".into());
                let memory = d
                    .memory_info()
                    .map(|m| {
                        format!(
                            "{} total, {} free",
                            format_value(m.total as f64, "byte"),
                            format_value(m.free as f64, "byte")
                        )
                    })
                    .unwrap_or_else(|_| "?".into());
                println!("  GPU {i}: {name}, compute capability {cc}, memory {memory}");
            }
            Err(e) => println!("  GPU {i}: cannot be queried ({e})"),
        }
    }
    true
}

fn tool_version(tool: &str, needed: bool, processes: &dyn ProcessRunner) -> bool {
    let mark = if needed { "✗" } else { "–" };
    let done = version(tool, processes);
    match &done.exit {
        Exit::Code(0) => {
            let text = done.lines.join("\n");
            println!("✓ {tool}: {}", version_line(&text));
            true
        }
        Exit::NotFound => {
            let what = match tool {
                "nvcc" => "needed only to build CUDA code such as kernels/ (CUDA toolkit)",
                "compute-sanitizer" => "needed for sanitizer gates (CUDA toolkit)",
                _ => {
                    "needed to profile (Nsight Compute; set NCUGATE_NCU or [profile] ncu if it is off PATH)"
                }
            };
            println!("{mark} {tool}: not found — {what}");
            !needed
        }
        other => {
            println!("{mark} {tool}: `{tool} --version` failed ({other})");
            !needed
        }
    }
}

/// ncu and compute-sanitizer end with `Version …`; nvcc says `release 13.0, V13.0.88`.
fn version_line(text: &str) -> &str {
    let lines = || text.lines().rev().map(str::trim);
    lines()
        .find(|l| l.contains("Version") || l.contains("release"))
        .or_else(|| lines().find(|l| !l.is_empty()))
        .unwrap_or("")
}

/// `ncugate leaks` injects a CUPTI library that ncugate compiles from its own
/// embedded source on first use: build it now (or find it cached), so that a
/// runner that cannot is known before a gate needs it. Not needed to profile.
fn audit_library(processes: &dyn ProcessRunner) {
    let tools = crate::memory::library::Toolchain::from_env();
    let root = crate::config::audit_cache_dir();
    match crate::memory::library::ensure(&root, &tools, processes) {
        Ok(built) => println!(
            "✓ graph audit library (ncugate leaks): {} {}",
            if built.compiled {
                "compiled into"
            } else {
                "cached at"
            },
            built.path.display()
        ),
        Err(e) => {
            println!("– graph audit library (ncugate leaks): {e}");
            for line in e.detail() {
                println!("    | {line}");
            }
            println!("    fix: {}", e.hint());
        }
    }
}

/// Linux restricts GPU performance counters to admins unless the driver's
/// `RmProfilingAdminOnly` parameter is 0 (ncu then fails with ERR_NVGPUCTRPERM).
fn counters() -> bool {
    let params = std::fs::read_to_string("/proc/driver/nvidia/params").unwrap_or_default();
    let admin_only = params
        .lines()
        .find_map(|l| l.strip_prefix("RmProfilingAdminOnly:"))
        .map(|v| v.trim() == "1");
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    match admin_only {
        None => {
            println!("– performance counters: unknown (no /proc/driver/nvidia/params)");
            true
        }
        Some(false) => {
            println!("✓ performance counters: readable by all users (RmProfilingAdminOnly=0)");
            true
        }
        Some(true) if root => {
            println!("✓ performance counters: admin only, and ncugate runs as root");
            true
        }
        Some(true) => {
            println!(
                "✗ performance counters: admin only (RmProfilingAdminOnly=1) and this user is not root: ncu will fail with ERR_NVGPUCTRPERM"
            );
            println!(
                "    fix: run as root, or `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d/ and reload the driver (https://developer.nvidia.com/ERR_NVGPUCTRPERM)"
            );
            false
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_lines_of_the_h200_tools() {
        let nvcc = include_str!("../fixtures/h200/nvcc.version.txt");
        assert_eq!(
            super::version_line(nvcc),
            "Cuda compilation tools, release 13.0, V13.0.88"
        );
        let ncu = include_str!("../fixtures/h200/ncu.version.txt");
        assert!(
            super::version_line(ncu).starts_with("Version 2025.3.1.0"),
            "{ncu}"
        );
    }
}
