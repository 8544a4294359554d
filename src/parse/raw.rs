//! The raw page (`ncu --import R.ncu-rep --csv --page raw`): where a metric
//! value is born.
//!
//! Row 1 names the columns (fixed columns, `device__attribute_*`, metric IDs),
//! row 2 gives each column's unit, then one row per profiled launch. Only the
//! kernel name, the fingerprint columns and the requested metrics are read;
//! each value is normalized to its base unit and folded into its kernel's
//! accumulator as it streams by, so memory is bounded by kernels × metrics.

use super::number::{Cell, parse_cell, parse_printed};
use super::nvtx;
use super::page::{KERNEL_NAME, detect_page};
use super::scan::{Row, RowScanner, RowSource, Wanted};
use crate::error::{Error, ExportError, Result};
use crate::kernel_key::kernel_key;
use crate::model::{
    ExportPage, Fingerprint, Gpu, KEPT_LAUNCHES, KernelKeyMode, KernelRun, LaunchValues, MetricAcc,
    MetricColumn, Run,
};
use crate::units::Unit;
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

const DISPLAY_NAME: &str = "device__attribute_display_name";
const CC_MAJOR: &str = "device__attribute_compute_capability_major";
const CC_MINOR: &str = "device__attribute_compute_capability_minor";
const SM_COUNT: &str = "device__attribute_multiprocessor_count";
const CC: &str = "CC";
const PROCESS_ID: &str = "Process ID";
/// ncu's replay passes for a launch (what its progress line ends with).
pub(crate) const PASSES: &str = "profiler__replayer_passes";
/// Launch attributes only a whole-graph result has (`--graph-profiling graph`).
const GRAPH_LAUNCHABLE: &str = "launch__graph_is_device_launchable";
const GRAPH_DEVICE_LAUNCH: &str = "launch__graph_contains_device_launch";
/// A launch attribute every kernel or graph result has when ncu collected
/// launch statistics (it always does, also for `--metrics` runs).
const GRID_SIZE: &str = "launch__grid_size";

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
/// [`RowScanner`] against another CSV reader through it): the header and
/// units rows give the layout (which scanner slot holds each column), then
/// each launch row is folded in.
pub fn read_raw_rows(
    path: &Path,
    mut scanner: impl RowSource,
    metrics: &[String],
    key_mode: KernelKeyMode,
) -> Result<Run> {
    let header = super::page::first_csv_row(&mut scanner, path)?;
    check_raw_header(path, &header)?;
    // The columns read by name; a metric's column may repeat (equal copies
    // are one metric, see `Layout::repeats`).
    super::columns::no_repeated_column(path, &header, |name| {
        [
            KERNEL_NAME,
            DISPLAY_NAME,
            CC_MAJOR,
            CC_MINOR,
            SM_COUNT,
            CC,
            PASSES,
            GRAPH_LAUNCHABLE,
            GRAPH_DEVICE_LAUNCH,
            GRID_SIZE,
            nvtx::PUSH_POP,
            nvtx::START_END,
        ]
        .contains(&name)
    })?;
    let units = units_row(path, &mut scanner, header.len())?;
    let layout = Layout::new(&header, &units, metrics);
    scanner.want(Wanted::Columns(layout.columns.clone()));
    let mut fold = Fold::new(path, metrics, key_mode);
    let mut line = 2usize;
    while let Some(row) = scanner
        .next_row()
        .map_err(|source| Error::read(crate::error::FileKind::Export, path, source))?
    {
        line += 1;
        if !row.is_blank() {
            fold.row(&layout, &row, line)?;
        }
    }
    fold.into_run(layout, scanner.sha256_hex())
}

/// An error in the export at `path`.
fn bad(path: &Path, error: ExportError) -> Error {
    Error::export(path, error)
}

/// Refuses a header that is not the raw page's.
fn check_raw_header(path: &Path, header: &[String]) -> Result<()> {
    match detect_page(header) {
        Some(ExportPage::Raw) => Ok(()),
        Some(ExportPage::Details | ExportPage::Summary) => {
            Err(bad(path, ExportError::DetailsPageAsInput))
        }
        None | Some(ExportPage::Nvbench) => Err(bad(path, ExportError::NotRawPage)),
    }
}

