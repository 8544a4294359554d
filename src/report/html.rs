//! `--html DIR`: a static report that displays under Jenkins' default
//! Content-Security-Policy — no JavaScript, no inline styles, no `data:` URIs:
//! `index.html`, an external `style.css`, and one SVG chart per kernel and
//! gated metric (see [`super::chart`]), drawn with `plotters`. The page is a
//! `maud` template: every string is escaped unless it is marked as markup,
//! so a kernel name or a message cannot inject HTML.

use super::Files;
use super::document::{Document, Suite};
use super::view::{Section, SectionKind, View};
use crate::verdict::Status;
use maud::{DOCTYPE, Markup, html};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

/// The stylesheet every page links to.
pub const CSS: &str = include_str!("html.css");

/// The document's files: a check's report at the top of the folder; a
/// suite's workloads each in `<workload>/`, then the suite's `style.css` and
/// `index.html` listing them (last: the index links to the rest).
pub fn document<'v>(doc: &'v Document<'_>) -> Files<'v> {
    let workloads = doc.workloads.iter().flat_map(|w| {
        files(&w.view).map(move |(name, bytes)| (PathBuf::from(w.name()).join(name), bytes))
    });
    match &doc.suite {
        None => Box::new(workloads),
        Some(suite) => {
            Box::new(workloads.chain(std::iter::once_with(|| index(doc, suite)).flatten()))
        }
    }
}

/// A suite's `style.css` and `index.html`: the workloads with their verdicts and counts.
fn index(doc: &Document<'_>, suite: &Suite<'_>) -> [(PathBuf, Vec<u8>); 2] {
    let header = html! {
        h1 { "ncugate suite" }
        p.counts { (suite.headline) }
    };
    let main = html! {
        section {
            table {
                thead { tr { th { "workload" } th { "verdict" } th { "failed" } th { "warnings" } th { "errors" } th { "passed" } } }
                tbody {
                    "\n"
                    @for w in &doc.workloads {
                        @let class = outcome_class(w.view.outcome);
                        @let c = w.counts();
                        tr class=(class) {
                            td { a href={ (w.name()) "/index.html" } { code { (w.name()) } } }
                            td { (badge(class, w.view.outcome_word())) }
                            td { (c.fail) } td { (c.warn) } td { (c.error) } td { (c.pass) }
                        }
                        "\n"
                    }
                }
            }
        }
    };
    let page = document_page(
        &format!("ncugate suite: {}", suite.outcome.as_str()),
        header,
        main,
        suite.version,
    );
    [
        (PathBuf::from("style.css"), CSS.as_bytes().to_vec()),
        (PathBuf::from("index.html"), page.into_string().into_bytes()),
    ]
}

/// The report's files, in the order to write them: `style.css`,
/// `charts/rule-N.svg`, then `index.html` (which links to the others and
/// shows the charts that were drawn). Each chart is drawn as it is written.
pub fn files<'v>(view: &'v View<'_>) -> Files<'v> {
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
    let index = std::iter::once_with(move || {
        let page = page(view, &drawn.borrow());
        (PathBuf::from("index.html"), page.into_string().into_bytes())
    });
    Box::new(
        std::iter::once((PathBuf::from("style.css"), CSS.as_bytes().to_vec()))
            .chain(charts)
            .chain(index),
    )
}

/// The CSS class of a status: its colour on the page.
pub fn class(status: Status) -> &'static str {
    match status {
        Status::Fail => "fail",
        Status::Error => "error",
        Status::Warn => "warn",
        Status::Improved => "improved",
        Status::Changed => "changed",
        Status::Skipped => "skipped",
        Status::Pass => "pass",
    }
}

/// The CSS class of an outcome (a regression is painted as a failure).
fn outcome_class(outcome: crate::verdict::Outcome) -> &'static str {
    match outcome {
        crate::verdict::Outcome::Pass => "pass",
        crate::verdict::Outcome::Regression => "fail",
        crate::verdict::Outcome::Error => "error",
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

fn page(view: &View<'_>, images: &HashMap<usize, String>) -> Markup {
    let word = view.outcome_title();
    let header = html! {
        h1 { "ncugate " (badge(outcome_class(view.outcome), word)) }
        "\n"
        p.counts { "exit code " (view.exit_code) " · " (view.counts_text(" · ")) }
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
    let main = html! {
        @if !view.errors.is_empty() {
            section.errors { h2 { "Errors" } ul { @for e in view.errors { li { (e) } } } }
            "\n"
        }
        @for section in kernels {
            (kernel(section, images))
        }
        @for section in view.lists() {
            (list(section))
        }
        @if !view.notes.is_empty() {
            section { h2 { "Notes" } ul { @for n in view.notes { li { (n) } } } }
            "\n"
        }
    };
    document_page(&format!("ncugate: {word}"), header, main, view.version)
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
fn kernel(section: &Section<'_>, images: &HashMap<usize, String>) -> Markup {
    html! {
        section.kernel {
            h2 { (badge(class(section.status), section.status.as_str())) " " code { (section.title) } }
            "\n"
            table {
                thead { tr { th { "check" } th { "baseline μ±σ" } th { "current" } th { "change" } th { "verdict" } th { "why" } } }
                tbody {
                    "\n"
                    @for (c, cells) in section.measured() {
                        tr class=(class(c.status)) {
                            td { @if cells.rule.is_some() { code { (c.name) } } @else { (c.name) } }
                            td { (cells.baseline) } td { (cells.current) } td { (cells.change) } td { (c.verdict) }
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
                    @if let Some(name) = cells.rule_index.and_then(|i| images.get(&i)) {
                        figure {
                            img src=(name) alt={ (c.name) ": baseline vs current" } width="520" height="130";
                            figcaption { code { (c.name) } (cells.allowed) }
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
        "\n"
    }
}
