//! Validated configuration: the one place where command-line values become
//! the gate's types. Nothing past this module sees clap types.

use crate::cli::{BaselineCommand, CheckArgs, Cli, CliCommand, ColorArg, KeyArg, RecordArgs};
use crate::model::KernelKeyMode;
use crate::report::Outputs;
use std::io::IsTerminal;
use std::path::PathBuf;

/// What to do, validated.
#[derive(Debug, Clone)]
pub enum Config {
    Check(CheckConfig),
    Record(RecordConfig),
    Diff { old: PathBuf, new: PathBuf },
}

/// `ncugate check`.
#[derive(Debug, Clone)]
pub struct CheckConfig {
    pub baseline: PathBuf,
    pub inputs: Vec<PathBuf>,
    pub details: Vec<PathBuf>,
    pub thresholds: Option<PathBuf>,
    /// Set only when given explicitly: it must then agree with the baseline's.
    pub kernel_key: Option<KernelKeyMode>,
    pub allow_device_mismatch: bool,
    pub outputs: Outputs,
    pub color: bool,
}

/// `ncugate baseline record`.
#[derive(Debug, Clone)]
pub struct RecordConfig {
    pub inputs: Vec<PathBuf>,
    pub details: Vec<PathBuf>,
    pub thresholds: Option<PathBuf>,
    pub kernel_key: KernelKeyMode,
    pub extra_metrics: Vec<String>,
    pub output: PathBuf,
}

impl From<Cli> for Config {
    fn from(cli: Cli) -> Config {
        match cli.command {
            CliCommand::Check(args) => Config::Check(check(args)),
            CliCommand::Baseline(BaselineCommand::Record(args)) => Config::Record(record(args)),
            CliCommand::Baseline(BaselineCommand::Diff(args)) => Config::Diff {
                old: args.old,
                new: args.new,
            },
        }
    }
}

fn key(arg: KeyArg) -> KernelKeyMode {
    match arg {
        KeyArg::Demangled => KernelKeyMode::Demangled,
        KeyArg::Function => KernelKeyMode::Function,
    }
}

fn check(args: CheckArgs) -> CheckConfig {
    CheckConfig {
        baseline: args.baseline,
        inputs: args.inputs,
        details: args.details,
        thresholds: args.thresholds,
        kernel_key: args.kernel_key.map(key),
        allow_device_mismatch: args.allow_device_mismatch,
        outputs: Outputs {
            junit: args.junit,
            markdown: args.markdown,
            json: args.json,
        },
        color: use_color(args.color),
    }
}

fn record(args: RecordArgs) -> RecordConfig {
    RecordConfig {
        inputs: args.inputs,
        details: args.details,
        thresholds: args.thresholds,
        kernel_key: args.kernel_key.map(key).unwrap_or_default(),
        extra_metrics: args.metrics,
        output: args.output,
    }
}

/// Colour only on a terminal, and never when `NO_COLOR` is set to a non-empty value.
fn use_color(arg: ColorArg) -> bool {
    match arg {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}
