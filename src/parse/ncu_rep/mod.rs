//! Reading `.ncu-rep` reports natively, without `ncu`.
//!
//! Nsight Compute documents its report file (Nsight Compute Customization
//! Guide, "Report File Format"): `NVR\0`, a length-prefixed file header with
//! the format version, then blocks of Protocol Buffers version 2 messages
//! (see [`container`] for the framing and [`schema`] for the subset of
//! messages read). Only version 7 (what Nsight Compute 2021.2 to 2025.3.1
//! write) is read; anything else is refused as unsupported, so that
//! `ncu --import` can read it.
//!
//! The reader makes the rows of the raw page `ncu --import R --csv --page
//! raw --print-units base` would print — the same columns, units, digits,
//! row order and kernel names (see [`print`](mod@print), [`units`],
//! [`names`] and [`nvtx`]) — and folds them with the CSV reader's fold
//! ([`super::raw`]) through the row interface they share ([`rows`]), so a
//! report and its CSV give the same run model; and the rule rows of
//! `--page details` ([`rules`]), folded into findings as the details page's
//! are ([`super::details::RuleRows`]). No CSV text is written and read
//! again. [`raw_page`] and [`details_page`] print the pages whole, for
//! comparing them with ncu's.

pub(crate) mod code;
pub mod container;
pub(crate) mod names;
pub(crate) mod nvtx;
pub(crate) mod print;
pub(crate) mod rows;
pub(crate) mod rules;
pub mod schema;
pub mod units;
pub(crate) mod wire;
pub mod zstd;

use super::details::{RuleRow, RuleRows};
use super::number::{Cell, parse_cell};
use crate::error::Error;
use crate::model::{KernelKeyMode, Run};
use container::{Failure, Launch, LaunchKind};
use std::path::Path;

/// The raw page's fixed columns, before the metric columns: the NVTX
/// columns only for a report made with `--nvtx`, the launch dimensions only
/// when a result has them (a kernel or a graph, not a replayed range).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fixed {
    Id,
    ProcessId,
    ProcessName,
    HostName,
    PushPop,
    StartEnd,
    KernelName,
    Context,
    Stream,
    BlockSize,
    GridSize,
    Device,
    Cc,
}

impl Fixed {
    const ALL: [Fixed; 13] = [
        Fixed::Id,
        Fixed::ProcessId,
        Fixed::ProcessName,
        Fixed::HostName,
        Fixed::PushPop,
        Fixed::StartEnd,
        Fixed::KernelName,
        Fixed::Context,
        Fixed::Stream,
        Fixed::BlockSize,
        Fixed::GridSize,
        Fixed::Device,
        Fixed::Cc,
    ];

    fn title(self) -> &'static str {
        match self {
            Fixed::Id => "ID",
            Fixed::ProcessId => "Process ID",
            Fixed::ProcessName => "Process Name",
            Fixed::HostName => "Host Name",
            Fixed::PushPop => crate::parse::nvtx::PUSH_POP,
            Fixed::StartEnd => crate::parse::nvtx::START_END,
            Fixed::KernelName => "Kernel Name",
            Fixed::Context => "Context",
            Fixed::Stream => "Stream",
            Fixed::BlockSize => "Block Size",
            Fixed::GridSize => "Grid Size",
            Fixed::Device => "Device",
            Fixed::Cc => "CC",
        }
    }

    /// The fixed columns of `report`'s page.
    fn columns(report: &container::Report) -> Vec<Fixed> {
        let nvtx = report.launches.iter().any(|l| l.nvtx.is_some());
        let dims = report
            .launches
            .iter()
            .any(|l| matches!(l.kind, LaunchKind::Kernel { .. } | LaunchKind::Graph));
        Fixed::ALL
            .into_iter()
            .filter(|f| match f {
                Fixed::PushPop | Fixed::StartEnd => nvtx,
                Fixed::BlockSize | Fixed::GridSize => dims,
                _ => true,
            })
            .collect()
    }
}

