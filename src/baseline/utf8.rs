//! A reader that passes bytes on only while they are UTF-8: a baseline read
//! as a stream fails on a file that is not UTF-8 with the same read error as
//! a file read whole into a string.

use std::io::{self, Read};

/// `inner`'s bytes, checked as UTF-8 as they pass; the first invalid
/// sequence, or a character cut off by the end, is an `InvalidData` error.
pub(crate) struct Utf8Reader<R> {
    inner: R,
    /// The first bytes of a character that the last read ended inside.
    carry: Vec<u8>,
}

impl<R: Read> Utf8Reader<R> {
    pub(crate) fn new(inner: R) -> Utf8Reader<R> {
        Utf8Reader {
            inner,
            carry: Vec::with_capacity(4),
        }
    }
}

/// The error `std::fs::read_to_string` gives for a file that is not UTF-8.
fn invalid() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "stream did not contain valid UTF-8",
    )
}

impl<R: Read> Read for Utf8Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 {
            return match self.carry.is_empty() || buf.is_empty() {
                true => Ok(0),
                false => Err(invalid()),
            };
        }
        let mut rest = &buf[..n];
        // Finish the character the last read cut, a byte at a time (at most 3).
        while !self.carry.is_empty() && !rest.is_empty() {
            self.carry.push(rest[0]);
            rest = &rest[1..];
            match std::str::from_utf8(&self.carry) {
                Ok(_) => self.carry.clear(),
                Err(e) if e.error_len().is_some() => return Err(invalid()),
                Err(_) => {}
            }
        }
        if let Err(e) = std::str::from_utf8(rest) {
            if e.error_len().is_some() {
                return Err(invalid());
            }
            self.carry.extend_from_slice(&rest[e.valid_up_to()..]);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `bytes` through the checker in reads of `chunk` bytes.
    fn read(bytes: &[u8], chunk: usize) -> io::Result<Vec<u8>> {
        struct Chunks<'a>(&'a [u8], usize);
        impl Read for Chunks<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut out = Vec::new();
        Utf8Reader::new(Chunks(bytes, chunk)).read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn passes_utf8_split_anywhere_and_refuses_the_rest() {
        let text = "{\"k\": \"naïve ✓ 𝄞 scale<0>\"}".as_bytes();
        for chunk in 1..=text.len() {
            assert_eq!(read(text, chunk).ok().as_deref(), Some(text), "{chunk}");
        }
        for bad in [&b"ab\xffcd"[..], b"\xe2\x9c", b"a\xc3(", b"\xed\xa0\x80"] {
            for chunk in 1..=bad.len() {
                let err = read(bad, chunk).err().map(|e| e.to_string());
                assert_eq!(err.as_deref(), Some("stream did not contain valid UTF-8"));
            }
        }
    }
}
