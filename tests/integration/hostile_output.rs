//! Kernel names and output streams found hostile by fuzzing: a name cannot
//! inject GitHub workflow commands, break JUnit XML, a Markdown row or the
//! step summary's Mermaid block; a closed or full stdout is no panic (for a
//! gate, `doctor` and `init` alike); file modes survive. Inputs are modified
//! copies of the real H200 exports.

use crate::common;
use common::{Gate, assert_valid_junit};
use std::path::Path;

/// The base run with `produce`'s name replaced by `name` (a quoted CSV field
/// may hold any character, CR and LF included).
fn renamed(name: &str) -> String {
    let text = common::h200_text("graph_app.base.fast.run1.raw.csv");
    assert!(text.contains("\"produce(float *, long)\""));
    text.replace(
        "\"produce(float *, long)\"",
        &format!("\"{name}(float *, long)\""),
    )
}

#[test]
fn hostile_kernel_names_break_no_report() {
    let gate = Gate::recorded();
    gate.write(
        "hostile.csv",
        renamed("produce\r\n::add-mask::X\r::stop-commands::T\u{FFFE}\u{FFFF}```end\u{2028}::error::ls\u{2029}ps"),
    );
    let out = gate
        .check()
        .baseline("baseline.json")
        .input("hostile.csv")
        .args(&["--format", "github"])
        .junit("junit.xml")
        .markdown("r.md")
        .html("html")
        .args(&["--show", "all"])
        .run_as_github_step();
    out.code(1);
    // U+2028/U+2029 (line and paragraph separators) end a line for Unicode-aware
    // readers (a log viewer, a JavaScript JUnit viewer): they passed as they were.
    for line in out
        .stdout
        .lines()
        .flat_map(|l| l.split(['\u{2028}', '\u{2029}']))
    {
        assert!(!line.contains('\r'), "a CR reached stdout: {line:?}");
        assert!(
            !line.trim_start().starts_with("::add-mask::")
                && !line.trim_start().starts_with("::stop-commands::")
                && !line.trim_start().starts_with("::error::ls"),
            "an injected workflow command: {line:?}"
        );
    }
    assert!(
        out.stdout
            .contains("produce\\u{000d}\\u{000a}::add-mask::X"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("end\\u{2028}::error::ls\\u{2029}ps"),
        "{}",
        out.stdout
    );
    for written in [
        "junit.xml",
        "r.md",
        "summary.md",
        "output.txt",
        "html/index.html",
    ] {
        let text = gate.read(written);
        assert!(
            !text.contains(['\u{2028}', '\u{2029}']),
            "{written}: {text}"
        );
    }
    assert_valid_junit(&gate.path("junit.xml"));
    // Every SVG chart is well-formed XML (U+FFFE/U+FFFF are not XML characters).
    let charts: Vec<_> = std::fs::read_dir(gate.path("html/charts"))
        .expect("charts")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(!charts.is_empty());
    for svg in &charts {
        let lint = std::process::Command::new("xmllint")
            .arg("--noout")
            .arg(svg)
            .output()
            .expect("xmllint is required (Debian: libxml2-utils; .ci/run installs it)");
        assert!(
            lint.status.success(),
            "{}: {}",
            svg.display(),
            String::from_utf8_lossy(&lint.stderr)
        );
    }
    let md = gate.read("r.md");
    assert!(!md.contains('\r') && !md.contains('\u{FFFE}'), "{md}");
    // Every Markdown table row is one line.
    for line in md.lines().filter(|l| l.starts_with('|')) {
        assert!(line.ends_with('|'), "{line:?}");
    }
    // The Mermaid block of the step summary is closed once, by its own fence.
    let summary = gate.read("summary.md");
    if let Some(start) = summary.find("```mermaid") {
        let block = &summary[start + 10..];
        let end = block.find("```").expect("closed");
        assert!(!block[..end].contains('`'), "{}", &block[..end]);
    }
}

#[test]
fn a_closed_stdout_keeps_the_verdict_and_a_full_one_is_an_error() {
    let gate = Gate::recorded();
    gate.h200("graph_app.strided.fast.raw.csv", "strided.csv");
    let args = [
        "check",
        "--baseline",
        "baseline.json",
        "--input",
        "strided.csv",
        "--json",
        "r.json",
        "--show",
        "all",
    ];
    // `check … | head -0`: the reader is gone before ncugate writes.
    gate.closed_stdout_exits(&args, 1);
    assert!(
        gate.path("r.json").exists(),
        "the file report is written first"
    );
    // `check … > /dev/full`.
    gate.full_stdout_is_an_error(&args);
}

#[test]
fn doctor_on_a_closed_stdout_keeps_its_verdict_and_on_a_full_one_is_an_error() {
    let gate = Gate::new();
    // Ready or not depends on this machine; the exit code says which.
    let said = gate.run(&["doctor"]);
    assert!(
        said.stdout.starts_with("ncugate doctor\n"),
        "{}",
        said.stdout
    );
    // `doctor | head -0`.
    gate.closed_stdout_exits(&["doctor"], said.code);
    // `doctor > /dev/full`.
    gate.full_stdout_is_an_error(&["doctor"]);
}

#[test]
fn init_on_a_closed_stdout_still_writes_and_on_a_full_one_is_an_error() {
    let gate = Gate::new();
    let args = ["init", "--no-profile", "--force", "--", "./app"];
    // `init … | head -0`: the files are what it is for.
    gate.closed_stdout_exits(&args, 0);
    assert!(gate.read("ncugate.toml").contains("command = [\"./app\"]"));
    // `init … > /dev/full`.
    gate.full_stdout_is_an_error(&args);
}

#[test]
fn help_and_version_on_a_full_stdout_are_an_error() {
    // clap's help and version ignored a failed write: `ncugate --help >
    // /dev/full` printed nothing and exited 0.
    let gate = Gate::new();
    for args in [
        &["--help"][..],
        &["check", "--help"],
        &["-h"],
        &["--version"],
    ] {
        let out = gate.run_stdout_closed(args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        if let Some(out) = gate.run_stdout_full(args) {
            assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
            assert!(
                out.stderr
                    .contains("ncugate: error: cannot write standard output"),
                "{args:?}: {}",
                out.stderr
            );
        }
    }
}

#[cfg(unix)]
#[test]
fn written_files_are_0644_and_a_replaced_baseline_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let gate = Gate::recorded();
    let mode = |name: &str| {
        std::fs::metadata(gate.path(name))
            .expect("file")
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("baseline.json"), 0o644);
    std::fs::set_permissions(
        gate.path("baseline.json"),
        std::fs::Permissions::from_mode(0o640),
    )
    .expect("chmod");
    gate.base_baseline(&[]);
    assert_eq!(mode("baseline.json"), 0o640);
    // Every report file too, HTML charts included.
    gate.check()
        .baseline("baseline.json")
        .input("base1.csv")
        .junit("junit.xml")
        .markdown("r.md")
        .json("r.json")
        .html("html")
        .run()
        .code(0);
    for report in [
        "junit.xml",
        "r.md",
        "r.json",
        "html/index.html",
        "html/style.css",
    ] {
        assert_eq!(mode(report), 0o644, "{report}");
    }
    for chart in std::fs::read_dir(gate.path("html/charts"))
        .expect("charts")
        .flatten()
    {
        let name = format!("html/charts/{}", chart.file_name().to_string_lossy());
        assert_eq!(mode(&name), 0o644, "{name}");
    }
    let leftovers: Vec<_> = std::fs::read_dir(gate.dir.path())
        .expect("dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn the_github_action_logs_inputs_on_one_line() {
    // The action's `log` (it echoes the ncugate command line built from the
    // workflow's inputs) run by bash on an input holding CR/LF.
    let script = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/.github/action/run.sh"
    ))
    .expect("run.sh");
    let start = script.find("\nlog() {").expect("log function");
    let end = start + script[start..].find("\n}\n").expect("end of log") + 3;
    let program = format!("{}\nlog \"$1\"\n", &script[start..end]);
    let out = std::process::Command::new("bash")
        .args([
            "-c",
            &program,
            "bash",
            "x.csv\r\n::add-mask::X\r::stop-commands::T",
        ])
        .output()
        .expect("bash");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(!stderr.contains('\r'), "{stderr:?}");
    assert!(
        stderr.contains("x.csv\\r\\n::add-mask::X\\r::stop-commands::T"),
        "{stderr:?}"
    );
}

