//! Each kernel's code against the baseline's: `code unchanged` or `code
//! changed (…)` per kernel, in the *why* of its failing rules; what it
//! found tells the environmental pass ([`super::environmental`]) which
//! kernels' timing-only failures unchanged code leaves unexplained.

use super::environmental::Sameness;
use crate::baseline::Baseline;
use crate::code::{self, CodeMap};
use crate::status::Status;
use crate::verdict::{CodeResult, Report};
use std::collections::BTreeMap;

/// Compares the code of every kernel both sides know, and says it; what is
/// the same of each kernel on both sides, for the environmental pass.
pub(super) fn check(
    report: &mut Report,
    baseline: &Baseline,
    current: &CodeMap,
) -> BTreeMap<String, Sameness> {
    let mut same = BTreeMap::new();
    for (kernel, now) in current {
        let Some(before) = baseline.kernels.get(kernel).and_then(|e| e.code.as_ref()) else {
            continue;
        };
        let change = code::change(before, now);
        let unchanged = change == code::Change::Unchanged;
        let launch =
            before.launch.is_empty() || now.launch.is_empty() || before.launch == now.launch;
        same.insert(
            kernel.clone(),
            Sameness {
                code: unchanged,
                launch,
            },
        );
        report.code.push(CodeResult {
            kernel: kernel.clone(),
            changed: !unchanged,
            summary: change.summary(),
            baseline_fingerprint: before.fingerprint.clone(),
            current_fingerprint: now.fingerprint.clone(),
        });
    }
    if report.code.is_empty() {
        return same;
    }
    for rule in report
        .rules
        .iter_mut()
        .filter(|r| matches!(r.status, Status::Fail | Status::Warn))
    {
        let Some(c) = rule
            .kernel
            .as_ref()
            .and_then(|k| report.code.iter().find(|c| *c.kernel == **k))
        else {
            continue;
        };
        rule.why = Some(match rule.why.take() {
            Some(why) => format!("{}; {why}", c.summary).into(),
            None => c.summary.clone().into(),
        });
    }
    report.note(note(&report.code));
    same
}

/// `code: 2 kernels unchanged; scale: code changed (…)`.
fn note(results: &[CodeResult]) -> String {
    let unchanged = results.iter().filter(|c| !c.changed).count();
    let mut parts = vec![format!(
        "code: {} unchanged",
        crate::format::count(unchanged, "kernel", "kernels")
    )];
    parts.extend(
        results
            .iter()
            .filter(|c| c.changed)
            .map(|c| format!("{}: {}", c.kernel, c.summary)),
    );
    parts.join("; ")
}
