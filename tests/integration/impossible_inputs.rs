//! Inputs no ncu run can produce, found by fuzzing: each is refused with
//! exit 2 (or read correctly), never turned into a verdict. The inputs are
//! modified copies of the real H200 exports in fixtures/h200, made here.

use crate::common;
use common::Gate;

/// `file` (from `fixtures/h200`) rewritten row by row, every cell quoted:
/// `edit(row, c, i)` changes row `i` (0 is the header), `c` being where the
/// header names `column`.
fn rewritten(
    file: &str,
    column: &str,
    mut edit: impl FnMut(&mut Vec<String>, usize, usize),
) -> Vec<u8> {
    let data = common::h200_bytes(file);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(&data[..]);
    let mut writer = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Always)
        .from_writer(Vec::new());
    let mut at = None;
    for (i, record) in reader.records().enumerate() {
        let mut row: Vec<String> = record.expect("row").iter().map(str::to_string).collect();
        let c = *at.get_or_insert_with(|| row.iter().position(|h| h == column).expect(column));
        edit(&mut row, c, i);
        writer.write_record(&row).expect("write");
    }
    writer.into_inner().expect("csv")
}

/// A copy of a raw export with the cell (row `row`, column `column`) replaced.
fn with_cell(file: &str, row: usize, column: &str, value: &str) -> Vec<u8> {
    let mut replaced = false;
    let out = rewritten(file, column, |cells, c, i| {
        if i == row {
            cells[c] = value.to_string();
            replaced = true;
        }
    });
    assert!(replaced, "{file} has no row {row}");
    out
}

#[test]
fn non_finite_and_negative_counters_are_refused() {
    let gate = Gate::recorded();
    let cases = [
        ("1e400", "not a finite number"),
        ("1e2147483647", "not a finite number"),
        ("-12", "negative"),
    ];
    for (value, says) in cases {
        gate.write(
            "bad.csv",
            with_cell(
                "graph_app.base.fast.run1.raw.csv",
                3,
                "sm__inst_executed.sum",
                value,
            ),
        );
        gate.check()
            .baseline("baseline.json")
            .input("bad.csv")
            .run()
            .one_clear_error(says);
        gate.record()
            .input("bad.csv")
            .output("x.json")
            .run()
            .one_clear_error(says);
    }
    // An exponent that would wrap once the unit's power of ten is added (Mbyte: +6,
    // us: +3) is as infinite as one that does not (it read as 0 and passed).
    for column in ["dram__bytes.sum", "gpu__time_duration.sum"] {
        for value in ["1e2147483647", "1e2147483641"] {
            gate.write(
                "wrap.csv",
                with_cell("graph_app.base.fast.run1.raw.csv", 3, column, value),
            );
            gate.check()
                .baseline("baseline.json")
                .input("wrap.csv")
                .run()
                .one_clear_error("not a finite number");
        }
    }
    // +1e400 and -1e400 in two launches of one kernel: each is refused, their sum is never NaN.
    let plus = with_cell(
        "graph_app.base.fast.run1.raw.csv",
        2,
        "gpu__time_duration.sum",
        "1e400",
    );
    let text = String::from_utf8_lossy(&plus).into_owned();
    let mut rows: Vec<String> = text.lines().map(str::to_string).collect();
    rows.push(rows[2].replacen("\"1e400\"", "\"-1e400\"", 1));
    gate.write("nan.csv", rows.join("\n") + "\n");
    for args in [
        &["check", "--baseline", "baseline.json", "--input", "nan.csv"][..],
        &[
            "baseline", "record", "--input", "nan.csv", "--output", "nan.json",
        ],
    ] {
        gate.run(args).one_clear_error("not a finite number");
    }
    assert!(
        !gate.path("nan.json").exists(),
        "no baseline with null in it"
    );
    // Two huge values whose sum overflows.
    let once = with_cell(
        "graph_app.base.fast.run1.raw.csv",
        2,
        "dram__bytes.sum",
        "1.7e302",
    );
    gate.write("once.csv", &once);
    let text = String::from_utf8_lossy(&once).into_owned();
    let mut rows: Vec<&str> = text.lines().collect();
    let row2 = rows[2].to_string();
    rows.push(&row2);
    gate.write("twice.csv", rows.join("\n") + "\n");
    gate.check()
        .baseline("baseline.json")
        .input("twice.csv")
        .run()
        .one_clear_error("overflows");
}

