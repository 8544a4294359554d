//! Creep against an anchor (`--anchor COMMIT`, `[history] anchor`): a rule
//! with `max_drift = "25%"` also compares the current value with the anchor
//! run's (a release, say) and fails when the change since then passes
//! `max_drift`, even when this step was within `max_change` — five steps of
//! +9% pass one by one and add up to +54%.

use super::record::LAUNCHES;
use super::store::{Pick, Store};
use crate::error::{HistoryError, Result};
use crate::rules::{Rule, Thresholds, Worse};
use crate::status::Status;
use crate::verdict::{Report, RuleResult};

/// The anchor a check measures creep from.
#[derive(Debug, Clone, Copy)]
pub struct Anchor<'a> {
    /// The store as messages show it.
    pub shown: &'a str,
    pub workload: &'a str,
    pub commit: &'a str,
}

/// Judges every rule with `max_drift` against the anchor's run of this
/// workload on `gpu`; a rule that drifted too far fails (or warns, as its
/// severity says). A missing anchor run is an error: creep is never
/// unchecked silently.
pub fn check(
    store: &mut dyn Store,
    anchor: Anchor<'_>,
    gpu: &str,
    report: &mut Report,
    thresholds: &Thresholds,
) -> Result<()> {
    if thresholds.rules.iter().all(|r| r.max_drift.is_none()) {
        return Ok(());
    }
    let runs = store.pick(anchor.workload, gpu, Pick::Commit(anchor.commit))?;
    let Some(run) = runs.last() else {
        return Err(HistoryError::NoAnchorRun {
            store: anchor.shown.to_string(),
            workload: anchor.workload.to_string(),
            gpu: gpu.to_string(),
            anchor: anchor.commit.to_string(),
        }
        .into());
    };
    let steps = store.accepted_after(anchor.workload, gpu, run.time)? + 1;
    let name = super::show::short(anchor.commit);
    for result in &mut report.rules {
        let Some(rule) = thresholds.rules.iter().find(|r| r.line == result.line) else {
            continue;
        };
        let (Some(max_drift), Some(x)) = (rule.max_drift, result.current) else {
            continue;
        };
        let kernel = result.kernel.clone().unwrap_or_default();
        let aggregate = rule.aggregate.to_string();
        let at_anchor = run
            .values
            .iter()
            .find(|v| {
                v.kernel == kernel
                    && v.metric == rule.metric
                    && v.aggregate == aggregate
                    && v.rule != LAUNCHES
            })
            .and_then(|v| v.mean);
        if let Some(a) = at_anchor.filter(|a| *a != 0.0 && a.is_finite()) {
            judge(rule, result, Drift { a, x, max_drift }, &name, steps);
        }
    }
    report.notes.push(format!(
        "creep measured from anchor {name} ({} run(s) since, accepted)",
        steps - 1
    ));
    report.finish();
    Ok(())
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
        Some(w) => format!("{why}; {w}"),
        None => why,
    });
}
