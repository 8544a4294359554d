//! The runner: build the app, run it under ncu with a command line ncugate
//! composes, keep every artifact in a work directory, get the raw page (from
//! the profiling run's own output in fast mode, from the report in full mode,
//! which also imports the details page), and turn every way this can fail into
//! one clear error with a fix. Processes run behind [`process::ProcessRunner`], so all
//! of it is tested offline with recorded ncu output.

pub(crate) mod dcgm;
pub mod explain;
pub(crate) mod failure;
pub mod guard;
pub mod interrupt;
pub(crate) mod kernel_env;
mod kill;
pub(crate) mod loaded;
pub(crate) mod mig;
pub mod ncu;
pub(crate) mod passes;
pub mod process;
pub(crate) mod procfs;
pub mod progress;
pub mod replay;
pub(crate) mod settings;
pub(crate) mod versions;
pub(crate) mod warmup;

pub use dcgm::Dcgm;
pub use settings::{CacheControl, ClockControl, ReplayMode};

use crate::model::GraphProfiling;
pub(crate) mod workdir;

use crate::error::{Error, Result};
use process::{CommandSpec, Exit, ProcessRunner};
use progress::Progress;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `[profile] mode`: the gated metrics only, or `--set full` plus them.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    Default,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Fast,
    Full,
}

/// Everything the runner needs, validated (from `ncugate.toml`, `NCUGATE_*` and flags).
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerConfig {
    /// `[build] command` (argv); `None`: nothing to build.
    pub build: Option<Vec<String>>,
    /// `[app] command` (argv, no shell).
    pub app: Vec<String>,
    pub env: Vec<(String, String)>,
    pub workdir: PathBuf,
    pub timeout: Duration,
    /// `[app] retries`: how many times a run that crashed or hung under ncu
    /// is profiled again ([`crate::error::NcuFailure::transient`]).
    pub retries: u32,
    /// `[app] warmup`: how many times the app runs without ncu before the
    /// profiled runs ([`warmup`]).
    pub warmup: u32,
    pub mode: Mode,
    pub graph_profiling: GraphProfiling,
    pub clock_control: ClockControl,
    pub cache_control: CacheControl,
    pub replay_mode: ReplayMode,
    pub kernel_name: Option<String>,
    pub launch_skip: Option<u64>,
    pub launch_count: Option<u64>,
    pub extra_metrics: Vec<String>,
    /// `[profile] dcgm`: pause DCGM's profiling around each ncu run or not.
    pub dcgm: Dcgm,
    /// `false`: profile only between the app's cudaProfilerStart/Stop
    /// (`ncu --profile-from-start off`).
    pub profile_from_start: bool,
    /// Profile only inside these NVTX ranges (`ncu --nvtx --nvtx-include`).
    pub nvtx_include: Vec<String>,
    /// More environment variables that steer kernel choice, recorded beside
    /// the built-in list ([`kernel_env`]).
    pub kernel_env: Vec<String>,
    /// `[profile] toolchain_command`: an argv whose `NAME VERSION` lines
    /// (torch, triton, jax…) are recorded with the driver's; empty: none.
    pub toolchain_command: Vec<String>,
    /// The ncu executable.
    pub ncu: String,
    /// Where every artifact is kept.
    pub out_dir: PathBuf,
}

impl RunnerConfig {
    /// The clock control ncu runs with: `none` on a MIG instance
    /// ([`mig::clock_control`]), else `clock_control`.
    pub(crate) fn effective_clock_control(&self) -> ClockControl {
        mig::clock_control(self.clock_control, &self.env)
    }
}

