//! Reading ncu exports: raw pages (metrics per launch) and details pages
//! (rule results), from CSV files or `.ncu-rep` reports converted by `ncu`.

pub mod columns;
pub mod details;
pub mod details_metrics;
pub mod details_names;
pub mod ncu_rep;
pub mod number;
pub mod nvtx;
pub mod page;
pub mod raw;
pub mod sass;
pub mod scan;
pub mod summary;

use crate::error::{Error, Result};
use crate::model::{ExportPage, Findings, KernelKeyMode, Run};
use crate::runner::process::ProcessRunner;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// The first bytes of an Nsight Compute report file.
const NCU_REP_MAGIC: &[u8] = b"NVR\0";

/// Reads one run from a raw-page CSV, or from a `.ncu-rep` report via `ncu`.
pub fn read_run(
    path: &Path,
    metrics: &[String],
    key_mode: KernelKeyMode,
    import: NcuImport,
) -> Result<Run> {
    read_input(path, metrics, key_mode, import).map(|input| input.run)
}

/// One input read once: its run and, for a report read natively, its
/// kernels' code from the same read.
pub struct Input {
    pub run: Run,
    /// Every kernel launch's code, for a report read natively (`None` for a
    /// CSV, a report ncu converted, or one whose modules are unreadable).
    pub code: Option<Vec<ncu_rep::code::LaunchCode>>,
}

/// [`read_run`], keeping a report's code ([`Input::code`]).
pub fn read_input(
    path: &Path,
    metrics: &[String],
    key_mode: KernelKeyMode,
    import: NcuImport,
) -> Result<Input> {
    if path != Path::new("-") && is_report(path)? {
        // Natively first; a report the native reader does not know goes to
        // ncu, and if ncu cannot read it either, the native reader says why.
        let native = match import
            .native
            .then(|| ncu_rep::read_run_and_code(path, metrics, key_mode))
        {
            Some(Ok((run, code))) => return Ok(Input { run, code }),
            Some(Err(ncu_rep::Refusal::Corrupt(e))) => return Err(e),
            Some(Err(ncu_rep::Refusal::Unsupported(e))) => Some(e),
            None => None,
        };
        let sha256 = sha256_file(path)?;
        let mut run = crate::runner::ncu::import(
            import.ncu,
            import.runner,
            path,
            crate::runner::ncu::Page::Raw,
            |out| raw::read_raw(path, out, metrics, key_mode),
        )
        .map_err(|e| native.unwrap_or(e))?;
        run.sha256 = sha256;
        return Ok(Input { run, code: None });
    }
    read_csv(path, metrics, key_mode).map(|run| Input { run, code: None })
}

/// Reads one run from a CSV export (or standard input, `-`).
fn read_csv(path: &Path, metrics: &[String], key_mode: KernelKeyMode) -> Result<Run> {
    // A CSV: a raw page streams from the file or standard input (after any
    // preamble); anything else (a details page, a summary) is read whole first.
    if path != Path::new("-") && starts_with_raw_header(path)? {
        let file = File::open(path)
            .map_err(|source| Error::read(crate::error::FileKind::Export, path, source))?;
        return raw::read_raw(path, file, metrics, key_mode);
    }
    let data = if path == Path::new("-") {
        streamed(path, std::io::stdin(), metrics, key_mode)?
    } else {
        let file = File::open(path)
            .map_err(|source| Error::read(crate::error::FileKind::Export, path, source))?;
        streamed(path, file, metrics, key_mode)?
    };
    let data = match data {
        Ok(run) => return Ok(run),
        Err(data) => data,
    };
    if let Some(at) = page::summary_start(&data) {
        let csv = summary::as_details(path, &data[at..])?;
        let mut run =
            details_metrics::read_details_run(path, &csv, sha256_bytes(&data), metrics, key_mode)?;
        run.page = ExportPage::Summary;
        return Ok(run);
    }
    let located = page::locate(path, &data)?;
    match located.page {
        ExportPage::Raw => raw::read_raw(path, located.csv, metrics, key_mode).map(|mut run| {
            run.sha256 = sha256_bytes(&data);
            run
        }),
        ExportPage::Details | ExportPage::Summary => {
            page::check_complete(path, &data)?;
            details_metrics::read_details_run(
                path,
                located.csv,
                sha256_bytes(&data),
                metrics,
                key_mode,
            )
        }
    }
}

