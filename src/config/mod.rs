//! Validated configuration: the one place where command-line values,
//! `NCUGATE_*` variables (through clap) and `ncugate.toml` become the gate's
//! types — flag over variable over file over default. Nothing past this
//! module sees clap types.

pub mod file;
pub mod shard;
pub mod suite;
pub mod workload;

pub use shard::Shard;
pub use workload::Workload;

use crate::cli::{
    BaselineCommand, CheckArgs, Cli, CliCommand, ColorArg, GraphArg, KeyArg, ModeArg, NcuArgs,
    RecordArgs, RunArgs, SanitizeArgs,
};
use crate::error::{Error, Result};
use crate::model::KernelKeyMode;
use crate::report::Outputs;
use crate::runner::{GraphProfiling, Mode, RunnerConfig};
use crate::sanitizer::Allow;
use crate::sanitizer::run::SanitizerConfig;
use file::FileConfig;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// What to do, validated.
#[derive(Debug, Clone)]
pub enum Config {
    Check(CheckConfig),
    Record(RecordConfig),
    Diff {
        old: PathBuf,
        new: PathBuf,
    },
    Profile(RunnerConfig),
    Sanitize(SanitizeConfig),
    Leaks(LeaksConfig),
    /// `check`, `baseline record` or `profile` of a suite.
    Suite(Box<suite::SuiteConfig>),
    Merge(MergeConfig),
    Doctor,
    Completions(clap_complete::Shell),
    Man(Option<PathBuf>),
    Init(InitConfig),
}

/// `ncugate merge`.
#[derive(Debug, Clone)]
pub struct MergeConfig {
    pub reports: Vec<PathBuf>,
    pub expect_shards: Option<u32>,
    pub outputs: Outputs,
    pub style: crate::report::terminal::Style,
}

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

/// `ncugate leaks`.
#[derive(Debug, Clone)]
pub struct LeaksConfig {
    pub runner: RunnerConfig,
    /// A prebuilt audit library (`--audit-lib`, `[memory] audit_lib`); `None`:
    /// the one compiled from the embedded source into `cache_dir`.
    pub audit_lib: Option<PathBuf>,
    /// Where compiled audit libraries are cached.
    pub cache_dir: PathBuf,
    pub limits: crate::memory::MemoryLimits,
    pub sample_every: Duration,
    pub history: Option<PathBuf>,
    pub rule: crate::memory::history::Rule,
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

/// What `ncugate init` was told.
#[derive(Debug, Clone)]
pub struct InitConfig {
    /// The folder to write into (the current one).
    pub dir: PathBuf,
    /// The app and its arguments; empty: ask (terminal) or refuse (CI).
    pub app: Vec<String>,
    /// The build command; `None`: ask (terminal) or none (CI).
    pub build: Option<Vec<String>>,
    /// Replace existing files.
    pub force: bool,
    /// Profile once when a GPU and ncu are here.
    pub profile: bool,
    /// Ask for what is missing (stdin is a terminal and this is not CI).
    pub interactive: bool,
}

/// `ncugate sanitize`.
#[derive(Debug, Clone)]
pub struct SanitizeConfig {
    pub sanitizer: SanitizerConfig,
    /// Saved XML files to gate instead of running, with the tool each came from.
    pub xml: Vec<(PathBuf, String)>,
    /// The build to run first when running the app.
    pub runner: RunnerConfig,
    pub outputs: Outputs,
    /// How the terminal report looks: colour, width, which rows.
    pub style: crate::report::terminal::Style,
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
    /// Set only when given explicitly: it must then agree with the baseline's.
    pub kernel_key: Option<KernelKeyMode>,
    pub allow_device_mismatch: bool,
    pub outputs: Outputs,
    /// How the terminal report looks: colour, width, which rows.
    pub style: crate::report::terminal::Style,
    /// `[sanitizer]` in ncugate.toml: run compute-sanitizer after the metric gate.
    pub sanitizer: Option<SanitizerConfig>,
    /// The ncu that converts `.ncu-rep` inputs (and profiles, as `source` says).
    pub ncu: String,
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
}

impl TryFrom<Cli> for Config {
    type Error = Error;

