//! Ctrl-C and CI cancellation. A terminal's Ctrl-C sends SIGINT, Jenkins
//! aborting a build sends SIGTERM, GitHub cancelling a job sends SIGINT and
//! then SIGTERM. The processes ncugate starts run in their own process group
//! (so a timeout can kill the app's whole family), which also means a
//! terminal's SIGINT never reaches them: ncugate has to stop them itself.
//!
//! On the first SIGINT or SIGTERM (or SIGHUP, SIGQUIT, SIGALRM, SIGXCPU and the other signals whose
//! default action would end ncugate) a thread of its own (signal-hook) stops the
//! processes the runner registered here (the tree kill of a timeout), removes
//! the temp files registered here, and, unless this run's report set was
//! already committed, the report files this run claimed (a report from an
//! earlier run must not pass for this run's result); then it prints one
//! `ncugate: error: interrupted by SIGINT …` line with a `hint:` and exits 2,
//! the code of "the gate could not decide". From that signal on the main
//! thread writes no file, starts no process and prints nothing: a commit
//! refuses, a spawn is killed at once, standard error stays locked by the
//! cleanup and [`exit()`] waits for it. A second signal exits at once.
//!
//! A baseline is never removed: an interrupted `baseline record` leaves the
//! previous baseline, which is still the reference, in place.

use crate::exit;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The first of [`SIGNALS`] received; 0 while none was.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// What the cleanup stops and removes.
static STATE: Mutex<State> = Mutex::new(State {
    closed: false,
    children: Vec::new(),
    temps: BTreeSet::new(),
    claimed: Vec::new(),
    committed: false,
    log_group: false,
    resume: None,
});

struct State {
    /// Set by the cleanup: no commit, no new temp file, no new process.
    closed: bool,
    /// Process (group) ids of the running children.
    children: Vec<u32>,
    /// Temp files and folders of writes in progress (a set: an HTML report
    /// tracks 10^4 charts, each dropped on its own).
    temps: BTreeSet<PathBuf>,
    /// This run's report files not committed yet.
    claimed: Vec<PathBuf>,
    /// Whether a claimed report was committed.
    committed: bool,
    /// Whether a GitHub Actions `::group::` is open on stdout.
    log_group: bool,
    /// A command that undoes what a run changed outside ncugate (DCGM's
    /// paused profiling: `dcgmi profile --resume`), run after the children
    /// are stopped.
    resume: Option<Vec<String>>,
}

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The signals that stop a run: Ctrl-C and CI cancellation, and every other
/// signal sent from outside whose default action would end ncugate without
/// stopping ncu and the app it started in their own process group: a closed
/// terminal's SIGHUP, SIGUSR1/2, a terminal's Ctrl-\ (SIGQUIT reaches
/// ncugate's process group, not theirs), `timeout -s ALRM`, a CPU or file
/// size limit (SIGXCPU, SIGXFSZ), the timers (SIGVTALRM, SIGPROF), SIGPWR and
/// SIGIO. The signals of a fault (SIGSEGV, SIGABRT, …) are left as they are.
const SIGNALS: [i32; 13] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGQUIT,
    libc::SIGALRM,
    libc::SIGXCPU,
    libc::SIGXFSZ,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGPWR,
    libc::SIGIO,
];

/// `SIGINT`, `SIGTERM`.
pub(crate) fn name(signal: i32) -> &'static str {
    signal_hook::low_level::signal_name(signal).unwrap_or("a signal")
}

/// The signal that interrupted this run, if one did.
pub(crate) fn interrupted() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// The error of work refused after an interrupt (never printed: the cleanup
/// prints its own line; a library caller sees it).
pub(crate) fn error() -> crate::error::Error {
    crate::error::Error::Interrupted {
        signal: name(interrupted().unwrap_or(libc::SIGTERM)),
    }
}

/// Catches the signals that stop a run for the rest of the process (call once, first
/// thing in `main`).
pub fn install() -> std::io::Result<()> {
    for signal in SIGNALS {
        let second: &'static [u8] = match signal {
            libc::SIGINT => SECOND_SIGINT,
            libc::SIGTERM => SECOND_SIGTERM,
            _ => SECOND_SIGNAL,
        };
        let action = move || {
            if SIGNAL
                .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
            {
                // SAFETY: write(2) and _exit(2) are async-signal-safe; the
                // buffer is a static.
                unsafe {
                    libc::write(2, second.as_ptr().cast(), second.len());
                }
                signal_hook::low_level::exit(exit::ERROR);
            }
        };
        // SAFETY: the action only uses atomics, write(2) and _exit(2), all
        // async-signal-safe; it allocates nothing and takes no lock.
        unsafe { signal_hook::low_level::register(signal, action) }?;
    }
    let mut signals = signal_hook::iterator::Signals::new(SIGNALS)?;
    std::thread::Builder::new()
        .name("ncugate-signals".into())
        .spawn(move || {
            if signals.forever().next().is_some() {
                clean_up();
            }
        })?;
    Ok(())
}

