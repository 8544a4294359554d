//! The PostgreSQL store (`postgres://…`): one server shared by a fleet of
//! runners, through the synchronous `postgres` client (no TLS: a server
//! reached through a Unix socket or a private network; the URL is libpq's).
//! Every write is one transaction that first takes a transaction-level
//! advisory lock, so concurrent writers — and concurrent first migrations —
//! queue one after the other and none loses a run.

use super::sql::{self, Param, Tx};
use super::store::{Dialect, Entry, Pick, Point, Provenance, Query, Recorded, Store, StoredRun};
use crate::error::{Error, Result};
use postgres::types::ToSql;
use postgres::{Client, GenericClient, NoTls, Statement, Transaction};
use std::collections::HashMap;
use std::time::Duration;

/// The advisory lock key every ncugate writer takes ("ncugate" in ASCII).
const LOCK: i64 = 0x006e_6375_6761_7465;

/// How long connecting may take when the URL does not say.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// An open PostgreSQL history.
pub(crate) struct Postgres {
    client: Client,
    shown: String,
}

impl Postgres {
    /// Connects and migrates the schema.
    pub(crate) fn open(url: &str) -> Result<Postgres> {
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
        let newer = (|| -> std::result::Result<Option<i64>, postgres::Error> {
            let mut tx = write(&mut self.client)?;
            let newer = sql::migrate(&mut Pg::new(&mut tx))?;
            // A newer schema is left as it was: the transaction rolls back.
            if newer.is_none() {
                tx.commit()?;
            }
            Ok(newer)
        })()
        .map_err(|e| fail(&self.shown, &e))?;
        match newer {
            Some(found) => Err(super::newer_schema(&self.shown, found)),
            None => Ok(()),
        }
    }
}

/// A write transaction: it first takes the advisory lock, so writers (and
/// first migrations) queue one after the other.
fn write(client: &mut Client) -> std::result::Result<Transaction<'_>, postgres::Error> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK])?;
    Ok(tx)
}

impl Store for Postgres {
    fn record(&mut self, at: &Provenance, runs: &[Entry<'_>]) -> Result<Vec<Recorded>> {
        (|| -> std::result::Result<Vec<Recorded>, postgres::Error> {
            let mut tx = write(&mut self.client)?;
            let done = sql::record_all(&mut Pg::new(&mut tx), at, runs)?;
            tx.commit()?;
            Ok(done)
        })()
        .map_err(|e| fail(&self.shown, &e))
    }

    fn accept(&mut self, commit: &str) -> Result<u64> {
        sql::accept(&mut Pg::new(&mut self.client), commit).map_err(|e| fail(&self.shown, &e))
    }

    fn series(&mut self, query: &Query) -> Result<Vec<Point>> {
        sql::series(&mut Pg::new(&mut self.client), query).map_err(|e| fail(&self.shown, &e))
    }

    fn pick(&mut self, workload: &str, gpu: &str, pick: Pick<'_>) -> Result<Vec<StoredRun>> {
        sql::pick(&mut Pg::new(&mut self.client), workload, gpu, pick)
            .map_err(|e| fail(&self.shown, &e))
    }

    fn accepted_after(&mut self, workload: &str, gpu: &str, run: &StoredRun) -> Result<u64> {
        sql::accepted_after(&mut Pg::new(&mut self.client), workload, gpu, run)
            .map_err(|e| fail(&self.shown, &e))
    }
}

/// The client, or a transaction of it, as the shared SQL's [`Tx`]: each
/// statement is prepared once (a round trip) for as long as it lives.
struct Pg<'c, C: GenericClient> {
    client: &'c mut C,
    prepared: HashMap<String, Statement>,
}

impl<'c, C: GenericClient> Pg<'c, C> {
    fn new(client: &'c mut C) -> Self {
        Pg {
            client,
            prepared: HashMap::new(),
        }
    }

    /// `sql` prepared, with its placeholders in PostgreSQL's spelling.
    fn statement(&mut self, sql: &str) -> std::result::Result<Statement, postgres::Error> {
        if let Some(statement) = self.prepared.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self
            .client
            .prepare(&sql::placeholders(sql, Dialect::Postgres))?;
        self.prepared.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }
}

/// `params` as the client takes them.
fn values<'p>(params: &'p [Param<'_>]) -> Vec<&'p (dyn ToSql + Sync)> {
    params
        .iter()
        .map(|p| -> &(dyn ToSql + Sync) {
            match p {
                Param::Text(s) => s,
                Param::TextOrNull(s) => s,
                Param::Big(n) => n,
                Param::Int(n) => n,
                Param::Real(x) => x,
            }
        })
        .collect()
}

impl<C: GenericClient> Tx for Pg<'_, C> {
    type Error = postgres::Error;
    const DIALECT: Dialect = Dialect::Postgres;

    fn batch(&mut self, sql: &str) -> std::result::Result<(), postgres::Error> {
        self.client.batch_execute(sql)
    }

    fn execute(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
    ) -> std::result::Result<u64, postgres::Error> {
        let statement = self.statement(sql)?;
        self.client.execute(&statement, &values(params))
    }

    fn insert(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
    ) -> std::result::Result<i64, postgres::Error> {
        let statement = self.statement(&format!("{sql} RETURNING id"))?;
        self.client
            .query_one(&statement, &values(params))?
            .try_get(0)
    }

    fn query<T>(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        read: impl FnMut(
            &dyn sql::Row<Error = postgres::Error>,
        ) -> std::result::Result<T, postgres::Error>,
    ) -> std::result::Result<Vec<T>, postgres::Error> {
        let statement = self.statement(sql)?;
        let rows = self.client.query(&statement, &values(params))?;
        rows.iter()
            .map(|r| r as &dyn sql::Row<Error = postgres::Error>)
            .map(read)
            .collect()
    }

    fn query_one<T>(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        read: impl FnOnce(
            &dyn sql::Row<Error = postgres::Error>,
        ) -> std::result::Result<T, postgres::Error>,
    ) -> std::result::Result<T, postgres::Error> {
        let statement = self.statement(sql)?;
        read(&self.client.query_one(&statement, &values(params))?)
    }
}

impl sql::Row for postgres::Row {
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
