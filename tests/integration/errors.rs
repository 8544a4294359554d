//! Bad and missing input: exit 2 with one `ncugate: error:` line and one
//! `hint:` line, never a panic, never a pass.

use crate::common;
use common::{Gate, H200};
use std::path::Path;

fn check(gate: &Gate, input: &str) -> common::Outcome {
    gate.check().baseline("baseline.json").input(input).run()
}

fn real_export() -> Vec<u8> {
    common::h200_bytes("graph_app.base.fast.run1.raw.csv")
}

#[test]
fn a_truncated_export() {
    let gate = Gate::recorded();
    let bytes = real_export();
    gate.write("cut.csv", &bytes[..bytes.len() * 6 / 10]);
    check(&gate, "cut.csv").one_clear_error("the export is truncated or corrupt");
}

#[test]
fn a_header_only_export() {
    let gate = Gate::recorded();
    let bytes = real_export();
    let first_line = bytes.split(|&b| b == b'\n').next().expect("a line");
    gate.write("header.csv", first_line);
    check(&gate, "header.csv").one_clear_error("header only");
}

#[test]
fn an_export_without_launches() {
    let gate = Gate::recorded();
    let text = String::from_utf8(real_export()).expect("utf-8");
    let two: Vec<&str> = text.lines().take(2).collect();
    gate.write("empty.csv", two.join("\n") + "\n");
    check(&gate, "empty.csv").one_clear_error("no kernel launches in this export");
}

#[test]
fn binary_garbage() {
    let gate = Gate::recorded();
    let garbage: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    gate.write("garbage.csv", garbage);
    check(&gate, "garbage.csv").one_clear_error("garbage.csv:");
}

#[test]
fn an_empty_file() {
    let gate = Gate::recorded();
    gate.write("zero.csv", "");
    check(&gate, "zero.csv").one_clear_error("the file is empty");
}

#[test]
fn a_missing_file() {
    let gate = Gate::recorded();
    check(&gate, "nope.csv").one_clear_error("cannot read nope.csv");
    gate.check()
        .baseline("nope.json")
        .input("base1.csv")
        .run()
        .one_clear_error("cannot read baseline nope.json");
}

#[test]
fn an_empty_cell_in_a_gated_metric() {
    // The TriageCompute DRAMC metrics are empty cells in every real --set full export.
    let gate = Gate::new();
    gate.reference("h200.graph_app.full.node.raw.csv", "full.csv");
    gate.write("t.toml", "[[rule]]\nmetric = \"FBSP.TriageCompute.dramc__throughput.avg.pct_of_peak_sustained_elapsed\"\nworse = \"lower\"\nmax_change = \"10%\"\n");
    gate.record()
        .thresholds("t.toml")
        .input("full.csv")
        .output("b.json")
        .run()
        .one_clear_error("is n/a or empty for some launches");
    assert!(!gate.path("b.json").exists(), "no baseline may be written");
}

#[test]
fn an_empty_cell_in_an_optional_metric_is_skipped_visibly() {
    let gate = Gate::new();
    gate.reference("h200.graph_app.full.node.raw.csv", "full.csv");
    let t = "[[rule]]\nmetric = \"smsp__inst_executed.sum\"\nworse = \"higher\"\nmax_change = \"20%\"\n\n[[rule]]\nmetric = \"FBSP.TriageCompute.dramc__throughput.avg.pct_of_peak_sustained_elapsed\"\nworse = \"lower\"\nmax_change = \"10%\"\noptional = true\n";
    gate.write("t.toml", t);
    gate.record()
        .thresholds("t.toml")
        .input("full.csv")
        .output("b.json")
        .run()
        .code(0);
    gate.check()
        .baseline("b.json")
        .thresholds("t.toml")
        .input("full.csv")
        .run()
        .code(0)
        .stdout_has("skipped");
}

