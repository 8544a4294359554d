//! The runner offline: ncu's recorded output (H200, ncu 2025.3.1) replayed
//! through `ReplayRunner`, so command composition, progress and every failure
//! class are tested without a GPU. Fast mode replays recordings of its own
//! command line (`--csv --page raw --print-units base --log-file`): the app's
//! output on the pipes, ncu's messages and the raw CSV in its log file. Full
//! mode replays non-CSV runs, whose output ncu and the app share.

use crate::common;
use common::steps::{imported, profiled, recorded_fast};
use common::{H200, REFERENCE};
use ncugate::config::{CheckConfig, Config};
use ncugate::error::Error;
use ncugate::report::Outputs;
use ncugate::runner::process::{CommandSpec, Exit, ProcessRunner};
use ncugate::runner::progress::Progress;
use ncugate::runner::replay::{Recorded, ReplayRunner};
use ncugate::runner::{self, Mode, RunnerConfig};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn fixture(dir: &str, name: &str) -> String {
    std::fs::read_to_string(Path::new(dir).join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn config(out: &Path) -> RunnerConfig {
    common::runner_config(
        &["kernels/build/graph_app", "--iters", "3"],
        Path::new("."),
        out,
    )
}

fn metrics() -> Vec<String> {
    ncugate::rules::Thresholds::builtin()
        .expect("builtin")
        .metrics()
}

/// Profiles once with the replayed steps: the result, the commands run, and
/// the work dir (the artifacts are in it: removed when it is dropped).
fn profile(
    mode: Mode,
    steps: Vec<Recorded>,
) -> (
    Result<runner::Artifacts, Error>,
    Vec<CommandSpec>,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().to_path_buf();
    let replay = ReplayRunner::new(out.join("run"), steps);
    let mut config = config(&out);
    config.mode = mode;
    let result = runner::profile_once(
        &config,
        &metrics(),
        "run",
        &replay,
        &mut Progress::new(None, true),
    );
    let seen = replay.seen.lock().expect("lock").clone();
    (result, seen, dir)
}

/// The message and hint of a run that must fail.
fn error_in(mode: Mode, steps: Vec<Recorded>) -> (String, String) {
    let (result, _, _dir) = profile(mode, steps);
    let e = result.expect_err("the run must fail");
    (e.to_string(), e.hint())
}

#[test]
fn the_ncu_command_line_is_composed_not_shelled() {
    let (result, seen, _dir) = profile(
        Mode::Fast,
        vec![recorded_fast(
            H200,
            "graph_app.base.fast.run1",
            Exit::Code(0),
            true,
        )],
    );
    let artifacts = result.expect("profiled");
    let args = &seen[0].args;
    let metrics = args[args
        .iter()
        .position(|a| a == "--metrics")
        .expect("--metrics")
        + 1]
    .clone();
    for m in metrics_list() {
        assert!(
            metrics.split(',').any(|x| x == m),
            "{m} missing from {metrics}"
        );
    }
    let joined = args.join(" ");
    let output = artifacts.dir.join("ncu-output.log");
    for flag in [
        "--target-processes all",
        "--graph-profiling node",
        "--clock-control none",
        "--cache-control all",
        "--replay-mode kernel",
        "--config-file off",
        &format!(
            "--csv --page raw --print-units base --log-file {}",
            output.display()
        ),
        "-f --export",
    ] {
        assert!(joined.contains(flag), "{flag} missing: {joined}");
    }
    assert!(
        !joined.contains("--set"),
        "fast mode adds no section set: {joined}"
    );
    assert!(
        joined.ends_with("/run kernels/build/graph_app --iters 3"),
        "{joined}"
    );
    assert_eq!(
        seen.len(),
        1,
        "fast mode reads the raw page from the profiling run: no second ncu process"
    );
    // The raw page: the CSV part of ncu's output, as `ncu --import` prints it.
    assert_eq!(
        std::fs::read(&artifacts.raw).expect("raw"),
        common::h200_bytes("graph_app.base.fast.run1.raw.base-units.csv")
    );
    assert!(!output.exists(), "split into ncu.log and raw.csv");
    let ncu_log = std::fs::read_to_string(&artifacts.ncu_log).expect("ncu log");
    assert!(
        ncu_log.contains("==PROF== Report: ") && !ncu_log.contains("\"ID\""),
        "{ncu_log}"
    );
    let app_log = std::fs::read_to_string(&artifacts.app_log).expect("app log");
    assert!(
        app_log.contains("verify=ok") && !app_log.contains("==PROF=="),
        "{app_log}"
    );
    assert!(artifacts.details.is_none());
}

#[test]
fn full_mode_imports_both_pages_after_a_run_with_progress_lines() {
    let (result, seen, _dir) = profile(
        Mode::Full,
        vec![
            profiled(
                &fixture(H200, "graph_app.base.full.ncu.log"),
                Exit::Code(0),
                true,
            ),
            imported(fixture(H200, "graph_app.base.full.raw.csv")),
            imported(fixture(H200, "graph_app.base.full.details.csv")),
        ],
    );
    let artifacts = result.expect("profiled");
    let joined = seen[0].args.join(" ");
    assert!(
        joined.starts_with("--set full ")
            && !joined.contains("--csv")
            && !joined.contains("--log-file"),
        "{joined}"
    );
    assert_eq!(
        seen[1].args[2..],
        ["--csv", "--page", "raw", "--print-units", "base"]
    );
    assert_eq!(seen[2].args[3..5], ["--page", "details"]);
    assert!(artifacts.details.is_some_and(|d| d.exists()));
    let app_log = std::fs::read_to_string(&artifacts.app_log).expect("app log");
    assert!(
        app_log.contains("verify=ok") && !app_log.contains("==PROF=="),
        "{app_log}"
    );
}

#[test]
fn a_fast_run_without_the_csv_in_its_output_falls_back_to_the_import() {
    // A report but no CSV (an ncu that printed none): import it, as full mode does.
    let (result, seen, _dir) = profile(
        Mode::Fast,
        vec![
            profiled("variant=base verify=ok", Exit::Code(0), true),
            imported(fixture(H200, "graph_app.base.fast.run1.raw.base-units.csv")),
        ],
    );
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].args[0], "--import");
}

