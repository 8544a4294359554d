//! Each input file read once: its run (an `--input`), its rule results (a
//! `--details`), its kernels' code (a report read natively) and its digest
//! all come from one open of the file.
//!
//! A file's kind is told from what is read anyway: a report by its name
//! or its first bytes (`NVR\0`, or a Zstandard stream: a `.ncu-repz`), a raw page by its first line, streamed on
//! from there; anything else (a details page, a summary, a raw page after a
//! preamble) read whole once, for its run and its rule results alike. A
//! report is read whole and decoded once: its run, code and rule results
//! come from the one decoding.
//!
//! The rule results are decoded, not yet folded: they are keyed by kernel
//! when the check knows its key mode (after it picked the baseline), and
//! what went wrong reading them is the check's error only then, where it
//! always was ([`Details::findings`]). What `ncu --import` reads (a report
//! the native reader does not know, or every report with
//! `--import-with-ncu`) is imported when it always was too: the run's page
//! with the run, the details page with the findings, in the order recorded
//! runs replay them.

use super::details::{self, RuleRows};
use super::ncu_rep::{self, Refusal, code::LaunchCode};
use super::{NcuImport, page, raw, sha256_bytes, sha256_file};
use crate::error::{Error, FileKind, Result};
use crate::io::bounded::Bounded;
use crate::model::{ExportPage, Findings, KernelKeyMode, Run};
use crate::runner::ncu::Page;
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::Path;

/// The longest first line looked at for a raw page's header.
const FIRST_LINE: u64 = 1 << 20;

/// An `--input` file read once.
pub(crate) struct Input {
    pub(crate) run: Run,
    /// Every kernel launch's code, for a report read natively (`None` for a
    /// CSV, a report ncu converted, or one whose modules are unreadable).
    pub(crate) code: Option<Vec<LaunchCode>>,
    /// Its rule results, when it is a `--details` file too.
    pub(crate) details: Option<Details>,
}

/// A `--details` file's rule results, as far as its one read got.
pub(crate) enum Details {
    /// Decoded, with the file's digest; or why they could not be.
    Decoded(Result<(RuleRows, String)>),
    /// For `ncu --import --page details` when the findings are read: the
    /// native reader's refusal to give if ncu fails too, and the file's
    /// digest when its read already made it.
    Ncu {
        refusal: Option<Error>,
        sha256: Option<String>,
    },
    /// Read on its own when the findings are read: standard input, or a
    /// file whose run streamed as a raw page (which a details page is not;
    /// that read says why).
    Apart,
}

impl Details {
    /// The findings keyed by `key_mode`, and the file's digest.
    pub(crate) fn findings(
        self,
        path: &Path,
        key_mode: KernelKeyMode,
        import: NcuImport,
    ) -> Result<(Findings, String)> {
        match self {
            Details::Decoded(read) => read.map(|(rows, sha256)| (rows.findings(key_mode), sha256)),
            Details::Ncu { refusal, sha256 } => {
                let findings = crate::runner::ncu::import(
                    import.ncu,
                    import.runner,
                    path,
                    Page::Details,
                    |out| details::read_details(path, out, key_mode),
                )
                .map_err(|e| refusal.unwrap_or(e))?;
                let sha256 = match sha256 {
                    Some(s) => s,
                    None => sha256_file(path)?,
                };
                Ok((findings, sha256))
            }
            // A named pipe streamed as the run is gone: opening it again
            // would wait for a writer that never comes.
            Details::Apart if path != Path::new("-") && !crate::io::bounded::can_reopen(path) => {
                Err(Error::read(
                    FileKind::Findings,
                    path,
                    std::io::Error::other(
                        "it can be read only once (a named pipe or process substitution), and it was read as the run, a raw page, which holds no rule results",
                    ),
                ))
            }
            Details::Apart => Ok((
                super::read_findings(path, key_mode, import)?,
                sha256_file(path)?,
            )),
        }
    }
}

