//! Expected failures of the gate, as a catalogue: one variant per kind of
//! failure with typed fields, its message (`Display`) and its fix
//! ([`Error::hint`]) side by side. `main` prints one as `ncugate: error: …`
//! plus a `hint:` line and exits with [`crate::exit::ERROR`].
//!
//! The kinds, one file each: [`ConfigError`] (usage), [`ExportError`] (ncu
//! exports), [`BaselineError`], [`ReportError`] (the reports `ncugate
//! merge` and `history record` read) and [`MergeError`] (`ncugate merge`),
//! [`ToolError`] (compute-sanitizer, the audit library),
//! [`ProcessError`] (the build and other commands, with their output),
//! [`HistoryError`] (the history store and its commands),
//! [`NcuFailure`] (ncu itself: a profiled run or an import); [`FileKind`]
//! names what a file is for, so that reading it fails with the fitting hint.
//! `tests/integration/error_catalogue.rs` snapshots every variant as printed.

use std::path::{Path, PathBuf};

mod baseline;
mod config;
mod export;
mod file;
mod history;
mod ncu;
mod process;
mod report;
mod tool;
pub use baseline::BaselineError;
pub use config::ConfigError;
pub use export::{ExportError, MetricNear};
pub use file::{FileKind, MAX_INPUT_SIZE_VARIABLE, TooLarge};
pub use history::{HISTORY_URL_FORMS, HistoryError};
pub use ncu::NcuFailure;
pub(crate) use ncu::fatal_signal_line;
pub use process::ProcessError;
pub use report::{Made, MergeError, ReportError};
pub use tool::{SanitizerFailure, ToolError};

use crate::text::escape::shown;

