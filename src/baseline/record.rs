//! `baseline record`: runs in, baseline out.

use super::{Baseline, InputFile, KernelEntry, MetricEntry, SCHEMA_VERSION};
use crate::aggregate::{self, Scope, Stats};
use crate::error::{Error, ExportError, Result};
use crate::model::{Aggregate, Findings, Run};
use std::collections::BTreeMap;

/// Builds a baseline from `runs` (one per `--input`) for `metrics`.
///
/// Every metric must be present in every run, with a value for every launch:
/// a baseline with holes would let a later check pass on nothing. Metrics in
/// `optional` (named only by `optional = true` rules) are left out of a
/// kernel's entry instead; a check then reports those rules as skipped.
pub(crate) fn build(
    runs: &[Run],
    metrics: &[String],
    optional: &[String],
    findings: Option<(&Findings, Vec<InputFile>)>,
    thresholds: &str,
) -> Result<Baseline> {
    let first = crate::model::common_fingerprint(runs).map(|_| &runs[0])?;
    // One unit per metric across runs: averaging `MB` with `Mbyte` (or `%`
    // with `byte`) would store a meaningless mean.
    for metric in metrics {
        let mut seen: Option<(&str, &Run)> = None;
        for run in runs {
            let Some(unit) = run
                .metric_index(metric)
                .and_then(|m| run.metrics[m].unit.as_deref())
            else {
                continue;
            };
            match seen {
                Some((u, other)) if u != unit => {
                    return Err(Error::export(
                        &run.source,
                        crate::error::ExportError::DifferentUnits {
                            metric: metric.to_string(),
                            unit: unit.to_string(),
                            other_unit: u.to_string(),
                            other: other.source.display().to_string(),
                        },
                    ));
                }
                Some(_) => {}
                None => seen = Some((unit, run)),
            }
        }
    }
    for run in runs {
        for column in &run.metrics {
            if column.unit.is_none() {
                return Err(missing_metric(run, &column.name));
            }
        }
    }
    // Mixed graph-profiling modes explain differing kernels: say that first.
    let graph_mode = crate::model::common_graph_mode(runs)?;
    // Kernels the runs did not launch alike (an autotuner's candidates) are
    // kept apart, ungated; the rest, and the total of the rest, are gated.
    let variable = crate::varies::split(runs);
    some_stable(runs, &variable)?;
    let stable_runs;
    let runs = if variable.is_empty() {
        runs
    } else {
        stable_runs = crate::varies::without(runs, &variable);
        &stable_runs[..]
    };
    let mut kernels = BTreeMap::new();
    for key in aggregate::kernel_keys(runs) {
        let mut entry = entry(runs, Scope::Kernel(&key), metrics, optional)?;
        if let Some((findings, _)) = &findings
            && let Some(f) = findings.get(&key)
        {
            entry.findings = f.clone();
        }
        kernels.insert(key, entry);
    }
    let details = findings.map(|(_, files)| files).unwrap_or_default();
    Ok(Baseline {
        schema_version: SCHEMA_VERSION,
        ncugate_version: env!("CARGO_PKG_VERSION").to_string(),
        created: jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string(),
        kernel_key: first.key_mode,
        fingerprint: first.fingerprint.clone(),
        inputs: runs
            .iter()
            .map(|r| InputFile {
                path: r.source.display().to_string(),
                sha256: r.sha256.clone(),
            })
            .collect(),
        details,
        thresholds: thresholds.to_string(),
        profile: None,
        cost_seconds: None,
        graph_mode,
        profiler_version: runs.iter().find_map(|r| r.profiler_version.clone()),
        gpu: None,
        runs: runs.len() as u64,
        total: entry(runs, Scope::Total, metrics, optional)?,
        kernels,
        variable,
    })
}

/// Runs that share no kernel launched alike are not runs of one workload:
/// a baseline of them would gate nothing. (Runs that share some are: the
/// kernels they launched differently are kept as variable, ungated.)
fn some_stable(
    runs: &[Run],
    variable: &BTreeMap<String, crate::varies::VariableKernel>,
) -> Result<()> {
    let Some(first) = runs.first() else {
        return Ok(());
    };
    if first.kernels.keys().any(|k| !variable.contains_key(k)) {
        return Ok(());
    }
    let (Some(kernel), Some(other)) = (variable.keys().next(), runs.get(1)) else {
        return Ok(());
    };
    Err(Error::export(
        &other.source,
        ExportError::DifferentKernels {
            kernel: kernel.clone(),
            other: first.source.display().to_string(),
        },
    ))
}

