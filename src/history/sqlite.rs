//! The SQLite store (`sqlite:PATH`), embedded through `rusqlite` with the
//! bundled SQLite, so every runner has the same SQLite whatever its system
//! has. Concurrent writers — parallel CI jobs on one runner — queue instead
//! of failing: the file is in WAL mode (readers never block the writer),
//! every transaction that writes takes the write lock when it begins
//! (`BEGIN IMMEDIATE`, so no reader upgrades into a deadlock) and waits up
//! to [`BUSY_TIMEOUT`] for it. Readers open the file read-only and take no
//! lock a writer holds, so they neither wait nor need to be able to write.
//! The file (and SQLite's `-wal`, `-shm`, `-journal` beside it) is never
//! opened through a symbolic link.

use super::Access;
use super::sql::{self, Param, Tx};
use super::store::{
    Dialect, Entry, Pick, Point, Provenance, Query, Recorded, RunHead, Store, StoredRun,
};
use crate::error::{Error, Result};
use rusqlite::{Connection, OpenFlags, TransactionBehavior, params_from_iter};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another one before the store is said to be busy.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

/// An open SQLite history.
pub(crate) struct Sqlite {
    conn: Connection,
    path: PathBuf,
    /// Opened to read a file that holds no history yet: every read is empty.
    empty: bool,
}

impl Sqlite {
    /// Opens the file for `access`: a reader read-only, as it is; a writer
    /// (with [`Access::Create`], making it) migrating its schema.
    pub(crate) fn open(path: &Path, access: Access) -> Result<Sqlite> {
        let shown = format!("sqlite:{}", path.display());
        refuse_links(path, &shown)?;
        if access != Access::Create && !path.exists() {
            return Err(super::store_error(
                &shown,
                "no such file",
                "record runs first (`ncugate history record REPORT.json`), or point --history at the store",
            ));
        }
        if access == Access::Read {
            return Sqlite::open_read(path, &shown);
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        if access == Access::Create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let conn = Connection::open_with_flags(path, flags).map_err(|e| fail(path, e))?;
        let mut store = Sqlite {
            conn,
            path: path.to_path_buf(),
            empty: false,
        };
        store.prepare().map_err(|e| fail(path, e))?;
        store.migrate()?;
        Ok(store)
    }

    /// A reader: the file opened read-only (no write lock, no journal mode
    /// set, no migration). A WAL file whose folder this user cannot write
    /// (no `-shm` can be made) is opened immutable: nobody here can change it.
    fn open_read(path: &Path, shown: &str) -> Result<Sqlite> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let version = |conn: &Connection| -> rusqlite::Result<i64> {
            conn.busy_timeout(BUSY_TIMEOUT)?;
            sql::version(&mut Lite(conn))
        };
        let mut opened = Connection::open_with_flags(path, flags)
            .and_then(|conn| version(&conn).map(|v| (conn, v)));
        if let Err(e) = &opened
            && matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
            )
        {
            opened = Connection::open_with_flags(
                immutable_uri(path),
                flags | OpenFlags::SQLITE_OPEN_URI,
            )
            .and_then(|conn| version(&conn).map(|v| (conn, v)));
        }
        let (conn, found) = opened.map_err(|e| fail(path, e))?;
        Ok(Sqlite {
            conn,
            path: path.to_path_buf(),
            empty: super::readable(shown, found)?,
        })
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
        let newer = (|| -> rusqlite::Result<Option<i64>> {
            let tx = self.write()?;
            let newer = sql::migrate(&mut Lite(&tx))?;
            // A newer schema is left as it was: the transaction rolls back.
            if newer.is_none() {
                tx.commit()?;
            }
            Ok(newer)
        })()
        .map_err(|e| fail(&self.path, e))?;
        match newer {
            Some(found) => Err(super::newer_schema(
                &format!("sqlite:{}", self.path.display()),
                found,
            )),
            None => Ok(()),
        }
    }

    /// A write transaction: it takes the write lock when it begins (waiting
    /// up to [`BUSY_TIMEOUT`] for it), so no reader upgrades into a deadlock.
    fn write(&mut self) -> rusqlite::Result<rusqlite::Transaction<'_>> {
        self.conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
    }
}

