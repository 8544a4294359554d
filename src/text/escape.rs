//! Escaping of text that ncugate did not write itself — kernel names, file
//! names, process names, XML and JSON read back — at the border, so no
//! report can be broken by it: control characters (CR, LF, …), Unicode
//! noncharacters (U+FFFE, U+FFFF, …), bidirectional controls (U+202E, …) and
//! the line and paragraph separators (U+2028, U+2029) are written as `\u{…}`
//! escapes. A CR/LF would inject GitHub workflow commands into a CI log or
//! split a Markdown row, and U+FFFE is not allowed in XML.
//!
//! A CI runner also reads commands without a line break: GitHub's takes
//! `::cmd::` after leading whitespace and the legacy `##[cmd]` anywhere in a
//! line. [`inert`] makes both inert too, and [`log_text`] is the border of
//! every line ncugate writes to standard output or error: each line inert,
//! terminal escapes shown, passwords redacted ([`crate::text::secret`]).

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

/// `text` [`printable`], and no CI runner's command: `##[` anywhere becomes
/// `#\u{0023}[`, and `::` after leading whitespace `\u{003a}:` (the escape
/// of ncugate's own syntax, so the text stays readable; idempotent).
pub(crate) fn inert(text: String) -> String {
    let text = printable(text);
    let text = if text.contains("##[") {
        text.replace("##[", "#\\u{0023}[")
    } else {
        text
    };
    let lead = text.len() - text.trim_start().len();
    if text[lead..].starts_with("::") {
        format!("{}\\u{{003a}}{}", &text[..lead], &text[lead + 1..])
    } else {
        text
    }
}

/// Text for standard output or error, one line at a time: each line with
/// its passwords redacted and made [`inert`] (a CR before its line feed is
/// dropped: ncu's and the app's output may end lines so). `colour`: the
/// terminal view's own SGR colour codes (`ESC[…m`) are kept, any other
/// escape is shown; the view escapes every name it shows before it colours.
pub(crate) fn log_text(text: &str, colour: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body.strip_suffix('\r').unwrap_or(body), "\n"),
            None => (line, ""),
        };
        out.push_str(&log_line(body, colour));
        out.push_str(end);
    }
    out
}

/// Writes one line (or a few) to standard error through the border that
/// every line ncugate writes passes ([`log_text`]): names from exports,
/// NVML, ncu's output or the config reach no CI runner as a command, no
/// terminal as an escape, and no password is shown.
pub(crate) fn say(text: &str) {
    eprintln!("{}", log_text(text, false));
}

/// A quoted value or part of a message as shown (an error's message, detail
/// and hint): one line, its passwords redacted, [`inert`].
pub(crate) fn shown(text: &str) -> String {
    inert(crate::text::secret::redact(text))
}

/// One line of [`log_text`]. A coloured line is kept as it is when its
/// text without the colour codes needs no escape; else it loses its colours.
fn log_line(line: &str, colour: bool) -> String {
    let line = crate::text::secret::redact(line);
    if !colour || !line.contains('\u{1b}') {
        return inert(line);
    }
    let plain = strip_sgr(&line);
    let shown = inert(plain.clone());
    if shown == plain { line } else { shown }
}

/// The length of the SGR colour code `ESC[` digits and `;` `m` that starts `text`.
fn sgr_len(text: &str) -> Option<usize> {
    let params = text.strip_prefix("\u{1b}[")?;
    let n = params
        .find(|c: char| !(c.is_ascii_digit() || c == ';'))
        .filter(|&i| params[i..].starts_with('m'))?;
    Some(2 + n + 1)
}

/// `text` without its SGR colour codes.
fn strip_sgr(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\u{1b}') {
        out.push_str(&rest[..at]);
        let skip = sgr_len(&rest[at..]).unwrap_or(1);
        if skip == 1 {
            out.push('\u{1b}');
        }
        rest = &rest[at + skip..];
    }
    out.push_str(rest);
    out
}

/// Every string and key of `value` made [`inert`]: JSON written for
/// machines keeps U+202E, U+2028 and U+FFFE as they are, and a viewer shows them.
pub(crate) fn printable_json(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) => *s = inert(std::mem::take(s)),
        Value::Array(items) => items.iter_mut().for_each(printable_json),
        Value::Object(map) => {
            let entries = std::mem::take(map);
            for (key, mut v) in entries {
                printable_json(&mut v);
                map.insert(inert(key), v);
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

#[cfg(test)]
mod tests {
    use super::{inert, log_text};

    #[test]
    fn ci_commands_without_a_line_break_are_made_inert() {
        for (text, shown) in [
            ("::error::x", "\\u{003a}:error::x"),
            ("  \u{3000}::add-mask::x", "  \u{3000}\\u{003a}:add-mask::x"),
            ("kernel ##[error]x", "kernel #\\u{0023}[error]x"),
            ("a::b ::c", "a::b ::c"),
            ("#[x] # [y]", "#[x] # [y]"),
        ] {
            assert_eq!(inert(text.into()), shown, "{text:?}");
            assert_eq!(inert(shown.into()), shown, "idempotent: {shown:?}");
        }
    }

    #[test]
    fn every_line_passes_the_border() {
        let text = "ok\r\n  ::warning::w\n\u{1b}]8;;x\u{7}\u{9b}2J \u{202e}x\nurl postgres://u@h/d?password=pw\n";
        assert_eq!(
            log_text(text, false),
            "ok\n  \\u{003a}:warning::w\n\\u{001b}]8;;x\\u{0007}\\u{009b}2J \\u{202e}x\nurl postgres://u@h/d?password=***\n"
        );
    }

    #[test]
    fn the_views_own_colours_are_kept_and_any_other_escape_shown() {
        let red = "\u{1b}[31mFAIL\u{1b}[0m  scale<0>";
        assert_eq!(log_text(red, true), red);
        assert_eq!(
            log_text(red, false),
            "\\u{001b}[31mFAIL\\u{001b}[0m  scale<0>"
        );
        assert_eq!(
            log_text("\u{1b}[31m::error::x\u{1b}[0m \u{1b}[2J", true),
            "\\u{003a}:error::x \\u{001b}[2J"
        );
    }
}
