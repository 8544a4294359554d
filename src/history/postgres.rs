//! The PostgreSQL store (`postgres://…`): one server shared by a fleet of
//! runners, through the synchronous `postgres` client (no TLS: a server
//! reached through a Unix socket or a private network; the URL is libpq's).
//! Every write is one transaction that first takes a transaction-level
//! advisory lock, so concurrent writers — and concurrent first migrations —
//! queue one after the other and none loses a run.

use super::store::{
    self, Dialect, Entry, Pick, Point, Provenance, Query, Recorded, Store, StoredRun,
};
use crate::error::{Error, Result};
use postgres::{Client, NoTls, Transaction};
use std::collections::HashMap;
use std::time::Duration;

/// The advisory lock key every ncugate writer takes ("ncugate" in ASCII).
const LOCK: i64 = 0x006e_6375_6761_7465;

/// How long connecting may take when the URL does not say.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// An open PostgreSQL history.
pub struct Postgres {
    client: Client,
    shown: String,
}

impl Postgres {
    /// Connects and migrates the schema.
    pub fn open(url: &str) -> Result<Postgres> {
        let shown = super::redact(url);
        let mut config: postgres::Config = url.parse().map_err(|e| {
            super::store_error(
                &shown,
                format!("not a PostgreSQL URL: {e}"),
                super::URL_FORMS,
            )
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let client = config.connect(NoTls).map_err(|e| {
            super::store_error(
                &shown,
                format!("cannot connect: {}", describe(&e)),
                "check that the server runs and that the URL's host, port, user and database are right (a Unix socket: postgres://USER@%2Fsocket%2Fdir:PORT/DATABASE)",
            )
        })?;
        let mut store = Postgres { client, shown };
        store.migrate()?;
        Ok(store)
    }

    fn migrate(&mut self) -> Result<()> {
        let shown = self.shown.clone();
        let found = (|| -> std::result::Result<Option<i64>, postgres::Error> {
            let mut tx = self.client.transaction()?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK])?;
            tx.batch_execute(
                "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)",
            )?;
            let found: i64 = tx
                .query_one("SELECT COALESCE(MAX(version), 0) FROM schema_version", &[])?
                .get(0);
            if found > store::SCHEMA_VERSION {
                return Ok(Some(found));
            }
            for (i, template) in store::MIGRATIONS.iter().enumerate().skip(found as usize) {
                tx.batch_execute(&store::migration_sql(template, Dialect::Postgres))?;
                tx.execute(
                    "INSERT INTO schema_version (version) VALUES ($1)",
                    &[&(i as i64 + 1)],
                )?;
            }
            tx.commit()?;
            Ok(None)
        })()
        .map_err(|e| fail(&shown, &e))?;
        match found {
            Some(newer) => Err(super::newer_schema(&shown, newer)),
            None => Ok(()),
        }
    }

    fn record_all(
        &mut self,
        at: &Provenance,
        runs: &[Entry<'_>],
    ) -> std::result::Result<Vec<Recorded>, postgres::Error> {
        let mut tx = self.client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK])?;
        let mut series = HashMap::new();
        let mut done = Vec::with_capacity(runs.len());
        for entry in runs {
            let run = entry.run;
            let accepted = i32::from(entry.accepted);
            let existing = tx.query_opt(
                "SELECT id, report_sha256 FROM runs WHERE workload = $1 AND gpu = $2 AND commit_sha = $3",
                &[&run.workload, &run.gpu, &at.commit],
            )?;
            let existing = existing.map(|r| (r.get::<_, i64>(0), r.get::<_, String>(1)));
            let (id, recorded) = match existing {
                Some((_, digest)) if digest == run.digest => {
                    done.push(Recorded::Unchanged);
                    continue;
                }
                Some((id, _)) => {
                    tx.execute("DELETE FROM run_values WHERE run_id = $1", &[&id])?;
                    tx.execute(
                        "UPDATE runs SET branch = $2, at = $3, outcome = $4, report_sha256 = $5, accepted = $6, kernel_key = $7 WHERE id = $1",
                        &[&id, &at.branch, &at.time, &run.outcome, &run.digest, &accepted, &run.kernel_key],
                    )?;
                    (id, Recorded::Replaced)
                }
                None => {
                    let row = tx.query_one(
                        "INSERT INTO runs (workload, gpu, commit_sha, branch, at, outcome, report_sha256, accepted, kernel_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
                        &[&run.workload, &run.gpu, &at.commit, &at.branch, &at.time, &run.outcome, &run.digest, &accepted, &run.kernel_key],
                    )?;
                    (row.get::<_, i64>(0), Recorded::Added)
                }
            };
            insert_values(&mut tx, id, run, &mut series)?;
            done.push(recorded);
        }
        tx.commit()?;
        Ok(done)
    }
}