/// An expected failure: exit code 2, one line of message, one line of hint.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file (or standard input) that cannot be read; the hint fits what
    /// `kind` of file it is and whether it is missing.
    #[error("cannot read {}: {source}", kind.named(path))]
    Read {
        kind: FileKind,
        path: PathBuf,
        source: std::io::Error,
    },

    /// A file (or standard input) larger than the input size limit: a device
    /// such as `/dev/zero`, or no file ncugate reads.
    #[error("cannot read {}: it is larger than the input size limit ({limit} bytes)", kind.named(path))]
    TooLarge {
        kind: FileKind,
        path: PathBuf,
        limit: u64,
    },

    /// A TOML file (`kind`: config or thresholds) that does not parse:
    /// `detail` is toml's own report (line, the line itself, a caret under
    /// the column); `keys` are the tables or keys it may hold.
    #[error("{path}: invalid {}", kind.noun().unwrap_or("file"))]
    Toml {
        kind: FileKind,
        path: String,
        detail: String,
        keys: Vec<String>,
    },

    /// A command that failed; its output's tail is shown apart from the message.
    #[error(transparent)]
    Process(Box<ProcessError>),

    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },

    /// A folder inside a report folder is a symbolic link: the report's files
    /// would be written where it points, outside the folder.
    #[error("cannot write into {}: it is a symbolic link, and a report folder's files are written only into folders inside it", path.display())]
    LinkedFolder { path: PathBuf },

    /// A file whose content is not what its `kind` should hold; `problem`
    /// says where and what.
    #[error("{}: {problem}", .path.display())]
    Malformed {
        kind: FileKind,
        path: PathBuf,
        problem: String,
    },

    /// An ncu export that cannot be gated.
    #[error("{}: {error}", FileKind::Export.named(.path))]
    Export {
        path: PathBuf,
        error: Box<ExportError>,
    },

    /// A report given to `ncugate merge` that is not a suite report.
    #[error("{}: {error}", .path.display())]
    Report { path: PathBuf, error: ReportError },

    #[error("cannot merge: {0}")]
    Merge(Box<MergeError>),

    #[error(transparent)]
    Config(Box<ConfigError>),

    #[error(transparent)]
    Baseline(Box<BaselineError>),

    #[error(transparent)]
    Tool(Box<ToolError>),

    #[error(transparent)]
    History(Box<HistoryError>),

    /// A thresholds file that parses but says something invalid; `keys` are
    /// the keys a `[[rule]]` may hold.
    #[error("{path}: invalid thresholds: {message}")]
    Thresholds {
        path: String,
        message: String,
        keys: Vec<String>,
    },

    /// A profiled ncu run that failed in one of the known ways; `logs` is the
    /// work directory that keeps its output.
    #[error("{failure}")]
    Ncu {
        failure: Box<NcuFailure>,
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
            Error::Read { kind, path, source } => kind.read_hint(path, source),
            Error::Write { .. } => "check that the directory exists and is writable".into(),
            Error::LinkedFolder { .. } => {
                "remove the link, or write the report to a folder that holds none".into()
            }
            Error::TooLarge { .. } => format!(
                "check the path: real exports, reports and baselines stay far below it (not a device such as /dev/zero); to read a larger file set {}=BYTES",
                MAX_INPUT_SIZE_VARIABLE
            ),
            Error::Malformed { kind, .. } => kind.malformed_hint().into(),
            // Nothing came down the pipe: the fix is the command before it.
            Error::Export { error, path }
                if **error == ExportError::Empty && path == Path::new("-") =>
            {
                "pipe an export into it: `ncu --import R.ncu-rep --csv --page raw | ncugate check --input -`".into()
            }
            Error::Export { error, .. } => error.hint(),
            Error::Report { error, .. } => error.hint(),
            Error::Merge(error) => error.hint(),
            Error::Config(error) => error.hint(),
            Error::Baseline(error) => error.hint(),
            Error::Tool(error) => error.hint(),
            Error::History(error) => error.hint(),
            Error::Process(error) => error.hint(),
            Error::Toml { kind, keys, .. } => kind.format_hint(keys),
            Error::Thresholds { keys, .. } => FileKind::Thresholds.format_hint(keys),
            Error::Ncu { failure, logs } => match logs {
                Some(dir) => format!("{} (logs: {})", failure.hint(), dir.display()),
                None => failure.hint(),
            },
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
            Error::Process(error) => error.output().to_vec(),
            _ => Vec::new(),
        }
    }

    /// The error as printed on standard error: `ncugate: error: …`, its
    /// detail (toml's report, a command's output) indented below, and its
    /// `hint:`, each line ending in a newline. The values a message quotes
    /// (names and tags from `ncugate.toml`, metric names, a history URL, a
    /// command's output) pass the border here, once for every variant: each
    /// part is one [`shown`] line.
    pub fn printed(&self) -> String {
        let mut text = format!("ncugate: error: {}\n", shown(&self.to_string()));
        for line in self.detail() {
            text.push_str(&format!("  | {}\n", shown(&line)));
        }
        text.push_str(&format!("hint: {}\n", shown(&self.hint())));
        text
    }

    /// The error as one line for the file reports: message, its detail
    /// (`output: …`), hint; each part [`shown`].
    pub(crate) fn report_line(&self) -> String {
        let detail = self.detail();
        let detail = if detail.is_empty() {
            String::new()
        } else {
            let lines: Vec<String> = detail.iter().map(|l| shown(l)).collect();
            format!(" — output: {}", lines.join(" ⏎ "))
        };
        format!(
            "{}{detail} (hint: {})",
            shown(&self.to_string()),
            shown(&self.hint())
        )
    }

    /// The error for a file of `kind` at `path` that cannot be read.
    pub fn read(kind: FileKind, path: &Path, source: std::io::Error) -> Error {
        let too_large = source.get_ref().and_then(|e| e.downcast_ref::<TooLarge>());
        if let Some(t) = too_large {
            return Error::TooLarge {
                kind,
                path: path.to_path_buf(),
                limit: t.limit,
            };
        }
        Error::Read {
            kind,
            path: path.to_path_buf(),
            source,
        }
    }

    /// The error for an export at `path` that cannot be gated.
    pub fn export(path: &Path, error: ExportError) -> Error {
        Error::Export {
            path: path.to_path_buf(),
            error: Box::new(error),
        }
    }

    /// The error of a profiled ncu run (`logs`: its work directory) or of an import.
    pub fn ncu(failure: NcuFailure, logs: Option<PathBuf>) -> Error {
        Error::Ncu {
            failure: Box::new(failure),
            logs,
        }
    }

    /// The error for a file of `kind` at `path` whose content is wrong.
    pub fn malformed(kind: FileKind, path: &Path, problem: String) -> Error {
        Error::Malformed {
            kind,
            path: path.to_path_buf(),
            problem,
        }
    }

    /// The error for a TOML file of `kind` that does not parse, with toml's
    /// own report; `keys` are the tables or keys it may hold.
    pub(crate) fn toml(
        kind: FileKind,
        path: &str,
        error: &toml::de::Error,
        keys: &[&str],
    ) -> Error {
        Error::Toml {
            kind,
            path: path.to_string(),
            detail: error.to_string(),
            keys: keys.iter().map(|k| k.to_string()).collect(),
        }
    }
}

// The kinds are boxed in `Error`: a `Result` stays small on the happy path.
macro_rules! boxed_from {
    ($($kind:ident => $variant:ident),*) => {$(
        impl From<$kind> for Error {
            fn from(error: $kind) -> Error {
                Error::$variant(Box::new(error))
            }
        }
    )*};
}
boxed_from!(MergeError => Merge, ConfigError => Config, BaselineError => Baseline, ToolError => Tool, ProcessError => Process, HistoryError => History);

/// Result type of the gate's fallible steps.
pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;
