//! Snapshots of every reporter, each built from a hand-made [`Report`] (no
//! CLI run, no fixture), one per situation a reader meets: a pass, a
//! regression with its why-lines, an error before any comparison, new ncu
//! findings, a kernel name full of characters each format must escape, and
//! the compute-sanitizer and graph-memory gates. A snapshot change is
//! reviewed like code (`cargo insta review`).

pub(crate) mod cases;

use super::terminal::{Show, Style};
use super::{Document, GitHub, Html, Rendered, Reporter, View};
use cases::{cases, findings, hostile};

/// The HTML report's files of a check.
fn html_files(report: &crate::verdict::Report) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let doc = Document::check(report);
    let Rendered::Folder(files) = Html.render(&doc) else {
        panic!("HTML renders a folder");
    };
    files.collect()
}

fn snapshot(name: String, text: String) {
    insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn terminal() {
    for (case, report) in cases() {
        let style = Style {
            show: Show::All,
            ..Style::default()
        };
        snapshot(
            format!("terminal_{case}"),
            super::terminal::render(&report, &style),
        );
    }
}

/// The table at 60, 80 and 100 columns: every line fits (but for the
/// kernel names of the "why" lines, which are whole words), and every
/// metric's name is whole.
#[test]
fn terminal_widths() {
    let report = cases::regression();
    for width in [60, 80, 100] {
        let style = Style {
            show: Show::All,
            width,
            ..Style::default()
        };
        let text = super::terminal::render(&report, &style);
        let table = &text[text.find("\nchecks (").expect("a table") + 1..];
        let table = table.split("\n\n").next().unwrap_or_default();
        for line in table.lines() {
            assert!(line.chars().count() <= width, "{width}: {line}");
        }
        for metric in ["gpu__time_duration", "sm__inst_executed", "lts__t_sectors"] {
            assert!(
                table.contains(&format!("    {metric}  "))
                    || table.contains(&format!("    {metric}\n"))
                    || table.ends_with(metric),
                "{width}: {metric} whole\n{table}"
            );
        }
        snapshot(format!("terminal_width_{width}"), text);
    }
}

/// A degraded check's label wraps to 80 and 100 columns with the rest, and
/// its not-gated metric rows are listed whatever `--show` says.
#[test]
fn a_degraded_report_fits_the_width_and_lists_what_it_did_not_gate() {
    let report = cases::degraded();
    for width in [80, 100] {
        let style = Style {
            width,
            ..Style::default()
        };
        let text = super::terminal::render(&report, &style);
        for line in text.lines() {
            assert!(line.chars().count() <= width, "{width}: {line}");
        }
        assert!(
            text.starts_with("ncugate: PASS (degraded: performance counters locked"),
            "{text}"
        );
        // The rules it could not measure are counted and named in a note;
        // `--show all` lists them, one row each.
        assert_eq!(text.matches("not gated\n").count(), 0, "{text}");
        assert!(text.contains("2 metric checks not gated"), "{text}");
        snapshot(format!("terminal_degraded_width_{width}"), text);
        let all = Style {
            show: super::terminal::Show::All,
            ..style
        };
        let text = super::terminal::render(&report, &all);
        assert_eq!(text.matches("not gated\n").count(), 2, "{text}");
    }
}

/// The compute-sanitizer and graph-memory reports fit the width too, and
/// their headline says what the gate found, not "REGRESSION".
#[test]
fn other_gates_fit_the_width_and_say_their_own_word() {
    for (case, word) in [("sanitizer", "FINDINGS"), ("memory", "LEAK")] {
        let report = cases()
            .into_iter()
            .find(|(name, _)| *name == case)
            .map(|(_, r)| r)
            .expect("the case");
        for width in [60, 100] {
            let style = Style {
                width,
                ..Style::default()
            };
            let text = super::terminal::render(&report, &style);
            for line in text.lines() {
                assert!(line.chars().count() <= width, "{case} at {width}: {line}");
            }
            assert!(
                text.starts_with(&format!("ncugate: {word} (exit 1)")),
                "{case}: {text}"
            );
        }
    }
}

/// `-q`: the "why" lines, not the table that repeats them.
#[test]
fn quiet_terminal_has_no_table() {
    let style = Style {
        show: Show::Fail,
        quiet: true,
        ..Style::default()
    };
    let text = super::terminal::render(&cases::regression(), &style);
    assert!(text.contains("\nwhy:\n"), "{text}");
    assert!(!text.contains("checks ("), "{text}");
}

/// With colour, the marks and verdicts of what needs attention are painted.
#[test]
fn colour_paints_marks_and_verdicts() {
    let style = Style {
        color: true,
        ..Style::default()
    };
    let text = super::terminal::render(&cases::regression(), &style);
    assert!(text.contains("\x1b[31m✗\x1b[0m"), "{text}");
    assert!(text.contains("\x1b[31m[FAIL]\x1b[0m"), "{text}");
}

#[test]
fn markdown() {
    for (case, report) in cases() {
        snapshot(
            format!("markdown_{case}"),
            super::markdown::render(&View::new(&report)),
        );
    }
}

#[test]
fn junit() {
    for (case, report) in cases() {
        snapshot(
            format!("junit_{case}"),
            super::junit::render(&View::new(&report)),
        );
    }
}

#[test]
fn json() {
    for (case, report) in cases() {
        snapshot(
            format!("json_{case}"),
            super::json::render(&View::new(&report)),
        );
    }
}

#[test]
fn github() {
    for (case, report) in cases() {
        let Rendered::GitHub(streams) = GitHub.render(&Document::check(&report)) else {
            panic!("GitHub mode renders its streams");
        };
        let text = format!(
            "--- stdout\n{}--- $GITHUB_STEP_SUMMARY\n{}--- $GITHUB_OUTPUT (besides `report`)\nresult={}\nregressions={}\n",
            streams.annotations,
            streams.summary,
            streams.outcome.as_str(),
            streams.regressions
        );
        snapshot(format!("github_{case}"), text);
    }
}

#[test]
fn html() {
    for (case, report) in cases() {
        let files = html_files(&report);
        let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
        let index = files
            .iter()
            .find(|(p, _)| p.as_os_str() == "index.html")
            .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        // Pretty enough to review: one element per line where the page has none.
        let text = format!("files: {}\n\n{}", names.join(", "), index);
        snapshot(format!("html_{case}"), text);
    }
}

#[test]
fn hostile_names_stay_text_in_every_format() {
    let report = hostile();
    let view = View::new(&report);
    let files = html_files(&report);
    let index = files
        .iter()
        .find(|(p, _)| p.as_os_str() == "index.html")
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    assert!(
        !index.contains("<script>") && !index.contains("<img src=x"),
        "{index}"
    );
    assert!(index.contains("&lt;script&gt;"), "{index}");
    let md = super::markdown::render(&view);
    // Kernel names sit in code spans, where Markdown shows `<script>` as text; prose is escaped.
    assert!(
        !md.contains("<img src=x") && md.contains("&lt;img src=x"),
        "{md}"
    );
    let xml = super::junit::render(&view);
    assert!(!xml.contains("<script>"), "{xml}");
    let annotations = super::github::annotations(&view, "");
    assert!(
        annotations.lines().all(|l| l.starts_with("::")),
        "one workflow command per line: {annotations}"
    );
}

#[test]
fn every_format_reads_the_same_words_from_the_view() {
    let report = findings();
    let view = View::new(&report);
    let speedup = "(OPT, est. speedup 77%)";
    assert!(super::terminal::render_view(&view, &Style::default()).contains(speedup));
    assert!(super::markdown::render(&view).contains(speedup));
    assert!(super::junit::render(&view).contains(speedup));
    let files = html_files(&report);
    assert!(
        files
            .iter()
            .any(|(_, b)| String::from_utf8_lossy(b).contains(speedup))
    );
}

#[test]
fn the_write_path_writes_what_each_reporter_rendered() {
    let report = cases::regression();
    let view = View::new(&report);
    let dir = tempfile::tempdir().expect("temp dir");
    let outputs = super::Outputs {
        junit: Some(dir.path().join("out/junit.xml")),
        markdown: Some(dir.path().join("out/report.md")),
        json: Some(dir.path().join("out/report.json")),
        github: false,
        github_files: super::GitHubFiles::default(),
        html: Some(dir.path().join("html")),
        key: None,
    };
    super::write_all(&report, &outputs).expect("written");
    let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).expect(p);
    assert_eq!(read("out/junit.xml"), super::junit::render(&view));
    assert_eq!(read("out/report.md"), super::markdown::render(&view));
    assert_eq!(read("out/report.json"), super::json::render(&view));
    for (name, bytes) in html_files(&report) {
        let path = dir.path().join("html").join(&name);
        assert_eq!(std::fs::read(&path).ok(), Some(bytes), "{}", name.display());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("html/index.html"))
            .expect("index")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644);
    }
}
