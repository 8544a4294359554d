//! Code fingerprints on the H200 recordings of `fixtures/h200/explain/`: the
//! kernels' code read from the cubins the reports embed, the opcodes from the
//! recorded SASS pages (a stand-in ncu prints them), and what `check` says.

use crate::common::{FixtureNcu, Gate, H200, args_with};
use ncugate::code::of_report;
use ncugate::model::KernelKeyMode;
use std::path::Path;

fn explain(file: &str) -> std::path::PathBuf {
    Path::new(H200).join("explain").join(file)
}

/// A scratch dir with the base and fp64 reports, their SASS pages, and a
/// stand-in ncu that logs its arguments and prints the page of the report
/// it imports.
fn gate() -> Gate {
    let gate = Gate::new();
    for variant in ["base", "fp64"] {
        gate.copy(
            explain(&format!("graph_app.{variant}.fast.ncu-rep")),
            &format!("{variant}.ncu-rep"),
        )
        .copy(
            explain(&format!("graph_app.{variant}.sass.csv")),
            &format!("{variant}.sass.csv"),
        );
    }
    gate.ncu("fake-ncu")
        .log_argv("ncu.args")
        .import_page(".sass.csv")
        .install();
    gate
}

fn record(gate: &Gate) {
    gate.record()
        .input("base.ncu-rep")
        .output("b.json")
        .ncu("./fake-ncu")
        .run()
        .code(0);
    let _ = std::fs::remove_file(gate.path("ncu.args"));
}

fn edit_baseline(gate: &Gate, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut b = gate.json("b.json");
    edit(&mut b);
    gate.write("b.json", serde_json::to_string_pretty(&b).expect("json"));
}

const SCALE: &str = "void scale<0>(const float *, float *, long, int)";

#[test]
fn two_runs_of_one_binary_share_fingerprints_and_fp64_does_not() {
    let base = of_report(
        &explain("graph_app.base.fast.ncu-rep"),
        KernelKeyMode::Demangled,
    )
    .expect("base code");
    // Another process of the same binary (other arguments, other load addresses).
    let other = of_report(
        &explain("graph_app.multi-process.ncu-rep"),
        KernelKeyMode::Demangled,
    )
    .expect("other code");
    assert_eq!(base.len(), 3);
    for (kernel, code) in &base {
        assert_eq!(other[kernel].fingerprint, code.fingerprint, "{kernel}");
        assert!(code.instructions > 10, "{kernel}: {}", code.instructions);
        assert_eq!(code.launch, ["grid (65536, 1, 1) block (256, 1, 1)"]);
    }
    let fp64 = of_report(
        &explain("graph_app.fp64.fast.ncu-rep"),
        KernelKeyMode::Demangled,
    )
    .expect("fp64 code");
    let float = &base["void finish<float>(const float *, const float *, float *, long)"];
    let double = &fp64["void finish<double>(const float *, const float *, float *, long)"];
    assert_ne!(float.fingerprint, double.fingerprint);
    assert_eq!((float.instructions, double.instructions), (31, 34));
    assert_eq!(fp64[SCALE], base[SCALE]);
    // A CSV export has no code.
    assert!(
        of_report(
            &explain("graph_app.base.sass.csv"),
            KernelKeyMode::Demangled
        )
        .is_none()
    );
}

