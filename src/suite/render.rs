//! A suite's report in every format, through the same [`Reporter`] trait and
//! write path as a single check's: a [`SuiteView`] holds each workload's own
//! [`View`] and the suite's words; the terminal and Markdown get a section per
//! workload under one headline, JUnit a testsuite per workload × kernel
//! (`<workload>: <kernel>`), HTML a page per workload behind an index, GitHub
//! mode annotations that name the workload and one step summary.

use super::report::SuiteReport;
use crate::error::Result;
use crate::report::view::{View, outcome_emoji};
use crate::report::{
    Files, GitHub, Html, JUnit, Json, Markdown, Outputs, Rendered, Reporter, github, html, junit,
    markdown, terminal,
};
use crate::verdict::{Counts, Outcome};
use maud::html;
use std::fmt::Write as _;
use std::path::PathBuf;

/// A suite report as every reporter shows it.
#[derive(Debug, Clone)]
pub struct SuiteView<'r> {
    /// The model itself, for the JSON report.
    pub report: &'r SuiteReport,
    pub outcome: Outcome,
    /// `REGRESSION (exit 1): 3 workloads — 1 regressed (infer), 2 passed`.
    pub headline: String,
    pub workloads: Vec<WorkloadView<'r>>,
}

/// One workload's part of the suite view.
#[derive(Debug, Clone)]
pub struct WorkloadView<'r> {
    pub name: &'r str,
    pub tags: &'r [String],
    /// Wall time of its profiled runs, `12.3 s`, or `—`.
    pub seconds: String,
    pub counts: Counts,
    pub view: View<'r>,
}

impl<'r> SuiteView<'r> {
    /// The view of a suite report and of each workload's report.
    pub fn new(report: &'r SuiteReport) -> SuiteView<'r> {
        SuiteView {
            report,
            outcome: report.outcome,
            headline: report.headline(),
            workloads: report
                .workloads
                .iter()
                .map(|w| {
                    let view = View::new(&w.report);
                    WorkloadView {
                        name: &w.name,
                        tags: &w.tags,
                        seconds: w.seconds.map_or("—".to_string(), |s| format!("{s:.1} s")),
                        counts: view.counts,
                        view,
                    }
                })
                .collect(),
        }
    }

    /// Failed checks over all workloads: GitHub's `regressions` output.
    pub fn regressions(&self) -> usize {
        self.workloads.iter().map(|w| w.counts.fail).sum()
    }

    /// The workloads that did not pass, in run order.
    pub fn failed_workloads(&self) -> Vec<&str> {
        self.workloads
            .iter()
            .filter(|w| w.view.outcome != Outcome::Pass)
            .map(|w| w.name)
            .collect()
    }
}

/// The terminal report: each workload's table under a rule with its name, then the headline.
pub fn terminal(report: &SuiteReport, style: &terminal::Style) -> String {
    let view = SuiteView::new(report);
    let mut out = String::new();
    for w in &view.workloads {
        let tags = if w.tags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", w.tags.join(", "))
        };
        let _ = writeln!(out, "\n── workload {}{tags} ──", w.name);
        out.push_str(&terminal::render_view(&w.view, style));
    }
    let _ = writeln!(out, "\nncugate suite: {}", view.headline);
    out
}

