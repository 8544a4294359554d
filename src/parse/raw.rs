//! The raw page (`ncu --import R.ncu-rep --csv --page raw`): where a metric
//! value is born.
//!
//! Row 1 names the columns (fixed columns, `device__attribute_*`, metric IDs),
//! row 2 gives each column's unit, then one row per profiled launch. Only the
//! kernel name, the fingerprint columns and the requested metrics are read;
//! each value is normalized to its base unit and folded into its kernel's
//! accumulator as it streams by, so memory is bounded by kernels × metrics.

use super::number::{Cell, parse_cell};
use super::nvtx;
use super::scan::{RowScanner, RowSource, Wanted};
use crate::error::{Error, Result};
use crate::kernel_key::kernel_key;
use crate::model::{Fingerprint, Gpu, KernelKeyMode, KernelRun, MetricAcc, MetricColumn, Run};
use crate::units::Unit;
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

const KERNEL_NAME: &str = "Kernel Name";
const DISPLAY_NAME: &str = "device__attribute_display_name";
const CC_MAJOR: &str = "device__attribute_compute_capability_major";
const CC_MINOR: &str = "device__attribute_compute_capability_minor";
const SM_COUNT: &str = "device__attribute_multiprocessor_count";
const CC: &str = "CC";
/// ncu's replay passes for a launch (what its progress line ends with).
pub const PASSES: &str = "profiler__replayer_passes";
/// Launch attributes only a whole-graph result has (`--graph-profiling graph`).
const GRAPH_LAUNCHABLE: &str = "launch__graph_is_device_launchable";
const GRAPH_DEVICE_LAUNCH: &str = "launch__graph_contains_device_launch";
/// A launch attribute every kernel or graph result has when ncu collected
/// launch statistics (it always does, also for `--metrics` runs).
const GRID_SIZE: &str = "launch__grid_size";

/// Slots of the fixed columns in the scanner's `Wanted::Columns` list.
const SLOT_KERNEL: usize = 0;
const SLOT_NAME: usize = 1;
const SLOT_MAJOR: usize = 2;
const SLOT_MINOR: usize = 3;
const SLOT_SMS: usize = 4;
const SLOT_CC: usize = 5;
const SLOT_PASSES: usize = 6;
const SLOT_GRAPH1: usize = 7;
const SLOT_GRAPH2: usize = 8;
const SLOT_PUSH_POP: usize = 9;
const SLOT_START_END: usize = 10;

/// Which page of an ncu CSV export a header row belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    Raw,
    Details,
}

/// The position of `key` in `kernels` (through `positions`, so that an export
/// of N distinct kernels costs N look-ups, not N²/2 comparisons), added
/// (empty) if new.
fn index_of(
    kernels: &mut Vec<(String, KernelRun)>,
    positions: &mut HashMap<String, usize>,
    key: String,
    empty: &dyn Fn() -> KernelRun,
) -> usize {
    if let Some(&i) = positions.get(&key) {
        return i;
    }
    kernels.push((key.clone(), empty()));
    positions.insert(key, kernels.len() - 1);
    kernels.len() - 1
}

/// Recognizes the page from its header row.
pub fn detect_page(header: &[String]) -> Option<Page> {
    let has = |name: &str| header.iter().any(|h| h == name);
    if has("Section Name") && has("Metric Name") && has("Metric Value") {
        Some(Page::Details)
    } else if has("ID") && has(KERNEL_NAME) {
        Some(Page::Raw)
    } else {
        None
    }
}

/// Reads a raw-page export and folds it per kernel key.
///
/// `metrics` are the metric IDs to keep; a metric absent from the export is
/// kept with `unit: None` so the caller decides whether that is an error.
pub fn read_raw(
    path: &Path,
    reader: impl Read,
    metrics: &[String],
    key_mode: KernelKeyMode,
) -> Result<Run> {
    read_raw_rows(path, RowScanner::new(reader), metrics, key_mode)
}

