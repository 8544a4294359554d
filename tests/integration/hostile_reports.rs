//! Hostile `.ncu-rep` files made here from the committed reports, edited at
//! the protobuf level (a tiny encoder and field walker below, written from
//! the message layout in `src/parse/ncu_rep/schema.rs`): a result that lists
//! a metric twice, crafted counts, lengths and runs of empty entries that
//! would make the reader's copies, its decoded memory or its work grow
//! faster than the file. Each is refused with exit 2 and a hint, or read in
//! work proportional to its size.

use crate::common::{Gate, h200_bytes};

/// A protobuf varint.
fn varint(mut n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// Field `tag` holding the varint `n`.
fn field_varint(tag: u64, n: u64) -> Vec<u8> {
    let mut out = varint(tag << 3);
    out.extend(varint(n));
    out
}

/// Field `tag` holding the bytes (a string or a message) `b`.
fn field_bytes(tag: u64, b: &[u8]) -> Vec<u8> {
    let mut out = varint((tag << 3) | 2);
    out.extend(varint(b.len() as u64));
    out.extend_from_slice(b);
    out
}

/// A `u32` little-endian size, then `message`.
fn framed(message: &[u8]) -> Vec<u8> {
    let mut out = u32::try_from(message.len())
        .expect("small")
        .to_le_bytes()
        .to_vec();
    out.extend_from_slice(message);
    out
}

/// One field of a message: its number, and its varint value or its bytes.
enum Field<'a> {
    Varint(u64, u64),
    Bytes(u64, &'a [u8]),
}

fn read_varint(b: &[u8], at: &mut usize) -> u64 {
    let mut n = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = b[*at];
        *at += 1;
        n |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            break;
        }
    }
    n
}

/// The fields of a message (varint and length-delimited ones: all the
/// committed reports' messages that are edited here use).
fn fields(b: &[u8]) -> Vec<Field<'_>> {
    let mut at = 0;
    let mut out = Vec::new();
    while at < b.len() {
        let key = read_varint(b, &mut at);
        match key & 7 {
            0 => out.push(Field::Varint(key >> 3, read_varint(b, &mut at))),
            2 => {
                let n = read_varint(b, &mut at) as usize;
                out.push(Field::Bytes(key >> 3, &b[at..at + n]));
                at += n;
            }
            1 => at += 8,
            5 => at += 4,
            w => panic!("wire type {w} is not in the reports"),
        }
    }
    out
}

fn le32(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes")) as usize
}

/// A block of a report: its header and its payload's messages.
struct Block {
    header: Vec<u8>,
    messages: Vec<Vec<u8>>,
}

/// A report split into its file header and blocks.
struct Report {
    head: Vec<u8>,
    blocks: Vec<Block>,
}

impl Report {
    fn parse(data: &[u8]) -> Report {
        let mut at = 8 + le32(data, 4);
        let head = data[..at].to_vec();
        let mut blocks = Vec::new();
        while at < data.len() {
            let header = data[at + 4..at + 4 + le32(data, at)].to_vec();
            at += 4 + header.len();
            let end = at + Report::payload_size(&header);
            let mut messages = Vec::new();
            while at < end {
                messages.push(data[at + 4..at + 4 + le32(data, at)].to_vec());
                at += 4 + messages.last().map_or(0, Vec::len);
            }
            blocks.push(Block { header, messages });
        }
        Report { head, blocks }
    }

    fn payload_size(header: &[u8]) -> usize {
        fields(header)
            .iter()
            .find_map(|f| match f {
                Field::Varint(5, n) => Some(*n as usize),
                _ => None,
            })
            .unwrap_or(0)
    }

