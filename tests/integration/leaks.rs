//! The graph-memory gate offline: the audit library's reports recorded on the
//! H200 (fixtures/h200/memory) replayed through the process runner.

use crate::common;
use common::{Gate, H200};
use ncugate::config::{Config, LeaksConfig};
use ncugate::report::Outputs;
use ncugate::runner::RunnerConfig;
use ncugate::runner::process::Exit;
use ncugate::runner::replay::{Recorded, ReplayRunner};
use std::path::Path;
use std::time::Duration;

fn config(gate: &Gate, history: Option<&str>) -> LeaksConfig {
    gate.write(
        "libncugate_audit.so",
        "stand-in: the replay does not load it",
    );
    LeaksConfig {
        runner: RunnerConfig {
            timeout: Duration::from_secs(60),
            ..common::runner_config(
                &[
                    "kernels/build/graph_app",
                    "--inject",
                    "leak",
                    "--iters",
                    "5",
                ],
                gate.dir.path(),
                &gate.path("work"),
            )
        },
        audit_lib: Some(gate.path("libncugate_audit.so")),
        cache_dir: gate.path("cache"),
        limits: ncugate::options::MemoryOptions::default().limits(),
        sample_every: Duration::from_millis(20),
        history: history.map(|h| gate.path(h)),
        rule: ncugate::options::MemoryOptions::default().rule(),
        outputs: Outputs {
            junit: Some(gate.path("junit.xml")),
            markdown: None,
            json: Some(gate.path("report.json")),
            github: false,
            html: None,
            ..Outputs::default()
        },
        style: Default::default(),
    }
}

/// The app's run: its recorded output, exit 0, and the audit report it left.
fn replay(gate: &Gate, audit: &str) -> ReplayRunner {
    let report = std::fs::read(Path::new(H200).join("memory").join(audit)).expect("fixture");
    let log = std::fs::read_to_string(
        Path::new(H200)
            .join("memory")
            .join(audit.replace(".json", ".log")),
    )
    .unwrap_or_default();
    let mut step = Recorded::log(&log, Exit::Code(0));
    step.files.push(("audit.json".into(), report));
    std::fs::create_dir_all(gate.path("work/leaks")).expect("dir");
    ReplayRunner::new(gate.path("work/leaks"), vec![step])
}

/// The JSON report, checked against its schema.
fn json(gate: &Gate) -> serde_json::Value {
    let report = serde_json::from_str(&gate.read("report.json")).expect("JSON");
    common::assert_valid_json("report.v2.json", &report);
    report
}

#[test]
fn executables_instantiated_every_iteration_and_never_destroyed_fail() {
    let gate = Gate::new();
    let code = common::execute(
        &Config::Leaks(config(&gate, None)),
        &replay(&gate, "audit.graph_app.leak.iters5.json"),
    );
    assert_eq!(code, 1);
    let r = json(&gate);
    let live = &r["memory"][0];
    assert_eq!(live["check"], "live graph executables at exit");
    assert_eq!(live["status"], "fail");
    let message = live["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("5 (limit 0): 5 created, 0 destroyed; never destroyed: exec #1 (1 launches, instantiated in main (graph_app+0x9252))"), "{message}");
    common::assert_valid_junit(&gate.path("junit.xml"));
}

#[test]
fn the_reference_app_passes() {
    let gate = Gate::new();
    let code = common::execute(
        &Config::Leaks(config(&gate, None)),
        &replay(&gate, "audit.graph_app.base.json"),
    );
    assert_eq!(code, 0);
    let r = json(&gate);
    assert_eq!(r["memory"][0]["status"], "pass");
    // No pid in a replay, so no NVML samples: growth is reported as not measured, never as a pass.
    assert_eq!(r["memory"][1]["status"], "skipped");
}

#[test]
fn two_hundred_leaked_executables_are_listed_briefly() {
    let gate = Gate::new();
    let code = common::execute(
        &Config::Leaks(config(&gate, None)),
        &replay(&gate, "audit.graph_app.leak.iters200.json"),
    );
    assert_eq!(code, 1);
    let message = json(&gate)["memory"][0]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.contains("200 created, 0 destroyed") && message.contains("… and 195 more"),
        "{message}"
    );
}

