//! Creep against an anchor (`--anchor COMMIT`, `[history] anchor`): a rule
//! with `max_drift = "25%"` also compares the current value with the anchor
//! run's (a release, say) and fails when the change since then passes
//! `max_drift`, even when this step was within `max_change` — five steps of
//! +9% pass one by one and add up to +54%.

use super::store::{Pick, Store};
use crate::baseline::Baseline;
use crate::error::{HistoryError, Result};
use crate::model::{Fingerprint, KernelKeyMode};
use crate::rules::{Rule, Thresholds, Worse};
use crate::status::Status;
use crate::verdict::{Report, RuleResult};

/// The anchor a check measures creep from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Anchor<'a> {
    /// The store as messages show it.
    pub(crate) shown: &'a str,
    pub(crate) workload: &'a str,
    pub(crate) commit: &'a str,
}

/// The anchor's run of this workload on the GPU `fingerprint` names, as a
/// baseline (so the check's own comparison, kernel renames included, gives
/// the value at the anchor of every rule), with the number of accepted runs
/// made since. A missing anchor run is an error: creep is never left
/// unchecked silently.
pub(crate) fn anchor_baseline(
    store: &mut dyn Store,
    anchor: Anchor<'_>,
    fingerprint: &Fingerprint,
    kernel_key: KernelKeyMode,
    thresholds: &Thresholds,
) -> Result<(Baseline, u64)> {
    let gpu = fingerprint.to_string();
    let runs = store.pick(anchor.workload, &gpu, Pick::Commit(anchor.commit))?;
    let Some(run) = runs.last() else {
        return Err(HistoryError::NoAnchorRun {
            store: anchor.shown.to_string(),
            workload: anchor.workload.to_string(),
            gpu,
            anchor: anchor.commit.to_string(),
        }
        .into());
    };
    super::rolling::intact(anchor.shown, std::slice::from_ref(run))?;
    let since = store.accepted_after(anchor.workload, &gpu, run)?;
    let baseline = super::rolling::baseline_of(
        std::slice::from_ref(run),
        kernel_key,
        fingerprint,
        thresholds,
    );
    Ok((baseline, since))
}

/// Judges every rule with `max_drift` of `report` against the same rule of
/// `at_anchor` (the current runs compared with the anchor's run): a rule that
/// drifted too far fails, or warns, as its severity says. `steps`: the
/// commits since the anchor, this one included.
pub(crate) fn apply(
    report: &mut Report,
    at_anchor: &Report,
    thresholds: &Thresholds,
    anchor: &str,
    steps: u64,
) {
    let name = super::show::short(anchor);
    for result in &mut report.rules {
        let Some(rule) = thresholds.rules.iter().find(|r| r.line == result.line) else {
            continue;
        };
        let (Some(max_drift), Some(x)) = (rule.max_drift, result.current) else {
            continue;
        };
        let a = at_anchor
            .rules
            .iter()
            .find(|r| r.line == result.line && r.kernel == result.kernel)
            .and_then(|r| r.baseline)
            .map(|s| s.mean);
        if let Some(a) = a.filter(|a| *a != 0.0 && a.is_finite()) {
            judge(rule, result, Drift { a, x, max_drift }, &name, steps);
        }
    }
    report.note(format!(
        "creep measured from anchor {name} ({} accepted run(s) since)",
        steps.saturating_sub(1)
    ));
}

/// The anchor's value, the current one, and the drift allowed (a fraction).
#[derive(Debug, Clone, Copy)]
struct Drift {
    a: f64,
    x: f64,
    max_drift: f64,
}

/// Fails `result` when it drifted past `max_drift` in the rule's worse direction.
fn judge(rule: &Rule, result: &mut RuleResult, d: Drift, anchor: &str, steps: u64) {
    let change = (d.x - d.a) / d.a.abs();
    let worse = match rule.worse {
        Worse::Higher => change,
        Worse::Lower => -change,
    };
    if worse <= d.max_drift {
        return;
    }
    let step_passed = !matches!(
        result.status,
        Status::Fail | Status::Warn | Status::Error | Status::Skipped
    );
    let sign = if rule.worse == Worse::Higher {
        '+'
    } else {
        '-'
    };
    let each = match rule.max_change {
        Some(c) if step_passed => format!(" (each within {sign}{:.0}%)", c * 100.0),
        _ => String::new(),
    };
    let why = format!(
        "drift since {anchor}: {:+.0}% over {steps} commit{}{each}, allowed {sign}{:.0}%",
        change * 100.0,
        if steps == 1 { "" } else { "s" },
        d.max_drift * 100.0
    );
    if step_passed {
        result.status = Status::failed(rule.severity);
    }
    result.message = format!("{}; {why}", result.message);
    result.why = Some(match &rule.why {
        Some(w) => format!("{why}; {w}").into(),
        None => why.into(),
    });
}
