//! Atomic writes of baselines and report sets. Each file is written to a temp
//! file beside its target, `.NAME.XXXXXX.tmp`, flushed to disk, and renamed
//! into place, so a reader never sees half a file. A [`FileSet`] (the JUnit,
//! Markdown, JSON and HTML reports of one run) is renamed into place in one
//! step that an interrupt waits for ([`crate::runner::interrupt::commit`]):
//! either the whole set of this run is there or none of it.
//!
//! A write holds a lock on its temp file, and the cleanup of SIGINT/SIGTERM
//! removes it; only SIGKILL (or a power cut) leaves one behind. The next write
//! of the same target, or the next read of that baseline, removes such a file
//! when no process holds its lock and it is older than the running process,
//! and says so in one line.

use crate::error::{Error, Result};
use crate::runner::interrupt::{self, Temp};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::SystemTime;

/// Random characters in a temp file's name, between `.NAME.` and `.tmp`.
const RANDOM_CHARS: usize = 6;

/// When this process started writing (first use): a temp file modified after
/// it may belong to a process that has not locked it yet.
static STARTED: LazyLock<SystemTime> = LazyLock::new(SystemTime::now);

/// Sets the time against which temp files count as stale (first thing in `main`).
pub fn mark_start() {
    LazyLock::force(&STARTED);
}

/// Writes `bytes` to `path` through a temp file and a rename, so readers never
/// see a half-written file and a failed write leaves the old one in place.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut set = FileSet::default();
    set.add(path, bytes)?;
    set.commit()
}

/// Files written together: each to a temp file by [`FileSet::add`], all
/// renamed into place by [`FileSet::commit`]. Dropped uncommitted, the temp
/// files go and the targets are untouched.
#[derive(Default)]
pub(crate) struct FileSet {
    staged: Vec<Staged>,
    /// The folders written to, each cleared of stale temp files once per set
    /// (an HTML report writes 10^4 charts into one folder: a listing per file
    /// made a report quadratic in its charts).
    cleared: HashSet<PathBuf>,
}

struct Staged {
    target: PathBuf,
    tmp: Held,
    tracked: Temp,
}

/// Temp files a set keeps open (and so locked); past them, a staged file is
/// closed once written (an HTML report can hold 10^4 charts, more than a
/// process may keep open). A closed one is still removed on an interrupt and
/// when the set is dropped; only its lock against other ncugate processes'
/// clean-up of leftovers is gone, and that clean-up spares files younger than
/// itself.
const OPEN_LIMIT: usize = 64;

/// A staged temp file, open and locked or closed.
enum Held {
    Open(tempfile::NamedTempFile),
    Closed(tempfile::TempPath),
}

impl Held {
    fn persist(self, target: &Path) -> std::io::Result<()> {
        match self {
            Held::Open(file) => file.persist(target).map(drop).map_err(|e| e.error),
            Held::Closed(path) => path.persist(target).map_err(|e| e.error),
        }
    }
}

impl FileSet {
    /// Writes `bytes` to a temp file beside `path` (creating its folder).
    pub(crate) fn add(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        self.add_with(path, |out| out.write_all(bytes))
    }

