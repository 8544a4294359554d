//! Trace mode offline: the stand-in ncu fails with ncu's ERR_NVGPUCTRPERM
//! text (fixtures/reported), and a stand-in app writes, where the audit
//! library would, a kernel trace of fixtures/trace-standin (written by hand
//! in the library's format until a GPU recording replaces it: see that
//! folder's README). A check in trace mode gates the launch structure,
//! lists every metric rule as not gated, and says DEGRADED in every format.

use crate::common::{self, Gate};

const STANDIN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/trace-standin");
/// Traces recorded on an H100 by the audit library (fixtures/h100/kernel-trace/README.md).
const RECORDED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/h100/kernel-trace");
const NVGPUCTRPERM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/reported/ncu.err-nvgpuctrperm.log"
);

/// The label a passing trace-mode check's headline carries (the count after it).
const DEGRADED: &str = "PASS (degraded: performance counters locked — launch structure only,";

/// A gate with the baseline of the reference app's three recorded runs
/// (CSV: no mangled names), the locked ncu, the stand-in app and library.
fn locked(gate: &Gate) -> String {
    gate.base_baseline(&[]);
    let text = std::fs::read_to_string(NVGPUCTRPERM).expect("the reported log");
    let ncu = gate.ncu("locked-ncu").fail(1, text.trim_end()).install();
    gate.write(
        "trace-app",
        "#!/bin/sh\n# Stand-in app: leaves the trace named by $1 where the audit library would.\ncp \"$1\" \"$NCUGATE_AUDIT_OUT\"\n",
    );
    make_executable(&gate.path("trace-app"));
    gate.write(
        "libncugate_audit.so",
        "stand-in: the stand-in app does not load it",
    );
    ncu
}

fn make_executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// `check --locked-counters MODE`, the app to come last ([`app`]).
fn check<'g>(gate: &'g Gate, ncu: &str, mode: &str) -> common::Ncugate<'g> {
    gate.check()
        .baseline("baseline.json")
        .ncu(ncu)
        .args(&["--locked-counters", mode])
        .env("NCUGATE_AUDIT_LIB", gate.path("libncugate_audit.so"))
}

/// The stand-in app whose trace is `trace`: its command line.
fn app(gate: &Gate, trace: &str) -> [String; 2] {
    [
        gate.path("trace-app").display().to_string(),
        format!("{STANDIN}/{trace}"),
    ]
}

#[test]
fn an_unchanged_launch_structure_passes_degraded_in_every_format() {
    let gate = Gate::new();
    let ncu = locked(&gate);
    let out = check(&gate, &ncu, "trace")
        .json("report.json")
        .junit("junit.xml")
        .markdown("report.md")
        .html("report.html")
        .arg("--format")
        .arg("github")
        .app(
            &app(&gate, "graph_app.base.trace.json")
                .each_ref()
                .map(String::as_str),
        )
        .run_as_github_step();
    out.code(0)
        .stdout_has(DEGRADED)
        .stdout_has("metric checks not gated (counters locked)")
        .stdout_has("not gated: counters locked (ERR_NVGPUCTRPERM): trace mode")
        .stdout_has("::warning title=ncugate DEGRADED::PASS (degraded: performance counters locked")
        .stdout_has("by their demangled function names")
        .stdout_has("traced GPU time per launch (information only, never gated");
    let json = gate.json("report.json");
    common::assert_valid_json("report.v2.json", &json);
    assert_eq!(json["outcome"], "pass");
    assert_eq!(json["degraded"]["mode"], "trace");
    let rules = json["rules"].as_array().expect("rules");
    assert!(!rules.is_empty());
    for r in rules {
        assert_eq!(r["status"], "skipped", "{r}");
        assert_eq!(
            r["not_gated"],
            "counters locked (ERR_NVGPUCTRPERM): trace mode"
        );
    }
    let structure = json["structure"].as_array().expect("structure");
    assert_eq!(structure.len(), 3, "{structure:?}");
    assert!(structure.iter().all(|s| s["status"] == "pass"));
    let junit = gate.read("junit.xml");
    assert!(
        junit.contains(
            "<skipped message=\"not gated: counters locked (ERR_NVGPUCTRPERM): trace mode\""
        ),
        "{junit}"
    );
    assert!(junit.contains("name=\"degraded\""), "{junit}");
    let md = gate.read("report.md");
    assert!(
        md.contains("**PASS (degraded: performance counters locked"),
        "{md}"
    );
    let html = gate.read("report.html/index.html");
    assert!(html.contains("DEGRADED"), "{html}");
    let summary = gate.read("summary.md");
    assert!(summary.contains("PASS (degraded:"), "{summary}");
}

