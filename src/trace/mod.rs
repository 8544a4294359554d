//! Trace mode: the metric gate, degraded, when ncu may not read the GPU
//! performance counters (ERR_NVGPUCTRPERM) and `[gate] locked_counters =
//! "trace"` asks for it. CUPTI activity tracing needs no counter
//! permission: the app runs `--runs` times with the audit library injected
//! and its kernel trace on, and the check gates what a trace shows — the
//! launch structure — never a metric. Read top to bottom, a stage a file:
//!
//! 1. **acquire** (`run.rs`): the app, as ncu would have run it, without ncu;
//! 2. **read** (`read.rs`): each run's `kernel_trace`, hostile input; a
//!    trace CUPTI could not enable, or that dropped records, is an error;
//! 3. **map** (`map.rs`): traced kernels (mangled names) to the baseline's keys;
//! 4. **judge** (`judge.rs`): missing and new kernels, launches per run (the
//!    structure checks of every check), launch configurations; every rule
//!    listed as not gated; traced durations as information only.
//!
//! The report says DEGRADED in every format ([`crate::verdict::Degraded`]).

mod judge;
mod map;
mod read;
mod run;

pub use run::{AuditLib, KERNELS_VAR};

use crate::baseline::Baseline;
use crate::error::Result;
use crate::rules::Thresholds;
use crate::runner::RunnerConfig;
use crate::runner::process::ProcessRunner;
use crate::verdict::{Degraded, Report};
use std::path::Path;

/// What `check` does when ncu may not read the performance counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LockedCounters {
    /// Exit 2 with the fix.
    #[default]
    Fail,
    /// Gate the launch structure from a CUPTI activity trace, labelled DEGRADED.
    Trace,
}

/// What a trace-mode check needs besides the baseline and the rules.
pub(crate) struct Traced<'a> {
    pub(crate) runner: &'a RunnerConfig,
    pub(crate) runs: u32,
    pub(crate) audit: &'a AuditLib,
    pub(crate) baseline_path: &'a Path,
    pub(crate) thresholds_name: String,
}

/// The degraded check: the app traced, read, mapped and judged.
pub(crate) fn check(
    traced: &Traced<'_>,
    baseline: &Baseline,
    thresholds: &Thresholds,
    processes: &dyn ProcessRunner,
) -> Result<Report> {
    // 1. acquire
    let files = run::run(traced.runner, traced.runs, traced.audit, processes)?;
    // 2. read
    let traces = files
        .iter()
        .map(|f| read::read(f))
        .collect::<Result<Vec<_>>>()?;
    // 3. map
    let (keyed, mapping) = map::map(baseline, &traces);
    // 4. judge
    let mut report = Report::empty(
        &traced.baseline_path.display().to_string(),
        files.iter().map(|f| f.display().to_string()).collect(),
        Vec::new(),
        &traced.thresholds_name,
    );
    report.kernel_key = baseline.kernel_key;
    report.structure = judge::structure(baseline, &keyed, &files, thresholds);
    report.rules = crate::compare::locked(baseline, thresholds);
    report.degraded = Some(Degraded::trace(mapping.words()));
    report.note(format!(
        "trace mode: ncu could not read the performance counters (ERR_NVGPUCTRPERM), so the app ran {} without ncu under CUPTI activity tracing; gated: which kernels ran and how often; not gated: every metric rule",
        crate::format::count(traced.runs, "time", "times")
    ));
    report.note(format!(
        "{} not gated: {}",
        crate::format::count(report.rules.len(), "metric check", "metric checks"),
        crate::verdict::COUNTERS_LOCKED
    ));
    report.note(mapping.words());
    report
        .notes
        .extend(judge::launch_configurations(baseline, &keyed));
    report.note_each(judge::durations(&keyed));
    let records: u64 = traces.iter().map(|t| t.records).sum();
    report.note(format!(
        "trace: {} activity records over {}, none dropped",
        records,
        crate::format::count(traces.len(), "run", "runs")
    ));
    Ok(report)
}