/// What one profiled run left in the work dir.
#[derive(Debug, Clone, PartialEq)]
pub struct Artifacts {
    pub dir: PathBuf,
    pub(crate) report: PathBuf,
    /// The raw page (base units): printed by the profiling run itself in fast
    /// mode, imported from the report in full mode.
    pub raw: PathBuf,
    /// The details page; `None` in fast mode, which collects no sections and so no rule results.
    pub details: Option<PathBuf>,
    pub ncu_log: PathBuf,
    pub app_log: PathBuf,
    pub(crate) seconds: f64,
    /// What the GPU probe saw while ncu ran (empty without one).
    pub(crate) gpu: Vec<crate::shared_gpu::Sample>,
    /// The shared libraries ncu and the app mapped ([`loaded`]), kept in
    /// the run's [`loaded::FILE`]; none when the run was not a real process.
    pub(crate) libraries: Vec<PathBuf>,
}

/// Runs `[build] command`, logging to `out_dir/build.log`.
pub fn build(config: &RunnerConfig, runner: &dyn ProcessRunner) -> Result<()> {
    let Some(argv) = &config.build else {
        return Ok(());
    };
    let Some((program, args)) = argv.split_first() else {
        return Ok(());
    };
    create_dir(&config.out_dir)?;
    let mut spec = CommandSpec::new(program.clone(), args.iter().cloned());
    spec.workdir = Some(config.workdir.clone());
    spec.env = config.env.clone();
    crate::text::escape::say(&format!("ncugate: build: {}", spec.display()));
    let done = runner.run(&spec, &mut |_| {});
    let log = config.out_dir.join("build.log");
    write_lines(&log, &done.lines)?;
    if !done.exit.success() {
        // The build's own output goes below the message, not glued to the command line.
        return Err(crate::error::ProcessError::Build {
            program: program.clone(),
            command: spec.display(),
            exit: done.exit.to_string(),
            not_found: done.exit == Exit::NotFound,
            output: process::last_output(&done.lines, 5),
            log,
        }
        .into());
    }
    Ok(())
}

/// How long a profiled run may print nothing after the app said it crashed
/// before it is ended ([`process::Exit::HungAfterCrash`]). Seen on an H100: a
/// jitted JAX app printed `Segmentation fault` under ncu, and the run then
/// printed nothing until its timeout; a healthy ncu ends within seconds of
/// its app's crash.
pub(crate) const CRASH_STALL: Duration = Duration::from_secs(60);

/// The file in a run's directory that holds the GPU probe's looks (JSON Lines).
pub(crate) const GPU_LOOKS: &str = "gpu-looks.jsonl";

