//! Threshold rules applied to kernels: where a verdict is decided.
//!
//! With baseline mean μ and standard deviation σ, and x the current value (the
//! mean over the current runs): the allowance is `max_change·|μ| + noise·σ`;
//! (at least `noise_floor`); the rule regresses when x is worse than μ by more than the allowance, or
//! worse than `limit`. Better by more than the allowance is `improved`. When the recorded runs
//! themselves disagree by more than the allowance on a deterministic counter (one that the app's
//! own choices move, as an autotuned launch configuration does), x is measured from the worst and
//! the best of them instead of μ ([`Worse::spread`]).

use crate::aggregate::{self, Scope, Stats};
use crate::baseline::{Baseline, KernelEntry};
use crate::format::{format_change, format_mu_sigma, format_value};
use crate::model::Run;
use crate::rules::{KernelFilter, Per, Rule, Thresholds, Worse};
use crate::status::Status;
use crate::verdict::RuleResult;
use std::sync::Arc;

pub(super) fn check_all(
    baseline: &Baseline,
    runs: &[Run],
    thresholds: &Thresholds,
) -> Vec<RuleResult> {
    let current = aggregate::kernel_keys(runs);
    // At most one result per rule and kernel: reserved once, not doubled as
    // it grows (600,000 results of 100,000 kernels would take room for 2^20).
    let per_kernel = thresholds.rules.iter().filter(|r| r.per == Per::Kernel);
    let most = thresholds.rules.len() + per_kernel.count() * baseline.kernels.len();
    let mut out = Vec::with_capacity(most);
    // One copy of each kernel key, shared by the kernel's results.
    let mut keys: Vec<Option<Arc<str>>> = vec![None; baseline.kernels.len()];
    for rule in &thresholds.rules {
        let shared = Shared::of(rule);
        match rule.per {
            Per::Total => out.push(check(rule, &shared, None, &baseline.total, runs)),
            Per::Kernel => {
                for ((key, entry), name) in baseline.kernels.iter().zip(keys.iter_mut()) {
                    // New and missing kernels are structural results, not rule results.
                    if current.contains(key) && rule.kernels.matches(key) {
                        let name = name.get_or_insert_with(|| Arc::from(key.as_str()));
                        out.push(check(rule, &shared, Some(name), entry, runs));
                    }
                }
                // A filter that selects nothing would gate nothing, silently:
                // a typo (`scal` for `scale`) or a renamed kernel. Say so.
                if !matches!(rule.kernels, KernelFilter::All)
                    && !baseline
                        .kernels
                        .keys()
                        .chain(current.iter())
                        .any(|k| rule.kernels.matches(k))
                {
                    out.push(matches_nothing(rule, baseline, &current));
                }
            }
        }
    }
    out.shrink_to_fit();
    out
}

/// Every rule's results when the counters were locked: per kernel of the
/// baseline its filter selects, and the whole run's, each skipped and not
/// gated with why ([`crate::verdict::Reason::CountersLocked`]): listed and counted, never a pass.
pub(crate) fn locked(baseline: &Baseline, thresholds: &Thresholds) -> Vec<RuleResult> {
    let mut out = Vec::new();
    // One copy of the why, shared by every result (the JSON's `not_gated`).
    let why = Arc::new(crate::verdict::COUNTERS_LOCKED.to_string());
    for rule in &thresholds.rules {
        let shared = Shared::of(rule);
        let kernels: Vec<Option<Arc<str>>> = match rule.per {
            Per::Total => vec![None],
            Per::Kernel => baseline
                .kernels
                .keys()
                .filter(|k| rule.kernels.matches(k))
                .map(|k| Some(Arc::from(k.as_str())))
                .collect(),
        };
        for kernel in kernels {
            let entry = match kernel.as_deref() {
                Some(k) => baseline.kernels.get(k),
                None => Some(&baseline.total),
            };
            let base = entry.and_then(|e| e.metrics.get(&rule.metric));
            let mut result = RuleResult {
                status: Status::Skipped,
                message: format!("not gated: {}", crate::verdict::COUNTERS_LOCKED),
                baseline: base.map(|b| *b.stats(rule.aggregate)),
                ..unjudged(rule, &shared, kernel.as_ref())
            };
            if let Some(b) = base {
                result.unit = Arc::clone(&b.unit);
            }
            result.ungate(
                crate::verdict::Reason::CountersLocked,
                Some(Arc::clone(&why)),
            );
            out.push(result);
        }
    }
    out
}

