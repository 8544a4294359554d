//! `--html DIR`: a static report that displays under Jenkins' default
//! Content-Security-Policy — no JavaScript, no inline styles, no `data:` URIs:
//! `index.html`, an external `style.css`, and one SVG chart per kernel and
//! gated metric (baseline mean with its allowed band vs the current value),
//! drawn with `plotters`.

use super::fmt::{format_mu_sigma, format_value};
use super::scope_name;
use crate::error::{Error, Result};
use crate::verdict::{Outcome, Report, RuleResult, Status};
use plotters::prelude::*;
use std::fmt::Write as _;
use std::path::Path;

/// The stylesheet every page links to.
pub const CSS: &str = include_str!("html.css");

/// Writes `index.html`, `style.css` and `charts/*.svg` into `dir`.
pub fn write(report: &Report, dir: &Path) -> Result<()> {
    let err = |path: &Path, source: std::io::Error| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    let charts = dir.join("charts");
    std::fs::create_dir_all(&charts).map_err(|e| err(&charts, e))?;
    let css = dir.join("style.css");
    std::fs::write(&css, CSS).map_err(|e| err(&css, e))?;
    let mut images = Vec::new();
    for (i, r) in report.rules.iter().enumerate() {
        if let Some(svg) = chart(r) {
            let name = format!("charts/rule-{i}.svg");
            let path = dir.join(&name);
            std::fs::write(&path, svg).map_err(|e| err(&path, e))?;
            images.push((i, name));
        }
    }
    let index = dir.join("index.html");
    std::fs::write(&index, page(report, &images)).map_err(|e| err(&index, e))?;
    Ok(())
}

/// HTML-escapes text for an element or an attribute value.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn class(status: Status) -> &'static str {
    match status {
        Status::Fail => "fail",
        Status::Error => "error",
        Status::Warn => "warn",
        Status::Improved => "improved",
        Status::Skipped => "skipped",
        Status::Pass => "pass",
    }
}

