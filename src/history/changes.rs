//! `ncugate history changes`: the commits where a series changed. Two
//! tests, by what the metric is:
//!
//! - **Counts** ([`COUNT_UNITS`]: executed instructions, launches, L1
//!   sectors) are bit-identical from run to run of the same code on the
//!   H200, so the change is the exact commit whose value differs from the
//!   run before it.
//! - **Everything else** (timings, throughputs, bytes) is noisy: its change
//!   points are E-Divisive means splits confirmed by Welch's t-test at
//!   `[history] change_p` within `[history] change_window` runs
//!   ([`super::changepoint`]), dated at the first run after the change.
//!   This replaced a "two runs in a row beyond ±5% of the median of the 5
//!   before" rule, whose false-alarm rate was never measured and which
//!   missed every step smaller than 5%; the change-point test's rates on
//!   recorded GPU noise are measured by `changepoint_eval` and published.

use super::changepoint::{self, Settings};
use super::show::Series;
use serde::Serialize;

/// Units whose values do not vary between runs of the same code.
pub(crate) const COUNT_UNITS: &[&str] = &["inst", "launches", "sector"];

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
    /// The value before: the previous run's (counts), or the mean of the
    /// runs since the last change (up to the window).
    pub(crate) from: f64,
    /// The value at `commit` (counts), or the mean of the runs from it.
    pub(crate) to: f64,
    /// `exact` (counts) or `e-divisive` (noisy metrics).
    pub(crate) test: &'static str,
    /// Welch's two-sided p of an `e-divisive` change.
    pub(crate) p_value: Option<f64>,
}

/// The changes of every series, oldest first within a series.
pub(crate) fn find(series: &[Series], settings: Settings) -> Vec<Change> {
    let mut out = Vec::new();
    for s in series {
        let (test, at) = of(s, settings);
        for found in at {
            let p = &s.points[found.index];
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
                from: found.from,
                to: found.to,
                test,
                p_value: found.p,
            });
        }
    }
    out
}

/// The points of `s` where it changed (indices into its points), by the test its unit takes.
pub(crate) fn at(s: &Series, settings: Settings) -> Vec<usize> {
    of(s, settings).1.iter().map(|f| f.index).collect()
}

/// The test `s` takes and its changes, `index` into its points.
fn of(s: &Series, settings: Settings) -> (&'static str, Vec<Found>) {
    let values: Vec<(usize, f64)> = s
        .points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.value.map(|v| (i, v)))
        .collect();
    let (test, mut at) = if COUNT_UNITS.contains(&s.unit.as_str()) {
        ("exact", exact(&values))
    } else {
        let only: Vec<f64> = values.iter().map(|v| v.1).collect();
        let at = changepoint::find(&only, settings)
            .into_iter()
            .map(|c| Found {
                index: c.index,
                from: c.before,
                to: c.after,
                p: Some(c.p),
            })
            .collect();
        ("e-divisive", at)
    };
    // From the measured values back to the series' points.
    for f in &mut at {
        f.index = values[f.index].0;
    }
    (test, at)
}

/// A change in a series: where (into its measured values), from and to what.
struct Found {
    index: usize,
    from: f64,
    to: f64,
    p: Option<f64>,
}

/// The values that differ from the one before, with that one.
fn exact(values: &[(usize, f64)]) -> Vec<Found> {
    (1..values.len())
        .filter(|&i| values[i].1 != values[i - 1].1)
        .map(|i| Found {
            index: i,
            from: values[i - 1].1,
            to: values[i].1,
            p: None,
        })
        .collect()
}

/// The changes as text: a line per change under a heading per workload ×
/// GPU, wrapped to the terminal's width ([`crate::report::terminal::width`]).
pub(crate) fn render(changes: &[Change], settings: Settings) -> String {
    render_to(changes, settings, crate::report::terminal::width())
}

/// [`render`] at `width` columns.
fn render_to(changes: &[Change], settings: Settings, width: usize) -> String {
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
                "change point: mean of the runs before vs. from it, Welch p = {:.1e} < {} (window {})",
                c.p_value.unwrap_or(f64::NAN),
                settings.p,
                settings.window
            ),
        };
        let line = format!(
            "{} ({}) · {kernel} · {}: {} → {} ({}) [{why}]",
            super::show::short(&c.commit),
            super::show::escaped(&c.branch),
            super::show::escaped(&c.metric),
            format_value(c.from, &super::show::escaped(&c.unit)),
            format_value(c.to, &super::show::escaped(&c.unit)),
            format_change(c.from, c.to),
        );
        out.push_str(&crate::report::columns::wrap(&line, width, "  ", "      "));
        out.push('\n');
    }
    out
}

/// The changes as JSON (`{"changes": […], "stale": […]}`).
pub(crate) fn json(changes: &[Change], stale: &[super::stale::Stale]) -> String {
    // Names from the store, escaped as the text view escapes them.
    let mut doc = serde_json::json!({ "schema_version": 1, "changes": changes, "stale": stale });
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
        let at: Vec<(usize, f64)> = exact(&indexed(&[5.0, 5.0, 7.0, 7.0, 5.0]))
            .iter()
            .map(|f| (f.index, f.from))
            .collect();
        assert_eq!(at, [(2, 5.0), (4, 7.0)]);
        assert!(exact(&indexed(&[5.0, 5.0])).is_empty());
    }
}
