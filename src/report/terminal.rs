//! The terminal report, written for a CI log as much as for a terminal: the
//! headline with the outcome, what was gated, then the failures and why, then
//! a table of the checks grouped by kernel (failures first) that fits the
//! width (the terminal's, `COLUMNS`, or 100 columns when not a terminal) —
//! long kernel and metric names are shortened in the middle here only; the
//! file reports keep them whole. `--show` picks the rows. Colour only when
//! asked or writing to a terminal with `NO_COLOR` unset.

use super::fmt::{format_mu_sigma, format_value};
use super::layout::{Column, shorten_middle, wrap};
use super::scope_name;
use crate::verdict::{Outcome, Report, RuleResult, Status, StructureResult};
use std::fmt::Write;

/// Width of a log that is not a terminal (and the fallback everywhere).
pub const LOG_WIDTH: usize = 100;
/// Narrower than this, the table would be unreadable anyway.
const MIN_WIDTH: usize = 60;

/// Which checks the table lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Show {
    /// Failures and errors.
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
    let mut out = String::new();
    headline(&mut out, report, style.color);
    for (label, value) in report.header() {
        let label = format!("{label}:");
        let _ = writeln!(out, "  {label:<11} {value}");
    }
    for error in &report.errors {
        let _ = writeln!(out, "\nerror: {error}");
    }
    why(&mut out, report, style.width);
    table(&mut out, report, style);
    findings(&mut out, report, style.width);
    for note in &report.notes {
        let _ = writeln!(out, "\nnote: {note}");
    }
    out
}

fn headline(out: &mut String, report: &Report, color: bool) {
    let c = report.counts();
    let (word, paint) = match report.outcome {
        Outcome::Pass => ("PASS", "\x1b[1;32m"),
        Outcome::Regression => ("REGRESSION", "\x1b[1;31m"),
        Outcome::Error => ("ERROR", "\x1b[1;35m"),
    };
    let word = if color {
        format!("{paint}{word}\x1b[0m")
    } else {
        word.to_string()
    };
    let _ = writeln!(
        out,
        "ncugate: {word} (exit {}): {}",
        report.exit_code,
        c.words().join(", ")
    );
}

/// The failing kernels and whole-run rules, each with what failed and why.
fn why(out: &mut String, report: &Report, width: usize) {
    // One status per kernel, the same every reporter uses (new findings included).
    let views = report.kernel_views();
    let failing: Vec<_> = views
        .iter()
        .filter(|v| v.status.needs_attention())
        .collect();
    let total_failures = report.failing_total_rules();
    if failing.is_empty() && total_failures.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nwhy:");
    for view in &failing {
        let _ = writeln!(
            out,
            "  {} {}",
            mark(view.status),
            shorten_middle(view.kernel, width.saturating_sub(4))
        );
        for s in view.structure.iter().filter(|s| s.status != Status::Pass) {
            let text = format!("{}: {}", s.check.as_str(), s.message);
            let _ = writeln!(out, "{}", wrap(&text, width, "      ", "        "));
        }
        for r in view.rules.iter().filter(|r| r.status.needs_attention()) {
            explain(out, r, width);
        }
        for f in &view.findings {
            finding_line(out, f, width);
        }
    }
    if !total_failures.is_empty() {
        let worst = total_failures.iter().map(|r| r.status).max();
        let _ = writeln!(out, "  {} (total)", mark(worst.unwrap_or(Status::Fail)));
        for r in total_failures {
            explain(out, r, width);
        }
    }
}

/// One row of the table before layout: plain text cells and the verdict.
struct Row {
    cells: [String; 5],
    /// The baseline without its standard deviation, for narrow terminals.
    mean_only: String,
    status: Status,
    /// The verdict word (`higher`/`lower` for a `changed` result).
    verdict: &'static str,
}

impl Row {
    fn cell(&self, i: usize, sigma: bool) -> &str {
        if i == 1 && !sigma {
            &self.mean_only
        } else {
            &self.cells[i]
        }
    }
}

