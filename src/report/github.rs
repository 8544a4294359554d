//! GitHub Actions: workflow-command annotations for failures, warnings and
//! new ncu findings that do not gate (notices; at most 10 per
//! level, as GitHub shows), the Markdown report with a Mermaid chart of each
//! check's change against its allowance appended to `$GITHUB_STEP_SUMMARY`,
//! and `result` / `regressions` / `report` written to `$GITHUB_OUTPUT`. The
//! two files are the ones the config resolved ([`super::GitHubFiles`]):
//! nothing here reads the environment.

use super::document::Document;
use super::view::{Check, View};
use super::{Outputs, markdown};
use crate::status::{Outcome, Status};
use std::fmt::Write as _;
use std::io::Write as _;

/// Annotations GitHub displays per level and step.
const MAX_PER_LEVEL: usize = 10;

/// What GitHub mode writes, before it is written: see [`deliver`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Streams {
    /// Workflow commands for standard output, one per line.
    pub(crate) annotations: String,
    /// Markdown appended to `$GITHUB_STEP_SUMMARY`.
    pub(crate) summary: String,
    pub(crate) outcome: Outcome,
    /// The `regressions` output: failed checks.
    pub(crate) regressions: usize,
    /// Step outputs besides `result`, `regressions` and `report`.
    pub(crate) extra: Vec<(&'static str, String)>,
}

/// GitHub mode for a document: every workload's annotations (titled with
/// its name in a suite), the document's Markdown (a single check's with its
/// change chart), the outcome and failures, and a suite's `failed_workloads`.
pub(crate) fn document(doc: &Document<'_>) -> Streams {
    if let (None, [check]) = (&doc.suite, doc.workloads.as_slice()) {
        return streams(&check.view);
    }
    let mut annotations_text = String::new();
    for w in &doc.workloads {
        annotations_text.push_str(&annotations(&w.view, &w.prefix()));
    }
    Streams {
        annotations: annotations_text,
        summary: suite_summary(doc),
        outcome: doc.outcome(),
        regressions: doc.regressions(),
        extra: vec![("failed_workloads", doc.failed_workloads().join(","))],
    }
}

/// A suite's step summary: its headline and table, then the workloads that
/// did not pass (errors first) each with its report and change chart, then
/// those that passed in one collapsed list.
fn suite_summary(doc: &Document<'_>) -> String {
    let Some(suite) = &doc.suite else {
        return markdown::document(doc);
    };
    let mut out = markdown::suite_header(doc, suite);
    let failed = doc.failures_first();
    for w in failed.iter().filter(|w| w.view.outcome != Outcome::Pass) {
        let _ = writeln!(out, "\n## Workload `{}`\n", markdown::code(w.name()));
        out.push_str(&markdown::render_at(&w.view, 3));
        if let Some(chart) = chart(&w.view) {
            out.push_str("\n#### Change vs allowance\n\n");
            out.push_str(&chart);
        }
    }
    let passed: Vec<_> = doc
        .workloads
        .iter()
        .filter(|w| w.view.outcome == Outcome::Pass)
        .collect();
    if !passed.is_empty() {
        let n = passed.len();
        let s = if n == 1 { "" } else { "s" };
        let _ = writeln!(
            out,
            "\n<details><summary>{n} workload{s} passed</summary>\n"
        );
        for w in passed {
            let _ = writeln!(
                out,
                "- `{}`: {}",
                markdown::code(w.name()),
                w.view.counts_text(", ")
            );
        }
        let _ = writeln!(out, "\n</details>");
    }
    out
}

/// GitHub mode for one check: its annotations, its Markdown with the change
/// chart, its outcome and failures.
pub(crate) fn streams(view: &View<'_>) -> Streams {
    let mut summary = markdown::render(view);
    if let Some(chart) = chart(view) {
        summary.push_str("\n### Change vs allowance\n\n");
        summary.push_str(&chart);
    }
    Streams {
        annotations: annotations(view, ""),
        summary,
        outcome: view.outcome,
        regressions: view.regressions(),
        extra: Vec::new(),
    }
}

/// One annotation: level, title, optional file/line, message.
struct Annotation {
    level: &'static str,
    title: String,
    file: Option<String>,
    line: Option<usize>,
    message: String,
}