#[test]
fn names_from_json_and_xml_add_no_line_to_any_output() {
    // Every file ncugate reads back: a baseline's kernel key, a shard report's
    // workload name, a sanitizer record's function. Each added a workflow
    // command, a `$GITHUB_OUTPUT` line or reordered text (bidi controls).
    let gate = Gate::new();
    gate.base_baseline(&[]).code(0);
    let github = [
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_STEP_SUMMARY", "summary.md"),
        ("GITHUB_OUTPUT", "output.txt"),
    ];
    gate.write("summary.md", "").write("output.txt", "");
    let baseline = gate.read("baseline.json");
    for (hostile, code) in [
        ("produce\\n::stop-commands::x", "U+000A"),
        ("produce\\r\\nresult=pass", "U+000D"),
        ("produce\u{202E}", "U+202E"),
        ("produce\\ufffe", "U+FFFE"),
        ("produce\u{2028}::error::forged", "U+2028"),
    ] {
        gate.write(
            "hostile.json",
            baseline.replace(
                "\"produce(float *, long)\"",
                &format!("\"{hostile}(float *, long)\""),
            ),
        );
        let out = gate.run_with(
            &[
                "check",
                "--baseline",
                "hostile.json",
                "--input",
                "base1.csv",
            ],
            &github,
        );
        out.code(2);
        assert!(out.stderr.contains(code), "{hostile}: {}", out.stderr);
        assert!(!out.stdout.contains("::stop-commands::"), "{}", out.stdout);
        assert!(!gate.read("output.txt").contains("result=pass"));
    }
    // A shard report: a workload name with a newline, or one that leaves the HTML folder.
    gate.write(
        "ncugate.toml",
        "[[workload]]\nname = \"base\"\ncommand = [\"./app\"]\n",
    );
    std::fs::create_dir_all(gate.path("baselines/base")).expect("mkdir");
    std::fs::copy(
        gate.path("baseline.json"),
        gate.path("baselines/base/nvidia-h200-cc90-132sm.json"),
    )
    .expect("copy");
    gate.check()
        .workload("base")
        .input("base1.csv")
        .json("shard.json")
        .run()
        .code(0);
    let shard = gate.read("shard.json");
    for (name, says) in [
        ("base\\nresult=pass", "U+000A"),
        ("base\u{2066}", "U+2066"),
        ("base\u{2029}result=pass", "U+2029"),
        ("../../escaped", "not safe as a file name"),
        ("javascript:alert(1)", "not safe as a file name"),
    ] {
        gate.write(
            "bad.json",
            shard.replace("\"base\"", &format!("\"{name}\"")),
        );
        let out = gate.run_with(&["merge", "bad.json", "--html", "html"], &github);
        out.code(2);
        assert!(out.stderr.contains(says), "{name}: {}", out.stderr);
        assert!(!gate.read("output.txt").contains("result=pass"));
        assert!(!gate.path("escaped").exists() && !gate.path("html").exists());
    }
    // A sanitizer record's function with a character reference for a newline.
    let xml = std::fs::read_to_string(
        Path::new(common::REFERENCE).join("sanitizer/stream-ordered-alloc-bug.memcheck.xml"),
    )
    .expect("fixture")
    .replace(
        "<func>shortKernel_2</func>",
        "<func>shortKernel_2&#10;::error::forged&#13;&#10;x</func>",
    );
    gate.write("alloc-bug.xml", xml);
    let out = gate.run_with(&["sanitize", "--xml", "alloc-bug.xml"], &github);
    out.code(1);
    assert!(
        !out.stdout.lines().any(|l| l.starts_with("::error::forged")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("shortKernel_2 ::error::forged"),
        "{}",
        out.stdout
    );
}

#[test]
fn text_from_a_thresholds_file_and_a_path_adds_no_line_to_any_format() {
    // Sources the readers do not refuse: a thresholds file's `why` (TOML
    // `\n` escapes; a PR can change the file) and an input's file name. Each
    // reached every format as it was: `::error::forged` on a line of its own
    // in GitHub mode, U+FFFE in JUnit (ill-formed), U+202E everywhere.
    let gate = Gate::recorded();
    let input = "run\n::error::path";
    gate.h200("graph_app.redundant-node.fast.raw.csv", input);
    gate.write(
        "t.toml",
        common::rules_with(
            "default.toml",
            "why = \"more instructions: redundant work",
            "why = \"more\\n::error::forged\\u202E\\uFFFE\\r\\nresult=pass redundant work",
        ),
    );
    let out = gate
        .check()
        .baseline("baseline.json")
        .input(input)
        .thresholds("t.toml")
        .args(&["--format", "github"])
        .junit("junit.xml")
        .markdown("r.md")
        .html("html")
        .json("r.json")
        .run_as_github_step();
    out.code(1);
    let lines = |what: &str, text: &str| {
        for line in text.split('\n') {
            let line = line.trim_start();
            assert!(
                !line.starts_with("::error::forged")
                    && !line.starts_with("::error::path")
                    && !line.starts_with("result=pass")
                    && !line.contains(['\r', '\u{202E}', '\u{FFFE}']),
                "{what}: {line:?}\n{text}"
            );
        }
    };
    lines("stdout", &out.stdout);
    assert!(
        out.stdout.contains("more\\u{000a}::error::forged"),
        "{}",
        out.stdout
    );
    lines("$GITHUB_OUTPUT", &gate.read("output.txt"));
    lines("step summary", &gate.read("summary.md"));
    lines("Markdown", &gate.read("r.md"));
    lines("HTML", &gate.read("html/index.html"));
    lines("JUnit", &gate.read("junit.xml"));
    assert_valid_junit(&gate.path("junit.xml"));
    let json = gate.json("r.json");
    let text = json.to_string();
    assert!(
        !text.contains("\\n::error") && !text.contains('\u{202E}'),
        "{text}"
    );
}

#[cfg(unix)]
#[test]
fn a_report_folder_holding_a_link_writes_nothing_through_it() {
    // A checkout can hold `html/charts -> ../elsewhere`: `check --html html`
    // wrote every chart there, outside the folder it was given.
    let gate = Gate::recorded();
    gate.h200("graph_app.strided.fast.raw.csv", "strided.csv");
    std::fs::create_dir_all(gate.path("html")).expect("mkdir");
    std::fs::create_dir_all(gate.path("elsewhere")).expect("mkdir");
    std::os::unix::fs::symlink(gate.path("elsewhere"), gate.path("html/charts")).expect("link");
    gate.check()
        .baseline("baseline.json")
        .input("strided.csv")
        .html("html")
        .run()
        .one_clear_error("is a symbolic link");
    let written: Vec<_> = std::fs::read_dir(gate.path("elsewhere"))
        .expect("list")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(written.is_empty(), "{written:?}");
    // A link in place of a file is replaced, not written through.
    std::fs::remove_file(gate.path("html/charts")).expect("unlink");
    std::os::unix::fs::symlink(
        gate.path("elsewhere/page.html"),
        gate.path("html/index.html"),
    )
    .expect("link");
    gate.check()
        .baseline("baseline.json")
        .input("strided.csv")
        .html("html")
        .run()
        .code(1);
    assert!(!gate.path("elsewhere/page.html").exists());
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("list").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// A character no output may hold raw: a control (but the line feed), a
/// bidirectional control, a line or paragraph separator.
fn raw_control(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(
            u32::from(c),
            0x202A..=0x202E | 0x2066..=0x2069 | 0x200E | 0x200F | 0x061C | 0x2028 | 0x2029
        )
}

/// No line of `text` holds a raw control, the legacy `##[` workflow command,
/// or `::` after leading whitespace — but ncugate's own annotations and
/// log groups, at the start of a line of GitHub mode's standard output.
fn assert_inert(what: &str, text: &str) {
    for line in text.split('\n') {
        let own = [
            "::error ",
            "::warning ",
            "::notice ",
            "::group::",
            "::endgroup::",
        ]
        .iter()
        .any(|cmd| line.starts_with(cmd));
        assert!(
            !line.contains(raw_control)
                && !line.contains("##[")
                && (own || !line.trim_start().starts_with("::")),
            "{what}: {line:?}"
        );
    }
}

/// Every file `gate` holds (but the inputs named) passes [`assert_inert`]
/// and holds no `secret`.
fn assert_reports_inert(gate: &Gate, inputs: &[&str], secret: &str) {
    for path in files_under(&gate.path("")) {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let ext = path.extension().unwrap_or_default().to_string_lossy();
        // Baselines are data read back, not reports (their reader refuses a control).
        let baseline = name.starts_with("baseline") || path.starts_with(gate.path("baselines"));
        if baseline
            || inputs.iter().any(|i| name == *i)
            || matches!(&*ext, "sqlite" | "csv" | "toml")
        {
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(&path).expect("read")).into_owned();
        assert!(!text.contains(secret), "{}: {text}", path.display());
        assert_inert(&path.display().to_string(), &text);
    }
}

/// `text` as the inside of a TOML basic string.
fn toml_escaped(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\\' => format!("\\{c}"),
            c if c.is_ascii() && !c.is_control() => c.to_string(),
            c => format!("\\u{:04X}", u32::from(c)),
        })
        .collect()
}

