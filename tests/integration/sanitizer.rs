//! The sanitizer gate on real compute-sanitizer XML (H200): a stream-ordered-allocation
//! experiment's two bugs, clean runs, truncated and malformed files, and every
//! report format with C++ names escaped.

use crate::common;
use common::{Gate, REFERENCE, assert_valid_junit};
use std::path::Path;

fn alloc_bug_xml() -> String {
    std::fs::read_to_string(
        Path::new(REFERENCE).join("sanitizer/stream-ordered-alloc-bug.memcheck.xml"),
    )
    .expect("fixture")
}

#[test]
fn the_stream_ordered_alloc_bug_program_fails_naming_both_bugs() {
    let gate = Gate::new();
    gate.reference(
        "sanitizer/stream-ordered-alloc-bug.memcheck.xml",
        "alloc-bug.xml",
    );
    gate.sanitize().xml("alloc-bug.xml").junit("junit.xml").markdown("report.md").json("report.json").run()
        .code(1)
        .stdout_has("✗ memcheck [FAIL]: 2× Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to \"invalid argument\" on CUDA API call to cuMemFreeAsync, from test in seed_bug")
        .stdout_has("✗ memcheck [FAIL]: 8× Invalid __global__ read of size 4 bytes is out of bounds in kernel shortKernel_2, from test in seed_bug")
        .stdout_has("first at thread (32,0,0) in block (8,0,0)")
        .stdout_has("ncugate: FINDINGS (exit 1)")
        .stdout_has("grouped into 2 findings");
    let out = gate.sanitize().xml("alloc-bug.xml").run();
    // The runtime's own frames (a static cudart's hashed symbol) say nothing to the reader.
    assert!(!out.stdout.contains("libcudart_static"), "{}", out.stdout);
    assert!(out.stdout.contains("at cudaLaunchKernel"), "{}", out.stdout);
    // Not a CI log's 100 columns wider, notes included.
    let wide: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.chars().count() > 100)
        .collect();
    assert!(wide.is_empty(), "{wide:#?}");
    assert!(!out.stdout.contains("REGRESSION"), "{}", out.stdout);
    assert_valid_junit(&gate.path("junit.xml"));
    let json: serde_json::Value = serde_json::from_str(&gate.read("report.json")).expect("JSON");
    assert_eq!(json["outcome"], "regression");
    assert_eq!(json["sanitizer"][0]["api"], "cuMemFreeAsync");
    assert_eq!(json["sanitizer"][1]["kernel"], "shortKernel_2");
    insta::assert_snapshot!(
        "sanitizer_markdown_stream_ordered_alloc_bug",
        gate.read("report.md")
    );
}

#[test]
fn an_allowed_finding_warns_with_its_reason() {
    let gate = Gate::new();
    gate.reference(
        "sanitizer/stream-ordered-alloc-bug.memcheck.xml",
        "alloc-bug.xml",
    );
    gate.sanitize()
        .xml("alloc-bug.xml")
        .args(&[
            "--allow",
            "cuMemFreeAsync=known driver issue, tracked in #42",
            "--allow",
            "shortKernel_2=fixed in the next release",
        ])
        .run()
        .code(0)
        .stdout_has("⚠ memcheck [warn]: 2× Program hit")
        .stdout_has("allowed: known driver issue, tracked in #42");
    gate.sanitize()
        .xml("alloc-bug.xml")
        .args(&["--allow", "cuMemFreeAsync="])
        .run()
        .one_clear_error("has no reason");
}

#[test]
fn a_run_without_records_passes() {
    let gate = Gate::new();
    gate.reference(
        "sanitizer/clean-program.memcheck-leakcheck.xml",
        "clean.xml",
    );
    gate.sanitize()
        .xml("clean.xml")
        .junit("junit.xml")
        .run()
        .code(0)
        .stdout_has("ncugate: PASS (exit 0)")
        .stdout_has("0 records");
    assert_valid_junit(&gate.path("junit.xml"));
}

#[test]
fn a_file_truncated_mid_record_is_an_error() {
    let gate = Gate::new();
    let xml = alloc_bug_xml();
    let cut = xml.find("<kind>Precise</kind>").expect("a record") + 200;
    gate.write("cut.xml", &xml[..cut]);
    gate.sanitize()
        .xml("cut.xml")
        .junit("junit.xml")
        .run()
        .one_clear_error("truncated: the file ends inside <ComputeSanitizerOutput><record><who>");
    assert_valid_junit(&gate.path("junit.xml"));
    assert!(gate.read("junit.xml").contains("<error"));
}