fn metrics_list() -> Vec<String> {
    metrics()
}

#[test]
fn full_mode_adds_the_set_and_keeps_the_gated_metrics() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut c = config(dir.path());
    c.mode = Mode::Full;
    c.kernel_name = Some("regex:scale".into());
    c.launch_count = Some(5);
    c.extra_metrics = vec!["smsp__inst_executed.sum".into()];
    let args = runner::ncu::profile_args(&c, &metrics(), Path::new("/w/run")).join(" ");
    assert!(
        args.starts_with("--set full --metrics sm__inst_executed.sum,"),
        "{args}"
    );
    assert!(args.contains(",smsp__inst_executed.sum "), "{args}");
    assert!(
        args.contains(
            "--kernel-name regex:scale --launch-count 5 -f --export /w/run kernels/build/graph_app"
        ),
        "{args}"
    );
}

/// One row of [`every_failure_class_has_its_message_and_hint`]: the steps
/// replayed in `mode`, and what the message and the hint must say.
struct Class {
    name: &'static str,
    mode: Mode,
    steps: Vec<Recorded>,
    message: &'static [&'static str],
    hint: &'static [&'static str],
}

/// A fast-mode run that failed, as recorded with fast mode's own command
/// line (`fixtures/h200/one-pass/fail-NAME.*`).
fn failed_fast(name: &str, exit: Exit, report: bool) -> Recorded {
    let one_pass = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/h200/one-pass");
    let pipes = format!(
        "{}{}",
        fixture(one_pass, &format!("fail-{name}.stdout")),
        fixture(one_pass, &format!("fail-{name}.stderr"))
    );
    let log = fixture(one_pass, &format!("fail-{name}.ncu.log"));
    common::steps::fast(&pipes, log.into_bytes(), exit, report)
}

