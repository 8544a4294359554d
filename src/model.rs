//! The gate's data model: what a profiled run is once parsed.
//!
//! Parsers produce these types; the aggregate, baseline, compare and report
//! stages consume them. Every value here is already in its base unit.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// How launches are grouped into kernels.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum KernelKeyMode {
    /// The demangled name exactly as ncu prints it (`scale(float *, const float *, unsigned long)`).
    #[default]
    Demangled,
    /// The function name alone: no return type, template arguments or parameters (`scale`).
    Function,
}

impl fmt::Display for KernelKeyMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KernelKeyMode::Demangled => "demangled",
            KernelKeyMode::Function => "function",
        })
    }
}

/// How the launches of one kernel in one run are combined into one number.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    Default,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Aggregate {
    #[default]
    Sum,
    Mean,
    Max,
    Min,
}

impl Aggregate {
    /// All aggregates, in the order they are stored in a baseline.
    pub(crate) const ALL: [Aggregate; 4] = [
        Aggregate::Sum,
        Aggregate::Mean,
        Aggregate::Max,
        Aggregate::Min,
    ];
}

impl fmt::Display for Aggregate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Aggregate::Sum => "sum",
            Aggregate::Mean => "mean",
            Aggregate::Max => "max",
            Aggregate::Min => "min",
        })
    }
}

/// One GPU as described by the `device__attribute_*` columns.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
pub(crate) struct Gpu {
    /// `device__attribute_display_name`, e.g. `NVIDIA H200`.
    pub(crate) name: String,
    /// `major.minor`, e.g. `9.0`.
    pub(crate) compute_capability: String,
    /// `device__attribute_multiprocessor_count`, when the export has it.
    pub(crate) sm_count: Option<u32>,
}

impl Gpu {
    /// The name, when the export gave one (older baselines say `unknown GPU`).
    pub(crate) fn known_name(&self) -> Option<&str> {
        (!self.name.is_empty() && self.name != "unknown GPU").then_some(self.name.as_str())
    }

    /// The compute capability, when the export gave one.
    pub(crate) fn known_cc(&self) -> Option<&str> {
        (!self.compute_capability.is_empty()).then_some(self.compute_capability.as_str())
    }

    /// The parts of the identity this export did not give (`name`, `compute
    /// capability`, `SM count`); empty for a complete fingerprint.
    pub(crate) fn unknown_parts(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.known_name().is_none() {
            out.push("name");
        }
        if self.known_cc().is_none() {
            out.push("compute capability");
        }
        if self.sm_count.is_none() {
            out.push("SM count");
        }
        out
    }
}

impl fmt::Display for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(cc) = self.known_cc() {
            parts.push(format!("CC {cc}"));
        }
        if let Some(sms) = self.sm_count {
            parts.push(format!("{sms} SMs"));
        }
        let name = self.known_name().unwrap_or("unnamed GPU");
        if parts.is_empty() {
            write!(f, "{name}")
        } else {
            write!(f, "{name} ({})", parts.join(", "))
        }
    }
}

/// The GPUs a run's launches ran on (usually one), sorted and deduplicated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub(crate) struct Fingerprint {
    pub(crate) gpus: Vec<Gpu>,
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.gpus.is_empty() {
            return f.write_str("an unknown GPU");
        }
        let names: Vec<String> = self.gpus.iter().map(ToString::to_string).collect();
        f.write_str(&names.join(" + "))
    }
}

/// The launches of one kernel (or of the whole run) folded for one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricAcc {
    pub sum: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
    /// Launches with a value.
    pub(crate) present: u64,
    /// Launches where the cell was `n/a` or empty.
    pub(crate) missing: u64,
    /// The coarsest step its values were printed with (see
    /// [`crate::parse::number::parse_printed`]): each is within half a step
    /// of what ncu measured. 0 for values taken as exact.
    pub(crate) step: f64,
    /// The spread the source measured for the values themselves, as one
    /// standard deviation in the metric's unit (nvbench's noise times its
    /// mean), launches combined as independent (root of the sum of
    /// squares); 0 where the source measured none, as in ncu's exports.
    pub(crate) sigma: f64,
}

impl Default for MetricAcc {
    fn default() -> Self {
        MetricAcc {
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            present: 0,
            missing: 0,
            step: 0.0,
            sigma: 0.0,
        }
    }
}

impl MetricAcc {
    /// Adds one launch's value.
    pub(crate) fn push(&mut self, value: f64) {
        self.sum += value;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.present += 1;
    }

    /// Adds one launch's value measured with standard deviation `sigma`.
    pub(crate) fn push_measured(&mut self, value: f64, sigma: f64) {
        self.push(value);
        self.sigma = self.sigma.hypot(sigma);
    }