#[test]
fn a_history_password_reaches_no_output_in_any_form() {
    // Only `user:password@` was hidden: a `password=` query parameter and a
    // libpq `key=value` string reached stderr and every report file. Port 1
    // refuses at once: no server is needed.
    let gate = Gate::recorded();
    gate.h200("graph_app.base.fast.run1.raw.csv", "run.csv");
    for url in [
        "postgres://u:S3CRET@127.0.0.1:1/db?connect_timeout=1",
        "postgres://u@127.0.0.1:1/db?password=S3CRET&connect_timeout=1",
        "postgresql://u@127.0.0.1:1/db?connect_timeout=1&PassWord=S3CRET",
        "host=127.0.0.1 port=1 password=S3CRET dbname=db",
        "host=127.0.0.1 port=1 password = 'S3CRET and more' dbname=db",
    ] {
        let out = gate
            .check()
            .baseline("history")
            .input("run.csv")
            .args(&["--history", url, "--format", "github"])
            .json("r.json")
            .junit("junit.xml")
            .markdown("r.md")
            .html("html")
            .run_as_github_step();
        out.code(2);
        for (what, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            assert!(!text.contains("S3CRET"), "{url}: {what}: {text}");
        }
        assert!(out.stderr.contains("***"), "{url}: {}", out.stderr);
        assert_reports_inert(&gate, &["run.csv", "baseline.json"], "S3CRET");
        let out = gate.run(&["history", "show", "--history", url]);
        out.code(2);
        assert!(!out.stderr.contains("S3CRET"), "{url}: {}", out.stderr);
    }
}

