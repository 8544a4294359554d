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
//! the Speed-of-Light labels are known (see [`super::details_names::LABELS`]). A label can be in
//! two sections of a launch, or under two body item labels (charts) of one
//! section: a rule then says which (`"Section: Label"`, `"Body Item Label:
//! Label"`, `"Section: Body Item Label: Label"`) or is refused.
//!
//! The page has no GPU name: the fingerprint holds what it does have (`CC`,
//! and the SM count of the Launch Statistics section), the rest stays unknown.

use super::details_names::{Spot, Wanted, wanted};
use super::number::{Cell, parse_cell};
use super::nvtx;
use crate::error::{Error, Result};
use crate::model::{Fingerprint, Gpu, KernelKeyMode, KernelRun, MetricAcc, MetricColumn, Run};
use crate::units::Unit;
use std::collections::HashMap;
use std::path::Path;

/// The Launch Statistics row with the GPU's SM count.
const SMS: &str = "# SMs";

/// Reads a details page (`csv` starts at its header row) into a run.
pub fn read_details_run(
    path: &Path,
    csv_bytes: &[u8],
    sha256: String,
    metrics: &[String],
    key_mode: KernelKeyMode,
) -> Result<Run> {
    let bad =
        |problem: String| Error::malformed(crate::error::FileKind::DetailsPage, path, problem);
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
    // 21-column exports (ncu 2023.3 and later, with chart sections) name
    // the chart a row belongs to; one label can be in several charts.
    let item_col = col("Body Item Label");
    let (push_pop_col, start_end_col) = (col(nvtx::PUSH_POP), col(nvtx::START_END));
    let wanted: Vec<Vec<Wanted>> = metrics.iter().map(|m| wanted(m)).collect();

    // Launches in order of appearance: (process, ID) → index.
    let mut launch_index: HashMap<(Vec<u8>, Vec<u8>), usize> = HashMap::new();
    let mut launch_kernel: Vec<String> = Vec::new();
    // values[launch][metric] = (value, where its row is, priority of the match)
    let mut values: Vec<Vec<Option<(f64, Spot, usize)>>> = Vec::new();
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
                launch_kernel.push(nvtx::result_key(
                    &text(kernel_col),
                    &push_pop_col.map(text).unwrap_or_default(),
                    &start_end_col.map(text).unwrap_or_default(),
                    key_mode,
                ));
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
        let spot = Spot {
            section: text(section_col),
            item: item_col.map(text).unwrap_or_default(),
        };
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
            let Some(priority) = ways
                .iter()
                .position(|w| w.matches(name, &spot.section, &spot.item))
            else {
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
            // One launch, one row per metric: a better match replaces a
            // worse one; two rows at the same level in different places
            // (sections, charts) are ambiguous, whatever their units.
            match &values[launch][m] {
                Some((_, _, p)) if *p < priority => continue,
                Some((_, other, p)) if *p == priority && *other != spot => {
                    let name = String::from_utf8_lossy(name);
                    return Err(Error::export(
                        path,
                        crate::error::ExportError::AmbiguousMetric {
                            metric: metrics[m].clone(),
                            first: other.show(),
                            second: spot.show(),
                            label: name.to_string(),
                        },
                    ));
                }
                Some((_, _, p)) if *p == priority => continue,
                _ => {}
            }
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
            values[launch][m] = Some((value, spot.clone(), priority));
        }
    }
    if launch_kernel.is_empty() {
        return Err(Error::export(path, crate::error::ExportError::NoKernels));
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
        let kernel = kernels.entry(name.clone()).or_insert_with(empty);
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
