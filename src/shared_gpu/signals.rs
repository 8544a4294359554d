//! Evidence of another tenant that holds where NVML's pids name nothing:
//! ncugate inside a PID namespace (a container) sees every GPU process —
//! its own app included — under a pid of the host. So besides the
//! processes it can name, the probe's looks are read for:
//!
//! - **process count**: more compute processes on the app's GPU than
//!   ncugate's own tree has processes with the CUDA driver loaded;
//! - **memory unlisted**: device memory in use before launch that no
//!   process NVML lists holds. Inside a PID namespace NVML lists only the
//!   namespace's own processes, under its pids: a tenant of another
//!   container is not listed at all, but its memory is in use. On an H100
//!   an idle GPU's memory in use read 0 MiB, and 2.7–2.8 GB beside a
//!   neighbour NVML did not list (`scripts/gpu-container-e2e.sh`);
//! - **memory beyond own**: device memory in use beyond the idle
//!   reservation (measured before launch) and ncugate's own processes, 2 GiB
//!   or more: a tenant that starts while the app runs. On a quiet H100 it
//!   reads 8 MiB a look (the driver's own); ncu's kernel replay, saving
//!   memory between passes, showed up to 626 MiB in one look;
//! - **activity while idle**: GPU or memory activity in the pre-launch
//!   window, while the app was not running;
//! - **MPS**: more MPS clients than ncugate's own processes.
//!
//! A count is evidence only when two looks in a row show it: a process of
//! ours that is exiting has left `/proc`'s maps a moment before NVML
//! drops its context.

use super::probe::{GpuProcess, Phase, Sample};
use serde::{Deserialize, Serialize};

/// Device memory this far beyond the idle reservation and ncugate's own
/// processes is another tenant's: well above what ncu's replay holds for a
/// moment (626 MiB measured), below what a neighbour's job holds.
pub(crate) const MEMORY_BEYOND: u64 = 2 << 30;

/// What earlier versions required of memory beyond own: their reports
/// that name it are read against it.
const MEMORY_BEYOND_BEFORE: u64 = 512 << 20;

/// Device memory this much in use before launch, held by no process NVML
/// lists, is another tenant's: an idle H100 reads 0 MiB, and older drivers
/// count a reservation of a few hundred MiB in it.
pub(crate) const MEMORY_UNLISTED: u64 = 1 << 30;

/// GPU or memory activity this high while the app is not running is
/// another tenant's: an idle GPU reads 0%.
pub(crate) const IDLE_ACTIVITY_PCT: u32 = 10;

/// What detected a shared GPU, as every report names it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// NVML listed a process that is not ncugate's, by a pid seen here.
    ProcessListed,
    /// More compute processes than ncugate's own, or one listed before the
    /// app started whose pid is not visible here.
    ProcessCount,
    /// Device memory in use beyond the idle reservation and ncugate's own.
    MemoryBeyondOwn,
    /// GPU or memory activity while the app was not running.
    ActivityWhileIdle,
    /// The SM clock fell against the baseline's.
    ClockDrop,
    /// More MPS clients than ncugate's own processes.
    Mps,
    /// Device memory in use before launch that no listed process holds.
    MemoryUnlisted,
}

impl Signal {
    /// The signal's name in reports.
    pub(crate) fn words(self) -> &'static str {
        match self {
            Signal::ProcessListed => "process listed",
            Signal::ProcessCount => "process count",
            Signal::MemoryBeyondOwn => "memory beyond own",
            Signal::ActivityWhileIdle => "activity while idle",
            Signal::ClockDrop => "clock drop",
            Signal::Mps => "MPS",
            Signal::MemoryUnlisted => "memory unlisted",
        }
    }
}

/// What the looks show of other tenants beyond the processes NVML names:
/// the largest of each, seen where the app ran.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Tenancy {
    /// Compute processes beyond ncugate's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) processes_beyond_own: Option<u32>,
    /// Device memory in use beyond the idle reservation and ncugate's own, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) memory_beyond_own_bytes: Option<u64>,
    /// GPU activity while the app was not running, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) idle_gpu_pct: Option<u32>,
    /// Memory activity while the app was not running, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) idle_memory_pct: Option<u32>,
    /// MPS clients beyond ncugate's own processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mps_clients_beyond_own: Option<u32>,
    /// Device memory in use before launch that no process NVML listed
    /// held (the least of the pre-launch looks), bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) memory_unlisted_bytes: Option<u64>,
}

