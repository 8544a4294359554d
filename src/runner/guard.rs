//! The guard: a small process that kills a child's process group when
//! ncugate dies without cleaning up (SIGKILL, an OOM kill, a CI runner's
//! hard kill). `PR_SET_PDEATHSIG` (see [`super::process`]) takes ncu with
//! ncugate, but not the app ncu started: that app is ncu's child, and the
//! setting is not inherited. The app stays in ncu's process group, so a
//! process that outlives ncugate can end it.
//!
//! The guard is ncugate's own executable started with [`ARG`]. It reads
//! lines from a pipe whose other end only ncugate holds: `watch PGID` names
//! the group of the child just started, `done` says it ended normally. When
//! the pipe closes with a group still watched (ncugate died: the kernel
//! closes its end), the guard sends SIGKILL to that group and exits. It
//! ignores the terminal's and CI's stop signals (ncugate's own cleanup
//! handles those) and runs in a process group of its own, so a signal to
//! ncugate's group does not end it first.
//!
//! Only the `ncugate` binary starts guards ([`enable`]): a program that
//! links ncugate as a library has no [`ARG`] entry point.

use std::io::{BufRead, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

/// The first argument that makes ncugate's executable a guard.
pub const ARG: &str = "__ncugate-guard";

/// Whether this process's executable serves [`ARG`] (set by `main`).
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Says that this process's own executable is the guard (`main` calls it).
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// A started guard. Dropping it ends it without killing anything.
pub(crate) struct Guard {
    pipe: Option<std::process::ChildStdin>,
    process: Child,
}

impl Guard {
    /// Starts a guard, or `None` where none can start (a library caller,
    /// no executable path, no process left): the child then has only
    /// `PR_SET_PDEATHSIG`.
    pub(crate) fn start() -> Option<Guard> {
        if !ENABLED.load(Ordering::Relaxed) || !cfg!(target_os = "linux") {
            return None;
        }
        let exe = std::env::current_exe().ok()?;
        let mut command = Command::new(exe);
        command
            .arg(ARG)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut process = command.spawn().ok()?;
        let pipe = process.stdin.take();
        Some(Guard { pipe, process })
    }

    /// Names the process group to kill if ncugate dies.
    pub(crate) fn watch(&mut self, pgid: u32) {
        self.say(&format!("watch {pgid}\n"));
    }

    fn say(&mut self, line: &str) {
        if let Some(pipe) = &mut self.pipe {
            // A guard that is gone cannot be told; the child still has its
            // PR_SET_PDEATHSIG.
            let _ = pipe.write_all(line.as_bytes());
            let _ = pipe.flush();
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.say("done\n");
        self.pipe = None;
        let _ = self.process.wait();
    }
}

/// The guard's life (`ncugate __ncugate-guard`): reads standard input until
/// it closes; then kills the group still watched, if any. Returns the exit
/// status.
pub fn serve() -> i32 {
    #[cfg(target_os = "linux")]
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
        // SAFETY: setting a signal's disposition to SIG_IGN has no memory-safety
        // preconditions.
        unsafe {
            libc::signal(signal, libc::SIG_IGN);
        }
    }
    let watched = watch(std::io::stdin().lock());
    if let Some(pgid) = watched {
        // SAFETY: kill(2) has no memory-safety preconditions; a negative pid
        // signals the process group ncugate created for its child.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
    0
}

/// The group still watched when `input` ends: the last `watch` not
/// followed by `done`. Lines that are neither are ignored; a group id that
/// would signal more than one group (0, 1, negative) is never watched.
fn watch(input: impl BufRead) -> Option<i32> {
    let mut watched = None;
    for line in input.lines() {
        let Ok(line) = line else { break };
        match line.split_once(' ') {
            Some(("watch", pgid)) => {
                watched = pgid.trim().parse::<i32>().ok().filter(|p| *p > 1);
            }
            _ if line.trim() == "done" => watched = None,
            _ => {}
        }
    }
    watched
}

#[cfg(test)]
mod tests {
    use super::watch;

    #[test]
    fn the_last_group_watched_and_not_done_is_killed() {
        assert_eq!(watch(&b"watch 4242\n"[..]), Some(4242));
        assert_eq!(watch(&b"watch 4242\ndone\n"[..]), None);
        assert_eq!(watch(&b"watch 4242\ndone\nwatch 5151\n"[..]), Some(5151));
        assert_eq!(watch(&b""[..]), None);
    }

    #[test]
    fn a_group_id_that_names_many_groups_is_never_watched() {
        for bad in [
            "watch 0\n",
            "watch 1\n",
            "watch -7\n",
            "watch x\n",
            "kill 9\n",
        ] {
            assert_eq!(watch(bad.as_bytes()), None, "{bad:?}");
        }
    }
}