/// Profiles the app once into `out_dir/<name>/` and imports the report.
pub fn profile_once(
    config: &RunnerConfig,
    metrics: &[String],
    name: &str,
    runner: &dyn ProcessRunner,
    progress: &mut Progress,
) -> Result<Artifacts> {
    if config.app.is_empty() {
        return Err(Error::from(crate::error::ConfigError::NoAppToProfile));
    }
    let dir = workdir::claim(&config.out_dir, name)?;
    let export = dir.join("run");
    let raw = dir.join("raw.csv");
    let output = ncu::output_file(&export);
    let libraries_file = dir.join(loaded::FILE);
    // Nothing of an earlier run may pass for this one's.
    for stale in ncu::report_files(&export)
        .iter()
        .chain([&raw, &output, &libraries_file])
    {
        let _ = std::fs::remove_file(stale);
    }
    let mut spec = ncu::NcuCommand::profile(config, metrics, &export).spec();
    spec.env = config.env.clone();
    spec.workdir = Some(config.workdir.clone());
    spec.timeout = Some(config.timeout);
    spec.crash_stall = Some(CRASH_STALL);
    if config.effective_clock_control() != config.clock_control {
        crate::text::escape::say(&format!(
            "ncugate: note: CUDA_VISIBLE_DEVICES names a MIG instance: ncu runs with --clock-control none, not {} (a MIG instance's clocks are its parent GPU's and cannot be locked for it)",
            config.clock_control
        ));
    }
    let paused = dcgm::pause(config.dcgm, runner, &dir)?;
    progress.start(&spec.display(), config.mode == Mode::Full);
    let ((done, libraries), gpu) = crate::shared_gpu::probe::during(runner.gpu_probe(), || {
        loaded::during(|spawned| {
            runner.run_observed(&spec, &mut |line| progress.line(line), spawned)
        })
    });
    progress.finish();
    // Whatever ncu did (exit, failure, timeout), DCGM gets its lock back now.
    if let Some(paused) = paused {
        paused.resume();
    }

    // ncu's own lines and the app's output, apart. Fast mode: ncu wrote its
    // messages and the CSV to its --log-file, the pipes carry the app (and the
    // complaints ncu prints before it opens its log, e.g. about a missing app).
    // Full mode: both share the pipes, as ncu prints them.
    let (app_lines, ncu_lines): (Vec<String>, Vec<String>) = done
        .lines
        .iter()
        .cloned()
        .partition(|l| !ncu::is_ncu_line(l));
    let (log_lines, streamed) = match config.mode {
        Mode::Fast => {
            let (mut messages, streamed) =
                ncu::split_output(&output, &raw).map_err(|source| Error::Write {
                    path: raw.clone(),
                    source,
                })?;
            let _ = std::fs::remove_file(&output);
            messages.extend(ncu_lines);
            (messages, streamed)
        }
        Mode::Full => (done.lines.clone(), false),
    };
    let ncu_log = dir.join("ncu.log");
    let app_log = dir.join("app.log");
    write_lines(&ncu_log, &log_lines)?;
    write_lines(&app_log, &app_lines)?;
    // What the GPU probe saw, one look a line: the evidence behind a
    // shared-GPU verdict, and a recording tests replay.
    if !gpu.is_empty() {
        let looks: Vec<String> = gpu
            .iter()
            .filter_map(|s| serde_json::to_string(s).ok())
            .collect();
        write_lines(&dir.join(GPU_LOOKS), &looks)?;
    }
    if !libraries.is_empty() {
        write_lines(&libraries_file, &loaded::lines(&libraries))?;
    }
    let app_tail = tail(&app_lines, 5);
    let report = ncu::written_report(&export);
    failure::classify(
        &config.ncu,
        &done.exit,
        &log_lines,
        report.exists(),
        &app_tail,
    )
    .map_err(|failure| Error::ncu(failure, Some(dir.clone())))?;

    let details = (config.mode == Mode::Full).then(|| dir.join("details.csv"));
    let pages = (!streamed)
        .then_some((ncu::Page::Raw, &raw))
        .into_iter()
        .chain(details.as_ref().map(|d| (ncu::Page::Details, d)));
    for (page, out) in pages {
        ncu::import(&config.ncu, runner, &report, page, |csv| copy_to(out, csv))?;
    }
    Ok(Artifacts {
        dir,
        report,
        raw,
        details,
        ncu_log,
        app_log,
        seconds: done.elapsed.as_secs_f64(),
        gpu,
        libraries,
    })
}

/// Writes an imported page to its file.
fn copy_to(out: &Path, csv: &mut dyn std::io::Read) -> Result<()> {
    let write = |source| Error::Write {
        path: out.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::create(out).map_err(write)?;
    std::io::copy(csv, &mut file).map_err(write)?;
    Ok(())
}

fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Write {
        path: dir.to_path_buf(),
        source,
    })
}

/// Writes a command's output lines to its log file. The hints of failures
/// point at these logs, so a log that cannot be written is an error too.
pub(crate) fn write_lines(path: &Path, lines: &[String]) -> Result<()> {
    let mut f = std::fs::File::create(path).map_err(|source| Error::Write {
        path: path.to_path_buf(),
        source,
    })?;
    for l in lines {
        writeln!(f, "{l}").map_err(|source| Error::Write {
            path: path.to_path_buf(),
            source,
        })?;
    }
    Ok(())
}

/// The last `n` non-empty lines, one per line.
fn tail(lines: &[String], n: usize) -> String {
    process::last_lines(lines, n, "\n")
}
