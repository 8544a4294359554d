//! `--html DIR`: a static report that displays under Jenkins' default
//! Content-Security-Policy — no JavaScript, no inline styles, no `data:` URIs:
//! `index.html`, an external `style.css`, and one SVG chart per kernel and
//! gated metric (see [`super::chart`]), drawn with `plotters`. The page is a
//! `maud` template: every string is escaped unless it is marked as markup,
//! so a kernel name or a message cannot inject HTML.

use super::Files;
use super::document::{Document, Suite};
use super::view::{Section, SectionKind, View};
use crate::status::Status;
use maud::{DOCTYPE, Markup, html};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

/// The stylesheet every page links to.
pub(crate) const CSS: &str = include_str!("html.css");

/// The document's files: a check's report at the top of the folder; a
/// suite's workloads each in `<workload>/`, then the suite's `style.css` and
/// `index.html` listing them (last: the index links to the rest).
pub(crate) fn document<'v>(doc: &'v Document<'_>) -> Files<'v> {
    let workloads = doc.workloads.iter().flat_map(|w| {
        files(&w.view, w.name).map(move |(name, bytes)| (PathBuf::from(w.name()).join(name), bytes))
    });
    match &doc.suite {
        None => Box::new(workloads),
        Some(suite) => {
            Box::new(workloads.chain(std::iter::once_with(|| index(doc, suite)).flatten()))
        }
    }
}

/// A suite's `style.css` and `index.html`: the workloads with their verdicts
/// and counts, those that failed first (errors, then regressions, each in
/// run order), each with the reason its status line gives.
fn index(doc: &Document<'_>, suite: &Suite<'_>) -> [(PathBuf, Vec<u8>); 2] {
    let header = html! {
        h1 { "ncugate suite " (badge(outcome_class(suite.outcome), suite.outcome.title())) }
        p.counts { (suite.headline) }
    };
    let workloads = doc.failures_first();
    let main = html! {
        section {
            table.workloads {
                thead { tr { th { "workload" } th { "verdict" } th { "why" } th { "failed" } th { "warnings" } th { "errors" } th { "passed" } } }
                tbody {
                    "\n"
                    @for w in workloads {
                        @let class = outcome_class(w.view.outcome);
                        @let c = w.counts();
                        tr class=(class) {
                            td { a href={ (w.name()) "/index.html" } { code { (breakable(w.name())) } } }
                            td { (badge(class, w.view.outcome_word())) }
                            td.why { @if let Some(reason) = w.view.top_reason() { (breakable(&reason)) } }
                            td { (c.fail) } td { (c.warn) } td { (c.error) } td { (c.pass) }
                        }
                        "\n"
                    }
                }
            }
        }
    };
    let page = document_page(
        &format!("ncugate suite: {}", suite.outcome.title()),
        header,
        main,
        suite.version,
    );
    [
        (PathBuf::from("style.css"), CSS.as_bytes().to_vec()),
        (PathBuf::from("index.html"), page.into_string().into_bytes()),
    ]
}

/// `text` with a line-break opportunity (`<wbr>`) after each `.` and each
/// run of `_`: a metric name (`sm__inst_executed.sum`) wraps between its
/// parts in a narrow column, never inside one. Each part is escaped.
fn breakable(text: &str) -> Markup {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, ch)) = chars.next() {
        let next = chars.peek().map(|&(_, c)| c);
        if (ch == '.' || ch == '_') && next.is_some_and(|c| c != '_') {
            parts.push(&text[start..=i]);
            start = i + 1;
        }
    }
    let last = &text[start..];
    html! {
        @for part in parts { (part) wbr; }
        (last)
    }
}

/// The report's files, in the order to write them: `style.css`,
/// `charts/rule-N.svg`, `charts/trend-N.svg` (a failing rule's trend in the
/// history store, when the check had one), then `index.html` (which links
/// to the others and shows the charts that were drawn). Each rule chart is
/// drawn as it is written.
pub(crate) fn files<'v>(view: &'v View<'_>, workload: Option<&'v str>) -> Files<'v> {
    let drawn: Rc<RefCell<HashMap<usize, String>>> = Rc::default();
    let record = Rc::clone(&drawn);
    let charts = view
        .measured()
        .filter_map(|(_, c)| c.rule_index.zip(c.rule))
        .filter_map(move |(i, r)| {
            let svg = super::chart::chart(r)?;
            let name = format!("charts/rule-{i}.svg");
            record.borrow_mut().insert(i, name.clone());
            Some((PathBuf::from(name), svg.into_bytes()))
        });
    let trends = view
        .report
        .trends
        .iter()
        .map(|(i, svg)| (PathBuf::from(trend_file(*i)), svg.as_bytes().to_vec()));
    let index = std::iter::once_with(move || {
        let page = page(view, workload, &drawn.borrow());
        (PathBuf::from("index.html"), page.into_string().into_bytes())
    });
    Box::new(
        std::iter::once((PathBuf::from("style.css"), CSS.as_bytes().to_vec()))
            .chain(charts)
            .chain(trends)
            .chain(index),
    )
}

