//! The documentation against the code it describes. The documentation is
//! README.md and the book's chapters, `docs/src/*.md` (whose reference
//! chapter is generated from the code: `reference.rs`). Every relative link and
//! anchor in the repository's Markdown files resolves; every flag, its
//! `NCUGATE_*` variable and every `ncugate.toml` key is named in the
//! documentation; every `ncugate …` command it shows uses flags its subcommand
//! has, and every file of the repository it names in a code span exists;
//! and every Markdown table row has its header's cells and every code fence closes.

use clap::CommandFactory;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// README.md and the book's chapters, each with its path from the root.
fn documents() -> Vec<(String, String)> {
    let mut files = vec![Path::new(ROOT).join("README.md")];
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("docs/src"))
        .expect("docs/src")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    assert!(
        chapters.len() > 15,
        "docs/src has {} chapters",
        chapters.len()
    );
    files.extend(chapters);
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("read");
            let shown = path
                .strip_prefix(ROOT)
                .unwrap_or(&path)
                .display()
                .to_string();
            (shown, text)
        })
        .collect()
}

/// All of the documentation as one text.
fn readme() -> String {
    documents()
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `*.md` under `dir`, skipping build output and hidden folders.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" && name != "node_modules" {
                markdown_files(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// The lines of `text` outside fenced code blocks.
fn outside_fences(text: &str) -> Vec<&str> {
    let mut in_fence = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        } else if !in_fence {
            lines.push(line);
        }
    }
    lines
}

/// The lines of `text` outside fenced code blocks, with inline code spans removed.
fn prose_lines(text: &str) -> Vec<String> {
    outside_fences(text)
        .into_iter()
        .map(|line| line.split('`').step_by(2).collect::<Vec<_>>().join(" "))
        .collect()
}

/// The anchors GitHub gives a file's headings: lower case, punctuation
/// dropped, spaces as `-`, a repeated heading suffixed `-1`, `-2`, ….
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for line in outside_fences(text) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#').trim().replace('`', "");
        let slug: String = heading
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let mut candidate = slug.clone();
        let mut n = 0;
        while !seen.insert(candidate.clone()) {
            n += 1;
            candidate = format!("{slug}-{n}");
        }
    }
    seen
}

/// The targets of the inline links `[text](target)` in `line`.
fn link_targets(line: &str) -> Vec<String> {
    line.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &line[at + 2..];
            let end = rest.find(')')?;
            Some(rest[..end].split_whitespace().next()?.to_string())
        })
        .collect()
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut files = Vec::new();
    markdown_files(Path::new(ROOT), &mut files);
    assert!(
        files.len() > 10,
        "found only {} Markdown files",
        files.len()
    );
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read");
        for target in prose_lines(&text).iter().flat_map(|l| link_targets(l)) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let dest = if path.is_empty() {
                file.clone()
            } else {
                file.parent().expect("parent").join(path)
            };
            let shown = file.strip_prefix(ROOT).unwrap_or(file).display();
            if !dest.exists() {
                broken.push(format!("{shown}: {target} (no such file)"));
            } else if !anchor.is_empty() && dest.extension().is_some_and(|e| e == "md") {
                let dest_text = std::fs::read_to_string(&dest).expect("read");
                if !anchors(&dest_text).contains(anchor) {
                    broken.push(format!("{shown}: {target} (no such heading)"));
                }
            }
        }
    }
    assert!(checked > 20, "checked only {checked} links");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_follow_github() {
    let text = "# ncugate\n## Fast vs full: what a check costs\n### `ncugate leaks`\n## A\n## A\n";
    let got = anchors(text);
    for want in [
        "ncugate",
        "fast-vs-full-what-a-check-costs",
        "ncugate-leaks",
        "a",
        "a-1",
    ] {
        assert!(got.contains(want), "{want} not in {got:?}");
    }
}

/// Every subcommand path (`["baseline", "record"]`) with its command.
pub(crate) fn commands() -> Vec<(Vec<String>, clap::Command)> {
    fn walk(path: Vec<String>, cmd: &clap::Command, out: &mut Vec<(Vec<String>, clap::Command)>) {
        out.push((path.clone(), cmd.clone()));
        for sub in cmd.get_subcommands() {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            walk(p, sub, out);
        }
    }
    let mut out = Vec::new();
    let mut root = ncugate::cli::Cli::command();
    root.build();
    walk(Vec::new(), &root, &mut out);
    out
}

/// Whether `text` names `--flag` as a whole word.
fn names_flag(text: &str, flag: &str) -> bool {
    text.match_indices(flag).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + flag.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_')
    })
}