/// A page: header, units (none on a details page) and its rows, as ncu prints them.
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
        let units = (!self.units.is_empty()).then_some(&self.units);
        for row in std::iter::once(&self.header).chain(units).chain(&self.rows) {
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

/// The raw page of `report`, every cell of it (see [`rows::RawRows`] for
/// the columns and their order).
pub fn raw_page(report: &container::Report) -> RawPage {
    rows::RawRows::new(report, String::new()).into_page()
}

/// One fixed cell of result `id`.
fn fixed_cell(f: Fixed, id: usize, launch: &Launch, grid: &str, block: &str) -> String {
    let metric = |name: &str| {
        launch
            .metrics
            .iter()
            .find(|m| m.name == name)
            .and_then(|m| m.value.as_ref())
            .map(print::value)
    };
    let nvtx = launch.nvtx.clone().unwrap_or_default();
    match f {
        Fixed::Id => id.to_string(),
        Fixed::ProcessId => launch.process_id.map(|p| p.to_string()).unwrap_or_default(),
        // ncu shows the executable's file name, the report keeps its path.
        Fixed::ProcessName => launch
            .process_name
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_string(),
        Fixed::HostName => launch.host_name.clone(),
        Fixed::PushPop => nvtx.push_pop,
        Fixed::StartEnd => nvtx.start_end,
        Fixed::KernelName => kernel_name(launch),
        Fixed::Context => launch.context.map(|c| c.to_string()).unwrap_or_default(),
        Fixed::Stream => match launch.kind {
            // A range spans streams.
            LaunchKind::Range => "n/a".into(),
            _ => launch.stream.map(|s| s.to_string()).unwrap_or_default(),
        },
        Fixed::BlockSize => block.to_string(),
        Fixed::GridSize => grid.to_string(),
        Fixed::Device => metric("launch__device_id").unwrap_or_default(),
        Fixed::Cc => match (
            metric("device__attribute_compute_capability_major"),
            metric("device__attribute_compute_capability_minor"),
        ) {
            (Some(major), Some(minor)) => format!("{major}.{minor}"),
            _ => String::new(),
        },
    }
}

/// The rule rows of ncu's details page of `report` (`--page details`, the
/// rule columns; section metric rows are left out: findings read only the
/// rules), as a CSV page for [`super::details`].
pub fn details_page(report: &container::Report) -> RawPage {
    let fixed = Fixed::columns(report);
    let mut header: Vec<String> = fixed.iter().map(|f| f.title().to_string()).collect();
    header.extend(
        [
            "Section Name",
            "Metric Name",
            "Metric Unit",
            "Metric Value",
            "Rule Name",
            "Rule Type",
            "Rule Description",
            "Estimated Speedup Type",
            "Estimated Speedup",
        ]
        .map(String::from),
    );
    let mut rows = Vec::new();
    let (mut grid, mut block) = (String::new(), String::new());
    for (id, launch) in report.launches.iter().enumerate() {
        if let Some(g) = launch.grid {
            grid = dims(g);
        }
        if let Some(b) = launch.block {
            block = dims(b);
        }
        let cells: Vec<String> = fixed
            .iter()
            .map(|f| fixed_cell(*f, id, launch, &grid, &block))
            .collect();
        for rule in &launch.rules {
            for r in rules::rows(rule) {
                let mut row = cells.clone();
                row.extend([
                    r.section,
                    String::new(),
                    String::new(),
                    String::new(),
                    r.name,
                    r.kind,
                    r.description,
                    r.speedup_type,
                    r.speedup,
                ]);
                rows.push(row);
            }
        }
    }
    RawPage {
        header,
        units: Vec::new(),
        rows,
    }
}

/// The rule rows of `report` as [`details_page`] lists them, for the
/// findings fold: each with its launch's kernel name.
pub(crate) fn rule_rows(report: &container::Report) -> RuleRows {
    let mut out = RuleRows::default();
    for launch in report.launches.iter().filter(|l| !l.rules.is_empty()) {
        let kernel = kernel_name(launch);
        for rule in &launch.rules {
            for r in rules::rows(rule) {
                let speedup = match parse_cell(r.speedup.as_bytes(), 0) {
                    Cell::Value(v) => Some(v),
                    _ => None,
                };
                let row = RuleRow {
                    rule: r.name,
                    kind: r.kind,
                    section: r.section,
                    description: r.description,
                    speedup_type: r.speedup_type,
                    speedup,
                };
                out.push(&kernel, row);
            }
        }
    }
    out
}

fn dims(d: [u64; 3]) -> String {
    format!("({}, {}, {})", d[0], d[1], d[2])
}

/// The raw page's `Kernel Name`: the name as ncu displays it (see
/// [`names`]); `graph` for a graph, `range` for a replayed range.
fn kernel_name(launch: &Launch) -> String {
    match &launch.kind {
        LaunchKind::Kernel {
            mangled,
            function,
            demangled,
        } => names::display(mangled, function, demangled),
        LaunchKind::Graph => "graph".into(),
        LaunchKind::Range => "range".into(),
        LaunchKind::CommandList { name } => name.clone(),
    }
}

/// File names of Nsight Compute reports: `.ncu-rep`, the compressed
/// `.ncu-repz` ([`zstd`]), and the `.nsight-cuprof-report` of Nsight
/// Compute 2019, which this reader refuses as unsupported (ncu may read it).
pub(crate) const REPORT_EXTENSIONS: [&str; 3] = ["ncu-rep", "ncu-repz", "nsight-cuprof-report"];

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

/// Reads one run from a report file, folded by the raw-page fold ([`run_of`]).
pub fn read_run(
    path: &Path,
    metrics: &[String],
    key_mode: KernelKeyMode,
) -> std::result::Result<Run, Refusal> {
    read_run_and_code(path, metrics, key_mode).map(|(run, _)| run)
}

/// [`read_run`], with every kernel launch's code ([`code::of_report`]) from
/// the same read of the file: `None` where a module is unreadable.
pub(crate) fn read_run_and_code(
    path: &Path,
    metrics: &[String],
    key_mode: KernelKeyMode,
) -> std::result::Result<(Run, Option<Vec<code::LaunchCode>>), Refusal> {
    let (data, report) = read_report(path, crate::error::FileKind::Export)?;
    let run = run_of(path, &report, super::sha256_bytes(&data), metrics, key_mode)?;
    Ok((run, code::of_report(&report)))
}

/// The run of `report` (whose file's digest is `sha256`), folded by the
/// raw-page fold from the page's rows.
pub(crate) fn run_of(
    path: &Path,
    report: &container::Report,
    sha256: String,
    metrics: &[String],
    key_mode: KernelKeyMode,
) -> std::result::Result<Run, Refusal> {
    let rows = rows::RawRows::new(report, sha256);
    if let Some(unknown) = metrics
        .iter()
        .find(|m| rows.header().contains(m) && units::unit(m).is_none())
    {
        return Err(refusal(
            path,
            Failure::Unsupported(format!(
                "ncugate does not know the unit of metric `{unknown}` (a report does not store units)"
            )),
        ));
    }
    let mut run =
        super::raw::read_raw_rows(path, rows, metrics, key_mode).map_err(Refusal::Corrupt)?;
    run.profiler_version.clone_from(&report.profiler_version);
    Ok(run)
}

/// Reads the findings (rule results) of a report, folded as a details
/// page's ([`rule_rows`]).
pub fn read_findings(
    path: &Path,
    key_mode: KernelKeyMode,
) -> std::result::Result<crate::model::Findings, Refusal> {
    let (_, report) = read_report(path, crate::error::FileKind::Findings)?;
    Ok(rule_rows(&report).findings(key_mode))
}

/// The file's bytes and its results.
fn read_report(
    path: &Path,
    kind: crate::error::FileKind,
) -> std::result::Result<(Vec<u8>, container::Report), Refusal> {
    let data = crate::io::bounded::read(kind, path).map_err(Refusal::Corrupt)?;
    let report = decode(path, &data).map_err(|f| refusal(path, f))?;
    Ok((data, report))
}

/// The results of the report file at `path` whose bytes are `data` (a
/// `.ncu-rep`, or one compressed as a `.ncu-repz`, told by its first bytes
/// whatever its name: [`zstd`]); a failure says whether ncu may read it
/// ([`refusal`] makes it the error).
pub(crate) fn decode(path: &Path, data: &[u8]) -> std::result::Result<container::Report, Failure> {
    let compressed = zstd::is_compressed(data);
    let data = zstd::inflate(data)?;
    // Until the version is known, the file may be another format ncu reads
    // (or a stand-in for a report): unsupported, not corrupt.
    container::version(&data).map_err(|f| {
        let mut reason = f.message().to_string();
        if compressed {
            reason = format!("it is Zstandard-compressed, but what it inflates to is not the `.ncu-rep` format ncugate reads ({reason})");
        } else if let Some(ext) = path
            .extension()
            .map(|e| e.to_string_lossy())
            .filter(|e| *e != "ncu-rep")
        {
            reason =
                format!("a `.{ext}` file is not the `.ncu-rep` format ncugate reads ({reason})");
        }
        Failure::Unsupported(reason)
    })?;
    container::read(&data)
}

/// The error of a report at `path` that [`decode`] could not read, by kind.
pub(crate) fn refusal(path: &Path, failure: Failure) -> Refusal {
    use crate::error::ExportError;
    match failure {
        Failure::Unsupported(reason) => Refusal::Unsupported(Error::export(
            path,
            ExportError::ReportUnsupported { reason },
        )),
        Failure::Corrupt(reason) => {
            Refusal::Corrupt(Error::export(path, ExportError::ReportCorrupt { reason }))
        }
        Failure::RepeatedMetric {
            kernel,
            result,
            metric,
        } => Refusal::Corrupt(Error::export(
            path,
            ExportError::ReportRepeatedMetric {
                kernel,
                result,
                metric,
            },
        )),
        Failure::OverBudget { limit } => Refusal::Corrupt(Error::export(
            path,
            ExportError::ReportOverBudget {
                limit,
                per_byte: container::COPIED_PER_BYTE,
                beyond: container::COPIED_BEYOND,
            },
        )),
        Failure::DecodeOverBudget { limit } => Refusal::Corrupt(Error::export(
            path,
            ExportError::ReportDecodeOverBudget {
                limit,
                per_byte: wire::DECODED_PER_BYTE,
                beyond: wire::DECODED_BEYOND,
            },
        )),
        Failure::InflateOverBudget { limit } => Refusal::Corrupt(Error::export(
            path,
            ExportError::ReportInflateOverBudget {
                limit,
                per_byte: zstd::INFLATED_PER_BYTE,
                beyond: zstd::INFLATED_BEYOND,
            },
        )),
    }
}
