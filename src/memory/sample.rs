//! GPU memory of one process over time, from NVML, and its growth.

use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Fitted growth of sampled memory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Growth {
    /// Last sample minus the first non-zero one.
    pub(crate) growth_bytes: f64,
    /// Least-squares slope of bytes over time.
    pub(crate) slope_bytes_per_s: f64,
    pub(crate) peak_bytes: f64,
    pub(crate) samples: usize,
    pub(crate) seconds: f64,
}

/// Fits the samples `(seconds, bytes)` inside `window` (seconds on the same
/// clock, from the first to the last graph launch: the app's start-up
/// allocations are not growth) plus the first sample after it; the whole run
/// without a window. `None` without two non-zero samples.
pub(crate) fn fit(samples: &[(f64, f64)], window: Option<(f64, f64)>) -> Option<Growth> {
    let used: Vec<(f64, f64)> = match window {
        None => samples.iter().copied().filter(|(_, b)| *b > 0.0).collect(),
        Some((from, to)) => {
            let mut inside: Vec<(f64, f64)> = samples
                .iter()
                .copied()
                .filter(|(t, b)| *b > 0.0 && *t >= from && *t <= to)
                .collect();
            if let Some(after) = samples.iter().copied().find(|(t, b)| *b > 0.0 && *t > to) {
                inside.push(after);
            }
            inside
        }
    };
    if used.len() < 2 {
        return None;
    }
    let n = used.len() as f64;
    let mt = used.iter().map(|(t, _)| t).sum::<f64>() / n;
    let mb = used.iter().map(|(_, b)| b).sum::<f64>() / n;
    let sxx: f64 = used.iter().map(|(t, _)| (t - mt).powi(2)).sum();
    let sxy: f64 = used.iter().map(|(t, b)| (t - mt) * (b - mb)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let (first, last) = (used[0], used[used.len() - 1]);
    Some(Growth {
        growth_bytes: last.1 - first.1,
        slope_bytes_per_s: slope,
        peak_bytes: used.iter().map(|(_, b)| *b).fold(0.0, f64::max),
        samples: used.len(),
        seconds: last.0 - first.0,
    })
}

/// Seconds on CLOCK_MONOTONIC, the clock the audit library stamps launches with.
pub(crate) fn monotonic_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// Samples the GPU memory NVML attributes to `pid` (and its children) every
/// `every` until `stop` is set. Returns `(CLOCK_MONOTONIC seconds, bytes)`;
/// empty when NVML is unavailable.
pub(crate) fn sample(pid: u32, every: Duration, stop: Arc<AtomicBool>) -> Vec<(f64, f64)> {
    crate::nvml::watch(every, &stop, |look| {
        let family = family_of(pid);
        let bytes = look
            .processes
            .iter()
            .filter(|p| family.contains(&p.pid))
            .filter_map(|p| p.memory_bytes)
            .fold(0u64, u64::saturating_add);
        (monotonic_s(), bytes as f64)
    })
    .unwrap_or_default()
}

/// `pid` and its descendants (an app may run its CUDA work in a child).
fn family_of(pid: u32) -> Vec<u32> {
    let mut family = vec![pid];
    family.extend(crate::runner::procfs::descendants(pid));
    family
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_linear_leak_fits_its_slope() {
        let samples: Vec<(f64, f64)> = (0..50)
            .map(|i| (i as f64 * 0.02, 5e8 + i as f64 * 2e6))
            .collect();
        let g = super::fit(&samples, None).unwrap();
        assert!((g.slope_bytes_per_s - 1e8).abs() < 1.0, "{g:?}");
        assert_eq!(g.growth_bytes, 98e6);
        assert_eq!(g.peak_bytes, 5e8 + 98e6);
        assert!(super::fit(&[(0.0, 0.0), (1.0, 5.0)], None).is_none());
    }

    #[test]
    fn start_up_allocations_before_the_first_launch_are_not_growth() {
        // 600 MB allocated during start-up, then flat while the graph runs, then the exit.
        let mut samples: Vec<(f64, f64)> = (0..20)
            .map(|i| (i as f64 * 0.02, i as f64 * 30e6))
            .collect();
        samples.extend((20..60).map(|i| (i as f64 * 0.02, 600e6)));
        samples.push((1.22, 0.0));
        let whole = super::fit(&samples, None).unwrap();
        assert!(whole.growth_bytes > 500e6);
        let window = super::fit(&samples, Some((0.41, 1.15))).unwrap();
        assert_eq!(window.growth_bytes, 0.0);
        assert_eq!(window.peak_bytes, 600e6);
    }
}
