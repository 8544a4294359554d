//! The graph-memory gate: `ncugate leaks`'s limits, sampling and history
//! rule as flags, `NCUGATE_*` variables and `[memory]` in `ncugate.toml`,
//! with their defaults, and where the audit library is cached.

use super::layered;
use crate::memory::MemoryLimits;
use crate::memory::history::Rule;
use clap::Args;
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// `[memory]` (limits in bytes), and the flags of `ncugate leaks` that override it.
#[derive(Debug, Clone, Default, PartialEq, Args, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryOptions {
    /// A prebuilt CUPTI injection library (default: [memory] audit_lib, else the one built into ncugate, compiled on first use with $CC and the CUDA toolkit's CUPTI into the cache folder).
    #[arg(long, env = "NCUGATE_AUDIT_LIB", value_name = "PATH")]
    pub(crate) audit_lib: Option<PathBuf>,
    /// Where the audit library compiled on first use is cached (default: $XDG_CACHE_HOME/ncugate, else ~/.cache/ncugate). A folder of this machine, so not an ncugate.toml key.
    #[arg(long, env = "NCUGATE_CACHE_DIR", value_name = "DIR")]
    #[serde(skip)]
    pub(crate) cache_dir: Option<PathBuf>,
    /// Graph executables allowed to be alive at exit (default 0).
    #[arg(long, value_name = "N")]
    pub(crate) max_live_execs: Option<u64>,
    /// Graphs (not executables) allowed to be alive at exit (default: not checked; the CUDA runtime may keep internal copies).
    #[arg(long, value_name = "N")]
    pub(crate) max_live_graphs: Option<u64>,
    /// Allowed GPU memory growth per graph launch, bytes (default 65536 = 64 KiB; NVML moves in 2 MiB pages, so use ≥ 100 launches).
    #[arg(long, value_name = "BYTES")]
    pub(crate) max_growth_per_iteration: Option<f64>,
    /// Allowed GPU memory growth per second, bytes (default: not checked).
    #[arg(long, value_name = "BYTES")]
    pub(crate) max_growth_per_second: Option<f64>,
    /// Allowed peak GPU memory of the process, bytes (default: not checked).
    #[arg(long, value_name = "BYTES")]
    pub(crate) max_peak: Option<f64>,
    /// NVML sampling interval in milliseconds (default 20).
    #[arg(long, value_name = "MS")]
    pub(crate) sample_ms: Option<u64>,
    /// Append this run to a JSON-lines history file (locked) and apply the leak-trend rule (default: [memory] history, else none: no trend rule).
    #[arg(long, env = "NCUGATE_HISTORY", value_name = "FILE")]
    pub(crate) history: Option<PathBuf>,
    /// Runs in the trend rule's rolling median (default 7).
    #[arg(long, value_name = "N")]
    pub(crate) history_window: Option<usize>,
    /// Last runs that must all be over the line (default 3).
    #[arg(long, value_name = "N")]
    pub(crate) history_consecutive: Option<usize>,
    /// Over this factor × the median (default 1.5).
    #[arg(long, value_name = "X")]
    pub(crate) history_factor: Option<f64>,
    /// And over this many bytes (default 402653184 = 384 MiB).
    #[arg(long, value_name = "BYTES")]
    pub(crate) history_min_bytes: Option<f64>,
}

layered!(MemoryOptions {
    audit_lib,
    cache_dir,
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
pub(crate) const DEFAULT_SAMPLE_MS: u64 = 20;
/// Graph executables allowed to be alive at exit unless told otherwise.
pub(crate) const DEFAULT_MAX_LIVE_EXECS: u64 = 0;
/// GPU memory growth allowed per graph launch unless told otherwise, bytes (64 KiB).
pub(crate) const DEFAULT_MAX_GROWTH_PER_ITERATION: f64 = 65_536.0;
/// Runs in the trend rule's rolling median unless told otherwise.
pub(crate) const DEFAULT_HISTORY_WINDOW: usize = 7;
/// Last runs that must all be over the line unless told otherwise.
pub(crate) const DEFAULT_HISTORY_CONSECUTIVE: usize = 3;
/// The factor × the median a run must be over unless told otherwise.
pub(crate) const DEFAULT_HISTORY_FACTOR: f64 = 1.5;
/// The bytes a run must be over unless told otherwise (384 MiB).
pub(crate) const DEFAULT_HISTORY_MIN_BYTES: f64 = 402_653_184.0;

impl MemoryOptions {
    /// The limits, each given or its default (`None`: not checked).
    pub fn limits(&self) -> MemoryLimits {
        MemoryLimits {
            max_live_execs: self.max_live_execs.or(Some(DEFAULT_MAX_LIVE_EXECS)),
            max_live_graphs: self.max_live_graphs,
            max_growth_per_iteration: self
                .max_growth_per_iteration
                .or(Some(DEFAULT_MAX_GROWTH_PER_ITERATION)),
            max_growth_per_second: self.max_growth_per_second,
            max_peak: self.max_peak,
        }
    }

    /// The history's trend rule, each part given or its default (a window
    /// and a count of at least one run).
    pub fn rule(&self) -> Rule {
        Rule {
            window: self.history_window.unwrap_or(DEFAULT_HISTORY_WINDOW).max(1),
            consecutive: self
                .history_consecutive
                .unwrap_or(DEFAULT_HISTORY_CONSECUTIVE)
                .max(1),
            factor: self.history_factor.unwrap_or(DEFAULT_HISTORY_FACTOR),
            min_bytes: self.history_min_bytes.unwrap_or(DEFAULT_HISTORY_MIN_BYTES),
        }
    }

    /// NVML's sampling interval (at least a millisecond).
    pub(crate) fn sample_every(&self) -> Duration {
        Duration::from_millis(self.sample_ms.unwrap_or(DEFAULT_SAMPLE_MS).max(1))
    }
}

/// The folder compiled audit libraries are cached in: `cache_dir`
/// (`--cache-dir`, `$NCUGATE_CACHE_DIR`) if set and not empty, else
/// `$XDG_CACHE_HOME/ncugate`, else `~/.cache/ncugate`, else one in the
/// temporary folder.
pub(crate) fn cache_dir(cache_dir: Option<PathBuf>) -> PathBuf {
    if let Some(dir) = cache_dir.filter(|d| !d.as_os_str().is_empty()) {
        return dir;
    }
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(dir) = var("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("ncugate");
    }
    match var("HOME") {
        Some(home) => PathBuf::from(home).join(".cache").join("ncugate"),
        None => std::env::temp_dir().join("ncugate-cache"),
    }
}