    /// Writes what `write` writes, through a buffer, to a temp file beside
    /// `path` (creating its folder): a report made as it is written.
    pub(crate) fn add_with(
        &mut self,
        path: &Path,
        write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<()> {
        let err = |source: std::io::Error| Error::Write {
            path: path.to_path_buf(),
            source,
        };
        let dir = folder(path);
        // A report or baseline path in a folder that does not exist yet (`perf/baseline.json`).
        std::fs::create_dir_all(dir).map_err(err)?;
        // Every stale temp file of the folder, whatever its target: a killed
        // HTML report leaves charts that the next report may not write again.
        if self.cleared.insert(dir.to_path_buf()) {
            let mut candidates: Vec<PathBuf> = leftovers_in(dir).into_values().flatten().collect();
            candidates.sort();
            let (removed, bytes) = remove_stale(candidates);
            let place = if dir == Path::new(".") {
                "in the current folder".to_string()
            } else {
                format!("in {}", dir.display())
            };
            say_removed(&removed, bytes, &place);
        }
        // Created and registered for the cleanup in one step: a signal
        // between the two left the file behind.
        let created = Temp::create(
            || {
                tempfile::Builder::new()
                    .prefix(&format!(".{}.", file_name(path)))
                    .suffix(".tmp")
                    .rand_bytes(RANDOM_CHARS)
                    .tempfile_in(dir)
            },
            |tmp| tmp.path(),
        );
        let (tmp, tracked) = created.ok_or_else(interrupt::error)?.map_err(err)?;
        // Locked while it exists: a later run does not take it for a leftover.
        tmp.as_file().try_lock().map_err(|e| err(e.into()))?;
        // A temp file is created 0600; the file it replaces keeps its mode, a
        // new one gets the usual 0644 (reports and baselines are shared files).
        let permissions = match std::fs::metadata(path) {
            Ok(existing) => Some(existing.permissions()),
            Err(_) => default_permissions(),
        };
        if let Some(permissions) = permissions {
            tmp.as_file().set_permissions(permissions).map_err(err)?;
        }
        let mut out = std::io::BufWriter::with_capacity(1 << 16, tmp.as_file());
        write(&mut out).map_err(err)?;
        out.flush().map_err(err)?;
        drop(out);
        tmp.as_file().sync_all().map_err(err)?;
        let tmp = if self.staged.len() < OPEN_LIMIT {
            Held::Open(tmp)
        } else {
            Held::Closed(tmp.into_temp_path())
        };
        self.staged.push(Staged {
            target: path.to_path_buf(),
            tmp,
            tracked,
        });
        Ok(())
    }

    /// Renames every file into place, in the order added, unless the run was
    /// interrupted (then none is, and the temp files go).
    pub(crate) fn commit(self) -> Result<()> {
        let targets: Vec<PathBuf> = self.staged.iter().map(|s| s.target.clone()).collect();
        // Registered until the commit is over (a guard's drop takes the lock the commit holds).
        let (files, _tracked): (Vec<_>, Vec<_>) = self
            .staged
            .into_iter()
            .map(|s| ((s.target, s.tmp), s.tracked))
            .unzip();
        let mut failed = None;
        let renamed = interrupt::commit(&targets, || {
            for (target, tmp) in files {
                if let Err(e) = tmp.persist(&target) {
                    failed = Some(target);
                    return Err(e);
                }
            }
            Ok(())
        });
        match renamed {
            Err(_) => Err(interrupt::error()),
            Ok(Ok(())) => Ok(()),
            Ok(Err(source)) => Err(Error::Write {
                path: failed.unwrap_or_default(),
                source,
            }),
        }
    }
}

fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(|| "ncugate".into(), |n| n.to_string_lossy().into_owned())
}

/// The mode of a new report or baseline: 0644 on Unix (a temp file is 0600).
#[cfg(unix)]
fn default_permissions() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o644))
}

/// Elsewhere a temp file is not private: keep what it has.
#[cfg(not(unix))]
fn default_permissions() -> Option<std::fs::Permissions> {
    None
}

/// Whether `entry` is a temp file of a write of `name`: `.NAME.XXXXXX.tmp`.
fn is_temp_of(entry: &str, name: &str) -> bool {
    entry
        .strip_prefix(&format!(".{name}."))
        .and_then(|rest| rest.strip_suffix(".tmp"))
        .is_some_and(|random| {
            random.len() == RANDOM_CHARS && random.bytes().all(|b| b.is_ascii_alphanumeric())
        })
}

