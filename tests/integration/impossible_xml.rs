//! compute-sanitizer XML found by fuzzing to pass silently or to cost too
//! much, through the binary: records nested one level deeper or self-closing
//! (they were skipped: a pass), 300,000-deep nesting (34–47 s before), a
//! text node of megabytes (~300 MB RSS for 100 MB before), and counts whose
//! sum wraps a u64 (a huge count became a small one). The inputs are
//! modified copies of real H200 files in fixtures/h200/memory.

use crate::common::Gate;
use std::path::Path;

const MEMORY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/h200/memory");

fn fixture(file: &str) -> String {
    std::fs::read_to_string(Path::new(MEMORY).join(file)).expect("fixture")
}

/// The real leak-check file (two leak records).
fn leaky() -> String {
    fixture("leaky_app.memcheck-leakcheck.xml")
}

#[test]
fn records_a_parser_would_skip_are_refused() {
    let gate = Gate::new();
    let cases = [
        (
            leaky()
                .replace(
                    "<ComputeSanitizerOutput>",
                    "<ComputeSanitizerOutput><group>",
                )
                .replace(
                    "</ComputeSanitizerOutput>",
                    "</group></ComputeSanitizerOutput>",
                ),
            "a <record> inside <ComputeSanitizerOutput><group>",
        ),
        (
            leaky().replacen("<record>", "<record/><record>", 1),
            "an empty <record/>",
        ),
    ];
    for (xml, says) in cases {
        gate.write("bad.xml", xml);
        gate.sanitize().xml("bad.xml").run().one_clear_error(says);
    }
    // The unmodified file fails on its two leaks: the refusals above are not
    // a file ncugate cannot read at all.
    gate.write("good.xml", leaky());
    gate.sanitize().xml("good.xml").run().code(1);
}

#[test]
fn deep_nesting_and_huge_text_are_refused() {
    let gate = Gate::new();
    let deep = 300_000;
    gate.write(
        "deep.xml",
        leaky().replacen(
            "<kind>Leak</kind>",
            &format!(
                "<kind>Leak</kind>{}{}",
                "<a>".repeat(deep),
                "</a>".repeat(deep)
            ),
            1,
        ),
    );
    gate.sanitize()
        .xml("deep.xml")
        .run()
        .one_clear_error("nested deeper than 64 elements");
    gate.write(
        "huge.xml",
        leaky().replacen("Leaked 1048576 bytes", &"x".repeat(2 << 20), 1),
    );
    gate.sanitize()
        .xml("huge.xml")
        .run()
        .one_clear_error("longer than 1024 KiB");
}

/// `xml` with its first `<record>…</record>` twice.
fn first_record_twice(xml: &str) -> String {
    let start = xml.find("<record>").expect("a record");
    let end = xml.find("</record>").expect("its end") + "</record>".len();
    format!("{}{}", &xml[..end], &xml[start..])
}

#[test]
fn hazard_counts_and_leaked_bytes_saturate_instead_of_wrapping() {
    let gate = Gate::new();
    let max = u64::MAX.to_string();
    let race = fixture("race_app.racecheck.xml")
        .replace("<count>4096</count>", &format!("<count>{max}</count>"));
    let leak = leaky()
        .replace("Leaked 1048576 bytes", &format!("Leaked {max} bytes"))
        .replace("<size>1048576</size>", &format!("<size>{max}</size>"));
    for (name, xml, field) in [("race", race, "count"), ("leak", leak, "bytes")] {
        gate.write(&format!("{name}.xml"), first_record_twice(&xml));
        let json = format!("{name}.json");
        gate.sanitize()
            .xml(format!("{name}.xml"))
            .json(&json)
            .run()
            .code(1);
        let report: serde_json::Value = serde_json::from_str(&gate.read(&json)).expect("json");
        let largest = report["sanitizer"]
            .as_array()
            .expect("findings")
            .iter()
            .filter_map(|f| f[field].as_u64())
            .max();
        assert_eq!(largest, Some(u64::MAX), "{name}: {report}");
    }
}
