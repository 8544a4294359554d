//! Read: the `kernel_trace` key of the audit library's JSON report
//! (`inject/ncugate_audit.c` with `NCUGATE_AUDIT_KERNELS=1`), read as
//! hostile input: bounded in size and in entries, every field checked, a
//! trace CUPTI could not enable or that dropped records an error (exit 2),
//! never a pass.

use crate::error::{Error, FileKind, Result, ToolError};
use serde::Deserialize;
use std::path::Path;

/// The most distinct kernels one trace may list: more is not a trace of an app.
pub(crate) const MAX_KERNELS: usize = 100_000;
/// The longest kernel name kept, in bytes (a mangled name of a deep template is long, not this long).
pub(crate) const MAX_NAME: usize = 16_384;

/// One distinct kernel of a trace: its mangled name, launch configuration
/// and resources, and how often and how long it ran.
// Keys the library may add later are ignored; the ones below are required.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct TracedKernel {
    /// The mangled name as CUPTI reports it (a C symbol stays as is).
    pub(crate) name: String,
    pub(crate) grid: [u32; 3],
    pub(crate) block: [u32; 3],
    pub(crate) registers: u32,
    pub(crate) static_shared: u64,
    pub(crate) dynamic_shared: u64,
    pub(crate) local_per_thread: u64,
    pub(crate) launches: u64,
    /// Launches that ran as CUDA graph nodes.
    pub(crate) graph_launches: u64,
    pub(crate) ns_total: u64,
    pub(crate) ns_min: u64,
    pub(crate) ns_max: u64,
}

impl TracedKernel {
    /// `grid (x, y, z) block (x, y, z)`, as a baseline's code records a launch configuration.
    pub(crate) fn launch(&self) -> String {
        let dims = |d: [u32; 3]| format!("({}, {}, {})", d[0], d[1], d[2]);
        format!("grid {} block {}", dims(self.grid), dims(self.block))
    }
}

/// The `kernel_trace` of one run.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
struct KernelTrace {
    enabled: bool,
    #[serde(default)]
    dropped: u64,
    #[serde(default)]
    records: u64,
    /// Records the library delivered but could not sum (too many distinct kernels).
    #[serde(default)]
    overflow: u64,
    #[serde(default)]
    kernels: Vec<TracedKernel>,
}

/// The keys of the report the trace reads; the others (graphs created, …) are the memory audit's.
#[derive(Debug, Deserialize)]
struct Report {
    #[serde(default)]
    kernel_trace: Option<KernelTrace>,
    #[serde(default)]
    errors: Option<serde_json::Value>,
}

/// One run's traced kernels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Trace {
    pub(crate) kernels: Vec<TracedKernel>,
    /// Activity records CUPTI delivered.
    pub(crate) records: u64,
}

/// Reads the trace of the report at `path`.
pub(crate) fn read(path: &Path) -> Result<Trace> {
    parse(&crate::memory::audit::read_text(path)?, path)
}

/// The trace in `text`, the report at `path`.
pub(crate) fn parse(text: &str, path: &Path) -> Result<Trace> {
    let malformed = |problem: String| Error::malformed(FileKind::AuditReport, path, problem);
    let line = crate::memory::audit::last_object(text);
    let report: Report = serde_json::from_str(line)
        .map_err(|e| malformed(format!("unreadable kernel trace: {e}")))?;
    let Some(trace) = report.kernel_trace else {
        return Err(Error::from(ToolError::NoKernelTrace {
            report: path.to_path_buf(),
        }));
    };
    if !trace.enabled {
        return Err(Error::from(ToolError::TraceDisabled {
            report: path.to_path_buf(),
            reason: errors_text(report.errors.as_ref()),
        }));
    }
    if trace.dropped > 0 || trace.overflow > 0 {
        return Err(Error::from(ToolError::TraceIncomplete {
            report: path.to_path_buf(),
            dropped: trace.dropped.saturating_add(trace.overflow),
            records: trace.records,
        }));
    }
    if trace.kernels.len() > MAX_KERNELS {
        return Err(malformed(format!(
            "the kernel trace lists {} kernels, more than {MAX_KERNELS}",
            trace.kernels.len()
        )));
    }
    for (i, k) in trace.kernels.iter().enumerate() {
        if let Some(problem) = implausible(k) {
            return Err(malformed(format!("kernel_trace.kernels[{i}]: {problem}")));
        }
    }
    Ok(Trace {
        kernels: trace.kernels,
        records: trace.records,
    })
}

