//! `ncugate leaks`: run the app with the audit library injected and NVML
//! sampling from its start, judge, and keep the history.

use super::{Measured, MemoryLimits, MemoryResult, audit, history, judge, sample};
use crate::error::{Error, Result};
use crate::runner::RunnerConfig;
use crate::runner::process::{CommandSpec, ProcessRunner};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What the audit needs (lent by `ncugate leaks`' configuration).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Audit<'a> {
    pub(crate) runner: &'a RunnerConfig,
    /// A prebuilt audit library; `None`: the one compiled from the embedded source into `cache_dir`.
    pub(crate) audit_lib: Option<&'a PathBuf>,
    /// Where compiled audit libraries are cached.
    pub(crate) cache_dir: &'a Path,
    pub(crate) limits: &'a MemoryLimits,
    pub(crate) sample_every: Duration,
    /// The history file of earlier runs, to judge the trend.
    pub(crate) history: Option<&'a PathBuf>,
    pub(crate) rule: &'a history::Rule,
}

/// What the audit found, for the report: the memory checks and notes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Audited {
    pub(crate) memory: Vec<MemoryResult>,
    pub(crate) notes: Vec<String>,
}

/// Runs the audited app and judges its graph memory.
pub(crate) fn run(config: &Audit, processes: &dyn ProcessRunner) -> Result<Audited> {
    let r = &config.runner;
    if r.app.is_empty() {
        return Err(Error::from(crate::error::ConfigError::NoAppToAudit));
    }
    crate::runner::build(r, processes)?;
    let lib = super::library::resolve(config.audit_lib, config.cache_dir, processes)?;
    let dir = r.out_dir.join("leaks");
    std::fs::create_dir_all(&dir).map_err(|source| Error::Write {
        path: dir.clone(),
        source,
    })?;
    let out = dir.join("audit.json");
    let _ = std::fs::remove_file(&out);
    let (program, args) = r
        .app
        .split_first()
        .ok_or_else(|| Error::from(crate::error::ConfigError::NoAppToAudit))?;
    let spec = super::library::injected(r, program, args, &lib, &out);
    crate::text::escape::say(&format!(
        "ncugate: leaks: CUDA_INJECTION64_PATH={} {}",
        lib.display(),
        spec.display()
    ));

    let stop = Arc::new(AtomicBool::new(false));
    let mut sampler: Option<std::thread::JoinHandle<Vec<(f64, f64)>>> = None;
    let every = config.sample_every;
    let done = processes.run_observed(&spec, &mut |_| {}, &mut |pid| {
        let stop = Arc::clone(&stop);
        sampler = Some(std::thread::spawn(move || sample::sample(pid, every, stop)));
    });
    stop.store(true, Ordering::Relaxed);
    let samples = sampler.and_then(|h| h.join().ok()).unwrap_or_default();
    let log = dir.join("app.log");
    crate::runner::write_lines(&log, &done.lines)?;
    super::library::app_ended(&done.exit, program, &spec, &done.lines, &log)?;
    let audit = audit::read(&out)?;
    judged(config, audit, &samples, &dir, processes)
}

/// The audit and the samples judged: the growth between the first and the
/// last graph launch against the limits, `measured.json` beside the app's
/// log, the trend of the history; with notes saying what was seen.
fn judged(
    config: &Audit,
    audit: audit::Audit,
    samples: &[(f64, f64)],
    dir: &Path,
    processes: &dyn ProcessRunner,
) -> Result<Audited> {
    let mut found = Audited::default();
    // Growth between the first and the last graph launch: start-up allocations are not a leak.
    let window = audit.launch_window();
    let growth = if audit.graph_launches >= 2 {
        sample::fit(samples, window)
    } else {
        None
    };
    if window.is_none() && audit.graph_launches >= 2 {
        found.notes.push("the audit library did not stamp the launches (an older build?): growth is measured over the whole run".into());
    }
    let measured = Measured { audit, growth };
    found.memory = judge(&measured, config.limits);
    found.notes.push(format!(
        "audit: {} graphs created / {} destroyed, {} executables created / {} destroyed, {} graph launches; {} NVML samples every {} ms",
        measured.audit.graphs_created,
        measured.audit.graphs_destroyed,
        measured.audit.execs_created,
        measured.audit.execs_destroyed,
        measured.audit.graph_launches,
        samples.len(),
        config.sample_every.as_millis()
    ));
    if let Some(high) = measured.audit.graph_mem_used_high {
        found.notes.push(format!(
            "graph memory high-water mark: {}",
            crate::format::format_value(high as f64, "byte")
        ));
    }
    let measured_json = dir.join("measured.json");
    let text = serde_json::to_string_pretty(&measured).map_err(|e| Error::Write {
        path: measured_json.clone(),
        source: e.into(),
    })?;
    std::fs::write(&measured_json, text + "\n").map_err(|source| Error::Write {
        path: measured_json.clone(),
        source,
    })?;
    if let Some(path) = config.history {
        let entry = history::Entry {
            time: jiff::Timestamp::now()
                .strftime("%Y-%m-%dT%H:%M:%SZ")
                .to_string(),
            app: config.runner.app.join(" "),
            commit: commit(processes),
            leak_bytes: measured.growth.as_ref().map_or(0.0, |g| g.growth_bytes),
            peak_bytes: measured.growth.as_ref().map(|g| g.peak_bytes),
            live_execs: measured
                .audit
                .execs_created
                .saturating_sub(measured.audit.execs_destroyed),
        };
        let entries = history::append(path, &entry)?;
        found.memory.push(history::judge(&entries, config.rule));
        found.notes.push(format!(
            "history: {} runs in {}",
            entries.len(),
            path.display()
        ));
    }
    Ok(found)
}

/// The commit being tested, from CI variables or `git rev-parse HEAD`.
fn commit(processes: &dyn ProcessRunner) -> Option<String> {
    for var in ["GITHUB_SHA", "GIT_COMMIT", "CI_COMMIT_SHA"] {
        if let Ok(v) = std::env::var(var)
            && !v.is_empty()
        {
            return Some(v);
        }
    }
    let mut spec = CommandSpec::new("git", ["rev-parse", "HEAD"]);
    spec.timeout = Some(std::time::Duration::from_secs(30));
    let done = processes.run(&spec, &mut |_| {});
    done.exit
        .success()
        .then(|| done.lines.last().map(|l| l.trim().to_string()))
        .flatten()
        .filter(|c| !c.is_empty())
}