fn page(report: &Report, images: &[(usize, String)]) -> String {
    let mut h = String::new();
    let (word, cls) = match report.outcome {
        Outcome::Pass => ("PASS", "pass"),
        Outcome::Regression => ("REGRESSION", "fail"),
        Outcome::Error => ("ERROR", "error"),
    };
    let c = report.counts();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ncugate: {word}</title><link rel=\"stylesheet\" href=\"style.css\"></head><body>\n<header><h1>ncugate <span class=\"badge {cls}\">{word}</span></h1>\n<p class=\"counts\">exit code {} · {}</p>\n<dl>",
        report.exit_code,
        c.words().join(" · ")
    );
    for (k, v) in report.header().into_iter().filter(|(_, v)| !v.is_empty()) {
        let _ = write!(h, "<dt>{k}</dt><dd>{}</dd>", esc(&v));
    }
    h.push_str("</dl></header>\n<main>\n");
    if !report.errors.is_empty() {
        h.push_str("<section class=\"errors\"><h2>Errors</h2><ul>");
        for e in &report.errors {
            let _ = write!(h, "<li>{}</li>", esc(e));
        }
        h.push_str("</ul></section>\n");
    }
    let mut scopes: Vec<Option<String>> = report.kernels().into_iter().map(Some).collect();
    if report.rules.iter().any(|r| r.kernel.is_none()) {
        scopes.push(None);
    }
    // Failing kernels first: the reader came for them.
    scopes.sort_by_key(|k| {
        std::cmp::Reverse(
            k.as_deref()
                .map_or_else(|| total_status(report), |k| report.kernel_status(k)),
        )
    });
    for scope in &scopes {
        let status = scope
            .as_deref()
            .map_or_else(|| total_status(report), |k| report.kernel_status(k));
        let _ = writeln!(
            h,
            "<section class=\"kernel\"><h2><span class=\"badge {}\">{}</span> <code>{}</code></h2>",
            class(status),
            status.as_str(),
            esc(scope_name(scope.as_deref()))
        );
        let structure: Vec<_> = report
            .structure
            .iter()
            .filter(|s| Some(&s.kernel) == scope.as_ref())
            .collect();
        let rules: Vec<(usize, &RuleResult)> = report
            .rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.kernel == *scope)
            .collect();
        h.push_str("<table><thead><tr><th>check</th><th>baseline μ±σ</th><th>current</th><th>change</th><th>verdict</th><th>why</th></tr></thead><tbody>\n");
        for s in &structure {
            let base = s
                .baseline_launches
                .map_or("—".into(), |n| format!("{n} launches"));
            let cur = s
                .current_launches
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join("/");
            let _ = writeln!(
                h,
                "<tr class=\"{}\"><td>{}</td><td>{base}</td><td>{cur} launches</td><td></td><td>{}</td><td>{}</td></tr>",
                class(s.status),
                s.check.as_str(),
                s.status.as_str(),
                esc(&s.message)
            );
        }
        for (_, r) in &rules {
            let base = r
                .baseline
                .map_or("—".into(), |b| format_mu_sigma(&b, &r.unit));
            let cur = r.current.map_or("—".into(), |x| format_value(x, &r.unit));
            let change = r.change_pct.map_or(String::new(), |p| format!("{p:+.1}%"));
            let why = if r.status.needs_attention() {
                format!(
                    "{}{}",
                    esc(&r.message),
                    r.why
                        .as_deref()
                        .map(|w| format!(" — {}", esc(w)))
                        .unwrap_or_default()
                )
            } else {
                String::new()
            };
            let _ = writeln!(
                h,
                "<tr class=\"{}\"><td><code>{}</code></td><td>{}</td><td>{}</td><td>{change}</td><td>{}</td><td>{why}</td></tr>",
                class(r.status),
                esc(&r.rule),
                esc(&base),
                esc(&cur),
                r.status.as_str()
            );
        }
        h.push_str("</tbody></table>\n<div class=\"charts\">");
        for (i, r) in &rules {
            if let Some((_, name)) = images.iter().find(|(j, _)| j == i) {
                let _ = write!(
                    h,
                    "<figure><img src=\"{name}\" alt=\"{}: baseline vs current\" width=\"520\" height=\"130\"></figure>",
                    esc(&r.rule)
                );
            }
        }
        h.push_str("</div>\n");
        let findings: Vec<_> = report
            .findings
            .iter()
            .filter(|f| Some(&f.kernel) == scope.as_ref())
            .collect();
        if !findings.is_empty() {
            h.push_str("<h3>New ncu findings</h3><ul class=\"findings\">");
            for f in findings {
                let speedup = f
                    .finding
                    .estimated_speedup_pct
                    .map(|s| format!(" (est. speedup {s:.0}%)"))
                    .unwrap_or_default();
                let _ = write!(
                    h,
                    "<li><strong>{}</strong> {}{speedup}: {}</li>",
                    esc(&f.finding.rule),
                    esc(&f.finding.rule_type),
                    esc(&f.finding.description)
                );
            }
            h.push_str("</ul>");
        }
        h.push_str("</section>\n");
    }
    if !report.sanitizer.is_empty() {
        h.push_str("<section><h2>compute-sanitizer</h2><ul>");
        for f in &report.sanitizer {
            let _ = write!(
                h,
                "<li class=\"{}\"><span class=\"badge {}\">{}</span> {}: {}</li>",
                class(f.status),
                class(f.status),
                f.status.as_str(),
                esc(&f.tool),
                esc(&f.message)
            );
        }
        h.push_str("</ul></section>\n");
    }
    if !report.memory.is_empty() {
        h.push_str("<section><h2>GPU memory</h2><ul>");
        for m in &report.memory {
            let _ = write!(
                h,
                "<li><span class=\"badge {}\">{}</span> {}: {}</li>",
                class(m.status),
                m.status.as_str(),
                esc(&m.check),
                esc(&m.message)
            );
        }
        h.push_str("</ul></section>\n");
    }
    if !report.notes.is_empty() {
        h.push_str("<section><h2>Notes</h2><ul>");
        for n in &report.notes {
            let _ = write!(h, "<li>{}</li>", esc(n));
        }
        h.push_str("</ul></section>\n");
    }
    let _ = writeln!(
        h,
        "</main><footer>ncugate {}</footer></body></html>",
        esc(&report.ncugate_version)
    );
    h
}

fn total_status(report: &Report) -> Status {
    report
        .rules
        .iter()
        .filter(|r| r.kernel.is_none())
        .map(|r| r.status)
        .max()
        .unwrap_or(Status::Pass)
}

