use super::*;
use crate::parse::ncu_rep::container::{self, Failure};
use crate::parse::ncu_rep::schema::{
    BlockHeader, CmdlistResult, GraphResult, MetricValue, NvtxState, ProfileResult, RangeResult,
    RuleBody, SessionDetails, StringTable,
};
use prost::Message;
use std::mem::size_of_val;
use std::path::{Path, PathBuf};

/// Every `.ncu-rep` under `fixtures/`, recursively: the genuine reports.
fn genuine_reports() -> Vec<PathBuf> {
    fn visit(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                visit(&path, out);
            } else if path.extension().is_some_and(|e| e == "ncu-rep") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    visit(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &mut out,
    );
    out.sort();
    out
}

/// Every genuine report reads within its budget, and charges a few bytes
/// per byte of the file: [`DECODED_PER_BYTE`] is nearly 4 times the most
/// any of them charges (5.19, `ncu-reference/h200.graph_app.4metrics.node`).
#[test]
fn genuine_reports_charge_a_few_bytes_per_byte() {
    let reports = genuine_reports();
    assert!(reports.len() >= 16, "{} reports", reports.len());
    let mut most: f64 = 0.0;
    for path in &reports {
        let data = std::fs::read(path).expect("read a fixture");
        let mut unlimited = Budget::limited(usize::MAX);
        let read = container::read_within(&data, &mut unlimited)
            .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.message()));
        assert!(!read.launches.is_empty(), "{}", path.display());
        let ratio = unlimited.spent() as f64 / data.len() as f64;
        println!(
            "{:>9} bytes, {:>9} charged, {ratio:.2} per byte: {}",
            data.len(),
            unlimited.spent(),
            path.display()
        );
        most = most.max(ratio);
        // Read within its own budget alike (compared as text: some values
        // are NaN).
        let within = container::read(&data)
            .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.message()));
        assert_eq!(format!("{within:?}"), format!("{read:?}"));
    }
    println!("most charged per byte: {most:.2} (budget {DECODED_PER_BYTE})");
    assert!(most > 0.5, "the walk charges nothing: {most}");
    assert!(
        most * 2.25 <= DECODED_PER_BYTE as f64,
        "a genuine report charges {most:.2} per byte, the budget {DECODED_PER_BYTE} leaves less than 2.25 times that"
    );
}

/// The slots prost allocated for a decoded result: what [`charge`] must
/// have told from its bytes.
fn slots_of_metrics(metrics: &[crate::parse::ncu_rep::schema::MetricResult]) -> usize {
    size_of_val(metrics)
        + metrics
            .iter()
            .map(|m| m.instances.len() * size_of::<ListElement>())
            .sum::<usize>()
}

fn slots_of_rules(rules: &[RuleResult]) -> usize {
    size_of_val(rules)
        + rules
            .iter()
            .filter_map(|r| r.body.as_ref())
            .map(|b: &RuleBody| b.items.len() * size_of::<RuleBodyItem>())
            .sum::<usize>()
}

fn slots_of_nvtx(nvtx: Option<&NvtxState>) -> usize {
    let Some(n) = nvtx else { return 0 };
    n.domains.len() * size_of::<NvtxDomain>()
        + n.threads.len() * size_of::<NvtxThread>()
        + n.threads
            .iter()
            .flat_map(|t| &t.push_pop_domains)
            .map(|d| size_of::<NvtxPushPopDomain>() + d.stack.len() * size_of::<NvtxPushPopRange>())
            .sum::<usize>()
        + n.start_end_domains
            .iter()
            .map(|d| {
                size_of::<NvtxStartEndDomain>() + d.ranges.len() * size_of::<NvtxStartEndRange>()
            })
            .sum::<usize>()
}

fn slots_of_profile(r: &ProfileResult) -> usize {
    slots_of_metrics(&r.metric_results)
        + r.sections.len() * size_of::<Section>()
        + slots_of_rules(&r.rule_results)
        + slots_of_nvtx(r.nvtx.as_ref())
}