#[test]
fn every_failure_class_has_its_message_and_hint() {
    let full = |log: &str, exit: Exit, report: bool| vec![profiled(log, exit, report)];
    let h200 = |name: &str| fixture(H200, name);
    // Not recordable on the H200 machine (counters open to all users): see fixtures/reported/README.md.
    let nvgpuctrperm = fixture(
        concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/reported"),
        "ncu.err-nvgpuctrperm.log",
    );
    let typo = "==ERROR== Failed to find metric regex:^sm__inst_exectued\\.(sum|min|max|avg|pct|ratio|max_rate)$";
    let profiled_then = |import: Recorded| {
        vec![
            profiled(&h200("graph_app.base.full.ncu.log"), Exit::Code(0), true),
            import,
        ]
    };
    let classes = vec![
        Class {
            name: "ncu not installed",
            mode: Mode::Full,
            steps: vec![Recorded::log("", Exit::NotFound)],
            message: &["`ncu` not found"],
            hint: &["NCUGATE_NCU", "ncugate doctor"],
        },
        Class {
            name: "the app is missing",
            mode: Mode::Full,
            steps: full(
                &fixture(REFERENCE, "logs/ncu.app-missing.stdout.log"),
                Exit::Code(1),
                false,
            ),
            message: &[
                "the app could not be started: '/tmp/nonexistent_app' does not exist or is not an executable",
            ],
            hint: &["[app] command"],
        },
        Class {
            name: "the app is missing (fast mode: ncu says so before it opens its log)",
            mode: Mode::Fast,
            steps: vec![failed_fast("app-missing", Exit::Code(1), false)],
            message: &["the app could not be started: '/tmp/nonexistent_app' does not exist"],
            hint: &["[app] command"],
        },
        Class {
            name: "the app exits non-zero: its output's tail is shown",
            mode: Mode::Full,
            steps: full(
                &h200("graph_app.base.fail-app-bad-args.ncu.log"),
                Exit::Code(1),
                false,
            ),
            message: &[
                "the app exited with code 1 under ncu",
                "for testing how a gate handles a failing app",
            ],
            hint: &["app.log", "logs: "],
        },
        Class {
            name: "the app exits non-zero (fast mode: its stderr's tail)",
            mode: Mode::Fast,
            steps: vec![failed_fast("app-bad-args", Exit::Code(1), false)],
            message: &[
                "the app exited with code 1 under ncu",
                "for testing how a gate handles a failing app",
            ],
            hint: &["app.log"],
        },
        Class {
            // ncu exits with the app's code (3) and still writes a complete report: not a pass.
            name: "the app fails after its kernels were profiled",
            mode: Mode::Full,
            steps: full(
                &h200("graph_app.base.fail-app-exit3-after-kernels.ncu.log"),
                Exit::Code(3),
                true,
            ),
            message: &["exited with code 3"],
            hint: &[],
        },
        Class {
            name: "the app fails after its kernels were profiled (fast mode)",
            mode: Mode::Fast,
            steps: vec![failed_fast("exit3", Exit::Code(3), true)],
            message: &["exited with code 3"],
            hint: &[],
        },
        Class {
            name: "an unknown metric gets the real names",
            mode: Mode::Full,
            steps: full(
                &h200("graph_app.base.fail-unknown-metric.ncu.log"),
                Exit::Code(9),
                false,
            ),
            message: &["ncu does not know the metric `sys__memory_throughput`"],
            hint: &["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"],
        },
        Class {
            name: "an unknown metric (fast mode)",
            mode: Mode::Fast,
            steps: vec![failed_fast("unknown-metric", Exit::Code(9), false)],
            message: &["ncu does not know the metric `sys__memory_throughput`"],
            hint: &["gpu__compute_memory_throughput"],
        },
        Class {
            name: "a typo in a metric name",
            mode: Mode::Full,
            steps: full(typo, Exit::Code(9), false),
            message: &["ncu does not know the metric `sm__inst_exectued"],
            hint: &["did you mean sm__inst_executed"],
        },
        Class {
            name: "no kernels profiled although ncu exits 0",
            mode: Mode::Full,
            steps: full(
                &h200("graph_app.base.fail-no-kernels.ncu.log"),
                Exit::Code(0),
                false,
            ),
            message: &[
                "ncu profiled no kernels, although it exited 0 (the app launched: 1. finish 2. produce 3. scale)",
            ],
            hint: &["kernel_name"],
        },
        Class {
            name: "no kernels profiled (reference log)",
            mode: Mode::Full,
            steps: full(
                &fixture(REFERENCE, "logs/ncu.no-kernels.stdout.log"),
                Exit::Code(0),
                false,
            ),
            message: &["profiled no kernels"],
            hint: &["kernel_name"],
        },
        Class {
            name: "no kernels profiled (fast mode)",
            mode: Mode::Fast,
            steps: vec![failed_fast("no-kernels", Exit::Code(0), false)],
            message: &[
                "ncu profiled no kernels, although it exited 0 (the app launched: 1. finish 2. produce 3. scale)",
            ],
            hint: &["kernel_name"],
        },
        Class {
            name: "performance counters not permitted",
            mode: Mode::Full,
            steps: full(&nvgpuctrperm, Exit::Code(1), false),
            message: &["ERR_NVGPUCTRPERM"],
            hint: &["NVreg_RestrictProfilingToAdminUsers=0", "root"],
        },
        Class {
            name: "a timeout",
            mode: Mode::Full,
            steps: vec![Recorded::log(
                "==PROF== Connected to process 1 (/app)",
                Exit::TimedOut(Duration::from_secs(600)),
            )],
            message: &["timed out after 600s; the app and ncu were killed (process group)"],
            hint: &["timeout"],
        },
        Class {
            name: "a crash, then a hang",
            mode: Mode::Fast,
            steps: vec![Recorded::log(
                "==PROF== Connected to process 1 (/app)\nSegmentation fault",
                Exit::HungAfterCrash(Duration::from_secs(60)),
            )],
            message: &[
                "the app crashed under ncu and the run hung: nothing was printed for 60s after the crash",
                "its last output: Segmentation fault",
            ],
            hint: &["[app] retries"],
        },
        Class {
            name: "the report file is missing",
            mode: Mode::Full,
            steps: full(
                &h200("graph_app.base.fast.run1.ncu.log"),
                Exit::Code(0),
                false,
            ),
            message: &["ncu exited 0 but wrote no report"],
            hint: &["ncu.log"],
        },
        Class {
            name: "metrics graph profiling cannot collect",
            mode: Mode::Full,
            steps: full(
                &h200("graph_app.base.graph-rejected.ncu.log"),
                Exit::Code(1),
                false,
            ),
            message: &["ncu cannot collect sm__sass_thread_inst_executed_op_dfma_pred_on.sum"],
            hint: &["graph_profiling = \"node\""],
        },
        Class {
            name: "metrics graph profiling cannot collect (fast mode)",
            mode: Mode::Fast,
            steps: vec![failed_fast("graph-rejected", Exit::Code(1), false)],
            message: &["ncu cannot collect sm__sass_thread_inst_executed_op_dfma_pred_on.sum"],
            hint: &["graph_profiling"],
        },
        Class {
            name: "the import of the report fails",
            mode: Mode::Full,
            steps: profiled_then(Recorded::log(
                "==ERROR== Failed to open the report",
                Exit::Code(1),
            )),
            message: &[
                "--import ",
                "--page raw",
                "failed (exit code 1)",
                "Failed to open the report",
            ],
            hint: &["ncu --import ", "run.ncu-rep --page raw"],
        },
        Class {
            name: "the ncu of the import is gone",
            mode: Mode::Full,
            steps: profiled_then(Recorded::log("", Exit::NotFound)),
            message: &["`ncu` not found"],
            hint: &["NCUGATE_NCU"],
        },
    ];
    for class in classes {
        let (message, hint) = error_in(class.mode, class.steps);
        for needle in class.message {
            assert!(message.contains(needle), "{}: {message}", class.name);
        }
        for needle in class.hint {
            assert!(hint.contains(needle), "{}: {hint}", class.name);
        }
    }
}

