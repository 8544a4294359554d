//! The terminal report, written for a CI log as much as for a terminal: the
//! headline with the outcome, what was gated, then the failures and why, then
//! a table of the checks grouped by kernel (failures first) that fits the
//! width (the terminal's, `COLUMNS`, or 100 columns when not a terminal) —
//! long kernel and metric names are shortened in the middle here only; the
//! file reports keep them whole. `--show` picks the rows. Colour only when
//! asked or writing to a terminal with `NO_COLOR` unset.

use super::document::Document;
use super::layout::{Column, shorten_middle, wrap};
use super::view::{Cells, Check, Finding, Section, View, rank, scope_name};
use crate::verdict::{Outcome, Report, Status};
use std::fmt::Write;

/// Width of a log that is not a terminal (and the fallback everywhere).
pub const LOG_WIDTH: usize = 100;
/// Narrower than this, the table would be unreadable anyway.
const MIN_WIDTH: usize = 60;

/// Which checks the table lists (`--show`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Show {
    /// Failures and errors only.
    Fail,
    /// Failures, errors, warnings and improvements.
    #[default]
    Changed,
    /// Every check.
    All,
}

impl Show {
    fn keeps(self, status: Status) -> bool {
        match self {
            Show::Fail => matches!(status, Status::Fail | Status::Error),
            Show::Changed => matches!(
                status,
                Status::Fail | Status::Error | Status::Warn | Status::Improved | Status::Changed
            ),
            Show::All => true,
        }
    }
}

/// How the terminal report looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
    /// Columns the report may use.
    pub width: usize,
    pub show: Show,
}

impl Default for Style {
    fn default() -> Style {
        Style {
            color: false,
            width: LOG_WIDTH,
            show: Show::Changed,
        }
    }
}

/// The width to fit: `COLUMNS` when set, else the terminal's, else 100 (a CI log).
pub fn width() -> usize {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok());
    let terminal =
        || terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| usize::from(w.0));
    columns
        .or_else(terminal)
        .unwrap_or(LOG_WIDTH)
        .max(MIN_WIDTH)
}

/// The report as text.
pub fn render(report: &Report, style: &Style) -> String {
    render_view(&View::new(report), style)
}

/// The document as text: a check's report, or each workload's report under
/// a rule with its name, then the suite's headline.
pub fn document(doc: &Document<'_>, style: &Style) -> String {
    let Some(suite) = &doc.suite else {
        return doc
            .workloads
            .iter()
            .map(|w| render_view(&w.view, style))
            .collect();
    };
    let mut out = String::new();
    for w in &doc.workloads {
        let tags = if w.tags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", w.tags.join(", "))
        };
        let _ = writeln!(out, "\n── workload {}{tags} ──", w.name());
        out.push_str(&render_view(&w.view, style));
    }
    let _ = writeln!(out, "\nncugate suite: {}", suite.headline);
    out
}

/// The view as text.
pub fn render_view(view: &View<'_>, style: &Style) -> String {
    let mut out = String::new();
    headline(&mut out, view, style.color);
    for (label, value) in &view.header {
        let label = format!("{label}:");
        let _ = writeln!(out, "  {label:<11} {value}");
    }
    for error in view.errors {
        let _ = writeln!(out, "\nerror: {error}");
    }
    why(&mut out, view, style.width);
    table(&mut out, view, style);
    findings(&mut out, view, style.width);
    for section in view.lists() {
        list(&mut out, section);
    }
    for note in view.notes {
        let _ = writeln!(out, "\nnote: {note}");
    }
    out
}

fn headline(out: &mut String, view: &View<'_>, color: bool) {
    let word = view.outcome_title();
    let word = if color {
        let paint = match view.outcome {
            Outcome::Pass => "\x1b[1;32m",
            Outcome::Regression => "\x1b[1;31m",
            Outcome::Error => "\x1b[1;35m",
        };
        format!("{paint}{word}\x1b[0m")
    } else {
        word.to_string()
    };
    let _ = writeln!(
        out,
        "ncugate: {word} (exit {}): {}",
        view.exit_code,
        view.counts_text(", ")
    );
}

