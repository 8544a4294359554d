//! Shared GPUs, replayed from the H200 recordings in `fixtures/h200/shared/`:
//! the reference app and a PyTorch CUDA-graph MLP profiled on a quiet GPU
//! and beside a bf16 GEMM loop in another process. An unchanged workload
//! beside the neighbour passes, with the rules the neighbour can move shown
//! as not gated; a regressed one still fails on the counters it cannot
//! move; `shared_gpu = "refuse"` exits 2, `"gate"` gates as before; every
//! report format says the GPU was shared.

use crate::common::{self, Gate, H200};
use ncugate::config::{BaselinePlace, CheckConfig, RecordConfig, Source};
use ncugate::report::Outputs;
use ncugate::runner::process::Exit;
use ncugate::runner::replay::{Recorded, ReplayRunner};
use ncugate::shared_gpu::{DeviceLook, GpuProcess, Phase, Policy, Sample, Signal};
use std::path::Path;

fn shared(file: &str) -> String {
    format!("shared/{file}")
}

/// `baseline.json` from the app's quiet runs (`graph_app` ×3 or `torch_mlp` ×2).
fn quiet_baseline(gate: &Gate, app: &str) {
    let runs = if app == "graph_app" { 3 } else { 2 };
    let mut record = gate.record();
    for i in 1..=runs {
        let name = format!("quiet{i}.csv");
        gate.h200(&shared(&format!("{app}.base.quiet.{i}.raw.csv")), &name);
        record = record.input(name);
    }
    record.output("baseline.json").run().code(0);
}

/// `ncugate check` of one recording, with `args` after it.
fn check(gate: &Gate, recording: &str, args: &[&str]) -> common::Outcome {
    gate.h200(&shared(&format!("{recording}.raw.csv")), "run.csv");
    gate.check()
        .baseline("baseline.json")
        .input("run.csv")
        .args(&["--show", "all"])
        .args(args)
        .run()
}

#[test]
fn the_baseline_keeps_each_kernels_clock_and_cycles() {
    let gate = Gate::new();
    quiet_baseline(&gate, "graph_app");
    let baseline = gate.json("baseline.json");
    let gpu = &baseline["gpu"];
    let hz = gpu["sm_clock_hz"].as_f64().expect("an SM clock");
    assert!((1.9e9..2.0e9).contains(&hz), "{gpu}");
    let finish = gpu["kernels"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(k, _)| k.contains("finish"))
        .expect("finish")
        .1;
    let cycles = finish["cycles"].as_f64().unwrap();
    assert!((3.4e5..3.6e5).contains(&cycles), "{finish}");
    assert!(gpu.get("shared").is_none(), "{gpu}");
    // The clock metrics are the GPU's record, not gated metrics of the baseline.
    assert!(
        baseline["total"]["metrics"]
            .get("gpc__cycles_elapsed.max")
            .is_none()
    );
}

#[test]
fn an_unchanged_app_beside_a_neighbour_passes_and_says_what_was_not_gated() {
    let gate = Gate::new();
    quiet_baseline(&gate, "graph_app");
    // Today's behaviour (`gate`): the durations and DRAM bytes fail.
    check(&gate, "graph_app.base.shared.1", &["--shared-gpu", "gate"])
        .code(1)
        .stdout_has("every rule gated anyway");
    for i in 1..=3 {
        check(&gate, &format!("graph_app.base.shared.{i}"), &[])
            .code(0)
            .stdout_has("shared GPU: SM clock")
            .stdout_has("in the baseline (-25%: another process, a power or a thermal limit)")
            .stdout_has("not gated (SM clock")
            .stdout_has("warning");
    }
    // The neighbour gone: a quiet GPU, nothing said.
    let after = check(&gate, "graph_app.base.after", &[]);
    after.code(0);
    assert!(!after.stdout.contains("shared GPU"), "{}", after.stdout);
}