#[test]
fn a_failing_build() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut c = config(dir.path());
    c.build = Some(vec!["make".into(), "-C".into(), "kernels".into()]);
    let replay = ReplayRunner::new(
        dir.path().to_path_buf(),
        vec![Recorded::log(
            "graph_app.cu(12): error: identifier \"x\" is undefined\nmake: *** [Makefile:9] Error 2",
            Exit::Code(2),
        )],
    );
    let e = runner::build(&c, &replay).expect_err("build fails");
    assert!(
        e.to_string()
            .contains("the build failed (exit code 2): make -C kernels"),
        "{e}"
    );
    // The build's output comes apart from the message.
    assert!(!e.to_string().contains("identifier"), "{e}");
    assert_eq!(
        e.detail(),
        [
            "graph_app.cu(12): error: identifier \"x\" is undefined",
            "make: *** [Makefile:9] Error 2"
        ]
    );
}

#[test]
fn check_gates_a_replayed_profile_against_a_baseline() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("work");
    // The baseline: the three recorded base runs.
    let gate = common::Gate::new();
    gate.base_baseline(&["--kernel-key", "function"]);
    let steps = |variant: &str| {
        vec![recorded_fast(
            H200,
            &format!("graph_app.{variant}"),
            Exit::Code(0),
            true,
        )]
    };
    let check = |variant: &str| {
        let replay = ReplayRunner::new(out.join("run"), steps(variant));
        let config = common::profiled_check(
            gate.path("baseline.json"),
            config(&out),
            Outputs {
                junit: Some(dir.path().join("junit.xml")),
                ..Outputs::default()
            },
        );
        common::execute(&Config::Check(config), &replay)
    };
    assert_eq!(check("base.fast.run2"), 0);
    assert_eq!(check("strided.fast"), 1);
    common::assert_valid_junit(&dir.path().join("junit.xml"));
    assert_eq!(check("fp64.fast"), 1);
}