/// Reads the `--input` at `path` (`-`: standard input) into a run, keeping a
/// report's code; with `also_details`, its rule results too.
pub(crate) fn input(
    path: &Path,
    also_details: bool,
    metrics: &[String],
    key_mode: KernelKeyMode,
    import: NcuImport,
) -> Result<Input> {
    let reading = Reading {
        path,
        kind: FileKind::Export,
        metrics,
        key_mode,
        import,
    };
    if path == Path::new("-") {
        let (run, details) = reading.csv(None, Bounded::new(std::io::stdin()), also_details)?;
        return Ok(Input {
            run,
            code: None,
            details,
        });
    }
    let read = |source| Error::read(FileKind::Export, path, source);
    match reading.open()? {
        Opened::Report(data) => reading.report(data, also_details),
        Opened::Text(head, rest) => {
            let (run, details) = reading.csv(Some(head), rest, also_details)?;
            Ok(Input {
                run,
                code: None,
                details,
            })
        }
        Opened::Failed(source) => Err(read(source)),
    }
}

/// Reads the `--details` file at `path` that is no `--input`: its rule
/// results, or why not, for [`Details::findings`].
pub(crate) fn details(path: &Path, import: NcuImport) -> Details {
    if path == Path::new("-") {
        return Details::Apart;
    }
    // ncu reads it first, and only then is it hashed, as it always was.
    if !import.native && has_report_name(path) {
        return Details::Ncu {
            refusal: None,
            sha256: None,
        };
    }
    let reading = Reading {
        path,
        kind: FileKind::Findings,
        metrics: &[],
        key_mode: KernelKeyMode::default(),
        import,
    };
    let opened = match reading.open() {
        Ok(opened) => opened,
        Err(e) => return Details::Decoded(Err(e)),
    };
    match opened {
        Opened::Report(data) => reading.report_details(data),
        Opened::Text(mut head, mut rest) => Details::Decoded(
            rest.read_to_end(&mut head)
                .map_err(|source| Error::read(FileKind::Export, path, source))
                .and_then(|_| decoded(path, &head)),
        ),
        // Told a CSV from a report by its first bytes, as the run's read does.
        Opened::Failed(source) => {
            Details::Decoded(Err(Error::read(FileKind::Export, path, source)))
        }
    }
}

/// A file opened once and told apart.
enum Opened {
    /// A report: its bytes, or `None` when ncu reads it (`--import-with-ncu`)
    /// and only its digest is wanted, made as it is read.
    Report(ReportBytes),
    /// Text: its first line (up to 1 MiB), and the rest to read.
    Text(Vec<u8>, BufReader<Bounded<File>>),
    /// Opening or reading it failed where its kind was told.
    Failed(std::io::Error),
}

/// A report's bytes, or its digest alone.
enum ReportBytes {
    Data(std::result::Result<Vec<u8>, std::io::Error>),
    Digest(Result<String>),
}

/// What one read of a file needs.
struct Reading<'a> {
    path: &'a Path,
    /// What a report's read error names the file as (an export, or a
    /// findings file).
    kind: FileKind,
    metrics: &'a [String],
    key_mode: KernelKeyMode,
    import: NcuImport<'a>,
}

