//! No dependency cycle between the crate's top-level modules: a stage may
//! use the stages before it and the leaves (`error`, `model`, `status`,
//! `format`, …), never one that uses it back. Dependencies are read from the
//! source: every `crate::module` path outside comments and `#[cfg(test)]`.
//! The test fails on any cycle.

use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// Top-level module → module it uses → the files that use it.
fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let modules: BTreeSet<String> = Regex::new(r"(?m)^pub mod (\w+);")
        .expect("regex")
        .captures_iter(&lib)
        .map(|c| c[1].to_string())
        .collect();
    assert!(modules.len() > 10, "{modules:?}");
    let single = Regex::new(r"crate::(\w+)").expect("regex");
    let group = Regex::new(r"crate::\{([^}]*)\}").expect("regex");
    let mut graph = Graph::new();
    let mut files = vec![src.clone()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).expect("read_dir") {
                files.push(entry.expect("entry").path());
            }
            continue;
        }
        let rel = path.strip_prefix(&src).expect("under src");
        let top = rel
            .components()
            .next()
            .map(|c| {
                c.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .unwrap_or_default();
        if !modules.contains(&top) || path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("source");
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut used: Vec<String> = single
            .captures_iter(&code)
            .map(|c| c[1].to_string())
            .collect();
        for c in group.captures_iter(&code) {
            used.extend(
                c[1].split(',')
                    .filter_map(|item| item.trim().split("::").next())
                    .map(|m| m.trim().to_string()),
            );
        }
        for to in used {
            if to != top && modules.contains(&to) {
                graph
                    .entry(top.clone())
                    .or_default()
                    .entry(to)
                    .or_default()
                    .insert(rel.display().to_string());
            }
        }
    }
    graph
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

#[test]
fn no_module_cycles() {
    let graph = graph();
    let mut cycles = Vec::new();
    for (from, uses) in &graph {
        for (to, files) in uses {
            if let Some(back) = path(&graph, to, from) {
                cycles.push(format!(
                    "{from} → {} (the first edge from {files:?})",
                    back.join(" → ")
                ));
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "module cycles: move the shared type or function into a leaf module\n{}",
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
}
