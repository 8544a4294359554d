//! `check`'s explain stage (`[explain]`) and its use of the history store
//! (`[history]`).

use super::{config, layer, layers, toml};
use crate::config::Config;

#[test]
fn explain_settings_flag_over_env_over_file_over_default() {
    layers(
        "config::precedence::explain_history::explain_layers",
        &[
            ("NCUGATE_EXPLAIN", "never"),
            ("NCUGATE_EXPLAIN_KERNELS", "2"),
            ("NCUGATE_EXPLAIN_BUDGET", "20"),
        ],
    );
}

#[test]
#[ignore = "a child of explain_settings_flag_over_env_over_file_over_default"]
fn explain_layers() {
    use crate::explain::ExplainMode::{Always, Never, OnFail};
    let Some(with_env) = layer() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let file = toml(
        &dir,
        "ncugate.toml",
        "[gate]\nbaseline = \"b.json\"\n[explain]\nmode = \"always\"\nkernels = 4\nbudget = 40\n",
    );
    let empty = toml(&dir, "empty.toml", "[gate]\nbaseline = \"b.json\"\n");
    let explain = |file: &std::path::Path, flags: &[&str]| {
        let mut args = vec!["check", "--config", file.to_str().expect("utf-8")];
        args.extend(["--input", "x.csv"]);
        args.extend(flags);
        match config(&args) {
            Config::Check(c) => (c.explain.mode, c.explain.kernels, c.explain.budget),
            other => panic!("{other:?}"),
        }
    };
    let typed = [
        "--explain",
        "on-fail",
        "--explain-kernels",
        "1",
        "--explain-budget",
        "10",
    ];
    assert_eq!(explain(&file, &typed), (OnFail, 1, 10.0));
    if with_env {
        assert_eq!(explain(&file, &[]), (Never, 2, 20.0));
    } else {
        assert_eq!(explain(&file, &[]), (Always, 4, 40.0));
        assert_eq!(explain(&empty, &[]), (OnFail, 3, 60.0));
    }
}

#[test]
fn history_settings_flag_over_env_over_file_over_default() {
    layers(
        "config::precedence::explain_history::history_layers",
        &[("NCUGATE_HISTORY", "sqlite:env.sqlite")],
    );
}

#[test]
#[ignore = "a child of history_settings_flag_over_env_over_file_over_default"]
fn history_layers() {
    use crate::config::history::{CheckHistory, HistoryAction, HistoryRecord};
    use crate::options::history::{DEFAULT_BRANCHES, DEFAULT_WINDOW};
    let Some(with_env) = layer() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let file = toml(
        &dir,
        "ncugate.toml",
        "[gate]\nbaseline = \"b.json\"\n[history]\nurl = \"sqlite:file.sqlite\"\nwindow = 4\nanchor = \"file-anchor\"\nbranches = [\"release\"]\n",
    );
    let empty = toml(&dir, "empty.toml", "[gate]\nbaseline = \"b.json\"\n");
    let check = |file: &std::path::Path, flags: &[&str]| -> Option<CheckHistory> {
        let mut args = vec!["check", "--config", file.to_str().expect("utf-8")];
        args.extend(["--input", "x.csv"]);
        args.extend(flags);
        match config(&args) {
            Config::Check(c) => c.history,
            other => panic!("{other:?}"),
        }
    };
    let settings = |h: Option<CheckHistory>| {
        let h = h.expect("a store");
        (h.url, h.window, h.anchor, h.record, h.branches)
    };
    let typed = [
        "--history",
        "sqlite:flag.sqlite",
        "--window",
        "2",
        "--anchor",
        "flag-anchor",
        "--history-record",
        "never",
    ];
    let (url, window, anchor, record, branches) = settings(check(&file, &typed));
    assert_eq!((url.as_str(), window), ("sqlite:flag.sqlite", 2));
    assert_eq!(
        (anchor.as_deref(), record),
        (Some("flag-anchor"), HistoryRecord::Never)
    );
    assert_eq!(branches, ["release"]);
    // `ncugate history show` layers its own --history and --window the same way.
    let show = |flags: &[&str]| {
        let mut args = vec!["history", "--config", file.to_str().expect("utf-8"), "show"];
        args.extend(flags);
        match config(&args) {
            Config::History(h) => match h.action {
                HistoryAction::Show(s) => (h.url, s.window),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    };
    let typed_show = show(&["--history", "sqlite:flag.sqlite", "--window", "2"]);
    assert_eq!(typed_show, ("sqlite:flag.sqlite".to_string(), 2));
    let from_file = format!("sqlite:{}", dir.path().join("file.sqlite").display());
    let (url, window, anchor, record, branches) = settings(check(&file, &[]));
    assert_eq!((window, anchor.as_deref()), (4, Some("file-anchor")));
    assert_eq!(
        (record, branches),
        (HistoryRecord::Auto, vec!["release".to_string()])
    );
    if with_env {
        assert_eq!(url, "sqlite:env.sqlite");
        assert_eq!(show(&[]), ("sqlite:env.sqlite".to_string(), 4));
    } else {
        assert_eq!(url, from_file);
        assert_eq!(show(&[]), (from_file, 4));
        assert!(check(&empty, &[]).is_none(), "no store, no history");
        let (url, window, anchor, record, branches) =
            settings(check(&empty, &["--history", "sqlite:h.sqlite"]));
        assert_eq!((url.as_str(), window), ("sqlite:h.sqlite", DEFAULT_WINDOW));
        assert_eq!((anchor, record), (None, HistoryRecord::Auto));
        assert_eq!(branches, DEFAULT_BRANCHES);
    }
}