/// The Markdown report: a table of workloads, then each workload's report one heading level down.
pub fn markdown(view: &SuiteView<'_>) -> String {
    let mut out = String::new();
    let report = view.report;
    let _ = writeln!(
        out,
        "## {} ncugate suite: {}\n",
        outcome_emoji(view.outcome),
        view.outcome.as_str()
    );
    let _ = writeln!(out, "{}\n", view.headline);
    if let Some(shard) = report.shard {
        let _ = writeln!(
            out,
            "Shard {shard} of the suite ({}).\n",
            report.suite.join(", ")
        );
    }
    if !report.merged_from.is_empty() {
        let _ = writeln!(
            out,
            "Merged from {} reports: {}.\n",
            report.merged_from.len(),
            report
                .merged_from
                .iter()
                .map(|m| format!("`{}`", markdown::code(m)))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let _ = writeln!(
        out,
        "| workload | verdict | failed | warnings | errors | passed | profiled |\n|---|---|---|---|---|---|---|"
    );
    for w in &view.workloads {
        let c = w.counts;
        let _ = writeln!(
            out,
            "| `{}` | {} {} | {} | {} | {} | {} | {} |",
            markdown::code(w.name),
            outcome_emoji(w.view.outcome),
            w.view.outcome_word(),
            c.fail,
            c.warn,
            c.error,
            c.pass,
            w.seconds
        );
    }
    for w in &view.workloads {
        let _ = writeln!(out, "\n## Workload `{}`\n", markdown::code(w.name));
        for line in markdown::render(&w.view).lines() {
            if line.starts_with('#') {
                out.push('#');
            }
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// JUnit XML: every workload's testsuites, named and classed `<workload>: …`.
pub fn junit(view: &SuiteView<'_>) -> String {
    let mut all = quick_junit::Report::new("ncugate");
    for w in &view.workloads {
        for mut suite in junit::suites(&w.view) {
            suite.name = format!("{}: {}", w.name, suite.name.as_str()).into();
            for case in &mut suite.test_cases {
                let class = case
                    .classname
                    .as_ref()
                    .map_or(String::new(), |c| c.as_str().to_string());
                case.set_classname(format!("{}: {class}", w.name));
            }
            all.add_test_suite(suite);
        }
    }
    if view.workloads.is_empty() {
        // Jenkins drops a report with no testcase: say that this shard had nothing to gate.
        let mut suite = quick_junit::TestSuite::new("ncugate suite");
        let mut case =
            quick_junit::TestCase::new("workloads", quick_junit::TestCaseStatus::success());
        case.set_system_out("no workload in this run");
        suite.add_test_case(case);
        all.add_test_suite(suite);
    }
    junit::xml(&all)
}

/// `index.html` listing the workloads, each workload's report in `<workload>/`:
/// the workloads' files first, the index last.
pub fn html_files<'v>(view: &'v SuiteView<'_>) -> Files<'v> {
    let workloads = view.workloads.iter().flat_map(|w| {
        html::files(&w.view).map(move |(name, bytes)| (PathBuf::from(w.name).join(name), bytes))
    });
    Box::new(workloads.chain(std::iter::once_with(|| index(view)).flatten()))
}

/// The suite's `style.css` and `index.html`.
fn index(view: &SuiteView<'_>) -> [(PathBuf, Vec<u8>); 2] {
    let header = html! {
        h1 { "ncugate suite" }
        p.counts { (view.headline) }
    };
    let main = html! {
        section {
            table {
                thead { tr { th { "workload" } th { "verdict" } th { "failed" } th { "warnings" } th { "errors" } th { "passed" } } }
                tbody {
                    "\n"
                    @for w in &view.workloads {
                        @let class = html::outcome_class(w.view.outcome);
                        tr class=(class) {
                            td { a href={ (w.name) "/index.html" } { code { (w.name) } } }
                            td { (html::badge(class, w.view.outcome_word())) }
                            td { (w.counts.fail) } td { (w.counts.warn) } td { (w.counts.error) } td { (w.counts.pass) }
                        }
                        "\n"
                    }
                }
            }
        }
    };
    let page = html::document(
        &format!("ncugate suite: {}", view.outcome.as_str()),
        header,
        main,
        &view.report.ncugate_version,
    );
    [
        (PathBuf::from("style.css"), html::CSS.as_bytes().to_vec()),
        (PathBuf::from("index.html"), page.into_string().into_bytes()),
    ]
}

/// GitHub mode: each workload's annotations titled with its name, the suite's
/// Markdown in the step summary, and `result`, `regressions`, `failed_workloads`, `report` outputs.
pub fn github_streams(view: &SuiteView<'_>) -> github::Streams {
    let mut annotations = String::new();
    for w in &view.workloads {
        let prefix = format!("title={}%3A ", github::property(w.name));
        for line in github::annotations(&w.view).lines() {
            annotations.push_str(&line.replacen("title=", &prefix, 1));
            annotations.push('\n');
        }
    }
    github::Streams {
        annotations,
        summary: markdown(view),
        outcome: view.outcome,
        regressions: view.regressions(),
        extra: vec![("failed_workloads", view.failed_workloads().join(","))],
    }
}

/// The suite's JSON report.
pub fn json(view: &SuiteView<'_>) -> String {
    let report = view.report;
    let mut text = serde_json::to_string_pretty(report).unwrap_or_else(|e| {
        format!(
            "{{\"schema_version\": {}, \"kind\": \"suite\", \"outcome\": \"error\", \"exit_code\": 2, \"errors\": [{:?}]}}",
            report.schema_version,
            e.to_string()
        )
    });
    text.push('\n');
    text
}

/// Writes every requested report file (atomically) and GitHub mode's outputs.
pub fn write_all(report: &SuiteReport, outputs: &Outputs) -> Result<()> {
    crate::report::write_view(&SuiteView::new(report), outputs)
}

impl Reporter<SuiteView<'_>> for JUnit {
    fn render<'v>(&self, view: &'v SuiteView<'_>) -> Rendered<'v> {
        Rendered::File(junit(view))
    }
}

impl Reporter<SuiteView<'_>> for Markdown {
    fn render<'v>(&self, view: &'v SuiteView<'_>) -> Rendered<'v> {
        Rendered::File(markdown(view))
    }
}

impl Reporter<SuiteView<'_>> for Json {
    fn render<'v>(&self, view: &'v SuiteView<'_>) -> Rendered<'v> {
        Rendered::File(json(view))
    }
}

impl Reporter<SuiteView<'_>> for Html {
    fn render<'v>(&self, view: &'v SuiteView<'_>) -> Rendered<'v> {
        Rendered::Folder(html_files(view))
    }
}

impl Reporter<SuiteView<'_>> for GitHub {
    fn render<'v>(&self, view: &'v SuiteView<'_>) -> Rendered<'v> {
        Rendered::GitHub(github_streams(view))
    }
}

