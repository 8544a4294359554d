//! The metric gate's settings: `check` and `baseline record`, with one
//! baseline file, or over a suite's workloads (then [`super::suite`] takes
//! over). [`GateOptions`](crate::options::GateOptions) over `[gate]`; the
//! baseline file from `check --baseline` / `record --output` over `[gate]
//! baseline`.

use super::file::FileConfig;
use super::output::{outputs, style};
use super::run::{import_with_ncu, ncu_program, runner};
use super::suite::{self, Request, Selection, SuiteConfig, SuiteRuns};
use super::typed_flags::{Flags, Given, profile_only};
use super::{Config, sanitize};
use crate::cli::{CheckArgs, RecordArgs};
use crate::error::{Error, Result};
use crate::model::KernelKeyMode;
use crate::options::{ExplainOptions, Layer};
use crate::report::Outputs;
use crate::rules::ThresholdsSource;
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
    /// The last accepted runs in the history (`--baseline history`).
    History,
}

impl BaselinePlace {
    /// For messages and reports: the file, or the workload's folder
    /// `dir/workload/` (one file per GPU, chosen by the run's GPU).
    pub(crate) fn display(&self) -> String {
        match self {
            BaselinePlace::File(p) => p.display().to_string(),
            BaselinePlace::Dir { dir, workload, .. } => {
                format!("{}/", dir.join(workload).display())
            }
            BaselinePlace::History => super::history::BASELINE_WORD.to_string(),
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
    pub thresholds: ThresholdsSource,
    /// Set only when given as a flag or variable: it must then agree with the
    /// baseline's. `[gate] kernel_key` is not used here: it says how to
    /// record, and check groups launches as its baseline was recorded.
    pub kernel_key: Option<KernelKeyMode>,
    pub allow_device_mismatch: bool,
    /// `[gate] shared_gpu`: what to do with sensitive rules when the GPU was shared.
    pub shared_gpu: crate::shared_gpu::Policy,
    pub outputs: Outputs,
    /// How the terminal report looks: colour, width, which rows.
    pub style: crate::report::terminal::Style,
    /// `[sanitizer]` in ncugate.toml: run compute-sanitizer after the metric gate.
    pub sanitizer: Option<SanitizerConfig>,
    /// The ncu that converts `.ncu-rep` inputs (and profiles, as `source` says).
    pub ncu: String,
    /// Convert `.ncu-rep` inputs with `ncu` rather than read them natively.
    pub import_with_ncu: bool,
    /// The history store the check reads (`--baseline history`, `--anchor`) and records its run in.
    pub history: Option<super::history::CheckHistory>,
    /// What a timing-only failure of a kernel whose code is unchanged becomes.
    pub environmental: crate::compare::environmental::Environmental,
    /// `[gate] autotuned_builds`: what an autotuner's new build is gated on.
    pub autotuned_builds: crate::compare::code::AutotunedBuilds,
    /// The explain stage: which kernels, at most how many, from which source pages.
    pub explain: Explain,
    /// `[gate] locked_counters`: what an ERR_NVGPUCTRPERM of ncu becomes.
    pub locked_counters: crate::trace::LockedCounters,
    /// The audit library trace mode injects (`NCUGATE_AUDIT_LIB`, `[memory]
    /// audit_lib`, else compiled into `NCUGATE_CACHE_DIR`).
    pub audit_lib: crate::trace::AuditLib,
}

/// `check`'s explain stage, as [`ExplainOptions`] resolves it.
pub use crate::options::explain::Explain;

/// `ncugate baseline record`.
#[derive(Debug, Clone)]
pub struct RecordConfig {
    pub source: Source,
    pub details: Vec<PathBuf>,
    pub thresholds: ThresholdsSource,
    pub kernel_key: KernelKeyMode,
    pub extra_metrics: Vec<String>,
    pub output: BaselinePlace,
    /// `[gate] shared_gpu`: `refuse` refuses a baseline recorded beside another process.
    pub shared_gpu: crate::shared_gpu::Policy,
    /// The ncu that converts `.ncu-rep` inputs (and profiles, as `source` says).
    pub ncu: String,
    /// Convert `.ncu-rep` inputs with `ncu` rather than read them natively.
    pub import_with_ncu: bool,
    /// Source pages to store as the kernels' source profiles (`--source-page`).
    pub source_pages: Vec<PathBuf>,
    /// Profile every kernel's source counters once after the runs (`--source`).
    pub profile_sources: bool,
}

pub(super) fn check(args: CheckArgs, given: &Given) -> Result<Config> {
    if !args.inputs.is_empty() {
        given.refuse(
            &profile_only(&args.inputs).and("locked_counters"),
            "with --input: the exports were profiled already",
            ", or leave out --input to build and profile the app",
        )?;
    }
    let file = FileConfig::load(args.run.config.as_deref())?;
    suite::something_to_gate(&file, &args.run, &args.inputs)?;
    refuse_inputs_with_app(&args.inputs, &args.run.app.command)?;
    let gate = args.gate.clone().over(file.gate.clone());
    let baseline = args.baseline.clone().over(gate.baseline);
    let is_suite = suite::is_suite(&file, &args.suite);
    if baseline.is_none() && !is_suite && !args.inputs.is_empty() {
        return Err(Error::from(crate::error::ConfigError::NoBaselineForInputs));
    }
    let (Some(baseline), false) = (baseline, is_suite) else {
        return suite_check(args, &file).map(|c| Config::Suite(Box::new(c)));
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
    let rolling = baseline.as_os_str() == super::history::BASELINE_WORD;
    let history = super::history::check_history(&args.history, &file, rolling)?;
    Ok(Config::Check(CheckConfig {
        baseline: if rolling {
            BaselinePlace::History
        } else {
            BaselinePlace::File(baseline)
        },
        history,
        source,
        details: args.details,
        thresholds: gate.thresholds.into(),
        kernel_key: args.gate.kernel_key,
        allow_device_mismatch: args.allow_device_mismatch,
        shared_gpu: gate.shared_gpu.unwrap_or_default(),
        outputs: outputs(&args.report),
        style: style(&args.report, args.run.quiet),
        sanitizer,
        ncu: ncu_program(&args.ncu, &file),
        import_with_ncu: import_with_ncu(&args.ncu, &file),
        environmental: gate.environmental.unwrap_or_default(),
        autotuned_builds: gate.autotuned_builds.unwrap_or_default(),
        locked_counters: gate.locked_counters.unwrap_or_default(),
        audit_lib: audit_lib(&file),
        explain: args.explain.over(file.explain).resolve(),
    }))
}

pub(super) fn record(args: RecordArgs, given: &Given) -> Result<Config> {
    // A baseline is made of counters: there is no trace mode to record in.
    given.refuse(
        &Flags::only("locked_counters"),
        "in baseline record: a baseline needs the performance counters, so there is no trace mode to record in",
        ", and record where ncu may read the counters (as root, or with NVreg_RestrictProfilingToAdminUsers=0)",
    )?;
    if !args.inputs.is_empty() {
        // --extra-metric names a metric to read from the exports, too.
        given.refuse(
            &profile_only(&args.inputs)
                .except("extra_metrics")
                .and("runs"),
            "with --input: each export is one run, profiled already",
            ", or leave out --input to build and profile the app",
        )?;
    }
    let file = FileConfig::load(args.run.config.as_deref())?;
    suite::something_to_gate(&file, &args.run, &args.inputs)?;
    if args.runs == 0 {
        return Err(Error::from(crate::error::ConfigError::ZeroRuns));
    }
    refuse_inputs_with_app(&args.inputs, &args.run.app.command)?;
    let gate = args.gate.clone().over(file.gate.clone());
    // `[gate] baseline = "history"` is what checks compare with; a recording
    // goes to the baselines folder (or --output).
    let from_file = gate
        .baseline
        .filter(|b| b.as_os_str() != super::history::BASELINE_WORD);
    let output = args.output.clone().over(from_file);
    // Exports are read for the extra metrics typed (`--extra-metric`, or
    // its old name `--metric`), not for a CI-wide NCUGATE_EXTRA_METRICS.
    let typed_extra: Vec<String> = if given.typed("extra_metrics") {
        args.ncu.extra_metrics.clone()
    } else {
        Vec::new()
    };
    let (Some(output), false) = (output, suite::is_suite(&file, &args.suite)) else {
        return suite_record(args, &file, &typed_extra).map(|c| Config::Suite(Box::new(c)));
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
        extra_metrics: recorded_extra_metrics(&source, &typed_extra),
        source,
        details: args.details,
        thresholds: gate.thresholds.into(),
        kernel_key: gate.kernel_key.unwrap_or_default(),
        output: BaselinePlace::File(output),
        shared_gpu: gate.shared_gpu.unwrap_or_default(),
        ncu: ncu_program(&args.ncu, &file),
        import_with_ncu: import_with_ncu(&args.ncu, &file),
        source_pages: args.source_pages,
        profile_sources: args.source,
    }))
}

/// The audit library a trace-mode check injects: `NCUGATE_AUDIT_LIB` over
/// `[memory] audit_lib`, else the one compiled on first use into the cache
/// folder (`NCUGATE_CACHE_DIR`), as `ncugate leaks` takes it.
fn audit_lib(file: &FileConfig) -> crate::trace::AuditLib {
    let env = super::env_only::<crate::options::MemoryOptions>().unwrap_or_default();
    crate::trace::AuditLib {
        given: env.audit_lib.clone().over(file.memory.audit_lib.clone()),
        cache_dir: crate::options::memory::cache_dir(env.cache_dir),
    }
}

/// `check` over a suite: each selected workload's check, its thresholds
/// (the flag over the workload's), data and baseline resolved.
/// `--baseline history` (or `[gate] baseline = "history"`) compares every
/// workload with its own rolling baseline, and `--history` (or
/// `[history] url`) records every workload's run under its name, as a
/// check of one workload named so would.
fn suite_check(args: CheckArgs, file: &FileConfig) -> Result<SuiteConfig> {
    let word = |b: &PathBuf| b.as_os_str() == super::history::BASELINE_WORD;
    let rolling = match &args.baseline {
        Some(b) => word(b),
        None => file.gate.baseline.as_ref().is_some_and(word),
    };
    let history = super::history::check_history(&args.history, file, rolling)?;
    // The source pages are one run's: a suite's workloads have none.
    let explain = ExplainOptions {
        source_pages: Vec::new(),
        ..args.explain.clone()
    }
    .over(file.explain.clone())
    .resolve();
    let selection = Selection::new(
        Request {
            suite: &args.suite,
            run: &args.run,
            ncu: &args.ncu,
            thresholds: args.gate.thresholds.clone(),
            // The rolling baseline is every workload's: no one file.
            one_workload_flag: ("--baseline", args.baseline.clone().filter(|b| !word(b))),
            inputs: args.inputs.clone(),
        },
        file,
    )?;
    let style = style(&args.report, args.run.quiet);
    let mut checks = Vec::with_capacity(selection.workloads.len());
    for w in &selection.workloads {
        let sanitizer = if args.inputs.is_empty() {
            sanitize::check_stage(file, &w.runner)?
        } else {
            None
        };
        checks.push(CheckConfig {
            baseline: if rolling {
                BaselinePlace::History
            } else {
                selection.baseline(w, true)
            },
            source: selection.source(w, 1),
            details: args.details.clone(),
            thresholds: w.thresholds.clone(),
            kernel_key: args.gate.kernel_key,
            allow_device_mismatch: args.allow_device_mismatch,
            shared_gpu: args
                .gate
                .shared_gpu
                .over(file.gate.shared_gpu)
                .unwrap_or_default(),
            outputs: Outputs::default(),
            style,
            sanitizer,
            ncu: ncu_program(&args.ncu, file),
            import_with_ncu: import_with_ncu(&args.ncu, file),
            history: history.clone().map(|h| super::history::CheckHistory {
                workload: w.name.clone(),
                ..h
            }),
            environmental: args
                .gate
                .environmental
                .over(file.gate.environmental)
                .unwrap_or_default(),
            autotuned_builds: args
                .gate
                .autotuned_builds
                .over(w.autotuned_builds)
                .over(file.gate.autotuned_builds)
                .unwrap_or_default(),
            explain: explain.clone(),
            locked_counters: args
                .gate
                .locked_counters
                .over(file.gate.locked_counters)
                .unwrap_or_default(),
            audit_lib: audit_lib(file),
        });
    }
    let skip = args
        .skip
        .resolve(file.gate.skip_unchanged, file.gate.skip_max_age.clone())?
        .filter(|_| args.inputs.is_empty())
        .map(|skip| super::skip::settings(skip, &args.history, file, history.as_ref()))
        .transpose()?;
    let planned_skips = match (&args.skip.planned_skips, &skip) {
        (Some(file), Some(_)) => super::skip::planned(file)?,
        _ => Vec::new(),
    };
    let mut config = selection.into_config(SuiteRuns::Check(checks), outputs(&args.report), style);
    config.skip = skip;
    config.predict_skips = args.skip.predict_skips.clone();
    config.planned_skips = planned_skips;
    Ok(config)
}

/// `baseline record` over a suite: each selected workload recorded into
/// `<dir>/<workload>/<gpu>.json` (or the one `--output` file).
fn suite_record(
    args: RecordArgs,
    file: &FileConfig,
    typed_extra: &[String],
) -> Result<SuiteConfig> {
    let selection = Selection::new(
        Request {
            suite: &args.suite,
            run: &args.run,
            ncu: &args.ncu,
            thresholds: args.gate.thresholds.clone(),
            one_workload_flag: ("--output", args.output.clone()),
            inputs: args.inputs.clone(),
        },
        file,
    )?;
    let kernel_key = args
        .gate
        .kernel_key
        .over(file.gate.kernel_key)
        .unwrap_or_default();
    let shared_gpu = args
        .gate
        .shared_gpu
        .over(file.gate.shared_gpu)
        .unwrap_or_default();
    let records = selection
        .workloads
        .iter()
        .map(|w| {
            let source = selection.source(w, args.runs);
            RecordConfig {
                extra_metrics: recorded_extra_metrics(&source, typed_extra),
                source,
                details: args.details.clone(),
                thresholds: w.thresholds.clone(),
                kernel_key,
                output: selection.baseline(w, false),
                shared_gpu,
                ncu: ncu_program(&args.ncu, file),
                import_with_ncu: import_with_ncu(&args.ncu, file),
                source_pages: Vec::new(),
                profile_sources: args.source,
            }
        })
        .collect();
    Ok(selection.into_config(
        SuiteRuns::Record(records),
        Outputs::default(),
        Default::default(),
    ))
}

/// The extra metrics a recording keeps: those ncu collected when it profiles
/// (`--extra-metric` or its variable, `[profile]` and `[[workload]]`
/// `extra_metrics`); those `typed` with `--extra-metric` when it reads exports.
fn recorded_extra_metrics(source: &Source, typed: &[String]) -> Vec<String> {
    match source {
        Source::Profile { runner, .. } => runner.extra_metrics.clone(),
        Source::Inputs(_) => typed.iter().filter(|m| !m.is_empty()).cloned().collect(),
    }
}

/// `--input` gates exports; `-- APP ARGS` profiles an app: not both.
fn refuse_inputs_with_app(inputs: &[PathBuf], app: &[String]) -> Result<()> {
    if inputs.is_empty() || app.is_empty() {
        return Ok(());
    }
    Err(Error::from(crate::error::ConfigError::InputAndApp))
}

#[cfg(test)]
mod tests {
    use crate::cli::Cli;
    use crate::config::Config;
    use clap::Parser;

