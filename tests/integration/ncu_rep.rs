//! The native `.ncu-rep` reader against ncu's own export of the same report:
//! the same raw page cell for cell, the same run model, the same verdict; and
//! damaged reports refused with exit 2, never a panic or a partial run.

use crate::common::{Gate, H200, h200_bytes};
use ncugate::model::KernelKeyMode;
use ncugate::parse::ncu_rep::{self, Refusal, container};
use std::path::Path;

/// Each committed report and the raw page ncu printed for it in base units.
const CORPUS: [(&str, &str); 10] = [
    (
        "graph_app.base.fast.run1.ncu-rep",
        "graph_app.base.fast.run1.raw.base-units.csv",
    ),
    (
        "graph_app.fp64.fast.ncu-rep",
        "graph_app.fp64.fast.raw.base-units.csv",
    ),
    (
        "graph_app.strided.fast.ncu-rep",
        "graph_app.strided.fast.raw.base-units.csv",
    ),
    (
        "graph_app.base.graph.ncu-rep",
        "ncu-rep/graph_app.base.graph.raw.base-units.csv",
    ),
    // The same app with `lts__t_bytes.sum` among the metrics.
    (
        "ncu-rep/graph_app.base.fast.ncu-rep",
        "ncu-rep/graph_app.base.fast.raw.base-units.csv",
    ),
    // Two processes (`--target-processes all` on a shell running the app
    // twice): ncu lists each process's launches together.
    (
        "ncu-rep/graph_app.multi-process.ncu-rep",
        "ncu-rep/graph_app.multi-process.raw.base-units.csv",
    ),
    // `--nvtx`: the two NVTX columns.
    (
        "ncu-rep/nvtx_app.nvtx.ncu-rep",
        "ncu-rep/nvtx_app.nvtx.raw.base-units.csv",
    ),
    // `--replay-mode range`: range results, no launch dimensions.
    (
        "ncu-rep/nvtx_app.range-step.ncu-rep",
        "ncu-rep/nvtx_app.range-step.raw.base-units.csv",
    ),
    // The end-to-end run's reports: the gate's metrics over 9 launches, and
    // `--set full` on one launch, whose PM-sampling metrics (`TriageCompute`)
    // store instance values without a value of their own.
    ("ncu-rep/e2e/R.ncu-rep", "ncu-rep/e2e/R.ncu.raw.csv"),
    ("ncu-rep/e2e/F.ncu-rep", "ncu-rep/e2e/F.ncu.raw.csv"),
];

/// The gate's metrics that a report has (the NVTX reports hold two).
fn metrics_of(report: &str) -> Vec<String> {
    if report.contains("nvtx_app") {
        vec!["gpu__time_duration.sum".into(), "dram__bytes.sum".into()]
    } else {
        metrics()
    }
}

fn csv_rows(file: &str) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(&h200_bytes(file)[..])
        .records()
        .map(|r| r.expect("csv row").iter().map(String::from).collect())
        .collect()
}

/// The gate's metrics in the reference fixtures.
fn metrics() -> Vec<String> {
    crate::common::h200_text("metrics.txt")
        .trim()
        .split(',')
        .map(String::from)
        .collect()
}

#[test]
fn every_cell_matches_ncus_base_unit_raw_page() {
    for (report, csv) in CORPUS {
        let read =
            container::read(&h200_bytes(report)).unwrap_or_else(|e| panic!("{report}: {e:?}"));
        let page = ncu_rep::raw_page(&read);
        let want = csv_rows(csv);
        assert_eq!(page.header, want[0], "{report}: columns");
        assert_eq!(page.units, want[1], "{report}: units");
        assert_eq!(page.rows.len(), want.len() - 2, "{report}: launches");
        let mut cells = 0;
        for (i, (got, want)) in page.rows.iter().zip(&want[2..]).enumerate() {
            assert_eq!(got.len(), want.len(), "{report}: launch {i}'s cells");
            for (c, (g, w)) in got.iter().zip(want).enumerate() {
                assert_eq!(g, w, "{report}: launch {i}, column {}", page.header[c]);
                cells += 1;
            }
        }
        assert!(cells >= 2 * 200, "{report}: only {cells} cells compared");
        // Byte for byte, quoting and line ends included.
        assert_eq!(page.to_csv(), h200_bytes(csv), "{report}: the CSV bytes");
    }
}

