//! The history of runs: every `check` or `merge` report recorded with its
//! commit, branch and time, in a SQLite file (`sqlite:PATH`) or a
//! PostgreSQL server shared by a fleet of runners (`postgres://…`), behind
//! the one [`Store`] trait and one schema with migrations
//! ([`store::MIGRATIONS`]), run on either driver by the one SQL code of
//! [`sql`]. [`record`] turns reports into runs, [`show`] draws their
//! series. A store that cannot be opened, read or written is an error
//! (exit 2) with a hint; it never changes a verdict.

pub(crate) mod changepoint;
#[cfg(test)]
mod changepoint_eval;
pub(crate) mod changes;
pub(crate) mod command;
pub(crate) mod drift;
pub(crate) mod postgres;
pub mod record;
pub(crate) mod rolling;
pub(crate) mod show;
pub(crate) mod sql;
pub(crate) mod sqlite;
pub(crate) mod stale;
pub mod store;
pub(crate) mod trend;

pub(crate) use store::{Entry, Provenance, Query, Recorded, Store};

use crate::error::{Error, HistoryError, Result};
use std::path::PathBuf;

/// The two kinds of store a URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    /// `sqlite:PATH`: a file, created on first record.
    Sqlite(PathBuf),
    /// `postgres://…` or `postgresql://…`: libpq-style URL, passed as is.
    Postgres(String),
}

pub use crate::config::history::URL_FORMS;

impl Location {
    /// Reads a history URL.
    pub(crate) fn parse(url: &str) -> Result<Location> {
        if let Some(path) = url.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if path.is_empty() {
                return Err(usage(url, "the SQLite URL names no file"));
            }
            return Ok(Location::Sqlite(PathBuf::from(path)));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Location::Postgres(url.to_string()));
        }
        Err(usage(url, "not a history URL"))
    }

    /// The URL as messages show it: a PostgreSQL password is left out.
    pub(crate) fn shown(&self) -> String {
        match self {
            Location::Sqlite(path) => format!("sqlite:{}", path.display()),
            Location::Postgres(url) => redact(url),
        }
    }
}

fn usage(url: &str, why: &str) -> Error {
    HistoryError::BadUrl {
        url: redact(url),
        why: why.into(),
    }
    .into()
}

/// The URL with its password left out, in any form: `postgres://user:***@host/db`,
/// `postgres://user@host/db?password=***`, `host=… password=***`.
pub(crate) fn redact(url: &str) -> String {
    crate::text::secret::redact_url(url)
}

/// How a command uses a store. Readers (`history show`, `changes`, a
/// check's rolling baseline, anchor and trend charts) never write: they open
/// the store read-only, take no write lock (so they never queue behind a
/// writer), and do not migrate; a read-only file or a role that may only
/// `SELECT` is enough for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Read only; a missing SQLite file is an error.
    Read,
    /// Write to a store that exists (`history accept`).
    Write,
    /// Write, making a missing SQLite file (recording).
    Create,
}

/// Opens the store `url` names for `access`; a writer brings its schema up
/// to date. `timeout` bounds every round trip to a PostgreSQL server.
pub(crate) fn open(
    url: &str,
    access: Access,
    timeout: std::time::Duration,
) -> Result<Box<dyn Store>> {
    match Location::parse(url)? {
        Location::Sqlite(path) => Ok(Box::new(sqlite::Sqlite::open(&path, access)?)),
        Location::Postgres(url) => Ok(Box::new(postgres::Postgres::open(&url, access, timeout)?)),
    }
}

/// What a reader makes of the schema version it found: `Ok(true)` when the
/// store holds no history yet (nothing to read, and a reader does not make
/// the schema), `Ok(false)` when it is this ncugate's, else the error.
fn readable(shown: &str, found: i64) -> Result<bool> {
    use std::cmp::Ordering;
    match found.cmp(&store::SCHEMA_VERSION) {
        Ordering::Greater => Err(newer_schema(shown, found)),
        Ordering::Equal => Ok(false),
        Ordering::Less if found <= 0 => Ok(true),
        Ordering::Less => Err(store_error(
            shown,
            format!(
                "schema version {found} is older than this ncugate's ({}); reading never changes a store",
                store::SCHEMA_VERSION
            ),
            "record a run into it with this ncugate (`ncugate history record REPORT.json`) to bring its schema up to date, then read it again",
        )),
    }
}

/// A store error: what failed on which store, and the fix.
pub(crate) fn store_error(
    shown: &str,
    what: impl std::fmt::Display,
    hint: impl Into<String>,
) -> Error {
    let what = what.to_string();
    let what = what.split_whitespace().collect::<Vec<_>>().join(" ");
    HistoryError::Store {
        store: shown.to_string(),
        what,
        fix: hint.into(),
    }
    .into()
}

/// The hint for a store whose schema is newer than this ncugate's.
fn newer_schema(shown: &str, found: i64) -> Error {
    store_error(
        shown,
        format!(
            "schema version {found} is newer than this ncugate's ({})",
            store::SCHEMA_VERSION
        ),
        "use the ncugate version that wrote the store (or a newer one)",
    )
}