/// The temp files in `folder` that writes left or are making, by the name of
/// their target (`.NAME.XXXXXX.tmp` → `NAME`).
fn leftovers_in(folder: &Path) -> HashMap<String, Vec<PathBuf>> {
    let mut by_target: HashMap<String, Vec<PathBuf>> = HashMap::new();
    let Ok(entries) = std::fs::read_dir(folder) else {
        return by_target;
    };
    for entry in entries.flatten() {
        let entry_name = entry.file_name().to_string_lossy().into_owned();
        let Some(name) = target_of(&entry_name) else {
            continue;
        };
        if is_temp_of(&entry_name, name) {
            by_target
                .entry(name.to_string())
                .or_default()
                .push(entry.path());
        }
    }
    by_target
}

/// `NAME` of a `.NAME.XXXXXX.tmp` file name.
fn target_of(entry: &str) -> Option<&str> {
    let inner = entry.strip_prefix('.')?.strip_suffix(".tmp")?;
    let cut = inner.len().checked_sub(RANDOM_CHARS + 1)?;
    inner.get(..cut)
}

/// Removes the temp files that killed writes of `target` left beside it (no
/// process holds their lock, and they are older than this process), and says
/// so in one line. Returns what it removed. Best effort: a file it cannot
/// inspect or remove stays.
pub(crate) fn remove_stale_temps(target: &Path) -> Vec<PathBuf> {
    let candidates = leftovers_in(folder(target))
        .remove(&file_name(target))
        .unwrap_or_default();
    let (removed, bytes) = remove_stale(candidates);
    say_removed(&removed, bytes, &format!("of {}", target.display()));
    removed
}

/// Removes those of `candidates` that are stale; what it removed and its size.
fn remove_stale(candidates: Vec<PathBuf>) -> (Vec<PathBuf>, u64) {
    let mut removed = Vec::new();
    let mut bytes = 0;
    for path in candidates {
        let Ok(file) = std::fs::File::open(&path) else {
            continue;
        };
        let Ok(meta) = file.metadata() else {
            continue;
        };
        // A margin for the file system's coarse clock.
        let old = meta
            .modified()
            .is_ok_and(|m| m + std::time::Duration::from_secs(2) < *STARTED);
        // A write in progress holds the lock; a killed one's died with it.
        if meta.is_file() && old && file.try_lock().is_ok() && std::fs::remove_file(&path).is_ok() {
            bytes += meta.len();
            removed.push(path);
        }
    }
    (removed, bytes)
}