#[test]
fn units_must_agree_across_recorded_runs_or_convert() {
    let gate = Gate::new();
    gate.h200("graph_app.base.fast.run1.raw.csv", "a.csv");
    // `MB` as some tools write ncu's `Mbyte`: converted, so the runs agree.
    let text = common::h200_text("graph_app.base.fast.run2.raw.csv");
    gate.write("mb.csv", text.replacen("\"Mbyte\"", "\"MB\"", 1));
    gate.record()
        .input("a.csv")
        .input("mb.csv")
        .output("b.json")
        .run()
        .code(0);
    let b: serde_json::Value = serde_json::from_str(&gate.read("b.json")).expect("json");
    let sigma = b["total"]["metrics"]["dram__bytes.sum"]["sum"]["stddev"]
        .as_f64()
        .expect("stddev");
    assert!(
        sigma < 1e6,
        "σ {sigma}: MB and Mbyte were not converted alike"
    );
    // A unit that is another quantity: refused.
    gate.write(
        "pct.csv",
        with_cell(
            "graph_app.base.fast.run2.raw.csv",
            1,
            "dram__bytes.sum",
            "%",
        ),
    );
    gate.record()
        .input("a.csv")
        .input("pct.csv")
        .output("c.json")
        .run()
        .one_clear_error("is in % here but in byte");
}

#[test]
fn an_unknown_sm_count_matches_no_gpu_and_a_metric_cannot_steal_it() {
    let gate = Gate::recorded();
    gate.write(
        "na.csv",
        with_cell(
            "graph_app.base.fast.run1.raw.csv",
            2,
            "device__attribute_multiprocessor_count",
            "n/a",
        ),
    );
    gate.check()
        .baseline("baseline.json")
        .input("na.csv")
        .run()
        .one_clear_error("the GPU cannot be identified");
    gate.write(
        "sms.toml",
        "[[rule]]\nmetric = \"device__attribute_multiprocessor_count\"\nworse = \"lower\"\nmax_change = \"0%\"\n",
    );
    gate.record()
        .input("base1.csv")
        .thresholds("sms.toml")
        .output("sms.json")
        .run()
        .code(0);
    let b: serde_json::Value = serde_json::from_str(&gate.read("sms.json")).expect("json");
    assert_eq!(b["fingerprint"]["gpus"][0]["sm_count"], 132);
    // The same metric as an extra of `--metric`.
    gate.record()
        .input("base1.csv")
        .args(&["--metric", "device__attribute_multiprocessor_count"])
        .output("extra.json")
        .run()
        .code(0);
    let b: serde_json::Value = serde_json::from_str(&gate.read("extra.json")).expect("json");
    assert_eq!(b["fingerprint"]["gpus"][0]["sm_count"], 132);
}

/// `text` with `entry` (`"key": value,`) inserted after the first `anchor` found past `after`.
fn insert_after(text: &str, after: &str, anchor: &str, entry: &str) -> String {
    let from = text.find(after).expect(after);
    let at = from + text[from..].find(anchor).expect(anchor) + anchor.len();
    format!("{}\n{entry}{}", &text[..at], &text[at..])
}

#[test]
fn a_baseline_with_a_duplicate_key_is_refused_at_any_depth() {
    let gate = Gate::recorded();
    let text = gate.read("baseline.json");
    let b: serde_json::Value = serde_json::from_str(&text).expect("json");
    let (kernel, entry) = b["kernels"]
        .as_object()
        .and_then(|k| k.iter().next())
        .expect("a kernel");
    let metric = &b["kernels"][kernel]["metrics"]["gpu__time_duration.sum"];
    // A kernel recorded twice, as a hand merge of two baselines would leave it.
    let kernels = insert_after(
        &text,
        "\"kernels\"",
        "{",
        &format!("{}: {entry},", serde_json::Value::from(kernel.as_str())),
    );
    // A metric twice inside the first kernel's entry, with another value.
    let mut halved = metric.clone();
    halved["sum"]["mean"] = serde_json::json!(metric["sum"]["mean"].as_f64().expect("mean") / 2.0);
    let metrics = insert_after(
        &text,
        &format!("{}: {{", serde_json::Value::from(kernel.as_str())),
        "\"metrics\": {",
        &format!("\"gpu__time_duration.sum\": {halved},"),
    );
    let top = text.replacen("\"runs\": 3,", "\"runs\": 3,\n  \"runs\": 1,", 1);
    let kernel_place = format!(
        "kernels[{}].metrics",
        serde_json::Value::from(kernel.as_str())
    );
    let cases = [
        (
            kernels,
            format!("duplicate key `{kernel}` in kernels at line"),
        ),
        (
            metrics,
            format!("duplicate key `gpu__time_duration.sum` in {kernel_place} at line"),
        ),
        (
            top,
            "duplicate key `runs` in the top-level object at line".to_string(),
        ),
    ];
    for (i, (twice, says)) in cases.into_iter().enumerate() {
        assert_ne!(text, twice);
        // Still valid JSON that the typed reader alone would take.
        assert!(serde_json::from_str::<serde_json::Value>(&twice).is_ok());
        let name = format!("twice{i}.json");
        gate.write(&name, twice);
        gate.check()
            .baseline(&name)
            .input("base1.csv")
            .run()
            .one_clear_error(&says);
        gate.run(&["baseline", "diff", "baseline.json", &name])
            .one_clear_error(&says);
    }
}

