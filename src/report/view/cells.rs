//! The cells and words of the view, each written once: what was gated, a
//! structural check's and a rule's table cells, a chart's allowed bound, a
//! finding's speedup.

use super::{Check, Finding};
use crate::format::{first_sentence, format_mu_sigma, format_value};
use crate::rules::Worse;
use crate::verdict::{FindingResult, Report, RuleResult, StructureResult, Subject};

/// The lines that say what was gated, in the order every reporter shows
/// them: `(label, value)`, e.g. `("baseline", "baseline.json")` for the
/// metric gate, `("tool", "compute-sanitizer memcheck")` and `("app", "./app")` for the sanitizer.
pub(super) fn header(report: &Report) -> Vec<(&'static str, String)> {
    let mut lines = Vec::new();
    match &report.subject {
        Subject::Metrics => {
            if !report.baseline.is_empty() {
                lines.push(("baseline", report.baseline.clone()));
            }
            lines.push(("input", report.inputs.join(", ")));
            if !report.details.is_empty() {
                lines.push(("details", report.details.join(", ")));
            }
            lines.push(("thresholds", report.thresholds.clone()));
        }
        Subject::Sanitizer { tools, app } => {
            lines.push(("tool", format!("compute-sanitizer {}", tools.join(", "))));
            match app {
                Some(app) => lines.push(("app", app.clone())),
                None => lines.push(("input", report.inputs.join(", "))),
            }
        }
        Subject::Memory { app } => {
            lines.push((
                "gate",
                "CUDA-graph memory audit (CUPTI) + NVML sampling".into(),
            ));
            lines.push(("app", app.clone()));
        }
    }
    if let Some(d) = &report.devices {
        lines.push(("GPU", d.current.clone()));
    }
    for p in &report.profiling {
        lines.push((
            "profiling",
            match report.profiling.len() {
                1 => p.to_string(),
                _ => format!("{}: {p}", p.input),
            },
        ));
    }
    lines
}

fn launches(n: Option<f64>) -> String {
    n.map_or("—".into(), |n| format!("{n} launches"))
}

pub(super) fn structure_check(s: &StructureResult) -> Check<'_> {
    let runs: Vec<String> = s.current_launches.iter().map(u64::to_string).collect();
    Check {
        kernel: Some(&s.kernel),
        name: s.check.as_str(),
        rule: None,
        rule_index: None,
        status: s.status,
        verdict: s.status.as_str(),
        baseline: launches(s.baseline_launches),
        baseline_mean: launches(s.baseline_launches),
        current: format!("{} launches", runs.join("/")),
        change: String::new(),
        allowance: "exact".into(),
        allowed: String::new(),
        message: &s.message,
        why: None,
        line: None,
    }
}

pub(super) fn rule_check(index: usize, r: &RuleResult) -> Check<'_> {
    let dash = || "—".to_string();
    let change = match (r.change_pct, r.current, r.baseline) {
        (Some(p), _, _) => format!("{p:+.1}%"),
        (None, Some(x), Some(b)) if x == b.mean => "±0%".into(),
        (None, Some(_), Some(_)) => "new".into(),
        _ => String::new(),
    };
    let sign = if r.worse == Worse::Higher { "+" } else { "-" };
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
    Check {
        kernel: r.kernel.as_deref(),
        name: &r.rule,
        rule: Some(r),
        rule_index: Some(index),
        status: r.status,
        verdict: r.verdict(),
        baseline: r
            .baseline
            .map_or_else(dash, |b| format_mu_sigma(&b, &r.unit)),
        baseline_mean: r
            .baseline
            .map_or_else(dash, |b| format_value(b.mean, &r.unit)),
        current: r.current.map_or_else(dash, |x| format_value(x, &r.unit)),
        change,
        allowance,
        allowed: allowed(r),
        message: &r.message,
        why: r.why.as_deref(),
        line: Some(r.line),
    }
}

/// What a rule allows, for a chart's caption: ` — allowed up to 57.3M inst, limit 60M inst`.
fn allowed(r: &RuleResult) -> String {
    let higher = r.worse == Worse::Higher;
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

pub(super) fn finding(f: &FindingResult) -> Finding<'_> {
    let speedup = f
        .finding
        .estimated_speedup_pct
        .map(|s| format!("est. speedup {s:.0}%"));
    let detail = match &speedup {
        Some(s) => format!("({}, {s})", f.finding.rule_type),
        None => format!("({})", f.finding.rule_type),
    };
    Finding {
        kernel: &f.kernel,
        rule: &f.finding.rule,
        status: f.status,
        speedup,
        detail,
        description: &f.finding.description,
        summary: first_sentence(&f.finding.description),
    }
}
