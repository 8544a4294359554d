//! The history store: one [`Store`] trait, one schema for both databases
//! with its migrations and queries, and the rows a store returns (the code
//! that runs them on either driver is [`super::sql`]). A run is a workload ×
//! GPU × commit; its values are stored per series (workload × GPU × kernel ×
//! rule × metric × aggregate × unit, interned once, so a run costs a row per value and
//! no repeated names).

use super::record::RunRecord;
use crate::error::Result;

/// Where and when a run was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Provenance {
    pub(crate) commit: String,
    pub(crate) branch: String,
    /// Seconds since the Unix epoch.
    pub(crate) time: i64,
}

/// A run to add, and whether it is baseline material.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry<'a> {
    pub(crate) run: &'a RunRecord,
    pub(crate) accepted: bool,
}

/// What recording a run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// A run the store did not have.
    Added,
    /// The same report for the same commit: nothing changed.
    Unchanged,
    /// Another report of the same workload, GPU and commit: it replaced the one kept.
    Replaced,
}

/// Which series `history show` reads.
#[derive(Debug, Clone, Default)]
pub(crate) struct Query {
    pub(crate) workload: Option<String>,
    pub(crate) kernel: Option<String>,
    pub(crate) metric: Option<String>,
}

/// One value of one series at one run, oldest first in a series.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Point {
    pub(crate) workload: String,
    pub(crate) gpu: String,
    pub(crate) kernel: String,
    pub(crate) rule: String,
    pub(crate) metric: String,
    pub(crate) aggregate: String,
    pub(crate) unit: String,
    pub(crate) commit: String,
    pub(crate) branch: String,
    pub(crate) time: i64,
    pub(crate) accepted: bool,
    pub(crate) outcome: String,
    pub(crate) mean: Option<f64>,
    pub(crate) status: String,
}

/// One run's where and when, without its values: what staleness reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunHead {
    pub(crate) workload: String,
    pub(crate) gpu: String,
    pub(crate) commit: String,
    pub(crate) branch: String,
    /// Seconds since the Unix epoch.
    pub(crate) time: i64,
}

