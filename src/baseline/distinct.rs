//! `baseline record --input …`: every input must be a run of its own. The
//! same run given twice would be recorded as "2 runs" whose noise band is
//! σ = 0, and a later check would fail on any timing noise.
//!
//! The same file (or a byte-identical copy) is one run. So is one run in two
//! formats — a report and the raw page exported from it, or the raw and the
//! details page of one report: their bytes differ, their data does not. Two
//! inputs are taken for one run when
//!
//! - the same processes (`Process ID`) launched the same kernels, as many
//!   times each, and
//! - every metric that changes from run to run on its own — durations,
//!   cycles, clocks, DRAM traffic, throughputs: the metrics classed
//!   `sensitive` for a shared GPU ([`Environment::of_metric`]) — has the same
//!   sum, minimum and maximum in every kernel, within the rounding of the
//!   coarser export (a details page prints `41.41` us where the report has
//!   41,408 ns), and there is at least one such metric.
//!
//! A workload whose metrics are all deterministic (instruction counts, its
//! own load sectors) gives identical values run after run: σ = 0 is then
//! the truth, and such runs are recorded.

use crate::error::{Error, ExportError, Result};
use crate::model::{MetricAcc, Run};
use crate::rules::Environment;

/// Refuses an input that is the same run as an earlier one: the same bytes,
/// or the same data (see the module documentation). (Profiled runs are not
/// checked: a replaying stand-in for ncu gives identical runs on purpose.)
pub(crate) fn distinct_inputs(runs: &[Run]) -> Result<()> {
    for (i, run) in runs.iter().enumerate() {
        if let Some(first) = runs[..i].iter().find(|r| r.sha256 == run.sha256) {
            return Err(Error::export(
                &run.source,
                ExportError::SameExportTwice {
                    first: first.source.display().to_string(),
                    digest: run.sha256.get(..12).unwrap_or(&run.sha256).to_string(),
                },
            ));
        }
        if let Some((first, metric)) = runs[..i]
            .iter()
            .find_map(|r| same_run(r, run).map(|m| (r, m)))
        {
            return Err(Error::export(
                &run.source,
                ExportError::SameRunTwice {
                    first: first.source.display().to_string(),
                    processes: processes(run),
                    metric,
                },
            ));
        }
    }
    Ok(())
}

/// "process 3089", or "processes 3089 and 3178", of `run`.
fn processes(run: &Run) -> String {
    // Process IDs are the export's text, printed on the error line.
    let ids: Vec<String> = run
        .processes
        .keys()
        .map(|p| crate::text::escape::printable(p.clone()))
        .collect();
    match ids.as_slice() {
        [one] => format!("process {one}"),
        [rest @ .., last] => format!("processes {} and {last}", rest.join(", ")),
        [] => "no process".into(),
    }
}

/// The first run-to-run sensitive metric the two runs agree on, when they
/// are one run (see the module documentation); `None` when they are two.
pub(crate) fn same_run(a: &Run, b: &Run) -> Option<String> {
    if a.processes.is_empty() || a.processes != b.processes {
        return None;
    }
    let kernels = |r: &Run| -> Vec<(String, u64)> {
        r.kernels
            .iter()
            .map(|(k, v)| (k.clone(), v.launches))
            .collect()
    };
    if kernels(a) != kernels(b) {
        return None;
    }
    let mut evidence = None;
    for (i, column) in a.metrics.iter().enumerate() {
        let Some(j) = b.metric_index(&column.name) else {
            continue;
        };
        if column.unit.is_none()
            || b.metrics[j].unit != column.unit
            || Environment::of_metric(&column.name) != Environment::Sensitive
        {
            continue;
        }
        let scopes = a
            .kernels
            .iter()
            .filter_map(|(k, run)| Some((run, b.kernels.get(k)?)))
            .chain(std::iter::once((&a.total, &b.total)));
        let mut measured = false;
        for (x, y) in scopes {
            let (Some(x), Some(y)) = (x.metrics.get(i), y.metrics.get(j)) else {
                return None;
            };
            if !same_values(x, y) {
                return None;
            }
            measured |= x.present > 0;
        }
        if measured && evidence.is_none() {
            evidence = Some(column.name.clone());
        }
    }
    evidence
}

