//! SIGINT and SIGTERM (Ctrl-C, a cancelled or aborted CI job) while ncu
//! runs: ncugate stops the processes it started, leaves no temp file and no
//! report set that could pass for this run's, prints one error line with a
//! hint and exits 2; a second signal exits at once. And the temp files that
//! a killed write (SIGKILL) leaves are removed by the next write.
//! The ncu here is a stand-in that starts a sleeping "app" and waits for it.

use crate::common::{Gate, Ncugate};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// The stand-in ncu that records its pid and its app's, then waits.
fn slow_ncu(gate: &Gate) -> String {
    gate.ncu("slow-ncu").hang("ncu.pid", "app.pid").install()
}

/// `RUN --ncu SLOW_NCU -- ./app`, its output piped; returns once the
/// stand-in ncu runs the app.
fn under_slow_ncu(gate: &Gate, run: Ncugate) -> Child {
    let ncu = slow_ncu(gate);
    let mut child = run
        .ncu(ncu)
        .app(&["./app"])
        .std_command()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ncugate");
    wait_for(gate, "app.pid", &mut child);
    child
}

/// Waits until `file` exists in the scratch dir (the app is running).
fn wait_for(gate: &Gate, file: &str, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !gate.path(file).exists() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("ncugate ended ({status}) before {file} appeared");
        }
        assert!(Instant::now() < deadline, "{file} never appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn pid(gate: &Gate, file: &str) -> i32 {
    gate.read(file).trim().parse().expect("pid")
}

/// True while `pid` exists and is not a zombie.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .is_some_and(|s| s != "Z" && s != "X")
    })
}

fn signal(pid: u32, signal: i32) {
    // SAFETY: kill(2) has no memory-safety preconditions.
    let sent = unsafe { libc::kill(i32::try_from(pid).expect("pid"), signal) };
    assert_eq!(sent, 0, "kill {pid}");
}

/// Waits for the child with a limit (a test that would hang fails instead).
fn finish(mut child: Child, within: Duration) -> crate::common::Outcome {
    let deadline = Instant::now() + within;
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("ncugate did not exit within {within:?} of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output").into()
}

/// Every file under `dir` whose name ends in `.tmp`.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.to_string_lossy().ends_with(".tmp") {
                found.push(path);
            }
        }
    }
    found
}

/// The files of the reports the interrupted check writes.
const REPORTS: [&str; 5] = [
    "junit.xml",
    "r.json",
    "r.md",
    "html/index.html",
    "html/style.css",
];

