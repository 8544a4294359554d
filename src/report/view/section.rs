//! A section of the view and its rows: what every gate's results become,
//! and all a format needs to show them — the title, the worst status, and
//! each row's words, its table cells (a rule, a structural check), its
//! finding (new ncu findings) or where it happened (a list row).

use crate::format::{format_mu_sigma, format_value};
use crate::rules::Worse;
use crate::status::Status;
use crate::verdict::{RuleResult, StructureResult};
use std::borrow::Cow;

/// How a section's rows are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SectionKind {
    /// One kernel's measured checks (a table) and its new ncu findings.
    Kernel,
    /// The whole run's measured checks.
    Total,
    /// A gate's findings or checks, one line each (compute-sanitizer, graph memory).
    List,
}

/// One section of a report: a titled group of checks with its worst status.
#[derive(Debug, Clone)]
pub(crate) struct Section<'r> {
    /// The kernel key, `(total)`, `compute-sanitizer memcheck`, `GPU memory`.
    pub(crate) title: String,
    pub(crate) kind: SectionKind,
    /// The worst status of its checks.
    pub(crate) status: Status,
    /// Its rows, in the order to show them.
    pub(crate) checks: Vec<Check<'r>>,
}

impl<'r> Section<'r> {
    /// A section of `checks`, its status the worst of theirs.
    pub(crate) fn new(title: String, kind: SectionKind, mut checks: Vec<Check<'r>>) -> Section<'r> {
        // Held for every kernel of the report: no room to spare.
        checks.shrink_to_fit();
        let status = checks
            .iter()
            .map(|c| c.status)
            .max()
            .unwrap_or(Status::Pass);
        Section {
            title,
            kind,
            status,
            checks,
        }
    }

    /// A section of kernel checks (not the whole run, not another gate's list).
    pub(crate) fn is_kernel(&self) -> bool {
        self.kind == SectionKind::Kernel
    }

    /// Its measured checks (rules and structural checks), in order.
    pub(crate) fn measured(&self) -> impl Iterator<Item = (&Check<'r>, &Cells<'r>)> {
        self.checks.iter().filter_map(|c| c.cells().map(|m| (c, m)))
    }

    /// Its new ncu findings, in order.
    pub(crate) fn findings(&self) -> impl Iterator<Item = (&Check<'r>, &Finding<'r>)> {
        self.checks
            .iter()
            .filter_map(|c| c.finding().map(|f| (c, f)))
    }
}

/// One row of a section — a rule, a structural check, a new ncu finding, a
/// compute-sanitizer finding, a graph-memory check — with its words written.
#[derive(Debug, Clone)]
pub(crate) struct Check<'r> {
    /// The kernel key of a metric row; `None` for a whole-run rule and other gates' rows.
    pub(crate) kernel: Option<&'r str>,
    /// What is checked: the rule (`dram__bytes.sum (sum)`), the structural
    /// check (`launch count`), `ncu finding <rule>`, the sanitizer record
    /// (`Precise oob_write(int *, int)`), the memory check.
    pub(crate) name: Cow<'r, str>,
    pub(crate) status: Status,
    /// The verdict word: the status, or `higher`/`lower` for a `changed` rule,
    /// `not gated` for a rule a shared GPU left ungated.
    pub(crate) verdict: &'static str,
    /// One line saying what happened.
    pub(crate) message: Cow<'r, str>,
    /// Why it matters: a rule's reason, for failures.
    pub(crate) why: Option<&'r str>,
    /// What kind of row, with what only that kind has.
    pub(crate) kind: Kind<'r>,
}

/// What kind of row a [`Check`] is.
#[derive(Debug, Clone)]
pub(crate) enum Kind<'r> {
    /// A rule or a structural check: a table row.
    Measured(Cells<'r>),
    /// A new ncu finding (boxed: the rarer and larger kind of row).
    Finding(Box<Finding<'r>>),
    /// A row of a list section (compute-sanitizer, graph memory).
    Listed(Listed<'r>),
}

impl<'r> Check<'r> {
    /// Failed, warned or could not be evaluated: the check has a "why" line.
    pub(crate) fn needs_attention(&self) -> bool {
        self.status.needs_attention()
    }

    /// A measured row's cells.
    pub(crate) fn cells(&self) -> Option<&Cells<'r>> {
        match &self.kind {
            Kind::Measured(cells) => Some(cells),
            _ => None,
        }
    }

    /// A new ncu finding's words.
    pub(crate) fn finding(&self) -> Option<&Finding<'r>> {
        match &self.kind {
            Kind::Finding(finding) => Some(finding.as_ref()),
            _ => None,
        }
    }

    /// A list row's label and where it happened.
    pub(crate) fn listed(&self) -> Option<&Listed<'r>> {
        match &self.kind {
            Kind::Listed(listed) => Some(listed),
            _ => None,
        }
    }

    /// The rule behind a rule row (for charts).
    pub(crate) fn rule(&self) -> Option<&'r RuleResult> {
        self.cells().and_then(|c| c.rule)
    }
}

/// A rule's or a structural check's table cells, each written when a
/// format shows it (a report of 100,000 kernels has 700,000 rows, few of
/// which the terminal shows).
#[derive(Debug, Clone)]
pub(crate) struct Cells<'r> {
    /// The rule behind a rule row (for charts); `None` for a structural check.
    pub(crate) rule: Option<&'r RuleResult>,
    /// The structural check behind a structural row.
    pub(crate) structure: Option<&'r StructureResult>,
    /// Index of the rule in the report's rules (names its chart file).
    pub(crate) rule_index: Option<usize>,
    /// Line of the `[[rule]]` in the thresholds file.
    pub(crate) line: Option<usize>,
}