#[test]
fn hostile_names_from_every_source_pass_one_border() {
    // A kernel name, a GPU name in an export, a workload name, a tag, a
    // metric name in a thresholds file and a history URL, each holding a
    // line break, a terminal escape, a bidi control, the legacy `##[error]`
    // and `::` after whitespace, through check, baseline record, merge and
    // history: no line of any output nor of any report holds one raw.
    let hostile = "\u{1b}[2J\u{9b}0m\u{202e}##[error]forged\n  ::error::forged";
    let gate = Gate::new();
    let run = common::h200_text("graph_app.base.fast.run1.raw.csv");
    assert!(run.contains("\"NVIDIA H200\""));
    let run = run.replace(
        "\"produce(float *, long)\"",
        &format!("\"  ::warning::k ##[error]k{hostile}(float *, long)\""),
    );
    gate.write(
        "run.csv",
        run.replace("\"NVIDIA H200\"", &format!("\"NVIDIA H200{hostile}\"")),
    );
    let mut said = Vec::new();
    // A GPU name `baseline record` keeps is one the checks after it accept.
    let out = gate.record().input("run.csv").output("baseline.json").run();
    out.code(0);
    said.push(out);
    let out = gate
        .check()
        .baseline("baseline.json")
        .input("run.csv")
        .args(&["--format", "github", "--show", "all"])
        .json("r.json")
        .junit("junit.xml")
        .markdown("r.md")
        .html("html")
        .run_as_github_step();
    out.code(0);
    said.push(out);
    // The same through a suite's shard, merge and the history.
    let quoted = toml_escaped(hostile);
    gate.write(
        "ncugate.toml",
        format!("[[workload]]\nname = \"base\"\ncommand = [\"./app\"]\ntags = [\"{quoted}\"]\n"),
    );
    let gpu_dir = gate.path("baselines/base");
    std::fs::create_dir_all(&gpu_dir).expect("mkdir");
    gate.record()
        .workload("base")
        .input("run.csv")
        .run()
        .code(0);
    let out = gate
        .check()
        .workload("base")
        .input("run.csv")
        .json("shard.json")
        .run();
    out.code(0);
    said.push(out);
    said.push(
        gate.ncugate(&[
            "merge",
            "shard.json",
            "--format",
            "github",
            "--html",
            "merged",
        ])
        .junit("merged.xml")
        .markdown("merged.md")
        .run_as_github_step(),
    );
    said.push(gate.history_record(
        "sqlite:h.sqlite",
        "shard.json",
        ("c1", "main", "2026-01-01T00:00:00Z"),
    ));
    said.push(gate.run(&["history", "show", "--history", "sqlite:h.sqlite"]));
    // Errors that quote a name from the config, the command line or a file.
    // No workload has this tag: the hint lists the tags there are.
    let tag = format!("x{hostile}");
    said.push(gate.run(&["check", "--tag", &tag, "--input", "run.csv"]));
    said.push(gate.run(&["check", "--workload", hostile, "--input", "run.csv"]));
    gate.write(
        "t.toml",
        format!("[[rule]]\nmetric = \"{quoted}\"\nworse = \"higher\"\nmax_change = \"5%\"\n"),
    );
    said.push(gate.run(&[
        "check",
        "--baseline",
        "baseline.json",
        "--input",
        "run.csv",
        "--thresholds",
        "t.toml",
        "--json",
        "t.json",
    ]));
    said.push(gate.run(&["history", "show", "--history", &format!("sqlite:{hostile}")]));
    said.push(gate.run(&[
        "history",
        "show",
        "--history",
        &format!("postgres://u@127.0.0.1:1/{hostile}"),
    ]));
    for (i, out) in said.iter().enumerate() {
        assert_inert(&format!("#{i} stdout"), &out.stdout);
        assert_inert(&format!("#{i} stderr"), &out.stderr);
    }
    let codes: Vec<i32> = said.iter().map(|o| o.code).collect();
    assert_eq!(
        codes[6..],
        [2; 5],
        "{}",
        said[6..]
            .iter()
            .map(|o| o.stderr.as_str())
            .collect::<String>()
    );
    assert_reports_inert(&gate, &["run.csv"], "\u{0}");
}

