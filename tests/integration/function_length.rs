//! No non-test function in `src/` over [`MAX_LINES`] lines: a long function
//! does several steps at once, and each new report section or setting would
//! make it longer. Functions are found in the source with the comments and
//! string literals blanked out, measured from the `fn` line to the line of
//! the brace that closes the body; `#[cfg(test)]` items and `tests` folders
//! and files are skipped. The test fails on a function over the limit that
//! is not in [`ALLOWED`], and on an entry of [`ALLOWED`] that is no longer
//! over it (so the list only shrinks).

use std::path::{Path, PathBuf};

/// The longest a non-test function may be, in lines.
const MAX_LINES: usize = 120;

/// Functions over the limit that are waiting for their split: (file under
/// `src/`, function name). Remove an entry when its function is split.
const ALLOWED: &[(&str, &str)] = &[];

/// A function of the crate: where it starts and how long it is.
#[derive(Debug)]
struct Function {
    file: String,
    name: String,
    line: usize,
    lines: usize,
}

#[test]
fn no_function_over_the_limit() {
    let long: Vec<Function> = functions()
        .into_iter()
        .filter(|f| f.lines > MAX_LINES)
        .collect();
    let over: Vec<String> = long
        .iter()
        .filter(|f| !ALLOWED.contains(&(f.file.as_str(), f.name.as_str())))
        .map(|f| format!("src/{}:{} fn {}: {} lines", f.file, f.line, f.name, f.lines))
        .collect();
    let stale: Vec<String> = ALLOWED
        .iter()
        .filter(|(file, name)| !long.iter().any(|f| f.file == *file && f.name == *name))
        .map(|(file, name)| format!("src/{file} fn {name}"))
        .collect();
    assert!(
        over.is_empty(),
        "functions over {MAX_LINES} lines; split them by step:\n{}",
        over.join("\n")
    );
    assert!(
        stale.is_empty(),
        "no longer over {MAX_LINES} lines (or gone); remove them from ALLOWED:\n{}",
        stale.join("\n")
    );
}

/// The measure itself, on a made-up file: braces in strings, chars and
/// comments do not count, test modules are skipped.
#[test]
fn the_measure_counts_body_lines_and_skips_tests() {
    let source = "\
/// doc { not code
pub fn a() {
    let s = \"}}}\";
    let c = '}';
    let r = r#\"{\"#;
    // }
    /* { */
}

fn b<'x>(v: &'x str) -> &'x str { v }

trait T { fn c(&self); }

#[cfg(test)]
mod tests {
    fn long() {
    }
}
";
    let found = measure("made-up.rs", source);
    let got: Vec<(&str, usize, usize)> = found
        .iter()
        .map(|f| (f.name.as_str(), f.line, f.lines))
        .collect();
    assert_eq!(got, [("a", 2, 7), ("b", 10, 1)]);
}