impl Reading<'_> {
    /// Opens the file once: a report by its name is read whole (natively)
    /// or only hashed (by ncu); anything else is a report if its first
    /// bytes say so, and text otherwise.
    fn open(&self) -> Result<Opened> {
        let path = self.path;
        if has_report_name(path) {
            return Ok(Opened::Report(if self.import.native {
                ReportBytes::Data(crate::io::bounded::read_io(path))
            } else {
                ReportBytes::Digest(sha256_file(path))
            }));
        }
        let file = match crate::io::bounded::open(path) {
            Ok(f) => f,
            Err(source) => return Ok(Opened::Failed(source)),
        };
        let mut rest = BufReader::with_capacity(1 << 16, file);
        let mut head = Vec::new();
        if let Err(source) = (&mut rest).take(FIRST_LINE).read_until(b'\n', &mut head) {
            return Ok(Opened::Failed(source));
        }
        // `NVR\0` holds no line end, nor does a Zstandard magic number: a
        // report's first line starts with all of it.
        if !head.starts_with(super::NCU_REP_MAGIC) && !ncu_rep::zstd::is_compressed(&head) {
            return Ok(Opened::Text(head, rest));
        }
        let mut data = head;
        Ok(Opened::Report(if self.import.native {
            ReportBytes::Data(rest.read_to_end(&mut data).map(|_| data))
        } else {
            ReportBytes::Digest(hashed(path, data, rest))
        }))
    }

    /// An `--input` report: natively first; a report the native reader
    /// does not know goes to ncu, and if ncu cannot read it either, the
    /// native reader says why.
    fn report(&self, bytes: ReportBytes, also_details: bool) -> Result<Input> {
        let path = self.path;
        let (data, decoded) = match bytes {
            ReportBytes::Digest(sha256) => {
                let sha256 = sha256?;
                let run = self.ncu_run(sha256.clone(), None)?;
                let details = also_details.then_some(Details::Ncu {
                    refusal: None,
                    sha256: Some(sha256),
                });
                return Ok(Input {
                    run,
                    code: None,
                    details,
                });
            }
            ReportBytes::Data(data) => {
                let data = data
                    .map_err(|source| Refusal::Corrupt(Error::read(self.kind, path, source)))
                    .map_err(Refusal::into_error)?;
                let decoded = ncu_rep::decode(path, &data);
                (data, decoded)
            }
        };
        let sha256 = sha256_bytes(&data);
        drop(data);
        let run = match &decoded {
            Ok(report) => {
                ncu_rep::run_of(path, report, sha256.clone(), self.metrics, self.key_mode)
            }
            Err(failure) => Err(ncu_rep::refusal(path, failure.clone())),
        };
        let (run, code) = match run {
            Ok(run) => (
                run,
                decoded.as_ref().ok().and_then(ncu_rep::code::of_report),
            ),
            Err(Refusal::Corrupt(e)) => return Err(e),
            Err(Refusal::Unsupported(e)) => (self.ncu_run(sha256.clone(), Some(e))?, None),
        };
        let details = also_details.then(|| report_details(self.path, decoded, sha256));
        Ok(Input { run, code, details })
    }

    /// A `--details` report that is no `--input`: its rule results.
    fn report_details(&self, bytes: ReportBytes) -> Details {
        let data = match bytes {
            ReportBytes::Digest(sha256) => {
                return match sha256 {
                    Ok(sha256) => Details::Ncu {
                        refusal: None,
                        sha256: Some(sha256),
                    },
                    Err(e) => Details::Decoded(Err(e)),
                };
            }
            ReportBytes::Data(Ok(data)) => data,
            ReportBytes::Data(Err(source)) => {
                return Details::Decoded(Err(Error::read(self.kind, self.path, source)));
            }
        };
        let sha256 = sha256_bytes(&data);
        report_details(self.path, ncu_rep::decode(self.path, &data), sha256)
    }

    /// The run of a report through `ncu --import --page raw`, with the
    /// report's digest; `refusal`: the native reader's reason, given if ncu
    /// fails too.
    fn ncu_run(&self, sha256: String, refusal: Option<Error>) -> Result<Run> {
        let (path, import) = (self.path, self.import);
        let mut run =
            crate::runner::ncu::import(import.ncu, import.runner, path, Page::Raw, |out| {
                raw::read_raw(path, out, self.metrics, self.key_mode)
            })
            .map_err(|e| refusal.unwrap_or(e))?;
        run.sha256 = sha256;
        Ok(run)
    }

    /// A CSV export's run (its first line `head`, if read, then `rest`),
    /// and with `also_details` its rule results. A raw page streams from
    /// the file or standard input (after any preamble); anything else (a
    /// details page, a summary) is read whole, once for both.
    fn csv(
        &self,
        head: Option<Vec<u8>>,
        rest: impl Read,
        also_details: bool,
    ) -> Result<(Run, Option<Details>)> {
        let (path, metrics, key_mode) = (self.path, self.metrics, self.key_mode);
        let apart = also_details.then_some(Details::Apart);
        let head = head.unwrap_or_default();
        if super::nvbench::looks_like(&head) {
            let (mut data, mut rest) = (head, rest);
            rest.read_to_end(&mut data)
                .map_err(|source| Error::read(FileKind::Export, path, source))?;
            let run = super::nvbench::read_run(path, &data, metrics, key_mode)?;
            return Ok((run, apart));
        }
        if starts_with_raw_header(&head) {
            let run = raw::read_raw(path, Cursor::new(head).chain(rest), metrics, key_mode)?;
            return Ok((run, apart));
        }
        let data = match page::raw_or_whole(path, Cursor::new(head).chain(rest))? {
            page::Stream::Raw(mut stream) => {
                let mut run = raw::read_raw(path, &mut stream, metrics, key_mode)?;
                run.sha256 = stream.sha256_hex();
                return Ok((run, apart));
            }
            page::Stream::Whole(data) => data,
        };
        let run = whole_run(path, &data, metrics, key_mode)?;
        // Standard input is read once: its rule results are read on their own.
        let details = match also_details && path != Path::new("-") {
            true => Some(Details::Decoded(decoded(path, &data))),
            false => apart,
        };
        Ok((run, details))
    }
}

