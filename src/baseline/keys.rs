//! Duplicate keys and unprintable strings anywhere in a JSON document that
//! ncugate reads back (a baseline, a shard report). `serde_json` keeps the
//! last of two equal keys in a map without a word (and the typed reader only
//! refuses a repeated struct field), so a baseline with two entries for one
//! kernel or one metric — a hand merge, a bad edit — would be read as half of
//! itself, and a shard's `"status": "fail", "status": "pass"` as a pass. And
//! ncugate never writes a control, noncharacter or bidirectional character
//! into a string (names are escaped where they are read from ncu), so one in
//! a file read back is a hand edit or an attack: a newline in a workload or
//! kernel name would add a workflow command or a `$GITHUB_OUTPUT` line.
//! This walk reads the text once, without building a value, and names the
//! first offending key or string and where it is.

use crate::text::escape::unprintable;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// `Err` with "duplicate key `K` in PLACE at line L column C" for the first
/// key that appears twice in one object, or "a string in PLACE holds U+000A,
/// …" for the first key or string with an [`unprintable`] character; `Err`
/// with serde_json's message for text that is not JSON; `Ok` otherwise.
pub(crate) fn no_duplicate_keys_or_unprintable(text: &str) -> Result<(), serde_json::Error> {
    let mut path = Vec::new();
    let mut de = serde_json::Deserializer::from_str(text);
    Walk {
        path: &mut path,
        version: None,
    }
    .deserialize(&mut de)
    .map_err(|e| at_key(e, 0))?;
    de.end()
}

/// [`no_duplicate_keys_or_unprintable`] of a document read as a stream (a
/// baseline of 100,000 kernels is 465 MB: never held whole), returning the
/// top-level object's `schema_version` as it was found there (`None` when
/// there is none, or the document is not an object).
pub(crate) fn no_duplicate_keys_or_unprintable_in(
    reader: impl std::io::Read,
) -> Result<Option<serde_json::Value>, serde_json::Error> {
    let mut path = Vec::new();
    let mut version = None;
    let mut de = serde_json::Deserializer::from_reader(reader);
    Walk {
        path: &mut path,
        version: Some(&mut version),
    }
    .deserialize(&mut de)
    // The stream reader stands one column past a key when its error is made.
    .map_err(|e| at_key(e, 1))?;
    de.end()?;
    Ok(version)
}

/// The keys of one object so far: a short list (most objects have a few
/// keys), a hash set past [`Seen::FEW`] (a baseline's 100,000 kernels).
#[derive(Default)]
struct Seen {
    few: Vec<String>,
    many: HashSet<String>,
}

impl Seen {
    const FEW: usize = 16;

    fn contains(&self, key: &str) -> bool {
        match self.many.is_empty() {
            true => self.few.iter().any(|k| k == key),
            false => self.many.contains(key),
        }
    }

    fn insert(&mut self, key: String) {
        if self.many.is_empty() && self.few.len() < Seen::FEW {
            self.few.push(key);
            return;
        }
        self.many.extend(self.few.drain(..));
        self.many.insert(key);
    }
}

/// Marks the message of an error found at an object's key.
const AT_KEY: char = '\u{1}';

/// `e` as serde_json words it (`… at line L column C`), a key's error
/// `shift` columns to the left: where the text reader points, on the key.
fn at_key(e: serde_json::Error, shift: usize) -> serde_json::Error {
    let text = e.to_string();
    let words = text
        .strip_prefix(AT_KEY)
        .and_then(|t| t.rsplit_once(" at line ").map(|(words, _)| words));
    match words {
        Some(words) => de::Error::custom(format!(
            "{words} at line {} column {}",
            e.line(),
            e.column().saturating_sub(shift)
        )),
        None => e,
    }
}

/// One step down the document: an object's key or an array's index.
enum Step {
    Key(String),
    Index(usize),
}