#[test]
fn a_metric_the_export_lacks() {
    // --set full alone has no sm__inst_executed.sum: the default rules cannot run on it.
    let gate = Gate::recorded();
    gate.h200("graph_app.base.full.raw.csv", "full.csv");
    gate.reference("h200.graph_app.full.node.raw.csv", "ref-full.csv");
    check(&gate, "ref-full.csv")
        .one_clear_error("metric `sm__inst_executed.sum` is not in this export")
        .stderr_has("ncu --metrics sm__inst_executed.sum");
}

#[test]
fn a_commonly_quoted_non_ncu_metric_name_gets_the_real_one_suggested() {
    let gate = Gate::new();
    gate.fast_run("base");
    gate.write(
        "t.toml",
        "[[rule]]\nmetric = \"sys__memory_throughput\"\nworse = \"lower\"\nlimit = 75.0\n",
    );
    gate.record()
        .thresholds("t.toml")
        .input("run.csv")
        .output("b.json")
        .run()
        .one_clear_error("`sys__memory_throughput` is not in this export")
        .stderr_has("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
}

#[test]
fn a_version_1_baseline_is_still_read() {
    // Version 2 only added optional fields: a baseline ncugate 0.1 wrote gates as before.
    let gate = Gate::recorded();
    let text = gate
        .read("baseline.json")
        .replace("\"schema_version\": 2", "\"schema_version\": 1");
    assert!(text.contains("\"schema_version\": 1"));
    gate.write("v1.json", text);
    gate.check()
        .baseline("v1.json")
        .input("base1.csv")
        .run()
        .code(0);
    gate.h200("graph_app.strided.fast.raw.csv", "strided.csv");
    gate.check()
        .baseline("v1.json")
        .input("strided.csv")
        .run()
        .code(1);
}

#[test]
fn an_unknown_baseline_schema() {
    let gate = Gate::recorded();
    let text = gate
        .read("baseline.json")
        .replace("\"schema_version\": 2", "\"schema_version\": 99");
    gate.write("future.json", text);
    gate.check()
        .baseline("future.json")
        .input("base1.csv")
        .run()
        .one_clear_error("unknown baseline schema_version 99");
    gate.write("notjson.json", "{ not json");
    gate.check()
        .baseline("notjson.json")
        .input("base1.csv")
        .run()
        .one_clear_error("not a baseline");
}

#[test]
fn a_baseline_without_a_metric_the_thresholds_gate() {
    let gate = Gate::new();
    gate.write("t.toml", common::rule("sm__inst_executed.sum"));
    gate.base_baseline(&["--thresholds", "t.toml"]);
    gate.check()
        .baseline("baseline.json")
        .input("base1.csv")
        .run()
        .one_clear_error(
            "metric `dram__throughput.avg.pct_of_peak_sustained_elapsed` (thresholds line",
        )
        .stderr_has("re-record the baseline");
}

#[test]
fn a_details_page_without_a_gated_metric() {
    // Details pages are a metric source (tests/integration/exports.rs); one that lacks a
    // metric the rules gate is an error naming it.
    let gate = Gate::recorded();
    gate.reference("h200.graph_app.4metrics.node.details.csv", "details.csv");
    check(&gate, "details.csv").one_clear_error(
        "metric `l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum` is not in this export",
    );
}

#[test]
fn a_kernel_key_that_conflicts_with_the_baseline() {
    let gate = Gate::recorded();
    gate.check()
        .baseline("baseline.json")
        .input("base1.csv")
        .args(&["--kernel-key", "function"])
        .run()
        .one_clear_error("--kernel-key function conflicts with the baseline");
    gate.check()
        .baseline("baseline.json")
        .input("base1.csv")
        .args(&["--kernel-key", "demangled"])
        .run()
        .code(0);
}

#[test]
fn invalid_thresholds() {
    let gate = Gate::recorded();
    gate.write(
        "t.toml",
        "[[rule]]\nmetric = \"sm__inst_executed.sum\"\nworse = \"higher\"\nmax_change = 20\n",
    );
    gate.check()
        .baseline("baseline.json")
        .input("base1.csv")
        .thresholds("t.toml")
        .run()
        .one_clear_error("invalid thresholds");
}

#[test]
fn a_report_without_ncu_on_path() {
    let gate = Gate::recorded();
    gate.h200("graph_app.base.fast.run1.ncu-rep", "run.ncu-rep");
    gate.check()
        .baseline("baseline.json")
        .input("run.ncu-rep")
        .arg("--import-with-ncu")
        .env("NCUGATE_NCU", "/nonexistent/ncu")
        .run()
        .one_clear_error("`/nonexistent/ncu` not found")
        .stderr_has("--print-units base");
}

/// A scratch dir with the base baseline, a report of a base run, and beside
/// it the export ncu made of it with `--print-units base` (the page the
/// stand-in ncu prints for `--import run.ncu-rep`).
fn with_report() -> Gate {
    let gate = Gate::recorded();
    gate.h200("graph_app.base.fast.run1.ncu-rep", "run.ncu-rep")
        .h200(
            "graph_app.base.fast.run1.raw.base-units.csv",
            "run.base-units.csv",
        );
    gate
}

/// Command-line arguments, environment, ncugate.toml.
type Way<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], Option<String>);

