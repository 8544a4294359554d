//! A workload's input digest: a canonical, versioned list of named parts
//! (what the app is, what it reads, what it is gated with and on what
//! machine), and the SHA-256 over them. The parts are kept beside the
//! verdict, so a digest that changed names the part that did.
//!
//! Each part's value is short: a file's SHA-256 (its first 16 hex digits),
//! an environment variable's value as a digest (never the value: the cache
//! must not hold secrets), or a version.

use super::hash::{hashed, short};
use super::mapped::{GONE, Library, PREFIX};
use crate::config::{BaselinePlace, CheckConfig, Workload};
use crate::runner::process::ProcessRunner;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use std::path::{Path, PathBuf};

/// The version of the parts list: a change to what is hashed changes it, so
/// no old entry is read as a new one.
pub(crate) const FORMAT: &str = "ncugate-skip-3";

/// One named part of the digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Part {
    pub(crate) name: String,
    pub(crate) value: String,
}

/// A workload's digest and what it is made of; `unknown`: the reasons its
/// inputs are not fully known (it then runs unless `always` is set). These
/// are the parts known before the run; the libraries the run maps are
/// added to them when its verdict is kept (`mapped.rs`), and `known` holds
/// the last entry's, whose digests a file with an unchanged stamp reuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Digest {
    pub(crate) sha256: String,
    pub(crate) parts: Vec<Part>,
    pub(crate) unknown: Vec<String>,
    pub(crate) known: Vec<Library>,
}

/// What the digest knows of the machine, read once per suite run: the
/// driver and CUDA versions (NVML), and the models of the GPUs the driver
/// lists (`Model:` of `/proc/driver/nvidia/gpus/*/information`; not their
/// UUIDs or bus places, so runners with the same GPUs share verdicts).
pub(crate) fn machine() -> Vec<Part> {
    let mut parts: Vec<Part> = crate::runner::kernel_env::toolchain()
        .into_iter()
        .map(|(name, value)| part(&name, value))
        .collect();
    let mut models: Vec<String> = std::fs::read_dir("/proc/driver/nvidia/gpus")
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .filter_map(|e| std::fs::read_to_string(e.path().join("information")).ok())
                .filter_map(|text| {
                    text.lines()
                        .find_map(|l| l.strip_prefix("Model:").map(|m| m.trim().to_string()))
                })
                .collect()
        })
        .unwrap_or_default();
    models.sort();
    parts.push(part(
        "gpus",
        if models.is_empty() {
            "none listed".into()
        } else {
            crate::text::escape::printable(models.join(", "))
        },
    ));
    parts
}

/// The digest of workload `w` checked by `c`.
pub(crate) fn of(
    w: &Workload,
    c: &CheckConfig,
    config_file: Option<&Path>,
    machine: &[Part],
    processes: &dyn ProcessRunner,
) -> Digest {
    let mut parts = vec![
        part("format", FORMAT.to_string()),
        part("ncugate", env!("CARGO_PKG_VERSION").to_string()),
    ];
    let mut unknown = Vec::new();
    parts.extend(app(w));
    parts.extend(settings(w, c));
    parts.extend(declared(w, &mut unknown));
    parts.push(part("config", config_file.map_or("none".into(), hashed)));
    parts.push(part(
        "thresholds",
        c.thresholds.file().map_or("built-in".into(), hashed),
    ));
    parts.extend(baseline(&c.baseline, &mut unknown));
    parts.push(part("ncu", program(&w.runner.ncu, &w.runner.workdir)));
    parts.extend(machine.iter().cloned());
    if !w.runner.toolchain_command.is_empty() {
        for (name, version) in crate::runner::kernel_env::versions(&w.runner, processes) {
            parts.push(part(&format!("toolchain:{name}"), version));
        }
    }
    Digest {
        sha256: sum(&parts),
        parts,
        unknown,
        known: Vec::new(),
    }
}

/// The SHA-256 over the parts, each name and value ended by a NUL.
pub(crate) fn sum(parts: &[Part]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.name.as_bytes());
        h.update([0]);
        h.update(p.value.as_bytes());
        h.update([0]);
    }
    crate::format::hex(&h.finalize())
}

/// The first part of `now` that differs from `then` (or is new, or gone).
pub(crate) fn first_change(then: &[Part], now: &[Part]) -> Option<String> {
    for p in now {
        match then.iter().find(|t| t.name == p.name) {
            Some(t) if t.value == p.value => {}
            _ => return Some(p.name.clone()),
        }
    }
    then.iter()
        .find(|t| !now.iter().any(|p| p.name == t.name))
        .map(|t| format!("{} (gone)", t.name))
}

/// The digest parts of mapped `libraries`: `loaded:<path>` = its content digest.
pub(crate) fn loaded(libraries: &[Library]) -> Vec<Part> {
    libraries
        .iter()
        .map(|l| part(&format!("{PREFIX}{}", l.path), l.sha256.clone()))
        .collect()
}

