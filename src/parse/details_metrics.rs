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
use crate::model::{
    ExportPage, Fingerprint, Gpu, KernelKeyMode, KernelRun, MetricAcc, MetricColumn, Run,
};
use crate::units::Unit;
use csv::ByteRecord;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The Launch Statistics row with the GPU's SM count.
const SMS: &str = "# SMs";

/// Reads a details page (`csv` starts at its header row) into a run: the
/// header gives the layout (where each column is), then each row is folded
/// into its launch.
pub(crate) fn read_details_run(
    path: &Path,
    csv_bytes: &[u8],
    sha256: String,
    metrics: &[String],
    key_mode: KernelKeyMode,
) -> Result<Run> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(csv_bytes);
    let mut records = reader.byte_records();
    let header: Vec<String> = match records.next() {
        Some(Ok(r)) => r.iter().map(trimmed).collect(),
        _ => return Err(bad(path, "no header row".into())),
    };
    let layout = Layout::new(path, &header)?;
    let mut fold = Fold::new(path, metrics, key_mode);
    for (i, record) in records.enumerate() {
        let line = i + 2;
        let record = record.map_err(|e| bad(path, format!("row {line}: {e}")))?;
        fold.row(&layout, &record, line)?;
    }
    fold.into_run(sha256)
}

/// An error in the details page at `path`.
fn bad(path: &Path, message: String) -> Error {
    Error::malformed(crate::error::FileKind::DetailsPage, path, message)
}

/// A field as text, without the line end a last field may keep.
fn trimmed(field: &[u8]) -> String {
    String::from_utf8_lossy(field)
        .trim_end_matches('\r')
        .to_string()
}

/// Where each column the fold reads is; `None` where the page lacks it.
struct Layout {
    id: usize,
    kernel: usize,
    section: usize,
    name: usize,
    value: usize,
    unit: Option<usize>,
    process: Option<usize>,
    cc: Option<usize>,
    /// 21-column exports (ncu 2023.3 and later, with chart sections) name
    /// the chart a row belongs to; one label can be in several charts.
    item: Option<usize>,
    push_pop: Option<usize>,
    start_end: Option<usize>,
}

impl Layout {
    fn new(path: &Path, header: &[String]) -> Result<Layout> {
        // Every column of a details page is read by its name.
        super::columns::no_repeated_column(path, header, |_| true)?;
        let col = |name: &str| header.iter().position(|h| h == name);
        let (Some(id), Some(kernel), Some(section), Some(name), Some(value)) = (
            col("ID"),
            col("Kernel Name"),
            col("Section Name"),
            col("Metric Name"),
            col("Metric Value"),
        ) else {
            return Err(bad(
                path,
                "a details page needs the columns \"ID\", \"Kernel Name\", \"Section Name\", \"Metric Name\" and \"Metric Value\"".into(),
            ));
        };
        // ncu scales each row of a details page to a unit of its own (39.40
        // Mbyte here, 1.14 Gbyte there): without the units the numbers were
        // compared as written, and a tenfold regression read as an improvement.
        let Some(unit) = col("Metric Unit") else {
            return Err(bad(path, super::columns::NO_UNIT_COLUMN.into()));
        };
        Ok(Layout {
            id,
            kernel,
            section,
            name,
            value,
            unit: Some(unit),
            process: col("Process ID"),
            cc: col("CC"),
            item: col("Body Item Label"),
            push_pop: col(nvtx::PUSH_POP),
            start_end: col(nvtx::START_END),
        })
    }
}

/// A row that names a requested metric: its value as written, its unit,
/// where it is, and its line.
struct Hit<'r> {
    raw: &'r [u8],
    unit: Unit,
    spot: Spot,
    line: usize,
}

/// A metric's value in one launch: the value, where its row is, the
/// priority of the way it matched (see [`wanted`]) and the value's step as
/// printed.
type Found = Option<(f64, Spot, usize, f64)>;

/// A launch as the page names it: process ID (empty where the page has no
/// such column) and `ID`.
type LaunchKey = (Vec<u8>, Vec<u8>);

/// The launches read so far, each with the requested metrics found in it.
struct Fold<'a> {
    path: &'a Path,
    metrics: &'a [String],
    /// The ways each requested metric can name a row.
    wanted: Vec<Vec<Wanted>>,
    key_mode: KernelKeyMode,
    /// Launches in order of appearance: their key → index.
    launch_index: HashMap<LaunchKey, usize>,
    /// The launch of the last row: its rows come one after another.
    current: Option<(LaunchKey, usize)>,
    /// Each launch's kernel key.
    launch_kernel: Vec<String>,
    /// Each launch's process ID, as written (empty where the page has none).
    launch_process: Vec<String>,
    /// `values[launch][metric]`.
    values: Vec<Vec<Found>>,
    units: Vec<Option<String>>,
    ccs: Vec<String>,
    sms: Vec<u32>,
}