    /// Adds one launch's value as printed with `step` (the place of its last digit).
    pub(crate) fn push_printed(&mut self, value: f64, step: f64) {
        self.push(value);
        self.step = self.step.max(step);
    }

    /// The σ the source measured for the launches combined by `aggregate`
    /// (0 when it measured none): the launches' σ combined as independent
    /// for a sum, that over the launches for a mean, and a typical launch's
    /// (their root mean square) for a maximum or a minimum.
    pub(crate) fn measured_sigma(&self, aggregate: Aggregate) -> f64 {
        if self.present == 0 {
            return 0.0;
        }
        let n = self.present as f64;
        match aggregate {
            Aggregate::Sum => self.sigma,
            Aggregate::Mean => self.sigma / n,
            Aggregate::Max | Aggregate::Min => self.sigma / n.sqrt(),
        }
    }

    /// The launches combined by `aggregate`; `None` when any launch lacked a value.
    pub(crate) fn value(&self, aggregate: Aggregate) -> Option<f64> {
        if self.missing > 0 || self.present == 0 {
            return None;
        }
        Some(match aggregate {
            Aggregate::Sum => self.sum,
            Aggregate::Mean => self.sum / self.present as f64,
            Aggregate::Max => self.max,
            Aggregate::Min => self.min,
        })
    }
}

/// One kernel key (or the run total) in one run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KernelRun {
    pub launches: u64,
    /// One accumulator per metric of [`Run::metrics`], same order.
    pub metrics: Vec<MetricAcc>,
    /// ncu's replay passes per launch (`profiler__replayer_passes`), where the export has them.
    pub(crate) passes: MetricAcc,
    /// The kernel's first [`KEPT_LAUNCHES`] launches one by one, in the
    /// export's order (empty where the parser keeps none): the explain stage
    /// profiles the launch whose value moved most.
    pub(crate) first_launches: Vec<LaunchValues>,
}

/// Launches of one kernel kept one by one per run (see [`KernelRun::first_launches`]).
pub(crate) const KEPT_LAUNCHES: usize = 32;

/// One launch of a kernel, as the export listed it.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct LaunchValues {
    /// Its place among the export's launches (0 for the first row).
    pub(crate) position: u64,
    /// Its place among the export's launches of kernels of the same
    /// function name: what ncu's `--launch-skip` counts under a
    /// `-k regex:^function$` filter.
    pub(crate) ordinal: u64,
    /// One value per metric of [`Run::metrics`], same order; `None` where
    /// the cell was `n/a`, empty or absent.
    pub(crate) values: Vec<Option<f64>>,
}

/// A metric column as found in an export.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MetricColumn {
    /// The metric ID as in the raw page header, e.g. `sm__inst_executed.sum`.
    pub(crate) name: String,
    /// Its base unit (see [`crate::units`]); `None` when the export lacks the column.
    pub(crate) unit: Option<String>,
}

/// The page of an ncu export a run was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ExportPage {
    /// `--page raw`: one row per launch, one column per metric ID.
    #[default]
    Raw,
    /// `--page details` (ncu's default CSV): one row per launch and metric.
    Details,
    /// `--print-summary per-kernel`: one row per kernel, launch shape and
    /// metric, read through the details page's reader (a run's page only:
    /// a header is never detected as this).
    Summary,
    /// nvbench's `--json` output: one "launch" per benchmark × state, its
    /// summaries as metrics ([`crate::parse::nvbench`]).
    Nvbench,
}

impl fmt::Display for ExportPage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ExportPage::Raw => "raw page",
            ExportPage::Details => "details page",
            ExportPage::Summary => "per-kernel summary",
            ExportPage::Nvbench => "nvbench JSON",
        })
    }
}

/// One profiled run: one raw export, folded per kernel key.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub(crate) source: PathBuf,
    pub sha256: String,
    pub(crate) fingerprint: Fingerprint,
    pub(crate) key_mode: KernelKeyMode,
    /// Whether ncu profiled whole CUDA graphs as one result each
    /// (`--graph-profiling graph`), as far as the export shows: `Graph`
    /// when some result carries graph launch attributes, `Node` when
    /// launch statistics are there without them, `None` when it cannot tell.
    pub(crate) graph_mode: Option<GraphProfiling>,
    /// Which page of the export the metrics came from.
    pub(crate) page: ExportPage,
    pub(crate) metrics: Vec<MetricColumn>,
    pub kernels: BTreeMap<String, KernelRun>,
    /// Every launch of the run together.
    pub total: KernelRun,
    /// Launches per process, by the `Process ID` the export gives each
    /// launch (empty where it names no process): who ran them, which tells
    /// one run exported twice from two runs.
    pub(crate) processes: BTreeMap<String, u64>,
    /// The profiler version that made it, where the file says (a report
    /// read natively: `2022.2.0.0 (build 31140043) (public-release)`).
    pub profiler_version: Option<String>,
}

