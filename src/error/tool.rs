//! [`ToolError`]: the tools around ncu (compute-sanitizer, the graph audit
//! library, a suite's shared build) that failed.

use std::path::PathBuf;

/// A tool other than ncu that is missing or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("`{program}` not found")]
    SanitizerNotFound { program: String },
    /// compute-sanitizer failed; `log` keeps its output.
    #[error("{failure}")]
    Sanitizer {
        failure: SanitizerFailure,
        log: PathBuf,
    },
    /// The app (run without ncu) does not exist.
    #[error("the app `{program}` does not exist")]
    AppNotFound { program: String },
    /// The graph audit library ran but left no report at `report`.
    #[error("the graph audit library wrote no report ({})", .report.display())]
    NoAuditReport { report: PathBuf },
    /// CUPTI, needed to compile the audit library, is not in the toolkit.
    #[error("CUPTI (cupti.h and libcupti.so) is not in the CUDA toolkit at {}", .cuda_home.display())]
    NoCupti { cuda_home: PathBuf },
    /// The audit library named by `--audit-lib` cannot be used.
    #[error("the graph audit library {} cannot be used: {reason}", .library.display())]
    AuditLibrary { library: PathBuf, reason: String },
    /// A suite's build failed for an earlier `workload` that shares it;
    /// `reason` is how (`exit code 2: make train`).
    #[error("not run: its build failed for workload `{workload}` ({reason})")]
    BuildFailedBefore { workload: String, reason: String },
    /// Trace mode: the audit library's report has no `kernel_trace` (a
    /// library built before trace mode, or one that ignored `NCUGATE_AUDIT_KERNELS`).
    #[error("the audit library's report {} has no kernel trace", .report.display())]
    NoKernelTrace { report: PathBuf },
    /// Trace mode: CUPTI activity tracing could not be enabled in the app.
    #[error("CUPTI kernel activity tracing could not be enabled ({}): {reason}", .report.display())]
    TraceDisabled { report: PathBuf, reason: String },
    /// Trace mode: CUPTI dropped activity records, or the library could not
    /// sum them (more distinct kernels than it keeps), so the launch counts are incomplete.
    #[error("the kernel trace {} is incomplete: {dropped} activity records lost ({records} delivered); launch counts from it would be wrong", .report.display())]
    TraceIncomplete {
        report: PathBuf,
        dropped: u64,
        records: u64,
    },
    /// Trace mode: the check compares with no one baseline file (a rolling
    /// baseline, or several GPUs' files, of which only ncu's data could pick one).
    #[error("trace mode (locked_counters = \"trace\") cannot compare with {place}: {reason}")]
    TraceBaseline { place: String, reason: String },
}

/// How a compute-sanitizer run failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SanitizerFailure {
    #[error("`{program}` could not be started: {reason}")]
    SpawnFailed { program: String, reason: String },
    #[error("compute-sanitizer timed out after {seconds}s; it and the app were killed")]
    TimedOut { seconds: u64 },
    #[error("compute-sanitizer was killed by signal {signal}")]
    Killed { signal: String },
    /// It exited `code` and wrote no XML; `tail` is its last output.
    #[error("compute-sanitizer wrote no XML (exit code {code}){}", colon(.tail))]
    NoXml { code: i32, tail: String },
    /// It exited `code` without the summary line it ends every run with
    /// (`ERROR SUMMARY`, `RACECHECK SUMMARY`): it stopped before the app ended.
    #[error("compute-sanitizer stopped before the app ended: no summary line in its output (exit code {code}){}", colon(.tail))]
    NoSummary { code: i32, tail: String },
    /// The app exited `code` with no finding to explain it.
    #[error("the app exited with code {code} under compute-sanitizer{}", colon(.tail))]
    AppExit { code: i32, tail: String },
}

impl ToolError {
    /// The `hint:` line: the fix.
    pub(crate) fn hint(&self) -> String {
        match self {
            ToolError::SanitizerNotFound { .. } => "install the CUDA toolkit (compute-sanitizer ships with it) or set [sanitizer] program / NCUGATE_SANITIZER".into(),
            ToolError::Sanitizer { failure, log } => {
                let fix = match failure {
                    SanitizerFailure::SpawnFailed { .. } => "check the path",
                    SanitizerFailure::TimedOut { .. } => "raise the timeout; the sanitizer slows apps down 10–100×",
                    SanitizerFailure::Killed { .. } => "look at the log",
                    SanitizerFailure::NoXml { .. } => "check the app command (does the program exist?)",
                    SanitizerFailure::NoSummary { .. } => "its findings cover only part of the run: look at the log for why it stopped, and run it again",
                    SanitizerFailure::AppExit { .. } => "run the app without the sanitizer to see why",
                };
                format!("{fix} (log: {})", log.display())
            }
            ToolError::AppNotFound { .. } => "check [app] command / the app after `--`".into(),
            ToolError::NoAuditReport { .. } => "the app may not use the CUDA runtime/driver, or CUDA_INJECTION64_PATH was not honoured: check inject/build/libncugate_audit.so loads (`ncugate doctor`), and that the app exits normally".into(),
            ToolError::NoCupti { .. } => "set CUDA_HOME to the CUDA toolkit (it ships CUPTI), or pass --audit-lib with a library built elsewhere".into(),
            ToolError::AuditLibrary { .. } => "leave out --audit-lib / [memory] audit_lib: ncugate compiles its own on first use".into(),
            ToolError::BuildFailedBefore { .. } => "fix the build; every workload that uses it is skipped".into(),
            ToolError::NoKernelTrace { .. } => "leave out --audit-lib / [memory] audit_lib so that ncugate compiles its own library, which traces kernels; or rebuild yours from inject/ncugate_audit.c".into(),
            ToolError::TraceDisabled { .. } => "another CUPTI client (a profiler, a tracer such as nsys) may hold CUPTI in the app: run the check without it; or lift the counter restriction and use locked_counters = \"fail\"".into(),
            ToolError::TraceIncomplete { .. } => "trace fewer launches (a shorter run of the app), or give CUPTI larger buffers; a trace that lost records is never gated".into(),
            ToolError::TraceBaseline { .. } => "pass one baseline file with --baseline (or [gate] baseline): without counters the GPU cannot be told from ncu's data".into(),
        }
    }
}

fn colon(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!(": {tail}")
    }
}
