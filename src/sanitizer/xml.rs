//! compute-sanitizer's `--xml` output, read as a stream: one [`Record`] at a
//! time goes to a callback, so 50,000 records (a stream-ordered-allocation
//! experiment run with `--print-limit 0`, ~100 MB) take the memory of one record.

use crate::error::{Error, Result};
use quick_xml::Reader;
use quick_xml::events::{BytesRef, Event};
use std::io::BufRead;
use std::path::Path;

/// compute-sanitizer's XML is about 8 elements deep; anything far deeper is not its output, and
/// refusing it bounds the work per end tag (300,000 nested elements took 34–47 s before this).
const MAX_DEPTH: usize = 64;
/// The longest text of one element that is read: records hold kernel names and messages of a few
/// KB at most. A longer text node is refused instead of being copied into memory several times.
const MAX_TEXT: usize = 1 << 20;

/// One host stack frame.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Frame {
    pub(crate) func: Option<String>,
    pub(crate) module: Option<String>,
    pub(crate) file: Option<String>,
    pub(crate) line: Option<u64>,
}

/// A record's `<kind>`, as compute-sanitizer names it: `Leak` (memory never
/// freed, with its size) is told apart; `Api`, `Precise`, hazards and the
/// rest are kept as named.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(from = "String", into = "String")]
pub(crate) enum RecordKind {
    Leak,
    Other(String),
}

impl RecordKind {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            RecordKind::Leak => "Leak",
            RecordKind::Other(kind) => kind,
        }
    }
}

impl Default for RecordKind {
    /// No `<kind>` read (yet).
    fn default() -> Self {
        RecordKind::Other(String::new())
    }
}

impl From<String> for RecordKind {
    fn from(kind: String) -> Self {
        if kind == "Leak" {
            RecordKind::Leak
        } else {
            RecordKind::Other(kind)
        }
    }
}

impl From<RecordKind> for String {
    fn from(kind: RecordKind) -> String {
        match kind {
            RecordKind::Leak => "Leak".into(),
            RecordKind::Other(kind) => kind,
        }
    }
}

impl std::fmt::Display for RecordKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `<record>`: its kind, the children of `<what>` and `<where>`, who, and the host stack.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Record {
    pub(crate) kind: RecordKind,
    pub(crate) level: Option<String>,
    /// `(element, text)` of `<what>`'s children: text, api, error, message, space, size, direction, …
    pub(crate) what: Vec<(String, String)>,
    /// `(element, text)` of `<where>`'s children: func, pc, file, line.
    pub(crate) place: Vec<(String, String)>,
    /// `threadIdx` / `blockIdx` as `(x,y,z)` text.
    pub(crate) thread: Option<String>,
    pub(crate) block: Option<String>,
    pub(crate) frames: Vec<Frame>,
}