impl Run {
    /// Index of `metric` in [`Run::metrics`].
    pub(crate) fn metric_index(&self, metric: &str) -> Option<usize> {
        self.metrics.iter().position(|m| m.name == metric)
    }
}

/// An ncu rule result from a details page (e.g. `UncoalescedGlobalAccess`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Finding {
    /// The rule's identifier, e.g. `UncoalescedGlobalAccess`.
    pub(crate) rule: String,
    /// `OPT`, `WRN` or `ERR` (ncu's rule type; informational `INF` results are not kept).
    pub(crate) rule_type: String,
    /// The section it belongs to, e.g. `SourceCounters`.
    pub(crate) section: String,
    /// How many launches reported it.
    pub(crate) launches: u64,
    /// The largest estimated speedup over those launches, in percent.
    pub(crate) estimated_speedup_pct: Option<f64>,
    /// `local` or `global` (ncu's "Estimated Speedup Type").
    pub(crate) speedup_type: String,
    /// ncu's description of the first launch that reported it.
    pub(crate) description: String,
}

/// The findings of one details export, per kernel key and rule.
pub(crate) type Findings = BTreeMap<String, BTreeMap<String, Finding>>;

// How ncu profiles CUDA graphs (`--graph-profiling`), and so what one result
// of a run is. (The doc line is the schemas' description of the type.)
/// `[profile] graph_profiling`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    Default,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum GraphProfiling {
    /// Every kernel node of a CUDA graph is profiled as its own launch.
    #[default]
    Node,
    /// A whole graph launch is one result named `graph`.
    Graph,
}

impl GraphProfiling {
    /// As ncu's `--graph-profiling` spells it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            GraphProfiling::Node => "node",
            GraphProfiling::Graph => "graph",
        }
    }
}

/// The one fingerprint of all `runs` (the same GPU model in each), or an error.
pub(crate) fn common_fingerprint(runs: &[Run]) -> Result<Fingerprint> {
    let first = runs
        .first()
        .ok_or_else(|| Error::from(crate::error::ConfigError::NoInput))?;
    for run in &runs[1..] {
        if !same_hardware(&run.fingerprint, &first.fingerprint) {
            return Err(Error::export(
                &run.source,
                crate::error::ExportError::DifferentGpus {
                    gpu: run.fingerprint.to_string(),
                    other: first.source.display().to_string(),
                    other_gpu: first.fingerprint.to_string(),
                },
            ));
        }
    }
    Ok(first.fingerprint.clone())
}

/// The graph-profiling mode all `runs` agree on (`None`: no export shows it).
pub(crate) fn common_graph_mode(runs: &[Run]) -> Result<Option<GraphProfiling>> {
    let mut seen: Option<(GraphProfiling, &Run)> = None;
    for run in runs {
        let Some(mode) = run.graph_mode else { continue };
        match seen {
            Some((first, other)) if first != mode => {
                return Err(Error::export(
                    &run.source,
                    crate::error::ExportError::DifferentGraphModes {
                        mode: mode.as_str().to_string(),
                        other: other.source.display().to_string(),
                        other_mode: first.as_str().to_string(),
                    },
                ));
            }
            Some(_) => {}
            None => seen = Some((mode, run)),
        }
    }
    Ok(seen.map(|(mode, _)| mode))
}

/// Same GPU model: name, compute capability and SM count (a MIG slice or a
/// cut-down SKU has fewer SMs and different throughput).
/// Only the parts both sides know are compared (a details page has no GPU
/// name); the report says which were not.
pub(crate) fn same_hardware(a: &Fingerprint, b: &Fingerprint) -> bool {
    if a.gpus.is_empty() || b.gpus.is_empty() {
        return true;
    }
    a.gpus.len() == b.gpus.len()
        && a.gpus.iter().zip(&b.gpus).all(|(x, y)| {
            both(x.known_name(), y.known_name())
                && both(x.known_cc(), y.known_cc())
                && both(x.sm_count, y.sm_count)
        })
}

/// Whether the two fingerprints can be compared at all: both name their
/// GPUs, as many on each side, and each pair shares a part both sides know
/// (name, compute capability or SM count). An export without device columns
/// has none: compared with an H200 baseline it would pass as the same GPU.
pub(crate) fn shares_identity(a: &Fingerprint, b: &Fingerprint) -> bool {
    !a.gpus.is_empty()
        && a.gpus.len() == b.gpus.len()
        && a.gpus.iter().zip(&b.gpus).all(|(x, y)| {
            (x.known_name().is_some() && y.known_name().is_some())
                || (x.known_cc().is_some() && y.known_cc().is_some())
                || (x.sm_count.is_some() && y.sm_count.is_some())
        })
}

fn both<T: PartialEq>(a: Option<T>, b: Option<T>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}