/// The rule results of the report at `path` as [`ncu_rep::decode`] left
/// it, with the file's digest.
fn report_details(
    path: &Path,
    decoded: std::result::Result<ncu_rep::container::Report, ncu_rep::container::Failure>,
    sha256: String,
) -> Details {
    let report = match decoded {
        Ok(report) => report,
        Err(failure) => {
            return match ncu_rep::refusal(path, failure) {
                Refusal::Corrupt(e) => Details::Decoded(Err(e)),
                Refusal::Unsupported(e) => Details::Ncu {
                    refusal: Some(e),
                    sha256: Some(sha256),
                },
            };
        }
    };
    Details::Decoded(Ok((ncu_rep::rule_rows(&report), sha256)))
}

/// True for a file named as a report ([`ncu_rep::REPORT_EXTENSIONS`]).
pub(crate) fn has_report_name(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| ncu_rep::REPORT_EXTENSIONS.iter().any(|x| e == *x))
}

/// True when `first` (a file's first line) is a raw page's header: the
/// common case, streamed.
fn starts_with_raw_header(first: &[u8]) -> bool {
    first.starts_with(b"\"ID\"")
        && first.windows(13).any(|w| w == b"\"Kernel Name\"")
        && !first.windows(13).any(|w| w == b"\"Metric Name\"")
}

