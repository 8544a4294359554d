//! `ncugate history …` and `check`'s use of the store: the settings of
//! [`HistoryOptions`] (the store's URL: `--history` over `NCUGATE_HISTORY`
//! over `[history] url`, whose relative `sqlite:` path is relative to the
//! file's folder; the window, the anchor, the accepted branches) layered
//! over `[history]`, and each subcommand's validated arguments. The commit
//! and branch of a recorded run come from the flags, else the CI's
//! variables; what neither gives, the command asks `git`.

use super::file::FileConfig;
use crate::cli::{
    CheckHistoryArgs, HistoryArgs, HistoryCommand, HistoryRecordArgs, HistoryShowArgs,
};
use crate::error::{Error, HistoryError, Result};
use crate::options::{HistoryOptions, Layer};
use std::path::PathBuf;

pub use crate::options::history::HistoryRecord;

/// The URL forms, for hints.
pub use crate::error::HISTORY_URL_FORMS as URL_FORMS;

/// The CI variables that name the commit, in the order they are read
/// (GitHub Actions, then Jenkins).
pub(crate) const COMMIT_VARIABLES: &[&str] = &["GITHUB_SHA", "GIT_COMMIT"];
/// The CI variables that name the branch, in the order they are read.
pub(crate) const BRANCH_VARIABLES: &[&str] = &["GITHUB_REF_NAME", "BRANCH_NAME"];

pub(crate) use super::file::BASELINE_WORD;

/// A check's use of the history (`check --history URL`), validated.
#[derive(Debug, Clone)]
pub struct CheckHistory {
    /// The store's URL (a relative `sqlite:` path in the file: relative to the file).
    pub(crate) url: String,
    /// The name this check's run is kept under.
    pub(crate) workload: String,
    /// Accepted runs in a rolling baseline.
    pub(crate) window: usize,
    /// The commit creep is measured from.
    pub(crate) anchor: Option<String>,
    pub(crate) record: HistoryRecord,
    /// From the CI's variables; `None`: ask git when recording.
    pub(crate) commit: Option<String>,
    pub(crate) branch: Option<String>,
    /// Branches whose passing runs are baseline material.
    pub(crate) branches: Vec<String>,
    /// How long a network store may take to answer.
    pub(crate) timeout: std::time::Duration,
    /// When another workload × GPU of the store is stale (a warning after recording).
    pub(crate) stale_after: crate::options::history::StaleAfter,
}

/// `check`'s history settings: the flags over `[history]`. `None` when no
/// store is given; `--baseline history` or `--anchor` without one is an
/// error (`[history] anchor` alone asks for no store).
pub(crate) fn check_history(
    args: &CheckHistoryArgs,
    file: &FileConfig,
    rolling: bool,
) -> Result<Option<CheckHistory>> {
    let history = args.options.clone().over(file.history.clone());
    let Some(url) = history.url.clone() else {
        if rolling || args.options.anchor.is_some() {
            return Err(HistoryError::NoStore.into());
        }
        return Ok(None);
    };
    crate::config::workload::check_name(&args.history_workload)?;
    let window = history.window()?;
    Ok(Some(CheckHistory {
        url,
        workload: args.history_workload.clone(),
        window,
        anchor: history
            .anchor
            .clone()
            .map(|a| checked("commit", a))
            .transpose()?,
        record: history.record(),
        commit: args
            .commit
            .clone()
            .or_else(|| from_ci(COMMIT_VARIABLES))
            .map(|c| checked("commit", c))
            .transpose()?,
        branch: args
            .branch
            .clone()
            .or_else(|| from_ci(BRANCH_VARIABLES))
            .map(|b| checked("branch", b))
            .transpose()?,
        branches: history.branches(),
        timeout: history.timeout(),
        stale_after: history.stale_after()?,
    }))
}

/// The first of `vars` the CI set (and not empty).
fn from_ci(vars: &[&str]) -> Option<String> {
    vars.iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|v| !v.is_empty())
}

/// `ncugate history …`, validated.
#[derive(Debug, Clone)]
pub struct HistoryConfig {
    /// The store's URL, as given.
    pub(crate) url: String,
    /// How long a network store may take to answer.
    pub(crate) timeout: std::time::Duration,
    pub(crate) action: HistoryAction,
}

/// What to do with the store.
#[derive(Debug, Clone)]
pub(crate) enum HistoryAction {
    Record(RecordRuns),
    Accept {
        commit: String,
    },
    Show(ShowRuns),
    /// `history changes`: the same selection.
    Changes(ShowRuns),
}

/// `ncugate history show`.
#[derive(Debug, Clone)]
pub(crate) struct ShowRuns {
    pub(crate) workload: Option<String>,
    /// Text the kernel key contains.
    pub(crate) kernel: Option<String>,
    /// Text the metric name contains, or a rule's name.
    pub(crate) metric: Option<String>,
    /// The last N runs of each series.
    pub(crate) last: Option<usize>,
    pub(crate) json: bool,
    /// `--html DIR`: the trend page's folder.
    pub(crate) html: Option<PathBuf>,
    /// The rules that draw the allowance band.
    pub(crate) thresholds: crate::rules::ThresholdsSource,
    /// Accepted runs behind each band.
    pub(crate) window: usize,
    /// The change-point test's settings.
    pub(crate) change: crate::options::history::ChangeSettings,
    /// When a workload × GPU is stale.
    pub(crate) stale_after: crate::options::history::StaleAfter,
    /// Branches whose runs keep a workload fresh.
    pub(crate) branches: Vec<String>,
}