    /// The configuration, as if no flag had been typed (all came from variables).
    fn try_from(cli: Cli) -> Result<Config> {
        Config::build(cli, &Given::default())
    }
}

/// The flags typed on the command line (not taken from `NCUGATE_*` variables
/// or defaults), by clap id: a flag that does not apply is refused only when
/// someone typed it, while a CI-wide variable stays harmless.
#[derive(Debug, Default)]
pub struct Given(Vec<String>);

impl Given {
    /// The typed flags of the innermost subcommand of `matches`.
    pub fn from_matches(matches: &clap::ArgMatches) -> Given {
        let mut m = matches;
        while let Some((_, sub)) = m.subcommand() {
            m = sub;
        }
        Given(
            m.ids()
                .filter(|id| {
                    matches!(m.try_get_raw(id.as_str()), Ok(Some(_)))
                        && m.value_source(id.as_str())
                            == Some(clap::parser::ValueSource::CommandLine)
                })
                .map(|id| id.to_string())
                .collect(),
        )
    }

    /// Exit 2 when one of `ids` was typed: it does nothing `because`.
    fn refuse(&self, ids: &[&str], because: &str, instead: &str) -> Result<()> {
        if let Some(id) = self.0.iter().find(|g| ids.contains(&g.as_str())) {
            let flag = flag_name(id);
            return Err(Error::Usage {
                message: format!("{flag} does not apply {because}"),
                hint: format!("drop {flag}{instead}"),
            });
        }
        Ok(())
    }
}

/// How a clap id is typed.
fn flag_name(id: &str) -> String {
    match id {
        "out_dir" => "--out".into(),
        "extra_metrics" => "--extra-metric".into(),
        "tools" => "--tool".into(),
        "app" => "the app after `--`".into(),
        other => format!("--{}", other.replace('_', "-")),
    }
}

/// The run and profiling flags that mean nothing when exports are gated.
const PROFILE_ONLY: &[&str] = &[
    "mode",
    "graph_profiling",
    "clock_control",
    "cache_control",
    "replay_mode",
    "kernel_name",
    "launch_skip",
    "launch_count",
    "extra_metrics",
    "ncu",
    "timeout",
    "out_dir",
    "workdir",
    "build",
    "no_build",
    "env",
];

/// The flags that mean nothing with these `--input` files: all of
/// [`PROFILE_ONLY`], except `--ncu` when a `.ncu-rep` report needs it to convert.
fn profile_only(inputs: &[PathBuf]) -> Vec<&'static str> {
    let reports = inputs
        .iter()
        .any(|p| p.extension().is_some_and(|e| e == "ncu-rep"));
    PROFILE_ONLY
        .iter()
        .copied()
        .filter(|id| !(reports && *id == "ncu"))
        .collect()
}

impl Config {
    /// The configuration from parsed command-line matches: refuses flags that
    /// were typed but would do nothing.
    pub fn from_matches(matches: &clap::ArgMatches) -> Result<Config> {
        use clap::FromArgMatches;
        let cli = Cli::from_arg_matches(matches).map_err(|e| Error::Usage {
            message: e.to_string().trim().to_string(),
            hint: "see `ncugate --help`".into(),
        })?;
        Config::build(cli, &Given::from_matches(matches))
    }

