//! The terminal report's table of checks, grouped by kernel (failures
//! first), fitted to the width without losing which metric a row is: the
//! roll-up every rule shares (` (sum)`) moves into the header, a whole-run
//! rule under `(total)` drops its `, total`, and the metric column gets the
//! width of its longest name before the value columns get theirs — the
//! baseline's ±σ and then the allowance column give way first (the "why"
//! lines keep both), and when the names still do not fit, each name gets a
//! line of its own above its values.

use super::super::columns::{Column, fit, line, shorten_middle, wrap};
use super::super::view::{Cells, Check, View, rank};
use super::{Show, Style, mark, paint_verdict};
use crate::status::Status;
use std::fmt::Write;

const INDENT: usize = 4;
/// The values under a name of their own are indented this much more.
const STACK_INDENT: usize = 2;

/// One row of the table before layout: the check, its cells, its name as shown.
struct Row<'v> {
    check: &'v Check<'v>,
    cells: &'v Cells<'v>,
    name: String,
}

/// A value column: its title and the cell it shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Value {
    Baseline { sigma: bool },
    Current,
    Change,
    Allowance,
    Verdict,
}

impl Value {
    fn title(self) -> &'static str {
        match self {
            Value::Baseline { sigma: true } => "baseline μ±σ",
            Value::Baseline { sigma: false } => "baseline μ",
            Value::Current => "current",
            Value::Change => "change",
            Value::Allowance => "allowance",
            Value::Verdict => "verdict",
        }
    }

    fn cell<'a>(self, row: &'a Row<'_>) -> std::borrow::Cow<'a, str> {
        let c = row.cells;
        std::borrow::Cow::Owned(match self {
            Value::Baseline { sigma: true } => c.baseline(),
            Value::Baseline { sigma: false } => c.baseline_mean(),
            Value::Current => c.current(),
            Value::Change => c.change(),
            Value::Allowance => c.allowance(),
            Value::Verdict => return std::borrow::Cow::Borrowed(row.check.verdict),
        })
    }
}

/// How the rows are laid out: the value columns, and whether each name
/// has a line of its own.
struct Layout {
    values: Vec<Value>,
    stacked: bool,
    /// The metric column and the value columns (one-line), or the value columns (stacked).
    columns: Vec<Column>,
}

