//! compute-sanitizer's settings: `ncugate sanitize`'s [`SanitizerOptions`]
//! over `[sanitizer]` over the defaults, for `sanitize` itself and for the
//! stage `check` runs when `ncugate.toml` has a `[sanitizer]` table.

use super::file::FileConfig;
use super::output::{outputs, style};
use super::run::runner;
use super::typed_flags::{Given, sanitize_run_only};
use crate::cli::SanitizeArgs;
use crate::error::Result;
use crate::options::{Layer, ProfileOptions, SanitizerOptions};
use crate::report::Outputs;
use crate::runner::RunnerConfig;
use crate::sanitizer::Tool;
use crate::sanitizer::run::SanitizerConfig;
use std::path::PathBuf;

/// `ncugate sanitize`.
#[derive(Debug, Clone)]
pub struct SanitizeConfig {
    pub(crate) sanitizer: SanitizerConfig,
    /// Saved XML files to gate instead of running, with the tool each came from.
    pub(crate) xml: Vec<(PathBuf, Tool)>,
    /// The build to run first when running the app.
    pub(crate) runner: RunnerConfig,
    pub outputs: Outputs,
    /// How the terminal report looks: colour, width, which rows.
    pub(crate) style: crate::report::terminal::Style,
}

pub(super) fn sanitize(args: SanitizeArgs, given: &Given) -> Result<SanitizeConfig> {
    if !args.xml.is_empty() {
        given.refuse(
            &sanitize_run_only(),
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
    let sanitizer = options.resolve(&runner)?;
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
    options.resolve(runner).map(Some)
}
