//! Leak history: one JSON line per run appended to a
//! file shared by CI jobs, and the alert rule over it. Appends hold an
//! exclusive lock on the file (`File::lock`: `flock` on Unix), so parallel
//! jobs never interleave or lose lines.

use super::MemoryResult;
use crate::error::{Error, Result};
use crate::format::format_value;
use crate::status::Status;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::Path;

/// One run in the history file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// RFC 3339, UTC.
    pub(crate) time: String,
    pub(crate) app: String,
    /// `GITHUB_SHA`, `GIT_COMMIT` (Jenkins) or `git rev-parse HEAD`, when known.
    pub(crate) commit: Option<String>,
    /// The leak figure: GPU memory at the end of the run minus at its start (NVML), bytes.
    pub(crate) leak_bytes: f64,
    pub(crate) peak_bytes: Option<f64>,
    pub(crate) live_execs: u64,
}

/// The alert rule: the last `consecutive` runs each leaked more than `factor` × the
/// rolling median of `window` runs and more than `min_bytes` — a slow leak that one
/// run's noise cannot trigger and a real one cannot hide from.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Runs in the rolling median baseline.
    pub(crate) window: usize,
    /// The last runs that must all be over the line.
    pub(crate) consecutive: usize,
    /// Over `factor` × baseline.
    pub(crate) factor: f64,
    /// And over this many bytes.
    pub(crate) min_bytes: f64,
}

/// Appends `entry` under an exclusive lock and returns every entry, the new
/// one last; read back within the input size limit ([`crate::io::bounded::limit`]).
pub(crate) fn append(path: &Path, entry: &Entry) -> Result<Vec<Entry>> {
    append_within(path, entry, crate::io::bounded::limit())
}

/// [`append`], reading back at most `limit` bytes: a history grown (or
/// replaced) past it is refused, not read into memory.
fn append_within(path: &Path, entry: &Entry, limit: u64) -> Result<Vec<Entry>> {
    let err = |source: std::io::Error| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)
        .map_err(err)?;
    // Blocks until no other job holds it; released when `file` is closed.
    file.lock().map_err(err)?;
    let mut line = serde_json::to_string(entry).map_err(|e| err(e.into()))?;
    line.push('\n');
    file.write_all(line.as_bytes()).map_err(err)?;
    file.sync_data().map_err(err)?;
    file.seek(SeekFrom::Start(0)).map_err(err)?;
    let mut entries = Vec::new();
    let kind = crate::error::FileKind::MemoryHistory;
    let bounded = crate::io::bounded::Bounded::with_limit(&file, limit);
    for (n, l) in BufReader::new(bounded).lines().enumerate() {
        let l = l.map_err(|source| Error::read(kind, path, source))?;
        if l.trim().is_empty() {
            continue;
        }
        let e: Entry = serde_json::from_str(&l).map_err(|e| {
            Error::malformed(
                crate::error::FileKind::MemoryHistory,
                path,
                format!("line {}: not a history entry: {e}", n + 1),
            )
        })?;
        entries.push(e);
    }
    Ok(entries)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// The rule over the history: the baseline is the median of the `window`
/// runs before the last `consecutive`; it fails when each of those last runs
/// leaked more than `factor` × baseline and more than `min_bytes`.
pub(crate) fn judge(entries: &[Entry], rule: &Rule) -> MemoryResult {
    let need = rule.window + rule.consecutive;
    let check = super::MemoryCheck::LeakTrend {
        consecutive: rule.consecutive,
        window: rule.window,
    }
    .name();
    if entries.len() < need {
        return MemoryResult {
            check,
            value: None,
            limit: None,
            unit: "byte".into(),
            status: Status::Skipped,
            message: format!(
                "{} runs in the history, the rule needs {need}",
                entries.len()
            ),
        };
    }
    let recent = &entries[entries.len() - rule.consecutive..];
    let mut before: Vec<f64> = entries[entries.len() - need..entries.len() - rule.consecutive]
        .iter()
        .map(|e| e.leak_bytes)
        .collect();
    let baseline = median(&mut before);
    let line = (baseline * rule.factor).max(rule.min_bytes);
    let over = recent
        .iter()
        .all(|e| e.leak_bytes > rule.factor * baseline && e.leak_bytes > rule.min_bytes);
    let shown: Vec<String> = recent
        .iter()
        .map(|e| format_value(e.leak_bytes, "byte"))
        .collect();
    MemoryResult {
        check,
        value: recent.last().map(|e| e.leak_bytes),
        limit: Some(line),
        unit: "byte".into(),
        status: if over { Status::Fail } else { Status::Pass },
        message: format!(
            "last {}: {}; baseline (median) {}; alert above {}× baseline and {}",
            rule.consecutive,
            shown.join(", "),
            format_value(baseline, "byte"),
            rule.factor,
            format_value(rule.min_bytes, "byte")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(leak_mb: f64) -> Entry {
        Entry {
            time: "2026-11-29T00:00:00Z".into(),
            app: "app".into(),
            commit: None,
            leak_bytes: leak_mb * 1048576.0,
            peak_bytes: None,
            live_execs: 0,
        }
    }

    #[test]
    fn the_articles_rule() {
        let rule = crate::options::MemoryOptions::default().rule();
        let steady: Vec<Entry> = [300.0, 310.0, 305.0, 290.0, 300.0, 295.0, 300.0]
            .into_iter()
            .map(entry)
            .collect();
        let mut h = steady.clone();
        h.extend([500.0, 510.0, 520.0].map(entry));
        assert_eq!(
            judge(&h, &rule).status,
            Status::Fail,
            "{:?}",
            judge(&h, &rule)
        );
        // Two of three over the line: no alert.
        let mut h = steady.clone();
        h.extend([500.0, 300.0, 520.0].map(entry));
        assert_eq!(judge(&h, &rule).status, Status::Pass);
        // Over 1.5× baseline but under 384 MiB: no alert.
        let small: Vec<Entry> = [100.0; 7]
            .into_iter()
            .chain([200.0; 3])
            .map(entry)
            .collect();
        assert_eq!(judge(&small, &rule).status, Status::Pass);
        assert_eq!(judge(&steady, &rule).status, Status::Skipped);
    }

    #[test]
    fn a_history_past_the_size_limit_is_refused_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        for _ in 0..20 {
            append_within(&path, &entry(300.0), 1 << 20).unwrap();
        }
        let size = std::fs::metadata(&path).unwrap().len();
        let refused = append_within(&path, &entry(300.0), size / 2).unwrap_err();
        assert!(
            matches!(refused, Error::TooLarge { limit, .. } if limit == size / 2),
            "{refused:?}"
        );
    }

    #[test]
    fn parallel_appends_never_interleave() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        std::thread::scope(|s| {
            for t in 0..8 {
                let path = path.clone();
                s.spawn(move || {
                    for i in 0..40 {
                        let mut e = entry(f64::from(t * 100 + i));
                        e.app = "x".repeat(2000); // long lines: a torn write would show
                        append(&path, &e).unwrap();
                    }
                });
            }
        });
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 320);
        assert!(
            lines
                .iter()
                .all(|l| serde_json::from_str::<Entry>(l).is_ok())
        );
    }
}
