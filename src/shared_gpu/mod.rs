//! Shared GPUs: what ncugate knows about the GPU a run was profiled on, so
//! that a neighbour's work is never taken for a regression. Two sources,
//! both collected at no extra replay pass:
//!
//! - [`probe`]: NVML, sampled in a short window before ncu starts and in a
//!   background thread during the profiled run — the other processes with a
//!   compute context (pid, name, memory), the utilization, and what holds
//!   inside a container, where NVML's pids name nothing ([`signals`]: the
//!   process count, memory beyond ncugate's own, activity while the app is
//!   not running, MPS clients);
//! - [`clock`]: the export itself — each kernel's SM clock and elapsed
//!   cycles, compared with the clock the baseline recorded (a neighbour, a
//!   power or a thermal limit pulls it down; each moves durations without
//!   any code change).
//!
//! [`GpuEnvironment::observe`] folds them for a set of runs (the baseline
//! keeps one), [`assess`] says whether a check's run was shared and in
//! which words. What a check then does with its rules is
//! `crate::compare::not_gated`'s business, under [`Policy`].

pub(crate) mod clock;
pub(crate) mod probe;
pub(crate) mod signals;

pub(crate) use clock::KernelClock;
pub use probe::{DeviceLook, GpuProbe, GpuProcess, Phase, Sample};
use serde::{Deserialize, Serialize};
pub use signals::Signal;
use signals::Tenancy;
use std::collections::BTreeMap;

/// A kernel's SM clock this much under the baseline's (on average over the
/// kernels) counts as a disturbed GPU. Measured on the H200: the clock of
/// one kernel varies by 0.5–2.8% between quiet runs and falls 24–29% beside
/// a GEMM loop in another process.
pub(crate) const CLOCK_DROP: f64 = 0.10;

/// `[gate] shared_gpu`: what a check does with the rules another process
/// can move (`environment = "sensitive"`) when the GPU was shared.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// Gate the deterministic rules; show the sensitive ones with their
    /// change and a warning naming the neighbour, not as failures.
    #[default]
    Warn,
    /// Exit 2: the run proves nothing about the sensitive metrics.
    Refuse,
    /// Gate every rule as on a quiet GPU.
    Gate,
}

impl Policy {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Policy::Warn => "warn",
            Policy::Refuse => "refuse",
            Policy::Gate => "gate",
        }
    }
}

/// What ncugate saw of the GPU during a set of profiled runs (a check's, or
/// the ones a baseline was recorded from).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GpuEnvironment {
    /// Other processes with a compute context on the GPU during the runs, or
    /// before they started (ncugate, ncu and the app excluded; on another GPU
    /// of the machine they are no neighbours), with the most memory each held.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) neighbours: Vec<GpuProcess>,
    /// NVML listed processes, but none of ncugate's own (another PID
    /// namespace, e.g. a container): they could not be told apart from the
    /// app by pid, only counted against ncugate's own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) unattributed: bool,
    /// Where MPS was seen set up (its pipe directory), if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mps_control: Option<String>,
    /// What the looks showed beyond the processes NVML named.
    #[serde(default, skip_serializing_if = "is_default")]
    pub(crate) tenancy: Tenancy,
    /// The highest GPU utilization NVML reported during the runs, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) max_utilization_pct: Option<u32>,
    /// The mean SM clock over the kernels, Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sm_clock_hz: Option<f64>,
    /// Each kernel's SM clock and elapsed cycles.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) kernels: BTreeMap<String, KernelClock>,
    /// Set when the runs were made on a shared GPU: what showed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shared: Option<String>,
}

