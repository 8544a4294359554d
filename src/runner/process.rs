//! The outside world behind a trait: running the build, the app under ncu,
//! and ncu's import. [`RealRunner`] spawns processes (in their own process
//! group, so a timeout kills the app and everything it started);
//! [`ReplayRunner`](super::replay::ReplayRunner) plays back recorded output,
//! exit codes and files, so the whole runner — progress, failure
//! classification, reports — is tested without a GPU.

use super::kill::kill_group;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A command to run: argv (never through a shell), environment, directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    pub(crate) program: String,
    pub args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) workdir: Option<PathBuf>,
    pub timeout: Option<Duration>,
    /// Where standard output goes; `None`: to the line callback and the log only.
    pub stdout_to: Option<PathBuf>,
    /// When the app's last line says it crashed (`Segmentation fault`, …,
    /// [`crate::error::fatal_signal_line`]), this long without output ends
    /// the run: its process group is killed and it is [`Exit::HungAfterCrash`].
    /// `None`: only the timeout ends it.
    pub crash_stall: Option<Duration>,
}

impl CommandSpec {
    pub fn new(
        program: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> CommandSpec {
        CommandSpec {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            workdir: None,
            timeout: None,
            stdout_to: None,
            crash_stall: None,
        }
    }

    /// The command line for messages and logs (shell-quoted where needed).
    pub fn display(&self) -> String {
        let words: Vec<&str> = std::iter::once(&self.program)
            .chain(&self.args)
            .map(String::as_str)
            .collect();
        crate::format::shell_words(&words)
    }
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    /// Killed (with its process group) after the timeout.
    TimedOut(Duration),
    /// Killed (with its process group) after it printed that the app
    /// crashed and then nothing for this long ([`CommandSpec::crash_stall`]).
    HungAfterCrash(Duration),
    /// The program does not exist.
    NotFound,
    /// It could not be started for another reason.
    SpawnFailed(String),
}

impl Exit {
    pub(crate) fn success(&self) -> bool {
        *self == Exit::Code(0)
    }

    /// The signal that killed it, if one did.
    pub(crate) fn signal(&self) -> Option<i32> {
        match self {
            Exit::Signal(s) => Some(*s),
            _ => None,
        }
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit code {c}"),
            Exit::Signal(s) => write!(f, "killed by signal {s}"),
            Exit::TimedOut(d) => {
                write!(f, "timed out after {}s (process group killed)", d.as_secs())
            }
            Exit::HungAfterCrash(d) => write!(
                f,
                "hung after a crash: no output for {}s (process group killed)",
                d.as_secs()
            ),
            Exit::NotFound => write!(f, "not found"),
            Exit::SpawnFailed(e) => write!(f, "could not start: {e}"),
        }
    }
}

/// The output lines (stdout and stderr interleaved as they arrived) and the exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    pub exit: Exit,
    pub lines: Vec<String>,
    pub elapsed: Duration,
}

impl Finished {
    /// The last `n` non-empty output lines joined with ` | `, for one-line error messages.
    pub(crate) fn tail(&self, n: usize) -> String {
        last_lines(&self.lines, n, " | ")
    }
}

/// The last `n` non-empty lines of `lines`, joined with `sep`.
pub(crate) fn last_lines(lines: &[String], n: usize, sep: &str) -> String {
    let kept: Vec<&str> = lines
        .iter()
        .map(String::as_str)
        .filter(|l| !l.trim().is_empty())
        .collect();
    kept[kept.len().saturating_sub(n)..].join(sep)
}

/// The last `n` non-empty lines, each kept as it is: the output an error
/// shows below its message.
pub(crate) fn last_output(lines: &[String], n: usize) -> Vec<String> {
    let kept: Vec<&String> = lines.iter().filter(|l| !l.trim().is_empty()).collect();
    kept[kept.len().saturating_sub(n)..]
        .iter()
        .map(|l| (*l).clone())
        .collect()
}

/// Runs commands. `on_line` sees every output line as it arrives (stdout lines
/// only when they are not redirected by `stdout_to`).
pub trait ProcessRunner {
    fn run(&self, spec: &CommandSpec, on_line: &mut dyn FnMut(&str)) -> Finished;

    /// Like [`ProcessRunner::run`], and tells `on_spawn` the child's pid as soon as it
    /// exists (to sample its GPU memory from the start). Replays have no pid.
    fn run_observed(
        &self,
        spec: &CommandSpec,
        on_line: &mut dyn FnMut(&str),
        on_spawn: &mut dyn FnMut(u32),
    ) -> Finished {
        let _ = on_spawn;
        self.run(spec, on_line)
    }