/// The failing kernels and whole-run rules, each with what failed and why.
fn why(out: &mut String, view: &View<'_>, width: usize) {
    let failing: Vec<_> = view.failing_kernels().collect();
    let total_failures = view.failing_total();
    if failing.is_empty() && total_failures.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nwhy:");
    for section in &failing {
        let _ = writeln!(
            out,
            "  {} {}",
            mark(section.status),
            shorten_middle(&section.title, width.saturating_sub(4))
        );
        for (c, cells) in section.measured().filter(|(c, _)| c.needs_attention()) {
            explain(out, c, cells, width);
        }
        for (_, f) in section.findings() {
            finding_line(out, f, width);
        }
    }
    if let Some(worst) = total_failures.iter().map(|c| c.status).max() {
        let _ = writeln!(out, "  {} {}", mark(worst), super::view::TOTAL);
        for c in total_failures {
            if let Some(cells) = c.cells() {
                explain(out, c, cells, width);
            }
        }
    }
}

/// One row of the table before layout: the check's cells and its verdict.
struct Row<'v> {
    check: &'v Check<'v>,
    cells: &'v Cells<'v>,
}

impl Row<'_> {
    fn cell(&self, i: usize, sigma: bool) -> &str {
        let c = self.cells;
        match i {
            0 => &self.check.name,
            1 if sigma => &c.baseline,
            1 => &c.baseline_mean,
            2 => &c.current,
            3 => &c.change,
            _ => &c.allowance,
        }
    }
}

/// The measured checks by section, worst section first, each section's worst rows first.
fn table(out: &mut String, view: &View<'_>, style: &Style) {
    if view.measured().next().is_none() {
        return;
    }
    let mut groups: Vec<(&str, Vec<Row<'_>>)> = Vec::new();
    let mut total = 0;
    for section in &view.sections {
        let mut rows = Vec::new();
        // A structural check that passed is not worth a row, nor a count.
        for (check, cells) in section.measured().filter(|(c, _)| !c.is_quiet()) {
            total += 1;
            if style.show.keeps(check.status) {
                rows.push(Row { check, cells });
            }
        }
        if !rows.is_empty() {
            groups.push((&section.title, rows));
        }
    }
    let shown: usize = groups.iter().map(|(_, rows)| rows.len()).sum();
    let hidden = total - shown;
    let what = match style.show {
        Show::All => "every check".to_string(),
        Show::Changed => "failures, warnings and improvements".to_string(),
        Show::Fail => "failures".to_string(),
    };
    let more = match (hidden, style.show) {
        (0, _) => String::new(),
        (n, Show::Fail) => format!("; {n} others not shown: --show changed or all"),
        (n, _) => format!("; {n} others not shown: --show all"),
    };
    if shown == 0 {
        let none = match style.show {
            Show::Fail => "nothing failed",
            _ => "nothing failed, warned or improved",
        };
        let _ = writeln!(
            out,
            "\nchecks: {none}; {hidden} passed (--show all lists them)"
        );
        return;
    }
    let _ = writeln!(out, "\nchecks ({what}{more}):");
    for (_, rows) in &mut groups {
        rows.sort_by_key(|r| rank(r.check.status));
    }
    groups.sort_by_key(|(_, rows)| rows.iter().map(|r| rank(r.check.status)).min());

    const INDENT: usize = 4;
    // A metric name needs about this much room to stay recognisable; below
    // it, the baseline column drops its ±σ (the "why" lines above keep it).
    const READABLE_METRIC: usize = 24;
    let layout = |groups: &[(&str, Vec<Row<'_>>)], sigma: bool| {
        let header = [
            "metric",
            if sigma {
                "baseline μ±σ"
            } else {
                "baseline μ"
            },
            "current",
            "change",
            "allowance",
        ];
        let mut columns: Vec<Column> = header
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let widest = groups
                    .iter()
                    .flat_map(|(_, rows)| {
                        rows.iter().map(move |r| r.cell(i, sigma).chars().count())
                    })
                    .max()
                    .unwrap_or(0);
                Column::new(h, widest)
            })
            .collect();
        columns.push(Column::new("verdict", 8));
        // Only the metric column gives way; the numbers are short and must stay whole.
        super::layout::fit(&mut columns, 0, style.width.saturating_sub(INDENT));
        columns
    };
    let mut sigma = true;
    let mut columns = layout(&groups, sigma);
    if columns[0].width < READABLE_METRIC {
        sigma = false;
        columns = layout(&groups, sigma);
    }
    let pad = " ".repeat(INDENT);
    let head: Vec<String> = columns.iter().map(|c| c.title.clone()).collect();
    let _ = writeln!(out, "{pad}{}", super::layout::line(&columns, &head));
    for (title, rows) in &groups {
        let worst = rows
            .iter()
            .map(|r| r.check.status)
            .max()
            .unwrap_or(Status::Pass);
        let _ = writeln!(
            out,
            "  {} {}",
            mark(worst),
            shorten_middle(title, style.width.saturating_sub(4))
        );
        for row in rows {
            let mut cells: Vec<String> = (0..5).map(|i| row.cell(i, sigma).to_string()).collect();
            cells.push(row.check.verdict.to_string());
            let text = super::layout::line(&columns, &cells);
            let text = if style.color {
                paint_verdict(&text, row.check.status, row.check.verdict)
            } else {
                text
            };
            let _ = writeln!(out, "{pad}{text}");
        }
    }
}

