//! The terminal report, written for a CI log as much as for a terminal: the
//! headline with the outcome, what was gated, then the failures and why, then
//! a table of the checks grouped by kernel (failures first) that fits the
//! width (the terminal's, `COLUMNS`, or 100 columns when not a terminal) —
//! long kernel and metric names are shortened in the middle here only; the
//! file reports keep them whole. `--show` picks the rows. Colour only when
//! asked or writing to a terminal with `NO_COLOR` unset.

mod table;

use super::columns::{shorten_middle, wrap};
use super::document::{Document, Workload};
use super::view::{Cells, Check, Finding, Section, View, scope_name};
use crate::status::{Outcome, Status};

use std::fmt::Write;

/// Width of a log that is not a terminal (and the fallback everywhere).
pub(crate) const LOG_WIDTH: usize = 100;
/// Narrower than this, the table would be unreadable anyway.
const MIN_WIDTH: usize = 60;

/// Which checks the table lists (`--show`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Show {
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
    pub(crate) color: bool,
    /// Columns the report may use.
    pub(crate) width: usize,
    pub(crate) show: Show,
    /// `-q`: the "why" lines without the table that repeats them, and in a
    /// suite no status line for a workload that passed.
    pub(crate) quiet: bool,
}

impl Default for Style {
    fn default() -> Style {
        Style {
            color: false,
            width: LOG_WIDTH,
            show: Show::Changed,
            quiet: false,
        }
    }
}