/// A report that can be read only once (a named pipe called `….ncu-rep`) records with its
/// kernels' code: the run and the code come from one read of the file.
#[test]
fn a_report_is_read_once_for_its_run_and_its_code() {
    let gate = gate();
    record(&gate);
    // The stand-in ncu prints the SASS page beside the report.
    gate.copy(explain("graph_app.base.sass.csv"), "piped.sass.csv");
    let fifo = gate.path("piped.ncu-rep");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let bytes = std::fs::read(explain("graph_app.base.fast.ncu-rep")).expect("report");
    let writer = std::thread::spawn(move || {
        // Opening blocks until ncugate opens the pipe to read it.
        let mut pipe = std::fs::OpenOptions::new()
            .write(true)
            .open(&fifo)
            .expect("open the pipe");
        std::io::Write::write_all(&mut pipe, &bytes).expect("write the report");
    });
    // A second open of the pipe would wait for a writer that never comes:
    // the timeout kills ncugate (no exit code) instead of the test hanging.
    let out = gate
        .record()
        .input("piped.ncu-rep")
        .output("piped.json")
        .ncu("./fake-ncu")
        .command()
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("run ncugate");
    writer.join().expect("writer");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let code = |file: &str| {
        let b: serde_json::Value = serde_json::from_str(&gate.read(file)).expect("json");
        let kernels = b["kernels"].as_object().expect("kernels").clone();
        kernels
            .into_iter()
            .map(|(k, v)| (k, v["code"].clone()))
            .collect::<Vec<_>>()
    };
    let (piped, file) = (code("piped.json"), code("b.json"));
    assert_eq!(piped.len(), 3);
    assert!(
        piped.iter().all(|(_, c)| c["fingerprint"].is_string()),
        "{piped:?}"
    );
    assert_eq!(piped, file);
}

#[test]
fn sass_pages_of_two_runs_give_one_histogram_and_a_variant_another() {
    let read = |f: &str| {
        let data = std::fs::read(explain(f)).expect("read");
        ncugate::parse::sass::read_sass(&data, KernelKeyMode::Demangled).expect("sass page")
    };
    let (one, two) = (
        read("graph_app.base.sass.csv"),
        read("graph_app.base.run2.sass.csv"),
    );
    assert_eq!(one, two);
    assert_eq!(one.len(), 3);
    assert_eq!(one[SCALE].values().sum::<u64>(), 36);
    let strided = read("graph_app.strided.sass.csv");
    let strided_scale = "void scale<2>(const float *, float *, long, int)";
    assert_eq!(strided[strided_scale]["IMAD"], 42);
    assert_ne!(strided[strided_scale], one[SCALE]);
    assert!(
        ncugate::parse::sass::read_sass(b"\"ID\",\"x\"\n1,2\n", KernelKeyMode::Demangled).is_err()
    );
}

#[test]
fn baseline_record_stores_code_and_check_names_the_opcodes_that_changed() {
    let gate = gate();
    record(&gate);
    let b = gate.json("b.json");
    let code = &b["kernels"][SCALE]["code"];
    assert_eq!(code["instructions"], 36);
    assert_eq!(code["opcodes"]["FFMA"], 8);
    assert_eq!(code["fingerprint"].as_str().map(str::len), Some(16));
    let out = gate
        .check()
        .baseline("b.json")
        .input("fp64.ncu-rep")
        .ncu("./fake-ncu")
        .run();
    out.code(1)
        .stdout_has("code changed (+3 instructions: 4 DFMA new, 4 FFMA gone, 3 F2F new)");
    out.stdout_has("note: code: 2 kernels unchanged;");
    // The opcodes of the changed code came from one import of the SASS page.
    assert_eq!(
        gate.read("ncu.args").trim(),
        "--import fp64.ncu-rep --csv --page source --print-source sass"
    );
}

#[test]
fn unchanged_code_costs_no_ncu_call() {
    let gate = gate();
    record(&gate);
    gate.check()
        .baseline("b.json")
        .input("base.ncu-rep")
        .ncu("./fake-ncu")
        .run()
        .code(0)
        .stdout_has("note: code: 3 kernels unchanged");
    assert!(!gate.path("ncu.args").exists());
}

/// The baseline's durations of `scale` halved: the same run is now 2× slower
/// on time only, with the same code, instructions and launches.
fn halve_scale_durations(b: &mut serde_json::Value) {
    halve(b, SCALE, "gpu__time_duration.sum");
}

fn halve(b: &mut serde_json::Value, kernel: &str, metric: &str) {
    let metric = &mut b["kernels"][kernel]["metrics"][metric];
    for aggregate in ["sum", "mean", "max", "min"] {
        for stat in ["mean", "min", "max"] {
            let v = metric[aggregate][stat].as_f64().expect("number");
            metric[aggregate][stat] = serde_json::json!(v / 2.0);
        }
    }
}