/// The SHA-256 of a file whose first bytes `head` are read, reading the rest.
fn hashed(path: &Path, head: Vec<u8>, mut rest: impl Read) -> Result<String> {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(&head);
    let mut buf = vec![0; 1 << 16];
    loop {
        let n = rest
            .read(&mut buf)
            .map_err(|source| Error::read(FileKind::Export, path, source))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(crate::format::hex(&hasher.finalize()))
}

/// The run of a whole CSV export that is not a raw page streamed: a
/// per-kernel summary, a details page, or a raw page found past what
/// streaming looks through.
fn whole_run(path: &Path, data: &[u8], metrics: &[String], key_mode: KernelKeyMode) -> Result<Run> {
    if let Some(at) = page::summary_start(data) {
        let csv = super::summary::as_details(path, &data[at..])?;
        let mut run = super::details_metrics::read_details_run(
            path,
            &csv,
            sha256_bytes(data),
            metrics,
            key_mode,
        )?;
        run.page = ExportPage::Summary;
        return Ok(run);
    }
    let located = page::locate(path, data)?;
    match located.page {
        ExportPage::Raw => raw::read_raw(path, located.csv, metrics, key_mode).map(|mut run| {
            run.sha256 = sha256_bytes(data);
            run
        }),
        // A CSV is never told to be nvbench's JSON.
        ExportPage::Nvbench => Err(Error::export(path, crate::error::ExportError::NotRawPage)),
        ExportPage::Details | ExportPage::Summary => {
            page::check_complete(path, data)?;
            super::details_metrics::read_details_run(
                path,
                located.csv,
                sha256_bytes(data),
                metrics,
                key_mode,
            )
        }
    }
}

/// The rule rows of a whole CSV export, and its digest.
fn decoded(path: &Path, data: &[u8]) -> Result<(RuleRows, String)> {
    page::check_complete(path, data)?;
    let located = page::locate(path, data)?;
    let rows = details::decode_details(path, located.csv)?;
    Ok((rows, sha256_bytes(data)))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::runner::replay::ReplayRunner;
    use std::os::unix::ffi::OsStrExt;
    use std::path::PathBuf;
    use std::time::Duration;

    /// A file that can be read only once: a named pipe that `data` is
    /// written into once. A second open would wait for a writer that never
    /// comes.
    fn read_once(dir: &Path, name: &str, data: Vec<u8>) -> PathBuf {
        let path = dir.join(name);
        let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).expect("path");
        // SAFETY: `c_path` is a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
        let writer = path.clone();
        std::thread::spawn(move || {
            let pipe = std::fs::OpenOptions::new().write(true).open(&writer);
            if let Ok(mut pipe) = pipe {
                let _ = std::io::Write::write_all(&mut pipe, &data);
            }
        });
        path
    }

    /// `ingest::input` of `path` with its rule results, or a failure when it
    /// does not end (it opened the file twice).
    fn ingested(path: &Path, metrics: &[String]) -> Input {
        let (path, metrics) = (path.to_path_buf(), metrics.to_vec());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runner = ReplayRunner::new(std::env::temp_dir(), Vec::new());
            let import = NcuImport {
                ncu: "ncu",
                runner: &runner,
                native: true,
            };
            let _ = tx.send(input(
                &path,
                true,
                &metrics,
                KernelKeyMode::Demangled,
                import,
            ));
        });
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(read) => read.expect("the file reads"),
            Err(_) => panic!("the file was opened more than once"),
        }
    }

    fn rule_results(details: Option<Details>) -> (Findings, String) {
        match details {
            Some(Details::Decoded(Ok((rows, sha256)))) => {
                (rows.findings(KernelKeyMode::Demangled), sha256)
            }
            _ => panic!("rule results not decoded with the run"),
        }
    }

    /// A report (told by its first bytes) and a details page each give
    /// their run and their rule results from one open, the same as from a
    /// file read at leisure; a raw page streams from its one open.
    #[test]
    fn an_input_is_opened_once_for_its_run_and_its_rule_results() {
        let dir = tempfile::tempdir().expect("tmp");
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/h200");
        let metrics: Vec<String> = ["gpu__time_duration.sum", "dram__bytes.sum"]
            .map(String::from)
            .to_vec();
        for (file, rules) in [
            ("graph_app.base.fast.run1.ncu-rep", false),
            ("graph_app.base.full.details.csv", true),
            ("graph_app.base.full.raw.csv", false),
        ] {
            let regular = fixtures.join(file);
            let data = std::fs::read(&regular).expect("fixture");
            let once = read_once(dir.path(), &file.replace('.', "_"), data);
            let (a, b) = (ingested(&once, &metrics), ingested(&regular, &metrics));
            let mut run = a.run;
            run.source.clone_from(&b.run.source);
            assert_eq!(run, b.run, "{file}");
            assert_eq!(a.code, b.code, "{file}");
            if file.ends_with(".raw.csv") {
                assert!(matches!(a.details, Some(Details::Apart)), "{file}");
                continue;
            }
            let (findings, sha256) = rule_results(a.details);
            assert_eq!(
                (findings.clone(), sha256),
                rule_results(b.details),
                "{file}"
            );
            assert_eq!(!findings.is_empty(), rules, "{file}");
        }
    }
}