/// A raw page after a preamble, read a row at a time (`Ok(run)`), or the
/// whole input when it is not one (`Err(data)`, for the other readers).
fn streamed(
    path: &Path,
    input: impl Read,
    metrics: &[String],
    key_mode: KernelKeyMode,
) -> Result<std::result::Result<Run, Vec<u8>>> {
    match page::raw_or_whole(path, input)? {
        page::Stream::Whole(data) => Ok(Err(data)),
        page::Stream::Raw(mut stream) => {
            let mut run = raw::read_raw(path, &mut stream, metrics, key_mode)?;
            run.sha256 = stream.sha256_hex();
            Ok(Ok(run))
        }
    }
}

/// True when the file's first line is a raw-page header (the common case, streamed).
fn starts_with_raw_header(path: &Path) -> Result<bool> {
    use std::io::BufRead;
    let file = File::open(path)
        .map_err(|source| Error::read(crate::error::FileKind::Export, path, source))?;
    let mut first = Vec::new();
    std::io::BufReader::new(file)
        .take(1 << 20)
        .read_until(b'\n', &mut first)
        .map_err(|source| Error::read(crate::error::FileKind::Export, path, source))?;
    Ok(first.starts_with(b"\"ID\"")
        && first.windows(13).any(|w| w == b"\"Kernel Name\"")
        && !first.windows(13).any(|w| w == b"\"Metric Name\""))
}

/// SHA-256 of bytes in memory, hex.
pub fn sha256_bytes(data: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    crate::format::hex(&Sha256::digest(data))
}

/// Reads the findings of a details-page CSV, or of a `.ncu-rep` report
/// (natively first, as [`read_run`]; via `ncu` for what the native reader
/// does not know).
pub fn read_findings(path: &Path, key_mode: KernelKeyMode, import: NcuImport) -> Result<Findings> {
    if path != Path::new("-") && is_report(path)? {
        let native = match import
            .native
            .then(|| ncu_rep::read_findings(path, key_mode))
        {
            Some(Ok(findings)) => return Ok(findings),
            Some(Err(ncu_rep::Refusal::Corrupt(e))) => return Err(e),
            Some(Err(ncu_rep::Refusal::Unsupported(e))) => Some(e),
            None => None,
        };
        return crate::runner::ncu::import(
            import.ncu,
            import.runner,
            path,
            crate::runner::ncu::Page::Details,
            |out| details::read_details(path, out, key_mode),
        )
        .map_err(|e| native.unwrap_or(e));
    }
    let data = page::read_all(path)?;
    page::check_complete(path, &data)?;
    let located = page::locate(path, &data)?;
    details::read_details(path, located.csv, key_mode)
}

/// SHA-256 of a whole export, hex.
pub fn sha256_file(path: &Path) -> Result<String> {
    sha256_of(crate::error::FileKind::Export, path)
}

/// SHA-256 of a whole file of `kind`, hex (a read error names the kind).
pub fn sha256_of(kind: crate::error::FileKind, path: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    let mut file = File::open(path).map_err(|source| Error::read(kind, path, source))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0; 1 << 16];
    loop {
        let n = file
            .read(&mut buf)
            .map_err(|source| Error::read(kind, path, source))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(crate::format::hex(&hasher.finalize()))
}

fn is_report(path: &Path) -> Result<bool> {
    if path
        .extension()
        .is_some_and(|e| ncu_rep::REPORT_EXTENSIONS.iter().any(|x| e == *x))
    {
        return Ok(true);
    }
    let mut file = File::open(path)
        .map_err(|source| Error::read(crate::error::FileKind::Export, path, source))?;
    let mut magic = [0u8; 4];
    let n = file
        .read(&mut magic)
        .map_err(|source| Error::read(crate::error::FileKind::Export, path, source))?;
    Ok(n == 4 && magic == NCU_REP_MAGIC)
}

/// How `.ncu-rep` inputs become CSV through [`crate::runner::ncu::import`]:
/// which ncu (`[profile] ncu`, `--ncu`, `NCUGATE_NCU`, else `ncu` from PATH)
/// and what runs it.
#[derive(Clone, Copy)]
pub struct NcuImport<'a> {
    pub ncu: &'a str,
    pub runner: &'a dyn ProcessRunner,
    /// Read a version-7 report natively ([`ncu_rep`]); `false` with `--import-with-ncu`.
    pub native: bool,
}
