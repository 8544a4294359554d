//! Real ncu CSV exports from public repositories (`fixtures/public/`, sources
//! in its README): each is recorded and checked against itself (exit 0) and
//! against a copy with one kernel's metric doubled (exit 1). The modified
//! copies are generated here, from the real files. Every file in the folder
//! must be in [`EXPORTS`] or [`REFUSED`] and named in the README, so none is silently ungated.

use crate::common;
use common::Gate;
use std::path::Path;

pub const PUBLIC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/public");

/// One public export: file, the metric the test gates (an ID, or a details
/// label), and the number of header columns (the ncu column era; a raw page
/// has one column per metric).
struct Export {
    file: &'static str,
    metric: &'static str,
    columns: usize,
}

const fn export(file: &'static str, metric: &'static str, columns: usize) -> Export {
    Export {
        file,
        metric,
        columns,
    }
}

/// Every export in `fixtures/public/` that can be gated.
const EXPORTS: &[Export] = &[
    // 12 columns, `Kernel Time` date, section "GPU Speed Of Light", V100.
    export(
        "optimal_unified_memory.cfd_097K.v100.details.csv",
        "gpu__time_duration.sum",
        12,
    ),
    export(
        "leleucas.conv2d_result_l2.details.csv",
        "lts__t_requests.sum",
        12,
    ),
    // 15 columns: 12 + the rule columns, `Kernel Time`.
    export(
        "leleucas.bert_flashattn_nsight.details.csv",
        "dram__bytes.sum",
        15,
    ),
    export("leleucas.conv2d_result.details.csv", "dram__bytes.sum", 15),
    // 15 columns: Block/Grid Size, Device, CC.
    export(
        "cuda-roofline.output_A100.details.csv",
        "dram__bytes.sum",
        15,
    ),
    export("cuda-roofline.output.details.csv", "dram__bytes.sum", 15),
    // 18 columns: 15 + rule columns.
    export(
        "leleucas.pooling_nsight16.details.csv",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
        18,
    ),
    // 20 columns: 18 + estimated speedup, B200, unit `ns`, trailing commas.
    export(
        "superbenchmark.cublaslt_ncu.b200.details.csv",
        "Duration",
        20,
    ),
    // 20 columns, CC 12.0, metrics-only (`Mbyte`), cuBLAS template names with commas.
    export(
        "llm-perf-opt.kernel_0001.details.csv",
        "dram__bytes_read.sum",
        20,
    ),
    // 20 columns, the Speed-of-Light section by label, `us`.
    export(
        "llm-perf-opt.kernel_0001.sol.details.csv",
        "gpu__time_duration.sum",
        20,
    ),
    // 21 columns: `Body Item Label` (roofline chart), `Gbyte/s`, `Ghz`, thousands separators.
    // `DRAM Bandwidth` is in two charts of the section: the rule names one by its body item label.
    export(
        "llm-perf-opt.kernel_0001.roofline.details.csv",
        "Single Precision Achieved Value: DRAM Bandwidth",
        21,
    ),
    // 20 columns, CC 8.9, Windows: a 4,992-line preamble of MSVC output in CP949 (not UTF-8).
    export(
        "flash-attention-cuda.ncu_result.details.csv",
        "gpu__time_duration.sum",
        20,
    ),
    // CC 8.6, 48 SMs: `--set` runs (20 columns) and a metrics-only run without rule columns (15).
    export(
        "multi-agentic-cuda.kernels_profile.details.csv",
        "gpu__time_duration.sum",
        20,
    ),
    export(
        "multi-agentic-cuda.profile_results.details.csv",
        "Duration",
        20,
    ),
    export(
        "multi-agentic-cuda.sigmoid_profile.details.csv",
        "gpu__time_duration.sum",
        15,
    ),
    // Raw page (`--page raw` at profile time): 475 columns, `==PROF==` preamble, B200, 148 SMs.
    export(
        "roofline-analysis.flashinfer_decode.b200.raw.csv",
        "gpu__time_duration.sum",
        475,
    ),
];

/// Public files that hold no ncu CSV at all, and the error (exit 2) each gets.
const REFUSED: &[(&str, &str)] = &[
    (
        "llm-perf-opt.ncu-error.raw.csv",
        "ncu said: ==ERROR== Option '--section .*SpeedOfLight.*' did not match any section.",
    ),
    (
        "dphpc-gemm.ncu.log",
        "ncu wrote its results to /home/nwadekar/dphpc/dphpc-gemm/ncu_analysis.ncu-rep",
    ),
    (
        "heat_eq.ncu_output.txt",
        "this is ncu's text report (`Section:` tables), not a CSV export",
    ),
];