#[test]
fn regressions_beside_a_neighbour_still_fail_on_the_counters_it_cannot_move() {
    let gate = Gate::new();
    quiet_baseline(&gate, "graph_app");
    // A redundant graph node: one more launch of a kernel, more instructions.
    check(&gate, "graph_app.redundant-node.shared", &[])
        .code(1)
        .stdout_has("launch count")
        .stdout_has("shared GPU:");
    // A stray double literal: FP64 instructions appear.
    let fp64 = check(&gate, "graph_app.fp64.shared", &[]);
    fp64.code(1).stdout_has("sm__inst_executed_pipe_fp64.sum");
    // Strided loads: 8x the global-load sectors.
    check(&gate, "graph_app.strided.shared", &[])
        .code(1)
        .stdout_has("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum");
}

#[test]
fn refuse_exits_2_with_the_evidence_and_the_setting_comes_from_any_layer() {
    let gate = Gate::new();
    quiet_baseline(&gate, "graph_app");
    check(
        &gate,
        "graph_app.base.shared.2",
        &["--shared-gpu", "refuse"],
    )
    .one_clear_error("the GPU was shared during this check (SM clock")
    .stderr_has("hint: run on a GPU no other process uses");
    gate.h200(&shared("graph_app.base.shared.2.raw.csv"), "run.csv");
    let args = ["check", "--baseline", "baseline.json", "--input", "run.csv"];
    gate.run_with(&args, &[("NCUGATE_SHARED_GPU", "refuse")])
        .code(2);
    gate.write("ncugate.toml", "[gate]\nshared_gpu = \"refuse\"\n");
    gate.run(&[&args[..], &["--config", "ncugate.toml"]].concat())
        .code(2);
    // The flag over the file.
    gate.run(
        &[
            &args[..],
            &["--config", "ncugate.toml", "--shared-gpu", "warn"],
        ]
        .concat(),
    )
    .code(0);
    // A quiet run is not refused.
    check(&gate, "graph_app.base.after", &["--shared-gpu", "refuse"]).code(0);
}