impl Tenancy {
    /// The signals these numbers show, each at its threshold.
    pub(crate) fn signals(&self) -> Vec<Signal> {
        let mut found = Vec::new();
        if self.processes_beyond_own.is_some_and(|n| n > 0) {
            found.push(Signal::ProcessCount);
        }
        if self
            .memory_beyond_own_bytes
            .is_some_and(|b| b >= MEMORY_BEYOND)
        {
            found.push(Signal::MemoryBeyondOwn);
        }
        if self.idle_gpu_pct.max(self.idle_memory_pct) >= Some(IDLE_ACTIVITY_PCT) {
            found.push(Signal::ActivityWhileIdle);
        }
        if self.mps_clients_beyond_own.is_some_and(|n| n > 0) {
            found.push(Signal::Mps);
        }
        if self
            .memory_unlisted_bytes
            .is_some_and(|b| b >= MEMORY_UNLISTED)
        {
            found.push(Signal::MemoryUnlisted);
        }
        found
    }

    /// Whether these numbers show `signal`: one of [`Tenancy::signals`], or
    /// memory beyond own at the threshold of earlier versions (whose reports
    /// may name it).
    pub(crate) fn show(&self, signal: Signal) -> bool {
        match signal {
            Signal::MemoryBeyondOwn => self
                .memory_beyond_own_bytes
                .is_some_and(|b| b >= MEMORY_BEYOND_BEFORE),
            other => self.signals().contains(&other),
        }
    }

    /// The words for each signal shown, in the order of [`Tenancy::signals`].
    pub(crate) fn words(&self) -> Vec<String> {
        let mut words = Vec::new();
        for s in self.signals() {
            words.push(match s {
                Signal::ProcessCount => {
                    let n = self.processes_beyond_own.unwrap_or(0) as usize;
                    format!(
                        "{} on the GPU beyond ncugate's own",
                        crate::format::count(n, "compute process", "compute processes")
                    )
                }
                Signal::ActivityWhileIdle => format!(
                    "GPU {}% and memory {}% busy while the app was not running",
                    self.idle_gpu_pct.unwrap_or(0),
                    self.idle_memory_pct.unwrap_or(0)
                ),
                Signal::Mps => format!(
                    "{} beyond ncugate's own",
                    crate::format::count(
                        self.mps_clients_beyond_own.unwrap_or(0) as usize,
                        "MPS client",
                        "MPS clients"
                    )
                ),
                Signal::MemoryBeyondOwn => format!(
                    "{:.1} GB of device memory in use beyond ncugate's own and the idle reservation",
                    self.memory_beyond_own_bytes.unwrap_or(0) as f64 / 1e9
                ),
                Signal::MemoryUnlisted => format!(
                    "{:.1} GB of device memory in use before launch that no listed process holds",
                    self.memory_unlisted_bytes.unwrap_or(0) as f64 / 1e9
                ),
                Signal::ProcessListed | Signal::ClockDrop => continue,
            });
        }
        words
    }
}

/// What the looks show: the numbers, and the processes NVML listed on the
/// app's GPU before it started (two looks in a row), none of them ours.
pub(crate) struct Seen {
    pub(crate) tenancy: Tenancy,
    pub(crate) before: Vec<GpuProcess>,
}

/// Reads `samples` for other tenants where the app ran: `ours`, the GPUs
/// (and MIG instances) of the processes NVML named as ncugate's own.
pub(crate) fn observe(samples: &[Sample], ours: &[(u32, Option<u32>)]) -> Seen {
    let place = app_place(samples, ours);
    let here = |p: &GpuProcess| place.iter().any(|o| super::same_partition(*o, p));
    let named_ours = !ours.is_empty();
    let counts: Vec<Option<u32>> = samples
        .iter()
        .map(|s| beyond_own(s, &here, named_ours))
        .collect();
    let mps: Vec<Option<u32>> = samples.iter().map(|s| mps_beyond(s, &place)).collect();
    // Device-wide numbers say nothing of one MIG instance.
    let mig = samples
        .iter()
        .flat_map(|s| &s.processes)
        .any(|p| p.gpu_instance.is_some());
    let (memory, unlisted, idle_gpu, idle_memory) = if mig {
        (None, None, None, None)
    } else {
        let mut devices: Vec<u32> = place.iter().map(|(d, _)| *d).collect();
        devices.sort_unstable();
        devices.dedup();
        let memory: Vec<Option<u64>> = memory_beyond(samples, &devices, named_ours);
        let unlisted = devices
            .iter()
            .map(|d| unlisted_before(samples, *d))
            .try_fold(0u64, |sum, b| b.map(|b| sum.saturating_add(b)))
            .filter(|_| !devices.is_empty());
        let idle = |pick: fn(&super::probe::DeviceLook) -> Option<u32>| {
            before(samples)
                .flat_map(|s| &s.devices)
                .filter(|d| devices.contains(&d.device))
                .filter_map(pick)
                .max()
        };
        (
            persistent(samples, &memory),
            unlisted,
            idle(|d| d.gpu_pct),
            idle(|d| d.memory_pct),
        )
    };
    Seen {
        tenancy: Tenancy {
            processes_beyond_own: persistent(samples, &counts),
            memory_beyond_own_bytes: memory,
            idle_gpu_pct: idle_gpu,
            idle_memory_pct: idle_memory,
            mps_clients_beyond_own: persistent(samples, &mps),
            memory_unlisted_bytes: unlisted,
        },
        before: listed_before(samples, &here),
    }
}

