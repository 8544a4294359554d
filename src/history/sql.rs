//! The SQL both history stores run, written once: migrating, recording,
//! accepting and reading runs over a [`Tx`] (a connection or transaction of
//! either driver) and the [`Row`]s it returns. The driver files keep only
//! what differs: connecting, locking writers out of each other, SQLite's
//! busy waiting and each driver's errors.

use super::record::{RunRecord, Value};
use super::store::{
    self, Dialect, Entry, Pick, Point, Provenance, Query, Recorded, RunHead, StoredRun, status_name,
};
use std::borrow::Cow;
use std::collections::HashMap;

/// A statement parameter, typed as its column is: PostgreSQL checks the
/// Rust type against the column's (`INTEGER` is an `i32` there), SQLite
/// stores both integers alike.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Param<'a> {
    /// `TEXT`.
    Text(&'a str),
    /// `TEXT` or `NULL`.
    TextOrNull(Option<&'a str>),
    /// `BIGINT`: ids, times, counts.
    Big(i64),
    /// `INTEGER`: flags and status codes.
    Int(i32),
    /// `DOUBLE PRECISION` or `NULL`.
    Real(Option<f64>),
}

/// A connection or a transaction of either driver: what the shared SQL
/// needs of it. Statements come with numbered placeholders `?1` (or in the
/// store's dialect already, as [`store::series_sql`] writes them); an impl
/// for a dialect that spells them otherwise rewrites them ([`placeholders`])
/// as it prepares them, so each statement is written once.
pub(crate) trait Tx {
    /// The driver's error.
    type Error;
    /// The store's SQL dialect: how its migrations and queries are written.
    const DIALECT: Dialect;
    /// Runs `sql`, statements without parameters (a migration).
    fn batch(&mut self, sql: &str) -> Result<(), Self::Error>;
    /// Runs one statement; the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, Self::Error>;
    /// Runs an `INSERT` of one row into a table keyed by `id`; the new row's
    /// id (SQLite's last row id; PostgreSQL adds `RETURNING id`).
    fn insert(&mut self, sql: &str, params: &[Param<'_>]) -> Result<i64, Self::Error>;
    /// Runs a query; each row as `read` makes it.
    fn query<T>(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        read: impl FnMut(&dyn Row<Error = Self::Error>) -> Result<T, Self::Error>,
    ) -> Result<Vec<T>, Self::Error>;
    /// Runs a query that has a row (no row is the driver's error); the row
    /// as `read` makes it.
    fn query_one<T>(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        read: impl FnOnce(&dyn Row<Error = Self::Error>) -> Result<T, Self::Error>,
    ) -> Result<T, Self::Error>;
}

/// A result row of either database's driver, read by column number: what
/// [`point`], [`picked`] and the write path need of it.
pub(crate) trait Row {
    /// The driver's error.
    type Error;
    /// A `TEXT` column.
    fn text(&self, i: usize) -> Result<String, Self::Error>;
    /// A `BIGINT` column.
    fn big(&self, i: usize) -> Result<i64, Self::Error>;
    /// An `INTEGER` column.
    fn int(&self, i: usize) -> Result<i64, Self::Error>;
    /// A `DOUBLE PRECISION` column that may be `NULL`.
    fn real(&self, i: usize) -> Result<Option<f64>, Self::Error>;
}

/// `sql`, written with numbered placeholders (`?1`), in `dialect`:
/// PostgreSQL numbers them `$1`. The statements here hold no other `?`.
pub(crate) fn placeholders(sql: &str, dialect: Dialect) -> Cow<'_, str> {
    match dialect {
        Dialect::Sqlite => Cow::Borrowed(sql),
        Dialect::Postgres => Cow::Owned(sql.replace('?', "$")),
    }
}

/// Brings the schema up to date in `tx`, which the caller commits; the
/// version found when it is newer than this ncugate's (then nothing is
/// migrated, and the caller leaves the store as it was).
pub(crate) fn migrate<T: Tx>(tx: &mut T) -> Result<Option<i64>, T::Error> {
    tx.batch("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)")?;
    let found = tx.query_one(
        "SELECT COALESCE(MAX(version), 0) FROM schema_version",
        &[],
        |r| r.big(0),
    )?;
    if found > store::SCHEMA_VERSION {
        return Ok(Some(found));
    }
    for (i, template) in store::MIGRATIONS.iter().enumerate().skip(found as usize) {
        tx.batch(&store::migration_sql(template, T::DIALECT))?;
        tx.execute(
            "INSERT INTO schema_version (version) VALUES (?1)",
            &[Param::Big(i as i64 + 1)],
        )?;
    }
    Ok(None)
}

/// The schema version of the store, read without writing: 0 when it has
/// no `schema_version` table (an empty file or database: no history yet).
pub(crate) fn version<T: Tx>(tx: &mut T) -> Result<i64, T::Error> {
    let exists = match T::DIALECT {
        Dialect::Sqlite => {
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        }
        Dialect::Postgres => {
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'schema_version'"
        }
    };
    if tx.query_one(exists, &[], |r| r.big(0))? == 0 {
        return Ok(0);
    }
    tx.query_one(
        "SELECT COALESCE(MAX(version), 0) FROM schema_version",
        &[],
        |r| r.big(0),
    )
}

/// Adds the runs made at `at` in `tx`, which the caller began as a write
/// (so that no other writer comes between reading a run and replacing it)
/// and commits; the same report for the same workload, GPU and commit is
/// one run.
pub(crate) fn record_all<T: Tx>(
    tx: &mut T,
    at: &Provenance,
    runs: &[Entry<'_>],
) -> Result<Vec<Recorded>, T::Error> {
    use Param::{Big, Int, Text};
    let mut series = HashMap::new();
    let mut done = Vec::with_capacity(runs.len());
    for entry in runs {
        let run = entry.run;
        let accepted = Int(i32::from(entry.accepted));
        // At most one row: a run is unique by workload, GPU and commit.
        let existing = tx
            .query(
                "SELECT id, report_sha256 FROM runs WHERE workload = ?1 AND gpu = ?2 AND commit_sha = ?3",
                &[Text(&run.workload), Text(&run.gpu), Text(&at.commit)],
                |r| Ok((r.big(0)?, r.text(1)?)),
            )?
            .into_iter()
            .next();
        let (id, recorded) = match existing {
            Some((_, digest)) if digest == run.digest => {
                done.push(Recorded::Unchanged);
                continue;
            }
            Some((id, _)) => {
                tx.execute("DELETE FROM run_values WHERE run_id = ?1", &[Big(id)])?;
                tx.execute(
                    "UPDATE runs SET branch = ?2, at = ?3, outcome = ?4, report_sha256 = ?5, accepted = ?6, kernel_key = ?7 WHERE id = ?1",
                    &[Big(id), Text(&at.branch), Big(at.time), Text(&run.outcome), Text(&run.digest), accepted, Text(&run.kernel_key)],
                )?;
                (id, Recorded::Replaced)
            }
            None => {
                let id = tx.insert(
                    "INSERT INTO runs (workload, gpu, commit_sha, branch, at, outcome, report_sha256, accepted, kernel_key) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    &[Text(&run.workload), Text(&run.gpu), Text(&at.commit), Text(&at.branch), Big(at.time), Text(&run.outcome), Text(&run.digest), accepted, Text(&run.kernel_key)],
                )?;
                (id, Recorded::Added)
            }
        };
        insert_values(tx, id, run, &mut series)?;
        done.push(recorded);
    }
    Ok(done)
}

/// A series as the stores look it up: workload, GPU, kernel, rule, metric, aggregate, unit.
type SeriesKey = (String, String, String, String, String, String, String);

/// The values of run `id`, each under its (interned) series; `series` keeps
/// the ids already looked up in this transaction.
fn insert_values<T: Tx>(
    tx: &mut T,
    id: i64,
    run: &RunRecord,
    series: &mut HashMap<SeriesKey, i64>,
) -> Result<(), T::Error> {
    use Param::{Big, Int, Real, Text};
    for v in &run.values {
        let key: SeriesKey = (
            run.workload.clone(),
            run.gpu.clone(),
            v.kernel.clone(),
            v.rule.clone(),
            v.metric.clone(),
            v.aggregate.clone(),
            v.unit.clone(),
        );
        let series_id = match series.get(&key) {
            Some(&id) => id,
            None => {
                let p = [
                    Text(&key.0),
                    Text(&key.1),
                    Text(&key.2),
                    Text(&key.3),
                    Text(&key.4),
                    Text(&key.5),
                    Text(&key.6),
                ];
                // An earlier run may have added the series: add it unless it
                // is there, then read its id either way.
                tx.execute(
                    "INSERT INTO series (workload, gpu, kernel, rule, metric, aggregate, unit) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING",
                    &p,
                )?;
                let found = tx.query_one(
                    "SELECT id FROM series WHERE workload = ?1 AND gpu = ?2 AND kernel = ?3 AND rule = ?4 AND metric = ?5 AND aggregate = ?6 AND unit = ?7",
                    &p,
                    |r| r.big(0),
                )?;
                series.insert(key, found);
                found
            }
        };
        tx.execute(
            "INSERT INTO run_values (run_id, series_id, mean, samples, status) VALUES (?1, ?2, ?3, ?4, ?5)",
            &[
                Big(id),
                Big(series_id),
                Real(v.mean),
                Text(&store::samples_text(&v.samples, v.mean)),
                Int(store::status_code(&v.status)),
            ],
        )?;
    }
    Ok(())
}

/// Makes every run of `commit` baseline material; the number of runs.
pub(crate) fn accept<T: Tx>(tx: &mut T, commit: &str) -> Result<u64, T::Error> {
    tx.execute(
        "UPDATE runs SET accepted = 1 WHERE commit_sha = ?1",
        &[Param::Text(commit)],
    )
}

/// The verdict cache entry of `workload` under `digest`, else its newest.
pub(crate) fn verdict<T: Tx>(
    tx: &mut T,
    workload: &str,
    digest: &str,
) -> Result<Option<String>, T::Error> {
    use Param::Text;
    let exact = tx.query(
        "SELECT entry FROM verdicts WHERE workload = ?1 AND digest = ?2",
        &[Text(workload), Text(digest)],
        |r| r.text(0),
    )?;
    if let Some(entry) = exact.into_iter().next() {
        return Ok(Some(entry));
    }
    let newest = tx.query(
        "SELECT entry FROM verdicts WHERE workload = ?1 ORDER BY at DESC LIMIT 1",
        &[Text(workload)],
        |r| r.text(0),
    )?;
    Ok(newest.into_iter().next())
}

/// Keeps `entry` as the verdict of `workload` under `digest` (replacing one kept before).
pub(crate) fn keep_verdict<T: Tx>(
    tx: &mut T,
    workload: &str,
    digest: &str,
    at: i64,
    entry: &str,
) -> Result<(), T::Error> {
    use Param::{Big, Text};
    tx.execute(
        "INSERT INTO verdicts (workload, digest, at, entry) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (workload, digest) DO UPDATE SET at = excluded.at, entry = excluded.entry",
        &[Text(workload), Text(digest), Big(at), Text(entry)],
    )
    .map(|_| ())
}

/// The values of the series `query` selects, by series, oldest first.
pub(crate) fn series<T: Tx>(tx: &mut T, query: &Query) -> Result<Vec<Point>, T::Error> {
    let sql = store::series_sql(T::DIALECT);
    let p =
        [&query.workload, &query.kernel, &query.metric].map(|p| Param::TextOrNull(p.as_deref()));
    tx.query(&sql, &p, |r| point(r))
}

/// The runs of `workload` on `gpu` that `pick` names, oldest first, with their values.
pub(crate) fn pick<T: Tx>(
    tx: &mut T,
    workload: &str,
    gpu: &str,
    pick: Pick<'_>,
) -> Result<Vec<StoredRun>, T::Error> {
    let sql = store::pick_sql(T::DIALECT, pick);
    let third = match pick {
        Pick::LastAccepted(n) => Param::Big(n.min(i64::MAX as usize) as i64),
        Pick::Commit(c) => Param::Text(c),
    };
    let rows = tx.query(
        &sql,
        &[Param::Text(workload), Param::Text(gpu), third],
        |r| picked(r),
    )?;
    Ok(group_runs(rows))
}

/// How many accepted runs of `workload` on `gpu` were made after `run`
/// (later, or in the same second and recorded after it).
pub(crate) fn accepted_after<T: Tx>(
    tx: &mut T,
    workload: &str,
    gpu: &str,
    run: &StoredRun,
) -> Result<u64, T::Error> {
    use Param::{Big, Text};
    tx.query_one(
        "SELECT COUNT(*) FROM runs WHERE workload = ?1 AND gpu = ?2 AND accepted = 1 AND (at > ?3 OR (at = ?3 AND id > ?4))",
        &[Text(workload), Text(gpu), Big(run.time), Big(run.id)],
        |r| r.big(0),
    )
    .map(|n| n as u64)
}

/// Every run's head, oldest first: one row per run, from `runs` alone.
pub(crate) fn heads<T: Tx>(tx: &mut T) -> Result<Vec<RunHead>, T::Error> {
    tx.query(
        "SELECT workload, gpu, commit_sha, branch, at FROM runs ORDER BY at, id",
        &[],
        |r| {
            Ok(RunHead {
                workload: r.text(0)?,
                gpu: r.text(1)?,
                commit: r.text(2)?,
                branch: r.text(3)?,
                time: r.big(4)?,
            })
        },
    )
}

/// A row of [`store::series_sql`].
pub(crate) fn point<R: Row + ?Sized>(r: &R) -> Result<Point, R::Error> {
    Ok(Point {
        workload: r.text(0)?,
        gpu: r.text(1)?,
        kernel: r.text(2)?,
        rule: r.text(3)?,
        metric: r.text(4)?,
        aggregate: r.text(5)?,
        unit: r.text(6)?,
        commit: r.text(7)?,
        branch: r.text(8)?,
        time: r.big(9)?,
        accepted: r.int(10)? != 0,
        outcome: r.text(11)?,
        mean: r.real(12)?,
        status: status_name(r.int(13)?),
    })
}

/// A row of [`store::pick_sql`]: run id, commit, time, kernel key mode,
/// value, and what is damaged in the value as stored (`None`: nothing).
pub(crate) type PickedRow = (i64, String, i64, String, Value, Option<String>);

/// A row of [`store::pick_sql`].
pub(crate) fn picked<R: Row + ?Sized>(r: &R) -> Result<PickedRow, R::Error> {
    let mean = r.real(8)?;
    let text = r.text(9)?;
    let (samples, damaged) = match store::samples_read(&text, mean) {
        Some(samples) => (samples, None),
        None => (Vec::new(), Some(text)),
    };
    let value = Value {
        kernel: r.text(3)?,
        rule: r.text(4)?,
        metric: r.text(5)?,
        aggregate: r.text(6)?,
        unit: r.text(7)?,
        mean,
        samples,
        status: status_name(r.int(10)?),
    };
    let damaged = damaged.map(|text| {
        let kernel = if value.kernel.is_empty() {
            "(total)"
        } else {
            &value.kernel
        };
        let shown: String = text.chars().take(40).collect();
        format!(
            "the samples of {} · {} are not a list of finite numbers ({:?})",
            super::show::escaped(kernel),
            super::show::escaped(&value.rule),
            super::show::escaped(&shown)
        )
    });
    Ok((
        r.big(0)?,
        r.text(1)?,
        r.big(2)?,
        r.text(11)?,
        value,
        damaged,
    ))
}

/// Rows of [`store::pick_sql`] grouped into runs.
pub(crate) fn group_runs(rows: Vec<PickedRow>) -> Vec<StoredRun> {
    let mut out: Vec<StoredRun> = Vec::new();
    let mut last_id = None;
    for (id, commit, time, kernel_key, value, damaged) in rows {
        if last_id != Some(id) {
            last_id = Some(id);
            out.push(StoredRun {
                id,
                commit,
                time,
                kernel_key,
                values: Vec::new(),
                damaged: None,
            });
        }
        if let Some(run) = out.last_mut() {
            run.values.push(value);
            if run.damaged.is_none() {
                run.damaged = damaged;
            }
        }
    }
    out
}
