//! Between read and judge: the instrument checked before its readings are
//! believed. A reading ncu cannot give for a kernel that ran, and a kernel of
//! the baseline that a capture limit kept out of the profiled window, are the
//! instrument's errors (exit 2), never a pass or a regression.
//!
//! NaN, infinite and negative values are refused by the readers themselves
//! (`crate::parse::number::impossible`); what is left is the zero that a
//! counter cannot read when its kernel ran at all: a launch takes time and
//! cycles, executes at least its `EXIT` instruction and has a grid and a
//! block. ncu writes such zeros when no counter was collected (another
//! profiler held them, a replay pass failed), and a zero against the
//! baseline reads as a 100% improvement: a pass, whatever the code did.

use crate::baseline::Baseline;
use crate::config::Source;
use crate::error::{Error, ExportError, Result};
use crate::model::Run;

/// Metrics that cannot read 0 for a launch that ran, by their name before
/// the roll-up (`gpu__time_duration` of `gpu__time_duration.sum`), with the
/// roll-ups that keep that true: the `.min` of instructions over SMs is 0
/// where one SM had no block, the `.sum`, `.avg` and `.max` are not.
const NEVER_ZERO: [(&str, &[&str]); 9] = [
    ("gpu__time_duration", &[]),
    ("sm__cycles_elapsed", &[]),
    ("gpc__cycles_elapsed", &[]),
    ("gpu__cycles_elapsed", &[]),
    ("sm__inst_executed", &["sum", "avg", "max"]),
    ("smsp__inst_executed", &["sum", "avg", "max"]),
    ("launch__grid_size", &[]),
    ("launch__block_size", &[]),
    ("launch__thread_count", &[]),
];

/// Whether `metric` cannot read 0 for a launch that ran.
fn never_zero(metric: &str) -> bool {
    let (base, rollup) = match metric.split_once('.') {
        Some((base, rest)) => (base, rest.split('.').next().unwrap_or("")),
        None => (metric, ""),
    };
    NEVER_ZERO
        .iter()
        .any(|(name, rollups)| *name == base && (rollups.is_empty() || rollups.contains(&rollup)))
}

/// Every kernel that ran has readings a kernel that ran can have: no launch
/// reads 0 for a metric that cannot (the error names the kernel and the
/// counter, and says when every counter of the kernel read 0).
pub(super) fn counters(runs: &[Run]) -> Result<()> {
    for run in runs {
        for (kernel, k) in &run.kernels {
            if k.launches == 0 {
                continue;
            }
            let read: Vec<_> = run
                .metrics
                .iter()
                .zip(&k.metrics)
                .filter(|(_, acc)| acc.present > 0)
                .collect();
            let Some((column, _)) = read
                .iter()
                .find(|(column, acc)| never_zero(&column.name) && acc.min == 0.0)
            else {
                continue;
            };
            // Every counter at 0 in one launch (of those kept one by one), or in all.
            let every = k
                .first_launches
                .iter()
                .map(|l| l.values.iter().flatten().collect::<Vec<_>>())
                .find(|v| v.len() > 1 && v.iter().all(|x| **x == 0.0))
                .map(|v| v.len())
                .or_else(|| {
                    (read.len() > 1 && read.iter().all(|(_, acc)| acc.max == 0.0))
                        .then_some(read.len())
                });
            return Err(Error::export(
                &run.source,
                ExportError::CounterReadZero {
                    kernel: kernel.clone(),
                    launches: k.launches,
                    metric: column.name.clone(),
                    all: every,
                },
            ));
        }
    }
    Ok(())
}

/// The launches a capture limit kept ncu from profiling, as a note for the
/// report; a kernel of the baseline that is not in a run cut short by
/// `launch_count` is an error: it may have run after the window closed, and
/// then neither "missing" nor "unchanged" is known.
pub(super) fn window(source: &Source, runs: &[Run], baseline: &Baseline) -> Result<Option<String>> {
    let Source::Profile { runner, .. } = source else {
        return Ok(None);
    };
    let Some(count) = runner.launch_count else {
        return Ok(filter_note(runner));
    };
    let Some(cut) = runs.iter().find(|r| r.total.launches >= count) else {
        return Ok(filter_note(runner));
    };
    // Absent from a run, or launched fewer times than in every baseline
    // run: its other launches may have come after the window.
    let cut_short = |(k, entry): &(&String, &crate::baseline::KernelEntry)| {
        runs.iter().any(|r| {
            r.kernels
                .get(*k)
                .is_none_or(|now| (now.launches as f64) < entry.launches.min)
        })
    };
    if let Some((kernel, _)) = baseline.kernels.iter().find(cut_short) {
        return Err(Error::export(
            &cut.source,
            ExportError::OutsideWindow {
                kernel: kernel.clone(),
                count,
                skip: runner.launch_skip.unwrap_or(0),
            },
        ));
    }
    let skip = match runner.launch_skip {
        Some(n) if n > 0 => format!(" after skipping the first {n}"),
        _ => String::new(),
    };
    let filter = filter_note(runner)
        .map(|f| format!("; {f}"))
        .unwrap_or_default();
    Ok(Some(format!(
        "ncu profiled {count} launches{skip}, its launch_count limit: launches after them, if the app made any, \
         were not profiled; every kernel of the baseline is among the profiled ones, as often as in the baseline{filter}"
    )))
}

/// What a launch filter left out, when one is set.
fn filter_note(runner: &crate::runner::RunnerConfig) -> Option<String> {
    let name = runner.kernel_name.as_deref()?;
    Some(format!(
        "only kernels whose name matches {} were profiled (kernel_name)",
        crate::text::escape::printable(name.to_string())
    ))
}

#[cfg(test)]
mod tests {
    use super::never_zero;

    #[test]
    fn which_counters_cannot_read_zero() {
        for m in [
            "gpu__time_duration.sum",
            "gpu__time_duration.avg",
            "sm__cycles_elapsed.avg.per_second",
            "gpc__cycles_elapsed.max",
            "sm__inst_executed.sum",
            "smsp__inst_executed.avg.per_cycle_active",
            "launch__grid_size",
        ] {
            assert!(never_zero(m), "{m}");
        }
        for m in [
            "sm__inst_executed.min",
            "sm__inst_executed_pipe_fp64.sum",
            "dram__bytes.sum",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "gpu__time_durationx.sum",
        ] {
            assert!(!never_zero(m), "{m}");
        }
    }
}
