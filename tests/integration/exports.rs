//! The ncu exports people actually save: details pages as a metric source,
//! preambles, BOM/CRLF, standard input, truncation. Every details page the
//! repository holds (real H200 exports, fixtures/h200 and
//! fixtures/ncu-reference) is recorded and checked against itself (exit 0)
//! and against a copy with one kernel's duration doubled (exit 1); the
//! modified copies are generated here, from the real files.

use crate::common;
use common::{Gate, H200, REFERENCE};

/// One rule on the kernel duration, by metric ID: a metrics-only details page
/// has the ID, a `--set` details page the label `Duration`.
fn duration() -> String {
    common::rule("gpu__time_duration.sum")
}

/// Every details-page export in the fixtures.
fn details_exports() -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for dir in [H200, REFERENCE] {
        for entry in std::fs::read_dir(dir).expect("fixtures") {
            let path = entry.expect("entry").path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if name.is_some_and(|n| n.ends_with(".details.csv") && !n.contains("fail-")) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A copy of a details export with the first kernel's `names` metric doubled.
fn doubled(data: &[u8], names: &[&str]) -> Vec<u8> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(data);
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
    let header = &rows[0];
    let col = |n: &str| header.iter().position(|h| h == n).expect(n);
    let (kernel, name, value) = (col("Kernel Name"), col("Metric Name"), col("Metric Value"));
    let first = rows[1][kernel].to_string();
    let mut writer = csv::WriterBuilder::new()
        .flexible(true)
        .quote_style(csv::QuoteStyle::Always)
        .from_writer(Vec::new());
    for (i, row) in rows.iter().enumerate() {
        let mut fields: Vec<String> = row.iter().map(str::to_string).collect();
        let named = fields
            .get(name)
            .is_some_and(|n| names.contains(&n.as_str()));
        if i > 0 && fields[kernel] == first && named {
            let v: f64 = fields[value].replace(',', "").parse().expect("number");
            fields[value] = format!("{}", v * 2.0);
        }
        writer.write_record(&fields).expect("write");
    }
    writer.into_inner().expect("csv")
}

#[test]
fn every_details_export_records_passes_against_itself_and_fails_when_a_kernel_doubles() {
    let exports = details_exports();
    assert!(exports.len() >= 10, "{exports:?}");
    let gate = Gate::new();
    gate.write("duration.toml", duration());
    gate.write("inst.toml", common::rule("sm__inst_executed.sum"));
    for (i, path) in exports.iter().enumerate() {
        let data = std::fs::read(path).expect("read");
        let text = String::from_utf8_lossy(&data);
        // The one metrics-only export without the duration gates instructions.
        let (rules, names): (&str, &[&str]) =
            if text.contains("\"gpu__time_duration.sum\"") || text.contains("\"Duration\"") {
                ("duration.toml", &["gpu__time_duration.sum", "Duration"])
            } else {
                ("inst.toml", &["sm__inst_executed.sum"])
            };
        let (me, slow, base) = (
            format!("{i}.csv"),
            format!("{i}.slow.csv"),
            format!("{i}.json"),
        );
        gate.write(&me, &data).write(&slow, doubled(&data, names));
        let what = path.display().to_string();
        let rec = gate
            .record()
            .thresholds(rules)
            .input(&me)
            .output(&base)
            .run();
        assert_eq!(rec.code, 0, "{what}: {}", rec.stderr);
        assert!(
            rec.stderr.contains("metrics read from the details page"),
            "{what}"
        );
        let same = gate
            .check()
            .baseline(&base)
            .thresholds(rules)
            .input(&me)
            .run();
        assert_eq!(same.code, 0, "{what}: {}", same.stdout);
        assert!(
            same.stdout.contains("metrics read from the details page"),
            "{what}"
        );
        let worse = gate
            .check()
            .baseline(&base)
            .thresholds(rules)
            .input(&slow)
            .run();
        assert_eq!(worse.code, 1, "{what}: {}", worse.stdout);
        assert!(worse.stdout.contains("+100.0%"), "{what}: {}", worse.stdout);
    }
}

#[test]
fn the_default_rules_gate_metrics_only_details_pages_like_raw_pages() {
    let gate = Gate::new();
    for i in 1..=3 {
        gate.h200(
            &format!("graph_app.base.fast.run{i}.details.csv"),
            &format!("d{i}.csv"),
        );
    }
    gate.h200("graph_app.strided.fast.details.csv", "strided.csv");
    gate.record()
        .args(&["--kernel-key", "function"])
        .input("d1.csv")
        .input("d2.csv")
        .input("d3.csv")
        .output("baseline.json")
        .run()
        .code(0);
    gate.check()
        .baseline("baseline.json")
        .input("d1.csv")
        .run()
        .code(0);
    gate.check()
        .baseline("baseline.json")
        .input("strided.csv")
        .run()
        .code(1)
        .stdout_has("✗ scale")
        .stdout_has("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum (sum) [FAIL]: +700.0%")
        .stdout_has(
            "partial GPU fingerprint: the baseline's export does not give the GPU's name, SM count",
        );
}

#[test]
fn a_details_page_checks_against_a_raw_page_baseline_comparing_what_both_know() {
    let gate = Gate::recorded();
    gate.h200("graph_app.base.fast.run1.details.csv", "d1.csv");
    let out = gate.check().baseline("baseline.json").input("d1.csv").run();
    out.code(0)
        .stdout_has("partial GPU fingerprint: the current export does not give the GPU's name, SM count; only the parts both sides know were compared");
    // A different compute capability is still a mismatch.
    let text = common::h200_text("graph_app.base.fast.run1.details.csv");
    gate.write("cc80.csv", text.replace("\"9.0\"", "\"8.0\""));
    gate.check()
        .baseline("baseline.json")
        .input("cc80.csv")
        .run()
        .one_clear_error("device mismatch");
}

#[test]
fn preambles_boms_crlf_and_stdin_read_the_same() {
    let gate = Gate::new();
    gate.write("duration.toml", duration());
    let real = common::h200_text("graph_app.base.fast.run1.details.csv");
    gate.write("plain.csv", &real);
    gate.record()
        .thresholds("duration.toml")
        .input("plain.csv")
        .output("b.json")
        .run()
        .code(0);
    // What `ncu --csv ./app > out.csv` saves on Windows from a Python app that
    // printed, warned and once failed: a modified copy of the real export.
    let preamble = "step 1/3 done\r\nTraceback (most recent call last):\r\n  File \"train.py\", line 3\r\nValueError: ¿qué? 日本語\r\n\r\n==PROF== Connected to process 4242 (/usr/bin/python3.11)\r\n==WARNING== Found outstanding GPU clock reset, trying to revert...Success.\r\n==ERROR== An error was reported by the driver\r\n";
    let crlf = real.replace('\n', "\r\n");
    let saved = format!("\u{feff}{preamble}{crlf}==PROF== Disconnected from process 4242\r\n");
    gate.write("saved.csv", saved.as_bytes());
    gate.check()
        .baseline("b.json")
        .thresholds("duration.toml")
        .input("saved.csv")
        .run()
        .code(0);
    // Standard input.
    let out = gate
        .check()
        .thresholds("duration.toml")
        .baseline("b.json")
        .input("-")
        .command()
        .write_stdin(saved.into_bytes())
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_truncated_details_page_is_refused() {
    let gate = Gate::new();
    let real = common::h200_bytes("graph_app.strided.full.details.csv");
    // Cut in the middle of the last rule description.
    let cut = &real[..real.len() - 40];
    gate.write("cut.csv", cut);
    gate.full_baseline("b.json", &[]);
    gate.check()
        .baseline("b.json")
        .input("base.csv")
        .details("cut.csv")
        .run()
        .one_clear_error("ends in the middle of a row");
}

#[test]
fn a_piped_raw_page_is_read_as_it_comes_not_to_its_end() {
    // `ncu --csv --page raw … | ncugate check --input -`: the stream is read
    // like a file, a row at a time (a 1 GiB pipe took 1 GB of memory), so a
    // bad row is refused while the writer is still writing; reading the
    // whole stream first waited here for an end that never came.
    let gate = Gate::recorded();
    let raw = common::h200_text("graph_app.base.fast.run1.raw.csv");
    let mut lines = raw.lines();
    let head = format!(
        "==PROF== Connected to process 3089 (/app)\n{}\n{}\n{}\n\"9\",\"cut\"\n{}\n",
        lines.next().expect("header"),
        lines.next().expect("units"),
        lines.next().expect("a row"),
        // The reader scans 64-byte blocks: more bytes after the bad row complete its block.
        "=".repeat(200),
    );
    let mut child = gate
        .check()
        .baseline("baseline.json")
        .input("-")
        .std_command()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run ncugate");
    let mut stdin = child.stdin.take().expect("stdin");
    std::io::Write::write_all(&mut stdin, head.as_bytes()).expect("write");
    // The pipe stays open: only a reader that goes row by row can decide.
    let mut waited = 0;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if waited >= 600 {
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
    };
    drop(stdin);
    let Some(status) = status else {
        let _ = child.kill();
        panic!("ncugate waited for the end of the stream before reading its rows");
    };
    let out = child.wait_with_output().expect("output");
    assert_eq!(
        status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The three reports whose per-kernel summary ncu wrote (`fixtures/h200/summary/`).
const SUMMARIZED: [&str; 3] = [
    "graph_app.base.fast.run1",
    "graph_app.strided.fast",
    "graph_app.base.graph",
];

/// The baseline recorded from `summary/<input>` as JSON.
fn recorded(gate: &Gate, input: &str, output: &str) -> serde_json::Value {
    gate.h200(&format!("summary/{input}"), input);
    let out = gate.record().input(input).output(output).run();
    assert_eq!(out.code, 0, "record {input}: {}", out.stderr);
    if input.ends_with(".summary.csv") {
        out.stderr_has("metrics read from the per-kernel summary");
    }
    serde_json::from_str(&gate.read(output)).expect("baseline JSON")
}

#[test]
fn a_per_kernel_summary_ncu_wrote_records_what_the_raw_page_of_its_report_records() {
    // ncu's own `--print-summary per-kernel` of a report and the raw page of
    // that report: the same kernels, launch counts and metrics, and sums over
    // launches equal up to the summary's rounding (2 decimals in the display
    // unit: 1.14 Gbyte is ±0.44%).
    let gate = Gate::new();
    for report in SUMMARIZED {
        let summary = recorded(&gate, &format!("{report}.summary.csv"), "s.json");
        let raw = recorded(&gate, &format!("{report}.raw.csv"), "r.json");
        let kernels = |b: &serde_json::Value| -> Vec<String> {
            let map = b["kernels"].as_object().expect("kernels");
            map.keys().cloned().collect()
        };
        assert_eq!(kernels(&summary), kernels(&raw), "{report}");
        assert!(kernels(&summary).len() >= 3, "{report}");
        for (kernel, s) in summary["kernels"].as_object().expect("kernels") {
            let r = &raw["kernels"][kernel];
            assert_eq!(
                s["launches"]["mean"], r["launches"]["mean"],
                "{report} {kernel}"
            );
            let launches = s["launches"]["mean"].as_f64().expect("launches");
            let metrics = |k: &serde_json::Value| -> Vec<String> {
                k["metrics"]
                    .as_object()
                    .expect("metrics")
                    .keys()
                    .cloned()
                    .collect()
            };
            assert_eq!(metrics(s), metrics(r), "{report} {kernel}");
            for (metric, m) in s["metrics"].as_object().expect("metrics") {
                assert_eq!(m["unit"], r["metrics"][metric]["unit"], "{metric}");
                let sum = |m: &serde_json::Value| m["sum"]["mean"].as_f64().expect("sum");
                let (a, b) = (sum(m), sum(&r["metrics"][metric]));
                assert!(
                    (a - b).abs() <= 0.005 * b.abs() + 0.01 * launches,
                    "{report} {kernel} {metric}: summary {a}, raw page {b}"
                );
            }
        }
        // Gated against each other, both ways, nothing fails.
        gate.check()
            .baseline("s.json")
            .input(format!("{report}.raw.csv"))
            .run()
            .code(0)
            .stdout_has("0 failed");
        gate.check()
            .baseline("r.json")
            .input(format!("{report}.summary.csv"))
            .run()
            .code(0)
            .stdout_has("0 failed");
    }
}

#[test]
fn a_per_kernel_summary_ncu_wrote_gates_a_regression() {
    // The strided variant's summary against a baseline recorded from the
    // base variant's summary: `scale<2>` (one kernel key with `scale<0>`)
    // loads 8× the global sectors (exact counts, so exactly +700.0%) and
    // moves 10× the DRAM bytes.
    let gate = Gate::new();
    recorded(&gate, "graph_app.base.fast.run1.summary.csv", "base.json");
    gate.h200("summary/graph_app.strided.fast.summary.csv", "strided.csv");
    gate.check()
        .baseline("base.json")
        .input("strided.csv")
        .run()
        .code(1)
        .stdout_has("+700.0% (50.33M sector vs baseline 6.29M sector)")
        .stdout_has("dram__bytes.sum (sum) [FAIL]");
    // The raw page of the strided report fails the same baseline too.
    gate.h200("summary/graph_app.strided.fast.raw.csv", "strided.raw.csv");
    gate.check()
        .baseline("base.json")
        .input("strided.raw.csv")
        .run()
        .code(1);
}

#[test]
fn per_kernel_summary_rows_are_refused_when_they_disagree() {
    // A summary whose rows of one kernel and launch shape disagree on the
    // launch count, or that names no launch count, is malformed.
    let gate = Gate::new();
    let real = common::h200_text("summary/graph_app.base.fast.run1.summary.csv");
    let mut lines: Vec<String> = real.lines().map(str::to_string).collect();
    lines[2] = lines[2].replacen("\"9.0\",\"3\"", "\"9.0\",\"4\"", 1);
    gate.write("odd.csv", lines.join("\n"));
    gate.record()
        .input("odd.csv")
        .output("o.json")
        .run()
        .one_clear_error("4 invocations, but 3 in an earlier row");
    gate.write(
        "none.csv",
        real.replacen("\"9.0\",\"3\"", "\"9.0\",\"n/a\"", 1),
    );
    gate.record()
        .input("none.csv")
        .output("o.json")
        .run()
        .one_clear_error("Invocations is \"n/a\", not a launch count");
}

#[test]
fn a_gui_summary_table_is_named_as_such() {
    let gate = Gate::recorded();
    // A table saved from the GUI's Summary page is named as such.
    gate.write(
        "gui.csv",
        "\"ID\",\"Estimated Speedup\",\"Function Name\",\"Demangled Name\",\"Duration\",\"Compute Throughput\",\"Memory Throughput\"\n\"0\",\"12.5\",\"produce\",\"produce(float *, long)\",\"19.9\",\"40.1\",\"80.2\"\n",
    );
    gate.check()
        .baseline("baseline.json")
        .input("gui.csv")
        .run()
        .one_clear_error("this is the Summary page of the Nsight Compute GUI")
        .stderr_has("--page raw");
}
