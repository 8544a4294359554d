//! The other gates' concerns (`[sanitizer]`, `[memory]`) and a suite's
//! baselines folder with the terminal report's rows.

use super::{config, layer, layers, toml};
use crate::config::Config;
use std::path::Path;

#[test]
fn sanitizer_settings_flag_over_env_over_file_over_default() {
    layers(
        "config::precedence::sanitizer_memory_suite::sanitizer_layers",
        &[
            ("NCUGATE_SANITIZER", "env-sanitizer"),
            ("NCUGATE_LEAK_CHECK", "false"),
        ],
    );
}

#[test]
#[ignore = "a child of sanitizer_settings_flag_over_env_over_file_over_default"]
fn sanitizer_layers() {
    use crate::sanitizer::Tool;
    let Some(with_env) = layer() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let on = toml(
        &dir,
        "on.toml",
        "[gate]\nbaseline = \"b.json\"\n[sanitizer]\nprogram = \"file-sanitizer\"\nleak_check = true\ntools = [\"initcheck\"]\nprint_limit = 5\n",
    );
    let off = toml(&dir, "off.toml", "[sanitizer]\nleak_check = false\n");
    let empty = toml(&dir, "empty.toml", "");
    let sanitize = |file: &Path, flags: &[&str]| {
        let mut args = vec!["sanitize", "--config", file.to_str().expect("utf-8")];
        args.extend(flags);
        args.extend(["--", "app"]);
        match config(&args) {
            Config::Sanitize(c) => c.sanitizer,
            other => panic!("{other:?}"),
        }
    };
    let typed = [
        "--sanitizer",
        "flag-sanitizer",
        "--leak-check",
        "--tool",
        "racecheck,synccheck",
        "--print-limit",
        "9",
    ];
    let s = sanitize(&on, &typed);
    assert_eq!((s.program.as_str(), s.leak_check), ("flag-sanitizer", true));
    assert_eq!(
        (s.tools, s.print_limit),
        (vec![Tool::Racecheck, Tool::Synccheck], 9)
    );
    let s = sanitize(&on, &["--leak-check=false"]);
    assert!(!s.leak_check, "--leak-check=false over the file's true");
    let s = sanitize(&on, &[]);
    assert_eq!((s.tools, s.print_limit), (vec![Tool::Initcheck], 5));
    // check has no sanitizer flags: its stage takes the variables over [sanitizer].
    let stage = match config(&[
        "check",
        "--config",
        on.to_str().expect("utf-8"),
        "--",
        "app",
    ]) {
        Config::Check(c) => c.sanitizer.expect("[sanitizer] runs the stage"),
        other => panic!("{other:?}"),
    };
    if with_env {
        assert_eq!((s.program.as_str(), s.leak_check), ("env-sanitizer", false));
        assert_eq!(
            (stage.program.as_str(), stage.leak_check),
            ("env-sanitizer", false)
        );
    } else {
        assert_eq!((s.program.as_str(), s.leak_check), ("file-sanitizer", true));
        assert_eq!(
            (stage.program.as_str(), stage.leak_check),
            ("file-sanitizer", true)
        );
        let s = sanitize(&off, &[]);
        assert!(
            !s.leak_check,
            "[sanitizer] leak_check = false over the default"
        );
        let s = sanitize(&empty, &[]);
        assert_eq!(
            (s.program.as_str(), s.leak_check),
            ("compute-sanitizer", true)
        );
        assert_eq!((s.tools, s.print_limit), (vec![Tool::Memcheck], 10_000));
    }
}

/// The leak check defaults the same wherever compute-sanitizer runs: `sanitize`
/// with or without a `[sanitizer]` table, and the stage `check` runs for one.
#[test]
fn leak_check_is_on_by_default_on_the_command_line_and_in_the_file() {
    layers(
        "config::precedence::sanitizer_memory_suite::leak_check_default",
        &[],
    );
}