impl GpuEnvironment {
    /// The environment of `runs`, with the NVML `samples` taken while they were profiled.
    pub(crate) fn observe(runs: &[crate::model::Run], samples: &[Sample]) -> GpuEnvironment {
        let kernels = clock::of(runs);
        let processes = || {
            samples
                .iter()
                .filter(|s| s.phase == Phase::During)
                .flat_map(|s| &s.processes)
        };
        // The GPUs (and MIG instances) the app used: a process on another GPU
        // of the machine, or in another MIG instance of ours, is no neighbour.
        let ours: Vec<(u32, Option<u32>)> = processes()
            .filter(|p| p.ours)
            .map(|p| (p.device, p.gpu_instance))
            .collect();
        let saw_ours = !ours.is_empty();
        let mut others = 0;
        let mut neighbours: Vec<GpuProcess> = Vec::new();
        for p in processes().filter(|p| !p.ours && !signals::mps_server(p)) {
            others += 1;
            if saw_ours && !ours.iter().any(|o| same_partition(*o, p)) {
                continue;
            }
            add(&mut neighbours, p);
        }
        let unattributed = !saw_ours && others > 0;
        if unattributed {
            neighbours.clear();
        }
        let seen = signals::observe(samples, &ours);
        for p in &seen.before {
            add(&mut neighbours, p);
        }
        neighbours.sort_by_key(|n| n.pid);
        GpuEnvironment {
            neighbours,
            unattributed,
            tenancy: seen.tenancy,
            mps_control: samples.iter().find_map(|s| s.mps_control.clone()),
            max_utilization_pct: samples.iter().filter_map(|s| s.utilization_pct).max(),
            sm_clock_hz: clock::mean_hz(&kernels),
            kernels,
            shared: None,
        }
    }

    /// When these runs stand alone (a baseline being recorded): what shows
    /// they shared the GPU — a neighbour NVML saw, or another signal but the
    /// clock (which needs a baseline).
    pub(crate) fn shared_alone(&self) -> Option<String> {
        let words = self.words(false);
        (!words.is_empty()).then(|| words.join("; "))
    }

    /// The signals these runs show but the clock's, in report order.
    fn signals(&self) -> Vec<Signal> {
        let mut found = self.tenancy.signals();
        if self.neighbours.iter().any(|n| !n.hidden) {
            found.push(Signal::ProcessListed);
        }
        if self.neighbours.iter().any(|n| n.hidden) {
            found.push(Signal::ProcessCount);
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// The words for each signal but the clock's; `utilization`: with the
    /// highest utilization seen beside a neighbour.
    fn words(&self, utilization: bool) -> Vec<String> {
        let mut parts = Vec::new();
        if !self.neighbours.is_empty() {
            parts.push(format!("GPU shared with {}", neighbours(&self.neighbours)));
            if let (Some(u), true) = (self.max_utilization_pct, utilization) {
                parts.push(format!("utilization up to {u}%"));
            }
        }
        parts.extend(self.tenancy.words());
        parts
    }
}

/// Adds `p` to `list`, or the most memory it held to its entry there.
fn add(list: &mut Vec<GpuProcess>, p: &GpuProcess) {
    match list.iter_mut().find(|n| n.pid == p.pid) {
        Some(n) => n.memory_bytes = n.memory_bytes.max(p.memory_bytes),
        None => list.push(p.clone()),
    }
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// A check's run on a shared GPU: the evidence, as every report words it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SharedGpu {
    /// `shared_gpu` as the check applied it.
    pub(crate) policy: Policy,
    /// What showed it, in one sentence ("GPU shared with pid 4242 python3,
    /// 12.3 GB; SM clock 1466 MHz vs 1969 MHz in the baseline").
    pub evidence: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub neighbours: Vec<GpuProcess>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sm_clock_hz: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) baseline_sm_clock_hz: Option<f64>,
    /// The SM clock against the baseline's, kernel by kernel (the mean of
    /// the ratios), when both have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sm_clock_ratio: Option<f64>,
    /// What detected the shared GPU; each stands on the numbers beside it.
    #[serde(default)]
    pub signals: Vec<Signal>,
    /// The numbers of the signals that do not name a process.
    #[serde(default, skip_serializing_if = "is_default")]
    pub(crate) tenancy: Tenancy,
    /// Checks of sensitive rules that were not gated.
    #[serde(default)]
    pub(crate) not_gated: usize,
    /// Of those, the ones beyond their allowance: shown as warnings.
    #[serde(default)]
    pub(crate) over_allowance: usize,
}

impl SharedGpu {
    /// The line every report's header shows.
    pub(crate) fn headline(&self) -> String {
        let what = match self.policy {
            Policy::Warn if self.not_gated > 0 => format!(
                "; {} not gated ({} beyond the allowance, shown as warnings)",
                crate::format::count(self.not_gated, "sensitive check", "sensitive checks"),
                self.over_allowance
            ),
            Policy::Warn => String::new(),
            Policy::Refuse => "; refused (shared_gpu = \"refuse\")".into(),
            Policy::Gate => "; every rule gated anyway (shared_gpu = \"gate\")".into(),
        };
        let by: Vec<&str> = self.signals.iter().map(|s| s.words()).collect();
        format!("{} (detected by {}){what}", self.evidence, by.join(", "))
    }

