//! Reading ncu exports: raw pages (metrics per launch) and details pages
//! (rule results), from CSV files or `.ncu-rep` reports (read natively, or
//! converted by `ncu`). [`ingest`] reads each input file of a check once.

pub(crate) mod columns;
pub(crate) mod details;
pub(crate) mod details_metrics;
pub(crate) mod details_names;
pub(crate) mod ingest;
pub mod ncu_rep;
pub(crate) mod number;
pub(crate) mod nvbench;
pub(crate) mod nvtx;
pub(crate) mod page;
pub mod raw;
pub mod sass;
pub mod scan;
pub(crate) mod summary;

use crate::error::{Error, Result};
use crate::model::{Findings, KernelKeyMode, Run};
use crate::runner::process::ProcessRunner;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// The first bytes of an Nsight Compute report file.
pub(crate) const NCU_REP_MAGIC: &[u8] = b"NVR\0";

/// Reads one run from a CSV export, or from a `.ncu-rep` report (natively
/// first, via `ncu` for what the native reader does not know).
pub(crate) fn read_run(
    path: &Path,
    metrics: &[String],
    key_mode: KernelKeyMode,
    import: NcuImport,
) -> Result<Run> {
    ingest::input(path, false, metrics, key_mode, import).map(|input| input.run)
}

/// SHA-256 of bytes in memory, hex.
pub fn sha256_bytes(data: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    crate::format::hex(&Sha256::digest(data))
}

/// Reads the findings of a details-page CSV, or of a `.ncu-rep` report
/// (natively first, as [`read_run`]; via `ncu` for what the native reader
/// does not know). A check reads them through [`ingest`], with its runs;
/// this reads a file on its own (standard input, or a raw page given as a
/// details page, to say why it is not one).
pub(crate) fn read_findings(
    path: &Path,
    key_mode: KernelKeyMode,
    import: NcuImport,
) -> Result<Findings> {
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
pub(crate) fn sha256_file(path: &Path) -> Result<String> {
    sha256_of(crate::error::FileKind::Export, path)
}

/// SHA-256 of a whole file of `kind`, hex (a read error names the kind).
pub(crate) fn sha256_of(kind: crate::error::FileKind, path: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    let mut file =
        crate::io::bounded::open(path).map_err(|source| Error::read(kind, path, source))?;
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
    Ok(n == 4 && (magic == NCU_REP_MAGIC || ncu_rep::zstd::is_compressed(&magic)))
}

/// How `.ncu-rep` inputs become CSV through [`crate::runner::ncu::import`]:
/// which ncu (`[profile] ncu`, `--ncu`, `NCUGATE_NCU`, else `ncu` from PATH)
/// and what runs it.
#[derive(Clone, Copy)]
pub(crate) struct NcuImport<'a> {
    pub(crate) ncu: &'a str,
    pub(crate) runner: &'a dyn ProcessRunner,
    /// Read a version-7 report natively ([`ncu_rep`]); `false` with `--import-with-ncu`.
    pub(crate) native: bool,
}
