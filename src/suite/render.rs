//! A suite's report as a [`Document`] of its workloads: each workload's own
//! [`View`] under its name, and the suite's headline,
//! shard and table. Every format renders it through the same reporter as a
//! single check (a document of one workload without the suite chrome), and
//! it reaches the disk by the same write path.

use super::report::{SuiteReport, WorkloadReport};
use crate::report::document::{Document, Model, Suite, Workload};
use crate::report::printable;
use crate::report::{View, terminal};

/// The document of a suite report and of each workload's report.
pub(crate) fn document(report: &SuiteReport) -> Document<'_> {
    Document {
        model: report,
        suite: Some(Suite {
            outcome: report.outcome(),
            headline: report.headline(),
            shard: report
                .shard
                .map(|shard| (shard.to_string(), report.suite.as_slice())),
            merged_from: &report.merged_from,
            version: &report.ncugate_version,
        }),
        workloads: report
            .workloads
            .iter()
            .map(|w| Workload {
                name: Some(&w.name),
                tags: &w.tags,
                seconds: seconds(w.seconds),
                view: View::new(&w.report),
                carried: carried(w),
            })
            .collect(),
    }
}

/// The terminal report: each workload's report under a rule with its name, then the headline.
pub(crate) fn terminal(report: &SuiteReport, style: &terminal::Style) -> String {
    terminal::document(&document(&printable::escaped(report)), style)
}

/// The terminal report after a suite check streamed its status lines.
pub(crate) fn terminal_after_status_lines(report: &SuiteReport, style: &terminal::Style) -> String {
    terminal::after_status_lines(&document(&printable::escaped(report)), style)
}

/// The status line of workload `w` as it finishes (`names`: the suite's widest name).
pub(crate) fn status_line(
    w: &WorkloadReport,
    names: usize,
    style: &terminal::Style,
) -> Option<String> {
    let w = printable::escaped(w);
    let workload = Workload {
        name: Some(&w.name),
        tags: &w.tags,
        seconds: seconds(w.seconds),
        view: View::new(&w.report),
        carried: carried(&w),
    };
    terminal::streamed_status_line(&workload, names, style)
}

/// A skipped workload's words: `inputs unchanged since 1a2b3c4 (pass, 2026-12-05)`.
fn carried(w: &WorkloadReport) -> Option<String> {
    w.carried.as_ref().map(|c| c.label(w.report.outcome()))
}

/// Wall time as a status line shows it: `12.3 s`, or `—`.
fn seconds(s: Option<f64>) -> String {
    s.map_or("—".to_string(), |s| format!("{s:.1} s"))
}

impl Model for SuiteReport {
    fn json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_else(|e| {
            format!(
                "{{\"schema_version\": {}, \"kind\": \"suite\", \"outcome\": \"error\", \"exit_code\": 2, \"errors\": [{:?}]}}",
                self.schema_version,
                e.to_string()
            )
        });
        text.push('\n');
        text
    }

    fn write_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        crate::report::json::write_pretty(self, out)
    }
}

#[cfg(test)]
mod tests {
    //! Snapshots of every suite format from a hand-made suite report: a
    //! workload that passed and one that regressed, in shard 1 of 2.

    use super::*;
    use crate::report::tests::cases;
    use crate::report::{GitHub, Html, JUnit, Markdown, Rendered, Reporter};
    use crate::suite::report::WorkloadReport;