/// Device memory in use on `device` before launch beyond what the processes
/// NVML listed then held: the least of the pre-launch looks (memory a
/// process frees as it exits shows in one look only). `None` without two
/// pre-launch looks that say.
fn unlisted_before(samples: &[Sample], device: u32) -> Option<u64> {
    let seen: Vec<u64> = before(samples)
        .filter_map(|s| unlisted(s, device))
        .collect();
    (seen.len() >= 2).then(|| seen.into_iter().min()).flatten()
}

/// Device memory in use on `device` in one look beyond what the processes
/// it lists there hold; `None` where NVML did not say.
fn unlisted(sample: &Sample, device: u32) -> Option<u64> {
    let used = sample
        .devices
        .iter()
        .find(|d| d.device == device)?
        .memory_used_bytes?;
    Some(used.saturating_sub(listed_memory(sample, device, &|_| true)?))
}

/// The memory the processes `own` picks hold on `device` in one look;
/// `None` where NVML did not say for one of them.
fn listed_memory(sample: &Sample, device: u32, own: &dyn Fn(&GpuProcess) -> bool) -> Option<u64> {
    sample
        .processes
        .iter()
        .filter(|p| p.device == device && own(p))
        .map(|p| p.memory_bytes)
        .try_fold(0u64, |sum, b| b.map(|b| sum.saturating_add(b)))
}

/// The pre-launch looks.
fn before(samples: &[Sample]) -> impl Iterator<Item = &Sample> {
    samples.iter().filter(|s| s.phase == Phase::Before)
}

/// Where the app ran: where NVML named its processes; else the GPUs that
/// listed more processes while it ran than before it started; else every
/// GPU the looks saw.
fn app_place(samples: &[Sample], ours: &[(u32, Option<u32>)]) -> Vec<(u32, Option<u32>)> {
    if !ours.is_empty() {
        return ours.to_vec();
    }
    let mut all: Vec<u32> = samples
        .iter()
        .flat_map(|s| {
            s.devices
                .iter()
                .map(|d| d.device)
                .chain(s.processes.iter().map(|p| p.device))
        })
        .collect();
    all.sort_unstable();
    all.dedup();
    let most = |device: u32, phase: Phase| {
        samples
            .iter()
            .filter(|s| s.phase == phase)
            .map(|s| s.processes.iter().filter(|p| p.device == device).count())
            .max()
    };
    let rose: Vec<u32> = all
        .iter()
        .copied()
        .filter(
            |d| match (most(*d, Phase::Before), most(*d, Phase::During)) {
                (Some(b), Some(d)) => d > b,
                _ => false,
            },
        )
        .collect();
    let devices = if rose.is_empty() { all } else { rose };
    devices.into_iter().map(|d| (d, None)).collect()
}

