//! Judge: what a trace can tell without counters. The kernel set and the
//! launches per run by the structure checks every check runs
//! ([`crate::compare::structure`]), so a missing, new or relaunched kernel
//! reads as it does there; each kernel's launch configurations against the
//! baseline's code; every threshold rule listed as not gated, with why; the
//! traced durations as information only.

use super::map::Keyed;
use crate::baseline::Baseline;
use crate::model::{KernelRun, Run};
use crate::note::Note;
use crate::rules::Thresholds;
use std::path::PathBuf;

/// The structure's rows, from the keyed traces as runs of launches alone.
pub(crate) fn structure(
    baseline: &Baseline,
    keyed: &[Keyed],
    sources: &[PathBuf],
    thresholds: &Thresholds,
) -> Vec<crate::verdict::StructureResult> {
    let runs: Vec<Run> = keyed
        .iter()
        .zip(sources)
        .map(|(k, source)| launches_only(baseline, k, source))
        .collect();
    crate::compare::structure::check(baseline, &runs, &thresholds.structure)
}

/// A run that knows its launches and nothing else (no metric, no GPU).
fn launches_only(baseline: &Baseline, keyed: &Keyed, source: &std::path::Path) -> Run {
    let kernels = keyed
        .launches
        .iter()
        .map(|(key, &launches)| {
            (
                key.clone(),
                KernelRun {
                    launches,
                    ..KernelRun::default()
                },
            )
        })
        .collect();
    Run {
        source: source.to_path_buf(),
        sha256: String::new(),
        fingerprint: crate::model::Fingerprint::default(),
        key_mode: baseline.kernel_key,
        graph_mode: None,
        page: crate::model::ExportPage::default(),
        metrics: Vec::new(),
        kernels,
        total: KernelRun {
            launches: keyed.launches.values().sum(),
            ..KernelRun::default()
        },
        processes: Default::default(),
        profiler_version: None,
    }
}

/// A warning per kernel launched with a configuration its baseline never
/// recorded, named as the code stage names a code change.
pub(crate) fn launch_configurations(baseline: &Baseline, keyed: &[Keyed]) -> Vec<Note> {
    let mut seen: std::collections::BTreeMap<&str, std::collections::BTreeSet<&str>> =
        Default::default();
    for k in keyed {
        for (key, configs) in &k.configs {
            seen.entry(key)
                .or_default()
                .extend(configs.iter().map(String::as_str));
        }
    }
    let mut out = Vec::new();
    for (key, now) in seen {
        let Some(before) = baseline
            .kernels
            .get(key)
            .and_then(|e| e.code.as_ref())
            .map(|c| &c.launch)
            .filter(|l| !l.is_empty())
        else {
            continue;
        };
        let new: Vec<&str> = now
            .iter()
            .filter(|c| !before.iter().any(|b| b == *c))
            .copied()
            .collect();
        if !new.is_empty() {
            out.push(Note::warning(format!(
                "`{key}`: launch configuration changed: baseline {}, now {}",
                before.join(", "),
                now.into_iter().collect::<Vec<_>>().join(", ")
            )));
        }
    }
    out
}

/// The traced GPU time per launch of each kernel, over the runs: a note,
/// never gated (no clock control, and not ncu's `gpu__time_duration`).
pub(crate) fn durations(keyed: &[Keyed]) -> Option<String> {
    // Per key: GPU time, launches, launches as graph nodes.
    let mut total: std::collections::BTreeMap<&str, (u64, u64, u64)> = Default::default();
    for k in keyed {
        for (key, (ns, launches)) in &k.ns {
            let t = total.entry(key).or_default();
            t.0 = t.0.saturating_add(*ns);
            t.1 += launches;
            t.2 += k.graph.get(key).copied().unwrap_or(0);
        }
    }
    let parts: Vec<String> = total
        .iter()
        .filter(|(_, (_, n, _))| *n > 0)
        .map(|(key, (ns, n, graph))| {
            let nodes = match graph {
                0 => String::new(),
                g => format!(" ({g} of {n} launches as graph nodes)"),
            };
            format!(
                "`{}` {}{nodes}",
                crate::report::view::short_kernel(key),
                crate::format::format_value(*ns as f64 / *n as f64, "ns")
            )
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "traced GPU time per launch (information only, never gated: CUPTI activity timestamps without clock control, not comparable with ncu's gpu__time_duration): {}",
            parts.join(", ")
        )
    })
}
