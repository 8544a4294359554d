//! The details page as a metric source: what `ncu --csv --metrics X ./app`
//! and `ncu --csv --set … ./app` print by default, and what most saved ncu
//! CSV files are.
//!
//! One row per launch × section × metric: `ID`, `Kernel Name`, `Section
//! Name`, `Metric Name`, `Metric Unit`, `Metric Value`, and, depending on the
//! ncu version, `Kernel Time`, `Context`, `Stream`, `Block Size`, `Grid Size`,
//! `Device`, `CC`, rule columns, `Estimated Speedup`, `Body Item Label`, NVTX
//! columns — columns are found by name, so every layout reads the same.
//! Rows may be shorter than the header (ncu leaves the rule columns off metric
//! rows). Metrics-only runs name metrics by ID (`gpu__time_duration.sum`),
//! section runs by label (`Duration`); a rule may use either, and the IDs of
//! the Speed-of-Light labels are known (see [`LABELS`]).
//!
//! The page has no GPU name: the fingerprint holds what it does have (`CC`,
//! and the SM count of the Launch Statistics section), the rest stays unknown.

use super::number::{Cell, parse_cell};
use crate::error::{Error, Result};
use crate::kernel_key::kernel_key;
use crate::model::{Fingerprint, Gpu, KernelKeyMode, KernelRun, MetricAcc, MetricColumn, Run};
use crate::units::Unit;
use std::collections::HashMap;
use std::path::Path;

/// Speed-of-Light labels of the details page and the metric each one shows
/// (checked against the raw and details pages of one H200 report in tests).
pub const LABELS: &[(&str, &str)] = &[
    ("gpu__time_duration.sum", "Duration"),
    ("gpc__cycles_elapsed.max", "Elapsed Cycles"),
    ("sm__cycles_active.avg", "SM Active Cycles"),
    ("gpc__cycles_elapsed.avg.per_second", "SM Frequency"),
    ("dram__cycles_elapsed.avg.per_second", "DRAM Frequency"),
    (
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
        "Memory Throughput",
    ),
    (
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "DRAM Throughput",
    ),
    (
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "Compute (SM) Throughput",
    ),
    (
        "l1tex__throughput.avg.pct_of_peak_sustained_active",
        "L1/TEX Cache Throughput",
    ),
    (
        "lts__throughput.avg.pct_of_peak_sustained_elapsed",
        "L2 Cache Throughput",
    ),
];

/// The section that shows the labels above: its name since ncu 2021, and
/// before (ncu 2019.5–2020.3 print `GPU Speed Of Light`).
const SOL: &[&str] = &["GPU Speed Of Light Throughput", "GPU Speed Of Light"];
/// The Launch Statistics row with the GPU's SM count.
const SMS: &str = "# SMs";

/// How a requested metric is found in the page.
struct Wanted {
    /// `Metric Name` values that are this metric.
    names: Vec<String>,
    /// Only in this section (`"Section: Label"`, or the SOL section for a label alias).
    section: Option<String>,
}

fn wanted(metric: &str) -> Vec<Wanted> {
    let mut out = vec![Wanted {
        names: vec![metric.to_string()],
        section: None,
    }];
    if let Some((section, label)) = metric.split_once(": ") {
        out.push(Wanted {
            names: vec![label.to_string()],
            section: Some(section.to_string()),
        });
    }
    for (id, label) in LABELS {
        if *id == metric {
            out.extend(SOL.iter().map(|section| Wanted {
                names: vec![label.to_string()],
                section: Some(section.to_string()),
            }));
        }
    }
    out
}

