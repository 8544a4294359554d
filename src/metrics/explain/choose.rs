//! Which kernels the explain stage names source lines for (the worst failing
//! first), which launch of each it profiles, and how the lines found go into
//! the *why* of their failing rules.

use crate::baseline::Baseline;
use crate::explain::{self, ExplainMode, SourceProfile};
use crate::model::KernelKeyMode;
use crate::status::Status;
use crate::verdict::Report;

/// The kernels to explain, worst first: those with failing rules, by their
/// largest relative change (`always`: then every other kernel).
pub(crate) fn chosen(report: &Report, mode: ExplainMode, max: usize) -> Vec<String> {
    let mut failing: Vec<(String, f64)> = Vec::new();
    for r in report.rules.iter().filter(|r| r.status == Status::Fail) {
        let Some(k) = r.kernel.as_deref() else {
            continue;
        };
        let change = magnitude(r);
        match failing.iter_mut().find(|(name, _)| name == k) {
            Some((_, worst)) => *worst = worst.max(change),
            None => failing.push((k.to_string(), change)),
        }
    }
    failing.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut out: Vec<String> = failing.into_iter().map(|(k, _)| k).collect();
    match mode {
        ExplainMode::Never => return Vec::new(),
        ExplainMode::OnFail => {}
        ExplainMode::Always => {
            let others: Vec<String> = report
                .rules
                .iter()
                .filter_map(|r| r.kernel.as_deref().map(str::to_string))
                .filter(|k| !out.contains(k))
                .collect();
            for k in others {
                if !out.contains(&k) {
                    out.push(k);
                }
            }
        }
    }
    out.truncate(max);
    out
}

/// Explains `kernels` with the current profiles against the baseline's;
/// returns the notes for what could not be explained.
pub(crate) fn attach(
    report: &mut Report,
    baseline: &Baseline,
    current: &[SourceProfile],
    kernels: &[String],
    budget: super::Budget,
) -> Vec<String> {
    let mut notes = Vec::new();
    for (i, kernel) in kernels.iter().enumerate() {
        if budget.spent() {
            let left = crate::format::count(kernels.len() - i, "kernel", "kernels");
            notes.push(budget.note(&format!("{left} not explained")));
            break;
        }
        let Some(now) = current.iter().find(|p| &p.kernel == kernel) else {
            notes.push(format!(
                "explain: no source profile of {kernel} in this run"
            ));
            continue;
        };
        let Some(before) = baseline_profile(baseline, kernel) else {
            notes.push(format!("explain: the baseline has no source profile of {kernel} (record one: baseline record --source-page)"));
            continue;
        };
        // The worst failing rule ranks the lines and carries them.
        let worst = report
            .rules
            .iter()
            .enumerate()
            .filter(|(_, r)| {
                r.kernel.as_deref() == Some(kernel.as_str()) && r.status == Status::Fail
            })
            .max_by(|(_, a), (_, b)| magnitude(a).total_cmp(&magnitude(b)))
            .map(|(i, _)| i);
        let unit = worst.map_or("inst", |i| &*report.rules[i].unit);
        let explained = explain::compare(before, now, explain::ranking_counter(unit));
        let lines = explained.lines();
        if let Some(i) = worst {
            // Unchanged lines say the launch itself is as before: the cause
            // is elsewhere (more launches, another kernel's work).
            let text = match (lines.is_empty(), now.launch) {
                (true, Some(l)) => format!("source lines unchanged ({} compared)", l.label()),
                (true, None) => "source lines unchanged (one launch compared)".to_string(),
                (false, Some(l)) => format!("lines ({}): {}", l.label(), lines.join(" · ")),
                (false, None) => format!("lines: {}", lines.join(" · ")),
            };
            let rule = &mut report.rules[i];
            rule.why = Some(match rule.why.take() {
                Some(why) => format!("{why}; {text}").into(),
                None => text.into(),
            });
        }
        report.explain.push(explained);
    }
    notes
}

/// A launch of one kernel for the explain run to profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pick {
    /// Its place among the kernel's launches in a run, from 0.
    pub(crate) index: u64,
    /// The kernel's launches per run (the first run's).
    pub(crate) of: u64,
    /// Its place among the run's launches (the export's row).
    pub(crate) position: u64,
    /// Its place among the run's launches of the same function name.
    pub(crate) ordinal: u64,
}

/// The launch of `kernel` whose value of its worst failing rule's metric
/// lies farthest, in the direction the rule failed, from the baseline's
/// mean per launch, averaged over `runs` launch by launch (the kernel's
/// first [`crate::model::KEPT_LAUNCHES`] launches); its first launch when
/// the runs kept no launches one by one or the rule has no baseline.
pub(crate) fn pick_launch(
    report: &Report,
    baseline: &Baseline,
    runs: &[crate::model::Run],
    kernel: &str,
) -> Pick {
    let Some((of, first)) = runs
        .first()
        .and_then(|run| run.kernels.get(kernel))
        .map(|k| (k.launches, &k.first_launches[..]))
    else {
        return Pick {
            index: 0,
            of: 0,
            position: 0,
            ordinal: 0,
        };
    };
    let pick = |i: usize| Pick {
        index: i as u64,
        of,
        position: first.get(i).map_or(0, |l| l.position),
        ordinal: first.get(i).map_or(0, |l| l.ordinal),
    };
    let worst = report
        .rules
        .iter()
        .filter(|r| r.kernel.as_deref() == Some(kernel) && r.status == Status::Fail)
        .max_by(|a, b| magnitude(a).total_cmp(&magnitude(b)));
    let Some(rule) = worst else { return pick(0) };
    let Some(reference) = baseline
        .kernels
        .get(kernel)
        .and_then(|k| k.metrics.get(&rule.metric))
        .map(|m| m.mean.mean)
    else {
        return pick(0);
    };
    let up = match (rule.current, &rule.baseline) {
        (Some(now), Some(before)) => now >= before.mean,
        _ => true,
    };
    let mut best: Option<(usize, f64)> = None;
    for i in 0..first.len() {
        let values: Vec<f64> = runs
            .iter()
            .filter_map(|run| {
                let m = run.metric_index(&rule.metric)?;
                let launch = run.kernels.get(kernel)?.first_launches.get(i)?;
                launch
                    .values
                    .get(m)
                    .copied()
                    .flatten()
                    .filter(|v| v.is_finite())
            })
            .collect();
        if values.is_empty() {
            continue;
        }
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let moved = if up {
            mean - reference
        } else {
            reference - mean
        };
        if best.is_none_or(|(_, b)| moved > b) {
            best = Some((i, moved));
        }
    }
    pick(best.map_or(0, |(i, _)| i))
}

/// How far a rule's value moved: its relative change, a new value as infinite.
fn magnitude(rule: &crate::verdict::RuleResult) -> f64 {
    rule.change_pct.map_or(f64::INFINITY, f64::abs)
}

/// The baseline's profile of `kernel`: under its key, else under the one
/// kernel of the same function name (a kernel renamed since).
fn baseline_profile<'a>(baseline: &'a Baseline, kernel: &str) -> Option<&'a SourceProfile> {
    if let Some(p) = baseline.kernels.get(kernel).and_then(|e| e.source.as_ref()) {
        return Some(p);
    }
    let function = |k: &str| crate::kernel_key::kernel_key(k, KernelKeyMode::Function);
    let same: Vec<&SourceProfile> = baseline
        .kernels
        .iter()
        .filter(|(k, _)| function(k) == function(kernel))
        .filter_map(|(_, e)| e.source.as_deref())
        .collect();
    match same[..] {
        [one] => Some(one),
        _ => None,
    }
}
