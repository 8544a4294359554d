//! `[profile] dcgm`: DCGM and ncu share one lock in the driver. A DCGM host
//! engine (`nv-hostengine`, the `nvidia-dcgm` service, dcgm-exporter's
//! profiling fields) that collects profiling metrics holds it for the whole
//! machine, whichever GPU it watches, and ncu then fails with "Profiling
//! failed because a driver resource was unavailable" (classified as
//! [`crate::error::NcuFailure::ProfilerBusy`]). DCGM can step aside:
//! `dcgmi profile --pause` releases the lock until `dcgmi profile --resume`.
//!
//! With `dcgm = "pause"` every ncu run is wrapped in that pair: the pause
//! before ncu starts (a pause that fails stops the run before ncu), the
//! resume after ncu ends, whatever way it ended — exit, failure, timeout
//! (ncu's process group was killed first), an early return (the guard's
//! drop), or a signal: the resume is registered with the interrupt cleanup
//! ([`super::interrupt::Resume`]) before the pause runs, and the cleanup
//! runs it after it stopped ncu. With `"fail"` (the default) nothing is
//! paused: a fleet's monitoring is not changed unless asked.
//!
//! What dcgmi printed is kept in `dcgmi.log` in the run's folder.

use super::interrupt;
use super::process::{CommandSpec, ProcessRunner};
use crate::error::{Error, ProcessError, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `[profile] dcgm`, `--dcgm`, `NCUGATE_DCGM`: what to do about DCGM's profiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dcgm {
    /// Leave DCGM alone: ncu fails while DCGM profiles, naming the fix.
    #[default]
    Fail,
    /// `dcgmi profile --pause` before each ncu run, `--resume` after it.
    Pause,
}

impl std::fmt::Display for Dcgm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Dcgm::Fail => "fail",
            Dcgm::Pause => "pause",
        })
    }
}

/// DCGM's command line tool, from PATH.
pub(crate) const DCGMI: &str = "dcgmi";
const PAUSE: [&str; 2] = ["profile", "--pause"];
const RESUME: [&str; 2] = ["profile", "--resume"];
/// How long a dcgmi call may take (it talks to the host engine).
const TIMEOUT: Duration = Duration::from_secs(30);

fn argv(args: [&str; 2]) -> Vec<String> {
    std::iter::once(DCGMI)
        .chain(args)
        .map(str::to_string)
        .collect()
}

/// DCGM's profiling paused for one ncu run: resumed by [`Paused::resume`],
/// or when dropped.
pub(crate) struct Paused<'a> {
    runner: &'a dyn ProcessRunner,
    log: PathBuf,
    /// The cleanup's resume, kept until this one ran.
    registered: Option<interrupt::Resume>,
    resumed: bool,
}

/// Pauses DCGM's profiling for a run in `dir` when `policy` says so.
pub(crate) fn pause<'a>(
    policy: Dcgm,
    runner: &'a dyn ProcessRunner,
    dir: &Path,
) -> Result<Option<Paused<'a>>> {
    if policy == Dcgm::Fail {
        return Ok(None);
    }
    let log = dir.join("dcgmi.log");
    // Registered first: a signal while the pause runs resumes too.
    let registered = interrupt::Resume::register(argv(RESUME));
    let (spec, done) = call(runner, PAUSE);
    append(&log, &spec, &done.lines)?;
    if !done.exit.success() {
        drop(registered);
        return Err(Error::from(ProcessError::DcgmPause {
            command: spec.display(),
            exit: done.exit.to_string(),
            output: super::process::last_output(&done.lines, 3),
            log,
        }));
    }
    Ok(Some(Paused {
        runner,
        log,
        registered,
        resumed: false,
    }))
}

impl Paused<'_> {
    /// Resumes DCGM's profiling; a resume that fails is said on standard
    /// error (the run's result stands, DCGM stays paused until resumed by hand).
    pub(crate) fn resume(mut self) {
        self.resume_now();
    }

    fn resume_now(&mut self) {
        if self.resumed {
            return;
        }
        self.resumed = true;
        let (spec, done) = call(self.runner, RESUME);
        let _ = append(&self.log, &spec, &done.lines);
        if done.exit.success() {
            self.registered = None;
        } else {
            crate::text::escape::say(&format!(
                "ncugate: warning: `{}` failed ({}): DCGM's profiling stays paused; run it by hand (log: {})",
                spec.display(),
                done.exit,
                self.log.display()
            ));
        }
    }
}

impl Drop for Paused<'_> {
    fn drop(&mut self) {
        self.resume_now();
    }
}

fn call(runner: &dyn ProcessRunner, args: [&str; 2]) -> (CommandSpec, super::process::Finished) {
    let mut spec = CommandSpec::new(DCGMI, args);
    spec.timeout = Some(TIMEOUT);
    let done = runner.run(&spec, &mut |_| {});
    (spec, done)
}

/// Adds a dcgmi call and its output to the run's `dcgmi.log`.
fn append(log: &Path, spec: &CommandSpec, lines: &[String]) -> Result<()> {
    use std::io::Write;
    let write = |source| Error::Write {
        path: log.to_path_buf(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(write)?;
    writeln!(file, "$ {}", spec.display()).map_err(write)?;
    for line in lines {
        writeln!(file, "{line}").map_err(write)?;
    }
    Ok(())
}
