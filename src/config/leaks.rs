//! `ncugate leaks`' settings: [`MemoryOptions`](crate::options::MemoryOptions) over `[memory]` over the
//! defaults of the limits and of the history rule.

use super::file::FileConfig;
use super::output::{outputs, style};
use super::run::runner;
use crate::cli::LeaksArgs;
use crate::error::Result;
use crate::memory::MemoryLimits;
use crate::memory::history::Rule;
use crate::options::memory::DEFAULT_SAMPLE_MS;
use crate::options::{Layer, ProfileOptions};
use crate::report::Outputs;
use crate::runner::RunnerConfig;
use std::path::PathBuf;
use std::time::Duration;

/// `ncugate leaks`.
#[derive(Debug, Clone)]
pub struct LeaksConfig {
    pub runner: RunnerConfig,
    /// A prebuilt audit library (`--audit-lib`, `[memory] audit_lib`); `None`:
    /// the one compiled from the embedded source into `cache_dir`.
    pub audit_lib: Option<PathBuf>,
    /// Where compiled audit libraries are cached.
    pub cache_dir: PathBuf,
    pub limits: MemoryLimits,
    pub sample_every: Duration,
    pub history: Option<PathBuf>,
    pub rule: Rule,
    pub outputs: Outputs,
    /// How the terminal report looks: colour, width, which rows.
    pub style: crate::report::terminal::Style,
}

impl LeaksConfig {
    /// What the memory audit itself needs.
    pub fn audit(&self) -> crate::memory::run::Audit<'_> {
        crate::memory::run::Audit {
            runner: &self.runner,
            audit_lib: self.audit_lib.as_ref(),
            cache_dir: &self.cache_dir,
            limits: &self.limits,
            sample_every: self.sample_every,
            history: self.history.as_ref(),
            rule: &self.rule,
        }
    }
}

pub(super) fn leaks(args: LeaksArgs) -> Result<LeaksConfig> {
    let file = FileConfig::load(args.run.config.as_deref())?;
    let runner = runner(&args.run, &ProfileOptions::default(), &file)?;
    let m = args.memory.clone().over(file.memory.clone());
    let limits = MemoryLimits::default();
    let rule = Rule::default();
    Ok(LeaksConfig {
        audit_lib: m.audit_lib,
        cache_dir: crate::options::memory::cache_dir(m.cache_dir),
        limits: MemoryLimits {
            max_live_execs: m.max_live_execs.over(limits.max_live_execs),
            max_live_graphs: m.max_live_graphs.over(limits.max_live_graphs),
            max_growth_per_iteration: m
                .max_growth_per_iteration
                .over(limits.max_growth_per_iteration),
            max_growth_per_second: m.max_growth_per_second.over(limits.max_growth_per_second),
            max_peak: m.max_peak.over(limits.max_peak),
        },
        sample_every: Duration::from_millis(m.sample_ms.unwrap_or(DEFAULT_SAMPLE_MS).max(1)),
        history: m.history,
        rule: Rule {
            window: m.history_window.unwrap_or(rule.window).max(1),
            consecutive: m.history_consecutive.unwrap_or(rule.consecutive).max(1),
            factor: m.history_factor.unwrap_or(rule.factor),
            min_bytes: m.history_min_bytes.unwrap_or(rule.min_bytes),
        },
        runner,
        outputs: outputs(&args.report),
        style: style(&args.report, args.run.quiet),
    })
}

/// Where `ncugate leaks` caches the audit library, for the commands that
/// take no memory flags (`doctor`): `NCUGATE_CACHE_DIR`, else the default.
pub fn audit_cache_dir() -> PathBuf {
    let from_env = super::env_only::<crate::options::MemoryOptions>().unwrap_or_default();
    crate::options::memory::cache_dir(from_env.cache_dir)
}
