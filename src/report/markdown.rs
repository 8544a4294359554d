//! `--markdown`: the report for a CI summary page (GitHub step summary,
//! Jenkins description). Kernel names go in code spans, so `*`, `_`, `<` and
//! `>` in C++ names render literally; `|` is escaped for tables.

use super::fmt::{format_mu_sigma, format_value};
use super::scope_name;
use crate::verdict::{Outcome, Report, Status};
use std::fmt::Write;

/// The report as GitHub-flavoured Markdown.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let c = report.counts();
    let headline = match report.outcome {
        Outcome::Pass => "✅ ncugate: pass",
        Outcome::Regression => "❌ ncugate: regression",
        Outcome::Error => "⚠️ ncugate: error",
    };
    let _ = writeln!(out, "## {headline}\n");
    let _ = writeln!(
        out,
        "{} — exit code {}\n",
        c.words().join(" · "),
        report.exit_code
    );
    for (label, value) in report.header() {
        let value = if label == "GPU" || label == "profiling" {
            text(&value)
        } else {
            format!("`{}`", code(&value))
        };
        let _ = writeln!(out, "- {label}: {value}");
    }
    if !report.errors.is_empty() {
        let _ = writeln!(out, "\n### Errors\n");
        for e in &report.errors {
            let _ = writeln!(out, "- {}", text(e));
        }
    }

    let views = report.kernel_views();
    let failing: Vec<_> = views
        .iter()
        .filter(|v| v.status.needs_attention())
        .collect();
    if !failing.is_empty() {
        let _ = writeln!(out, "\n### Why\n");
        for view in &failing {
            let _ = writeln!(
                out,
                "- **{}** `{}`",
                view.status.as_str(),
                code(view.kernel)
            );
            for s in view.structure.iter().filter(|s| s.status != Status::Pass) {
                let _ = writeln!(out, "  - {}: {}", s.check.as_str(), text(&s.message));
            }
            for r in view.rules.iter().filter(|r| r.status.needs_attention()) {
                let _ = writeln!(out, "  - {}", failed_rule(r));
            }
            for f in &view.findings {
                let speedup = f
                    .finding
                    .estimated_speedup_pct
                    .map(|s| format!(", est. speedup {s:.0}%"))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "  - new ncu finding `{}` ({}{speedup}): {}",
                    f.finding.rule,
                    f.finding.rule_type,
                    text(&f.finding.description)
                );
            }
        }
    }
    let total = report.failing_total_rules();
    if !total.is_empty() {
        let _ = writeln!(out, "\n### Whole run\n");
        for r in total {
            let _ = writeln!(out, "- {}", failed_rule(r));
        }
    }

    if !report.rules.is_empty() || !report.structure.is_empty() {
        // Folded: the sections above already list what needs attention.
        let n = report.rules.len() + report.structure.len();
        let _ = writeln!(out, "\n<details><summary>All {n} checks</summary>\n");
        let _ = writeln!(
            out,
            "| kernel | check | baseline μ±σ | current | change | verdict |"
        );
        let _ = writeln!(out, "|---|---|---:|---:|---:|---|");
        for s in &report.structure {
            let base = s
                .baseline_launches
                .map_or("—".into(), |n| format!("{n} launches"));
            let cur = format!(
                "{} launches",
                s.current_launches
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join("/")
            );
            let _ = writeln!(
                out,
                "| `{}` | {} | {base} | {cur} | | {} |",
                code(&s.kernel),
                s.check.as_str(),
                s.status.as_str()
            );
        }
        for r in &report.rules {
            let base = r
                .baseline
                .map_or("—".into(), |b| format_mu_sigma(&b, &r.unit));
            let cur = r.current.map_or("—".into(), |x| format_value(x, &r.unit));
            let change = r.change_pct.map_or(String::new(), |p| format!("{p:+.1}%"));
            let _ = writeln!(
                out,
                "| `{}` | `{}` | {base} | {cur} | {change} | {} |",
                code(scope_name(r.kernel.as_deref())),
                code(&r.rule),
                r.verdict()
            );
        }
    }
    if !report.rules.is_empty() || !report.structure.is_empty() {
        let _ = writeln!(out, "\n</details>");
    }
    let other: Vec<_> = views
        .iter()
        .filter(|v| !v.status.needs_attention())
        .flat_map(|v| v.findings.iter())
        .collect();
    if !other.is_empty() {
        let _ = writeln!(out, "\n### New ncu findings\n");
        for f in other {
            let _ = writeln!(
                out,
                "- `{}`: `{}` ({}): {}",
                code(&f.kernel),
                f.finding.rule,
                f.finding.rule_type,
                text(&f.finding.description)
            );
        }
    }
    if !report.sanitizer.is_empty() {
        let _ = writeln!(out, "\n### compute-sanitizer\n");
        for f in &report.sanitizer {
            let _ = writeln!(
                out,
                "- **{}** {}: {}",
                f.status.as_str(),
                f.tool,
                text(&f.message)
            );
            if !f.example_stack.is_empty() {
                let frames: Vec<String> = f
                    .example_stack
                    .iter()
                    .take(6)
                    .map(|fr| format!("`{}`", code(fr)))
                    .collect();
                let _ = writeln!(out, "  - host stack: {}", frames.join(" ← "));
            }
        }
    }
    if !report.memory.is_empty() {
        let _ = writeln!(out, "\n### GPU memory\n");
        for m in &report.memory {
            let _ = writeln!(
                out,
                "- **{}** {}: {}",
                m.status.as_str(),
                text(&m.check),
                text(&m.message)
            );
        }
    }
    if !report.notes.is_empty() {
        let _ = writeln!(out, "\n### Notes\n");
        for n in &report.notes {
            let _ = writeln!(out, "- {}", text(n));
        }
    }
    out
}

/// A failed rule as one Markdown line (without the list marker): rule, verdict, message, why.
fn failed_rule(r: &crate::verdict::RuleResult) -> String {
    let why = r
        .why
        .as_deref()
        .map(|w| format!(" — {}", text(w)))
        .unwrap_or_default();
    format!(
        "`{}` {}: {}{why}",
        code(&r.rule),
        r.status.as_str(),
        text(&r.message)
    )
}

/// Text inside a code span in a table cell: only `|` (and backticks) need care.
fn code(s: &str) -> String {
    s.replace('`', "'").replace('|', "\\|").replace('\n', " ")
}

/// Plain Markdown text: HTML and emphasis characters escaped.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '*' | '_' | '|' | '`' | '[' | ']' | '\\' => {
                out.push('\\');
                out.push(ch);
            }
            '\n' => out.push(' '),
            _ => out.push(ch),
        }
    }
    out
}