/// The workflow commands for a view, one per line, each title starting
/// with `prefix` (a suite's `<workload>: `): the errors, then section by
/// section every check that needs attention and every new ncu finding (a
/// notice when it does not gate).
pub fn annotations(view: &View<'_>, prefix: &str) -> String {
    let thresholds_file = thresholds_file(view.thresholds_file());
    let mut all: Vec<Annotation> = Vec::new();
    for e in view.errors {
        all.push(Annotation {
            level: "error",
            title: format!("{prefix}ncugate could not decide"),
            file: None,
            line: None,
            message: e.clone(),
        });
    }
    if view.counts.degraded {
        all.push(Annotation {
            level: "warning",
            title: format!("{prefix}ncugate DEGRADED"),
            file: None,
            line: None,
            message: view.outcome_label(),
        });
    }
    for section in &view.sections {
        for c in &section.checks {
            if let Some(a) = annotation(&section.title, c, thresholds_file.as_deref()) {
                all.push(Annotation {
                    title: format!("{prefix}{}", a.title),
                    ..a
                });
            }
        }
    }
    let mut out = String::new();
    for lvl in ["error", "warning", "notice"] {
        let of_level: Vec<&Annotation> = all.iter().filter(|a| a.level == lvl).collect();
        let extra = of_level.len().saturating_sub(MAX_PER_LEVEL);
        for (i, a) in of_level.iter().take(MAX_PER_LEVEL).enumerate() {
            let mut props = vec![format!("title={}", property(&a.title))];
            if let Some(f) = &a.file {
                props.push(format!("file={}", property(f)));
            }
            if let Some(l) = a.line {
                props.push(format!("line={l}"));
            }
            let more = if extra > 0 && i == MAX_PER_LEVEL - 1 {
                format!(" (and {extra} more: see the step summary)")
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "::{lvl} {}::{}",
                props.join(","),
                data(&format!("{}{more}", a.message))
            );
        }
    }
    out
}

/// A check's annotation, if it gets one: a measured check or a listed row
/// that needs attention (a rule points at its line in the thresholds file),
/// every new ncu finding.
fn annotation(section: &str, c: &Check<'_>, thresholds_file: Option<&str>) -> Option<Annotation> {
    if let Some(f) = c.finding() {
        let speedup = f
            .speedup
            .as_deref()
            .map(|s| format!(", {s}"))
            .unwrap_or_default();
        return Some(Annotation {
            level: level(c.status),
            title: format!("{section}: new ncu finding {}", f.rule),
            file: None,
            line: None,
            message: format!("{}{speedup}", f.summary),
        });
    }
    if !c.needs_attention() {
        return None;
    }
    let why = c.why.map(|w| format!(" — {w}")).unwrap_or_default();
    let line = c.cells().and_then(|cells| cells.line);
    let file = line.and(thresholds_file).map(str::to_string);
    Some(Annotation {
        level: level(c.status),
        title: format!("{section}: {}", c.name),
        line: file.as_ref().and(line),
        file,
        message: format!("{}{why}", c.message),
    })
}

/// The annotation level of a status: a failure or an error is an `error`, a
/// warning a `warning`, anything else (a new ncu finding that does not gate)
/// a `notice`.
fn level(status: Status) -> &'static str {
    match status {
        Status::Fail | Status::Error => "error",
        Status::Warn => "warning",
        _ => "notice",
    }
}

/// The thresholds file, when it is a file in the workspace annotations can point into.
fn thresholds_file(path: Option<&str>) -> Option<String> {
    path.filter(|p| std::path::Path::new(p).is_file())
        .map(str::to_string)
}

/// Escapes a workflow-command message (`%`, CR, LF), as the runner requires,
/// and the legacy `##[` the runner reads anywhere in a line.
pub(crate) fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
        .replace("##[", "#\\u{0023}[")
}

/// Escapes a workflow-command property value (also `:` and `,`).
pub(crate) fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The chart's axis ends at this many times the largest allowance (at 100%
/// at least): a bar past it is cut there and its label says its value.
const CAP: f64 = 5.0;

/// A chart bar's label: the kernel's short name (`scale<0>`, `total`) and
/// the rule's `name` when it has one, else its metric's counter without the
/// roll-up (`gpu__time_duration.sum` → `gpu__time_duration`), shortened in the middle.
fn chart_label(r: &crate::verdict::RuleResult) -> String {
    let kernel = match r.kernel.as_deref() {
        None => "total",
        Some(k) => super::view::short_kernel(k),
    };
    let what = match r.rule.starts_with(&*r.metric) {
        true => r.metric.split('.').next().unwrap_or(&r.metric),
        false => &r.rule,
    };
    format!(
        "{}: {}",
        super::columns::shorten_middle(kernel, 16),
        super::columns::shorten_middle(what, 30)
    )
}