const SECOND_SIGINT: &[u8] = b"ncugate: error: a second SIGINT during the cleanup: exiting at once\nhint: processes ncugate started may still run; a later write of the same file removes the temp files left\n";
const SECOND_SIGNAL: &[u8] = b"ncugate: error: a second signal during the cleanup: exiting at once\nhint: processes ncugate started may still run; a later write of the same file removes the temp files left\n";
const SECOND_SIGTERM: &[u8] = b"ncugate: error: a second SIGTERM during the cleanup: exiting at once\nhint: processes ncugate started may still run; a later write of the same file removes the temp files left\n";

/// A running child, registered until dropped.
pub(crate) struct Child(u32);

/// Spawns `command` and registers it as one step under the state's lock, so
/// the cleanup never runs between the two (under load a child could run for
/// a while before it was registered, and the cleanup did not count it). After
/// an interrupt nothing more is started.
pub(crate) fn spawn(
    command: &mut std::process::Command,
) -> std::io::Result<(std::process::Child, Child)> {
    let mut s = state();
    if s.closed {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "interrupted: no process is started after SIGINT/SIGTERM",
        ));
    }
    let child = command.spawn()?;
    s.children.push(child.id());
    let id = child.id();
    Ok((child, Child(id)))
}

impl Drop for Child {
    fn drop(&mut self) {
        state().children.retain(|&p| p != self.0);
    }
}

/// A temp file or folder, removed by the cleanup until dropped.
pub(crate) struct Temp(PathBuf);

impl Temp {
    /// Creates a temp file with `create` and registers the path `path_of`
    /// gives, as one step under the state's lock: the cleanup either runs
    /// first (then nothing is created: `None`) or finds the file
    /// registered. Registered only after it was created, a file made while
    /// the cleanup ran was left behind (the cleanup ends the process, and
    /// no destructor of the writing thread removes it).
    pub(crate) fn create<T>(
        create: impl FnOnce() -> std::io::Result<T>,
        path_of: impl FnOnce(&T) -> &Path,
    ) -> Option<std::io::Result<(T, Temp)>> {
        let mut s = state();
        if s.closed {
            return None;
        }
        Some(create().map(|made| {
            let path = path_of(&made).to_path_buf();
            s.temps.insert(path.clone());
            (made, Temp(path))
        }))
    }

    /// `None` after an interrupt: create nothing more. For a path not
    /// created yet (registered first, then made).
    pub(crate) fn track(path: &Path) -> Option<Temp> {
        let mut s = state();
        if s.closed {
            return None;
        }
        s.temps.insert(path.to_path_buf());
        Some(Temp(path.to_path_buf()))
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        state().temps.remove(&self.0);
    }
}

/// A command the cleanup runs after stopping the children, registered
/// until dropped ([`super::dcgm`]'s resume). After an interrupt nothing is
/// registered (the cleanup has run or runs it).
pub(crate) struct Resume(());

impl Resume {
    pub(crate) fn register(argv: Vec<String>) -> Option<Resume> {
        let mut s = state();
        if s.closed {
            return None;
        }
        s.resume = Some(argv);
        Some(Resume(()))
    }
}

impl Drop for Resume {
    fn drop(&mut self) {
        let mut s = state();
        // After the cleanup took it, it is the cleanup's.
        if !s.closed {
            s.resume = None;
        }
    }
}