/// The width to fit: `COLUMNS` when set, else the terminal's, else 100 (a CI log).
pub(crate) fn width() -> usize {
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

#[cfg(test)]
/// The report as text.
pub(crate) fn render(report: &crate::verdict::Report, style: &Style) -> String {
    render_view(&View::new(&super::printable::escaped(report)), style)
}

/// The document as text: a check's report; for a suite, as nextest does
/// it, one status line per workload in run order (`PASS  w01  2.8 s`,
/// `FAIL  w07  3.1 s — scale: launched 6 times per run, baseline 3`), then
/// the workloads that failed (and with `--show changed` those with a
/// warning or an improvement, with `--show all` every one) in full, each
/// under a rule with its name, then the suite's headline.
pub(crate) fn document(doc: &Document<'_>, style: &Style) -> String {
    if doc.suite.is_none() {
        return after_status_lines(doc, style);
    }
    let mut out = String::new();
    let widest = |f: &dyn Fn(&Workload<'_>) -> usize| doc.workloads.iter().map(f).max();
    let widths = (
        widest(&|w| w.name().chars().count()).unwrap_or(0),
        widest(&|w| seconds(w).chars().count()).unwrap_or(0),
    );
    for w in &doc.workloads {
        if style.quiet && w.view.outcome == Outcome::Pass {
            continue;
        }
        let _ = writeln!(out, "{}", status_line(w, widths, style));
    }
    out.push_str(&after_status_lines(doc, style));
    out
}

/// One workload's status line as a suite check prints it the moment the
/// workload finishes (`names`: the widest name of the suite); nothing for a
/// pass with `-q`. The time takes up to `999.9 s`.
pub(crate) fn streamed_status_line(
    w: &Workload<'_>,
    names: usize,
    style: &Style,
) -> Option<String> {
    if style.quiet && w.view.outcome == Outcome::Pass {
        return None;
    }
    let time = if seconds(w).is_empty() { 0 } else { 7 };
    Some(format!("{}\n", status_line(w, (names, time), style)))
}

/// [`document`] without the status lines (a suite check printed them as
/// each workload finished): the workloads in full, then the headline.
pub(crate) fn after_status_lines(doc: &Document<'_>, style: &Style) -> String {
    let Some(suite) = &doc.suite else {
        return doc
            .workloads
            .iter()
            .map(|w| render_view(&w.view, style))
            .collect();
    };
    let mut out = String::new();
    for w in doc.workloads.iter().filter(|w| in_full(w, style.show)) {
        let tags = if w.tags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", w.tags.join(", "))
        };
        let skipped = w
            .carried
            .as_ref()
            .map(|c| format!(" (skipped: {c})"))
            .unwrap_or_default();
        let _ = writeln!(out, "\n── workload {}{tags}{skipped} ──", w.name());
        out.push_str(&render_view(&w.view, style));
    }
    let _ = writeln!(out, "\nncugate suite: {}", suite.headline);
    out
}

/// Whether a suite shows this workload's report in full: when it did not
/// pass, or when `--show` lists rows of it that passed with a change.
fn in_full(w: &Workload<'_>, show: Show) -> bool {
    w.view.outcome != Outcome::Pass
        || show == Show::All
        || w.view
            .sections
            .iter()
            .flat_map(|s| &s.checks)
            .any(|c| c.status != Status::Pass && show.keeps(c.status))
}

/// One workload's status line: its verdict word, its name, its time and,
/// when it did not pass, the top reason, cut to the width.
fn status_line(w: &Workload<'_>, (name, time): (usize, usize), style: &Style) -> String {
    let word = match (w.view.outcome, &w.carried) {
        (_, Some(_)) => "SKIP",
        (Outcome::Pass, None) => "PASS",
        (Outcome::Regression, None) => "FAIL",
        (Outcome::Error, None) => "ERROR",
    };
    let mut text = format!("{word:<5} {:<name$}", w.name());
    if time > 0 {
        let _ = write!(text, "  {:>time$}", seconds(w));
    }
    if let Some(carried) = &w.carried {
        let _ = write!(text, "  {carried}");
    }
    if let Some(reason) = w.view.top_reason() {
        let _ = write!(text, " — {reason}");
    } else {
        // A pass that left checks ungated says how many, as its headline does.
        let ungated = w.view.report.counts().not_gated_words();
        if !ungated.is_empty() {
            let _ = write!(text, " — {}", ungated.join(", "));
        }
    }
    let text = shorten_end(text.trim_end(), style.width);
    match style.color {
        true => format!(
            "{}{}",
            paint(word, outcome_paint(w.view.outcome)),
            &text[word.len()..]
        ),
        false => text,
    }
}

/// A workload's time on its status line: `2.8 s`, or nothing when not profiled.
fn seconds<'w>(w: &'w Workload<'_>) -> &'w str {
    match w.seconds.as_str() {
        "—" => "",
        s => s,
    }
}

/// `text` in at most `width` characters: whole, or its start and `…`.
fn shorten_end(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The ANSI colour of an outcome's word.
fn outcome_paint(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "1;32",
        Outcome::Regression => "1;31",
        Outcome::Error => "1;35",
    }
}

/// `text` in the colour `code`.
fn paint(text: &str, code: &str) -> String {
    format!("\x1b[{code}m{text}\x1b[0m")
}

/// The view as text.
pub(crate) fn render_view(view: &View<'_>, style: &Style) -> String {
    let mut out = String::new();
    headline(&mut out, view, style);
    for (label, value) in &view.header {
        let label = format!("{label}:");
        let first = format!("  {label:<11} ");
        // One word (a path) cannot wrap: cut in the middle, it keeps both ends.
        let value = match value.contains(' ') {
            true => value.clone(),
            false => shorten_middle(value, style.width.saturating_sub(first.len())),
        };
        let _ = writeln!(
            out,
            "{}",
            wrap(&value, style.width, &first, "              ")
        );
    }
    for error in view.errors {
        let _ = writeln!(out, "\nerror: {error}");
    }
    why(&mut out, view, style);
    // With -q the "why" lines say all the table would repeat.
    if !style.quiet {
        table::table(&mut out, view, style);
    }
    findings(&mut out, view, style.width);
    for section in view.lists() {
        list(&mut out, section, style);
    }
    for note in view.notes {
        let _ = writeln!(out, "\n{}", note_text(&note.labelled(), style.width));
    }
    out
}

/// A note wrapped to `width`; a command it gives to paste (`…: ncugate …`)
/// goes on a line of its own, whole: a line break inside a quoted kernel
/// name would break the pasted command.
fn note_text(note: &str, width: usize) -> String {
    match note.split_once(": ncugate ") {
        Some((said, command)) => format!("{}:\n  ncugate {command}", wrap(said, width, "", "  ")),
        None => wrap(note, width, "", "  "),
    }
}

fn headline(out: &mut String, view: &View<'_>, style: &Style) {
    let word = view.outcome_title();
    let word = match style.color {
        true => paint(word, outcome_paint(view.outcome)),
        false => word.to_string(),
    };
    let line = format!(
        "ncugate: {word}{} (exit {}): {}",
        view.counts.degraded_words(),
        view.exit_code,
        view.counts_text(", ")
    );
    // A degraded check's label is long: wrapped to the width like the rest
    // (any other headline stays one line, which scripts read whole).
    match view.counts.degraded {
        true => {
            let _ = writeln!(out, "{}", wrap(&line, style.width, "", "  "));
        }
        false => {
            let _ = writeln!(out, "{line}");
        }
    }
}

/// The failing kernels and whole-run rules, each with what failed and why.
fn why(out: &mut String, view: &View<'_>, style: &Style) {
    let (width, color) = (style.width, style.color);
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
            mark(section.status, color),
            shorten_middle(&section.title, width.saturating_sub(4))
        );
        for (c, cells) in section.measured().filter(|(c, _)| c.needs_attention()) {
            explain(out, view, c, cells, style);
        }
        for (_, f) in section.findings() {
            finding_line(out, f, width);
        }
    }
    if let Some(worst) = total_failures.iter().map(|c| c.status).max() {
        let _ = writeln!(out, "  {} {}", mark(worst, color), super::view::TOTAL);
        for c in total_failures {
            if let Some(cells) = c.cells() {
                explain(out, view, c, cells, style);
            }
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

/// A list section (compute-sanitizer, graph memory): one row each, wrapped
/// to the width, with where it happened (frames shortened in the middle).
fn list(out: &mut String, section: &Section<'_>, style: &Style) {
    let _ = writeln!(out, "\n{}:", section.title);
    for c in &section.checks {
        let Some(listed) = c.listed() else { continue };
        let verdict = format!("[{}]", c.verdict);
        let text = format!("{} {verdict}: {}", listed.label, c.message);
        let text = wrap(&text, style.width, "    ", "      ");
        // Painted after wrapping, like the mark: the escape codes take no columns.
        let text = match (style.color, status_paint(c.status)) {
            (true, Some(code)) => text.replacen(&verdict, &paint(&verdict, code), 1),
            _ => text,
        };
        // The mark after wrapping: painted, it takes no more columns.
        let _ = writeln!(out, "  {}{}", mark(c.status, style.color), &text[3..]);
        let room = style.width.saturating_sub(9);
        if let Some(t) = listed.thread {
            let _ = writeln!(out, "      first at {}", shorten_middle(t, room));
        }
        for frame in listed.stack {
            let _ = writeln!(out, "      at {}", shorten_middle(frame, room));
        }
    }
}

/// A check's why line: a structural check's message, or a rule with its verdict, thresholds line and reason.
fn explain(out: &mut String, view: &View<'_>, c: &Check<'_>, cells: &Cells<'_>, style: &Style) {
    let width = style.width;
    let Some(line) = cells.line else {
        let text = format!("{}: {}", c.name, c.message);
        let _ = writeln!(out, "{}", wrap(&text, width, "      ", "        "));
        return;
    };
    let verdict = format!("[{}]", c.status.as_str());
    let text = format!(
        "{} {verdict}: {} ({})",
        c.name,
        c.message,
        view.rule_place(line)
    );
    let text = wrap(&text, width, "      ", "          ");
    // Painted after wrapping: the escape codes take no columns.
    let text = match (style.color, status_paint(c.status)) {
        (true, Some(code)) => text.replacen(&verdict, &paint(&verdict, code), 1),
        _ => text,
    };
    let _ = writeln!(out, "{text}");
    if let Some(why) = c.why {
        let _ = writeln!(out, "{}", wrap(why, width, "        → ", "          "));
    }
}

fn finding_line(out: &mut String, f: &Finding<'_>, width: usize) {
    let text = format!("new ncu finding {} {}: {}", f.rule, f.detail, f.summary);
    let _ = writeln!(out, "{}", wrap(&text, width, "      ", "        "));
}

/// A status's mark, in its colour when `color`.
fn mark(status: Status, color: bool) -> String {
    let mark = match status {
        Status::Fail => "✗",
        Status::Error => "!",
        Status::Warn => "⚠",
        Status::Improved => "↑",
        _ => "✓",
    };
    match (color, status_paint(status)) {
        (true, Some(code)) => paint(mark, code),
        _ => mark.to_string(),
    }
}

/// The ANSI colour of a status that is not a plain pass.
fn status_paint(status: Status) -> Option<&'static str> {
    match status {
        Status::Fail => Some("31"),
        Status::Error => Some("35"),
        Status::Warn => Some("33"),
        Status::Improved => Some("32"),
        _ => None,
    }
}

/// Colours the verdict word at the end of a laid-out row.
fn paint_verdict(line: &str, status: Status, word: &str) -> String {
    let Some(code) = status_paint(status) else {
        return line.to_string();
    };
    match line.rfind(word) {
        Some(i) => format!(
            "{}{}{}",
            &line[..i],
            paint(word, code),
            &line[i + word.len()..]
        ),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_command_to_paste_is_never_wrapped() {
        let note = "note: trend of gpu__time_duration.sum on void scale<0>(const float *, float *, long, int): ncugate history show --history sqlite:h.sqlite --workload default --kernel 'void scale<0>(const float *, float *, long, int)' --metric gpu__time_duration.sum --html trends";
        let text = super::note_text(note, 80);
        let command = text.lines().last().unwrap_or_default();
        assert!(
            command.starts_with("  ncugate history show") && command.ends_with("--html trends"),
            "{text}"
        );
        assert!(
            text.lines().rev().skip(1).all(|l| l.chars().count() <= 80),
            "{text}"
        );
        assert_eq!(super::note_text("note: short", 80), "note: short");
    }
}
