//! The explain run: one launch of one kernel profiled again with ncu's
//! `SourceCounters` section and its source imported, then its source page
//! (`--page source --print-source cuda,sass`). The launch is the one a
//! check chose (see [`Launch`]); `baseline record` profiles the first. Measured on the H200: about
//! 3.5 s for the profile of the reference app and 1.1 s for the import, per
//! kernel. Clocks are never locked (`--clock-control none`, whatever the
//! check's setting: the counters, not the time, are compared).

use super::RunnerConfig;
use super::ncu::{NcuCommand, Page};
use super::process::ProcessRunner;
use std::path::Path;

/// Which launch of a kernel an explain run profiles, by its place in the
/// check's export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Launch {
    /// Its place among the export's launches of the same function name.
    pub ordinal: u64,
    /// Its place among all the export's launches.
    pub position: u64,
}

impl Launch {
    /// The kernel's first launch.
    pub(crate) const FIRST: Launch = Launch {
        ordinal: 0,
        position: 0,
    };
}

/// ncu's kernel filter and `--launch-skip` that select `launch` of
/// `function`. ncu's `--launch-skip` counts the launches that match the
/// filter, so a filter on the function name alone, skipping the launches
/// of that name before it, selects it. Where the check itself skipped
/// launches (`launch_skip`), those skipped are unknown by name: its own
/// filter is kept and its skip added to the launch's place in the export.
pub(crate) fn selection(
    config: &RunnerConfig,
    function: &str,
    launch: Launch,
) -> (Option<String>, u64) {
    match config.launch_skip {
        Some(skip) if skip > 0 => (
            config.kernel_name.clone(),
            skip.saturating_add(launch.position),
        ),
        _ => (
            Some(format!("regex:^{}$", regex::escape(function))),
            launch.ordinal,
        ),
    }
}

/// The ncu arguments that profile `launch` of `function` (a kernel's
/// function name) with source counters into `export`
/// ([`NcuCommand::source_counters`]).
pub fn profile_args(
    config: &RunnerConfig,
    function: &str,
    launch: Launch,
    export: &Path,
) -> Vec<String> {
    command(config, function, launch, export).args().to_vec()
}

/// The ncu command that profiles `launch` of `function` into `export`.
fn command(config: &RunnerConfig, function: &str, launch: Launch, export: &Path) -> NcuCommand {
    let (filter, skip) = selection(config, function, launch);
    NcuCommand::source_counters(config, filter, skip, export)
}

/// Profiles `launch` of `function` once and returns its source page (CSV);
/// a failure is a reason for a note.
pub(crate) fn source_page(
    config: &RunnerConfig,
    function: &str,
    launch: Launch,
    name: &str,
    runner: &dyn ProcessRunner,
) -> Result<Vec<u8>, String> {
    let dir = super::workdir::claim(&config.out_dir, name).map_err(|e| e.to_string())?;
    let export = dir.join("explain");
    let mut spec = command(config, function, launch, &export).spec();
    spec.env = config.env.clone();
    spec.workdir = Some(config.workdir.clone());
    spec.timeout = Some(config.timeout);
    let done = runner.run(&spec, &mut |_| {});
    // The command first: which launch was profiled, for whoever reads the log.
    let mut log = vec![format!("$ {}", spec.display())];
    log.extend(done.lines.iter().cloned());
    let _ = super::write_lines(&dir.join("ncu.log"), &log);
    if !done.exit.success() {
        return Err(format!("`{}` failed ({})", spec.display(), done.exit));
    }
    let report = super::ncu::written_report(&export);
    super::ncu::read_page(&config.ncu, runner, &report, Page::CudaAndSass)
}
