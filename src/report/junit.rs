//! `--junit`: one testsuite per kernel key, one testcase per rule and per
//! structural check (as many as the headline counts), a one-line failure message each. Valid against the
//! schema of Jenkins' xUnit plugin (tests/schemas/jenkins-xunit-junit-10.xsd).
//! Jenkins' JUnit plugin drops a testsuite with no testcase, so an error
//! before any comparison is an `ncugate` suite with one error testcase.

use super::document::Document;
use super::view::View;
use crate::status::Status;
use quick_junit::{NonSuccessKind, Report as JUnit, TestCase, TestCaseStatus, TestSuite};
use std::io::Write;

/// The document as JUnit XML — every workload's testsuites, in a suite named
/// and classed `<workload>: …` — written as it is made, one testsuite at a time: the XML of
/// 100,000 kernels is never held whole, nor their testsuites. The root's
/// counts come first, from the statuses the testcases are made of.
pub(crate) fn write_document(doc: &Document<'_>, out: &mut dyn Write) -> std::io::Result<()> {
    let mut totals = JUnit::new("ncugate");
    for w in &doc.workloads {
        let (tests, failures, errors) = counts(&w.view);
        totals.tests += tests + usize::from(w.carried.is_some());
        totals.failures += failures;
        totals.errors += errors;
    }
    if doc.workloads.is_empty() {
        totals.tests = 1;
    }
    // The declaration and the root's start tag, as quick-junit writes them.
    let head = xml(&totals);
    let root = head
        .find("<testsuites")
        .and_then(|at| head[at..].find('>').map(|e| at + e + 1));
    out.write_all(&head.as_bytes()[..root.unwrap_or(head.len())])?;
    let mut part = Vec::new();
    let mut tail = Vec::new();
    let mut write = |suite: TestSuite| -> std::io::Result<()> {
        let mut one = JUnit::new("ncugate");
        one.add_test_suite(suite);
        part.clear();
        one.serialize(&mut part).map_err(std::io::Error::other)?;
        // The suite between the root's start tag and its end tag.
        let from =
            find(&part, b"<testsuites").and_then(|at| find(&part[at..], b">").map(|e| at + e + 1));
        let to = part.windows(14).rposition(|w| w == b"\n</testsuites>");
        let (Some(from), Some(to)) = (from, to) else {
            return Err(std::io::Error::other(
                "quick-junit wrote no testsuites element",
            ));
        };
        tail = part[to..].to_vec();
        out.write_all(&part[from..to])
    };
    for w in &doc.workloads {
        if let Some(carried) = &w.carried {
            write(skipped(&w.prefix(), carried))?;
        }
        for suite in each_suite(&w.view, &w.prefix()) {
            write(suite)?;
        }
    }
    if doc.workloads.is_empty() {
        write(nothing_to_gate())?;
    }
    out.write_all(&tail)
}

/// A skipped workload's own testsuite: one skipped testcase saying whose
/// verdict its other testcases carry (they keep their failures).
fn skipped(prefix: &str, carried: &str) -> TestSuite {
    let name = format!("{prefix}skipped");
    let mut suite = TestSuite::new(name.as_str());
    suite.add_test_case(case(
        "inputs unchanged",
        &name,
        Status::Skipped,
        carried,
        None,
    ));
    suite
}

/// Jenkins drops a report with no testcase: the suite that says this shard had nothing to gate.
fn nothing_to_gate() -> TestSuite {
    let mut suite = TestSuite::new("ncugate suite");
    let mut case = TestCase::new("workloads", TestCaseStatus::success());
    case.set_system_out("no workload in this run");
    suite.add_test_case(case);
    suite
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The view's testcases, failed ones and errors, as its testsuites count them.
fn counts(view: &View<'_>) -> (usize, usize, usize) {
    let (mut tests, mut failures, mut errors) = (view.errors.len(), 0, view.errors.len());
    for check in view.sections.iter().flat_map(|s| &s.checks) {
        tests += 1;
        match status_of(check.status) {
            TestCaseStatus::NonSuccess {
                kind: NonSuccessKind::Failure,
                ..
            } => failures += 1,
            TestCaseStatus::NonSuccess {
                kind: NonSuccessKind::Error,
                ..
            } => errors += 1,
            _ => {}
        }
    }
    (tests, failures, errors)
}

/// The view as JUnit XML.
pub fn render(view: &View<'_>) -> String {
    let mut junit = JUnit::new("ncugate");
    junit.add_test_suites(suites(view, ""));
    xml(&junit)
}

/// The view's testsuites: the gate's own, then one per section (each
/// kernel, the run total, each compute-sanitizer tool, the graph memory),
/// each suite's name and each case's class starting with `prefix` (a
/// suite's `<workload>: `).
pub(crate) fn suites(view: &View<'_>, prefix: &str) -> Vec<TestSuite> {
    each_suite(view, prefix).collect()
}

/// [`suites`] one at a time.
fn each_suite<'a>(view: &'a View<'_>, prefix: &'a str) -> impl Iterator<Item = TestSuite> + 'a {
    let sections = view.sections.iter().map(move |section| {
        let name = format!("{prefix}{}", section.title);
        let mut suite = TestSuite::new(name.as_str());
        for c in &section.checks {
            // A sanitizer finding's host stack is its failure's description.
            let stack = c
                .listed()
                .map(|l| l.stack.join(" <- "))
                .filter(|s| !s.is_empty());
            let why = c.why.or(stack.as_deref());
            suite.add_test_case(case(&c.name, &name, c.status, &c.message, why));
        }
        suite
    });
    std::iter::once(gate_suite(view, prefix)).chain(sections)
}