    /// The string table of the whole file, in order.
    fn strings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for block in &self.blocks {
            for f in fields(&block.header) {
                if let Field::Bytes(4, table) = f {
                    for s in fields(table) {
                        if let Field::Bytes(1, s) = s {
                            out.push(String::from_utf8_lossy(s).into_owned());
                        }
                    }
                }
            }
        }
        out
    }

    /// The file, every block's payload size made its messages' again.
    fn bytes(&self) -> Vec<u8> {
        let mut out = self.head.clone();
        for block in &self.blocks {
            let payload: Vec<u8> = block.messages.iter().flat_map(|m| framed(m)).collect();
            let mut header = Vec::new();
            for f in fields(&block.header) {
                header.extend(match f {
                    Field::Varint(5, _) => field_varint(5, payload.len() as u64),
                    Field::Varint(tag, n) => field_varint(tag, n),
                    Field::Bytes(tag, b) => field_bytes(tag, b),
                });
            }
            out.extend(framed(&header));
            out.extend(payload);
        }
        out
    }
}

/// `ProfileMetricResult`: string `name_id`, value a `uint64`.
fn metric_result(name_id: usize, value: u64) -> Vec<u8> {
    let mut m = field_varint(1, name_id as u64);
    m.extend(field_bytes(2, &field_varint(5, value)));
    m
}

/// The fp64 report with a second `sm__inst_executed_pipe_fp64.sum` of 0
/// appended to each result of `finish<double>` (a `ProfileResult`'s field 13;
/// protobuf appends a repeated field given again).
fn fp64_with_an_appended_zero() -> Vec<u8> {
    let mut report = Report::parse(&h200_bytes("graph_app.fp64.fast.ncu-rep"));
    let strings = report.strings();
    let id = strings
        .iter()
        .position(|s| s == "sm__inst_executed_pipe_fp64.sum")
        .expect("the fp64 metric is in the string table");
    let mut edited = 0;
    for block in &mut report.blocks {
        // Kernel results only: the committed report has no sources.
        for message in &mut block.messages {
            let is_finish = fields(message).iter().any(
                |f| matches!(f, Field::Bytes(7, name) if name.starts_with(b"void finish<double>")),
            );
            if is_finish {
                message.extend(field_bytes(13, &metric_result(id, 0)));
                edited += 1;
            }
        }
    }
    assert_eq!(edited, 3, "the three launches of finish<double>");
    report.bytes()
}

