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

/// One rule row of a details page: what findings are made of, whether it
/// came from a CSV or from a report's rule results ([`crate::parse::ncu_rep`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RuleRow {
    pub(crate) rule: String,
    /// `Rule Type`: `WRN`, `OPT`, `ERR`.
    pub(crate) kind: String,
    pub(crate) section: String,
    pub(crate) description: String,
    pub(crate) speedup_type: String,
    /// `Estimated Speedup`, where it is a number.
    pub(crate) speedup: Option<f64>,
}

/// The rule rows of a details page (or a report), in page order, each with
/// its launch's kernel name as written: decoded once, folded into
/// [`Findings`] by [`RuleRows::findings`] once the kernel key mode is known
/// (a check knows it only after it has picked the baseline). A launch's
/// rows share its kernel name, kept once.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RuleRows {
    kernels: Vec<String>,
    /// Each row and the index of its kernel name in `kernels`.
    rows: Vec<(usize, RuleRow)>,
}

impl RuleRows {
    /// Adds a row of the launch of `kernel`, unless it cannot explain a
    /// regression: no rule, or an informational (`INF`) result.
    pub(crate) fn push(&mut self, kernel: &str, row: RuleRow) {
        if row.rule.is_empty() || row.kind == "INF" {
            return;
        }
        if self.kernels.last().is_none_or(|k| k != kernel) {
            self.kernels.push(kernel.to_string());
        }
        self.rows.push((self.kernels.len() - 1, row));
    }

    /// The findings, per kernel key and rule: a rule's first row gives its
    /// texts; its launches are counted and its largest speedup kept.
    pub(crate) fn findings(&self, key_mode: KernelKeyMode) -> Findings {
        let keys: Vec<String> = self
            .kernels
            .iter()
            .map(|k| kernel_key(k, key_mode))
            .collect();
        let mut findings = Findings::new();
        for (kernel, row) in &self.rows {
            let entry = findings
                .entry(keys[*kernel].clone())
                .or_default()
                .entry(row.rule.clone())
                .or_insert_with(|| Finding {
                    rule: row.rule.clone(),
                    rule_type: row.kind.clone(),
                    section: row.section.clone(),
                    launches: 0,
                    estimated_speedup_pct: None,
                    speedup_type: row.speedup_type.clone(),
                    description: row.description.clone(),
                });
            entry.launches += 1;
            if let Some(v) = row.speedup {
                entry.estimated_speedup_pct =
                    Some(entry.estimated_speedup_pct.map_or(v, |old: f64| old.max(v)));
            }
        }
        findings
    }
}

/// Reads the rule results of a details export, grouped per kernel key and rule.
/// Informational (`INF`) rule results are skipped: they never explain a regression.
pub(crate) fn read_details(
    path: &Path,
    reader: impl Read,
    key_mode: KernelKeyMode,
) -> Result<Findings> {
    decode_details(path, reader).map(|rows| rows.findings(key_mode))
}

/// The rule rows of a details export ([`read_details`] before the fold).
pub(crate) fn decode_details(path: &Path, reader: impl Read) -> Result<RuleRows> {
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
        None | Some(ExportPage::Nvbench) => return Err(bad("not an ncu details-page CSV export (no \"Section Name\", \"Metric Name\", \"Metric Value\" columns)".into())),
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
        return Ok(RuleRows::default());
    };
    let speedup_type = col("Estimated Speedup Type");
    let speedup = col("Estimated Speedup");

    let mut rows = RuleRows::default();
    for (line, record) in records.enumerate() {
        let record = record.map_err(|e| bad(format!("line {}: {e}", line + 2)))?;
        let text = |c: Option<usize>| {
            c.and_then(|c| record.get(c))
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .unwrap_or_default()
        };
        let (name, kind) = (text(Some(rule)), text(Some(rule_type)));
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
        let row = RuleRow {
            rule: name,
            kind,
            section: text(Some(section)),
            description: text(Some(description)),
            speedup_type: text(speedup_type),
            speedup: estimate,
        };
        rows.push(&text(Some(kernel)), row);
    }
    Ok(rows)
}
