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

/// NVML, opened once, with every device it could open.
pub(crate) struct Gpus {
    nvml: nvml_wrapper::Nvml,
    count: u32,
}

impl Gpus {
    /// NVML and its devices; `None` when NVML cannot be loaded or initialized.
    pub(crate) fn open() -> Option<Gpus> {
        let nvml = nvml_wrapper::Nvml::init().ok()?;
        let count = nvml.device_count().unwrap_or(0);
        Some(Gpus { nvml, count })
    }

    /// Every device's compute processes now, and the highest utilization
    /// (percent of time a kernel ran) over the devices, when NVML says.
    pub(crate) fn look(&self) -> (Vec<Process>, Option<u32>) {
        let mut processes = Vec::new();
        let mut utilization: Option<u32> = None;
        for index in 0..self.count {
            let Ok(d) = self.nvml.device_by_index(index) else {
                continue;
            };
            if let Ok(u) = d.utilization_rates() {
                utilization = Some(utilization.unwrap_or(0).max(u.gpu));
            }
            for p in d.running_compute_processes().unwrap_or_default() {
                processes.push(Process {
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
        (processes, utilization)
    }

    /// The process's name as NVML (else `/proc`) knows it; empty when neither does.
    pub(crate) fn process_name(&self, pid: u32) -> String {
        self.nvml
            .sys_process_name(pid, 64)
            .ok()
            .or_else(|| std::fs::read_to_string(format!("/proc/{pid}/comm")).ok())
            .unwrap_or_default()
    }
}

/// Calls `look` every `every` until `stop` is set, at least once (the last
/// look comes after `stop`, so a short run is still seen), and collects what
/// it returns.
pub(crate) fn every<T>(every: Duration, stop: &AtomicBool, mut look: impl FnMut() -> T) -> Vec<T> {
    let mut out = Vec::new();
    loop {
        out.push(look());
        if stop.load(Ordering::Relaxed) {
            break;
        }
        std::thread::sleep(every);
    }
    out
}