#[test]
fn every_flag_and_variable_is_in_the_readme() {
    let readme = readme();
    let mut missing = BTreeSet::new();
    for (path, cmd) in commands() {
        for arg in cmd.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            if ["help", "version"].contains(&long) {
                continue;
            }
            if !names_flag(&readme, &format!("--{long}")) {
                missing.insert(format!("ncugate {} --{long}", path.join(" ")));
            }
            // The README states the rule "each flag's variable is the flag in
            // NCUGATE_UPPER_CASE"; a variable that breaks it must be named.
            if let Some(var) = arg.get_env() {
                let var = var.to_string_lossy();
                let rule = format!("NCUGATE_{}", long.to_uppercase().replace('-', "_"));
                if var != rule && !names_flag(&readme, &var) {
                    missing.insert(format!("{var} (of --{long})"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "not in README.md or docs/src:\n{}",
        Vec::from_iter(missing).join("\n")
    );
}

#[test]
fn every_variable_the_readme_names_exists() {
    let readme = readme();
    // Read by ncugate itself, not through a flag.
    let mut known = BTreeSet::from([ncugate::error::MAX_INPUT_SIZE_VARIABLE.to_string()]);
    for (_, cmd) in commands() {
        for arg in cmd.get_arguments() {
            if let Some(var) = arg.get_env() {
                known.insert(var.to_string_lossy().into_owned());
            }
        }
    }
    // Read from the environment only, never from a flag: a secret.
    known.insert(ncugate::report::sign::KEY_VARIABLE.to_string());
    // Set by ncugate for the audit library it injects in trace mode, not read by it.
    known.insert(ncugate::trace::KERNELS_VAR.to_string());
    // Not ncugate's: the CI integrations' settings that name the repository
    // ncugate is hosted in (a GitHub repository variable, a Jenkins global
    // variable), the action's own input to its script, and the binary the
    // CI scripts under .ci/ test.
    for ci in [
        "NCUGATE_BIN",
        "NCUGATE_REPOSITORY",
        "NCUGATE_REF",
        "NCUGATE_GIT_URL",
        "NCUGATE_ACTION_REPOSITORY",
    ] {
        known.insert(ci.to_string());
    }
    let bench = std::fs::read_to_string(Path::new(ROOT).join("benches/check.rs")).expect("bench");
    // The differential tests' variables (how to run them locally).
    let oracle = std::fs::read_to_string(Path::new(ROOT).join("tests/integration/oracle.rs"))
        .expect("oracle tests");
    let mut unknown = BTreeSet::new();
    for (at, _) in readme.match_indices("NCUGATE_") {
        let name: String = readme[at..]
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        if name != "NCUGATE_UPPER_CASE"
            && !known.contains(&name)
            && !bench.contains(&name)
            && !oracle.contains(&name)
        {
            unknown.insert(name);
        }
    }
    assert!(
        unknown.is_empty(),
        "the documentation names variables ncugate does not read: {unknown:?}"
    );
}

/// The `ncugate …` command lines in the README's code blocks (continuation
/// lines joined, comments and the app's `-- ARGS` cut), with their line.
fn readme_commands(readme: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let (mut in_fence, mut continued) = (false, false);
    for (n, line) in readme.lines().enumerate() {
        let line = line.trim();
        if line.starts_with("```") {
            (in_fence, continued) = (!in_fence, false);
            continue;
        }
        let starts = in_fence && line.trim_start_matches("$ ").starts_with("ncugate ");
        if continued {
            out.last_mut().expect("a command").1.push_str(line);
        } else if starts {
            out.push((n + 1, line.trim_start_matches("$ ").to_string()));
        }
        continued = (continued || starts) && line.ends_with('\\');
    }
    for (_, command) in &mut out {
        for cut in [" # ", " -- "] {
            if let Some(at) = command.find(cut) {
                command.truncate(at);
            }
        }
    }
    out
}

#[test]
fn every_readme_command_uses_real_flags() {
    let commands = commands();
    let shown: Vec<(String, String)> = documents()
        .into_iter()
        .flat_map(|(file, text)| {
            readme_commands(&text)
                .into_iter()
                .map(move |(line, command)| (format!("{file}:{line}"), command))
        })
        .collect();
    assert!(shown.len() > 30, "found only {} commands", shown.len());
    let mut wrong = Vec::new();
    for (line, text) in shown {
        let words: Vec<&str> = text.split_whitespace().skip(1).collect();
        // The longest subcommand path the words start with.
        let Some((path, cmd)) = commands
            .iter()
            .filter(|(p, _)| p.iter().zip(&words).all(|(a, b)| a == b) && p.len() <= words.len())
            .max_by_key(|(p, _)| p.len())
        else {
            continue;
        };
        if path.is_empty() && !words.first().is_some_and(|w| w.starts_with('-')) {
            if !words.first().is_some_and(|w| w.ends_with(':')) {
                wrong.push(format!("{line}: no subcommand `{}`", words[0]));
            }
            continue;
        }
        let flags: BTreeSet<String> = cmd
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect();
        for word in &words {
            let flag: String = word
                .trim_start_matches(['[', '('])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if flag.starts_with("--") && flag.len() > 2 && !flags.contains(&flag) {
                wrong.push(format!(
                    "{line}: `ncugate {}` has no {flag}",
                    path.join(" ")
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The keys serde lists for an unknown key in `[table]` of `ncugate.toml`.
pub(crate) fn file_keys(table: &str) -> Vec<String> {
    let toml = match table {
        "" => "zz_unknown = 1\n".to_string(),
        "workload" => "[[workload]]\nname = \"w\"\nzz_unknown = 1\n".to_string(),
        "sanitizer.allow" => "[[sanitizer.allow]]\nzz_unknown = 1\n".to_string(),
        _ => format!("[{table}]\nzz_unknown = 1\n"),
    };
    let error = toml::from_str::<ncugate::config::file::FileConfig>(&toml)
        .expect_err("an unknown key is refused")
        .to_string();
    let list = error.split("expected one of").nth(1).unwrap_or_else(|| {
        error
            .split("expected")
            .nth(1)
            .unwrap_or_else(|| panic!("[{table}]: {error}"))
    });
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn every_config_key_is_in_the_readme() {
    let readme = readme();
    let tables = file_keys("");
    assert!(tables.contains(&"profile".to_string()), "{tables:?}");
    let mut missing = Vec::new();
    for table in tables.iter().map(String::as_str).chain(["sanitizer.allow"]) {
        let header = if ["workload", "sanitizer.allow"].contains(&table) {
            format!("[[{table}]]")
        } else {
            format!("[{table}]")
        };
        if !readme.contains(&header) {
            missing.push(header.clone());
        }
        for key in file_keys(table) {
            // Named in a TOML example (`key = `, `[[table.key]]`) or in prose
            // (`` `key` ``, `[table] key`).
            let named = [
                format!("{key} ="),
                format!("[[{table}.{key}]]"),
                format!("`{key}`"),
                format!("{header} {key}"),
            ]
            .iter()
            .any(|form| readme.contains(form.as_str()));
            if !named {
                missing.push(format!("{header} {key}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "ncugate.toml keys not in README.md or docs/src:\n{}",
        missing.join("\n")
    );
}

/// The cells of a table row as GitHub splits it: at every `|` not escaped
/// with a backslash, code spans included.
fn cells(row: &str) -> usize {
    let inner = row.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let bytes = inner.as_bytes();
    1 + (0..bytes.len())
        .filter(|&i| bytes[i] == b'|' && (i == 0 || bytes[i - 1] != b'\\'))
        .count()
}

#[test]
fn every_table_row_has_its_header_s_cells_and_every_fence_closes() {
    let mut files = Vec::new();
    markdown_files(Path::new(ROOT), &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read");
        let shown = file
            .strip_prefix(ROOT)
            .unwrap_or(file)
            .display()
            .to_string();
        let (mut in_fence, mut header) = (false, None);
        for (n, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                (in_fence, header) = (!in_fence, None);
            } else if in_fence || !trimmed.starts_with('|') {
                header = None;
            } else {
                let count = cells(trimmed);
                match header {
                    None => header = Some(count),
                    Some(h) if h != count => {
                        wrong.push(format!("{shown}:{}: {count} cells, its header {h}", n + 1))
                    }
                    Some(_) => {}
                }
            }
        }
        if in_fence {
            wrong.push(format!("{shown}: a code fence is never closed"));
        }
    }
    assert_eq!(cells("| a | `b|c` | d \\| e |"), 4);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_repository_path_the_readme_names_exists() {
    const FOLDERS: &[&str] = &[
        ".ci/",
        ".github/",
        "benches/",
        "docs/",
        "examples/",
        "fixtures/",
        "inject/",
        "jenkins/",
        "kernels/",
        "schemas/",
        "scripts/",
        "src/",
        "tests/",
        "thresholds/",
    ];
    let docs = readme();
    let prose = outside_fences(&docs).join("\n");
    let mut missing = BTreeSet::new();
    let mut checked = 0;
    // The code spans: every other piece between backticks.
    for span in prose.split('`').skip(1).step_by(2) {
        let path = span.split(':').next().unwrap_or_default();
        let placeholder = path.contains(['…', '<', '*', '{', ' ', '$']);
        if placeholder || !FOLDERS.iter().any(|f| path.starts_with(f)) {
            continue;
        }
        checked += 1;
        if !Path::new(ROOT).join(path).exists() {
            missing.insert(path.to_string());
        }
    }
    assert!(checked > 50, "checked only {checked} paths");
    assert!(
        missing.is_empty(),
        "the documentation names files that do not exist: {missing:?}"
    );
}

#[test]
fn every_chapter_is_in_the_book_s_summary() {
    let src = Path::new(ROOT).join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).expect("docs/src/SUMMARY.md");
    let listed: BTreeSet<String> = summary.lines().flat_map(link_targets).collect();
    let mut orphans = Vec::new();
    for (file, _) in documents() {
        let Some(chapter) = file.strip_prefix("docs/src/") else {
            continue;
        };
        if chapter != "SUMMARY.md" && !listed.contains(chapter) {
            orphans.push(chapter.to_string());
        }
    }
    assert!(listed.len() > 15, "SUMMARY.md lists {listed:?}");
    assert!(
        orphans.is_empty(),
        "chapters mdbook would not build (add them to docs/src/SUMMARY.md): {orphans:?}"
    );
}
