//! The history stage of a check: creep measured from an anchor commit's
//! run, the run recorded in the store, and the trend of each failing metric.
//! (The store itself is [`crate::history`].)

use crate::compare::Inputs;
use crate::config::history::{CheckHistory, HistoryRecord};
use crate::error::Result;
use crate::history::command::git;
use crate::history::{self, Entry, Provenance, drift, record, show};
use crate::runner::process::ProcessRunner;
use crate::verdict::Report;

/// After a check's comparison, with a history: creep measured from the
/// anchor (rules with `max_drift`: the runs compared with the anchor's run
/// too), then the run recorded — on an accepted branch, or on any when
/// asked. A store that fails is the check's error.
pub(super) fn after_check(
    h: &CheckHistory,
    report: &mut Report,
    inputs: &Inputs<'_>,
    processes: &dyn ProcessRunner,
) -> Result<()> {
    if report.devices.is_none() {
        return Ok(());
    }
    let shown = history::Location::parse(&h.url)?.shown();
    if let Some(commit) = &h.anchor
        && inputs
            .thresholds
            .rules
            .iter()
            .any(|r| r.max_drift.is_some())
    {
        let anchor = drift::Anchor {
            shown: &shown,
            workload: &h.workload,
            commit,
        };
        let mut opened = history::open(&h.url, history::Access::Read, h.timeout)?;
        let fingerprint = inputs.device.current;
        let (baseline, since) = drift::anchor_baseline(
            opened.as_mut(),
            anchor,
            fingerprint,
            inputs.baseline.kernel_key,
            inputs.thresholds,
        )?;
        let at_anchor = crate::compare::compare(&Inputs {
            gpu: inputs.gpu,
            shared_gpu: inputs.shared_gpu,
            baseline: &baseline,
            baseline_path: String::new(),
            runs: inputs.runs,
            findings: None,
            details_paths: Vec::new(),
            thresholds: inputs.thresholds,
            // The anchor's GPU may differ: creep is measured all the same.
            device: crate::compare::Device {
                current: fingerprint,
                same: crate::compare::same_device(&baseline, fingerprint, true)?,
            },
            notes: Vec::new(),
            code: inputs.code,
            environmental: inputs.environmental,
            autotuned_builds: inputs.autotuned_builds,
        })?;
        drift::apply(report, &at_anchor, inputs.thresholds, commit, since + 1);
    } else if let Some(commit) = &h.anchor {
        report.note(format!(
            "anchor {}: no rule of these thresholds has max_drift, so nothing is compared with it",
            show::short(commit)
        ));
    }
    report.note_each(trend_notes(h, &shown, report));
    let recorded = record_check(h, &shown, report, processes)?;
    report.trends = trend_charts(h, &shown, report, inputs.thresholds, recorded);
    Ok(())
}

/// Records the check's run (when `--history-record` and the branch say
/// so), with a note either way; whether it was recorded.
fn record_check(
    h: &CheckHistory,
    shown: &str,
    report: &mut Report,
    processes: &dyn ProcessRunner,
) -> Result<bool> {
    let Some(at) = to_record(h, processes)? else {
        report.note(format!(
            "history {shown}: this run is not recorded (read only: --history-record {})",
            match h.record {
                HistoryRecord::Never => "never",
                _ => "auto, and the branch is not one of [history] branches",
            }
        ));
        return Ok(false);
    };
    let Some(run) = record::run_of(&h.workload, report) else {
        return Ok(false);
    };
    let accepted = h.branches.contains(&at.branch) && run.outcome == "pass";
    let mut store = history::open(&h.url, history::Access::Create, h.timeout)?;
    store.record(
        &at,
        &[Entry {
            run: &run,
            accepted,
        }],
    )?;
    report.note(format!(
        "history {shown}: this run is recorded as commit {} on {}{}",
        show::short(&at.commit),
        show::escaped(&at.branch),
        if accepted {
            " (baseline material)"
        } else {
            " (not baseline material)"
        }
    ));
    stale_warnings(h, shown, report, store.as_mut());
    Ok(true)
}

/// A warning for each other workload × GPU of the store with no recent run
/// on an accepted branch (`[history] stale_after`). Never an error: a store
/// that cannot be read for it is a note, and the verdict stays this run's.
fn stale_warnings(
    h: &CheckHistory,
    shown: &str,
    report: &mut Report,
    store: &mut dyn history::Store,
) {
    let gpu = report
        .devices
        .as_ref()
        .map(|d| d.current.clone())
        .unwrap_or_default();
    let every = match store.heads() {
        Ok(every) => every,
        Err(e) => {
            report.note(format!(
                "history {shown}: could not look for stale workloads: {e}"
            ));
            return;
        }
    };
    let now = jiff::Timestamp::now().as_second();
    for s in history::stale::find(&every, &h.branches, h.stale_after, now) {
        if s.workload == h.workload && s.gpu == gpu {
            continue;
        }
        report.notes.push(crate::note::Note::warning(format!(
            "history {shown}: {}",
            history::stale::line(&s, h.stale_after)
        )));
    }
}

