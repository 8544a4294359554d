//! The source page of a source-counter profile (`ncu --import R --csv
//! --page source --print-source cuda,sass` of a report profiled with
//! `--section SourceCounters --import-source yes`): per CUDA (or Python) line,
//! the counters summed over its instructions, then the instructions.
//!
//! The page is a sequence of sections: `"File Path","…"`, `"Function
//! Name","…"`, a header (`"Line No","Source","Address","Source",<counters>`),
//! then rows: a line's row has its number and text and `-` for address; an
//! instruction's row has empty line cells, its address and its SASS. A kernel
//! without line information (not built with `-lineinfo`) prints only ncu's
//! warning: its profile has no lines, and ncugate falls back to opcodes where
//! the page has instructions.

use super::{COUNTERS, Counters, Line, SourceProfile};
use crate::model::KernelKeyMode;
use std::collections::BTreeMap;

/// Reads a source page; the kernel is keyed as a run keys it. A page that
/// does not read is a reason (for a note), never an error of the check.
pub fn read_source_page(data: &[u8], key_mode: KernelKeyMode) -> Result<SourceProfile, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(data);
    let mut profile = SourceProfile::default();
    let mut file = String::new();
    let mut columns: Vec<(usize, &str)> = Vec::new();
    let mut lineinfo_missing = false;
    for record in reader.records() {
        let record = record.map_err(|e| format!("the source page does not read as CSV: {e}"))?;
        let cell = |i: usize| record.get(i).unwrap_or("");
        match cell(0) {
            "File Path" => file = cell(1).to_string(),
            "Function Name" => {
                profile.kernel = crate::kernel_key::kernel_key(
                    &crate::parse::ncu_rep::names::shown(cell(1)),
                    key_mode,
                );
            }
            "Line No" => {
                columns = COUNTERS
                    .iter()
                    .filter_map(|(name, short)| {
                        record.iter().position(|h| h == *name).map(|i| (i, *short))
                    })
                    .collect();
            }
            w if w.starts_with("==WARNING==") && w.contains("No lineinfo") => {
                lineinfo_missing = true
            }
            "" if !cell(2).is_empty() && cell(2) != "-" => {
                if let Some(op) = crate::parse::sass::opcode(cell(3)) {
                    let counters = read_counters(&record, &columns);
                    let entry = profile.opcodes.entry(op).or_default();
                    for (name, v) in counters {
                        *entry.entry(name).or_default() += v;
                    }
                }
            }
            number => {
                let Ok(line) = number.parse::<u64>() else {
                    continue;
                };
                profile.lines.push(Line {
                    file: crate::text::escape::one_line(file_name(&file)),
                    line,
                    text: crate::text::escape::one_line(cell(1).trim().to_string()),
                    counters: read_counters(&record, &columns),
                });
            }
        }
    }
    if profile.kernel.is_empty() && !lineinfo_missing {
        return Err("the source page has no `Function Name` row".into());
    }
    Ok(profile)
}

/// The file's name without its folders: two checkouts name one file alike.
fn file_name(path: &str) -> String {
    path.rsplit(['/', '\\']).next().unwrap_or(path).to_string()
}

fn read_counters(record: &csv::StringRecord, columns: &[(usize, &str)]) -> Counters {
    let mut out = BTreeMap::new();
    for &(i, name) in columns {
        let Some(text) = record.get(i) else { continue };
        if let crate::parse::number::Cell::Value(v) =
            crate::parse::number::parse_cell(text.as_bytes(), 0)
            && crate::parse::number::impossible(v).is_none()
        {
            out.insert(name.to_string(), v);
        }
    }
    out
}