#[test]
fn a_real_timeout_kills_the_whole_process_group() {
    let runner = ncugate::runner::process::RealRunner;
    let dir = tempfile::tempdir().expect("tmp");
    let marker = dir.path().join("survived");
    let script = format!(
        "(sleep 5; touch {}) & echo started; sleep 60",
        marker.display()
    );
    let mut spec = CommandSpec::new("sh", ["-c", script.as_str()]);
    // 3 s: time enough for `sh` to start and print even on a loaded CI machine.
    spec.timeout = Some(Duration::from_secs(3));
    let start = std::time::Instant::now();
    let mut lines = Vec::new();
    let done = runner.run(&spec, &mut |l| lines.push(l.to_string()));
    assert_eq!(done.exit, Exit::TimedOut(Duration::from_secs(3)));
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(lines, ["started"]);
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        !marker.exists(),
        "the background child of the app survived the timeout"
    );
}

/// A run whose app said it crashed and then printed nothing (seen on an
/// H100: a JAX app printed `Segmentation fault` under ncu and the run hung
/// until its timeout) ends after the crash stall, its process group killed;
/// a run that only mentions a crash, or goes on printing after one, ends
/// as it ends.
#[test]
fn a_run_that_hangs_after_a_crash_ends_after_the_crash_stall() {
    let runner = ncugate::runner::process::RealRunner;
    let dir = tempfile::tempdir().expect("tmp");
    let marker = dir.path().join("survived");
    let run = |script: &str| {
        let mut spec = CommandSpec::new("sh", ["-c", script]);
        spec.timeout = Some(Duration::from_secs(60));
        spec.crash_stall = Some(Duration::from_secs(2));
        let start = std::time::Instant::now();
        let done = runner.run(&spec, &mut |_| {});
        (done, start.elapsed())
    };
    let hung = format!(
        "(sleep 6; touch {}) & echo 'Segmentation fault'; sleep 60",
        marker.display()
    );
    let (done, took) = run(&hung);
    assert_eq!(done.exit, Exit::HungAfterCrash(Duration::from_secs(2)));
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert_eq!(done.lines, ["Segmentation fault"]);
    std::thread::sleep(Duration::from_secs(5));
    assert!(!marker.exists(), "a child of the app survived");
    // Only a mention: the app's own pause is its own.
    let (done, _) = run("echo 'handler for Segmentation fault installed'; sleep 3; echo done");
    assert_eq!(done.exit, Exit::Code(0));
    // A crash line, and the app's output after it: still alive, so not
    // ended, even when it then pauses.
    let (done, _) = run("echo 'Aborted (core dumped)'; sleep 1; echo 1; sleep 3; echo done");
    assert_eq!(done.exit, Exit::Code(0));
    assert_eq!(done.lines.len(), 3);
    // ncu's own lines after the crash leave it the last word.
    let (done, took) = run(
        "echo 'Segmentation fault'; echo '==ERROR== The application returned an error code (11).'; sleep 60",
    );
    assert_eq!(done.exit, Exit::HungAfterCrash(Duration::from_secs(2)));
    assert!(took < Duration::from_secs(20), "{took:?}");
}