#[test]
fn kernel_names_come_in_three_forms() {
    let read = container::read(&h200_bytes(CORPUS[0].0)).expect("read");
    let container::LaunchKind::Kernel {
        mangled,
        function,
        demangled,
    } = &read.launches[1].kind
    else {
        panic!("launch 1 is a kernel")
    };
    assert_eq!(mangled, "_Z5scaleIL9ScaleImpl0EEvPKfPfli");
    assert_eq!(function, "scale");
    assert_eq!(
        demangled,
        "void scale<(ScaleImpl)0>(const float *, float *, long, int)"
    );
    // Instanced metrics keep their instances (the raw page shows only the value).
    let occupancy = read.launches[0]
        .metrics
        .iter()
        .find(|m| m.name == "launch__occupancy_per_register_count")
        .expect("instanced metric");
    assert_eq!(occupancy.instances.len(), 257);
}

#[test]
fn the_run_model_equals_the_csv_paths() {
    for key_mode in [KernelKeyMode::Demangled, KernelKeyMode::Function] {
        for (report, csv) in CORPUS {
            let path = Path::new(H200).join(report);
            let metrics = metrics_of(report);
            let native = ncu_rep::read_run(&path, &metrics, key_mode)
                .unwrap_or_else(|e| panic!("{report}: {:?}", e.into_error()));
            let mut from_csv =
                ncugate::parse::raw::read_raw(&path, &h200_bytes(csv)[..], &metrics, key_mode)
                    .expect("csv");
            from_csv.sha256 = ncugate::parse::sha256_bytes(&h200_bytes(report));
            // The report names the ncu that wrote it; the CSV does not.
            assert_eq!(
                native.profiler_version.as_deref(),
                Some("2025.3.1.0 (build 36398880) (public-release)"),
                "{report}"
            );
            assert_eq!(from_csv.profiler_version, None);
            from_csv
                .profiler_version
                .clone_from(&native.profiler_version);
            assert_eq!(native, from_csv, "{report} ({key_mode})");
        }
    }
}

/// Runs ncugate with no ncu anywhere.
fn without_ncu(gate: &Gate, args: &[&str]) -> crate::common::Outcome {
    gate.run_with(args, &[("NCUGATE_NCU", "/nonexistent/ncu")])
}

#[test]
fn check_gives_the_csvs_verdict_without_ncu() {
    let gate = Gate::new();
    gate.h200("graph_app.base.fast.run1.ncu-rep", "base.ncu-rep")
        .h200("graph_app.base.fast.run1.raw.base-units.csv", "base.csv")
        .h200("graph_app.strided.fast.ncu-rep", "strided.ncu-rep")
        .h200("graph_app.strided.fast.raw.base-units.csv", "strided.csv");
    let record = |input: &str, output: &str| {
        let out = without_ncu(
            &gate,
            &["baseline", "record", "--input", input, "--output", output],
        );
        assert_eq!(out.code, 0, "record {input}: {}", out.stderr);
    };
    record("base.ncu-rep", "from-report.json");
    record("base.csv", "from-csv.json");
    let strip = |name: &str| strip_provenance(&gate.read(name));
    assert_eq!(strip("from-report.json"), strip("from-csv.json"));
    for (input, code) in [
        ("base.ncu-rep", 0),
        ("base.csv", 0),
        ("strided.ncu-rep", 1),
        ("strided.csv", 1),
    ] {
        let out = without_ncu(
            &gate,
            &["check", "--baseline", "from-report.json", "--input", input],
        );
        assert_eq!(
            out.code, code,
            "check {input}: {}{}",
            out.stdout, out.stderr
        );
    }
}