    fn build(cli: Cli, given: &Given) -> Result<Config> {
        match cli.command {
            CliCommand::Check(args) => {
                if !args.inputs.is_empty() {
                    given.refuse(
                        &profile_only(&args.inputs),
                        "with --input: the exports were profiled already",
                        ", or leave out --input to build and profile the app",
                    )?;
                }
                check(*args)
            }
            CliCommand::Baseline(BaselineCommand::Record(args)) => {
                if !args.inputs.is_empty() {
                    let mut ids = profile_only(&args.inputs);
                    ids.push("runs");
                    given.refuse(
                        &ids,
                        "with --input: each export is one run, profiled already",
                        ", or leave out --input to build and profile the app",
                    )?;
                }
                record(*args)
            }
            CliCommand::Baseline(BaselineCommand::Diff(args)) => Ok(Config::Diff {
                old: args.old,
                new: args.new,
            }),
            CliCommand::Profile(args) => {
                let file = FileConfig::load(args.run.config.as_deref())?;
                if suite::is_suite(&file, &args.suite) {
                    let sel = suite::select(&args.suite, &args.run, &args.ncu, &file, None)?;
                    return Ok(Config::Suite(Box::new(suite::SuiteConfig {
                        action: suite::SuiteAction::Profile,
                        workloads: sel.workloads,
                        all: sel.all,
                        shard: sel.shard,
                        baselines_dir: sel.baselines_dir,
                        baseline_file: None,
                        inputs: Vec::new(),
                        record_flags: sel.record_flags,
                        quiet: args.run.quiet,
                        outputs: Outputs::default(),
                        style: Default::default(),
                    })));
                }
                runner(&args.run, &args.ncu, &file).map(Config::Profile)
            }
            CliCommand::Sanitize(args) => {
                if !args.xml.is_empty() {
                    given.refuse(
                        &[
                            "timeout",
                            "out_dir",
                            "workdir",
                            "build",
                            "no_build",
                            "env",
                            "app",
                            "leak_check",
                            "print_limit",
                            "sanitizer",
                        ],
                        "with --xml: the saved XML is gated, nothing runs",
                        ", or leave out --xml to run compute-sanitizer on the app",
                    )?;
                }
                sanitize(*args).map(Config::Sanitize)
            }
            CliCommand::Merge(args) => Ok(Config::Merge(MergeConfig {
                reports: args.reports,
                expect_shards: args.expect_shards,
                outputs: outputs(&args.report),
                style: style(&args.report, false),
            })),
            CliCommand::Leaks(args) => leaks(*args).map(Config::Leaks),
            CliCommand::Doctor => Ok(Config::Doctor),
            CliCommand::Completions(args) => Ok(Config::Completions(args.shell)),
            CliCommand::Init(args) => init(args).map(Config::Init),
            CliCommand::Man(args) => Ok(Config::Man(args.dir)),
        }
    }
}

fn key(arg: KeyArg) -> KernelKeyMode {
    match arg {
        KeyArg::Demangled => KernelKeyMode::Demangled,
        KeyArg::Function => KernelKeyMode::Function,
    }
}

fn check(args: CheckArgs) -> Result<Config> {
    let file = FileConfig::load(args.run.config.as_deref())?;
    if !args.inputs.is_empty() && !args.run.app.is_empty() {
        return Err(conflict());
    }
    let baseline = match args
        .baseline
        .clone()
        .or_else(|| file.gate.baseline.as_ref().map(|p| file.resolve(p)))
    {
        Some(b) if !suite::is_suite(&file, &args.suite) => BaselinePlace::File(b),
        _ => return check_suite(args, &file).map(|c| Config::Suite(Box::new(c))),
    };
    let source_runner = if args.inputs.is_empty() {
        Some(runner(&args.run, &args.ncu, &file)?)
    } else {
        None
    };
    let source = match &source_runner {
        Some(r) => Source::Profile {
            runner: Box::new(r.clone()),
            runs: 1,
            quiet: args.run.quiet,
        },
        None => Source::Inputs(args.inputs),
    };
    Ok(Config::Check(CheckConfig {
        baseline,
        source,
        details: args.details,
        thresholds: args
            .thresholds
            .or_else(|| file.gate.thresholds.as_ref().map(|p| file.resolve(p))),
        kernel_key: args.kernel_key.map(key),
        allow_device_mismatch: args.allow_device_mismatch,
        outputs: outputs(&args.report),
        style: style(&args.report, args.run.quiet),
        sanitizer: match (&file.sanitizer, &source_runner) {
            (Some(section), Some(runner)) => Some(sanitizer_config(
                section,
                &[],
                false,
                None,
                None,
                &[],
                runner,
            )?),
            _ => None,
        },
        ncu: ncu_program(&args.ncu, &file),
    }))
}