#[test]
fn a_timing_only_failure_with_unchanged_code_is_environmental() {
    let gate = gate();
    record(&gate);
    edit_baseline(&gate, halve_scale_durations);
    let check = ["check", "--baseline", "b.json", "--input", "base.ncu-rep"];
    gate.run(&check)
        .code(0)
        .stdout_has("not gated (environmental: timing-only change with unchanged code")
        .stdout_has("; --environmental warn): ");
    let with_json = args_with(&check, &["--json", "r.json"]);
    gate.run(&with_json).code(0);
    let json = gate.json("r.json");
    let downgraded: Vec<&serde_json::Value> = json["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter(|r| r.get("downgraded").is_some())
        .collect();
    assert!(!downgraded.is_empty(), "{json}");
    assert!(downgraded.iter().all(|r| {
        r["downgraded"]["reason"] == "environmental"
            && r["status"] == "warn"
            && r.get("not_gated").is_none()
            && (r["unit"] == "ns" || r["unit"] == "cycle")
    }));
    let gated = args_with(&check, &["--environmental", "fail"]);
    gate.run(&gated)
        .code(1)
        .stdout_has("gated (environmental: timing-only change with unchanged code")
        .stdout_has("; --environmental fail): ");
    // The same from ncugate.toml's [gate], and the flag over the file.
    gate.write("ncugate.toml", "[gate]\nenvironmental = \"fail\"\n");
    gate.run(&check).code(1);
    let warned = args_with(&check, &["--environmental", "warn"]);
    gate.run(&warned).code(0);
    gate.write("ncugate.toml", "[gate]\nenvironmental = \"sometimes\"\n");
    gate.run(&check).code(2);
    std::fs::remove_file(gate.path("ncugate.toml")).expect("remove ncugate.toml");
    // Instructions that changed too explain the time: nothing environmental.
    let kept = gate.read("b.json");
    edit_baseline(&gate, |b| halve(b, SCALE, "sm__inst_executed.sum"));
    let out = gate.run(&check);
    out.code(1);
    assert!(!out.stdout.contains("environmental"), "{}", out.stdout);
    gate.write("b.json", kept);
    // Without the code on one side, nothing is said and the failure stands.
    edit_baseline(&gate, |b| {
        b["kernels"][SCALE]
            .as_object_mut()
            .expect("object")
            .remove("code");
    });
    let out = gate.run(&check);
    out.code(1);
    assert!(!out.stdout.contains("environmental"), "{}", out.stdout);
}

#[test]
fn a_renamed_kernel_with_identical_code_is_paired() {
    let gate = gate();
    record(&gate);
    edit_baseline(&gate, |b| {
        let kernels = b["kernels"].as_object_mut().expect("object");
        let entry = kernels.remove("produce(float *, long)").expect("produce");
        kernels.insert("generate(float *, long)".into(), entry);
    });
    gate.check()
        .baseline("b.json")
        .input("base.ncu-rep")
        .run()
        .code(0)
        .stdout_has("kernel renamed (same code): generate(float *, long) → produce(float *, long)");
}

/// A baseline from the base run's raw page, with the base source pages of
/// `scale` and `finish`.
fn explain_gate() -> Gate {
    let gate = Gate::new();
    gate.h200("graph_app.base.fast.run1.raw.csv", "base.csv")
        .h200("graph_app.strided.fast.raw.csv", "strided.csv")
        .h200("graph_app.unfolded-loop.fast.raw.csv", "unfolded.csv");
    for page in [
        "graph_app.base.scale",
        "graph_app.base.finish",
        "graph_app.strided.scale",
        "graph_app.unfolded-loop.scale",
        "torch_mlp.gemm",
    ] {
        gate.copy(
            explain(&format!("{page}.sourcecounters.csv")),
            &format!("{page}.csv"),
        );
    }
    gate.record()
        .input("base.csv")
        .output("b.json")
        .args(&[
            "--source-page",
            "graph_app.base.scale.csv",
            "--source-page",
            "graph_app.base.finish.csv",
        ])
        .run()
        .code(0);
    gate
}

/// Every rule's why, one per line.
fn whys(report: &serde_json::Value) -> String {
    report["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["why"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_strided_variant_is_explained_by_its_gather_line() {
    let gate = explain_gate();
    let b = gate.json("b.json");
    let lines = b["kernels"][SCALE]["source"]["lines"]
        .as_array()
        .expect("lines");
    assert_eq!(lines.len(), 7);
    assert_eq!(lines[4]["line"], 126);
    let out = gate
        .check()
        .baseline("b.json")
        .input("strided.csv")
        .args(&["--source-page", "graph_app.strided.scale.csv"])
        .json("r.json")
        .markdown("s.md")
        .html("html")
        .junit("j.xml")
        .run();
    out.code(1);
    // The lines in every format: a small table in Markdown, highlighted
    // counters in HTML, the failure text in JUnit.
    let md = gate.read("s.md");
    assert!(
        md.contains("| `void scale<2>(const float *, float *, long, int)` | `graph_app.cu:123` | `const float x = (Impl == ScaleImpl::Strided) ? in[gather_index(i, n)] : in[i];` | L2 sectors 2.10M → 16.78M"),
        "{md}"
    );
    let html = gate.read("html/index.html");
    assert!(
        html.contains("<mark>L2 sectors 2.10M → 16.78M</mark>"),
        "{html}"
    );
    assert!(gate.read("j.xml").contains("graph_app.cu:123"));
    let r = gate.json("r.json");
    assert!(
        whys(&r).contains("lines: graph_app.cu:123  const float x = (Impl == ScaleImpl::Strided) ? in[gather_index(i, n)] : in[i];  L2 sectors 2.10M → 16.78M (+700%)"),
        "{}",
        whys(&r)
    );
    let explained = &r["explain"][0];
    assert_eq!(
        explained["kernel"],
        "void scale<2>(const float *, float *, long, int)"
    );
    assert_eq!(explained["by_line"], true);
    assert_eq!(explained["changes"][0]["place"], "graph_app.cu:123");
    // Never: the same check without lines; the verdict is the same.
    let out = gate
        .check()
        .baseline("b.json")
        .input("strided.csv")
        .args(&[
            "--source-page",
            "graph_app.strided.scale.csv",
            "--explain",
            "never",
        ])
        .run();
    out.code(1);
    assert!(!out.stdout.contains("lines:"), "{}", out.stdout);
}

#[test]
fn the_unfolded_loop_names_the_loop_lines_and_a_bad_page_is_a_note() {
    let gate = explain_gate();
    gate.write("broken.csv", "\"File Path\",\"x\"\n");
    let out = gate
        .check()
        .baseline("b.json")
        .input("unfolded.csv")
        .args(&[
            "--source-page",
            "graph_app.unfolded-loop.scale.csv",
            "--source-page",
            "broken.csv",
            "--source-page",
            "torch_mlp.gemm.csv",
        ])
        .json("r.json")
        .run();
    out.code(1);
    let r = gate.json("r.json");
    assert!(
        whys(&r).contains("lines: graph_app.cu:117  for (int k = degree - 1; k >= 0; --k) {  instructions 0 → 13.63M (new)"),
        "{}",
        whys(&r)
    );
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("broken.csv: not read: the source page has no `Function Name` row"),
        "{notes}"
    );
    assert!(
        notes.contains(
            "torch_mlp.gemm.csv: no line information and no instructions (build with -lineinfo"
        ),
        "{notes}"
    );
}

#[test]
fn without_line_information_opcodes_are_compared() {
    use ncugate::explain::{compare, page::read_source_page};
    let read = |f: &str| {
        let data = std::fs::read(explain(f)).expect("read");
        read_source_page(&data, KernelKeyMode::Demangled).expect("page")
    };
    let (mut base, mut fp64) = (
        read("graph_app.base.finish.sourcecounters.csv"),
        read("graph_app.fp64.finish.sourcecounters.csv"),
    );
    assert!(base.opcodes.contains_key("FFMA"));
    base.lines.clear();
    fp64.lines.clear();
    let explained = compare(&base, &fp64, "instructions");
    assert!(!explained.by_line);
    let places: Vec<&str> = explained.changes.iter().map(|c| c.place.as_str()).collect();
    assert!(places.contains(&"DFMA"), "{places:?}");
    assert!(
        explained
            .lines()
            .last()
            .is_some_and(|l| l.contains("-lineinfo"))
    );
    // Triton kernels carry line information: the doubled softmax's lines.
    let (one, two) = (
        read("triton.base.softmax.sourcecounters.csv"),
        read("triton.twice.softmax.sourcecounters.csv"),
    );
    assert_eq!(one.kernel, "softmax_kernel");
    let explained = compare(&one, &two, "instructions");
    assert!(explained.by_line);
    // The one line the doubled variant adds, and nothing else moved.
    assert_eq!(explained.changes.len(), 1);
    assert_eq!(explained.changes[0].place, "triton_softmax.py:28");
}

#[test]
fn a_profiled_check_re_profiles_only_the_failing_kernel_for_its_lines() {
    use ncugate::config::Config;
    let gate = explain_gate();
    let config = explain_check(&gate, "strided");
    let ncu = FixtureNcu::default();
    assert_eq!(crate::common::execute(&Config::Check(config), &ncu), 1);
    let seen = ncu.seen.lock().expect("lock").clone();
    // The check's run, then one explain run of `scale` (the one failing
    // kernel) and its import.
    assert_eq!(seen.len(), 3, "{seen:?}");
    let explain = seen[1].join(" ");
    assert!(
        explain.contains("--clock-control none")
            && explain.contains("-k regex:^scale$ --launch-skip ")
            && explain.contains(" --launch-count 1 --section SourceCounters --import-source yes"),
        "{explain}"
    );
    assert!(
        seen[2]
            .join(" ")
            .ends_with("--csv --page source --print-source cuda,sass")
    );
    let r: serde_json::Value = serde_json::from_str(&gate.read("r.json")).expect("json");
    assert!(whys(&r).contains("): graph_app.cu:123"), "{}", whys(&r));
    let notes = r["notes"].to_string();
    assert!(notes.contains("explained 1 kernel in "), "{notes}");
    assert!(notes.contains("s, 1 extra ncu run"), "{notes}");
}

/// The base run's `--log-file` with the instructions of the third launch of
/// `scale` tripled: a regression only that launch shows.
fn late_regression_log() -> Vec<u8> {
    let log = crate::common::h200_text("graph_app.base.fast.run1.ncu.log");
    let mut lines: Vec<String> = log.lines().map(str::to_string).collect();
    let header = lines
        .iter()
        .position(|l| l.starts_with("\"ID\""))
        .expect("header");
    let cells = |line: &str| -> Vec<String> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(line.as_bytes());
        let record = reader.records().next().expect("row").expect("csv");
        record.iter().map(str::to_string).collect()
    };
    let column = cells(&lines[header])
        .iter()
        .position(|c| c == "sm__inst_executed.sum")
        .expect("column");
    let mut scales = 0;
    for line in lines.iter_mut().skip(header + 2) {
        let mut row = cells(line);
        if !row[4].contains("scale") {
            continue;
        }
        scales += 1;
        if scales == 3 {
            let value: f64 = row[column].replace(',', "").parse().expect("number");
            row[column] = format!("{}", value * 3.0);
            let mut w = csv::WriterBuilder::new()
                .quote_style(csv::QuoteStyle::Always)
                .from_writer(Vec::new());
            w.write_record(&row).expect("csv");
            let out = String::from_utf8(w.into_inner().expect("csv")).expect("utf8");
            *line = out.trim_end().to_string();
        }
    }
    assert_eq!(scales, 3);
    (lines.join("\n") + "\n").into_bytes()
}

