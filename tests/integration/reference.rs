//! The book's reference chapter, `docs/src/reference.md`, rendered from the
//! code as `schemas/` are: every subcommand and flag from the clap
//! definition (`src/cli.rs`, `src/options/`) with its `NCUGATE_*` variable
//! and default, and every `ncugate.toml` key from the file reader
//! (`src/config/file.rs`) with the flags that override it and its default.
//! The committed file must be what the code says;
//! `UPDATE_DOCS=1 cargo test --test integration reference` rewrites it.

use crate::readme::{commands, file_keys};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const FILE: &str = "docs/src/reference.md";

/// Text made fit for one Markdown table cell.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// An argument's help, long form when it has one.
fn help(arg: &clap::Arg) -> String {
    arg.get_long_help()
        .or(arg.get_help())
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// The default a text states: the last "(default: …)", "(…; default …)",
/// up to the `;` or the parenthesis that ends it.
fn stated_default(text: &str) -> Option<String> {
    let at = [
        "(default: ",
        "; default: ",
        "(default ",
        "; default ",
        "'s default: ",
    ]
    .iter()
    .filter_map(|form| text.rfind(form).map(|at| at + form.len()))
    .max()?;
    let rest = &text[at..];
    let mut depth = 0;
    let end = rest
        .char_indices()
        .find(|&(_, c)| {
            match c {
                '(' | '[' => depth += 1,
                ')' | ';' if depth == 0 => return true,
                ')' | ']' => depth -= 1,
                _ => {}
            }
            false
        })
        .map_or(rest.len(), |(i, _)| i);
    Some(rest[..end].to_string())
}

/// The default of an argument: clap's, else the one its help states; a
/// switch is off and a required argument has none. `None`: nothing says
/// (the test below refuses that).
fn default_of(arg: &clap::Arg) -> Option<String> {
    let clap_default: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if !clap_default.is_empty() {
        return Some(format!("`{}`", clap_default.join(",")));
    }
    stated_default(&help(arg)).or_else(|| {
        if !arg.get_action().takes_values() {
            Some("off".to_string())
        } else if arg.is_required_set() {
            Some("required".to_string())
        } else {
            None
        }
    })
}

/// The default a code comment on a file key states, or `required` when it
/// says so ("Required; …").
fn comment_default(comment: &str) -> Option<String> {
    stated_default(comment).or_else(|| {
        let required = comment.contains("Required") || comment.contains("(required");
        required.then(|| "required".to_string())
    })
}

/// A default as its table cell; where nothing states one, "—", and `what`
/// goes into `unstated`.
fn default_cell(default: Option<String>, what: &str, unstated: &mut Vec<String>) -> String {
    default.map_or_else(
        || {
            unstated.push(what.to_string());
            "—".to_string()
        },
        |d| cell(&d),
    )
}

/// How an argument is typed: `--mode <MODE>`, `-j, --jobs <N>`, `<FILE>…`.
fn usage(arg: &clap::Arg) -> String {
    let value = arg
        .get_value_names()
        .map(|names| {
            names
                .iter()
                .map(|n| format!("<{n}>"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| format!("<{}>", arg.get_id().as_str().to_uppercase()));
    let Some(long) = arg.get_long() else {
        return value;
    };
    let mut out = String::new();
    if let Some(short) = arg.get_short() {
        let _ = write!(out, "-{short}, ");
    }
    let _ = write!(out, "--{long}");
    if arg.get_action().takes_values() {
        let _ = write!(out, " {value}");
    }
    out
}

/// What an argument does, with the values it takes.
fn what(arg: &clap::Arg) -> String {
    let mut text = help(arg);
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    if !values.is_empty() {
        let end = if text.trim_end().ends_with('.') {
            ""
        } else {
            "."
        };
        let _ = write!(text, "{end} Values: {}.", values.join(", "));
    }
    text
}

fn render_commands(out: &mut String, unstated: &mut Vec<String>) {
    for (path, cmd) in commands() {
        // clap's `help` subcommands repeat the commands' own help.
        if path.iter().any(|p| p == "help") {
            continue;
        }
        let name = if path.is_empty() {
            "ncugate".to_string()
        } else {
            format!("ncugate {}", path.join(" "))
        };
        let _ = writeln!(out, "## `{name}`\n");
        if let Some(about) = cmd.get_about() {
            let _ = writeln!(out, "{}\n", about.to_string().trim());
        }
        let args: Vec<&clap::Arg> = cmd
            .get_arguments()
            .filter(|a| !a.is_hide_set())
            .filter(|a| !["help", "version"].contains(&a.get_id().as_str()))
            .collect();
        if args.is_empty() {
            continue;
        }
        let _ = writeln!(out, "| argument | variable | default | what it does |");
        let _ = writeln!(out, "|---|---|---|---|");
        for arg in args {
            let var = arg
                .get_env()
                .map_or("—".to_string(), |v| format!("`{}`", v.to_string_lossy()));
            let _ = writeln!(
                out,
                "| `{}` | {var} | {} | {} |",
                cell(&usage(arg)),
                default_cell(default_of(arg), &format!("{name} {}", usage(arg)), unstated),
                cell(&what(arg))
            );
        }
        out.push('\n');
    }
}

/// The `///` comment the code gives `key` of `[table]`: the first comment in
/// `src/config/file.rs`, `src/options/` and `src/config/` that names
/// `` `[table] key` ``, else the comment on the first field named `key` in
/// those files (a key no flag overrides has no help text).
fn source_comment(table: &str, key: &str) -> Option<String> {
    let all = doc_comments();
    named_comment(&all, &format!("`[{table}] {key}`"))
        .or_else(|| {
            all.iter().find(|(_, code)| {
                code.strip_prefix("pub(crate) ")
                    .unwrap_or(code)
                    .starts_with(&format!("{key}:"))
            })
        })
        .map(|(doc, _)| doc.clone())
}

/// The first comment that names `needle`.
fn named_comment<'a>(all: &'a [(String, String)], needle: &str) -> Option<&'a (String, String)> {
    all.iter().find(|(doc, _)| doc.contains(needle))
}

/// Each `///` comment of `src/config/file.rs`, `src/options/` and
/// `src/config/` with the first code line after its attributes.
fn doc_comments() -> Vec<(String, String)> {
    let mut files = vec![Path::new(ROOT).join("src/config/file.rs")];
    for dir in ["src/options", "src/config"] {
        let mut more: Vec<_> = std::fs::read_dir(Path::new(ROOT).join(dir))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        more.sort();
        files.extend(more);
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for text in files.iter().filter_map(|f| std::fs::read_to_string(f).ok()) {
        let mut block: Vec<&str> = Vec::new();
        for line in text.lines() {
            let code = line.trim_start();
            if let Some(doc) = code.strip_prefix("///") {
                block.push(doc.trim());
            } else if !block.is_empty() && !code.starts_with("#[") {
                out.push((block.join(" "), code.to_string()));
                block.clear();
            }
        }
    }
    out
}

/// The flag, variable and default of `key` in `[table]`: from the options
/// struct that reads the table, else from a flag whose help names the key.
fn key_flag(
    table: &str,
    key: &str,
    by_help: &BTreeMap<String, clap::Arg>,
) -> Option<(clap::Arg, bool)> {
    // A `[[workload]]` table takes `[app]`'s and `[profile]`'s keys too.
    let tables: &[&str] = match table {
        "workload" => &["app", "profile"],
        _ => &[table],
    };
    let own = ncugate::options::file_tables()
        .into_iter()
        .filter(|(name, _)| tables.contains(name))
        .find_map(|(_, cmd)| cmd.get_arguments().find(|a| a.get_id() == key).cloned());
    own.map(|a| (a, true)).or_else(|| {
        by_help
            .get(&format!("[{table}] {key}"))
            .map(|a| (a.clone(), false))
    })
}

fn render_file_keys(out: &mut String, unstated: &mut Vec<String>) {
    // The first flag whose stated default is each `[table] key`: the flag
    // that overrides the key (a help that only mentions a key, as
    // `--history-record` does `[history] branches`, does not set it).
    let mut by_help: BTreeMap<String, clap::Arg> = BTreeMap::new();
    for (_, cmd) in commands() {
        for arg in cmd.get_arguments().filter(|a| a.get_long().is_some()) {
            let text = stated_default(&help(arg)).unwrap_or_default();
            let mut rest = text.as_str();
            while let Some(at) = rest.find('[') {
                rest = &rest[at + 1..];
                let Some(end) = rest.find(']') else { break };
                let table = rest[..end].trim_matches(['[', ']']).to_string();
                let key: String = rest[end..]
                    .trim_start_matches(']')
                    .strip_prefix(' ')
                    .unwrap_or_default()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !key.is_empty() {
                    by_help
                        .entry(format!("[{table}] {key}"))
                        .or_insert_with(|| arg.clone());
                }
            }
        }
    }
    let comments = doc_comments();
    let mut tables = file_keys("");
    tables.push("sanitizer.allow".to_string());
    for table in tables {
        let header = if ["workload", "sanitizer.allow"].contains(&table.as_str()) {
            format!("[[{table}]]")
        } else {
            format!("[{table}]")
        };
        let _ = writeln!(out, "### `{header}`\n");
        let _ = writeln!(out, "| key | flag | variable | default | what it sets |");
        let _ = writeln!(out, "|---|---|---|---|---|");
        for key in file_keys(&table) {
            // A `[[workload]]` key the code comments on as such (`command`
            // is required there, while `[app] command` is not).
            let own_comment = (table == "workload")
                .then(|| named_comment(&comments, &format!("`[[workload]] {key}`")))
                .flatten()
                .map(|(doc, _)| doc.clone());
            let (flag, var, default, what_text) = match key_flag(&table, &key, &by_help) {
                Some((arg, own)) => (
                    arg.get_long()
                        .map_or("—".to_string(), |l| format!("`--{l}`")),
                    arg.get_env()
                        .map_or("—".to_string(), |v| format!("`{}`", v.to_string_lossy())),
                    own_comment
                        .as_deref()
                        .map_or_else(|| default_of(&arg), comment_default),
                    if let Some(comment) = &own_comment {
                        comment.clone()
                    } else if own {
                        what(&arg)
                    } else {
                        source_comment(&table, &key).unwrap_or_else(|| what(&arg))
                    },
                ),
                None => {
                    let comment = source_comment(&table, &key);
                    (
                        "file only".to_string(),
                        "—".to_string(),
                        comment.as_deref().and_then(comment_default),
                        comment.unwrap_or_else(|| "see the guides".to_string()),
                    )
                }
            };
            let _ = writeln!(
                out,
                "| `{key}` | {flag} | {var} | {} | {} |",
                default_cell(default, &format!("{header} {key}"), unstated),
                cell(&what_text)
            );
        }
        out.push('\n');
    }
}

/// The whole chapter, and the arguments and keys whose default nothing states.
fn render() -> (String, Vec<String>) {
    let mut unstated = Vec::new();
    let mut out = String::from(
        "# Reference\n\n\
         <!-- Generated from the code by tests/integration/reference.rs; do not edit. \
         `UPDATE_DOCS=1 cargo test --test integration reference` rewrites it. -->\n\n\
         Every subcommand, its arguments with their `NCUGATE_*` variables and defaults, and every \
         `ncugate.toml` key, as the code defines them. A setting is taken from, highest first: the \
         flag on the command line, its `NCUGATE_*` variable, the key in `ncugate.toml`, the \
         built-in default. A default in words (\"[gate] thresholds, else …\") is that order \
         written out. The guides say when to use what: [Configuration](configuration.md), \
         [Thresholds](thresholds.md), [Exit codes](exit-codes.md).\n\n\
         # Commands\n\n",
    );
    render_commands(&mut out, &mut unstated);
    out.push_str("# Variables without a flag\n\n");
    out.push_str("| variable | what it does |\n|---|---|\n");
    let _ = writeln!(
        out,
        "| `{}` | the largest input file ncugate reads, in bytes (see [Input formats](input-formats.md)) |",
        ncugate::error::MAX_INPUT_SIZE_VARIABLE
    );
    let _ = writeln!(
        out,
        "| `{}` | the key that signs and checks shard reports; read from the environment only (see [Suites](suites.md)) |\n",
        ncugate::report::sign::KEY_VARIABLE
    );
    out.push_str(
        "# ncugate.toml\n\n\
         Each table's keys as the file reader accepts them (an unknown key is an error), the flags \
         whose help names the key (they override it), the default they state, and the code's own \
         comment on the key. A `[[workload]]` table also takes the app and profiling keys of \
         `[app]` and `[profile]` (`command`, `workdir`, `env`, `timeout`, `kernel_name`, \
         `launch_skip`, `launch_count`, `extra_metrics`).\n\n",
    );
    render_file_keys(&mut out, &mut unstated);
    while out.ends_with("\n\n") {
        out.pop();
    }
    (out, unstated)
}

#[test]
fn the_committed_reference_is_the_code() {
    let (text, unstated) = render();
    let path = Path::new(ROOT).join(FILE);
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &text).expect("write the reference");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "{FILE} differs from the code: run `UPDATE_DOCS=1 cargo test --test integration reference` and commit the result"
    );
    // Every argument and key shows its default: a value, a chain of
    // settings, "none" with what that means, "off" or "required".
    assert!(
        unstated.is_empty(),
        "no default stated (add `(default: …)` to the help or the key's comment):\n{}",
        unstated.join("\n")
    );
    // Complete: every flag of every command is in it.
    for (path, cmd) in commands() {
        for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            let Some(long) = arg.get_long() else { continue };
            if ["help", "version"].contains(&long) {
                continue;
            }
            assert!(
                [format!("--{long}`"), format!("--{long} <")]
                    .iter()
                    .any(|form| text.contains(form.as_str())),
                "ncugate {} --{long} is not in the reference",
                path.join(" ")
            );
        }
    }
}
