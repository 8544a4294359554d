//! [`HistoryError`]: the history store and the `history` commands' arguments.

/// The URL forms of a history store, for hints.
pub const HISTORY_URL_FORMS: &str =
    "sqlite:PATH (a file, e.g. sqlite:history.sqlite) or postgres://USER@HOST:PORT/DATABASE";

/// A history command that cannot do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    /// No `--history`, `NCUGATE_HISTORY` or `[history] url`.
    #[error("no history store given")]
    NoStore,
    /// A URL that names no store (`url` is shown without its password).
    #[error("history URL `{url}`: {why}")]
    BadUrl { url: String, why: String },
    /// The store cannot be opened, read or written; `fix` fits the cause
    /// (damaged file, busy, refused connection, newer schema).
    #[error("history store {store}: {what}")]
    Store {
        store: String,
        what: String,
        fix: String,
    },
    /// `history accept` of a commit with no run.
    #[error("no run of commit `{commit}` in the history")]
    NoSuchCommit { commit: String },
    /// A commit or branch that is not one printable line.
    #[error("{what} `{value}` is not a {what} name")]
    BadName { what: &'static str, value: String },
    /// `--time` that is neither RFC 3339 nor Unix seconds.
    #[error("--time {text}: {why}")]
    BadTime { text: String, why: String },
    /// `--last 0`.
    #[error("--last 0 shows nothing")]
    LastZero,
    /// No commit or branch from a flag or the CI, and `git` could not say.
    #[error("no {what} for the runs: no --{what}, no CI variable, and `{command}` failed{}", colon(.tail))]
    NoGit {
        what: &'static str,
        command: String,
        tail: String,
    },
    /// A report of another gate than the metric gate.
    #[error("workload `{workload}` is a {gate} report; history keeps the metric gate's runs")]
    NotMetrics {
        workload: String,
        gate: &'static str,
    },
    /// `check --baseline history` with no accepted run of this workload on this GPU.
    #[error("history {store} has no accepted run of workload `{workload}` on {gpu}")]
    NoBaselineRuns {
        store: String,
        workload: String,
        gpu: String,
    },
    /// `--anchor` names a commit without a run of this workload on this GPU.
    #[error("history {store} has no run of workload `{workload}` on {gpu} at anchor `{anchor}`")]
    NoAnchorRun {
        store: String,
        workload: String,
        gpu: String,
        anchor: String,
    },
    /// A rule whose metric and aggregate the history's runs do not hold.
    #[error(
        "history {store} does not hold `{metric}` ({aggregate}) for workload `{workload}`, which a rule (line {line}) gates"
    )]
    RuleNotRecorded {
        store: String,
        workload: String,
        metric: String,
        aggregate: String,
        line: usize,
    },
    /// `--window 0`.
    #[error("--window 0 compares with nothing")]
    WindowZero,
    /// A `[history]` setting (or its flag) out of its range.
    #[error("[history] {setting} = {value} is not {expected}")]
    BadSetting {
        setting: &'static str,
        value: String,
        expected: String,
    },
}

fn colon(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!(": {tail}")
    }
}

impl HistoryError {
    /// The `hint:` line: the fix.
    pub(crate) fn hint(&self) -> String {
        const FORMS: &str = HISTORY_URL_FORMS;
        match self {
            HistoryError::NoStore => format!("pass --history URL, set NCUGATE_HISTORY, or add [history] url to ncugate.toml; the URL is {FORMS}"),
            HistoryError::BadUrl { .. } => format!("give --history, NCUGATE_HISTORY or [history] url as {FORMS}"),
            HistoryError::Store { fix, .. } => fix.clone(),
            HistoryError::NoSuchCommit { .. } => "give the commit as it was recorded (the whole SHA); `ncugate history show` lists the commits".into(),
            HistoryError::BadName { what, .. } => format!("pass --{what} with a git {what} name (one printable line)"),
            HistoryError::BadTime { .. } => "give RFC 3339 with a zone (2026-12-02T01:00:00Z) or seconds since 1970".into(),
            HistoryError::LastZero => "give --last N with N ≥ 1, or leave it out for every run".into(),
            HistoryError::NoGit { what, .. } => format!("pass --{what}, or run inside the repository's checkout"),
            HistoryError::NoBaselineRuns { .. } => "record passing runs on an accepted branch first (`ncugate history record REPORT.json --branch main`, or `check --history URL` on main), or `ncugate history accept COMMIT`".into(),
            HistoryError::NoAnchorRun { .. } => "give --anchor (or [history] anchor) a commit the history has for this workload and GPU; `ncugate history show --workload W` lists them".into(),
            HistoryError::RuleNotRecorded { .. } => "record runs checked with these thresholds first, or compare with a baseline file (--baseline FILE)".into(),
            HistoryError::WindowZero => "give --window N with N ≥ 1 (default 5)".into(),
            HistoryError::BadSetting { setting, expected, .. } => format!("set `{setting}` in [history] of ncugate.toml (or its flag, --{}) to {expected}", setting.replace('_', "-")),
            HistoryError::NotMetrics { .. } => "record the reports of `ncugate check` and `ncugate merge` of the metric gate".into(),
        }
    }
}
