//! A suite's settings: `[[workload]]` tables (or `[app]` as the workload
//! `default`) merged with `[app]`, `[profile]`, `[build]`, `[gate]` and the
//! flags, selected with `--workload` / `--tag`, with the baselines folder
//! and the shard.

use super::Source;
use super::file::{FileConfig, WorkloadSection};
use super::run::runner;
use super::shard::Shard;
use super::workload::{self as workloads, DEFAULT_WORKLOAD, Workload};
use crate::cli::{RunArgs, SuiteArgs};
use crate::error::{Error, Result};
use crate::options::app::EnvVar;
use crate::options::{AppOptions, Layer, ProfileOptions};
use crate::report::Outputs;
use std::path::PathBuf;

/// The baselines folder of a suite when neither `--baselines` nor
/// `[gate] baselines` names one, beside `ncugate.toml`.
pub const DEFAULT_BASELINES_DIR: &str = "baselines";

/// What a suite run does with each workload.
#[derive(Debug, Clone)]
pub enum SuiteAction {
    Check(Box<super::CheckConfig>),
    Record(Box<super::RecordConfig>),
    Profile,
}

/// `check`, `baseline record` or `profile` over a suite's workloads.
#[derive(Debug, Clone)]
pub struct SuiteConfig {
    /// The settings every workload shares; its `source`, `baseline`/`output`
    /// and `thresholds` are replaced per workload.
    pub action: SuiteAction,
    /// The selected workloads, in config order (before sharding).
    pub workloads: Vec<Workload>,
    /// Every workload of the config: the digests cover them all, so runs of
    /// different selections from one commit still merge.
    pub all: Vec<Workload>,
    pub shard: Option<Shard>,
    /// `<dir>/<workload>/<gpu>.json`.
    pub baselines_dir: PathBuf,
    /// `--baseline FILE` / `--output FILE` for the one selected workload.
    pub baseline_file: Option<PathBuf>,
    /// `--input` exports of the one selected workload.
    pub inputs: Vec<PathBuf>,
    /// Flags to repeat in a printed `ncugate baseline record …` command
    /// (`--config`, `--baselines`), already quoted.
    pub record_flags: String,
    pub quiet: bool,
    pub outputs: Outputs,
    pub style: crate::report::terminal::Style,
}

/// True when the command runs as a suite: `[[workload]]` tables, a suite
/// flag or `[gate] baselines`. (`check` and `record` also run as a suite of
/// the one workload `default` when no baseline file is configured.)
pub(super) fn is_suite(file: &FileConfig, suite: &SuiteArgs) -> bool {
    !file.workloads.is_empty() || suite.any() || file.gate.baselines.is_some()
}

