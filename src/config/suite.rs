//! A suite's settings: `[[workload]]` tables (or `[app]` as the workload
//! `default`) merged with `[app]`, `[profile]`, `[build]`, `[gate]` and the
//! flags, selected with `--workload` / `--tag`, with the baselines folder
//! and the shard; each selected workload's run resolved here into a complete
//! configuration, so a suite run only loops over them.

use super::file::{FileConfig, WorkloadSection};
use super::run::runner;
use super::shard::Shard;
use super::workload::{self as workloads, DEFAULT_WORKLOAD, Workload};
use super::{BaselinePlace, Source};
use crate::cli::{RunArgs, SuiteArgs};
use crate::error::{Error, Result};
use crate::format::shell_quote;
use crate::options::{Layer, ProfileOptions};
use crate::report::Outputs;
use crate::runner::RunnerConfig;
use std::path::PathBuf;

/// `check`, `baseline record` or `profile` of every selected workload,
/// each resolved into the complete configuration of that workload's run.
#[derive(Debug, Clone)]
pub(crate) enum SuiteRuns {
    /// One check per workload of [`SuiteConfig::workloads`], in its order.
    Check(Vec<super::CheckConfig>),
    /// One recording per workload of [`SuiteConfig::workloads`], in its order.
    Record(Vec<super::RecordConfig>),
    /// One profiled run per workload of [`SuiteConfig::workloads`], in its
    /// order, its build left to the suite (each distinct build runs once).
    Profile(Vec<RunnerConfig>),
}

/// `check`, `baseline record` or `profile` over a suite's workloads.
#[derive(Debug, Clone)]
pub struct SuiteConfig {
    /// Each selected workload's run.
    pub(crate) runs: SuiteRuns,
    /// The selected workloads, in config order (before sharding), each with
    /// its build: the suite runs each distinct build once, before the
    /// workloads that share it.
    pub(crate) workloads: Vec<Workload>,
    /// Every workload of the config: the digests cover them all, so runs of
    /// different selections from one commit still merge.
    pub(crate) all: Vec<Workload>,
    pub(crate) shard: Option<Shard>,
    /// `<dir>/<workload>/<gpu>.json`.
    pub(crate) baselines_dir: PathBuf,
    /// `--baseline FILE` / `--output FILE` for the one selected workload.
    pub(crate) baseline_file: Option<PathBuf>,
    pub outputs: Outputs,
    pub(crate) style: crate::report::terminal::Style,
    /// A check's skipping of unchanged workloads; `None`: every workload runs.
    pub(crate) skip: Option<super::skip::Settings>,
    /// `--predict-skips FILE`: the check only writes the names of the
    /// workloads it would skip there.
    pub(crate) predict_skips: Option<PathBuf>,
    /// `--planned-skips FILE`, read (with skipping on): the workloads the
    /// shard plan counts at cost 0.
    pub(crate) planned_skips: Vec<String>,
}

/// True when the command runs as a suite: `[[workload]]` tables, a suite
/// flag or `[gate] baselines`. (`check` and `record` also run as a suite of
/// the one workload `default` when no baseline file is configured.)
pub(super) fn is_suite(file: &FileConfig, suite: &SuiteArgs) -> bool {
    !file.workloads.is_empty() || suite.any() || file.gate.baselines.is_some()
}

/// No `ncugate.toml`, no app after `--` and no exports: the error that
/// names the missing file and `ncugate init`, before a default workload
/// with nothing to run is made up.
pub(super) fn something_to_gate(
    file: &FileConfig,
    run: &RunArgs,
    inputs: &[PathBuf],
) -> Result<()> {
    if file.source.is_none()
        && file.app.command.is_empty()
        && run.app.command.is_empty()
        && inputs.is_empty()
    {
        return Err(Error::from(crate::error::ConfigError::NoConfigFile));
    }
    Ok(())
}

