//! Tests that every concern's settings follow the one precedence of
//! [`crate::options::Layer`]: a typed flag over its `NCUGATE_*` variable over
//! `ncugate.toml` over the default.
//!
//! clap reads the variables from the process environment, which tests in one
//! process share, so each concern's check runs in a child process of this
//! test binary with exactly the variables it sets: once with them (flag over
//! variable, variable over file) and once without (file over default).

use super::Config;
use crate::cli::Cli;
use crate::runner::RunnerConfig;
use clap::CommandFactory;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Set in a child: `env` (the concern's variables are set) or `none`.
const LAYER: &str = "NCUGATE_TEST_LAYER";

/// Runs the ignored test `child` of this binary twice: with `vars` and
/// without any `NCUGATE_*` variable.
fn layers(child: &str, vars: &[(&str, &str)]) {
    for (layer, vars) in [("env", vars), ("none", &[][..])] {
        let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
        cmd.args([child, "--exact", "--ignored", "--test-threads=1"]);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("NCUGATE_") {
                cmd.env_remove(key);
            }
        }
        cmd.envs(vars.iter().copied()).env(LAYER, layer);
        let out = cmd.output().expect("run the test binary");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{child} ({layer}):\n{text}");
        assert!(text.contains("1 passed"), "{child} did not run:\n{text}");
    }
}

/// In a child: whether the concern's variables are set; `None` outside one.
fn layer() -> Option<bool> {
    std::env::var(LAYER).ok().map(|l| l == "env")
}

/// An `ncugate.toml` holding `text`, in a folder kept for the test's life.
fn toml(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write config");
    path
}

