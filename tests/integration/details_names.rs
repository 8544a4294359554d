//! A rule names a details-page metric unambiguously, or is refused: one label
//! can be in two sections of a launch (`Memory Throughput` in Speed of Light
//! and Memory Workload Analysis) or under two body item labels of one section
//! (`DRAM Bandwidth` in the single- and double-precision roofline charts of a
//! real CC 12.0 export from a public repository). Each is named by
//! `"Section: Label"`, `"Body Item Label: Label"` or
//! `"Section: Body Item Label: Label"`; the bare label is exit 2 with a hint
//! that names both places. The modified copies are generated here from the
//! real files.

use crate::common::{Gate, REFERENCE, rule};
use crate::public_exports::{Field, PUBLIC, doubled_where};
use std::path::Path;

const ROOFLINE: &str = "llm-perf-opt.kernel_0001.roofline.details.csv";

fn record(gate: &Gate, rules: &str, input: &str, out: &str) -> crate::common::Outcome {
    gate.record()
        .thresholds(rules)
        .input(input)
        .output(out)
        .run()
}

fn check(gate: &Gate, rules: &str, base: &str, input: &str) -> crate::common::Outcome {
    gate.check()
        .thresholds(rules)
        .baseline(base)
        .input(input)
        .run()
}

#[test]
fn a_label_under_two_body_item_labels_is_named_by_its_chart() {
    let gate = Gate::new();
    let data = std::fs::read(Path::new(PUBLIC).join(ROOFLINE)).expect("read");
    // The double-precision chart's DRAM Bandwidth doubled, the single-precision one kept.
    let double_slower = doubled_where(&data, |row: Field| {
        row("Metric Name") == "DRAM Bandwidth"
            && row("Body Item Label") == "Double Precision Achieved Value"
    });
    gate.write("r.csv", &data).write("dp.csv", double_slower);

    gate.write("bare.toml", rule("DRAM Bandwidth"));
    // Where both charts show one value, it is one metric; where they differ,
    // the bare label is ambiguous and the error names both places.
    record(&gate, "bare.toml", "r.csv", "bare.json").code(0);
    check(&gate, "bare.toml", "bare.json", "dp.csv")
        .one_clear_error(
            "`DRAM Bandwidth` names two metrics of one launch (\"GPU Speed Of Light Roofline Chart: Single Precision Achieved Value\" and \"GPU Speed Of Light Roofline Chart: Double Precision Achieved Value\")",
        )
        .stderr_has(
            "metric = \"GPU Speed Of Light Roofline Chart: Double Precision Achieved Value: DRAM Bandwidth\"",
        );

    for (name, metric, code) in [
        (
            "dp3",
            "GPU Speed Of Light Roofline Chart: Double Precision Achieved Value: DRAM Bandwidth",
            1,
        ),
        ("dp2", "Double Precision Achieved Value: DRAM Bandwidth", 1),
        ("sp2", "Single Precision Achieved Value: DRAM Bandwidth", 0),
        (
            "sp3",
            "GPU Speed Of Light Roofline Chart: Single Precision Achieved Value: DRAM Bandwidth",
            0,
        ),
    ] {
        let (rules, base) = (format!("{name}.toml"), format!("{name}.json"));
        gate.write(&rules, rule(metric));
        let rec = record(&gate, &rules, "r.csv", &base);
        assert_eq!(rec.code, 0, "{metric}: {}", rec.stderr);
        let same = check(&gate, &rules, &base, "r.csv");
        assert_eq!(same.code, 0, "{metric}: {}{}", same.stdout, same.stderr);
        let out = check(&gate, &rules, &base, "dp.csv");
        assert_eq!(out.code, code, "{metric}: {}{}", out.stdout, out.stderr);
        if code == 1 {
            assert!(out.stdout.contains("+100.0%"), "{}", out.stdout);
        }
    }

    // A label that is in one chart only needs no qualifier; one that is in
    // none of them is not found.
    gate.write("pred.toml", rule("Predicated-On FFMA Operations Per Cycle"));
    assert_eq!(record(&gate, "pred.toml", "r.csv", "p.json").code, 0);
    gate.write(
        "wrong.toml",
        rule("Half Precision Achieved Value: DRAM Bandwidth"),
    );
    record(&gate, "wrong.toml", "r.csv", "w.json").one_clear_error("is not in this export");
}