#[cfg(test)]
mod tests {
    //! Snapshots of every suite format from a hand-made suite report: a
    //! workload that passed and one that regressed, in shard 1 of 2.

    use super::*;
    use crate::report::tests::cases;
    use crate::suite::report::WorkloadReport;

    fn suite() -> SuiteReport {
        let workload = |name: &str, tags: &[&str], seconds, report| WorkloadReport {
            name: name.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            baseline: format!("baselines/{name}.json"),
            seconds,
            report,
        };
        let names: Vec<String> = ["infer", "train", "serve"].map(String::from).into();
        SuiteReport::new(
            Some(crate::config::Shard { index: 1, count: 2 }),
            names.clone(),
            names[..2].to_vec(),
            "0".repeat(64),
            "f".repeat(64),
            vec![
                workload("infer", &["fast"], Some(12.34), cases::pass()),
                workload("train", &[], None, cases::regression()),
            ],
        )
    }

    fn snapshot(name: &str, text: String) {
        insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true }, {
            insta::assert_snapshot!(name, text);
        });
    }

    #[test]
    fn every_format_of_a_suite() {
        let report = suite();
        let view = SuiteView::new(&report);
        assert_eq!(view.regressions(), 3);
        assert_eq!(view.failed_workloads(), ["train"]);
        snapshot(
            "suite_terminal",
            terminal(&report, &terminal::Style::default()),
        );
        snapshot("suite_markdown", markdown(&view));
        snapshot("suite_junit", junit(&view));
        let Rendered::Folder(files) = Html.render(&view) else {
            panic!("HTML renders a folder");
        };
        let files: Vec<_> = files.collect();
        let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
        let index = files
            .last()
            .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        snapshot(
            "suite_html",
            format!("files: {}\n\n{index}", names.join(", ")),
        );
        let Rendered::GitHub(streams) = GitHub.render(&view) else {
            panic!("GitHub mode renders its streams");
        };
        snapshot(
            "suite_github",
            format!(
                "--- stdout\n{}--- outputs\nresult={}\nregressions={}\n{:?}\n",
                streams.annotations,
                streams.outcome.as_str(),
                streams.regressions,
                streams.extra
            ),
        );
    }

    #[test]
    fn an_empty_shard_still_has_a_testcase() {
        let report = SuiteReport::new(None, vec![], vec![], String::new(), String::new(), vec![]);
        let xml = junit(&SuiteView::new(&report));
        assert!(xml.contains("no workload in this run"), "{xml}");
    }
}
