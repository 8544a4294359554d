//! What this bench binary does when it re-runs itself as a timed child: read
//! the file one way, then print a summary line to stderr for the parent.

use crate::simd_rows::SimdCsvRows;
use ncugate::model::{KernelKeyMode, Run};
use ncugate::parse::raw::read_raw_rows;
use ncugate::parse::scan::RowScanner;
use ncugate::rules::Thresholds;
use std::fs::File;
use std::path::Path;

/// Set in a child's environment: which [`Child`] it runs, on which file.
pub const CHILD_VAR: &str = "NCUGATE_BENCH_CHILD";
pub const FILE_VAR: &str = "NCUGATE_BENCH_FILE";
/// The start of the line a child prints last (to stderr).
pub const SUMMARY: &str = "summary: ";

/// The ways a child reads the file.
#[derive(Clone, Copy, PartialEq)]
pub enum Child {
    /// `parse::raw::read_raw_rows` on `parse::scan::RowScanner` (what `baseline record` runs).
    RawScan,
    /// `parse::raw::read_raw_rows` on `simd-csv` (see `simd_rows.rs`).
    RawSimdCsv,
    /// Count the records with `csv::ByteRecord` (every field split).
    CsvLoop,
    /// Count the records with `simd_csv::ZeroCopyReader` (every separator found).
    SimdCsvLoop,
}

impl Child {
    pub const ALL: [Child; 4] = [
        Child::RawScan,
        Child::RawSimdCsv,
        Child::CsvLoop,
        Child::SimdCsvLoop,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Child::RawScan => "raw-scan",
            Child::RawSimdCsv => "raw-simd-csv",
            Child::CsvLoop => "csv-loop",
            Child::SimdCsvLoop => "simd-csv-loop",
        }
    }

    /// The table's label.
    pub fn what(self) -> &'static str {
        match self {
            Child::RawScan => "`read_raw` on `parse::scan` (library call)",
            Child::RawSimdCsv => "`read_raw` on `simd-csv` `ZeroCopyReader` (library call)",
            Child::CsvLoop => "`csv::ByteRecord` loop (reference)",
            Child::SimdCsvLoop => "`simd-csv` `ZeroCopyReader` loop (reference)",
        }
    }

    fn from_name(name: &str) -> Option<Child> {
        Child::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// In a child: runs it and returns true; in the parent: false.
pub fn run_if_child(thresholds: &str) -> bool {
    let Ok(name) = std::env::var(CHILD_VAR) else {
        return false;
    };
    let result = match (Child::from_name(&name), std::env::var(FILE_VAR)) {
        (Some(child), Ok(path)) => run(child, Path::new(&path), thresholds),
        _ => Err(format!("{CHILD_VAR}={name:?} / {FILE_VAR} not understood")),
    };
    match result {
        Ok(summary) => eprintln!("{SUMMARY}{summary}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
    true
}

fn run(child: Child, path: &Path, thresholds: &str) -> Result<String, String> {
    let failed = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let file = File::open(path).map_err(|e| failed(&e))?;
    match child {
        Child::RawScan | Child::RawSimdCsv => {
            let metrics = Thresholds::load(Some(Path::new(thresholds)))
                .map_err(|e| failed(&e))?
                .metrics();
            // The key mode only decides the key of each distinct name, computed once per name.
            let key_mode = KernelKeyMode::default();
            let run = if child == Child::RawScan {
                read_raw_rows(path, RowScanner::new(file), &metrics, key_mode)
            } else {
                read_raw_rows(path, SimdCsvRows::new(file), &metrics, key_mode)
            }
            .map_err(|e| failed(&e))?;
            Ok(summarize(&run))
        }
        Child::CsvLoop => {
            let mut reader = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(file);
            let mut record = csv::ByteRecord::new();
            let mut records = 0u64;
            while reader
                .read_byte_record(&mut record)
                .map_err(|e| failed(&e))?
            {
                records += 1;
            }
            Ok(format!("{records} records"))
        }
        Child::SimdCsvLoop => {
            let mut reader = simd_csv::ZeroCopyReaderBuilder::with_capacity(1 << 20)
                .has_headers(false)
                .from_reader(file);
            let mut records = 0u64;
            while reader.read_byte_record().map_err(|e| failed(&e))?.is_some() {
                records += 1;
            }
            Ok(format!("{records} records"))
        }
    }
}

/// Everything the two `read_raw` children must agree on: launches per kernel,
/// every metric's sum, the input's digest.
fn summarize(run: &Run) -> String {
    let kernels: Vec<String> = run
        .kernels
        .iter()
        .map(|(key, k)| {
            let sums: Vec<String> = k.metrics.iter().map(|m| format!("{:e}", m.sum)).collect();
            format!("{key}: {} launches, sums {}", k.launches, sums.join(" "))
        })
        .collect();
    format!(
        "{} launches, sha256 {}, {}",
        run.total.launches,
        run.sha256,
        kernels.join("; ")
    )
}