/// The checks grouped by kernel, worst group first, each group's worst rows first.
fn table(out: &mut String, report: &Report, style: &Style) {
    if report.rules.is_empty() && report.structure.is_empty() {
        return;
    }
    // Groups in the order kernels first appear; `None` is the whole run.
    let mut groups: Vec<(Option<String>, Vec<Row>)> = Vec::new();
    // Group index by kernel: a report can have 10^4 kernels.
    let mut index: std::collections::HashMap<Option<String>, usize> =
        std::collections::HashMap::new();
    let mut push = |kernel: Option<&str>, row: Row| {
        let key = kernel.map(str::to_string);
        match index.get(&key) {
            Some(&i) => groups[i].1.push(row),
            None => {
                index.insert(key.clone(), groups.len());
                groups.push((key, vec![row]));
            }
        }
    };
    let mut total = 0;
    for s in report.structure.iter().filter(|s| s.status != Status::Pass) {
        total += 1;
        if style.show.keeps(s.status) {
            push(Some(&s.kernel), structure_row(s));
        }
    }
    for r in &report.rules {
        total += 1;
        if style.show.keeps(r.status) {
            push(r.kernel.as_deref(), rule_row(r));
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
        rows.sort_by_key(|r| rank(r.status));
    }
    groups.sort_by_key(|(_, rows)| rows.iter().map(|r| rank(r.status)).min());

    const INDENT: usize = 4;
    // A metric name needs about this much room to stay recognisable; below
    // it, the baseline column drops its ±σ (the "why" lines above keep it).
    const READABLE_METRIC: usize = 24;
    let layout = |groups: &[(Option<String>, Vec<Row>)], sigma: bool| {
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
    for (kernel, rows) in &groups {
        let worst = rows.iter().map(|r| r.status).max().unwrap_or(Status::Pass);
        let name = scope_name(kernel.as_deref());
        let _ = writeln!(
            out,
            "  {} {}",
            mark(worst),
            shorten_middle(name, style.width.saturating_sub(4))
        );
        for row in rows {
            let mut cells: Vec<String> = (0..5).map(|i| row.cell(i, sigma).to_string()).collect();
            cells.push(row.verdict.to_string());
            let text = super::layout::line(&columns, &cells);
            let text = if style.color {
                paint_verdict(&text, row.status, row.verdict)
            } else {
                text
            };
            let _ = writeln!(out, "{pad}{text}");
        }
    }
}

/// Findings, compute-sanitizer and GPU-memory sections.
fn findings(out: &mut String, report: &Report, width: usize) {
    // Findings of kernels that passed every check: still worth a look.
    let views = report.kernel_views();
    let other: Vec<_> = views
        .iter()
        .filter(|v| !v.status.needs_attention())
        .flat_map(|v| v.findings.iter())
        .collect();
    if !other.is_empty() {
        let _ = writeln!(out, "\nnew ncu findings:");
        for f in other {
            let _ = writeln!(
                out,
                "  {}",
                shorten_middle(&f.kernel, width.saturating_sub(2))
            );
            finding_line(out, f, width);
        }
    }
    if !report.sanitizer.is_empty() {
        let _ = writeln!(out, "\ncompute-sanitizer:");
        let mut sanitizer: Vec<_> = report.sanitizer.iter().collect();
        sanitizer.sort_by_key(|f| rank(f.status));
        for f in sanitizer {
            // One line each, unwrapped: a log search for the message finds it.
            let _ = writeln!(out, "  {} [{}] {}", mark(f.status), f.tool, f.message);
            if let Some(t) = &f.example_thread {
                let _ = writeln!(out, "      first at {t}");
            }
            for frame in f.example_stack.iter().take(6) {
                let _ = writeln!(out, "      at {frame}");
            }
        }
    }
    if !report.memory.is_empty() {
        let _ = writeln!(out, "\nGPU memory:");
        let mut memory: Vec<_> = report.memory.iter().collect();
        memory.sort_by_key(|m| rank(m.status));
        for m in memory {
            let _ = writeln!(
                out,
                "  {} {} [{}]: {}",
                mark(m.status),
                m.check,
                m.status.as_str(),
                m.message
            );
        }
    }
}

/// Sort key: what needs attention first.
fn rank(status: Status) -> u8 {
    match status {
        Status::Error => 0,
        Status::Fail => 1,
        Status::Warn => 2,
        Status::Improved => 3,
        Status::Changed => 4,
        Status::Pass => 5,
        Status::Skipped => 6,
    }
}

fn explain(out: &mut String, r: &RuleResult, width: usize) {
    let text = format!(
        "{} [{}]: {} (thresholds line {})",
        r.rule,
        r.status.as_str(),
        r.message,
        r.line
    );
    let _ = writeln!(out, "{}", wrap(&text, width, "      ", "          "));
    if let Some(why) = &r.why {
        let _ = writeln!(out, "{}", wrap(why, width, "        → ", "          "));
    }
}

fn finding_line(out: &mut String, f: &crate::verdict::FindingResult, width: usize) {
    let speedup = f
        .finding
        .estimated_speedup_pct
        .map(|s| format!(", est. speedup {s:.0}%"))
        .unwrap_or_default();
    let text = format!(
        "new ncu finding {} ({}{speedup}): {}",
        f.finding.rule,
        f.finding.rule_type,
        super::fmt::first_sentence(&f.finding.description)
    );
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

fn structure_row(s: &StructureResult) -> Row {
    Row {
        cells: [
            s.check.as_str().to_string(),
            s.baseline_launches
                .map_or("—".into(), |n| format!("{n} launches")),
            format!(
                "{} launches",
                s.current_launches
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join("/")
            ),
            String::new(),
            "exact".into(),
        ],
        mean_only: s
            .baseline_launches
            .map_or("—".into(), |n| format!("{n} launches")),
        status: s.status,
        verdict: s.status.as_str(),
    }
}

fn rule_row(r: &RuleResult) -> Row {
    let baseline = r
        .baseline
        .map_or("—".into(), |b| format_mu_sigma(&b, &r.unit));
    let current = r.current.map_or("—".into(), |x| format_value(x, &r.unit));
    let change = match (r.change_pct, r.current, r.baseline) {
        (Some(p), _, _) => format!("{p:+.1}%"),
        (None, Some(x), Some(b)) if x == b.mean => "±0%".into(),
        (None, Some(_), Some(_)) => "new".into(),
        _ => "".into(),
    };
    let sign = if r.worse == crate::rules::Worse::Higher {
        "+"
    } else {
        "-"
    };
    let allowance = match (r.allowance, r.baseline, r.limit) {
        (Some(a), Some(b), limit) => {
            let rel = if b.mean != 0.0 {
                format!("{sign}{:.1}%", a / b.mean.abs() * 100.0)
            } else {
                format!("{sign}{}", format_value(a, &r.unit))
            };
            match limit {
                Some(l) => format!("{rel}, limit {}", format_value(l, &r.unit)),
                None => rel,
            }
        }
        (None, _, Some(l)) => format!("limit {}", format_value(l, &r.unit)),
        _ => String::new(),
    };
    Row {
        cells: [r.rule.clone(), baseline, current, change, allowance],
        mean_only: r
            .baseline
            .map_or("—".into(), |b| format_value(b.mean, &r.unit)),
        status: r.status,
        verdict: r.verdict(),
    }
}
