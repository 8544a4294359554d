//! What a reader should know about the data, made once for `check` and
//! `baseline record` alike: runs read from a details page, ncu's extra passes,
//! ncu settings that differ from the baseline's.

use crate::baseline::ProfileSettings;
use crate::config::Source;
use crate::model::Run;
use crate::rules::Thresholds;
use crate::runner::{self, RunnerConfig};

/// When ncugate profiled in fast mode and ncu took more than one pass per
/// kernel: which metrics are responsible and what they cost. Full mode takes
/// `--set full`'s passes on purpose.
fn cost_note(
    runner: &RunnerConfig,
    metrics: &[String],
    runs: &[Run],
    seconds: &[f64],
) -> Option<String> {
    if runner.mode != runner::Mode::Fast {
        return None;
    }
    let (i, passes) = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| runner::passes::Passes::of(&r.total.passes).map(|p| (i, p)))
        .max_by_key(|(_, p)| p.max)?;
    let mut collected = metrics.to_vec();
    for m in &runner.extra_metrics {
        if !collected.contains(m) {
            collected.push(m.clone());
        }
    }
    let builtin = Thresholds::builtin()
        .map(|t| t.metrics())
        .unwrap_or_default();
    runner::passes::note(&collected, &builtin, passes, seconds.get(i).copied())
}

/// What a reader should know about the data, made once for `check` and
/// `baseline record` alike: the runs whose metrics came from the details
/// page, and what ncu's extra passes cost (fast mode only).
pub(super) struct DataNotes {
    pub(super) details_page: Vec<String>,
    pub(super) cost: Option<String>,
}

impl DataNotes {
    pub(super) fn of(
        source: &Source,
        metrics: &[String],
        runs: &[Run],
        seconds: &[f64],
    ) -> DataNotes {
        let details_page = runs
            .iter()
            .filter(|r| {
                !matches!(
                    r.page,
                    crate::model::ExportPage::Raw | crate::model::ExportPage::Nvbench
                )
            })
            .map(|r| {
                format!(
                    "{}: metrics read from the {} (by metric ID or details label)",
                    r.source.display(),
                    r.page
                )
            })
            .collect();
        let cost = match source {
            Source::Profile { runner, .. } => cost_note(runner, metrics, runs, seconds),
            Source::Inputs(_) => None,
        };
        DataNotes { details_page, cost }
    }
}

/// When the two sides' ncu settings differ or one is unknown: what the
/// reader should know (the settings that matter are refused by `pick.rs`'s `usable`).
pub(super) fn settings(
    baseline: Option<&ProfileSettings>,
    current: Option<&ProfileSettings>,
) -> Option<String> {
    match (baseline, current) {
        (Some(b), None) => Some(format!("the inputs' ncu settings are unknown; the baseline was profiled with --clock-control {} --graph-profiling {}", b.clock_control, b.graph_profiling.as_str())),
        (None, Some(c)) => Some(format!("the baseline does not record its ncu settings (recorded from exports); this run used --clock-control {} --graph-profiling {}", c.clock_control, c.graph_profiling.as_str())),
        (Some(b), Some(c)) if b.mode != c.mode => Some(format!("the baseline was profiled in {:?} mode, this run in {:?} mode (same gated metrics)", b.mode, c.mode).to_lowercase()),
        _ => None,
    }
}
