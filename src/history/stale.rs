//! Missing data: a workload × GPU of the history whose runner stopped
//! reporting. Each one that has ever been run on an accepted branch
//! (`[history] branches`) is stale when its last such run is older than
//! `[history] stale_after`: more than N days before now (`14d`), or more
//! than N other commits recorded on an accepted branch since (`30c`).
//! `history show` and `changes` list them; a check that records its run
//! warns about the others (never fails: the missing runs are not this one's).

pub(crate) use crate::options::history::StaleAfter;

use super::store::RunHead;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Seconds in a day.
const DAY: i64 = 86_400;

/// A workload × GPU with no recent run on an accepted branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Stale {
    pub(crate) workload: String,
    pub(crate) gpu: String,
    /// Its last run on an accepted branch.
    pub(crate) last_commit: String,
    pub(crate) last_branch: String,
    /// RFC 3339, UTC.
    pub(crate) last_time: String,
    /// Whole days since then.
    pub(crate) days: i64,
    /// Commits recorded on an accepted branch since then (any workload).
    pub(crate) commits: usize,
}

/// The stale workload × GPU pairs among `runs` (every run of the store),
/// by name; `now` in seconds since the Unix epoch.
pub(crate) fn find(
    runs: &[RunHead],
    branches: &[String],
    after: StaleAfter,
    now: i64,
) -> Vec<Stale> {
    let on_branch: Vec<&RunHead> = runs
        .iter()
        .filter(|p| branches.contains(&p.branch))
        .collect();
    let mut last: BTreeMap<(&str, &str), &RunHead> = BTreeMap::new();
    for p in &on_branch {
        let slot = last.entry((&p.workload, &p.gpu)).or_insert(p);
        if p.time > slot.time {
            *slot = p;
        }
    }
    last.into_values()
        .filter_map(|p| {
            let commits: BTreeSet<&str> = on_branch
                .iter()
                .filter(|q| q.time > p.time && q.commit != p.commit)
                .map(|q| q.commit.as_str())
                .collect();
            let age = now.saturating_sub(p.time);
            let stale = match after {
                StaleAfter::Days(n) => {
                    age > i64::try_from(n).unwrap_or(i64::MAX).saturating_mul(DAY)
                }
                StaleAfter::Commits(n) => commits.len() as u64 > n,
            };
            stale.then(|| Stale {
                workload: p.workload.clone(),
                gpu: p.gpu.clone(),
                last_commit: p.commit.clone(),
                last_branch: p.branch.clone(),
                last_time: jiff::Timestamp::from_second(p.time)
                    .map(|t| t.to_string())
                    .unwrap_or_else(|_| p.time.to_string()),
                days: age / DAY,
                commits: commits.len(),
            })
        })
        .collect()
}

/// One stale pair as a line (no newline), its names escaped.
pub(crate) fn line(s: &Stale, after: StaleAfter) -> String {
    use super::show::{escaped, short};
    format!(
        "stale: workload `{}` on {} has no run on an accepted branch for {} day(s) and {} commit(s) (last {} on {}, {}; [history] stale_after = {})",
        escaped(&s.workload),
        escaped(&s.gpu),
        s.days,
        s.commits,
        short(&s.last_commit),
        escaped(&s.last_branch),
        escaped(&s.last_time),
        after.shown(),
    )
}

/// The stale pairs as the text views end: a line each, `ncugate: ` first,
/// wrapped to the terminal's width.
pub(crate) fn render(stale: &[Stale], after: StaleAfter) -> String {
    stale
        .iter()
        .map(|s| {
            let text = format!("ncugate: {}", line(s, after));
            let width = crate::report::terminal::width();
            crate::report::columns::wrap(&text, width, "", "  ") + "\n"
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(workload: &str, commit: &str, branch: &str, time: i64) -> RunHead {
        RunHead {
            workload: workload.into(),
            gpu: "H200".into(),
            commit: commit.into(),
            branch: branch.into(),
            time,
        }
    }

    #[test]
    fn the_setting_reads_days_or_commits() {
        assert_eq!(StaleAfter::parse("14d"), Some(StaleAfter::Days(14)));
        assert_eq!(StaleAfter::parse(" 30c "), Some(StaleAfter::Commits(30)));
        for bad in ["", "d", "0d", "14", "14w", "-1d", "1.5d", "é"] {
            assert_eq!(StaleAfter::parse(bad), None, "{bad}");
        }
        assert_eq!(StaleAfter::Days(1).shown(), "1 day");
    }

    #[test]
    fn a_workload_that_stopped_reporting_on_main_is_stale() {
        let main = vec!["main".to_string()];
        let points = [
            point("old", "c1", "main", 0),
            point("live", "c1", "main", 0),
            point("live", "c2", "main", 10 * DAY),
            point("live", "c3", "main", 20 * DAY),
            // A pull request's runs do not keep a workload fresh.
            point("old", "c9", "pr-7", 20 * DAY),
            // Never run on main: a workload of a pull request, not a stale one.
            point("new", "c9", "pr-7", 0),
        ];
        let stale = find(&points, &main, StaleAfter::Days(14), 20 * DAY);
        assert_eq!(stale.len(), 1, "{stale:?}");
        assert_eq!(
            (stale[0].workload.as_str(), stale[0].days, stale[0].commits),
            ("old", 20, 2)
        );
        assert!(find(&points, &main, StaleAfter::Days(20), 20 * DAY).is_empty());
        let by_commits = find(&points, &main, StaleAfter::Commits(1), 20 * DAY);
        assert_eq!(by_commits.len(), 1);
        assert!(find(&points, &main, StaleAfter::Commits(2), 20 * DAY).is_empty());
        assert!(line(&stale[0], StaleAfter::Days(14)).contains("`old` on H200"));
    }
}
