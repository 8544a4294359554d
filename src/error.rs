//! Expected failures of the gate. Each one says what failed, where, and how to
//! fix it; `main` prints it once as `ncugate: error: …` plus a `hint:` line and
//! exits with [`crate::exit::ERROR`].

use std::path::PathBuf;

/// An expected failure: exit code 2, one line of message, one line of hint.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },

    /// A file the user named (baseline, config, thresholds, XML) that cannot be read.
    #[error("cannot read {what} {path}: {source}")]
    ReadFile {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
        hint: String,
    },

    /// A TOML file that does not parse: `detail` is toml's own report
    /// (line, the line itself, a caret under the column).
    #[error("{path}: invalid {what}")]
    Toml {
        what: &'static str,
        path: String,
        detail: String,
        hint: String,
    },

    /// A command that failed: `output` is the tail of what it printed, shown
    /// apart from the message.
    #[error("{message}")]
    Process {
        message: String,
        output: Vec<String>,
        hint: String,
    },

    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("{path}: {message}")]
    Input {
        path: PathBuf,
        message: String,
        hint: String,
    },

    #[error("{path}: metric `{metric}` is not in this export")]
    MissingMetric {
        path: PathBuf,
        metric: String,
        hint: String,
    },

    #[error("{path}: no kernel launches in this export")]
    NoKernels { path: PathBuf },

    #[error("{path}: invalid thresholds: {message}")]
    Thresholds {
        path: String,
        message: String,
        hint: String,
    },

    #[error("{path}: {message}")]
    Baseline {
        path: PathBuf,
        message: String,
        hint: String,
    },

    #[error(
        "device mismatch: baseline was recorded on {baseline}, this input comes from {current}"
    )]
    DeviceMismatch { baseline: String, current: String },

    #[error("{message}")]
    Usage { message: String, hint: String },

    #[error("{message}")]
    Tool { message: String, hint: String },

    /// A profiled ncu run that failed in one of the known ways; `logs` is the
    /// work directory that keeps its output.
    #[error("{failure}")]
    Ncu {
        failure: NcuFailure,
        logs: Option<PathBuf>,
    },

    /// SIGINT or SIGTERM arrived: nothing more is written (see `runner::interrupt`).
    #[error("interrupted by {signal}")]
    Interrupted { signal: &'static str },
}

impl Error {
    /// The `hint:` line printed under the error: the fix, not a restatement.
    pub fn hint(&self) -> String {
        match self {
            Error::Read { .. } => "check the path; inputs are `ncu --import R.ncu-rep --csv --page raw` exports".into(),
            Error::Write { .. } => "check that the directory exists and is writable".into(),
            Error::Input { hint, .. }
            | Error::ReadFile { hint, .. }
            | Error::Toml { hint, .. }
            | Error::Process { hint, .. }
            | Error::MissingMetric { hint, .. }
            | Error::Baseline { hint, .. }
            | Error::Usage { hint, .. }
            | Error::Tool { hint, .. }
            | Error::Thresholds { hint, .. } => hint.clone(),
            Error::Ncu { failure, logs } => match logs {
                Some(dir) => format!("{} (logs: {})", failure.hint(), dir.display()),
                None => failure.hint(),
            },
            Error::NoKernels { .. } => "ncu profiled nothing: check the app ran kernels and ncu's --kernel-name/--launch-skip filters".into(),
            Error::DeviceMismatch { .. } => "record a baseline on this GPU, or pass --allow-device-mismatch to compare anyway".into(),
            Error::Interrupted { .. } => "run it again for a verdict".into(),
        }
    }
}

impl Error {
    /// Lines shown between the error and its hint, apart from the one-line
    /// message: toml's report of a parse error, the tail of a command's output.
    pub fn detail(&self) -> Vec<String> {
        match self {
            Error::Toml { detail, .. } => detail.trim_end().lines().map(str::to_string).collect(),
            Error::Process { output, .. } => output.clone(),
            _ => Vec::new(),
        }
    }

