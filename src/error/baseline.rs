//! [`BaselineError`]: a baseline that is missing, broken, or cannot gate this run.

use std::path::PathBuf;

/// A baseline that is missing, broken, or recorded in a way this run cannot
/// be compared with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaselineError {
    #[error("{}: not a baseline: invalid JSON ({reason})", .path.display())]
    NotJson { path: PathBuf, reason: String },
    #[error("{}: not a baseline: no schema_version", .path.display())]
    NoSchemaVersion { path: PathBuf },
    #[error(
        "{}: unknown baseline schema_version {found} (this ncugate {} reads {reads})",
        .path.display(),
        env!("CARGO_PKG_VERSION")
    )]
    SchemaVersion {
        path: PathBuf,
        found: u64,
        reads: u32,
    },
    /// Two entries for one key (a hand edit or a merge).
    #[error("{}: invalid baseline: {reason}", .path.display())]
    DuplicateKey { path: PathBuf, reason: String },
    /// A string holding a character ncugate never writes (a control, a
    /// bidirectional control, a noncharacter): a hand edit, or a baseline
    /// recorded by an ncugate that did not escape it.
    #[error("{}: invalid baseline: {reason}", .path.display())]
    Unprintable { path: PathBuf, reason: String },
    #[error("{}: invalid baseline: {reason}", .path.display())]
    Invalid { path: PathBuf, reason: String },
    /// No baseline for a suite's workload (on this GPU: `gpu`, with
    /// baselines for the `others`); `record` is the command that records it.
    #[error(
        "{}: no baseline for workload `{workload}`{}",
        .path.display(),
        on_gpu(.gpu, .others)
    )]
    Missing {
        path: PathBuf,
        workload: String,
        gpu: Option<String>,
        others: Vec<String>,
        record: String,
    },
    /// A metric the thresholds gate that the baseline did not record;
    /// `near` is a recorded metric close to it.
    #[error(
        "{}: metric `{metric}` (thresholds line {line}) is not in the baseline",
        .path.display()
    )]
    MetricMissing {
        path: PathBuf,
        metric: String,
        line: usize,
        thresholds: String,
        near: Option<String>,
    },
    /// The baseline comes from another GPU model than the run.
    #[error(
        "device mismatch: baseline was recorded on {recorded}, this input comes from {current}"
    )]
    Device { recorded: String, current: String },
    /// `--kernel-key` asks for another kernel identity than the baseline's.
    #[error(
        "--kernel-key {asked} conflicts with the baseline, which was recorded with --kernel-key {recorded}"
    )]
    KernelKey { asked: String, recorded: String },
    /// The run would profile under another clock control than the baseline.
    #[error(
        "the baseline was profiled with --clock-control {recorded}, this run would use --clock-control {current}"
    )]
    ClockControl { recorded: String, current: String },
    /// The run would profile in another graph-profiling mode than the baseline.
    #[error(
        "the baseline was profiled with --graph-profiling {recorded}, this run would use {current}"
    )]
    GraphProfiling { recorded: String, current: String },
    /// The GPU was shared (another process on it, or an SM clock well under
    /// the baseline's) and `[gate] shared_gpu = "refuse"`: a check whose
    /// sensitive rules cannot be gated, or a baseline being recorded.
    #[error(
        "the GPU was shared {} ({evidence}): {}",
        if *.recording { "while the baseline was recorded" } else { "during this check" },
        if *.recording { "its durations and DRAM traffic would be a neighbour's too".to_string() } else { format!("{sensitive} check(s) of metrics another process can move cannot be gated") }
    )]
    SharedGpu {
        evidence: String,
        sensitive: usize,
        recording: bool,
    },
    /// An export profiled in another graph-profiling mode than the baseline.
    #[error(
        "{export}: this export was profiled with --graph-profiling {mode} ({}), the baseline with --graph-profiling {recorded}: the results are not comparable",
        if .mode == "graph" { "whole CUDA graphs are single results" } else { "graph kernel nodes are separate results" }
    )]
    ExportGraphProfiling {
        export: String,
        mode: String,
        recorded: String,
    },
}

impl BaselineError {
    /// The `hint:` line: the fix.
    pub(crate) fn hint(&self) -> String {
        match self {
            BaselineError::NotJson { .. } => "record one with `ncugate baseline record --input RAW.csv --output baseline.json`".into(),
            BaselineError::NoSchemaVersion { .. } => "record one with `ncugate baseline record`".into(),
            BaselineError::SchemaVersion { .. } => "use the ncugate version that recorded it, or re-record the baseline with this one".into(),
            BaselineError::DuplicateKey { .. } => "two entries for one key come from a hand edit or a merge: re-record the baseline, or keep one of the entries".into(),
            BaselineError::Unprintable { .. } => "ncugate writes such a character escaped (`\\u{…}`): re-record the baseline with `ncugate baseline record`; do not edit it by hand".into(),
            BaselineError::Invalid { .. } => "re-record the baseline; do not edit it by hand".into(),
            BaselineError::Missing { record, .. } => format!("record it on this runner: `{record}`"),
            BaselineError::MetricMissing { near: Some(near), thresholds, line, .. } => format!(
                "did you mean `{near}` (it is in the baseline)? Fix the name in {thresholds} line {line}, or re-record the baseline with these thresholds"
            ),
            BaselineError::MetricMissing { near: None, .. } => "re-record the baseline with these thresholds: `ncugate baseline record --thresholds …`".into(),
            BaselineError::Device { .. } => "record a baseline on this GPU, or pass --allow-device-mismatch to compare anyway".into(),
            BaselineError::KernelKey { asked, .. } => format!(
                "drop --kernel-key (check uses the baseline's), or re-record the baseline with --kernel-key {asked}"
            ),
            BaselineError::ClockControl { recorded, .. } => format!(
                "clock control changes throughput by ~10%: use --clock-control {recorded} (or [profile] clock_control), or re-record the baseline"
            ),
            BaselineError::SharedGpu { .. } => "run on a GPU no other process uses (`nvidia-smi --query-compute-apps=pid,name,used_memory --format=csv` lists them), or set [gate] shared_gpu = \"warn\" (--shared-gpu warn) to gate the deterministic rules and show the others as warnings".into(),
            BaselineError::GraphProfiling { .. } => "graph mode profiles a whole graph as one result: use the baseline's mode, or re-record the baseline".into(),
            BaselineError::ExportGraphProfiling { recorded, .. } => format!(
                "profile with `ncu --graph-profiling {recorded}` like the baseline, or re-record the baseline from exports of this mode"
            ),
        }
    }
}

fn on_gpu(gpu: &Option<String>, others: &[String]) -> String {
    match gpu {
        None => String::new(),
        Some(gpu) => format!(
            " on this GPU ({gpu}.json); there are baselines for {}",
            others.join(", ")
        ),
    }
}
