//! Kernels that vary between runs of one workload: an autotuner's timing
//! candidates (XLA's autotuner, `torch.compile(mode="max-autotune")`,
//! `@triton.autotune`, `cudnn.benchmark`) or a JIT that picks kernels at run
//! time. `baseline record` splits the recorded runs' kernels in two: those
//! every run launched the same number of times are *stable* and gated; the
//! others are *variable*, kept in the baseline with how many runs had them
//! and their launch-count range, and never fail a check on their own. A
//! kernel no recorded run launched still fails as new.

pub(crate) mod autotuner;

use crate::model::{KernelRun, MetricAcc, Run};
use crate::note::Note;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The share of a run's work above which variable kernels are worth a
/// warning: past it, what is gated is no longer most of what ran.
pub(crate) const WARN_SHARE_PCT: f64 = 5.0;

/// A kernel the recorded runs did not launch alike, as the baseline keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct VariableKernel {
    /// How many of the recorded runs launched it (at least 1).
    pub(crate) runs: u64,
    /// The fewest and the most launches per run, over the runs that launched it.
    pub(crate) launches: [u64; 2],
}

impl VariableKernel {
    /// `varies between runs (2 of 3 recorded runs, 3–6 launches)`.
    pub(crate) fn words(&self, recorded: u64) -> String {
        let [lo, hi] = self.launches;
        let launches = if lo == hi {
            crate::format::count(lo, "launch", "launches")
        } else {
            format!("{lo}–{hi} launches")
        };
        format!(
            "varies between runs ({} of {recorded} recorded runs, {launches})",
            self.runs
        )
    }
}

/// The kernels of `runs` that are not launched alike by every run: absent
/// from some, or launched a different number of times. Empty for runs of one
/// run, or runs that agree.
pub(crate) fn split(runs: &[Run]) -> BTreeMap<String, VariableKernel> {
    let mut out = BTreeMap::new();
    for key in crate::aggregate::kernel_keys(runs) {
        let counts: Vec<u64> = runs
            .iter()
            .filter_map(|r| r.kernels.get(&key).map(|k| k.launches))
            .collect();
        let (Some(&lo), Some(&hi)) = (counts.iter().min(), counts.iter().max()) else {
            continue;
        };
        if counts.len() == runs.len() && lo == hi {
            continue;
        }
        out.insert(
            key,
            VariableKernel {
                runs: counts.len() as u64,
                launches: [lo, hi],
            },
        );
    }
    out
}

/// Whether the first of `runs` alone launched other kernels (or other
/// counts) than the rest, which all agree: what an autotuner does when the
/// first process finds its cache cold and times the candidates, and the
/// later ones find its picks cached. Needs 3 runs or more (two to agree).
pub(crate) fn first_run_alone(runs: &[Run]) -> bool {
    let [first, second, rest @ ..] = runs else {
        return false;
    };
    if rest.is_empty() {
        return false;
    }
    let count = |r: &Run, key: &str| r.kernels.get(key).map_or(0, |k| k.launches);
    let keys = crate::aggregate::kernel_keys(runs);
    let later_agree = keys
        .iter()
        .all(|k| rest.iter().all(|r| count(r, k) == count(second, k)));
    later_agree && keys.iter().any(|k| count(first, k) != count(second, k))
}

/// `runs` without the kernels of `variable`, each run's total rebuilt from
/// the kernels left: a `per = "total"` rule then gates what every run
/// launched alike, not an autotuner's candidates.
pub(crate) fn without<T>(runs: &[Run], variable: &BTreeMap<String, T>) -> Vec<Run> {
    runs.iter()
        .map(|run| {
            let mut run = run.clone();
            run.kernels.retain(|key, _| !variable.contains_key(key));
            run.total = total_of(run.kernels.values(), run.metrics.len());
            run
        })
        .collect()
}

/// The kernels' launches together, as the parser totals a run.
fn total_of<'a>(kernels: impl Iterator<Item = &'a KernelRun>, metrics: usize) -> KernelRun {
    let mut total = KernelRun {
        metrics: vec![MetricAcc::default(); metrics],
        ..KernelRun::default()
    };
    for kernel in kernels {
        total.launches += kernel.launches;
        merge(&mut total.passes, &kernel.passes);
        for (into, from) in total.metrics.iter_mut().zip(&kernel.metrics) {
            merge(into, from);
        }
    }
    total
}

fn merge(into: &mut MetricAcc, from: &MetricAcc) {
    into.sum += from.sum;
    into.min = into.min.min(from.min);
    into.max = into.max.max(from.max);
    into.present += from.present;
    into.missing += from.missing;
    into.step = into.step.max(from.step);
}

