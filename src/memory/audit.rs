//! The report of the CUPTI injection library (`inject/ncugate_audit.c`):
//! graphs and graph executables created and destroyed inside the app.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One graph executable alive at exit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LiveExec {
    pub(crate) id: u64,
    #[serde(default)]
    pub(crate) launches: u64,
    /// Best-effort host symbol of the code that instantiated it.
    #[serde(default)]
    pub(crate) created_by: Option<String>,
}

/// What the injection library counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Audit {
    pub(crate) graphs_created: u64,
    pub(crate) graphs_destroyed: u64,
    pub(crate) execs_created: u64,
    pub(crate) execs_destroyed: u64,
    #[serde(default)]
    pub(crate) graph_launches: u64,
    #[serde(default)]
    pub(crate) live_execs: Vec<LiveExec>,
    #[serde(default)]
    pub(crate) graph_mem_used_high: Option<u64>,
    #[serde(default)]
    pub(crate) graph_mem_reserved_high: Option<u64>,
    #[serde(default)]
    pub(crate) pool_reserved_high: Option<u64>,
    /// CLOCK_MONOTONIC ns of the first and last graph launch (0: none).
    #[serde(default)]
    pub(crate) first_launch_ns: Option<u64>,
    #[serde(default)]
    pub(crate) last_launch_ns: Option<u64>,
}

impl Audit {
    /// The launches' time window in CLOCK_MONOTONIC seconds, when there were two or more.
    pub(crate) fn launch_window(&self) -> Option<(f64, f64)> {
        match (self.first_launch_ns, self.last_launch_ns) {
            (Some(a), Some(b)) if a > 0 && b > a => Some((a as f64 / 1e9, b as f64 / 1e9)),
            _ => None,
        }
    }
}

/// The text of the library's report at `path` (bounded, UTF-8); none there
/// is [`crate::error::ToolError::NoAuditReport`].
pub(crate) fn read_text(path: &Path) -> Result<String> {
    crate::io::bounded::read_io(path)
        .and_then(|bytes| String::from_utf8(bytes).map_err(std::io::Error::other))
        .map_err(|_| {
            Error::from(crate::error::ToolError::NoAuditReport {
                report: path.to_path_buf(),
            })
        })
}

/// The report's JSON object: the library writes one; a trailing newline or
/// several are tolerated (the last object is taken).
pub(crate) fn last_object(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .unwrap_or(text)
}

/// Reads the library's JSON report.
pub(crate) fn read(path: &Path) -> Result<Audit> {
    let text = read_text(path)?;
    let line = last_object(&text);
    serde_json::from_str(line).map_err(|e| {
        Error::malformed(
            crate::error::FileKind::AuditReport,
            path,
            format!("unreadable graph audit report: {e}"),
        )
    })
}
