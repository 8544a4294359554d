//! Every report format, snapshotted (`insta`; review changes with
//! `cargo insta review`), and the JUnit files validated with xmllint against
//! the schema of Jenkins' xUnit plugin.

use crate::common;
use common::{Gate, assert_valid_junit};

/// The redundant-node variant against the three-run baseline, all reports written.
fn redundant() -> (Gate, common::Outcome) {
    let gate = Gate::recorded();
    gate.fast_run("redundant-node");
    let out = gate
        .check()
        .baseline("baseline.json")
        .input("run.csv")
        .junit("junit.xml")
        .markdown("report.md")
        .json("report.json")
        .run();
    out.code(1);
    (gate, out)
}

#[test]
fn terminal_report() {
    let (_gate, out) = redundant();
    insta::assert_snapshot!("terminal_redundant", out.stdout);
}

#[test]
fn markdown_report() {
    let (gate, _) = redundant();
    insta::assert_snapshot!("markdown_redundant", gate.read("report.md"));
}

#[test]
fn json_report() {
    let (gate, _) = redundant();
    let text = gate.read("report.json");
    let value: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(value["schema_version"], 2);
    assert_eq!(value["outcome"], "regression");
    assert_eq!(value["exit_code"], 1);
    insta::assert_snapshot!(
        "json_redundant",
        text.replace(env!("CARGO_PKG_VERSION"), "[version]")
    );
}

#[test]
fn junit_report() {
    let (gate, _) = redundant();
    assert_valid_junit(&gate.path("junit.xml"));
    let xml = gate.read("junit.xml");
    assert!(
        xml.contains("<testsuite name=\"void scale&lt;0&gt;(const float *, float *, long, int)\""),
        "{xml}"
    );
    assert!(
        xml.contains("<failure message=\"launched 6 times per run, baseline 3"),
        "{xml}"
    );
    insta::assert_snapshot!("junit_redundant", xml);
}

#[test]
fn reports_are_written_when_the_gate_errors() {
    let gate = Gate::recorded();
    gate.write("bad.csv", "not,an,ncu,export\n1,2,3,4\n");
    let out = gate
        .check()
        .baseline("baseline.json")
        .input("bad.csv")
        .junit("junit.xml")
        .markdown("report.md")
        .json("report.json")
        .run();
    out.one_clear_error("no ncu CSV header");
    assert_valid_junit(&gate.path("junit.xml"));
    let xml = gate.read("junit.xml");
    assert!(
        xml.contains("<error message=\"bad.csv: no ncu CSV header"),
        "{xml}"
    );
    let json: serde_json::Value = serde_json::from_str(&gate.read("report.json")).expect("JSON");
    assert_eq!(json["outcome"], "error");
    assert_eq!(json["exit_code"], 2);
    insta::assert_snapshot!("markdown_error", gate.read("report.md"));
    insta::assert_snapshot!("junit_error", xml);
}

#[test]
fn passing_and_finding_reports_are_valid_junit() {
    let gate = Gate::new();
    gate.full_baseline("baseline.json", &[]);
    gate.full_run("strided");
    gate.check()
        .baseline("baseline.json")
        .input("base.csv")
        .details("base.details.csv")
        .junit("pass.xml")
        .run()
        .code(0);
    assert_valid_junit(&gate.path("pass.xml"));
    let out = gate
        .check()
        .baseline("baseline.json")
        .input("run.csv")
        .details("run.details.csv")
        .junit("fail.xml")
        .markdown("fail.md")
        .run();
    out.code(1);
    assert_valid_junit(&gate.path("fail.xml"));
    let md = gate.read("fail.md");
    assert!(
        md.contains("new ncu finding `UncoalescedGlobalAccess` (OPT, est. speedup 77%)"),
        "{md}"
    );
    insta::assert_snapshot!("terminal_strided_full", out.stdout);
}

