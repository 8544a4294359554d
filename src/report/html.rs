//! `--html DIR`: a static report that displays under Jenkins' default
//! Content-Security-Policy — no JavaScript, no inline styles, no `data:` URIs:
//! `index.html`, an external `style.css`, and one SVG chart per kernel and
//! gated metric (see [`super::chart`]), drawn with `plotters`. The page is a
//! `maud` template: every string is escaped unless it is marked as markup,
//! so a kernel name or a message cannot inject HTML.

use super::Files;
use super::view::{Check, Finding, Scope, View};
use crate::verdict::Status;
use maud::{DOCTYPE, Markup, html};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

/// The stylesheet every page links to.
pub const CSS: &str = include_str!("html.css");

/// The report's files, in the order to write them: `style.css`,
/// `charts/rule-N.svg`, then `index.html` (which links to the others and
/// shows the charts that were drawn). Each chart is drawn as it is written.
pub fn files<'v>(view: &'v View<'_>) -> Files<'v> {
    let drawn: Rc<RefCell<HashMap<usize, String>>> = Rc::default();
    let record = Rc::clone(&drawn);
    let charts = view
        .checks
        .iter()
        .filter_map(|c| c.rule_index.zip(c.rule))
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
pub fn outcome_class(outcome: crate::verdict::Outcome) -> &'static str {
    match outcome {
        crate::verdict::Outcome::Pass => "pass",
        crate::verdict::Outcome::Regression => "fail",
        crate::verdict::Outcome::Error => "error",
    }
}

/// A page with the stylesheet, a header and a footer around `main`.
pub fn document(title: &str, header: Markup, main: Markup, version: &str) -> Markup {
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
pub fn badge(class: &str, word: &str) -> Markup {
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
    let mut scopes: Vec<&Scope> = view.scopes.iter().collect();
    scopes.sort_by_key(|s| std::cmp::Reverse(s.status));
    let main = html! {
        @if !view.errors.is_empty() {
            section.errors { h2 { "Errors" } ul { @for e in view.errors { li { (e) } } } }
            "\n"
        }
        @for scope in scopes {
            (kernel(view, scope, images))
        }
        @if !view.sanitizer.is_empty() {
            section { h2 { "compute-sanitizer" } ul {
                @for f in view.sanitizer {
                    li class=(class(f.status)) {
                        (badge(class(f.status), f.status.as_str())) " " (f.tool) ": " (f.message)
                        // The same first thread and host stack as the terminal shows.
                        @if f.example_thread.is_some() || !f.example_stack.is_empty() {
                            ul.stack {
                                @if let Some(t) = &f.example_thread { li { "first at " (t) } }
                                @for frame in f.example_stack.iter().take(6) {
                                    li { "at " code { (frame) } }
                                }
                            }
                        }
                    }
                }
            } }
            "\n"
        }
        @if !view.memory.is_empty() {
            section { h2 { "GPU memory" } ul {
                @for m in view.memory {
                    li { (badge(class(m.status), m.status.as_str())) " " (m.check) ": " (m.message) }
                }
            } }
            "\n"
        }
        @if !view.notes.is_empty() {
            section { h2 { "Notes" } ul { @for n in view.notes { li { (n) } } } }
            "\n"
        }
    };
    document(&format!("ncugate: {word}"), header, main, view.version)
}

/// One kernel's (or the whole run's) section: its checks, their charts, its findings.
fn kernel(view: &View<'_>, scope: &Scope, images: &HashMap<usize, String>) -> Markup {
    let checks: Vec<&Check<'_>> = view.checks_of(scope).collect();
    let findings: Vec<&Finding<'_>> = view.findings_of(scope).collect();
    html! {
        section.kernel {
            h2 { (badge(class(scope.status), scope.status.as_str())) " " code { (scope.name()) } }
            "\n"
            table {
                thead { tr { th { "check" } th { "baseline μ±σ" } th { "current" } th { "change" } th { "verdict" } th { "why" } } }
                tbody {
                    "\n"
                    @for c in &checks {
                        tr class=(class(c.status)) {
                            td { @if c.rule.is_some() { code { (c.name) } } @else { (c.name) } }
                            td { (c.baseline) } td { (c.current) } td { (c.change) } td { (c.verdict) }
                            td { @if c.rule.is_none() || c.needs_attention() {
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
                @for c in &checks {
                    @if let Some(name) = c.rule_index.and_then(|i| images.get(&i)) {
                        figure {
                            img src=(name) alt={ (c.name) ": baseline vs current" } width="520" height="130";
                            figcaption { code { (c.name) } (c.allowed) }
                        }
                    }
                }
            }
            "\n"
            @if !findings.is_empty() {
                h3 { "New ncu findings" }
                ul.findings {
                    @for f in &findings {
                        li { strong { (f.rule) } " " (f.detail) ": " (f.description) }
                    }
                }
            }
        }
        "\n"
    }
}