/// The trend chart of each failing metric (the first 5, as the notes name
/// them) for the HTML report: its series in the store for this workload and
/// GPU, this run last (added as `this run` when it was not recorded). A
/// store that cannot be read for them is a note: the charts never change a verdict.
fn trend_charts(
    h: &CheckHistory,
    shown: &str,
    report: &mut Report,
    thresholds: &crate::rules::Thresholds,
    recorded: bool,
) -> Vec<(usize, String)> {
    let Some(run) = record::run_of(&h.workload, report) else {
        return Vec::new();
    };
    let failing: Vec<usize> = (0..report.rules.len())
        .filter(|&i| {
            matches!(
                report.rules[i].status,
                crate::status::Status::Fail | crate::status::Status::Warn
            )
        })
        .take(5)
        .collect();
    if failing.is_empty() {
        return Vec::new();
    }
    let mut store = match history::open(&h.url, history::Access::Read, h.timeout) {
        Ok(store) => store,
        Err(e) => {
            report.note(format!("history {shown}: no trend charts: {e}"));
            return Vec::new();
        }
    };
    let mut charts = Vec::new();
    for i in failing {
        let r = &report.rules[i];
        let kernel = r.kernel.as_deref().unwrap_or_default().to_string();
        let points = store.series(&history::Query {
            workload: Some(h.workload.clone()),
            kernel: r.kernel.as_deref().map(str::to_string),
            metric: Some(r.metric.to_string()),
        });
        let points = match points {
            Ok(points) => points,
            Err(e) => {
                report.note(format!("history {shown}: no trend charts: {e}"));
                return Vec::new();
            }
        };
        let mut series = show::group(points).into_iter().find(|s| {
            s.workload == h.workload && s.gpu == run.gpu && s.kernel == kernel && s.rule == *r.rule
        });
        if !recorded {
            let value = run
                .values
                .iter()
                .find(|v| v.kernel == kernel && v.rule == *r.rule);
            let series = series.get_or_insert_with(|| show::Series {
                workload: h.workload.clone(),
                gpu: run.gpu.clone(),
                kernel: kernel.clone(),
                rule: r.rule.to_string(),
                metric: r.metric.to_string(),
                aggregate: r.aggregate.to_string(),
                unit: r.unit.to_string(),
                points: Vec::new(),
            });
            series.points.push(show::SeriesPoint {
                commit: "this run".into(),
                branch: String::new(),
                time: String::new(),
                accepted: false,
                outcome: run.outcome.clone(),
                value: value.and_then(|v| v.mean),
                status: value.map(|v| v.status.clone()).unwrap_or_default(),
            });
        }
        if let Some(svg) = series.and_then(|s| history::trend::chart(&s, thresholds, h.window)) {
            charts.push((i, svg));
        }
    }
    charts
}

/// The command that draws the trend of each failing metric (the first 5).
fn trend_notes(h: &CheckHistory, shown: &str, report: &Report) -> Vec<String> {
    use crate::format::shell_quote;
    let failing: Vec<_> = report
        .rules
        .iter()
        .filter(|r| {
            matches!(
                r.status,
                crate::status::Status::Fail | crate::status::Status::Warn
            )
        })
        .collect();
    let mut notes: Vec<String> = failing
        .iter()
        .take(5)
        .map(|r| {
            let kernel = r
                .kernel
                .as_deref()
                .map(|k| format!(" --kernel {}", shell_quote(k)))
                .unwrap_or_default();
            format!(
                "trend of {} on {}: ncugate history show --history {} --workload {}{kernel} --metric {} --html trends",
                r.metric,
                r.kernel.as_deref().unwrap_or("the whole run"),
                shell_quote(shown),
                shell_quote(&h.workload),
                shell_quote(&r.metric)
            )
        })
        .collect();
    if failing.len() > 5 {
        notes.push(format!(
            "{} more failing metrics: ncugate history show --html trends --workload {} draws every trend",
            failing.len() - 5,
            shell_quote(&h.workload)
        ));
    }
    notes
}

/// Where and when the check's run is recorded; `None`: it is not.
fn to_record(h: &CheckHistory, processes: &dyn ProcessRunner) -> Result<Option<Provenance>> {
    if h.record == HistoryRecord::Never {
        return Ok(None);
    }
    let branch = match &h.branch {
        Some(b) => b.clone(),
        None => git(processes, &["rev-parse", "--abbrev-ref", "HEAD"], "branch")?,
    };
    if h.record == HistoryRecord::Auto && !h.branches.contains(&branch) {
        return Ok(None);
    }
    let commit = match &h.commit {
        Some(c) => c.clone(),
        None => git(processes, &["rev-parse", "HEAD"], "commit")?,
    };
    Ok(Some(Provenance {
        commit,
        branch,
        time: jiff::Timestamp::now().as_second(),
    }))
}