#[test]
#[ignore = "a child of leak_check_is_on_by_default_on_the_command_line_and_in_the_file"]
fn leak_check_default() {
    if layer().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    for text in ["", "[sanitizer]\n", "[sanitizer]\ntools = [\"memcheck\"]\n"] {
        let file = toml(
            &dir,
            "ncugate.toml",
            &format!("[gate]\nbaseline = \"b.json\"\n{text}"),
        );
        let file = file.to_str().expect("utf-8 path");
        match config(&["sanitize", "--config", file, "--", "app"]) {
            Config::Sanitize(c) => assert!(c.sanitizer.leak_check, "sanitize with {text:?}"),
            other => panic!("{other:?}"),
        }
        if text.is_empty() {
            continue;
        }
        match config(&["check", "--config", file, "--", "app"]) {
            Config::Check(c) => {
                let stage = c.sanitizer.expect("a [sanitizer] table runs the stage");
                assert!(stage.leak_check, "check's stage with {text:?}");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn memory_settings_flag_over_env_over_file_over_default() {
    layers(
        "config::precedence::sanitizer_memory_suite::memory_layers",
        &[
            ("NCUGATE_HISTORY", "env.jsonl"),
            ("NCUGATE_AUDIT_LIB", "env.so"),
        ],
    );
}

#[test]
#[ignore = "a child of memory_settings_flag_over_env_over_file_over_default"]
fn memory_layers() {
    let Some(with_env) = layer() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let file = toml(
        &dir,
        "ncugate.toml",
        "[memory]\nhistory = \"file.jsonl\"\naudit_lib = \"/lib/file.so\"\nsample_ms = 7\nmax_live_execs = 2\nmax_live_graphs = 4\n",
    );
    let empty = toml(&dir, "empty.toml", "");
    let leaks = |file: &Path, flags: &[&str]| {
        let mut args = vec!["leaks", "--config", file.to_str().expect("utf-8")];
        args.extend(flags);
        args.extend(["--", "app"]);
        match config(&args) {
            Config::Leaks(c) => c,
            other => panic!("{other:?}"),
        }
    };
    let typed = [
        "--history",
        "flag.jsonl",
        "--audit-lib",
        "flag.so",
        "--sample-ms",
        "5",
        "--max-live-execs",
        "1",
        "--max-live-graphs",
        "3",
    ];
    let c = leaks(&file, &typed);
    assert_eq!(
        (c.history, c.audit_lib),
        (Some("flag.jsonl".into()), Some("flag.so".into()))
    );
    assert_eq!(c.sample_every.as_millis(), 5);
    assert_eq!(
        (c.limits.max_live_execs, c.limits.max_live_graphs),
        (Some(1), Some(3))
    );
    let c = leaks(&file, &[]);
    assert_eq!(c.sample_every.as_millis(), 7);
    assert_eq!(
        (c.limits.max_live_execs, c.limits.max_live_graphs),
        (Some(2), Some(4))
    );
    if with_env {
        assert_eq!(
            (c.history, c.audit_lib),
            (Some("env.jsonl".into()), Some("env.so".into()))
        );
    } else {
        assert_eq!(c.history, Some(dir.path().join("file.jsonl")));
        assert_eq!(c.audit_lib, Some("/lib/file.so".into()));
        let c = leaks(&empty, &[]);
        assert_eq!((c.history, c.audit_lib), (None, None));
        assert_eq!(c.sample_every.as_millis(), 20);
        assert_eq!(
            (c.limits.max_live_execs, c.limits.max_live_graphs),
            (Some(0), None)
        );
    }
}

#[test]
fn suite_and_report_settings_flag_over_env_over_file_over_default() {
    layers(
        "config::precedence::sanitizer_memory_suite::suite_layers",
        &[
            ("NCUGATE_BASELINES", "env-baselines"),
            ("NCUGATE_SHOW", "fail"),
        ],
    );
}

#[test]
#[ignore = "a child of suite_and_report_settings_flag_over_env_over_file_over_default"]
fn suite_layers() {
    use crate::report::terminal::Show;
    let Some(with_env) = layer() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let file = toml(
        &dir,
        "ncugate.toml",
        "[gate]\nbaselines = \"file-baselines\"\n[[workload]]\nname = \"w\"\ncommand = [\"app\"]\n",
    );
    let empty = toml(
        &dir,
        "empty.toml",
        "[[workload]]\nname = \"w\"\ncommand = [\"app\"]\n",
    );
    let check = |file: &Path, flags: &[&str]| {
        let mut args = vec!["check", "--config", file.to_str().expect("utf-8")];
        args.extend(flags);
        match config(&args) {
            Config::Suite(s) => (s.baselines_dir, s.style.show),
            other => panic!("{other:?}"),
        }
    };
    let typed = ["--baselines", "flag-baselines", "--show", "all"];
    assert_eq!(check(&file, &typed), ("flag-baselines".into(), Show::All));
    if with_env {
        assert_eq!(check(&file, &[]), ("env-baselines".into(), Show::Fail));
    } else {
        assert_eq!(
            check(&file, &[]),
            (dir.path().join("file-baselines"), Show::Changed)
        );
        assert_eq!(
            check(&empty, &[]),
            (dir.path().join("baselines"), Show::Changed)
        );
    }
}