#[test]
fn a_read_output_streams_to_the_reader_and_the_rest_is_kept() {
    let script = "echo a,b; echo err >&2; echo c,d; exit 3";
    let spec = CommandSpec::new("sh", ["-c", script]);
    let real = ncugate::runner::process::RealRunner;
    // The replay goes through the default: a temporary stdout_to file.
    let replay = ReplayRunner::new(
        PathBuf::from("."),
        vec![Recorded {
            lines: vec!["err".into()],
            exit: Exit::Code(3),
            stdout_file: Some(b"a,b\nc,d\n".to_vec()),
            files: vec![],
        }],
    );
    for runner in [&real as &dyn ProcessRunner, &replay] {
        let mut read = String::new();
        let done = runner.run_reading(&spec, &mut |out| {
            out.read_to_string(&mut read).expect("read");
        });
        assert_eq!(read, "a,b\nc,d\n");
        assert_eq!(done.lines, ["err"]);
        assert_eq!(done.exit, Exit::Code(3));
    }
    let missing = CommandSpec::new("/nonexistent/ncu", ["--import", "r.ncu-rep"]);
    let done = real.run_reading(&missing, &mut |_| panic!("nothing to read"));
    assert_eq!(done.exit, Exit::NotFound);
}

#[test]
fn a_real_process_reports_its_exit_and_output() {
    let runner = ncugate::runner::process::RealRunner;
    let done = runner.run(
        &CommandSpec::new("sh", ["-c", "echo out; echo err >&2; exit 3"]),
        &mut |_| {},
    );
    assert_eq!(done.exit, Exit::Code(3));
    let mut lines = done.lines.clone();
    lines.sort();
    assert_eq!(lines, ["err", "out"]);
    assert_eq!(
        runner
            .run(
                &CommandSpec::new("/nonexistent/ncu", ["--version"]),
                &mut |_| {}
            )
            .exit,
        Exit::NotFound
    );
}

#[test]
fn a_real_timeout_kills_descendants_that_left_the_process_group() {
    // ncu starts the app in a session of its own; setsid does the same here.
    let runner = ncugate::runner::process::RealRunner;
    let dir = tempfile::tempdir().expect("tmp");
    let marker = dir.path().join("survived");
    let script = format!(
        "setsid sh -c 'sleep 5; touch {}' & echo started; sleep 60",
        marker.display()
    );
    let mut spec = CommandSpec::new("sh", ["-c", script.as_str()]);
    spec.timeout = Some(Duration::from_secs(3));
    let mut lines = Vec::new();
    let done = runner.run(&spec, &mut |l| lines.push(l.to_string()));
    assert_eq!(done.exit, Exit::TimedOut(Duration::from_secs(3)));
    // "started" is printed after the setsid child exists: the test is not vacuous.
    assert_eq!(lines, ["started"]);
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        !marker.exists(),
        "a descendant in its own session survived the timeout"
    );
}

