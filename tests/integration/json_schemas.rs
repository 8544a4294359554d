//! The JSON Schemas in schemas/: generated from the serialized types and
//! committed, so the committed files must be what the types say; and what
//! ncugate writes validates against them — baselines and reports made here
//! from real H200 exports and compute-sanitizer XML, and the committed
//! example baselines and shard reports.

use crate::common;
use common::{Gate, REFERENCE, assert_valid_json, json_schema_errors};
use std::path::{Path, PathBuf};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_committed_schemas_are_the_types() {
    let update = std::env::var_os("UPDATE_SCHEMAS").is_some();
    let dir = repo("schemas");
    let mut stale = Vec::new();
    for file in ncugate::schema::files() {
        let path = dir.join(&file.name);
        if update {
            std::fs::create_dir_all(&dir).expect("schemas/");
            std::fs::write(&path, &file.text).expect("write schema");
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(file.text.as_str()) {
            stale.push(file.name);
        }
    }
    assert!(
        stale.is_empty(),
        "schemas/{stale:?} differ from the types: run `UPDATE_SCHEMAS=1 cargo test --test integration json_schemas` and commit the result"
    );
}

#[test]
fn baselines_and_reports_of_one_gate_validate() {
    let gate = Gate::recorded();
    assert_valid_json("baseline.v2.json", &read_json(&gate.path("baseline.json")));
    gate.h200("graph_app.strided.fast.raw.base-units.csv", "strided.csv")
        .h200("graph_app.strided.fast.details.csv", "strided.details.csv");
    // A pass, a regression with findings, an error before any comparison.
    let checks: [(&[&str], i32); 3] = [
        (&["--input", "base1.csv"], 0),
        (
            &["--input", "strided.csv", "--details", "strided.details.csv"],
            1,
        ),
        (&["--input", "missing.csv"], 2),
    ];
    for (args, code) in checks {
        gate.check()
            .baseline("baseline.json")
            .json("r.json")
            .args(args)
            .run()
            .code(code);
        let report = read_json(&gate.path("r.json"));
        assert_eq!(report["exit_code"], code);
        assert_valid_json("report.v2.json", &report);
    }
    std::fs::copy(
        Path::new(REFERENCE).join("sanitizer/stream-ordered-alloc-bug.memcheck.xml"),
        gate.path("alloc-bug.xml"),
    )
    .expect("fixture");
    gate.sanitize()
        .xml("alloc-bug.xml")
        .json("s.json")
        .run()
        .code(1);
    let report = read_json(&gate.path("s.json"));
    assert!(
        report["sanitizer"]
            .as_array()
            .is_some_and(|f| !f.is_empty())
    );
    assert_valid_json("report.v2.json", &report);
}

#[test]
fn the_committed_examples_and_their_merge_validate() {
    let baselines = repo("examples/suite/baselines");
    let mut seen = 0;
    for workload in std::fs::read_dir(&baselines).expect("examples/suite/baselines") {
        for file in std::fs::read_dir(workload.expect("entry").path()).expect("workload dir") {
            assert_valid_json("baseline.v2.json", &read_json(&file.expect("entry").path()));
            seen += 1;
        }
    }
    assert!(seen >= 3, "{seen} example baselines");
    let gate = Gate::new();
    let mut merge = vec!["merge".to_string()];
    for k in 1..=2 {
        let name = format!("regressed.shard-{k}-of-2.json");
        let shard = repo(&format!("examples/suite/h200/{name}"));
        assert_valid_json("suite-report.v2.json", &read_json(&shard));
        gate.copy(&shard, &name);
        merge.push(name);
    }
    merge.extend(["--json".into(), "merged.json".into()]);
    let args: Vec<&str> = merge.iter().map(String::as_str).collect();
    gate.run(&args).code(1);
    assert_valid_json(
        "suite-report.v2.json",
        &read_json(&gate.path("merged.json")),
    );
}

#[test]
fn what_ncugate_would_refuse_does_not_validate() {
    let gate = Gate::recorded();
    let baseline = read_json(&gate.path("baseline.json"));
    // Baselines refuse unknown keys (a typo must not pass for a setting).
    let mut extra = baseline.clone();
    extra["thresholds_file"] = "t.toml".into();
    assert!(!json_schema_errors("baseline.v2.json", &extra).is_empty());
    let mut missing = baseline;
    missing
        .as_object_mut()
        .expect("object")
        .remove("fingerprint");
    assert!(!json_schema_errors("baseline.v2.json", &missing).is_empty());
    gate.check()
        .baseline("baseline.json")
        .input("base1.csv")
        .json("r.json")
        .run()
        .code(0);
    let mut report = read_json(&gate.path("r.json"));
    report["outcome"] = "maybe".into();
    let errors = json_schema_errors("report.v2.json", &report);
    assert!(
        errors.iter().any(|e| e.starts_with("/outcome")),
        "{errors:?}"
    );
}
