//! The metric gate's settings: `check` and `baseline record`, with one
//! baseline file, or over a suite's workloads (then [`super::suite`] takes
//! over). [`GateOptions`](crate::options::GateOptions) over `[gate]`; the
//! baseline file from `check --baseline` / `record --output` over `[gate]
//! baseline`.

use super::file::FileConfig;
use super::given::{Given, profile_only};
use super::output::{outputs, style};
use super::run::{import_with_ncu, ncu_program, runner};
use super::suite::{self, Request, SuiteAction, SuiteConfig};
use super::{Config, sanitize};
use crate::cli::{CheckArgs, RecordArgs};
use crate::error::{Error, Result};
use crate::model::KernelKeyMode;
use crate::options::Layer;
use crate::report::Outputs;
use crate::runner::RunnerConfig;
use crate::sanitizer::run::SanitizerConfig;
use std::path::PathBuf;

/// Where a workload's baseline is.
#[derive(Debug, Clone, PartialEq)]
pub enum BaselinePlace {
    /// One file (`--baseline`, `--output`, `[gate] baseline`).
    File(PathBuf),
    /// `<dir>/<workload>/<gpu>.json`, the GPU taken from the data.
    Dir {
        dir: PathBuf,
        workload: String,
        /// The command that records the missing baseline, for the hint.
        record: String,
    },
}

impl BaselinePlace {
    /// For messages and reports: the file, or `dir/workload/<gpu>.json`.
    pub fn display(&self) -> String {
        match self {
            BaselinePlace::File(p) => p.display().to_string(),
            BaselinePlace::Dir { dir, workload, .. } => {
                dir.join(workload).join("<gpu>.json").display().to_string()
            }
        }
    }
}

/// Where the current data comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// Exports given with `--input`.
    Inputs(Vec<PathBuf>),
    /// Build and profile the app (`runs` times).
    Profile {
        runner: Box<RunnerConfig>,
        runs: u32,
        quiet: bool,
    },
}

/// `ncugate check`.
#[derive(Debug, Clone)]
pub struct CheckConfig {
    pub baseline: BaselinePlace,
    pub source: Source,
    pub details: Vec<PathBuf>,
    pub thresholds: Option<PathBuf>,
    /// Set only when given as a flag or variable: it must then agree with the
    /// baseline's. `[gate] kernel_key` is not used here: it says how to
    /// record, and check groups launches as its baseline was recorded.
    pub kernel_key: Option<KernelKeyMode>,
    pub allow_device_mismatch: bool,
    pub outputs: Outputs,
    /// How the terminal report looks: colour, width, which rows.
    pub style: crate::report::terminal::Style,
    /// `[sanitizer]` in ncugate.toml: run compute-sanitizer after the metric gate.
    pub sanitizer: Option<SanitizerConfig>,
    /// The ncu that converts `.ncu-rep` inputs (and profiles, as `source` says).
    pub ncu: String,
    /// Convert `.ncu-rep` inputs with `ncu` rather than read them natively.
    pub import_with_ncu: bool,
}

/// `ncugate baseline record`.
#[derive(Debug, Clone)]
pub struct RecordConfig {
    pub source: Source,
    pub details: Vec<PathBuf>,
    pub thresholds: Option<PathBuf>,
    pub kernel_key: KernelKeyMode,
    pub extra_metrics: Vec<String>,
    pub output: BaselinePlace,
    /// The ncu that converts `.ncu-rep` inputs (and profiles, as `source` says).
    pub ncu: String,
    /// Convert `.ncu-rep` inputs with `ncu` rather than read them natively.
    pub import_with_ncu: bool,
}