/// The result of a rule whose `kernels` filter matches no kernel of the
/// baseline or of the current runs: an error (exit 2), or skipped for an
/// `optional` rule. Not a regression: nothing was measured.
fn matches_nothing(
    rule: &Rule,
    baseline: &Baseline,
    current: &std::collections::BTreeSet<String>,
) -> RuleResult {
    let mut keys: Vec<&str> = baseline
        .kernels
        .keys()
        .chain(current.iter())
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let shown: Vec<String> = keys.iter().take(5).map(|k| format!("`{k}`")).collect();
    let more = if keys.len() > 5 {
        format!(" and {} more", keys.len() - 5)
    } else {
        String::new()
    };
    let filter = rule.kernels_text.as_deref().unwrap_or_default();
    let message = format!(
        "{}\"{filter}\"` matches no kernel, so this rule gates nothing; the kernel keys ({} keys) are {}{more}",
        super::NO_KERNEL_MATCHES,
        baseline.kernel_key,
        shown.join(", ")
    );
    RuleResult {
        status: if rule.optional {
            Status::Skipped
        } else {
            Status::Error
        },
        message: if rule.optional {
            format!("{message} (optional rule, skipped)")
        } else {
            format!("{message}: fix the filter (an exact key, or `regex:…`)")
        },
        ..unjudged(rule, &Shared::of(rule), None)
    }
}

/// What every result of one rule says alike, one copy shared by all of them.
struct Shared {
    label: Arc<str>,
    metric: Arc<str>,
    why: Option<Arc<String>>,
}

impl Shared {
    fn of(rule: &Rule) -> Shared {
        Shared {
            label: rule.label().into(),
            metric: rule.metric.as_str().into(),
            why: rule.why.clone().map(Arc::new),
        }
    }
}

/// The result of `rule` on `kernel` (`None`: the whole run) before anything is measured.
fn unjudged(rule: &Rule, shared: &Shared, kernel: Option<&Arc<str>>) -> RuleResult {
    RuleResult {
        kernel: kernel.cloned(),
        rule: Arc::clone(&shared.label),
        metric: Arc::clone(&shared.metric),
        per: rule.per,
        aggregate: rule.aggregate,
        worse: rule.worse,
        severity: rule.severity,
        line: rule.line,
        unit: Arc::from(""),
        baseline: None,
        current: None,
        current_runs: Box::default(),
        change_pct: None,
        allowance: None,
        limit: rule.limit,
        status: Status::Pass,
        message: String::new(),
        why: None,
        downgrade: None,
    }
}

/// The result of `rule` on `kernel` (`None`: the whole run): measured, then judged.
fn check(
    rule: &Rule,
    shared: &Shared,
    kernel: Option<&Arc<str>>,
    entry: &KernelEntry,
    runs: &[Run],
) -> RuleResult {
    let mut result = unjudged(rule, shared, kernel);
    let mut result = match measure(rule, entry, runs, &mut result) {
        Ok((x, stats)) => judge(rule, shared, result, x, &stats),
        Err(message) => unavailable(rule, result, message),
    };
    // A formatted message has room to grow it will not use; held 600,000
    // times, that room adds up.
    result.message.shrink_to_fit();
    result
}

/// A rule that could not be measured: an error, or skipped for an `optional` rule.
fn unavailable(rule: &Rule, mut result: RuleResult, message: String) -> RuleResult {
    result.status = if rule.optional {
        Status::Skipped
    } else {
        Status::Error
    };
    result.message = if rule.optional {
        format!("{message} (optional rule, skipped)")
    } else {
        message
    };
    result
}

/// The baseline's statistics and the current value (the mean over the runs),
/// recorded in `result` with the unit and the values per run; or why the
/// rule cannot be measured.
fn measure(
    rule: &Rule,
    entry: &KernelEntry,
    runs: &[Run],
    result: &mut RuleResult,
) -> Result<(f64, Stats), String> {
    let scope = result.kernel.as_deref().map_or(Scope::Total, Scope::Kernel);
    let Some(base) = entry.metrics.get(&rule.metric) else {
        return Err(format!(
            "`{}` is not in the baseline: re-record it with these thresholds",
            rule.metric
        ));
    };
    // The baseline's unit, one copy for all its kernels.
    result.unit = Arc::clone(&base.unit);
    let stats: Stats = *base.stats(rule.aggregate);
    result.baseline = Some(stats);

    let samples = aggregate::samples(runs, scope, &rule.metric, rule.aggregate);
    if let Some(&i) = samples.absent_in.first() {
        return Err(format!(
            "`{}` is not in {}: add it to ncu --metrics",
            rule.metric,
            runs[i].source.display()
        ));
    }
    if let Some(&i) = samples.missing_in.first() {
        return Err(format!(
            "`{}` is n/a or empty for some launches in {}",
            rule.metric,
            runs[i].source.display()
        ));
    }
    for run in runs {
        if let Some(unit) = run
            .metric_index(&rule.metric)
            .and_then(|m| run.metrics[m].unit.as_deref())
            && unit != &*base.unit
        {
            return Err(format!(
                "`{}` is in {unit} in {}, but in {} in the baseline",
                rule.metric,
                run.source.display(),
                base.unit
            ));
        }
    }
    let Some(x) = Stats::of(&samples.values).map(|s| s.mean) else {
        return Err("no current value".into());
    };
    result.current = Some(x);
    result.current_runs = samples.values.into_boxed_slice();
    Ok((x, stats))
}

