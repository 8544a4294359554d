//! Reading `.ncu-rep` reports natively, without `ncu`.
//!
//! Nsight Compute documents its report file (Nsight Compute Customization
//! Guide, "Report File Format"): `NVR\0`, a length-prefixed file header with
//! the format version, then blocks of Protocol Buffers version 2 messages
//! (see [`container`] for the framing and [`schema`] for the subset of
//! messages read). Only version 7 (what Nsight Compute 2025.3.1 writes) is read;
//! anything else is refused as unsupported, so that `ncu --import` can read it.
//!
//! The reader rebuilds the raw page `ncu --import R --csv --page raw
//! --print-units base` would print — the same columns, units and digits (see
//! [`print`](mod@print) and [`units`]) — and folds it with the CSV parser
//! ([`super::raw`]), so a report and its CSV give the same run model.

pub mod code;
pub mod container;
pub mod print;
pub mod schema;
pub mod units;

use crate::error::Error;
use crate::model::{KernelKeyMode, Run};
use container::{Failure, Launch, LaunchKind};
use std::collections::BTreeMap;
use std::path::Path;

/// The raw page's fixed columns, before the metric columns.
const FIXED: [&str; 11] = [
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
];

/// A raw page: header, units and one row per result, as ncu prints them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawPage {
    pub header: Vec<String>,
    pub units: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl RawPage {
    /// The page as ncu's CSV: every field quoted, one line per row.
    pub fn to_csv(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for row in [&self.header, &self.units].into_iter().chain(&self.rows) {
            let fields: Vec<String> = row
                .iter()
                .map(|f| format!("\"{}\"", f.replace('"', "\"\"")))
                .collect();
            out.extend_from_slice(fields.join(",").as_bytes());
            out.push(b'\n');
        }
        out
    }
}

/// The raw page of `report`, with metric columns sorted by name as ncu sorts
/// them; a metric the table of [`units`] does not know gets an empty unit.
pub fn raw_page(report: &container::Report) -> RawPage {
    let mut columns: BTreeMap<&str, usize> = BTreeMap::new();
    for launch in &report.launches {
        for m in &launch.metrics {
            columns.entry(m.name.as_str()).or_default();
        }
    }
    for (i, slot) in columns.values_mut().enumerate() {
        *slot = FIXED.len() + i;
    }
    let mut header: Vec<String> = FIXED.iter().map(ToString::to_string).collect();
    header.extend(columns.keys().map(ToString::to_string));
    let mut units = vec![String::new(); FIXED.len()];
    units.extend(
        columns
            .keys()
            .map(|m| units::unit(m).unwrap_or("").to_string()),
    );
    let mut rows = Vec::with_capacity(report.launches.len());
    // A graph result has no grid or block of its own: ncu repeats the
    // previous row's.
    let (mut grid, mut block) = (String::new(), String::new());
    for (id, launch) in report.launches.iter().enumerate() {
        let mut row = vec![String::new(); header.len()];
        for m in &launch.metrics {
            if let (Some(&col), Some(v)) = (columns.get(m.name.as_str()), &m.value) {
                row[col] = print::value(v);
            }
        }
        if let Some(g) = launch.grid {
            grid = dims(g);
        }
        if let Some(b) = launch.block {
            block = dims(b);
        }
        let metric = |name: &str| {
            launch
                .metrics
                .iter()
                .find(|m| m.name == name)
                .and_then(|m| m.value.as_ref())
                .map(print::value)
        };
        let cc = match (
            metric("device__attribute_compute_capability_major"),
            metric("device__attribute_compute_capability_minor"),
        ) {
            (Some(major), Some(minor)) => format!("{major}.{minor}"),
            _ => String::new(),
        };
        let fixed = [
            id.to_string(),
            launch.process_id.map(|p| p.to_string()).unwrap_or_default(),
            // ncu shows the executable's file name, the report keeps its path.
            launch
                .process_name
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string(),
            launch.host_name.clone(),
            kernel_name(launch),
            launch.context.map(|c| c.to_string()).unwrap_or_default(),
            launch.stream.map(|s| s.to_string()).unwrap_or_default(),
            block.clone(),
            grid.clone(),
            metric("launch__device_id").unwrap_or_default(),
            cc,
        ];
        for (cell, text) in row.iter_mut().zip(fixed) {
            *cell = text;
        }
        rows.push(row);
    }
    RawPage {
        header,
        units,
        rows,
    }
}