fn config(args: &[&str]) -> Config {
    let mut argv = vec!["ncugate"];
    argv.extend(args);
    let matches = Cli::command()
        .try_get_matches_from(argv)
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    Config::from_matches(&matches).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn profile(config_file: &Path, flags: &[&str]) -> RunnerConfig {
    let file = config_file.to_str().expect("utf-8 path");
    let mut args = vec!["profile", "--config", file];
    args.extend(flags);
    args.extend(["--", "app"]);
    match config(&args) {
        Config::Profile(r) => r,
        other => panic!("{other:?}"),
    }
}

#[test]
fn app_and_profile_settings_flag_over_env_over_file_over_default() {
    layers(
        "config::precedence::profile_layers",
        &[
            ("NCUGATE_CLOCK_CONTROL", "env"),
            ("NCUGATE_NCU", "env-ncu"),
            ("NCUGATE_TIMEOUT", "2"),
            ("NCUGATE_OUT", "env-out"),
            ("NCUGATE_WORKDIR", "env-wd"),
        ],
    );
}

#[test]
#[ignore = "a child of app_and_profile_settings_flag_over_env_over_file_over_default"]
fn profile_layers() {
    let Some(with_env) = layer() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let file = toml(
        &dir,
        "ncugate.toml",
        "[app]\ntimeout = 3\nworkdir = \"file-wd\"\n[profile]\nclock_control = \"file\"\nncu = \"file-ncu\"\nout_dir = \"file-out\"\n",
    );
    let empty = toml(&dir, "empty.toml", "");
    let flags = [
        "--clock-control",
        "flag",
        "--ncu",
        "flag-ncu",
        "--timeout",
        "1",
        "--out",
        "flag-out",
        "--workdir",
        "flag-wd",
    ];
    let r = profile(&file, &flags);
    assert_eq!(
        (
            r.clock_control.as_str(),
            r.ncu.as_str(),
            r.timeout.as_secs()
        ),
        ("flag", "flag-ncu", 1)
    );
    assert_eq!(
        (r.out_dir, r.workdir),
        ("flag-out".into(), "flag-wd".into())
    );
    let r = profile(&file, &[]);
    if with_env {
        assert_eq!(
            (
                r.clock_control.as_str(),
                r.ncu.as_str(),
                r.timeout.as_secs()
            ),
            ("env", "env-ncu", 2)
        );
        assert_eq!((r.out_dir, r.workdir), ("env-out".into(), "env-wd".into()));
    } else {
        assert_eq!(
            (
                r.clock_control.as_str(),
                r.ncu.as_str(),
                r.timeout.as_secs()
            ),
            ("file", "file-ncu", 3)
        );
        assert_eq!(r.out_dir, dir.path().join("file-out"));
        assert_eq!(r.workdir, dir.path().join("file-wd"));
        let r = profile(&empty, &[]);
        assert_eq!(
            (
                r.clock_control.as_str(),
                r.ncu.as_str(),
                r.timeout.as_secs()
            ),
            ("none", "ncu", 1800)
        );
        assert_eq!(r.out_dir, dir.path().join("target/ncugate"));
        assert_eq!(r.workdir, dir.path().join("."));
    }
}

#[test]
fn gate_settings_flag_over_env_over_file_over_default() {
    layers(
        "config::precedence::gate_layers",
        &[
            ("NCUGATE_THRESHOLDS", "env.toml"),
            ("NCUGATE_KERNEL_KEY", "demangled"),
            ("NCUGATE_BASELINE", "env.json"),
        ],
    );
}

#[test]
#[ignore = "a child of gate_settings_flag_over_env_over_file_over_default"]
fn gate_layers() {
    use crate::config::BaselinePlace;
    use crate::model::KernelKeyMode::{Demangled, Function};
    let Some(with_env) = layer() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let file = toml(
        &dir,
        "ncugate.toml",
        "[gate]\nbaseline = \"file.json\"\nthresholds = \"file.toml\"\nkernel_key = \"function\"\n",
    );
    let file = file.to_str().expect("utf-8 path");
    let check = |flags: &[&str]| {
        let mut args = vec!["check", "--config", file, "--input", "x.csv"];
        args.extend(flags);
        match config(&args) {
            Config::Check(c) => (c.baseline, c.thresholds, c.kernel_key),
            other => panic!("{other:?}"),
        }
    };
    let record_key = |flags: &[&str]| {
        let mut args = vec!["baseline", "record", "--config", file, "--input", "x.csv"];
        args.extend(flags);
        match config(&args) {
            Config::Record(c) => c.kernel_key,
            other => panic!("{other:?}"),
        }
    };
    let typed = ["--baseline", "flag.json", "--thresholds", "flag.toml"];
    let (baseline, thresholds, _) = check(&[&typed[..], &["--kernel-key", "function"]].concat());
    assert_eq!(baseline, BaselinePlace::File("flag.json".into()));
    assert_eq!(thresholds, Some("flag.toml".into()));
    assert_eq!(record_key(&["--kernel-key", "function"]), Function);
    let (baseline, thresholds, key) = check(&[]);
    if with_env {
        assert_eq!(baseline, BaselinePlace::File("env.json".into()));
        assert_eq!(thresholds, Some("env.toml".into()));
        assert_eq!((key, record_key(&[])), (Some(Demangled), Demangled));
    } else {
        assert_eq!(baseline, BaselinePlace::File(dir.path().join("file.json")));
        assert_eq!(thresholds, Some(dir.path().join("file.toml")));
        // check takes the key of its baseline; [gate] kernel_key says how to record.
        assert_eq!((key, record_key(&[])), (None, Function));
        let empty = toml(&dir, "empty.toml", "[gate]\nbaseline = \"b.json\"\n");
        let empty = empty.to_str().expect("utf-8 path");
        match config(&["check", "--config", empty, "--input", "x.csv"]) {
            Config::Check(c) => assert_eq!((c.thresholds, c.kernel_key), (None, None)),
            other => panic!("{other:?}"),
        }
        match config(&["baseline", "record", "--config", empty, "--input", "x.csv"]) {
            Config::Record(c) => assert_eq!((c.thresholds, c.kernel_key), (None, Demangled)),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn sanitizer_settings_flag_over_env_over_file_over_default() {
    layers(
        "config::precedence::sanitizer_layers",
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
        "[sanitizer]\nprogram = \"file-sanitizer\"\nleak_check = true\ntools = [\"initcheck\"]\nprint_limit = 5\n",
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
    if with_env {
        assert_eq!((s.program.as_str(), s.leak_check), ("env-sanitizer", false));
    } else {
        assert_eq!((s.program.as_str(), s.leak_check), ("file-sanitizer", true));
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
    layers("config::precedence::leak_check_default", &[]);
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
        "config::precedence::memory_layers",
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
        "config::precedence::suite_layers",
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
