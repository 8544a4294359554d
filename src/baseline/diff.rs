//! `baseline diff OLD NEW`: what changed between two baselines — a per-kernel
//! summary of the means that moved outside the baselines' own noise, and,
//! with `--file-diff`, the line diff of the files themselves.

use super::Baseline;
use crate::aggregate::Stats;
use crate::format::{format_change, format_value};
use crate::model::Aggregate;
use crate::rules::Thresholds;
use similar::{ChangeTag, TextDiff};
use std::fmt::Write;

/// How a metric's launches are combined in the summary: the aggregate of the
/// first rule in `thresholds` that gates it (what a check compares), else
/// the mean for a percentage (a sum of percentages means nothing) and the
/// sum for everything else.
pub(crate) fn aggregate_for(
    thresholds: Option<&Thresholds>,
    metric: &str,
    unit: &str,
) -> Aggregate {
    thresholds
        .and_then(|t| t.rules.iter().find(|r| r.metric == metric))
        .map(|r| r.aggregate)
        .unwrap_or(if unit == "%" {
            Aggregate::Mean
        } else {
            Aggregate::Sum
        })
}

/// A mean that moved by less than this many standard deviations (of either
/// baseline's runs) is noise: `baseline diff` does not list it.
pub(crate) const NOISE_SIGMAS: f64 = 2.0;

/// The diff as text, ready to print. `thresholds` (the rules the baseline
/// serves) picks each metric's aggregate, see [`aggregate_for`]; the line
/// diff of the files follows only with `file_diff` (and when they differ).
pub(crate) fn render(
    old: &Baseline,
    new: &Baseline,
    old_text: &str,
    new_text: &str,
    thresholds: Option<&Thresholds>,
    file_diff: bool,
) -> String {
    let mut out = String::new();
    if old.fingerprint != new.fingerprint {
        let _ = writeln!(out, "GPU: {} → {}", old.fingerprint, new.fingerprint);
    }
    if old.kernel_key != new.kernel_key {
        let _ = writeln!(out, "kernel key: {} → {}", old.kernel_key, new.kernel_key);
    }
    let mut rows = Vec::new();
    let mut noise = 0;
    let keys: std::collections::BTreeSet<&String> =
        old.kernels.keys().chain(new.kernels.keys()).collect();
    for key in keys {
        match (old.kernels.get(key), new.kernels.get(key)) {
            (Some(_), None) => rows.push(format!("- {key}: removed")),
            (None, Some(_)) => rows.push(format!("+ {key}: added")),
            (Some(a), Some(b)) => {
                let mut changes = Vec::new();
                if a.launches.mean != b.launches.mean {
                    changes.push(format!(
                        "launches/run {} → {}",
                        a.launches.mean, b.launches.mean
                    ));
                }
                for (metric, mb) in &b.metrics {
                    match a.metrics.get(metric) {
                        None => changes.push(format!("{metric}: added")),
                        Some(ma) => {
                            let aggregate = aggregate_for(thresholds, metric, &mb.unit);
                            let (sa, sb) = (ma.stats(aggregate), mb.stats(aggregate));
                            if within_noise(sa, sb) {
                                noise += usize::from(sa.mean != sb.mean);
                            } else if let Some(change) = mean_change(sa, sb) {
                                changes.push(format!(
                                    "{metric} ({aggregate}): {} → {} ({})",
                                    format_value(sa.mean, &ma.unit),
                                    format_value(sb.mean, &mb.unit),
                                    change
                                ));
                            }
                        }
                    }
                }
                for metric in a.metrics.keys().filter(|m| !b.metrics.contains_key(m)) {
                    changes.push(format!("{metric}: removed"));
                }
                if !changes.is_empty() {
                    rows.push(format!("~ {key}:\n    {}", changes.join("\n    ")));
                }
            }
            (None, None) => {}
        }
    }
    if rows.is_empty() {
        out.push_str("kernels: no changed means\n");
    } else {
        out.push_str("kernels:\n");
        for row in rows {
            let _ = writeln!(out, "{row}");
        }
    }
    if noise > 0 {
        let s = if noise == 1 { "" } else { "s" };
        let _ = writeln!(
            out,
            "({noise} mean{s} moved within the baselines' noise (±{NOISE_SIGMAS}σ or under 0.05%): not listed)"
        );
    }
    if !file_diff || old_text == new_text {
        return out;
    }
    out.push_str("\nfile diff:\n");
    let diff = TextDiff::from_lines(old_text, new_text);
    for hunk in diff.unified_diff().context_radius(2).iter_hunks() {
        let _ = writeln!(out, "{}", hunk.header());
        for change in hunk.iter_changes() {
            let sign = match change.tag() {
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
                ChangeTag::Equal => ' ',
            };
            let _ = write!(out, "{sign}{}", change.value());
            if !change.value().ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}

/// Whether two baselines' means of a metric differ by no more than their
/// runs vary: within [`NOISE_SIGMAS`] standard deviations of either, or by
/// under 0.05% (what a change shown to one decimal calls ±0.0%).
fn within_noise(a: &Stats, b: &Stats) -> bool {
    let delta = (b.mean - a.mean).abs();
    let band = NOISE_SIGMAS * a.stddev.max(b.stddev);
    delta <= band || delta < a.mean.abs() * 0.0005
}

/// The relative change of two means, or `None` when they are equal.
fn mean_change(a: &Stats, b: &Stats) -> Option<String> {
    (a.mean != b.mean).then(|| format_change(a.mean, b.mean))
}