#[test]
fn malformed_empty_and_foreign_files_are_errors() {
    let gate = Gate::new();
    gate.write("bad.xml", alloc_bug_xml().replacen("</kind>", "</knid>", 1));
    gate.sanitize()
        .xml("bad.xml")
        .run()
        .one_clear_error("malformed XML");
    gate.write("empty.xml", "");
    gate.sanitize()
        .xml("empty.xml")
        .run()
        .one_clear_error("empty: no <ComputeSanitizerOutput>");
    gate.reference("h200.graph_app.4metrics.node.raw.csv", "not.xml");
    gate.sanitize().xml("not.xml").run().code(2);
    gate.write("junit.xml", "<?xml version=\"1.0\"?><testsuites/>");
    gate.sanitize()
        .xml("junit.xml")
        .run()
        .one_clear_error("not compute-sanitizer XML: the root element is <testsuites>");
    gate.sanitize()
        .xml("missing.xml")
        .run()
        .one_clear_error("cannot read sanitizer XML missing.xml");
}

#[test]
fn names_with_markup_are_escaped_in_every_report() {
    // The experiment's record, with a templated kernel name as compute-sanitizer would write it.
    let gate = Gate::new();
    let xml = alloc_bug_xml().replace(
        "<func>shortKernel_2</func>",
        "<func>void reduce&lt;float, (int)4&gt;(const float *, float *) &amp; co</func>",
    );
    gate.write("t.xml", xml);
    gate.sanitize()
        .xml("t.xml")
        .junit("junit.xml")
        .markdown("report.md")
        .json("report.json")
        .run()
        .code(1)
        .stdout_has("in kernel void reduce<float, (int)4>(const float *, float *) & co");
    assert_valid_junit(&gate.path("junit.xml"));
    assert!(
        gate.read("junit.xml")
            .contains("reduce&lt;float, (int)4&gt;")
    );
    assert!(
        gate.read("report.md")
            .contains("reduce&lt;float, (int)4&gt;(const float \\*, float \\*) &amp; co"),
        "{}",
        gate.read("report.md")
    );
    let json: serde_json::Value = serde_json::from_str(&gate.read("report.json")).expect("JSON");
    assert_eq!(
        json["sanitizer"][1]["kernel"],
        "void reduce<float, (int)4>(const float *, float *) & co"
    );
}

#[test]
fn compute_sanitizer_not_installed() {
    let gate = Gate::new();
    gate.sanitize()
        .args(&[
            "--sanitizer",
            "/nonexistent/compute-sanitizer",
            "--no-build",
        ])
        .app(&["/bin/true"])
        .run()
        .one_clear_error("`/nonexistent/compute-sanitizer` not found")
        .stderr_has("CUDA toolkit");
}