/// Runs `argv` with nothing attached, for up to 30 s: whether it succeeded.
fn run_resume(argv: &[String]) -> bool {
    let Some((program, args)) = argv.split_first() else {
        return false;
    };
    let child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return false;
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if std::time::Instant::now() < until => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// This run's report files: an interrupt before they are committed removes
/// whatever is at these paths (an earlier run's reports).
pub fn claim(paths: impl IntoIterator<Item = PathBuf>) {
    state().claimed.extend(paths);
}

/// Runs `rename` (a set's renames into place) unless the run was interrupted,
/// holding off the cleanup meanwhile; `targets` are then committed.
pub(crate) fn commit(
    targets: &[PathBuf],
    rename: impl FnOnce() -> std::io::Result<()>,
) -> Result<std::io::Result<()>, i32> {
    let mut s = state();
    if s.closed {
        return Err(interrupted().unwrap_or(libc::SIGTERM));
    }
    let done = rename();
    let before = s.claimed.len();
    s.claimed.retain(|p| !targets.contains(p));
    s.committed |= s.claimed.len() < before;
    Ok(done)
}

/// Called when a child has ended. A child killed by SIGINT, SIGTERM or SIGHUP
/// is most often the same cancellation on its way to ncugate (Jenkins signals
/// every process of the build, in no set order): ncugate's own signal gets up
/// to 2 s to arrive, so that the run ends with the interrupt's one error line
/// rather than "ncu was killed". Once interrupted, this thread waits for the
/// cleanup to end the process.
pub(crate) fn settle(signal: Option<i32>) {
    if signal.is_some_and(|s| [libc::SIGINT, libc::SIGTERM, libc::SIGHUP].contains(&s)) {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while interrupted().is_none() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    if interrupted().is_some() {
        loop {
            std::thread::park();
        }
    }
}

/// Marks a GitHub Actions log group (`::group::` on stdout) open or closed:
/// the cleanup closes an open one, so the error line is not folded away.
pub(crate) fn log_group(open: bool) {
    state().log_group = open;
}

/// `std::process::exit`, except after an interrupt: then the cleanup ends the
/// process with its own error line, and this thread waits for it.
pub fn exit(code: i32) -> ! {
    if interrupted().is_some() {
        loop {
            std::thread::park();
        }
    }
    std::process::exit(code)
}

/// Stops and removes what this run started, says so once, exits 2.
fn clean_up() -> ! {
    let signal = interrupted().unwrap_or(libc::SIGTERM);
    // Held to the end: the main thread prints nothing more (an error of a
    // killed ncu would read as the cause).
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    if std::io::IsTerminal::is_terminal(&stderr) {
        // Over a progress bar's line, not after it.
        let _ = write!(err, "\r\x1b[2K");
    }
    // Waits for a commit in progress: a report set is renamed whole or not at all.
    let (children, temps, claimed, committed, log_group, resume) = {
        let mut s = state();
        s.closed = true;
        (
            s.children.clone(),
            std::mem::take(&mut s.temps),
            std::mem::take(&mut s.claimed),
            s.committed,
            std::mem::take(&mut s.log_group),
            s.resume.take(),
        )
    };
    if log_group {
        // Closed, so the error line below is not folded into ncu's log group.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "::endgroup::").and_then(|()| out.flush());
    }
    let mut removed_temps = 0;
    for temp in &temps {
        let gone = if temp.is_dir() {
            std::fs::remove_dir_all(temp)
        } else {
            std::fs::remove_file(temp)
        };
        removed_temps += usize::from(gone.is_ok());
    }
    let stale: Vec<String> = claimed
        .iter()
        .filter(|p| std::fs::remove_file(p).is_ok())
        .map(|p| p.display().to_string())
        .collect();
    let stopped: usize = children
        .iter()
        .map(|&pid| super::kill::kill_group(pid))
        .sum();
    let mut done = Vec::new();
    if stopped > 0 {
        done.push(format!(
            "stopped {} it had started",
            crate::format::count(stopped, "process", "processes")
        ));
    }
    // After ncu stopped: DCGM takes the profiling lock back only then.
    if let Some(argv) = resume {
        let command = argv.join(" ");
        done.push(match run_resume(&argv) {
            true => format!("ran `{command}`"),
            false => format!("`{command}` FAILED: run it by hand"),
        });
    }
    if removed_temps > 0 {
        done.push(format!(
            "removed {}",
            crate::format::count(removed_temps, "temp file", "temp files")
        ));
    }
    if !stale.is_empty() {
        done.push(format!(
            "removed an earlier run's {} {} so they cannot pass for this run's",
            if stale.len() == 1 {
                "report"
            } else {
                "reports"
            },
            stale.join(", ")
        ));
    }
    let reports = if committed {
        "its reports were complete before the signal and stay"
    } else {
        "no report of this run was written"
    };
    let done = if done.is_empty() {
        String::new()
    } else {
        format!("{}; ", done.join(", "))
    };
    let hint = match signal {
        libc::SIGINT => {
            "the run was cancelled (Ctrl-C, or a cancelled CI job) before a verdict: run it again"
        }
        _ => {
            "the run was stopped (a CI abort or a job timeout sends SIGTERM) before a verdict: run it again, with more time if a timeout stopped it"
        }
    };
    let _ = writeln!(
        err,
        "ncugate: error: interrupted by {}: {done}{reports}\nhint: {hint}",
        name(signal)
    );
    let _ = err.flush();
    std::process::exit(exit::ERROR)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cleanup that starts while a temp file is being made finds it
    /// registered: the file was made and registered in one step under the
    /// lock. Made first and registered after, a chart file created while the
    /// cleanup ran survived SIGTERM.
    #[test]
    fn a_temp_file_is_registered_before_a_cleanup_can_look() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(".chart.svg.tmp");
        let mut cleanup = None;
        let made = Temp::create(
            || {
                std::fs::write(&path, b"<svg/>")?;
                let seen = path.clone();
                // The cleanup's first step: take the lock, read the temps.
                cleanup = Some(std::thread::spawn(move || state().temps.contains(&seen)));
                // Give it every chance to run between making and registering.
                std::thread::sleep(std::time::Duration::from_millis(50));
                Ok(path.clone())
            },
            |p| p.as_path(),
        );
        let (_, tracked) = made.expect("not interrupted").expect("made");
        let saw = cleanup.expect("spawned").join().expect("joined");
        assert!(saw, "the cleanup looked before the file was registered");
        drop(tracked);
        assert!(!state().temps.contains(&path));
    }
}