/// The file of rule `i`'s trend chart.
fn trend_file(i: usize) -> String {
    format!("charts/trend-{i}.svg")
}

/// The CSS class of a status: its colour on the page.
pub(crate) fn class(status: Status) -> &'static str {
    match status {
        Status::Fail => "fail",
        Status::Error => "error",
        Status::Warn => "warn",
        Status::Improved => "improved",
        // `higher`/`lower`: a change the rule reports without judging it, never pass-green.
        Status::Changed => "changed",
        Status::Skipped => "skipped",
        Status::Pass => "pass",
    }
}

/// The CSS class of an outcome (a regression is painted as a failure).
fn outcome_class(outcome: crate::status::Outcome) -> &'static str {
    match outcome {
        crate::status::Outcome::Pass => "pass",
        crate::status::Outcome::Regression => "fail",
        crate::status::Outcome::Error => "error",
    }
}

/// A page with the stylesheet, a header and a footer around `main`.
fn document_page(title: &str, header: Markup, main: Markup, version: &str) -> Markup {
    html! {
        (DOCTYPE) "\n"
        html lang="en" {
            head {
                meta charset="utf-8";
                title { (title) }
                link rel="stylesheet" href="style.css";
            }
            body {
                "\n"
                header { (header) }
                "\n"
                main { "\n" (main) }
                "\n"
                footer { "ncugate " (version) }
            }
        }
        "\n"
    }
}

/// A status badge: `<span class="badge fail">FAIL</span>`.
fn badge(class: &str, word: &str) -> Markup {
    html! { span class={ "badge " (class) } { (word) } }
}

/// One check's page; in a suite, titled with its workload's name and
/// linking back to the suite's index, so that open tabs tell workloads apart.
fn page(view: &View<'_>, workload: Option<&str>, images: &HashMap<usize, String>) -> Markup {
    let word = view.outcome_title();
    let header = html! {
        @if workload.is_some() {
            nav { a href="../index.html" { "← all workloads" } }
            "\n"
        }
        h1 {
            @match workload {
                Some(name) => { code { (name) } " " }
                None => { "ncugate " }
            }
            (badge(outcome_class(view.outcome), word))
            @if view.counts.degraded {
                " " (badge("warn", "DEGRADED"))
            }
        }
        "\n"
        p.counts { "exit code " (view.exit_code) " · " (view.counts_text(" · ")) }
        @if view.counts.degraded {
            "\n"
            p.degraded { strong { (view.outcome_label()) } }
        }
        "\n"
        dl {
            @for (label, value) in view.header.iter().filter(|(_, v)| !v.is_empty()) {
                dt { (label) } dd { (value) }
            }
        }
    };
    // Failing kernels first: the reader came for them.
    let mut kernels: Vec<&Section<'_>> = view
        .sections
        .iter()
        .filter(|s| s.kind != SectionKind::List)
        .collect();
    kernels.sort_by_key(|s| std::cmp::Reverse(s.status));
    // A trend drawn on the page needs no note with the command that draws it.
    let drawn: Vec<String> = view
        .report
        .trends
        .iter()
        .filter_map(|(i, _)| view.report.rules.get(*i))
        .map(|r| {
            let on = r.kernel.as_deref().unwrap_or("the whole run");
            format!("trend of {} on {on}: ", r.metric)
        })
        .collect();
    let notes: Vec<String> = view
        .notes
        .iter()
        .map(ToString::to_string)
        .filter(|n| !drawn.iter().any(|d| n.starts_with(d.as_str())))
        .collect();
    let main = html! {
        @if !view.errors.is_empty() {
            section.errors { h2 { "Errors" } ul { @for e in view.errors { li { (e) } } } }
            "\n"
        }
        // Notes change the reading of what follows (a renamed kernel, a
        // shared GPU, kernels that vary): above the kernels.
        @if !notes.is_empty() {
            section.notes { h2 { "Notes" } ul { @for n in notes { li { (n) } } } }
            "\n"
        }
        @for section in kernels {
            (kernel(section, images, &view.report.trends))
        }
        @for section in view.lists() {
            (list(section))
        }
        (source_lines(&view.report.explain))
    };
    let title = match workload {
        Some(name) => format!("{name}: {word} — ncugate"),
        None => format!("ncugate: {word}"),
    };
    document_page(&title, header, main, view.version)
}