#[test]
fn the_app_is_missing() {
    // A stand-in sanitizer that behaves like the real one for a missing program:
    // it prints its error and writes no XML.
    let gate = Gate::new();
    gate.write("fake-sanitizer", "#!/bin/sh\necho '========= Error: Target application returned an error'\necho '========= ERROR SUMMARY: 0 errors'\nexit 1\n");
    std::fs::set_permissions(
        gate.path("fake-sanitizer"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    let fake = gate.path("fake-sanitizer");
    gate.sanitize()
        .args(&["--sanitizer", fake.to_str().expect("utf-8"), "--no-build"])
        .app(&["./no-such-app"])
        .run()
        .one_clear_error("compute-sanitizer wrote no XML (exit code 1)");
}

#[test]
fn a_sanitizer_that_stopped_before_the_app_ended_is_an_error_not_a_clean_run() {
    // A stand-in that saves a well-formed XML with no record (what it saw so
    // far) and exits 0; with its summary line it is a clean run, without one
    // it stopped before the app ended.
    let gate = Gate::new();
    gate.reference(
        "sanitizer/clean-program.memcheck-leakcheck.xml",
        "clean.xml",
    );
    let clean = gate.path("clean.xml");
    let fake = gate.path("fake-sanitizer");
    for (summary, code) in [("echo '========= ERROR SUMMARY: 0 errors'", 0), ("", 2)] {
        gate.write(
            "fake-sanitizer",
            format!(
                "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --save ] && out=$2; shift; done\ncp {} \"$out\"\necho '========= COMPUTE-SANITIZER'\n{summary}\nexit 0\n",
                clean.display()
            ),
        );
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        let out = gate
            .sanitize()
            .args(&["--sanitizer", fake.to_str().expect("utf-8"), "--no-build"])
            .app(&["/bin/true"])
            .run();
        if code == 0 {
            out.code(0);
        } else {
            out.one_clear_error("compute-sanitizer stopped before the app ended: no summary line");
        }
    }
}

#[test]
fn fifty_thousand_records_group_into_one_finding() {
    // The experiment with --print-limit 0 writes ~50,000 out-of-bounds records.
    let gate = Gate::new();
    let xml = alloc_bug_xml();
    let start = xml
        .find("  <record>\n    <kind>Precise</kind>")
        .expect("record");
    let end = start + xml[start..].find("  </record>\n").expect("end") + "  </record>\n".len();
    let record = xml[start..end].to_string();
    // Written in pieces: a child's peak RSS counts the parent's pages at fork,
    // so the test must not hold the 100 MB itself.
    {
        use std::io::Write;
        let mut out =
            std::io::BufWriter::new(std::fs::File::create(gate.path("big.xml")).expect("create"));
        out.write_all(b"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<ComputeSanitizerOutput>\n")
            .expect("write");
        for _ in 0..50_000 {
            out.write_all(record.as_bytes()).expect("write");
        }
        out.write_all(b"</ComputeSanitizerOutput>\n")
            .expect("write");
    }
    let size = std::fs::metadata(gate.path("big.xml")).expect("size").len();
    drop(xml);
    let (outcome, max_kb) = gate.run_measured(&["sanitize", "--xml", "big.xml"]);
    outcome
        .code(1)
        .stdout_has("✗ memcheck [FAIL]: 50000× Invalid __global__ read of size 4 bytes is out of bounds in kernel shortKernel_2")
        .stdout_has("memcheck: 50000 records");
    assert!(size > 90_000_000, "the file must be ~100 MB: {size}");
    assert!(
        max_kb < 40_000,
        "peak RSS of ncugate sanitize on a {} MB file: {max_kb} KB",
        size / 1_000_000
    );
}

/// Our own recordings on the H200 (fixtures/h200/memory, compute-sanitizer 2025.3.1).
fn h200_memory(gate: &Gate, file: &str) -> String {
    gate.h200(&format!("memory/{file}"), file);
    file.to_string()
}

#[test]
fn the_known_bad_app_fails_naming_cu_mem_free_async_and_the_stale_reader() {
    let gate = Gate::new();
    let xml = h200_memory(&gate, "bad_app.memcheck.xml");
    gate.sanitize().xml(&xml).run()
        .code(1)
        .stdout_has("3× Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to \"invalid argument\" on CUDA API call to cuMemFreeAsync, from main in bad_app")
        .stdout_has("7× Invalid __global__ read of size 4 bytes is out of bounds in kernel stale_reader (bad_app.cu:71)");
}

#[test]
fn leaks_racecheck_and_initcheck_records() {
    let gate = Gate::new();
    let leak = h200_memory(&gate, "leaky_app.memcheck-leakcheck.xml");
    gate.sanitize().xml(&leak).run().code(1).stdout_has(
        "2 allocations never freed: 1114112 bytes (1.11 MB), allocated from main in leaky_app",
    );
    let race = h200_memory(&gate, "race_app.racecheck.xml");
    gate.sanitize().xml(&race).run().code(1).stdout_has("racecheck [FAIL]: 4096× Race condition: Write at race_app.cu:28 → Read at race_app.cu:31 in kernel neighbour_sum");
    let init = h200_memory(&gate, "init_app.initcheck.xml");
    gate.sanitize().xml(&init).run().code(1).stdout_has("initcheck [FAIL]: 100× Uninitialized __global__ memory read of size 4 bytes in kernel sum_uninit (init_app.cu:21)");
    // Several files at once: one report.
    gate.sanitize()
        .xml(&leak)
        .xml(&race)
        .xml(&init)
        .junit("junit.xml")
        .run()
        .code(1)
        .stdout_has("3 failed");
    assert_valid_junit(&gate.path("junit.xml"));
}

#[test]
fn the_reference_app_is_clean_and_its_graph_leak_is_invisible_to_the_sanitizer() {
    let gate = Gate::new();
    for f in [
        "graph_app.base.memcheck-leakcheck.xml",
        "graph_app.base.synccheck.xml",
        "graph_app.leak.memcheck-leakcheck.xml",
    ] {
        let xml = h200_memory(&gate, f);
        gate.sanitize()
            .xml(&xml)
            .run()
            .code(0)
            .stdout_has("0 records");
    }
}