/// What the variable kernels carry of the runs' work.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Share {
    /// Percent of the instructions (or, without an instruction metric, of the launches).
    pub(crate) pct: f64,
    /// What was counted: an instruction metric, or `launches`.
    pub(crate) basis: String,
}

/// Instruction metrics, most telling first; any other `…inst_executed.sum` after them.
const INSTRUCTION_METRICS: [&str; 2] = ["smsp__inst_executed.sum", "sm__inst_executed.sum"];

impl Share {
    /// The share of `runs`' work done by the kernels `varies` names, by the
    /// instructions where every run has an instruction metric, else by launches.
    pub(crate) fn of(runs: &[Run], varies: impl Fn(&str) -> bool) -> Share {
        let metric = instruction_metric(runs);
        let (mut part, mut whole) = (0.0, 0.0);
        for run in runs {
            let value = |k: &KernelRun| match metric.as_deref().and_then(|m| run.metric_index(m)) {
                Some(i) => k.metrics.get(i).map_or(0.0, |m| m.sum),
                None => k.launches as f64,
            };
            whole += value(&run.total);
            part += run
                .kernels
                .iter()
                .filter(|(key, _)| varies(key))
                .map(|(_, k)| value(k))
                .sum::<f64>();
        }
        let pct = if whole > 0.0 && whole.is_finite() {
            100.0 * part / whole
        } else {
            0.0
        };
        Share {
            pct,
            basis: metric.unwrap_or_else(|| "launches".into()),
        }
    }

    /// The share in words, one decimal: `48.7%`; a share short of all of
    /// it never rounds up to all (`>99.9%`: the stable kernels did some).
    pub(crate) fn percent(&self) -> String {
        if self.pct < 100.0 && format!("{:.1}", self.pct) == "100.0" {
            ">99.9%".to_string()
        } else {
            format!("{:.1}%", self.pct)
        }
    }
}

/// The instruction metric every run has a column of, if any.
fn instruction_metric(runs: &[Run]) -> Option<String> {
    let has = |m: &str| {
        runs.iter().all(|r| {
            r.metric_index(m)
                .is_some_and(|i| r.metrics[i].unit.is_some())
        })
    };
    if let Some(m) = INSTRUCTION_METRICS.iter().find(|m| has(m)) {
        return Some((*m).to_string());
    }
    let first = runs.first()?;
    first
        .metrics
        .iter()
        .map(|c| c.name.as_str())
        .find(|m| m.contains("inst_executed") && m.ends_with(".sum") && has(m))
        .map(str::to_string)
}

/// The warning (and its fix) when variable kernels carry more than
/// [`WARN_SHARE_PCT`] of the work; nothing otherwise. `names` are the
/// variable kernels, `doing` what was done (`recorded`, `checked`).
pub(crate) fn warning<'a>(
    names: impl IntoIterator<Item = &'a str> + Clone,
    share: &Share,
    doing: &str,
) -> Vec<Note> {
    if share.pct <= WARN_SHARE_PCT {
        return Vec::new();
    }
    let count = names.clone().into_iter().count();
    let tuners = autotuner::recognise(names);
    let who = if tuners.is_empty() {
        "an autotuner or JIT that picks kernels at run time".to_string()
    } else {
        tuners
            .iter()
            .map(|(t, k)| format!("{} (e.g. `{k}`)", t.name()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let fixes: Vec<&str> = if tuners.is_empty() {
        autotuner::Autotuner::ALL.iter().map(|t| t.fix()).collect()
    } else {
        tuners.iter().map(|(t, _)| t.fix()).collect()
    };
    vec![
        Note::warning(format!(
            "{} between runs carry {} of the {} {doing} (more than {WARN_SHARE_PCT}%), and are not gated: {who}",
            crate::format::count(count, "kernel that varies", "kernels that vary"),
            share.percent(),
            share.basis
        )),
        Note::hint(format!(
            "profile the steady state only, or make the choice fixed: {}",
            fixes.join("; ")
        )),
    ]
}

#[cfg(test)]
mod tests {
    use super::Share;

    /// On an H100, a cold torch.compile recording's candidates did all but
    /// 0.01% of the instructions: never written as all of them.
    #[test]
    fn a_share_short_of_all_never_reads_as_all() {
        let share = |pct| Share {
            pct,
            basis: "sm__inst_executed.sum".into(),
        };
        assert_eq!(share(48.72).percent(), "48.7%");
        assert_eq!(share(99.9).percent(), "99.9%");
        assert_eq!(share(99.988).percent(), ">99.9%");
        assert_eq!(share(100.0).percent(), "100.0%");
    }
}
