//! [`NcuFailure`]: every way a profiled ncu run, or its `--import`, is known to fail.

use std::path::PathBuf;

/// Every way a profiled ncu run, or `ncu --import`, is known to fail. The
/// message (`Display`) says what failed; [`NcuFailure::hint`] says how to fix
/// it. Both end up as `Error::Ncu`, exit code 2;
/// `crate::runner::failure::classify` finds the class of a profiled run,
/// `crate::runner::ncu::import` that of an import.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NcuFailure {
    /// The ncu executable does not exist.
    #[error("`{ncu}` not found: Nsight Compute is not installed or not on PATH")]
    NotFound { ncu: String },
    /// The ncu executable exists but could not be started.
    #[error("`{ncu}` could not be started: {reason}")]
    SpawnFailed { ncu: String, reason: String },
    /// The run outlived `[app] timeout`; the process group was killed.
    #[error(
        "the profiled run timed out after {seconds}s; the app and ncu were killed (process group){}",
        tail_suffix(.app_tail)
    )]
    TimedOut { seconds: u64, app_tail: String },
    /// The app said it crashed, and then nothing was printed for `seconds`:
    /// the process group was killed, as at a timeout, without waiting for it.
    #[error(
        "the app crashed under ncu and the run hung: nothing was printed for {seconds}s after the crash, so the app and ncu were killed (process group){}",
        tail_suffix(.app_tail)
    )]
    HungAfterCrash { seconds: u64, app_tail: String },
    /// `ERR_NVGPUCTRPERM`: the driver keeps the performance counters to admins.
    #[error("ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM)")]
    CounterPermission,
    /// `Profiling failed because a driver resource was unavailable`: another
    /// profiler holds the driver's system-wide profiling lock, typically a
    /// DCGM host engine collecting profiling metrics (`dcgmi profile`,
    /// dcgm-exporter's DCP fields), on any GPU of the machine.
    #[error(
        "ncu could not profile: a driver resource was unavailable (another tool, typically DCGM, is collecting profiling data on this machine)"
    )]
    ProfilerBusy,
    /// `==ERROR== Failed to find metric …`: a metric name ncu does not know.
    #[error("ncu does not know the metric `{metric}`")]
    UnknownMetric {
        metric: String,
        /// Known metric names close to it, best first.
        suggestions: Vec<String>,
    },
    /// `==ERROR== Metric … is not supported`: graph-profiling mode (range
    /// replay) refuses SASS-level metrics.
    #[error("ncu cannot collect {} in this profiling mode", .metrics.join(", "))]
    UnsupportedInGraphMode { metrics: Vec<String> },
    /// ncu could not start the app (`… does not exist or is not an executable`).
    #[error("the app could not be started: {detail}")]
    AppMissing { detail: String },
    /// The app itself exited non-zero under ncu.
    #[error("the app exited with code {code} under ncu{}", tail_suffix(.app_tail))]
    AppExit { code: i32, app_tail: String },
    /// ncu exited 0 and profiled nothing; `launched` is ncu's list of the
    /// kernels the app did launch.
    #[error("ncu profiled no kernels, although it exited 0{}", launched_suffix(.launched))]
    NoKernels { launched: Vec<String> },
    /// ncu exited 0 and left no report.
    #[error("ncu exited 0 but wrote no report")]
    NoReport,
    /// `ncu --import` could not turn a report into CSV: the command, its
    /// exit and its last lines.
    #[error("`{command}` failed ({exit}){}", tail_suffix(.tail))]
    ImportFailed {
        command: String,
        report: PathBuf,
        page: String,
        exit: String,
        tail: String,
    },
    /// ncu failed in a way none of the above explains: its exit and last lines.
    #[error("ncu failed ({exit}){}", tail_suffix(.log_tail))]
    Other { exit: String, log_tail: String },
}

/// How the app crashed, if its last output says so (the shell's or the
/// runtime's words for a fatal signal). Seen on an H100: a jitted JAX app
/// printed `Segmentation fault` under ncu in 1 of 10 checks, and the
/// run then hung until its timeout.
fn crashed(tail: &str) -> Option<&'static str> {
    [
        "Segmentation fault",
        "Bus error",
        "Illegal instruction",
        "Aborted",
        "core dumped",
    ]
    .into_iter()
    .find(|words| tail.contains(words))
}

