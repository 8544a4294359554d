//! The PostgreSQL store (`postgres://…`): one server shared by a fleet of
//! runners, through the synchronous `postgres` client (no TLS: a server
//! reached through a Unix socket or a private network; the URL is libpq's).
//! Every write is one transaction that first takes a transaction-level
//! advisory lock, so concurrent writers — and concurrent first migrations —
//! queue one after the other and none loses a run. Readers take no lock and
//! run no migration (a role that may only `SELECT` reads the history), and
//! every round trip has a timeout ([`Postgres::call`]).

use super::Access;
use super::record::RunRecord;
use super::sql::{self, Param, Tx};
use super::store::{
    Dialect, Entry, Pick, Point, Provenance, Query, Recorded, RunHead, Store, StoredRun,
};
use crate::error::{Error, Result};
use postgres::types::ToSql;
use postgres::{Client, GenericClient, NoTls, Statement, Transaction};
use std::collections::HashMap;
use std::time::Duration;

/// The advisory lock key every ncugate writer takes ("ncugate" in ASCII).
const LOCK: i64 = 0x006e_6375_6761_7465;

/// An open PostgreSQL history. Every round trip runs on a worker thread
/// the caller waits for at most `timeout`: the client's own connect timeout
/// covers only the TCP connect, and a server (or proxy) that accepts and
/// never answers would hang the check. A request left unanswered gives up
/// the connection (the process ends with the error soon after).
pub(crate) struct Postgres {
    client: Option<Client>,
    shown: String,
    timeout: Duration,
    /// Opened to read a database that holds no history yet: every read is empty.
    empty: bool,
}

impl Postgres {
    /// Connects; a writer migrates the schema, a reader only reads its version.
    pub(crate) fn open(url: &str, access: Access, timeout: Duration) -> Result<Postgres> {
        let shown = super::redact(url);
        let mut config: postgres::Config = url.parse().map_err(|e| {
            super::store_error(
                &shown,
                format!("not a PostgreSQL URL: {e}"),
                super::URL_FORMS,
            )
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(timeout);
        }
        let connected = within(timeout, move || config.connect(NoTls))
            .ok_or_else(|| unanswered(&shown, "to the connection's start-up", timeout))?;
        let client = connected.map_err(|e| {
            super::store_error(
                &shown,
                format!("cannot connect: {}", describe(&e)),
                "check that the server runs and that the URL's host, port, user and database are right (a Unix socket: postgres://USER@%2Fsocket%2Fdir:PORT/DATABASE)",
            )
        })?;
        let mut store = Postgres {
            client: Some(client),
            shown,
            timeout,
            empty: false,
        };
        if access == Access::Read {
            let found = store.call(|c| sql::version(&mut Pg::new(c)))?;
            store.empty = super::readable(&store.shown, found)?;
        } else {
            store.migrate()?;
        }
        Ok(store)
    }

    fn migrate(&mut self) -> Result<()> {
        let newer = self.call(|client| {
            let mut tx = write(client)?;
            let newer = sql::migrate(&mut Pg::new(&mut tx))?;
            // A newer schema is left as it was: the transaction rolls back.
            if newer.is_none() {
                tx.commit()?;
            }
            Ok(newer)
        })?;
        match newer {
            Some(found) => Err(super::newer_schema(&self.shown, found)),
            None => Ok(()),
        }
    }

    /// Runs `work` on the client, waiting at most the timeout for it.
    fn call<T: Send + 'static>(
        &mut self,
        work: impl FnOnce(&mut Client) -> std::result::Result<T, postgres::Error> + Send + 'static,
    ) -> Result<T> {
        let Some(mut client) = self.client.take() else {
            return Err(unanswered(
                &self.shown,
                "to an earlier request",
                self.timeout,
            ));
        };
        let done = within(self.timeout, move || {
            let result = work(&mut client);
            (client, result)
        });
        match done {
            Some((client, result)) => {
                self.client = Some(client);
                result.map_err(|e| fail(&self.shown, &e))
            }
            None => Err(unanswered(&self.shown, "to a statement", self.timeout)),
        }
    }
}

