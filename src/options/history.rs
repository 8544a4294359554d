//! The history store as `check` uses it: the store's URL, the rolling
//! baseline's window, the commit creep is measured from, when the check
//! records its run and the branches whose runs are baseline material, as
//! flags (`--history`, `--window`, `--anchor`, `--history-record`),
//! `NCUGATE_HISTORY` and `[history]` in `ncugate.toml`, with their defaults.
//! `ncugate history` reads the same table under its own flags (`--history`,
//! `show --window`), layered the same way.

use super::{layered, value_enum};
use crate::error::{HistoryError, Result};
use clap::Args;
use serde::Deserialize;

/// `[history]` (`url`, `branches`, `window`, `anchor`, `timeout`), and the flags of
/// `check` that override it.
#[derive(Debug, Clone, Default, PartialEq, Args, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryOptions {
    /// The history store (sqlite:PATH or postgres://…; default: [history] url, else none: no history): `--baseline history` reads it, `--anchor` measures creep from it, and the check records its own run in it when it finishes (on an accepted branch; see --history-record).
    #[arg(long = "history", env = "NCUGATE_HISTORY", value_name = "URL")]
    pub(crate) url: Option<String>,
    /// `[history] branches`: the branches whose passing runs are baseline
    /// material (default: main). A project's setting, so no flag.
    #[arg(skip)]
    pub(crate) branches: Option<Vec<String>>,
    /// With `--baseline history`: how many of the last accepted runs of this workload and GPU make the baseline (default 5).
    #[arg(long, value_name = "N")]
    pub(crate) window: Option<usize>,
    /// Also compare with this commit's run (a release, say): a rule with `max_drift` fails when the change since then passes it (default: [history] anchor, else none: no drift check).
    #[arg(long, value_name = "COMMIT")]
    pub(crate) anchor: Option<String>,
    /// When the check records its run in the history: `auto` on the accepted branches only ([history] branches), `always` (a PR build that asks to), `never` (read only) (default: auto).
    #[arg(long, value_enum, value_name = "WHEN")]
    #[serde(skip)]
    pub(crate) history_record: Option<HistoryRecord>,
    /// How many seconds a PostgreSQL history server may take to answer a connection or a statement before the check gives up with an error (default 30; [history] timeout).
    #[arg(
        long = "history-timeout",
        env = "NCUGATE_HISTORY_TIMEOUT",
        value_name = "SECONDS"
    )]
    #[serde(rename = "timeout")]
    pub(crate) history_timeout: Option<std::num::NonZeroU64>,
    /// `[history] change_p`: the significance level of `history changes`'
    /// change-point test (`--change-p` of `history show` and `changes`).
    #[arg(skip)]
    pub(crate) change_p: Option<f64>,
    /// `[history] change_window`: the runs the change-point test searches
    /// at once and compares on each side (`--change-window`).
    #[arg(skip)]
    pub(crate) change_window: Option<usize>,
    /// `[history] stale_after`: how long a workload × GPU may go without a
    /// run on an accepted branch before the history calls it stale: days
    /// (`14d`) or commits (`30c`).
    #[arg(skip)]
    pub(crate) stale_after: Option<String>,
}

layered!(HistoryOptions {
    url,
    branches,
    window,
    anchor,
    history_record,
    history_timeout,
    change_p,
    change_window,
    stale_after,
});

/// How long a network store may take to answer unless told otherwise.
pub(crate) const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// How many accepted runs a rolling baseline takes unless told otherwise.
pub(crate) const DEFAULT_WINDOW: usize = 5;
/// The branches whose passing runs are baseline material unless told otherwise.
pub(crate) const DEFAULT_BRANCHES: &[&str] = &["main"];
/// The change-point test's significance level unless told otherwise (Apache Otava's).
pub(crate) const DEFAULT_CHANGE_P: f64 = 0.001;
/// The change-point test's window unless told otherwise (Apache Otava's).
pub(crate) const DEFAULT_CHANGE_WINDOW: usize = 50;
/// How long a series may go without an accepted run unless told otherwise.
pub(crate) const DEFAULT_STALE_AFTER: &str = "14d";
/// When a check records its run unless told otherwise: on the accepted branches.
pub(crate) const DEFAULT_RECORD: HistoryRecord = HistoryRecord::Auto;

