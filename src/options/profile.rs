//! How ncu profiles the app: `--mode`, `--clock-control`, … on the command
//! line, `NCUGATE_MODE`, … in the environment, `[profile]` in `ncugate.toml`.

use super::{layered, value_enum};
use crate::model::GraphProfiling;
use crate::options::Layer;
use crate::options::app::{AppOptions, last_wins};
use crate::runner::RunnerConfig;
use crate::runner::{CacheControl, ClockControl, Dcgm, Mode, ReplayMode};
use clap::Args;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// `[profile]`, and the flags that override it.
#[derive(Debug, Clone, Default, PartialEq, Args, Deserialize)]
#[serde(deny_unknown_fields)]
#[command(next_help_heading = "Profiling (ncu)")]
pub struct ProfileOptions {
    /// "fast": only the gated metrics; "full": `--set full` plus them (default: [profile] mode, else fast).
    #[arg(long, value_enum, env = "NCUGATE_MODE")]
    pub(crate) mode: Option<Mode>,
    /// ncu --graph-profiling (default: [profile] graph_profiling, else node; recorded in the baseline).
    #[arg(
        long,
        hide_short_help = true,
        value_enum,
        env = "NCUGATE_GRAPH_PROFILING"
    )]
    pub(crate) graph_profiling: Option<GraphProfiling>,
    /// ncu --clock-control (default none; recorded in the baseline).
    #[arg(long, value_enum, env = "NCUGATE_CLOCK_CONTROL", value_name = "MODE")]
    pub(crate) clock_control: Option<ClockControl>,
    /// ncu --cache-control (default all).
    #[arg(
        long,
        hide_short_help = true,
        value_enum,
        env = "NCUGATE_CACHE_CONTROL",
        value_name = "MODE"
    )]
    pub(crate) cache_control: Option<CacheControl>,
    /// ncu --replay-mode (default kernel).
    #[arg(
        long,
        hide_short_help = true,
        value_enum,
        env = "NCUGATE_REPLAY_MODE",
        value_name = "MODE"
    )]
    pub(crate) replay_mode: Option<ReplayMode>,
    /// ncu --kernel-name filter (default: [profile] kernel_name, else none: every kernel).
    #[arg(
        long,
        hide_short_help = true,
        env = "NCUGATE_KERNEL_NAME",
        value_name = "FILTER"
    )]
    pub(crate) kernel_name: Option<String>,
    /// ncu --launch-skip (default: [profile] launch_skip, else none: ncu's 0).
    #[arg(
        long,
        hide_short_help = true,
        env = "NCUGATE_LAUNCH_SKIP",
        value_name = "N"
    )]
    pub(crate) launch_skip: Option<u64>,
    /// ncu --launch-count (default: [profile] launch_count, else none: every launch).
    #[arg(
        long,
        hide_short_help = true,
        env = "NCUGATE_LAUNCH_COUNT",
        value_name = "N"
    )]
    pub(crate) launch_count: Option<u64>,
    /// Also collect this metric, and record it in a baseline (repeatable; NCUGATE_EXTRA_METRICS is comma-separated; adds to [profile] extra_metrics). With --input, baseline record reads it from the exports (default: none beyond the thresholds' metrics).
    #[arg(
        long = "extra-metric",
        alias = "metric",
        env = "NCUGATE_EXTRA_METRICS",
        value_delimiter = ',',
        value_name = "METRIC"
    )]
    #[serde(default)]
    pub(crate) extra_metrics: Vec<String>,
    /// DCGM's profiling blocks ncu machine-wide: "pause" runs `dcgmi profile --pause` before each ncu run and `--resume` after it (default fail; it leaves DCGM alone).
    #[arg(
        long,
        hide_short_help = true,
        value_enum,
        env = "NCUGATE_DCGM",
        value_name = "POLICY"
    )]
    pub(crate) dcgm: Option<Dcgm>,
    /// `false`: profile only between the app's cudaProfilerStart/Stop
    /// (`torch.cuda.profiler.start()/stop()`), `ncu --profile-from-start off`:
    /// the steady state, after warm-up and autotuning (recorded in the baseline;
    /// default: [profile] profile_from_start, else true).
    #[arg(
        long,
        hide_short_help = true,
        env = "NCUGATE_PROFILE_FROM_START",
        value_name = "BOOL"
    )]
    pub(crate) profile_from_start: Option<bool>,
    /// Profile only inside this NVTX range (`ncu --nvtx --nvtx-include`; repeatable; adds to [profile] nvtx_include; recorded in the baseline; default: none, the whole run).
    #[arg(
        long,
        hide_short_help = true,
        env = "NCUGATE_NVTX_INCLUDE",
        value_delimiter = ',',
        value_name = "RANGE"
    )]
    #[serde(default)]
    pub(crate) nvtx_include: Vec<String>,
    /// `[profile] kernel_env`: more environment variables that steer kernel
    /// choice, recorded in the baseline beside the built-in list (default:
    /// none beyond the built-in list).
    #[arg(skip)]
    #[serde(default)]
    pub(crate) kernel_env: Vec<String>,
    /// `[profile] toolchain_command`: an argv (no shell) that prints
    /// `NAME VERSION` lines, recorded in the baseline with the driver's
    /// version (e.g. python3 printing torch's and triton's; default: none).
    #[arg(skip)]
    pub(crate) toolchain_command: Option<Vec<String>>,
    /// The ncu executable (default: ncu from PATH).
    #[arg(long, hide_short_help = true, env = "NCUGATE_NCU", value_name = "PATH")]
    pub(crate) ncu: Option<String>,
    /// Read `.ncu-rep` and `.ncu-repz` inputs through `ncu --import` instead of natively (default: [profile] import_with_ncu, else false).
    #[arg(
        long,
        hide_short_help = true,
        env = "NCUGATE_IMPORT_WITH_NCU",
        num_args = 0..=1,
        default_missing_value = "true",
        value_name = "BOOL"
    )]
    pub(crate) import_with_ncu: Option<bool>,
    /// `[profile] out_dir`: the work dir for artifacts. Its flag is
    /// [`OutDir`]'s `--out`, with the app's flags, as sanitize and leaks take
    /// it too.
    #[arg(skip)]
    pub(crate) out_dir: Option<PathBuf>,
}

