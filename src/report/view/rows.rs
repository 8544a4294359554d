//! The words and cells of the view, each written once: what was gated, a
//! structural check's and a rule's table cells, a chart's allowed bound, a
//! finding's speedup, a compute-sanitizer finding's and a memory check's row.

use super::{Cells, Check, Finding, Kind, Listed, STACK_FRAMES, Subject};
use crate::format::first_sentence;
use crate::memory::MemoryResult;
use crate::rules::Per;
use crate::sanitizer::SanitizerFinding;
use crate::verdict::{FindingResult, Report, RuleResult, StructureCheck, StructureResult};
use std::borrow::Cow;

/// The lines that say what was gated, in the order every reporter shows
/// them: `(label, value)`, e.g. `("baseline", "baseline.json")` for the
/// metric gate, `("tool", "compute-sanitizer memcheck")` and `("app", "./app")` for the sanitizer.
pub(super) fn header(report: &Report, subject: &Subject<'_>) -> Vec<(&'static str, String)> {
    let mut lines = Vec::new();
    match subject {
        Subject::Metrics {
            baseline,
            thresholds,
            devices,
            ..
        } => {
            if let Some(baseline) = baseline {
                lines.push(("baseline", baseline.to_string()));
            }
            if !report.inputs.is_empty() {
                lines.push(("input", inputs(&report.inputs)));
            }
            if !report.details.is_empty() {
                lines.push(("details", report.details.join(", ")));
            }
            lines.push(("thresholds", thresholds.as_str().to_string()));
            if let Some(d) = devices {
                lines.push(("GPU", d.current.clone()));
            }
            if let Some(shared) = &report.shared_gpu {
                lines.push(("shared GPU", shared.headline()));
            }
            if let Some(d) = &report.degraded {
                lines.push((
                    "degraded",
                    format!(
                        "{} mode: {}; {} (kernels, launches per run, launch configurations); every metric rule not gated; {}",
                        d.mode, d.reason, d.gated, d.mapping
                    ),
                ));
            }
        }
        Subject::Sanitizer { tools, app } => {
            lines.push(("tool", format!("compute-sanitizer {}", tools.join(", "))));
            match app {
                Some(app) => lines.push(("app", app.to_string())),
                None => lines.push(("input", inputs(&report.inputs))),
            }
        }
        Subject::Memory { app } => {
            lines.push((
                "gate",
                "CUDA-graph memory audit (CUPTI) + NVML sampling".into(),
            ));
            lines.push(("app", app.to_string()));
        }
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

/// The inputs as a reader names them: `-` is standard input.
fn inputs(inputs: &[String]) -> String {
    let named: Vec<&str> = inputs
        .iter()
        .map(|i| {
            if i == "-" {
                "standard input"
            } else {
                i.as_str()
            }
        })
        .collect();
    named.join(", ")
}

pub(super) fn structure_check(s: &StructureResult) -> Check<'_> {
    Check {
        kernel: Some(&s.kernel),
        name: Cow::Borrowed(s.check.as_str()),
        status: s.status,
        verdict: match s.check {
            StructureCheck::Varies | StructureCheck::PicksMoved => "not gated",
            _ => s.status.as_str(),
        },
        message: Cow::Borrowed(&s.message),
        why: None,
        kind: Kind::Measured(Cells {
            rule: None,
            structure: Some(s),
            rule_index: None,
            line: None,
        }),
    }
}

/// Where a per-kernel rule whose `kernels` filter matched no kernel is listed.
pub(super) const NO_KERNEL_MATCHED: &str = "(no kernel matched the rule's `kernels` filter)";

pub(super) fn rule_check(index: usize, r: &RuleResult) -> Check<'_> {
    // A per-kernel rule without a kernel is one whose `kernels` filter
    // matched none: not the whole run's row.
    let kernel = match (r.kernel.as_deref(), r.per) {
        (None, Per::Kernel) => Some(NO_KERNEL_MATCHED),
        (kernel, _) => kernel,
    };
    Check {
        kernel,
        name: Cow::Borrowed(&r.rule),
        status: r.status,
        verdict: r.verdict(),
        // A passing row left ungated says why, as a downgraded failure's
        // message does (`not gated (…): …`), in every format.
        message: match &r.downgrade {
            Some(d) if !d.failed && r.status != crate::status::Status::Skipped => {
                Cow::Owned(format!("not gated ({}): {}", d.why(), r.message))
            }
            _ => Cow::Borrowed(&r.message),
        },
        why: r.why.as_deref().map(String::as_str),
        kind: Kind::Measured(Cells {
            rule: Some(r),
            structure: None,
            rule_index: Some(index),
            line: Some(r.line),
        }),
    }
}

pub(super) fn finding(f: &FindingResult) -> Check<'_> {
    let speedup = f
        .finding
        .estimated_speedup_pct
        .map(|s| format!("est. speedup {s:.0}%"));
    let detail = match &speedup {
        Some(s) => format!("({}, {s})", f.finding.rule_type),
        None => format!("({})", f.finding.rule_type),
    };
    let rule = f.finding.rule.as_str();
    Check {
        kernel: Some(&f.kernel),
        name: Cow::Owned(format!("ncu finding {rule}")),
        status: f.status,
        verdict: f.status.as_str(),
        message: Cow::Owned(format!(
            "new ncu finding {rule} {detail}: {}",
            f.finding.description
        )),
        why: None,
        kind: Kind::Finding(Box::new(Finding {
            rule,
            speedup,
            detail,
            description: &f.finding.description,
            summary: first_sentence(&f.finding.description),
        })),
    }
}

/// A compute-sanitizer finding: named by its record kind and where it happened.
pub(super) fn sanitizer(f: &SanitizerFinding) -> Check<'_> {
    let place = f
        .api
        .as_deref()
        .or(f.kernel.as_deref())
        .unwrap_or(&f.summary);
    Check {
        kernel: None,
        name: Cow::Owned(format!("{} {place}", f.kind)),
        status: f.status,
        verdict: f.status.as_str(),
        message: Cow::Borrowed(&f.message),
        why: None,
        kind: Kind::Listed(Listed {
            label: f.tool.as_str(),
            thread: f.example_thread.as_deref(),
            stack: &f.example_stack[..f.example_stack.len().min(STACK_FRAMES)],
        }),
    }
}

/// A graph-memory check.
pub(super) fn memory(m: &MemoryResult) -> Check<'_> {
    Check {
        kernel: None,
        name: Cow::Borrowed(&m.check),
        status: m.status,
        verdict: m.status.as_str(),
        message: Cow::Borrowed(&m.message),
        why: None,
        kind: Kind::Listed(Listed {
            label: &m.check,
            thread: None,
            stack: &[],
        }),
    }
}
