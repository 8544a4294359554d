//! `history show --html DIR`: a trend chart per workload × GPU × kernel ×
//! metric over the runs, oldest first — the value of each run, accepted
//! runs filled and the others hollow (a failing run in red), and the band a
//! check with `--baseline history` would have allowed at each run: the mean
//! of the accepted runs in the window before it, widened by the matching
//! rule's `max_change` on its worse side. Names come from the store: the
//! page escapes every one (maud), the charts (plotters' SVG) take them as text.

use super::changepoint::Settings;
use super::show::{Series, escaped, short};
use crate::format::format_value;
use crate::rules::{Thresholds, Worse};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use plotters::prelude::*;

/// The rule of `series` in `thresholds`: same label and metric.
fn rule_of<'a>(series: &Series, thresholds: &'a Thresholds) -> Option<&'a crate::rules::Rule> {
    thresholds
        .rules
        .iter()
        .find(|r| r.label() == series.rule && r.metric == series.metric)
}

/// The allowed band at each run: (low, high) from the accepted runs before it.
pub(crate) fn bands(
    series: &Series,
    worse: Worse,
    max_change: f64,
    window: usize,
) -> Vec<Option<(f64, f64)>> {
    let mut accepted: Vec<f64> = Vec::new();
    series
        .points
        .iter()
        .map(|p| {
            let from = accepted.len().saturating_sub(window);
            let band = (!accepted.is_empty()).then(|| {
                let last = &accepted[from..];
                let mean = last.iter().sum::<f64>() / last.len() as f64;
                let allowed = max_change * mean.abs();
                match worse {
                    Worse::Higher => (mean, mean + allowed),
                    Worse::Lower => (mean - allowed, mean),
                }
            });
            if p.accepted
                && let Some(v) = p.value
            {
                accepted.push(v);
            }
            band
        })
        .collect()
}

/// Chart text size as plotters takes it (tick labels): its SVG writes
/// sizes as this / 1.24, so 15 is 12.1 px, legible at the page's scale.
const TEXT_PX: u32 = 15;

/// The chart of `series` with the band its rule in `thresholds` allowed at
/// each run (`window` accepted runs before it); `None` when no run has a value.
pub(crate) fn chart(series: &Series, thresholds: &Thresholds, window: usize) -> Option<String> {
    marked(series, thresholds, window, &[])
}

/// [`chart`] with an orange line before each point of `changes` (its change points).
pub(crate) fn marked(
    series: &Series,
    thresholds: &Thresholds,
    window: usize,
    changes: &[usize],
) -> Option<String> {
    let bands = match rule_of(series, thresholds).and_then(|r| r.max_change.map(|c| (r.worse, c))) {
        Some((worse, c)) => bands(series, worse, c, window),
        None => vec![None; series.points.len()],
    };
    svg(series, &bands, changes)
}

/// The chart of one series; `None` when no run has a value.
pub(crate) fn svg(
    series: &Series,
    bands: &[Option<(f64, f64)>],
    changes: &[usize],
) -> Option<String> {
    let values: Vec<(usize, f64)> = series
        .points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.value.map(|v| (i, v)))
        .collect();
    if values.is_empty() {
        return None;
    }
    let all = values
        .iter()
        .map(|(_, v)| *v)
        .chain(bands.iter().flatten().flat_map(|(lo, hi)| [*lo, *hi]));
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    let pad = if hi > lo {
        (hi - lo) * 0.1
    } else {
        hi.abs().max(1.0) * 0.1
    };
    // A store can hold any number (another writer, an edited file): a mean
    // near f64::MAX made the band and the axis infinite, and drawing its
    // ticks never ended. Such a series gets no chart.
    if !(lo - pad).is_finite() || !(hi + pad).is_finite() {
        return None;
    }
    let n = series.points.len();
    let unit = escaped(&series.unit);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (640, 220)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        let mut c = ChartBuilder::on(&root)
            .margin(8)
            .x_label_area_size(30)
            .y_label_area_size(90)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), (lo - pad)..(hi + pad))
            .ok()?;
        let commits: Vec<String> = series.points.iter().map(|p| short(&p.commit)).collect();
        c.configure_mesh()
            .disable_x_mesh()
            .label_style(("sans-serif", TEXT_PX))
            .x_labels(n.min(8))
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 {
                    commits.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_labels(5)
            .y_label_formatter(&|v| format_value(*v, &unit))
            .draw()
            .ok()?;
        let band_color = RGBColor(0xcf, 0xd8, 0xdc);
        for (i, band) in bands.iter().enumerate() {
            if let Some((a, b)) = band {
                let x = i as f64;
                c.draw_series([Rectangle::new(
                    [(x - 0.4, *a), (x + 0.4, *b)],
                    band_color.filled(),
                )])
                .ok()?;
            }
        }
        let change = RGBColor(0xe6, 0x51, 0x00);
        for &i in changes {
            // Between the last run before the change and the first after it.
            let x = i as f64 - 0.5;
            c.draw_series([PathElement::new(
                vec![(x, lo - pad), (x, hi + pad)],
                change.stroke_width(2),
            )])
            .ok()?;
        }
        let line = RGBColor(0x60, 0x7d, 0x8b);
        c.draw_series([PathElement::new(
            values
                .iter()
                .map(|(i, v)| (*i as f64, *v))
                .collect::<Vec<_>>(),
            line.stroke_width(1),
        )])
        .ok()?;
        for (i, v) in &values {
            let p = &series.points[*i];
            let color = if p.outcome == "pass" {
                RGBColor(0x2e, 0x7d, 0x32)
            } else {
                RGBColor(0xc6, 0x28, 0x28)
            };
            let style = if p.accepted {
                color.filled()
            } else {
                color.stroke_width(2)
            };
            c.draw_series([Circle::new((*i as f64, *v), 4, style)])
                .ok()?;
        }
        root.present().ok()?;
    }
    Some(out)
}

