//! What profiling costs, offline: the passes per kernel in the reports and
//! the note that names the metrics responsible when a thresholds file takes
//! more than one pass. Replays a fast-mode `ncugate check` with
//! `thresholds/fixed-ratio.toml` recorded on the H200 (ncu 2025.3.1): 6 passes.

use crate::common;
use common::{Gate, THRESHOLDS};
use ncugate::config::{CheckConfig, Config};
use ncugate::report::Outputs;
use ncugate::runner::process::Exit;
use ncugate::runner::replay::ReplayRunner;
use std::path::Path;

const ONE_PASS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/h200/one-pass");

fn read(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(ONE_PASS).join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn a_thresholds_file_that_costs_six_passes_gets_a_note_naming_the_metric() {
    let fixed_ratio = format!("{THRESHOLDS}/fixed-ratio.toml");
    let gate = Gate::new();
    gate.write("r1.csv", read("fixed-ratio.record-run1.raw.csv"));
    gate.record()
        .thresholds(&fixed_ratio)
        .input("r1.csv")
        .args(&["--kernel-key", "function"])
        .output("baseline.json")
        .run()
        .code(0)
        .stdout_has("6 passes per kernel");

    // The profiling run as ncugate's fast mode ran it: the app on the pipes,
    // ncu's messages and the raw page in its --log-file.
    let out = gate.path("work");
    let step = common::steps::fast(
        &String::from_utf8_lossy(&read("fixed-ratio.stdout.log")),
        read("fixed-ratio.ncu-output.log"),
        Exit::Code(0),
        true,
    );
    let replay = ReplayRunner::new(out.join("run"), vec![step]);
    let config = CheckConfig {
        thresholds: ncugate::rules::ThresholdsSource::File(fixed_ratio.clone().into()),
        ..common::profiled_check(
            gate.path("baseline.json"),
            common::runner_config(
                &["kernels/build/graph_app", "--iters", "3"],
                Path::new("."),
                &out,
            ),
            Outputs {
                json: Some(gate.path("report.json")),
                markdown: Some(gate.path("report.md")),
                ..Outputs::default()
            },
        )
    };
    // The fixed 75% floor fails the unchanged app (why fixed-ratio.toml is not the default).
    assert_eq!(common::execute(&Config::Check(config), &replay), 1);
    assert_eq!(
        replay.seen.lock().expect("lock").len(),
        1,
        "one ncu process"
    );

    let report = gate.json("report.json");
    let profiling = &report["profiling"][0];
    assert_eq!(profiling["launches"], 9);
    assert_eq!(profiling["passes_per_kernel"]["min"], 6);
    assert_eq!(profiling["passes_per_kernel"]["max"], 6);
    let notes: Vec<&str> = report["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter_map(|n| n.as_str())
        .collect();
    let note = notes
        .iter()
        .find(|n| n.starts_with("ncu replayed every kernel 6 times"))
        .unwrap_or_else(|| panic!("no cost note in {notes:?}"));
    assert!(
        note.contains("(6 passes per kernel; the built-in rules' metrics take 1)")
            && note.contains(
                "Responsible, measured alone on an H200: gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed (6 passes)."
            ),
        "{note}"
    );
    assert!(
        gate.read("report.md")
            .contains("- profiling: 6 passes per kernel, 9 kernel launches"),
        "{}",
        gate.read("report.md")
    );
}

#[test]
fn the_built_in_rules_take_one_pass_and_get_no_note() {
    let gate = Gate::recorded();
    let out = gate
        .check()
        .baseline("baseline.json")
        .input("base2.csv")
        .json("report.json")
        .run();
    out.code(0)
        .stdout_has("profiling:  1 pass per kernel, 9 kernel launches\n");
    assert!(
        !out.stdout.contains("replayed every kernel"),
        "{}",
        out.stdout
    );
    let report = gate.json("report.json");
    assert_eq!(report["profiling"][0]["passes_per_kernel"]["max"], 1);
    assert!(
        report["profiling"][0]["seconds"].is_null(),
        "an export: not timed"
    );
}