/// [`read_raw`] on rows from any [`RowSource`] (`benches/record` measures
/// [`RowScanner`] against another CSV reader through it).
pub fn read_raw_rows(
    path: &Path,
    mut scanner: impl RowSource,
    metrics: &[String],
    key_mode: KernelKeyMode,
) -> Result<Run> {
    let bad = |error: crate::error::ExportError| Error::export(path, error);
    let io = |source: std::io::Error| Error::read(crate::error::FileKind::Export, path, source);
    let header = super::page::first_csv_row(&mut scanner, path)?;
    match detect_page(&header) {
        Some(Page::Raw) => {}
        Some(Page::Details) => {
            return Err(bad(crate::error::ExportError::DetailsPageAsInput));
        }
        None => {
            return Err(bad(crate::error::ExportError::NotRawPage));
        }
    }
    let width = header.len();
    let units: Vec<String> = match scanner.next_row().map_err(io)? {
        Some(row) if row.fields == width && row.field(0).is_some_and(|f| f.is_empty()) => {
            row.strings()
        }
        Some(_) => {
            return Err(bad(crate::error::ExportError::NoUnitsRow));
        }
        None => {
            return Err(bad(crate::error::ExportError::HeaderOnly));
        }
    };

    let column = |name: &str| header.iter().position(|h| h == name);
    let Some(kernel_col) = column(KERNEL_NAME) else {
        unreachable!("detect_page checked Kernel Name")
    };
    let optional_col = |name: &str| column(name).unwrap_or(usize::MAX);
    let mut wanted = vec![
        kernel_col,
        optional_col(DISPLAY_NAME),
        optional_col(CC_MAJOR),
        optional_col(CC_MINOR),
        optional_col(SM_COUNT),
        optional_col(CC),
        optional_col(PASSES),
        optional_col(GRAPH_LAUNCHABLE),
        optional_col(GRAPH_DEVICE_LAUNCH),
        optional_col(nvtx::PUSH_POP),
        optional_col(nvtx::START_END),
    ];
    let mut columns = Vec::with_capacity(metrics.len());
    let mut exponents = Vec::with_capacity(metrics.len());
    // The scanner keeps each column in one slot: a metric that is also a
    // fixed column (`--metric device__attribute_multiprocessor_count`) reads
    // the fixed column's slot rather than stealing it from the fingerprint.
    let mut metric_slots = Vec::with_capacity(metrics.len());
    for metric in metrics {
        let col = column(metric);
        let unit = col.map(|c| Unit::parse(&units[c]));
        columns.push(MetricColumn {
            name: metric.clone(),
            unit: unit.as_ref().map(|u| u.base.clone()),
        });
        exponents.push(unit.map_or(0, |u| u.exp10));
        match col.and_then(|c| wanted.iter().position(|&w| w == c)) {
            Some(slot) => metric_slots.push(slot),
            None => {
                metric_slots.push(wanted.len());
                wanted.push(col.unwrap_or(usize::MAX));
            }
        }
    }
    // Node mode or graph mode: graph results carry graph launch attributes;
    // an export with launch statistics but no such column profiled nodes.
    let mut graph_mode =
        if column(GRAPH_LAUNCHABLE).is_some() || column(GRAPH_DEVICE_LAUNCH).is_some() {
            None
        } else if column(GRID_SIZE).is_some() {
            Some(false)
        } else {
            None
        };
    let mut graph_results = 0u64;
    // Columns the export lacks are requested at an index no row reaches.
    let absent = |c: &usize| *c == usize::MAX;
    let present: Vec<bool> = wanted.iter().map(|c| !absent(c)).collect();
    scanner.want(Wanted::Columns(
        wanted
            .iter()
            .map(|&c| if absent(&c) { width + 1 } else { c })
            .collect(),
    ));

    let n_metrics = metrics.len();
    let empty_kernel = || KernelRun {
        launches: 0,
        metrics: vec![MetricAcc::default(); n_metrics],
        passes: MetricAcc::default(),
    };
    let mut kernels: Vec<(String, KernelRun)> = Vec::new();
    let mut key_index: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut positions: HashMap<String, usize> = HashMap::new();
    let mut total = empty_kernel();
    let mut gpus: Vec<Gpu> = Vec::new();
    let mut last_gpu_bytes: Vec<u8> = Vec::new();
    let mut line = 2usize;

    while let Some(row) = scanner.next_row().map_err(io)? {
        line += 1;
        if row.is_blank() {
            continue;
        }
        if row.fields != width {
            return Err(bad(crate::error::ExportError::FieldCount {
                line,
                fields: row.fields,
                width,
            }));
        }
        let text = |slot: usize| -> String {
            if present[slot] {
                row.field(slot)
                    .map(|f| String::from_utf8_lossy(&f).into_owned())
                    .unwrap_or_default()
            } else {
                String::new()
            }
        };

        // The fingerprint: compare the raw bytes with the previous row's first.
        let mut gpu_bytes = Vec::new();
        for (slot, &here) in present.iter().enumerate().take(SLOT_CC + 1).skip(SLOT_NAME) {
            if here && let Some(f) = row.field(slot) {
                gpu_bytes.extend_from_slice(&f);
            }
            gpu_bytes.push(0);
        }
        if gpu_bytes != last_gpu_bytes {
            // The SM count column is there but says nothing (`n/a`): an
            // unknown SM count must not match every GPU.
            let sms = text(SLOT_SMS);
            if present[SLOT_SMS] && sms.replace(',', "").trim().parse::<u32>().is_err() {
                return Err(bad(crate::error::ExportError::UnknownSmCount {
                    line,
                    column: SM_COUNT.to_string(),
                    value: sms,
                }));
            }
            let gpu = gpu_of(
                &text(SLOT_NAME),
                &text(SLOT_MAJOR),
                &text(SLOT_MINOR),
                &text(SLOT_SMS),
                &text(SLOT_CC),
            );
            if !gpus.contains(&gpu) {
                gpus.push(gpu);
            }
            last_gpu_bytes = gpu_bytes;
        }

        if [SLOT_GRAPH1, SLOT_GRAPH2]
            .iter()
            .any(|&s| present[s] && row.field(s).is_some_and(|f| !f.trim_ascii().is_empty()))
        {
            graph_results += 1;
        }

        let name = row.field(SLOT_KERNEL).unwrap_or_default();
        let index = if *name == *b"range" {
            // A range-replay result is named by its NVTX ranges (see `nvtx`).
            let key = nvtx::result_key(
                "range",
                &text(SLOT_PUSH_POP),
                &text(SLOT_START_END),
                key_mode,
            );
            index_of(&mut kernels, &mut positions, key, &empty_kernel)
        } else {
            match key_index.get(name.as_ref()) {
                Some(&i) => i,
                None => {
                    let key = kernel_key(&String::from_utf8_lossy(&name), key_mode);
                    let i = index_of(&mut kernels, &mut positions, key, &empty_kernel);
                    key_index.insert(name.into_owned(), i);
                    i
                }
            }
        };
        let kernel = &mut kernels[index].1;
        kernel.launches += 1;
        total.launches += 1;
        if present[SLOT_PASSES]
            && let Cell::Value(p) = parse_cell(&row.field(SLOT_PASSES).unwrap_or_default(), 0)
        {
            kernel.passes.push(p);
            total.passes.push(p);
        }
        for m in 0..n_metrics {
            let slot = metric_slots[m];
            if !present[slot] {
                continue;
            }
            let raw = row.field(slot).unwrap_or_default();
            match parse_cell(&raw, exponents[m]) {
                Cell::Value(v) => {
                    if let Some(problem) = super::number::impossible(v) {
                        return Err(bad(crate::error::ExportError::ImpossibleValue {
                            line,
                            metric: metrics[m].clone(),
                            value: String::from_utf8_lossy(&raw).into_owned(),
                            problem: problem.to_string(),
                        }));
                    }
                    kernel.metrics[m].push(v);
                    total.metrics[m].push(v);
                    if !total.metrics[m].sum.is_finite() {
                        return Err(bad(crate::error::ExportError::SumOverflows {
                            line,
                            metric: metrics[m].clone(),
                        }));
                    }
                }
                Cell::Missing => {
                    kernel.metrics[m].missing += 1;
                    total.metrics[m].missing += 1;
                }
                Cell::Text => {
                    return Err(bad(crate::error::ExportError::NotNumeric {
                        line,
                        metric: metrics[m].clone(),
                        value: String::from_utf8_lossy(&raw).into_owned(),
                    }));
                }
            }
        }
    }
    if total.launches == 0 {
        return Err(Error::export(path, crate::error::ExportError::NoKernels));
    }
    gpus.sort();
    if graph_results > 0 {
        graph_mode = Some(true);
    } else if column(GRAPH_LAUNCHABLE).is_some() || column(GRAPH_DEVICE_LAUNCH).is_some() {
        graph_mode = Some(false);
    }
    Ok(Run {
        graph_mode,
        page: crate::model::ExportPage::Raw,
        source: path.to_path_buf(),
        sha256: scanner.sha256_hex(),
        fingerprint: Fingerprint { gpus },
        key_mode,
        metrics: columns,
        kernels: kernels.into_iter().collect(),
        total,
    })
}

fn gpu_of(name: &str, major: &str, minor: &str, sms: &str, cc: &str) -> Gpu {
    let compute_capability = if !major.is_empty() {
        format!("{major}.{}", if minor.is_empty() { "0" } else { minor })
    } else {
        cc.to_string()
    };
    let sm_count = sms.replace(',', "").parse().ok();
    Gpu {
        name: name.to_string(),
        compute_capability,
        sm_count,
    }
}