/// A report given as `--input` is read for its own rule results too: a
/// `--set full` report's findings are recorded with its metrics, and a check
/// of it compares findings, where both once needed `--details R.ncu-rep`.
#[test]
fn an_input_report_gives_its_own_rule_results() {
    let gate = Gate::new();
    gate.h200("ncu-rep/e2e/F.ncu-rep", "full.ncu-rep");
    let rules = format!("{}/set-full.toml", crate::common::THRESHOLDS);
    without_ncu(
        &gate,
        &[
            "baseline",
            "record",
            "--input",
            "full.ncu-rep",
            "--output",
            "b.json",
            "--thresholds",
            &rules,
        ],
    )
    .code(0);
    let baseline: serde_json::Value = serde_json::from_str(&gate.read("b.json")).expect("json");
    let findings: usize = baseline["kernels"]
        .as_object()
        .expect("kernels")
        .values()
        .map(|k| k["findings"].as_object().map_or(0, |f| f.len()))
        .sum();
    assert!(findings > 0, "no findings recorded: {baseline}");
    assert_eq!(baseline["details"][0]["path"], "full.ncu-rep");
    let out = without_ncu(
        &gate,
        &[
            "check",
            "--baseline",
            "b.json",
            "--input",
            "full.ncu-rep",
            "--json",
            "r.json",
            "--thresholds",
            &rules,
        ],
    );
    out.code(0);
    assert!(
        !out.stdout.contains("findings not compared"),
        "{}",
        out.stdout
    );
    let report: serde_json::Value = serde_json::from_str(&gate.read("r.json")).expect("json");
    assert_eq!(report["details"][0], "full.ncu-rep");
    // A baseline recorded without findings is not compared with the
    // report's: nothing new is said, and the report lists no details file.
    gate.h200("ncu-rep/e2e/F.ncu.raw.csv", "full.csv");
    without_ncu(
        &gate,
        &[
            "baseline",
            "record",
            "--input",
            "full.csv",
            "--output",
            "plain.json",
            "--thresholds",
            &rules,
        ],
    )
    .code(0);
    let out = without_ncu(
        &gate,
        &[
            "check",
            "--baseline",
            "plain.json",
            "--input",
            "full.ncu-rep",
            "--json",
            "p.json",
            "--thresholds",
            &rules,
        ],
    );
    out.code(0);
    assert!(
        !out.stdout.contains("findings not compared"),
        "{}",
        out.stdout
    );
    let report: serde_json::Value = serde_json::from_str(&gate.read("p.json")).expect("json");
    assert_eq!(report["details"], serde_json::json!([]));
}

/// A baseline without what differs by construction between one recorded
/// from a report and one recorded from ncu's CSV of it: where it came from
/// and when (`inputs`: path and SHA-256; `created`), and the kernels' code
/// (`code`), which only a report embeds, and the files its rule results
/// were read from (`details`: a report holds its own).
fn strip_provenance(json: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(json).expect("json");
    for key in [
        "recorded_at",
        "inputs",
        "details",
        "created",
        "sources",
        "wall_seconds",
        // The report says which ncu wrote it, a CSV does not.
        "profiler_version",
    ] {
        if let Some(o) = v.as_object_mut() {
            o.remove(key);
        }
    }
    if let Some(kernels) = v["kernels"].as_object_mut() {
        for entry in kernels.values_mut() {
            if let Some(o) = entry.as_object_mut() {
                o.remove("code");
            }
        }
    }
    v
}