impl<'a> Fold<'a> {
    fn new(path: &'a Path, metrics: &'a [String], key_mode: KernelKeyMode) -> Fold<'a> {
        Fold {
            path,
            metrics,
            wanted: metrics.iter().map(|m| wanted(m)).collect(),
            key_mode,
            launch_index: HashMap::new(),
            current: None,
            launch_kernel: Vec::new(),
            launch_process: Vec::new(),
            values: Vec::new(),
            units: vec![None; metrics.len()],
            ccs: Vec::new(),
            sms: Vec::new(),
        }
    }

    /// Folds in row `line`.
    fn row(&mut self, layout: &Layout, record: &ByteRecord, line: usize) -> Result<()> {
        let field = |c: usize| record.get(c).unwrap_or_default();
        if record.len() <= 1 && field(0).trim_ascii().is_empty() {
            return Ok(());
        }
        // ncu's own lines can follow the CSV (`==PROF== Disconnected …`).
        if field(0).starts_with(b"==") {
            return Ok(());
        }
        if record.len() <= layout.value {
            return Err(bad(
                self.path,
                format!(
                    "row {line} has {} fields, but \"Metric Value\" is field {}: the export is truncated or not a details page",
                    record.len(),
                    layout.value + 1
                ),
            ));
        }
        let launch = self.launch(layout, record);
        let name = field(layout.name);
        if name.is_empty() {
            return Ok(()); // a rule-result row
        }
        let value = field(layout.value);
        if name == SMS.as_bytes()
            && let Cell::Value(v) = parse_cell(value, 0)
            && v.is_finite()
            && v >= 1.0
            && v <= f64::from(u32::MAX)
            && !self.sms.contains(&(v as u32))
        {
            self.sms.push(v as u32);
        }
        if !self
            .wanted
            .iter()
            .flatten()
            .any(|w| w.name.as_bytes() == name)
        {
            return Ok(());
        }
        let text = |c: Option<usize>| c.map(|c| trimmed(field(c))).unwrap_or_default();
        let spot = Spot {
            section: trimmed(field(layout.section)),
            item: text(layout.item),
        };
        let row = Hit {
            raw: value,
            unit: Unit::parse(&text(layout.unit)),
            spot,
            line,
        };
        for m in 0..self.metrics.len() {
            // The first way that matches: its position is the priority (the
            // metric's own name before a section label or a known alias).
            let Some(priority) = self.wanted[m]
                .iter()
                .position(|w| w.matches(name, &row.spot.section, &row.spot.item))
            else {
                continue;
            };
            self.found(launch, m, &row, priority)?;
        }
        Ok(())
    }

    /// The index of the launch `record` belongs to, added (with its kernel
    /// key and compute capability) if new.
    fn launch(&mut self, layout: &Layout, record: &ByteRecord) -> usize {
        let field = |c: usize| record.get(c).unwrap_or_default();
        let process = layout.process.map(field).unwrap_or_default();
        let id = field(layout.id);
        if let Some(((p, i), launch)) = &self.current
            && p == process
            && i == id
        {
            return *launch;
        }
        let key = (process.to_vec(), id.to_vec());
        let launch = match self.launch_index.get(&key) {
            Some(&l) => l,
            None => {
                let l = self.launch_kernel.len();
                self.launch_index.insert(key.clone(), l);
                let text = |c: Option<usize>| c.map(|c| trimmed(field(c))).unwrap_or_default();
                self.launch_kernel.push(nvtx::result_key(
                    &trimmed(field(layout.kernel)),
                    &text(layout.push_pop),
                    &text(layout.start_end),
                    self.key_mode,
                ));
                self.launch_process.push(trimmed(process));
                self.values.push(vec![None; self.metrics.len()]);
                let cc = text(layout.cc);
                if !cc.is_empty() && !self.ccs.contains(&cc) {
                    self.ccs.push(cc);
                }
                l
            }
        };
        self.current = Some((key, launch));
        launch
    }

    /// Takes the value on `row` for metric `m` in `launch`, matched with
    /// `priority`, unless a better match was found before.
    fn found(&mut self, launch: usize, m: usize, row: &Hit<'_>, priority: usize) -> Result<()> {
        let Hit {
            raw,
            unit,
            spot,
            line,
        } = row;
        let metric = &self.metrics[m];
        let (cell, step) = super::number::parse_printed(raw, unit.exp10);
        let value = match cell {
            Cell::Value(v) => match super::number::impossible(v) {
                None => v,
                Some(problem) => {
                    return Err(bad(
                        self.path,
                        format!(
                            "row {line}: metric `{metric}` is {:?}: {problem}",
                            String::from_utf8_lossy(raw)
                        ),
                    ));
                }
            },
            Cell::Missing => return Ok(()),
            Cell::Text => {
                return Err(bad(
                    self.path,
                    format!(
                        "row {line}: metric `{metric}` has the non-numeric value {:?}",
                        String::from_utf8_lossy(raw)
                    ),
                ));
            }
        };
        // One launch, one row per metric: a better match replaces a worse
        // one. Two rows at the same level with one value (in base units) are
        // one metric, wherever they are; with different values they are
        // ambiguous in different places (sections, charts) and contradictory
        // in one place (which one of them is gated decided the verdict).
        match &self.values[launch][m] {
            Some((_, _, p, _)) if *p < priority => return Ok(()),
            Some((v, _, p, _)) if *p == priority && *v == value => return Ok(()),
            Some((v, other, p, _)) if *p == priority && other == spot => {
                return Err(Error::export(
                    self.path,
                    crate::error::ExportError::ContradictoryRows {
                        line: *line,
                        metric: metric.to_string(),
                        place: spot.show(),
                        first_value: v.to_string(),
                        second_value: value.to_string(),
                    },
                ));
            }
            Some((_, other, p, _)) if *p == priority => {
                let name = &self.wanted[m][priority].name;
                return Err(Error::export(
                    self.path,
                    crate::error::ExportError::AmbiguousMetric {
                        metric: metric.to_string(),
                        first: other.show(),
                        second: spot.show(),
                        label: name.to_string(),
                    },
                ));
            }
            _ => {}
        }
        match &self.units[m] {
            None => self.units[m] = Some(unit.base.clone()),
            Some(u) if *u != unit.base => {
                return Err(bad(
                    self.path,
                    format!(
                        "row {line}: metric `{metric}` is in {} here but in {u} in earlier rows",
                        unit.base
                    ),
                ));
            }
            Some(_) => {}
        }
        self.values[launch][m] = Some((value, spot.clone(), priority, step));
        Ok(())
    }

    /// The run: each launch's values folded per kernel key.
    fn into_run(self, sha256: String) -> Result<Run> {
        if self.launch_kernel.is_empty() {
            return Err(Error::export(
                self.path,
                crate::error::ExportError::NoKernels,
            ));
        }
        let n = self.metrics.len();
        if let Some(m) = (0..n).find(|&m| {
            !self
                .values
                .iter()
                .filter_map(|l| l[m].as_ref().map(|(v, _, _, _)| *v))
                .sum::<f64>()
                .is_finite()
        }) {
            return Err(bad(
                self.path,
                format!("the sum of metric `{}` overflows", self.metrics[m]),
            ));
        }
        let empty = || KernelRun {
            launches: 0,
            metrics: vec![MetricAcc::default(); n],
            ..KernelRun::default()
        };
        let mut kernels: BTreeMap<String, KernelRun> = BTreeMap::new();
        let mut total = empty();
        let mut processes: BTreeMap<String, u64> = BTreeMap::new();
        for pid in self.launch_process.iter().filter(|p| !p.trim().is_empty()) {
            *processes.entry(pid.clone()).or_default() += 1;
        }
        for (launch, name) in self.launch_kernel.iter().enumerate() {
            let kernel = kernels.entry(name.clone()).or_insert_with(empty);
            kernel.launches += 1;
            total.launches += 1;
            for (m, value) in self.values[launch].iter().enumerate() {
                match value {
                    Some((v, _, _, step)) => {
                        kernel.metrics[m].push_printed(*v, *step);
                        total.metrics[m].push_printed(*v, *step);
                    }
                    None => {
                        kernel.metrics[m].missing += 1;
                        total.metrics[m].missing += 1;
                    }
                }
            }
        }
        Ok(Run {
            source: self.path.to_path_buf(),
            sha256,
            fingerprint: Fingerprint {
                gpus: gpus(&self.ccs, &self.sms),
            },
            key_mode: self.key_mode,
            graph_mode: None,
            page: ExportPage::Details,
            metrics: self
                .metrics
                .iter()
                .zip(self.units)
                .map(|(name, unit)| MetricColumn {
                    name: name.clone(),
                    unit,
                })
                .collect(),
            kernels,
            total,
            processes,
            profiler_version: None,
        })
    }
}

/// The fingerprint the page allows: one GPU of no name, with the compute
/// capability and SM count when every launch agrees on them.
fn gpus(ccs: &[String], sms: &[u32]) -> Vec<Gpu> {
    if ccs.is_empty() && sms.is_empty() {
        return Vec::new();
    }
    vec![Gpu {
        name: String::new(),
        compute_capability: match ccs {
            [cc] => cc.clone(),
            _ => String::new(),
        },
        sm_count: match sms {
            [sm] => Some(*sm),
            _ => None,
        },
    }]
}
