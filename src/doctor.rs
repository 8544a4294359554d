//! `ncugate doctor`: is this machine ready to gate? GPUs (name, compute
//! capability, memory, driver and CUDA version) through NVML, loaded at run
//! time so ncugate builds and runs where there is no driver; ncu,
//! compute-sanitizer and nvcc versions; whether ncu may read the performance
//! counters. Exit 0 when ncugate can profile here, 2 when not — never a panic.

use crate::format::format_value;
use crate::runner::process::{CommandSpec, Exit, Finished, ProcessRunner};
use crate::status::Outcome;
use nvml_wrapper::Nvml;
use std::fmt::{Arguments, Write as _};
use std::time::Duration;

/// The checks, a line each, for standard output; pass when ncugate can
/// profile here, error when not. `ncu` is the ncu to check
/// ([`crate::config::default_ncu`]).
pub(crate) fn run(ncu: &str, processes: &dyn ProcessRunner) -> (String, Outcome) {
    let mut out = Lines::default();
    out.line(format_args!("ncugate doctor"));
    let mut ok = gpus(&mut out);
    for (tool, needed) in [(ncu, true), ("compute-sanitizer", false), ("nvcc", false)] {
        ok &= tool_version(&mut out, tool, needed, processes);
    }
    ok &= counters(&mut out);
    let hosts = crate::runner::procfs::named(&DCGM_PROCESSES);
    out.line(format_args!("{}", dcgm(&hosts)));
    audit_library(&mut out, processes);
    if ok {
        out.line(format_args!(
            "\nready: ncugate can profile and gate on this machine"
        ));
    } else {
        out.line(format_args!(
            "\nnot ready: see the ✗ lines above (ncugate can still gate exported CSV files here)"
        ));
    }
    (out.0, if ok { Outcome::Pass } else { Outcome::Error })
}

/// The doctor's report, built a line at a time.
#[derive(Default)]
struct Lines(String);

impl Lines {
    /// Appends `text`, each of its lines wrapped to the terminal's width
    /// ([`crate::report::terminal::width`]) under its own indent.
    fn line(&mut self, text: Arguments<'_>) {
        let width = crate::report::terminal::width();
        for line in text.to_string().split('\n') {
            // Writing to a String cannot fail.
            let _ = writeln!(self.0, "{}", fit(line, width));
        }
    }
}

/// `line` wrapped to `width`: continuation lines start under the text after
/// the line's mark (`✓ `, `✗ `, `– `, `! `) or its `fix: `.
fn fit(line: &str, width: usize) -> String {
    let text = line.trim_start();
    let lead = line.len() - text.len();
    let hang = ["✓ ", "✗ ", "– ", "! ", "fix: "]
        .iter()
        .find(|mark| text.starts_with(*mark))
        .map_or(2, |mark| mark.chars().count());
    let first = &line[..lead];
    let rest = " ".repeat(lead + hang);
    crate::report::columns::wrap(text, width, first, &rest)
}

/// A GPU the driver sees and an ncu that starts: enough for a trial run (`init`).
pub(crate) fn can_profile(ncu: &str, processes: &dyn ProcessRunner) -> bool {
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

fn gpus(out: &mut Lines) -> bool {
    let nvml = match Nvml::init() {
        Ok(n) => n,
        Err(e) => {
            out.line(format_args!(
                "✗ GPU: none usable — the NVIDIA driver's NVML library could not be loaded ({e})"
            ));
            out.line(format_args!(
                "    fix: run on a machine with an NVIDIA GPU and driver (`nvidia-smi` must work)"
            ));
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
        out.line(format_args!("✗ GPU: the driver ({driver}) sees no GPU"));
        return false;
    }
    out.line(format_args!(
        "✓ driver {driver}, CUDA {cuda} (driver API), {}",
        crate::format::count(count, "GPU", "GPUs")
    ));
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
                out.line(format_args!(
                    "  GPU {i}: {name}, compute capability {cc}, memory {memory}"
                ));
            }
            Err(e) => out.line(format_args!("  GPU {i}: cannot be queried ({e})")),
        }
    }
    true
}