/// The second row: each column's unit.
fn units_row(path: &Path, scanner: &mut impl RowSource, width: usize) -> Result<Vec<String>> {
    let row = scanner
        .next_row()
        .map_err(|source| Error::read(crate::error::FileKind::Export, path, source))?;
    match row {
        Some(row) if row.fields == width && row.field(0).is_some_and(|f| f.is_empty()) => {
            Ok(row.strings())
        }
        Some(_) => Err(bad(path, ExportError::NoUnitsRow)),
        None => Err(bad(path, ExportError::HeaderOnly)),
    }
}

/// Where the fold finds each column it reads: its slot among the fields the
/// scanner keeps ([`Wanted::Columns`]), `None` where the export lacks it.
struct Layout {
    /// Fields in the header: every launch row has as many.
    width: usize,
    /// The column index of each slot.
    columns: Vec<usize>,
    kernel: usize,
    /// The fingerprint: display name, compute capability major and minor,
    /// SM count, `CC` (older exports).
    gpu: [Option<usize>; 5],
    passes: Option<usize>,
    process: Option<usize>,
    /// The launch attributes only a whole-graph result has.
    graph: [Option<usize>; 2],
    push_pop: Option<usize>,
    start_end: Option<usize>,
    /// Each requested metric's slot and its unit's power of ten.
    metrics: Vec<(Option<usize>, i32)>,
    /// Each requested metric with its base unit (`None`: not in the export).
    metric_columns: Vec<MetricColumn>,
    /// A requested metric the header names again: (metric, its first column,
    /// the other column, the other's slot and unit's power of ten). Equal
    /// values are one metric; different ones make the export ambiguous.
    repeats: Vec<(usize, usize, usize, usize, i32)>,
    /// Node mode or graph mode, as far as the header tells.
    graph_mode: GraphColumns,
}

/// What the header says about `--graph-profiling`.
#[derive(Clone, Copy, PartialEq)]
enum GraphColumns {
    /// Graph launch attribute columns: graph mode if a result fills them.
    Attributes,
    /// Launch statistics without those columns: nodes were profiled.
    Nodes,
    /// Neither: the export cannot tell.
    Unknown,
}

impl Layout {
    fn new(header: &[String], units: &[String], metrics: &[String]) -> Layout {
        let column = |name: &str| header.iter().position(|h| h == name);
        let mut columns = Vec::new();
        // The scanner keeps each column in one slot: a metric that is also a
        // fixed column (`--metric device__attribute_multiprocessor_count`)
        // reads the fixed column's slot rather than stealing it from the
        // fingerprint.
        let mut slot = |col: Option<usize>| {
            let col = col?;
            Some(columns.iter().position(|&c| c == col).unwrap_or_else(|| {
                columns.push(col);
                columns.len() - 1
            }))
        };
        let kernel = slot(column(KERNEL_NAME)).unwrap_or_default();
        let gpu = [DISPLAY_NAME, CC_MAJOR, CC_MINOR, SM_COUNT, CC].map(|c| slot(column(c)));
        let passes = slot(column(PASSES));
        let process = slot(column(PROCESS_ID));
        let graph = [GRAPH_LAUNCHABLE, GRAPH_DEVICE_LAUNCH].map(|c| slot(column(c)));
        let push_pop = slot(column(nvtx::PUSH_POP));
        let start_end = slot(column(nvtx::START_END));
        let mut metric_slots = Vec::with_capacity(metrics.len());
        let mut metric_columns = Vec::with_capacity(metrics.len());
        let mut repeats = Vec::new();
        for (m, metric) in metrics.iter().enumerate() {
            let col = column(metric);
            if let Some(first) = col {
                for other in (first + 1..header.len()).filter(|&c| header[c] == *metric) {
                    let exp10 = Unit::parse(&units[other]).exp10;
                    if let Some(other_slot) = slot(Some(other)) {
                        repeats.push((m, first, other, other_slot, exp10));
                    }
                }
            }
            let unit = col.map(|c| Unit::parse(&units[c]));
            metric_columns.push(MetricColumn {
                name: metric.clone(),
                unit: unit.as_ref().map(|u| u.base.clone()),
            });
            metric_slots.push((slot(col), unit.map_or(0, |u| u.exp10)));
        }
        let graph_mode = if graph.iter().any(Option::is_some) {
            GraphColumns::Attributes
        } else if column(GRID_SIZE).is_some() {
            GraphColumns::Nodes
        } else {
            GraphColumns::Unknown
        };
        Layout {
            width: header.len(),
            columns,
            kernel,
            gpu,
            passes,
            process,
            graph,
            push_pop,
            start_end,
            metrics: metric_slots,
            metric_columns,
            repeats,
            graph_mode,
        }
    }
}

