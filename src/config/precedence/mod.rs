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

mod explain_history;
mod metric;
mod sanitizer_memory_suite;

/// Set in a child: `env` (the concern's variables are set) or `none`.
const LAYER: &str = "NCUGATE_TEST_LAYER";

/// Runs the ignored test `child` of this binary twice: with `vars` and
/// without any `NCUGATE_*` variable.
pub(super) fn layers(child: &str, vars: &[(&str, &str)]) {
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
pub(super) fn layer() -> Option<bool> {
    std::env::var(LAYER).ok().map(|l| l == "env")
}

/// An `ncugate.toml` holding `text`, in a folder kept for the test's life.
pub(super) fn toml(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write config");
    path
}

pub(super) fn config(args: &[&str]) -> Config {
    let mut argv = vec!["ncugate"];
    argv.extend(args);
    let matches = Cli::command()
        .try_get_matches_from(argv)
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    Config::from_matches(&matches).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

pub(super) fn profile(config_file: &Path, flags: &[&str]) -> RunnerConfig {
    let file = config_file.to_str().expect("utf-8 path");
    let mut args = vec!["profile", "--config", file];
    args.extend(flags);
    args.extend(["--", "app"]);
    match config(&args) {
        Config::Profile(r) => r,
        other => panic!("{other:?}"),
    }
}
