//! How ncu profiles the app: `--mode`, `--clock-control`, … on the command
//! line, `NCUGATE_MODE`, … in the environment, `[profile]` in `ncugate.toml`.

use super::layered;
use crate::runner::{GraphProfiling, Mode};
use clap::Args;
use serde::Deserialize;
use std::path::PathBuf;

/// `[profile]`, and the flags that override it.
#[derive(Debug, Clone, Default, PartialEq, Args, Deserialize)]
#[serde(deny_unknown_fields)]
#[command(next_help_heading = "Profiling (ncu)")]
pub struct ProfileOptions {
    /// "fast": only the gated metrics; "full": `--set full` plus them.
    #[arg(long, value_enum, env = "NCUGATE_MODE")]
    pub mode: Option<Mode>,
    /// ncu --graph-profiling.
    #[arg(long, value_enum, env = "NCUGATE_GRAPH_PROFILING")]
    pub graph_profiling: Option<GraphProfiling>,
    /// ncu --clock-control (default none; recorded in the baseline).
    #[arg(long, env = "NCUGATE_CLOCK_CONTROL", value_name = "MODE")]
    pub clock_control: Option<String>,
    /// ncu --cache-control (default all).
    #[arg(long, env = "NCUGATE_CACHE_CONTROL", value_name = "MODE")]
    pub cache_control: Option<String>,
    /// ncu --replay-mode (default kernel).
    #[arg(long, env = "NCUGATE_REPLAY_MODE", value_name = "MODE")]
    pub replay_mode: Option<String>,
    /// ncu --kernel-name filter.
    #[arg(long, env = "NCUGATE_KERNEL_NAME", value_name = "FILTER")]
    pub kernel_name: Option<String>,
    /// ncu --launch-skip.
    #[arg(long, env = "NCUGATE_LAUNCH_SKIP", value_name = "N")]
    pub launch_skip: Option<u64>,
    /// ncu --launch-count.
    #[arg(long, env = "NCUGATE_LAUNCH_COUNT", value_name = "N")]
    pub launch_count: Option<u64>,
    /// Also collect this metric (repeatable; NCUGATE_EXTRA_METRICS is comma-separated; adds to [profile] extra_metrics).
    #[arg(
        long = "extra-metric",
        env = "NCUGATE_EXTRA_METRICS",
        value_delimiter = ',',
        value_name = "METRIC"
    )]
    #[serde(default)]
    pub extra_metrics: Vec<String>,
    /// The ncu executable (default: ncu from PATH).
    #[arg(long, env = "NCUGATE_NCU", value_name = "PATH")]
    pub ncu: Option<String>,
    /// Read `.ncu-rep` inputs through `ncu --import` instead of natively.
    #[arg(
        long,
        env = "NCUGATE_IMPORT_WITH_NCU",
        num_args = 0..=1,
        default_missing_value = "true",
        value_name = "BOOL"
    )]
    pub import_with_ncu: Option<bool>,
    /// `[profile] out_dir`: the work dir for artifacts. Its flag is `--out`,
    /// with the app's flags, as sanitize and leaks take it too.
    #[arg(skip)]
    pub out_dir: Option<PathBuf>,
}

layered!(ProfileOptions {
    mode,
    graph_profiling,
    clock_control,
    cache_control,
    replay_mode,
    kernel_name,
    launch_skip,
    launch_count,
    ncu,
    import_with_ncu,
    out_dir,
} adds { extra_metrics });

/// The ncu ncugate runs when nothing names one.
pub const DEFAULT_NCU: &str = "ncu";
/// `--clock-control` unless told otherwise (ncu's own default is `base`).
pub const DEFAULT_CLOCK_CONTROL: &str = "none";
/// `--cache-control` unless told otherwise (ncu's own default).
pub const DEFAULT_CACHE_CONTROL: &str = "all";
/// `--replay-mode` unless told otherwise (ncu's own default).
pub const DEFAULT_REPLAY_MODE: &str = "kernel";
/// The work dir, relative to `ncugate.toml`'s folder.
pub const DEFAULT_OUT_DIR: &str = "target/ncugate";
