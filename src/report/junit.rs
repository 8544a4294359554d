//! `--junit`: one testsuite per kernel key, one testcase per rule and per
//! structural check, a one-line failure message each. Valid against the
//! schema of Jenkins' xUnit plugin (tests/schemas/jenkins-xunit-junit-10.xsd).
//! Jenkins' JUnit plugin drops a testsuite with no testcase, so an error
//! before any comparison is an `ncugate` suite with one error testcase.

use super::view::View;
use crate::verdict::Status;
use quick_junit::{NonSuccessKind, Report as JUnit, TestCase, TestCaseStatus, TestSuite};

/// The view as JUnit XML.
pub fn render(view: &View<'_>) -> String {
    let mut junit = JUnit::new("ncugate");
    junit.add_test_suites(suites(view));
    xml(&junit)
}

/// The view's testsuites: the gate's own, the run total, each tool, each kernel key.
pub fn suites(view: &View<'_>) -> Vec<TestSuite> {
    let mut junit: Vec<TestSuite> = Vec::new();
    let mut gate = TestSuite::new("ncugate");
    for (label, value) in &view.header {
        if !matches!(*label, "GPU" | "input" | "details") {
            gate.add_property((*label, value.as_str()));
        }
    }
    gate.add_property(("outcome", view.outcome_word()));
    for (i, error) in view.errors.iter().enumerate() {
        gate.add_test_case(case(
            &format!("gate error {}", i + 1),
            "ncugate",
            Status::Error,
            error,
            None,
        ));
    }
    if let Some(device) = &view.device {
        gate.add_test_case(case(
            "device fingerprint",
            "ncugate",
            device.status,
            &device.message,
            None,
        ));
    }
    junit.push(gate);

    if let Some(total) = view.total() {
        let mut suite = TestSuite::new(total.name());
        for c in view.checks_of(total) {
            suite.add_test_case(case(c.name, total.name(), c.status, c.message, c.why));
        }
        junit.push(suite);
    }
    let mut tools: Vec<&str> = view.sanitizer.iter().map(|f| f.tool.as_str()).collect();
    tools.dedup();
    for tool in tools {
        let name = format!("compute-sanitizer {tool}");
        let mut suite = TestSuite::new(name.as_str());
        for f in view.sanitizer.iter().filter(|f| f.tool.as_str() == tool) {
            let title = format!(
                "{} {}",
                f.kind,
                f.api
                    .as_deref()
                    .or(f.kernel.as_deref())
                    .unwrap_or(&f.summary)
            );
            let stack = f
                .example_stack
                .iter()
                .take(8)
                .cloned()
                .collect::<Vec<_>>()
                .join(" <- ");
            suite.add_test_case(case(
                &title,
                &name,
                f.status,
                &f.message,
                (!stack.is_empty()).then_some(stack.as_str()),
            ));
        }
        junit.push(suite);
    }
    if !view.memory.is_empty() {
        let mut suite = TestSuite::new("GPU memory");
        for m in view.memory {
            suite.add_test_case(case(&m.check, "GPU memory", m.status, &m.message, None));
        }
        junit.push(suite);
    }
    for scope in view.scopes.iter().filter(|s| s.kernel.is_some()) {
        let kernel = scope.name();
        let mut suite = TestSuite::new(kernel);
        for c in view.checks_of(scope) {
            suite.add_test_case(case(c.name, kernel, c.status, c.message, c.why));
        }
        for f in view.findings_of(scope) {
            let message = format!("new ncu finding {} {}: {}", f.rule, f.detail, f.description);
            suite.add_test_case(case(
                &format!("ncu finding {}", f.rule),
                kernel,
                f.status,
                &message,
                None,
            ));
        }
        if !suite.test_cases.is_empty() {
            junit.push(suite);
        }
    }
    junit
}

/// JUnit XML as the Jenkins xUnit schema accepts it.
pub fn xml(junit: &JUnit) -> String {
    match junit.to_string() {
        Ok(xml) => without_root_skipped(xml),
        Err(e) => format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites><testsuite name=\"ncugate\" tests=\"1\" failures=\"0\" errors=\"1\"><testcase name=\"junit\"><error type=\"error\" message=\"cannot render: {}\"/></testcase></testsuite></testsuites>\n",
            xml_escape(&e.to_string())
        ),
    }
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
    let mut tc_status = match status {
        Status::Pass | Status::Improved | Status::Changed => TestCaseStatus::success(),
        Status::Skipped => TestCaseStatus::skipped(),
        // A warning is not a failure: it passes, with the message in system-out.
        Status::Warn => TestCaseStatus::success(),
        Status::Fail => TestCaseStatus::non_success(NonSuccessKind::Failure),
        Status::Error => TestCaseStatus::non_success(NonSuccessKind::Error),
    };
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