#[test]
fn a_report_is_converted_by_ncu_with_base_units() {
    // A stand-in for ncu that logs its arguments and prints the real export
    // ncu produced from this very report with `--print-units base`.
    let gate = with_report();
    let fake = gate
        .ncu("fake-ncu")
        .log_argv("ncu.args")
        .import_page(".base-units.csv")
        .install();
    let fake = fake.as_str();
    let check = [
        "check",
        "--baseline",
        "baseline.json",
        "--input",
        "run.ncu-rep",
        "--import-with-ncu",
    ];
    // The same ncu three ways: NCUGATE_NCU, `[profile] ncu`, and --ncu (which
    // a .ncu-rep input needs, unlike a CSV one).
    let with_flag = crate::common::args_with(&check, &["--ncu", fake]);
    let ways: [Way; 3] = [
        (&check, &[("NCUGATE_NCU", fake)], None),
        (&check, &[], Some(format!("[profile]\nncu = \"{fake}\"\n"))),
        (&with_flag, &[], None),
    ];
    for (args, env, config) in ways {
        let _ = std::fs::remove_file(gate.path("ncu.args"));
        let _ = std::fs::remove_file(gate.path("ncugate.toml"));
        if let Some(config) = config {
            gate.write("ncugate.toml", config);
        }
        gate.run_with(args, env).code(0);
        assert_eq!(
            gate.read("ncu.args").trim(),
            "--import run.ncu-rep --csv --page raw --print-units base",
            "{args:?} {env:?}"
        );
    }
}

#[test]
fn a_report_converted_by_an_ncu_that_writes_much_to_stderr() {
    // ncu can print far more than a pipe holds (64 KiB) to stderr before the CSV: ncugate must
    // drain it while reading stdout. The stand-in gives its 256 KiB write 30 s; blocked that
    // long, it records so and fails, so a regression fails this test instead of hanging it.
    let gate = with_report();
    let fake = gate
        .ncu("fake-ncu")
        .stderr_flood(262_144, "stderr-blocked")
        .import_page(".base-units.csv")
        .install();
    let fake = fake.as_str();
    gate.check()
        .baseline("baseline.json")
        .input("run.ncu-rep")
        .arg("--import-with-ncu")
        .env("NCUGATE_NCU", fake)
        .run()
        .code(0);
    assert!(!gate.path("stderr-blocked").exists());
}

#[test]
fn usage_errors_exit_2() {
    let gate = Gate::new();
    let out = gate.check().baseline("b.json").arg("--bogus").run();
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("--bogus"), "{}", out.stderr);
    assert_eq!(gate.run(&["--help"]).code, 0);
    assert!(
        gate.check()
            .arg("--help")
            .run()
            .stdout
            .contains("Exit codes:")
    );
}

#[test]
fn check_without_input_and_without_an_app() {
    let gate = Gate::recorded();
    // No ncugate.toml either: the error names it and `ncugate init`.
    gate.check()
        .baseline("baseline.json")
        .arg("--no-build")
        .run()
        .one_clear_error("no ncugate.toml in this folder")
        .stderr_has("ncugate init")
        .stderr_has("--input");
    // A config without an app.
    gate.write("ncugate.toml", "[profile]\nmode = \"fast\"\n");
    gate.check()
        .baseline("baseline.json")
        .arg("--no-build")
        .run()
        .one_clear_error("no app to profile")
        .stderr_has("--input");
}