/// The gate's own testsuite: what was gated, the outcome, the errors.
fn gate_suite(view: &View<'_>, prefix: &str) -> TestSuite {
    let gate_name = format!("{prefix}ncugate");
    let mut gate = TestSuite::new(gate_name.as_str());
    for (label, value) in &view.header {
        if !matches!(*label, "GPU" | "input" | "details") {
            gate.add_property((*label, value.as_str()));
        }
    }
    gate.add_property(("outcome", view.outcome_word()));
    // Listed as passing testcases; the headline's count of them, as a property.
    let not_gated = view.counts.not_gated_words();
    if !not_gated.is_empty() {
        gate.add_property(("not_gated", not_gated.join(", ").as_str()));
    }
    // The headline's "environment changed", with what changed.
    if let Some(changed) = view
        .notes
        .iter()
        .find(|n| n.text.starts_with(crate::verdict::ENVIRONMENT_CHANGED))
    {
        gate.add_property(("environment_changed", clean(&changed.text).as_str()));
    }
    for (i, error) in view.errors.iter().enumerate() {
        gate.add_test_case(case(
            &format!("gate error {}", i + 1),
            &gate_name,
            Status::Error,
            error,
            None,
        ));
    }
    // The GPU is what makes the checks comparable, not a check: a property,
    // so that JUnit counts the testcases the headline and Markdown count.
    if let Some(device) = &view.device {
        gate.add_property(("device", clean(&device.message).as_str()));
    }
    gate
}

/// JUnit XML as the Jenkins xUnit schema accepts it.
pub(crate) fn xml(junit: &JUnit) -> String {
    match junit.to_string() {
        Ok(xml) => without_root_skipped(xml),
        Err(e) => failed(&e.to_string()),
    }
}

/// The JUnit XML of a report that could not be rendered.
fn failed(error: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites><testsuite name=\"ncugate\" tests=\"1\" failures=\"0\" errors=\"1\"><testcase name=\"junit\"><error type=\"error\" message=\"cannot render: {}\"/></testcase></testsuite></testsuites>\n",
        xml_escape(error)
    )
}

/// quick-junit writes `skipped="N"` on `<testsuites>`, which the Jenkins
/// xUnit schema does not allow there (it does on `<testsuite>`); drop it
/// from the root element only.
fn without_root_skipped(xml: String) -> String {
    let Some(start) = xml.find("<testsuites") else {
        return xml;
    };
    let Some(len) = xml[start..].find('>') else {
        return xml;
    };
    let root = &xml[start..start + len];
    let Some(attr) = root.find(" skipped=\"") else {
        return xml;
    };
    let Some(close) = root[attr + 10..].find('"') else {
        return xml;
    };
    let (from, to) = (start + attr, start + attr + 10 + close + 1);
    format!("{}{}", &xml[..from], &xml[to..])
}

fn case(name: &str, classname: &str, status: Status, message: &str, why: Option<&str>) -> TestCase {
    let one_line = clean(message);
    let mut tc_status = status_of(status);
    match status {
        Status::Fail | Status::Error | Status::Skipped => {
            tc_status.set_message(one_line.as_str());
            tc_status.set_type(status.as_str().to_lowercase());
            if let Some(why) = why {
                tc_status.set_description(clean(why));
            }
        }
        _ => {}
    }
    let mut tc = TestCase::new(clean(name), tc_status);
    tc.set_classname(clean(classname));
    if matches!(
        status,
        Status::Warn | Status::Improved | Status::Changed | Status::Pass
    ) {
        // "improved: improved +20%" says it twice: the status only when the message lacks it.
        let word = status.as_str();
        if one_line.starts_with(word) {
            tc.set_system_out(one_line);
        } else {
            tc.set_system_out(format!("{word}: {one_line}"));
        }
    }
    tc
}

/// A testcase's status, before its words: what its testsuite counts.
fn status_of(status: Status) -> TestCaseStatus {
    match status {
        Status::Pass | Status::Improved | Status::Changed => TestCaseStatus::success(),
        Status::Skipped => TestCaseStatus::skipped(),
        // A warning is not a failure: it passes, with the message in system-out.
        Status::Warn => TestCaseStatus::success(),
        Status::Fail => TestCaseStatus::non_success(NonSuccessKind::Failure),
        Status::Error => TestCaseStatus::non_success(NonSuccessKind::Error),
    }
}

/// One line, without the control characters Jenkins rejects even when escaped.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