#[test]
fn an_export_that_names_no_gpu_is_not_compared_as_the_baselines() {
    // Without Device/CC/device__attribute_* columns the export was taken for
    // the H200 of the baseline and gated (exit 1, "GPU: unnamed GPU").
    let gate = Gate::recorded();
    let data = common::h200_bytes("graph_app.fp64.fast.raw.csv");
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(&data[..]);
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
    let keep: Vec<usize> = (0..rows[0].len())
        .filter(|&c| {
            let h = &rows[0][c];
            !(h.starts_with("device__attribute_")
                || h == "CC"
                || h == "Device"
                || h == "Device Name")
        })
        .collect();
    let mut writer = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Always)
        .from_writer(Vec::new());
    for r in &rows {
        writer
            .write_record(keep.iter().map(|&c| &r[c]))
            .expect("write");
    }
    gate.write("anonymous.csv", writer.into_inner().expect("csv"));
    gate.check()
        .baseline("baseline.json")
        .input("anonymous.csv")
        .run()
        .one_clear_error("shares no GPU name, compute capability or SM count with the baseline");
    gate.check()
        .baseline("baseline.json")
        .input("anonymous.csv")
        .arg("--allow-device-mismatch")
        .run()
        .code(1)
        .stdout_has("device mismatch allowed by --allow-device-mismatch");
}

/// `baseline record --input` of one run in two formats (a report and the raw page
/// exported from it, the details and the raw page of one report).
fn record(gate: &Gate, rules: &str, inputs: &[&str]) -> crate::common::Outcome {
    let mut record = gate.record().thresholds(rules).output("x.json");
    for input in inputs {
        record = record.input(input);
    }
    record.run()
}

#[test]
fn one_run_in_two_formats_is_not_two_runs() {
    let gate = Gate::new();
    gate.h200("graph_app.base.fast.run1.ncu-rep", "run1.ncu-rep")
        .h200("graph_app.base.fast.run1.raw.csv", "run1.raw.csv")
        .h200(
            "graph_app.base.fast.run1.raw.base-units.csv",
            "run1.base.csv",
        )
        .h200("graph_app.base.fast.run1.details.csv", "run1.details.csv")
        .h200("graph_app.base.fast.run2.raw.csv", "run2.raw.csv")
        .h200("graph_app.base.fast.run3.details.csv", "run3.details.csv");
    gate.write("time.toml", common::rule("gpu__time_duration.sum"))
        .write("inst.toml", common::rule("sm__inst_executed.sum"));
    // "2 runs" with σ = 0 were recorded from a report and its own CSV.
    for (first, second) in [
        ("run1.ncu-rep", "run1.raw.csv"),
        ("run1.ncu-rep", "run1.base.csv"),
        ("run1.raw.csv", "run1.details.csv"),
        ("run1.details.csv", "run1.ncu-rep"),
    ] {
        record(&gate, "time.toml", &[first, second]).one_clear_error(&format!(
            "{second}: the same run as {first}: process 3089 launched the same kernels with the same `gpu__time_duration.sum`"
        ));
    }
    // Found among other runs too.
    record(
        &gate,
        "time.toml",
        &["run1.ncu-rep", "run2.raw.csv", "run1.details.csv"],
    )
    .one_clear_error("run1.details.csv: the same run as run1.ncu-rep");
    // Three real runs, in three formats: recorded.
    let three = record(
        &gate,
        "time.toml",
        &["run1.ncu-rep", "run2.raw.csv", "run3.details.csv"],
    );
    assert_eq!(three.code, 0, "{}", three.stderr);
    assert!(three.stdout.contains("3 runs"), "{}", three.stdout);
    // Instruction counts are the same in every run of this workload: one
    // run's two formats cannot be told from two runs, and σ = 0 is the truth.
    let same = record(&gate, "inst.toml", &["run1.ncu-rep", "run1.details.csv"]);
    assert_eq!(same.code, 0, "{}", same.stderr);
    assert!(same.stdout.contains("2 runs"), "{}", same.stdout);
}