/// The source lines (or opcodes) that explain the failing kernels, each
/// counter baseline → current, the ones that rose marked.
fn source_lines(explained: &[crate::explain::Explained]) -> Markup {
    html! {
        @if explained.iter().any(|e| !e.changes.is_empty()) {
            section.lines { h2 { "Source lines" }
                table {
                    thead { tr { th { "kernel" } th { "line" } th { "source" } th { "counters (baseline → current)" } } }
                    tbody {
                        @for e in explained { @for c in &e.changes {
                            tr {
                                td { code { (breakable(&e.kernel)) } @if let Some(l) = e.launch { " (" (l.label()) ")" } }
                                td { code { (c.place) } }
                                td { code { (c.text) } }
                                td { @for (i, (name, before, after)) in c.counters.iter().enumerate() {
                                    @if i > 0 { ", " }
                                    @let moved = format!("{name} {} → {}", crate::format::format_value(*before, ""), crate::format::format_value(*after, ""));
                                    @if after > before { mark { (moved) } } @else { (moved) }
                                } }
                            }
                            "\n"
                        } }
                    }
                }
            }
            "\n"
        }
    }
}

/// A list section (compute-sanitizer, graph memory): a line per row, with
/// the first thread and host stack where there are some.
fn list(section: &Section<'_>) -> Markup {
    html! {
        section { h2 { (section.title) } ul {
            @for (c, listed) in section.checks.iter().filter_map(|c| c.listed().map(|l| (c, l))) {
                li class=(class(c.status)) {
                    (badge(class(c.status), c.status.as_str())) " " (listed.label) ": " (c.message)
                    @if listed.thread.is_some() || !listed.stack.is_empty() {
                        ul.stack {
                            @if let Some(t) = listed.thread { li { "first at " (t) } }
                            @for frame in listed.stack {
                                li { "at " code { (frame) } }
                            }
                        }
                    }
                }
            }
        } }
        "\n"
    }
}

/// One kernel's (or the whole run's) section: its checks, their charts, its findings.
fn kernel(
    section: &Section<'_>,
    images: &HashMap<usize, String>,
    trends: &[(usize, String)],
) -> Markup {
    let heading = html! {
        h2 { (badge(class(section.status), section.status.as_str())) " " code { (section.title) } }
    };
    // A passing kernel is one line until opened: the failures stay in view.
    let body = kernel_body(section, images, trends);
    html! {
        section.kernel {
            @if section.status == Status::Pass {
                details { summary { (heading) } (body) }
            } @else {
                (heading) "\n" (body)
            }
        }
        "\n"
    }
}

/// A kernel section's table, charts and findings.
fn kernel_body(
    section: &Section<'_>,
    images: &HashMap<usize, String>,
    trends: &[(usize, String)],
) -> Markup {
    html! {
            table {
                thead { tr { th { "check" } th { "baseline μ±σ" } th { "current" } th { "change" } th { "verdict" } th { "why" } } }
                tbody {
                    "\n"
                    @for (c, cells) in section.measured() {
                        tr class=(class(c.status)) {
                            td { @if cells.rule.is_some() { code { (breakable(&c.name)) } } @else { (c.name) } }
                            td { (cells.baseline()) } td { (cells.current()) } td { (cells.change()) } td { (c.verdict) }
                            td { @if cells.rule.is_none() || c.needs_attention() {
                                (c.message)
                                @if let Some(why) = c.why { " — " (why) }
                            } }
                        }
                        "\n"
                    }
                }
            }
            "\n"
            div.charts {
                @for (c, cells) in section.measured() {
                    @let image = cells.rule_index.and_then(|i| images.get(&i));
                    @let trend = cells.rule_index.filter(|i| trends.iter().any(|(t, _)| t == i));
                    @if image.is_some() || trend.is_some() {
                        // A metric's charts side by side: this run, then its trend.
                        div.metric {
                            @if let Some(name) = image {
                                figure {
                                    img src=(name) alt={ (c.name) ": baseline vs current" } width="520" height="150";
                                    figcaption { code { (breakable(&c.name)) } (cells.allowed()) }
                                }
                            }
                            @if let Some(i) = trend {
                                figure.trend {
                                    img src=(trend_file(i)) alt={ (c.name) ": trend over the history's runs" } width="640" height="220";
                                    figcaption { code { (breakable(&c.name)) } " — trend in the history, oldest run left, this run last; grey: the band the rolling baseline allowed" }
                                }
                            }
                        }
                    }
                }
            }
            "\n"
            @if section.findings().next().is_some() {
                h3 { "New ncu findings" }
                ul.findings {
                    @for (_, f) in section.findings() {
                        li { strong { (f.rule) } " " (f.detail) ": " (f.description) }
                    }
                }
            }
    }
}

#[cfg(test)]
mod tests {
    use super::breakable;

    #[test]
    fn names_wrap_after_dots_and_runs_of_underscores_only() {
        assert_eq!(
            breakable("sm__inst_executed.sum (sum)").into_string(),
            "sm__<wbr>inst_<wbr>executed.<wbr>sum (sum)"
        );
        assert_eq!(breakable("a<b>_c").into_string(), "a&lt;b&gt;_<wbr>c");
        assert_eq!(breakable("x_").into_string(), "x_");
    }
}
