//! What the metric gate compares with: `[gate]` in `ncugate.toml` and the
//! flags of `check` and `baseline record` that override it. The baseline
//! file's flag differs by command (`check --baseline`, `baseline record
//! --output`) and the baselines folder's is a suite flag ([`BaselinesDir`]'s
//! `--baselines`), so those two keys are file-only in [`GateOptions`].

use super::{layered, value_enum};
use crate::compare::code::AutotunedBuilds;
use crate::compare::environmental::Environmental;
use crate::model::KernelKeyMode;
use crate::options::Layer;
use crate::shared_gpu::Policy;
use crate::trace::LockedCounters;
use clap::Args;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// `[gate]`, and the flags that override it.
#[derive(Debug, Clone, Default, PartialEq, Args, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GateOptions {
    /// Threshold rules (TOML) (default: [gate] thresholds, else the built-in thresholds/default.toml).
    #[arg(long, env = "NCUGATE_THRESHOLDS", value_name = "FILE")]
    pub(crate) thresholds: Option<PathBuf>,
    /// How launches are grouped into kernels, recorded in the baseline; check groups them as its baseline says and only checks a key given here against it (baseline record's default: [gate] kernel_key, else demangled).
    #[arg(long, value_enum, env = "NCUGATE_KERNEL_KEY")]
    pub(crate) kernel_key: Option<KernelKeyMode>,
    /// When the GPU was shared (another process on it, or an SM clock 10% or more under the baseline's): warn gates the deterministic rules and shows the sensitive ones (durations, DRAM traffic, throughputs) with their change as warnings, refuse exits 2, gate gates every rule; baseline record refuses or marks a baseline recorded beside another process (default: [gate] shared_gpu, else warn).
    #[arg(long, value_enum, env = "NCUGATE_SHARED_GPU", value_name = "POLICY")]
    pub(crate) shared_gpu: Option<Policy>,
    /// What a timing-only failure becomes when the kernel's machine code, instruction counts, launches and launch configuration are unchanged (an environmental change: clocks, other work on the GPU, thermals): `warn` shows it with its reason without gating, `fail` gates it; needs code fingerprints on both sides (.ncu-rep data) (default: [gate] environmental, else warn).
    #[arg(
        long,
        value_enum,
        env = "NCUGATE_ENVIRONMENTAL",
        value_name = "VERDICT"
    )]
    pub(crate) environmental: Option<Environmental>,
    /// What a kernel an autotuner names (XLA's fusions, Inductor's templates, cuDNN's) is gated on when its build is not the baseline's: `time` its time and launches only, as the autotuner may pick another build in each process; `all` every rule, for jobs that keep the autotuner's cache from the baseline's job to the checks', where a new build is a change (default: the [[workload]]'s autotuned_builds, else [gate] autotuned_builds, else time).
    #[arg(
        long,
        value_enum,
        env = "NCUGATE_AUTOTUNED_BUILDS",
        value_name = "GATED"
    )]
    pub(crate) autotuned_builds: Option<AutotunedBuilds>,
    /// What check does when ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM): `fail` exits 2 with the fix; `trace` runs the app under CUPTI activity tracing instead (it needs no counter permission) and gates the launch structure alone — which kernels ran and how often, with a changed grid or block named — every metric rule listed as not gated and the report labelled DEGRADED (default: [gate] locked_counters, else fail).
    #[arg(long, value_enum, env = "NCUGATE_LOCKED_COUNTERS", value_name = "MODE")]
    pub(crate) locked_counters: Option<LockedCounters>,
    /// `[gate] baseline`: the one baseline file.
    #[arg(skip)]
    pub(crate) baseline: Option<PathBuf>,
    /// `[gate] baselines`: a suite's baselines folder, `<dir>/<workload>/<gpu>.json`.
    #[arg(skip)]
    pub(crate) baselines: Option<PathBuf>,
    /// `[gate] skip_unchanged`: the check's flag is in [`super::skip::SkipArgs`].
    #[arg(skip)]
    pub(crate) skip_unchanged: Option<super::skip::SkipUnchanged>,
    /// `[gate] skip_max_age`: the check's flag is in [`super::skip::SkipArgs`].
    #[arg(skip)]
    pub(crate) skip_max_age: Option<String>,
}

layered!(GateOptions {
    thresholds,
    kernel_key,
    shared_gpu,
    environmental,
    autotuned_builds,
    locked_counters,
    baseline,
    baselines,
    skip_unchanged,
    skip_max_age,
});

value_enum!(KernelKeyMode {
    Demangled = "demangled": "The demangled name exactly as ncu prints it (`scale(float *, const float *, unsigned long)`)",
    Function = "function": "The function name alone: no return type, template arguments or parameters (`scale`)",
});

value_enum!(Policy {
    Warn = "warn": "Gate the deterministic rules; show the sensitive ones with their change and a warning naming the neighbour, not as failures",
    Refuse = "refuse": "Exit 2: the run proves nothing about the sensitive metrics",
    Gate = "gate": "Gate every rule as on a quiet GPU",
});

value_enum!(Environmental {
    Warn = "warn": "A warning: shown with its reason, not gated",
    Fail = "fail": "A failure, as any other",
});

value_enum!(AutotunedBuilds {
    Time = "time": "Its time and launches only: the autotuner may pick another build in each process",
    All = "all": "Every rule: the autotuner's cache is kept between jobs, so a new build is a change",
});

value_enum!(LockedCounters {
    Fail = "fail": "Exit 2 with the fix (run as root, or open the counters to all users)",
    Trace = "trace": "Gate the launch structure from a CUPTI activity trace; every metric rule not gated; the report says DEGRADED",
});

/// The baselines folder of a suite when neither `--baselines` nor
/// `[gate] baselines` names one, beside `ncugate.toml`.
pub(crate) const DEFAULT_BASELINES_DIR: &str = "baselines";

/// `--baselines`, the flag of `[gate] baselines`, with the suite's flags.
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub(crate) struct BaselinesDir {
    /// The baselines folder, `DIR/<workload>/<gpu>.json` (default: [gate] baselines, else baselines/ beside ncugate.toml).
    #[arg(long, env = "NCUGATE_BASELINES", value_name = "DIR")]
    pub(crate) baselines: Option<PathBuf>,
}

impl BaselinesDir {
    /// The baselines folder: `--baselines` (or `NCUGATE_BASELINES`) over
    /// `[gate] baselines` over [`DEFAULT_BASELINES_DIR`] in `base`, the
    /// folder of `ncugate.toml`.
    pub(crate) fn resolve(&self, file: Option<PathBuf>, base: &Path) -> PathBuf {
        self.baselines
            .clone()
            .over(file)
            .unwrap_or_else(|| base.join(DEFAULT_BASELINES_DIR))
    }
}
