//! Escaping of text that ncugate did not write itself — kernel names, file
//! names, process names, XML and JSON read back — at the border, so no
//! report can be broken by it: control characters (CR, LF, …), Unicode
//! noncharacters (U+FFFE, U+FFFF, …), bidirectional controls (U+202E, …) and
//! the line and paragraph separators (U+2028, U+2029) are written as `\u{…}`
//! escapes. A CR/LF would inject GitHub workflow commands into a CI log or
//! split a Markdown row, and U+FFFE is not allowed in XML.

/// `text` with control characters and noncharacters escaped as `\u{…}`.
pub(crate) fn printable(text: String) -> String {
    if !text.chars().any(unprintable) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unprintable(c) {
            out.push_str(&format!("\\u{{{:04x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Every string and key of `value` made [`printable`]: JSON written for
/// machines keeps U+202E, U+2028 and U+FFFE as they are, and a viewer shows them.
pub(crate) fn printable_json(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) => *s = printable(std::mem::take(s)),
        Value::Array(items) => items.iter_mut().for_each(printable_json),
        Value::Object(map) => {
            let entries = std::mem::take(map);
            for (key, mut v) in entries {
                printable_json(&mut v);
                map.insert(printable(key), v);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// `text` on one line: CR, LF and tab become spaces (text from XML may wrap),
/// any other [`unprintable`] character is escaped as by [`printable`].
pub(crate) fn one_line(text: String) -> String {
    if !text.chars().any(unprintable) {
        return text;
    }
    let spaced: String = text
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        })
        .collect();
    printable(spaced)
}

/// A character no report may show as it is: a control character (a CR/LF
/// injects GitHub workflow commands or splits a Markdown row), a Unicode
/// noncharacter (U+FFFE is not allowed in XML), or a bidirectional control
/// (U+202A–U+202E, U+2066–U+2069, U+200E/F, U+061C: they reorder what a
/// reader sees, so a name could pass for another), or a Unicode line or
/// paragraph separator (U+2028, U+2029: a line break to a Unicode-aware
/// reader, a log viewer or a JavaScript JUnit viewer).
pub(crate) fn unprintable(c: char) -> bool {
    let u = u32::from(c);
    c.is_control()
        || (0xFDD0..=0xFDEF).contains(&u)
        || u & 0xFFFE == 0xFFFE
        || matches!(
            u,
            0x202A..=0x202E | 0x2066..=0x2069 | 0x200E | 0x200F | 0x061C | 0x2028 | 0x2029
        )
}