/// `check` over a suite: the shared settings; `source`, `baseline` and
/// `thresholds` are set per workload when it runs.
fn check_suite(args: CheckArgs, file: &FileConfig) -> Result<suite::SuiteConfig> {
    let given = (
        if args.baseline.is_some() {
            "--baseline"
        } else {
            "--input"
        },
        args.baseline.is_some() || !args.inputs.is_empty(),
    );
    let sel = suite::select(&args.suite, &args.run, &args.ncu, file, Some(given))?;
    let sanitizer = match (&file.sanitizer, args.inputs.is_empty()) {
        (Some(section), true) => match sel.workloads.first() {
            Some(w) => Some(sanitizer_config(
                section,
                &[],
                false,
                None,
                None,
                &[],
                &w.runner,
            )?),
            None => None,
        },
        _ => None,
    };
    let shared = CheckConfig {
        baseline: BaselinePlace::File(PathBuf::new()),
        source: Source::Inputs(Vec::new()),
        details: args.details,
        thresholds: args.thresholds,
        kernel_key: args.kernel_key.map(key),
        allow_device_mismatch: args.allow_device_mismatch,
        outputs: Outputs::default(),
        style: style(&args.report, args.run.quiet),
        sanitizer,
        ncu: ncu_program(&args.ncu, file),
    };
    Ok(suite::SuiteConfig {
        action: suite::SuiteAction::Check(Box::new(shared)),
        workloads: sel.workloads,
        all: sel.all,
        shard: sel.shard,
        baselines_dir: sel.baselines_dir,
        baseline_file: args.baseline,
        inputs: args.inputs,
        record_flags: sel.record_flags,
        quiet: args.run.quiet,
        outputs: outputs(&args.report),
        style: style(&args.report, args.run.quiet),
    })
}

/// compute-sanitizer's settings: flags over `[sanitizer]` over defaults.
fn sanitizer_config(
    section: &file::SanitizerSection,
    tools: &[String],
    leak_check: bool,
    print_limit: Option<u64>,
    program: Option<&str>,
    allow: &[String],
    runner: &RunnerConfig,
) -> Result<SanitizerConfig> {
    let mut entries: Vec<(String, String)> = section
        .allow
        .iter()
        .map(|a| (a.pattern.clone(), a.reason.clone()))
        .collect();
    for a in allow {
        let Some((pattern, reason)) = a.split_once('=') else {
            return Err(Error::Usage {
                message: format!("--allow {a}: expected REGEX=REASON"),
                hint: "e.g. --allow 'cuMemFreeAsync=tracked in #42'".into(),
            });
        };
        entries.push((pattern.to_string(), reason.to_string()));
    }
    let mut compiled = Vec::new();
    for (pattern, reason) in entries {
        let re = regex::Regex::new(&pattern).map_err(|e| Error::Usage {
            message: format!("sanitizer allow pattern `{pattern}`: {e}"),
            hint: "patterns are regular expressions".into(),
        })?;
        if reason.trim().is_empty() {
            return Err(Error::Usage {
                message: format!("sanitizer allow pattern `{pattern}` has no reason"),
                hint: "every allowed finding needs a reason, shown in every report".into(),
            });
        }
        compiled.push(Allow {
            pattern: re,
            reason,
        });
    }
    let tools = if !tools.is_empty() {
        tools.to_vec()
    } else if !section.tools.is_empty() {
        section.tools.clone()
    } else {
        vec!["memcheck".into()]
    };
    for t in &tools {
        if !matches!(
            t.as_str(),
            "memcheck" | "racecheck" | "initcheck" | "synccheck"
        ) {
            return Err(Error::Usage {
                message: format!("unknown sanitizer tool `{t}`"),
                hint: "use memcheck, racecheck, initcheck or synccheck".into(),
            });
        }
    }
    Ok(SanitizerConfig {
        tools,
        leak_check: leak_check || section.leak_check.unwrap_or(true),
        print_limit: print_limit.or(section.print_limit).unwrap_or(10_000),
        allow: compiled,
        program: program
            .map(str::to_string)
            .or_else(|| section.program.clone())
            .unwrap_or_else(|| "compute-sanitizer".into()),
        app: runner.app.clone(),
        env: runner.env.clone(),
        workdir: runner.workdir.clone(),
        timeout: runner.timeout,
        out_dir: runner.out_dir.join("sanitizer"),
    })
}