/// What makes an entry impossible, if anything.
fn implausible(k: &TracedKernel) -> Option<String> {
    if k.name.trim().is_empty() {
        return Some("the kernel has no name".into());
    }
    if k.name.len() > MAX_NAME {
        return Some(format!(
            "a kernel name of {} bytes, more than {MAX_NAME}",
            k.name.len()
        ));
    }
    if k.launches == 0 {
        return Some("a kernel listed with 0 launches".into());
    }
    if k.graph_launches > k.launches {
        return Some(format!(
            "{} graph launches of {} launches",
            k.graph_launches, k.launches
        ));
    }
    if k.grid.contains(&0) || k.block.contains(&0) {
        return Some(format!("a launch configuration with a 0: {}", k.launch()));
    }
    if k.ns_min > k.ns_max {
        return Some(format!(
            "ns_min {} is more than ns_max {}",
            k.ns_min, k.ns_max
        ));
    }
    None
}

/// The report's `errors`, in one line: why CUPTI activity was not enabled.
fn errors_text(errors: Option<&serde_json::Value>) -> String {
    let text = match errors {
        None | Some(serde_json::Value::Null) => "the report gives no reason".to_string(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join("; "),
        Some(other) => other.to_string(),
    };
    let one = crate::text::escape::one_line(text);
    match one.char_indices().nth(500) {
        Some((at, _)) => format!("{}…", &one[..at]),
        None => one,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> std::result::Result<Trace, String> {
        parse(text, Path::new("trace.json")).map_err(|e| e.report_line())
    }

    // One line, as the library writes its report.
    const KERNEL: &str = concat!(
        r#"{"name": "_Z5scalePfPKfm", "grid": [256,1,1], "block": [256,1,1], "registers": 16, "#,
        r#""static_shared": 0, "dynamic_shared": 0, "local_per_thread": 0, "launches": 3, "#,
        r#""graph_launches": 3, "ns_total": 12345, "ns_min": 4100, "ns_max": 4200}"#
    );

    #[test]
    fn a_complete_trace_reads_with_its_launch_configuration() {
        let text = format!(
            r#"{{"graphs_created": 1, "kernel_trace": {{"enabled": true, "dropped": 0, "records": 3, "kernels": [{KERNEL}]}}}}"#
        );
        let trace = parsed(&text).expect("a trace");
        assert_eq!(trace.kernels.len(), 1);
        assert_eq!(
            trace.kernels[0].launch(),
            "grid (256, 1, 1) block (256, 1, 1)"
        );
    }

    #[test]
    fn dropped_records_disabled_tracing_and_impossible_entries_are_errors() {
        let dropped =
            r#"{"kernel_trace": {"enabled": true, "dropped": 4, "records": 9, "kernels": []}}"#;
        assert!(
            parsed(dropped)
                .unwrap_err()
                .contains("4 activity records lost")
        );
        // Records the library delivered but could not sum make the trace as incomplete.
        let overflow = format!(
            r#"{{"kernel_trace": {{"enabled": true, "dropped": 0, "overflow": 2, "records": 9, "kernels": [{KERNEL}]}}}}"#
        );
        assert!(
            parsed(&overflow)
                .unwrap_err()
                .contains("2 activity records lost")
        );
        // The library writes its errors as one string.
        let disabled = r#"{"errors": "kernel trace: CUPTI_ERROR_NOT_INITIALIZED", "kernel_trace": {"enabled": false}}"#;
        assert!(
            parsed(disabled)
                .unwrap_err()
                .contains("CUPTI_ERROR_NOT_INITIALIZED")
        );
        let disabled = r#"{"errors": ["cuptiActivityEnable(CONCURRENT_KERNEL): CUPTI_ERROR_NOT_INITIALIZED"], "kernel_trace": {"enabled": false}}"#;
        let e = parsed(disabled).unwrap_err();
        assert!(e.contains("CUPTI_ERROR_NOT_INITIALIZED"), "{e}");
        let absent = r#"{"graphs_created": 0}"#;
        assert!(parsed(absent).unwrap_err().contains("no kernel trace"));
        let zero = KERNEL.replace(r#""launches": 3"#, r#""launches": 0"#);
        let text = format!(r#"{{"kernel_trace": {{"enabled": true, "kernels": [{zero}]}}}}"#);
        assert!(parsed(&text).unwrap_err().contains("0 launches"));
        let negative = KERNEL.replace("[256,1,1], \"block\"", "[-1,1,1], \"block\"");
        let text = format!(r#"{{"kernel_trace": {{"enabled": true, "kernels": [{negative}]}}}}"#);
        assert!(
            parsed(&text)
                .unwrap_err()
                .contains("unreadable kernel trace")
        );
        assert!(parsed("{\"kernel_trace\": ").is_err());
    }
}