/// The header row of an export (after any preamble) and its byte offset.
pub fn header(data: &[u8]) -> (usize, csv::StringRecord) {
    let mut at = 0;
    for line in data.split_inclusive(|&b| b == b'\n') {
        let bare = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
        if bare.starts_with(b"\"ID\",") {
            let record = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(bare)
                .records()
                .next()
                .expect("header")
                .expect("header row");
            return (at, record);
        }
        at += line.len();
    }
    panic!("no header row");
}

/// A copy of a details export with the first kernel's metric (any of `names`:
/// its ID and its details label) doubled; the preamble is kept as it was.
fn doubled(data: &[u8], names: &[&str]) -> Vec<u8> {
    doubled_where(data, |row: Field| {
        names.contains(&row("Metric Name").as_str())
    })
}

/// A row's field by column name (`""` where the row or page has none).
pub type Field<'a> = &'a dyn Fn(&str) -> String;

/// A copy of a details export with the value of each row of the first kernel
/// that `pick` accepts doubled (`pick` reads a row's field by column name); the
/// preamble is kept as it was. Panics unless some row changed.
pub fn doubled_where(data: &[u8], pick: impl Fn(Field) -> bool) -> Vec<u8> {
    let (at, head) = header(data);
    let col = |n: &str| head.iter().position(|h| h == n).expect(n);
    let (kernel, value) = (col("Kernel Name"), col("Metric Value"));
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(&data[at..]);
    let rows: Vec<csv::StringRecord> = reader
        .records()
        .map(|r| r.expect("row"))
        .filter(|r| !r.get(0).unwrap_or_default().starts_with("=="))
        .collect();
    let first = rows[1][kernel].to_string();
    let mut writer = csv::WriterBuilder::new()
        .flexible(true)
        .quote_style(csv::QuoteStyle::Always)
        .from_writer(data[..at].to_vec());
    let mut changed = 0;
    for (i, row) in rows.iter().enumerate() {
        let mut fields: Vec<String> = row.iter().map(str::to_string).collect();
        let get = |n: &str| {
            head.iter()
                .position(|h| h == n)
                .and_then(|c| fields.get(c).cloned())
                .unwrap_or_default()
        };
        if i > 0 && fields[kernel] == first && fields.len() > value && pick(&get) {
            let v: f64 = fields[value].replace(',', "").parse().expect("number");
            assert!(
                v > 0.0,
                "{} of {first} is {v}: doubling changes nothing",
                get("Metric Name")
            );
            fields[value] = format!("{}", v * 2.0);
            changed += 1;
        }
        writer.write_record(&fields).expect("write");
    }
    assert!(changed > 0, "no row picked for {first}");
    writer.into_inner().expect("csv")
}

/// A copy of a raw page with `metric` of every launch of the first row's
/// kernel doubled (the preamble, header and units row kept as they were).
pub fn raw_doubled(data: &[u8], metric: &str) -> Vec<u8> {
    let (at, head) = header(data);
    let col = |n: &str| head.iter().position(|h| h == n).expect(n);
    let (kernel, value) = (col("Kernel Name"), col(metric));
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(&data[at..]);
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
    let first = rows[2][kernel].to_string();
    let mut writer = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Always)
        .from_writer(data[..at].to_vec());
    for (i, row) in rows.iter().enumerate() {
        let mut fields: Vec<String> = row.iter().map(str::to_string).collect();
        if i > 1 && fields[kernel] == first {
            let v: f64 = fields[value].replace(',', "").parse().expect("number");
            assert!(
                v > 0.0,
                "{metric} of {first} is {v}: doubling changes nothing"
            );
            fields[value] = format!("{}", v * 2.0);
        }
        writer.write_record(&fields).expect("write");
    }
    writer.into_inner().expect("csv")
}