#[test]
fn a_baseline_cannot_fake_its_noise_band() {
    let gate = Gate::new();
    for i in 1..=3 {
        gate.h200(
            &format!("graph_app.base.fast.run{i}.raw.csv"),
            &format!("base{i}.csv"),
        );
    }
    // One export twice (here as a copy): "2 runs" with σ = 0 was recorded.
    gate.h200("graph_app.base.fast.run1.raw.csv", "copy.csv");
    gate.record()
        .input("base1.csv")
        .input("copy.csv")
        .output("x.json")
        .run()
        .one_clear_error("copy.csv: the same export as base1.csv");
    // Runs that launched different kernels were averaged ("1.5 launches per
    // run"). Kernels some runs lack are now kept apart, ungated (see
    // `varies.rs`); runs of two apps, sharing no kernel, would gate nothing.
    gate.h200("shared/torch_mlp.base.quiet.1.raw.csv", "torch.csv");
    gate.record()
        .input("base1.csv")
        .input("torch.csv")
        .output("x.json")
        .run()
        .one_clear_error("no kernel was launched alike by every run")
        .stderr_has("the runs launched different kernels");
    // Finite values whose spread overflowed were written as "stddev": null (exit 0),
    // and every later check exited 2. Now the deviation is computed without overflow.
    for (i, v) in ["1e160", "3e160", "2e160"].iter().enumerate() {
        gate.write(
            &format!("big{i}.csv"),
            with_cell(
                &format!("graph_app.base.fast.run{}.raw.csv", i + 1),
                2,
                "sm__inst_executed.sum",
                v,
            ),
        );
    }
    gate.record()
        .input("big0.csv")
        .input("big1.csv")
        .input("big2.csv")
        .output("big.json")
        .run()
        .code(0);
    assert!(!gate.read("big.json").contains("null"), "no null statistic");
    gate.check()
        .baseline("big.json")
        .input("big2.csv")
        .run()
        .code(0);
    // Values whose mean overflows cannot be recorded.
    for i in 0..3 {
        gate.write(
            &format!("huge{i}.csv"),
            with_cell(
                &format!("graph_app.base.fast.run{}.raw.csv", i + 1),
                2,
                "sm__inst_executed.sum",
                "1.7e308",
            ),
        );
    }
    gate.record()
        .input("huge0.csv")
        .input("huge1.csv")
        .input("huge2.csv")
        .output("huge.json")
        .run()
        .one_clear_error("overflow");
    assert!(!gate.path("huge.json").exists());
}

#[test]
fn a_metric_written_twice_with_two_values_is_refused_and_with_one_is_one_metric() {
    // The first copy won: a worse second copy passed (exit 0), a worse first failed.
    let gate = Gate::recorded();
    let text = common::h200_text("graph_app.base.fast.run1.raw.csv");
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let col = {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(text.as_bytes());
        let head = reader.records().next().expect("header").expect("row");
        head.iter()
            .position(|h| h == "sm__inst_executed.sum")
            .expect("column")
    };
    // The column again at the end of each row: as written, then doubled on one row.
    let with_copy = |lines: &[String], doubled_row: Option<usize>| -> String {
        let mut out = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let mut reader = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(line.as_bytes());
            let row = reader.records().next().expect("row").expect("csv");
            let mut cell = row[col].to_string();
            if Some(i) == doubled_row {
                let v: f64 = cell.replace(',', "").parse().expect("number");
                cell = format!("{}", v * 2.0);
            }
            out.push(format!("{line},\"{cell}\""));
        }
        out.join("\n") + "\n"
    };
    gate.write("equal.csv", with_copy(&lines, None));
    gate.check()
        .baseline("baseline.json")
        .input("equal.csv")
        .run()
        .code(0);
    gate.write("worse-copy.csv", with_copy(&lines, Some(3)));
    gate.check()
        .baseline("baseline.json")
        .input("worse-copy.csv")
        .run()
        .one_clear_error(&format!(
            "line 4: metric `sm__inst_executed.sum` is in column {}",
            col + 1
        ));

    // A details page with every instruction row twice in its section.
    let details = common::h200_text("graph_app.base.fast.run1.details.csv");
    let twice = |worse: bool| -> String {
        let mut out = Vec::new();
        for line in details.lines() {
            out.push(line.to_string());
            if line.contains("\"sm__inst_executed.sum\"") {
                let copy = if worse {
                    line.replacen("\"inst\",\"", "\"inst\",\"1", 1)
                } else {
                    line.to_string()
                };
                out.push(copy);
            }
        }
        out.join("\n") + "\n"
    };
    for i in 1..=3 {
        gate.h200(
            &format!("graph_app.base.fast.run{i}.details.csv"),
            &format!("d{i}.csv"),
        );
    }
    gate.record()
        .input("d1.csv")
        .input("d2.csv")
        .input("d3.csv")
        .output("details.json")
        .run()
        .code(0);
    gate.write("dup.csv", twice(false));
    gate.check()
        .baseline("details.json")
        .input("dup.csv")
        .run()
        .code(0);
    gate.write("dup-worse.csv", twice(true));
    gate.check()
        .baseline("details.json")
        .input("dup-worse.csv")
        .run()
        .one_clear_error("metric `sm__inst_executed.sum` is");
}

