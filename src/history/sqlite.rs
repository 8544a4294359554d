//! The SQLite store (`sqlite:PATH`), embedded through `rusqlite` with the
//! bundled SQLite, so every runner has the same SQLite whatever its system
//! has. Concurrent writers — parallel CI jobs on one runner — queue instead
//! of failing: the file is in WAL mode (readers never block the writer),
//! every transaction that writes takes the write lock when it begins
//! (`BEGIN IMMEDIATE`, so no reader upgrades into a deadlock) and waits up
//! to [`BUSY_TIMEOUT`] for it.

use super::record::RunRecord;
use super::store::{
    self, Dialect, Entry, Pick, Point, Provenance, Query, Recorded, Store, StoredRun,
};
use crate::error::{Error, Result};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another one before the store is said to be busy.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

/// An open SQLite history.
pub struct Sqlite {
    conn: Connection,
    path: PathBuf,
}

impl Sqlite {
    /// Opens (with `create`, makes) the file and migrates its schema.
    pub fn open(path: &Path, create: bool) -> Result<Sqlite> {
        let shown = format!("sqlite:{}", path.display());
        if !create && !path.exists() {
            return Err(super::store_error(
                &shown,
                "no such file",
                "record runs first (`ncugate history record REPORT.json`), or point --history at the store",
            ));
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let conn = Connection::open_with_flags(path, flags).map_err(|e| fail(path, e))?;
        let mut store = Sqlite {
            conn,
            path: path.to_path_buf(),
        };
        store.prepare().map_err(|e| fail(path, e))?;
        store.migrate()?;
        Ok(store)
    }

    /// Busy waiting, WAL mode. Switching to WAL takes a lock that the busy
    /// handler does not always wait for, so a fresh file's first writers retry.
    fn prepare(&mut self) -> rusqlite::Result<()> {
        self.conn.busy_timeout(BUSY_TIMEOUT)?;
        let start = std::time::Instant::now();
        loop {
            let mode = self
                .conn
                .query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0));
            match mode {
                Err(e) if is_busy(&e) && start.elapsed() < BUSY_TIMEOUT => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => break other.map(|_| ()),
            }
        }?;
        self.conn.pragma_update(None, "synchronous", "NORMAL")
    }

    fn migrate(&mut self) -> Result<()> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| fail(&path, e))?;
        tx.execute_batch("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)")
            .map_err(|e| fail(&path, e))?;
        let found: i64 = tx
            .query_row(
                "SELECT COALESCE(MAX(version), 0) FROM schema_version",
                [],
                |r| r.get(0),
            )
            .map_err(|e| fail(&path, e))?;
        if found > store::SCHEMA_VERSION {
            return Err(super::newer_schema(
                &format!("sqlite:{}", path.display()),
                found,
            ));
        }
        for (i, template) in store::MIGRATIONS.iter().enumerate().skip(found as usize) {
            tx.execute_batch(&store::migration_sql(template, Dialect::Sqlite))
                .map_err(|e| fail(&path, e))?;
            tx.execute(
                "INSERT INTO schema_version (version) VALUES (?1)",
                [i as i64 + 1],
            )
            .map_err(|e| fail(&path, e))?;
        }
        tx.commit().map_err(|e| fail(&path, e))
    }

    fn record_all(
        &mut self,
        at: &Provenance,
        runs: &[Entry<'_>],
    ) -> rusqlite::Result<Vec<Recorded>> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut series: HashMap<store::SeriesKey, i64> = HashMap::new();
        let mut done = Vec::with_capacity(runs.len());
        for entry in runs {
            let run = entry.run;
            let existing: Option<(i64, String)> = tx
                .query_row(
                    "SELECT id, report_sha256 FROM runs WHERE workload = ?1 AND gpu = ?2 AND commit_sha = ?3",
                    params![run.workload, run.gpu, at.commit],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let (id, recorded) = match existing {
                Some((_, digest)) if digest == run.digest => {
                    done.push(Recorded::Unchanged);
                    continue;
                }
                Some((id, _)) => {
                    tx.execute("DELETE FROM run_values WHERE run_id = ?1", [id])?;
                    tx.execute(
                        "UPDATE runs SET branch = ?2, at = ?3, outcome = ?4, report_sha256 = ?5, accepted = ?6, kernel_key = ?7 WHERE id = ?1",
                        params![id, at.branch, at.time, run.outcome, run.digest, entry.accepted as i64, run.kernel_key],
                    )?;
                    (id, Recorded::Replaced)
                }
                None => {
                    tx.execute(
                        "INSERT INTO runs (workload, gpu, commit_sha, branch, at, outcome, report_sha256, accepted, kernel_key) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                        params![run.workload, run.gpu, at.commit, at.branch, at.time, run.outcome, run.digest, entry.accepted as i64, run.kernel_key],
                    )?;
                    (tx.last_insert_rowid(), Recorded::Added)
                }
            };
            insert_values(&tx, id, run, &mut series)?;
            done.push(recorded);
        }
        tx.commit()?;
        Ok(done)
    }
}