/// Every non-test function of every file under `src/`.
fn functions() -> Vec<Function> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src.clone()];
    let mut found = Vec::new();
    while let Some(path) = files.pop() {
        let name = path.file_name().map(|n| n.to_string_lossy().to_string());
        if matches!(name.as_deref(), Some("tests" | "tests.rs")) {
            continue;
        }
        if path.is_dir() {
            let entries = std::fs::read_dir(&path).expect("read_dir");
            files.extend(entries.map(|e| e.expect("entry").path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("source");
        found.extend(measure(&relative(&src, &path), &text));
    }
    assert!(
        found.len() > 200,
        "too few functions found: {}",
        found.len()
    );
    found
}

fn relative(src: &Path, path: &Path) -> String {
    let rel: PathBuf = path.strip_prefix(src).expect("under src").into();
    rel.to_string_lossy().replace('\\', "/")
}

/// The functions of one file, test items left out.
fn measure(file: &str, text: &str) -> Vec<Function> {
    let code = without_tests(&blank_comments_and_strings(text));
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = next_word(&code, "fn", from) {
        from = at + 2;
        let rest = &code[from..];
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue; // `fn(` pointer types
        }
        let Some(open) = body_start(&code, from) else {
            continue; // a declaration without a body
        };
        let close = matching_brace(&code, open);
        found.push(Function {
            file: file.to_string(),
            name,
            line: line_of(at),
            lines: line_of(close) - line_of(at) + 1,
        });
    }
    found
}

/// The next `word` at or after `from` that is a whole word.
fn next_word(code: &str, word: &str, mut from: usize) -> Option<usize> {
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let bytes = code.as_bytes();
    while let Some(i) = code[from..].find(word) {
        let at = from + i;
        let end = at + word.len();
        let before = at == 0 || !is_ident(bytes[at - 1]);
        let after = end >= bytes.len() || !is_ident(bytes[end]);
        if before && after {
            return Some(at);
        }
        from = end;
    }
    None
}

/// The `{` that opens the body of the item whose signature starts at
/// `from`, or `None` when a `;` ends it first. Braces inside the signature's
/// parentheses or generics (`impl Fn() -> T`, where clauses) do not occur
/// outside a body in this crate, so the first `{` or `;` at depth 0 decides.
fn body_start(code: &str, from: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in code[from..].char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '{' if depth == 0 => return Some(from + i),
            ';' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// The `}` that closes the `{` at `open` (the end of the text if none).
fn matching_brace(code: &str, open: usize) -> usize {
    let mut depth = 0usize;
    for (i, c) in code[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + i;
                }
            }
            _ => {}
        }
    }
    code.len() - 1
}

/// The code with every item marked `#[cfg(test)]` blanked (its lines kept).
fn without_tests(code: &str) -> String {
    let mut out = code.to_string();
    let mut from = 0;
    while let Some(i) = out[from..].find("#[cfg(test)]") {
        let at = from + i;
        from = at + 1;
        let end = match body_start(&out, at + "#[cfg(test)]".len()) {
            Some(open) => matching_brace(&out, open),
            None => continue,
        };
        let blank: String = out[at..=end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(at..=end, &blank);
    }
    out
}

/// The text with comments, string literals and char literals replaced by
/// spaces (newlines kept, so line numbers stay), lifetimes left as they are.
fn blank_comments_and_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            loop {
                match (chars.get(i), chars.get(i + 1)) {
                    (Some('/'), Some('*')) => depth += 1,
                    (Some('*'), Some('/')) => depth -= 1,
                    (None, _) => break,
                    _ => {}
                }
                if depth == 0 {
                    out.push_str("  ");
                    i += 2;
                    break;
                }
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if let Some(hashes) = raw_string_start(&chars, i) {
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let mut j = i + hashes + 2 + usize::from(c == 'b');
            while j < chars.len() && !chars[j..].starts_with(&close) {
                j += 1;
            }
            let end = (j + close.len()).min(chars.len());
            chars[i..end].iter().for_each(|&c| blank(&mut out, c));
            i = end;
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(chars.len());
            chars[i..end].iter().for_each(|&c| blank(&mut out, c));
            i = end;
        } else if c == '\'' && is_char_literal(&chars, i) {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '\'' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(chars.len());
            chars[i..end].iter().for_each(|&c| blank(&mut out, c));
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// `r"`, `r#"`, `br##"`…: the number of `#` when a raw string starts at `i`.
fn raw_string_start(chars: &[char], i: usize) -> Option<usize> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    if i > 0 && is_ident(chars[i - 1]) {
        return None;
    }
    let r = if chars[i] == 'b' { i + 1 } else { i };
    if chars.get(r) != Some(&'r') {
        return None;
    }
    let hashes = chars[r + 1..].iter().take_while(|&&c| c == '#').count();
    (chars.get(r + 1 + hashes) == Some(&'"')).then_some(hashes)
}

/// A `'` that opens a char literal (`'x'`, `'\n'`, `'\u{7b}'`), not a lifetime.
fn is_char_literal(chars: &[char], i: usize) -> bool {
    match chars.get(i + 1) {
        Some('\\') => true,
        Some(_) => chars.get(i + 2) == Some(&'\''),
        None => false,
    }
}
