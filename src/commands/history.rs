//! `ncugate history record | accept | show | changes`: reports in, runs out. Each
//! returns a [`Text`]; a store that cannot be opened, read or written is the
//! error (exit 2), never a pass.

use super::Text;
use crate::compare::Inputs;
use crate::config::history::{
    CheckHistory, HistoryAction, HistoryConfig, HistoryRecord, RecordRuns, ShowRuns,
};
use crate::error::{HistoryError, Result};
use crate::history::{self, Entry, Provenance, Recorded, changes, drift, record, show};
use crate::runner::process::{CommandSpec, ProcessRunner};
use crate::verdict::Report;

/// Runs the history subcommand `config` names.
pub fn history(config: &HistoryConfig, processes: &dyn ProcessRunner) -> Result<Text> {
    match &config.action {
        HistoryAction::Record(r) => record_runs(&config.url, r, processes),
        HistoryAction::Accept { commit } => accept(&config.url, commit),
        HistoryAction::Show(s) => {
            let series = selected(&config.url, s)?;
            let mut text = if s.json {
                show::json(&series)
            } else {
                show::render(&series)
            };
            if let Some(dir) = &s.html {
                let written = trends(dir, &series, s)?;
                if !s.json {
                    text.push_str(&written);
                }
            }
            Ok(Text::pass(text))
        }
        HistoryAction::Changes(s) => {
            let found = changes::find(&selected(&config.url, s)?);
            Ok(Text::pass(if s.json {
                changes::json(&found)
            } else {
                changes::render(&found)
            }))
        }
    }
}