#[test]
fn a_kernel_launched_twice_as_often_fails_as_the_structure_check_says() {
    let gate = Gate::new();
    let ncu = locked(&gate);
    let out = check(&gate, &ncu, "trace")
        .app(
            &app(&gate, "graph_app.redundant-node.trace.json")
                .each_ref()
                .map(String::as_str),
        )
        .run();
    out.code(1)
        .stdout_has("REGRESSION (degraded: performance counters locked")
        .stdout_has(
            "launched 6 times per run, baseline 3: a redundant or dropped launch (graph node?)",
        );
}

#[test]
fn a_kernel_the_baseline_never_launched_is_a_new_kernel() {
    let gate = Gate::new();
    let ncu = locked(&gate);
    let out = check(&gate, &ncu, "trace")
        .app(
            &app(&gate, "graph_app.new-kernel.trace.json")
                .each_ref()
                .map(String::as_str),
        )
        .run();
    out.code(1)
        .stdout_has("new kernel")
        .stdout_has("not in the baseline (3 launches per run)");
}

#[test]
fn a_trace_that_dropped_records_is_an_error_not_a_pass() {
    let gate = Gate::new();
    let ncu = locked(&gate);
    let out = check(&gate, &ncu, "trace")
        .app(
            &app(&gate, "graph_app.base.dropped.trace.json")
                .each_ref()
                .map(String::as_str),
        )
        .run();
    out.one_clear_error("is incomplete: 7 activity records lost")
        .stderr_has("hint: trace fewer launches");
}

#[test]
fn tracing_cupti_could_not_enable_is_an_error_with_its_reason() {
    let gate = Gate::new();
    let ncu = locked(&gate);
    let out = check(&gate, &ncu, "trace")
        .app(
            &app(&gate, "graph_app.base.disabled.trace.json")
                .each_ref()
                .map(String::as_str),
        )
        .run();
    out.one_clear_error("CUPTI kernel activity tracing could not be enabled")
        .stderr_has("CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED")
        .stderr_has("hint: another CUPTI client");
}

#[test]
fn a_malformed_trace_is_an_error() {
    let gate = Gate::new();
    let ncu = locked(&gate);
    let out = check(&gate, &ncu, "trace")
        .app(
            &app(&gate, "graph_app.base.truncated.trace.json")
                .each_ref()
                .map(String::as_str),
        )
        .run();
    out.one_clear_error("unreadable kernel trace")
        .stderr_has("hint: rebuild the audit library");
}

#[test]
fn by_default_locked_counters_exit_2_with_the_fix_and_trace_mode_named() {
    let gate = Gate::new();
    let ncu = locked(&gate);
    let out = check(&gate, &ncu, "fail")
        .app(
            &app(&gate, "graph_app.base.trace.json")
                .each_ref()
                .map(String::as_str),
        )
        .run();
    out.one_clear_error("ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM)")
        .stderr_has("NVreg_RestrictProfilingToAdminUsers=0")
        .stderr_has("locked_counters = \"trace\"");
    assert!(!gate.path("target/ncugate/trace").exists(), "no trace ran");
}

/// A baseline recorded from the reference app's H200 report, which records
/// each kernel's mangled names and launch configurations.
fn report_baseline(gate: &Gate) {
    gate.h200("graph_app.base.fast.run1.ncu-rep", "base.ncu-rep");
    gate.record()
        .input("base.ncu-rep")
        .output("baseline.json")
        .run()
        .code(0);
    let baseline = gate.json("baseline.json");
    let scale = &baseline["kernels"]["void scale<0>(const float *, float *, long, int)"];
    assert_eq!(
        scale["code"]["mangled"],
        serde_json::json!(["_Z5scaleIL9ScaleImpl0EEvPKfPfli"])
    );
}