#[test]
fn the_explain_run_profiles_the_launch_that_moved() {
    use ncugate::config::Config;
    // Only the third launch of `scale` regressed; its first is as before.
    // The explain run must profile that third launch (`--launch-skip 2`
    // among launches of `scale`), whose page here is the strided one: the
    // first launch's (the base page) would name no line.
    let gate = explain_gate();
    let config = explain_check(&gate, "base");
    let ncu = FixtureNcu {
        log: Some(late_regression_log()),
        page_for_skip: Some(|skip| if skip == "2" { "strided" } else { "base" }),
        ..Default::default()
    };
    assert_eq!(crate::common::execute(&Config::Check(config), &ncu), 1);
    let seen = ncu.seen.lock().expect("lock").clone();
    assert_eq!(seen.len(), 3, "{seen:?}");
    let explain = seen[1].join(" ");
    assert!(
        explain.contains("-k regex:^scale$ --launch-skip 2 --launch-count 1"),
        "{explain}"
    );
    let r: serde_json::Value = serde_json::from_str(&gate.read("r.json")).expect("json");
    let why = whys(&r);
    assert!(
        why.contains("lines (launch 3 of 3): graph_app.cu:87"),
        "{why}"
    );
    assert!(why.contains("graph_app.cu:123"), "{why}");
    let launch = &r["explain"][0]["launch"];
    assert_eq!(
        (&launch["index"], &launch["of"], &launch["skip"]),
        (&2.into(), &3.into(), &2.into())
    );
}

