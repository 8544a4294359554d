//! The graph-memory gate: what compute-sanitizer cannot see. A CUPTI
//! injection library (`inject/`) counts CUDA graphs and graph executables
//! created and destroyed inside the unmodified app; NVML samples the
//! process's GPU memory from the moment it starts; the gate fails when
//! executables leak or memory grows past the `[memory]` limits.

pub(crate) mod audit;
pub mod history;
pub mod library;
pub(crate) mod run;
pub(crate) mod sample;

use crate::format::format_value;
use crate::status::Status;
use serde::Serialize;

/// `[memory]` limits (bytes; `None`: not checked); their defaults are in
/// `crate::options::memory`.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryLimits {
    /// Graph executables still alive at exit (default 0).
    pub(crate) max_live_execs: Option<u64>,
    /// Graphs still alive at exit (default: not checked; the runtime keeps internal copies).
    pub(crate) max_live_graphs: Option<u64>,
    pub(crate) max_growth_per_iteration: Option<f64>,
    pub(crate) max_growth_per_second: Option<f64>,
    pub(crate) max_peak: Option<f64>,
}

/// What a memory check measures; [`MemoryCheck::name`] is how reports
/// (and [`MemoryResult::check`]) name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemoryCheck {
    /// Graph executables created and never destroyed.
    LiveExecs,
    /// Graphs created and never destroyed.
    LiveGraphs,
    /// NVML's growth over the graph launches, per launch.
    GrowthPerLaunch,
    /// NVML's least-squares slope, per second.
    GrowthPerSecond,
    /// NVML's peak for the process.
    Peak,
    /// The growth checks, when NVML could not measure them.
    Growth,
    /// The history rule: the last `consecutive` runs against the median of
    /// the `window` before them.
    LeakTrend { consecutive: usize, window: usize },
}

impl MemoryCheck {
    pub(crate) fn name(self) -> String {
        match self {
            MemoryCheck::LiveExecs => "live graph executables at exit".into(),
            MemoryCheck::LiveGraphs => "live graphs at exit".into(),
            MemoryCheck::GrowthPerLaunch => "GPU memory growth per graph launch".into(),
            MemoryCheck::GrowthPerSecond => "GPU memory growth per second".into(),
            MemoryCheck::Peak => "peak GPU memory".into(),
            MemoryCheck::Growth => "GPU memory growth".into(),
            MemoryCheck::LeakTrend {
                consecutive,
                window,
            } => {
                format!("leak trend (last {consecutive} runs vs the median of the {window} before)")
            }
        }
    }
}

/// One memory check.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub(crate) struct MemoryResult {
    pub(crate) check: String,
    pub(crate) value: Option<f64>,
    pub(crate) limit: Option<f64>,
    pub(crate) unit: String,
    pub(crate) status: Status,
    pub(crate) message: String,
}

/// What one audited run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Measured {
    pub(crate) audit: audit::Audit,
    pub(crate) growth: Option<sample::Growth>,
}

/// The checks of one audited run against `limits`.
pub(crate) fn judge(m: &Measured, limits: &MemoryLimits) -> Vec<MemoryResult> {
    let mut out = Vec::new();
    let a = &m.audit;
    let live_execs = a.execs_created.saturating_sub(a.execs_destroyed);
    let leaked: Vec<String> = a
        .live_execs
        .iter()
        .map(|e| {
            format!(
                "exec #{} ({} launches{})",
                e.id,
                e.launches,
                e.created_by
                    .as_deref()
                    .map(|c| format!(", instantiated in {c}"))
                    .unwrap_or_default()
            )
        })
        .collect();
    let shown = if leaked.len() > 5 {
        format!("{} … and {} more", leaked[..5].join(", "), leaked.len() - 5)
    } else {
        leaked.join(", ")
    };
    out.push(count_check(
        MemoryCheck::LiveExecs,
        live_execs,
        limits.max_live_execs,
        &format!(
            "{} created, {} destroyed{}",
            a.execs_created,
            a.execs_destroyed,
            if shown.is_empty() {
                String::new()
            } else {
                format!("; never destroyed: {shown}")
            }
        ),
    ));
    if limits.max_live_graphs.is_some() {
        out.push(count_check(
            MemoryCheck::LiveGraphs,
            a.graphs_created.saturating_sub(a.graphs_destroyed),
            limits.max_live_graphs,
            &format!(
                "{} created, {} destroyed",
                a.graphs_created, a.graphs_destroyed
            ),
        ));
    }
    match &m.growth {
        Some(g) => {
            // The window runs from the first launch to the last: launches − 1 intervals.
            let per_iteration = (a.graph_launches > 1).then(|| g.growth_bytes / (a.graph_launches - 1) as f64);
            out.push(bytes_check(MemoryCheck::GrowthPerLaunch, per_iteration, limits.max_growth_per_iteration, &format!("{} from the first to the last of {} graph launches", format_value(g.growth_bytes, "byte"), a.graph_launches)));
            out.push(bytes_check(MemoryCheck::GrowthPerSecond, Some(g.slope_bytes_per_s), limits.max_growth_per_second, &format!("least-squares slope over {} NVML samples in {:.2} s", g.samples, g.seconds)));
            out.push(bytes_check(MemoryCheck::Peak, Some(g.peak_bytes), limits.max_peak, "NVML, this process"));
        }
        None => out.push(MemoryResult {
            check: MemoryCheck::Growth.name(),
            value: None,
            limit: limits.max_growth_per_iteration,
            unit: "byte".into(),
            status: Status::Skipped,
            message: "not measured: fewer than two NVML samples while the graphs ran (no driver, fewer than two launches, or launches faster than the sampling interval)".into(),
        }),
    }
    out
}

fn count_check(check: MemoryCheck, value: u64, limit: Option<u64>, detail: &str) -> MemoryResult {
    let status = match limit {
        Some(l) if value > l => Status::Fail,
        Some(_) => Status::Pass,
        None => Status::Skipped,
    };
    let message = match limit {
        Some(l) => format!("{value} (limit {l}): {detail}"),
        None => format!("{value}: {detail}"),
    };
    MemoryResult {
        check: check.name(),
        value: Some(value as f64),
        limit: limit.map(|l| l as f64),
        unit: String::new(),
        status,
        message,
    }
}

fn bytes_check(
    check: MemoryCheck,
    value: Option<f64>,
    limit: Option<f64>,
    detail: &str,
) -> MemoryResult {
    let status = match (value, limit) {
        (Some(v), Some(l)) if v > l => Status::Fail,
        (Some(_), Some(_)) => Status::Pass,
        _ => Status::Skipped,
    };
    let shown = value.map_or("—".into(), |v| format_value(v, "byte"));
    let message = match limit {
        Some(l) => format!("{shown} (limit {}): {detail}", format_value(l, "byte")),
        None => format!("{shown} (no limit): {detail}"),
    };
    MemoryResult {
        check: check.name(),
        value,
        limit,
        unit: "byte".into(),
        status,
        message,
    }
}