#[test]
fn kernel_names_with_markup_characters_are_escaped_in_every_report() {
    use ncugate::aggregate::Stats;
    use ncugate::rules::{Per, Severity, Worse};
    use ncugate::status::Status;
    use ncugate::verdict::{Report, RuleResult};
    let name = "void at::vectorized_elementwise_kernel<4, at::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float>>, std::array<char *, 2>>(int, T2, T3) & \"q\" | x";
    let mut report = Report::error(
        "b.json",
        vec!["run.csv".into()],
        vec![],
        "t.toml",
        String::new(),
    );
    report.errors.clear();
    report.rules.push(RuleResult {
        kernel: Some(name.into()),
        rule: "sm__inst_executed.sum (sum)".into(),
        metric: "sm__inst_executed.sum".into(),
        per: Per::Kernel,
        aggregate: ncugate::model::Aggregate::Sum,
        worse: Worse::Higher,
        severity: Severity::Fail,
        line: 3,
        unit: "inst".into(),
        baseline: Stats::of(&[100.0, 102.0]),
        current: Some(150.0),
        current_runs: Box::new([150.0]),
        change_pct: Some(48.5),
        allowance: Some(20.2),
        limit: None,
        status: Status::Fail,
        message: format!("+48.5% in {name}\u{7}"),
        why: Some(String::from("<why> & more").into()),
        downgrade: None,
    });
    let gate = Gate::new();
    gate.write(
        "junit.xml",
        ncugate::report::junit::render(&ncugate::report::View::new(&report)),
    );
    assert_valid_junit(&gate.path("junit.xml"));
    let xml = gate.read("junit.xml");
    assert!(
        xml.contains("at::AUnaryFunctor&lt;float, float, float"),
        "{xml}"
    );
    assert!(
        !xml.contains('\u{7}'),
        "control characters must not reach Jenkins"
    );
    let md = ncugate::report::markdown::render(&ncugate::report::View::new(&report));
    assert!(
        md.contains(r#"std::array<char *, 2>>(int, T2, T3) & "q" \| x`"#),
        "{md}"
    );
    assert!(md.contains("&lt;why&gt; &amp; more"), "{md}");
    let json: serde_json::Value = serde_json::from_str(&ncugate::report::json::render(
        &ncugate::report::View::new(&report),
    ))
    .expect("JSON");
    assert_eq!(json["rules"][0]["kernel"], name);
}

#[test]
fn github_mode_annotates_summarizes_and_sets_outputs() {
    let gate = Gate::new();
    gate.base_baseline(&["--kernel-key", "function"]);
    gate.fast_run("strided");
    gate.write("summary.md", "# earlier step\n");
    let summary = gate.path("summary.md");
    let output = gate.path("output.txt");
    let out = gate
        .check()
        .baseline("baseline.json")
        .input("run.csv")
        .json("report.json")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", summary.to_str().unwrap_or(""))
        .env("GITHUB_OUTPUT", output.to_str().unwrap_or(""))
        .run();
    out.code(1);
    let annotations: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("::")).collect();
    assert!(
        annotations.iter().any(|a| a.starts_with(
            "::error title=scale%3A l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum (sum)::+700.0%"
        )),
        "{annotations:#?}"
    );
    assert!(
        annotations
            .iter()
            .all(|a| a.starts_with("::error ") || a.starts_with("::warning "))
    );
    assert_eq!(
        gate.read("output.txt"),
        "result=regression\nregressions=5\nreport=report.json\n"
    );
    let md = gate.read("summary.md");
    assert!(
        md.starts_with("# earlier step\n## ❌ ncugate: regression"),
        "appended, not overwritten: {md}"
    );
    assert!(md.contains("```mermaid\nxychart-beta horizontal\n"), "{md}");
    insta::assert_snapshot!(
        "github_summary_chart",
        md[md.find("### Change vs allowance").unwrap_or(0)..].to_string()
    );
    insta::assert_snapshot!("github_annotations", annotations.join("\n"));
}

#[test]
fn github_annotations_are_capped_at_ten_per_level() {
    use ncugate::status::Status;
    use ncugate::verdict::{Report, StructureCheck, StructureResult};
    let mut report = Report::empty("b.json", vec![], vec![], "t.toml");
    for i in 0..13 {
        report.structure.push(StructureResult {
            kernel: format!("k{i}"),
            check: StructureCheck::NewKernel,
            baseline_launches: None,
            baseline_range: None,
            current_launches: vec![1],
            recorded_in: None,
            status: Status::Fail,
            message: "new kernel, 50% of\nit".into(),
        });
    }
    let text = ncugate::report::github::annotations(&ncugate::report::View::new(&report), "");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 10);
    assert!(
        lines[9].ends_with("(and 3 more: see the step summary)"),
        "{}",
        lines[9]
    );
    assert!(lines[0].contains("50%25 of%0Ait"), "{}", lines[0]);
}

