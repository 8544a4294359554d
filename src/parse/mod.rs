//! Reading ncu exports: raw pages (metrics per launch) and details pages
//! (rule results), from CSV files or `.ncu-rep` reports converted by `ncu`.

pub mod details;
pub mod number;
pub mod raw;
pub mod scan;

use crate::error::{Error, Result};
use crate::model::{Findings, KernelKeyMode, Run};
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

/// The first bytes of an Nsight Compute report file.
const NCU_REP_MAGIC: &[u8] = b"NVR\0";

/// Reads one run from a raw-page CSV, or from a `.ncu-rep` report via `ncu`.
pub fn read_run(path: &Path, metrics: &[String], key_mode: KernelKeyMode) -> Result<Run> {
    if is_report(path)? {
        let sha256 = sha256_file(path)?;
        let mut run = with_ncu_import(path, "raw", |out| {
            raw::read_raw(path, out, metrics, key_mode)
        })?;
        run.sha256 = sha256;
        return Ok(run);
    }
    let file = File::open(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    raw::read_raw(path, file, metrics, key_mode)
}

/// Reads the findings of a details-page CSV, or of a `.ncu-rep` report via `ncu`.
pub fn read_findings(path: &Path, key_mode: KernelKeyMode) -> Result<Findings> {
    if is_report(path)? {
        return with_ncu_import(path, "details", |out| {
            details::read_details(path, out, key_mode)
        });
    }
    let file = File::open(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    details::read_details(path, file, key_mode)
}

/// SHA-256 of a whole file, hex.
pub fn sha256_file(path: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    let mut file = File::open(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0; 1 << 16];
    loop {
        let n = file.read(&mut buf).map_err(|source| Error::Read {
            path: path.to_path_buf(),
            source,
        })?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

fn is_report(path: &Path) -> Result<bool> {
    if path.extension().is_some_and(|e| e == "ncu-rep") {
        return Ok(true);
    }
    let mut file = File::open(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut magic = [0u8; 4];
    let n = file.read(&mut magic).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(n == 4 && magic == NCU_REP_MAGIC)
}

/// The ncu executable: `$NCUGATE_NCU`, else `ncu` from PATH.
pub fn ncu_program() -> String {
    std::env::var("NCUGATE_NCU").unwrap_or_else(|_| "ncu".into())
}

/// Runs `ncu --import REPORT --csv --page PAGE --print-units base` and parses
/// its standard output as it streams.
fn with_ncu_import<T>(
    report: &Path,
    page: &str,
    parse: impl FnOnce(&mut dyn Read) -> Result<T>,
) -> Result<T> {
    let program = ncu_program();
    let args = [
        "--import",
        &report.to_string_lossy(),
        "--csv",
        "--page",
        page,
        "--print-units",
        "base",
    ];
    let command_line = format!("{program} {}", args.join(" "));
    let mut child = Command::new(&program)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::Tool {
            message: format!("{}: a .ncu-rep report needs ncu to convert it, and `{program}` could not be run: {e}", report.display()),
            hint: "install Nsight Compute or set NCUGATE_NCU to its ncu; or export on a machine with ncu: `ncu --import R.ncu-rep --csv --page raw --print-units base > raw.csv`".into(),
        })?;
    let mut stdout = child.stdout.take().ok_or_else(|| Error::Tool {
        message: "ncu's output could not be read".into(),
        hint: "run `ncugate doctor`".into(),
    })?;
    let parsed = parse(&mut stdout);
    drop(stdout);
    let output = child.wait_with_output().map_err(|e| Error::Tool {
        message: format!("{command_line}: {e}"),
        hint: "run `ncugate doctor`".into(),
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr
            .lines()
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        return Err(Error::Tool {
            message: format!("`{command_line}` failed ({}): {}", output.status, tail.join(" | ")),
            hint: "check that the report opens with this ncu version: `ncu --import R.ncu-rep --page raw`".into(),
        });
    }
    parsed
}
