//! The report view: everything a reporter shows, decided once from a
//! [`Report`] — the outcome's words, the counts, what was gated, each check's
//! cells (baseline, current, change, allowance, verdict), the checks grouped
//! by kernel with each kernel's worst status, the new ncu findings with their
//! estimated speedup, the device note. Every format (terminal, Markdown,
//! JUnit, GitHub, HTML, JSON) renders a [`View`]; none of them derives a word
//! or a number from the report on its own, so they cannot disagree.

mod cells;

use crate::memory::MemoryResult;
use crate::sanitizer::SanitizerFinding;
use crate::verdict::{Counts, Outcome, Report, RuleResult, Status};
use cells::{finding, header, rule_check, structure_check};

/// The label of the whole run where a kernel name would go.
pub const TOTAL: &str = "(total)";

/// Kernel key for display: the key, or `(total)` for the whole run.
pub fn scope_name(kernel: Option<&str>) -> &str {
    kernel.unwrap_or(TOTAL)
}

/// One report as every reporter shows it.
#[derive(Debug, Clone)]
pub struct View<'r> {
    /// The model itself, for the JSON report (which serializes it whole).
    pub report: &'r Report,
    pub outcome: Outcome,
    pub exit_code: i32,
    pub counts: Counts,
    /// What was gated, `(label, value)` in the order every reporter shows them.
    pub header: Vec<(&'static str, String)>,
    /// Errors that made the outcome `error`, each `message (hint: …)`.
    pub errors: &'r [String],
    /// Every structural check, then every rule, in the report's order.
    pub checks: Vec<Check<'r>>,
    /// The new ncu findings, in the report's order.
    pub findings: Vec<Finding<'r>>,
    /// Every kernel by name, then the whole run when a rule gates it.
    pub scopes: Vec<Scope>,
    /// The GPU fingerprint check: passed, or a mismatch that was allowed.
    pub device: Option<DeviceNote>,
    pub sanitizer: &'r [SanitizerFinding],
    pub memory: &'r [MemoryResult],
    /// Things a reader should know that are not checks.
    pub notes: &'r [String],
    /// The ncugate version that wrote the report.
    pub version: &'r str,
}

/// One structural check or rule, with its table cells already written.
#[derive(Debug, Clone)]
pub struct Check<'r> {
    /// The kernel key; `None` for a whole-run rule.
    pub kernel: Option<&'r str>,
    /// The rule (`dram__bytes.sum (sum)`) or the structural check (`launch count`).
    pub name: &'r str,
    /// The rule behind a rule row (for charts); `None` for a structural check.
    pub rule: Option<&'r RuleResult>,
    /// Index of the rule in the report's rules (names its chart file).
    pub rule_index: Option<usize>,
    pub status: Status,
    /// The verdict word: the status, or `higher`/`lower` for a `changed` rule.
    pub verdict: &'static str,
    /// The baseline, `mean ±stddev` (`—` when there is none).
    pub baseline: String,
    /// The baseline without its standard deviation, for narrow tables.
    pub baseline_mean: String,
    pub current: String,
    /// `+20.0%`, `±0%`, `new` (from 0), or empty for a structural check.
    pub change: String,
    /// What the check allows on the worse side: `+16.9%`, `limit 60M inst`, `exact`.
    pub allowance: String,
    /// The allowed bound for a chart's caption: ` — allowed up to 57.3M inst, limit 60M inst`.
    pub allowed: String,
    /// One line saying what happened.
    pub message: &'r str,
    /// The rule's reason, for failures.
    pub why: Option<&'r str>,
    /// Line of the `[[rule]]` in the thresholds file.
    pub line: Option<usize>,
}

impl Check<'_> {
    /// Failed, warned or could not be evaluated: the check has a "why" line.
    pub fn needs_attention(&self) -> bool {
        self.status.needs_attention()
    }

    /// A structural check that passed: the terminal leaves these out of its count.
    pub fn is_quiet(&self) -> bool {
        self.rule.is_none() && self.status == Status::Pass
    }
}

/// A new ncu finding as every reporter words it.
#[derive(Debug, Clone)]
pub struct Finding<'r> {
    pub kernel: &'r str,
    /// The ncu rule (`UncoalescedGlobalAccess`).
    pub rule: &'r str,
    pub status: Status,
    /// The estimated speedup, `est. speedup 77%`, when ncu gives one.
    pub speedup: Option<String>,
    /// The rule type and speedup in parentheses: `(OPT, est. speedup 77%)`.
    pub detail: String,
    pub description: &'r str,
    /// The description's first sentence (they run to a paragraph).
    pub summary: &'r str,
}

/// One kernel (or the whole run) with its checks and findings and its worst status.
#[derive(Debug, Clone)]
pub struct Scope {
    /// The kernel key; `None` for the whole run.
    pub kernel: Option<String>,
    /// The worst status of its checks and findings.
    pub status: Status,
    /// Indices into [`View::checks`], in the report's order.
    pub checks: Vec<usize>,
    /// Indices into [`View::findings`], in the report's order.
    pub findings: Vec<usize>,
}