#[test]
fn check_with_a_sanitizer_section_runs_that_stage_too() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("work");
    let gate = common::Gate::new();
    gate.base_baseline(&["--kernel-key", "function"]);
    let mut sanitizer_run = Recorded::log("========= ERROR SUMMARY: 10 errors", Exit::Code(86));
    let xml = common::h200_bytes("memory/bad_app.memcheck.xml");
    sanitizer_run
        .files
        .push(("sanitizer/sanitizer.memcheck.xml".into(), xml));
    let mut profile_step = recorded_fast(H200, "graph_app.base.fast.run2", Exit::Code(0), true);
    for (name, _) in &mut profile_step.files {
        *name = format!("run/{name}");
    }
    let replay = ReplayRunner::new(out.clone(), vec![profile_step, sanitizer_run]);
    let runner_config = config(&out);
    let sanitizer = ncugate::sanitizer::run::SanitizerConfig {
        tools: vec![ncugate::sanitizer::Tool::Memcheck],
        leak_check: true,
        print_limit: 10_000,
        allow: vec![],
        program: "compute-sanitizer".into(),
        app: runner_config.app.clone(),
        env: vec![],
        workdir: PathBuf::from("."),
        timeout: Duration::from_secs(600),
        out_dir: out.join("sanitizer"),
    };
    let config = CheckConfig {
        sanitizer: Some(sanitizer),
        ..common::profiled_check(
            gate.path("baseline.json"),
            runner_config,
            Outputs {
                json: Some(dir.path().join("report.json")),
                ..Outputs::default()
            },
        )
    };
    // The metrics pass; the sanitizer's findings turn the stage red.
    assert_eq!(common::execute(&Config::Check(config), &replay), 1);
    let seen = replay.seen.lock().expect("lock").clone();
    let args = seen[1].args.join(" ");
    assert!(
        args.starts_with("--tool memcheck --leak-check full --xml --save ")
            && args.contains(
                "--error-exitcode 86 --target-processes all kernels/build/graph_app --iters 3"
            ),
        "{args}"
    );
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("report.json")).expect("report"),
    )
    .expect("JSON");
    assert!(
        report["rules"]
            .as_array()
            .is_some_and(|r| r.iter().all(|x| x["status"] == "pass"))
    );
    assert_eq!(report["sanitizer"][0]["api"], "cuMemFreeAsync");
    assert_eq!(report["outcome"], "regression");
}

#[test]
fn the_explain_run_selects_the_launch_the_check_chose() {
    use runner::explain::{Launch, profile_args};
    let dir = tempfile::tempdir().expect("tmp");
    let mut c = config(dir.path());
    // The third launch of `scale`, the eighth of the run.
    let launch = Launch {
        ordinal: 2,
        position: 7,
    };
    let args = profile_args(&c, "scale", launch, Path::new("/w/e")).join(" ");
    assert!(
        args.contains("--config-file off -k regex:^scale$ --launch-skip 2 --launch-count 1 "),
        "{args}"
    );
    // A check that skipped launches itself: its filter, its skip plus the
    // launch's place in the export.
    c.kernel_name = Some("regex:^s".into());
    c.launch_skip = Some(10);
    let args = profile_args(&c, "scale", launch, Path::new("/w/e")).join(" ");
    assert!(
        args.contains("--config-file off -k regex:^s --launch-skip 17 --launch-count 1 "),
        "{args}"
    );
    c.kernel_name = None;
    let args = profile_args(&c, "scale", launch, Path::new("/w/e")).join(" ");
    assert!(
        args.contains("--config-file off --launch-skip 17 --launch-count 1 "),
        "{args}"
    );
}

