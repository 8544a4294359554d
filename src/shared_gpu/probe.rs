//! Looking at the GPU while ncu profiles: the other processes with a compute
//! context, and utilization, sampled through NVML in a background thread;
//! and a short window before ncu starts, while the app is not running
//! ([`Phase::Before`]). Behind [`GpuProbe`], so tests replay recorded samples.
//!
//! Each look also says what NVML's pids cannot say inside a PID namespace (a
//! container): how many of ncugate's own processes have the CUDA driver
//! loaded (counted from `/proc`), each device's memory in use and activity,
//! and MPS clients. [`super::signals`] turns them into evidence.

use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the NVML probe looks.
pub(crate) const EVERY: Duration = Duration::from_millis(250);

/// How long the pre-launch window looks at the GPU: two looks this far apart.
pub(crate) const BEFORE: Duration = Duration::from_millis(250);

/// How long after ncugate's own last GPU work a utilization reading is free
/// of it: NVML's utilization covers its last sample period, 1/6 s to 1 s
/// depending on the product.
pub(crate) const SETTLE: Duration = Duration::from_secs(1);

/// One process with a compute context on a GPU, as NVML lists it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Its pid is not visible here (`/proc` has no such process): it runs in
    /// another PID namespace, e.g. outside ncugate's container.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
}

/// When a look was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// In the pre-launch window: ncu and the app not started yet.
    Before,
    /// While ncu profiled the app.
    #[default]
    During,
}

/// One device in one look: its memory in use and activity, when NVML says.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeviceLook {
    /// The NVML index of the GPU.
    pub device: u32,
    /// Device memory allocated (NVML's memory info `used`, the driver's
    /// reservation excluded), bytes.
    #[serde(default)]
    pub memory_used_bytes: Option<u64>,
    /// Percent of the last sample period a kernel ran; only in looks taken
    /// [`SETTLE`] or more after ncugate's own last GPU work.
    #[serde(default)]
    pub gpu_pct: Option<u32>,
    /// Percent of the last sample period device memory was read or written; as `gpu_pct`.
    #[serde(default)]
    pub memory_pct: Option<u32>,
    /// The MPS clients NVML lists on it (none without MPS).
    #[serde(default)]
    pub mps_clients: Option<u32>,
}

/// One look at the GPUs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Sample {
    /// The highest utilization (percent of time a kernel ran) over the GPUs, when NVML says.
    #[serde(default)]
    pub utilization_pct: Option<u32>,
    #[serde(default)]
    pub processes: Vec<GpuProcess>,
    #[serde(default)]
    pub phase: Phase,
    #[serde(default)]
    pub devices: Vec<DeviceLook>,
    /// How many of ncugate's own processes (ncu, the app and theirs) had the
    /// CUDA driver loaded, counted from `/proc`: inside a PID namespace NVML
    /// lists them with pids of the host, which name nothing here.
    #[serde(default)]
    pub own_cuda_processes: Option<u32>,
    /// Where MPS was seen set up for ncugate's processes (its
    /// `CUDA_MPS_PIPE_DIRECTORY`, or the default pipe directory with a
    /// control pipe); pre-launch looks only.
    #[serde(default)]
    pub mps_control: Option<String>,
}

/// Something that can watch the GPU while a profiled run goes on.
pub trait GpuProbe: Sync {
    /// Looks every [`EVERY`] until `stop` is set (at least once), and
    /// returns what it saw; empty when it cannot look (no NVML).
    fn watch(&self, stop: &AtomicBool) -> Vec<Sample>;

    /// The pre-launch window: looks at the GPU while ncugate's app is not
    /// running ([`Phase::Before`]); none by default.
    fn before(&self) -> Vec<Sample> {
        Vec::new()
    }
}

/// Runs `f` while `probe` watches the GPU from a background thread, after
/// the probe's pre-launch window.
pub(crate) fn during<T>(probe: Option<&dyn GpuProbe>, f: impl FnOnce() -> T) -> (T, Vec<Sample>) {
    let Some(probe) = probe else {
        return (f(), Vec::new());
    };
    let mut samples = probe.before();
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let watcher = scope.spawn(|| probe.watch(&stop));
        let value = f();
        stop.store(true, Ordering::Relaxed);
        samples.extend(watcher.join().unwrap_or_default());
        (value, samples)
    })
}

/// Samples recorded earlier, played back: those of [`Phase::Before`] as the
/// pre-launch window, the others as the watch.
#[derive(Debug, Clone, Default)]
pub(crate) struct Replayed(pub Vec<Sample>);

impl GpuProbe for Replayed {
    fn watch(&self, _stop: &AtomicBool) -> Vec<Sample> {
        self.0
            .iter()
            .filter(|s| s.phase == Phase::During)
            .cloned()
            .collect()
    }

    fn before(&self) -> Vec<Sample> {
        self.0
            .iter()
            .filter(|s| s.phase == Phase::Before)
            .cloned()
            .collect()
    }
}