/// Every workload of the config, merged with the shared sections and the flags.
/// `thresholds`, the flag, stands over each workload's thresholds.
fn all_workloads(
    args: &RunArgs,
    ncu: &ProfileOptions,
    file: &FileConfig,
    thresholds: Option<&PathBuf>,
) -> Result<Vec<Workload>> {
    if file.workloads.is_empty() {
        let runner = runner(args, ncu, file)?;
        return Ok(vec![Workload {
            name: DEFAULT_WORKLOAD.into(),
            tags: Vec::new(),
            runner,
            thresholds: thresholds
                .cloned()
                .over(file.gate.thresholds.clone())
                .into(),
            autotuned_builds: None,
            inputs: Vec::new(),
        }]);
    }
    if !file.app.command.is_empty() {
        return Err(Error::from(crate::error::ConfigError::AppAndWorkloads));
    }
    if file.gate.baseline.is_some() {
        return Err(Error::from(crate::error::ConfigError::BaselineAndWorkloads));
    }
    // Linear in the number of tables: the shared sections are copied once
    // without the workloads (a copy of the whole file per workload made
    // 8,000 workloads take 15-43 s), names are looked up in a set.
    let shared = file.clone_without_workloads();
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(file.workloads.len());
    for w in &file.workloads {
        workloads::check_name(&w.name)?;
        if !seen.insert(w.name.as_str()) {
            return Err(Error::from(crate::error::ConfigError::DuplicateWorkload {
                name: w.name.clone(),
            }));
        }
        if w.app.command.is_empty() {
            return Err(Error::from(
                crate::error::ConfigError::WorkloadWithoutCommand {
                    name: w.name.clone(),
                },
            ));
        }
        out.push(one(args, ncu, &shared, w, thresholds)?);
    }
    Ok(out)
}

/// One `[[workload]]`: its keys over the shared sections (`file`, without its
/// workloads), the flags over both.
fn one(
    args: &RunArgs,
    ncu: &ProfileOptions,
    file: &FileConfig,
    w: &WorkloadSection,
    thresholds: Option<&PathBuf>,
) -> Result<Workload> {
    let mut merged = file.clone();
    merged.app = w.app.clone().over(file.app.clone());
    merged.profile = w.profile.clone().over(file.profile.clone());
    if let Some(build) = &w.build {
        merged.build.command = Some(build.clone());
    }
    let mut runner = runner(args, ncu, &merged)?;
    runner.out_dir = runner.out_dir.join(&w.name);
    for pattern in &w.inputs {
        glob::Pattern::new(pattern).map_err(|e| {
            Error::from(crate::error::ConfigError::InputsGlob {
                name: w.name.clone(),
                pattern: pattern.clone(),
                why: e.msg.to_string(),
            })
        })?;
    }
    Ok(Workload {
        name: w.name.clone(),
        tags: w.tags.clone(),
        runner,
        thresholds: thresholds
            .cloned()
            .over(w.thresholds.clone())
            .over(file.gate.thresholds.clone())
            .into(),
        autotuned_builds: w.autotuned_builds,
        inputs: w
            .inputs
            .iter()
            .map(|i| file.base_dir.join(i).display().to_string())
            .collect(),
    })
}

/// What `check`, `baseline record` and `profile` tell a suite run.
pub(super) struct Request<'a> {
    pub(crate) suite: &'a SuiteArgs,
    pub(crate) run: &'a RunArgs,
    pub(crate) ncu: &'a ProfileOptions,
    /// `--thresholds` (or `NCUGATE_THRESHOLDS`): stands over every workload's thresholds.
    pub(crate) thresholds: Option<PathBuf>,
    /// The flag naming one baseline file (`--baseline`, `--output`) and its
    /// value: it belongs to one workload, like `--input` and `-- APP ARGS`.
    pub(crate) one_workload_flag: (&'static str, Option<PathBuf>),
    /// `--input` exports of the one selected workload.
    pub(crate) inputs: Vec<PathBuf>,
}