/// The parts known before a run: all but the mapped libraries'.
pub(crate) fn before_run(parts: &[Part]) -> Vec<Part> {
    parts
        .iter()
        .filter(|p| !p.name.starts_with(PREFIX))
        .cloned()
        .collect()
}

/// How a miss names a changed mapped library's part (`loaded:<path>`):
/// `library changed: <path>`, or `library gone: <path>`; `None` for any
/// other part.
pub(crate) fn library_change(name: &str, now: &[Part]) -> Option<String> {
    let path = name.strip_prefix(PREFIX)?;
    let path = path.strip_suffix(" (gone)").unwrap_or(path);
    let gone = now.iter().any(|p| p.name == name && p.value == GONE);
    Some(if gone {
        format!("library gone: {path}")
    } else {
        format!("library changed: {path}")
    })
}

fn part(name: &str, value: String) -> Part {
    Part {
        name: name.to_string(),
        value,
    }
}

/// The settings that shape what is profiled and how it is judged, as
/// resolved from `ncugate.toml`, `NCUGATE_*` variables and flags (the file
/// alone is a part too, but a flag or a variable never reaches it): a
/// verdict profiled in full mode, or without the warm-up, is not this one's.
fn settings(w: &Workload, c: &CheckConfig) -> Vec<Part> {
    let r = &w.runner;
    let setting = |name: &str, value: String| part(&format!("setting:{name}"), value);
    vec![
        setting("mode", format!("{:?}", r.mode)),
        setting("graph_profiling", format!("{:?}", r.graph_profiling)),
        setting("clock_control", r.clock_control.to_string()),
        setting("cache_control", r.cache_control.to_string()),
        setting("replay_mode", r.replay_mode.to_string()),
        setting("kernel_name", format!("{:?}", r.kernel_name)),
        setting("launch_skip", format!("{:?}", r.launch_skip)),
        setting("launch_count", format!("{:?}", r.launch_count)),
        setting("extra_metrics", format!("{:?}", r.extra_metrics)),
        setting("profile_from_start", r.profile_from_start.to_string()),
        setting("nvtx_include", format!("{:?}", r.nvtx_include)),
        setting("warmup", r.warmup.to_string()),
        setting("kernel_key", format!("{:?}", c.kernel_key)),
        setting("shared_gpu", format!("{:?}", c.shared_gpu)),
        setting("environmental", format!("{:?}", c.environmental)),
        setting("autotuned_builds", format!("{:?}", c.autotuned_builds)),
        setting("locked_counters", format!("{:?}", c.locked_counters)),
        setting("allow_device_mismatch", c.allow_device_mismatch.to_string()),
    ]
}

/// The app: its argv, folder, environment (the workload's `env` and the
/// variables that steer kernel choice, as digests), its executable, the
/// shared libraries the executable needs (`libraries.rs`) and its Python
/// scripts.
fn app(w: &Workload) -> Vec<Part> {
    let r = &w.runner;
    let mut parts = vec![
        part("argv", serde_json::to_string(&r.app).unwrap_or_default()),
        part("workdir", r.workdir.display().to_string()),
    ];
    let mut env: std::collections::BTreeMap<String, String> = crate::runner::kernel_env::snapshot(
        crate::runner::kernel_env::own(),
        &r.env,
        &r.kernel_env,
    );
    for (name, value) in &r.env {
        env.insert(name.clone(), value.clone());
    }
    for (name, value) in env {
        parts.push(part(
            &format!("env:{name}"),
            short(&Sha256::digest(value.as_bytes())),
        ));
    }
    if let Some(exe) = r.app.first() {
        // By content, not by where it is: checkouts of the fleet's runners
        // sit in different folders.
        let found = resolve(exe, &r.workdir);
        parts.push(part(
            "executable",
            found
                .as_deref()
                .map_or_else(|| format!("{exe} (not found)"), hashed),
        ));
        let ld_path = r
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == "LD_LIBRARY_PATH")
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var("LD_LIBRARY_PATH").ok());
        for (name, path) in found
            .map(|exe| super::libraries::needed(&exe, ld_path.as_deref()))
            .unwrap_or_default()
        {
            let value = path.map_or("not found".into(), |p| hashed(&p));
            parts.push(part(&format!("library:{name}"), value));
        }
    }
    for arg in r.app.iter().skip(1).filter(|a| a.ends_with(".py")) {
        let path = r.workdir.join(arg);
        if path.is_file() {
            parts.push(part(&format!("script:{arg}"), hashed(&path)));
        }
    }
    parts
}