fn slots_of_header(h: &BlockHeader) -> usize {
    h.string_table
        .as_ref()
        .map_or(0, |t| t.strings.len() * size_of::<String>())
        + h.session_details.as_ref().map_or(0, |s| {
            s.attributes.len() * size_of::<SessionAttribute>()
                + s.devices.len() * size_of::<DeviceAttributes>()
                + s.devices
                    .iter()
                    .map(|d| d.attributes.len() * size_of::<DeviceAttribute>())
                    .sum::<usize>()
        })
}

/// Each message of a genuine report, as the container frames it: block
/// headers, and the kernel results of their payloads (sources skipped).
fn framed_messages(data: &[u8]) -> (Vec<BlockHeader>, Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let le = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().expect("4")) as usize;
    let (mut headers, mut raw_headers, mut results) = (Vec::new(), Vec::new(), Vec::new());
    let mut at = 8 + le(4);
    while at < data.len() {
        let bytes = &data[at + 4..at + 4 + le(at)];
        let header = BlockHeader::decode(bytes).expect("a genuine header");
        raw_headers.push(bytes.to_vec());
        at += 4 + bytes.len();
        let end = at + header.payload_size.unwrap_or(0) as usize;
        for i in 0..(header.num_sources.unwrap_or(0) + header.num_results.unwrap_or(0)) {
            let message = data[at + 4..at + 4 + le(at)].to_vec();
            at += 4 + message.len();
            if i >= header.num_sources.unwrap_or(0) {
                results.push(message);
            }
        }
        at = end;
        headers.push(header);
    }
    (headers, raw_headers, results)
}

/// On the messages of genuine reports, the walk charges exactly the slots
/// prost allocates: the shapes follow the schema's field numbers.
#[test]
fn the_charge_of_genuine_messages_is_what_prost_allocates() {
    let (mut results, mut most) = (0, 0.0_f64);
    for path in genuine_reports() {
        let data = std::fs::read(&path).expect("read a fixture");
        let (headers, raw_headers, messages) = framed_messages(&data);
        for message in &messages {
            let slots = charge(message, &PROFILE_RESULT).expect("a genuine result");
            most = most.max(slots as f64 / message.len() as f64);
        }
        for (header, raw) in headers.iter().zip(&raw_headers) {
            assert_eq!(charge(raw, &BLOCK_HEADER), Ok(slots_of_header(header)));
        }
        for message in &messages {
            let decoded = ProfileResult::decode(message.as_slice()).expect("a genuine result");
            assert_eq!(
                charge(message, &PROFILE_RESULT),
                Ok(slots_of_profile(&decoded)),
                "{}",
                path.display()
            );
            results += 1;
        }
    }
    assert!(results > 100, "{results} results");
    // The budget is per file (sources, names and headers dilute a result's
    // ratio); one result message alone charges at most this much.
    println!("most charged per byte of one result message: {most:.2}");
    assert!(most < DECODED_PER_BYTE as f64, "{most}");
}

