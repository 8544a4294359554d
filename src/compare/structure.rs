//! Structural checks: which kernels ran, and how often.

use crate::aggregate::{self, Scope};
use crate::baseline::Baseline;
use crate::model::Run;
use crate::rules::{LaunchPolicy, Policy, Structure};
use crate::status::Status;
use crate::verdict::{StructureCheck, StructureResult};
use std::collections::BTreeMap;

pub(crate) fn check(baseline: &Baseline, runs: &[Run], policy: &Structure) -> Vec<StructureResult> {
    let mut out = Vec::new();
    let current = aggregate::kernel_keys(runs);
    for key in &current {
        let launches = aggregate::launches(runs, Scope::Kernel(key));
        match baseline.kernels.get(key) {
            None if baseline.variable.contains_key(key) => {
                out.extend(varies(baseline, key, launches));
            }
            None => {
                if let Some(status) = status_of(policy.new_kernels) {
                    out.push(StructureResult {
                        kernel: key.clone(),
                        check: StructureCheck::NewKernel,
                        baseline_launches: None,
                        baseline_range: None,
                        current_launches: launches.clone(),
                        recorded_in: None,
                        status,
                        message: format!(
                            "not in the baseline ({} launches per run){}",
                            join(&launches),
                            autotuner_hint(key)
                        ),
                    });
                }
            }
            Some(entry) if policy.launches == LaunchPolicy::Exact => {
                let (lo, hi) = (entry.launches.min, entry.launches.max);
                let ok = launches
                    .iter()
                    .all(|&n| (n as f64) >= lo && (n as f64) <= hi);
                let expected = if lo == hi {
                    format!("{lo}")
                } else {
                    format!("{lo}–{hi}")
                };
                out.push(StructureResult {
                    kernel: key.clone(),
                    check: StructureCheck::Launches,
                    baseline_launches: Some(entry.launches.mean),
                    baseline_range: Some([lo, hi]),
                    current_launches: launches.clone(),
                    recorded_in: None,
                    status: if ok { Status::Pass } else { Status::Fail },
                    message: if ok {
                        format!("{} launches per run, as in the baseline", join(&launches))
                    } else {
                        format!("launched {} times per run, baseline {expected}: a redundant or dropped launch (graph node?)", join(&launches))
                    },
                });
            }
            Some(_) => {}
        }
    }
    for (key, entry) in &baseline.kernels {
        if current.contains(key) {
            continue;
        }
        if let Some(status) = status_of(policy.missing_kernels) {
            out.push(StructureResult {
                kernel: key.clone(),
                check: StructureCheck::MissingKernel,
                baseline_launches: Some(entry.launches.mean),
                baseline_range: Some([entry.launches.min, entry.launches.max]),
                current_launches: vec![0; runs.len()],
                recorded_in: None,
                status,
                message: format!(
                    "the baseline launches it {} times per run, the current run never does",
                    crate::format::format_value(entry.launches.mean, "")
                ),
            });
        }
    }
    for key in baseline.variable.keys() {
        if !current.contains(key) {
            out.extend(varies(baseline, key, vec![0; runs.len()]));
        }
    }
    mark_moved(&mut out);
    out
}

/// Makes the launch-count rows of [`moved_picks`] `PicksMoved`: passed,
/// not gated, with why.
pub(crate) fn mark_moved(rows: &mut [StructureResult]) {
    let moved = moved_picks(rows);
    for row in rows.iter_mut() {
        if let Some(evidence) = moved.get(&row.kernel) {
            let lo = row.baseline_range.map_or(0.0, |[lo, _]| lo);
            row.check = StructureCheck::PicksMoved;
            row.status = Status::Pass;
            row.message = format!(
                "not gated ({evidence}): launched {} times per run, baseline {lo}",
                join(&row.current_launches)
            );
        }
    }
}