/// The verdict on the current value `x` against the baseline's `stats`: the
/// change, the allowance, the status and the message saying why.
fn judge(
    rule: &Rule,
    shared: &Shared,
    mut result: RuleResult,
    x: f64,
    stats: &Stats,
) -> RuleResult {
    let mu = stats.mean;
    result.change_pct = (mu != 0.0).then(|| (x - mu) / mu.abs() * 100.0);
    let allowance = allowance(rule, stats);
    result.allowance = allowance;
    // Only a count of the kernel's own work: a time or a throughput whose
    // recorded runs are far apart has an outlier, not two picks.
    let spread = if rule.environment == crate::rules::Environment::Deterministic {
        rule.worse.spread(stats, allowance)
    } else {
        None
    };
    let [worst, best] = spread.unwrap_or([mu, mu]);
    let worse_by = rule.worse.worse_by(x, worst);
    let better_by = -rule.worse.worse_by(x, best);
    let past_limit = rule.limit.is_some_and(|limit| rule.worse.past(x, limit));
    let unit = &Arc::clone(&result.unit);
    let change = format_change(mu, x);
    let mut values = format!(
        "{} vs baseline {}",
        format_value(x, unit),
        format_mu_sigma(stats, unit)
    );
    if spread.is_some() {
        values.push_str(&format!(
            "; the recorded runs ranged {}–{}, more than the allowance apart: measured from the {} of them",
            format_value(stats.min, unit),
            format_value(stats.max, unit),
            if better_by > 0.0 { "best" } else { "worst" }
        ));
    }
    if past_limit {
        let limit = rule.limit.unwrap_or_default();
        let side = if rule.worse == Worse::Higher {
            "above"
        } else {
            "below"
        };
        result.status = Status::failed(rule.severity);
        result.message = format!(
            "{} is {side} the limit {} ({values})",
            format_value(x, unit),
            format_value(limit, unit)
        );
    } else if allowance.is_some_and(|a| worse_by > a) {
        result.status = Status::failed(rule.severity);
        result.message = format!(
            "{change} ({values}), allowed {}",
            format_allowance(rule, allowance.unwrap_or_default(), stats, unit)
        );
    } else if allowance.is_some_and(|a| better_by > a) {
        if rule.better.is_some() {
            result.status = Status::Improved;
            result.message = format!("improved {change} ({values})");
        } else {
            // The rule gates one direction only; the other is not "better"
            // unless it says so (a throughput % can rise as a kernel slows).
            result.status = Status::Changed;
            let word = if x > mu { "higher" } else { "lower" };
            result.message = format!(
                "{word} {change} ({values}), beyond the allowance in the direction this rule does not gate"
            );
        }
    } else {
        result.status = Status::Pass;
        result.message = format!("{change} ({values})");
    }
    if matches!(result.status, Status::Fail | Status::Warn) {
        result.why = shared.why.clone();
    }
    result
}

/// The change `rule` allows in the worse direction from the baseline's
/// `stats`, in base units: `max(max_change·|μ| + noise·σ, noise_floor)`;
/// `None` when the rule has only a `limit`.
pub(crate) fn allowance(rule: &Rule, stats: &Stats) -> Option<f64> {
    rule.max_change
        .map(|c| (c * stats.mean.abs() + rule.noise * stats.stddev).max(rule.noise_floor))
}

