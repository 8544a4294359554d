//! `ncu --csv --print-summary per-kernel`: one row per kernel, launch shape,
//! section and metric, with the number of launches (`Invocations`) and the
//! `Minimum`, `Maximum` and `Average` over them (no `ID`: the launches are
//! folded already). It is read as the details page it summarizes: each row
//! becomes `Invocations` launches of its `Average`, so a sum over launches,
//! the mean and the launch count are those of the profiled run; a launch's
//! own value (the spread between `Minimum` and `Maximum`) is not in the file.
//! The rows go through the details page's reader, which matches metric IDs
//! and section labels.
//!
//! What ncu 2025.3 writes (fixtures/h200/summary/): the header first (a
//! preamble of program output or `==PROF==` lines is skipped like any
//! export's), no units row (each row has its `Metric Unit`, in display units
//! such as `Mbyte` or `us`, normalized by the details reader), no `Context`
//! or `Stream`, and values with 2 decimals and thousands separators. With
//! `--graph-profiling graph` a graph is one row group named `graph`; nothing
//! in the summary says it is a graph, so the run's graph mode is unknown.

use crate::error::{Error, Result};
use std::path::Path;

/// The columns that make a header the per-kernel summary's.
const COLUMNS: [&str; 7] = [
    "Kernel Name",
    "Invocations",
    "Section Name",
    "Metric Name",
    "Minimum",
    "Maximum",
    "Average",
];

/// The most launches a summary may expand to (a hostile `Invocations` of
/// 10^12 would otherwise ask for that many rows).
const MAX_LAUNCHES: u64 = 1 << 20;

/// The most rows the details page of a summary of `bytes` bytes may have:
/// each row stands for `Invocations` rows, so a few rows of a large count
/// asked for gigabytes (576 bytes reached 1.25 GB). Proportional to the
/// file, with room for a small summary of many launches.
fn max_rows(bytes: usize) -> u64 {
    (1 << 16) + 16 * bytes as u64
}

/// `Err` (the problem) once the rows read up to row `line` stand for more
/// rows of launches (`expanded`) than a summary of `bytes` bytes may.
fn within_rows(expanded: u64, bytes: usize, line: usize) -> std::result::Result<(), String> {
    if expanded > max_rows(bytes) {
        return Err(format!(
            "row {line}: the summary stands for more than {} rows of launches (Invocations over its rows), more than a file of {bytes} bytes can hold",
            max_rows(bytes)
        ));
    }
    Ok(())
}

/// Whether `header` is the per-kernel summary's.
pub(crate) fn is_summary(header: &[String]) -> bool {
    COLUMNS.iter().all(|c| header.iter().any(|h| h == c))
}

/// The summary (from its header row on) as a details page: each row repeated
/// for each launch it stands for, with `Average` as the value and a launch
/// `ID` per kernel and launch shape. `Err` for a summary that cannot be read.
pub(crate) fn as_details(path: &Path, csv_bytes: &[u8]) -> Result<Vec<u8>> {
    let bad = |problem: String| Error::malformed(crate::error::FileKind::Export, path, problem);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(csv_bytes);
    let mut records = reader.byte_records();
    let header: Vec<String> = match records.next() {
        Some(Ok(r)) => r
            .iter()
            .map(|f| String::from_utf8_lossy(f).trim().to_string())
            .collect(),
        _ => return Err(bad("no header row".into())),
    };
    super::columns::no_repeated_column(path, &header, |_| true)?;
    let col = |name: &str| header.iter().position(|h| h == name);
    let [
        Some(kernel),
        Some(invocations),
        Some(section),
        Some(name),
        _,
        _,
        Some(average),
    ] = COLUMNS.map(col)
    else {
        return Err(bad("not a per-kernel summary".into()));
    };
    // The launch's identity: every column that is not a metric's.
    let identity: Vec<usize> = [
        "Process ID",
        "Process Name",
        "Host Name",
        "Kernel Name",
        "Block Size",
        "Grid Size",
        "Device",
        "CC",
        "Context",
        "Stream",
    ]
    .iter()
    .filter_map(|c| col(c))
    .collect();
    let Some(unit) = col("Metric Unit") else {
        return Err(bad(super::columns::NO_UNIT_COLUMN.into()));
    };
    let mut out = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Always)
        .from_writer(Vec::new());
    let mut head: Vec<&[u8]> = vec![b"ID"];
    head.extend(identity.iter().map(|&i| header[i].as_bytes()));
    head.extend([
        &b"Section Name"[..],
        b"Metric Name",
        b"Metric Unit",
        b"Metric Value",
    ]);
    let io = |e: csv::Error| bad(e.to_string());
    out.write_record(&head).map_err(io)?;
    // (first launch ID, launches) per kernel and launch shape.
    let mut shapes: std::collections::HashMap<Vec<Vec<u8>>, (u64, u64)> =
        std::collections::HashMap::new();
    let mut next_id = 0u64;
    let mut expanded = 0u64;
    for (i, record) in records.enumerate() {
        let line = i + 2;
        let record = record.map_err(|e| bad(format!("row {line}: {e}")))?;
        if record.iter().all(|f| f.trim_ascii().is_empty()) {
            continue;
        }
        let field = |c: usize| record.get(c).unwrap_or_default();
        if field(kernel).is_empty() {
            return Err(bad(format!("row {line} names no kernel")));
        }
        let count = std::str::from_utf8(field(invocations))
            .ok()
            .map(|s| s.trim().replace(',', ""))
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                bad(format!(
                    "row {line}: Invocations is {:?}, not a launch count",
                    String::from_utf8_lossy(field(invocations))
                ))
            })?;
        let id: Vec<Vec<u8>> = identity.iter().map(|&c| field(c).to_vec()).collect();
        let first = match shapes.get(&id) {
            Some(&(first, n)) if n == count => first,
            Some(&(_, n)) => {
                return Err(bad(format!(
                    "row {line}: {count} invocations, but {n} in an earlier row of the same kernel and launch shape"
                )));
            }
            None => {
                let first = next_id;
                next_id += count;
                if next_id > MAX_LAUNCHES {
                    return Err(bad(format!(
                        "row {line}: more than {MAX_LAUNCHES} launches in all"
                    )));
                }
                shapes.insert(id.clone(), (first, count));
                first
            }
        };
        expanded += count;
        within_rows(expanded, csv_bytes.len(), line).map_err(bad)?;
        for launch in first..first + count {
            let launch = launch.to_string();
            let mut row: Vec<&[u8]> = vec![launch.as_bytes()];
            row.extend(id.iter().map(Vec::as_slice));
            row.extend([field(section), field(name), field(unit), field(average)]);
            out.write_record(&row).map_err(io)?;
        }
    }
    out.into_inner().map_err(|e| bad(e.to_string()))
}