/// The H200 end-to-end run recorded a baseline from its report (natively,
/// without ncu) and one from ncu's raw page of that report: they differ only
/// in provenance and the kernels' code; and today's ncugate records the
/// same baseline from that raw page.
#[test]
fn the_h200_runs_baselines_from_the_report_and_its_csv_agree() {
    let e2e = |file: &str| crate::common::h200_text(&format!("ncu-rep/e2e/{file}"));
    let native: serde_json::Value = serde_json::from_str(&e2e("b.native.json")).expect("json");
    let csv: serde_json::Value = serde_json::from_str(&e2e("b.csv.json")).expect("json");
    assert_ne!(native["inputs"], csv["inputs"]);
    for (name, kernel) in native["kernels"].as_object().expect("kernels") {
        assert!(kernel["code"].is_object(), "{name}: the report's code");
        assert!(csv["kernels"][name].get("code").is_none(), "{name}");
    }
    assert_eq!(
        strip_provenance(&e2e("b.native.json")),
        strip_provenance(&e2e("b.csv.json"))
    );
    let gate = Gate::new();
    gate.h200("ncu-rep/e2e/R.ncu.raw.csv", "R.csv");
    let out = without_ncu(
        &gate,
        &[
            "baseline", "record", "--input", "R.csv", "--output", "b.json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut now = strip_provenance(&gate.read("b.json"));
    let mut then = strip_provenance(&e2e("b.csv.json"));
    for v in [&mut now, &mut then] {
        if let Some(o) = v.as_object_mut() {
            o.remove("ncugate_version");
        }
    }
    assert_eq!(now, then);
}

/// Every way a read can end, for the mutation tests: never a panic.
fn outcome(data: &[u8]) -> Result<usize, container::Failure> {
    container::read(data).map(|r| r.launches.len())
}

/// The byte offsets where blocks start: a cut exactly there is a shorter,
/// well-formed report (the format has no total length).
fn block_starts(data: &[u8]) -> Vec<usize> {
    let le = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().expect("4 bytes")) as usize;
    let mut starts = Vec::new();
    let mut at = 8 + le(4);
    while at < data.len() {
        starts.push(at);
        let header = &data[at + 4..at + 4 + le(at)];
        let size = prost_payload_size(header);
        at += 4 + le(at) + size;
    }
    starts.push(data.len());
    starts
}

fn prost_payload_size(header: &[u8]) -> usize {
    use prost::Message;
    ncu_rep::schema::BlockHeader::decode(header)
        .expect("header")
        .payload_size
        .unwrap_or(0) as usize
}

#[test]
fn a_truncated_report_is_refused_wherever_it_is_cut() {
    // A kernel report, and a range-replay report with NVTX states.
    for report in [CORPUS[0].0, CORPUS[7].0] {
        truncated_everywhere(report);
    }
}

fn truncated_everywhere(report: &str) {
    let data = h200_bytes(report);
    let starts = block_starts(&data);
    let whole = outcome(&data).expect("whole report");
    let mut refused = 0;
    // Every byte of the framing (magic, sizes, the first bytes of each block)
    // and a cut every 389 bytes in between.
    let mut cuts: Vec<usize> = (0..16).chain((0..data.len()).step_by(389)).collect();
    for &s in &starts {
        cuts.extend(s.saturating_sub(2)..(s + 12).min(data.len()));
    }
    cuts.push(data.len() - 1);
    for cut in cuts {
        match outcome(&data[..cut]) {
            Ok(n) => {
                assert!(
                    starts.contains(&cut),
                    "cut at {cut} of {} read {n} launches",
                    data.len()
                );
                assert!(n <= whole);
            }
            Err(container::Failure::Corrupt(m)) => {
                assert!(m.contains("truncated"), "cut at {cut}: {m}");
                refused += 1;
            }
            Err(container::Failure::Unsupported(m)) => {
                assert!(cut < 4, "cut at {cut} read as unsupported: {m}")
            }
            Err(other) => panic!("cut at {cut}: {}", other.message()),
        }
    }
    assert!(refused > 100, "{report}: only {refused} cuts refused");
}

#[test]
fn flipped_bytes_never_panic() {
    // Graph results, several processes, NVTX states, range results.
    for report in [CORPUS[3].0, CORPUS[5].0, CORPUS[6].0, CORPUS[7].0] {
        flip_bits(report);
    }
}

/// Flips one bit at a time at 1000 places: every read ends in a report or an
/// error, never a panic, and the page of what reads is still a page.
fn flip_bits(report: &str) {
    let data = h200_bytes(report);
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut errors = 0;
    for _ in 0..1000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut bad = data.clone();
        let at = (seed % data.len() as u64) as usize;
        bad[at] ^= 1 << ((seed >> 32) % 8);
        match container::read(&bad) {
            Ok(read) => {
                let page = ncu_rep::raw_page(&read);
                assert!(page.rows.iter().all(|r| r.len() == page.header.len()));
                let rules = ncu_rep::details_page(&read);
                assert!(rules.rows.iter().all(|r| r.len() == rules.header.len()));
            }
            Err(_) => errors += 1,
        }
    }
    assert!(errors > 0, "{report}: no flip was noticed");
}