    /// Why this evidence does not hold up on its own numbers (a report read
    /// back claims a shared GPU); `None` when every signal it names does.
    pub(crate) fn unsupported(&self) -> Option<String> {
        if self.signals.is_empty() {
            return Some("its shared-GPU evidence names no signal that detected it".into());
        }
        let t = &self.tenancy;
        self.signals
            .iter()
            .find(|s| match s {
                Signal::ProcessListed => !self.neighbours.iter().any(|n| !n.hidden),
                Signal::ProcessCount => {
                    !self.neighbours.iter().any(|n| n.hidden)
                        && t.processes_beyond_own.is_none_or(|n| n == 0)
                }
                Signal::ClockDrop => !self
                    .sm_clock_ratio
                    .is_some_and(|r| r.is_finite() && r > 0.0 && r <= 1.0 - CLOCK_DROP),
                other => !t.show(**other),
            })
            .map(|s| {
                format!(
                    "its shared-GPU signal `{}` has no numbers in the report that show it",
                    s.words()
                )
            })
    }
}

/// Whether the `current` runs shared their GPU, judged against the
/// `baseline`'s environment: a neighbour NVML saw or counted, memory or
/// activity that is not the app's, MPS clients beyond its own, or an SM
/// clock [`CLOCK_DROP`] or more under the baseline's. `None` on a quiet GPU.
pub(crate) fn assess(
    current: &GpuEnvironment,
    baseline: Option<&GpuEnvironment>,
) -> Option<SharedGpu> {
    let base = baseline.filter(|b| !b.kernels.is_empty());
    let ratio = base.and_then(|b| clock::ratio(&current.kernels, &b.kernels));
    let dropped = ratio.is_some_and(|r| r <= 1.0 - CLOCK_DROP);
    let mut signals = current.signals();
    if signals.is_empty() && !dropped {
        return None;
    }
    let baseline_hz = base.and_then(|b| clock::mean_hz(&b.kernels));
    let mut parts = current.words(true);
    match (current.sm_clock_hz, baseline_hz, ratio) {
        (Some(now), Some(then), Some(r)) => {
            let mut clock = format!("SM clock {} vs {} in the baseline", mhz(now), mhz(then));
            if dropped {
                clock.push_str(&format!(" ({:+.0}%", (r - 1.0) * 100.0));
                if signals.is_empty() {
                    clock.push_str(": another process, a power or a thermal limit");
                }
                clock.push(')');
                signals.push(Signal::ClockDrop);
            }
            parts.push(clock);
        }
        (Some(now), _, _) => parts.push(format!("SM clock {}", mhz(now))),
        _ => {}
    }
    signals.sort_unstable();
    Some(SharedGpu {
        policy: Policy::default(),
        evidence: parts.join("; "),
        neighbours: current.neighbours.clone(),
        sm_clock_hz: current.sm_clock_hz,
        baseline_sm_clock_hz: baseline_hz,
        sm_clock_ratio: ratio,
        signals,
        tenancy: current.tenancy.clone(),
        not_gated: 0,
        over_allowance: 0,
    })
}

/// Whether `p` runs where one of ours ran: the same GPU and, when the GPU
/// is split into MIG instances, the same instance (unknown matches any).
fn same_partition((device, instance): (u32, Option<u32>), p: &GpuProcess) -> bool {
    device == p.device
        && match (instance, p.gpu_instance) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        }
}

/// `pid 1791 python3, 1.2 GB` for each neighbour (three at most, then a
/// count); `another process, pid not visible from this container, 4.8 GB`
/// for one of another PID namespace.
pub(crate) fn neighbours(list: &[GpuProcess]) -> String {
    let mut words: Vec<String> = list
        .iter()
        .take(3)
        .map(|p| {
            let mut w = format!("pid {}", p.pid);
            if p.hidden {
                w = "another process, pid not visible from this container".into();
            } else if !p.name.is_empty() {
                w.push(' ');
                w.push_str(&crate::text::escape::printable(p.name.clone()));
            }
            if let Some(b) = p.memory_bytes {
                w.push_str(&format!(", {:.1} GB", b as f64 / 1e9));
            }
            w
        })
        .collect();
    if list.len() > 3 {
        words.push(format!("{} more", list.len() - 3));
    }
    words.join("; ")
}

/// `1466 MHz`.
pub(crate) fn mhz(hz: f64) -> String {
    format!("{:.0} MHz", hz / 1e6)
}

#[cfg(test)]
mod tests;