#[test]
fn a_baseline_recorded_from_reports_maps_traced_kernels_by_mangled_name() {
    let gate = Gate::new();
    let ncu = locked(&gate);
    report_baseline(&gate);
    let out = check(&gate, &ncu, "trace")
        .app(
            &app(&gate, "graph_app.base.trace.json")
                .each_ref()
                .map(String::as_str),
        )
        .run();
    out.code(0).stdout_has(DEGRADED).stdout_has(
        "traced kernels mapped to the baseline's keys by the mangled names it recorded",
    );
    assert!(
        !out.stdout.contains("launch configuration changed"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_changed_launch_configuration_is_named() {
    let gate = Gate::new();
    let ncu = locked(&gate);
    report_baseline(&gate);
    let out = check(&gate, &ncu, "trace")
        .app(
            &app(&gate, "graph_app.grid.trace.json")
                .each_ref()
                .map(String::as_str),
        )
        .run();
    out.code(0).stdout_has(
        "`void scale<0>(const float *, float *, long, int)`: launch configuration changed: baseline grid (65536, 1, 1) block (256, 1, 1), now grid (32768, 1, 1) block (256, 1, 1)",
    );
}

/// A suite in trace mode: each workload is gated from its own trace against
/// its own per-GPU baseline, and the shards' reports merge — the merge
/// recomputes every verdict from the measurements — into the same verdict,
/// the degraded workload still labelled and the structural failure kept.
#[test]
fn a_suite_in_trace_mode_gates_each_workload_and_its_shards_merge_to_the_same_verdict() {
    let gate = Gate::new();
    let ncu = locked(&gate);
    let [program, same] = app(&gate, "graph_app.base.trace.json");
    let [_, doubled] = app(&gate, "graph_app.redundant-node.trace.json");
    for workload in ["same", "doubled"] {
        std::fs::create_dir_all(gate.path(&format!("baselines/{workload}"))).expect("mkdir");
        gate.copy(
            gate.path("baseline.json"),
            &format!("baselines/{workload}/nvidia-h200-cc90-132sm.json"),
        );
    }
    gate.write(
        "ncugate.toml",
        format!(
            "[profile]\nncu = \"{ncu}\"\n\n[[workload]]\nname = \"same\"\ncommand = [\"{program}\", \"{same}\"]\n\n[[workload]]\nname = \"doubled\"\ncommand = [\"{program}\", \"{doubled}\"]\n"
        ),
    );
    let suite = |extra: &[&str]| {
        gate.ncugate(&["check", "--config", "ncugate.toml", "--no-build"])
            .args(&["--locked-counters", "trace"])
            .args(extra)
            .env("NCUGATE_AUDIT_LIB", gate.path("libncugate_audit.so"))
            .run()
    };
    let whole = suite(&["--json", "whole.json"]);
    whole.code(1);
    let report = gate.json("whole.json");
    let text = report.to_string();
    assert!(text.contains("\"mode\":\"trace\""), "{text}");
    for shard in ["1/2", "2/2"] {
        let name = format!("shard{}.json", &shard[..1]);
        let out = suite(&["--shard", shard, "--json", &name]);
        assert!(matches!(out.code, 0 | 1), "{}", out.stderr);
    }
    let merged = gate.run(&[
        "merge",
        "shard1.json",
        "shard2.json",
        "--json",
        "merged.json",
    ]);
    merged.code(1);
    let merged_json = gate.json("merged.json");
    let outcome = |v: &serde_json::Value, name: &str| {
        v["workloads"]
            .as_array()
            .and_then(|w| w.iter().find(|w| w["name"] == name))
            .map(|w| w["report"]["outcome"].clone())
            .unwrap_or_else(|| panic!("no workload {name}"))
    };
    for (name, expected) in [("same", "pass"), ("doubled", "regression")] {
        assert_eq!(outcome(&report, name), expected, "whole run: {name}");
        assert_eq!(outcome(&merged_json, name), expected, "merged: {name}");
    }
    assert!(merged_json.to_string().contains("\"mode\":\"trace\""));
    merged.stdout_has("degraded");
}

/// The traces the audit library recorded on an H100 (its first GPU run):
/// the unchanged reference app passes degraded, its redundant graph node
/// fails on `scale`'s launch count, against the reference baseline.
#[test]
fn recorded_h100_traces_pass_unchanged_and_fail_the_redundant_node() {
    for (trace, code) in [
        ("graph_app.base.trace.json", 0),
        ("graph_app.redundant-node.trace.json", 1),
    ] {
        let gate = Gate::new();
        let ncu = locked(&gate);
        let traced = format!("{RECORDED}/{trace}");
        let command = [gate.path("trace-app").display().to_string(), traced];
        let out = check(&gate, &ncu, "trace")
            .json("report.json")
            .app(&command.each_ref().map(String::as_str))
            .run();
        out.code(code);
        let json = gate.json("report.json");
        assert_eq!(json["degraded"]["mode"], "trace", "{trace}");
        if code == 1 {
            out.stdout_has("launched 6 times per run, baseline 3");
        } else {
            out.stdout_has(DEGRADED);
        }
    }
}