/// A history database.
pub(crate) trait Store {
    /// Adds the runs made at `at` in one transaction; the same report for
    /// the same workload, GPU and commit is one run.
    fn record(&mut self, at: &Provenance, runs: &[Entry<'_>]) -> Result<Vec<Recorded>>;
    /// Makes every run of `commit` baseline material; the number of runs.
    fn accept(&mut self, commit: &str) -> Result<u64>;
    /// The values of the series `query` selects, by series, oldest first.
    fn series(&mut self, query: &Query) -> Result<Vec<Point>>;
    /// The runs of `workload` on `gpu` that `pick` names, oldest first, with their values.
    fn pick(&mut self, workload: &str, gpu: &str, pick: Pick<'_>) -> Result<Vec<StoredRun>>;
    /// How many accepted runs of `workload` on `gpu` were made after `run`
    /// (later, or in the same second and recorded after it).
    fn accepted_after(&mut self, workload: &str, gpu: &str, run: &StoredRun) -> Result<u64>;
    /// Every run's workload, GPU, commit, branch and time (no values), oldest first.
    fn heads(&mut self) -> Result<Vec<RunHead>>;
    /// The verdict cache entry (`crate::skip`) of `workload` kept under
    /// `digest`, else its newest one (which names what changed); its text.
    fn verdict(&mut self, workload: &str, digest: &str) -> Result<Option<String>>;
    /// Keeps `entry` as the verdict of `workload` under `digest`, made at `at`.
    fn keep_verdict(&mut self, workload: &str, digest: &str, at: i64, entry: &str) -> Result<()>;
}

/// Which runs of one workload on one GPU a check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pick<'a> {
    /// The last N accepted runs: a rolling baseline.
    LastAccepted(usize),
    /// The run of one commit: the anchor creep is measured from.
    Commit(&'a str),
}

/// A run read back with its values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StoredRun {
    /// The store's number for the run: later records have larger ones.
    pub(crate) id: i64,
    pub(crate) commit: String,
    pub(crate) time: i64,
    /// The kernel key mode the run's report used (empty: recorded before it was kept).
    pub(crate) kernel_key: String,
    pub(crate) values: Vec<super::record::Value>,
    /// What is damaged in the run as stored (a value's samples that do not
    /// read): a check refuses to compare with it
    /// ([`super::rolling::intact`]).
    pub(crate) damaged: Option<String>,
}

/// The query behind [`Store::pick`] in `dialect`: parameters workload, gpu,
/// then the window's length or the commit; one row per value (read by
/// [`super::sql::picked`]), the run's id first, then commit, time, kernel,
/// rule, metric, aggregate, unit, mean, samples, status, kernel key mode;
/// oldest run first.
pub(crate) fn pick_sql(dialect: Dialect, pick: Pick<'_>) -> String {
    let p = |i: usize| match dialect {
        Dialect::Sqlite => format!("?{i}"),
        Dialect::Postgres => format!("${i}"),
    };
    let chosen = match pick {
        Pick::LastAccepted(_) => format!(
            "SELECT id, commit_sha, at, kernel_key FROM runs WHERE workload = {} AND gpu = {} AND accepted = 1 ORDER BY at DESC, id DESC LIMIT {}",
            p(1),
            p(2),
            p(3)
        ),
        Pick::Commit(_) => format!(
            "SELECT id, commit_sha, at, kernel_key FROM runs WHERE workload = {} AND gpu = {} AND commit_sha = {}",
            p(1),
            p(2),
            p(3)
        ),
    };
    format!(
        "WITH chosen AS ({chosen})
        SELECT c.id, c.commit_sha, c.at, s.kernel, s.rule, s.metric, s.aggregate, s.unit, v.mean, v.samples, v.status, c.kernel_key
        FROM chosen c JOIN run_values v ON v.run_id = c.id JOIN series s ON s.id = v.series_id
        ORDER BY c.at, c.id"
    )
}

/// The query behind [`Store::series`] in `dialect`: parameters workload,
/// kernel (a part of it), metric (a part of it, or the rule's name), each
/// `NULL` for any; one row per value, read by [`super::sql::point`]; by
/// series, oldest first.
pub(crate) fn series_sql(dialect: Dialect) -> String {
    let (p, contains) = match dialect {
        Dialect::Sqlite => (["?1", "?2", "?3"], "instr"),
        Dialect::Postgres => (["$1::TEXT", "$2::TEXT", "$3::TEXT"], "strpos"),
    };
    let [workload, kernel, metric] = p;
    format!(
        "SELECT s.workload, s.gpu, s.kernel, s.rule, s.metric, s.aggregate, s.unit,
                r.commit_sha, r.branch, r.at, r.accepted, r.outcome, v.mean, v.status
            FROM run_values v JOIN series s ON s.id = v.series_id JOIN runs r ON r.id = v.run_id
            WHERE ({workload} IS NULL OR s.workload = {workload})
              AND ({kernel} IS NULL OR {contains}(s.kernel, {kernel}) > 0)
              AND ({metric} IS NULL OR {contains}(s.metric, {metric}) > 0 OR s.rule = {metric})
            ORDER BY s.workload, s.gpu, s.kernel, s.rule, s.metric, s.aggregate, r.at, r.id"
    )
}

/// The schema version this ncugate writes and reads.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Each migration, in order: migration `i` takes the schema from version `i`
/// to `i + 1`. Version 2 adds each run's kernel key mode (a rolling
/// baseline groups launches as its runs did) and makes a run smaller:
/// statuses as small integers ([`STATUSES`]), the report digest cut to 128
/// bits, no index by commit alone (`history accept` reads the table through).
/// Version 3 adds the verdict cache of skipped workloads (`verdicts`: one
/// entry per workload and input digest, shared by every runner of the store). `{id}` is the dialect's auto-numbered key, `{ref}` its
/// integer type that refers to one, `{compact}` what a table without a row
/// id of its own says.
pub const MIGRATIONS: &[&str] = &[
    "
CREATE TABLE series (
    id {id},
    workload TEXT NOT NULL,
    gpu TEXT NOT NULL,
    kernel TEXT NOT NULL,
    rule TEXT NOT NULL,
    metric TEXT NOT NULL,
    aggregate TEXT NOT NULL,
    unit TEXT NOT NULL,
    UNIQUE (workload, gpu, kernel, rule, metric, aggregate, unit)
);
CREATE TABLE runs (
    id {id},
    workload TEXT NOT NULL,
    gpu TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    branch TEXT NOT NULL,
    at BIGINT NOT NULL,
    outcome TEXT NOT NULL,
    report_sha256 TEXT NOT NULL,
    accepted INTEGER NOT NULL,
    UNIQUE (workload, gpu, commit_sha)
);
CREATE INDEX runs_by_time ON runs (workload, gpu, accepted, at);
CREATE INDEX runs_by_commit ON runs (commit_sha);
CREATE TABLE run_values (
    run_id {ref} NOT NULL,
    series_id {ref} NOT NULL,
    mean DOUBLE PRECISION,
    samples TEXT NOT NULL,
    status TEXT NOT NULL,
    PRIMARY KEY (run_id, series_id)
){compact};
CREATE INDEX run_values_by_series ON run_values (series_id);
",
    "
ALTER TABLE runs ADD COLUMN kernel_key TEXT NOT NULL DEFAULT '';
CREATE TABLE run_values_2 (
    run_id {ref} NOT NULL,
    series_id {ref} NOT NULL,
    mean DOUBLE PRECISION,
    samples TEXT NOT NULL,
    status INTEGER NOT NULL,
    PRIMARY KEY (run_id, series_id)
){compact};
INSERT INTO run_values_2 (run_id, series_id, mean, samples, status)
    SELECT run_id, series_id, mean, samples,
        CASE status WHEN 'pass' THEN 0 WHEN 'fail' THEN 1 WHEN 'warn' THEN 2 WHEN 'improved' THEN 3
            WHEN 'changed' THEN 4 WHEN 'skipped' THEN 5 ELSE 6 END
    FROM run_values;
DROP TABLE run_values;
ALTER TABLE run_values_2 RENAME TO run_values;
CREATE INDEX run_values_by_series ON run_values (series_id);
DROP INDEX runs_by_commit;
UPDATE runs SET report_sha256 = substr(report_sha256, 1, 32);
",
    "
CREATE TABLE verdicts (
    workload TEXT NOT NULL,
    digest TEXT NOT NULL,
    at BIGINT NOT NULL,
    entry TEXT NOT NULL,
    PRIMARY KEY (workload, digest)
){compact};
CREATE INDEX verdicts_by_time ON verdicts (workload, at);
",
];

/// A value's status as stored since schema version 2: its place in this
/// list (a byte in SQLite instead of the word). Anything else reads as `error`.
pub(crate) const STATUSES: [&str; 7] = [
    "pass", "fail", "warn", "improved", "changed", "skipped", "error",
];

/// The stored code of `status`.
pub(crate) fn status_code(status: &str) -> i32 {
    STATUSES
        .iter()
        .position(|s| *s == status)
        .unwrap_or(STATUSES.len() - 1) as i32
}

/// The status a stored code stands for.
pub(crate) fn status_name(code: i64) -> String {
    usize::try_from(code)
        .ok()
        .and_then(|i| STATUSES.get(i))
        .unwrap_or(&"error")
        .to_string()
}

/// The SQL dialects of the two stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// Migration `template` in `dialect`.
pub fn migration_sql(template: &str, dialect: Dialect) -> String {
    let (id, reference, compact) = match dialect {
        Dialect::Sqlite => ("INTEGER PRIMARY KEY", "INTEGER", " WITHOUT ROWID"),
        Dialect::Postgres => ("BIGSERIAL PRIMARY KEY", "BIGINT", ""),
    };
    template
        .replace("{id}", id)
        .replace("{ref}", reference)
        .replace("{compact}", compact)
}

/// The samples of a value as stored: a JSON array of numbers, or empty
/// text for the common case of one run whose value is the mean (a fifth of
/// a run's bytes when every check profiles once).
pub(crate) fn samples_text(samples: &[f64], mean: Option<f64>) -> String {
    if let [one] = samples
        && Some(*one) == mean
    {
        return String::new();
    }
    serde_json::to_string(samples).unwrap_or_else(|_| "[]".into())
}

/// The samples of a value from their stored text and the mean; `None`
/// when the text is no list of finite numbers (a damaged store).
pub(crate) fn samples_read(text: &str, mean: Option<f64>) -> Option<Vec<f64>> {
    if text.is_empty() {
        return Some(mean.into_iter().collect());
    }
    serde_json::from_str::<Vec<f64>>(text)
        .ok()
        .filter(|s| s.iter().all(|v| v.is_finite()))
}

/// Keeps the last `n` points of each series (the points come oldest first).
pub(crate) fn last_per_series(points: Vec<Point>, n: usize) -> Vec<Point> {
    use std::collections::HashMap;
    let key = |p: &Point| {
        (
            p.workload.clone(),
            p.gpu.clone(),
            p.kernel.clone(),
            p.rule.clone(),
            p.metric.clone(),
            p.aggregate.clone(),
        )
    };
    let mut total: HashMap<_, usize> = HashMap::new();
    for p in &points {
        *total.entry(key(p)).or_default() += 1;
    }
    let mut seen: HashMap<_, usize> = HashMap::new();
    points
        .into_iter()
        .filter(|p| {
            let k = key(p);
            let i = seen.entry(k.clone()).or_default();
            *i += 1;
            // The last n of `total`: those with fewer than n after them
            // (no `i + n`, which wraps for the largest n).
            total[&k] - *i < n
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_n_of_a_series_holds_for_the_largest_n() {
        let point = |commit: &str| Point {
            workload: "w".into(),
            gpu: "g".into(),
            kernel: "k".into(),
            rule: "r".into(),
            metric: "m".into(),
            aggregate: "sum".into(),
            unit: "".into(),
            commit: commit.into(),
            branch: "main".into(),
            time: 0,
            accepted: true,
            outcome: "pass".into(),
            mean: Some(1.0),
            status: "pass".into(),
        };
        let points = || vec![point("a"), point("b"), point("c")];
        let commits = |n: usize| -> Vec<String> {
            last_per_series(points(), n)
                .into_iter()
                .map(|p| p.commit)
                .collect()
        };
        assert_eq!(commits(usize::MAX), ["a", "b", "c"]);
        assert_eq!(commits(2), ["b", "c"]);
        assert_eq!(commits(1), ["c"]);
    }

    #[test]
    fn one_sample_equal_to_the_mean_is_stored_as_nothing_and_read_back() {
        for (samples, mean) in [
            (vec![3.5], Some(3.5)),
            (vec![1.0, 2.0], Some(1.5)),
            (vec![2.0], Some(1.0)),
            (vec![], None),
        ] {
            let text = samples_text(&samples, mean);
            assert_eq!(samples_read(&text, mean), Some(samples), "{text:?}");
        }
        assert_eq!(samples_text(&[3.5], Some(3.5)), "");
    }
}
