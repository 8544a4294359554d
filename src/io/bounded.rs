//! Bounded reading of the files a user names (exports, reports, baselines,
//! thresholds, configs, shard reports, source pages, sanitizer XML): each
//! read stops at a size limit, so `/dev/zero` or `/dev/urandom` given as a
//! file (or behind a report's symbolic link) is refused with exit 2 instead
//! of filling memory or running forever. The limit, 1 GiB unless
//! `NCUGATE_MAX_INPUT_SIZE` says otherwise (in bytes), is far above any real
//! input (the largest report among the recordings is 41 MB; a baseline of
//! 100,000 kernels is 465 MB).
//!
//! A file past the limit reads as an [`std::io::Error`] holding
//! [`TooLarge`] (a leaf type of the error module), which
//! [`crate::error::Error::read`] turns into its own
//! error: every read that names its file through it says so alike.

pub(crate) use crate::error::TooLarge;
use crate::error::{Error, FileKind, Result};
use std::io::Read;
use std::path::Path;

/// The size limit when `NCUGATE_MAX_INPUT_SIZE` is not set: 1 GiB.
pub(crate) const DEFAULT_LIMIT: u64 = 1 << 30;

/// The variable that sets the limit, in bytes.
pub(crate) const VARIABLE: &str = crate::error::MAX_INPUT_SIZE_VARIABLE;

/// The limit in force: `NCUGATE_MAX_INPUT_SIZE`, else [`DEFAULT_LIMIT`]
/// (a value that is no number is refused first thing, [`check_variable`]).
pub(crate) fn limit() -> u64 {
    parsed().ok().flatten().unwrap_or(DEFAULT_LIMIT)
}

/// `NCUGATE_MAX_INPUT_SIZE` as set, if it is.
fn parsed() -> std::result::Result<Option<u64>, String> {
    match std::env::var(VARIABLE) {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(format!(
                "{VARIABLE}={v}: a size in bytes (1 or more) was expected"
            )),
        },
        Err(e) => Err(format!("{VARIABLE}: {e}")),
    }
}

/// Refuses an `NCUGATE_MAX_INPUT_SIZE` that is no size (checked once, at
/// the start: a limit silently ignored would be no limit).
pub fn check_variable() -> Result<()> {
    parsed()
        .map(|_| ())
        .map_err(|message| crate::error::ConfigError::InvalidVariable { message }.into())
}

/// A reader that fails with [`TooLarge`] past the limit.
pub(crate) struct Bounded<R> {
    inner: R,
    left: u64,
    limit: u64,
}

impl<R: Read> Bounded<R> {
    /// `inner`, bounded by [`limit`].
    pub(crate) fn new(inner: R) -> Bounded<R> {
        Bounded::with_limit(inner, limit())
    }

    pub(crate) fn with_limit(inner: R, limit: u64) -> Bounded<R> {
        Bounded {
            inner,
            left: limit,
            limit,
        }
    }
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // At the limit: the file is too large only if something follows.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(too_large(self.limit)),
            };
        }
        let max = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..max])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// The error of a read past `limit`.
pub(crate) fn too_large(limit: u64) -> std::io::Error {
    std::io::Error::other(TooLarge { limit })
}

/// The file at `path` opened for a bounded read (one open: a named pipe or
/// process substitution is read once, from here).
pub(crate) fn open(path: &Path) -> std::io::Result<Bounded<std::fs::File>> {
    std::fs::File::open(path).map(Bounded::new)
}

/// The file at `path` (of `kind`, for its error), whole, within the limit.
pub(crate) fn read(kind: FileKind, path: &Path) -> Result<Vec<u8>> {
    read_io(path).map_err(|source| Error::read(kind, path, source))
}

/// [`read`] as an [`std::io::Result`], for callers that map the error.
pub(crate) fn read_io(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut data = Vec::new();
    open(path)?.read_to_end(&mut data)?;
    Ok(data)
}

/// The file at `path` as text, within the limit (not UTF-8: the error
/// `std::fs::read_to_string` gives).
pub(crate) fn read_to_string(kind: FileKind, path: &Path) -> Result<String> {
    let data = read(kind, path)?;
    String::from_utf8(data).map_err(|_| {
        let source = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        );
        Error::read(kind, path, source)
    })
}

/// True when `path` is a regular file (after links): it can be opened
/// again. A named pipe, a process substitution (`/dev/fd/63`), a device or
/// standard input is read once.
pub(crate) fn can_reopen(path: &Path) -> bool {
    path != Path::new("-") && std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_stops_at_the_limit_and_only_past_it_fails() {
        let mut exact = Vec::new();
        Bounded::with_limit(&[7u8; 100][..], 100)
            .read_to_end(&mut exact)
            .expect("100 bytes fit a 100-byte limit");
        assert_eq!(exact.len(), 100);
        let mut zeros = Vec::new();
        let e = Bounded::with_limit(std::io::repeat(0), 1 << 20)
            .read_to_end(&mut zeros)
            .expect_err("an endless stream is refused");
        assert!(e.get_ref().is_some_and(|e| e.is::<TooLarge>()), "{e}");
        assert_eq!(zeros.len(), 1 << 20, "no more than the limit is read");
    }
}