/// `work`'s result when it is done within `timeout`; `None` when not (it
/// is left running on its thread).
fn within<T: Send + 'static>(
    timeout: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(work());
    });
    receiver.recv_timeout(timeout).ok()
}

/// The error of a server that said nothing for `timeout`.
fn unanswered(shown: &str, what: &str, timeout: Duration) -> Error {
    super::store_error(
        shown,
        format!("no answer {what} within {} s", timeout.as_secs_f64()),
        format!(
            "check that the server runs and answers (not a stuck server or proxy), or allow it longer: --history-timeout SECONDS, NCUGATE_HISTORY_TIMEOUT or [history] timeout (default {})",
            crate::options::history::DEFAULT_TIMEOUT.as_secs()
        ),
    )
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
        let at = at.clone();
        let owned: Vec<(RunRecord, bool)> =
            runs.iter().map(|e| (e.run.clone(), e.accepted)).collect();
        self.call(move |client| {
            let entries: Vec<Entry<'_>> = owned
                .iter()
                .map(|(run, accepted)| Entry {
                    run,
                    accepted: *accepted,
                })
                .collect();
            let mut tx = write(client)?;
            let done = sql::record_all(&mut Pg::new(&mut tx), &at, &entries)?;
            tx.commit()?;
            Ok(done)
        })
    }

    fn accept(&mut self, commit: &str) -> Result<u64> {
        let commit = commit.to_string();
        self.call(move |client| sql::accept(&mut Pg::new(client), &commit))
    }

    fn series(&mut self, query: &Query) -> Result<Vec<Point>> {
        if self.empty {
            return Ok(Vec::new());
        }
        let query = query.clone();
        self.call(move |client| sql::series(&mut Pg::new(client), &query))
    }

    fn pick(&mut self, workload: &str, gpu: &str, pick: Pick<'_>) -> Result<Vec<StoredRun>> {
        if self.empty {
            return Ok(Vec::new());
        }
        let (workload, gpu) = (workload.to_string(), gpu.to_string());
        // Owned, for the worker thread: the window's length or the commit.
        let owned = match pick {
            Pick::LastAccepted(n) => Err(n),
            Pick::Commit(c) => Ok(c.to_string()),
        };
        self.call(move |client| {
            let pick = match &owned {
                Err(n) => Pick::LastAccepted(*n),
                Ok(c) => Pick::Commit(c),
            };
            sql::pick(&mut Pg::new(client), &workload, &gpu, pick)
        })
    }

    fn accepted_after(&mut self, workload: &str, gpu: &str, run: &StoredRun) -> Result<u64> {
        if self.empty {
            return Ok(0);
        }
        let (workload, gpu, run) = (workload.to_string(), gpu.to_string(), run.clone());
        self.call(move |client| sql::accepted_after(&mut Pg::new(client), &workload, &gpu, &run))
    }

    fn heads(&mut self) -> Result<Vec<RunHead>> {
        if self.empty {
            return Ok(Vec::new());
        }
        self.call(move |client| sql::heads(&mut Pg::new(client)))
    }

    fn verdict(&mut self, workload: &str, digest: &str) -> Result<Option<String>> {
        if self.empty {
            return Ok(None);
        }
        let (workload, digest) = (workload.to_string(), digest.to_string());
        self.call(move |client| sql::verdict(&mut Pg::new(client), &workload, &digest))
    }

    fn keep_verdict(&mut self, workload: &str, digest: &str, at: i64, entry: &str) -> Result<()> {
        let (workload, digest, entry) =
            (workload.to_string(), digest.to_string(), entry.to_string());
        self.call(move |client| {
            sql::keep_verdict(&mut Pg::new(client), &workload, &digest, at, &entry)
        })
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
