//! Reports edited after the check, read back by `history record` and by
//! `merge`: both go through one validating reader (`ncugate::suite::read`),
//! so a single check's report is held to what a suite's workloads are. The
//! reports are real: `c3.json`, a check of the redundant-node variant
//! recorded on the H200 (`fixtures/h200/history-e2e/`: a regression, its
//! `scale` kernel launched 6 times per run against 3), and a check of the
//! base app beside a neighbour on the GPU (`fixtures/h200/shared/`). Each
//! tampered copy is made here from them; each is refused with one error
//! line and a hint, and nothing is recorded.

use crate::common::{Gate, Outcome};
use serde_json::{Value, json};

/// The real regression report.
const C3: &str = "history-e2e/c3.json";

fn history_record(g: &Gate, report: &str) -> Outcome {
    g.history_record(
        "sqlite:h.sqlite",
        report,
        ("c3", "main", "2026-12-01T00:00:00Z"),
    )
}

/// `report` as the only workload (`name`) of a suite report, its verdict
/// the workload's: what `check --workload NAME --json` writes.
fn suite_of(report: &Value, name: &str) -> Value {
    json!({
        "schema_version": 2,
        "kind": "suite",
        "ncugate_version": report["ncugate_version"],
        "outcome": report["outcome"],
        "exit_code": report["exit_code"],
        "suite": [name],
        "planned": [name],
        "thresholds_sha256": "",
        "baselines_sha256": "",
        "workloads": [{"name": name, "tags": [], "baseline": report["baseline"], "report": report}],
    })
}

/// Writes `report` as `NAME.json` and the suite of it as `NAME.suite.json`.
fn write_both(g: &Gate, name: &str, report: &Value) -> (String, String) {
    let (check, suite) = (format!("{name}.json"), format!("{name}.suite.json"));
    let text = |v: &Value| serde_json::to_string_pretty(v).expect("JSON");
    g.write(&check, text(report));
    g.write(&suite, text(&suite_of(report, "default")));
    (check, suite)
}

/// `history record` of the check report and of its suite, and `merge` of
/// the suite, each refused with one error line saying `says` and a hint;
/// no store is written.
fn refused_everywhere(g: &Gate, name: &str, report: &Value, says: &str) {
    let (check, suite) = write_both(g, name, report);
    history_record(g, &check).one_clear_error(says);
    history_record(g, &suite).one_clear_error(says);
    g.run(&["merge", &suite]).one_clear_error(says);
    assert!(!g.path("h.sqlite").exists(), "nothing recorded");
}

fn rows<'a>(report: &'a mut Value, list: &str) -> impl Iterator<Item = &'a mut Value> {
    report[list].as_array_mut().expect(list).iter_mut()
}

#[test]
fn the_real_reports_are_read_as_they_are() {
    let g = Gate::new();
    let (check, suite) = write_both(&g, "c3", &g.h200(C3, "orig.json").json("orig.json"));
    g.run(&["merge", &suite])
        .code(1)
        .stdout_has("1 regressed (default)");
    for file in [&check, &suite] {
        let out = history_record(&g, file);
        assert_eq!(out.code, 0, "{file}: {}", out.stderr);
        assert!(out.stdout.contains("0 baseline material"), "{}", out.stdout);
    }
}

#[test]
fn a_regression_edited_to_pass_is_not_recorded_as_baseline_material() {
    // A single check's report was read with its outcome recomputed but its
    // rows believed: every FAIL row made `pass`, the outcome with them,
    // was recorded as a passing run on main — baseline material.
    let g = Gate::new();
    let mut report = g.h200(C3, "orig.json").json("orig.json");
    for list in ["rules", "structure"] {
        for row in rows(&mut report, list).filter(|r| r["status"] == "fail") {
            row["status"] = "pass".into();
        }
    }
    report["outcome"] = "pass".into();
    report["exit_code"] = 0.into();
    refused_everywhere(
        &g,
        "rows-pass",
        &report,
        "workload `default`: scale · sm__inst_executed.sum (sum) says pass, but its numbers fail it (110100480 against baseline 55050240, allowance 11010048)",
    );
}

#[test]
fn a_launch_count_edited_to_pass_is_refused() {
    // `scale` launched 6 times per run against the baseline's 3: the row
    // made `pass`, every other row and the verdict (still a regression) as
    // written, so only the row's own numbers can tell.
    let g = Gate::new();
    let mut report = g.h200(C3, "orig.json").json("orig.json");
    let row = rows(&mut report, "structure")
        .find(|s| s["current_launches"] == json!([6]))
        .expect("the redundant launch");
    assert_eq!(
        (&row["baseline_launches"], &row["status"]),
        (&json!(3.0), &json!("fail"))
    );
    row["status"] = "pass".into();
    refused_everywhere(
        &g,
        "launches",
        &report,
        "workload `default`: scale · launch count says pass, but its numbers fail it (6 launches per run against baseline 3)",
    );
}