#[test]
fn a_missing_audit_report_is_an_error() {
    let gate = Gate::new();
    std::fs::create_dir_all(gate.path("work/leaks")).expect("dir");
    let runner = ReplayRunner::new(
        gate.path("work/leaks"),
        vec![Recorded::log("variant=leak", Exit::Code(0))],
    );
    assert_eq!(
        common::execute(&Config::Leaks(config(&gate, None)), &runner),
        2
    );
    assert_eq!(json(&gate)["outcome"], "error");
}

#[test]
fn a_failing_app_is_an_error() {
    let gate = Gate::new();
    std::fs::create_dir_all(gate.path("work/leaks")).expect("dir");
    let runner = ReplayRunner::new(
        gate.path("work/leaks"),
        vec![Recorded::log(
            "error: unknown --inject variant",
            Exit::Code(1),
        )],
    );
    assert_eq!(
        common::execute(&Config::Leaks(config(&gate, None)), &runner),
        2
    );
    let errors = json(&gate)["errors"][0]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        errors.contains("the app failed (exit code 1): kernels/build/graph_app --inject leak --iters 5 — output: error: unknown --inject variant"),
        "{errors}"
    );
}

#[test]
fn the_history_is_appended_and_judged() {
    let gate = Gate::new();
    // Ten earlier runs: seven steady, then three over 1.5× and 384 MiB.
    let mut lines = String::new();
    for mb in [300, 310, 305, 290, 300, 295, 300, 500, 510] {
        lines.push_str(&format!("{{\"time\":\"2026-11-2{}T00:00:00Z\",\"app\":\"a\",\"commit\":null,\"leak_bytes\":{},\"peak_bytes\":null,\"live_execs\":0}}\n", mb % 10, mb as f64 * 1048576.0));
    }
    gate.write("leaks.jsonl", &lines);
    // This run: the replay has no NVML samples, so its leak figure is 0 → the last three are not all over.
    // The commit comes from `git rev-parse HEAD`, run like every other process.
    let runner = replay(&gate, "audit.graph_app.base.json");
    let sha = "3a295bf0c2d1e4f5a6b7c8d9e0f1a2b3c4d5e6f7";
    runner.push(Recorded::log(sha, Exit::Code(0)));
    let code = common::execute(&Config::Leaks(config(&gate, Some("leaks.jsonl"))), &runner);
    assert_eq!(code, 0);
    let history = gate.read("leaks.jsonl");
    assert_eq!(history.lines().count(), 10);
    let ci_commit = ["GITHUB_SHA", "GIT_COMMIT", "CI_COMMIT_SHA"]
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|v| !v.is_empty()));
    if !ci_commit {
        let seen = runner.seen.lock().expect("lock");
        assert_eq!(
            seen.last().map(|s| s.display()).as_deref(),
            Some("git rev-parse HEAD")
        );
        assert!(
            history.lines().last().is_some_and(|l| l.contains(sha)),
            "{history}"
        );
    }
    let r = json(&gate);
    let trend = r["memory"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    assert_eq!(trend["status"], "pass", "{trend}");
    assert!(
        trend["message"]
            .as_str()
            .unwrap_or_default()
            .contains("baseline (median) 314.57 MB"),
        "{trend}"
    );
}

/// A CUDA toolkit layout with CUPTI's files (empty: the fake compiler never reads them).
fn fake_toolkit(gate: &Gate) -> std::path::PathBuf {
    let home = gate.path("cuda");
    let targets = home.join("targets/x86_64-linux");
    std::fs::create_dir_all(targets.join("include")).expect("dir");
    std::fs::create_dir_all(targets.join("lib/stubs")).expect("dir");
    std::fs::write(targets.join("include/cupti.h"), "").expect("write");
    std::fs::write(targets.join("lib/libcupti.so"), "").expect("write");
    home
}

