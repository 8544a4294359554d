//! Reporters: a [`Document`] — one check's [`Report`], or a suite's
//! workloads — rendered for a terminal, a CI summary page (Markdown), a
//! test-report view (JUnit XML), GitHub Actions, a static HTML page and
//! machines (JSON). Each workload is read through its one [`View`], whose
//! sections decide every word, title and order shown; each format is one
//! [`Reporter`] over the whole document, the same for a single check (a
//! document of one workload, without the suite chrome) and a suite; and
//! [`write_document`] is the one path by which any of them reaches a file or
//! a stream (files atomically, in a fixed order).

pub(crate) mod chart;
pub(crate) mod columns;
pub(crate) mod document;
pub mod github;
pub(crate) mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub(crate) mod printable;
pub mod sign;
pub(crate) mod terminal;
pub(crate) mod view;

#[cfg(test)]
pub(crate) mod tests;

pub(crate) use document::Document;
pub use view::{View, scope_name};

use crate::error::{Error, Result};
use crate::io::atomic::FileSet;
use crate::verdict::Report;
use std::path::{Path, PathBuf};

/// Where to write the file reports of one check.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    pub junit: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    pub json: Option<PathBuf>,
    /// GitHub Actions mode: annotations, step summary, step outputs.
    pub github: bool,
    /// Where GitHub mode's summary and step outputs go, as the runner named them.
    pub github_files: GitHubFiles,
    /// A static HTML report (index.html, style.css, charts/*.svg) in this folder.
    pub html: Option<PathBuf>,
    /// The key the JSON report is signed with (`NCUGATE_REPORT_KEY`), if any.
    pub key: Option<sign::ReportKey>,
}

/// The files a GitHub Actions runner names for a step, resolved once with
/// the config (from `$GITHUB_STEP_SUMMARY` and `$GITHUB_OUTPUT`): reporters
/// never read the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitHubFiles {
    /// The step summary, to which the Markdown report is appended.
    pub(crate) step_summary: Option<PathBuf>,
    /// The step outputs file, to which `result`, `regressions`, … are appended.
    pub(crate) output: Option<PathBuf>,
}

/// Files under a folder, by relative path, in the order to write them; made
/// one at a time as they are written (an HTML report can hold 10^4 charts).
pub(crate) type Files<'v> = Box<dyn Iterator<Item = (PathBuf, Vec<u8>)> + 'v>;

/// Writes the content of a file as it is made (a report of 10^5 kernels is
/// hundreds of MB in JSON or JUnit: never held whole).
pub(crate) type Stream<'v> = Box<dyn FnOnce(&mut dyn std::io::Write) -> std::io::Result<()> + 'v>;

/// What one reporter made of a view, before anything is written.
pub(crate) enum Rendered<'v> {
    /// The content of the file the user named, written as it is made.
    Stream(Stream<'v>),
    /// Files under the folder the user named.
    Folder(Files<'v>),
    /// GitHub mode's streams.
    GitHub(github::Streams),
}

impl Rendered<'_> {
    #[cfg(test)]
    /// A file format's whole content, in memory (for tests and for what
    /// is printed rather than written); `None` for a folder or GitHub's streams.
    pub(crate) fn text(self) -> Option<String> {
        match self {
            Rendered::Stream(write) => {
                let mut out = Vec::new();
                write(&mut out).ok()?;
                String::from_utf8(out).ok()
            }
            Rendered::Folder(_) | Rendered::GitHub(_) => None,
        }
    }
}

/// Where a reporter's output goes, from the [`Outputs`] the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Destination<'o> {
    /// A file, or the folder of a [`Rendered::Folder`].
    Path(&'o Path),
    /// Standard output, `$GITHUB_STEP_SUMMARY` and `$GITHUB_OUTPUT`.
    GitHub,
}

/// One output format: where it goes, and what it makes of a document.
pub(crate) trait Reporter {
    /// Where this format goes, or `None` when it was not asked for.
    fn destination<'o>(&self, outputs: &'o Outputs) -> Option<Destination<'o>>;
    /// The document in this format.
    fn render<'v>(&self, doc: &'v Document<'_>) -> Rendered<'v>;
    /// Whether its file is signed when there is a key: the JSON report,
    /// which `merge` and `history record` read back.
    fn signed(&self) -> bool {
        false
    }
}

/// `--junit`.
pub(crate) struct JUnit;
/// `--markdown`.
pub(crate) struct Markdown;
/// `--json`.
pub(crate) struct Json;
/// `--html DIR`.
pub(crate) struct Html;
/// GitHub Actions mode.
pub(crate) struct GitHub;

/// The file formats in the order their files are written (the HTML folder's
/// `index.html` and GitHub's outputs last: a step that waits for them finds the rest in place).
pub(crate) const REPORTERS: [&dyn Reporter; 5] = [&JUnit, &Markdown, &Json, &Html, &GitHub];

