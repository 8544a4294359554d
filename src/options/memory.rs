//! The graph-memory gate: `ncugate leaks`'s limits, sampling and history
//! rule as flags, `NCUGATE_*` variables and `[memory]` in `ncugate.toml`.

use super::layered;
use clap::Args;
use serde::Deserialize;
use std::path::PathBuf;

/// `[memory]` (limits in bytes), and the flags of `ncugate leaks` that override it.
#[derive(Debug, Clone, Default, PartialEq, Args, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryOptions {
    /// A prebuilt CUPTI injection library (default: [memory] audit_lib, else the one built into ncugate, compiled on first use with $CC and the CUDA toolkit's CUPTI into $NCUGATE_CACHE_DIR or ~/.cache/ncugate).
    #[arg(long, env = "NCUGATE_AUDIT_LIB", value_name = "PATH")]
    pub audit_lib: Option<PathBuf>,
    /// Graph executables allowed to be alive at exit (default 0).
    #[arg(long, value_name = "N")]
    pub max_live_execs: Option<u64>,
    /// Graphs (not executables) allowed to be alive at exit (default: not checked; the CUDA runtime may keep internal copies).
    #[arg(long, value_name = "N")]
    pub max_live_graphs: Option<u64>,
    /// Allowed GPU memory growth per graph launch, bytes (default 65536 = 64 KiB; NVML moves in 2 MiB pages, so use ≥ 100 launches).
    #[arg(long, value_name = "BYTES")]
    pub max_growth_per_iteration: Option<f64>,
    /// Allowed GPU memory growth per second, bytes (default: not checked).
    #[arg(long, value_name = "BYTES")]
    pub max_growth_per_second: Option<f64>,
    /// Allowed peak GPU memory of the process, bytes (default: not checked).
    #[arg(long, value_name = "BYTES")]
    pub max_peak: Option<f64>,
    /// NVML sampling interval in milliseconds (default 20).
    #[arg(long, value_name = "MS")]
    pub sample_ms: Option<u64>,
    /// Append this run to a JSON-lines history file (locked) and apply the leak-trend rule.
    #[arg(long, env = "NCUGATE_HISTORY", value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// Runs in the trend rule's rolling median (default 7).
    #[arg(long, value_name = "N")]
    pub history_window: Option<usize>,
    /// Last runs that must all be over the line (default 3).
    #[arg(long, value_name = "N")]
    pub history_consecutive: Option<usize>,
    /// Over this factor × the median (default 1.5).
    #[arg(long, value_name = "X")]
    pub history_factor: Option<f64>,
    /// And over this many bytes (default 402653184 = 384 MiB).
    #[arg(long, value_name = "BYTES")]
    pub history_min_bytes: Option<f64>,
}

layered!(MemoryOptions {
    audit_lib,
    max_live_execs,
    max_live_graphs,
    max_growth_per_iteration,
    max_growth_per_second,
    max_peak,
    sample_ms,
    history,
    history_window,
    history_consecutive,
    history_factor,
    history_min_bytes,
});

/// NVML's sampling interval unless told otherwise, milliseconds.
pub const DEFAULT_SAMPLE_MS: u64 = 20;
