//! The verdict cache: one file per workload, `<out_dir>/<workload>/skip-cache.json`,
//! holding the last completed check's digest, its parts, its commit and
//! time, and its whole report. CI keeps the folder between runs
//! (`actions/cache`, Jenkins' `stash`/cache step). The file is read as
//! hostile input: size-bounded, and anything that does not read back as an
//! entry of this format is a warning and a miss, never an error that blocks
//! CI (the workload then runs, as with no cache at all).

use super::digest::{FORMAT, Part};
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
    pub(crate) parts: Vec<Part>,
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
    commit: String,
    time: i64,
    report: serde_json::Value,
}

/// The cache file of a workload's work folder.
pub(crate) fn path(out_dir: &Path) -> PathBuf {
    out_dir.join(FILE)
}

/// The entry in `out_dir`: `Ok(None)` when there is none yet, `Err` (a
/// warning's words) when the file cannot be read back as one.
pub(crate) fn read(out_dir: &Path) -> std::result::Result<Option<Entry>, String> {
    let file = path(out_dir);
    let bytes = match std::fs::metadata(&file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
        Ok(m) if m.len() > MAX_BYTES => {
            return Err(format!("{} bytes, over the {MAX_BYTES} read", m.len()));
        }
        Ok(_) => std::fs::read(&file).map_err(|e| e.to_string())?,
    };
    let s: Stored = serde_json::from_slice(&bytes).map_err(|e| format!("not an entry: {e}"))?;
    if s.format != FORMAT {
        return Err(format!("format `{}`, not `{FORMAT}`", s.format));
    }
    if super::digest::sum(&s.parts) != s.digest {
        return Err("its digest is not the digest of its parts".into());
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
        commit: s.commit,
        time: s.time,
        report,
    }))
}

/// Writes `entry` atomically; a failure is the caller's warning.
pub(crate) fn write(out_dir: &Path, entry: &Entry) -> crate::error::Result<()> {
    let text = serde_json::to_vec_pretty(entry).unwrap_or_default();
    std::fs::create_dir_all(out_dir).map_err(|source| crate::error::Error::Write {
        path: out_dir.to_path_buf(),
        source,
    })?;
    crate::io::atomic::write_atomic(&path(out_dir), &text)
}