/// Writes every requested report of `doc`. The files are staged beside their
/// targets and renamed into place as one set ([`FileSet`]): a CI step that
/// picks them up never reads half a file, nor a mix of this run's files and
/// an earlier run's, even when the run is interrupted. GitHub mode's streams
/// (appended, not replaced) go after the set is in place.
pub(crate) fn write_document(doc: &Document<'_>, outputs: &Outputs) -> Result<()> {
    let mut set = FileSet::default();
    let mut streams = Vec::new();
    for reporter in REPORTERS {
        if let Some(destination) = reporter.destination(outputs) {
            let rendered = match (reporter.render(doc), &outputs.key) {
                (Rendered::Stream(write), Some(key)) if reporter.signed() => {
                    Rendered::Stream(Box::new(move |out| sign::write_signed(key, out, write)))
                }
                (rendered, _) => rendered,
            };
            streams.extend(stage(rendered, destination, &mut set)?);
        }
    }
    set.commit()?;
    for streams in streams {
        github::deliver(&streams, outputs).map_err(|source| Error::Write {
            path: "$GITHUB_STEP_SUMMARY / $GITHUB_OUTPUT".into(),
            source,
        })?;
    }
    Ok(())
}

/// Writes every requested file report of one check.
pub(crate) fn write_all(report: &Report, outputs: &Outputs) -> Result<()> {
    write_document(&Document::check(&printable::escaped(report)), outputs)
}

impl Outputs {
    /// The files these outputs replace (the HTML report by its index and
    /// stylesheet): what an interrupted run removes, so that an earlier
    /// run's reports cannot pass for its own.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = [&self.junit, &self.markdown, &self.json]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        if let Some(dir) = &self.html {
            files.extend([dir.join("index.html"), dir.join("style.css")]);
        }
        files
    }
}

/// `Err` when a folder on the way from `dir` to its file `name` is a
/// symbolic link: the file would be written through it, outside `dir` (a
/// checkout can hold a link `report/charts -> ~/elsewhere`, and the charts
/// went there). The file itself may be one: the rename replaces the link.
fn under(dir: &Path, name: &Path) -> Result<()> {
    let mut at = dir.to_path_buf();
    for part in name.parent().into_iter().flat_map(Path::components) {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(Error::LinkedFolder { path: at });
        }
    }
    Ok(())
}

/// Stages one rendered report where it goes, in `set`: the one place reports
/// reach the disk. GitHub mode's streams are returned, to deliver after the set.
fn stage(
    rendered: Rendered<'_>,
    destination: Destination<'_>,
    set: &mut FileSet,
) -> Result<Option<github::Streams>> {
    match (rendered, destination) {
        (Rendered::Stream(write), Destination::Path(path)) => set.add_with(path, write)?,
        (Rendered::Folder(files), Destination::Path(dir)) => {
            for (name, bytes) in files {
                under(dir, &name)?;
                set.add(&dir.join(name), &bytes)?;
            }
        }
        (Rendered::GitHub(streams), Destination::GitHub) => return Ok(Some(streams)),
        (_, destination) => {
            return Err(Error::Write {
                path: match destination {
                    Destination::Path(p) => p.to_path_buf(),
                    Destination::GitHub => "$GITHUB_STEP_SUMMARY".into(),
                },
                source: std::io::Error::other("a report format and its destination do not match"),
            });
        }
    }
    Ok(None)
}

impl Reporter for JUnit {
    fn destination<'o>(&self, outputs: &'o Outputs) -> Option<Destination<'o>> {
        outputs.junit.as_deref().map(Destination::Path)
    }
    fn render<'v>(&self, doc: &'v Document<'_>) -> Rendered<'v> {
        Rendered::Stream(Box::new(|out| junit::write_document(doc, out)))
    }
}

impl Reporter for Markdown {
    fn destination<'o>(&self, outputs: &'o Outputs) -> Option<Destination<'o>> {
        outputs.markdown.as_deref().map(Destination::Path)
    }
    fn render<'v>(&self, doc: &'v Document<'_>) -> Rendered<'v> {
        Rendered::Stream(Box::new(|out| markdown::write_document(doc, out)))
    }
}

impl Reporter for Json {
    fn destination<'o>(&self, outputs: &'o Outputs) -> Option<Destination<'o>> {
        outputs.json.as_deref().map(Destination::Path)
    }
    fn render<'v>(&self, doc: &'v Document<'_>) -> Rendered<'v> {
        Rendered::Stream(Box::new(|out| doc.model.write_json(out)))
    }
    fn signed(&self) -> bool {
        true
    }
}

impl Reporter for Html {
    fn destination<'o>(&self, outputs: &'o Outputs) -> Option<Destination<'o>> {
        outputs.html.as_deref().map(Destination::Path)
    }
    fn render<'v>(&self, doc: &'v Document<'_>) -> Rendered<'v> {
        Rendered::Folder(html::document(doc))
    }
}

impl Reporter for GitHub {
    fn destination<'o>(&self, outputs: &'o Outputs) -> Option<Destination<'o>> {
        outputs.github.then_some(Destination::GitHub)
    }
    fn render<'v>(&self, doc: &'v Document<'_>) -> Rendered<'v> {
        Rendered::GitHub(github::document(doc))
    }
}