/// The values of run `id`, each under its (interned) series.
fn insert_values(
    tx: &rusqlite::Transaction<'_>,
    id: i64,
    run: &RunRecord,
    series: &mut HashMap<store::SeriesKey, i64>,
) -> rusqlite::Result<()> {
    let mut add_series = tx.prepare_cached(
        "INSERT INTO series (workload, gpu, kernel, rule, metric, aggregate, unit) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING",
    )?;
    let mut find_series = tx.prepare_cached(
        "SELECT id FROM series WHERE workload = ?1 AND gpu = ?2 AND kernel = ?3 AND rule = ?4 AND metric = ?5 AND aggregate = ?6 AND unit = ?7",
    )?;
    let mut add_value = tx.prepare_cached(
        "INSERT INTO run_values (run_id, series_id, mean, samples, status) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for v in &run.values {
        let key = store::series_key(run, v);
        let series_id = match series.get(&key) {
            Some(&id) => id,
            None => {
                let p = params![key.0, key.1, key.2, key.3, key.4, key.5, key.6];
                add_series.execute(p)?;
                let found: i64 = find_series.query_row(p, |r| r.get(0))?;
                series.insert(key, found);
                found
            }
        };
        add_value.execute(params![
            id,
            series_id,
            v.mean,
            store::samples_text(&v.samples, v.mean),
            store::status_code(&v.status)
        ])?;
    }
    Ok(())
}

impl Store for Sqlite {
    fn record(&mut self, at: &Provenance, runs: &[Entry<'_>]) -> Result<Vec<Recorded>> {
        let path = self.path.clone();
        self.record_all(at, runs).map_err(|e| fail(&path, e))
    }

    fn accept(&mut self, commit: &str) -> Result<u64> {
        self.conn
            .execute(
                "UPDATE runs SET accepted = 1 WHERE commit_sha = ?1",
                [commit],
            )
            .map(|n| n as u64)
            .map_err(|e| fail(&self.path, e))
    }

    fn series(&mut self, query: &Query) -> Result<Vec<Point>> {
        let sql = store::series_sql(Dialect::Sqlite);
        let read = || -> rusqlite::Result<Vec<Point>> {
            let mut statement = self.conn.prepare(&sql)?;
            let rows = statement
                .query_map(params![query.workload, query.kernel, query.metric], |r| {
                    store::point(r)
                })?;
            rows.collect()
        };
        read().map_err(|e| fail(&self.path, e))
    }

    fn pick(&mut self, workload: &str, gpu: &str, pick: Pick<'_>) -> Result<Vec<StoredRun>> {
        let sql = store::pick_sql(Dialect::Sqlite, pick);
        let read = || -> rusqlite::Result<Vec<StoredRun>> {
            let mut statement = self.conn.prepare_cached(&sql)?;
            let third: rusqlite::types::Value = match pick {
                Pick::LastAccepted(n) => (n.min(i64::MAX as usize) as i64).into(),
                Pick::Commit(c) => c.to_string().into(),
            };
            let rows = statement.query_map(params![workload, gpu, third], |r| store::picked(r))?;
            Ok(store::group_runs(rows.collect::<rusqlite::Result<_>>()?))
        };
        read().map_err(|e| fail(&self.path, e))
    }

    fn accepted_after(&mut self, workload: &str, gpu: &str, run: &StoredRun) -> Result<u64> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM runs WHERE workload = ?1 AND gpu = ?2 AND accepted = 1 AND (at > ?3 OR (at = ?3 AND id > ?4))",
                params![workload, gpu, run.time, run.id],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(|e| fail(&self.path, e))
    }

    fn runs(&mut self) -> Result<u64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| fail(&self.path, e))
    }
}

impl store::Row for rusqlite::Row<'_> {
    type Error = rusqlite::Error;
    fn text(&self, i: usize) -> rusqlite::Result<String> {
        self.get(i)
    }
    fn big(&self, i: usize) -> rusqlite::Result<i64> {
        self.get(i)
    }
    fn int(&self, i: usize) -> rusqlite::Result<i64> {
        self.get(i)
    }
    fn real(&self, i: usize) -> rusqlite::Result<Option<f64>> {
        self.get(i)
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// A SQLite failure as the one error line and its hint.
fn fail(path: &Path, e: rusqlite::Error) -> Error {
    use rusqlite::ErrorCode as Code;
    let shown = format!("sqlite:{}", path.display());
    let hint = match e.sqlite_error_code() {
        Some(Code::NotADatabase | Code::DatabaseCorrupt) => format!(
            "{} is not a SQLite history (or it is damaged): move it away to start a new history, or point --history at the right file",
            path.display()
        ),
        Some(Code::DatabaseBusy | Code::DatabaseLocked) => format!(
            "another process held the store for {} s; run again, or look for a hung ncugate",
            BUSY_TIMEOUT.as_secs()
        ),
        Some(Code::CannotOpen | Code::ReadOnly | Code::PermissionDenied) => {
            "check that the folder exists and that the file and its folder are writable".into()
        }
        Some(Code::DiskFull) => "free disk space where the store is".into(),
        _ => "check that the file is a history store written by ncugate".into(),
    };
    super::store_error(&shown, e, hint)
}
