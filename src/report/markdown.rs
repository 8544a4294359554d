//! `--markdown`: the report for a CI summary page (GitHub step summary,
//! Jenkins description). Kernel names go in code spans, so `*`, `_`, `<` and
//! `>` in C++ names render literally; `|` is escaped for tables.

use super::document::{Document, Suite};
use super::view::{Check, Section, View, outcome_emoji, scope_name};
use std::fmt::Write;
use std::io;

/// The document as GitHub-flavoured Markdown: a check's report, or a
/// suite's title and table of workloads with each workload's report one
/// heading level down, those that failed first.
pub(crate) fn document(doc: &Document<'_>) -> String {
    let mut out = Vec::new();
    // Writing to memory cannot fail.
    let _ = write_document(doc, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// [`document`] written as it is made: the table of every check (a row per
/// kernel and rule) goes out a row at a time, never held whole.
pub(crate) fn write_document(doc: &Document<'_>, out: &mut dyn io::Write) -> io::Result<()> {
    let Some(suite) = &doc.suite else {
        for w in &doc.workloads {
            write_at(&w.view, 2, out)?;
        }
        return Ok(());
    };
    out.write_all(suite_header(doc, suite).as_bytes())?;
    for w in doc.failures_first() {
        writeln!(out, "\n## Workload `{}`\n", code(w.name()))?;
        write_at(&w.view, 3, out)?;
    }
    Ok(())
}

/// A suite's title, headline, shard and table of workloads, those that
/// failed first, each with the reason its status line gives.
pub(super) fn suite_header(doc: &Document<'_>, suite: &Suite<'_>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## {} ncugate suite: {}\n",
        outcome_emoji(suite.outcome),
        suite.outcome.as_str()
    );
    let _ = writeln!(out, "{}\n", suite.headline);
    if let Some((shard, all)) = &suite.shard {
        let _ = writeln!(out, "Shard {shard} of the suite ({}).\n", all.join(", "));
    }
    if !suite.merged_from.is_empty() {
        let _ = writeln!(
            out,
            "Merged from {} reports: {}.\n",
            suite.merged_from.len(),
            suite
                .merged_from
                .iter()
                .map(|m| format!("`{}`", code(m)))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let _ = writeln!(
        out,
        "| workload | verdict | why | failed | warnings | errors | passed | profiled |\n|---|---|---|---|---|---|---|---|"
    );
    for w in doc.failures_first() {
        let c = w.counts();
        let why = w.view.top_reason().map(|r| code(&r)).unwrap_or_default();
        let _ = writeln!(
            out,
            "| `{}` | {} {} | {} | {} | {} | {} | {} | {} |",
            code(w.name()),
            outcome_emoji(w.view.outcome),
            w.view.outcome_word(),
            if why.is_empty() {
                String::new()
            } else {
                format!("`{why}`")
            },
            c.fail,
            c.warn,
            c.error,
            c.pass,
            w.carried
                .as_ref()
                .map_or_else(|| w.seconds.clone(), |c| format!("skipped: {c}"))
        );
    }
    out
}

/// The view as GitHub-flavoured Markdown, its title a level-2 heading.
pub fn render(view: &View<'_>) -> String {
    render_at(view, 2)
}

/// The view as GitHub-flavoured Markdown, its title a heading of `depth`
/// (`##` for a check, `###` for a workload under a suite's title), its
/// sections one level down.
pub(crate) fn render_at(view: &View<'_>, depth: usize) -> String {
    let mut out = Vec::new();
    // Writing to memory cannot fail.
    let _ = write_at(view, depth, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// [`render_at`] written as it is made.
fn write_at(view: &View<'_>, depth: usize, sink: &mut dyn io::Write) -> io::Result<()> {
    let h = "#".repeat(depth + 1);
    sink.write_all(head(view, depth, &h).as_bytes())?;
    checks(sink, view)?;
    sink.write_all(tail(view, &h).as_bytes())
}

/// What comes before the table of every check: the headline, what was
/// gated, the errors, and why each failure matters.
fn head(view: &View<'_>, depth: usize, h: &str) -> String {
    let title = "#".repeat(depth);
    let mut out = String::new();
    let degraded = if view.counts.degraded {
        " (degraded)"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "{title} {} ncugate: {}{degraded}\n",
        outcome_emoji(view.outcome),
        view.outcome_word()
    );
    if view.counts.degraded {
        let _ = writeln!(out, "> [!WARNING]\n> **{}**\n", text(&view.outcome_label()));
    }
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
        let _ = writeln!(out, "\n{h} Errors\n");
        for e in view.errors {
            let _ = writeln!(out, "- {}", prose(e));
        }
    }
    why(&mut out, view, h);
    out
}

/// What comes after the table of every check: findings of kernels that
/// passed, the other gates' lists, the source lines, the notes.
fn tail(view: &View<'_>, h: &str) -> String {
    let mut out = String::new();
    let other = view.findings_elsewhere();
    if !other.is_empty() {
        let _ = writeln!(out, "\n{h} New ncu findings\n");
        for (c, f) in other {
            let _ = writeln!(
                out,
                "- `{}`: `{}` {}: {}",
                code(scope_name(c.kernel)),
                code(f.rule),
                f.detail,
                text(f.description)
            );
        }
    }
    for section in view.lists() {
        list(&mut out, section, h);
    }
    source_lines(&mut out, &view.report.explain, h);
    if !view.notes.is_empty() {
        let _ = writeln!(out, "\n{h} Notes\n");
        for n in view.notes {
            let _ = writeln!(out, "- {}", prose(&n.to_string()));
        }
    }
    out
}

/// A small table of the source lines (or opcodes) that explain the failing kernels.
fn source_lines(out: &mut String, explained: &[crate::explain::Explained], h: &str) {
    if explained.iter().all(|e| e.changes.is_empty()) {
        return;
    }
    let _ = writeln!(out, "\n{h} Source lines\n");
    let _ = writeln!(
        out,
        "| kernel | line | source | counters (baseline → current) |"
    );
    let _ = writeln!(out, "|---|---|---|---|");
    for e in explained {
        for c in &e.changes {
            let counters: Vec<String> = c
                .counters
                .iter()
                .map(|(name, before, after)| {
                    format!(
                        "{name} {} → {}",
                        crate::format::format_value(*before, ""),
                        crate::format::format_value(*after, "")
                    )
                })
                .collect();
            let source = if c.text.is_empty() {
                String::new()
            } else {
                format!("`{}`", code(&c.text))
            };
            let launch = e
                .launch
                .map(|l| format!(" ({})", l.label()))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "| `{}`{launch} | `{}` | {source} | {} |",
                code(&e.kernel),
                code(&c.place),
                text(&counters.join(", "))
            );
        }
    }
}

/// The failing kernels with what failed and why, then the whole run's failures.
fn why(out: &mut String, view: &View<'_>, h: &str) {
    let mut failing = view.failing_kernels().peekable();
    if failing.peek().is_some() {
        let _ = writeln!(out, "\n{h} Why\n");
        for section in failing {
            let _ = writeln!(
                out,
                "- **{}** `{}`",
                section.status.as_str(),
                code(&section.title)
            );
            for (c, _) in section.measured().filter(|(c, _)| c.needs_attention()) {
                let _ = writeln!(out, "  - {}", why_line(c));
            }
            for (_, f) in section.findings() {
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
        let _ = writeln!(out, "\n{h} Whole run\n");
        for c in total {
            let _ = writeln!(out, "- {}", why_line(c));
        }
    }
}

/// Every measured check, section by section, folded: the sections above
/// already list what needs attention.
fn checks(out: &mut dyn io::Write, view: &View<'_>) -> io::Result<()> {
    let n = view.measured().count();
    if n == 0 {
        return Ok(());
    }
    writeln!(out, "\n<details><summary>All {n} checks</summary>\n")?;
    writeln!(
        out,
        "| kernel | check | baseline μ±σ | current | change | verdict |"
    )?;
    writeln!(out, "|---|---|---:|---:|---:|---|")?;
    for (c, cells) in view.measured() {
        // A rule's name is a metric: a code span; a structural check is words.
        let name = if cells.rule.is_some() {
            format!("`{}`", code(&c.name))
        } else {
            c.name.to_string()
        };
        writeln!(
            out,
            "| `{}` | {name} | {} | {} | {} | {} |",
            code(scope_name(c.kernel)),
            cells.baseline(),
            cells.current(),
            cells.change(),
            c.verdict
        )?;
    }
    writeln!(out, "\n</details>")
}

/// A list section: a line per row, with the host stack where there is one.
fn list(out: &mut String, section: &Section<'_>, h: &str) {
    let _ = writeln!(out, "\n{h} {}\n", text(&section.title));
    for c in &section.checks {
        let Some(listed) = c.listed() else { continue };
        let _ = writeln!(
            out,
            "- **{}** {}: {}",
            c.status.as_str(),
            text(listed.label),
            text(&c.message)
        );
        if !listed.stack.is_empty() {
            let frames: Vec<String> = listed
                .stack
                .iter()
                .map(|fr| format!("`{}`", code(fr)))
                .collect();
            let _ = writeln!(out, "  - host stack: {}", frames.join(" ← "));
        }
    }
}

/// A check that needs attention as one Markdown line (without the list
/// marker): a structural check's message, or a rule, its verdict, message and why.
fn why_line(c: &Check<'_>) -> String {
    if c.rule().is_none() {
        return format!("{}: {}", c.name, text(&c.message));
    }
    let why = c.why.map(|w| format!(" — {}", text(w))).unwrap_or_default();
    format!(
        "`{}` {}: {}{why}",
        code(&c.name),
        c.status.as_str(),
        text(&c.message)
    )
}

/// Text inside a code span in a table cell: only `|` (and backticks) need care.
pub(crate) fn code(s: &str) -> String {
    s.replace('`', "'").replace('|', "\\|").replace('\n', " ")
}

/// A sentence that quotes code in backticks (`` `noise` ``, a flag): the
/// quoted parts as code spans, the rest as plain text. An unpaired
/// backtick is text.
fn prose(s: &str) -> String {
    let parts: Vec<&str> = s.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return text(s);
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| match i % 2 {
            1 if !part.is_empty() => format!("`{}`", code(part)),
            _ => text(part),
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::prose;

    #[test]
    fn prose_keeps_its_code_spans_and_escapes_the_rest() {
        assert_eq!(
            prose("rules that use `noise` need *two* runs"),
            "rules that use `noise` need \\*two\\* runs"
        );
        assert_eq!(prose("a `x|y` span"), "a `x\\|y` span");
        assert_eq!(prose("one ` backtick"), "one \\` backtick");
        assert_eq!(prose("<b>"), "&lt;b&gt;");
    }
}