/// One line for what [`remove_stale`] removed (`place`: `in DIR`, `of FILE`):
/// their number and size, and the first few names.
fn say_removed(removed: &[PathBuf], bytes: u64, place: &str) {
    const SHOWN: usize = 3;
    if removed.is_empty() {
        return;
    }
    let mut names: Vec<String> = removed
        .iter()
        .take(SHOWN)
        .map(|p| file_name(p).to_string())
        .collect();
    if removed.len() > SHOWN {
        names.push(format!("… ({} more)", removed.len() - SHOWN));
    }
    crate::text::escape::say(&format!(
        "ncugate: removed {} ({}) that interrupted writes left {place}: {}",
        crate::format::count(removed.len(), "temp file", "temp files"),
        crate::format::format_value(bytes as f64, "byte"),
        names.join(", ")
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_temp_files_of_the_same_target_match() {
        assert!(is_temp_of(".baseline.json.aB3xY9.tmp", "baseline.json"));
        assert!(!is_temp_of(".baseline.json.aB3xY9.tmp", "r.json"));
        assert!(!is_temp_of(".baseline.json.aB3x.tmp", "baseline.json"));
        assert!(!is_temp_of(".baseline.json.aB3x-9.tmp", "baseline.json"));
        assert!(!is_temp_of("baseline.json", "baseline.json"));
        assert!(!is_temp_of(".tmpXYZ123", "baseline.json"));
        assert_eq!(
            target_of(".baseline.json.aB3xY9.tmp"),
            Some("baseline.json")
        );
        assert_eq!(target_of(".a.b.c.svg.aB3xY9.tmp"), Some("a.b.c.svg"));
        assert_eq!(target_of(".aB3xY9.tmp"), None);
        assert_eq!(target_of("aB3xY9.tmp"), None);
        assert_eq!(target_of(".x.tmp"), None);
    }

    #[test]
    fn a_set_removes_every_leftover_of_its_folder_from_one_listing() {
        mark_start();
        let dir = tempfile::tempdir().expect("dir");
        let past = SystemTime::now() - std::time::Duration::from_secs(3600);
        let leftovers: Vec<PathBuf> = ["1.svg", "2.svg", "3.svg"]
            .iter()
            .map(|name| {
                let path = dir.path().join(format!(".{name}.QQQQQQ.tmp"));
                std::fs::write(&path, b"<svg").expect("write");
                std::fs::File::options()
                    .write(true)
                    .open(&path)
                    .and_then(|f| f.set_modified(past))
                    .expect("mtime");
                path
            })
            .collect();
        let mut set = FileSet::default();
        set.add(&dir.path().join("1.svg"), b"<svg/>").expect("1");
        // Every stale temp file of the folder goes, whatever its target: a
        // killed report's charts of rules the next report has not (2.svg) stayed.
        assert!(leftovers.iter().all(|l| !l.exists()));
        set.add(&dir.path().join("3.svg"), b"<svg/>").expect("3");
        set.commit().expect("commit");
    }

    #[test]
    fn a_locked_or_new_temp_file_stays_and_a_stale_one_goes() {
        mark_start();
        let dir = tempfile::tempdir().expect("dir");
        let target = dir.path().join("b.json");
        // A write in progress: locked.
        let busy = dir.path().join(".b.json.AAAAAA.tmp");
        let held = std::fs::File::create(&busy).expect("create");
        held.try_lock().expect("lock");
        // A killed write: no lock.
        let stale = dir.path().join(".b.json.BBBBBB.tmp");
        std::fs::write(&stale, b"x").expect("write");
        // Another target's.
        let other = dir.path().join(".c.json.CCCCCC.tmp");
        std::fs::write(&other, b"x").expect("write");
        let past = SystemTime::now() - std::time::Duration::from_secs(3600);
        for p in [&busy, &stale, &other] {
            std::fs::File::options()
                .write(true)
                .open(p)
                .and_then(|f| f.set_modified(past))
                .expect("mtime");
        }
        // Written after this process started: may be a writer that has not locked yet.
        let young = dir.path().join(".b.json.DDDDDD.tmp");
        std::fs::write(&young, b"x").expect("write");
        assert_eq!(remove_stale_temps(&target), vec![stale.clone()]);
        assert!(busy.exists() && other.exists() && young.exists() && !stale.exists());
        drop(held);
    }

    #[test]
    fn a_set_is_renamed_whole_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().expect("dir");
        let (a, b) = (dir.path().join("a.xml"), dir.path().join("sub/b.json"));
        let mut set = FileSet::default();
        set.add(&a, b"a").expect("a");
        set.add(&b, b"b").expect("b");
        assert!(!a.exists() && !b.exists(), "nothing before the commit");
        set.commit().expect("commit");
        assert_eq!(std::fs::read(&a).expect("a"), b"a");
        assert_eq!(std::fs::read(&b).expect("b"), b"b");
        let mut dropped = FileSet::default();
        dropped.add(&a, b"new").expect("a");
        drop(dropped);
        assert_eq!(std::fs::read(&a).expect("a"), b"a", "the old file stays");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        // More files than a set keeps open: all renamed, no temp file left.
        let many = dir.path().join("many");
        let mut set = FileSet::default();
        for i in 0..OPEN_LIMIT * 2 {
            set.add(&many.join(format!("{i}.svg")), b"<svg/>")
                .expect("add");
        }
        set.commit().expect("commit");
        let written = std::fs::read_dir(&many).expect("dir").flatten().count();
        assert_eq!(written, OPEN_LIMIT * 2);
    }
}
