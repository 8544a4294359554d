//! Reporters: the [`Report`] rendered for a terminal, a CI summary page
//! (Markdown), a test-report view (JUnit XML) and machines (JSON). Each one
//! only reads the report; none of them decides anything.

pub mod chart;
/// Value formatting lives in [`crate::format`](mod@crate::format), a leaf every gate can use.
pub use crate::format as fmt;
pub mod github;
pub mod html;
pub mod json;
pub mod junit;
pub mod layout;
pub mod markdown;
pub mod terminal;

use crate::baseline::write_atomic;
use crate::error::Result;
use crate::verdict::Report;
use std::path::Path;

/// Where to write the file reports of one check.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    pub junit: Option<std::path::PathBuf>,
    pub markdown: Option<std::path::PathBuf>,
    pub json: Option<std::path::PathBuf>,
    /// GitHub Actions mode: annotations, step summary, step outputs.
    pub github: bool,
    /// A static HTML report (index.html, style.css, charts/*.svg) in this folder.
    pub html: Option<std::path::PathBuf>,
}

/// Writes every requested file report (atomically, so a CI step that picks
/// them up never reads half a file).
pub fn write_all(report: &Report, outputs: &Outputs) -> Result<()> {
    type Render = fn(&Report) -> String;
    let targets: [(&Option<std::path::PathBuf>, Render); 3] = [
        (&outputs.junit, junit::render),
        (&outputs.markdown, markdown::render),
        (&outputs.json, json::render),
    ];
    for (path, render) in targets {
        if let Some(path) = path {
            write_atomic(Path::new(path), render(report).as_bytes())?;
        }
    }
    if let Some(dir) = &outputs.html {
        html::write(report, dir)?;
    }
    if outputs.github {
        github::emit(report, outputs).map_err(|source| crate::error::Error::Write {
            path: "$GITHUB_STEP_SUMMARY / $GITHUB_OUTPUT".into(),
            source,
        })?;
    }
    Ok(())
}

/// Kernel key for display: the key, or `(total)` for the whole run.
pub fn scope_name(kernel: Option<&str>) -> &str {
    kernel.unwrap_or("(total)")
}
