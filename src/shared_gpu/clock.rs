//! What the export itself says about the GPU during each kernel: the SM
//! clock (`sm__cycles_elapsed.avg.per_second`) and the elapsed cycles
//! (`gpc__cycles_elapsed.max`). Both are collected in the profiling pass
//! that ncugate runs anyway.

use crate::aggregate::{self, Scope};
use crate::model::{Aggregate, Run};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The SM clock during a kernel (ncu's "SM Frequency"), Hz in base units.
pub(crate) const SM_CLOCK: &str = "sm__cycles_elapsed.avg.per_second";
/// The kernel's elapsed cycles (ncu's "Elapsed Cycles").
pub(crate) const CYCLES: &str = "gpc__cycles_elapsed.max";
/// The metrics ncugate adds to every profiled run for this.
pub(crate) const METRICS: [&str; 2] = [SM_CLOCK, CYCLES];

/// One kernel's clock: the mean SM clock over its launches and its elapsed
/// cycles per run (summed over its launches), each averaged over the runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct KernelClock {
    pub(crate) sm_clock_hz: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cycles: Option<f64>,
}

/// The clock of every kernel of `runs` whose export has the SM clock.
pub(crate) fn of(runs: &[Run]) -> BTreeMap<String, KernelClock> {
    let mean = |key: &str, metric: &str, how: Aggregate| {
        let values = aggregate::samples(runs, Scope::Kernel(key), metric, how).values;
        let finite: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
        (!finite.is_empty()).then(|| finite.iter().sum::<f64>() / finite.len() as f64)
    };
    aggregate::kernel_keys(runs)
        .into_iter()
        .filter_map(|key| {
            let sm_clock_hz = mean(&key, SM_CLOCK, Aggregate::Mean).filter(|hz| *hz > 0.0)?;
            let cycles = mean(&key, CYCLES, Aggregate::Sum);
            Some((
                key,
                KernelClock {
                    sm_clock_hz,
                    cycles,
                },
            ))
        })
        .collect()
}

/// The mean SM clock over `kernels`.
pub(crate) fn mean_hz(kernels: &BTreeMap<String, KernelClock>) -> Option<f64> {
    let hz: Vec<f64> = kernels
        .values()
        .map(|k| k.sm_clock_hz)
        .filter(|hz| hz.is_finite() && *hz > 0.0)
        .collect();
    (!hz.is_empty()).then(|| hz.iter().sum::<f64>() / hz.len() as f64)
}

/// The current SM clock relative to the baseline's, over the kernels both
/// have (a GEMM may run at 1.7 GHz where an elementwise kernel runs at
/// 1.97, so kernels are compared with themselves): the mean of the ratios.
pub(crate) fn ratio(
    current: &BTreeMap<String, KernelClock>,
    baseline: &BTreeMap<String, KernelClock>,
) -> Option<f64> {
    let ratios: Vec<f64> = current
        .iter()
        .filter_map(|(k, c)| baseline.get(k).map(|b| (c.sm_clock_hz, b.sm_clock_hz)))
        // A baseline is read back: a clock of 0, below or not a number compares with nothing.
        .filter(|(c, b)| *c > 0.0 && *b > 0.0)
        .map(|(c, b)| c / b)
        .filter(|r| r.is_finite())
        .collect();
    (!ratios.is_empty()).then(|| ratios.iter().sum::<f64>() / ratios.len() as f64)
}