/// The files of the declared `inputs`, each by its path and content; a glob
/// that matches nothing is a part too (a file that appears changes it).
fn declared(w: &Workload, unknown: &mut Vec<String>) -> Vec<Part> {
    if w.inputs.is_empty() {
        unknown.push("it declares no `inputs`".into());
        return Vec::new();
    }
    let mut parts = Vec::new();
    for pattern in &w.inputs {
        let mut files: Vec<PathBuf> = match glob::glob(pattern) {
            Ok(paths) => paths
                .filter_map(|p| p.ok())
                .filter(|p| p.is_file())
                .collect(),
            Err(_) => Vec::new(),
        };
        files.sort();
        if files.is_empty() {
            parts.push(part(&format!("inputs:{pattern}"), "no file".into()));
        }
        for f in files {
            parts.push(part(&format!("input:{}", f.display()), hashed(&f)));
        }
    }
    parts
}

/// The baseline it is gated against: its file, or every file of its folder.
fn baseline(place: &BaselinePlace, unknown: &mut Vec<String>) -> Vec<Part> {
    match place {
        BaselinePlace::File(f) => vec![part("baseline", hashed(f))],
        BaselinePlace::Dir { dir, workload, .. } => {
            let folder = dir.join(workload);
            let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
                .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default();
            files.retain(|f| f.is_file());
            files.sort();
            if files.is_empty() {
                return vec![part("baseline", "none".into())];
            }
            files
                .iter()
                .map(|f| {
                    let name = f.file_name().unwrap_or_default().to_string_lossy();
                    part(&format!("baseline:{name}"), hashed(f))
                })
                .collect()
        }
        BaselinePlace::History => {
            unknown.push("its baseline is the rolling history".into());
            vec![part("baseline", "history".into())]
        }
    }
}

/// A program by its resolved path and content: as given with a `/`
/// (relative to `workdir`), else the first match on `PATH`.
fn program(name: &str, workdir: &Path) -> String {
    match resolve(name, workdir) {
        Some(path) => format!("{} {}", path.display(), hashed(&path)),
        None => format!("{name} (not found)"),
    }
}

/// Where a program is, canonical: as given with a `/` (relative to
/// `workdir`), else the first match on `PATH`.
fn resolve(name: &str, workdir: &Path) -> Option<PathBuf> {
    let found = if name.contains('/') {
        Some(workdir.join(name))
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
    };
    found.and_then(|p| std::fs::canonicalize(p).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str, value: &str) -> Part {
        part(name, value.into())
    }

    /// A workload that runs `app` with `env`.
    fn workload(app: &Path, env: Vec<(String, String)>) -> Workload {
        let mut w = Workload::for_tests("w", &app.display().to_string());
        w.runner.env = env;
        w
    }

    /// The test binary is a real executable of this machine: its libc is
    /// a part, and a changed copy of it, found first through the
    /// workload's `LD_LIBRARY_PATH`, changes that part and nothing else.
    #[test]
    fn a_changed_shared_library_changes_its_part() {
        let exe = std::env::current_exe().unwrap();
        let libc = |parts: &[Part]| {
            parts
                .iter()
                .find(|p| p.name.starts_with("library:libc.so"))
                .cloned()
        };
        let system = app(&workload(&exe, vec![]));
        let Some(found) = libc(&system) else {
            panic!("no libc among {system:?}");
        };
        let name = found.name.trim_start_matches("library:").to_string();
        let real = super::super::libraries::needed(&exe, None)
            .into_iter()
            .find_map(|(n, p)| (n == name).then_some(p).flatten())
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join(&name);
        std::fs::copy(&real, &copy).unwrap();
        let env = vec![(
            "LD_LIBRARY_PATH".to_string(),
            dir.path().display().to_string(),
        )];
        // A copy of the same content: the same part, wherever it is.
        let before = app(&workload(&exe, env.clone()));
        assert_eq!(libc(&before), Some(found.clone()));
        let mut bytes = std::fs::read(&copy).unwrap();
        bytes.push(0);
        std::fs::write(&copy, bytes).unwrap();
        let after = app(&workload(&exe, env));
        assert_eq!(first_change(&before, &after), Some(found.name.clone()));
    }

    #[test]
    fn the_first_changed_part_is_named_and_the_sum_follows_every_part() {
        let then = vec![p("argv", "a"), p("input:k.cu", "1"), p("env:X", "2")];
        let same = then.clone();
        assert_eq!(first_change(&then, &same), None);
        assert_eq!(sum(&then), sum(&same));
        let mut edited = then.clone();
        edited[1].value = "9".into();
        assert_eq!(first_change(&then, &edited).as_deref(), Some("input:k.cu"));
        assert_ne!(sum(&then), sum(&edited));
        let gone = vec![p("argv", "a"), p("input:k.cu", "1")];
        assert_eq!(first_change(&then, &gone).as_deref(), Some("env:X (gone)"));
        let new = [then.clone(), vec![p("env:Y", "3")]].concat();
        assert_eq!(first_change(&then, &new).as_deref(), Some("env:Y"));
        // A name and a value cannot slide into each other.
        assert_ne!(sum(&[p("ab", "c")]), sum(&[p("a", "bc")]));
    }
}