/// Reads a details page (`csv` starts at its header row) into a run.
pub fn read_details_run(
    path: &Path,
    csv_bytes: &[u8],
    sha256: String,
    metrics: &[String],
    key_mode: KernelKeyMode,
) -> Result<Run> {
    let bad = |message: String| {
        Error::Input {
        path: path.to_path_buf(),
        message,
        hint: "pass a details-page export (`ncu --csv ./app > out.csv`, or `ncu --import R.ncu-rep --csv --page details`)".into(),
    }
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(csv_bytes);
    let mut records = reader.byte_records();
    let header: Vec<String> = match records.next() {
        Some(Ok(r)) => r
            .iter()
            .map(|f| {
                String::from_utf8_lossy(f)
                    .trim_end_matches('\r')
                    .to_string()
            })
            .collect(),
        _ => return Err(bad("no header row".into())),
    };
    let col = |name: &str| header.iter().position(|h| h == name);
    let (Some(id_col), Some(kernel_col), Some(section_col), Some(name_col), Some(value_col)) = (
        col("ID"),
        col("Kernel Name"),
        col("Section Name"),
        col("Metric Name"),
        col("Metric Value"),
    ) else {
        return Err(bad(
            "a details page needs the columns \"ID\", \"Kernel Name\", \"Section Name\", \"Metric Name\" and \"Metric Value\"".into(),
        ));
    };
    let unit_col = col("Metric Unit");
    let process_col = col("Process ID");
    let cc_col = col("CC");
    let wanted: Vec<Vec<Wanted>> = metrics.iter().map(|m| wanted(m)).collect();

    // Launches in order of appearance: (process, ID) → index.
    let mut launch_index: HashMap<(Vec<u8>, Vec<u8>), usize> = HashMap::new();
    let mut launch_kernel: Vec<String> = Vec::new();
    // values[launch][metric] = (value, section, priority of the match)
    let mut values: Vec<Vec<Option<(f64, String, usize)>>> = Vec::new();
    let mut units: Vec<Option<String>> = vec![None; metrics.len()];
    let mut ccs: Vec<String> = Vec::new();
    let mut sms: Vec<u32> = Vec::new();

    for (i, record) in records.enumerate() {
        let line = i + 2;
        let record = record.map_err(|e| bad(format!("row {line}: {e}")))?;
        let field = |c: usize| record.get(c).unwrap_or_default();
        let text = |c: usize| {
            String::from_utf8_lossy(field(c))
                .trim_end_matches('\r')
                .to_string()
        };
        if record.len() <= 1 && field(0).trim_ascii().is_empty() {
            continue;
        }
        // ncu's own lines can follow the CSV (`==PROF== Disconnected …`).
        if field(0).starts_with(b"==") {
            continue;
        }
        if record.len() <= value_col {
            return Err(bad(format!(
                "row {line} has {} fields, but \"Metric Value\" is field {}: the export is truncated or not a details page",
                record.len(),
                value_col + 1
            )));
        }
        let key = (
            process_col.map(|c| field(c).to_vec()).unwrap_or_default(),
            field(id_col).to_vec(),
        );
        let launch = match launch_index.get(&key) {
            Some(&l) => l,
            None => {
                let l = launch_kernel.len();
                launch_index.insert(key, l);
                launch_kernel.push(text(kernel_col));
                values.push(vec![None; metrics.len()]);
                if let Some(c) = cc_col {
                    let cc = text(c);
                    if !cc.is_empty() && !ccs.contains(&cc) {
                        ccs.push(cc);
                    }
                }
                l
            }
        };
        let name = field(name_col);
        if name.is_empty() {
            continue; // a rule-result row
        }
        let section = text(section_col);
        let unit_text = unit_col.map(text).unwrap_or_default();
        if name == SMS.as_bytes()
            && let Cell::Value(v) = parse_cell(field(value_col), 0)
            && v.is_finite()
            && v >= 1.0
            && v <= f64::from(u32::MAX)
            && !sms.contains(&(v as u32))
        {
            sms.push(v as u32);
        }
        for (m, ways) in wanted.iter().enumerate() {
            // The first way that matches: its position is the priority (the
            // metric's own name before a section label or a known alias).
            let Some(priority) = ways.iter().position(|w| {
                w.names.iter().any(|n| n.as_bytes() == name)
                    && w.section.as_ref().is_none_or(|s| *s == section)
            }) else {
                continue;
            };
            let unit = Unit::parse(&unit_text);
            let value = match parse_cell(field(value_col), unit.exp10) {
                Cell::Value(v) => match super::number::impossible(v) {
                    None => v,
                    Some(problem) => {
                        return Err(bad(format!(
                            "row {line}: metric `{}` is {:?}: {problem}",
                            metrics[m],
                            String::from_utf8_lossy(field(value_col))
                        )));
                    }
                },
                Cell::Missing => continue,
                Cell::Text => {
                    return Err(bad(format!(
                        "row {line}: metric `{}` has the non-numeric value {:?}",
                        metrics[m],
                        String::from_utf8_lossy(field(value_col))
                    )));
                }
            };
            match &units[m] {
                None => units[m] = Some(unit.base.clone()),
                Some(u) if *u != unit.base => {
                    return Err(bad(format!(
                        "row {line}: metric `{}` is in {} here but in {u} in earlier rows",
                        metrics[m], unit.base
                    )));
                }
                Some(_) => {}
            }
            match &values[launch][m] {
                Some((_, _, p)) if *p < priority => {}
                Some((_, _, p)) if *p > priority => {
                    values[launch][m] = Some((value, section.clone(), priority));
                }
                Some((_, other, _)) if *other != section => {
                    return Err(Error::Input {
                        path: path.to_path_buf(),
                        message: format!(
                            "`{}` names metrics of two sections of one launch (\"{other}\" and \"{section}\")",
                            metrics[m]
                        ),
                        hint: format!(
                            "name it with its section in the rule: metric = \"{section}: {}\"",
                            String::from_utf8_lossy(name)
                        ),
                    });
                }
                Some(_) => {}
                None => values[launch][m] = Some((value, section.clone(), priority)),
            }
        }
    }
    if launch_kernel.is_empty() {
        return Err(Error::NoKernels {
            path: path.to_path_buf(),
        });
    }

    let n = metrics.len();
    let empty = || KernelRun {
        launches: 0,
        metrics: vec![MetricAcc::default(); n],
        ..KernelRun::default()
    };
    let mut kernels: std::collections::BTreeMap<String, KernelRun> = Default::default();
    let mut total = empty();
    if let Some(m) = (0..n).find(|&m| {
        !values
            .iter()
            .filter_map(|l| l[m].as_ref().map(|(v, _, _)| *v))
            .sum::<f64>()
            .is_finite()
    }) {
        return Err(bad(format!("the sum of metric `{}` overflows", metrics[m])));
    }
    for (launch, name) in launch_kernel.iter().enumerate() {
        let kernel = kernels
            .entry(kernel_key(name, key_mode))
            .or_insert_with(empty);
        kernel.launches += 1;
        total.launches += 1;
        for (m, value) in values[launch].iter().enumerate() {
            match value {
                Some((v, _, _)) => {
                    kernel.metrics[m].push(*v);
                    total.metrics[m].push(*v);
                }
                None => {
                    kernel.metrics[m].missing += 1;
                    total.metrics[m].missing += 1;
                }
            }
        }
    }
    let gpus = match (ccs.len(), sms.len()) {
        (0, 0) => Vec::new(),
        _ => {
            let cc = if ccs.len() == 1 {
                ccs[0].clone()
            } else {
                String::new()
            };
            let sm = if sms.len() == 1 { Some(sms[0]) } else { None };
            vec![Gpu {
                name: String::new(),
                compute_capability: cc,
                sm_count: sm,
            }]
        }
    };
    Ok(Run {
        source: path.to_path_buf(),
        sha256,
        fingerprint: Fingerprint { gpus },
        key_mode,
        graph_mode: None,
        page: crate::model::ExportPage::Details,
        metrics: metrics
            .iter()
            .zip(units)
            .map(|(name, unit)| MetricColumn {
                name: name.clone(),
                unit,
            })
            .collect(),
        kernels,
        total,
    })
}