impl Scope {
    /// The kernel key, or `(total)`.
    pub fn name(&self) -> &str {
        scope_name(self.kernel.as_deref())
    }
}

/// The device fingerprint as a check: what the JUnit report lists.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceNote {
    pub status: Status,
    pub message: String,
}

impl<'r> View<'r> {
    /// The view of `report`: every cell and word, in one pass over its results.
    pub fn new(report: &'r Report) -> View<'r> {
        let checks: Vec<Check<'r>> = report
            .structure
            .iter()
            .map(structure_check)
            .chain(
                report
                    .rules
                    .iter()
                    .enumerate()
                    .map(|(i, r)| rule_check(i, r)),
            )
            .collect();
        let findings: Vec<Finding<'r>> = report.findings.iter().map(finding).collect();
        let scopes = scopes(&checks, &findings);
        View {
            report,
            outcome: report.outcome,
            exit_code: report.exit_code,
            counts: report.counts(),
            header: header(report),
            errors: &report.errors,
            checks,
            findings,
            scopes,
            device: report.devices.as_ref().map(|d| {
                if d.mismatch_allowed {
                    DeviceNote {
                        status: Status::Warn,
                        message: format!(
                            "device mismatch allowed: baseline {}, current {}",
                            d.baseline, d.current
                        ),
                    }
                } else {
                    DeviceNote {
                        status: Status::Pass,
                        message: d.current.clone(),
                    }
                }
            }),
            sanitizer: &report.sanitizer,
            memory: &report.memory,
            notes: &report.notes,
            version: &report.ncugate_version,
        }
    }

    /// The outcome in lower case: `pass`, `regression`, `error`.
    pub fn outcome_word(&self) -> &'static str {
        self.outcome.as_str()
    }

    /// The outcome as a headline shouts it: `PASS`, `REGRESSION`, `ERROR`.
    pub fn outcome_title(&self) -> &'static str {
        self.outcome.title()
    }

    /// The counts in words (`6 failed, 1 warning, 17 passed`), joined by `sep`.
    pub fn counts_text(&self, sep: &str) -> String {
        self.counts.words().join(sep)
    }

    /// The checks of one scope.
    pub fn checks_of<'v>(&'v self, scope: &'v Scope) -> impl Iterator<Item = &'v Check<'r>> {
        scope.checks.iter().map(|&i| &self.checks[i])
    }

    /// The findings of one scope.
    pub fn findings_of<'v>(&'v self, scope: &'v Scope) -> impl Iterator<Item = &'v Finding<'r>> {
        scope.findings.iter().map(|&i| &self.findings[i])
    }

    /// The kernels (not the whole run) whose worst status needs attention, by name.
    pub fn failing_kernels(&self) -> impl Iterator<Item = &Scope> {
        self.scopes
            .iter()
            .filter(|s| s.kernel.is_some() && s.status.needs_attention())
    }

    /// The whole run's scope, when a rule gates it.
    pub fn total(&self) -> Option<&Scope> {
        self.scopes.iter().find(|s| s.kernel.is_none())
    }

    /// The whole-run rules that need attention.
    pub fn failing_total(&self) -> Vec<&Check<'r>> {
        self.total()
            .map(|t| self.checks_of(t).filter(|c| c.needs_attention()).collect())
            .unwrap_or_default()
    }

    /// New findings of kernels that passed every check, by kernel name: still worth a look.
    pub fn findings_elsewhere(&self) -> Vec<&Finding<'r>> {
        self.scopes
            .iter()
            .filter(|s| s.kernel.is_some() && !s.status.needs_attention())
            .flat_map(|s| self.findings_of(s))
            .collect()
    }

    /// The number of failed checks: GitHub's `regressions` output.
    pub fn regressions(&self) -> usize {
        self.counts.fail
    }
}

/// The outcome's emoji on a summary page.
pub fn outcome_emoji(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "✅",
        Outcome::Regression => "❌",
        Outcome::Error => "⚠️",
    }
}

/// Kernels by name with their checks and findings, then the whole run.
fn scopes(checks: &[Check<'_>], findings: &[Finding<'_>]) -> Vec<Scope> {
    let mut kernels: std::collections::BTreeMap<&str, Scope> = std::collections::BTreeMap::new();
    let mut total: Option<Scope> = None;
    let new = |kernel: Option<&str>| Scope {
        kernel: kernel.map(str::to_string),
        status: Status::Pass,
        checks: Vec::new(),
        findings: Vec::new(),
    };
    for (i, c) in checks.iter().enumerate() {
        let scope = match c.kernel {
            Some(k) => kernels.entry(k).or_insert_with(|| new(Some(k))),
            None => total.get_or_insert_with(|| new(None)),
        };
        scope.status = scope.status.max(c.status);
        scope.checks.push(i);
    }
    for (i, f) in findings.iter().enumerate() {
        let scope = kernels
            .entry(f.kernel)
            .or_insert_with(|| new(Some(f.kernel)));
        scope.status = scope.status.max(f.status);
        scope.findings.push(i);
    }
    kernels.into_values().chain(total).collect()
}
