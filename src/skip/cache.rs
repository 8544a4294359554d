//! The verdict cache: each entry holds a completed check's digest, its
//! parts, the shared libraries its run mapped, its commit and time, and its
//! whole report. It is kept in the
//! history store when the check has one (`verdicts`, one entry per workload
//! and digest of the parts known before a run, shared by every runner of
//! the store), else in one file per
//! workload, `<out_dir>/<workload>/skip-cache.json` (its last entry), which
//! CI keeps between runs (`actions/cache`, Jenkins' `stash`/cache step).
//! An entry is read as hostile input: size-bounded, and anything that does
//! not read back as an entry of this format is a warning and a miss, never
//! an error that blocks CI (the workload then runs, as with no cache).

use super::digest::{FORMAT, Part};
use super::mapped::Library;
use crate::verdict::Report;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The cache file's name in a workload's work folder.
pub(crate) const FILE: &str = "skip-cache.json";
/// A cache entry larger than this is not read: 64 MiB.
const MAX_BYTES: u64 = 64 << 20;

/// The last completed check of a workload.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Entry {
    /// [`FORMAT`]: an entry of another format is a miss.
    pub(crate) format: String,
    pub(crate) workload: String,
    /// SHA-256 over [`Entry::parts`].
    pub(crate) digest: String,
    /// The parts known before the run, then a `loaded:` part per library.
    pub(crate) parts: Vec<Part>,
    /// The shared libraries the run mapped, hashed after it.
    pub(crate) libraries: Vec<Library>,
    /// The commit the check ran on.
    pub(crate) commit: String,
    /// When it finished, in Unix seconds.
    pub(crate) time: i64,
    /// Its report, whose checks a skipped run carries.
    pub(crate) report: Report,
}

/// An entry as the file holds it: its report not yet validated.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored {
    format: String,
    workload: String,
    digest: String,
    parts: Vec<Part>,
    libraries: Vec<Library>,
    commit: String,
    time: i64,
    report: serde_json::Value,
}

/// Where the entries are kept.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Place {
    /// The workload's work folder: its cache file.
    File(PathBuf),
    /// The history store at this URL, each round trip within `timeout`.
    Store {
        url: String,
        timeout: std::time::Duration,
    },
}

impl Place {
    /// The place as a warning names it (a store's URL without its password).
    pub(crate) fn shown(&self) -> String {
        match self {
            Place::File(out_dir) => path(out_dir).display().to_string(),
            Place::Store { url, .. } => crate::history::redact(url),
        }
    }
}

/// The cache file of a workload's work folder.
pub(crate) fn path(out_dir: &Path) -> PathBuf {
    out_dir.join(FILE)
}

/// The key an entry is kept under in a store: the digest of its parts
/// known before a run (a check knows those before it reads the entry).
pub(crate) fn key(parts: &[Part]) -> String {
    super::digest::sum(&super::digest::before_run(parts))
}

/// The entry of `workload` kept under `digest` (a store), or its last one
/// (a store's newest, or a file's): `Ok(None)` when there is none yet,
/// `Err` (a warning's words) when it cannot be read back as one.
pub(crate) fn read(
    place: &Place,
    workload: &str,
    digest: &str,
) -> std::result::Result<Option<Entry>, String> {
    let bytes = match place {
        Place::File(out_dir) => {
            let file = path(out_dir);
            match std::fs::metadata(&file) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(e.to_string()),
                Ok(m) if m.len() > MAX_BYTES => {
                    return Err(format!("{} bytes, over the {MAX_BYTES} read", m.len()));
                }
                Ok(_) => std::fs::read(&file).map_err(|e| e.to_string())?,
            }
        }
        Place::Store { url, timeout } => {
            // Made (and migrated) when missing: this check writes its own
            // verdict there after, so it needs a writer's access anyway.
            let access = crate::history::Access::Create;
            let mut store =
                crate::history::open(url, access, *timeout).map_err(|e| e.to_string())?;
            match store.verdict(workload, digest).map_err(|e| e.to_string())? {
                None => return Ok(None),
                Some(text) if text.len() as u64 > MAX_BYTES => {
                    return Err(format!("{} bytes, over the {MAX_BYTES} read", text.len()));
                }
                Some(text) => text.into_bytes(),
            }
        }
    };
    parse(&bytes)
}

/// An entry from its stored bytes, validated.
fn parse(bytes: &[u8]) -> std::result::Result<Option<Entry>, String> {
    let s: Stored = serde_json::from_slice(bytes).map_err(|e| format!("not an entry: {e}"))?;
    if s.format != FORMAT {
        return Err(format!("format `{}`, not `{FORMAT}`", s.format));
    }
    if super::digest::sum(&s.parts) != s.digest {
        return Err("its digest is not the digest of its parts".into());
    }
    let loaded: Vec<&Part> = s
        .parts
        .iter()
        .filter(|p| p.name.starts_with(super::mapped::PREFIX))
        .collect();
    if loaded
        .into_iter()
        .ne(super::digest::loaded(&s.libraries).iter())
    {
        return Err("its libraries are not its `loaded:` parts".into());
    }
    // The report is read as a shard's would be: one whose written outcome
    // its checks contradict is refused, never carried.
    let report = crate::suite::read::cached(s.report, &s.workload)
        .map_err(|e| format!("its report: {e}"))?;
    Ok(Some(Entry {
        format: s.format,
        workload: s.workload,
        digest: s.digest,
        parts: s.parts,
        libraries: s.libraries,
        commit: s.commit,
        time: s.time,
        report,
    }))
}

/// Keeps `entry` (a file atomically); a failure is the caller's warning.
pub(crate) fn write(place: &Place, entry: &Entry) -> crate::error::Result<()> {
    let text = serde_json::to_vec_pretty(entry).unwrap_or_default();
    match place {
        Place::File(out_dir) => {
            std::fs::create_dir_all(out_dir).map_err(|source| crate::error::Error::Write {
                path: out_dir.to_path_buf(),
                source,
            })?;
            crate::io::atomic::write_atomic(&path(out_dir), &text)
        }
        Place::Store { url, timeout } => {
            let access = crate::history::Access::Create;
            let mut store = crate::history::open(url, access, *timeout)?;
            let text = String::from_utf8_lossy(&text);
            store.keep_verdict(&entry.workload, &key(&entry.parts), entry.time, &text)
        }
    }
}