/// Every workload of the config, merged with the shared sections and the flags.
pub(super) fn all_workloads(
    args: &RunArgs,
    ncu: &ProfileOptions,
    file: &FileConfig,
) -> Result<Vec<Workload>> {
    if file.workloads.is_empty() {
        let runner = runner(args, ncu, file)?;
        return Ok(vec![Workload {
            name: DEFAULT_WORKLOAD.into(),
            tags: Vec::new(),
            runner,
            thresholds: file.gate.thresholds.clone(),
        }]);
    }
    if !file.app.command.is_empty() {
        return Err(Error::from(crate::error::ConfigError::AppAndWorkloads));
    }
    if file.gate.baseline.is_some() {
        return Err(Error::from(crate::error::ConfigError::BaselineAndWorkloads));
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::with_capacity(file.workloads.len());
    for w in &file.workloads {
        workloads::check_name(&w.name)?;
        if seen.contains(&w.name.as_str()) {
            return Err(Error::from(crate::error::ConfigError::DuplicateWorkload {
                name: w.name.clone(),
            }));
        }
        seen.push(&w.name);
        if w.command.is_empty() {
            return Err(Error::from(
                crate::error::ConfigError::WorkloadWithoutCommand {
                    name: w.name.clone(),
                },
            ));
        }
        out.push(one(args, ncu, file, w)?);
    }
    Ok(out)
}

/// One `[[workload]]`: its keys over the shared sections, the flags over both.
fn one(
    args: &RunArgs,
    ncu: &ProfileOptions,
    file: &FileConfig,
    w: &WorkloadSection,
) -> Result<Workload> {
    let mut merged = file.clone();
    let own = AppOptions {
        timeout: w.timeout,
        workdir: w.workdir.as_deref().map(|p| file.resolve(p)),
        env: w
            .env
            .iter()
            .map(|(key, value)| EnvVar {
                key: key.clone(),
                value: value.clone(),
            })
            .collect(),
        command: w.command.clone(),
    };
    merged.app = own.over(file.app.clone());
    let own = ProfileOptions {
        kernel_name: w.kernel_name.clone(),
        launch_skip: w.launch_skip,
        launch_count: w.launch_count,
        extra_metrics: w.extra_metrics.clone(),
        ..ProfileOptions::default()
    };
    merged.profile = own.over(file.profile.clone());
    if let Some(build) = &w.build {
        merged.build.command = Some(build.clone());
    }
    let mut runner = runner(args, ncu, &merged)?;
    runner.out_dir = runner.out_dir.join(&w.name);
    Ok(Workload {
        name: w.name.clone(),
        tags: w.tags.clone(),
        runner,
        thresholds: w
            .thresholds
            .as_ref()
            .map(|p| file.resolve(p))
            .over(file.gate.thresholds.clone()),
    })
}

/// What `check`, `baseline record` and `profile` tell a suite run.
pub(super) struct Request<'a> {
    pub suite: &'a SuiteArgs,
    pub run: &'a RunArgs,
    pub ncu: &'a ProfileOptions,
    /// The flag naming one baseline file (`--baseline`, `--output`) and its
    /// value: it belongs to one workload, like `--input` and `-- APP ARGS`.
    pub one_workload_flag: (&'static str, Option<PathBuf>),
    /// `--input` exports of the one selected workload.
    pub inputs: Vec<PathBuf>,
    pub outputs: Outputs,
    pub style: crate::report::terminal::Style,
}

impl SuiteConfig {
    /// The suite run of `request` over the workloads of `file`: selects them,
    /// checks that flags meant for one workload name one, and takes the
    /// shard and the baselines folder. `action` gets the selected workloads
    /// and the inputs and makes the settings they share.
    pub(super) fn new(
        request: Request,
        file: &FileConfig,
        action: impl FnOnce(&[Workload], &[PathBuf]) -> Result<SuiteAction>,
    ) -> Result<SuiteConfig> {
        let Request {
            suite,
            run,
            ncu,
            one_workload_flag: (file_flag, baseline_file),
            inputs,
            outputs,
            style,
        } = request;
        let all = all_workloads(run, ncu, file)?;
        let workloads = workloads::select(all.clone(), &suite.workloads, &suite.tags)?;
        let shard = suite.shard.as_deref().map(str::parse).transpose()?;
        let one_only = if baseline_file.is_some() {
            Some(file_flag)
        } else if !inputs.is_empty() {
            Some("--input")
        } else if !run.app.command.is_empty() {
            Some("-- APP ARGS")
        } else {
            None
        };
        if let Some(flag) = one_only {
            if workloads.len() != 1 {
                let names: Vec<&str> = workloads.iter().map(|w| w.name.as_str()).collect();
                return Err(Error::from(crate::error::ConfigError::OneWorkloadFlag {
                    flag: flag.to_string(),
                    selected: names.iter().map(|n| n.to_string()).collect(),
                }));
            }
            if shard.is_some() {
                return Err(Error::from(
                    crate::error::ConfigError::ShardWithOneWorkloadFlag {
                        flag: flag.to_string(),
                    },
                ));
            }
        }
        let baselines_dir = suite
            .baselines
            .clone()
            .over(file.gate.baselines.clone())
            .unwrap_or_else(|| file.resolve(std::path::Path::new(DEFAULT_BASELINES_DIR)));
        let mut record_flags = String::new();
        if let Some(config) = &run.config {
            record_flags.push_str(&format!(
                " --config {}",
                quote(&config.display().to_string())
            ));
        }
        if let Some(dir) = &suite.baselines {
            record_flags.push_str(&format!(
                " --baselines {}",
                quote(&dir.display().to_string())
            ));
        }
        Ok(SuiteConfig {
            action: action(&workloads, &inputs)?,
            workloads,
            all,
            shard,
            baselines_dir,
            baseline_file,
            inputs,
            record_flags,
            quiet: run.quiet,
            outputs,
            style,
        })
    }
}

/// A word as a POSIX shell would need it quoted.
pub fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The source of one workload: its exports, or its app profiled `runs` times.
pub fn source_for(inputs: &[PathBuf], w: &Workload, runs: u32, quiet: bool) -> Source {
    if inputs.is_empty() {
        Source::Profile {
            runner: Box::new(w.runner.clone()),
            runs,
            quiet,
        }
    } else {
        Source::Inputs(inputs.to_vec())
    }
}
