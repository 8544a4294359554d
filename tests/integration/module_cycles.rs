//! No dependency cycle between the crate's modules: a stage may use the
//! stages before it and the leaves (`error`, `model`, `status`, `format`, …),
//! never one that uses it back, and the same holds between the files of one
//! module. Dependencies are read from the source: every `crate::`, `super::`
//! and `self::` path, and every path through a child module, outside
//! comments, string literals and test modules (`#[cfg(test)] mod …`). The
//! tests fail on any cycle.

use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Module → module it uses → the files that use it.
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// One source file: its module path (`runner::process`, `lib` for the crate
/// root) and its code with comments, literals and test modules blanked.
struct Source {
    module: Vec<String>,
    file: String,
    code: String,
}

/// `text` with comments, string and char literals replaced by spaces (line
/// breaks kept), so that neither a doc link nor a message reads as a use.
fn blank_comments_and_literals(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |e| i + e);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"r\"") || rest.starts_with(b"r#") || rest.starts_with(b"br") {
            let start = if rest[0] == b'b' { i + 2 } else { i + 1 };
            let hashes = b[start..].iter().take_while(|&&c| c == b'#').count();
            if b.get(start + hashes) != Some(&b'"') || (i > 0 && is_ident(b[i - 1])) {
                i += 1;
                continue;
            }
            let close = format!("\"{}", "#".repeat(hashes));
            let body = start + hashes + 1;
            let end = text[body..]
                .find(&close)
                .map_or(b.len(), |e| body + e + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if rest[0] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if rest[0] == b'\'' {
            // A char literal ('x', '\n', '\u{1F600}'), not a lifetime ('a).
            let end = if rest.get(1) == Some(&b'\\') {
                text[i + 2..].find('\'').map(|e| i + 2 + e + 1)
            } else {
                text[i + 1..]
                    .chars()
                    .next()
                    .map(|c| i + 1 + c.len_utf8())
                    .filter(|&e| b.get(e) == Some(&b'\''))
                    .map(|e| e + 1)
            };
            match end {
                Some(end) => {
                    blank(&mut out, i, end);
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// `code` without its test modules (`#[cfg(test)] mod name { … }`), and the
/// names of the test modules it declares in files of their own
/// (`#[cfg(test)] mod name;`).
fn without_test_modules(code: &str) -> (String, Vec<String>) {
    let start = Regex::new(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*([{;])")
        .expect("regex");
    let mut kept = String::new();
    let mut files = Vec::new();
    let mut from = 0;
    while let Some(m) = start.captures_at(code, from) {
        let whole = m.get(0).expect("match");
        kept.push_str(&code[from..whole.start()]);
        if &m[2] == ";" {
            files.push(m[1].to_string());
            from = whole.end();
            continue;
        }
        let mut depth = 1;
        let mut end = code.len();
        for (i, c) in code[whole.end()..].char_indices() {
            depth += match c {
                '{' => 1,
                '}' => -1,
                _ => 0,
            };
            if depth == 0 {
                end = whole.end() + i + 1;
                break;
            }
        }
        from = end;
    }
    kept.push_str(&code[from..]);
    (kept, files)
}

/// Every source file of the crate outside test modules.
fn sources() -> Vec<Source> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let decl = Regex::new(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;").expect("regex");
    let mut found = Vec::new();
    let mut queue: Vec<(PathBuf, Vec<String>)> = vec![(src.join("lib.rs"), Vec::new())];
    while let Some((path, module)) = queue.pop() {
        let text = std::fs::read_to_string(&path).expect("source");
        let (code, test_files) = without_test_modules(&blank_comments_and_literals(&text));
        // A file's children live beside it (`lib.rs`, `mod.rs`) or in the
        // folder of its name (`a/b.rs` → `a/b/`).
        let dir = match path.file_name().and_then(|n| n.to_str()) {
            Some("lib.rs" | "mod.rs") => path.parent().expect("parent").to_path_buf(),
            _ => path.with_extension(""),
        };
        for c in decl.captures_iter(&code) {
            let name = c[1].to_string();
            if test_files.contains(&name) {
                continue;
            }
            let file = dir.join(format!("{name}.rs"));
            let file = if file.exists() {
                file
            } else {
                dir.join(&name).join("mod.rs")
            };
            let mut child = module.clone();
            child.push(name);
            queue.push((file, child));
        }
        let file = path
            .strip_prefix(&src)
            .expect("under src")
            .display()
            .to_string();
        found.push(Source { module, file, code });
    }
    assert!(found.len() > 50, "{} files", found.len());
    found
}

/// The paths of a use tree starting at `text` (`a::b::{c, d::e}` → `a::b::c`,
/// `a::b::d::e`).
fn use_tree(text: &str) -> Vec<Vec<String>> {
    fn tree(t: &[u8], i: &mut usize) -> Vec<Vec<String>> {
        let skip = |i: &mut usize| {
            while *i < t.len() && t[*i].is_ascii_whitespace() {
                *i += 1;
            }
        };
        skip(i);
        if t.get(*i) == Some(&b'{') {
            *i += 1;
            let mut all = Vec::new();
            loop {
                skip(i);
                match t.get(*i) {
                    Some(b'}') | None => {
                        *i += 1;
                        return all;
                    }
                    Some(b',') => *i += 1,
                    _ => {
                        let before = *i;
                        all.extend(tree(t, i));
                        // Skip what a use tree may hold beyond paths (`as x`, `*`).
                        while *i < t.len() && !matches!(t[*i], b',' | b'}') {
                            *i += 1;
                        }
                        if *i == before {
                            *i += 1;
                        }
                    }
                }
            }
        }
        let start = *i;
        while *i < t.len() && is_ident(t[*i]) {
            *i += 1;
        }
        if *i == start {
            return vec![Vec::new()];
        }
        let head = String::from_utf8_lossy(&t[start..*i]).into_owned();
        if t[*i..].starts_with(b"::") {
            *i += 2;
            tree(t, i)
                .into_iter()
                .map(|mut rest| {
                    rest.insert(0, head.clone());
                    rest
                })
                .collect()
        } else {
            vec![vec![head]]
        }
    }
    tree(text.as_bytes(), &mut 0)
}

/// File module → module it uses → the files that use it, every module named
/// by its path (`runner::process`); read once for all the tests.
fn file_graph() -> &'static Graph {
    static GRAPH: OnceLock<Graph> = OnceLock::new();
    GRAPH.get_or_init(read_file_graph)
}

fn read_file_graph() -> Graph {
    let sources = sources();
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|s| s.module.clone()).collect();
    let prefix = Regex::new(r"\b(crate|self|super)::((?:super::)*)").expect("regex");
    let relative = Regex::new(r"(?:^|[^\w:])(\w+)::").expect("regex");
    let mut graph = Graph::new();
    for s in &sources {
        // The module `super::` and `self::` start from: a file's own module.
        let mut uses: Vec<Vec<String>> = Vec::new();
        for m in prefix.captures_iter(&s.code) {
            let whole = m.get(0).expect("match");
            let before = s.code[..whole.start()].bytes().next_back();
            if before.is_some_and(|c| c == b':' || is_ident(c)) {
                continue;
            }
            let mut base = match &m[1] {
                "crate" => Vec::new(),
                _ => s.module.clone(),
            };
            let ups = usize::from(&m[1] == "super") + m[2].matches("super").count();
            for _ in 0..ups {
                base.pop();
            }
            for rest in use_tree(&s.code[whole.end()..]) {
                let mut full = base.clone();
                full.extend(rest);
                uses.push(full);
            }
        }
        // Paths through a child module (`process::CommandSpec` in `runner/mod.rs`).
        for c in relative.captures_iter(&s.code) {
            let name = c.get(1).expect("name");
            let mut child = s.module.clone();
            child.push(name.as_str().to_string());
            if !modules.contains(&child) {
                continue;
            }
            for rest in use_tree(&s.code[name.start()..]) {
                let mut full = s.module.clone();
                full.extend(rest);
                uses.push(full);
            }
        }
        for full in uses {
            let Some(to) = (0..=full.len())
                .rev()
                .map(|n| &full[..n])
                .find(|p| modules.contains(*p))
            else {
                continue;
            };
            if to.is_empty() || to == s.module.as_slice() {
                continue;
            }
            graph
                .entry(s.module.join("::"))
                .or_default()
                .entry(to.join("::"))
                .or_default()
                .insert(s.file.clone());
        }
    }
    graph
}

/// Uses between sibling modules, at every depth: an edge from a file into
/// another module is lifted to the two children of the modules' closest
/// common ancestor (`report::view::cells` using `baseline::keys` is `report`
/// using `baseline`; `parse::page` using `parse::raw` stays as it is). A
/// module and its own descendants are one unit here: `mod.rs` declaring and
/// re-exporting its children, a child using its parent's types, is how Rust
/// modules are built.
fn sibling_graph() -> Graph {
    let mut lifted = Graph::new();
    for (from, uses) in file_graph() {
        let from: Vec<&str> = from.split("::").collect();
        for (to, files) in uses {
            let files = files.iter().cloned();
            let to: Vec<&str> = to.split("::").collect();
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue;
            }
            lifted
                .entry(from[..=common].join("::"))
                .or_default()
                .entry(to[..=common].join("::"))
                .or_default()
                .extend(files);
        }
    }
    lifted
}

/// Top-level module → module it uses → the files that use it.
fn graph() -> Graph {
    let mut top = sibling_graph();
    top.retain(|from, _| !from.contains("::"));
    top
}

/// A path of edges from `from` to `to`, if any.
fn path(graph: &Graph, from: &str, to: &str) -> Option<Vec<String>> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![vec![from.to_string()]];
    while let Some(route) = stack.pop() {
        let last = route.last().cloned().unwrap_or_default();
        if last == to {
            return Some(route);
        }
        if !seen.insert(last.clone()) {
            continue;
        }
        for next in graph.get(&last).into_iter().flat_map(|m| m.keys()) {
            let mut longer = route.clone();
            longer.push(next.clone());
            stack.push(longer);
        }
    }
    None
}

/// Every edge that closes a cycle, with the way back.
fn cycles(graph: &Graph) -> Vec<String> {
    let mut cycles = Vec::new();
    for (from, uses) in graph {
        for (to, files) in uses {
            if let Some(back) = path(graph, to, from) {
                cycles.push(format!(
                    "{from} → {} (the first edge from {files:?})",
                    back.join(" → ")
                ));
            }
        }
    }
    cycles
}

#[test]
fn no_module_cycles() {
    let cycles = cycles(&graph());
    assert!(
        cycles.is_empty(),
        "module cycles: move the shared type or function into a leaf module\n{}",
        cycles.join("\n")
    );
}

#[test]
fn no_file_cycles() {
    let cycles = cycles(&sibling_graph());
    assert!(
        cycles.is_empty(),
        "cycles between the files of a module: move the shared type or function into a leaf file\n{}",
        cycles.join("\n")
    );
}

#[test]
fn the_reader_sees_uses_in_paths_and_groups() {
    // The gates read statuses from the leaf, not from the report model.
    let graph = graph();
    let uses = |from: &str, to: &str| graph.get(from).is_some_and(|m| m.contains_key(to));
    assert!(uses("sanitizer", "status") && !uses("sanitizer", "verdict"));
    assert!(uses("verdict", "sanitizer") && uses("verdict", "status"));
    assert!(uses("compare", "baseline") && !uses("baseline", "compare"));
    assert!(!uses("error", "runner"), "comments are not dependencies");
    let files = file_graph();
    let file_uses = |from: &str, to: &str| files.get(from).is_some_and(|m| m.contains_key(to));
    // `super::` paths, nested groups and child paths count.
    assert!(file_uses("parse::raw", "parse::scan"), "use super::scan::…");
    assert!(
        file_uses("runner", "runner::process"),
        "use process::… in mod.rs"
    );
}

#[test]
fn the_reader_skips_test_modules_only() {
    let (code, files) = without_test_modules(&blank_comments_and_literals(
        "use crate::a::X;\n#[cfg(test)]\nmod tests {\n    use crate::b;\n    fn f() { let s = \"}\"; }\n}\n\
         #[cfg(test)]\nmod snapshots;\nuse crate::{c::{D, e::F}, g};\n// crate::h\nconst S: &str = \"crate::i\";\n",
    ));
    let used: Vec<String> = Regex::new(r"crate::")
        .expect("regex")
        .find_iter(&code)
        .flat_map(|m| use_tree(&code[m.end()..]))
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(used, ["a::X", "c::D", "c::e::F", "g"]);
    assert_eq!(files, ["snapshots"]);
}
