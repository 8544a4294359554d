//! The explain run: one launch of one kernel profiled again with ncu's
//! `SourceCounters` section and its source imported, then its source page
//! (`--page source --print-source cuda,sass`). Measured on the H200: about
//! 3.5 s for the profile of the reference app and 1.1 s for the import, per
//! kernel. Clocks are never locked (`--clock-control none`, whatever the
//! check's setting: the counters, not the time, are compared).

use super::RunnerConfig;
use super::process::{CommandSpec, ProcessRunner};
use std::path::Path;

/// The ncu arguments that profile the first launch of `function` (a
/// kernel's function name) with source counters into `export`.
pub fn profile_args(config: &RunnerConfig, function: &str, export: &Path) -> Vec<String> {
    let filter = format!("regex:^{}$", regex::escape(function));
    let mut args: Vec<String> = [
        "--target-processes",
        "all",
        "--graph-profiling",
        config.graph_profiling.as_str(),
        "--clock-control",
        "none",
        "--config-file",
        "off",
        "-k",
        &filter,
        "--launch-skip",
        "0",
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
    args.extend(config.app.iter().cloned());
    args
}

/// Profiles `function` once and returns its source page (CSV); a failure
/// is a reason for a note.
pub fn source_page(
    config: &RunnerConfig,
    function: &str,
    name: &str,
    runner: &dyn ProcessRunner,
) -> Result<Vec<u8>, String> {
    let dir = super::workdir::claim(&config.out_dir, name).map_err(|e| e.to_string())?;
    let export = dir.join("explain");
    let mut spec = CommandSpec::new(config.ncu.clone(), profile_args(config, function, &export));
    spec.env = config.env.clone();
    spec.workdir = Some(config.workdir.clone());
    spec.timeout = Some(config.timeout);
    let done = runner.run(&spec, &mut |_| {});
    let _ = super::write_lines(&dir.join("ncu.log"), &done.lines);
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
