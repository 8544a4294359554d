//! The rolling baseline (`check --baseline history [--window N]`): the last
//! N accepted runs of a workload on one GPU, turned into the [`Baseline`] a
//! `baseline record` of the same runs writes — per kernel, launches per run
//! and each gated metric's statistics over the runs' samples (every profiled
//! run of every history run is one sample) — so every rule and structure
//! check works on it unchanged.

use super::record::{LAUNCHES, Value};
use super::store::{Pick, Store, StoredRun};
use crate::aggregate::Stats;
use crate::baseline::{Baseline, KernelEntry, MetricEntry};
use crate::error::{HistoryError, Result};
use crate::model::{Aggregate, Fingerprint, KernelKeyMode};
use crate::rules::{Per, Thresholds};
use std::collections::BTreeMap;

/// A rolling baseline and the runs it was made of.
#[derive(Debug, Clone)]
pub(crate) struct Rolling {
    pub(crate) baseline: Baseline,
    /// The commits of the runs, oldest first.
    pub(crate) commits: Vec<String>,
}

/// What a check compares with from the history.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window<'a> {
    /// The store as messages show it.
    pub(crate) shown: &'a str,
    pub(crate) workload: &'a str,
    pub(crate) runs: usize,
    /// The kernel key mode asked for (`--kernel-key`); else the runs' own.
    pub(crate) kernel_key: Option<KernelKeyMode>,
}

/// The rolling baseline of `window.workload` on the GPU `fingerprint` names.
pub(crate) fn rolling(
    store: &mut dyn Store,
    window: Window<'_>,
    fingerprint: &Fingerprint,
    thresholds: &Thresholds,
) -> Result<Rolling> {
    let gpu = fingerprint.to_string();
    let runs = store.pick(window.workload, &gpu, Pick::LastAccepted(window.runs))?;
    if runs.is_empty() {
        return Err(HistoryError::NoBaselineRuns {
            store: window.shown.to_string(),
            workload: window.workload.to_string(),
            gpu,
        }
        .into());
    }
    intact(window.shown, &runs)?;
    recorded_rules(&runs, window, thresholds)?;
    let recorded = runs
        .last()
        .and_then(|r| serde_json::from_value(serde_json::Value::String(r.kernel_key.clone())).ok());
    let kernel_key = match (window.kernel_key, recorded) {
        (Some(asked), Some(recorded)) if asked != recorded => {
            return Err(crate::error::BaselineError::KernelKey {
                asked: asked.to_string(),
                recorded: recorded.to_string(),
            }
            .into());
        }
        (asked, recorded) => asked.or(recorded).unwrap_or_default(),
    };
    Ok(Rolling {
        baseline: baseline_of(&runs, kernel_key, fingerprint, thresholds),
        commits: runs.iter().map(|r| r.commit.clone()).collect(),
    })
}

/// Refuses runs of which a value is damaged in the store: a rolling
/// baseline or an anchor without that value's samples would compare with
/// less than it says. The error names the run and the fix: delete that run
/// (recording the same report again would leave it, as the same report
/// for the same commit is kept as it is) or restore the store.
pub(crate) fn intact(shown: &str, runs: &[StoredRun]) -> Result<()> {
    let Some((run, damaged)) = runs.iter().find_map(|r| r.damaged.as_ref().map(|d| (r, d))) else {
        return Ok(());
    };
    let commit = super::show::short(&run.commit);
    Err(super::store_error(
        shown,
        format!(
            "the run of commit {commit} (run id {}) is damaged: {damaged}",
            run.id
        ),
        format!(
            "delete that run (`DELETE FROM run_values WHERE run_id = {id}; DELETE FROM runs WHERE id = {id};` in sqlite3 or psql), then record its report again if you have it; or restore the store from a backup",
            id = run.id
        ),
    ))
}

/// Every rule that must be measured needs its metric at its aggregate in
/// the runs: a history kept under other thresholds cannot stand in for them.
fn recorded_rules(runs: &[StoredRun], window: Window<'_>, thresholds: &Thresholds) -> Result<()> {
    for rule in thresholds.rules.iter().filter(|r| !r.optional) {
        let aggregate = rule.aggregate.to_string();
        let total = rule.per == Per::Total;
        let held = runs.iter().flat_map(|r| &r.values).any(|v| {
            v.metric == rule.metric && v.aggregate == aggregate && v.kernel.is_empty() == total
        });
        if !held {
            return Err(HistoryError::RuleNotRecorded {
                store: window.shown.to_string(),
                workload: window.workload.to_string(),
                metric: rule.metric.clone(),
                aggregate,
                line: rule.line,
            }
            .into());
        }
    }
    Ok(())
}