/// A profiled check of the reference app's `variant` against the explain
/// gate's baseline, writing `r.json`.
fn explain_check(gate: &Gate, variant: &str) -> ncugate::config::CheckConfig {
    use ncugate::config::{CheckConfig, Explain};
    let out = gate.path("out");
    let runner = crate::common::runner_config(
        &[
            "kernels/build/graph_app",
            "--inject",
            variant,
            "--iters",
            "3",
        ],
        gate.dir.path(),
        &out,
    );
    CheckConfig {
        explain: Explain {
            mode: Default::default(),
            kernels: 3,
            budget: 60.0,
            pages: vec![],
        },
        ..crate::common::profiled_check(
            gate.path("b.json"),
            runner,
            ncugate::report::Outputs {
                json: Some(gate.path("r.json")),
                ..Default::default()
            },
        )
    }
}

#[test]
fn a_launch_as_before_says_its_lines_are_unchanged() {
    // The baseline's instructions halved: `scale` fails on them, but its one
    // launch executes every line as the baseline's did.
    let gate = explain_gate();
    edit_baseline(&gate, |b| halve(b, SCALE, "sm__inst_executed.sum"));
    gate.check()
        .baseline("b.json")
        .input("base.csv")
        .args(&["--source-page", "graph_app.base.scale.csv"])
        .json("r.json")
        .run()
        .code(1);
    let r = gate.json("r.json");
    assert!(
        whys(&r).contains("source lines unchanged (one launch compared)"),
        "{}",
        whys(&r)
    );
}

