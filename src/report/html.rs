//! `--html DIR`: a static report that displays under Jenkins' default
//! Content-Security-Policy — no JavaScript, no inline styles, no `data:` URIs:
//! `index.html`, an external `style.css`, and one SVG chart per kernel and
//! gated metric (see [`super::chart`]),
//! drawn with `plotters`.

use super::fmt::{format_mu_sigma, format_value};
use super::scope_name;
use crate::error::{Error, Result};
use crate::verdict::{Outcome, Report, RuleResult, Status};
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
        if let Some(svg) = super::chart::chart(r) {
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
        Status::Changed => "changed",
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
    let views = report.kernel_views();
    let mut scopes: Vec<(Option<String>, Status)> = views
        .iter()
        .map(|v| (Some(v.kernel.to_string()), v.status))
        .collect();
    if report.rules.iter().any(|r| r.kernel.is_none()) {
        scopes.push((None, total_status(report)));
    }
    // Each scope's results, grouped once (a report can have 10^4 kernels).
    type Group<'r> = (
        Vec<&'r crate::verdict::StructureResult>,
        Vec<(usize, &'r RuleResult)>,
        Vec<&'r crate::verdict::FindingResult>,
    );
    let mut groups: std::collections::HashMap<Option<&str>, Group<'_>> =
        std::collections::HashMap::new();
    for s in &report.structure {
        groups.entry(Some(s.kernel.as_str())).or_default().0.push(s);
    }
    for (i, r) in report.rules.iter().enumerate() {
        groups
            .entry(r.kernel.as_deref())
            .or_default()
            .1
            .push((i, r));
    }
    for f in &report.findings {
        groups.entry(Some(f.kernel.as_str())).or_default().2.push(f);
    }
    let image_of: std::collections::HashMap<usize, &String> =
        images.iter().map(|(i, name)| (*i, name)).collect();
    // Failing kernels first: the reader came for them.
    scopes.sort_by_key(|(_, status)| std::cmp::Reverse(*status));
    for (scope, status) in &scopes {
        let status = *status;
        let _ = writeln!(
            h,
            "<section class=\"kernel\"><h2><span class=\"badge {}\">{}</span> <code>{}</code></h2>",
            class(status),
            status.as_str(),
            esc(scope_name(scope.as_deref()))
        );
        let empty = Group::default();
        let (structure, rules, findings) = groups.get(&scope.as_deref()).unwrap_or(&empty);
        h.push_str("<table><thead><tr><th>check</th><th>baseline μ±σ</th><th>current</th><th>change</th><th>verdict</th><th>why</th></tr></thead><tbody>\n");
        for s in structure {
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
        for (_, r) in rules {
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
                r.verdict()
            );
        }
        h.push_str("</tbody></table>\n<div class=\"charts\">");
        for (i, r) in rules {
            if let Some(name) = image_of.get(i) {
                let _ = write!(
                    h,
                    "<figure><img src=\"{name}\" alt=\"{}: baseline vs current\" width=\"520\" height=\"130\"><figcaption><code>{}</code>{}</figcaption></figure>",
                    esc(&r.rule),
                    esc(&r.rule),
                    esc(&allowed(r))
                );
            }
        }
        h.push_str("</div>\n");
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
                "<li class=\"{}\"><span class=\"badge {}\">{}</span> {}: {}",
                class(f.status),
                class(f.status),
                f.status.as_str(),
                esc(&f.tool),
                esc(&f.message)
            );
            // The same first thread and host stack as the terminal shows.
            if f.example_thread.is_some() || !f.example_stack.is_empty() {
                h.push_str("<ul class=\"stack\">");
                if let Some(t) = &f.example_thread {
                    let _ = write!(h, "<li>first at {}</li>", esc(t));
                }
                for frame in f.example_stack.iter().take(6) {
                    let _ = write!(h, "<li>at <code>{}</code></li>", esc(frame));
                }
                h.push_str("</ul>");
            }
            h.push_str("</li>");
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

/// What a rule allows, for a chart's caption: ` — allowed up to 57.3M inst, limit 60M inst`.
fn allowed(r: &RuleResult) -> String {
    let higher = r.worse == crate::rules::Worse::Higher;
    let bound = match (r.baseline, r.allowance) {
        (Some(b), Some(a)) => {
            let v = if higher {
                b.mean + a
            } else {
                (b.mean - a).max(0.0)
            };
            let dir = if higher { "up to" } else { "down to" };
            Some(format!("{dir} {}", format_value(v, &r.unit)))
        }
        _ => None,
    };
    let limit = r
        .limit
        .map(|l| format!("limit {}", format_value(l, &r.unit)));
    let parts: Vec<String> = bound.into_iter().chain(limit).collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" — allowed {}", parts.join(", "))
    }
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
