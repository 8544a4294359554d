//! `ncugate history show`: the series a query selects, as text — one line
//! per workload × GPU × kernel × metric with a sparkline of its values,
//! oldest first — or as JSON for machines. Names come from the store, which
//! other writers share: they are escaped once here, where the view is built.

use super::store::Point;
use crate::format::{format_change, format_value};
use serde::Serialize;

/// The sparkline's levels, lowest first.
const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// One series: its name and its points, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Series {
    pub(crate) workload: String,
    pub(crate) gpu: String,
    pub(crate) kernel: String,
    pub(crate) rule: String,
    pub(crate) metric: String,
    pub(crate) aggregate: String,
    pub(crate) unit: String,
    pub(crate) points: Vec<SeriesPoint>,
}

/// One run's value in a series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct SeriesPoint {
    pub(crate) commit: String,
    pub(crate) branch: String,
    /// RFC 3339, UTC.
    pub(crate) time: String,
    pub(crate) accepted: bool,
    pub(crate) outcome: String,
    pub(crate) value: Option<f64>,
    pub(crate) status: String,
}

/// The points grouped into series (the points come grouped and ordered).
pub(crate) fn group(points: Vec<Point>) -> Vec<Series> {
    let mut all: Vec<Series> = Vec::new();
    for p in points {
        let point = SeriesPoint {
            commit: p.commit,
            branch: p.branch,
            time: jiff::Timestamp::from_second(p.time)
                .map(|t| t.to_string())
                .unwrap_or_else(|_| p.time.to_string()),
            accepted: p.accepted,
            outcome: p.outcome,
            value: p.mean,
            status: p.status,
        };
        match all.last_mut() {
            Some(s)
                if s.workload == p.workload
                    && s.gpu == p.gpu
                    && s.kernel == p.kernel
                    && s.rule == p.rule
                    && s.metric == p.metric
                    && s.aggregate == p.aggregate
                    && s.unit == p.unit =>
            {
                s.points.push(point)
            }
            _ => all.push(Series {
                workload: p.workload,
                gpu: p.gpu,
                kernel: p.kernel,
                rule: p.rule,
                metric: p.metric,
                aggregate: p.aggregate,
                unit: p.unit,
                points: vec![point],
            }),
        }
    }
    all
}

/// The sparkline of `values`: a level per value between their minimum and
/// maximum (the middle level when all are equal), a space where none was measured.
pub(crate) fn sparkline(values: &[Option<f64>]) -> String {
    let known: Vec<f64> = values.iter().flatten().copied().collect();
    let lo = known.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = known.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    values
        .iter()
        .map(|v| match v {
            None => ' ',
            Some(_) if hi <= lo => LEVELS[3],
            Some(x) => {
                let at = ((x - lo) / (hi - lo) * (LEVELS.len() - 1) as f64).round();
                LEVELS[(at as usize).min(LEVELS.len() - 1)]
            }
        })
        .collect()
}