impl Cells<'_> {
    /// The baseline, `mean ±stddev` (`—` when there is none).
    pub(crate) fn baseline(&self) -> String {
        self.written(rule_baseline, structure_baseline)
    }

    /// The baseline without its standard deviation, for narrow tables.
    pub(crate) fn baseline_mean(&self) -> String {
        self.written(rule_baseline_mean, structure_baseline)
    }

    pub(crate) fn current(&self) -> String {
        self.written(rule_current, structure_current)
    }

    /// `+20.0%`, `±0%`, `new` (from 0), or empty for a structural check.
    pub(crate) fn change(&self) -> String {
        self.written(rule_change, |_| String::new())
    }

    /// What the check allows on the worse side: `+16.9%`, `limit 60M inst`, `exact`.
    pub(crate) fn allowance(&self) -> String {
        self.written(rule_allowance, |_| "exact".into())
    }

    /// The allowed bound for a chart's caption: ` — allowed up to 57.3M inst, limit 60M inst`.
    pub(crate) fn allowed(&self) -> String {
        self.written(allowed, |_| String::new())
    }

    /// A cell of the rule's, or of the structural check's.
    fn written(
        &self,
        rule: fn(&RuleResult) -> String,
        structure: fn(&StructureResult) -> String,
    ) -> String {
        match (self.rule, self.structure) {
            (Some(r), _) => rule(r),
            (None, Some(s)) => structure(s),
            (None, None) => String::new(),
        }
    }
}

/// Launches per run as the other numbers read: a rolling baseline's mean
/// over its runs is no whole number (`335.33 launches`).
fn launches(n: Option<f64>) -> String {
    n.map_or("—".into(), |n| {
        crate::format::count(crate::format::format_value(n, ""), "launch", "launches")
    })
}

/// A structural check's baseline cell: the launches per run.
fn structure_baseline(s: &StructureResult) -> String {
    launches(s.baseline_launches)
}

/// A structural check's current cell: each run's launches, `3/3 launches`.
fn structure_current(s: &StructureResult) -> String {
    let runs: Vec<String> = s.current_launches.iter().map(u64::to_string).collect();
    match runs.iter().all(|r| r == "1") {
        true => format!("{} launch", runs.join("/")),
        false => format!("{} launches", runs.join("/")),
    }
}

/// A rule's baseline cell, `mean ±stddev`, or `—`.
fn rule_baseline(r: &RuleResult) -> String {
    r.baseline
        .map_or_else(dash, |b| format_mu_sigma(&b, &r.unit))
}

/// A rule's baseline mean, or `—`.
fn rule_baseline_mean(r: &RuleResult) -> String {
    r.baseline
        .map_or_else(dash, |b| format_value(b.mean, &r.unit))
}

/// A rule's current value, or `—`.
fn rule_current(r: &RuleResult) -> String {
    r.current.map_or_else(dash, |x| format_value(x, &r.unit))
}

fn dash() -> String {
    "—".to_string()
}

/// A rule's change: `+20.0%`, `±0%`, `new` (from 0), or empty.
fn rule_change(r: &RuleResult) -> String {
    match (r.change_pct, r.current, r.baseline) {
        (Some(p), _, _) => format!("{p:+.1}%"),
        (None, Some(x), Some(b)) if x == b.mean => "±0%".into(),
        (None, Some(_), Some(_)) => "new".into(),
        _ => String::new(),
    }
}

/// What a rule allows on the worse side: `+16.9%`, `limit 60M inst`, or empty.
fn rule_allowance(r: &RuleResult) -> String {
    let sign = if r.worse == Worse::Higher { "+" } else { "-" };
    match (r.allowance, r.baseline, r.limit) {
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

/// A new ncu finding as every reporter words it.
#[derive(Debug, Clone)]
pub(crate) struct Finding<'r> {
    /// The ncu rule (`UncoalescedGlobalAccess`).
    pub(crate) rule: &'r str,
    /// The estimated speedup, `est. speedup 77%`, when ncu gives one.
    pub(crate) speedup: Option<String>,
    /// The rule type and speedup in parentheses: `(OPT, est. speedup 77%)`.
    pub(crate) detail: String,
    pub(crate) description: &'r str,
    /// The description's first sentence (they run to a paragraph).
    pub(crate) summary: &'r str,
}

/// A row of a list section: its label and, for a sanitizer finding, where it happened.
#[derive(Debug, Clone)]
pub(crate) struct Listed<'r> {
    /// What a line starts with: the sanitizer tool, the memory check.
    pub(crate) label: &'r str,
    /// The first record's thread and block, for device errors.
    pub(crate) thread: Option<&'r str>,
    /// The first record's host stack, innermost first, at most [`STACK_FRAMES`] frames.
    pub(crate) stack: &'r [String],
}

/// Host stack frames a report shows per sanitizer finding.
pub(crate) const STACK_FRAMES: usize = 6;

#[cfg(test)]
mod tests {
    #[test]
    fn a_rolling_launch_mean_reads_as_the_other_numbers() {
        assert_eq!(super::launches(Some(1006.0 / 3.0)), "335.33 launches");
        assert_eq!(super::launches(Some(1.0)), "1 launch");
        assert_eq!(super::launches(Some(12.0)), "12 launches");
        assert_eq!(super::launches(None), "—");
    }
}