fn dims(d: [u64; 3]) -> String {
    format!("({}, {}, {})", d[0], d[1], d[2])
}

/// The raw page's `Kernel Name`: the demangled name as ncu displays it,
/// `graph` for a graph.
fn kernel_name(launch: &Launch) -> String {
    match &launch.kind {
        LaunchKind::Kernel { demangled, .. } => display_name(demangled),
        LaunchKind::Graph => "graph".into(),
    }
}

/// ncu prints a template argument cast to an enum without its cast: the
/// report's `void scale<(ScaleImpl)0>(…)` is `void scale<0>(…)` on every page.
pub(crate) fn display_name(demangled: &str) -> String {
    let mut out = String::with_capacity(demangled.len());
    let mut rest = demangled;
    while let Some(open) = rest.find('(') {
        let after = &rest[open + 1..];
        let cast = after.find(')').filter(|&close| {
            let ty = &after[..close];
            let next = after[close + 1..].chars().next();
            !ty.is_empty()
                && ty
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
                && next.is_some_and(|c| c.is_ascii_digit() || c == '-')
        });
        match cast {
            Some(close) => {
                out.push_str(&rest[..open]);
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[..=open]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Why [`read_run`] gave up: a report it does not know (`ncu` may read it)
/// or one that is broken.
#[derive(Debug)]
pub enum Refusal {
    Unsupported(Error),
    Corrupt(Error),
}

impl Refusal {
    /// The error, whichever the kind.
    pub fn into_error(self) -> Error {
        match self {
            Refusal::Unsupported(e) | Refusal::Corrupt(e) => e,
        }
    }
}

/// Reads one run from a report file, folded by the raw-page parser.
pub fn read_run(
    path: &Path,
    metrics: &[String],
    key_mode: KernelKeyMode,
) -> std::result::Result<Run, Refusal> {
    let data = std::fs::read(path).map_err(|source| {
        Refusal::Corrupt(Error::read(crate::error::FileKind::Export, path, source))
    })?;
    // Until the version is known, the file may be another format ncu reads
    // (or a stand-in for a report): unsupported, not corrupt.
    container::version(&data)
        .map_err(|f| refusal(path, Failure::Unsupported(f.message().to_string())))?;
    let report = container::read(&data).map_err(|f| refusal(path, f))?;
    let page = raw_page(&report);
    if let Some(unknown) = metrics
        .iter()
        .find(|m| page.header.contains(m) && units::unit(m).is_none())
    {
        return Err(refusal(
            path,
            Failure::Unsupported(format!(
                "ncugate does not know the unit of metric `{unknown}` (a report does not store units)"
            )),
        ));
    }
    let csv = page.to_csv();
    let mut run =
        super::raw::read_raw(path, &csv[..], metrics, key_mode).map_err(Refusal::Corrupt)?;
    // The run's digest is the report's, as when ncu converts it.
    run.sha256 = super::sha256_bytes(&data);
    Ok(run)
}

fn refusal(path: &Path, failure: Failure) -> Refusal {
    use crate::error::ExportError;
    match failure {
        Failure::Unsupported(reason) => Refusal::Unsupported(Error::export(
            path,
            ExportError::ReportUnsupported { reason },
        )),
        Failure::Corrupt(reason) => {
            Refusal::Corrupt(Error::export(path, ExportError::ReportCorrupt { reason }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::display_name;

    #[test]
    fn enum_casts_in_template_arguments_are_dropped() {
        assert_eq!(
            display_name("void scale<(ScaleImpl)0>(const float *, float *, long, int)"),
            "void scale<0>(const float *, float *, long, int)"
        );
        assert_eq!(
            display_name("void k<(ns::E)-1, (F)2>(float *)"),
            "void k<-1, 2>(float *)"
        );
        assert_eq!(
            display_name("produce(float *, long)"),
            "produce(float *, long)"
        );
    }
}
