//! From runs to samples: per kernel key and metric, one value per run (the
//! launches combined by an [`Aggregate`]), and the statistics over runs that
//! a baseline stores and a comparison uses.

use crate::model::{Aggregate, KernelRun, Run};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Statistics of one quantity over runs, in its base unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Stats {
    /// Runs with a value.
    pub(crate) n: u64,
    pub(crate) mean: f64,
    /// Sample standard deviation (n − 1); 0 for a single run.
    pub(crate) stddev: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

impl Stats {
    /// Statistics of `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Stats> {
        if values.is_empty() {
            return None;
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let stddev = if values.len() > 1 {
            let plain = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            if plain.is_finite() {
                plain
            } else {
                // Finite values whose squared spread overflows (1e160, 3e160):
                // deviations scaled by the largest one before squaring.
                let scale = values
                    .iter()
                    .map(|v| (v - mean).abs())
                    .fold(0.0_f64, f64::max);
                scale
                    * (values
                        .iter()
                        .map(|v| ((v - mean) / scale).powi(2))
                        .sum::<f64>()
                        / (n - 1.0))
                        .sqrt()
            }
        } else {
            0.0
        };
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Stats {
            n: values.len() as u64,
            mean,
            stddev,
            min,
            max,
        })
    }
}

/// Which part of a run a value belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope<'a> {
    Kernel(&'a str),
    Total,
}

fn part<'r>(run: &'r Run, scope: Scope<'_>) -> Option<&'r KernelRun> {
    match scope {
        Scope::Kernel(key) => run.kernels.get(key),
        Scope::Total => Some(&run.total),
    }
}

/// A metric's values over several runs, and why some runs have none.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Samples {
    pub(crate) values: Vec<f64>,
    /// Runs whose export lacks the metric's column.
    pub(crate) absent_in: Vec<usize>,
    /// Runs where some launch of the kernel had `n/a` or an empty cell.
    pub(crate) missing_in: Vec<usize>,
}

/// One value per run of `scope`'s `metric`, combined over launches by `aggregate`.
/// Runs where the kernel did not launch contribute nothing.
pub(crate) fn samples(
    runs: &[Run],
    scope: Scope<'_>,
    metric: &str,
    aggregate: Aggregate,
) -> Samples {
    let mut out = Samples::default();
    for (i, run) in runs.iter().enumerate() {
        let Some(m) = run.metric_index(metric) else {
            out.absent_in.push(i);
            continue;
        };
        if run.metrics[m].unit.is_none() {
            out.absent_in.push(i);
            continue;
        }
        let Some(kernel) = part(run, scope) else {
            continue;
        };
        match kernel.metrics[m].value(aggregate) {
            Some(v) => out.values.push(v),
            None => out.missing_in.push(i),
        }
    }
    out
}

/// The σ the sources measured for `scope`'s `metric` combined by
/// `aggregate` (nvbench's noise; see [`crate::model::MetricAcc::sigma`]),
/// as the root mean square over the runs that have the metric: 0 for ncu's
/// exports, which measure none.
pub(crate) fn measured_sigma(
    runs: &[Run],
    scope: Scope<'_>,
    metric: &str,
    aggregate: Aggregate,
) -> f64 {
    let sigmas: Vec<f64> = runs
        .iter()
        .filter_map(|run| {
            let m = run.metric_index(metric)?;
            part(run, scope).map(|k| k.metrics[m].measured_sigma(aggregate))
        })
        .collect();
    if sigmas.is_empty() {
        return 0.0;
    }
    (sigmas.iter().map(|s| s * s).sum::<f64>() / sigmas.len() as f64).sqrt()
}

/// Launches per run of `scope` (0 for runs where the kernel did not launch).
pub(crate) fn launches(runs: &[Run], scope: Scope<'_>) -> Vec<u64> {
    runs.iter()
        .map(|run| part(run, scope).map_or(0, |k| k.launches))
        .collect()
}

/// Every kernel key of any of `runs`, sorted.
pub(crate) fn kernel_keys(runs: &[Run]) -> BTreeSet<String> {
    runs.iter()
        .flat_map(|r| r.kernels.keys().cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_use_the_sample_standard_deviation() {
        let s = Stats::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!((s.n, s.mean, s.min, s.max), (8, 5.0, 2.0, 9.0));
        assert!((s.stddev - 2.138_089_935).abs() < 1e-9);
        assert_eq!(Stats::of(&[3.0]).unwrap().stddev, 0.0);
        assert!(Stats::of(&[]).is_none());
    }
}
