//! compute-sanitizer's `--xml` output, read as a stream: one [`Record`] at a
//! time goes to a callback, so 50,000 records (a stream-ordered-allocation
//! experiment run with `--print-limit 0`, ~100 MB) take the memory of one record.

use crate::error::{Error, Result};
use quick_xml::Reader;
use quick_xml::events::Event;
use std::io::BufRead;
use std::path::Path;

/// One host stack frame.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frame {
    pub func: Option<String>,
    pub module: Option<String>,
    pub file: Option<String>,
    pub line: Option<u64>,
}

/// One `<record>`: its kind, the children of `<what>` and `<where>`, who, and the host stack.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    pub kind: String,
    pub level: Option<String>,
    /// `(element, text)` of `<what>`'s children: text, api, error, message, space, size, direction, …
    pub what: Vec<(String, String)>,
    /// `(element, text)` of `<where>`'s children: func, pc, file, line.
    pub place: Vec<(String, String)>,
    /// `threadIdx` / `blockIdx` as `(x,y,z)` text.
    pub thread: Option<String>,
    pub block: Option<String>,
    pub frames: Vec<Frame>,
}

impl Record {
    /// A child of `<what>` by name.
    pub fn what(&self, name: &str) -> Option<&str> {
        self.what
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A child of `<where>` by name.
    pub fn place(&self, name: &str) -> Option<&str> {
        self.place
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads every record of `reader`, calling `each` for each. Returns the number of records.
/// A file that ends inside an element is an error: a truncated XML must never pass.
pub fn read_records(
    path: &Path,
    reader: impl BufRead,
    mut each: impl FnMut(Record),
) -> Result<u64> {
    let bad = |message: String| {
        Error::Input {
        path: path.to_path_buf(),
        message,
        hint: "re-run compute-sanitizer with `--xml --save FILE`; a truncated file means it was killed or the disk filled".into(),
    }
    };
    let mut xml = Reader::from_reader(reader);
    // Not trim_text: it would also trim around entity references (`due to &quot;…`).
    let mut buf = Vec::new();
    let mut path_stack: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut record: Option<Record> = None;
    let mut frame: Option<Frame> = None;
    let mut xyz = [String::new(), String::new(), String::new()];
    let mut count = 0u64;
    let mut saw_root = false;
    loop {
        let event = xml.read_event_into(&mut buf).map_err(|e| {
            bad(format!(
                "malformed XML at byte {}: {e}",
                xml.error_position()
            ))
        })?;
        match event {
            Event::Start(e) => {
                let name = e.local_name().as_ref().to_string();
                if path_stack.is_empty() {
                    if name != "ComputeSanitizerOutput" {
                        return Err(bad(format!(
                            "not compute-sanitizer XML: the root element is <{name}>"
                        )));
                    }
                    saw_root = true;
                }
                match (path_stack.len(), name.as_str()) {
                    (1, "record") => record = Some(Record::default()),
                    (_, "frame") if path_stack.last().is_some_and(|p| p == "hostStack") => {
                        frame = Some(Frame::default())
                    }
                    _ => {}
                }
                path_stack.push(name);
                text.clear();
            }
            Event::Empty(e) if path_stack.is_empty() => {
                let name = e.local_name().as_ref().to_string();
                if name != "ComputeSanitizerOutput" {
                    return Err(bad(format!(
                        "not compute-sanitizer XML: the root element is <{name}>"
                    )));
                }
                saw_root = true;
            }
            Event::Text(t) => text.push_str(t.as_ref()),
            Event::CData(t) => text.push_str(t.as_ref()),
            Event::GeneralRef(r) => {
                if let Ok(Some(c)) = r.resolve_char_ref() {
                    text.push(c);
                } else {
                    let name: &str = r.as_ref();
                    match name {
                        "quot" => text.push('"'),
                        "amp" => text.push('&'),
                        "lt" => text.push('<'),
                        "gt" => text.push('>'),
                        "apos" => text.push('\''),
                        other => return Err(bad(format!("unknown entity &{other};"))),
                    }
                }
            }
            Event::End(_) => {
                let Some(name) = path_stack.pop() else {
                    return Err(bad("an end tag without a start".into()));
                };
                let parent = path_stack.last().map(String::as_str);
                // racecheck nests `<where>` and `<direction>` in `<what><source|destination>`.
                let side = path_stack
                    .iter()
                    .rev()
                    .find(|p| *p == "source" || *p == "destination")
                    .cloned();
                let value = std::mem::take(&mut text).trim().to_string();
                if let Some(r) = record.as_mut() {
                    match (parent, name.as_str()) {
                        (Some("record"), "kind") => r.kind = value,
                        (Some("record"), "level") => r.level = Some(value),
                        (Some("what"), _) => r.what.push((name.clone(), value)),
                        (Some("where"), _) if side.is_some() => {
                            let side = side.as_deref().unwrap_or_default();
                            r.what.push((format!("{side}_{name}"), value.clone()));
                            if side == "source" || !r.place.iter().any(|(k, _)| k == &name) {
                                r.place.push((name.clone(), value));
                            }
                        }
                        (Some("where"), _) => r.place.push((name.clone(), value)),
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
                            if let Some(f) = frame.as_mut() {
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
                            if let Some(f) = frame.take() {
                                r.frames.push(f);
                            }
                        }
                        _ => {}
                    }
                }
                if name == "record"
                    && path_stack.len() == 1
                    && let Some(r) = record.take()
                {
                    count += 1;
                    each(r);
                }
            }
            Event::Eof => {
                if !path_stack.is_empty() {
                    return Err(bad(format!(
                        "truncated: the file ends inside <{}> after {count} complete records",
                        path_stack.join("><")
                    )));
                }
                if !saw_root {
                    return Err(bad("empty: no <ComputeSanitizerOutput> element".into()));
                }
                return Ok(count);
            }
            _ => {}
        }
        buf.clear();
    }
}