/// `show --html DIR`: the trend page; what it says it wrote.
fn trends(dir: &std::path::Path, series: &[show::Series], s: &ShowRuns) -> Result<String> {
    let thresholds = crate::rules::Thresholds::load(s.thresholds.file())?;
    let page = history::trend::page(series, &thresholds, s.window);
    let path = dir.join("index.html");
    std::fs::create_dir_all(dir).map_err(|source| crate::error::Error::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    crate::baseline::write_atomic(&path, page.as_bytes())?;
    Ok(format!(
        "ncugate: trends of {} series written to {}\n",
        series.len(),
        path.display()
    ))
}

/// The series `s` selects, each cut to its last runs when asked.
fn selected(url: &str, s: &ShowRuns) -> Result<Vec<show::Series>> {
    let mut store = history::open(url, false)?;
    let query = history::Query {
        workload: s.workload.clone(),
        kernel: s.kernel.clone(),
        metric: s.metric.clone(),
    };
    let mut points = store.series(&query)?;
    if let Some(n) = s.last {
        points = history::store::last_per_series(points, n);
    }
    Ok(show::group(points))
}

/// Reads every report before the store is touched: one bad file records nothing.
fn record_runs(url: &str, r: &RecordRuns, processes: &dyn ProcessRunner) -> Result<Text> {
    let mut notes = Vec::new();
    let mut runs = Vec::new();
    for path in &r.reports {
        runs.extend(record::read(path, &r.workload, &mut notes)?);
    }
    let at = Provenance {
        commit: match &r.commit {
            Some(c) => c.clone(),
            None => git(processes, &["rev-parse", "HEAD"], "commit")?,
        },
        branch: match &r.branch {
            Some(b) => b.clone(),
            None => git(processes, &["rev-parse", "--abbrev-ref", "HEAD"], "branch")?,
        },
        time: r.time,
    };
    let on_branch = r.branches.contains(&at.branch);
    let entries: Vec<Entry<'_>> = runs
        .iter()
        .map(|run| Entry {
            run,
            accepted: on_branch && run.outcome == "pass",
        })
        .collect();
    let mut store = history::open(url, true)?;
    let done = store.record(&at, &entries)?;
    let count = |what: Recorded| done.iter().filter(|d| **d == what).count();
    let accepted = entries.iter().filter(|e| e.accepted).count();
    let mut text = format!(
        "ncugate: history {}: {} run(s) of {} on {}: {} added, {} already recorded, {} replaced; {accepted} baseline material\n",
        history::Location::parse(url)
            .map(|l| l.shown())
            .unwrap_or_default(),
        runs.len(),
        show::short(&at.commit),
        at.branch,
        count(Recorded::Added),
        count(Recorded::Unchanged),
        count(Recorded::Replaced),
    );
    if !on_branch {
        text.push_str(&format!(
            "ncugate: branch `{}` is not one of [history] branches ({}): these runs are kept but are no baseline material\n",
            at.branch,
            r.branches.join(", ")
        ));
    }
    notes
        .iter_mut()
        .for_each(|n| *n = format!("ncugate: note: {n}"));
    Ok(Text {
        notes,
        ..Text::pass(text)
    })
}

fn accept(url: &str, commit: &str) -> Result<Text> {
    let mut store = history::open(url, false)?;
    match store.accept(commit)? {
        0 => Err(HistoryError::NoSuchCommit {
            commit: commit.to_string(),
        }
        .into()),
        n => Ok(Text::pass(format!(
            "ncugate: {n} run(s) of {} are baseline material\n",
            show::short(commit)
        ))),
    }
}

/// What git says for `args` (the commit or branch when neither a flag nor the CI did).
fn git(processes: &dyn ProcessRunner, args: &[&str], what: &'static str) -> Result<String> {
    let mut spec = CommandSpec::new("git", args.iter().copied());
    spec.timeout = Some(std::time::Duration::from_secs(30));
    let done = processes.run(&spec, &mut |_| {});
    let said = done
        .exit
        .success()
        .then(|| done.lines.last().map(|l| l.trim().to_string()))
        .flatten()
        .filter(|c| !c.is_empty());
    match said {
        Some(value) => crate::config::history::checked(what, value),
        None => Err(HistoryError::NoGit {
            what,
            command: format!("git {}", args.join(" ")),
            tail: done.tail(2),
        }
        .into()),
    }
}

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
    let mut store = None;
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
        let opened = store.insert(history::open(&h.url, false)?);
        let fingerprint = crate::model::common_fingerprint(inputs.runs)?;
        let (baseline, since) = drift::anchor_baseline(
            opened.as_mut(),
            anchor,
            &fingerprint,
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
            allow_device_mismatch: true,
            notes: Vec::new(),
            code: inputs.code,
            environmental: inputs.environmental,
        })?;
        drift::apply(report, &at_anchor, inputs.thresholds, commit, since + 1);
    } else if let Some(commit) = &h.anchor {
        report.notes.push(format!(
            "anchor {}: no rule of these thresholds has max_drift, so nothing is compared with it",
            show::short(commit)
        ));
    }
    report.notes.extend(trend_notes(h, &shown, report));
    let recorded = record_check(h, &shown, report, store.as_mut(), processes)?;
    report.trends = trend_charts(h, &shown, report, inputs.thresholds, recorded);
    Ok(())
}

/// Records the check's run (when `--history-record` and the branch say
/// so), with a note either way; whether it was recorded.
fn record_check(
    h: &CheckHistory,
    shown: &str,
    report: &mut Report,
    store: Option<&mut Box<dyn history::Store>>,
    processes: &dyn ProcessRunner,
) -> Result<bool> {
    let Some(at) = to_record(h, processes)? else {
        report.notes.push(format!(
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
    let mut opened;
    let store = match store {
        Some(s) => s,
        None => {
            opened = history::open(&h.url, true)?;
            &mut opened
        }
    };
    store.record(
        &at,
        &[Entry {
            run: &run,
            accepted,
        }],
    )?;
    report.notes.push(format!(
        "history {shown}: this run is recorded as commit {} on {}{}",
        show::short(&at.commit),
        show::escaped(&at.branch),
        if accepted {
            " (baseline material)"
        } else {
            " (not baseline material)"
        }
    ));
    Ok(true)
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
    let mut store = match history::open(&h.url, false) {
        Ok(store) => store,
        Err(e) => {
            report
                .notes
                .push(format!("history {shown}: no trend charts: {e}"));
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
                report
                    .notes
                    .push(format!("history {shown}: no trend charts: {e}"));
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