impl Record {
    /// A child of `<what>` by name.
    pub(crate) fn what(&self, name: &str) -> Option<&str> {
        self.what
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A child of `<where>` by name.
    pub(crate) fn place(&self, name: &str) -> Option<&str> {
        self.place
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads every record of `reader`, calling `each` for each. Returns the number of records.
/// A file that ends inside an element is an error: a truncated XML must never pass.
pub(crate) fn read_records(
    path: &Path,
    reader: impl BufRead,
    mut each: impl FnMut(Record),
) -> Result<u64> {
    let bad =
        |problem: String| Error::malformed(crate::error::FileKind::SanitizerXml, path, problem);
    let mut xml = Reader::from_reader(reader);
    // Not trim_text: it would also trim around entity references (`due to &quot;…`).
    let mut buf = Vec::new();
    let mut walk = Walk::default();
    let mut count = 0u64;
    loop {
        let event = xml.read_event_into(&mut buf).map_err(|e| {
            bad(format!(
                "malformed XML at byte {}: {e}",
                xml.error_position()
            ))
        })?;
        let at = xml.buffer_position();
        match event {
            Event::Start(e) => walk.start(e.local_name().as_ref().to_string(), at),
            Event::Empty(e) => walk.empty(e.local_name().as_ref(), at),
            Event::Text(t) => push_text(&mut walk.text, t.as_ref()),
            Event::CData(t) => push_text(&mut walk.text, t.as_ref()),
            Event::GeneralRef(r) => walk.entity(&r),
            Event::End(_) => walk.end().map(|done| {
                if let Some(r) = done {
                    count += 1;
                    each(r);
                }
            }),
            Event::Eof => return walk.finish(count).map(|()| count).map_err(bad),
            _ => Ok(()),
        }
        .map_err(bad)?;
        buf.clear();
    }
}

/// Where the reader is in the document, and the record and frame being read.
#[derive(Default)]
struct Walk {
    /// The open elements, the root first.
    path_stack: Vec<String>,
    /// The text of the innermost open element so far.
    text: String,
    record: Option<Record>,
    frame: Option<Frame>,
    /// `x`, `y`, `z` of the `threadIdx` or `blockIdx` being read.
    xyz: [String; 3],
    saw_root: bool,
}

impl Walk {
    /// `<name>` at byte `at`.
    fn start(&mut self, name: String, at: u64) -> std::result::Result<(), String> {
        if self.path_stack.is_empty() {
            if name != "ComputeSanitizerOutput" {
                return Err(format!(
                    "not compute-sanitizer XML: the root element is <{name}>"
                ));
            }
            self.saw_root = true;
        }
        if self.path_stack.len() >= MAX_DEPTH {
            return Err(format!(
                "nested deeper than {MAX_DEPTH} elements at byte {at}: not compute-sanitizer output"
            ));
        }
        if name == "record" && (self.path_stack.len() != 1 || self.record.is_some()) {
            // Records sit directly under the root; one anywhere else would be skipped,
            // and a skipped finding is a silent pass.
            return Err(format!(
                "a <record> inside <{}>: compute-sanitizer writes records directly under \
                 <ComputeSanitizerOutput>",
                self.path_stack.join("><")
            ));
        }
        match (self.path_stack.len(), name.as_str()) {
            (1, "record") => self.record = Some(Record::default()),
            (_, "frame") if self.path_stack.last().is_some_and(|p| p == "hostStack") => {
                self.frame = Some(Frame::default())
            }
            _ => {}
        }
        self.path_stack.push(name);
        self.text.clear();
        Ok(())
    }

    /// `<name/>` at byte `at`.
    fn empty(&mut self, name: &str, at: u64) -> std::result::Result<(), String> {
        if self.path_stack.is_empty() {
            if name != "ComputeSanitizerOutput" {
                return Err(format!(
                    "not compute-sanitizer XML: the root element is <{name}>"
                ));
            }
            self.saw_root = true;
        } else if name == "record" {
            return Err(format!(
                "an empty <record/> at byte {at}: a finding with no kind or text cannot be gated"
            ));
        }
        Ok(())
    }

    /// An entity or character reference in text.
    fn entity(&mut self, r: &BytesRef<'_>) -> std::result::Result<(), String> {
        if let Ok(Some(c)) = r.resolve_char_ref() {
            self.text.push(c);
            return Ok(());
        }
        let name: &str = r.as_ref();
        self.text.push(match name {
            "quot" => '"',
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "apos" => '\'',
            other => return Err(format!("unknown entity &{other};")),
        });
        Ok(())
    }

    /// An end tag; the record it completes, if it ends one.
    fn end(&mut self) -> std::result::Result<Option<Record>, String> {
        let Some(name) = self.path_stack.pop() else {
            return Err("an end tag without a start".into());
        };
        // No value may carry a line break or a control into a report (a `&#10;`
        // in a function name injected GitHub workflow commands).
        let value =
            crate::text::escape::one_line(std::mem::take(&mut self.text).trim().to_string());
        if self.record.is_some() {
            self.field(&name, value);
        }
        if name == "record" && self.path_stack.len() == 1 {
            return Ok(self.record.take());
        }
        Ok(None)
    }

    /// Puts the text `value` of the element `name` that just ended into the record.
    fn field(&mut self, name: &str, value: String) {
        let parent = self.path_stack.last().map(String::as_str);
        // racecheck nests `<where>` and `<direction>` in `<what><source|destination>`.
        let side = self
            .path_stack
            .iter()
            .rev()
            .find(|p| *p == "source" || *p == "destination")
            .cloned();
        let xyz = &mut self.xyz;
        let Some(r) = self.record.as_mut() else {
            return;
        };
        match (parent, name) {
            (Some("record"), "kind") => r.kind = value.into(),
            (Some("record"), "level") => r.level = Some(value),
            (Some("what"), _) => r.what.push((name.to_string(), value)),
            (Some("where"), _) if side.is_some() => {
                let side = side.as_deref().unwrap_or_default();
                r.what.push((format!("{side}_{name}"), value.clone()));
                if side == "source" || !r.place.iter().any(|(k, _)| k == name) {
                    r.place.push((name.to_string(), value));
                }
            }
            (Some("where"), _) => r.place.push((name.to_string(), value)),
            (Some("source" | "destination"), _) => {
                let side = parent.unwrap_or_default();
                r.what.push((format!("{side}_{name}"), value));
            }
            (Some("threadIdx" | "blockIdx"), "x") => xyz[0] = value,
            (Some("threadIdx" | "blockIdx"), "y") => xyz[1] = value,
            (Some("threadIdx" | "blockIdx"), "z") => xyz[2] = value,
            (Some("who"), "threadIdx") => {
                r.thread = Some(format!("({},{},{})", xyz[0], xyz[1], xyz[2]))
            }
            (Some("who"), "blockIdx") => {
                r.block = Some(format!("({},{},{})", xyz[0], xyz[1], xyz[2]))
            }
            (Some("frame"), field) => {
                if let Some(f) = self.frame.as_mut() {
                    match field {
                        "func" => f.func = Some(value),
                        "module" => f.module = Some(value),
                        "file" => f.file = Some(value),
                        "line" => f.line = value.parse().ok(),
                        _ => {}
                    }
                }
            }
            (Some("hostStack"), "frame") => {
                if let Some(f) = self.frame.take() {
                    r.frames.push(f);
                }
            }
            _ => {}
        }
    }

    /// The end of the input, after `count` records.
    fn finish(&self, count: u64) -> std::result::Result<(), String> {
        if !self.path_stack.is_empty() {
            return Err(format!(
                "truncated: the file ends inside <{}> after {count} complete records",
                self.path_stack.join("><")
            ));
        }
        if !self.saw_root {
            return Err("empty: no <ComputeSanitizerOutput> element".into());
        }
        Ok(())
    }
}

/// Appends an element's text, refusing one longer than [`MAX_TEXT`].
fn push_text(text: &mut String, more: &str) -> std::result::Result<(), String> {
    if text.len() + more.len() > MAX_TEXT {
        return Err(format!(
            "an element's text is longer than {} KiB: not compute-sanitizer output",
            MAX_TEXT / 1024
        ));
    }
    text.push_str(more);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real memcheck + leakcheck run (2 leak records), recorded on the H200.
    const LEAKY: &str = include_str!("../../fixtures/h200/memory/leaky_app.memcheck-leakcheck.xml");

    fn read(xml: &str) -> Result<u64> {
        read_records(Path::new("t.xml"), xml.as_bytes(), |_| {})
    }

    fn error(xml: &str) -> String {
        match read(xml) {
            Ok(n) => panic!("accepted with {n} records"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_real_file_reads_its_two_records() {
        assert_eq!(read(LEAKY).ok(), Some(2));
    }

    #[test]
    fn records_nested_one_level_deeper_are_refused_not_skipped() {
        let xml = LEAKY
            .replace(
                "<ComputeSanitizerOutput>",
                "<ComputeSanitizerOutput><group>",
            )
            .replace(
                "</ComputeSanitizerOutput>",
                "</group></ComputeSanitizerOutput>",
            );
        assert!(error(&xml).contains("a <record> inside <ComputeSanitizerOutput><group>"));
    }

    #[test]
    fn a_self_closing_record_is_refused() {
        let xml = LEAKY.replacen("<record>", "<record/><record>", 1);
        assert!(error(&xml).contains("an empty <record/>"));
    }

    #[test]
    fn deep_nesting_stops_at_the_depth_limit() {
        let deep = 300_000;
        let xml = LEAKY.replacen(
            "<kind>Leak</kind>",
            &format!(
                "<kind>Leak</kind>{}{}",
                "<a>".repeat(deep),
                "</a>".repeat(deep)
            ),
            1,
        );
        assert!(error(&xml).contains("nested deeper than 64 elements"));
    }

    #[test]
    fn a_huge_text_node_is_refused() {
        let xml = LEAKY.replacen("Leaked 1048576 bytes", &"x".repeat(MAX_TEXT + 1), 1);
        assert!(error(&xml).contains("longer than 1024 KiB"));
    }
}
