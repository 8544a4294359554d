//! What a run is, read from the `--json` reports of `check` and `merge`:
//! one [`RunRecord`] per workload (a single check is the workload named on
//! the command line, `default` unless said) with the GPU fingerprint, the
//! verdict, and every kernel × rule's value with its per-run samples. The
//! files are read by [`crate::suite::read`], the reader `merge` reads shards
//! with: a single check's report goes through the very validation a suite's
//! workloads do (its rows against their own numbers, its downgrades against
//! their evidence, its outcome recomputed), so an edited report is never
//! recorded as baseline material.

use crate::error::{HistoryError, Result};
use crate::suite::read::Read;
use crate::verdict::{Report, StructureCheck, Subject};
use sha2::{Digest, Sha256};
use std::path::Path;

/// One workload's run on one GPU, before the commit is attached.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunRecord {
    pub(crate) workload: String,
    /// The GPU fingerprint the report compared (`devices.current`).
    pub(crate) gpu: String,
    /// `pass`, `regression` or `error`.
    pub(crate) outcome: String,
    /// The first 128 bits of the SHA-256 of the workload's report as read, in
    /// hex: the same report twice is one run.
    pub(crate) digest: String,
    /// How the report grouped launches into kernels (`demangled`, `function`, …).
    pub(crate) kernel_key: String,
    pub(crate) values: Vec<Value>,
}

/// One kernel × rule of a run (or a kernel's launch count).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Value {
    /// The kernel key; empty for a `per = "total"` rule.
    pub(crate) kernel: String,
    /// The rule's name; `launches` for the launch count.
    pub(crate) rule: String,
    pub(crate) metric: String,
    /// How the rule combined the kernel's launches in a run (`sum`, `mean`,
    /// `max`, `min`); empty for the launch count.
    pub(crate) aggregate: String,
    pub(crate) unit: String,
    /// The mean over the report's runs (`None` when it was not measured).
    pub(crate) mean: Option<f64>,
    /// One value per profiled run.
    pub(crate) samples: Vec<f64>,
    /// The check's status as the JSON report writes it (`pass`, `fail`, …).
    pub(crate) status: String,
}

/// The runs of one report file: every workload of a suite report, or the one
/// run of a single check's report (recorded as `workload`). Reports that
/// compared nothing (no GPU fingerprint: the check stopped before it) are
/// left out and said in `skipped`.
pub(crate) fn read(
    path: &Path,
    workload: &str,
    key: Option<&crate::report::sign::ReportKey>,
    skipped: &mut Vec<String>,
) -> Result<Vec<RunRecord>> {
    let reports: Vec<(String, Report)> = match crate::suite::read::read(path, workload, key)? {
        Read::Suite(suite) => suite
            .workloads
            .into_iter()
            .map(|w| (w.name, w.report))
            .collect(),
        Read::Check(report) => vec![(workload.to_string(), *report)],
    };
    let mut runs = Vec::new();
    for (name, report) in reports {
        if !matches!(report.subject, Subject::Metrics) {
            return Err(HistoryError::NotMetrics {
                workload: name,
                gate: report.subject.gate(),
            }
            .into());
        }
        match run_of(&name, &report) {
            Some(run) => runs.push(run),
            None => skipped.push(format!(
                "{}: workload `{name}` compared nothing (no GPU fingerprint): not recorded",
                path.display()
            )),
        }
    }
    Ok(runs)
}

/// The run of one workload's report; `None` when it compared nothing.
pub(crate) fn run_of(workload: &str, report: &Report) -> Option<RunRecord> {
    let gpu = report.devices.as_ref()?.current.clone();
    let mut values: Vec<Value> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for r in &report.rules {
        let kernel = r.kernel.as_deref().unwrap_or_default().to_string();
        if !seen.insert((kernel.clone(), r.rule.to_string())) {
            continue;
        }
        values.push(Value {
            kernel,
            rule: r.rule.to_string(),
            metric: r.metric.to_string(),
            aggregate: serde_json::to_value(r.aggregate)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            unit: r.unit.to_string(),
            mean: r.current.filter(|v| v.is_finite()),
            samples: r
                .current_runs
                .iter()
                .copied()
                .filter(|v| v.is_finite())
                .collect(),
            status: r.status.as_str().to_lowercase(),
        });
    }
    for s in &report.structure {
        if s.check != StructureCheck::Launches || s.current_launches.is_empty() {
            continue;
        }
        if !seen.insert((s.kernel.clone(), LAUNCHES.to_string())) {
            continue;
        }
        let samples: Vec<f64> = s.current_launches.iter().map(|&n| n as f64).collect();
        values.push(Value {
            kernel: s.kernel.clone(),
            rule: LAUNCHES.into(),
            metric: LAUNCHES.into(),
            aggregate: String::new(),
            unit: LAUNCHES.into(),
            mean: Some(samples.iter().sum::<f64>() / samples.len() as f64),
            samples,
            status: s.status.as_str().to_lowercase(),
        });
    }
    let canonical = serde_json::to_string(report).unwrap_or_default();
    Some(RunRecord {
        workload: workload.to_string(),
        gpu,
        outcome: report.outcome().as_str().to_string(),
        digest: crate::format::hex(&Sha256::digest(canonical.as_bytes())[..16]),
        kernel_key: report.kernel_key.to_string(),
        values,
    })
}

/// The rule and metric name of a kernel's launch count.
pub(crate) const LAUNCHES: &str = "launches";
