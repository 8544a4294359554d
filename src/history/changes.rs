//! `ncugate history changes`: the commits where a series changed. Two
//! tests, by what the metric is:
//!
//! - **Counts** ([`COUNT_UNITS`]: executed instructions, launches, L1
//!   sectors) are bit-identical from run to run of the same code on the
//!   H200, so the change is the exact commit whose value differs from the
//!   run before it.
//! - **Everything else** (timings, throughputs, bytes) is noisy, so one odd
//!   run is not a change: a change is [`CONSECUTIVE`] runs in a row beyond
//!   ±[`TOLERANCE_PCT`]% of the median of the up to [`WINDOW`] runs before
//!   them, on the same side; it is dated at the first of them, and the
//!   window starts again there. This is the "≥ 2 consecutive violations"
//!   rule that regression dashboards use to stop single-run false alarms,
//!   chosen over a statistical change-point test (E-Divisive, Student-t)
//!   because it needs no tuning beyond the tolerance, explains itself in
//!   one line, and works from the third run on.

use super::show::Series;
use serde::Serialize;

/// Units whose values do not vary between runs of the same code.
pub(crate) const COUNT_UNITS: &[&str] = &["inst", "launches", "sector"];
/// Runs before a candidate whose median it is compared with.
pub(crate) const WINDOW: usize = 5;
/// How far from that median a value may be without counting as a violation, percent.
pub(crate) const TOLERANCE_PCT: f64 = 5.0;
/// Violations in a row, on one side, that make a change.
pub(crate) const CONSECUTIVE: usize = 2;

/// One change of one series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Change {
    pub(crate) workload: String,
    pub(crate) gpu: String,
    pub(crate) kernel: String,
    pub(crate) rule: String,
    pub(crate) metric: String,
    pub(crate) unit: String,
    /// The first commit with the new value.
    pub(crate) commit: String,
    pub(crate) branch: String,
    pub(crate) time: String,
    /// The value before (the previous run's, or the median of the window).
    pub(crate) from: f64,
    /// The value at `commit`.
    pub(crate) to: f64,
    /// `exact` (counts) or `consecutive` (noisy metrics).
    pub(crate) test: &'static str,
}

/// The changes of every series, oldest first within a series.
pub(crate) fn find(series: &[Series]) -> Vec<Change> {
    let mut out = Vec::new();
    for s in series {
        let values: Vec<(usize, f64)> = s
            .points
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.value.map(|v| (i, v)))
            .collect();
        let (test, at): (&'static str, Vec<(usize, f64)>) =
            if COUNT_UNITS.contains(&s.unit.as_str()) {
                ("exact", exact(&values))
            } else {
                ("consecutive", consecutive(&values))
            };
        for (i, from) in at {
            let p = &s.points[values[i].0];
            out.push(Change {
                workload: s.workload.clone(),
                gpu: s.gpu.clone(),
                kernel: s.kernel.clone(),
                rule: s.rule.clone(),
                metric: s.metric.clone(),
                unit: s.unit.clone(),
                commit: p.commit.clone(),
                branch: p.branch.clone(),
                time: p.time.clone(),
                from,
                to: values[i].1,
                test,
            });
        }
    }
    out
}

/// The indices (into `values`) whose value differs from the one before, with that one.
fn exact(values: &[(usize, f64)]) -> Vec<(usize, f64)> {
    (1..values.len())
        .filter(|&i| values[i].1 != values[i - 1].1)
        .map(|i| (i, values[i - 1].1))
        .collect()
}

/// The indices where [`CONSECUTIVE`] runs in a row leave the window's median
/// by more than [`TOLERANCE_PCT`] on one side, with that median.
fn consecutive(values: &[(usize, f64)]) -> Vec<(usize, f64)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 1;
    while i < values.len() {
        let window = &values[start.max(i.saturating_sub(WINDOW))..i];
        let reference = median(window.iter().map(|v| v.1).collect());
        let side = |v: f64| {
            let band = reference.abs() * TOLERANCE_PCT / 100.0;
            if v > reference + band {
                1
            } else if v < reference - band {
                -1
            } else {
                0
            }
        };
        let first = side(values[i].1);
        let run = values[i..]
            .iter()
            .take(CONSECUTIVE)
            .take_while(|v| first != 0 && side(v.1) == first)
            .count();
        if run == CONSECUTIVE {
            out.push((i, reference));
            start = i;
            i += CONSECUTIVE;
        } else {
            i += 1;
        }
    }
    out
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// The changes as text: a line per change under a heading per workload × GPU.
pub(crate) fn render(changes: &[Change]) -> String {
    use crate::format::{format_change, format_value};
    if changes.is_empty() {
        return "ncugate: no change in the selected series\n".into();
    }
    let mut out = String::new();
    let mut heading = None;
    for c in changes {
        let this = (c.workload.as_str(), c.gpu.as_str());
        if heading != Some(this) {
            out.push_str(&format!(
                "{} on {}\n",
                super::show::escaped(&c.workload),
                super::show::escaped(&c.gpu)
            ));
            heading = Some(this);
        }
        let kernel = if c.kernel.is_empty() {
            "(total)".to_string()
        } else {
            super::show::escaped(&c.kernel)
        };
        let why = match c.test {
            "exact" => "a count: differs from the run before".to_string(),
            _ => format!(
                "{CONSECUTIVE} runs in a row beyond ±{TOLERANCE_PCT}% of the median of the {WINDOW} before"
            ),
        };
        out.push_str(&format!(
            "  {} ({}) · {kernel} · {}: {} → {} ({}) [{why}]\n",
            super::show::short(&c.commit),
            super::show::escaped(&c.branch),
            super::show::escaped(&c.metric),
            format_value(c.from, &super::show::escaped(&c.unit)),
            format_value(c.to, &super::show::escaped(&c.unit)),
            format_change(c.from, c.to),
        ));
    }
    out
}

/// The changes as JSON (`{"changes": […]}`).
pub(crate) fn json(changes: &[Change]) -> String {
    // Names from the store, escaped as the text view escapes them.
    let mut doc = serde_json::json!({ "schema_version": 1, "changes": changes });
    crate::text::escape::printable_json(&mut doc);
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn indexed(values: &[f64]) -> Vec<(usize, f64)> {
        values.iter().copied().enumerate().collect()
    }

    #[test]
    fn a_count_changes_at_the_exact_commit() {
        assert_eq!(
            exact(&indexed(&[5.0, 5.0, 7.0, 7.0, 5.0])),
            [(2, 5.0), (4, 7.0)]
        );
        assert!(exact(&indexed(&[5.0, 5.0])).is_empty());
    }

    #[test]
    fn a_timing_changes_after_two_runs_in_a_row_on_one_side() {
        // One odd run is no change.
        assert!(consecutive(&indexed(&[100.0, 101.0, 99.0, 130.0, 100.0, 101.0])).is_empty());
        // A step up is dated at its first run; the window starts again there.
        assert_eq!(
            consecutive(&indexed(&[100.0, 101.0, 99.0, 130.0, 131.0, 129.0, 130.0])),
            [(3, 100.0)]
        );
        // Noise within the tolerance is no change.
        assert!(consecutive(&indexed(&[100.0, 103.0, 97.0, 102.0, 98.0, 104.0])).is_empty());
        // One run above and one below are not two on one side.
        assert!(consecutive(&indexed(&[100.0, 100.0, 120.0, 80.0, 100.0])).is_empty());
    }
}