fn sanitize(args: SanitizeArgs) -> Result<SanitizeConfig> {
    let file = FileConfig::load(args.run.config.as_deref())?;
    let runner = runner(&args.run, &NcuArgs::default(), &file)?;
    let section = file.sanitizer.clone().unwrap_or_default();
    let leak_check = args.leak_check;
    let mut sanitizer = sanitizer_config(
        &section,
        &args.tools,
        leak_check,
        args.print_limit,
        args.sanitizer.as_deref(),
        &args.allow,
        &runner,
    )?;
    if file.sanitizer.is_none() && !leak_check {
        // Without a [sanitizer] section, --leak-check is opt-in on the command line.
        sanitizer.leak_check = false;
    }
    let xml = args
        .xml
        .iter()
        .map(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().to_lowercase())
                .unwrap_or_default();
            let tool = if args.tools.len() == 1 {
                args.tools[0].clone()
            } else {
                ["racecheck", "initcheck", "synccheck"]
                    .into_iter()
                    .find(|t| name.contains(t))
                    .unwrap_or("memcheck")
                    .to_string()
            };
            (p.clone(), tool)
        })
        .collect();
    Ok(SanitizeConfig {
        sanitizer,
        xml,
        runner,
        outputs: outputs(&args.report),
        style: style(&args.report, args.run.quiet),
    })
}

fn leaks(args: crate::cli::LeaksArgs) -> Result<LeaksConfig> {
    let file = FileConfig::load(args.run.config.as_deref())?;
    let runner = runner(&args.run, &NcuArgs::default(), &file)?;
    let m = &file.memory;
    let defaults = crate::memory::MemoryLimits::default();
    let rule_defaults = crate::memory::history::Rule::default();
    let audit_lib = args
        .audit_lib
        .clone()
        .or_else(|| m.audit_lib.as_ref().map(|p| file.resolve(p)));
    Ok(LeaksConfig {
        audit_lib,
        cache_dir: crate::memory::library::cache_root(),
        limits: crate::memory::MemoryLimits {
            max_live_execs: args
                .max_live_execs
                .or(m.max_live_execs)
                .or(defaults.max_live_execs),
            max_live_graphs: m.max_live_graphs,
            max_growth_per_iteration: args
                .max_growth_per_iteration
                .or(m.max_growth_per_iteration)
                .or(defaults.max_growth_per_iteration),
            max_growth_per_second: args.max_growth_per_second.or(m.max_growth_per_second),
            max_peak: args.max_peak.or(m.max_peak),
        },
        sample_every: Duration::from_millis(args.sample_ms.or(m.sample_ms).unwrap_or(20).max(1)),
        history: args
            .history
            .or_else(|| m.history.as_ref().map(|p| file.resolve(p))),
        rule: crate::memory::history::Rule {
            window: args
                .history_window
                .or(m.history_window)
                .unwrap_or(rule_defaults.window)
                .max(1),
            consecutive: args
                .history_consecutive
                .or(m.history_consecutive)
                .unwrap_or(rule_defaults.consecutive)
                .max(1),
            factor: args
                .history_factor
                .or(m.history_factor)
                .unwrap_or(rule_defaults.factor),
            min_bytes: args
                .history_min_bytes
                .or(m.history_min_bytes)
                .unwrap_or(rule_defaults.min_bytes),
        },
        runner,
        outputs: outputs(&args.report),
        style: style(&args.report, args.run.quiet),
    })
}

fn record(args: RecordArgs) -> Result<Config> {
    let file = FileConfig::load(args.run.config.as_deref())?;
    if args.runs == 0 {
        return Err(Error::Usage {
            message: "--runs 0 records nothing".into(),
            hint: "use --runs 3 (the default) or more for a standard deviation".into(),
        });
    }
    if !args.inputs.is_empty() && !args.run.app.is_empty() {
        return Err(conflict());
    }
    let output = match args
        .output
        .clone()
        .or_else(|| file.gate.baseline.as_ref().map(|p| file.resolve(p)))
    {
        Some(o) if !suite::is_suite(&file, &args.suite) => BaselinePlace::File(o),
        _ => return record_suite(args, &file).map(|c| Config::Suite(Box::new(c))),
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
        thresholds: args
            .thresholds
            .or_else(|| file.gate.thresholds.as_ref().map(|p| file.resolve(p))),
        kernel_key: args
            .kernel_key
            .map(key)
            .or(file.gate.kernel_key)
            .unwrap_or_default(),
        extra_metrics: args.metrics,
        output,
        ncu: ncu_program(&args.ncu, &file),
    }))
}