#[test]
fn damaged_and_unknown_reports_exit_2_with_a_hint() {
    let gate = Gate::new();
    let data = h200_bytes(CORPUS[0].0);
    let mut v8 = data.clone();
    v8[9] = 8; // the file header's version field
    let mut huge = data.clone();
    let first_block = 8 + 2;
    huge[first_block..first_block + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    gate.write("cut.ncu-rep", &data[..data.len() / 2])
        .write("v8.ncu-rep", &v8)
        .write("huge.ncu-rep", &huge)
        .write("old.ncu-rep", b"NVC\x01 an older format")
        .write("old.nsight-cuprof-report", b"\x01\x02 a 2019 report")
        .write("z.ncu-repz", b"\x28\xb5\x2f\xfd compressed")
        .write(
            "csv.ncu-repz",
            ruzstd::encoding::compress_to_vec(
                &b"\"ID\",\"Kernel Name\"\n"[..],
                ruzstd::encoding::CompressionLevel::Fastest,
            ),
        );
    for (file, needle) in [
        (
            "old.nsight-cuprof-report",
            "a `.nsight-cuprof-report` file is not the `.ncu-rep` format",
        ),
        // A Zstandard magic number and no stream after it: a damaged
        // compressed report (one that inflates to something else: another
        // format, for ncu to read).
        (
            "z.ncu-repz",
            "the Zstandard stream (a .ncu-repz) is corrupt",
        ),
        (
            "csv.ncu-repz",
            "it is Zstandard-compressed, but what it inflates to is not the `.ncu-rep` format",
        ),
        ("cut.ncu-rep", "truncated"),
        ("v8.ncu-rep", "version 8"),
        ("huge.ncu-rep", "truncated"),
        ("old.ncu-rep", "does not start with `NVR`"),
    ] {
        let out = without_ncu(
            &gate,
            &["baseline", "record", "--input", file, "--output", "b.json"],
        );
        out.code(2).stderr_has(needle).stderr_has("hint:");
        assert!(
            !gate.path("b.json").exists(),
            "{file}: a baseline was written"
        );
    }
    // The same reports given for their rule results.
    gate.write("good.ncu-rep", &data);
    for (file, needle) in [("cut.ncu-rep", "truncated"), ("v8.ncu-rep", "version 8")] {
        let out = without_ncu(
            &gate,
            &[
                "baseline",
                "record",
                "--input",
                "good.ncu-rep",
                "--details",
                file,
                "--output",
                "b.json",
            ],
        );
        out.code(2).stderr_has(needle).stderr_has("hint:");
        assert!(
            !gate.path("b.json").exists(),
            "--details {file}: a baseline was written"
        );
    }
}

#[test]
fn an_unknown_version_is_unsupported_not_corrupt() {
    let mut data = h200_bytes(CORPUS[0].0);
    data[9] = 6;
    let path = std::env::temp_dir().join(format!("ncugate-v6-{}.ncu-rep", std::process::id()));
    std::fs::write(&path, &data).expect("write");
    let got = ncu_rep::read_run(&path, &metrics(), KernelKeyMode::Demangled);
    let _ = std::fs::remove_file(&path);
    assert!(matches!(got, Err(Refusal::Unsupported(_))), "{got:?}");
}

#[test]
fn the_unit_table_agrees_with_every_committed_raw_page() {
    // The full-set exports are in ncu's auto units: their base unit must be
    // the table's.
    let mut checked = 0;
    let mut missing = Vec::new();
    for csv in [
        "graph_app.base.full.raw.csv",
        "graph_app.strided.full.raw.csv",
        "graph_app.base.graph.raw.csv",
        "graph_app.base.fast.run1.raw.csv",
    ] {
        let rows = csv_rows(csv);
        for (name, printed) in rows[0].iter().zip(&rows[1]).skip(11) {
            let base = ncugate::units::Unit::parse(printed).base;
            let Some(table) = ncu_rep::units::unit(name) else {
                missing.push(format!("{name}\t{base}"));
                continue;
            };
            assert_eq!(table, base, "{csv}: `{name}` printed in {printed:?}");
            checked += 1;
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "not in the table:\n{}",
        missing.join("\n")
    );
    assert!(checked > 4000, "only {checked} columns checked");
}

#[test]
fn a_gated_metric_of_unknown_unit_is_refused_not_guessed() {
    // The same report with one metric renamed in its string table (same
    // length, so every size still holds).
    let data = h200_bytes(CORPUS[0].0);
    let (from, to) = (&b"dram__bytes.sum"[..], &b"dram__bytez.sum"[..]);
    let at = data
        .windows(from.len())
        .position(|w| w == from)
        .expect("metric name in the string table");
    let mut renamed = data.clone();
    renamed[at..at + from.len()].copy_from_slice(to);
    let gate = Gate::new();
    gate.write("renamed.ncu-rep", &renamed);
    let got = ncu_rep::read_run(
        &gate.path("renamed.ncu-rep"),
        &["dram__bytez.sum".to_string()],
        KernelKeyMode::Demangled,
    );
    let Err(Refusal::Unsupported(e)) = got else {
        panic!("read as {got:?}")
    };
    assert!(
        e.to_string().contains("unit of metric `dram__bytez.sum`"),
        "{e}"
    );
    // Without that metric the report reads, and its other values stay.
    let run = ncu_rep::read_run(
        &gate.path("renamed.ncu-rep"),
        &["gpu__time_duration.sum".to_string()],
        KernelKeyMode::Demangled,
    )
    .map_err(Refusal::into_error)
    .expect("read");
    assert_eq!(run.total.launches, 9);
}

/// The 41 MB PyTorch CUDA-graph report (`torch_mlp.fast.ncu-rep`, see
/// `fixtures/h200/ncu-rep/README.md`) is too big to commit; its raw page is
/// committed. With `NCUGATE_TORCH_REPORT` set to the report's path, the native
/// page must match ncu's byte for byte (kernel names of PyTorch and cuBLAS
/// included); without it the test has nothing to read and says so.
#[test]
fn the_pytorch_report_matches_when_present() {
    let Some(path) = std::env::var_os("NCUGATE_TORCH_REPORT") else {
        eprintln!("NCUGATE_TORCH_REPORT not set: the PyTorch report is not compared");
        return;
    };
    let data = std::fs::read(&path).expect("read the PyTorch report");
    let read = container::read(&data).expect("the PyTorch report reads");
    assert_eq!(
        ncu_rep::raw_page(&read).to_csv(),
        h200_bytes("ncu-rep/torch_mlp.fast.raw.base-units.csv")
    );
}

#[test]
fn range_results_are_keyed_by_their_nvtx_ranges() {
    let path = Path::new(H200).join(CORPUS[7].0);
    let run = ncu_rep::read_run(&path, &metrics_of(CORPUS[7].0), KernelKeyMode::Demangled)
        .map_err(Refusal::into_error)
        .expect("read");
    let keys: Vec<&str> = run.kernels.keys().map(String::as_str).collect();
    assert_eq!(keys, ["range [train/step/] [epoch]"]);
    assert_eq!(run.total.launches, 2);
}

/// Reports from a public repository (`fixtures/public-ncu-rep/`): written by
/// Nsight Compute 2022.2 on a V100, before and after an optimization.
const PUBLIC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/public-ncu-rep");

#[test]
fn public_2022_reports_gate_without_ncu() {
    let gate = Gate::new();
    for (file, name) in [
        ("ncar-gpu-workshop.MW_Baseline.ncu-rep", "before.ncu-rep"),
        ("ncar-gpu-workshop.MW_DivToMult.ncu-rep", "after.ncu-rep"),
    ] {
        gate.copy(Path::new(PUBLIC).join(file), name);
        let read = container::read(&std::fs::read(gate.path(name)).expect("read")).expect(file);
        assert_eq!(read.launches.len(), 5, "{file}");
        let page = ncu_rep::raw_page(&read);
        assert_eq!(page.rows[2][4], "compute_tendencies_x_279_gpu");
        assert_eq!(page.rows[2][10], "7.0");
        assert!(
            read.launches.iter().all(|l| !l.rules.is_empty()),
            "{file}: rules"
        );
    }
    let thresholds = concat!(env!("CARGO_MANIFEST_DIR"), "/thresholds/set-full.toml");
    for (baseline, input) in [("before", "after"), ("after", "before")] {
        let (b_rep, b_json, i_rep) = (
            format!("{baseline}.ncu-rep"),
            format!("{baseline}.json"),
            format!("{input}.ncu-rep"),
        );
        let out = without_ncu(
            &gate,
            &[
                "baseline",
                "record",
                "--thresholds",
                thresholds,
                "--input",
                &b_rep,
                "--details",
                &b_rep,
                "--output",
                &b_json,
            ],
        );
        assert_eq!(out.code, 0, "record {baseline}: {}", out.stderr);
        let out = without_ncu(
            &gate,
            &[
                "check",
                "--thresholds",
                thresholds,
                "--baseline",
                &b_json,
                "--input",
                &i_rep,
                "--details",
                &i_rep,
            ],
        );
        if baseline == "before" {
            // The optimization: 6.19 ms -> 3.48 ms, and a finding the
            // baseline did not have, read from the report's rule results.
            out.code(0)
                .stdout_has("-43.8%")
                .stdout_has("new ncu finding CPIStall (WRN)");
        } else {
            out.code(1)
                .stdout_has("gpu__time_duration.sum (sum) [FAIL]: +77.8%");
        }
    }
}

#[test]
fn rule_results_are_the_details_pages_rule_rows() {
    let data = std::fs::read(Path::new(PUBLIC).join("ncar-gpu-workshop.MW_Baseline.ncu-rep"))
        .expect("read");
    let page = ncu_rep::details_page(&container::read(&data).expect("read"));
    let col = |name: &str| page.header.iter().position(|h| h == name).expect(name);
    // Section by section, in the sections' display order, as ncu lists them
    // (the first launch's rules).
    let mut sections: Vec<&str> = page
        .rows
        .iter()
        .filter(|r| r[col("ID")] == "0")
        .map(|r| r[col("Section Name")].as_str())
        .collect();
    sections.dedup();
    assert_eq!(
        sections,
        [
            "SpeedOfLight",
            "SpeedOfLight_RooflineChart",
            "ComputeWorkloadAnalysis",
            "MemoryWorkloadAnalysis_Tables",
            "SchedulerStats",
            "WarpStateStats",
            "Occupancy",
            "SourceCounters",
        ]
    );
    let first = page
        .rows
        .iter()
        .find(|r| r[col("Section Name")] == "ComputeWorkloadAnalysis")
        .expect("a compute workload rule");
    assert_eq!(first[col("Rule Name")], "HighPipeUtilization");
    assert_eq!(first[col("Rule Type")], "WRN");
    // Links print as their text, as on ncu's pages.
    assert!(
        first[col("Rule Description")].ends_with(
            "Check the Launch Statistics and Scheduler Statistics sections for further details."
        ),
        "{}",
        first[col("Rule Description")]
    );
    assert_eq!(page.rows.len(), 59);
    let findings = ncu_rep::read_findings(
        &Path::new(PUBLIC).join("ncar-gpu-workshop.MW_Baseline.ncu-rep"),
        KernelKeyMode::Demangled,
    )
    .map_err(Refusal::into_error)
    .expect("findings");
    assert!(findings["compute_tendencies_x_279_gpu"].contains_key("UncoalescedGlobalAccess"));
}

/// The rule rows of the H200 `--set full` report are the rule rows of ncu's
/// details page of it (`ncu --import F.ncu-rep --csv --page details`): the
/// same rules, in the same order, with the same texts and speedups.
#[test]
fn the_full_sets_rule_rows_are_ncus() {
    let cols = [
        "ID",
        "Section Name",
        "Rule Name",
        "Rule Type",
        "Rule Description",
        "Estimated Speedup Type",
        "Estimated Speedup",
    ];
    let rule_rows = |rows: &[Vec<String>]| -> Vec<Vec<String>> {
        let at = |name: &str| rows[0].iter().position(|h| h == name).expect(name);
        rows[1..]
            .iter()
            .filter(|r| r.get(at("Rule Name")).is_some_and(|n| !n.is_empty()))
            .map(|r| cols.iter().map(|c| r[at(c)].clone()).collect())
            .collect()
    };
    let read = container::read(&h200_bytes("ncu-rep/e2e/F.ncu-rep")).expect("read");
    let page = ncu_rep::details_page(&read);
    let ours: Vec<Vec<String>> = std::iter::once(page.header.clone())
        .chain(page.rows)
        .collect();
    // ncu ends a metric row after its value: rows are of unequal length.
    let ncu: Vec<Vec<String>> = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(&h200_bytes("ncu-rep/e2e/F.ncu.details.csv")[..])
        .records()
        .map(|r| r.expect("csv row").iter().map(String::from).collect())
        .collect();
    let want = rule_rows(&ncu);
    assert_eq!(want.len(), 8);
    assert_eq!(rule_rows(&ours), want);
}

/// A gate on a PM-sampling metric of a `--set full` report (instance values,
/// no value of its own) is refused the same way from the report as from
/// ncu's CSV of it: the cell is empty on both.
#[test]
fn a_gate_on_a_sampled_metric_is_refused_alike_from_report_and_csv() {
    let gate = Gate::new();
    gate.h200("ncu-rep/e2e/F.ncu-rep", "F.ncu-rep");
    gate.h200("ncu-rep/e2e/F.ncu.raw.csv", "F.csv");
    gate.write(
        "t.toml",
        "[[rule]]\nmetric = \"LTS.TriageCompute.lts__throughput.avg.pct_of_peak_sustained_elapsed\"\nworse = \"lower\"\nmax_change = \"10%\"\n",
    );
    for input in ["F.ncu-rep", "F.csv"] {
        let args = [
            "baseline",
            "record",
            "--thresholds",
            "t.toml",
            "--input",
            input,
            "-o",
            "b.json",
        ];
        without_ncu(&gate, &args).one_clear_error("is n/a or empty for some launches");
        assert!(!gate.path("b.json").exists(), "{input}: no baseline");
    }
}

#[test]
fn the_profiler_version_is_recorded_and_a_change_is_named() {
    // The report says it was written by Nsight Compute 2022.2.0.0; the
    // baseline keeps that, and a baseline edited here to name another
    // version makes the check say the profiler changed.
    let gate = Gate::new();
    gate.copy(
        Path::new(PUBLIC).join("ncar-gpu-workshop.MW_Baseline.ncu-rep"),
        "before.ncu-rep",
    );
    let thresholds = format!("{}/set-full.toml", crate::common::THRESHOLDS);
    let out = without_ncu(
        &gate,
        &[
            "baseline",
            "record",
            "--input",
            "before.ncu-rep",
            "--thresholds",
            &thresholds,
            "--output",
            "b.json",
        ],
    );
    out.code(0);
    let recorded = "2022.2.0.0 (build 31140043) (public-release)";
    assert_eq!(gate.json("b.json")["profiler_version"], recorded);
    let check = |baseline: &str| {
        without_ncu(
            &gate,
            &[
                "check",
                "--baseline",
                baseline,
                "--input",
                "before.ncu-rep",
                "--thresholds",
                &thresholds,
            ],
        )
    };
    let same = check("b.json");
    same.code(0);
    assert!(!same.stdout.contains("profiler changed"), "{}", same.stdout);
    let other = "2025.3.1.0 (build 36398880) (public-release)";
    gate.write("other.json", gate.read("b.json").replace(recorded, other));
    check("other.json").code(0).stdout_has(
        "the profiler changed: the baseline's reports were written by Nsight Compute 2025.3.1.0",
    );
}