#[test]
fn lines_that_moved_are_matched_by_their_text() {
    use ncugate::explain::{compare, page::read_source_page};
    let data = std::fs::read(explain("graph_app.base.scale.sourcecounters.csv")).expect("read");
    let base = read_source_page(&data, KernelKeyMode::Demangled).expect("page");
    // Three lines inserted above the kernel: every line moves down by 3, and
    // the store executes twice as often.
    let mut moved = base.clone();
    for l in &mut moved.lines {
        l.line += 3;
        if l.text == "out[i] = acc;" {
            for v in l.counters.values_mut() {
                *v *= 2.0;
            }
        }
    }
    let explained = compare(&base, &moved, "instructions");
    assert_eq!(explained.changes.len(), 1, "{:?}", explained.changes);
    assert_eq!(explained.changes[0].place, "graph_app.cu:130 (was 127)");
}

#[test]
fn the_explain_budget_bounds_reading_the_given_source_pages() {
    // The budget bounded only the extra ncu runs: pages given were read and
    // matched however long that took.
    let gate = explain_gate();
    let out = gate
        .check()
        .baseline("b.json")
        .input("strided.csv")
        .args(&[
            "--source-page",
            "graph_app.strided.scale.csv",
            "--explain-budget",
            "0",
        ])
        .json("r.json")
        .run();
    out.code(1);
    let r = gate.json("r.json");
    assert!(!whys(&r).contains("lines:"), "{}", whys(&r));
    let notes = r["notes"].to_string();
    assert!(
        notes.contains(
            "explain: the time budget (0 s, --explain-budget) was spent: 1 source page not read"
        ),
        "{notes}"
    );
}