pub(super) fn check(args: CheckArgs, given: &Given) -> Result<Config> {
    if !args.inputs.is_empty() {
        given.refuse(
            &profile_only(&args.inputs),
            "with --input: the exports were profiled already",
            ", or leave out --input to build and profile the app",
        )?;
    }
    let file = FileConfig::load(args.run.config.as_deref())?;
    refuse_inputs_with_app(&args.inputs, &args.run.app.command)?;
    let gate = args.gate.clone().over(file.gate.clone());
    let baseline = args.baseline.clone().over(gate.baseline);
    let (Some(baseline), false) = (baseline, suite::is_suite(&file, &args.suite)) else {
        // A suite: the thresholds flag overrides each workload's; the rest is shared.
        let request = Request {
            suite: &args.suite,
            run: &args.run,
            ncu: &args.ncu,
            one_workload_flag: ("--baseline", args.baseline),
            inputs: args.inputs,
            outputs: outputs(&args.report),
            style: style(&args.report, args.run.quiet),
        };
        let config = SuiteConfig::new(request, &file, |workloads, inputs| {
            let sanitizer = match (workloads.first(), inputs.is_empty()) {
                (Some(w), true) => sanitize::check_stage(&file, &w.runner)?,
                _ => None,
            };
            Ok(SuiteAction::Check(Box::new(CheckConfig {
                baseline: BaselinePlace::File(PathBuf::new()),
                source: Source::Inputs(Vec::new()),
                details: args.details,
                thresholds: args.gate.thresholds,
                kernel_key: args.gate.kernel_key,
                allow_device_mismatch: args.allow_device_mismatch,
                outputs: Outputs::default(),
                style: style(&args.report, args.run.quiet),
                sanitizer,
                ncu: ncu_program(&args.ncu, &file),
                import_with_ncu: import_with_ncu(&args.ncu, &file),
            })))
        })?;
        return Ok(Config::Suite(Box::new(config)));
    };
    let (source, sanitizer) = if args.inputs.is_empty() {
        let runner = runner(&args.run, &args.ncu, &file)?;
        let sanitizer = sanitize::check_stage(&file, &runner)?;
        let source = Source::Profile {
            runner: Box::new(runner),
            runs: 1,
            quiet: args.run.quiet,
        };
        (source, sanitizer)
    } else {
        (Source::Inputs(args.inputs), None)
    };
    Ok(Config::Check(CheckConfig {
        baseline: BaselinePlace::File(baseline),
        source,
        details: args.details,
        thresholds: gate.thresholds,
        kernel_key: args.gate.kernel_key,
        allow_device_mismatch: args.allow_device_mismatch,
        outputs: outputs(&args.report),
        style: style(&args.report, args.run.quiet),
        sanitizer,
        ncu: ncu_program(&args.ncu, &file),
        import_with_ncu: import_with_ncu(&args.ncu, &file),
    }))
}

pub(super) fn record(args: RecordArgs, given: &Given) -> Result<Config> {
    if !args.inputs.is_empty() {
        let mut ids = profile_only(&args.inputs);
        ids.push("runs");
        given.refuse(
            &ids,
            "with --input: each export is one run, profiled already",
            ", or leave out --input to build and profile the app",
        )?;
    }
    let file = FileConfig::load(args.run.config.as_deref())?;
    if args.runs == 0 {
        return Err(Error::from(crate::error::ConfigError::ZeroRuns));
    }
    refuse_inputs_with_app(&args.inputs, &args.run.app.command)?;
    let gate = args.gate.clone().over(file.gate.clone());
    let output = args.output.clone().over(gate.baseline);
    let (Some(output), false) = (output, suite::is_suite(&file, &args.suite)) else {
        // A suite: each workload into `<dir>/<workload>/<gpu>.json`.
        let request = Request {
            suite: &args.suite,
            run: &args.run,
            ncu: &args.ncu,
            one_workload_flag: ("--output", args.output),
            inputs: args.inputs,
            outputs: Outputs::default(),
            style: Default::default(),
        };
        let config = SuiteConfig::new(request, &file, |_, _| {
            Ok(SuiteAction::Record(Box::new(RecordConfig {
                source: Source::Profile {
                    runner: Box::new(runner(&args.run, &args.ncu, &file)?),
                    runs: args.runs,
                    quiet: args.run.quiet,
                },
                details: args.details,
                thresholds: args.gate.thresholds,
                kernel_key: gate.kernel_key.unwrap_or_default(),
                extra_metrics: args.metrics,
                output: BaselinePlace::File(PathBuf::new()),
                ncu: ncu_program(&args.ncu, &file),
                import_with_ncu: import_with_ncu(&args.ncu, &file),
            })))
        })?;
        return Ok(Config::Suite(Box::new(config)));
    };
    let source = if args.inputs.is_empty() {
        Source::Profile {
            runner: Box::new(runner(&args.run, &args.ncu, &file)?),
            runs: args.runs,
            quiet: args.run.quiet,
        }
    } else {
        Source::Inputs(args.inputs)
    };
    Ok(Config::Record(RecordConfig {
        source,
        details: args.details,
        thresholds: gate.thresholds,
        kernel_key: gate.kernel_key.unwrap_or_default(),
        extra_metrics: args.metrics,
        output: BaselinePlace::File(output),
        ncu: ncu_program(&args.ncu, &file),
        import_with_ncu: import_with_ncu(&args.ncu, &file),
    }))
}

/// `--input` gates exports; `-- APP ARGS` profiles an app: not both.
fn refuse_inputs_with_app(inputs: &[PathBuf], app: &[String]) -> Result<()> {
    if inputs.is_empty() || app.is_empty() {
        return Ok(());
    }
    Err(Error::from(crate::error::ConfigError::InputAndApp))
}