    fn suite() -> SuiteReport {
        let workload = |name: &str, tags: &[&str], seconds, report| WorkloadReport {
            name: name.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            baseline: format!("baselines/{name}.json"),
            seconds,
            report,
            carried: None,
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

    fn file(reporter: &dyn Reporter, doc: &Document<'_>) -> String {
        match reporter.render(doc).text() {
            Some(text) => text,
            None => panic!("a file format renders a file"),
        }
    }

    #[test]
    fn every_format_of_a_suite() {
        let report = suite();
        let doc = document(&report);
        assert_eq!(doc.regressions(), 3);
        assert_eq!(doc.failed_workloads(), ["train"]);
        snapshot(
            "suite_terminal",
            terminal(&report, &terminal::Style::default()),
        );
        snapshot("suite_markdown", file(&Markdown, &doc));
        snapshot("suite_junit", file(&JUnit, &doc));
        let Rendered::Folder(files) = Html.render(&doc) else {
            panic!("HTML renders a folder");
        };
        let files: Vec<_> = files.collect();
        let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
        let index = files
            .last()
            .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        // Failures first, each with its reason and a link to its page.
        let (train, infer) = (
            index.find("train/index.html"),
            index.find("infer/index.html"),
        );
        assert!(train.is_some() && train < infer, "{index}");
        assert!(index.contains("<td class=\"why\">scale&lt;0&gt;: launched 6 times"));
        let page = files
            .iter()
            .find(|(p, _)| p.as_path() == std::path::Path::new("train/index.html"))
            .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        assert!(
            page.contains("<title>train: REGRESSION — ncugate</title>"),
            "{page}"
        );
        assert!(page.contains("<a href=\"../index.html\">"), "{page}");
        snapshot(
            "suite_html",
            format!("files: {}\n\n{index}", names.join(", ")),
        );
        let Rendered::GitHub(streams) = GitHub.render(&doc) else {
            panic!("GitHub mode renders its streams");
        };
        // The step summary: the failing workload with its chart, the passing one folded.
        let summary = &streams.summary;
        let (train, chart, folded) = (
            summary.find("## Workload `train`"),
            summary.find("```mermaid"),
            summary.find("<details><summary>1 workload passed</summary>\n\n- `infer`: "),
        );
        assert!(
            train.is_some() && train < chart && chart < folded,
            "{summary}"
        );
        assert!(!summary.contains("## Workload `infer`"), "{summary}");
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

    /// A skipped workload carries its recorded report: every format counts
    /// and names it with the commit and date of that report, and a carried
    /// regression is still a regression (exit 1).
    #[test]
    fn every_format_names_a_skipped_workload_and_its_carried_verdict() {
        let mut report = suite();
        report.workloads[1].carried = Some(crate::suite::report::Carried {
            commit: "1a2b3c4d5e".into(),
            time: 1_796_428_800,
            digest: "d".repeat(64),
        });
        assert_eq!(report.exit_code(), 1);
        let label = "inputs unchanged since 1a2b3c4 (regression, 2026-12-05)";
        let counted = "1 skipped, inputs unchanged, verdicts carried (train from 1a2b3c4)";
        assert!(report.headline().contains(counted), "{}", report.headline());
        let doc = document(&report);
        let text = terminal(&report, &terminal::Style::default());
        assert!(
            text.contains("SKIP  train") && text.contains(label),
            "{text}"
        );
        assert!(text.contains(counted), "{text}");
        let markdown = file(&Markdown, &doc);
        assert!(
            markdown.contains(&format!("| skipped: {label} |")) && markdown.contains(counted),
            "{markdown}"
        );
        let junit = file(&JUnit, &doc);
        assert!(
            junit.contains("train: skipped") && junit.contains(label),
            "{junit}"
        );
        let Rendered::GitHub(streams) = GitHub.render(&doc) else {
            panic!("GitHub mode renders its streams");
        };
        assert!(streams.summary.contains(counted), "{}", streams.summary);
        let json = report.json();
        assert!(json.contains("\"commit\": \"1a2b3c4d5e\""), "{json}");
    }

    /// Every format shows a suite of one workload as the single check's
    /// report under the workload's name: the same reporter, with the heading
    /// depth, the `<workload>: ` prefix and the folder as its parameters.
    #[test]
    fn a_suite_of_one_workload_and_a_check_share_every_reporter() {
        let check = cases::regression();
        let names = vec!["train".to_string()];
        let suite = SuiteReport::new(
            None,
            names.clone(),
            names,
            String::new(),
            String::new(),
            vec![WorkloadReport {
                name: "train".into(),
                tags: vec![],
                baseline: "baselines/train.json".into(),
                seconds: None,
                report: check.clone(),
                carried: None,
            }],
        );
        let (single, one) = (Document::check(&check), document(&suite));

        let style = terminal::Style::default();
        let text = terminal::document(&single, &style);
        assert_eq!(
            terminal::document(&one, &style),
            format!(
                "FAIL  train — scale<0>: launched 6 times per run, baseline 3\n\n── workload train ──\n{text}\nncugate suite: {}\n",
                suite.headline()
            )
        );

        let (md, suite_md) = (file(&Markdown, &single), file(&Markdown, &one));
        let (_, part) = suite_md
            .split_once("\n## Workload `train`\n\n")
            .expect("the workload's heading");
        let deeper: String = md
            .lines()
            .map(|l| match l.starts_with('#') {
                true => format!("#{l}\n"),
                false => format!("{l}\n"),
            })
            .collect();
        assert_eq!(part, deeper);

        let xml = file(&JUnit, &single)
            .replace("<testsuite name=\"", "<testsuite name=\"train: ")
            .replace("classname=\"", "classname=\"train: ");
        assert_eq!(file(&JUnit, &one), xml);

        let (Rendered::GitHub(check_streams), Rendered::GitHub(suite_streams)) =
            (GitHub.render(&single), GitHub.render(&one))
        else {
            panic!("GitHub mode renders its streams");
        };
        assert_eq!(
            suite_streams.annotations,
            check_streams
                .annotations
                .replace("title=", "title=train%3A ")
        );
        assert_eq!(
            (suite_streams.outcome, suite_streams.regressions),
            (check_streams.outcome, check_streams.regressions)
        );

        let (Rendered::Folder(check_files), Rendered::Folder(suite_files)) =
            (Html.render(&single), Html.render(&one))
        else {
            panic!("HTML renders a folder");
        };
        let check_files: Vec<_> = check_files
            .map(|(p, b)| (std::path::Path::new("train").join(p), b))
            .collect();
        let mut suite_files: Vec<_> = suite_files.collect();
        let index: Vec<_> = suite_files.split_off(check_files.len());
        let page = |files: &[(std::path::PathBuf, Vec<u8>)]| {
            files
                .last()
                .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default()
        };
        let (check_page, suite_page) = (page(&check_files), page(&suite_files));
        // The same files; the workload's page differs only in its title and
        // heading, which name the workload, and its link back to the index.
        let (n, m) = (check_files.len() - 1, suite_files.len() - 1);
        assert_eq!(suite_files[..m], check_files[..n]);
        assert_eq!(suite_files[m].0, check_files[n].0);
        let named = check_page
            .replace(
                "<title>ncugate: REGRESSION</title>",
                "<title>train: REGRESSION — ncugate</title>",
            )
            .replace(
                "<header><h1>ncugate ",
                "<header><nav><a href=\"../index.html\">← all workloads</a></nav>\n<h1><code>train</code> ",
            );
        assert_eq!(suite_page, named);
        let index: Vec<_> = index.iter().map(|(p, _)| p.display().to_string()).collect();
        assert_eq!(index, ["style.css", "index.html"]);
    }

    #[test]
    fn an_empty_shard_still_has_a_testcase() {
        let report = SuiteReport::new(None, vec![], vec![], String::new(), String::new(), vec![]);
        let xml = file(&JUnit, &document(&report));
        assert!(xml.contains("no workload in this run"), "{xml}");
    }
}