impl ProfileOptions {
    /// How the app is built and runs under ncu: these settings and the
    /// app's, each given or its default; `base` is the folder of
    /// ncugate.toml, which the defaults of the work dir and the app's folder
    /// are relative to.
    pub(crate) fn resolve(
        self,
        app: AppOptions,
        build: Option<Vec<String>>,
        out: &OutDir,
        base: &Path,
    ) -> RunnerConfig {
        RunnerConfig {
            build,
            workdir: app.workdir_or(base),
            timeout: app.timeout(),
            retries: app.retries.unwrap_or(super::app::DEFAULT_RETRIES),
            warmup: app.warmup.unwrap_or(super::app::DEFAULT_WARMUP),
            app: app.command,
            env: last_wins(app.env),
            mode: self.mode.unwrap_or_default(),
            graph_profiling: self.graph_profiling.unwrap_or_default(),
            clock_control: self.clock_control.unwrap_or(DEFAULT_CLOCK_CONTROL),
            cache_control: self.cache_control.unwrap_or(DEFAULT_CACHE_CONTROL),
            replay_mode: self.replay_mode.unwrap_or(DEFAULT_REPLAY_MODE),
            kernel_name: self.kernel_name,
            launch_skip: self.launch_skip,
            launch_count: self.launch_count,
            extra_metrics: self
                .extra_metrics
                .into_iter()
                .filter(|m| !m.is_empty())
                .collect(),
            dcgm: self.dcgm.unwrap_or_default(),
            profile_from_start: self.profile_from_start.unwrap_or(true),
            nvtx_include: self
                .nvtx_include
                .into_iter()
                .filter(|r| !r.is_empty())
                .collect(),
            kernel_env: self.kernel_env,
            toolchain_command: self.toolchain_command.unwrap_or_default(),
            ncu: self.ncu.unwrap_or_else(|| DEFAULT_NCU.into()),
            out_dir: out.resolve(self.out_dir, base),
        }
    }
}