/// A name from the store as one printable line.
pub(crate) fn escaped(name: &str) -> String {
    name.chars()
        .map(|c| {
            if crate::text::escape::unprintable(c) {
                format!("\\u{{{:x}}}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The series as text, fitted to the terminal's width
/// ([`crate::report::terminal::width`]): a heading per workload × GPU, a
/// line per kernel with its runs, a line per metric under it.
pub(crate) fn render(series: &[Series]) -> String {
    render_to(series, crate::report::terminal::width())
}

/// [`render`] at `width` columns: a metric whose line would be wider puts
/// its values on the next line; a name wider than a line stays whole.
fn render_to(series: &[Series], width: usize) -> String {
    if series.is_empty() {
        return "ncugate: no runs in the history match\n".into();
    }
    let mut out = String::new();
    let mut heading = None;
    let mut kernel_shown: Option<(&str, String)> = None;
    for s in series {
        let this = (s.workload.as_str(), s.gpu.as_str());
        if heading != Some(this) {
            out.push_str(&format!(
                "{} on {}\n",
                escaped(&s.workload),
                escaped(&s.gpu)
            ));
            heading = Some(this);
            kernel_shown = None;
        }
        let runs = runs_text(s);
        if kernel_shown
            .as_ref()
            .is_none_or(|(k, r)| *k != s.kernel.as_str() || *r != runs)
        {
            let kernel = if s.kernel.is_empty() {
                "(total)".to_string()
            } else {
                escaped(&s.kernel)
            };
            let line = format!("  {kernel}  [{runs}]");
            if line.chars().count() <= width {
                out.push_str(&format!("{line}\n"));
            } else {
                out.push_str(&format!("  {kernel}\n    [{runs}]\n"));
            }
            kernel_shown = Some((s.kernel.as_str(), runs));
        }
        let values: Vec<Option<f64>> = s.points.iter().map(|p| p.value).collect();
        let name = format!("    {}  {}", escaped(&s.metric), sparkline(&values));
        let span = span_text(s);
        if name.chars().count() + 2 + span.chars().count() <= width {
            out.push_str(&format!("{name}  {span}\n"));
        } else {
            out.push_str(&format!("{name}\n      {span}\n"));
        }
    }
    out
}

/// `4 runs, 3 accepted, last 1a2b3c4 on main`.
fn runs_text(s: &Series) -> String {
    let accepted = s.points.iter().filter(|p| p.accepted).count();
    let last = s.points.last().map_or(String::new(), |p| {
        format!(", last {} on {}", short(&p.commit), escaped(&p.branch))
    });
    format!("{} runs, {accepted} accepted{last}", s.points.len())
}

/// The first and the last measured value and the change between them.
fn span_text(s: &Series) -> String {
    let known: Vec<f64> = s.points.iter().filter_map(|p| p.value).collect();
    let unit = escaped(&s.unit);
    match (known.first(), known.last()) {
        (Some(&a), Some(&b)) if known.len() > 1 => format!(
            "{} → {} ({})",
            format_value(a, &unit),
            format_value(b, &unit),
            format_change(a, b)
        ),
        (Some(&a), _) => format_value(a, &unit),
        _ => "not measured".into(),
    }
}

/// A commit as messages show it: its first 12 characters.
pub(crate) fn short(commit: &str) -> String {
    escaped(&commit.chars().take(12).collect::<String>())
}

/// The series as JSON (`{"series": […], "stale": […]}`).
pub(crate) fn json<S: Serialize>(series: &[Series], stale: &[S]) -> String {
    // Names from the store, escaped as the text view escapes them.
    let mut doc = serde_json::json!({ "schema_version": 1, "series": series, "stale": stale });
    crate::text::escape::printable_json(&mut doc);
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparkline_spans_the_values_and_leaves_gaps_for_the_unmeasured() {
        assert_eq!(sparkline(&[Some(1.0), Some(2.0), None, Some(8.0)]), "▁▂ █");
        assert_eq!(sparkline(&[Some(5.0), Some(5.0)]), "▄▄");
        assert_eq!(sparkline(&[]), "");
    }

    #[test]
    fn every_line_fits_the_width_unless_one_name_is_wider() {
        let point = |commit: &str, value: f64| Point {
            workload: "default".into(),
            gpu: "NVIDIA H200 (CC 9.0, 132 SMs)".into(),
            kernel: "void finish<float>(const float *, const float *, float *, long)".into(),
            rule: "1".into(),
            metric: "dram__throughput.avg.pct_of_peak_sustained_elapsed".into(),
            aggregate: "avg".into(),
            unit: "%".into(),
            commit: commit.into(),
            branch: "main".into(),
            time: 0,
            accepted: true,
            outcome: "pass".into(),
            mean: Some(value),
            status: "pass".into(),
        };
        let series = group(vec![point("a1", 67.7), point("b2", 67.5)]);
        let text = render_to(&series, 80);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert!(
            text.contains("\n    [2 runs, 2 accepted, last b2 on main]\n"),
            "{text}"
        );
        assert!(text.contains("\n      67.70% → 67.50% (-0.3%)\n"), "{text}");
        let wide = render_to(&series, 200);
        assert!(
            wide.contains("elapsed  ▁█  67.70%") || wide.contains("elapsed  █▁  67.70%"),
            "{wide}"
        );
    }

    #[test]
    fn names_from_the_store_stay_on_one_line() {
        assert_eq!(
            escaped("k\n::error::x\u{202e}"),
            "k\\u{a}::error::x\\u{202e}"
        );
    }
}