#[test]
fn a_label_in_two_sections_of_a_real_export_is_named_by_its_section() {
    // A Windows export (CC 8.9): `Memory Throughput` is `%` in Speed of Light
    // and `byte/s` in Memory Workload Analysis.
    let gate = Gate::new();
    gate.copy(
        Path::new(PUBLIC).join("flash-attention-cuda.ncu_result.details.csv"),
        "w.csv",
    );
    gate.write("bare.toml", rule("Memory Throughput"));
    record(&gate, "bare.toml", "w.csv", "bare.json")
        .one_clear_error("`Memory Throughput` names two metrics of one launch (\"GPU Speed Of Light Throughput\" and \"Memory Workload Analysis\")");
    gate.write(
        "mwa.toml",
        rule("Memory Workload Analysis: Memory Throughput"),
    );
    let rec = record(&gate, "mwa.toml", "w.csv", "mwa.json");
    assert_eq!(rec.code, 0, "{}", rec.stderr);
    let json: serde_json::Value = serde_json::from_str(&gate.read("mwa.json")).expect("JSON");
    let kernel = json["kernels"]
        .as_object()
        .expect("kernels")
        .values()
        .next()
        .expect("kernel");
    let metric = &kernel["metrics"]["Memory Workload Analysis: Memory Throughput"];
    assert_eq!(metric["unit"], "byte/s");
    // "4,551,220,429.10" byte/s in the file.
    assert_eq!(metric["sum"]["mean"].as_f64(), Some(4_551_220_429.1));
}

#[test]
fn a_label_in_two_sections_is_named_by_its_section() {
    let gate = Gate::new();
    gate.copy(
        Path::new(REFERENCE).join("h200.graph_app.full.node.details.csv"),
        "d.csv",
    );
    gate.write("bare.toml", rule("Memory Throughput"));
    record(&gate, "bare.toml", "d.csv", "bare.json")
        .one_clear_error("`Memory Throughput` names two metrics of one launch")
        .stderr_has("metric = \"GPU Speed Of Light Throughput: Memory Throughput\"")
        .stderr_has("metric = \"Memory Workload Analysis: Memory Throughput\"");

    let data = std::fs::read(gate.path("d.csv")).expect("read");
    let slower = doubled_where(&data, |row: Field| {
        row("Metric Name") == "Memory Throughput"
            && row("Section Name") == "Memory Workload Analysis"
    });
    gate.write("mwa.csv", slower);
    for (name, metric, code) in [
        ("mwa", "Memory Workload Analysis: Memory Throughput", 1),
        ("sol", "GPU Speed Of Light Throughput: Memory Throughput", 0),
    ] {
        let (rules, base) = (format!("{name}.toml"), format!("{name}.json"));
        gate.write(&rules, rule(metric));
        let rec = record(&gate, &rules, "d.csv", &base);
        assert_eq!(rec.code, 0, "{metric}: {}", rec.stderr);
        let out = check(&gate, &rules, &base, "mwa.csv");
        assert_eq!(out.code, code, "{metric}: {}{}", out.stdout, out.stderr);
    }
}

#[test]
fn one_metric_id_in_two_sections_with_one_value_is_one_metric() {
    // An export with a metric ID in two sections (a `--section` run plus
    // `--metrics`, or an NVTX range export): the same value twice is one
    // metric; different values name both places.
    let gate = Gate::new();
    let real = std::fs::read_to_string(
        Path::new(crate::common::H200).join("graph_app.base.fast.run1.details.csv"),
    )
    .expect("fixture");
    let row = real
        .lines()
        .find(|l| l.starts_with("\"0\",") && l.contains("\"sm__inst_executed.sum\""))
        .expect("the instructions row of launch 0");
    let elsewhere = row.replace("Command line profiler metrics", "Instruction Statistics");
    let twice = real.replacen(row, &format!("{row}\n{elsewhere}"), 1);
    gate.write("twice.csv", &twice);
    gate.write("rules.toml", rule("sm__inst_executed.sum"));
    record(&gate, "rules.toml", "twice.csv", "b.json").code(0);
    check(&gate, "rules.toml", "b.json", "twice.csv").code(0);
    let differ = real.replacen(
        row,
        &format!(
            "{row}\n{}",
            elsewhere.replace("\"9,961,472\"", "\"9,961,473\"")
        ),
        1,
    );
    gate.write("differ.csv", differ);
    check(&gate, "rules.toml", "b.json", "differ.csv")
        .one_clear_error("`sm__inst_executed.sum` names two metrics of one launch");
}
