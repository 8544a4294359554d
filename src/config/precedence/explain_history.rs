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
    use crate::compare::explain::ExplainMode::{Always, Never, OnFail};
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