/// The allowance as the user wrote it: `+20%`, or `+20% +3σ = 1.2M inst`.
/// A baseline of one run has no σ: the `noise` term is then 0, and it says so.
pub(crate) fn format_allowance(rule: &Rule, allowance: f64, stats: &Stats, unit: &str) -> String {
    let mu = stats.mean;
    let sign = if rule.worse == Worse::Higher {
        '+'
    } else {
        '-'
    };
    let pct = rule.max_change.map(|c| c * 100.0).unwrap_or_default();
    if rule.noise_floor > 0.0 && allowance <= rule.noise_floor {
        format!("{sign}{} (noise floor)", format_value(allowance, unit))
    } else if rule.noise > 0.0 && stats.n < 2 && stats.stddev == 0.0 && mu != 0.0 {
        format!(
            "{sign}{:.1}% ({sign}{pct:.0}%; σ unknown: the baseline has {} run, so +{}σ adds nothing)",
            allowance / mu.abs() * 100.0,
            stats.n,
            rule.noise
        )
    } else if rule.noise > 0.0 && mu != 0.0 {
        format!(
            "{sign}{:.1}% ({sign}{pct:.0}% +{}σ)",
            allowance / mu.abs() * 100.0,
            rule.noise
        )
    } else if mu == 0.0 {
        format!("{sign}{}", format_value(allowance, unit))
    } else {
        format!("{sign}{pct:.1}%")
    }
}

#[cfg(test)]
mod tests {
    use super::{Shared, judge, unjudged};
    use crate::aggregate::Stats;
    use crate::rules::Thresholds;
    use crate::status::Status;

    /// The first built-in rule on `metric` (in `unit`) judging `x` against
    /// `stats`.
    fn judged(metric: &str, unit: &str, x: f64, stats: &Stats) -> crate::verdict::RuleResult {
        let thresholds = Thresholds::builtin().expect("the built-in rules");
        let rule = thresholds
            .rules
            .iter()
            .find(|r| r.metric == metric)
            .expect("a built-in rule on the metric");
        let shared = Shared::of(rule);
        let mut result = unjudged(rule, &shared, None);
        result.unit = unit.into();
        result.current = Some(x);
        result.baseline = Some(*stats);
        judge(rule, &shared, result, x, stats)
    }

    /// The built-in per-kernel rule on global-load sectors (+20%, no σ term).
    fn sectors(x: f64, stats: &Stats) -> crate::verdict::RuleResult {
        judged(
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "sector",
            x,
            stats,
        )
    }

    fn stats(values: &[f64]) -> Stats {
        Stats::of(values).expect("values")
    }

    #[test]
    fn recorded_runs_further_apart_than_the_allowance_measure_from_their_worst() {
        // An app that picks its launch configuration: 4.19M or 8.39M sectors.
        let recorded = stats(&[8_388_608.0, 4_194_304.0, 4_194_304.0]);
        let at_worst = sectors(8_388_608.0, &recorded);
        assert_eq!(at_worst.status, Status::Pass, "{}", at_worst.message);
        assert!(
            at_worst.message.ends_with(
                "; the recorded runs ranged 4.19M sector–8.39M sector, more than the allowance \
                 apart: measured from the worst of them)"
            ),
            "{}",
            at_worst.message
        );
        assert!(!at_worst.numbers_fail());
        // More than the allowance past the worst recorded run still fails,
        // and what the numbers say agrees.
        let past = sectors(8_388_608.0 * 1.3, &recorded);
        assert_eq!(past.status, Status::Fail, "{}", past.message);
        assert!(past.numbers_fail());
        // The best recorded pick is no improvement.
        assert_eq!(sectors(4_194_304.0, &recorded).status, Status::Pass);
    }

    #[test]
    fn a_time_whose_recorded_runs_are_far_apart_is_measured_from_their_mean() {
        // One slow outlier among the recorded runs is no pick: a time is
        // still measured from the mean (+15% +3σ), not from the outlier.
        let mut runs = vec![100_000.0; 9];
        runs.push(400_000.0);
        let recorded = stats(&runs);
        // Within +15% +3σ of the worst run (400 µs), not of the mean (130 µs).
        let judged = judged("gpu__time_duration.sum", "ns", 500_000.0, &recorded);
        assert_eq!(judged.status, Status::Fail, "{}", judged.message);
        assert!(!judged.message.contains("recorded runs ranged"));
    }

    #[test]
    fn recorded_runs_within_the_allowance_measure_from_their_mean() {
        let recorded = stats(&[1_000_000.0, 1_100_000.0, 1_050_000.0]);
        let failed = sectors(1_300_000.0, &recorded);
        assert_eq!(failed.status, Status::Fail, "{}", failed.message);
        assert!(!failed.message.contains("recorded runs ranged"));
        assert!(failed.numbers_fail());
    }
}
