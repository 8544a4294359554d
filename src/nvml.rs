//! The GPUs as NVML sees them, loaded at run time: one way to open NVML and
//! list each device's compute processes, which both samplers use — the
//! shared-GPU probe (`crate::shared_gpu::probe`: who else is on the GPU while
//! ncu runs) and the graph-memory audit (`crate::memory::sample`: how much
//! memory the app holds over time). Without NVML (no driver, a CPU-only
//! runner) there is nothing to look at, and each sampler says so its own way.

use nvml_wrapper::enums::device::UsedGpuMemory;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// One compute process on one device, as NVML lists it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Process {
    /// The device's index in NVML's order.
    pub(crate) device: u32,
    pub(crate) pid: u32,
    /// Device memory it uses; `None` where NVML cannot say (some MIG and
    /// container set-ups).
    pub(crate) memory_bytes: Option<u64>,
    /// The MIG GPU instance it runs in, when the device is partitioned.
    pub(crate) gpu_instance: Option<u32>,
}

/// One device's memory in use, activity and MPS clients, as far as NVML says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Device {
    pub(crate) device: u32,
    /// Memory info `used`: allocated memory, the driver's reservation excluded.
    pub(crate) memory_used_bytes: Option<u64>,
    /// Utilization rates: percent of the last sample period a kernel ran,
    /// and device memory was read or written.
    pub(crate) gpu_pct: Option<u32>,
    pub(crate) memory_pct: Option<u32>,
    /// The MPS clients listed on it; `None` where NVML cannot say.
    pub(crate) mps_clients: Option<u32>,
}

/// What one look at the GPUs saw: every device's compute processes and the
/// highest utilization (percent of time a kernel ran) over the devices,
/// when NVML says, and each device's memory and activity.
pub(crate) struct Look<'n> {
    pub(crate) processes: Vec<Process>,
    pub(crate) utilization_pct: Option<u32>,
    pub(crate) devices: Vec<Device>,
    nvml: &'n nvml_wrapper::Nvml,
}

impl Look<'_> {
    /// The process's name as NVML (else `/proc`) knows it; empty when neither does.
    pub(crate) fn process_name(&self, pid: u32) -> String {
        self.nvml
            .sys_process_name(pid, 64)
            .ok()
            .or_else(|| std::fs::read_to_string(format!("/proc/{pid}/comm")).ok())
            .unwrap_or_default()
    }
}

/// Opens NVML and its devices once, then looks at them every `every` until
/// `stop` is set, at least once (the last look comes after `stop`, so a
/// short run is still seen), and collects what `seen` makes of each look.
/// `None` when NVML cannot be loaded or initialized.
pub(crate) fn watch<T>(
    every: Duration,
    stop: &AtomicBool,
    seen: impl FnMut(&Look<'_>) -> T,
) -> Option<Vec<T>> {
    looks(|_| (!stop.load(Ordering::Relaxed)).then_some(every), seen)
}

/// Opens NVML and its devices once, then looks at them, and again after the
/// pause `next` gives for the number of looks so far, until it gives none.
fn looks<T>(
    mut next: impl FnMut(usize) -> Option<Duration>,
    mut seen: impl FnMut(&Look<'_>) -> T,
) -> Option<Vec<T>> {
    let nvml = nvml_wrapper::Nvml::init().ok()?;
    let count = nvml.device_count().unwrap_or(0);
    let devices: Vec<(u32, nvml_wrapper::Device<'_>)> = (0..count)
        .filter_map(|i| nvml.device_by_index(i).ok().map(|d| (i, d)))
        .collect();
    let mut out = Vec::new();
    loop {
        let mut look = Look {
            processes: Vec::new(),
            utilization_pct: None,
            devices: Vec::new(),
            nvml: &nvml,
        };
        for (index, d) in &devices {
            look_at(*index, d, &mut look);
        }
        out.push(seen(&look));
        match next(out.len()) {
            Some(pause) => std::thread::sleep(pause),
            None => break,
        }
    }
    Some(out)
}

/// `looks`, a fixed number of them: `count` looks, `pause(i)` after the `i`th.
pub(crate) fn window<T>(
    count: usize,
    mut pause: impl FnMut(usize) -> Duration,
    seen: impl FnMut(&Look<'_>) -> T,
) -> Option<Vec<T>> {
    looks(|done| (done < count).then(|| pause(done)), seen)
}

/// Adds device `index`'s processes, memory and activity to `look`.
fn look_at(index: u32, d: &nvml_wrapper::Device<'_>, look: &mut Look<'_>) {
    let rates = d.utilization_rates().ok();
    if let Some(u) = &rates {
        look.utilization_pct = Some(look.utilization_pct.unwrap_or(0).max(u.gpu));
    }
    look.devices.push(Device {
        device: index,
        memory_used_bytes: d.memory_info().ok().map(|m| m.used),
        gpu_pct: rates.as_ref().map(|u| u.gpu),
        memory_pct: rates.as_ref().map(|u| u.memory),
        mps_clients: d
            .mps_running_compute_processes()
            .ok()
            .map(|p| u32::try_from(p.len()).unwrap_or(u32::MAX)),
    });
    for p in d.running_compute_processes().unwrap_or_default() {
        look.processes.push(Process {
            device: index,
            pid: p.pid,
            memory_bytes: match p.used_gpu_memory {
                UsedGpuMemory::Used(b) => Some(b),
                UsedGpuMemory::Unavailable => None,
            },
            gpu_instance: p.gpu_instance_id,
        });
    }
}
