//! The baseline file: auto-scaled and base-unit exports of the same report
//! aggregate identically, the file is stable and reviewable, and
//! `baseline diff` shows what changed.

use crate::common;
use common::Gate;
use serde_json::Value;

/// Every (kernel, metric, aggregate) statistic of a baseline file.
fn stats(gate: &Gate, name: &str) -> Vec<(String, String, f64, String)> {
    let value: Value = serde_json::from_str(&gate.read(name)).expect("JSON");
    let mut out = Vec::new();
    let mut kernels: Vec<(String, Value)> = value["kernels"]
        .as_object()
        .expect("kernels")
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    kernels.push(("(total)".into(), value["total"].clone()));
    for (kernel, entry) in kernels {
        for (metric, m) in entry["metrics"].as_object().expect("metrics") {
            for agg in ["sum", "mean", "max", "min"] {
                for field in ["mean", "stddev", "min", "max"] {
                    let v = m[agg][field].as_f64().expect("number");
                    out.push((
                        format!("{kernel} {metric} {agg}.{field}"),
                        metric.clone(),
                        v,
                        m["unit"].as_str().unwrap_or_default().to_string(),
                    ));
                }
            }
        }
    }
    out
}

/// Records one baseline from each file with `thresholds` and compares them:
/// counters, durations and byte counts must be equal bit for bit; percentages,
/// which `--print-units base` prints with 2 decimals instead of 6, within that rounding.
fn same_aggregates(
    auto: &str,
    base: &str,
    from: for<'a> fn(&'a Gate, &str, &str) -> &'a Gate,
    thresholds: &str,
) {
    let gate = Gate::new();
    from(&gate, auto, "auto.csv");
    from(&gate, base, "base.csv");
    for (input, out) in [("auto.csv", "a.json"), ("base.csv", "b.json")] {
        gate.record()
            .thresholds(thresholds)
            .input(input)
            .output(out)
            .run()
            .code(0);
    }
    let (a, b) = (stats(&gate, "a.json"), stats(&gate, "b.json"));
    assert_eq!(a.len(), b.len());
    assert!(a.len() > 50, "too few statistics compared: {}", a.len());
    let mut exact = 0;
    for ((name, _, x, unit), (name_b, _, y, unit_b)) in a.iter().zip(&b) {
        assert_eq!((name, unit), (name_b, unit_b));
        if unit == "%" {
            // Half of the last printed digit of 2-decimal base-unit output, summed over ≤ 3 launches.
            assert!((x - y).abs() <= 0.015, "{name}: {x} vs {y}");
        } else {
            assert_eq!(x, y, "{name} ({unit}): auto {x} vs base {y}");
            exact += 1;
        }
    }
    assert!(exact > 30);
}

#[test]
fn auto_and_base_units_give_identical_aggregates_on_the_reference_app() {
    let t = format!("{}/default.toml", common::THRESHOLDS);
    same_aggregates(
        "graph_app.base.fast.run1.raw.csv",
        "graph_app.base.fast.run1.raw.base-units.csv",
        |g, f, n| g.h200(f, n),
        &t,
    );
}

#[test]
fn auto_and_base_units_give_identical_aggregates_on_a_full_set_export() {
    // us → ns, Mbyte → byte, sector counts: `1.420832 ms`-style scaling in a 2,238-column export.
    let t = format!("{}/set-full.toml", common::THRESHOLDS);
    same_aggregates(
        "h200.graph_app.full.node.raw.csv",
        "h200.graph_app.full.node.raw.print-units-base.csv",
        |g, f, n| g.reference(f, n),
        &t,
    );
}

