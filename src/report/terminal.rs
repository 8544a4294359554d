//! The terminal report: a headline with the outcome, a table (kernel, metric,
//! baseline μ±σ, current, change, allowance, verdict), then for each kernel
//! that failed, why. Colour only when writing to a terminal and `NO_COLOR`
//! is unset.

use super::fmt::{format_mu_sigma, format_value};
use super::scope_name;
use crate::verdict::{Outcome, Report, RuleResult, Status, StructureResult};
use comfy_table::{Cell, Color, ContentArrangement, Table, presets};
use std::fmt::Write;

/// The report as text; `color` adds ANSI colours.
pub fn render(report: &Report, color: bool) -> String {
    let mut out = String::new();
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
        "ncugate: {word} (exit {}): {} failed, {} warnings, {} errors, {} improved, {} passed{}",
        report.exit_code,
        c.fail,
        c.warn,
        c.error,
        c.improved,
        c.pass,
        if c.skipped > 0 {
            format!(", {} skipped", c.skipped)
        } else {
            String::new()
        }
    );
    if !report.baseline.is_empty() {
        let _ = writeln!(out, "  baseline:   {}", report.baseline);
    }
    let _ = writeln!(out, "  input:      {}", report.inputs.join(", "));
    if !report.details.is_empty() {
        let _ = writeln!(out, "  details:    {}", report.details.join(", "));
    }
    let _ = writeln!(out, "  thresholds: {}", report.thresholds);
    if let Some(d) = &report.devices {
        let _ = writeln!(out, "  GPU:        {}", d.current);
    }
    for error in &report.errors {
        let _ = writeln!(out, "\nerror: {error}");
    }

    if !report.rules.is_empty() || !report.structure.is_empty() {
        let mut table = Table::new();
        table
            .load_style(presets::UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Disabled);
        if !color {
            table.force_no_tty();
        }
        table.set_header([
            "kernel",
            "metric",
            "baseline μ±σ",
            "current",
            "change",
            "allowance",
            "verdict",
        ]);
        for s in report.structure.iter().filter(|s| s.status != Status::Pass) {
            table.add_row(structure_row(s, color));
        }
        for r in &report.rules {
            table.add_row(rule_row(r, color));
        }
        let _ = writeln!(out, "\n{table}");
    }

    let failing = report.failing_kernels();
    let total_failures = report.failing_total_rules();
    if !failing.is_empty() || !total_failures.is_empty() {
        let _ = writeln!(out, "\nwhy:");
    }
    for kernel in &failing {
        let _ = writeln!(out, "  {} {kernel}", mark(report.kernel_status(kernel)));
        for s in report
            .structure
            .iter()
            .filter(|s| &s.kernel == kernel && s.status != Status::Pass)
        {
            let _ = writeln!(out, "      {}: {}", s.check.as_str(), s.message);
        }
        for r in report
            .rules
            .iter()
            .filter(|r| r.kernel.as_deref() == Some(kernel.as_str()) && r.status.needs_attention())
        {
            explain(&mut out, r);
        }
        for f in report.findings.iter().filter(|f| &f.kernel == kernel) {
            finding_line(&mut out, f);
        }
    }
    if !total_failures.is_empty() {
        let _ = writeln!(out, "  {} (total)", mark(Status::Fail));
        for r in total_failures {
            explain(&mut out, r);
        }
    }
    // Findings of kernels that passed every check: still worth a look.
    let other: Vec<_> = report
        .findings
        .iter()
        .filter(|f| !failing.contains(&f.kernel))
        .collect();
    if !other.is_empty() {
        let _ = writeln!(out, "\nnew ncu findings:");
        for f in other {
            let _ = writeln!(out, "  {}", f.kernel);
            finding_line(&mut out, f);
        }
    }
    if !report.sanitizer.is_empty() {
        let _ = writeln!(out, "\ncompute-sanitizer:");
        for f in &report.sanitizer {
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
        for m in &report.memory {
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
    for note in &report.notes {
        let _ = writeln!(out, "\nnote: {note}");
    }
    out
}

fn explain(out: &mut String, r: &RuleResult) {
    let _ = writeln!(
        out,
        "      {} [{}]: {} (thresholds line {})",
        r.rule,
        r.status.as_str(),
        r.message,
        r.line
    );
    if let Some(why) = &r.why {
        let _ = writeln!(out, "        → {why}");
    }
}

fn finding_line(out: &mut String, f: &crate::verdict::FindingResult) {
    let speedup = f
        .finding
        .estimated_speedup_pct
        .map(|s| format!(", est. speedup {s:.0}%"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "      new ncu finding {} ({}{speedup}): {}",
        f.finding.rule,
        f.finding.rule_type,
        super::fmt::first_sentence(&f.finding.description)
    );
}

fn mark(status: Status) -> &'static str {
    match status {
        Status::Fail => "✗",
        Status::Error => "!",
        Status::Warn => "⚠",
        _ => "✓",
    }
}

fn verdict_cell(status: Status, color: bool) -> Cell {
    let cell = Cell::new(status.as_str());
    if !color {
        return cell;
    }
    match status {
        Status::Fail => cell.fg(Color::Red),
        Status::Error => cell.fg(Color::Magenta),
        Status::Warn => cell.fg(Color::Yellow),
        Status::Improved => cell.fg(Color::Green),
        _ => cell,
    }
}

fn structure_row(s: &StructureResult, color: bool) -> Vec<Cell> {
    vec![
        Cell::new(&s.kernel),
        Cell::new(s.check.as_str()),
        Cell::new(
            s.baseline_launches
                .map_or("—".into(), |n| format!("{n} launches")),
        ),
        Cell::new(format!(
            "{} launches",
            s.current_launches
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join("/")
        )),
        Cell::new(""),
        Cell::new("exact"),
        verdict_cell(s.status, color),
    ]
}

fn rule_row(r: &RuleResult, color: bool) -> Vec<Cell> {
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
    vec![
        Cell::new(scope_name(r.kernel.as_deref())),
        Cell::new(&r.rule),
        Cell::new(baseline),
        Cell::new(current),
        Cell::new(change),
        Cell::new(allowance),
        verdict_cell(r.status, color),
    ]
}