/// `file` (from `fixtures/h200`) with the column `column` written twice: a
/// copy before it whose cells are `copy(cell, row)`.
fn with_column_twice(file: &str, column: &str, copy: impl Fn(&str, usize) -> String) -> Vec<u8> {
    rewritten(file, column, |row, c, i| {
        let cell = if i == 0 {
            row[c].clone()
        } else {
            copy(&row[c], i)
        };
        row.insert(c, cell);
    })
}

#[test]
fn a_column_the_reader_reads_by_name_written_twice_is_refused() {
    // Found by fuzzing: every page's fixed columns were looked up by the first
    // header that named them, so a copy placed before the real column decided
    // the verdict — a `Metric Value` copy with better values passed a
    // regression, and one with worse values failed a passing run (exit 1).
    let gate = Gate::recorded();
    let times = |k: f64| {
        move |cell: &str, _: usize| match cell.replace(',', "").parse::<f64>() {
            Ok(v) => format!("{}", v * k),
            Err(_) => cell.to_string(),
        }
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "details",
            with_column_twice(
                "graph_app.strided.fast.details.csv",
                "Metric Value",
                times(0.1),
            ),
            "Metric Value",
        ),
        (
            "details",
            with_column_twice(
                "graph_app.base.fast.run1.details.csv",
                "Metric Value",
                times(8.0),
            ),
            "Metric Value",
        ),
        (
            "details",
            with_column_twice(
                "graph_app.base.fast.run1.details.csv",
                "Metric Unit",
                |u, _| u.replace("Mbyte", "Gbyte"),
            ),
            "Metric Unit",
        ),
        (
            "raw",
            with_column_twice(
                "graph_app.base.fast.run1.raw.csv",
                "Kernel Name",
                |n, row| {
                    if row >= 2 {
                        "other".into()
                    } else {
                        n.to_string()
                    }
                },
            ),
            "Kernel Name",
        ),
        (
            "summary",
            with_column_twice(
                "summary/graph_app.base.fast.run1.summary.csv",
                "Average",
                times(8.0),
            ),
            "Average",
        ),
        (
            "summary",
            with_column_twice(
                "summary/graph_app.base.fast.run1.summary.csv",
                "Invocations",
                |_, _| "6".into(),
            ),
            "Invocations",
        ),
    ];
    for (page, bytes, column) in cases {
        gate.write("twice.csv", bytes);
        gate.check()
            .baseline("baseline.json")
            .input("twice.csv")
            .run()
            .one_clear_error(&format!("the header names the column \"{column}\" twice"));
        if page == "details" {
            gate.fast_run("base");
            gate.check()
                .baseline("baseline.json")
                .input("run.csv")
                .details("twice.csv")
                .run()
                .one_clear_error(&format!("the header names the column \"{column}\" twice"));
        }
    }
}

/// `file` (from `fixtures/h200`) without its `column`.
fn without_column(file: &str, column: &str) -> Vec<u8> {
    rewritten(file, column, |row, c, _| {
        row.remove(c);
    })
}