/// The trend pages' stylesheet: a file beside the pages, as a
/// Content-Security-Policy that forbids inline styles (Jenkins') requires.
pub(crate) const STYLE: &str = "body{font-family:sans-serif;margin:2em;max-width:60em}h2{font-size:1.05em;margin-bottom:.2em;word-break:break-all}.meta{color:#57606a;margin-top:0}.fail{color:#c62828}li{margin:.3em 0}\n";

/// The trend pages: `index.html`, a line per workload × GPU with a link to
/// its page, and that page (`trends-N.html`): a section per kernel × metric,
/// the series whose last run failed or that changed first. Each as
/// (file name, HTML).
pub(crate) fn pages(
    series: &[Series],
    thresholds: &Thresholds,
    window: usize,
    change: Settings,
) -> Vec<(String, String)> {
    let mut groups: Vec<((&str, &str), Vec<&Series>)> = Vec::new();
    for s in series {
        let key = (s.workload.as_str(), s.gpu.as_str());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(s),
            None => groups.push((key, vec![s])),
        }
    }
    let mut files = Vec::new();
    let mut listed = Vec::new();
    for (n, ((workload, gpu), members)) in groups.into_iter().enumerate() {
        let file = format!("trends-{}.html", n + 1);
        let mut marked: Vec<(bool, usize, &Series, Vec<usize>)> = members
            .into_iter()
            .enumerate()
            .map(|(order, s)| {
                let changes = super::changes::at(s, change);
                let failed = s.points.last().is_some_and(|p| p.status == "fail");
                (failed || !changes.is_empty(), order, s, changes)
            })
            .collect();
        // Failing or changed series first, then as the store lists them.
        marked.sort_by_key(|(first, order, _, _)| (!*first, *order));
        let attention = marked.iter().filter(|m| m.0).count();
        let sections: Vec<Markup> = marked
            .iter()
            .map(|(_, _, s, changes)| section(s, thresholds, window, changes))
            .collect();
        let title = format!("{} on {}", escaped(workload), escaped(gpu));
        let body = html! {
            nav { a href="index.html" { "← all workloads" } }
            h1 { (title) }
            (legend(window, change))
            @for s in &sections { (s) }
        };
        files.push((
            file.clone(),
            document(&format!("ncugate trends: {title}"), body),
        ));
        listed.push((file, title, marked.len(), attention));
    }
    // Workloads with failing or changed series first.
    listed.sort_by_key(|(_, _, _, attention)| *attention == 0);
    let index = html! {
        h1 { "Trends" }
        p { "A page per workload × GPU; those with a failing or changed series first." }
        ul {
            @for (file, title, count, attention) in &listed {
                li {
                    a href=(file) { (title) } " — " (count) " series"
                    @if *attention > 0 { ", " span.fail { (attention) " failing or changed" } }
                }
            }
        }
    };
    files.insert(
        0,
        (
            "index.html".into(),
            document("ncugate history: trends", index),
        ),
    );
    files
}

/// What the marks of a chart mean.
fn legend(window: usize, change: Settings) -> Markup {
    html! {
        p {
            "One chart per kernel × metric, oldest run left, labelled by commit. Filled: an accepted run (baseline material); hollow: kept, not accepted; red: the run failed. Grey: the band "
            code { "--baseline history --window " (window) }
            " allowed at that run (the mean of the accepted runs before it, widened by the rule's max_change on its worse side). Orange line: a change point of "
            code { "history changes" }
            " (a count that differs from the run before; else E-Divisive, Welch p < " (change.p) ", window " (change.window) "), before its first run."
        }
    }
}

/// A page with the external stylesheet ([`STYLE`]) and no inline style.
fn document(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { (title) }
                link rel="stylesheet" href="style.css";
            }
            body { (body) }
        }
    }
    .into_string()
}

/// One series' section: its heading, what it is, its chart.
fn section(s: &Series, thresholds: &Thresholds, window: usize, changes: &[usize]) -> Markup {
    let rule = rule_of(s, thresholds);
    let chart = marked(s, thresholds, window, changes);
    let kernel = if s.kernel.is_empty() {
        "(total)".to_string()
    } else {
        escaped(&s.kernel)
    };
    html! {
        section {
            h2 { (kernel) " · " (escaped(&s.metric)) }
            p.meta {
                "rule " code { (escaped(&s.rule)) } " · " (s.points.len()) " runs"
                @if s.points.last().is_some_and(|p| p.status == "fail") { " · " span.fail { "the last run failed" } }
                @if rule.is_none() { " · no rule of these thresholds: no band" }
                @if !changes.is_empty() {
                    " · change points at "
                    @for (n, i) in changes.iter().enumerate() {
                        @if n > 0 { ", " }
                        code { (short(&s.points[*i].commit)) }
                    }
                }
            }
            @if let Some(svg) = chart { (PreEscaped(svg)) }
            @else if s.points.iter().any(|p| p.value.is_some()) { p { "not drawn: its values are too large to chart" } }
            @else { p { "no value measured" } }
        }
    }
}