/// The GPUs as NVML sees them, loaded at run time (no NVML, no samples).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Nvml {
    /// The descendants of a process (ncugate's own tree: ncu and the app
    /// are not neighbours).
    pub(crate) family: fn(u32) -> Vec<u32>,
    /// Whether a process has the CUDA driver loaded.
    pub(crate) cuda: fn(u32) -> bool,
    /// How long ago ncugate started, where `/proc` says.
    pub(crate) age: fn() -> Option<Duration>,
}

/// When ncugate's own last profiled run ended: utilization read sooner
/// than [`SETTLE`] after it may be that run's.
static LAST_RUN_END: Mutex<Option<Instant>> = Mutex::new(None);

impl Nvml {
    /// What one look saw, in the probe's terms; `settled`: whether
    /// utilization is free of ncugate's own work.
    fn sample(&self, look: &crate::nvml::Look<'_>, phase: Phase, settled: bool) -> Sample {
        let me = std::process::id();
        let mut ours = (self.family)(me);
        let own_cuda = ours.iter().filter(|pid| (self.cuda)(**pid)).count();
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
                hidden: !std::path::Path::new(&format!("/proc/{}", p.pid)).exists(),
            })
            .collect();
        let devices = look
            .devices
            .iter()
            .map(|d| DeviceLook {
                device: d.device,
                memory_used_bytes: d.memory_used_bytes,
                gpu_pct: d.gpu_pct.filter(|_| settled),
                memory_pct: d.memory_pct.filter(|_| settled),
                mps_clients: d.mps_clients,
            })
            .collect();
        Sample {
            utilization_pct: look.utilization_pct,
            processes,
            phase,
            devices,
            own_cuda_processes: Some(u32::try_from(own_cuda).unwrap_or(u32::MAX)),
            mps_control: None,
        }
    }

    /// From when utilization is free of ncugate's own work: [`SETTLE`] after
    /// its last profiled run, or after it started (an earlier ncugate's app
    /// may have run until then).
    fn settled_from(&self) -> Option<Instant> {
        let last = *LAST_RUN_END.lock().unwrap_or_else(|e| e.into_inner());
        let since = last.or_else(|| (self.age)().and_then(|age| Instant::now().checked_sub(age)));
        since.map(|t| t + SETTLE)
    }
}

impl GpuProbe for Nvml {
    fn watch(&self, stop: &AtomicBool) -> Vec<Sample> {
        let samples =
            crate::nvml::watch(EVERY, stop, |look| self.sample(look, Phase::During, false))
                .unwrap_or_default();
        *LAST_RUN_END.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        samples
    }

    /// Two looks [`BEFORE`] apart. The first window of a process waits for
    /// its utilization to settle (at most [`SETTLE`]); later ones do not,
    /// and read no utilization where it has not settled. A run's window is
    /// also the look after the run before it: a separate look after each
    /// run would have to wait [`SETTLE`] not to read that run's own kernels.
    fn before(&self) -> Vec<Sample> {
        let settled = self.settled_from();
        let first = LAST_RUN_END
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_none();
        let pause = |_| {
            let wait = match settled {
                Some(at) if first => at.saturating_duration_since(Instant::now()),
                _ => Duration::ZERO,
            };
            wait.clamp(BEFORE, SETTLE)
        };
        let mps = mps_control();
        crate::nvml::window(2, pause, |look| {
            let quiet = settled.is_some_and(|at| Instant::now() >= at);
            Sample {
                mps_control: mps.clone(),
                ..self.sample(look, Phase::Before, quiet)
            }
        })
        .unwrap_or_default()
    }
}

/// Where MPS is set up for ncugate's processes, if it is: the pipe
/// directory its clients would use holds a control pipe.
fn mps_control() -> Option<String> {
    let (dir, named) = match std::env::var_os("CUDA_MPS_PIPE_DIRECTORY") {
        Some(dir) => (std::path::PathBuf::from(dir), true),
        None => (std::path::PathBuf::from("/tmp/nvidia-mps"), false),
    };
    dir.join("control").exists().then(|| {
        let shown = crate::text::escape::printable(dir.display().to_string());
        if named {
            format!("CUDA_MPS_PIPE_DIRECTORY={shown}")
        } else {
            shown
        }
    })
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
                ..GpuProcess::default()
            }],
            ..Sample::default()
        };
        let probe = Replayed(vec![sample.clone()]);
        let (v, seen) = during(Some(&probe), || 7);
        assert_eq!((v, seen), (7, vec![sample.clone()]));
        let (v, seen) = during(None, || 8);
        assert_eq!((v, seen.len()), (8, 0));
        // The pre-launch window's looks come first, whatever order they were recorded in.
        let before = Sample {
            phase: Phase::Before,
            own_cuda_processes: Some(0),
            ..Sample::default()
        };
        let probe = Replayed(vec![sample.clone(), before.clone()]);
        let (_, seen) = during(Some(&probe), || ());
        assert_eq!(seen, vec![before, sample]);
    }

    #[test]
    fn names_are_short_and_printable() {
        assert_eq!(short_name("/usr/bin/python3\n"), "python3");
        assert_eq!(short_name("a\u{1b}[31mb"), "a[31mb");
        assert_eq!(short_name("gpt\u{202e}txt.exe\u{2028}"), "gpttxt.exe");
    }
}