/// Where a key is: `the top-level object`, `kernels`, `kernels["k(float *)"].metrics`.
fn place(path: &[Step]) -> String {
    if path.is_empty() {
        return "the top-level object".into();
    }
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) if is_plain(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Key(k) => out.push_str(&format!("[{}]", serde_json::Value::from(k.as_str()))),
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// A key that reads well after a dot: a schema field name, not a kernel name.
fn is_plain(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

struct Walk<'a> {
    path: &'a mut Vec<Step>,
    /// At the top level only: where to keep the value of `schema_version`.
    version: Option<&'a mut Option<serde_json::Value>>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        printable(s, self.path)
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let path = self.path;
        let mut i = 0;
        loop {
            path.push(Step::Index(i));
            let more = seq.next_element_seed(Walk {
                path: &mut *path,
                version: None,
            })?;
            path.pop();
            if more.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let path = self.path;
        let mut version = self.version;
        let mut seen = Seen::default();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                return Err(de::Error::custom(format!(
                    "{AT_KEY}duplicate key `{key}` in {}",
                    place(path)
                )));
            }
            printable(&key, path)
                .map_err(|e: A::Error| de::Error::custom(format!("{AT_KEY}{e}")))?;
            if let (Some(slot), "schema_version") = (version.as_deref_mut(), key.as_str()) {
                // Kept as it is: the caller says what a version that is not a number means.
                *slot = Some(map.next_value::<serde_json::Value>()?);
                seen.insert(key);
                continue;
            }
            path.push(Step::Key(key));
            map.next_value_seed(Walk {
                path: &mut *path,
                version: None,
            })?;
            if let Some(Step::Key(key)) = path.pop() {
                seen.insert(key);
            }
        }
        Ok(())
    }
}

/// What an error about an unprintable string says of it (and how the
/// error is told from a duplicate key's).
pub(crate) const UNPRINTABLE: &str =
    "a control, noncharacter or bidirectional character that ncugate never writes";

/// `Err` naming the first unprintable character of `s` and where `s` is.
fn printable<E: de::Error>(s: &str, path: &[Step]) -> Result<(), E> {
    match s.chars().find(|&c| unprintable(c)) {
        None => Ok(()),
        Some(c) => Err(E::custom(format!(
            "a string in {} holds U+{:04X}, {UNPRINTABLE}",
            place(path),
            u32::from(c)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(text: &str) -> String {
        no_duplicate_keys_or_unprintable(text)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn names_the_repeated_key_and_where_it_is() {
        assert!(no_duplicate_keys_or_unprintable(r#"{"a": [1, {"b": 2}], "c": {"b": 3}}"#).is_ok());
        assert_eq!(
            message("{\"runs\": 1,\n\"runs\": 2}"),
            "duplicate key `runs` in the top-level object at line 2 column 6"
        );
        assert!(
            message(r#"{"kernels": {"k(float *)": {"metrics": {"m": 1, "m": 2}}}}"#)
                .starts_with(r#"duplicate key `m` in kernels["k(float *)"].metrics at line 1"#)
        );
        assert!(
            message(r#"{"fingerprint": {"gpus": [{"name": "a", "name": "b"}]}}"#)
                .starts_with("duplicate key `name` in fingerprint.gpus[0] at")
        );
        assert!(message("{\"a\": 1").contains("EOF"));
        assert!(message("{} x").contains("trailing characters"));
    }

    #[test]
    fn the_stream_reader_says_what_the_text_reader_says_and_finds_the_version() {
        for text in [
            "{\"runs\": 1,\n\"runs\": 2}",
            r#"{"kernels": {"k(float *)": {"metrics": {"m": 1, "m": 2}}}}"#,
            "{\"k\u{202e}\": 1}",
            "{\"a\": 1, \"a\"  :\n 2}",
            "{\"a\": 1,\n  \"a\"\n: 2}",
            "[{\"a\": {}}, {\"b\": 1, \"b\": 1}]",
            // Past the short list of keys, into the hash set.
            &format!(
                "{{{} \"k3\": 0}}",
                (0..20)
                    .map(|i| format!("\"k{i}\": {i},"))
                    .collect::<String>()
            ),
            "{\"k\": [1, \"a\u{202e}b\", 2]}",
            "{\"a\": 1",
            "{} x",
        ] {
            let streamed = no_duplicate_keys_or_unprintable_in(text.as_bytes())
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert_eq!(streamed, message(text), "{text}");
        }
        let version = |t: &str| {
            no_duplicate_keys_or_unprintable_in(t.as_bytes())
                .ok()
                .flatten()
        };
        assert_eq!(
            version(r#"{"a": {"schema_version": 9}, "schema_version": 2}"#),
            Some(serde_json::json!(2))
        );
        assert_eq!(version(r#"{"a": {"schema_version": 9}}"#), None);
        assert_eq!(version("[1, 2]"), None);
    }
}