/// Crafted messages with elements in every repeated field of every kind
/// of result, nested ones too.
#[test]
fn every_repeated_field_of_every_result_is_charged() {
    let metric = MetricResultOf::with(3);
    let rules = vec![
        RuleResult {
            body: Some(RuleBody {
                items: vec![RuleBodyItem::default(); 2],
            }),
            ..Default::default()
        };
        2
    ];
    let nvtx = NvtxState {
        domains: vec![NvtxDomain::default(); 2],
        threads: vec![NvtxThread {
            tid: Some(1),
            push_pop_domains: vec![NvtxPushPopDomain {
                id: Some(0),
                stack: vec![NvtxPushPopRange::default(); 3],
            }],
        }],
        start_end_domains: vec![NvtxStartEndDomain {
            id: Some(0),
            ranges: vec![NvtxStartEndRange::default(); 2],
        }],
    };
    let expected = 2 * metric.slots + slots_of_rules(&rules) + slots_of_nvtx(Some(&nvtx));
    let profile = ProfileResult {
        metric_results: vec![metric.result.clone(); 2],
        sections: vec![Section::default(); 4],
        rule_results: rules.clone(),
        nvtx: Some(nvtx.clone()),
        ..Default::default()
    };
    assert_eq!(
        charge(&profile.encode_to_vec(), &PROFILE_RESULT),
        Ok(expected + 4 * size_of::<Section>())
    );
    let range = RangeResult {
        metric_results: vec![metric.result.clone(); 2],
        rule_results: rules.clone(),
        nvtx: Some(nvtx.clone()),
        ..Default::default()
    };
    assert_eq!(charge(&range.encode_to_vec(), &RANGE_RESULT), Ok(expected));
    let cmdlist = CmdlistResult {
        metric_results: vec![metric.result.clone(); 2],
        rule_results: rules.clone(),
        nvtx: Some(nvtx.clone()),
        ..Default::default()
    };
    assert_eq!(
        charge(&cmdlist.encode_to_vec(), &CMDLIST_RESULT),
        Ok(expected)
    );
    let graph = GraphResult {
        metric_results: vec![metric.result.clone(); 2],
        rule_results: rules,
        nvtx: Some(nvtx),
        ..Default::default()
    };
    assert_eq!(charge(&graph.encode_to_vec(), &GRAPH_RESULT), Ok(expected));
    let header = BlockHeader {
        session_details: Some(SessionDetails {
            process_id: Some(1),
            attributes: vec![SessionAttribute::default(); 3],
            devices: vec![
                DeviceAttributes {
                    attributes: vec![DeviceAttribute::default(); 4],
                };
                2
            ],
        }),
        string_table: Some(StringTable {
            strings: vec![String::new(); 5],
        }),
        ..Default::default()
    };
    assert_eq!(
        charge(&header.encode_to_vec(), &BLOCK_HEADER),
        Ok(3 * size_of::<SessionAttribute>()
            + 2 * size_of::<DeviceAttributes>()
            + 8 * size_of::<DeviceAttribute>()
            + 5 * size_of::<String>())
    );
}

/// A metric result with `n` empty instances, and its slots.
struct MetricResultOf {
    result: MetricResult,
    slots: usize,
}

impl MetricResultOf {
    fn with(n: usize) -> MetricResultOf {
        let result = MetricResult {
            name_id: Some(1),
            value: Some(MetricValue {
                uint64: Some(1),
                ..Default::default()
            }),
            instances: vec![ListElement::default(); n],
        };
        let slots = slots_of_metrics(std::slice::from_ref(&result));
        MetricResultOf { result, slots }
    }
}

/// Bytes that are not protobuf: each a [`Malformed`] where it breaks,
/// never a panic.
#[test]
fn malformed_bytes_are_named_where_they_break() {
    let at = |bytes: &[u8]| charge(bytes, &PROFILE_RESULT).map_err(|m| (m.at, m.why));
    // A varint whose last byte is missing.
    assert_eq!(
        at(&[0x08, 0x80]),
        Err((2, "a varint runs past the end (truncated?)"))
    );
    assert_eq!(
        at(&[
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01
        ]),
        Err((11, "a varint is longer than 10 bytes"))
    );
    // A metric result of 5 bytes with 1 there; one of 2^64 - 1 bytes.
    assert_eq!(
        at(&[0x6a, 0x05, 0x08]),
        Err((2, "a field runs past the end (truncated?)"))
    );
    let mut huge = vec![0x6a];
    huge.extend([0xff; 9]);
    huge.push(0x01);
    assert_eq!(
        at(&huge),
        Err((11, "a field runs past the end (truncated?)"))
    );
    // Inside a metric result: an instance longer than the result. The place
    // is counted from the outer message's start.
    assert_eq!(
        at(&[0x6a, 0x02, 0x1a, 0x05]),
        Err((4, "a field runs past the end (truncated?)"))
    );
    assert_eq!(at(&[0x00, 0x01]), Err((1, "a field numbered 0")));
    assert_eq!(at(&[0x0e, 0x01]), Err((1, "a field of wire type 6 or 7")));
    assert_eq!(at(&[0x0c]), Err((1, "a group ends that did not start")));
    assert_eq!(
        at(&[0x0b, 0x08]),
        Err((2, "a varint runs past the end (truncated?)"))
    );
    assert_eq!(
        at(&[0x0b, 0x10, 0x01]),
        Err((3, "a group runs past the end (truncated?)"))
    );
    assert_eq!(
        at(&[0x0b, 0x14]),
        Err((2, "a group ends with another group's number"))
    );
    // A group, nested ones and fields inside, skipped and not charged.
    assert_eq!(at(&[0x0b, 0x13, 0x6a, 0x00, 0x14, 0x0c]), Ok(0));
    // 200 nested groups: the 101st is refused, in a loop, not a recursion.
    let mut deep = vec![0x0b; 200];
    deep.extend([0x0c; 200]);
    assert_eq!(at(&deep), Err((101, "groups nest deeper than 100")));
    // Fixed-width fields past the end.
    assert_eq!(
        at(&[0x09, 0, 0]),
        Err((1, "a field runs past the end (truncated?)"))
    );
    assert_eq!(
        at(&[0x0d, 0]),
        Err((1, "a field runs past the end (truncated?)"))
    );
}