/// `ncugate history record`.
#[derive(Debug, Clone)]
pub(crate) struct RecordRuns {
    pub(crate) reports: Vec<PathBuf>,
    /// From `--commit` or the CI; `None`: ask git.
    pub(crate) commit: Option<String>,
    /// From `--branch` or the CI; `None`: ask git.
    pub(crate) branch: Option<String>,
    /// Seconds since the Unix epoch (`--time`, else now).
    pub(crate) time: i64,
    /// The name a single check's report is recorded under.
    pub(crate) workload: String,
    /// Branches whose passing runs are baseline material.
    pub(crate) branches: Vec<String>,
    /// The key each report must be signed with (`NCUGATE_REPORT_KEY`).
    pub(crate) key: Option<crate::report::sign::ReportKey>,
}

/// The validated `history` command.
pub fn history(args: HistoryArgs) -> Result<HistoryConfig> {
    let file = FileConfig::load(args.config.as_deref())?;
    let Some(url) = args.history.over(file.history.url.clone()) else {
        return Err(HistoryError::NoStore.into());
    };
    let action = match args.command {
        HistoryCommand::Record(r) => HistoryAction::Record(record(r, &file)?),
        HistoryCommand::Accept(a) => HistoryAction::Accept {
            commit: checked("commit", a.commit)?,
        },
        HistoryCommand::Show(s) => HistoryAction::Show(show(s, &file)?),
        HistoryCommand::Changes(s) => {
            // The trend page's flags draw charts `changes` has none of.
            let page_only = [
                ("--html", s.html.is_some()),
                ("--thresholds", s.thresholds.is_some()),
                ("--window", s.window.is_some()),
            ];
            if let Some((flag, _)) = page_only.iter().find(|(_, given)| *given) {
                return Err(crate::error::ConfigError::NotApplicable {
                    flag: (*flag).to_string(),
                    because: "to history changes: it lists commits and draws no trend page".into(),
                    instead: ", or draw the trends with `ncugate history show --html DIR`".into(),
                }
                .into());
            }
            HistoryAction::Changes(show(s, &file)?)
        }
    };
    let timeout = HistoryOptions {
        history_timeout: args.timeout,
        ..HistoryOptions::default()
    }
    .over(file.history.clone())
    .timeout();
    Ok(HistoryConfig {
        url,
        timeout,
        action,
    })
}

fn record(args: HistoryRecordArgs, file: &FileConfig) -> Result<RecordRuns> {
    let commit = args.commit.or_else(|| from_ci(COMMIT_VARIABLES));
    let branch = args.branch.or_else(|| from_ci(BRANCH_VARIABLES));
    let time = match &args.time {
        Some(t) => parse_time(t)?,
        None => jiff::Timestamp::now().as_second(),
    };
    crate::config::workload::check_name(&args.workload)?;
    Ok(RecordRuns {
        reports: args.reports,
        commit: commit.map(|c| checked("commit", c)).transpose()?,
        branch: branch.map(|b| checked("branch", b)).transpose()?,
        time,
        workload: args.workload,
        branches: file.history.branches(),
        key: crate::report::sign::ReportKey::from_env(),
    })
}

fn show(args: HistoryShowArgs, file: &FileConfig) -> Result<ShowRuns> {
    if args.last == Some(0) {
        return Err(HistoryError::LastZero.into());
    }
    let options = HistoryOptions {
        window: args.window,
        change_p: args.change_p,
        change_window: args.change_window,
        stale_after: args.stale_after,
        ..HistoryOptions::default()
    }
    .over(file.history.clone());
    let window = options.window()?;
    Ok(ShowRuns {
        workload: args.workload,
        kernel: args.kernel,
        metric: args.metric,
        last: args.last,
        json: args.json,
        html: args.html,
        thresholds: args
            .thresholds
            .or_else(|| file.gate.thresholds.clone())
            .into(),
        window,
        change: options.change()?,
        stale_after: options.stale_after()?,
        branches: options.branches(),
    })
}

/// A commit or branch name: one printable line of at most 200 characters.
pub(crate) fn checked(what: &'static str, value: String) -> Result<String> {
    let value = value.trim().to_string();
    if value.is_empty()
        || value.chars().count() > 200
        || value.chars().any(crate::text::escape::unprintable)
    {
        return Err(HistoryError::BadName {
            what,
            value: value.escape_debug().to_string(),
        }
        .into());
    }
    Ok(value)
}

/// `--time`: RFC 3339 (`2026-12-02T01:00:00Z`) or seconds since the Unix epoch.
pub(crate) fn parse_time(text: &str) -> Result<i64> {
    if let Ok(seconds) = text.parse::<i64>() {
        return jiff::Timestamp::from_second(seconds)
            .map(|t| t.as_second())
            .map_err(|e| time_error(text, e));
    }
    text.parse::<jiff::Timestamp>()
        .map(|t| t.as_second())
        .map_err(|e| time_error(text, e))
}

fn time_error(text: &str, e: impl std::fmt::Display) -> Error {
    HistoryError::BadTime {
        text: text.to_string(),
        why: e.to_string(),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_rfc3339_or_epoch_seconds() {
        assert_eq!(parse_time("1970-01-01T00:01:00Z").unwrap(), 60);
        assert_eq!(parse_time("60").unwrap(), 60);
        assert!(parse_time("yesterday").is_err());
        assert!(parse_time("2026-12-02T01:00:00").is_err(), "no zone");
    }

    #[test]
    fn commit_and_branch_names_are_one_printable_line() {
        assert_eq!(checked("commit", " abc \n".into()).unwrap(), "abc");
        assert!(checked("branch", "a\nb".into()).is_err());
        assert!(checked("branch", String::new()).is_err());
        assert!(checked("commit", "x".repeat(201)).is_err());
    }
}