    /// The error as one line for the file reports: message, its detail
    /// (`output: …`), hint.
    pub fn report_line(&self) -> String {
        let detail = self.detail();
        let detail = if detail.is_empty() {
            String::new()
        } else {
            format!(" — output: {}", detail.join(" ⏎ "))
        };
        format!("{self}{detail} (hint: {})", self.hint())
    }

    /// The error for a file the user named that cannot be read; the hint fits
    /// what the file is and whether it is missing.
    pub fn read_file(what: &'static str, path: &std::path::Path, source: std::io::Error) -> Error {
        let missing = source.kind() == std::io::ErrorKind::NotFound;
        let shown = path.display();
        let hint = match (what, missing) {
            ("baseline", true) => format!(
                "record it on the GPU runner: `ncugate baseline record --output {shown}` (or from exports: `--input RUN.csv`), or point --baseline / [gate] baseline at an existing file"
            ),
            ("config", true) => "create one with `ncugate init -- ./your-app`, or leave out --config / NCUGATE_CONFIG to use ./ncugate.toml or the defaults".into(),
            ("thresholds", true) => "`ncugate init` writes a commented thresholds file; or leave out --thresholds to use the built-in rules".into(),
            ("sanitizer XML", true) => "save it with `compute-sanitizer --xml --save FILE ./app`, or leave out --xml to run compute-sanitizer".into(),
            _ => "check that the file is readable".into(),
        };
        Error::ReadFile {
            what,
            path: path.to_path_buf(),
            source,
            hint,
        }
    }

    /// The error for a TOML file that does not parse, with toml's own report.
    pub fn toml(what: &'static str, path: &str, error: &toml::de::Error, hint: &str) -> Error {
        Error::Toml {
            what,
            path: path.to_string(),
            detail: error.to_string(),
            hint: hint.to_string(),
        }
    }
}

/// Every way a profiled ncu run is known to fail. The message (`Display`) says
/// what failed; [`NcuFailure::hint`] says how to fix it. Both end up as
/// [`Error::Ncu`], exit code 2; `crate::runner::failure::classify` finds the class.
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
    /// `ERR_NVGPUCTRPERM`: the driver keeps the performance counters to admins.
    #[error("ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM)")]
    CounterPermission,
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
    /// ncu failed in a way none of the above explains: its exit and last lines.
    #[error("ncu failed ({exit}){}", tail_suffix(.log_tail))]
    Other { exit: String, log_tail: String },
}

impl NcuFailure {
    /// The `hint:` line: the fix for this class.
    pub fn hint(&self) -> String {
        match self {
            NcuFailure::NotFound { .. } => "install Nsight Compute (it ships with the CUDA toolkit), or set [profile] ncu / NCUGATE_NCU to its path; `ncugate doctor` checks the setup".into(),
            NcuFailure::SpawnFailed { .. } => "check that ncu is executable; `ncugate doctor` checks the setup".into(),
            NcuFailure::TimedOut { .. } => "raise [app] timeout / --timeout, profile fewer launches (launch_count, kernel_name), or use mode = \"fast\"".into(),
            NcuFailure::CounterPermission => "run as root, or allow all users: `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d/ then reload the driver (see https://developer.nvidia.com/ERR_NVGPUCTRPERM); in a container add --cap-add=SYS_ADMIN".into(),
            NcuFailure::UnknownMetric {
                metric,
                suggestions,
            } => unknown_metric_hint(metric, suggestions),
            NcuFailure::UnsupportedInGraphMode { .. } => "graph-profiling mode (range replay) rejects SASS-level metrics: use graph_profiling = \"node\", or drop these metrics from the thresholds".into(),
            NcuFailure::AppMissing { .. } => "check [app] command (the first element is the program; relative paths are from [app] workdir) and that `make -C kernels` / [build] built it".into(),
            NcuFailure::AppExit { .. } => "run the app without ncu to see why; its full output is in app.log in the work dir".into(),
            NcuFailure::NoKernels { .. } => "check [profile] kernel_name / launch_skip / launch_count, and that the app launches kernels on the GPU".into(),
            NcuFailure::NoReport => "look at ncu.log in the work dir; check that the work dir is writable".into(),
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

/// Result type of the gate's fallible steps.
pub type Result<T, E = Error> = std::result::Result<T, E>;