/// The workloads a suite run selected, and where their data and baselines
/// are: what each command's per-workload configuration is made from.
pub(super) struct Selection {
    pub(crate) workloads: Vec<Workload>,
    pub(crate) all: Vec<Workload>,
    pub(crate) shard: Option<Shard>,
    pub(crate) baselines_dir: PathBuf,
    pub(crate) baseline_file: Option<PathBuf>,
    inputs: Vec<PathBuf>,
    thresholds_flag: Option<PathBuf>,
    quiet: bool,
    /// Flags to repeat in a printed `ncugate baseline record …` command
    /// (`--config`, `--baselines`), already quoted.
    record_flags: String,
}

impl Selection {
    /// The suite run of `request` over the workloads of `file`: selects them,
    /// checks that flags meant for one workload name one, and takes the
    /// shard and the baselines folder.
    pub(super) fn new(request: Request, file: &FileConfig) -> Result<Selection> {
        let Request {
            suite,
            run,
            ncu,
            thresholds,
            one_workload_flag: (file_flag, baseline_file),
            inputs,
        } = request;
        something_to_gate(file, run, &inputs)?;
        let all = all_workloads(run, ncu, file, thresholds.as_ref())?;
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
            .resolve(file.gate.baselines.clone(), &file.base_dir);
        let mut record_flags = String::new();
        if let Some(config) = &run.config {
            record_flags.push_str(&format!(
                " --config {}",
                shell_quote(&config.display().to_string())
            ));
        }
        if let Some(dir) = &suite.baselines.baselines {
            record_flags.push_str(&format!(
                " --baselines {}",
                shell_quote(&dir.display().to_string())
            ));
        }
        Ok(Selection {
            workloads,
            all,
            shard,
            baselines_dir,
            baseline_file,
            inputs,
            thresholds_flag: thresholds,
            quiet: run.quiet,
            record_flags,
        })
    }

    /// The data of workload `w`: the exports, or its app profiled `runs`
    /// times (its build left out: the suite runs each distinct build once).
    pub(super) fn source(&self, w: &Workload, runs: u32) -> Source {
        if self.inputs.is_empty() {
            let mut runner = w.runner.clone();
            runner.build = None;
            Source::Profile {
                runner: Box::new(runner),
                runs,
                quiet: self.quiet,
            }
        } else {
            Source::Inputs(self.inputs.clone())
        }
    }

    /// The baseline of workload `w`: the one file given, else its place in
    /// the baselines folder; a check's names the command that records it.
    pub(super) fn baseline(&self, w: &Workload, check: bool) -> BaselinePlace {
        match &self.baseline_file {
            Some(file) => BaselinePlace::File(file.clone()),
            None => BaselinePlace::Dir {
                dir: self.baselines_dir.clone(),
                workload: w.name.clone(),
                record: if check {
                    self.record_command(w)
                } else {
                    String::new()
                },
            },
        }
    }

    /// The command that records workload `w`'s missing baseline on this runner.
    fn record_command(&self, w: &Workload) -> String {
        let mut cmd = format!(
            "ncugate baseline record --workload {}{}",
            shell_quote(&w.name),
            self.record_flags
        );
        if let Some(t) = &self.thresholds_flag {
            cmd.push_str(&format!(
                " --thresholds {}",
                shell_quote(&t.display().to_string())
            ));
        }
        for input in &self.inputs {
            cmd.push_str(&format!(
                " --input {}",
                shell_quote(&input.display().to_string())
            ));
        }
        cmd
    }

    /// The suite's configuration, once each workload's run is made.
    pub(super) fn into_config(
        self,
        runs: SuiteRuns,
        outputs: Outputs,
        style: crate::report::terminal::Style,
    ) -> SuiteConfig {
        SuiteConfig {
            runs,
            workloads: self.workloads,
            all: self.all,
            shard: self.shard,
            baselines_dir: self.baselines_dir,
            baseline_file: self.baseline_file,
            outputs,
            style,
            skip: None,
            predict_skips: None,
            planned_skips: Vec::new(),
        }
    }
}