/// `baseline record` over a suite: each workload into `<dir>/<workload>/<gpu>.json`.
fn record_suite(args: RecordArgs, file: &FileConfig) -> Result<suite::SuiteConfig> {
    let given = (
        if args.output.is_some() {
            "--output"
        } else {
            "--input"
        },
        args.output.is_some() || !args.inputs.is_empty(),
    );
    let sel = suite::select(&args.suite, &args.run, &args.ncu, file, Some(given))?;
    let shared = RecordConfig {
        source: Source::Profile {
            runner: Box::new(runner(&args.run, &args.ncu, file)?),
            runs: args.runs,
            quiet: args.run.quiet,
        },
        details: args.details,
        thresholds: args.thresholds,
        kernel_key: args
            .kernel_key
            .map(key)
            .or(file.gate.kernel_key)
            .unwrap_or_default(),
        extra_metrics: args.metrics,
        output: BaselinePlace::File(PathBuf::new()),
        ncu: ncu_program(&args.ncu, file),
    };
    Ok(suite::SuiteConfig {
        action: suite::SuiteAction::Record(Box::new(shared)),
        workloads: sel.workloads,
        all: sel.all,
        shard: sel.shard,
        baselines_dir: sel.baselines_dir,
        baseline_file: args.output,
        inputs: args.inputs,
        record_flags: sel.record_flags,
        quiet: args.run.quiet,
        outputs: Outputs::default(),
        style: Default::default(),
    })
}

fn init(args: crate::cli::InitArgs) -> Result<InitConfig> {
    let build = match &args.build {
        Some(cmd) => Some(shlex::split(cmd).ok_or_else(|| Error::Usage {
            message: format!("--build {cmd}: unbalanced quote"),
            hint: "quote like a shell: --build \"sh -c 'make -j8 && echo done'\"".into(),
        })?),
        None => None,
    };
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    Ok(InitConfig {
        dir: PathBuf::from("."),
        app: args.app,
        build,
        force: args.force,
        profile: !args.no_profile,
        interactive: !args.yes && !ci && std::io::stdin().is_terminal(),
    })
}

/// The runner settings of a config file alone (no flags), as `check` would use them.
pub fn runner_from_file(path: &std::path::Path) -> Result<RunnerConfig> {
    let file = FileConfig::load(Some(path))?;
    runner(&RunArgs::default(), &NcuArgs::default(), &file)
}

fn conflict() -> Error {
    Error::Usage {
        message: "both --input and an app after `--` were given".into(),
        hint: "gate existing exports with --input, or profile an app with `-- APP ARGS`, not both"
            .into(),
    }
}

/// The runner's settings: flag (or its NCUGATE_* variable) over file over default.
/// The ncu executable: `--ncu` / `NCUGATE_NCU`, else `[profile] ncu`, else `ncu` from PATH.
fn ncu_program(ncu: &NcuArgs, file: &FileConfig) -> String {
    ncu.ncu
        .clone()
        .or_else(|| file.profile.ncu.clone())
        .unwrap_or_else(|| "ncu".into())
}

/// The ncu of commands that take no config flags (`doctor`, `init`):
/// `NCUGATE_NCU`, else `[profile] ncu` of ./ncugate.toml when it loads, else `ncu`.
pub fn default_ncu() -> String {
    let from_env = NcuArgs {
        ncu: std::env::var("NCUGATE_NCU").ok(),
        ..NcuArgs::default()
    };
    let file = FileConfig::load(None).unwrap_or_default();
    ncu_program(&from_env, &file)
}

