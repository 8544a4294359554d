//! A file's content as a short digest: the first 16 hex digits of its
//! SHA-256, read in pieces.

use sha2::{Digest as _, Sha256};
use std::io::Read;
use std::path::Path;

/// A file's content as a short digest, or why it has none.
pub(crate) fn hashed(path: &Path) -> String {
    file_sha256(path).unwrap_or_else(|| "unreadable".into())
}

/// The first 16 hex digits of a file's SHA-256, read in pieces (an
/// executable or library may be large; nothing of it is kept).
fn file_sha256(path: &Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut h = Sha256::new();
    let mut buf = vec![0; 1 << 16];
    loop {
        let n = file.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Some(short(&h.finalize()))
}

/// The first 16 hex digits of a digest.
pub(crate) fn short(bytes: &[u8]) -> String {
    let mut hex = crate::format::hex(bytes);
    hex.truncate(16);
    hex
}