#[test]
fn every_report_format_says_the_gpu_was_shared() {
    let gate = Gate::new();
    quiet_baseline(&gate, "graph_app");
    gate.h200(&shared("graph_app.base.shared.3.raw.csv"), "run.csv");
    let out = gate
        .check()
        .baseline("baseline.json")
        .input("run.csv")
        .args(&["--format", "github"])
        .json("r.json")
        .junit("junit.xml")
        .markdown("r.md")
        .html("html")
        .env("GITHUB_STEP_SUMMARY", "summary.md")
        .env("GITHUB_OUTPUT", "output.txt")
        .run();
    out.code(0)
        .stdout_has("::warning")
        .stdout_has("not gated (SM clock");
    let json = gate.json("r.json");
    common::assert_valid_json("report.v2.json", &json);
    let s = &json["shared_gpu"];
    assert_eq!(s["policy"], "warn");
    assert_eq!(s["signals"], serde_json::json!(["clock_drop"]), "{s}");
    assert!(s["not_gated"].as_u64().unwrap() >= 6, "{s}");
    assert!(s["over_allowance"].as_u64().unwrap() >= 1, "{s}");
    let not_gated: Vec<&serde_json::Value> = json["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r.get("not_gated").is_some())
        .collect();
    assert_eq!(not_gated.len() as u64, s["not_gated"].as_u64().unwrap());
    assert!(not_gated.iter().all(|r| {
        let m = r["metric"].as_str().unwrap();
        m.starts_with("gpu__time_duration") || m.starts_with("dram__")
    }));
    // Each one beyond its allowance is a warning that says why, as data too.
    let downgraded: Vec<&&serde_json::Value> = not_gated
        .iter()
        .filter(|r| r.get("downgraded").is_some())
        .collect();
    assert_eq!(
        downgraded.len() as u64,
        s["over_allowance"].as_u64().unwrap()
    );
    assert!(downgraded.iter().all(|r| {
        r["status"] == "warn"
            && r["downgraded"]["reason"] == "shared_gpu"
            && r["message"].as_str().unwrap().starts_with(&format!(
                "not gated ({}): ",
                r["downgraded"]["neighbour"].as_str().unwrap()
            ))
    }));
    // The instruction rules were gated.
    assert!(json["rules"].as_array().unwrap().iter().any(|r| {
        r["metric"] == "sm__inst_executed.sum"
            && r.get("not_gated").is_none()
            && r["status"] == "pass"
    }));
    for file in ["junit.xml", "r.md", "html/index.html", "summary.md"] {
        let text = gate.read(file);
        assert!(text.contains("shared GPU"), "{file}:\n{text}");
        assert!(text.contains("not gated"), "{file}:\n{text}");
        assert!(text.contains("(detected by clock drop)"), "{file}:\n{text}");
    }
    common::assert_valid_junit(&gate.path("junit.xml"));
}

#[test]
fn a_pytorch_mlp_beside_a_neighbour_passes_and_a_wider_layer_still_fails() {
    let gate = Gate::new();
    quiet_baseline(&gate, "torch_mlp");
    for i in 1..=2 {
        check(&gate, &format!("torch_mlp.base.shared.{i}"), &[])
            .code(0)
            .stdout_has("shared GPU: SM clock");
    }
    check(&gate, "torch_mlp.base.shared.1", &["--shared-gpu", "gate"]).code(1);
    check(&gate, "torch_mlp.wider.shared", &[])
        .code(1)
        .stdout_has("sm__inst_executed.sum");
}

/// What NVML showed during the shared runs (`neighbour.apps.csv`: the GEMM
/// loop, pid 1791), with the profiled app (pid 1866 in the ncu log) as
/// ncugate's probe marks it: its own.
fn neighbour_samples() -> Vec<Sample> {
    vec![Sample {
        utilization_pct: Some(100),
        processes: vec![
            GpuProcess {
                pid: 1791,
                device: 0,
                name: "python3".into(),
                memory_bytes: Some(1130 << 20),
                ..GpuProcess::default()
            },
            GpuProcess {
                pid: 1866,
                device: 0,
                name: "graph_app".into(),
                memory_bytes: None,
                ours: true,
                ..GpuProcess::default()
            },
        ],
        ..Sample::default()
    }]
}

/// One profiled run of a shared recording: ncu's output, then the import of its raw page.
fn replayed(recording: &str) -> Vec<Recorded> {
    let dir = Path::new(H200).join("shared");
    let log = std::fs::read_to_string(dir.join(format!("{recording}.log"))).expect("the ncu log");
    let csv = std::fs::read(dir.join(format!("{recording}.raw.csv"))).expect("the raw page");
    vec![
        common::steps::profiled(&log, Exit::Code(0), true),
        common::steps::imported(csv),
    ]
}

/// The reference app as `ncugate.toml` runs it, its artifacts under `out`.
fn reference_app(out: &Path) -> ncugate::runner::RunnerConfig {
    common::runner_config(
        &["kernels/build/graph_app", "--iters", "3"],
        Path::new("."),
        out,
    )
}

fn profile_source(out: &Path) -> Source {
    Source::Profile {
        runner: Box::new(reference_app(out)),
        runs: 1,
        quiet: true,
    }
}

#[test]
fn a_profiled_check_names_the_neighbour_nvml_saw() {
    let gate = Gate::new();
    quiet_baseline(&gate, "graph_app");
    let out = gate.path("work");
    let replay = ReplayRunner::new(out.join("run"), replayed("graph_app.base.shared.1"))
        .with_gpu(neighbour_samples());
    let config = CheckConfig {
        shared_gpu: Policy::Warn,
        ..common::profiled_check(
            gate.path("baseline.json"),
            reference_app(&out),
            Outputs::default(),
        )
    };
    let report = ncugate::commands::check(&config, &replay).expect("a report");
    assert_eq!(report.exit_code(), 0, "{:#?}", report.rules);
    let s = report.shared_gpu.expect("shared");
    assert!(
        s.evidence.starts_with(
            "GPU shared with pid 1791 python3, 1.2 GB; utilization up to 100%; SM clock 14"
        ),
        "{}",
        s.evidence
    );
    assert_eq!(s.neighbours.len(), 1);
    // In another PID namespace none of NVML's pids is ncugate's: no neighbour, a note.
    let foreign: Vec<Sample> = neighbour_samples()
        .into_iter()
        .map(|mut s| {
            s.processes.iter_mut().for_each(|p| p.ours = false);
            s
        })
        .collect();
    let replay_foreign =
        ReplayRunner::new(out.join("run"), replayed("graph_app.base.after")).with_gpu(foreign);
    let quiet = ncugate::commands::check(&config, &replay_foreign).expect("a report");
    assert_eq!(quiet.shared_gpu, None);
    assert!(
        quiet
            .notes
            .iter()
            .any(|n| n.text.contains("counted against ncugate's own processes")),
        "{:?}",
        quiet.notes
    );
    // Every profiled run asks ncu for the SM clock and the elapsed cycles too.
    let seen = replay.seen.lock().unwrap();
    let metrics = seen[0]
        .args
        .iter()
        .find(|a| a.contains("sm__inst_executed.sum"))
        .unwrap();
    assert!(
        metrics.contains("sm__cycles_elapsed.avg.per_second"),
        "{metrics}"
    );
    assert!(metrics.contains("gpc__cycles_elapsed.max"), "{metrics}");
}

/// One look from inside a PID namespace, in the shape the probe records
/// (constructed, not recorded: the numbers of the H100 run beside a
/// device-to-device copy loop, whose host pid 1458 names nothing in the
/// container; the app, host pid 2101, is not ncugate's by pid either).
fn namespaced(phase: Phase, own: u32, busy: u32, app: bool) -> Sample {
    let process = |pid, bytes| GpuProcess {
        pid,
        memory_bytes: Some(bytes),
        hidden: true,
        ..GpuProcess::default()
    };
    let mut processes = vec![process(1458, 4_800_000_000)];
    if app {
        processes.push(process(2101, 1_000_000_000));
    }
    let used: u64 = 629_145_600 + processes.iter().filter_map(|p| p.memory_bytes).sum::<u64>();
    Sample {
        utilization_pct: Some(busy),
        processes,
        phase,
        devices: vec![DeviceLook {
            device: 0,
            memory_used_bytes: Some(used),
            gpu_pct: Some(busy),
            memory_pct: Some(busy),
            mps_clients: None,
        }],
        own_cuda_processes: Some(own),
        mps_control: None,
    }
}

#[test]
fn a_neighbour_seen_from_a_container_is_counted_and_named_as_not_visible() {
    let gate = Gate::new();
    quiet_baseline(&gate, "graph_app");
    let out = gate.path("work");
    let config = CheckConfig {
        shared_gpu: Policy::Warn,
        ..common::profiled_check(
            gate.path("baseline.json"),
            reference_app(&out),
            Outputs::default(),
        )
    };
    let looks = vec![
        namespaced(Phase::Before, 0, 92, false),
        namespaced(Phase::Before, 0, 95, false),
        namespaced(Phase::During, 1, 100, true),
        namespaced(Phase::During, 1, 100, true),
    ];
    let replay =
        ReplayRunner::new(out.join("run"), replayed("graph_app.base.after")).with_gpu(looks);
    let report = ncugate::commands::check(&config, &replay).expect("a report");
    assert_eq!(report.exit_code(), 0, "{:#?}", report.rules);
    let s = report.shared_gpu.expect("a shared GPU");
    assert_eq!(
        s.signals,
        [
            Signal::ProcessCount,
            Signal::MemoryBeyondOwn,
            Signal::ActivityWhileIdle
        ]
    );
    assert!(
        s.evidence.starts_with(
            "GPU shared with another process, pid not visible from this container, 4.8 GB"
        ),
        "{}",
        s.evidence
    );
    assert!(
        report
            .rules
            .iter()
            .any(|r| r.metric.starts_with("dram__bytes") && r.downgrade.is_some()),
        "{:#?}",
        report.rules
    );
    // The app alone in the container: its host pid is no neighbour.
    let alone = vec![
        namespaced(Phase::Before, 0, 0, false),
        namespaced(Phase::Before, 0, 0, false),
        namespaced(Phase::During, 1, 100, true),
        namespaced(Phase::During, 1, 100, true),
    ]
    .into_iter()
    .map(|mut s| {
        s.processes.retain(|p| p.pid != 1458);
        if let Some(d) = s.devices.first_mut() {
            d.memory_used_bytes = d.memory_used_bytes.map(|b| b - 4_800_000_000);
        }
        s
    })
    .collect();
    let replay =
        ReplayRunner::new(out.join("run"), replayed("graph_app.base.after")).with_gpu(alone);
    let report = ncugate::commands::check(&config, &replay).expect("a report");
    assert_eq!(report.exit_code(), 0);
    assert_eq!(report.shared_gpu, None);
}

#[test]
fn a_baseline_recorded_beside_a_neighbour_is_marked_or_refused() {
    let gate = Gate::new();
    let out = gate.path("work");
    let record = |policy: Policy| {
        let replay = ReplayRunner::new(out.join("run"), replayed("graph_app.base.shared.1"))
            .with_gpu(neighbour_samples());
        let config = RecordConfig {
            source: profile_source(&out),
            details: vec![],
            thresholds: ncugate::rules::ThresholdsSource::BuiltIn,
            kernel_key: Default::default(),
            extra_metrics: vec![],
            output: BaselinePlace::File(gate.path("shared.json")),
            shared_gpu: policy,
            ncu: "ncu".into(),
            import_with_ncu: false,
            source_pages: vec![],
            profile_sources: false,
        };
        ncugate::commands::record(&config, &replay)
    };
    let refused = record(Policy::Refuse).expect_err("refused");
    assert!(
        refused
            .to_string()
            .contains("while the baseline was recorded"),
        "{refused}"
    );
    assert!(!gate.path("shared.json").exists());
    let said = record(Policy::Warn).expect("recorded");
    assert!(
        said.notes
            .iter()
            .any(|n| n.text.contains("GPU shared with pid 1791 python3")),
        "{:?}",
        said.notes
    );
    let baseline = gate.json("shared.json");
    assert_eq!(
        baseline["gpu"]["shared"],
        "GPU shared with pid 1791 python3, 1.2 GB"
    );
    assert_eq!(baseline["gpu"]["neighbours"][0]["pid"], 1791);
    // A check against it says so.
    gate.h200(&shared("graph_app.base.shared.2.raw.csv"), "run.csv");
    gate.check()
        .baseline("shared.json")
        .input("run.csv")
        .run()
        .code(0)
        .stdout_has("the baseline was recorded on a shared GPU (GPU shared with pid 1791 python3");
}

#[test]
fn a_cycles_rule_gates_compute_bound_kernels_through_a_neighbour() {
    let gate = Gate::new();
    let rule = "\n[[rule]]\nmetric = \"gpc__cycles_elapsed.max\"\nkernels = \"regex:nvjet\"\nworse = \"higher\"\nmax_change = \"15%\"\nenvironment = \"deterministic\"\nwhy = \"the GEMMs take more cycles\"\n";
    let text = std::fs::read_to_string(Path::new(common::THRESHOLDS).join("default.toml")).unwrap();
    gate.write("rules.toml", format!("{text}{rule}"));
    for i in 1..=2 {
        gate.h200(
            &shared(&format!("torch_mlp.base.quiet.{i}.raw.csv")),
            &format!("quiet{i}.csv"),
        );
    }
    gate.record()
        .thresholds("rules.toml")
        .output("baseline.json")
        .input("quiet1.csv")
        .input("quiet2.csv")
        .run()
        .code(0);
    // Beside the neighbour: the GEMMs' cycles within 3%, gated and passing.
    check(
        &gate,
        "torch_mlp.base.shared.1",
        &["--thresholds", "rules.toml", "--json", "r.json"],
    )
    .code(0);
    let json = gate.json("r.json");
    let gated: Vec<&serde_json::Value> = json["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == "gpc__cycles_elapsed.max")
        .collect();
    assert_eq!(gated.len(), 2, "{gated:?}");
    assert!(
        gated
            .iter()
            .all(|r| r["status"] == "pass" && r.get("not_gated").is_none()),
        "{gated:?}"
    );
    // Twice the hidden width: the GEMMs take more cycles, beside the neighbour too.
    check(
        &gate,
        "torch_mlp.wider.shared",
        &["--thresholds", "rules.toml"],
    )
    .code(1)
    .stdout_has("the GEMMs take more cycles");
}