#[test]
fn a_details_page_or_summary_without_its_unit_column_is_refused() {
    // ncu writes each details row in a unit of its own: the strided run's
    // scale<2> moves 1.14 Gbyte where the base run's moves 113 Mbyte. Without
    // the `Metric Unit` column both recorded and checked as bare numbers
    // (1.14 against 113: "-99%"), and the +900% DRAM regression passed.
    let gate = Gate::new();
    for (file, name) in [
        ("graph_app.base.fast.run1.details.csv", "base.csv"),
        ("graph_app.strided.fast.details.csv", "strided.csv"),
        (
            "summary/graph_app.base.fast.run1.summary.csv",
            "summary.csv",
        ),
    ] {
        gate.write(name, without_column(file, "Metric Unit"));
    }
    gate.record()
        .input("base.csv")
        .output("b.json")
        .run()
        .one_clear_error("no \"Metric Unit\" column");
    assert!(!gate.path("b.json").exists());
    gate.record()
        .input("summary.csv")
        .output("b.json")
        .run()
        .one_clear_error("no \"Metric Unit\" column");
    gate.base_baseline(&[]);
    gate.check()
        .baseline("baseline.json")
        .input("strided.csv")
        .run()
        .one_clear_error("no \"Metric Unit\" column");
}

#[test]
fn recording_exports_that_name_no_gpu_says_every_check_will_need_the_mismatch_flag() {
    // A details page without `CC` (older ncu versions write none) recorded
    // "an unknown GPU" with exit 0 and no word; every check against it was
    // then a device mismatch (exit 2), even with the same export.
    let gate = Gate::new();
    let stripped = without_column("graph_app.base.fast.run1.details.csv", "CC");
    gate.write("base.csv", stripped);
    let out = gate.record().input("base.csv").output("b.json").run();
    out.code(0);
    assert!(
        out.stderr.contains("warning: the exports name no GPU"),
        "{}",
        out.stderr
    );
    gate.check()
        .baseline("b.json")
        .input("base.csv")
        .run()
        .code(2)
        .stderr_has("device mismatch");
    gate.check()
        .baseline("b.json")
        .input("base.csv")
        .arg("--allow-device-mismatch")
        .run()
        .code(0);
    // Exports that name the GPU record without the warning.
    gate.base_baseline(&[]).code(0);
    assert!(!gate.base_baseline(&[]).stderr.contains("name no GPU"));
}

/// The metrics a check of the reference app's recorded exports reads: the
/// built-in rules' (these exports predate the clock metrics).
const READ: [&str; 6] = [
    "sm__inst_executed.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "gpu__time_duration.sum",
    "dram__bytes.sum",
    "sm__inst_executed_pipe_fp64.sum",
];

#[test]
fn a_counter_that_cannot_read_zero_is_the_instruments_error_not_an_improvement() {
    let gate = Gate::recorded();
    // Row 3 is the second launch, `scale<0>`. Its instructions at 0 read as
    // -100% against the baseline: a pass, whatever the code did.
    for column in ["sm__inst_executed.sum", "gpu__time_duration.sum"] {
        gate.write(
            "zero.csv",
            with_cell("graph_app.base.fast.run1.raw.csv", 3, column, "0"),
        );
        let says = format!(
            "kernel `void scale<0>(const float *, float *, long, int)` ran (3 launches) but `{column}` read 0"
        );
        gate.check()
            .baseline("baseline.json")
            .input("zero.csv")
            .run()
            .one_clear_error(&says)
            .stderr_has("hint: another profiler may hold the GPU's counters");
        gate.record()
            .input("zero.csv")
            .output("x.json")
            .run()
            .one_clear_error(&says);
    }
    // Every counter of the launch at 0: said so.
    let mut read = Vec::new();
    let all = rewritten("graph_app.base.fast.run1.raw.csv", "ID", |cells, _, i| {
        if i == 0 {
            read = READ
                .iter()
                .map(|m| cells.iter().position(|h| h == m).expect(m))
                .collect();
        } else if i == 3 {
            for &c in &read {
                cells[c] = "0".to_string();
            }
        }
    });
    gate.write("all.csv", all);
    gate.check()
        .baseline("baseline.json")
        .input("all.csv")
        .run()
        .one_clear_error("read 0, as did all 6 of its metrics");
    // Counters that can read 0 where a kernel ran (no FP64 work, no DRAM
    // traffic) are readings, not errors: a check of them passes or fails on its rules.
    for column in ["sm__inst_executed_pipe_fp64.sum", "dram__bytes.sum"] {
        gate.write(
            "can.csv",
            with_cell("graph_app.base.fast.run1.raw.csv", 3, column, "0"),
        );
        let out = gate
            .check()
            .baseline("baseline.json")
            .input("can.csv")
            .run();
        assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    }
}