#[test]
fn a_launch_count_within_the_baseline_runs_range_is_believed() {
    // An app whose baseline runs launched `produce` 2 and 4 times (mean 3)
    // and whose check launched it twice: `check` passes it (within the
    // runs' range), and the report keeps that range, so the readers agree.
    // A report without the range (written before it was kept) has only the
    // whole mean 3 to go by, and 2 is refused there.
    let g = Gate::new();
    let original = g.h200(C3, "orig.json").json("orig.json");
    let mut report = original.clone();
    let row = rows(&mut report, "structure")
        .find(|s| s["kernel"] == json!("produce"))
        .expect("produce's launch count");
    assert_eq!(
        (&row["baseline_launches"], &row["status"]),
        (&json!(3.0), &json!("pass"))
    );
    row["current_launches"] = json!([2]);
    row["baseline_range"] = json!([2.0, 4.0]);
    let (check, suite) = write_both(&g, "ranged", &report);
    for file in [&check, &suite] {
        let out = history_record(&g, file);
        assert_eq!(out.code, 0, "{file}: {}", out.stderr);
    }
    g.run(&["merge", &suite]).code(1);

    let g = Gate::new();
    let mut report = original;
    let row = rows(&mut report, "structure")
        .find(|s| s["kernel"] == json!("produce"))
        .expect("produce's launch count");
    row["current_launches"] = json!([2]);
    refused_everywhere(
        &g,
        "mean-only",
        &report,
        "workload `default`: produce · launch count says pass, but its numbers fail it (2 launches per run against baseline 3)",
    );
}

/// `row` made a warning that is not gated for `reason`, as ncugate words one.
fn downgrade(row: &mut Value, downgraded: Value, not_gated: Option<&str>) {
    row["status"] = "warn".into();
    row["message"] = format!("not gated (pid 4242 python3): {}", row["message"]).into();
    row["downgraded"] = downgraded;
    if let Some(evidence) = not_gated {
        row["not_gated"] = evidence.into();
    }
}

#[test]
fn a_failing_row_downgraded_without_its_evidence_is_refused() {
    let g = Gate::new();
    let c3 = g.h200(C3, "orig.json").json("orig.json");
    let shared_gpu = json!({"reason": "shared_gpu", "neighbour": "pid 4242 python3"});
    let duration = |r: &Value| r["kernel"] == "scale" && r["unit"] == "ns";
    // A shared-GPU downgrade in a report that saw no shared GPU: with the
    // row's own evidence, and without.
    for (name, not_gated) in [
        ("with-row-evidence", Some("pid 4242 python3")),
        ("bare", None),
    ] {
        let mut report = c3.clone();
        let row = rows(&mut report, "rules")
            .find(|r| duration(r))
            .expect("a duration");
        downgrade(row, shared_gpu.clone(), not_gated);
        refused_everywhere(
            &g,
            name,
            &report,
            "workload `default`: scale · gpu__time_duration.sum (sum) is not gated (shared GPU), but the report has no shared-GPU evidence",
        );
    }
    // An environmental one in a report that compared no code.
    let mut report = c3.clone();
    let row = rows(&mut report, "rules")
        .find(|r| duration(r))
        .expect("a duration");
    downgrade(row, json!({"reason": "environmental"}), None);
    refused_everywhere(
        &g,
        "environmental",
        &report,
        "is not gated (environmental), but the report compared no code of `scale`",
    );
}

#[test]
fn a_shared_gpu_report_keeps_its_downgrades_only_with_their_evidence() {
    // A real check beside a neighbour: its duration and DRAM rules are not
    // gated, the ones beyond their allowance warnings naming the neighbour.
    let g = Gate::new();
    let mut args = vec!["baseline".to_string(), "record".into()];
    for i in 1..=3 {
        let name = format!("quiet{i}.csv");
        g.h200(&format!("shared/graph_app.base.quiet.{i}.raw.csv"), &name);
        args.extend(["--input".into(), name]);
    }
    args.extend(["--output".into(), "baseline.json".into()]);
    g.run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .code(0);
    g.h200("shared/graph_app.base.shared.3.raw.csv", "run.csv");
    g.check()
        .baseline("baseline.json")
        .input("run.csv")
        .json("shared.json")
        .run()
        .code(0);
    let report = g.json("shared.json");
    let downgraded = report["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter(|r| r["downgraded"]["reason"] == "shared_gpu")
        .count();
    assert!(downgraded > 0, "{report}");
    let (check, suite) = write_both(&g, "real", &report);
    g.run(&["merge", &suite]).code(0);
    let out = history_record(&g, &check);
    assert_eq!(out.code, 0, "{}", out.stderr);
    std::fs::remove_file(g.path("h.sqlite")).expect("the store");
    // The same report without what showed the shared GPU: each warning
    // would pass a failure with nothing to show for it.
    let mut bare = report.clone();
    bare.as_object_mut().expect("a report").remove("shared_gpu");
    refused_everywhere(
        &g,
        "no-evidence",
        &bare,
        "is not gated (shared GPU), but the report has no shared-GPU evidence",
    );
    // Or with another evidence than the report's.
    let mut other = report.clone();
    let row = rows(&mut other, "rules")
        .find(|r| r["downgraded"]["reason"] == "shared_gpu")
        .expect("a downgraded row");
    row["not_gated"] = format!(
        "{}; and more",
        row["downgraded"]["neighbour"].as_str().unwrap_or_default()
    )
    .into();
    refused_everywhere(
        &g,
        "other-evidence",
        &other,
        "but its evidence is not the report's shared-GPU evidence",
    );
    // Or claiming a shared GPU that no signal detected, or a signal whose
    // numbers the report does not carry.
    assert_eq!(
        report["shared_gpu"]["signals"],
        json!(["clock_drop"]),
        "{report}"
    );
    let mut unsignalled = report.clone();
    unsignalled["shared_gpu"]["signals"] = json!([]);
    refused_everywhere(
        &g,
        "no-signal",
        &unsignalled,
        "its shared-GPU evidence names no signal that detected it",
    );
    let mut unnumbered = report.clone();
    unnumbered["shared_gpu"]["signals"] = json!(["memory_beyond_own"]);
    refused_everywhere(
        &g,
        "no-numbers",
        &unnumbered,
        "its shared-GPU signal `memory beyond own` has no numbers in the report that show it",
    );
}