    /// What watches the GPU while a profiled run goes on (the other
    /// processes on it): NVML for real processes, nothing by default.
    fn gpu_probe(&self) -> Option<&dyn crate::shared_gpu::GpuProbe> {
        None
    }

    /// Runs `spec` and hands its standard output to `read` (ncu's `--import`
    /// CSV, parsed as it arrives); `Finished::lines` holds the rest of its
    /// output. This default goes through a temporary `stdout_to` file, which
    /// is what replays fill; [`RealRunner`] streams through a pipe instead.
    fn run_reading(&self, spec: &CommandSpec, read: &mut dyn FnMut(&mut dyn Read)) -> Finished {
        let file = match tempfile::NamedTempFile::new() {
            Ok(f) => f,
            Err(e) => return not_started(Exit::SpawnFailed(format!("no temporary file: {e}"))),
        };
        let mut redirected = spec.clone();
        redirected.stdout_to = Some(file.path().to_path_buf());
        let done = self.run(&redirected, &mut |_| {});
        match std::fs::File::open(file.path()) {
            Ok(mut out) => read(&mut out),
            Err(_) => read(&mut std::io::empty()),
        }
        done
    }
}

/// A command that never ran.
fn not_started(exit: Exit) -> Finished {
    Finished {
        exit,
        lines: Vec::new(),
        elapsed: Duration::ZERO,
    }
}

/// `spec` as a [`Command`]: no stdin, its own process group (a timeout kills
/// the app and its children too); stdout and stderr are set by the caller.
fn command(spec: &CommandSpec) -> Command {
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null());
    if let Some(dir) = &spec.workdir {
        command.current_dir(dir);
    }
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    die_with_ncugate(&mut command);
    command
}