/// The kernels an autotuner picks whose launches it moved between its
/// picks, each with why (`code varies between runs: cuDNN's benchmark
/// search moved launches between its picks (2 kernels, 7 launches in
/// all, as recorded)`): of the launch-count rows (`Launches`, or already
/// `PicksMoved`) of kernels every recorded run launched alike and that
/// each current run launches alike but another number of times, those an
/// autotuner names, grouped by autotuner, where a group of two or more
/// launches as many times in all as the recorded runs did. Seen on an
/// H100: the three recorded runs of a PyTorch conv with `cudnn.benchmark`
/// launched two cuDNN kernels 2 and 5 times, and every check then 5 and 2.
/// Reads only the rows, so `merge` checks a report's claim from its own.
pub(crate) fn moved_picks(rows: &[StructureResult]) -> BTreeMap<String, String> {
    use crate::varies::autotuner::Autotuner;
    let mut groups: BTreeMap<Autotuner, Vec<(&str, f64, f64)>> = BTreeMap::new();
    for row in rows {
        let (StructureCheck::Launches | StructureCheck::PicksMoved, Some([lo, hi])) =
            (row.check, row.baseline_range)
        else {
            continue;
        };
        let Some(&now) = row.current_launches.first() else {
            continue;
        };
        let alike = row.current_launches.iter().all(|&n| n == now);
        let Some(tuner) = Autotuner::of(&row.kernel) else {
            continue;
        };
        if lo == hi && alike && now as f64 != lo {
            groups
                .entry(tuner)
                .or_default()
                .push((&row.kernel, lo, now as f64));
        }
    }
    let mut out = BTreeMap::new();
    for (tuner, picks) in groups {
        let recorded: f64 = picks.iter().map(|p| p.1).sum();
        let now: f64 = picks.iter().map(|p| p.2).sum();
        if picks.len() < 2 || recorded != now {
            continue;
        }
        let evidence = format!(
            "{}: {} moved launches between its picks ({} kernels, {} launches in all, as recorded)",
            crate::verdict::CODE_VARIES,
            tuner.name(),
            picks.len(),
            crate::format::format_value(recorded, "")
        );
        for (kernel, _, _) in picks {
            out.insert(kernel.to_string(), evidence.clone());
        }
    }
    out
}

/// Whether a code-varies evidence is [`moved_picks`]'s.
pub(crate) fn is_moved_picks(evidence: &str) -> bool {
    evidence
        .strip_prefix(crate::verdict::CODE_VARIES)
        .is_some_and(|rest| rest.contains(" moved launches between its picks ("))
}

/// The row of a kernel the baseline's runs did not launch alike: listed
/// with why, passed, never gated (a kernel no recorded run launched is new).
fn varies(baseline: &Baseline, key: &str, launches: Vec<u64>) -> Option<StructureResult> {
    let kernel = baseline.variable.get(key)?;
    let now = if launches.iter().all(|&n| n == 0) {
        "not launched now".to_string()
    } else {
        format!("{} launches per run now", join(&launches))
    };
    let whose = crate::varies::autotuner::Autotuner::of(key)
        .map(|t| format!("; a kernel of {}", t.name()))
        .unwrap_or_default();
    let [lo, hi] = kernel.launches;
    Some(StructureResult {
        kernel: key.to_string(),
        check: StructureCheck::Varies,
        baseline_launches: None,
        baseline_range: Some([lo as f64, hi as f64]),
        current_launches: launches,
        recorded_in: Some([kernel.runs, baseline.runs]),
        status: Status::Pass,
        message: format!("{}: not gated; {now}{whose}", kernel.words(baseline.runs)),
    })
}

/// For a new kernel that is an autotuner's own: whose, and the fix (a
/// baseline recorded from one run, or runs that all skipped the autotuning,
/// never saw it).
fn autotuner_hint(key: &str) -> String {
    crate::varies::autotuner::Autotuner::of(key)
        .map(|t| format!("; a kernel of {} — {}", t.name(), t.fix()))
        .unwrap_or_default()
}

fn status_of(policy: Policy) -> Option<Status> {
    match policy {
        Policy::Fail => Some(Status::Fail),
        Policy::Warn => Some(Status::Warn),
        Policy::Ignore => None,
    }
}

fn join(launches: &[u64]) -> String {
    let mut distinct: Vec<u64> = launches.to_vec();
    distinct.dedup();
    distinct
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_new_kernel_of_an_autotuner_says_whose_and_the_fix() {
        let hint = super::autotuner_hint(
            "void xla_fp_comparison<float>(float *, float *, float, unsigned long long, int *)",
        );
        assert!(
            hint.starts_with(
                "; a kernel of XLA's autotuner — XLA: XLA_FLAGS=--xla_gpu_autotune_level=0"
            ),
            "{hint}"
        );
        assert_eq!(super::autotuner_hint("produce(float *, long)"), "");
    }
}