/// Whether two accumulators hold the same launches' values, each printed
/// to its export's step: the same counts, and sum, minimum and maximum
/// within the rounding of both (half a step each, per launch for the sum).
fn same_values(x: &MetricAcc, y: &MetricAcc) -> bool {
    if x.present != y.present || x.missing != y.missing {
        return false;
    }
    if x.present == 0 {
        return true;
    }
    let half = (x.step + y.step) / 2.0;
    let close = |u: f64, v: f64, launches: f64| {
        // f64 sums in another order or from another decimal differ by ulps.
        let slack = 1e-9 * u.abs().max(v.abs());
        (u - v).abs() <= half * launches + slack
    };
    close(x.sum, y.sum, x.present as f64) && close(x.min, y.min, 1.0) && close(x.max, y.max, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::KernelRun;
    use crate::model::MetricColumn;

    /// The launches of a kernel with one metric.
    fn kernel(values: &[f64], step: f64) -> KernelRun {
        let mut acc = MetricAcc::default();
        for v in values {
            acc.push_printed(*v, step);
        }
        KernelRun {
            launches: values.len() as u64,
            metrics: vec![acc],
            ..KernelRun::default()
        }
    }

    fn run(metric: &str, pid: &str, values: &[f64], step: f64) -> Run {
        Run {
            source: "r.csv".into(),
            sha256: String::new(),
            fingerprint: Default::default(),
            key_mode: Default::default(),
            graph_mode: None,
            page: Default::default(),
            metrics: vec![MetricColumn {
                name: metric.into(),
                unit: Some("ns".into()),
            }],
            kernels: [("k".to_string(), kernel(values, step))].into(),
            total: kernel(values, step),
            processes: [(pid.to_string(), values.len() as u64)].into(),
            profiler_version: None,
        }
    }

    const TIME: &str = "gpu__time_duration.sum";

    #[test]
    fn one_run_printed_coarser_is_the_same_run() {
        // 41,408 ns and 51,584 ns in the report; `41.41` and `51.58` us on the details page.
        let report = run(TIME, "3089", &[41_408.0, 51_584.0], 1.0);
        let details = run(TIME, "3089", &[41_410.0, 51_580.0], 10.0);
        assert_eq!(same_run(&report, &details), Some(TIME.to_string()));
        // Rounded further than its step allows: measured, not printed.
        let off = run(TIME, "3089", &[41_420.0, 51_580.0], 10.0);
        assert_eq!(same_run(&report, &off), None);
    }

    #[test]
    fn other_processes_or_other_times_are_other_runs() {
        let a = run(TIME, "3089", &[41_408.0], 1.0);
        assert_eq!(same_run(&a, &run(TIME, "3178", &[41_408.0], 1.0)), None);
        assert_eq!(same_run(&a, &run(TIME, "3089", &[41_376.0], 1.0)), None);
        let mut unnamed = a.clone();
        unnamed.processes.clear();
        assert_eq!(same_run(&unnamed, &unnamed.clone()), None);
    }

    #[test]
    fn a_process_id_is_printed_on_one_line() {
        let hostile = run(TIME, "1\n::error::x", &[41_408.0], 1.0);
        assert_eq!(processes(&hostile), "process 1\\u{000a}::error::x");
        let mut two = hostile.clone();
        two.processes = [("3089".into(), 1), ("3178".into(), 1)].into();
        assert_eq!(processes(&two), "processes 3089 and 3178");
    }

    #[test]
    fn deterministic_metrics_alone_prove_nothing() {
        let inst = "sm__inst_executed.sum";
        let a = run(inst, "3089", &[9_961_472.0], 1.0);
        assert_eq!(same_run(&a, &a.clone()), None);
    }
}
