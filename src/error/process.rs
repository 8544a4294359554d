//! [`ProcessError`]: a command ncugate ran for the gate (the build, the audit
//! library's compilation, the app under the audit) that failed; its output's
//! tail is shown apart from the message.

use std::path::PathBuf;

/// A command that failed: `command` as a shell would show it, `exit` its exit
/// status or signal, `output` the last lines it printed, `log` where all of them are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProcessError {
    /// `[build] command` / `--build` failed; `program` is its first word.
    #[error("the build failed ({exit}): {command}")]
    Build {
        program: String,
        command: String,
        exit: String,
        /// The program does not exist.
        not_found: bool,
        output: Vec<String>,
        log: PathBuf,
    },
    /// Compiling the graph audit library failed.
    #[error("compiling the graph audit library failed ({exit}): {command}")]
    AuditLibrary {
        command: String,
        exit: String,
        output: Vec<String>,
        log: PathBuf,
    },
    /// The app, run under the graph audit, failed.
    #[error("the app failed ({exit}): {command}")]
    App {
        command: String,
        exit: String,
        output: Vec<String>,
        log: PathBuf,
    },
    /// A warm-up run of the app (`[app] warmup`), without ncu, failed.
    #[error("warm-up run {run} of the app failed ({exit}): {command}")]
    WarmUp {
        run: u32,
        command: String,
        exit: String,
        output: Vec<String>,
        log: PathBuf,
    },
    /// `dcgmi profile --pause` (with `[profile] dcgm = "pause"`) failed:
    /// ncu was not run, as it would fail while DCGM profiles.
    #[error("pausing DCGM's profiling failed ({exit}): {command}")]
    DcgmPause {
        command: String,
        exit: String,
        output: Vec<String>,
        log: PathBuf,
    },
}

impl ProcessError {
    /// The `hint:` line: the fix.
    pub(crate) fn hint(&self) -> String {
        match self {
            ProcessError::Build {
                program,
                not_found: true,
                ..
            } => format!("`{program}` is not installed or not on PATH"),
            ProcessError::Build { log, .. } => {
                format!("fix the build; its output is in {}", log.display())
            }
            ProcessError::AuditLibrary { log, .. } => format!(
                "it needs a C compiler ($CC, else cc) and CUPTI from the CUDA toolkit ($CUDA_HOME); log: {}",
                log.display()
            ),
            ProcessError::App { log, .. } => format!("its output is in {}", log.display()),
            ProcessError::WarmUp { log, .. } => format!(
                "the app must run to completion without ncu too (or set [app] warmup = 0); its output is in {}",
                log.display()
            ),
            ProcessError::DcgmPause { log, .. } => format!(
                "check that dcgmi is on PATH and nv-hostengine runs (`ncugate doctor`), or set [profile] dcgm = \"fail\" where no DCGM profiles; its output is in {}",
                log.display()
            ),
        }
    }

    /// The last lines the command printed, shown below the message.
    pub(crate) fn output(&self) -> &[String] {
        match self {
            ProcessError::Build { output, .. }
            | ProcessError::AuditLibrary { output, .. }
            | ProcessError::App { output, .. }
            | ProcessError::WarmUp { output, .. }
            | ProcessError::DcgmPause { output, .. } => output,
        }
    }
}
