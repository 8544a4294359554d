//! The details page (`ncu --import R.ncu-rep --csv --page details`): ncu's
//! rule results per launch — the *why* next to a verdict (e.g.
//! `UncoalescedGlobalAccess`, estimated speedup 77%).
//!
//! Details exports are small next to a `--set full` raw page (one row per
//! section metric), so the `csv` crate reads them record by record.

use super::number::{Cell, parse_cell};
use crate::error::{Error, Result};
use crate::kernel_key::kernel_key;
use crate::model::{ExportPage, Finding, Findings, KernelKeyMode};
use std::io::Read;
use std::path::Path;

/// Reads the rule results of a details export, grouped per kernel key and rule.
/// Informational (`INF`) rule results are skipped: they never explain a regression.
pub fn read_details(path: &Path, reader: impl Read, key_mode: KernelKeyMode) -> Result<Findings> {
    let bad = |problem: String| Error::malformed(crate::error::FileKind::Findings, path, problem);
    let mut csv = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(reader);
    let mut records = csv.byte_records();
    let header: Vec<String> = loop {
        match records.next() {
            None => return Err(bad("the file is empty".into())),
            Some(Err(e)) => return Err(bad(format!("not a CSV file: {e}"))),
            Some(Ok(r)) if r.get(0).is_some_and(|f| f.starts_with(b"==")) => continue,
            Some(Ok(r)) => {
                break r
                    .iter()
                    .map(|f| String::from_utf8_lossy(f).into_owned())
                    .collect();
            }
        }
    };
    match super::page::detect_page(&header) {
        Some(ExportPage::Details | ExportPage::Summary) => {}
        Some(ExportPage::Raw) => return Err(bad("this is a raw page, not a details page; pass it with --input".into())),
        None => return Err(bad("not an ncu details-page CSV export (no \"Section Name\", \"Metric Name\", \"Metric Value\" columns)".into())),
    }
    super::columns::no_repeated_column(path, &header, |_| true)?;
    let col = |name: &str| header.iter().position(|h| h == name);
    let (Some(kernel), Some(section)) = (col("Kernel Name"), col("Section Name")) else {
        return Err(bad("no \"Kernel Name\" column".into()));
    };
    // Exports of reports without rule results have no rule columns at all.
    let (Some(rule), Some(rule_type), Some(description)) =
        (col("Rule Name"), col("Rule Type"), col("Rule Description"))
    else {
        return Ok(Findings::new());
    };
    let speedup_type = col("Estimated Speedup Type");
    let speedup = col("Estimated Speedup");

    let mut findings = Findings::new();
    for (line, record) in records.enumerate() {
        let record = record.map_err(|e| bad(format!("line {}: {e}", line + 2)))?;
        let text = |c: Option<usize>| {
            c.and_then(|c| record.get(c))
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .unwrap_or_default()
        };
        let name = text(Some(rule));
        let kind = text(Some(rule_type));
        if name.is_empty() || kind == "INF" {
            continue;
        }
        let estimate = match speedup.and_then(|c| record.get(c)) {
            Some(raw) => match parse_cell(raw, 0) {
                Cell::Value(v) => Some(v),
                _ => None,
            },
            None => None,
        };
        let key = kernel_key(&text(Some(kernel)), key_mode);
        let entry = findings
            .entry(key)
            .or_default()
            .entry(name.clone())
            .or_insert_with(|| Finding {
                rule: name,
                rule_type: kind,
                section: text(Some(section)),
                launches: 0,
                estimated_speedup_pct: None,
                speedup_type: text(speedup_type),
                description: text(Some(description)),
            });
        entry.launches += 1;
        if let Some(v) = estimate {
            entry.estimated_speedup_pct =
                Some(entry.estimated_speedup_pct.map_or(v, |old: f64| old.max(v)));
        }
    }
    Ok(findings)
}