#[test]
fn the_html_report_keeps_to_jenkins_content_security_policy() {
    let gate = Gate::new();
    gate.full_baseline("baseline.json", &["--kernel-key", "function"]);
    gate.full_run("strided");
    gate.check()
        .baseline("baseline.json")
        .input("run.csv")
        .details("run.details.csv")
        .html("html")
        .run()
        .code(1);
    let index = gate.read("html/index.html");
    assert!(index.contains("<link rel=\"stylesheet\" href=\"style.css\">"));
    assert!(
        index.contains("<span class=\"badge fail\">FAIL</span> <code>scale</code>"),
        "{index}"
    );
    assert!(index.contains("<strong>UncoalescedGlobalAccess</strong>"));
    // Failing kernels come first.
    assert!(index.find("<code>scale</code>") < index.find("<code>produce</code>"));
    let mut files = vec![index.clone(), gate.read("html/style.css")];
    let charts = std::fs::read_dir(gate.path("html/charts")).expect("charts");
    let mut svgs = 0;
    for entry in charts {
        let path = entry.expect("entry").path();
        let svg = std::fs::read_to_string(&path).expect("svg");
        assert!(
            svg.starts_with("<svg ") && svg.contains("</svg>"),
            "{}",
            path.display()
        );
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        assert!(
            index.contains(&format!("src=\"charts/{name}\"")),
            "{name} is not shown"
        );
        files.push(svg);
        svgs += 1;
    }
    assert!(svgs >= 15, "one chart per kernel and rule: {svgs}");
    for text in &files {
        // What Jenkins' default CSP blocks: scripts, inline styles, data: URIs.
        assert!(
            !text.contains("<script")
                && !text.contains("style=")
                && !text.contains("<style")
                && !text.contains("data:")
                && !text.contains("javascript:")
        );
    }
}

/// The JSON and JUnit files are written as they are made (one testsuite at
/// a time, the JSON straight to the file): for real H200 exports, a check's
/// files hold exactly what rendering its whole report in memory gives, and
/// the baseline, read as a stream, gives the verdicts it gave read whole.
#[test]
fn streamed_report_files_equal_the_reports_rendered_whole() {
    let gate = Gate::new();
    gate.base_baseline(&[]).code(0);
    gate.fast_run("strided");
    let args = ["check", "--baseline", "baseline.json", "--input", "run.csv"];
    let files = ["--json", "r.json", "--junit", "j.xml", "--markdown", "m.md"];
    let out = gate.run(&[&args[..], &files[..]].concat());
    out.code(1);
    let report: ncugate::verdict::Report =
        serde_json::from_str(&gate.read("r.json")).expect("the JSON report reads back");
    assert!(
        report
            .rules
            .iter()
            .any(|r| r.status == ncugate::status::Status::Fail)
    );
    let view = ncugate::report::View::new(&report);
    assert_eq!(gate.read("r.json"), ncugate::report::json::render(&view));
    assert_eq!(gate.read("j.xml"), ncugate::report::junit::render(&view));
    assert_eq!(gate.read("m.md"), ncugate::report::markdown::render(&view));
    assert_valid_junit(&gate.path("j.xml"));
    // The whole-text reader of a baseline, for comparison: the same baseline.
    let text = gate.read("baseline.json");
    let whole: ncugate::baseline::Baseline = serde_json::from_str(&text).expect("baseline");
    let streamed = ncugate::baseline::Baseline::load(&gate.path("baseline.json")).expect("load");
    assert_eq!(streamed, whole);
}

/// A baseline read as a stream refuses what the whole-text reader refused,
/// with the same error, in the same order: a file that is not UTF-8 (even
/// where its JSON breaks first), a version it cannot read before a
/// duplicate key, a duplicate key, text that is not JSON.
#[test]
fn a_streamed_baseline_gives_the_errors_the_whole_text_gave() {
    use ncugate::baseline::Baseline;
    use ncugate::error::Error;
    let gate = Gate::new();
    let load = |name: &str, bytes: &[u8]| {
        std::fs::write(gate.path(name), bytes).expect("write");
        Baseline::load(&gate.path(name)).err()
    };
    let utf8 = load("u.json", b"x \xff {}");
    assert!(
        matches!(&utf8, Some(Error::Read { source, .. }) if source.kind() == std::io::ErrorKind::InvalidData),
        "{utf8:?}"
    );
    // The baseline error's variant and fields, as Debug shows them.
    let baseline = |e: Option<Error>| match e {
        Some(Error::Baseline(b)) => format!("{b:?}"),
        other => panic!("not a baseline error: {other:?}"),
    };
    let version = baseline(load(
        "v.json",
        br#"{"schema_version": 9, "runs": 1, "runs": 2}"#,
    ));
    assert!(
        version.starts_with("SchemaVersion") && version.contains("found: 9"),
        "{version}"
    );
    let duplicate = baseline(load(
        "d.json",
        br#"{"schema_version": 2, "runs": 1, "runs": 2}"#,
    ));
    assert!(
        duplicate.starts_with("DuplicateKey") && duplicate.contains("duplicate key `runs`"),
        "{duplicate}"
    );
    let not_json = baseline(load("n.json", b"{\"schema_version\": 2,"));
    assert!(not_json.starts_with("NotJson"), "{not_json}");
    let none = baseline(load("none.json", b"[1, 2]"));
    assert!(none.starts_with("NoSchemaVersion"), "{none}");
}
