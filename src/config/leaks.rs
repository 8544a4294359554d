//! `ncugate leaks`' settings: [`MemoryOptions`](crate::options::MemoryOptions) over `[memory]` over the
//! defaults of the limits and of the history rule.

use super::file::FileConfig;
use super::output::{outputs, style};
use super::run::runner;
use crate::cli::LeaksArgs;
use crate::error::Result;
use crate::memory::MemoryLimits;
use crate::memory::history::Rule;
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
    pub(crate) fn audit(&self) -> crate::memory::run::Audit<'_> {
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
    Ok(LeaksConfig {
        cache_dir: crate::options::memory::cache_dir(m.cache_dir.clone()),
        limits: m.limits(),
        sample_every: m.sample_every(),
        rule: m.rule(),
        audit_lib: m.audit_lib,
        history: m.history,
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
