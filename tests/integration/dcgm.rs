//! DCGM coexistence: ncu's failure while DCGM holds the driver's profiling
//! lock is named with its fix, and `--dcgm pause` (`[profile] dcgm`) wraps
//! every ncu run in `dcgmi profile --pause` / `--resume`, the resume also
//! after a failure, a timeout and a signal. `dcgmi` is the stand-in
//! `tests/bin/fixture-dcgmi` on PATH, logging its calls; ncu the stand-in
//! `tests/bin/fixture-ncu`, failing with the text of
//! `fixtures/reported/ncu.driver-resource-unavailable.log` (itself a
//! labelled stand-in quoting public material).

use crate::common::{Gate, Ncugate};
use std::process::Stdio;
use std::time::{Duration, Instant};

const FIXTURE_DCGMI: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bin/fixture-dcgmi");
const BUSY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/reported/ncu.driver-resource-unavailable.log"
);

/// `run` with the stand-in dcgmi first on PATH, logging to `dcgmi.calls`;
/// `fail`: the dcgmi option that fails.
fn with_dcgmi<'g>(gate: &'g Gate, run: Ncugate<'g>, fail: &str) -> Ncugate<'g> {
    let bin = gate.path("dcgm-bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::os::unix::fs::symlink(FIXTURE_DCGMI, bin.join("dcgmi")).expect("link dcgmi");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    run.env("PATH", path)
        .env("FIXTURE_DCGMI_LOG", gate.path("dcgmi.calls"))
        .env("FIXTURE_DCGMI_FAIL", fail)
}

fn calls(gate: &Gate) -> Vec<String> {
    std::fs::read_to_string(gate.path("dcgmi.calls"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn busy_ncu(gate: &Gate) -> String {
    let text = std::fs::read_to_string(BUSY).expect("the stand-in log");
    gate.ncu("busy-ncu")
        .log_argv("ncu.calls")
        .fail(1, text.trim_end())
        .install()
}

#[test]
fn ncu_blocked_by_dcgm_is_named_with_the_pause_fix() {
    let gate = Gate::new();
    let ncu = busy_ncu(&gate);
    let run = gate.record().ncu(&ncu).app(&["./app"]);
    let out = with_dcgmi(&gate, run, "").run();
    out.one_clear_error("a driver resource was unavailable (another tool, typically DCGM")
        .stderr_has("hint: pause DCGM's profiling around the run: set [profile] dcgm = \"pause\"")
        .stderr_has("stop the nvidia-dcgm service");
    assert!(calls(&gate).is_empty(), "dcgm = \"fail\" calls no dcgmi");
}

#[test]
fn pause_runs_before_ncu_and_resume_after_it_even_when_ncu_fails() {
    let gate = Gate::new();
    let ncu = busy_ncu(&gate);
    let run = gate
        .record()
        .ncu(&ncu)
        .args(&["--dcgm", "pause"])
        .app(&["./app"]);
    let out = with_dcgmi(&gate, run, "").run();
    out.one_clear_error("a driver resource was unavailable");
    assert_eq!(calls(&gate), ["profile --pause", "profile --resume"]);
    assert!(gate.path("ncu.calls").exists(), "ncu ran between them");
}

#[test]
fn a_pause_that_fails_stops_the_run_before_ncu() {
    let gate = Gate::new();
    let ncu = busy_ncu(&gate);
    let run = gate
        .record()
        .ncu(&ncu)
        .env("NCUGATE_DCGM", "pause")
        .app(&["./app"]);
    let out = with_dcgmi(&gate, run, "--pause").run();
    out.one_clear_error("pausing DCGM's profiling failed (exit code 255): dcgmi profile --pause")
        .stderr_has("unable to establish a connection")
        .stderr_has("hint: check that dcgmi is on PATH and nv-hostengine runs");
    assert_eq!(calls(&gate), ["profile --pause"]);
    assert!(!gate.path("ncu.calls").exists(), "ncu did not run");
}

#[test]
fn a_timeout_and_a_signal_still_resume() {
    // Timeout: ncu (hanging) is killed after 1 s, then DCGM resumes.
    let gate = Gate::new();
    let ncu = gate.ncu("slow-ncu").hang("ncu.pid", "app.pid").install();
    let run = gate
        .record()
        .ncu(&ncu)
        .args(&["--dcgm", "pause", "--timeout", "1"])
        .app(&["./app"]);
    with_dcgmi(&gate, run, "")
        .run()
        .one_clear_error("timed out after 1s");
    assert_eq!(calls(&gate), ["profile --pause", "profile --resume"]);

    // SIGTERM while ncu runs: the cleanup stops ncu, then resumes.
    let gate = Gate::new();
    let ncu = gate.ncu("slow-ncu").hang("ncu.pid", "app.pid").install();
    let run = gate
        .record()
        .ncu(&ncu)
        .args(&["--dcgm", "pause"])
        .app(&["./app"]);
    let mut child = with_dcgmi(&gate, run, "")
        .std_command()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ncugate");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !gate.path("app.pid").exists() {
        assert!(Instant::now() < deadline, "the app never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) has no memory-safety preconditions.
    let sent = unsafe { libc::kill(i32::try_from(child.id()).expect("pid"), libc::SIGTERM) };
    assert_eq!(sent, 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().expect("wait").is_none() {
        assert!(Instant::now() < deadline, "ncugate did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out: crate::common::Outcome = child.wait_with_output().expect("output").into();
    out.one_clear_error("interrupted by SIGTERM")
        .stderr_has("ran `dcgmi profile --resume`");
    assert_eq!(calls(&gate), ["profile --pause", "profile --resume"]);
}
