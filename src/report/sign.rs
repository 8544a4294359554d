//! Signed JSON reports: with a secret key (`NCUGATE_REPORT_KEY`, a CI
//! secret) `check` signs the JSON report it writes (HMAC-SHA-256), and `merge`
//! and `history record` refuse a report that is not signed with that key or
//! was changed after it was signed.
//!
//! The signature covers the file's bytes exactly as written, with no
//! canonical form to agree on: the pretty-printed report ends in `\n}\n`, and
//! the signed file is the same bytes up to that end, then
//! `,\n  "signature": "hmac-sha256:<64 hex digits>"\n}\n`. A reader takes the
//! last such member off (the bytes before it are what was signed, and with
//! `\n}\n` after them the report as it was), and checks the MAC in constant
//! time. A report without the key set is read the same way, its signature
//! neither needed nor checked.

use crate::error::ReportError;
use hmac::{KeyInit, Mac};
use std::borrow::Cow;
use std::io::Write;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The variable that holds the key.
pub const KEY_VARIABLE: &str = "NCUGATE_REPORT_KEY";

/// What comes between the signed bytes and the signature's hex digits.
const MEMBER: &str = ",\n  \"signature\": \"hmac-sha256:";
/// How the report ends after the signature's digits.
const END: &str = "\"\n}\n";
/// How a report ends before it is signed.
const UNSIGNED_END: &[u8] = b"\n}\n";

/// The secret key reports are signed and checked with.
#[derive(Clone, PartialEq, Eq)]
pub struct ReportKey(Vec<u8>);

impl std::fmt::Debug for ReportKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReportKey(redacted)")
    }
}

impl ReportKey {
    /// The key in `NCUGATE_REPORT_KEY`, when it is set and not empty.
    pub fn from_env() -> Option<ReportKey> {
        std::env::var_os(KEY_VARIABLE)
            .filter(|k| !k.is_empty())
            .map(|k| ReportKey(k.into_encoded_bytes()))
    }

    /// A key of these bytes.
    pub fn new(bytes: impl Into<Vec<u8>>) -> ReportKey {
        ReportKey(bytes.into())
    }

    fn mac(&self) -> HmacSha256 {
        // HMAC takes a key of any length: this cannot fail.
        <HmacSha256 as KeyInit>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of every length"))
    }
}

/// Writes a pretty-printed JSON report through `write`, signed with `key`:
/// every byte but the closing `\n}\n` is written as it comes and MACed; the
/// signature member goes before the closing brace.
pub(crate) fn write_signed(
    key: &ReportKey,
    out: &mut dyn Write,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut signing = Signing {
        out,
        mac: key.mac(),
        held: Vec::with_capacity(UNSIGNED_END.len()),
    };
    write(&mut signing)?;
    if signing.held != UNSIGNED_END {
        return Err(std::io::Error::other(
            "a signed report must end in a closing brace and a line break",
        ));
    }
    let digest = signing.mac.finalize().into_bytes();
    write!(
        signing.out,
        "{MEMBER}{}{END}",
        crate::format::hex(digest.as_slice())
    )
}

/// A writer that passes bytes on and MACs them, holding back the last
/// three (the report's closing `\n}\n`) until it knows they are the last.
struct Signing<'o> {
    out: &'o mut dyn Write,
    mac: HmacSha256,
    held: Vec<u8>,
}

impl Write for Signing<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.held.extend_from_slice(buf);
        let pass = self.held.len().saturating_sub(UNSIGNED_END.len());
        if pass > 0 {
            self.out.write_all(&self.held[..pass])?;
            self.mac.update(&self.held[..pass]);
            self.held.drain(..pass);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// The report as it was before it was signed, once its signature is known
/// good: with `key`, a report must be signed with it; without, a signature is
/// taken off unchecked.
pub(crate) fn verified<'t>(
    text: &'t str,
    key: Option<&ReportKey>,
) -> Result<Cow<'t, str>, ReportError> {
    let signed = signature(text);
    match (signed, key) {
        (None, None) => Ok(Cow::Borrowed(text)),
        (None, Some(_)) => Err(ReportError::Unsigned),
        (Some((body, _)), None) => Ok(Cow::Owned(unsigned(body))),
        (Some((body, digits)), Some(key)) => {
            let mut mac = key.mac();
            mac.update(body.as_bytes());
            let bytes = unhex(digits).ok_or(ReportError::BadSignature)?;
            mac.verify_slice(&bytes)
                .map_err(|_| ReportError::BadSignature)?;
            Ok(Cow::Owned(unsigned(body)))
        }
    }
}

/// The signed bytes and the signature's hex digits, when the report ends
/// in a signature member.
fn signature(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_suffix(END)?;
    let at = rest.rfind(MEMBER)?;
    let digits = &rest[at + MEMBER.len()..];
    (digits.len() == 64 && digits.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| (&rest[..at], digits))
}

fn unsigned(body: &str) -> String {
    let mut text = String::with_capacity(body.len() + UNSIGNED_END.len());
    text.push_str(body);
    text.push_str("\n}\n");
    text
}

fn unhex(digits: &str) -> Option<Vec<u8>> {
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(digits.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed(key: &ReportKey, report: &str) -> String {
        let mut out = Vec::new();
        write_signed(key, &mut out, |w| {
            // Written in pieces of every size, as serde writes.
            for chunk in report.as_bytes().chunks(2) {
                w.write_all(chunk)?;
            }
            Ok(())
        })
        .expect("write");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn a_signed_report_reads_back_as_written_and_only_with_its_key() {
        let report = "{\n  \"outcome\": \"pass\",\n  \"notes\": []\n}\n";
        let key = ReportKey::new("s3cret");
        let text = signed(&key, report);
        assert!(text.starts_with(
            "{\n  \"outcome\": \"pass\",\n  \"notes\": [],\n  \"signature\": \"hmac-sha256:"
        ));
        let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert!(value["signature"].as_str().is_some_and(|s| s.len() == 76));
        assert_eq!(verified(&text, Some(&key)).as_deref(), Ok(report));
        assert_eq!(verified(&text, None).as_deref(), Ok(report));
        assert_eq!(
            verified(&text, Some(&ReportKey::new("other"))),
            Err(ReportError::BadSignature)
        );
        assert_eq!(verified(report, Some(&key)), Err(ReportError::Unsigned));
        assert_eq!(verified(report, None).as_deref(), Ok(report));
        // One byte changed anywhere before the signature.
        let altered = text.replacen("pass", "pasS", 1);
        assert_eq!(
            verified(&altered, Some(&key)),
            Err(ReportError::BadSignature)
        );
        // A signature of the right shape that is not hex digits is not one.
        let at = text.find("hmac-sha256:").expect("signature") + 12;
        let mut bad = text.clone();
        bad.replace_range(at..at + 2, "zz");
        assert_eq!(verified(&bad, Some(&key)), Err(ReportError::Unsigned));
    }
}