/// The compute processes `here` beyond ncugate's own in one look: those it
/// named, or those of its tree with the CUDA driver loaded, whichever is
/// more. Where NVML named ours (`named_ours`), a neighbour it named by a pid
/// seen here is evidence already and not counted again. `None` when the
/// look cannot say how many are ours.
fn beyond_own(
    sample: &Sample,
    here: &impl Fn(&GpuProcess) -> bool,
    named_ours: bool,
) -> Option<u32> {
    let listed: Vec<&GpuProcess> = sample
        .processes
        .iter()
        .filter(|p| here(p) && !mps_server(p) && (!named_ours || p.ours || p.hidden))
        .collect();
    let named = listed.iter().filter(|p| p.ours).count();
    let own = match sample.own_cuda_processes {
        Some(n) => (n as usize).max(named),
        None if named > 0 => named,
        None => return None,
    };
    // Under MPS, NVML lists the MPS server among the compute processes; one
    // whose pid names nothing here is allowed for where MPS has clients.
    let server = sample
        .devices
        .iter()
        .any(|d| d.mps_clients.is_some_and(|n| n > 0))
        && !sample.processes.iter().any(mps_server);
    let own = own + usize::from(server);
    Some(u32::try_from(listed.len().saturating_sub(own)).unwrap_or(u32::MAX))
}

/// The MPS server, which NVML lists as a compute process: it runs the
/// clients' work (counted as MPS clients), it is no tenant of its own.
pub(crate) fn mps_server(p: &GpuProcess) -> bool {
    p.name == "nvidia-cuda-mps-server"
}

/// The MPS clients where the app ran beyond ncugate's own processes with the
/// CUDA driver loaded.
fn mps_beyond(sample: &Sample, place: &[(u32, Option<u32>)]) -> Option<u32> {
    let own = sample.own_cuda_processes?;
    let clients: u32 = sample
        .devices
        .iter()
        .filter(|d| place.iter().any(|(p, _)| *p == d.device))
        .filter_map(|d| d.mps_clients)
        .sum();
    Some(clients.saturating_sub(own))
}

/// Each look's device memory in use on `devices` beyond the idle
/// reservation and ncugate's own processes. The reservation is what the
/// pre-launch looks saw in use beyond the processes listed then. Ours are
/// those NVML named (`named_ours`), else those first listed after launch.
fn memory_beyond(samples: &[Sample], devices: &[u32], named_ours: bool) -> Vec<Option<u64>> {
    let pre: Vec<u32> = before(samples)
        .flat_map(|s| s.processes.iter().map(|p| p.pid))
        .collect();
    let is_ours = |p: &GpuProcess| {
        if named_ours {
            p.ours
        } else {
            !pre.contains(&p.pid)
        }
    };
    let reservation = |device: u32| before(samples).filter_map(|s| unlisted(s, device)).min();
    let reserved: Vec<(u32, u64)> = devices
        .iter()
        .filter_map(|d| reservation(*d).map(|r| (*d, r)))
        .collect();
    samples
        .iter()
        .map(|s| {
            let mut total: Option<u64> = None;
            for (device, reserved) in &reserved {
                let used = s
                    .devices
                    .iter()
                    .find(|d| d.device == *device)?
                    .memory_used_bytes?;
                let own = listed_memory(s, *device, &is_ours)?;
                let beyond = used.saturating_sub(*reserved).saturating_sub(own);
                total = Some(total.unwrap_or(0).saturating_add(beyond));
            }
            total
        })
        .collect()
}

/// The largest value two looks in a row of the same phase both show (the
/// smaller of each pair); `None` when no pair has one.
fn persistent<T: Ord + Copy>(samples: &[Sample], values: &[Option<T>]) -> Option<T> {
    samples
        .windows(2)
        .zip(values.windows(2))
        .filter(|(s, _)| s[0].phase == s[1].phase)
        .filter_map(|(_, v)| Some(v[0]?.min(v[1]?)))
        .max()
}

/// The processes `here` that two pre-launch looks in a row listed, none of
/// them ours, with the most memory each held (those of another PID
/// namespace as the probe marked them: not visible here).
fn listed_before(samples: &[Sample], here: &impl Fn(&GpuProcess) -> bool) -> Vec<GpuProcess> {
    let mut found: Vec<GpuProcess> = Vec::new();
    for pair in samples.windows(2) {
        if pair.iter().any(|s| s.phase != Phase::Before) {
            continue;
        }
        for p in pair[0]
            .processes
            .iter()
            .filter(|p| here(p) && !p.ours && !mps_server(p))
        {
            let Some(again) = pair[1].processes.iter().find(|q| q.pid == p.pid) else {
                continue;
            };
            let memory = p.memory_bytes.max(again.memory_bytes);
            match found.iter_mut().find(|n| n.pid == p.pid) {
                Some(n) => n.memory_bytes = n.memory_bytes.max(memory),
                None => {
                    let mut p = p.clone();
                    p.memory_bytes = memory;
                    found.push(p);
                }
            }
        }
    }
    found
}
