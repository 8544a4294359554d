//! The app itself: its command, environment, folder, time limit, retries and
//! warm-up runs, as flags (`-- APP ARGS`, `--env`, `--workdir`, `--timeout`,
//! `--retries`, `--warmup`), `NCUGATE_*`
//! variables and `[app]` in `ncugate.toml`.

use super::layered;
use clap::Args;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `[app]`, and the flags that override it.
#[derive(Debug, Clone, Default, PartialEq, Args, Deserialize)]
#[serde(deny_unknown_fields)]
#[command(next_help_heading = "App")]
pub(crate) struct AppOptions {
    /// Seconds the whole run may take; then the app's process group is killed (default 1800).
    #[arg(
        long,
        hide_short_help = true,
        env = "NCUGATE_TIMEOUT",
        value_name = "SECONDS"
    )]
    pub(crate) timeout: Option<u64>,
    /// Times a run under ncu is profiled again when the app crashed or hung under it (a fatal signal's words in its last output, or the timeout); each retry is a warning; sanitize and leaks do not retry (default 0).
    #[arg(
        long,
        hide_short_help = true,
        env = "NCUGATE_RETRIES",
        value_name = "N"
    )]
    pub(crate) retries: Option<u32>,
    /// Times the app runs on its own, without ncu, before the profiled runs, so that the caches it keeps between processes (Inductor's, Triton's, XLA's autotune cache) are warm; recorded in the baseline; sanitize and leaks do not warm up (default 0).
    #[arg(long, hide_short_help = true, env = "NCUGATE_WARMUP", value_name = "N")]
    pub(crate) warmup: Option<u32>,
    /// Directory the build and the app run in (default: [app] workdir, else the folder ncugate.toml is in).
    #[arg(
        long,
        hide_short_help = true,
        env = "NCUGATE_WORKDIR",
        value_name = "DIR"
    )]
    pub(crate) workdir: Option<PathBuf>,
    /// Environment for the build and the app (repeatable; adds to [app] env, a key given here wins; default: [app] env, else ncugate's own environment only).
    #[arg(long = "env", hide_short_help = true, value_name = "KEY=VALUE")]
    #[serde(default, deserialize_with = "env_table")]
    pub(crate) env: Vec<EnvVar>,
    /// The app and its arguments (replaces [app] command; default: [app] command, else each [[workload]]'s command).
    #[arg(last = true, value_name = "APP ARGS")]
    #[serde(default)]
    pub(crate) command: Vec<String>,
}

layered!(AppOptions { timeout, retries, warmup, workdir, command } adds { env });

/// Seconds a whole run may take unless told otherwise.
pub(crate) const DEFAULT_TIMEOUT_S: u64 = 1800;

/// Times the app runs without ncu before the profiled runs unless told
/// otherwise: none (most apps keep nothing between processes).
pub(crate) const DEFAULT_WARMUP: u32 = 0;

/// Times a run that crashed or hung under ncu is profiled again unless told
/// otherwise: none, so a flaky app is seen before it is retried.
pub(crate) const DEFAULT_RETRIES: u32 = 0;

impl AppOptions {
    /// The folder the build and the app run in: given, else `base` (the
    /// folder of ncugate.toml).
    pub(crate) fn workdir_or(&self, base: &Path) -> PathBuf {
        self.workdir.clone().unwrap_or_else(|| base.join("."))
    }

    /// How long the whole run may take: given, else [`DEFAULT_TIMEOUT_S`].
    pub(crate) fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout.unwrap_or(DEFAULT_TIMEOUT_S))
    }
}

/// One variable of the app's environment: `--env KEY=VALUE` or a key of `[app] env`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EnvVar {
    pub(crate) key: String,
    pub(crate) value: String,
}

impl std::str::FromStr for EnvVar {
    type Err = String;

    /// `KEY=VALUE`, split at the first `=`.
    fn from_str(s: &str) -> Result<EnvVar, String> {
        let (key, value) = s
            .split_once('=')
            .filter(|(key, _)| !key.is_empty())
            .ok_or_else(|| "expected KEY=VALUE, e.g. --env CUDA_VISIBLE_DEVICES=0".to_string())?;
        Ok(EnvVar {
            key: key.into(),
            value: value.into(),
        })
    }
}

/// `env = { KEY = "value" }`, in key order.
fn env_table<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<EnvVar>, D::Error> {
    let table = BTreeMap::<String, String>::deserialize(d)?;
    Ok(table
        .into_iter()
        .map(|(key, value)| EnvVar { key, value })
        .collect())
}

/// The environment with each key once, its last value kept: a variable given
/// later (a flag after the file, a workload after `[app]`) wins.
pub(crate) fn last_wins(env: Vec<EnvVar>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::with_capacity(env.len());
    for EnvVar { key, value } in env {
        out.retain(|(k, _)| *k != key);
        out.push((key, value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Layer;

    #[test]
    fn flags_add_to_the_files_environment_and_win_on_a_shared_key() {
        let file: AppOptions =
            toml::from_str("env = { B = \"file\", A = \"file\" }\ncommand = [\"app\"]").unwrap();
        let flags = AppOptions {
            env: vec!["A=flag".parse().unwrap(), "C=x=y".parse().unwrap()],
            ..AppOptions::default()
        };
        let app = flags.over(file);
        assert_eq!(app.command, ["app"]);
        let env = last_wins(app.env);
        let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(pairs, [("B", "file"), ("A", "flag"), ("C", "x=y")]);
        assert!("novalue".parse::<EnvVar>().is_err());
        assert!("=x".parse::<EnvVar>().is_err());
    }
}