/// How the app crashed, if `line` is the shell's, the C runtime's or
/// Python's report of a fatal signal (`Segmentation fault`, `Aborted (core
/// dumped)`, `Fatal Python error: …`), not a line that only mentions one.
pub(crate) fn fatal_signal_line(line: &str) -> Option<&'static str> {
    let line = line.trim();
    if line.starts_with("==") {
        return None;
    }
    if line.starts_with("Fatal Python error:") {
        return crashed(line).or(Some("Fatal Python error"));
    }
    if line.contains("(core dumped)") {
        return crashed(line);
    }
    crashed(line).filter(|words| line.starts_with(words))
}

impl NcuFailure {
    /// Whether the run may go through if run again: the app crashed under
    /// ncu (a fatal signal's words in its last output) or the run hung until
    /// its timeout. `[app] retries` profiles such a run again; every other
    /// failure would fail the same way again.
    pub(crate) fn transient(&self) -> bool {
        match self {
            NcuFailure::TimedOut { .. } | NcuFailure::HungAfterCrash { .. } => true,
            NcuFailure::AppExit { app_tail, .. } => crashed(app_tail).is_some(),
            _ => false,
        }
    }

    /// The `hint:` line: the fix for this class.
    pub(crate) fn hint(&self) -> String {
        match self {
            NcuFailure::NotFound { .. } => "install Nsight Compute (it ships with the CUDA toolkit) or set [profile] ncu / NCUGATE_NCU to its path (`ncugate doctor` checks the setup); or gate CSV exports made where ncu is: `ncu --import R.ncu-rep --csv --page raw --print-units base > raw.csv`".into(),
            NcuFailure::SpawnFailed { .. } => "check that ncu is executable; `ncugate doctor` checks the setup".into(),
            NcuFailure::TimedOut { app_tail, .. } => match crashed(app_tail) {
                Some(how) => format!("the app crashed under ncu (`{how}`) and the run hung until the timeout: no verdict was made; run the check again, or let ncugate do it ([app] retries / --retries); if the crash repeats, find it with `ncugate profile` or compute-sanitizer; a short --timeout keeps such a hang cheap"),
                None => "raise [app] timeout / --timeout, profile fewer launches (launch_count, kernel_name), or use mode = \"fast\"".into(),
            },
            NcuFailure::HungAfterCrash { .. } => "no verdict was made; run the check again, or let ncugate do it ([app] retries / --retries); if the crash repeats, find it with `ncugate profile` or compute-sanitizer".into(),
            NcuFailure::CounterPermission => "run as root, or allow all users: `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d/ then reload the driver (see https://developer.nvidia.com/ERR_NVGPUCTRPERM); in a container add --cap-add=SYS_ADMIN; or, where none of that is possible, set [gate] locked_counters = \"trace\" (--locked-counters trace) to gate the launch structure from a CUPTI trace, labelled DEGRADED, with no metric gated".into(),
            NcuFailure::ProfilerBusy => "pause DCGM's profiling around the run: set [profile] dcgm = \"pause\" (ncugate runs `dcgmi profile --pause` before ncu and `dcgmi profile --resume` after it), or run `dcgmi profile --pause` / `--resume` yourself, or stop the nvidia-dcgm service (or dcgm-exporter) for the run; `ncugate doctor` says whether nv-hostengine runs".into(),
            NcuFailure::UnknownMetric {
                metric,
                suggestions,
            } => unknown_metric_hint(metric, suggestions),
            NcuFailure::UnsupportedInGraphMode { .. } => "graph-profiling mode (range replay) rejects SASS-level metrics: use graph_profiling = \"node\", or drop these metrics from the thresholds".into(),
            NcuFailure::AppMissing { .. } => "check [app] command (the first element is the program; relative paths are from [app] workdir) and that `make -C kernels` / [build] built it".into(),
            NcuFailure::AppExit { app_tail, .. } => match crashed(app_tail) {
                Some(how) => format!("the app crashed (`{how}`): run it without ncu to see whether it crashes there too (its full output is in app.log in the work dir); a crash under ncu alone can be run again by ncugate ([app] retries / --retries)"),
                None => "run the app without ncu to see why; its full output is in app.log in the work dir".into(),
            },
            NcuFailure::NoKernels { .. } => "check [profile] kernel_name / launch_skip / launch_count, and that the app launches kernels on the GPU".into(),
            NcuFailure::NoReport => "look at ncu.log in the work dir; check that the work dir is writable".into(),
            NcuFailure::ImportFailed { report, page, .. } => format!(
                "open the report with this ncu version to see why: `ncu --import {} --page {page}`",
                report.display()
            ),
            NcuFailure::Other { .. } => "look at ncu.log in the work dir".into(),
        }
    }
}

