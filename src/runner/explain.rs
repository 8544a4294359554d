//! The explain run: one launch of one kernel profiled again with ncu's
//! `SourceCounters` section and its source imported, then its source page
//! (`--page source --print-source cuda,sass`). The launch is the one a
//! check chose (see [`Launch`]); `baseline record` profiles the first. Measured on the H200: about
//! 3.5 s for the profile of the reference app and 1.1 s for the import, per
//! kernel. Clocks are never locked (`--clock-control none`, whatever the
//! check's setting: the counters, not the time, are compared).

use super::RunnerConfig;
use super::process::{CommandSpec, ProcessRunner};
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
    pub const FIRST: Launch = Launch {
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
pub fn selection(config: &RunnerConfig, function: &str, launch: Launch) -> (Option<String>, u64) {
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
/// function name) with source counters into `export`.
pub fn profile_args(
    config: &RunnerConfig,
    function: &str,
    launch: Launch,
    export: &Path,
) -> Vec<String> {
    let (filter, skip) = selection(config, function, launch);
    let skip = skip.to_string();
    let mut args: Vec<String> = [
        "--target-processes",
        "all",
        "--graph-profiling",
        config.graph_profiling.as_str(),
        "--clock-control",
        "none",
        "--config-file",
        "off",
        "--launch-skip",
        &skip,
        "--launch-count",
        "1",
        "--section",
        "SourceCounters",
        "--import-source",
        "yes",
        "-f",
        "--export",
        &export.to_string_lossy(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(filter) = filter {
        args.splice(8..8, ["-k".to_string(), filter]);
    }
    args.extend(config.app.iter().cloned());
    args
}

/// Profiles `launch` of `function` once and returns its source page (CSV);
/// a failure is a reason for a note.
pub fn source_page(
    config: &RunnerConfig,
    function: &str,
    launch: Launch,
    name: &str,
    runner: &dyn ProcessRunner,
) -> Result<Vec<u8>, String> {
    let dir = super::workdir::claim(&config.out_dir, name).map_err(|e| e.to_string())?;
    let export = dir.join("explain");
    let mut spec = CommandSpec::new(
        config.ncu.clone(),
        profile_args(config, function, launch, &export),
    );
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
    let report = dir.join("explain.ncu-rep");
    let args = [
        "--import",
        &report.to_string_lossy(),
        "--csv",
        "--page",
        "source",
        "--print-source",
        "cuda,sass",
    ]
    .map(String::from);
    let import = CommandSpec::new(config.ncu.clone(), args.to_vec());
    let mut page = Err("no output".to_string());
    let done = runner.run_reading(&import, &mut |out| {
        let mut data = Vec::new();
        page = out
            .read_to_end(&mut data)
            .map(|_| data)
            .map_err(|e| e.to_string());
    });
    if !done.exit.success() {
        return Err(format!("`{}` failed ({})", import.display(), done.exit));
    }
    page
}
