//! `ncugate history record | accept | show | changes`: reports in, runs out.
//! Each returns a [`Text`]; a store that cannot be opened, read or written is
//! the error (exit 2), never a pass.

use super::stale::{self, Stale};
use super::{self as history, Entry, Provenance, Recorded, changes, record, show};
use crate::config::history::{HistoryAction, HistoryConfig, RecordRuns, ShowRuns};
use crate::error::{HistoryError, Result};
use crate::gated::Text;
use crate::note::Note;
use crate::runner::process::{CommandSpec, ProcessRunner};

/// Runs the history subcommand `config` names.
pub fn history(config: &HistoryConfig, processes: &dyn ProcessRunner) -> Result<Text> {
    match &config.action {
        HistoryAction::Record(r) => record_runs(config, r, processes),
        HistoryAction::Accept { commit } => accept(config, commit),
        HistoryAction::Show(s) => {
            let (series, stale) = selected(config, s)?;
            let mut text = if s.json {
                show::json(&series, &stale)
            } else {
                show::render(&series) + &stale::render(&stale, s.stale_after)
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
            let (series, stale) = selected(config, s)?;
            let found = changes::find(&series, s.change);
            Ok(Text::pass(if s.json {
                changes::json(&found, &stale)
            } else {
                changes::render(&found, s.change) + &stale::render(&stale, s.stale_after)
            }))
        }
    }
}

/// `show --html DIR`: the trend pages and their stylesheet; what it says it wrote.
fn trends(dir: &std::path::Path, series: &[show::Series], s: &ShowRuns) -> Result<String> {
    let thresholds = crate::rules::Thresholds::load(s.thresholds.file())?;
    let pages = history::trend::pages(series, &thresholds, s.window, s.change);
    std::fs::create_dir_all(dir).map_err(|source| crate::error::Error::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    crate::io::write_atomic(&dir.join("style.css"), history::trend::STYLE.as_bytes())?;
    for (name, page) in &pages {
        crate::io::write_atomic(&dir.join(name), page.as_bytes())?;
    }
    Ok(format!(
        "ncugate: trends of {} series on {} page(s) written to {}\n",
        series.len(),
        pages.len().saturating_sub(1),
        dir.join("index.html").display()
    ))
}

/// The series `s` selects, each cut to its last runs when asked, and the
/// stale workload × GPU pairs of the whole store (of the workload asked for).
fn selected(config: &HistoryConfig, s: &ShowRuns) -> Result<(Vec<show::Series>, Vec<Stale>)> {
    let mut store = history::open(&config.url, history::Access::Read, config.timeout)?;
    let query = history::Query {
        workload: s.workload.clone(),
        kernel: s.kernel.clone(),
        metric: s.metric.clone(),
    };
    let mut points = store.series(&query)?;
    // Staleness counts the commits of every workload: every run's head.
    let every = store.heads()?;
    let now = jiff::Timestamp::now().as_second();
    let stale: Vec<Stale> = stale::find(&every, &s.branches, s.stale_after, now)
        .into_iter()
        .filter(|st| s.workload.as_ref().is_none_or(|w| *w == st.workload))
        .collect();
    if let Some(n) = s.last {
        points = history::store::last_per_series(points, n);
    }
    Ok((show::group(points), stale))
}

/// Reads every report before the store is touched: one bad file records nothing.
fn record_runs(
    config: &HistoryConfig,
    r: &RecordRuns,
    processes: &dyn ProcessRunner,
) -> Result<Text> {
    let url = config.url.as_str();
    let mut notes = Vec::new();
    let mut runs = Vec::new();
    for path in &r.reports {
        runs.extend(record::read(path, &r.workload, r.key.as_ref(), &mut notes)?);
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
    let mut store = history::open(url, history::Access::Create, config.timeout)?;
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
    Ok(Text {
        notes: notes.into_iter().map(Note::new).collect(),
        ..Text::pass(text)
    })
}

fn accept(config: &HistoryConfig, commit: &str) -> Result<Text> {
    let mut store = history::open(&config.url, history::Access::Write, config.timeout)?;
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
pub(crate) fn git(
    processes: &dyn ProcessRunner,
    args: &[&str],
    what: &'static str,
) -> Result<String> {
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