#[test]
fn every_public_export_records_passes_against_itself_and_fails_when_a_kernel_doubles() {
    let readme = std::fs::read_to_string(Path::new(PUBLIC).join("README.md")).expect("README");
    let mut on_disk: Vec<String> = std::fs::read_dir(PUBLIC)
        .expect("fixtures/public")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n != "README.md")
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = EXPORTS
        .iter()
        .map(|e| e.file)
        .chain(REFUSED.iter().map(|(f, _)| *f))
        .map(str::to_string)
        .collect();
    listed.sort();
    assert_eq!(on_disk, listed, "every public export is gated by this test");
    assert!(EXPORTS.len() >= 15);
    // The README's table names each file's repository ("same" repeats the row above).
    let mut repos: Vec<&str> = Vec::new();
    let mut last = "";
    for line in readme.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        if cells.len() > 2
            && EXPORTS
                .iter()
                .any(|e| cells[0] == format!("| `{}`", e.file))
        {
            if cells[1] != "same" {
                last = cells[1];
            }
            if !repos.contains(&last) {
                repos.push(last);
            }
        }
    }
    assert!(
        repos.len() >= 8,
        "exports from {} repositories: {repos:?}",
        repos.len()
    );

    let gate = Gate::new();
    for (file, error) in REFUSED {
        assert!(readme.contains(file), "{file} is not in the README");
        gate.copy(Path::new(PUBLIC).join(file), file);
        gate.write("any.toml", common::rule("gpu__time_duration.sum"));
        gate.record()
            .thresholds("any.toml")
            .input(file)
            .output("refused.json")
            .run()
            .one_clear_error(error);
    }
    for (i, e) in EXPORTS.iter().enumerate() {
        assert!(readme.contains(e.file), "{} is not in the README", e.file);
        let data = std::fs::read(Path::new(PUBLIC).join(e.file)).expect("read");
        let (_, head) = header(&data);
        assert_eq!(head.len(), e.columns, "{}: header columns", e.file);
        let rules = format!("r{i}.toml");
        gate.write(&rules, common::rule(e.metric));
        // A `--set` details page names the duration `Duration`, a metrics-only
        // one by its ID; the rule may use either. A rule may qualify a label
        // with its section or body item label (`"Chart: Label"`).
        let label = e.metric.rsplit(": ").next().unwrap_or(e.metric);
        let names: &[&str] = if e.metric == "gpu__time_duration.sum" {
            &["gpu__time_duration.sum", "Duration"]
        } else {
            &[label]
        };
        let (me, slow, base) = (
            format!("{i}.csv"),
            format!("{i}.slow.csv"),
            format!("{i}.json"),
        );
        let raw = !head.iter().any(|h| h == "Metric Name");
        let slower = if raw {
            raw_doubled(&data, e.metric)
        } else {
            doubled(&data, names)
        };
        gate.write(&me, &data).write(&slow, slower);
        let rec = gate
            .record()
            .thresholds(&rules)
            .input(&me)
            .output(&base)
            .run();
        assert_eq!(rec.code, 0, "{}: {}", e.file, rec.stderr);
        assert_eq!(
            rec.stderr.contains("metrics read from the details page"),
            !raw,
            "{}: {}",
            e.file,
            rec.stderr
        );
        let check = |input: &str, more: &[&str]| {
            gate.check()
                .thresholds(&rules)
                .baseline(&base)
                .input(input)
                .args(more)
                .run()
        };
        let mut same = check(&me, &[]);
        // An export that names no GPU cannot show it is the baseline's: exit 2
        // unless the user says to compare anyway.
        let unidentified = same.stderr.contains("shares no GPU name");
        let allow: &[&str] = if unidentified {
            same.code(2);
            same = check(&me, &["--allow-device-mismatch"]);
            &["--allow-device-mismatch"]
        } else {
            &[]
        };
        assert_eq!(same.code, 0, "{}: {}{}", e.file, same.stdout, same.stderr);
        let worse = check(&slow, allow);
        assert_eq!(
            worse.code, 1,
            "{}: {}{}",
            e.file, worse.stdout, worse.stderr
        );
        assert!(
            worse.stdout.contains("+100.0%"),
            "{}: {}",
            e.file,
            worse.stdout
        );
    }
}

/// A metric ncu could not collect is in the export as `n/a` in every launch
/// (`flop_count_hp.sum` on CC 12.0 in a real export): the error says that,
/// not "not in this export"; an optional rule on it is skipped.
#[test]
fn a_metric_that_is_n_a_in_every_launch_is_named_as_such() {
    let gate = Gate::new();
    let file = "llm-perf-opt.kernel_0001.details.csv";
    gate.copy(Path::new(PUBLIC).join(file), "e.csv");
    gate.write("na.toml", common::rule("flop_count_hp.sum"));
    gate.record().thresholds("na.toml").input("e.csv").output("na.json").run()
    .one_clear_error(
        "metric `flop_count_hp.sum` is in this export but `n/a` in every launch: ncu could not collect it",
    )
    .stderr_has("optional = true");
    // A metric the export really lacks keeps its own error.
    gate.write("absent.toml", common::rule("sm__inst_executed.sum"));
    gate.record()
        .thresholds("absent.toml")
        .input("e.csv")
        .output("absent.json")
        .run()
        .one_clear_error("metric `sm__inst_executed.sum` is not in this export");
}