#[test]
fn sigint_and_sigterm_stop_ncu_and_the_app_and_leave_no_report() {
    // SIGHUP and SIGUSR1 killed ncugate and left ncu and the app running;
    // so did SIGQUIT (a terminal's Ctrl-\, which reaches ncugate's process
    // group and not theirs), SIGALRM (`timeout -s ALRM`) and SIGXCPU (a CPU
    // time limit, `ulimit -t`).
    for (sig, name) in [
        (libc::SIGINT, "SIGINT"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGXCPU, "SIGXCPU"),
    ] {
        let gate = Gate::recorded();
        // An earlier run's reports: they must not pass for this run's.
        std::fs::create_dir_all(gate.path("html")).expect("mkdir");
        for old in REPORTS {
            gate.write(old, "an earlier run's report");
        }
        let baseline = gate.read("baseline.json");
        let child = under_slow_ncu(
            &gate,
            gate.check()
                .baseline("baseline.json")
                .junit("junit.xml")
                .json("r.json")
                .markdown("r.md")
                .html("html"),
        );
        let (ncu_pid, app_pid) = (pid(&gate, "ncu.pid"), pid(&gate, "app.pid"));
        assert!(alive(ncu_pid) && alive(app_pid));
        signal(child.id(), sig);
        let out = finish(child, Duration::from_secs(30));
        out.one_clear_error(&format!("interrupted by {name}"))
            .stderr_has("no report of this run was written");
        // ncu and the app, and at times a short-lived helper of the stand-in's
        // shell (its `mv`) that had not exited yet: 2 or 3.
        let stopped: usize = out
            .stderr
            .split("stopped ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!((2..=3).contains(&stopped), "{name}: {}", out.stderr);
        assert!(
            out.stderr
                .lines()
                .last()
                .unwrap_or("")
                .contains("run it again"),
            "{}",
            out.stderr
        );
        assert!(!alive(ncu_pid), "{name}: ncu ({ncu_pid}) still runs");
        assert!(!alive(app_pid), "{name}: the app ({app_pid}) still runs");
        for old in REPORTS {
            assert!(!gate.path(old).exists(), "{name}: {old} is still there");
        }
        assert_eq!(temp_files(gate.dir.path()), Vec::<PathBuf>::new(), "{name}");
        assert_eq!(gate.read("baseline.json"), baseline, "{name}");
    }
}

#[test]
fn in_github_mode_the_interrupt_closes_ncus_log_group_first() {
    let gate = Gate::recorded();
    let child = under_slow_ncu(
        &gate,
        gate.check()
            .baseline("baseline.json")
            .args(&["--format", "github"])
            .env("GITHUB_OUTPUT", gate.path("github-output"))
            .env("GITHUB_STEP_SUMMARY", gate.path("step-summary")),
    );
    signal(child.id(), libc::SIGINT);
    let out = finish(child, Duration::from_secs(30));
    out.one_clear_error("interrupted by SIGINT");
    let lines: Vec<&str> = out.stdout.lines().collect();
    let opened = lines.iter().position(|l| l.starts_with("::group::"));
    let closed = lines.iter().rposition(|l| *l == "::endgroup::");
    assert!(
        opened.is_some() && closed > opened,
        "the log group is left open: {}",
        out.stdout
    );
}

#[test]
fn an_interrupted_recording_keeps_the_previous_baseline() {
    let gate = Gate::recorded();
    let before = gate.read("baseline.json");
    let child = under_slow_ncu(&gate, gate.record().output("baseline.json"));
    let app = pid(&gate, "app.pid");
    signal(child.id(), libc::SIGTERM);
    finish(child, Duration::from_secs(30)).one_clear_error("interrupted by SIGTERM");
    assert!(!alive(app));
    assert_eq!(gate.read("baseline.json"), before);
    assert_eq!(temp_files(gate.dir.path()), Vec::<PathBuf>::new());
}

#[test]
fn a_second_signal_exits_at_once() {
    let gate = Gate::recorded();
    let child = under_slow_ncu(&gate, gate.check().baseline("baseline.json").json("r.json"));
    let (ncu_pid, app_pid) = (pid(&gate, "ncu.pid"), pid(&gate, "app.pid"));
    // Stopped, ncugate gets both signals at once when it continues: the
    // second is handled before the cleanup can run.
    signal(child.id(), libc::SIGSTOP);
    signal(child.id(), libc::SIGINT);
    signal(child.id(), libc::SIGTERM);
    signal(child.id(), libc::SIGCONT);
    let out = finish(child, Duration::from_secs(10));
    for p in [ncu_pid, app_pid] {
        // SAFETY: as in `signal`; the pids are the stand-ins this test started.
        unsafe {
            libc::kill(p, libc::SIGKILL);
        }
    }
    out.one_clear_error("during the cleanup: exiting at once");
    assert!(out.stderr.contains("a second SIG"), "{}", out.stderr);
}

/// A temp file as a killed write leaves it: `.NAME.XXXXXX.tmp`, an hour old, no lock.
fn leftover(gate: &Gate, name: &str, bytes: usize) -> PathBuf {
    let path = gate.path(name);
    std::fs::write(&path, vec![b'{'; bytes]).expect("write");
    std::fs::File::options()
        .write(true)
        .open(&path)
        .and_then(|f| f.set_modified(std::time::SystemTime::now() - Duration::from_secs(3600)))
        .expect("mtime");
    path
}

#[test]
fn temp_files_of_a_killed_write_are_removed_by_the_next_one() {
    let gate = Gate::recorded();
    let stale = leftover(&gate, ".baseline.json.k1LLed.tmp", 1 << 20);
    // A write in progress in another process holds its temp file's lock.
    let busy = leftover(&gate, ".baseline.json.wr1t1n.tmp", 10);
    let held = std::fs::File::open(&busy).expect("open");
    held.try_lock().expect("lock");
    // Another file's temp file (it goes too: a killed HTML report's charts
    // are not all written again), and a name that is not one of ncugate's.
    let other = leftover(&gate, ".r.json.AbCdEf.tmp", 10);
    let foreign = leftover(&gate, ".baseline.json.tmp", 10);
    let out = gate.base_baseline(&[]);
    let line = "ncugate: removed 2 temp files (1.05 MB) that interrupted writes left in the current folder: .baseline.json.k1LLed.tmp, .r.json.AbCdEf.tmp";
    assert_eq!(
        out.stderr.matches("ncugate: removed").count(),
        1,
        "one line: {}",
        out.stderr
    );
    assert!(out.stderr.contains(line), "{}", out.stderr);
    assert!(!stale.exists() && !other.exists());
    assert!(busy.exists() && foreign.exists());
    // `check` reads the baseline: it removes one left beside it too.
    drop(held);
    gate.check()
        .baseline("baseline.json")
        .input("base1.csv")
        .run()
        .code(0)
        .stderr_has("ncugate: removed 1 temp file ")
        .stderr_has(".baseline.json.wr1t1n.tmp");
    assert!(!busy.exists());
}

#[test]
fn a_signal_that_reaches_ncu_first_still_ends_as_the_interrupt() {
    // Jenkins signals every process of an aborted build, in no set order:
    // when ncu and the app die of SIGTERM just before ncugate gets its own,
    // the run ends with the interrupt's one error line, not "ncu failed".
    let gate = Gate::recorded();
    let child = under_slow_ncu(
        &gate,
        gate.check().baseline("baseline.json").junit("junit.xml"),
    );
    // ncu first: the stand-in ncu is a shell whose `wait` ends with status 0 when
    // its app dies, which would read as "ncu exited 0" instead of a death by
    // the signal. The app may be gone by the time it is signalled (ncugate
    // ends ncu's process group once ncu dies): that is no failed kill.
    for file in ["ncu.pid", "app.pid"] {
        // SAFETY: kill(2) has no memory-safety preconditions.
        let sent = unsafe { libc::kill(pid(&gate, file), libc::SIGTERM) };
        let gone = std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        assert!(sent == 0 || gone, "kill {file}");
    }
    std::thread::sleep(Duration::from_millis(100));
    signal(child.id(), libc::SIGTERM);
    finish(child, Duration::from_secs(30)).one_clear_error("interrupted by SIGTERM");
    assert!(!gate.path("junit.xml").exists());
}

#[test]
#[cfg(target_os = "linux")]
fn sigkill_of_ncugate_takes_ncu_and_the_app_with_it() {
    // SIGKILL runs no cleanup: ncu, in its own process group, and the app it
    // started would run on. PR_SET_PDEATHSIG ends ncu; the guard process
    // ends the app, which that setting does not reach.
    let gate = Gate::recorded();
    let child = under_slow_ncu(&gate, gate.check().baseline("baseline.json"));
    let (ncu_pid, app_pid) = (pid(&gate, "ncu.pid"), pid(&gate, "app.pid"));
    assert!(alive(ncu_pid) && alive(app_pid));
    signal(child.id(), libc::SIGKILL);
    let _ = finish(child, Duration::from_secs(10));
    // The kernel delivers the signals as ncugate exits; waited for, not timed.
    let deadline = Instant::now() + Duration::from_secs(30);
    while (alive(ncu_pid) || alive(app_pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let ran_on = [ncu_pid, app_pid].map(alive);
    for p in [ncu_pid, app_pid] {
        // SAFETY: as in `signal`; the pids are the stand-ins this test started.
        unsafe {
            libc::kill(p, libc::SIGKILL);
        }
    }
    assert_eq!(
        ran_on,
        [false, false],
        "ncu ({ncu_pid}) and the app ({app_pid}) still run after ncugate's SIGKILL"
    );
}