#[test]
fn a_missing_shard_report_hints_at_shard_reports() {
    // Not at ncu exports: the hint fits what was read.
    let gate = Gate::new();
    let out = gate.run(&["merge", "nope.json"]);
    out.one_clear_error("cannot read report nope.json")
        .stderr_has("--shard K/N --json");
    assert!(!out.stderr.contains("--page raw"), "{}", out.stderr);
}

#[test]
fn standard_input_that_cannot_be_read_hints_at_piping_an_export() {
    // A directory as standard input: every read fails (EISDIR).
    let gate = Gate::recorded();
    let stdin = std::fs::File::open(gate.dir.path()).expect("open the directory");
    let out: common::Outcome = gate
        .check()
        .baseline("baseline.json")
        .input("-")
        .std_command()
        .stdin(stdin)
        .output()
        .expect("run ncugate")
        .into();
    out.one_clear_error("cannot read standard input")
        .stderr_has("ncugate check --input -");
}

#[test]
fn check_and_record_in_an_empty_folder_name_the_missing_config_and_init() {
    let gate = Gate::new();
    for args in [
        &["check"][..],
        &["baseline", "record"][..],
        &["profile"][..],
    ] {
        let out = gate.run(args);
        out.one_clear_error("no ncugate.toml in this folder");
        assert!(
            out.stderr
                .contains("hint: `ncugate init -- ./your_app ARGS` writes ncugate.toml"),
            "{args:?}: {}",
            out.stderr
        );
        assert!(!out.stdout.contains("workload default"), "{}", out.stdout);
    }
}

#[test]
fn standard_input_is_named_as_such() {
    let gate = Gate::recorded();
    check(&gate, "-")
        .one_clear_error("ncugate: error: standard input: the file is empty")
        .stderr_has("hint: pipe an export into it");
    // Piped in: the header says where the run came from.
    let export = std::fs::File::open(Path::new(H200).join("graph_app.base.fast.run1.raw.csv"))
        .expect("fixture");
    let out = gate
        .check()
        .baseline("baseline.json")
        .input("-")
        .std_command()
        .stdin(export)
        .output()
        .expect("run ncugate");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("  input:      standard input\n"),
        "{stdout}"
    );
}

/// A run that hung under ncu after the app crashed (seen on an H100: a JAX
/// app printed `Segmentation fault`, then nothing, until the timeout):
/// without retries, exit 2 with the crash named; with `--retries 1`, the
/// run is profiled again in its own work dir, passes, and the report warns.
#[test]
fn a_run_that_crashed_under_ncu_is_an_error_or_with_retries_profiled_again() {
    let gate = Gate::new();
    gate.base_baseline(&[]).code(0);
    let ncu = gate.ncu("crashing-ncu").hang_once("crashed").install();
    gate.check()
        .baseline("baseline.json")
        .ncu(&ncu)
        .args(&["--timeout", "1"])
        .app(&["./graph_app", "--inject", "base"])
        .run()
        .one_clear_error("timed out after 1s; the app and ncu were killed (process group); its last output: Segmentation fault")
        .stderr_has("hint: the app crashed under ncu (`Segmentation fault`)")
        .stderr_has("[app] retries / --retries");
    std::fs::remove_file(gate.path("crashed")).expect("the marker");
    gate.check()
        .baseline("baseline.json")
        .ncu(&ncu)
        .args(&["--timeout", "1", "--retries", "1"])
        .json("r.json")
        .app(&["./graph_app", "--inject", "base"])
        .run()
        .code(0)
        .stderr_has("ncugate: warning: run was profiled again (retry 1 of 1): the profiled run timed out after 1s")
        .stdout_has("warning: run was profiled again (retry 1 of 1)");
    let notes = gate.json("r.json")["notes"].to_string();
    assert!(notes.contains("run was profiled again"), "{notes}");
}