impl Store for Sqlite {
    fn record(&mut self, at: &Provenance, runs: &[Entry<'_>]) -> Result<Vec<Recorded>> {
        (|| -> rusqlite::Result<Vec<Recorded>> {
            let tx = self.write()?;
            let done = sql::record_all(&mut Lite(&tx), at, runs)?;
            tx.commit()?;
            Ok(done)
        })()
        .map_err(|e| fail(&self.path, e))
    }

    fn accept(&mut self, commit: &str) -> Result<u64> {
        sql::accept(&mut Lite(&self.conn), commit).map_err(|e| fail(&self.path, e))
    }

    fn series(&mut self, query: &Query) -> Result<Vec<Point>> {
        if self.empty {
            return Ok(Vec::new());
        }
        sql::series(&mut Lite(&self.conn), query).map_err(|e| fail(&self.path, e))
    }

    fn pick(&mut self, workload: &str, gpu: &str, pick: Pick<'_>) -> Result<Vec<StoredRun>> {
        if self.empty {
            return Ok(Vec::new());
        }
        sql::pick(&mut Lite(&self.conn), workload, gpu, pick).map_err(|e| fail(&self.path, e))
    }

    fn accepted_after(&mut self, workload: &str, gpu: &str, run: &StoredRun) -> Result<u64> {
        if self.empty {
            return Ok(0);
        }
        sql::accepted_after(&mut Lite(&self.conn), workload, gpu, run)
            .map_err(|e| fail(&self.path, e))
    }

    fn heads(&mut self) -> Result<Vec<RunHead>> {
        if self.empty {
            return Ok(Vec::new());
        }
        sql::heads(&mut Lite(&self.conn)).map_err(|e| fail(&self.path, e))
    }

    fn verdict(&mut self, workload: &str, digest: &str) -> Result<Option<String>> {
        if self.empty {
            return Ok(None);
        }
        sql::verdict(&mut Lite(&self.conn), workload, digest).map_err(|e| fail(&self.path, e))
    }

    fn keep_verdict(&mut self, workload: &str, digest: &str, at: i64, entry: &str) -> Result<()> {
        (|| -> rusqlite::Result<()> {
            let tx = self.write()?;
            sql::keep_verdict(&mut Lite(&tx), workload, digest, at, entry)?;
            tx.commit()
        })()
        .map_err(|e| fail(&self.path, e))
    }
}

/// The connection, or the transaction it is in, as the shared SQL's [`Tx`]:
/// statements are prepared once a connection (rusqlite's statement cache).
struct Lite<'c>(&'c Connection);

impl Tx for Lite<'_> {
    type Error = rusqlite::Error;
    const DIALECT: Dialect = Dialect::Sqlite;

    fn batch(&mut self, sql: &str) -> rusqlite::Result<()> {
        self.0.execute_batch(sql)
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> rusqlite::Result<u64> {
        let mut statement = self.0.prepare_cached(sql)?;
        statement
            .execute(params_from_iter(params))
            .map(|n| n as u64)
    }

    fn insert(&mut self, sql: &str, params: &[Param<'_>]) -> rusqlite::Result<i64> {
        self.execute(sql, params)?;
        Ok(self.0.last_insert_rowid())
    }

    fn query<T>(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        mut read: impl FnMut(&dyn sql::Row<Error = rusqlite::Error>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<Vec<T>> {
        let mut statement = self.0.prepare_cached(sql)?;
        let rows = statement.query_map(params_from_iter(params), |r| read(r))?;
        rows.collect()
    }

    fn query_one<T>(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        read: impl FnOnce(&dyn sql::Row<Error = rusqlite::Error>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        let mut statement = self.0.prepare_cached(sql)?;
        statement.query_row(params_from_iter(params), |r| read(r))
    }
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Param::Text(s) => s.to_sql(),
            Param::TextOrNull(s) => s.to_sql(),
            Param::Big(n) => n.to_sql(),
            Param::Int(n) => n.to_sql(),
            Param::Real(x) => x.to_sql(),
        }
    }
}

impl sql::Row for rusqlite::Row<'_> {
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

/// Refuses a store path that is a symbolic link, and a link where SQLite
/// keeps the store's journal, WAL or shared memory beside it: a link would
/// make the store (or its journal) a file outside the folder the URL names.
/// The folders on the way are followed: CI runners mount caches through
/// them, and the folder the URL names is the one its owner chose.
fn refuse_links(path: &Path, shown: &str) -> Result<()> {
    let mut names = vec![path.to_path_buf()];
    for suffix in ["-journal", "-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        names.push(PathBuf::from(name));
    }
    for name in names {
        let link = std::fs::symlink_metadata(&name).is_ok_and(|m| m.file_type().is_symlink());
        if link {
            return Err(super::store_error(
                shown,
                format!(
                    "{} is a symbolic link; a store is never opened through one",
                    name.display()
                ),
                "point --history at the store file itself (the link's target), or remove the link",
            ));
        }
    }
    Ok(())
}

/// `path` as an SQLite URI that opens it immutable (`?immutable=1`).
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'%' | b'?' | b'#' | 0x80.. | ..0x20 => uri.push_str(&format!("%{b:02X}")),
            _ => uri.push(char::from(*b)),
        }
    }
    uri.push_str("?immutable=1");
    uri
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