fn runner(args: &RunArgs, ncu: &NcuArgs, file: &FileConfig) -> Result<RunnerConfig> {
    let p = &file.profile;
    let app = if args.app.is_empty() {
        file.app.command.clone().unwrap_or_default()
    } else {
        args.app.clone()
    };
    let build = if args.no_build {
        None
    } else {
        match &args.build {
            Some(cmd) => Some(shlex::split(cmd).ok_or_else(|| Error::Usage {
                message: format!("--build {cmd}: unbalanced quote"),
                hint: "quote like a shell: --build \"sh -c 'make -j8 && echo done'\", or set [build] command = [\"sh\", \"-c\", \"…\"] in ncugate.toml".into(),
            })?),
            None => file.build.command.clone(),
        }
    };
    let mut env: Vec<(String, String)> = file
        .app
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for pair in &args.env {
        let Some((k, v)) = pair.split_once('=') else {
            return Err(Error::Usage {
                message: format!("--env {pair}: expected KEY=VALUE"),
                hint: "e.g. --env CUDA_VISIBLE_DEVICES=0".into(),
            });
        };
        env.retain(|(key, _)| key != k);
        env.push((k.to_string(), v.to_string()));
    }
    let mut extra_metrics = p.extra_metrics.clone();
    extra_metrics.extend(ncu.extra_metrics.iter().filter(|m| !m.is_empty()).cloned());
    Ok(RunnerConfig {
        build,
        app,
        env,
        workdir: args.workdir.clone().unwrap_or_else(|| {
            file.resolve(
                file.app
                    .workdir
                    .as_deref()
                    .unwrap_or(std::path::Path::new(".")),
            )
        }),
        timeout: Duration::from_secs(args.timeout.or(file.app.timeout).unwrap_or(1800)),
        mode: match ncu.mode {
            Some(ModeArg::Fast) => Mode::Fast,
            Some(ModeArg::Full) => Mode::Full,
            None => p.mode.unwrap_or_default(),
        },
        graph_profiling: match ncu.graph_profiling {
            Some(GraphArg::Node) => GraphProfiling::Node,
            Some(GraphArg::Graph) => GraphProfiling::Graph,
            None => p.graph_profiling.unwrap_or_default(),
        },
        clock_control: ncu
            .clock_control
            .clone()
            .or_else(|| p.clock_control.clone())
            .unwrap_or_else(|| "none".into()),
        cache_control: ncu
            .cache_control
            .clone()
            .or_else(|| p.cache_control.clone())
            .unwrap_or_else(|| "all".into()),
        replay_mode: ncu
            .replay_mode
            .clone()
            .or_else(|| p.replay_mode.clone())
            .unwrap_or_else(|| "kernel".into()),
        kernel_name: ncu.kernel_name.clone().or_else(|| p.kernel_name.clone()),
        launch_skip: ncu.launch_skip.or(p.launch_skip),
        launch_count: ncu.launch_count.or(p.launch_count),
        extra_metrics,
        ncu: ncu_program(ncu, file),
        out_dir: args.out_dir.clone().unwrap_or_else(|| {
            file.resolve(
                p.out_dir
                    .as_deref()
                    .unwrap_or(std::path::Path::new("target/ncugate")),
            )
        }),
    })
}

/// The report files and modes of one command.
fn outputs(args: &crate::cli::ReportArgs) -> Outputs {
    Outputs {
        junit: args.junit.clone(),
        markdown: args.markdown.clone(),
        json: args.json.clone(),
        github: github_mode(args.format),
        html: args.html.clone(),
    }
}

/// GitHub Actions mode: asked for, or automatic inside a GitHub Actions job.
fn github_mode(arg: crate::cli::FormatArg) -> bool {
    match arg {
        crate::cli::FormatArg::Github => true,
        crate::cli::FormatArg::Text => false,
        crate::cli::FormatArg::Auto => std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true"),
    }
}

/// The terminal report's style: colour, width, and which rows `--show` (or `-q`) keeps.
fn style(args: &crate::cli::ReportArgs, quiet: bool) -> crate::report::terminal::Style {
    use crate::report::terminal::Show;
    crate::report::terminal::Style {
        color: use_color(args.color),
        width: crate::report::terminal::width(),
        show: match args.show {
            Some(crate::cli::ShowArg::Fail) => Show::Fail,
            Some(crate::cli::ShowArg::Changed) => Show::Changed,
            Some(crate::cli::ShowArg::All) => Show::All,
            None if quiet => Show::Fail,
            None => Show::Changed,
        },
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
