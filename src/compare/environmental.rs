//! A timing failure that nothing in the code explains.
//!
//! When a kernel fails only on time (a rule in `ns` or `cycle`) while its
//! machine code is the same (same fingerprint), its instruction counts pass
//! their rules, and its launches per run and launch configurations are the
//! same, the change came from outside the code: clocks, other work on the GPU,
//! thermals. `--environmental` (`[gate] environmental`) says what such a failure becomes: `warn`
//! (default: shown, counted as a warning, not gated) or `fail` (gated as any
//! other failure). It is never silent: the rule's message says why, in front
//! (`not gated (environmental: …)`, as every downgraded failure,
//! [`crate::verdict::RuleResult::ungate`]; `gated (environmental: …)`).

use crate::status::Status;
use crate::verdict::{ENVIRONMENTAL, Reason, Report};
use std::collections::BTreeMap;

/// The verdict of a timing-only failure with unchanged code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Environmental {
    /// A warning: shown with its reason, not gated.
    #[default]
    Warn,
    /// A failure, as any other.
    Fail,
}

/// What is known of one kernel's code on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sameness {
    /// Same fingerprint on both sides.
    pub(crate) code: bool,
    /// Same launch configurations on both sides.
    pub(crate) launch: bool,
}

/// Marks the timing-only failures of kernels whose code, instruction counts,
/// launches and launch configurations are unchanged; under `warn` they
/// become warnings. Returns how many were marked.
pub(crate) fn apply(
    report: &mut Report,
    same: &BTreeMap<String, Sameness>,
    verdict: Environmental,
) -> usize {
    let environmental: Vec<String> = same
        .iter()
        .filter(|(kernel, s)| s.code && s.launch && explained_by_time_only(report, kernel))
        .map(|(kernel, _)| kernel.clone())
        .collect();
    let mut marked = 0;
    for rule in report.rules.iter_mut().filter(|r| {
        r.status == Status::Fail
            && r.measures_time()
            && r.kernel
                .as_deref()
                .is_some_and(|k| environmental.iter().any(|e| e == k))
    }) {
        match verdict {
            // The evidence is the kernel's unchanged code, in the report's `code`.
            Environmental::Warn => rule.ungate(Reason::Environmental, None),
            Environmental::Fail => {
                rule.message = format!(
                    "gated ({ENVIRONMENTAL}; --environmental fail): {}",
                    rule.message
                );
            }
        }
        marked += 1;
    }
    marked
}

/// The kernel's failures are all timing rules, its instruction rules (one at
/// least) pass, and its structure (launches per run) passes.
fn explained_by_time_only(report: &Report, kernel: &str) -> bool {
    let rules: Vec<_> = report
        .rules
        .iter()
        .filter(|r| r.kernel.as_deref() == Some(kernel))
        .collect();
    let failing = rules.iter().filter(|r| r.status == Status::Fail);
    let timing_only = failing.clone().count() > 0 && failing.clone().all(|r| r.measures_time());
    let inst: Vec<_> = rules.iter().filter(|r| &*r.unit == "inst").collect();
    let counts_same = !inst.is_empty() && inst.iter().all(|r| r.status == Status::Pass);
    let structure_same = report
        .structure
        .iter()
        .filter(|s| s.kernel == kernel)
        .all(|s| s.status == Status::Pass);
    timing_only && counts_same && structure_same
}