/// On Linux, the child gets SIGKILL when ncugate dies, however it dies: a
/// SIGKILL (an OOM kill, a CI runner's hard kill) runs no cleanup, and ncu
/// in its own process group ran on. `PR_SET_PDEATHSIG` fires when the
/// *thread* that spawned the child ends, not the process: ncugate spawns
/// from its main thread (a library caller must spawn from a thread that
/// outlives its children). It is not inherited by the child's own children
/// (the app ncu starts), and a set-user-ID program clears it; elsewhere
/// than Linux nothing is set. The app's end is the guard's
/// ([`super::guard`]).
fn die_with_ncugate(command: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        let parent = std::process::id();
        let set = move || {
            // SAFETY: prctl(2) and getppid(2) are async-signal-safe and
            // touch no memory of the parent's; this runs in the child
            // between fork and exec.
            unsafe {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                // ncugate died before the setting took: do not start at all.
                if u32::try_from(libc::getppid()).ok() != Some(parent) {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
            }
            Ok(())
        };
        // SAFETY: the closure only makes async-signal-safe calls and
        // allocates nothing.
        unsafe { std::os::unix::process::CommandExt::pre_exec(command, set) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

/// A guard that kills the process group of `child` (its own, see
/// [`command`]) if ncugate dies before it ends: the app ncu started is in
/// that group, out of `PR_SET_PDEATHSIG`'s reach.
fn guard(child: u32) -> Option<super::guard::Guard> {
    let mut guard = super::guard::Guard::start()?;
    guard.watch(child);
    Some(guard)
}

/// Why a spawn failed, as an [`Exit`].
fn spawn_error(e: &std::io::Error) -> Exit {
    if e.kind() == std::io::ErrorKind::NotFound {
        Exit::NotFound
    } else {
        Exit::SpawnFailed(e.to_string())
    }
}

/// How a waited-for child ended.
fn exit_of(status: std::io::Result<std::process::ExitStatus>) -> Exit {
    match status {
        Ok(s) => match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
            (Some(c), _) => Exit::Code(c),
            (None, Some(sig)) => Exit::Signal(sig),
            (None, None) => Exit::SpawnFailed("unknown exit status".into()),
        },
        Err(e) => Exit::SpawnFailed(e.to_string()),
    }
}

/// Spawns real processes.
#[derive(Debug, Default)]
pub struct RealRunner;

/// The NVML probe of real runs.
static NVML: crate::shared_gpu::probe::Nvml = crate::shared_gpu::probe::Nvml {
    family: super::procfs::descendants,
    cuda: super::procfs::uses_cuda,
    age: super::procfs::age,
};

impl ProcessRunner for RealRunner {
    fn run(&self, spec: &CommandSpec, on_line: &mut dyn FnMut(&str)) -> Finished {
        self.run_observed(spec, on_line, &mut |_| {})
    }

    fn gpu_probe(&self) -> Option<&dyn crate::shared_gpu::GpuProbe> {
        Some(&NVML)
    }

    fn run_observed(
        &self,
        spec: &CommandSpec,
        on_line: &mut dyn FnMut(&str),
        on_spawn: &mut dyn FnMut(u32),
    ) -> Finished {
        let start = Instant::now();
        let mut command = command(spec);
        command.stderr(Stdio::piped());
        let stdout_file = match &spec.stdout_to {
            Some(path) => match std::fs::File::create(path) {
                Ok(f) => Some(f),
                Err(e) => {
                    return Finished {
                        exit: Exit::SpawnFailed(format!("cannot create {}: {e}", path.display())),
                        lines: Vec::new(),
                        elapsed: start.elapsed(),
                    };
                }
            },
            None => None,
        };
        match stdout_file {
            Some(f) => command.stdout(Stdio::from(f)),
            None => command.stdout(Stdio::piped()),
        };
        let (mut child, _tracked) = match super::interrupt::spawn(&mut command) {
            Ok(spawned) => spawned,
            Err(e) => {
                return Finished {
                    exit: spawn_error(&e),
                    lines: Vec::new(),
                    elapsed: start.elapsed(),
                };
            }
        };
        on_spawn(child.id());
        let _guard = guard(child.id());
        let (tx, rx) = mpsc::channel::<String>();
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            let tx = tx.clone();
            readers.push(std::thread::spawn(move || forward(out, &tx)));
        }
        if let Some(err) = child.stderr.take() {
            let tx = tx.clone();
            readers.push(std::thread::spawn(move || forward(err, &tx)));
        }
        drop(tx);
        let mut lines = Vec::new();
        let ended = watch(spec, start, &rx, &mut |line| {
            on_line(&line);
            lines.push(line);
        });
        // Ended early: the process group is killed, as at a timeout.
        let killed = ended.is_some();
        if killed {
            let _ = kill_group(child.id());
        }
        let status = child.wait();
        // Collect what the readers still forward. They end when every process
        // holding the pipes is gone; after a timeout, give them 2 s and then
        // leave them (a process that escaped the kill could hold a pipe open).
        let drain_until = Instant::now() + Duration::from_secs(2);
        loop {
            let wait = if killed {
                drain_until.saturating_duration_since(Instant::now())
            } else {
                Duration::from_secs(3600)
            };
            match rx.recv_timeout(wait) {
                Ok(line) => {
                    on_line(&line);
                    lines.push(line);
                }
                Err(_) => break,
            }
        }
        if !killed {
            for r in readers {
                let _ = r.join();
            }
        }
        let exit = match ended {
            Some(Ended::HungAfterCrash) => {
                Exit::HungAfterCrash(spec.crash_stall.unwrap_or_default())
            }
            Some(Ended::TimedOut) => Exit::TimedOut(spec.timeout.unwrap_or_default()),
            None => exit_of(status),
        };
        super::interrupt::settle(exit.signal());
        Finished {
            exit,
            lines,
            elapsed: start.elapsed(),
        }
    }

    /// Streams standard output into `read` on this thread while a second
    /// thread keeps standard error. `spec.timeout` and `stdout_to` do not
    /// apply: the reader decides when the output is done.
    fn run_reading(&self, spec: &CommandSpec, read: &mut dyn FnMut(&mut dyn Read)) -> Finished {
        let start = Instant::now();
        let mut command = command(spec);
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let (mut child, _tracked) = match super::interrupt::spawn(&mut command) {
            Ok(spawned) => spawned,
            Err(e) => return not_started(spawn_error(&e)),
        };
        let _guard = guard(child.id());
        let (tx, rx) = mpsc::channel::<String>();
        let stderr = child
            .stderr
            .take()
            .map(|err| std::thread::spawn(move || forward(err, &tx)));
        if let Some(mut out) = child.stdout.take() {
            read(&mut out);
            // Closed before the wait: a reader that stopped early must not leave ncu blocked.
        }
        let exit = exit_of(child.wait());
        super::interrupt::settle(exit.signal());
        if let Some(t) = stderr {
            let _ = t.join();
        }
        Finished {
            exit,
            lines: rx.try_iter().collect(),
            elapsed: start.elapsed(),
        }
    }
}

/// Why [`watch`] ended a run before its output did.
enum Ended {
    TimedOut,
    HungAfterCrash,
}

/// Hands each line of the run's output to `line` until the output ends
/// (`None`), the timeout passes, or the app's last line said it crashed and
/// nothing followed for `spec.crash_stall`.
fn watch(
    spec: &CommandSpec,
    start: Instant,
    rx: &mpsc::Receiver<String>,
    line: &mut dyn FnMut(String),
) -> Option<Ended> {
    // A timeout past what the clock can hold is no deadline (adding it panicked).
    let deadline = spec.timeout.and_then(|t| start.checked_add(t));
    // Whether the app's last line said it crashed (ncu's own lines, which
    // may follow a crash, leave that as it is), and when anything was last
    // printed.
    let mut crashed = false;
    let mut last_line = Instant::now();
    loop {
        let wait = deadline.map_or(Duration::from_millis(200), |d| {
            d.saturating_duration_since(Instant::now())
                .min(Duration::from_millis(200))
        });
        match rx.recv_timeout(wait) {
            Ok(text) => {
                if !text.trim_start().starts_with("==") {
                    crashed = crate::error::fatal_signal_line(&text).is_some();
                }
                last_line = Instant::now();
                line(text);
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let stalled = spec
            .crash_stall
            .is_some_and(|grace| crashed && last_line.elapsed() >= grace);
        if stalled {
            return Some(Ended::HungAfterCrash);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Some(Ended::TimedOut);
        }
    }
}

/// The longest line of a child's output kept whole; the rest of a longer
/// line is counted, not kept (a stream with no newline cannot fill memory).
const LINE_KEPT: usize = 64 * 1024;

/// The output of one child stream kept in all: past it, only ncu's own
/// lines (`==PROF==`, `==ERROR==`, …) are kept, and one line says so.
const OUTPUT_KEPT: usize = 256 * 1024 * 1024;

/// Sends each line of `stream` to `tx`, within [`LINE_KEPT`] a line and
/// [`OUTPUT_KEPT`] in all.
fn forward(stream: impl std::io::Read, tx: &mpsc::Sender<String>) {
    forward_within(stream, tx, (LINE_KEPT, OUTPUT_KEPT));
}

fn forward_within(
    stream: impl std::io::Read,
    tx: &mpsc::Sender<String>,
    (line_kept, output_kept): (usize, usize),
) {
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    let (mut cut, mut sent, mut over) = (0usize, 0usize, false);
    let mut send = |line: &mut Vec<u8>, cut: &mut usize| -> bool {
        let mut text = String::from_utf8_lossy(line)
            .trim_end_matches(['\n', '\r'])
            .to_string();
        if *cut > 0 {
            text.push_str(&format!(" … ({cut} more bytes of this line not kept)"));
        }
        line.clear();
        *cut = 0;
        sent = sent.saturating_add(text.len());
        if sent > output_kept && !text.starts_with("==") {
            if over {
                return true;
            }
            over = true;
            text =
                format!("… output beyond {output_kept} bytes not kept (ncu's own lines still are)");
        }
        tx.send(text).is_ok()
    };
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if buf.is_empty() {
            if !line.is_empty() || cut > 0 {
                send(&mut line, &mut cut);
            }
            break;
        }
        let newline = memchr::memchr(b'\n', buf);
        let chunk = &buf[..newline.unwrap_or(buf.len())];
        let room = line_kept.saturating_sub(line.len()).min(chunk.len());
        line.extend_from_slice(&chunk[..room]);
        cut += chunk.len() - room;
        let used = chunk.len() + usize::from(newline.is_some());
        reader.consume(used);
        if newline.is_some() && !send(&mut line, &mut cut) {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::forward_within;
    use std::sync::mpsc;

    fn lines(input: &[u8], limits: (usize, usize)) -> Vec<String> {
        let (tx, rx) = mpsc::channel();
        forward_within(input, &tx, limits);
        drop(tx);
        rx.iter().collect()
    }

    #[test]
    fn lines_are_forwarded_as_written() {
        assert_eq!(lines(b"a\r\nb\n\nlast", (64, 1024)), ["a", "b", "", "last"]);
    }

    #[test]
    fn a_line_without_end_is_cut_and_says_so() {
        let long = vec![b'x'; 10_000];
        let got = lines(&long, (100, 1 << 20));
        assert_eq!(got.len(), 1);
        assert!(
            got[0].starts_with(&"x".repeat(100))
                && got[0].ends_with(" … (9900 more bytes of this line not kept)"),
            "{}",
            &got[0][90..]
        );
    }

    #[test]
    fn past_the_output_limit_only_ncu_s_lines_are_kept() {
        let mut input = Vec::new();
        for i in 0..100 {
            input.extend_from_slice(format!("app line {i}\n").as_bytes());
        }
        input.extend_from_slice(b"==PROF== Disconnected from process 7\nmore\n");
        let got = lines(&input, (64, 200));
        assert!(got.len() < 30, "{got:?}");
        assert_eq!(
            got.iter()
                .filter(|l| l.contains("output beyond 200 bytes"))
                .count(),
            1
        );
        assert_eq!(
            got.last().map(String::as_str),
            Some("==PROF== Disconnected from process 7")
        );
    }
}
