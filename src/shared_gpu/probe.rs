//! Looking at the GPU while ncu profiles: the other processes with a compute
//! context, and utilization, sampled through NVML in a background thread.
//! Behind [`GpuProbe`], so tests replay recorded samples.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often the NVML probe looks.
pub(crate) const EVERY: Duration = Duration::from_millis(250);

/// One process with a compute context on a GPU, as NVML lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GpuProcess {
    pub pid: u32,
    /// The NVML index of the GPU it has its context on.
    #[serde(default)]
    pub device: u32,
    /// The process name NVML (or `/proc`) gives; empty when unknown.
    #[serde(default)]
    pub name: String,
    /// GPU memory it holds, bytes, when NVML says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// ncugate itself, ncu or the profiled app (ncugate's process tree).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ours: bool,
    /// The MIG GPU instance it runs in, when the GPU is split into MIG
    /// instances (NVML gives none otherwise). Instances have their own SMs,
    /// L2 slices and memory: a process in another instance is no neighbour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_instance: Option<u32>,
}

/// One look at the GPUs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Sample {
    /// The highest utilization (percent of time a kernel ran) over the GPUs, when NVML says.
    #[serde(default)]
    pub utilization_pct: Option<u32>,
    #[serde(default)]
    pub processes: Vec<GpuProcess>,
}

/// Something that can watch the GPU while a profiled run goes on.
pub trait GpuProbe: Sync {
    /// Looks every [`EVERY`] until `stop` is set (at least once), and
    /// returns what it saw; empty when it cannot look (no NVML).
    fn watch(&self, stop: &AtomicBool) -> Vec<Sample>;
}

/// Runs `f` while `probe` watches the GPU from a background thread.
pub(crate) fn during<T>(probe: Option<&dyn GpuProbe>, f: impl FnOnce() -> T) -> (T, Vec<Sample>) {
    let Some(probe) = probe else {
        return (f(), Vec::new());
    };
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let watcher = scope.spawn(|| probe.watch(&stop));
        let value = f();
        stop.store(true, Ordering::Relaxed);
        (value, watcher.join().unwrap_or_default())
    })
}

/// Samples recorded earlier, played back.
#[derive(Debug, Clone, Default)]
pub(crate) struct Replayed(pub Vec<Sample>);

impl GpuProbe for Replayed {
    fn watch(&self, _stop: &AtomicBool) -> Vec<Sample> {
        self.0.clone()
    }
}

/// The GPUs as NVML sees them, loaded at run time (no NVML, no samples).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Nvml {
    /// The descendants of a process (ncugate's own tree: ncu and the app
    /// are not neighbours).
    pub(crate) family: fn(u32) -> Vec<u32>,
}

impl GpuProbe for Nvml {
    fn watch(&self, stop: &AtomicBool) -> Vec<Sample> {
        let me = std::process::id();
        crate::nvml::watch(EVERY, stop, |look| {
            let mut ours = (self.family)(me);
            ours.push(me);
            let processes = look
                .processes
                .iter()
                .map(|p| GpuProcess {
                    pid: p.pid,
                    device: p.device,
                    name: short_name(&look.process_name(p.pid)),
                    memory_bytes: p.memory_bytes,
                    ours: ours.contains(&p.pid),
                    gpu_instance: p.gpu_instance,
                })
                .collect();
            Sample {
                utilization_pct: look.utilization_pct,
                processes,
            }
        })
        .unwrap_or_default()
    }
}

/// A process name as reports show it: the program's file name, printable
/// only (a bidi control would reorder the note it is quoted in).
fn short_name(name: &str) -> String {
    let name = name.trim();
    let base = name.rsplit('/').next().unwrap_or(name);
    base.chars()
        .filter(|&c| !crate::text::escape::unprintable(c))
        .take(64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replayed_probe_gives_its_samples_and_no_probe_none() {
        let sample = Sample {
            utilization_pct: Some(100),
            processes: vec![GpuProcess {
                pid: 1791,
                device: 0,
                name: "python3".into(),
                memory_bytes: Some(1130 << 20),
                ours: false,
                gpu_instance: None,
            }],
        };
        let probe = Replayed(vec![sample.clone()]);
        let (v, seen) = during(Some(&probe), || 7);
        assert_eq!((v, seen), (7, vec![sample]));
        let (v, seen) = during(None, || 8);
        assert_eq!((v, seen.len()), (8, 0));
    }

    #[test]
    fn names_are_short_and_printable() {
        assert_eq!(short_name("/usr/bin/python3\n"), "python3");
        assert_eq!(short_name("a\u{1b}[31mb"), "a[31mb");
        assert_eq!(short_name("gpt\u{202e}txt.exe\u{2028}"), "gpttxt.exe");
    }
}
