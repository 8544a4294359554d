//! The one escape every report goes through before any format sees it.
//!
//! Text reaches a report from many files: kernel names (CSV, `.ncu-rep`,
//! baselines), workload names and errors (shard reports), sanitizer records
//! (XML), a thresholds file's `name` and `why`, the paths given on the command
//! line. A line break in any of them would start a GitHub workflow command on
//! standard output, a second `key=value` in `$GITHUB_OUTPUT` or a row in the
//! step summary; U+FFFE makes JUnit ill-formed; a bidi control reorders what a
//! reader sees. Readers refuse or escape what they can at their border; this is
//! the place that makes it true of every report whatever its source: each
//! string of the model with an [`unprintable`](crate::text::escape::unprintable)
//! character is escaped as `\u{000a}`, and one a CI runner would read as a
//! command (`##[`, a leading `::`) is made [`inert`](crate::text::escape::inert)
//! (idempotent: an escaped string is printable), before the terminal,
//! GitHub, JUnit, Markdown, HTML and JSON reporters render it.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::borrow::Cow;

/// `model` with every string made printable; borrowed (no copy) when it
/// already is, which a scan of its JSON form decides without holding it.
pub(crate) fn escaped<T: Serialize + DeserializeOwned + Clone>(model: &T) -> Cow<'_, T> {
    let mut scan = Scan::default();
    if serde_json::to_writer(&mut scan, model).is_ok() && !scan.found {
        return Cow::Borrowed(model);
    }
    let escaped = serde_json::to_value(model).ok().and_then(|mut json| {
        crate::text::escape::printable_json(&mut json);
        serde_json::from_value(json).ok()
    });
    // Only a number JSON cannot hold (NaN, infinity) would fail the round
    // trip, and reports hold finite numbers (the readers refuse the others);
    // such a model would keep its text as it is.
    escaped.map_or(Cow::Borrowed(model), Cow::Owned)
}

/// Reads serde_json's output as it is written and notes any unprintable
/// character: escaped ones (`\n`, `\u001b`) and raw ones (U+202E, U+FFFE,
/// DEL and the C1 controls, which JSON writes as they are).
#[derive(Default)]
struct Scan {
    found: bool,
    /// Bytes after a `\`: the escape so far.
    escape: Option<Vec<u8>>,
    /// The first bytes of a UTF-8 character split between two writes.
    partial: Vec<u8>,
    /// What a CI runner would read as a command ([`Commands`]).
    commands: Commands,
}

/// Finds, in serde_json's output, what [`inert`](crate::text::escape::inert)
/// escapes besides unprintable characters: `##[` anywhere, and a string
/// that starts with `::` after spaces (its opening quote, spaces, `::`).
#[derive(Default)]
struct Commands {
    /// `#` seen in a row (up to 2).
    hashes: u8,
    /// After a quote and spaces: the colons seen since.
    lead: Option<u8>,
}

impl Commands {
    /// True when `b` completes a command.
    fn byte(&mut self, b: u8) -> bool {
        let found = (b == b'[' && self.hashes == 2) || (b == b':' && self.lead == Some(1));
        self.hashes = if b == b'#' {
            (self.hashes + 1).min(2)
        } else {
            0
        };
        self.lead = match (b, self.lead) {
            (b'"', _) => Some(0),
            (b' ', Some(0)) => Some(0),
            (b':', Some(0)) => Some(1),
            _ => None,
        };
        found
    }
}

impl std::io::Write for Scan {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // Most of a report is printable ASCII without a `\\`: passed over whole.
        let plain = |b: &u8| (0x20..0x7f).contains(b) && *b != b'\\';
        if !self.found {
            self.found = buf.iter().any(|&b| self.commands.byte(b));
        }
        let between = self.escape.is_none() && self.partial.is_empty();
        let skip = self.found || (between && buf.iter().all(plain));
        if !skip {
            buf.iter().for_each(|&b| self.byte(b));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Scan {
    fn byte(&mut self, b: u8) {
        if let Some(esc) = &mut self.escape {
            esc.push(b);
            match esc[0] {
                b'n' | b'r' | b't' | b'b' | b'f' => self.found = true,
                b'u' if esc.len() == 5 => {
                    let code = std::str::from_utf8(&esc[1..])
                        .ok()
                        .and_then(|h| u32::from_str_radix(h, 16).ok());
                    self.found |= code
                        .and_then(char::from_u32)
                        .is_none_or(crate::text::escape::unprintable);
                }
                b'u' => return,
                _ => {}
            }
            self.escape = None;
            return;
        }
        if b == b'\\' {
            self.escape = Some(Vec::with_capacity(5));
            return;
        }
        if b.is_ascii() {
            self.found |= b.is_ascii_control();
            return;
        }
        self.partial.push(b);
        match std::str::from_utf8(&self.partial) {
            Ok(s) => {
                self.found |= s.chars().any(crate::text::escape::unprintable);
                self.partial.clear();
            }
            Err(e) if e.error_len().is_some() => self.partial.clear(),
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
    struct M {
        name: String,
        notes: Vec<String>,
        by_key: std::collections::BTreeMap<String, f64>,
    }

    fn m(name: &str) -> M {
        M {
            name: name.into(),
            notes: vec!["a \\ b \"c\" ü".into()],
            by_key: [(format!("k {name}"), 1.5)].into_iter().collect(),
        }
    }

    #[test]
    fn a_printable_model_is_borrowed() {
        for name in [
            "scale<0>(float *)",
            "C:\\new\\path",
            "naïve ✓",
            "\\u{000a}",
            "ns::k(int)",
            "#[x]",
        ] {
            assert!(matches!(escaped(&m(name)), Cow::Borrowed(_)), "{name}");
        }
    }

    #[test]
    fn every_string_and_key_is_escaped_once() {
        for (name, shown) in [
            ("a\nb", "a\\u{000a}b"),
            ("a\r\nb", "a\\u{000d}\\u{000a}b"),
            ("a\u{202e}b", "a\\u{202e}b"),
            ("a\u{fffe}", "a\\u{fffe}"),
            ("a\u{7f}\u{85}", "a\\u{007f}\\u{0085}"),
            ("\u{1b}[31m", "\\u{001b}[31m"),
            ("k ##[error]x", "k #\\u{0023}[error]x"),
            ("::error::x", "\\u{003a}:error::x"),
            ("  ::error::x", "  \\u{003a}:error::x"),
        ] {
            let model = m(name);
            let out = escaped(&model);
            assert!(matches!(out, Cow::Owned(_)), "{name:?}");
            assert_eq!(out.name, shown);
            assert_eq!(out.notes, m(name).notes, "printable text is kept");
            let key = crate::text::escape::inert(format!("k {name}"));
            assert!(out.by_key.contains_key(&key), "{key:?}");
            // Escaped text is printable: a second pass changes nothing.
            assert!(matches!(escaped(&*out), Cow::Borrowed(_)));
        }
    }
}