/// Samples per kernel (`""`: the whole run) and metric, by aggregate, with the unit.
type Gathered = BTreeMap<String, BTreeMap<String, (String, BTreeMap<String, Vec<f64>>)>>;

/// The baseline a `baseline record` of `runs` writes (each stored sample one run).
pub(crate) fn baseline_of(
    runs: &[StoredRun],
    kernel_key: KernelKeyMode,
    fingerprint: &Fingerprint,
    thresholds: &Thresholds,
) -> Baseline {
    let mut metrics: Gathered = BTreeMap::new();
    let mut launches: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut total_launches = Vec::new();
    for run in runs {
        let mut launched = 0.0;
        for v in &run.values {
            if v.rule == LAUNCHES && v.aggregate.is_empty() {
                launches
                    .entry(v.kernel.clone())
                    .or_default()
                    .extend(&v.samples);
                launched += v.mean.unwrap_or_default();
                continue;
            }
            gather(&mut metrics, v);
        }
        total_launches.push(launched);
    }
    let entry = |kernel: &str| KernelEntry {
        launches: launches
            .get(kernel)
            .and_then(|s| Stats::of(s))
            .unwrap_or(NONE),
        metrics: metrics
            .get(kernel)
            .map(|m| {
                m.iter()
                    .filter_map(|(metric, (unit, by))| {
                        metric_entry(unit, by).map(|e| (metric.clone(), e))
                    })
                    .collect()
            })
            .unwrap_or_default(),
        findings: BTreeMap::new(),
        // The history keeps values, not code: no machine-code or source profile to compare.
        code: None,
        source: None,
    };
    let kernels = metrics
        .keys()
        .chain(launches.keys())
        .filter(|k| !k.is_empty())
        .map(|k| (k.clone(), entry(k)))
        .collect();
    let mut total = entry("");
    total.launches = Stats::of(&total_launches).unwrap_or(NONE);
    Baseline {
        schema_version: crate::baseline::SCHEMA_VERSION,
        ncugate_version: env!("CARGO_PKG_VERSION").to_string(),
        created: jiff::Timestamp::now().to_string(),
        kernel_key,
        fingerprint: fingerprint.clone(),
        inputs: Vec::new(),
        details: Vec::new(),
        thresholds: thresholds.source.clone(),
        profile: None,
        cost_seconds: None,
        graph_mode: None,
        profiler_version: None,
        // The history keeps no clock of its runs: a check then has none to compare with.
        gpu: None,
        runs: runs.len() as u64,
        total,
        kernels,
        // The history keeps each kernel's values, not which runs lacked it.
        variable: BTreeMap::new(),
    }
}

/// No values: what a kernel without recorded launches counts.
const NONE: Stats = Stats {
    n: 0,
    mean: 0.0,
    stddev: 0.0,
    min: 0.0,
    max: 0.0,
};

fn gather(metrics: &mut Gathered, v: &Value) {
    let (unit, by) = metrics
        .entry(v.kernel.clone())
        .or_default()
        .entry(v.metric.clone())
        .or_insert_with(|| (v.unit.clone(), BTreeMap::new()));
    if unit.is_empty() {
        unit.clone_from(&v.unit);
    }
    by.entry(v.aggregate.clone())
        .or_default()
        .extend(v.samples.iter().copied().filter(|x| x.is_finite()));
}

/// A metric's statistics by aggregate. The history keeps the aggregates
/// its rules gated; the others (which no rule of these thresholds reads, as
/// [`recorded_rules`] made sure) repeat one of them.
fn metric_entry(unit: &str, by: &BTreeMap<String, Vec<f64>>) -> Option<MetricEntry> {
    let stats = |a: Aggregate| by.get(&a.to_string()).and_then(|s| Stats::of(s));
    let any = Aggregate::ALL.into_iter().find_map(stats)?;
    Some(MetricEntry {
        unit: crate::baseline::interned(unit),
        sum: stats(Aggregate::Sum).unwrap_or(any),
        mean: stats(Aggregate::Mean).unwrap_or(any),
        max: stats(Aggregate::Max).unwrap_or(any),
        min: stats(Aggregate::Min).unwrap_or(any),
    })
}

/// The note a check prints and reports: which runs its baseline is.
pub(crate) fn note(shown: &str, workload: &str, commits: &[String]) -> String {
    let listed: Vec<String> = commits.iter().map(|c| super::show::short(c)).collect();
    format!(
        "baseline from history {shown}: the last {} accepted run(s) of workload `{workload}` on this GPU, commits {}",
        commits.len(),
        listed.join(", ")
    )
}