#[test]
fn a_baseline_refused_for_a_bidi_character_is_not_hinted_at_duplicate_keys() {
    let gate = Gate::recorded();
    let baseline = gate.read("baseline.json");
    assert!(baseline.contains("\"produce(float *, long)\""));
    gate.write(
        "bidi.json",
        baseline.replace(
            "\"produce(float *, long)\"",
            "\"produce\u{202e}(float *, long)\"",
        ),
    );
    gate.h200("graph_app.base.fast.run1.raw.csv", "run.csv");
    let out = gate.run(&["check", "--baseline", "bidi.json", "--input", "run.csv"]);
    out.one_clear_error("U+202E");
    assert!(
        !out.stderr.contains("duplicate") && !out.stderr.contains("two entries"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("hint: ncugate writes such a character escaped"),
        "{}",
        out.stderr
    );
}

#[test]
fn ncu_and_app_output_passed_through_is_inert() {
    // ncu's progress line names the kernel as the app launched it, with any
    // terminal escape; ncu's and the app's output lines are shown under an
    // error. Each reached standard error (and a CI log) as it was.
    let gate = Gate::new();
    let output = "==PROF== Profiling \"k\u{1b}[2J##[error]forged\u{202e}\" - 0: 0%....50%....100% - 1 pass\n  ::error::forged \u{1b}]0;title\u{7}\n##[warning]forged\r";
    let ncu = gate.ncu("hostile-ncu").fail(3, output).install();
    let out = gate
        .record()
        .ncu(&ncu)
        .app(&["./app"])
        .env("GITHUB_ACTIONS", "true")
        .run();
    out.code(2);
    assert!(
        out.stderr
            .contains("profiled k\\u{001b}[2J#\\u{0023}[error]forged"),
        "{}",
        out.stderr
    );
    assert_inert("stdout", &out.stdout);
    assert_inert("stderr", &out.stderr);
}

#[test]
fn a_hostile_argument_in_a_usage_error_is_inert() {
    // clap quotes an unknown argument as given: a workflow that builds the
    // command line from an input put `::error::` at the start of a line.
    let gate = Gate::new();
    let out = gate.run(&["check", "--x\n  ::error::forged ##[error]forged\u{202e}"]);
    out.code(2);
    assert!(out.stderr.contains("unexpected argument"), "{}", out.stderr);
    assert_inert("stderr", &out.stderr);
}
