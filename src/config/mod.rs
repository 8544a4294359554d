//! Validated configuration: the one place where command-line values,
//! `NCUGATE_*` variables (through clap) and `ncugate.toml` become the gate's
//! types. Every setting is defined once in [`crate::options`] and stacked in
//! the one order [`crate::options::Layer`] states: flag over variable over
//! file over default. Nothing past this module sees clap types.
//!
//! One file per command's configuration: [`gate`] (`check`, `baseline
//! record`), [`suite`] (the same over a suite's workloads), [`run`] (the
//! app's build and run under ncu), [`sanitize`], [`leaks`], [`output`] (report
//! files and terminal style), [`init`]; [`file`](mod@file) reads `ncugate.toml`.

pub mod file;
pub(crate) mod gate;
pub mod history;
pub(crate) mod init;
pub(crate) mod leaks;
pub(crate) mod output;
#[cfg(test)]
mod precedence;
pub(crate) mod run;
pub(crate) mod sanitize;
pub(crate) mod shard;
pub(crate) mod skip;
pub mod suite;
mod typed_flags;
pub(crate) mod workload;

pub use gate::{BaselinePlace, CheckConfig, Explain, RecordConfig, Source};
pub use init::InitConfig;
pub use leaks::{LeaksConfig, audit_cache_dir};
pub use run::{default_ncu, runner_from_file};
pub use sanitize::SanitizeConfig;
pub(crate) use shard::Shard;
pub(crate) use typed_flags::Given;
pub(crate) use workload::Workload;

use crate::cli::{BaselineCommand, Cli, CliCommand};
use crate::error::{Error, Result};
use crate::report::Outputs;
use crate::runner::RunnerConfig;
use file::FileConfig;
use std::path::PathBuf;

/// What to do, validated.
#[derive(Debug, Clone)]
pub enum Config {
    Check(CheckConfig),
    Record(RecordConfig),
    Diff {
        old: PathBuf,
        new: PathBuf,
        /// `--file-diff`: the line diff of the files after the summary.
        file_diff: bool,
    },
    Profile(RunnerConfig),
    Sanitize(SanitizeConfig),
    Leaks(LeaksConfig),
    /// `check`, `baseline record` or `profile` of a suite.
    Suite(Box<suite::SuiteConfig>),
    Merge(MergeConfig),
    History(history::HistoryConfig),
    Doctor,
    Completions(clap_complete::Shell),
    Man(Option<PathBuf>),
    Init(InitConfig),
    /// `ncugate init --print-thresholds`: the built-in rules, numbered as reports name them.
    PrintThresholds,
}

/// `ncugate merge`.
#[derive(Debug, Clone)]
pub struct MergeConfig {
    pub(crate) reports: Vec<PathBuf>,
    pub(crate) expect_shards: Option<u32>,
    pub outputs: Outputs,
    pub(crate) style: crate::report::terminal::Style,
}

impl TryFrom<Cli> for Config {
    type Error = Error;

    /// The configuration, as if no flag had been typed (all came from variables).
    fn try_from(cli: Cli) -> Result<Config> {
        Config::build(cli, &Given::default())
    }
}

impl Config {
    /// The configuration from parsed command-line matches: refuses flags that
    /// were typed but would do nothing.
    pub fn from_matches(matches: &clap::ArgMatches) -> Result<Config> {
        use clap::{CommandFactory, FromArgMatches};
        let cli = Cli::from_arg_matches(matches).map_err(|e| {
            Error::from(crate::error::ConfigError::CommandLine {
                message: e.to_string().trim().to_string(),
            })
        })?;
        Config::build(cli, &Given::from_matches(&Cli::command(), matches))
    }

    fn build(cli: Cli, given: &Given) -> Result<Config> {
        match cli.command {
            CliCommand::Check(args) => gate::check(*args, given),
            CliCommand::Baseline(BaselineCommand::Record(args)) => gate::record(*args, given),
            CliCommand::Baseline(BaselineCommand::Diff(args)) => Ok(Config::Diff {
                old: args.old,
                new: args.new,
                file_diff: args.file_diff,
            }),
            CliCommand::Profile(args) => {
                let file = FileConfig::load(args.run.config.as_deref())?;
                suite::something_to_gate(&file, &args.run, &[])?;
                if suite::is_suite(&file, &args.suite) {
                    let request = suite::Request {
                        suite: &args.suite,
                        run: &args.run,
                        ncu: &args.ncu,
                        thresholds: None,
                        one_workload_flag: ("", None),
                        inputs: Vec::new(),
                    };
                    let selection = suite::Selection::new(request, &file)?;
                    let runs = selection
                        .workloads
                        .iter()
                        .map(|w| RunnerConfig {
                            build: None,
                            ..w.runner.clone()
                        })
                        .collect();
                    let config = selection.into_config(
                        suite::SuiteRuns::Profile(runs),
                        Outputs::default(),
                        Default::default(),
                    );
                    return Ok(Config::Suite(Box::new(config)));
                }
                run::runner(&args.run, &args.ncu, &file).map(Config::Profile)
            }
            CliCommand::Sanitize(args) => sanitize::sanitize(*args, given).map(Config::Sanitize),
            CliCommand::Merge(args) => Ok(Config::Merge(MergeConfig {
                reports: args.reports,
                expect_shards: args.expect_shards,
                outputs: output::outputs(&args.report),
                style: output::style(&args.report, args.quiet),
            })),
            CliCommand::History(args) => history::history(*args).map(Config::History),
            CliCommand::Leaks(args) => leaks::leaks(*args).map(Config::Leaks),
            CliCommand::Doctor => Ok(Config::Doctor),
            CliCommand::Completions(args) => Ok(Config::Completions(args.shell)),
            CliCommand::Init(args) if args.print_thresholds => Ok(Config::PrintThresholds),
            CliCommand::Init(args) => init::init(args).map(Config::Init),
            CliCommand::Man(args) => Ok(Config::Man(args.dir)),
        }
    }
}

/// The settings of `T` that `NCUGATE_*` variables give, read by clap as for
/// a command line that types none of `T`'s flags: for the commands that take
/// `T`'s settings without its flags (`check`'s sanitizer stage, `doctor`).
fn env_only<T: clap::Args + clap::FromArgMatches>() -> Result<T> {
    let command = T::augment_args(clap::Command::new("ncugate").no_binary_name(true));
    let invalid = |e: clap::Error| {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or(&text);
        Error::from(crate::error::ConfigError::InvalidVariable {
            message: first.trim_start_matches("error: ").to_string(),
        })
    };
    let matches = command
        .try_get_matches_from(Vec::<String>::new())
        .map_err(invalid)?;
    T::from_arg_matches(&matches).map_err(invalid)
}
