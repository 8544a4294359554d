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
    Thresholds { path: String, message: String },

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
}

impl Error {
    /// The `hint:` line printed under the error: the fix, not a restatement.
    pub fn hint(&self) -> String {
        match self {
            Error::Read { .. } => "check the path; inputs are `ncu --import R.ncu-rep --csv --page raw` exports".into(),
            Error::Write { .. } => "check that the directory exists and is writable".into(),
            Error::Input { hint, .. }
            | Error::MissingMetric { hint, .. }
            | Error::Baseline { hint, .. }
            | Error::Usage { hint, .. }
            | Error::Tool { hint, .. } => hint.clone(),
            Error::NoKernels { .. } => "ncu profiled nothing: check the app ran kernels and ncu's --kernel-name/--launch-skip filters".into(),
            Error::Thresholds { .. } => "see the threshold format in the README (`[[rule]]` keys: metric, per, aggregate, worse, max_change, noise, limit, kernels, severity, optional)".into(),
            Error::DeviceMismatch { .. } => "record a baseline on this GPU, or pass --allow-device-mismatch to compare anyway".into(),
        }
    }
}

/// Result type of the gate's fallible steps.
pub type Result<T, E = Error> = std::result::Result<T, E>;