/// The launches read so far, folded per kernel key.
struct Fold<'a> {
    path: &'a Path,
    metrics: &'a [String],
    key_mode: KernelKeyMode,
    kernels: Vec<(String, KernelRun)>,
    /// Kernel name as written → its index in `kernels`.
    key_index: HashMap<Vec<u8>, usize>,
    /// Kernel key → its index in `kernels`.
    positions: HashMap<String, usize>,
    total: KernelRun,
    gpus: Vec<Gpu>,
    /// The fingerprint fields of the last row, as written.
    last_gpu_bytes: Vec<u8>,
    /// Results that fill a graph launch attribute.
    graph_results: u64,
    /// Launches per process ID, as written.
    processes: HashMap<Vec<u8>, u64>,
    /// Kernel index → its function name's index in `function_launches`.
    function_of: Vec<usize>,
    /// Function name → its index in `function_launches`.
    functions: HashMap<String, usize>,
    /// Launches so far per function name.
    function_launches: Vec<u64>,
}

impl<'a> Fold<'a> {
    fn new(path: &'a Path, metrics: &'a [String], key_mode: KernelKeyMode) -> Fold<'a> {
        Fold {
            path,
            metrics,
            key_mode,
            kernels: Vec::new(),
            key_index: HashMap::new(),
            positions: HashMap::new(),
            total: empty_kernel(metrics.len()),
            gpus: Vec::new(),
            last_gpu_bytes: Vec::new(),
            graph_results: 0,
            processes: HashMap::new(),
            function_of: Vec::new(),
            functions: HashMap::new(),
            function_launches: Vec::new(),
        }
    }

    /// Folds in the launch on `row` (line `line` of the file).
    fn row(&mut self, layout: &Layout, row: &Row<'_>, line: usize) -> Result<()> {
        if row.fields != layout.width {
            return Err(bad(
                self.path,
                ExportError::FieldCount {
                    line,
                    fields: row.fields,
                    width: layout.width,
                },
            ));
        }
        self.fingerprint(layout, row, line)?;
        if layout
            .graph
            .iter()
            .flatten()
            .any(|&s| row.field(s).is_some_and(|f| !f.trim_ascii().is_empty()))
        {
            self.graph_results += 1;
        }
        let index = self.kernel_index(layout, row);
        if let Some(pid) = layout.process.and_then(|s| row.field(s))
            && !pid.trim_ascii().is_empty()
        {
            match self.processes.get_mut(pid.as_ref()) {
                Some(n) => *n += 1,
                None => {
                    self.processes.insert(pid.into_owned(), 1);
                }
            }
        }
        self.keep_launch(index);
        self.kernels[index].1.launches += 1;
        self.total.launches += 1;
        if let Some(slot) = layout.passes
            && let Cell::Value(p) = parse_cell(&row.field(slot).unwrap_or_default(), 0)
        {
            self.kernels[index].1.passes.push(p);
            self.total.passes.push(p);
        }
        for (m, &(slot, exp10)) in layout.metrics.iter().enumerate() {
            if let Some(slot) = slot {
                self.metric(index, m, &row.field(slot).unwrap_or_default(), exp10, line)?;
            }
        }
        for &(m, first, other, other_slot, other_exp10) in &layout.repeats {
            let Some((first_slot, exp10)) = layout.metrics[m].0.map(|s| (s, layout.metrics[m].1))
            else {
                continue;
            };
            let a = row.field(first_slot).unwrap_or_default();
            let b = row.field(other_slot).unwrap_or_default();
            if parse_cell(&a, exp10) != parse_cell(&b, other_exp10) {
                return Err(bad(
                    self.path,
                    ExportError::ContradictoryColumns {
                        line,
                        metric: self.metrics[m].clone(),
                        first: first + 1,
                        first_value: String::from_utf8_lossy(&a).into_owned(),
                        second: other + 1,
                        second_value: String::from_utf8_lossy(&b).into_owned(),
                    },
                ));
            }
        }
        Ok(())
    }

    /// Keeps the launch of kernel `index` one by one while the kernel has
    /// fewer than [`KEPT_LAUNCHES`]; its values are filled in by `metric`.
    fn keep_launch(&mut self, index: usize) {
        while self.function_of.len() <= index {
            let key = &self.kernels[self.function_of.len()].0;
            let function = kernel_key(key, KernelKeyMode::Function);
            let next = self.functions.len();
            let slot = *self.functions.entry(function).or_insert(next);
            if slot == next {
                self.function_launches.push(0);
            }
            self.function_of.push(slot);
        }
        let slot = self.function_of[index];
        let ordinal = self.function_launches[slot];
        self.function_launches[slot] += 1;
        let kernel = &mut self.kernels[index].1;
        if kernel.first_launches.len() < KEPT_LAUNCHES {
            kernel.first_launches.push(LaunchValues {
                position: self.total.launches,
                ordinal,
                values: vec![None; self.metrics.len()],
            });
        }
    }

    /// Notes the GPU of `row` (compared as written with the previous row's
    /// first, so a run on one GPU identifies it once).
    fn fingerprint(&mut self, layout: &Layout, row: &Row<'_>, line: usize) -> Result<()> {
        let mut gpu_bytes = Vec::new();
        for slot in layout.gpu {
            if let Some(f) = slot.and_then(|s| row.field(s)) {
                gpu_bytes.extend_from_slice(&f);
            }
            gpu_bytes.push(0);
        }
        if gpu_bytes == self.last_gpu_bytes {
            return Ok(());
        }
        let [name, major, minor, sms, cc] = layout.gpu.map(|slot| text(row, slot));
        // The SM count column is there but says nothing (`n/a`): an unknown
        // SM count must not match every GPU.
        if layout.gpu[3].is_some() && sms.replace(',', "").trim().parse::<u32>().is_err() {
            return Err(bad(
                self.path,
                ExportError::UnknownSmCount {
                    line,
                    column: SM_COUNT.to_string(),
                    value: sms.to_string(),
                },
            ));
        }
        let gpu = gpu_of(&name, &major, &minor, &sms, &cc);
        if !self.gpus.contains(&gpu) {
            self.gpus.push(gpu);
        }
        self.last_gpu_bytes = gpu_bytes;
        Ok(())
    }

    /// The index in `kernels` of the kernel `row` launched, added if new.
    fn kernel_index(&mut self, layout: &Layout, row: &Row<'_>) -> usize {
        let name = row.field(layout.kernel).unwrap_or_default();
        let empty = || empty_kernel(self.metrics.len());
        if *name == *b"range" {
            // A range-replay result is named by its NVTX ranges (see `nvtx`).
            let key = nvtx::result_key(
                "range",
                &text(row, layout.push_pop),
                &text(row, layout.start_end),
                self.key_mode,
            );
            return index_of(&mut self.kernels, &mut self.positions, key, &empty);
        }
        if let Some(&i) = self.key_index.get(name.as_ref()) {
            return i;
        }
        let key = kernel_key(&String::from_utf8_lossy(&name), self.key_mode);
        let i = index_of(&mut self.kernels, &mut self.positions, key, &empty);
        self.key_index.insert(name.into_owned(), i);
        i
    }

    /// Folds metric `m`'s field `raw` into kernel `index` and the total.
    fn metric(
        &mut self,
        index: usize,
        m: usize,
        raw: &[u8],
        exp10: i32,
        line: usize,
    ) -> Result<()> {
        let kernel = &mut self.kernels[index].1;
        let metric = &self.metrics[m];
        let (cell, step) = parse_printed(raw, exp10);
        match cell {
            Cell::Value(v) => {
                if let Some(problem) = super::number::impossible(v) {
                    return Err(bad(
                        self.path,
                        ExportError::ImpossibleValue {
                            line,
                            metric: metric.to_string(),
                            value: String::from_utf8_lossy(raw).into_owned(),
                            problem: problem.to_string(),
                        },
                    ));
                }
                kernel.metrics[m].push_printed(v, step);
                self.total.metrics[m].push_printed(v, step);
                if let Some(launch) = kernel.first_launches.last_mut()
                    && launch.position == self.total.launches - 1
                {
                    launch.values[m] = Some(v);
                }
                if !self.total.metrics[m].sum.is_finite() {
                    return Err(bad(
                        self.path,
                        ExportError::SumOverflows {
                            line,
                            metric: metric.to_string(),
                        },
                    ));
                }
            }
            Cell::Missing => {
                kernel.metrics[m].missing += 1;
                self.total.metrics[m].missing += 1;
            }
            Cell::Text => {
                return Err(bad(
                    self.path,
                    ExportError::NotNumeric {
                        line,
                        metric: metric.to_string(),
                        value: String::from_utf8_lossy(raw).into_owned(),
                    },
                ));
            }
        }
        Ok(())
    }

    /// The run, once every row is folded in.
    fn into_run(mut self, layout: Layout, sha256: String) -> Result<Run> {
        if self.total.launches == 0 {
            return Err(bad(self.path, ExportError::NoKernels));
        }
        self.gpus.sort();
        let graph_mode = match layout.graph_mode {
            _ if self.graph_results > 0 => Some(crate::model::GraphProfiling::Graph),
            GraphColumns::Attributes | GraphColumns::Nodes => {
                Some(crate::model::GraphProfiling::Node)
            }
            GraphColumns::Unknown => None,
        };
        Ok(Run {
            graph_mode,
            page: ExportPage::Raw,
            source: self.path.to_path_buf(),
            sha256,
            fingerprint: Fingerprint { gpus: self.gpus },
            key_mode: self.key_mode,
            metrics: layout.metric_columns,
            kernels: self.kernels.into_iter().collect(),
            total: self.total,
            processes: self
                .processes
                .into_iter()
                .map(|(pid, n)| (String::from_utf8_lossy(&pid).into_owned(), n))
                .collect(),
            profiler_version: None,
        })
    }
}

/// A kernel with no launch yet, for `n` metrics.
fn empty_kernel(n: usize) -> KernelRun {
    KernelRun {
        launches: 0,
        metrics: vec![MetricAcc::default(); n],
        passes: MetricAcc::default(),
        first_launches: Vec::new(),
    }
}

/// The field in `slot` as text; empty where the export lacks the column.
fn text(row: &Row<'_>, slot: Option<usize>) -> String {
    slot.and_then(|s| row.field(s))
        .map(|f| String::from_utf8_lossy(&f).into_owned())
        .unwrap_or_default()
}

fn gpu_of(name: &str, major: &str, minor: &str, sms: &str, cc: &str) -> Gpu {
    let compute_capability = if !major.is_empty() {
        format!("{major}.{}", if minor.is_empty() { "0" } else { minor })
    } else {
        cc.to_string()
    };
    let sm_count = sms.replace(',', "").parse().ok();
    // Escaped at the border as a kernel name is: a baseline keeps the name
    // as read back later, and a baseline never holds an unprintable character.
    Gpu {
        name: crate::text::escape::printable(name.to_string()),
        compute_capability: crate::text::escape::printable(compute_capability),
        sm_count,
    }
}