fn entry(
    runs: &[Run],
    scope: Scope<'_>,
    metrics: &[String],
    optional: &[String],
) -> Result<KernelEntry> {
    let launches: Vec<f64> = aggregate::launches(runs, scope)
        .into_iter()
        .map(|n| n as f64)
        .collect();
    let launches = Stats::of(&launches).unwrap_or(Stats {
        n: 0,
        mean: 0.0,
        stddev: 0.0,
        min: 0.0,
        max: 0.0,
    });
    let mut out = BTreeMap::new();
    'metrics: for metric in metrics {
        let mut stats = Vec::with_capacity(4);
        for aggregate in Aggregate::ALL {
            let samples = aggregate::samples(runs, scope, metric, aggregate);
            if !samples.missing_in.is_empty() && optional.contains(metric) {
                continue 'metrics;
            }
            if let Some(&i) = samples.missing_in.first() {
                let what = match scope {
                    Scope::Kernel(k) => format!("kernel `{k}`"),
                    Scope::Total => "the run".into(),
                };
                return Err(Error::export(
                    &runs[i].source,
                    crate::error::ExportError::MissingValues {
                        metric: metric.to_string(),
                        scope: what,
                    },
                ));
            }
            match Stats::of(&samples.values) {
                Some(s)
                    if ![s.mean, s.stddev, s.min, s.max]
                        .iter()
                        .all(|v| v.is_finite()) =>
                {
                    let what = match scope {
                        Scope::Kernel(k) => format!("kernel `{k}`"),
                        Scope::Total => "the run".into(),
                    };
                    return Err(Error::export(
                        &runs[0].source,
                        ExportError::StatisticsOverflow {
                            metric: metric.clone(),
                            scope: what,
                            aggregate: aggregate.to_string(),
                        },
                    ));
                }
                // The spread between runs, or the one the source measured
                // within each (nvbench's noise), whichever is larger.
                Some(mut s) => {
                    let measured = aggregate::measured_sigma(runs, scope, metric, aggregate);
                    if measured.is_finite() {
                        s.stddev = s.stddev.max(measured);
                    }
                    stats.push(s)
                }
                None => break,
            }
        }
        if let [sum, mean, max, min] = stats[..] {
            let unit = runs
                .iter()
                .find_map(|r| {
                    r.metric_index(metric)
                        .and_then(|m| r.metrics[m].unit.as_deref())
                })
                .map_or_else(|| super::metrics::interned(""), super::metrics::interned);
            out.insert(
                metric.clone(),
                MetricEntry {
                    unit,
                    sum,
                    mean,
                    max,
                    min,
                },
            );
        }
    }
    Ok(KernelEntry {
        launches,
        metrics: out.into_iter().collect(),
        findings: BTreeMap::new(),
        code: None,
        source: None,
    })
}

/// The metric columns of a raw-page CSV export (its header line: `"ID",…,"Kernel Name",…`),
/// read from its first 1 MiB; empty for anything else (a report, a details page).
fn export_columns(path: &std::path::Path) -> Vec<String> {
    use std::io::Read;
    let mut head = Vec::new();
    // A named pipe was read once already: its columns are not looked up.
    if !crate::io::bounded::can_reopen(path) {
        return Vec::new();
    }
    let read = std::fs::File::open(path).and_then(|f| f.take(1 << 20).read_to_end(&mut head));
    if read.is_err() {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&head);
    let Some(header) = text
        .lines()
        .find(|l| l.starts_with("\"ID\",") && l.contains("\"Kernel Name\""))
    else {
        return Vec::new();
    };
    header
        .split("\",\"")
        .map(|c| c.trim_matches('"').to_string())
        .filter(|c| c.contains("__"))
        .collect()
}

/// The error for a metric an export does not have, with the fix.
pub(crate) fn missing_metric(run: &Run, metric: &str) -> Error {
    if crate::parse::page::only_not_available(&run.source, metric) {
        return Error::export(
            &run.source,
            crate::error::ExportError::NotAvailable {
                metric: metric.to_string(),
            },
        );
    }
    use crate::error::{ExportError, MetricNear};
    let near =
        if metric == "sys__memory_throughput" || metric.starts_with("sys__memory_throughput.") {
            MetricNear::NotAnNcuMetric
        } else {
            let near = crate::runner::failure::suggestions(metric);
            // A known name that is merely absent from this export gets no "did you mean".
            let known = near.iter().any(|m| m == metric);
            let columns = export_columns(&run.source);
            let in_export = (!known)
                .then(|| crate::suggest::closest(metric, columns.iter().map(String::as_str)))
                .flatten();
            match (in_export, near.first().filter(|_| !known)) {
                (Some(m), _) => MetricNear::InExport(m.to_string()),
                (None, Some(m)) => MetricNear::KnownToNcu(m.clone()),
                (None, None) => MetricNear::Nothing,
            }
        };
    Error::export(
        &run.source,
        ExportError::MissingMetric {
            metric: metric.to_string(),
            near,
        },
    )
}