/// A C compiler stand-in: logs its arguments, checks it was given the audit
/// library's source, writes the `-o` file (or fails when told to).
fn fake_cc(gate: &Gate, fail: bool) -> std::path::PathBuf {
    let path = gate.path(if fail { "bad-cc" } else { "cc" });
    let log = gate.path("cc.calls");
    let body = if fail {
        "echo 'cupti.h:1: error: something is wrong' >&2; exit 1".to_string()
    } else {
        format!(
            r#"echo "$*" >> '{}'
out=""; src=""; prev=""
for a in "$@"; do
  [ "$prev" = "-o" ] && out=$a
  case $a in *.c) src=$a ;; esac
  prev=$a
done
grep -q InitializeInjection "$src" || {{ echo "not the audit source: $src" >&2; exit 1; }}
echo built > "$out""#,
            log.display()
        )
    };
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

#[test]
fn the_audit_library_is_compiled_from_the_embedded_source_once_and_cached() {
    use ncugate::memory::library::{Toolchain, ensure};
    let gate = Gate::new();
    let tools = Toolchain {
        cc: fake_cc(&gate, false).display().to_string(),
        cuda_home: fake_toolkit(&gate),
    };
    let root = gate.path("cache");
    let runner = ncugate::runner::process::RealRunner;
    let first = ensure(&root, &tools, &runner).expect("compiled");
    assert!(first.compiled);
    assert!(first.path.starts_with(&root), "{}", first.path.display());
    assert!(
        first
            .path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("audit-")
    );
    let second = ensure(&root, &tools, &runner).expect("cached");
    assert_eq!(second.path, first.path);
    assert!(!second.compiled);
    let calls = gate.read("cc.calls");
    assert_eq!(calls.lines().count(), 1, "{calls}");
    for arg in ["-shared", "-fPIC", "-lcupti", "-lcuda", "-Wl,-rpath,"] {
        assert!(calls.contains(arg), "{arg} in {calls}");
    }
    assert!(calls.contains(
        &format!("-I{}", tools.cuda_home.join("targets/x86_64-linux/include").display())
    ));
}

#[test]
fn doctor_says_whether_the_audit_library_builds_here() {
    let gate = Gate::new();
    let cuda = fake_toolkit(&gate);
    let cc = fake_cc(&gate, false);
    let env = |cc: &std::path::Path, cuda: &std::path::Path| {
        vec![
            ("CC".to_string(), cc.display().to_string()),
            ("CUDA_HOME".to_string(), cuda.display().to_string()),
            (
                "NCUGATE_CACHE_DIR".to_string(),
                gate.path("cache").display().to_string(),
            ),
        ]
    };
    let run = |vars: &[(String, String)]| {
        let pairs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        gate.run_with(&["doctor"], &pairs)
    };
    let out = run(&env(&cc, &cuda));
    assert!(
        out.stdout
            .contains("✓ graph audit library (ncugate leaks): compiled into"),
        "{}",
        out.stdout
    );
    let out = run(&env(&cc, &cuda));
    assert!(
        out.stdout
            .contains("✓ graph audit library (ncugate leaks): cached at"),
        "{}",
        out.stdout
    );

    let out = run(&env(&cc, &gate.path("no-cuda")));
    assert!(
        out.stdout.contains("– graph audit library (ncugate leaks): CUPTI (cupti.h and libcupti.so) is not in the CUDA toolkit"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("fix: set CUDA_HOME"), "{}", out.stdout);

    let bad = fake_cc(&gate, true);
    std::fs::remove_dir_all(gate.path("cache")).expect("rm");
    let out = run(&env(&bad, &cuda));
    assert!(
        out.stdout
            .contains("compiling the graph audit library failed (exit code 1)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("    | cupti.h:1: error: something is wrong"),
        "{}",
        out.stdout
    );
}