/// Bits of genuine results flipped in turn: the walk never panics, and
/// where prost still decodes the result the walk charges exactly what prost
/// allocated (it is never stricter than prost, so never refuses what prost
/// reads, and never charges less).
#[test]
fn flipped_bits_of_genuine_results_charge_what_prost_allocates() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/h200/ncu-rep/nvtx_app.nvtx.ncu-rep");
    let data = std::fs::read(path).expect("read a fixture");
    let (_, _, messages) = framed_messages(&data);
    let (mut decoded, mut refused) = (0, 0);
    // Every 13th bit of the first results, 20,000 flips in all.
    for message in messages.iter().take(4) {
        for bit in (0..message.len() * 8).step_by(13).take(5_000) {
            let mut bad = message.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            let walked = charge(&bad, &PROFILE_RESULT);
            match ProfileResult::decode(bad.as_slice()) {
                Ok(r) => {
                    assert_eq!(walked, Ok(slots_of_profile(&r)), "bit {bit}");
                    decoded += 1;
                }
                Err(_) => refused += 1,
            }
        }
    }
    assert!(
        decoded > 1000 && refused > 10,
        "{decoded} decoded, {refused} refused"
    );
}

/// A report of one block whose one kernel result is `result`.
fn report_of(result: &[u8]) -> Vec<u8> {
    let mut payload = (result.len() as u32).to_le_bytes().to_vec();
    payload.extend_from_slice(result);
    let mut data = container::MAGIC.to_vec();
    let file_header = crate::parse::ncu_rep::schema::FileHeader {
        version: Some(container::VERSION),
    }
    .encode_to_vec();
    data.extend((file_header.len() as u32).to_le_bytes());
    data.extend(file_header);
    let header = BlockHeader {
        num_results: Some(1),
        payload_size: Some(payload.len() as u32),
        ..Default::default()
    }
    .encode_to_vec();
    data.extend((header.len() as u32).to_le_bytes());
    data.extend(header);
    data.extend(payload);
    data
}

/// 1,000,000 empty metric results of one kernel result (2 MB): refused
/// with the budget, before prost allocates them; 1,000 read.
#[test]
fn a_run_of_empty_metric_results_is_refused_before_it_is_decoded() {
    let bomb = report_of(&[0x6a, 0x00].repeat(1_000_000));
    let limit = bomb.len() * DECODED_PER_BYTE + DECODED_BEYOND;
    assert_eq!(
        container::read(&bomb).map(|r| r.launches.len()),
        Err(Failure::DecodeOverBudget { limit })
    );
    // A small run is within the floor: it decodes (and is refused for its
    // nameless metrics, not for its size).
    let small = report_of(&[0x6a, 0x00].repeat(1_000));
    assert!(matches!(container::read(&small), Err(Failure::Corrupt(m)) if m.contains("no name")));
}

/// The slots the budget is made of, for the numbers in the comments.
#[test]
fn slot_sizes() {
    for (name, size) in [
        ("MetricResult", size_of::<MetricResult>()),
        ("ListElement", size_of::<ListElement>()),
        ("RuleResult", size_of::<RuleResult>()),
        ("Launch", size_of::<container::Launch>()),
        ("ProfileResult", size_of::<ProfileResult>()),
        ("RangeResult", size_of::<RangeResult>()),
        ("BlockHeader", size_of::<BlockHeader>()),
    ] {
        println!("{name}: {size} bytes");
    }
    // An instance holds its value and its correlation ID.
    assert_eq!(size_of::<ListElement>(), 2 * size_of::<MetricValue>());
}