/// The fp64 regression report with a zero appended to its regressed metric
/// in each regressed launch: before, the reader kept the later value
/// and the check passed; now the report is refused, naming the kernel and
/// the metric.
#[test]
fn a_result_listing_a_metric_twice_is_refused() {
    let g = Gate::new();
    g.h200("graph_app.base.fast.run1.ncu-rep", "base.ncu-rep")
        .h200("graph_app.fp64.fast.ncu-rep", "fp64.ncu-rep")
        .write("fp64-zero.ncu-rep", fp64_with_an_appended_zero());
    let env = [("NCUGATE_NCU", "/nonexistent/ncu")];
    let run = |args: &[&str]| g.run_with(args, &env);
    let out = run(&[
        "baseline",
        "record",
        "--input",
        "base.ncu-rep",
        "--output",
        "b.json",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The unedited report regresses.
    run(&["check", "--baseline", "b.json", "--input", "fp64.ncu-rep"]).code(1);
    run(&[
        "check",
        "--baseline",
        "b.json",
        "--input",
        "fp64-zero.ncu-rep",
    ])
    .one_clear_error("lists metric `sm__inst_executed_pipe_fp64.sum` twice, with different values")
    .stderr_has("kernel `void finish<double>(const float *, const float *, float *, long)`")
    .stderr_has("hint: ncu gives each metric of a result one value");
}

/// A 510-byte per-kernel summary (`ncu --csv --print-summary per-kernel`,
/// the header of `fixtures/h200/summary/`) whose three rows of one kernel
/// say 1,000,000 invocations: it stood for 3,000,000 rows of launches
/// (880 MB, 14 s); it is refused as more than its size can hold, in little
/// memory.
#[test]
fn a_summary_of_huge_invocations_is_refused() {
    let summary = h200_bytes("summary/graph_app.base.fast.run1.summary.csv");
    let header = summary.split(|&b| b == b'\n').next().expect("header");
    let mut csv = header.to_vec();
    csv.push(b'\n');
    for _ in 0..3 {
        csv.extend_from_slice(b"\"3089\",\"graph_app\",\"127.0.0.1\",\"produce(float *, long)\",\"(256, 1, 1)\",\"(65536, 1, 1)\",\"0\",\"9.0\",\"1,000,000\",\"Command line profiler metrics\",\"gpu__time_duration.sum\",\"ns\",\"1\",\"1\",\"1\"\n");
    }
    let g = Gate::new();
    g.write("summary.csv", &csv);
    let (out, max_kb) = g.run_measured(&[
        "baseline",
        "record",
        "--input",
        "summary.csv",
        "--output",
        "b.json",
    ]);
    out.one_clear_error("rows of launches (Invocations over its rows)");
    assert!(max_kb < 100_000, "peak RSS {max_kb} KB");
}

/// The base report with one more block: a string table of one 60 KB string
/// and a result naming it as 3,000 metrics (5 bytes each). Its names copied
/// out were 180 MB from a 276 KB file; the copies now have a budget of 16
/// bytes per byte of the file (and 16 MiB), and the report is refused
/// before it is spent, in little memory.
#[test]
fn a_string_named_thousands_of_times_is_refused_within_a_budget() {
    let mut report = Report::parse(&h200_bytes("graph_app.base.fast.run1.ncu-rep"));
    let id = report.strings().len();
    let mut header = field_varint(2, 1);
    header.extend(field_bytes(4, &field_bytes(1, &[b'x'; 60_000])));
    header.extend(field_varint(5, 0));
    let mut result = field_bytes(7, b"void k()");
    for _ in 0..3_000 {
        result.extend(field_bytes(13, &field_varint(1, id as u64)));
    }
    report.blocks.push(Block {
        header,
        messages: vec![result],
    });
    let g = Gate::new();
    g.write("named.ncu-rep", report.bytes());
    let (out, max_kb) = g.run_measured(&[
        "baseline",
        "record",
        "--input",
        "named.ncu-rep",
        "--output",
        "b.json",
    ]);
    out.one_clear_error("copy to more than");
    // Its own error, with the budget in numbers and a hint of its own (not
    // the truncated-copy hint of a damaged file).
    let limit = report.bytes().len() * 16 + (16 << 20);
    assert!(
        out.stderr.contains(&format!(
            "more than {limit} bytes (16 per byte of the file and 16777216 more)"
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("hint: an Nsight Compute report copies less than one byte"),
        "{}",
        out.stderr
    );
    assert!(max_kb < 100_000, "peak RSS {max_kb} KB");
}

/// The base report with one more block whose results are `results` (kernel
/// results, or with `ranges` range results): how each crafted run of empty
/// entries below is written.
fn with_block(results: Vec<Vec<u8>>, ranges: bool) -> Vec<u8> {
    let mut report = Report::parse(&h200_bytes("graph_app.base.fast.run1.ncu-rep"));
    let count = results.len() as u64;
    let mut header = field_varint(if ranges { 7 } else { 2 }, count);
    header.extend(field_varint(5, 0));
    report.blocks.push(Block {
        header,
        messages: results,
    });
    report.bytes()
}

/// A kernel result named `k()` whose fields after the name are `fields`.
fn kernel_result(fields: &[u8]) -> Vec<u8> {
    let mut result = field_bytes(7, b"void k()");
    result.extend_from_slice(fields);
    result
}

/// Records a baseline from `file` (named `name`): refused as over the
/// decode budget, with its numbers and its hint, in under 100 MB; returns
/// the peak RSS in KB.
fn refused_within_the_decode_budget(name: &str, file: &[u8]) -> i64 {
    let g = Gate::new();
    g.write(name, file);
    let (out, max_kb) =
        g.run_measured(&["baseline", "record", "--input", name, "--output", "b.json"]);
    out.one_clear_error("would decode to more than");
    let limit = file.len() * 20 + (1 << 20);
    assert!(
        out.stderr.contains(&format!(
            "more than {limit} bytes of list entries (20 per byte of the file and 1048576 more): a crafted run of empty entries"
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(
            "hint: an Nsight Compute report decodes to a few bytes of list entries per byte"
        ),
        "{}",
        out.stderr
    );
    assert!(!g.path("b.json").exists(), "no baseline is written");
    assert!(max_kb < 100_000, "{name}: peak RSS {max_kb} KB");
    max_kb
}

/// 1,000,000 empty metric results, each with one empty instance (4.2 MB):
/// 694 MB peak RSS before the decode budget (a release build).
#[test]
fn empty_metric_results_with_an_empty_instance_are_refused_in_little_memory() {
    let empty = [field_bytes(13, &field_bytes(3, b"")).as_slice()].concat();
    let file = with_block(vec![kernel_result(&empty.repeat(1_000_000))], false);
    refused_within_the_decode_budget("instances.ncu-rep", &file);
}

/// 1,000,000 empty metric results (2.2 MB): 116 MB before.
#[test]
fn empty_metric_results_are_refused_in_little_memory() {
    let file = with_block(
        vec![kernel_result(&field_bytes(13, b"").repeat(1_000_000))],
        false,
    );
    refused_within_the_decode_budget("metrics.ncu-rep", &file);
}

/// 1,000,000 empty rule results (3.2 MB): 93 MB before; the cheapest entry
/// (24 slot bytes per byte), still refused.
#[test]
fn empty_rule_results_are_refused_in_little_memory() {
    let file = with_block(
        vec![kernel_result(&field_bytes(19, b"").repeat(1_000_000))],
        false,
    );
    refused_within_the_decode_budget("rules.ncu-rep", &file);
}

/// 1,000,000 empty range results (4 MB of 4-byte frames), a launch each:
/// 328 MB before.
#[test]
fn empty_range_results_are_refused_in_little_memory() {
    let file = with_block(vec![Vec::new(); 1_000_000], true);
    refused_within_the_decode_budget("ranges.ncu-rep", &file);
}

/// Nested runs: one metric result with 1,000,000 empty instances (155 MB
/// before), and an NVTX state with 1,000,000 start/end domains of one empty
/// range each (319 MB before).
#[test]
fn nested_runs_of_empty_entries_are_refused_in_little_memory() {
    let instances = field_bytes(13, &field_bytes(3, b"").repeat(1_000_000));
    let file = with_block(vec![kernel_result(&instances)], false);
    refused_within_the_decode_budget("nested-instances.ncu-rep", &file);
    let domain = field_bytes(3, &field_bytes(3, b""));
    let nvtx = field_bytes(21, &domain.repeat(1_000_000));
    let file = with_block(vec![kernel_result(&nvtx)], false);
    refused_within_the_decode_budget("nested-nvtx.ncu-rep", &file);
}

/// The same runs of 1,000 entries are within the budget's floor: decoded,
/// then read or refused for what they say, never for their size (so the
/// budget is not what refuses a small file).
#[test]
fn short_runs_of_empty_entries_are_within_the_floor() {
    let g = Gate::new();
    let rules = with_block(
        vec![kernel_result(&field_bytes(19, b"").repeat(1_000))],
        false,
    );
    g.write("rules.ncu-rep", rules);
    let out = g.run(&[
        "baseline",
        "record",
        "--input",
        "rules.ncu-rep",
        "--output",
        "b.json",
    ]);
    assert!(!out.stderr.contains("would decode"), "{}", out.stderr);
    let metrics = with_block(
        vec![kernel_result(&field_bytes(13, b"").repeat(1_000))],
        false,
    );
    g.write("metrics.ncu-rep", metrics);
    g.run(&[
        "baseline",
        "record",
        "--input",
        "metrics.ncu-rep",
        "--output",
        "c.json",
    ])
    .one_clear_error("a metric result has no name");
}
