//! A suite's report in every format, built from each workload's own report:
//! the terminal and Markdown get a section per workload under one headline,
//! JUnit a testsuite per workload × kernel (`<workload>: <kernel>`), HTML a
//! page per workload behind an index, GitHub mode annotations that name the
//! workload and one step summary.

use super::report::SuiteReport;
use crate::error::{Error, Result};
use crate::report::{Outputs, github, html, junit, markdown, terminal};
use crate::verdict::Outcome;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// The terminal report: each workload's table under a rule with its name, then the headline.
pub fn terminal(report: &SuiteReport, style: &terminal::Style) -> String {
    let mut out = String::new();
    for w in &report.workloads {
        let tags = if w.tags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", w.tags.join(", "))
        };
        let _ = writeln!(out, "\n── workload {}{tags} ──", w.name);
        out.push_str(&terminal::render(&w.report, style));
    }
    let _ = writeln!(out, "\nncugate suite: {}", report.headline());
    out
}

fn emoji(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "✅",
        Outcome::Regression => "❌",
        Outcome::Error => "⚠️",
    }
}

/// The Markdown report: a table of workloads, then each workload's report one heading level down.
pub fn markdown(report: &SuiteReport) -> String {
    let mut out = String::new();
    let word = match report.outcome {
        Outcome::Pass => "pass",
        Outcome::Regression => "regression",
        Outcome::Error => "error",
    };
    let _ = writeln!(out, "## {} ncugate suite: {word}\n", emoji(report.outcome));
    let _ = writeln!(out, "{}\n", report.headline());
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
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let _ = writeln!(
        out,
        "| workload | verdict | failed | warnings | errors | passed | profiled |\n|---|---|---|---|---|---|---|"
    );
    for w in &report.workloads {
        let c = w.report.counts();
        let seconds = w.seconds.map_or("—".to_string(), |s| format!("{s:.1} s"));
        let _ = writeln!(
            out,
            "| `{}` | {} {:?} | {} | {} | {} | {} | {seconds} |",
            w.name,
            emoji(w.report.outcome),
            w.report.outcome,
            c.fail,
            c.warn,
            c.error,
            c.pass
        );
    }
    for w in &report.workloads {
        let _ = writeln!(out, "\n## Workload `{}`\n", w.name);
        for line in markdown::render(&w.report).lines() {
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
pub fn junit(report: &SuiteReport) -> String {
    let mut all = quick_junit::Report::new("ncugate");
    for w in &report.workloads {
        for mut suite in junit::suites(&w.report) {
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
    if report.workloads.is_empty() {
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

/// `index.html` listing the workloads, each workload's report in `<dir>/<workload>/`.
pub fn html(report: &SuiteReport, dir: &Path) -> Result<()> {
    let err = |path: &Path, source: std::io::Error| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(|e| err(dir, e))?;
    let mut rows = String::new();
    for w in &report.workloads {
        html::write(&w.report, &dir.join(&w.name))?;
        let c = w.report.counts();
        let class = match w.report.outcome {
            Outcome::Pass => "pass",
            Outcome::Regression => "fail",
            Outcome::Error => "error",
        };
        let _ = writeln!(
            rows,
            "<tr class=\"{class}\"><td><a href=\"{name}/index.html\"><code>{name}</code></a></td><td><span class=\"badge {class}\">{outcome:?}</span></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            c.fail,
            c.warn,
            c.error,
            c.pass,
            name = html::esc(&w.name),
            outcome = w.report.outcome,
        );
    }
    let page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ncugate suite: {outcome:?}</title><link rel=\"stylesheet\" href=\"style.css\"></head>\n<body><header><h1>ncugate suite</h1><p class=\"counts\">{headline}</p></header>\n<main><section><table><thead><tr><th>workload</th><th>verdict</th><th>failed</th><th>warnings</th><th>errors</th><th>passed</th></tr></thead><tbody>\n{rows}</tbody></table></section></main>\n<footer>ncugate {version}</footer></body></html>\n",
        outcome = report.outcome,
        headline = html::esc(&report.headline()),
        version = html::esc(&report.ncugate_version),
    );
    let css = dir.join("style.css");
    std::fs::write(&css, html::CSS).map_err(|e| err(&css, e))?;
    let index = dir.join("index.html");
    std::fs::write(&index, page).map_err(|e| err(&index, e))
}

/// GitHub mode: each workload's annotations titled with its name, the suite's
/// Markdown in the step summary, and `result`, `regressions`, `failed_workloads`, `report` outputs.
pub fn github(report: &SuiteReport, outputs: &Outputs) -> std::io::Result<()> {
    for w in &report.workloads {
        for line in github::annotations(&w.report).lines() {
            let prefix = format!("title={}%3A ", github::property(&w.name));
            println!("{}", line.replacen("title=", &prefix, 1));
        }
    }
    if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        f.write_all(markdown(report).as_bytes())?;
        f.write_all(b"\n")?;
    }
    let regressions: usize = report
        .workloads
        .iter()
        .map(|w| w.report.counts().fail)
        .sum();
    let failed: Vec<&str> = report
        .workloads
        .iter()
        .filter(|w| w.report.outcome != Outcome::Pass)
        .map(|w| w.name.as_str())
        .collect();
    crate::report::github::write_step_outputs(
        report.outcome,
        regressions,
        &[("failed_workloads", failed.join(","))],
        outputs,
    )
}

/// The suite's JSON report.
pub fn json(report: &SuiteReport) -> String {
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
    type Render = fn(&SuiteReport) -> String;
    let targets: [(&Option<std::path::PathBuf>, Render); 3] = [
        (&outputs.junit, junit),
        (&outputs.markdown, markdown),
        (&outputs.json, json),
    ];
    for (path, render) in targets {
        if let Some(path) = path {
            crate::baseline::write_atomic(path, render(report).as_bytes())?;
        }
    }
    if let Some(dir) = &outputs.html {
        html(report, dir)?;
    }
    if outputs.github {
        github(report, outputs).map_err(|source| Error::Write {
            path: "$GITHUB_STEP_SUMMARY / $GITHUB_OUTPUT".into(),
            source,
        })?;
    }
    Ok(())
}