#[test]
fn the_baseline_is_pretty_stable_json_with_provenance() {
    let gate = Gate::recorded();
    let text = gate.read("baseline.json");
    let value: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(value["schema_version"], 2);
    assert_eq!(value["kernel_key"], "demangled");
    assert_eq!(value["runs"], 3);
    assert_eq!(value["fingerprint"]["gpus"][0]["name"], "NVIDIA H200");
    assert_eq!(value["fingerprint"]["gpus"][0]["compute_capability"], "9.0");
    assert_eq!(value["fingerprint"]["gpus"][0]["sm_count"], 132);
    assert_eq!(
        value["inputs"][0]["sha256"].as_str().map(str::len),
        Some(64)
    );
    let scale = &value["kernels"]["void scale<0>(const float *, float *, long, int)"];
    assert_eq!(scale["launches"]["mean"], 3.0);
    assert_eq!(scale["metrics"]["gpu__time_duration.sum"]["unit"], "ns");
    assert_eq!(scale["metrics"]["sm__inst_executed.sum"]["sum"]["n"], 3);
    assert_eq!(
        scale["metrics"]["sm__inst_executed.sum"]["sum"]["stddev"],
        0.0
    );
    assert!(text.starts_with("{\n  \"schema_version\": 2,\n"));
    // The sha256 is of the file's bytes.
    let digest = std::process::Command::new("sha256sum")
        .arg(gate.path("base1.csv"))
        .output()
        .expect("sha256sum");
    assert!(
        String::from_utf8_lossy(&digest.stdout)
            .starts_with(value["inputs"][0]["sha256"].as_str().unwrap_or("x"))
    );
    // Recording again gives the same file but for the creation time.
    gate.record()
        .base_inputs()
        .output("again.json")
        .run()
        .code(0);
    let strip = |t: String| {
        t.lines()
            .filter(|l| !l.contains("\"created\""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(text), strip(gate.read("again.json")));
}

#[test]
fn baseline_diff_shows_changed_means_and_the_file_diff_on_request() {
    let gate = Gate::recorded();
    gate.h200("graph_app.redundant-node.fast.raw.csv", "redundant.csv");
    gate.record()
        .input("redundant.csv")
        .output("new.json")
        .run()
        .code(0);
    let out = gate.run(&["baseline", "diff", "baseline.json", "new.json"]);
    out.code(1)
        .stdout_has("~ void scale<0>(const float *, float *, long, int):\n    launches/run 3 → 6")
        .stdout_has("sm__inst_executed.sum (sum): 55.05M inst → 110.10M inst (+100.0%)");
    assert!(!out.stdout.contains("file diff:"), "{}", out.stdout);
    gate.run(&[
        "baseline",
        "diff",
        "--file-diff",
        "baseline.json",
        "new.json",
    ])
    .code(1)
    .stdout_has("file diff:")
    .stdout_has("-  \"runs\": 3,\n+  \"runs\": 1,");
    // Identical files: no changes, and no empty file diff even when asked.
    let same = gate.run(&[
        "baseline",
        "diff",
        "--file-diff",
        "baseline.json",
        "baseline.json",
    ]);
    same.code(0).stdout_has("kernels: no changed means");
    assert!(!same.stdout.contains("file diff"), "{}", same.stdout);
    gate.run(&["baseline", "diff", "--help"])
        .code(0)
        .stdout_has("Exit codes:\n  0  the two files are identical\n  1  the files differ");
}

/// The same app recorded again from two of its three runs: every mean
/// moves a little, within the runs' own spread, and none is listed.
#[test]
fn baseline_diff_leaves_out_changes_within_the_noise() {
    let gate = Gate::recorded();
    gate.record()
        .input("base1.csv")
        .input("base2.csv")
        .output("again.json")
        .run()
        .code(0);
    let out = gate.run(&["baseline", "diff", "baseline.json", "again.json"]);
    out.code(1)
        .stdout_has("kernels: no changed means")
        .stdout_has("moved within the baselines' noise");
    assert!(!out.stdout.contains("→"), "{}", out.stdout);
}

#[test]
fn outputs_go_into_folders_that_do_not_exist_yet() {
    let gate = Gate::new();
    gate.fast_run("base");
    gate.record()
        .input("run.csv")
        .output("perf/gpu/baseline.json")
        .run()
        .code(0);
    gate.check()
        .baseline("perf/gpu/baseline.json")
        .input("run.csv")
        .json("reports/a/report.json")
        .run()
        .code(0);
    assert!(gate.path("reports/a/report.json").is_file());
}

#[test]
fn the_log_file_of_a_csv_profiling_run_is_an_input() {
    // `ncu … --csv --page raw --print-units base --log-file F`: ncu's messages, then the CSV.
    let t = format!("{}/default.toml", common::THRESHOLDS);
    same_aggregates(
        "graph_app.base.fast.run1.ncu.log",
        "graph_app.base.fast.run1.raw.base-units.csv",
        |g, f, n| g.h200(f, n),
        &t,
    );
}