/// The values of run `id`, each under its (interned) series.
fn insert_values(
    tx: &mut Transaction<'_>,
    id: i64,
    run: &super::record::RunRecord,
    series: &mut HashMap<store::SeriesKey, i64>,
) -> std::result::Result<(), postgres::Error> {
    let add_series = tx.prepare(
        "INSERT INTO series (workload, gpu, kernel, rule, metric, aggregate, unit) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
    )?;
    let find_series = tx.prepare(
        "SELECT id FROM series WHERE workload = $1 AND gpu = $2 AND kernel = $3 AND rule = $4 AND metric = $5 AND aggregate = $6 AND unit = $7",
    )?;
    let add_value = tx.prepare(
        "INSERT INTO run_values (run_id, series_id, mean, samples, status) VALUES ($1, $2, $3, $4, $5)",
    )?;
    for v in &run.values {
        let key = store::series_key(run, v);
        let series_id = match series.get(&key) {
            Some(&id) => id,
            None => {
                let p: [&(dyn postgres::types::ToSql + Sync); 7] =
                    [&key.0, &key.1, &key.2, &key.3, &key.4, &key.5, &key.6];
                tx.execute(&add_series, &p)?;
                let found: i64 = tx.query_one(&find_series, &p)?.get(0);
                series.insert(key, found);
                found
            }
        };
        tx.execute(
            &add_value,
            &[
                &id,
                &series_id,
                &v.mean,
                &store::samples_text(&v.samples, v.mean),
                &store::status_code(&v.status),
            ],
        )?;
    }
    Ok(())
}

impl Store for Postgres {
    fn record(&mut self, at: &Provenance, runs: &[Entry<'_>]) -> Result<Vec<Recorded>> {
        self.record_all(at, runs).map_err(|e| fail(&self.shown, &e))
    }

    fn accept(&mut self, commit: &str) -> Result<u64> {
        self.client
            .execute(
                "UPDATE runs SET accepted = 1 WHERE commit_sha = $1",
                &[&commit],
            )
            .map_err(|e| fail(&self.shown, &e))
    }

    fn series(&mut self, query: &Query) -> Result<Vec<Point>> {
        let sql = store::series_sql(Dialect::Postgres);
        let rows = self
            .client
            .query(&sql, &[&query.workload, &query.kernel, &query.metric])
            .map_err(|e| fail(&self.shown, &e))?;
        rows.iter()
            .map(store::point)
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| fail(&self.shown, &e))
    }

    fn pick(&mut self, workload: &str, gpu: &str, pick: Pick<'_>) -> Result<Vec<StoredRun>> {
        let sql = store::pick_sql(Dialect::Postgres, pick);
        let rows = match pick {
            Pick::LastAccepted(n) => {
                let n = n.min(i64::MAX as usize) as i64;
                self.client.query(&sql, &[&workload, &gpu, &n])
            }
            Pick::Commit(c) => self.client.query(&sql, &[&workload, &gpu, &c]),
        }
        .map_err(|e| fail(&self.shown, &e))?;
        let rows = rows
            .iter()
            .map(store::picked)
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| fail(&self.shown, &e))?;
        Ok(store::group_runs(rows))
    }

    fn accepted_after(&mut self, workload: &str, gpu: &str, run: &StoredRun) -> Result<u64> {
        self.client
            .query_one(
                "SELECT COUNT(*) FROM runs WHERE workload = $1 AND gpu = $2 AND accepted = 1 AND (at > $3 OR (at = $3 AND id > $4))",
                &[&workload, &gpu, &run.time, &run.id],
            )
            .and_then(|r| r.try_get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| fail(&self.shown, &e))
    }

    fn runs(&mut self) -> Result<u64> {
        self.client
            .query_one("SELECT COUNT(*) FROM runs", &[])
            .and_then(|r| r.try_get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| fail(&self.shown, &e))
    }
}

impl store::Row for postgres::Row {
    type Error = postgres::Error;
    fn text(&self, i: usize) -> std::result::Result<String, postgres::Error> {
        self.try_get(i)
    }
    fn big(&self, i: usize) -> std::result::Result<i64, postgres::Error> {
        self.try_get(i)
    }
    fn int(&self, i: usize) -> std::result::Result<i64, postgres::Error> {
        self.try_get::<_, i32>(i).map(i64::from)
    }
    fn real(&self, i: usize) -> std::result::Result<Option<f64>, postgres::Error> {
        self.try_get(i)
    }
}

/// A client error with the server's own message when there is one.
fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => match std::error::Error::source(e) {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        },
    }
}

/// A PostgreSQL failure as the one error line and its hint.
fn fail(shown: &str, e: &postgres::Error) -> Error {
    let hint = if e.is_closed() {
        "the server closed the connection: check that it runs, then run again".to_string()
    } else {
        "check that the database is a history store written by ncugate and that the user may write to it".to_string()
    };
    super::store_error(shown, describe(e), hint)
}
