//! One work folder per profiling run and process: `out_dir/<name>/` holds the
//! run's ncu log, raw page and report while ncugate reads them, so two
//! ncugate processes gating the same workload in one checkout must not share
//! it (each deleted and re-read the other's files: a regressed app's check
//! passed on the other process's data). A run takes an exclusive `flock` on
//! `<folder>/.ncugate.lock` and keeps it until the process exits; when another
//! process holds it, the run takes `<name>.2`, `<name>.3`, … and says so.

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The lock files this process holds, by folder: held until it exits (the
/// kernel drops an `flock` with its last descriptor).
static HELD: Mutex<Option<HashMap<PathBuf, File>>> = Mutex::new(None);

/// How many other folders to try before giving up.
const ATTEMPTS: usize = 64;

/// The work folder for run `name` under `out_dir`, created, canonical and
/// locked for this process: `out_dir/name`, or the first free `name.N`.
pub(crate) fn claim(out_dir: &Path, name: &str) -> Result<PathBuf> {
    for n in 1..=ATTEMPTS {
        let dir = if n == 1 {
            out_dir.join(name)
        } else {
            out_dir.join(format!("{name}.{n}"))
        };
        let write_error = |source| Error::Write {
            path: dir.clone(),
            source,
        };
        std::fs::create_dir_all(&dir).map_err(write_error)?;
        let dir = std::fs::canonicalize(&dir).map_err(write_error)?;
        if lock(&dir)? {
            if n > 1 {
                crate::text::escape::say(&format!(
                    "ncugate: {} is in use by another ncugate process; this run works in {}",
                    out_dir.join(name).display(),
                    dir.display()
                ));
            }
            return Ok(dir);
        }
    }
    Err(Error::from(crate::error::ConfigError::WorkFoldersBusy {
        processes: ATTEMPTS,
        folder: out_dir.join(name),
    }))
}

/// Takes the folder's lock for this process; `false` when another holds it.
fn lock(dir: &Path) -> Result<bool> {
    let mut held = HELD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let held = held.get_or_insert_with(HashMap::new);
    if held.contains_key(dir) {
        return Ok(true);
    }
    let path = dir.join(".ncugate.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|source| Error::Write {
            path: path.clone(),
            source,
        })?;
    // SAFETY: flock on a descriptor this function owns; no memory is shared.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        held.insert(dir.to_path_buf(), file);
        return Ok(true);
    }
    let err = std::io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(Error::Write { path, source: err })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_another_process_holds_is_not_shared() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let first = claim(tmp.path(), "run").expect("claim");
        assert!(first.ends_with("run"));
        // The same process claims its own folder again.
        assert_eq!(claim(tmp.path(), "run").expect("again"), first);
        // Another open file description stands for another process.
        let other = File::open(first.join(".ncugate.lock")).expect("open");
        // SAFETY: flock on a descriptor the test owns.
        let rc = unsafe { libc::flock(other.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        assert_ne!(rc, 0, "the lock is held");
        let sibling = tmp.path().join("sibling");
        std::fs::create_dir_all(&sibling).expect("mkdir");
        let held = File::create(sibling.join(".ncugate.lock")).expect("create");
        // SAFETY: as above.
        assert_eq!(
            unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
            0
        );
        let next = claim(tmp.path(), "sibling").expect("claim");
        assert!(next.ends_with("sibling.2"), "{}", next.display());
    }
}
