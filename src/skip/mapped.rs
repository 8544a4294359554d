//! The shared libraries a workload's last profiled run mapped
//! (`crate::runner::loaded`: ncu's and the app's, those it opened with
//! `dlopen` included), as the verdict cache keeps them: each by its path,
//! its content digest, and the file's stamp when it was hashed (size,
//! modification and change times, inode, device). The next check hashes
//! each again, into a `loaded:<path>` part of the digest; a file whose stamp
//! is the recorded one is not read again (a PyTorch app maps a few GB of
//! libraries: hashing them takes seconds, comparing stamps microseconds).
//! A library that is gone, or whose content changed, changes its part, and
//! the miss names it.

use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The name of a mapped library's part: this, then its path.
pub(crate) const PREFIX: &str = "loaded:";

/// What a library's part says when the file is gone.
pub(crate) const GONE: &str = "gone";

/// One mapped library as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Library {
    pub(crate) path: String,
    /// Its content digest (16 hex digits), `gone`, `unreadable` or `not a file`.
    pub(crate) sha256: String,
    /// The file's stamp when it was hashed; none when it could not be read.
    pub(crate) stamp: Option<Stamp>,
}

/// A file's identity and last change as `stat` gives them: equal stamps,
/// equal content (the change time cannot be set back by a user, so a file
/// rewritten in place within the same nanosecond and size is the only miss).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Stamp {
    pub(crate) size: u64,
    pub(crate) mtime_ns: i128,
    pub(crate) ctime_ns: i128,
    pub(crate) inode: u64,
    pub(crate) device: u64,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let m = std::fs::metadata(path).ok()?;
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Some(Stamp {
            size: m.size(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
            inode: m.ino(),
            device: m.dev(),
        })
    }
}

/// Each of `paths` (what a run mapped) hashed now, just after the run,
/// reusing the digest of `known` (the last entry's libraries) where the
/// file's stamp is the one recorded there. A library already gone was the
/// run's own temporary file (a copy made and removed, a JIT's scratch
/// output): no input of the next run, so it is left out.
pub(crate) fn hash_all(paths: &[PathBuf], known: &[Library]) -> Vec<Library> {
    paths
        .iter()
        .map(|p| hash(&p.to_string_lossy(), known))
        .filter(|l| l.sha256 != GONE)
        .collect()
}

/// The recorded `libraries`, hashed again now (the stamp shortcut as in [`hash_all`]).
pub(crate) fn rehash(libraries: &[Library]) -> Vec<Library> {
    libraries.iter().map(|l| hash(&l.path, libraries)).collect()
}

/// A path read back from the cache is hostile: only a regular file is
/// read (not a device such as `/dev/zero`, which never ends, nor a pipe).
fn hash(path: &str, known: &[Library]) -> Library {
    let file = Path::new(path);
    if file.exists() && !file.is_file() {
        return Library {
            path: path.to_string(),
            sha256: "not a file".into(),
            stamp: None,
        };
    }
    let Some(stamp) = Stamp::of(file) else {
        let gone = !file.exists();
        return Library {
            path: path.to_string(),
            sha256: if gone { GONE } else { "unreadable" }.into(),
            stamp: None,
        };
    };
    let same = known
        .iter()
        .find(|l| l.path == path && l.stamp == Some(stamp) && l.sha256.len() == 16);
    let sha256 = match same {
        Some(l) => l.sha256.clone(),
        None => super::hash::hashed(file),
    };
    Library {
        path: path.to_string(),
        sha256,
        stamp: Some(stamp),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skip::digest::{first_change, library_change as change, loaded as parts};

    /// A library's content, not its stamp, decides its part; an unchanged
    /// stamp reuses the recorded digest; a changed file or a gone one is a
    /// change that names the path.
    #[test]
    fn a_changed_or_gone_library_changes_its_part_and_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("libstandin.so.1");
        std::fs::write(&lib, b"\x7fELF stand-in library bytes").unwrap();
        let then = hash_all(&[lib.clone(), dir.path().join("libtemporary.so")], &[]);
        assert_eq!(
            then.len(),
            1,
            "a library gone after the run is recorded: {then:?}"
        );
        assert_eq!(then[0].sha256.len(), 16);
        assert!(then[0].stamp.is_some());
        // Same stamp: the recorded digest is reused, not recomputed (a
        // forged one shows it).
        let mut forged = then.clone();
        forged[0].sha256 = "0123456789abcdef".into();
        assert_eq!(rehash(&forged)[0].sha256, "0123456789abcdef");
        assert_eq!(rehash(&then), then);
        // Rewritten: a new stamp (size), so read again: another digest.
        std::fs::write(&lib, b"\x7fELF stand-in library bytes, rebuilt").unwrap();
        let now = rehash(&then);
        assert_ne!(now[0].sha256, then[0].sha256);
        let changed = first_change(&parts(&then), &parts(&now)).unwrap();
        assert_eq!(
            change(&changed, &parts(&now)),
            Some(format!("library changed: {}", lib.display()))
        );
        std::fs::remove_file(&lib).unwrap();
        let gone = rehash(&now);
        assert_eq!((gone[0].sha256.as_str(), gone[0].stamp), ("gone", None));
        let changed = first_change(&parts(&now), &parts(&gone)).unwrap();
        assert_eq!(
            change(&changed, &parts(&gone)),
            Some(format!("library gone: {}", lib.display()))
        );
        assert_eq!(change("input:src/a.cu", &[]), None);
        // A path a forged entry names that is no regular file is not read.
        let device = rehash(&[Library {
            path: "/dev/zero".into(),
            sha256: "0123456789abcdef".into(),
            stamp: None,
        }]);
        assert_eq!(device[0].sha256, "not a file");
    }

    /// What hashing the libraries costs: every shared library of the
    /// system's library folder, once read in full and once by stamp. Run
    /// with `cargo test --release --lib mapped -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement, not a check"]
    fn measure_hashing_the_systems_libraries() {
        let mut paths: Vec<PathBuf> = std::fs::read_dir("/usr/lib/x86_64-linux-gnu")
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.to_string_lossy().contains(".so"))
            .collect();
        paths.sort();
        let bytes: u64 = paths
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        let t = std::time::Instant::now();
        let full = hash_all(&paths, &[]);
        let read = t.elapsed();
        let t = std::time::Instant::now();
        let again = rehash(&full);
        let stamped = t.elapsed();
        assert_eq!(full, again);
        println!(
            "{} libraries, {} MB: hashed in {read:?}, by stamp in {stamped:?}",
            paths.len(),
            bytes >> 20
        );
    }
}
