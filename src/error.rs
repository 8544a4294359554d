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
            | Error::ReadFile { hint, .. }
            | Error::Toml { hint, .. }
            | Error::Process { hint, .. }
            | Error::MissingMetric { hint, .. }
            | Error::Baseline { hint, .. }
            | Error::Usage { hint, .. }
            | Error::Tool { hint, .. } => hint.clone(),
            Error::NoKernels { .. } => "ncu profiled nothing: check the app ran kernels and ncu's --kernel-name/--launch-skip filters".into(),
            Error::Thresholds { .. } => "see the threshold format in the README (`[[rule]]` keys: metric, per, aggregate, worse, max_change, noise, noise_floor, limit, kernels, severity, optional, name, why)".into(),
            Error::DeviceMismatch { .. } => "record a baseline on this GPU, or pass --allow-device-mismatch to compare anyway".into(),
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

/// Result type of the gate's fallible steps.
pub type Result<T, E = Error> = std::result::Result<T, E>;
