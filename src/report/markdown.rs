//! `--markdown`: the report for a CI summary page (GitHub step summary,
//! Jenkins description). Kernel names go in code spans, so `*`, `_`, `<` and
//! `>` in C++ names render literally; `|` is escaped for tables.

use super::view::{Check, View, outcome_emoji, scope_name};
use std::fmt::Write;

/// The view as GitHub-flavoured Markdown.
pub fn render(view: &View<'_>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## {} ncugate: {}\n",
        outcome_emoji(view.outcome),
        view.outcome_word()
    );
    let _ = writeln!(
        out,
        "{} — exit code {}\n",
        view.counts_text(" · "),
        view.exit_code
    );
    for (label, value) in &view.header {
        let value = if *label == "GPU" || *label == "profiling" {
            text(value)
        } else {
            format!("`{}`", code(value))
        };
        let _ = writeln!(out, "- {label}: {value}");
    }
    if !view.errors.is_empty() {
        let _ = writeln!(out, "\n### Errors\n");
        for e in view.errors {
            let _ = writeln!(out, "- {}", text(e));
        }
    }

    let mut failing = view.failing_kernels().peekable();
    if failing.peek().is_some() {
        let _ = writeln!(out, "\n### Why\n");
        for scope in failing {
            let _ = writeln!(
                out,
                "- **{}** `{}`",
                scope.status.as_str(),
                code(scope.name())
            );
            for c in view.checks_of(scope).filter(|c| c.needs_attention()) {
                let _ = writeln!(out, "  - {}", why_line(c));
            }
            for f in view.findings_of(scope) {
                let _ = writeln!(
                    out,
                    "  - new ncu finding `{}` {}: {}",
                    code(f.rule),
                    f.detail,
                    text(f.description)
                );
            }
        }
    }
    let total = view.failing_total();
    if !total.is_empty() {
        let _ = writeln!(out, "\n### Whole run\n");
        for c in total {
            let _ = writeln!(out, "- {}", why_line(c));
        }
    }

    if !view.checks.is_empty() {
        // Folded: the sections above already list what needs attention.
        let n = view.checks.len();
        let _ = writeln!(out, "\n<details><summary>All {n} checks</summary>\n");
        let _ = writeln!(
            out,
            "| kernel | check | baseline μ±σ | current | change | verdict |"
        );
        let _ = writeln!(out, "|---|---|---:|---:|---:|---|");
        for c in &view.checks {
            // A rule's name is a metric: a code span; a structural check is words.
            let name = if c.rule.is_some() {
                format!("`{}`", code(c.name))
            } else {
                c.name.to_string()
            };
            let _ = writeln!(
                out,
                "| `{}` | {name} | {} | {} | {} | {} |",
                code(scope_name(c.kernel)),
                c.baseline,
                c.current,
                c.change,
                c.verdict
            );
        }
        let _ = writeln!(out, "\n</details>");
    }
    let other = view.findings_elsewhere();
    if !other.is_empty() {
        let _ = writeln!(out, "\n### New ncu findings\n");
        for f in other {
            let _ = writeln!(
                out,
                "- `{}`: `{}` {}: {}",
                code(f.kernel),
                code(f.rule),
                f.detail,
                text(f.description)
            );
        }
    }
    if !view.sanitizer.is_empty() {
        let _ = writeln!(out, "\n### compute-sanitizer\n");
        for f in view.sanitizer {
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
    if !view.memory.is_empty() {
        let _ = writeln!(out, "\n### GPU memory\n");
        for m in view.memory {
            let _ = writeln!(
                out,
                "- **{}** {}: {}",
                m.status.as_str(),
                text(&m.check),
                text(&m.message)
            );
        }
    }
    if !view.notes.is_empty() {
        let _ = writeln!(out, "\n### Notes\n");
        for n in view.notes {
            let _ = writeln!(out, "- {}", text(n));
        }
    }
    out
}

/// A check that needs attention as one Markdown line (without the list
/// marker): a structural check's message, or a rule, its verdict, message and why.
fn why_line(c: &Check<'_>) -> String {
    if c.rule.is_none() {
        return format!("{}: {}", c.name, text(c.message));
    }
    let why = c.why.map(|w| format!(" — {}", text(w))).unwrap_or_default();
    format!(
        "`{}` {}: {}{why}",
        code(c.name),
        c.status.as_str(),
        text(c.message)
    )
}

/// Text inside a code span in a table cell: only `|` (and backticks) need care.
pub fn code(s: &str) -> String {
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