/// A Mermaid `xychart-beta` of the checks' change in the worse direction
/// against their allowance, in percent of the baseline mean: the failures,
/// then the closest calls, at most 12 bars.
pub(crate) fn chart(view: &View<'_>) -> Option<String> {
    let mut points: Vec<(String, f64, f64, bool)> = view
        .measured()
        .filter_map(|(_, c)| {
            let r = c.rule?;
            let (b, change, allowance) = (r.baseline?, r.change_pct?, r.allowance?);
            if b.mean == 0.0 {
                return None;
            }
            let worse = if r.worse == crate::rules::Worse::Higher {
                change
            } else {
                -change
            };
            let allowed = allowance / b.mean.abs() * 100.0;
            Some((chart_label(r), worse, allowed, r.status == Status::Fail))
        })
        .collect();
    if points.is_empty() {
        return None;
    }
    // Failures first, then by how close each came to its allowance.
    points.sort_by(|a, b| {
        b.3.cmp(&a.3)
            .then((b.1 / b.2.max(1e-9)).total_cmp(&(a.1 / a.2.max(1e-9))))
    });
    points.truncate(12);
    let labels: Vec<String> = points
        .iter()
        // A backtick run would close the ```mermaid block early: labels keep none.
        // Mermaid's sanitizer shows `<`, `>` and `&` as `&lt;`, `&gt;`, `&amp;`
        // in a chart's labels: look-alikes read as the name does.
        .map(|p| {
            let label = p.0.replace(['"', '`'], "'");
            let label = label.replace('<', "‹").replace('>', "›").replace('&', "＆");
            format!("\"{label}\"")
        })
        .collect();
    // A change far past every allowance (+908%) would flatten the allowance
    // line: the axis stops at CAP times the largest allowance, and a bar
    // that runs past it says its value in its label.
    let widest_allowance = points.iter().map(|p| p.2).fold(0.0f64, f64::max);
    let cap = (widest_allowance * CAP).max(100.0);
    let labels: Vec<String> = points
        .iter()
        .zip(labels)
        .map(|(p, label)| match p.1 > cap {
            true => format!("{} ({:+.0}%)\"", label.trim_end_matches('"'), p.1),
            false => label,
        })
        .collect();
    let bars: Vec<String> = points
        .iter()
        .map(|p| format!("{:.1}", p.1.min(cap)))
        .collect();
    let line: Vec<String> = points.iter().map(|p| format!("{:.1}", p.2)).collect();
    let max = points
        .iter()
        .map(|p| p.1.min(cap).max(p.2))
        .fold(0.0f64, f64::max)
        .ceil()
        .max(1.0);
    let min = points
        .iter()
        .map(|p| p.1.max(-cap).min(0.0))
        .fold(0.0f64, f64::min)
        .floor();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "```mermaid\nxychart-beta horizontal\n    title \"Change in the worse direction (bars) vs allowance (line), % of baseline mean\""
    );
    let _ = writeln!(out, "    x-axis [{}]", labels.join(", "));
    let _ = writeln!(out, "    y-axis \"%\" {min} --> {max}");
    let _ = writeln!(
        out,
        "    bar [{}]\n    line [{}]\n```",
        bars.join(", "),
        line.join(", ")
    );
    Some(out)
}

/// Writes GitHub mode's streams: annotations to standard output, the
/// summary appended to `$GITHUB_STEP_SUMMARY`, the step outputs to
/// `$GITHUB_OUTPUT` (each file only when the runner named it).
pub(crate) fn deliver(streams: &Streams, outputs: &Outputs) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(streams.annotations.as_bytes())?;
    stdout.flush()?;
    if let Some(path) = &outputs.github_files.step_summary {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        f.write_all(streams.summary.as_bytes())?;
        f.write_all(b"\n")?;
    }
    write_step_outputs(
        streams.outcome,
        streams.regressions,
        &streams.extra,
        outputs,
    )
}

/// Appends the step outputs to `$GITHUB_OUTPUT` (when named): `result`, `regressions`, the
/// `extra` pairs, and `report` (the `--json` path, else `--markdown`). One place for single
/// reports and suites, so both spell the outputs alike.
fn write_step_outputs(
    outcome: Outcome,
    regressions: usize,
    extra: &[(&str, String)],
    outputs: &Outputs,
) -> std::io::Result<()> {
    let Some(path) = &outputs.github_files.output else {
        return Ok(());
    };
    let report_path = outputs
        .json
        .as_ref()
        .or(outputs.markdown.as_ref())
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    writeln!(f, "result={}", outcome.as_str())?;
    writeln!(f, "regressions={regressions}")?;
    for (key, value) in extra {
        writeln!(f, "{key}={value}")?;
    }
    writeln!(f, "report={}", report_path.replace(['\n', '\r'], " "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_the_runner() {
        assert_eq!(data("50% of\nit"), "50%25 of%0Ait");
        assert_eq!(
            property("void f<1>(int, float): x"),
            "void f<1>(int%2C float)%3A x"
        );
    }
}