/// A divisor and label that make `max` readable in `unit` (ns → us, byte → MB, …).
fn display_scale(max: f64, unit: &str) -> (f64, String) {
    let steps: &[(f64, &str)] = match unit {
        "ns" => &[(1e9, "s"), (1e6, "ms"), (1e3, "us"), (1.0, "ns")],
        "byte" => &[
            (1e12, "TB"),
            (1e9, "GB"),
            (1e6, "MB"),
            (1e3, "KB"),
            (1.0, "B"),
        ],
        "byte/s" => &[(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1.0, "B/s")],
        "%" => &[(1.0, "%")],
        _ => &[(1e9, "G"), (1e6, "M"), (1e3, "K"), (1.0, "")],
    };
    for &(d, label) in steps {
        if max.abs() >= d {
            let label = if matches!(unit, "ns" | "byte" | "byte/s" | "%") {
                label.to_string()
            } else {
                format!("{label} {unit}").trim().to_string()
            };
            return (d, label);
        }
    }
    (1.0, unit.to_string())
}

/// Baseline (mean bar, allowed band, ±σ whisker) vs current (bar in the verdict's colour) and the limit.
fn chart(r: &RuleResult) -> Option<String> {
    let b = r.baseline?;
    let x = r.current?;
    let allowance = r.allowance.unwrap_or(0.0);
    let top = [x, b.mean + allowance, b.max, r.limit.unwrap_or(0.0)]
        .into_iter()
        .fold(0.0f64, f64::max);
    let (div, label) = display_scale(top, &r.unit);
    // All zero (e.g. no FP64 instructions before or after): a 0..1 axis, not 0..1e-9.
    let xmax = if top > 0.0 { top / div * 1.15 } else { 1.0 };
    let color = match r.status {
        Status::Fail | Status::Error => RGBColor(0xc6, 0x28, 0x28),
        Status::Warn => RGBColor(0xef, 0x8f, 0x00),
        Status::Improved => RGBColor(0x1e, 0x88, 0xe5),
        _ => RGBColor(0x2e, 0x7d, 0x32),
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (520, 130)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        let caption = format!(
            "{} — {}",
            scope_name(r.kernel.as_deref())
                .split('(')
                .next()
                .unwrap_or("?"),
            r.rule
        );
        let caption: String = caption.chars().take(70).collect();
        let mut c = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 13))
            .margin(6)
            .x_label_area_size(22)
            .y_label_area_size(62)
            .build_cartesian_2d(0f64..xmax, 0f64..2f64)
            .ok()?;
        c.configure_mesh()
            .disable_y_mesh()
            .y_labels(5)
            .y_label_formatter(&|v| {
                if (*v - 0.5).abs() < 0.26 {
                    "current".into()
                } else if (*v - 1.5).abs() < 0.26 {
                    "baseline".into()
                } else {
                    String::new()
                }
            })
            .x_desc(label.as_str())
            .x_label_formatter(&|v| {
                format!("{v:.3}")
                    .trim_end_matches('0')
                    .trim_end_matches('.')
                    .to_string()
            })
            .draw()
            .ok()?;
        let lo = ((b.mean - allowance) / div).max(0.0);
        let hi = (b.mean + allowance) / div;
        c.draw_series([Rectangle::new(
            [(lo, 1.1), (hi, 1.9)],
            RGBColor(0xcf, 0xd8, 0xdc).filled(),
        )])
        .ok()?;
        c.draw_series([Rectangle::new(
            [(0.0, 1.3), (b.mean / div, 1.7)],
            RGBColor(0x60, 0x7d, 0x8b).filled(),
        )])
        .ok()?;
        if b.stddev > 0.0 {
            c.draw_series([PathElement::new(
                vec![
                    ((b.mean - b.stddev) / div, 1.5),
                    ((b.mean + b.stddev) / div, 1.5),
                ],
                BLACK.stroke_width(2),
            )])
            .ok()?;
        }
        c.draw_series([Rectangle::new([(0.0, 0.3), (x / div, 0.7)], color.filled())])
            .ok()?;
        if let Some(l) = r.limit {
            c.draw_series([PathElement::new(
                vec![(l / div, 0.05), (l / div, 1.95)],
                RED.stroke_width(2),
            )])
            .ok()?;
        }
        root.present().ok()?;
    }
    Some(svg)
}

#[cfg(test)]
mod tests {
    #[test]
    fn scales_read_naturally() {
        assert_eq!(super::display_scale(150_900.0, "ns"), (1e3, "us".into()));
        assert_eq!(
            super::display_scale(55_050_000.0, "inst"),
            (1e6, "M inst".into())
        );
        assert_eq!(super::display_scale(49.4, "%"), (1.0, "%".into()));
    }
}
