//! compute-sanitizer's settings: `ncugate sanitize`'s [`SanitizerOptions`]
//! over `[sanitizer]` over the defaults, for `sanitize` itself and for the
//! stage `check` runs when `ncugate.toml` has a `[sanitizer]` table.

use super::file::FileConfig;
use super::given::{Given, SANITIZE_RUN_ONLY};
use super::output::{outputs, style};
use super::run::runner;
use crate::cli::SanitizeArgs;
use crate::error::{Error, Result};
use crate::options::sanitizer::{DEFAULT_LEAK_CHECK, DEFAULT_PRINT_LIMIT, DEFAULT_PROGRAM};
use crate::options::{Layer, ProfileOptions, SanitizerOptions};
use crate::report::Outputs;
use crate::runner::RunnerConfig;
use crate::sanitizer::Allow;
use crate::sanitizer::Tool;
use crate::sanitizer::run::SanitizerConfig;
use std::path::PathBuf;

/// `ncugate sanitize`.
#[derive(Debug, Clone)]
pub struct SanitizeConfig {
    pub sanitizer: SanitizerConfig,
    /// Saved XML files to gate instead of running, with the tool each came from.
    pub xml: Vec<(PathBuf, Tool)>,
    /// The build to run first when running the app.
    pub runner: RunnerConfig,
    pub outputs: Outputs,
    /// How the terminal report looks: colour, width, which rows.
    pub style: crate::report::terminal::Style,
}

pub(super) fn sanitize(args: SanitizeArgs, given: &Given) -> Result<SanitizeConfig> {
    if !args.xml.is_empty() {
        given.refuse(
            SANITIZE_RUN_ONLY,
            "with --xml: the saved XML is gated, nothing runs",
            ", or leave out --xml to run compute-sanitizer on the app",
        )?;
    }
    let file = FileConfig::load(args.run.config.as_deref())?;
    let runner = runner(&args.run, &ProfileOptions::default(), &file)?;
    let options = args
        .sanitizer
        .clone()
        .over(file.sanitizer.clone().unwrap_or_default());
    let sanitizer = sanitizer_config(options, &runner)?;
    let xml = args
        .xml
        .iter()
        .map(|p| match args.sanitizer.tools.as_slice() {
            [tool] => (p.clone(), *tool),
            _ => (p.clone(), Tool::of_file_name(p)),
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

/// The sanitizer stage of `check` when ncugate.toml has a `[sanitizer]`
/// table: its settings under their `NCUGATE_*` variables (check has no
/// sanitizer flags), run like the app `runner` runs.
pub(super) fn check_stage(
    file: &FileConfig,
    runner: &RunnerConfig,
) -> Result<Option<SanitizerConfig>> {
    let Some(section) = &file.sanitizer else {
        return Ok(None);
    };
    let options = super::env_only::<SanitizerOptions>()?.over(section.clone());
    sanitizer_config(options, runner).map(Some)
}

/// compute-sanitizer's settings from layered `options`, the defaults
/// filled in, running the app as `runner` does.
fn sanitizer_config(options: SanitizerOptions, runner: &RunnerConfig) -> Result<SanitizerConfig> {
    let mut allow = Vec::with_capacity(options.allow.len());
    for entry in options.allow {
        let pattern = regex::Regex::new(&entry.pattern).map_err(|e| {
            Error::from(crate::error::ConfigError::InvalidAllowPattern {
                pattern: entry.pattern.clone(),
                reason: e.to_string(),
            })
        })?;
        if entry.reason.trim().is_empty() {
            return Err(Error::from(crate::error::ConfigError::AllowWithoutReason {
                pattern: entry.pattern.clone(),
            }));
        }
        allow.push(Allow {
            pattern,
            reason: entry.reason,
        });
    }
    let mut tools = options.tools;
    if tools.is_empty() {
        tools.push(Tool::default());
    }
    tools.dedup();
    Ok(SanitizerConfig {
        tools,
        leak_check: options.leak_check.unwrap_or(DEFAULT_LEAK_CHECK),
        print_limit: options.print_limit.unwrap_or(DEFAULT_PRINT_LIMIT),
        allow,
        program: options.program.unwrap_or_else(|| DEFAULT_PROGRAM.into()),
        app: runner.app.clone(),
        env: runner.env.clone(),
        workdir: runner.workdir.clone(),
        timeout: runner.timeout,
        out_dir: runner.out_dir.join("sanitizer"),
    })
}