/// The measured checks by section, worst section first, each section's worst rows first.
pub(super) fn table(out: &mut String, view: &View<'_>, style: &Style) {
    if view.measured().next().is_none() {
        return;
    }
    let mut groups: Vec<(&str, Vec<Row<'_>>)> = Vec::new();
    let mut total = 0;
    // Hidden checks that gated nothing (trace mode, a shared GPU's, code
    // that varies): not "passed".
    let mut ungated = 0;
    for section in &view.sections {
        let mut rows = Vec::new();
        // Every check counts, as in the headline and every other format; a
        // structural check that passed gets a row only with `--show all`.
        for (check, cells) in section.measured() {
            total += 1;
            // The rules a trace could not measure (trace mode) are counted in
            // the headline and named in a note; `--show all` lists them: one
            // row per kernel and rule would bury the launch-count failures.
            if !style.show.keeps(check.status) {
                ungated +=
                    usize::from(check.status == Status::Skipped || check.verdict == "not gated");
            } else {
                let name = match (cells.rule.is_some(), check.kernel) {
                    // Under `(total)`, a whole-run rule need not say so again.
                    (true, None) => check.name.replace(", total)", ")"),
                    _ => check.name.to_string(),
                };
                rows.push(Row { check, cells, name });
            }
        }
        if !rows.is_empty() {
            groups.push((&section.title, rows));
        }
    }
    let shown: usize = groups.iter().map(|(_, rows)| rows.len()).sum();
    let hidden = total - shown;
    if shown == 0 {
        let none = match style.show {
            Show::Fail => "nothing failed",
            _ => "nothing failed, warned or improved",
        };
        let passed = hidden - ungated;
        let text = if ungated == 0 {
            format!("checks: {none}; {passed} passed (--show all lists them)")
        } else {
            format!("checks: {none}; {passed} passed, {ungated} not gated (--show all lists them)")
        };
        let _ = writeln!(out, "\n{}", wrap(&text, style.width, "", "  "));
        return;
    }
    let text = format!("checks ({}):", what(style.show, hidden));
    let _ = writeln!(out, "\n{}", wrap(&text, style.width, "", "  "));
    for (_, rows) in &mut groups {
        rows.sort_by_key(|r| rank(r.check.status));
    }
    groups.sort_by_key(|(_, rows)| rows.iter().map(|r| rank(r.check.status)).min());

    let suffix = common_suffix(&groups);
    if let Some(suffix) = &suffix {
        for row in groups.iter_mut().flat_map(|(_, rows)| rows) {
            if row.cells.rule.is_some() {
                row.name.truncate(row.name.len() - suffix.len());
            }
        }
    }
    let metric = format!("metric{}", suffix.as_deref().unwrap_or_default());
    let layout = layout(&groups, &metric, style.width);
    let pad = " ".repeat(INDENT);
    let head: Vec<String> = layout.values.iter().map(|v| v.title().into()).collect();
    if layout.stacked {
        let _ = writeln!(out, "{pad}{metric}");
        let _ = writeln!(
            out,
            "{pad}{}{}",
            " ".repeat(STACK_INDENT),
            line(&layout.columns, &head)
        );
    } else {
        let head: Vec<String> = std::iter::once(metric.clone()).chain(head).collect();
        let _ = writeln!(out, "{pad}{}", line(&layout.columns, &head));
    }
    for (title, rows) in &groups {
        let worst = rows
            .iter()
            .map(|r| r.check.status)
            .max()
            .unwrap_or(Status::Pass);
        let _ = writeln!(
            out,
            "  {} {}",
            mark(worst, style.color),
            shorten_middle(title, style.width.saturating_sub(4))
        );
        for row in rows {
            write_row(out, row, &layout, style);
        }
    }
}

/// What the table lists, and how to see the rest.
fn what(show: Show, hidden: usize) -> String {
    let what = match show {
        Show::All => "every check",
        Show::Changed => "failures, warnings and improvements",
        Show::Fail => "failures",
    };
    let more = match (hidden, show) {
        (0, _) => String::new(),
        (n, Show::Fail) => format!("; {n} others not shown: --show changed or all"),
        (n, _) => format!("; {n} others not shown: --show all"),
    };
    format!("{what}{more}")
}

/// One row: its cells on one line, or its name on a line and its values below.
fn write_row(out: &mut String, row: &Row<'_>, layout: &Layout, style: &Style) {
    let pad = " ".repeat(INDENT);
    let values = layout.values.iter().map(|v| v.cell(row).to_string());
    let text = if layout.stacked {
        let room = style.width.saturating_sub(INDENT);
        let _ = writeln!(out, "{pad}{}", shorten_middle(&row.name, room));
        format!(
            "{}{}",
            " ".repeat(STACK_INDENT),
            line(&layout.columns, &values.collect::<Vec<_>>())
        )
    } else {
        let cells: Vec<String> = std::iter::once(row.name.clone()).chain(values).collect();
        line(&layout.columns, &cells)
    };
    let text = match style.color {
        true => paint_verdict(&text, row.check.status, row.check.verdict),
        false => text,
    };
    let _ = writeln!(out, "{pad}{text}");
}

/// The roll-up every rule row's name ends with (` (sum)`), when they share
/// one: the header says it once. `None` when a rule has its own `name`, or
/// the rows differ.
fn common_suffix(groups: &[(&str, Vec<Row<'_>>)]) -> Option<String> {
    let mut names = groups
        .iter()
        .flat_map(|(_, rows)| rows)
        .filter(|r| r.cells.rule.is_some())
        .map(|r| r.name.as_str());
    let first = names.next()?;
    let start = first
        .rfind(" (")
        .filter(|&i| i > 0 && first.ends_with(')'))?;
    let suffix = &first[start..];
    names
        .all(|n| n.len() > suffix.len() && n.ends_with(suffix))
        .then(|| suffix.to_string())
}

/// The first layout in which every name fits whole: with the baseline's ±σ,
/// without it, without the allowance column too; else each name on a line
/// of its own, with as many value columns as fit.
fn layout(groups: &[(&str, Vec<Row<'_>>)], metric: &str, width: usize) -> Layout {
    let rows = || groups.iter().flat_map(|(_, rows)| rows);
    let widest = |value: Value| {
        rows()
            .map(|r| value.cell(r).chars().count())
            .max()
            .unwrap_or(0)
    };
    let value_columns = |values: &[Value]| -> Vec<Column> {
        values
            .iter()
            .map(|&v| Column::new(v.title(), widest(v)))
            .collect()
    };
    let longest_name = rows()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(metric.chars().count());
    let choices = [
        values(true, true),
        values(false, true),
        values(false, false),
    ];
    let room = width.saturating_sub(INDENT);
    for values in &choices {
        let mut columns = vec![Column::new(metric, longest_name)];
        columns.extend(value_columns(values));
        fit(&mut columns, 0, room);
        if columns[0].width >= longest_name {
            return Layout {
                values: values.clone(),
                stacked: false,
                columns,
            };
        }
    }
    let room = room.saturating_sub(STACK_INDENT);
    let [.., narrowest] = choices;
    let mut values = values(false, true);
    let mut columns = value_columns(&values);
    if used(&columns) > room {
        values = narrowest;
        columns = value_columns(&values);
    }
    Layout {
        values,
        stacked: true,
        columns,
    }
}

/// The value columns, with or without the baseline's ±σ and the allowance.
fn values(sigma: bool, allowance: bool) -> Vec<Value> {
    let mut values = vec![Value::Baseline { sigma }, Value::Current, Value::Change];
    if allowance {
        values.push(Value::Allowance);
    }
    values.push(Value::Verdict);
    values
}

/// The characters `columns` take on a line, with their gaps.
fn used(columns: &[Column]) -> usize {
    columns.iter().map(|c| c.width).sum::<usize>() + 2 * columns.len().saturating_sub(1)
}