/// The recorded base run with only its first `launches` launches in ncu's
/// log, as `launch_count = launches` makes ncu write it: in `dir`, named `cut`.
fn cut_run(dir: &Path, launches: usize) {
    let name = "graph_app.base.fast.run2";
    for suffix in ["stdout.log", "stderr.log"] {
        std::fs::copy(
            Path::new(H200).join(format!("{name}.{suffix}")),
            dir.join(format!("cut.{suffix}")),
        )
        .expect("copy");
    }
    let log = fixture(H200, &format!("{name}.ncu.log"));
    let lines: Vec<&str> = log.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.starts_with("\"ID\""))
        .expect("a CSV header");
    let kept = &lines[..header + 2 + launches];
    std::fs::write(dir.join("cut.ncu.log"), kept.join("\n") + "\n").expect("write");
}

#[test]
fn a_capture_limit_that_cut_the_run_short_is_said_and_a_baseline_kernel_outside_it_is_an_error() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("work");
    let gate = common::Gate::new();
    gate.base_baseline(&["--kernel-key", "function"]);
    let check = |count: u64, launches: usize| {
        cut_run(dir.path(), launches);
        let step = recorded_fast(
            dir.path().to_str().expect("utf-8"),
            "cut",
            Exit::Code(0),
            true,
        );
        let replay = ReplayRunner::new(out.join("run"), vec![step]);
        let mut runner = config(&out);
        runner.launch_count = Some(count);
        let outputs = Outputs {
            json: Some(dir.path().join("report.json")),
            ..Outputs::default()
        };
        let config = common::profiled_check(gate.path("baseline.json"), runner, outputs);
        let (code, stdout) = ncugate::commands::capture_stdout(|| {
            ncugate::commands::execute(&Config::Check(config), &replay)
        });
        (code, stdout)
    };
    // The window held the first five launches: `finish` once, not 3 times as
    // in each baseline run; its other launches may have come after it.
    let (code, _) = check(5, 5);
    assert_eq!(code, 2);
    let report = std::fs::read_to_string(dir.path().join("report.json")).expect("report");
    assert!(
        report.contains("kernel `finish` of the baseline is not among the 5 launches"),
        "{report}"
    );
    // The window held the first two launches: `finish` may have run after it.
    let (code, stdout) = check(2, 2);
    assert_eq!(code, 2, "{stdout}");
    let report = std::fs::read_to_string(dir.path().join("report.json")).expect("report");
    assert!(
        report.contains("kernel `finish` of the baseline is not among the 2 launches ncu profiled as often as in the baseline (launch_count = 2, launch_skip = 0)"),
        "{report}"
    );
    // Every launch of the run fits the window, and it was full: said, and judged.
    let (code, stdout) = check(9, 9);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("ncu profiled 9 launches, its launch_count limit"),
        "{stdout}"
    );
    // A window the run did not fill says nothing.
    let (code, stdout) = check(100, 9);
    assert_eq!(code, 0, "{stdout}");
    assert!(!stdout.contains("launch_count"), "{stdout}");
}

/// An ncu that writes the compressed `.ncu-repz` for `--export run` (the
/// default of Nsight Compute 2026.3, as its documentation says): the run's
/// report is that file, not a missing `run.ncu-rep`.
#[test]
fn a_run_whose_ncu_writes_a_ncu_repz_keeps_that_report() {
    let mut step = recorded_fast(H200, "graph_app.base.fast.run1", Exit::Code(0), false);
    step.files
        .push(("run.ncu-repz".into(), b"(a stand-in report)".to_vec()));
    let (result, _, _dir) = profile(Mode::Fast, vec![step]);
    let artifacts = result.expect("profiled: ncu wrote its report");
    assert!(artifacts.dir.join("run.ncu-repz").exists());
    // Without either report the run is the failure it always was.
    let step = recorded_fast(H200, "graph_app.base.fast.run1", Exit::Code(0), false);
    let (result, _, _dir) = profile(Mode::Fast, vec![step]);
    assert!(result.is_err(), "no report: {result:?}");
}