/// Fewest runs on each side of a change point. With 3 the false alarms on
/// resampled GPU noise were 4 times as many (2.25 against 0.52 per 1,000
/// runs) for the same detection: a change is named from its fifth run on.
pub(crate) const MIN_CHANGE_SIDE: usize = 5;

/// The settings of `history changes`' change-point test (`crate::history::changepoint`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ChangeSettings {
    /// The significance level of one test (0 < p < 1).
    pub(crate) p: f64,
    /// Runs searched at once and compared on each side of a change.
    pub(crate) window: usize,
}

/// How long a series may go without a run on an accepted branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StaleAfter {
    /// More than this many days.
    Days(u64),
    /// More than this many commits recorded on an accepted branch since.
    Commits(u64),
}

impl StaleAfter {
    /// `14d` or `30c` (a number ≥ 1 and its unit); `None` for anything else.
    pub(crate) fn parse(text: &str) -> Option<StaleAfter> {
        let text = text.trim();
        let number = |n: &str| n.parse::<u64>().ok().filter(|n| *n >= 1);
        if let Some(days) = text.strip_suffix('d') {
            return number(days).map(StaleAfter::Days);
        }
        number(text.strip_suffix('c')?).map(StaleAfter::Commits)
    }

    /// As messages state it: `14 days`, `30 commits`.
    pub(crate) fn shown(self) -> String {
        match self {
            StaleAfter::Days(n) => format!("{n} day{}", if n == 1 { "" } else { "s" }),
            StaleAfter::Commits(n) => format!("{n} commit{}", if n == 1 { "" } else { "s" }),
        }
    }
}

/// When `check` records its run in the history (`--history-record`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HistoryRecord {
    /// On the accepted branches only.
    #[default]
    Auto,
    /// On every branch (its runs are kept, but only an accepted branch's are baseline material).
    Always,
    /// Never: the check only reads the history.
    Never,
}

value_enum!(HistoryRecord {
    Auto = "auto": "On the accepted branches only",
    Always = "always": "On every branch (its runs are kept, but only an accepted branch's are baseline material)",
    Never = "never": "Never: the check only reads the history",
});

impl HistoryOptions {
    /// The accepted runs a rolling baseline takes: given, else
    /// [`DEFAULT_WINDOW`]; none is an error.
    pub(crate) fn window(&self) -> Result<usize> {
        match self.window.unwrap_or(DEFAULT_WINDOW) {
            0 => Err(HistoryError::WindowZero.into()),
            window => Ok(window),
        }
    }

    /// The branches whose passing runs are baseline material: given, else
    /// [`DEFAULT_BRANCHES`].
    pub(crate) fn branches(&self) -> Vec<String> {
        self.branches
            .clone()
            .unwrap_or_else(|| DEFAULT_BRANCHES.iter().map(|b| b.to_string()).collect())
    }

    /// How long a network store may take to answer: given, else
    /// [`DEFAULT_TIMEOUT`].
    pub(crate) fn timeout(&self) -> std::time::Duration {
        self.history_timeout
            .map_or(DEFAULT_TIMEOUT, |s| std::time::Duration::from_secs(s.get()))
    }

    /// The change-point test's settings: given, else [`DEFAULT_CHANGE_P`]
    /// and [`DEFAULT_CHANGE_WINDOW`]; p must lie in (0, 0.5], the window
    /// hold two sides of [`MIN_CHANGE_SIDE`] runs.
    pub(crate) fn change(&self) -> Result<ChangeSettings> {
        let p = self.change_p.unwrap_or(DEFAULT_CHANGE_P);
        if !(p > 0.0 && p <= 0.5) {
            return Err(HistoryError::BadSetting {
                setting: "change_p",
                value: p.to_string(),
                expected: "a significance level above 0 and at most 0.5 (default 0.001)".into(),
            }
            .into());
        }
        let window = self.change_window.unwrap_or(DEFAULT_CHANGE_WINDOW);
        if window < 2 * MIN_CHANGE_SIDE {
            return Err(HistoryError::BadSetting {
                setting: "change_window",
                value: window.to_string(),
                expected: format!("at least {} runs (default 50)", 2 * MIN_CHANGE_SIDE),
            }
            .into());
        }
        Ok(ChangeSettings { p, window })
    }

