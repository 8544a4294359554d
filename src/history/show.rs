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

/// The series as text: a heading per workload × GPU, a line per kernel × metric.
pub(crate) fn render(series: &[Series]) -> String {
    if series.is_empty() {
        return "ncugate: no runs in the history match\n".into();
    }
    let mut out = String::new();
    let mut heading = None;
    for s in series {
        let this = (s.workload.as_str(), s.gpu.as_str());
        if heading != Some(this) {
            out.push_str(&format!(
                "{} on {}\n",
                escaped(&s.workload),
                escaped(&s.gpu)
            ));
            heading = Some(this);
        }
        let values: Vec<Option<f64>> = s.points.iter().map(|p| p.value).collect();
        let known: Vec<f64> = values.iter().flatten().copied().collect();
        let unit = escaped(&s.unit);
        let span = match (known.first(), known.last()) {
            (Some(&a), Some(&b)) if known.len() > 1 => format!(
                "{} → {} ({})",
                format_value(a, &unit),
                format_value(b, &unit),
                format_change(a, b)
            ),
            (Some(&a), _) => format_value(a, &unit),
            _ => "not measured".into(),
        };
        let accepted = s.points.iter().filter(|p| p.accepted).count();
        let last = s.points.last().map_or(String::new(), |p| {
            format!(", last {} on {}", short(&p.commit), escaped(&p.branch))
        });
        let kernel = if s.kernel.is_empty() {
            "(total)".to_string()
        } else {
            escaped(&s.kernel)
        };
        out.push_str(&format!(
            "  {kernel} · {}  {}  {span}  [{} runs, {accepted} accepted{last}]\n",
            escaped(&s.metric),
            sparkline(&values),
            s.points.len(),
        ));
    }
    out
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
    fn names_from_the_store_stay_on_one_line() {
        assert_eq!(
            escaped("k\n::error::x\u{202e}"),
            "k\\u{a}::error::x\\u{202e}"
        );
    }
}
