//! "Never passes silently, never guesses": the holes a new user found, each
//! closed here on real H200 recordings (fixtures/h200).

use crate::common;
use common::{Gate, rules_with};

#[test]
fn a_kernel_filter_that_matches_no_kernel_is_an_error_not_a_pass() {
    let gate = Gate::new();
    gate.base_baseline(&["--kernel-key", "function"]);
    let rules = rules_with(
        "default.toml",
        "why = \"more instructions: redundant work",
        "kernels = \"scal\"\nwhy = \"more instructions: redundant work",
    );
    gate.write("typo.toml", rules);
    let out = gate
        .check()
        .baseline("baseline.json")
        .input("base1.csv")
        .thresholds("typo.toml")
        .json("r.json")
        .run();
    out.code(2)
        .stdout_has("ncugate: ERROR (exit 2)")
        .stdout_has("`kernels = \"scal\"` matches no kernel, so this rule gates nothing")
        .stdout_has("`finish`, `produce`, `scale`")
        .stdout_has("! (no kernel matched the rule's `kernels` filter)")
        .stderr_has("ncugate: error: 1 check could not be evaluated")
        .stderr_has("hint: fix the rule's `kernels` filter");
    // `optional = true` would silence the typo and leave the rule gating nothing.
    assert!(!out.stderr.contains("optional"), "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&gate.read("r.json")).unwrap();
    assert_eq!(json["outcome"], "error");

    // The same filter on an optional rule is skipped, and says so.
    let optional = rules_with(
        "default.toml",
        "why = \"more instructions: redundant work",
        "kernels = \"scal\"\noptional = true\nwhy = \"more instructions: redundant work",
    );
    gate.write("optional.toml", optional);
    gate.check()
        .baseline("baseline.json")
        .input("base1.csv")
        .thresholds("optional.toml")
        .run()
        .code(0)
        .stdout_has("1 skipped");
    // A filter that matches passes as before.
    gate.write(
        "ok.toml",
        rules_with(
            "default.toml",
            "why = \"more instructions: redundant work",
            "kernels = \"scale\"\nwhy = \"more instructions: redundant work",
        ),
    );
    gate.check()
        .baseline("baseline.json")
        .input("base1.csv")
        .thresholds("ok.toml")
        .run()
        .code(0);
}

#[test]
fn a_graph_mode_export_against_a_node_mode_baseline_is_refused() {
    let gate = Gate::recorded();
    gate.h200("graph_app.base.graph.raw.csv", "graph.csv");
    gate.check()
        .baseline("baseline.json")
        .input("graph.csv")
        .run()
        .one_clear_error("graph.csv: this export was profiled with --graph-profiling graph");
    let baseline: serde_json::Value = serde_json::from_str(&gate.read("baseline.json")).unwrap();
    assert_eq!(baseline["graph_mode"], false, "node mode recorded");

    // And the other way round: a graph-mode baseline, a node-mode run.
    gate.record()
        .input("graph.csv")
        .output("graph.json")
        .run()
        .code(0);
    gate.check()
        .baseline("graph.json")
        .input("base1.csv")
        .run()
        .one_clear_error("profiled with --graph-profiling node");
    // Recording from both modes at once is refused too.
    gate.record()
        .input("base1.csv")
        .input("graph.csv")
        .output("mixed.json")
        .run()
        .one_clear_error("graph.csv: profiled with --graph-profiling graph, but base1.csv with");
}

#[test]
fn new_findings_set_to_fail_show_in_why_and_in_the_html_kernel_status() {
    let gate = Gate::new();
    gate.full_baseline("baseline.json", &["--kernel-key", "function"]);
    gate.h200("graph_app.strided.full.details.csv", "strided.details.csv");
    gate.write(
        "fail.toml",
        rules_with("default.toml", "new = \"warn\"", "new = \"fail\""),
    );
    let out = gate
        .check()
        .baseline("baseline.json")
        .input("base.csv")
        .details("strided.details.csv")
        .thresholds("fail.toml")
        .html("html")
        .markdown("r.md")
        .run();
    out.code(1)
        .stdout_has("ncugate: REGRESSION (exit 1): 2 failed")
        .stdout_has("why:\n  ✗ scale\n")
        .stdout_has("new ncu finding UncoalescedGlobalAccess");
    let html = gate.read("html/index.html");
    assert!(
        html.contains("<span class=\"badge fail\">FAIL</span> <code>scale</code>"),
        "the HTML marks scale as failed:\n{html}"
    );
    assert!(gate.read("r.md").contains("- **FAIL** `scale`"));
}

#[test]
fn a_throughput_that_rises_is_higher_not_improved() {
    let gate = Gate::new();
    gate.base_baseline(&["--kernel-key", "function"]);
    gate.h200("graph_app.strided.fast.raw.csv", "strided.csv");
    let out = gate
        .check()
        .baseline("baseline.json")
        .input("strided.csv")
        .markdown("r.md")
        .json("r.json")
        .html("html")
        .run();
    out.code(1).stdout_has(" changed");
    assert!(!out.stdout.contains("improved"), "{}", out.stdout);
    out.stdout_has(" higher\n");
    assert!(!out.stdout.contains("improved +"), "{}", out.stdout);
    let md = gate.read("r.md");
    assert!(
        !md.contains("improved") && md.contains("| higher |"),
        "{md}"
    );
    let json: serde_json::Value = serde_json::from_str(&gate.read("r.json")).unwrap();
    let throughput = json["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["kernel"] == "scale"
                && r["metric"] == "dram__throughput.avg.pct_of_peak_sustained_elapsed"
        })
        .unwrap();
    assert_eq!(throughput["status"], "changed");
    let html = gate.read("html/index.html");
    assert!(!html.contains("improved") && html.contains("<td>higher</td>"));

    // A rule that says which way is better calls it an improvement.
    gate.write(
        "better.toml",
        rules_with(
            "default.toml",
            "worse = \"lower\"\n",
            "worse = \"lower\"\nbetter = \"higher\"\n",
        ),
    );
    gate.check()
        .baseline("baseline.json")
        .input("strided.csv")
        .thresholds("better.toml")
        .run()
        .code(1)
        .stdout_has("1 improved");
}