fn tool_version(out: &mut Lines, tool: &str, needed: bool, processes: &dyn ProcessRunner) -> bool {
    let mark = if needed { "✗" } else { "–" };
    let done = version(tool, processes);
    match &done.exit {
        Exit::Code(0) => {
            let text = done.lines.join("\n");
            out.line(format_args!("✓ {tool}: {}", version_line(&text)));
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
            out.line(format_args!("{mark} {tool}: not found — {what}"));
            !needed
        }
        other => {
            out.line(format_args!(
                "{mark} {tool}: `{tool} --version` failed ({other})"
            ));
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
fn audit_library(out: &mut Lines, processes: &dyn ProcessRunner) {
    let tools = crate::memory::library::Toolchain::from_env();
    let root = crate::config::audit_cache_dir();
    match crate::memory::library::ensure(&root, &tools, processes) {
        Ok(built) => out.line(format_args!(
            "✓ graph audit library (ncugate leaks): {} {}",
            if built.compiled {
                "compiled into"
            } else {
                "cached at"
            },
            built.path.display()
        )),
        Err(e) => {
            out.line(format_args!("– graph audit library (ncugate leaks): {e}"));
            for line in e.detail() {
                out.line(format_args!("    | {line}"));
            }
            out.line(format_args!("    fix: {}", e.hint()));
        }
    }
}

/// Linux restricts GPU performance counters to admins unless the driver's
/// `RmProfilingAdminOnly` parameter is 0 (ncu then fails with ERR_NVGPUCTRPERM).
/// The processes that hold DCGM's host engine: the standalone
/// `nv-hostengine` (the nvidia-dcgm service) and dcgm-exporter, which
/// embeds one unless told to connect to a standalone engine.
const DCGM_PROCESSES: [&str; 2] = ["nv-hostengine", "dcgm-exporter"];

/// The DCGM line: whether a host engine runs (`hosts`, pid and name). While
/// it collects profiling metrics it holds the driver's profiling lock and
/// ncu fails; whether it does cannot be told from here (dcgmi has no query
/// for it), so a running engine is a warning, not a failure.
fn dcgm(hosts: &[(u32, String)]) -> String {
    if hosts.is_empty() {
        return "✓ DCGM: no host engine runs (nv-hostengine, dcgm-exporter), so DCGM holds no profiling lock".into();
    }
    let running: Vec<String> = hosts
        .iter()
        .map(|(pid, name)| format!("{name} (pid {pid})"))
        .collect();
    format!(
        "! DCGM: {} runs; whether it holds the driver's profiling lock (it does while it collects profiling metrics, and ncu then fails with \"a driver resource was unavailable\") cannot be told from here\n    fix if ncu fails so: [profile] dcgm = \"pause\" (dcgmi profile --pause/--resume around each ncu run), or stop the service for the run",
        running.join(", ")
    )
}

fn counters(out: &mut Lines) -> bool {
    let params = std::fs::read_to_string("/proc/driver/nvidia/params").unwrap_or_default();
    let admin_only = params
        .lines()
        .find_map(|l| l.strip_prefix("RmProfilingAdminOnly:"))
        .map(|v| v.trim() == "1");
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let (ok, lines) = counters_said(admin_only, root);
    for line in lines {
        out.line(format_args!("{line}"));
    }
    ok
}

/// The counters' lines for what the driver says (`admin_only`, `None`:
/// no driver parameters) and whether ncugate runs as root; whether ncu
/// may read them.
fn counters_said(admin_only: Option<bool>, root: bool) -> (bool, Vec<&'static str>) {
    match admin_only {
        None => (
            true,
            vec!["– performance counters: unknown (no /proc/driver/nvidia/params)"],
        ),
        Some(false) => (
            true,
            vec!["✓ performance counters: readable by all users (RmProfilingAdminOnly=0)"],
        ),
        Some(true) if root => (
            true,
            vec!["✓ performance counters: admin only, and ncugate runs as root"],
        ),
        Some(true) => (
            false,
            vec![
                "✗ performance counters: admin only (RmProfilingAdminOnly=1) and this user is not root: ncu will fail with ERR_NVGPUCTRPERM",
                "    fix: run as root, or `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d/ and reload the driver (https://developer.nvidia.com/ERR_NVGPUCTRPERM)",
                "    or: `locked_counters = \"trace\"` in [gate] (--locked-counters trace) is available: check then gates the launch structure from a CUPTI trace (no counters needed), labelled DEGRADED, with no metric gated",
            ],
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::fit;

    #[test]
    fn locked_counters_name_trace_mode_as_the_fallback_and_open_ones_do_not() {
        let (ok, lines) = super::counters_said(Some(true), false);
        assert!(!ok);
        assert!(lines[0].contains("ERR_NVGPUCTRPERM"), "{lines:?}");
        assert!(
            lines[2].contains(
                "`locked_counters = \"trace\"` in [gate] (--locked-counters trace) is available"
            ),
            "{lines:?}"
        );
        for (admin_only, root) in [(Some(true), true), (Some(false), false), (None, false)] {
            let (ok, lines) = super::counters_said(admin_only, root);
            assert!(ok);
            assert!(!lines.join("\n").contains("locked_counters"), "{lines:?}");
        }
    }

    #[test]
    fn a_running_dcgm_host_engine_is_named_with_the_pause_fix() {
        let line = super::dcgm(&[(812, "nv-hostengine".into())]);
        assert!(
            line.starts_with("! DCGM: nv-hostengine (pid 812) runs;")
                && line.contains("[profile] dcgm = \"pause\""),
            "{line}"
        );
        assert!(super::dcgm(&[]).starts_with("✓ DCGM: no host engine runs"));
    }

    #[test]
    fn long_lines_wrap_under_their_mark() {
        let line = "✗ GPU: none usable — the NVIDIA driver's NVML library could not be loaded (libnvidia-ml.so.1: cannot open shared object file)";
        let fitted = fit(line, 60);
        assert!(fitted.lines().count() > 1, "{fitted}");
        assert!(fitted.lines().all(|l| l.chars().count() <= 60), "{fitted}");
        assert!(
            fitted
                .lines()
                .skip(1)
                .all(|l| l.starts_with("  ") && !l.starts_with("   ")),
            "{fitted}"
        );
        let fix = fit(
            "    fix: set CUDA_HOME to the CUDA toolkit (it ships CUPTI), or pass --audit-lib with a library",
            60,
        );
        assert!(
            fix.lines().skip(1).all(|l| l.starts_with(&" ".repeat(9))),
            "{fix}"
        );
        assert_eq!(fit("ncugate doctor", 60), "ncugate doctor");
    }

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