fn unknown_metric_hint(metric: &str, near: &[String]) -> String {
    if metric.starts_with("sys__memory_throughput") {
        return "`sys__memory_throughput` does not exist: \"Memory Throughput\" is gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed, DRAM is dram__throughput.avg.pct_of_peak_sustained_elapsed".to_string();
    }
    if near.is_empty() {
        "check the name with `ncu --query-metrics`".to_string()
    } else {
        format!(
            "did you mean {}? (`ncu --query-metrics` lists them all)",
            near.join(", ")
        )
    }
}

fn tail_suffix(tail: &str) -> String {
    if tail.trim().is_empty() {
        String::new()
    } else {
        format!("; its last output: {}", tail.trim().replace('\n', " | "))
    }
}
fn launched_suffix(launched: &[String]) -> String {
    if launched.is_empty() {
        String::new()
    } else {
        format!(" (the app launched: {})", launched.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::NcuFailure;

    #[test]
    fn a_fatal_signal_is_known_by_the_line_that_reports_it_not_a_mention() {
        use super::fatal_signal_line as fatal;
        // As the H100's JAX check printed it, and as shells and Python do.
        assert_eq!(fatal("Segmentation fault"), Some("Segmentation fault"));
        assert_eq!(fatal("Aborted (core dumped)"), Some("Aborted"));
        assert_eq!(
            fatal("sh: line 1: 4242 Segmentation fault      (core dumped) python3 app.py"),
            Some("Segmentation fault")
        );
        assert_eq!(
            fatal("Fatal Python error: Segmentation fault"),
            Some("Segmentation fault")
        );
        assert_eq!(
            fatal("Fatal Python error: _PyThreadState_Get"),
            Some("Fatal Python error")
        );
        // A line that only mentions one, and ncu's own lines, are not one.
        for line in [
            "step 3: Aborted candidates: 2",
            "installing a handler for Segmentation fault",
            "==ERROR== Segmentation fault in the app",
            "step 9",
        ] {
            assert_eq!(fatal(line), None, "{line}");
        }
        let hung = NcuFailure::HungAfterCrash {
            seconds: 60,
            app_tail: "Segmentation fault".into(),
        };
        assert!(hung.transient());
        assert!(
            hung.to_string().starts_with(
                "the app crashed under ncu and the run hung: nothing was printed for 60s after the crash"
            ),
            "{hung}"
        );
        assert!(hung.hint().contains("[app] retries"));
    }

    #[test]
    fn a_run_that_hung_after_the_app_crashed_says_so_not_raise_the_timeout() {
        // What the JAX app's last output was on the H100 (the check's stderr).
        let crashed = NcuFailure::TimedOut {
            seconds: 90,
            app_tail: "Segmentation fault".into(),
        };
        assert!(
            crashed
                .to_string()
                .ends_with("its last output: Segmentation fault"),
            "{crashed}"
        );
        let hint = crashed.hint();
        assert!(
            hint.starts_with("the app crashed under ncu (`Segmentation fault`)"),
            "{hint}"
        );
        assert!(!hint.contains("raise"), "{hint}");
        let slow = NcuFailure::TimedOut {
            seconds: 90,
            app_tail: "step 9".into(),
        };
        assert!(slow.hint().starts_with("raise [app] timeout"));
    }
}