/// `--out`, the flag of `[profile] out_dir`.
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub(crate) struct OutDir {
    /// Work dir for artifacts (report, CSVs, logs; default: [profile] out_dir, else target/ncugate beside ncugate.toml).
    #[arg(long = "out", env = "NCUGATE_OUT", value_name = "DIR")]
    pub(crate) out_dir: Option<PathBuf>,
}

impl OutDir {
    /// The work dir: `--out` (or `NCUGATE_OUT`) over `[profile] out_dir`
    /// over [`DEFAULT_OUT_DIR`] in `base`, the folder of `ncugate.toml`.
    pub(crate) fn resolve(&self, file: Option<PathBuf>, base: &Path) -> PathBuf {
        self.out_dir
            .clone()
            .over(file)
            .unwrap_or_else(|| base.join(DEFAULT_OUT_DIR))
    }
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
    dcgm,
    ncu,
    import_with_ncu,
    out_dir,
    profile_from_start,
    toolchain_command,
} adds { extra_metrics, nvtx_include, kernel_env });

value_enum!(Mode {
    Fast = "fast",
    Full = "full",
});

value_enum!(GraphProfiling {
    Node = "node": "Every kernel node of a CUDA graph is profiled as its own launch",
    Graph = "graph": "A whole graph launch is one result named `graph`",
});

value_enum!(ClockControl {
    Base = "base": "Lock the clocks to base clock",
    None = "none": "Leave the clocks as they are",
    Reset = "reset": "Reset the clocks to their defaults",
});

value_enum!(Dcgm {
    Fail = "fail": "Leave DCGM alone; ncu fails while DCGM profiles",
    Pause = "pause": "dcgmi profile --pause before each ncu run, --resume after it",
});

value_enum!(CacheControl {
    All = "all": "Flush every cache before each pass (ncu's default)",
    None = "none": "Keep the caches as the previous pass left them",
});

value_enum!(ReplayMode {
    Kernel = "kernel": "Replay each kernel in place, saving and restoring memory (ncu's default)",
    Application = "application": "Run the whole application once per pass",
    Range = "range": "Replay ranges of the app (cu(da)ProfilerStart/Stop or NVTX)",
    AppRange = "app-range": "Ranges, by running the whole application once per pass",
});

/// The ncu ncugate runs when nothing names one.
pub(crate) const DEFAULT_NCU: &str = "ncu";
/// `--clock-control` unless told otherwise (ncu's own default is `base`):
/// the clocks the app runs at outside the profiler.
pub(crate) const DEFAULT_CLOCK_CONTROL: ClockControl = ClockControl::None;
/// `--cache-control` unless told otherwise (ncu's own default).
pub(crate) const DEFAULT_CACHE_CONTROL: CacheControl = CacheControl::All;
/// `--replay-mode` unless told otherwise (ncu's own default).
pub(crate) const DEFAULT_REPLAY_MODE: ReplayMode = ReplayMode::Kernel;
/// The work dir, relative to `ncugate.toml`'s folder.
pub(crate) const DEFAULT_OUT_DIR: &str = "target/ncugate";

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// The flags, ncugate.toml and ncu's command line spell every value alike.
    fn spelled_alike<T>()
    where
        T: ValueEnum
            + serde::de::DeserializeOwned
            + PartialEq
            + std::fmt::Debug
            + std::fmt::Display,
    {
        for value in T::value_variants() {
            let typed = value.to_possible_value().map(|v| v.get_name().to_string());
            assert_eq!(typed, Some(value.to_string()));
            let read: T = toml::Value::String(value.to_string()).try_into().unwrap();
            assert_eq!(&read, value);
        }
    }

    #[test]
    fn flags_ncugate_toml_and_ncu_spell_the_values_alike() {
        spelled_alike::<ClockControl>();
        spelled_alike::<CacheControl>();
        spelled_alike::<ReplayMode>();
        assert_eq!(ReplayMode::value_variants().len(), 4);
    }
}