#[test]
fn baseline_diff_uses_the_rules_aggregate() {
    let gate = Gate::new();
    gate.h200("graph_app.base.fast.run1.raw.csv", "a.csv")
        .h200("graph_app.base.fast.run2.raw.csv", "b.csv");
    for (input, output) in [("a.csv", "a.json"), ("b.csv", "b.json")] {
        gate.record().input(input).output(output).run().code(0);
    }
    let out = gate.run(&["baseline", "diff", "a.json", "b.json"]);
    out.code(1)
        .stdout_has("dram__throughput.avg.pct_of_peak_sustained_elapsed (mean): ");
    assert!(
        !out.stdout
            .contains("dram__throughput.avg.pct_of_peak_sustained_elapsed (sum)"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_one_run_baseline_warns_that_sigma_is_unknown() {
    let gate = Gate::new();
    gate.h200("graph_app.base.fast.run1.raw.csv", "a.csv")
        .h200("graph_app.strided.fast.raw.csv", "strided.csv");
    gate.record()
        .input("a.csv")
        .args(&["--kernel-key", "function"])
        .output("one.json")
        .run()
        .code(0)
        .stderr_has("ncugate: warning: a baseline of 1 run has no spread: σ is unknown");
    gate.check()
        .baseline("one.json")
        .input("strided.csv")
        .run()
        .code(1)
        .stdout_has("σ unknown: the baseline has 1 run")
        .stdout_has("the baseline has 1 run: σ is unknown");
}

#[test]
fn a_one_run_baseline_does_not_warn_when_no_rule_uses_noise() {
    let gate = Gate::new();
    gate.h200("graph_app.base.fast.run1.raw.csv", "a.csv")
        .write("t.toml", common::rule("sm__inst_executed.sum"));
    let out = gate
        .record()
        .input("a.csv")
        .thresholds("t.toml")
        .output("one.json")
        .run();
    out.code(0).stdout_has("1 run,");
    assert!(!out.stderr.contains("σ"), "{}", out.stderr);
    assert!(!out.stdout.contains("run(s)"), "{}", out.stdout);
}

#[test]
fn the_default_kernel_key_is_the_same_inside_this_repository() {
    // ncugate.toml in this repository must not change a default that users
    // without it get: what a check does here is what it does elsewhere.
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/ncugate.toml")).unwrap();
    let value: toml::Value = toml::from_str(&text).unwrap();
    let key = value
        .get("gate")
        .and_then(|g| g.get("kernel_key"))
        .and_then(|k| k.as_str());
    assert!(
        key.is_none() || key == Some("demangled"),
        "ncugate.toml sets kernel_key = {key:?}"
    );
}