    /// How long a series may go without an accepted run: given, else
    /// [`DEFAULT_STALE_AFTER`].
    pub(crate) fn stale_after(&self) -> Result<StaleAfter> {
        let text = self.stale_after.as_deref().unwrap_or(DEFAULT_STALE_AFTER);
        StaleAfter::parse(text).ok_or_else(|| {
            HistoryError::BadSetting {
                setting: "stale_after",
                value: text.to_string(),
                expected: "days as `14d` or commits as `30c` (default 14d)".into(),
            }
            .into()
        })
    }

    /// When the check records its run: given, else [`DEFAULT_RECORD`].
    pub fn record(&self) -> HistoryRecord {
        self.history_record.unwrap_or(DEFAULT_RECORD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Layer;

    #[test]
    fn the_table_keeps_its_keys_and_refuses_the_checks_own_flags() {
        let read: HistoryOptions = toml::from_str(
            "url = \"sqlite:h.sqlite\"\nbranches = [\"main\", \"release\"]\nanchor = \"v1\"\nwindow = 3",
        )
        .unwrap();
        assert_eq!(read.url.as_deref(), Some("sqlite:h.sqlite"));
        assert_eq!(read.branches(), ["main", "release"]);
        assert_eq!(
            (read.anchor.as_deref(), read.window().unwrap()),
            (Some("v1"), 3)
        );
        let e = toml::from_str::<HistoryOptions>("history_record = \"never\"").unwrap_err();
        assert!(
            e.message().contains("unknown field `history_record`"),
            "{e}"
        );
    }

    #[test]
    fn change_and_staleness_settings_read_from_the_table_and_are_checked() {
        let none = HistoryOptions::default();
        assert_eq!(
            none.change().unwrap(),
            ChangeSettings {
                p: DEFAULT_CHANGE_P,
                window: DEFAULT_CHANGE_WINDOW
            }
        );
        assert_eq!(none.stale_after().unwrap(), StaleAfter::Days(14));
        let read: HistoryOptions =
            toml::from_str("change_p = 0.01\nchange_window = 30\nstale_after = \"30c\"").unwrap();
        assert_eq!(
            read.change().unwrap(),
            ChangeSettings {
                p: 0.01,
                window: 30
            }
        );
        assert_eq!(read.stale_after().unwrap(), StaleAfter::Commits(30));
        for bad in [0.0, -0.1, 0.6, f64::NAN] {
            let o = HistoryOptions {
                change_p: Some(bad),
                ..HistoryOptions::default()
            };
            assert!(o.change().is_err(), "{bad}");
        }
        let short = HistoryOptions {
            change_window: Some(2 * MIN_CHANGE_SIDE - 1),
            ..HistoryOptions::default()
        };
        assert!(short.change().is_err());
    }

    #[test]
    fn unset_settings_take_their_defaults_and_a_window_of_none_is_refused() {
        let none = HistoryOptions::default();
        assert_eq!(none.window().unwrap(), DEFAULT_WINDOW);
        assert_eq!(none.branches(), DEFAULT_BRANCHES);
        assert_eq!(
            (none.record(), DEFAULT_RECORD),
            (HistoryRecord::default(), HistoryRecord::Auto)
        );
        let zero = HistoryOptions {
            window: Some(0),
            ..HistoryOptions::default()
        };
        assert!(zero.over(none).window().is_err());
        // An empty list is a setting: no branch is accepted.
        let empty = HistoryOptions {
            branches: Some(Vec::new()),
            ..HistoryOptions::default()
        };
        assert!(empty.branches().is_empty());
    }
}