/// New findings of kernels that passed every check.
fn findings(out: &mut String, view: &View<'_>, width: usize) {
    let other = view.findings_elsewhere();
    if !other.is_empty() {
        let _ = writeln!(out, "\nnew ncu findings:");
        for (c, f) in other {
            let kernel = scope_name(c.kernel);
            let _ = writeln!(out, "  {}", shorten_middle(kernel, width.saturating_sub(2)));
            finding_line(out, f, width);
        }
    }
}

/// A list section (compute-sanitizer, graph memory): one line per row,
/// unwrapped so that a log search for the message finds it, with where it happened.
fn list(out: &mut String, section: &Section<'_>) {
    let _ = writeln!(out, "\n{}:", section.title);
    for c in &section.checks {
        let Some(listed) = c.listed() else { continue };
        let _ = writeln!(
            out,
            "  {} {} [{}]: {}",
            mark(c.status),
            listed.label,
            c.verdict,
            c.message
        );
        if let Some(t) = listed.thread {
            let _ = writeln!(out, "      first at {t}");
        }
        for frame in listed.stack {
            let _ = writeln!(out, "      at {frame}");
        }
    }
}

/// A check's why line: a structural check's message, or a rule with its verdict, thresholds line and reason.
fn explain(out: &mut String, c: &Check<'_>, cells: &Cells<'_>, width: usize) {
    let Some(line) = cells.line else {
        let text = format!("{}: {}", c.name, c.message);
        let _ = writeln!(out, "{}", wrap(&text, width, "      ", "        "));
        return;
    };
    let text = format!(
        "{} [{}]: {} (thresholds line {line})",
        c.name,
        c.status.as_str(),
        c.message,
    );
    let _ = writeln!(out, "{}", wrap(&text, width, "      ", "          "));
    if let Some(why) = c.why {
        let _ = writeln!(out, "{}", wrap(why, width, "        → ", "          "));
    }
}

fn finding_line(out: &mut String, f: &Finding<'_>, width: usize) {
    let text = format!("new ncu finding {} {}: {}", f.rule, f.detail, f.summary);
    let _ = writeln!(out, "{}", wrap(&text, width, "      ", "        "));
}

fn mark(status: Status) -> &'static str {
    match status {
        Status::Fail => "✗",
        Status::Error => "!",
        Status::Warn => "⚠",
        Status::Improved => "↑",
        _ => "✓",
    }
}

/// Colours the verdict word at the end of a laid-out row.
fn paint_verdict(line: &str, status: Status, word: &str) -> String {
    let code = match status {
        Status::Fail => "31",
        Status::Error => "35",
        Status::Warn => "33",
        Status::Improved => "32",
        _ => return line.to_string(),
    };
    match line.rfind(word) {
        Some(i) => format!(
            "{}\x1b[{code}m{word}\x1b[0m{}",
            &line[..i],
            &line[i + word.len()..]
        ),
        None => line.to_string(),
    }
}