    fn check(config: &str, args: &[&str]) -> crate::error::Result<Config> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ncugate.toml");
        std::fs::write(&path, config).unwrap();
        let path = path.to_str().unwrap();
        let argv = [&["ncugate", "check", "--config", path], args].concat();
        Config::try_from(Cli::try_parse_from(argv).unwrap())
    }

    #[test]
    fn record_keeps_the_extra_metrics_typed_under_either_name() {
        use clap::CommandFactory;
        let recorded = |flags: &[&str]| {
            let argv = [
                &[
                    "ncugate", "baseline", "record", "--input", "r.csv", "-o", "b.json",
                ],
                flags,
            ]
            .concat();
            let matches = Cli::command().try_get_matches_from(argv).unwrap();
            match Config::from_matches(&matches) {
                Ok(Config::Record(c)) => c.extra_metrics,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(
            recorded(&["--extra-metric", "a", "--metric", "b"]),
            ["a", "b"]
        );
        assert_eq!(recorded(&["--metric", "b"]), ["b"]);
        assert!(recorded(&[]).is_empty());
    }

    #[test]
    fn exports_with_no_baseline_source_are_a_usage_error_naming_both_sources() {
        let e = check("", &["--input", "run.csv"]).unwrap_err();
        assert!(e.to_string().contains("no baseline"), "{e}");
        assert!(e.hint().contains("--baseline"), "{}", e.hint());
        assert!(e.hint().contains("[gate] baselines"), "{}", e.hint());
        // Any baseline source still gates the exports.
        let with_file = check("", &["--input", "run.csv", "--baseline", "b.json"]);
        assert!(matches!(with_file, Ok(Config::Check(_))));
        let with_dir = check("[gate]\nbaselines = \"b\"\n", &["--input", "run.csv"]);
        assert!(matches!(with_dir, Ok(Config::Suite(_))));
    }
}
