//! The sanitizer gate: compute-sanitizer's records grouped into findings a
//! person can act on — kind, API and error, or access and kernel, and the
//! first frame in the user's code — with counts, a representative host stack
//! and, for leaks, the bytes.

pub mod run;
pub(crate) mod tool;
pub(crate) mod xml;

pub use tool::Tool;
pub(crate) use xml::RecordKind;

use crate::error::{Error, Result};
use crate::status::Status;
use regex::Regex;
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;
use xml::{Frame, Record};

/// One group of records.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub(crate) struct SanitizerFinding {
    /// memcheck, racecheck, initcheck, synccheck.
    #[schemars(with = "String")]
    pub(crate) tool: Tool,
    /// The record kind: `Api`, `Precise`, `Leak`, …
    #[schemars(with = "String")]
    pub(crate) kind: RecordKind,
    /// What happened, with addresses and sizes that vary per record left out.
    pub(crate) summary: String,
    /// The CUDA API call (`cuMemFreeAsync`) for API errors.
    pub(crate) api: Option<String>,
    /// The error (`CUDA_ERROR_INVALID_VALUE`, `out of bounds`).
    pub(crate) error: Option<String>,
    /// The kernel for device-side errors.
    pub(crate) kernel: Option<String>,
    /// The first host frame in the user's code (`test` in `seed_bug`), with file:line when known.
    pub(crate) user_frame: Option<String>,
    /// Records in this group.
    pub(crate) count: u64,
    /// Leaked bytes (leak records).
    pub(crate) bytes: Option<u64>,
    /// The first record's host stack, innermost first.
    pub(crate) example_stack: Vec<String>,
    /// The first record's thread and block, for device errors.
    pub(crate) example_thread: Option<String>,
    pub(crate) status: Status,
    /// The allow-list entry's reason, when allowed.
    pub(crate) allowed: Option<String>,
    /// One line for reports.
    pub(crate) message: String,
}

/// A known finding that does not fail the gate: `pattern` is matched against
/// `"<kind> <summary> <api> <error> <kernel> <user frame>"`.
#[derive(Debug, Clone)]
pub struct Allow {
    pub(crate) pattern: Regex,
    pub(crate) reason: String,
}

/// Groups records as they stream by; memory is bounded by the number of distinct findings.
#[derive(Debug, Default)]
pub(crate) struct Grouper {
    tool: Tool,
    groups: HashMap<String, SanitizerFinding>,
    order: Vec<String>,
    pub(crate) records: u64,
}

impl Grouper {
    pub(crate) fn new(tool: Tool) -> Grouper {
        Grouper {
            tool,
            ..Grouper::default()
        }
    }

    pub(crate) fn add(&mut self, record: Record) {
        self.records += 1;
        let text = record.what("text").unwrap_or_default();
        let summary = normalize(text, &record.kind);
        let kernel =
            record
                .place("func")
                .map(|f| match (record.place("path"), record.place("line")) {
                    (Some(path), Some(line)) => {
                        format!("{f} ({}:{line})", path.rsplit('/').next().unwrap_or(path))
                    }
                    _ => f.to_string(),
                });
        // racecheck aggregates hazards: one record stands for `count` of them.
        let weight: u64 = record
            .what("destination_count")
            .and_then(|c| c.parse().ok())
            .unwrap_or(1);
        let summary = match (
            record.what("source_direction"),
            record.what("destination_direction"),
        ) {
            (Some(src), Some(dst)) => format!(
                "{summary}: {src} at {} → {dst} at {}",
                side_place(&record, "source"),
                side_place(&record, "destination")
            ),
            _ => summary,
        };
        let user = user_frame(&record.frames);
        let key = format!(
            "{}|{}|{}|{}|{}",
            record.kind,
            summary,
            kernel.as_deref().unwrap_or(""),
            record.what("api").unwrap_or(""),
            user.as_deref().unwrap_or("")
        );
        let bytes = leak_bytes(&record);
        if let Some(group) = self.groups.get_mut(&key) {
            // Saturating: a wrapped sum could turn a flood of findings into a small number.
            group.count = group.count.saturating_add(weight);
            if let (Some(total), Some(b)) = (group.bytes.as_mut(), bytes) {
                *total = total.saturating_add(b);
            }
            return;
        }
        let finding = SanitizerFinding {
            tool: self.tool,
            kind: record.kind.clone(),
            summary,
            api: record.what("api").map(str::to_string),
            error: record.what("error").map(str::to_string),
            kernel,
            user_frame: user,
            count: weight,
            bytes,
            example_stack: record
                .frames
                .iter()
                .filter(|f| !is_startup(f) && !is_runtime_internal(f))
                .map(frame_text)
                .collect(),
            example_thread: match (&record.thread, &record.block) {
                (Some(t), Some(b)) => Some(format!("thread {t} in block {b}")),
                _ => None,
            },
            status: Status::Fail,
            allowed: None,
            message: String::new(),
        };
        self.order.push(key.clone());
        self.groups.insert(key, finding);
    }

    /// The findings in order of first appearance, judged against `allow`.
    pub(crate) fn finish(mut self, allow: &[Allow]) -> Vec<SanitizerFinding> {
        let mut out = Vec::with_capacity(self.order.len());
        for key in &self.order {
            let Some(mut f) = self.groups.remove(key) else {
                continue;
            };
            let haystack = format!(
                "{} {} {} {} {} {}",
                f.kind,
                f.summary,
                f.api.as_deref().unwrap_or(""),
                f.error.as_deref().unwrap_or(""),
                f.kernel.as_deref().unwrap_or(""),
                f.user_frame.as_deref().unwrap_or("")
            );
            if let Some(a) = allow.iter().find(|a| a.pattern.is_match(&haystack)) {
                f.status = Status::Warn;
                f.allowed = Some(a.reason.clone());
            }
            f.message = describe(&f);
            out.push(f);
        }
        out
    }
}

/// Reads one saved XML file into findings.
pub(crate) fn read_xml(
    path: &Path,
    tool: Tool,
    allow: &[Allow],
) -> Result<(Vec<SanitizerFinding>, u64)> {
    let file = crate::io::bounded::open(path)
        .map_err(|source| Error::read(crate::error::FileKind::SanitizerXml, path, source))?;
    let mut grouper = Grouper::new(tool);
    let n = xml::read_records(
        path,
        std::io::BufReader::with_capacity(1 << 16, file),
        |r| grouper.add(r),
    )?;
    Ok((grouper.finish(allow), n))
}

fn describe(f: &SanitizerFinding) -> String {
    if f.kind == RecordKind::Leak {
        let bytes = f.bytes.unwrap_or(0);
        let mut s = format!(
            "{} never freed: {bytes} bytes ({})",
            crate::format::count(f.count, "allocation", "allocations"),
            crate::format::format_value(bytes as f64, "byte")
        );
        if let Some(u) = &f.user_frame {
            s.push_str(&format!(", allocated from {u}"));
        }
        if let Some(reason) = &f.allowed {
            s.push_str(&format!(" — allowed: {reason}"));
        }
        return s;
    }
    // compute-sanitizer's sentences end in a full stop; more follows here.
    let mut s = format!(
        "{}× {}",
        f.count,
        f.summary.trim_end().trim_end_matches('.')
    );
    if let Some(k) = &f.kernel {
        s.push_str(&format!(" in kernel {k}"));
    }
    if let Some(b) = f.bytes {
        s.push_str(&format!(" ({} bytes)", b));
    }
    if let Some(u) = &f.user_frame {
        s.push_str(&format!(", from {u}"));
    }
    if let Some(reason) = &f.allowed {
        s.push_str(&format!(" — allowed: {reason}"));
    }
    s
}

/// The text without per-record details: addresses, and for leaks the size.
fn normalize(text: &str, kind: &RecordKind) -> String {
    static HEX: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let hex = HEX.get_or_init(|| {
        Regex::new(r"0x[0-9a-fA-F]+").unwrap_or_else(|_| unreachable!("a valid literal regex"))
    });
    let text = hex.replace_all(text.trim(), "0x…").into_owned();
    if *kind == RecordKind::Leak {
        static NUM: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
        let num = NUM.get_or_init(|| {
            Regex::new(r"\b[0-9][0-9,]*\b")
                .unwrap_or_else(|_| unreachable!("a valid literal regex"))
        });
        return num.replace_all(&text, "N").into_owned();
    }
    text
}

/// `file:line` (or the function) of one side of a racecheck hazard.
fn side_place(record: &Record, side: &str) -> String {
    match (
        record.what(&format!("{side}_path")),
        record.what(&format!("{side}_line")),
    ) {
        (Some(path), Some(line)) => format!("{}:{line}", path.rsplit('/').next().unwrap_or(path)),
        _ => record
            .what(&format!("{side}_func"))
            .unwrap_or("?")
            .to_string(),
    }
}

/// Leak records carry their size in `<what><size>`.
fn leak_bytes(record: &Record) -> Option<u64> {
    if record.kind != RecordKind::Leak {
        return None;
    }
    record
        .what("size")
        .and_then(|s| s.replace(',', "").parse().ok())
}

/// Frames of the CUDA driver, runtime, libc and the loader are not the user's code.
fn is_system(frame: &Frame) -> bool {
    let func = frame.func.as_deref().unwrap_or("");
    let module = frame.module.as_deref().unwrap_or("");
    let base = module.rsplit('/').next().unwrap_or(module);
    func.is_empty()
        || base.starts_with("libcuda")
        || base.starts_with("libcudart")
        || base.starts_with("libc.so")
        || base.starts_with("ld-linux")
        || base.starts_with("libstdc++")
        || func.starts_with("libcudart_static")
        || func.starts_with("__device_stub")
        || func.starts_with("__cudart")
        || func.starts_with("cuda")
        || (func.starts_with("cu") && func.chars().nth(2).is_some_and(|c| c.is_ascii_uppercase()))
        || matches!(
            func,
            "_start" | "__libc_start_main" | "__libc_start_call_main"
        )
}

/// The CUDA runtime's own frames (a statically linked runtime shows as
/// `libcudart_static_<hash>` in the app's module): between the API call and
/// the user's code, they say nothing to the reader.
fn is_runtime_internal(frame: &Frame) -> bool {
    frame
        .func
        .as_deref()
        .is_some_and(|f| f.starts_with("libcudart_static") || f.starts_with("__cudart"))
}

/// libc's and the loader's frames below `main`: never useful in a report.
fn is_startup(frame: &Frame) -> bool {
    let module = frame.module.as_deref().unwrap_or("");
    frame.func.is_none()
        || module
            .rsplit('/')
            .next()
            .is_some_and(|m| m.starts_with("libc.so") || m.starts_with("ld-linux"))
        || frame.func.as_deref() == Some("_start")
}

fn user_frame(frames: &[Frame]) -> Option<String> {
    let f = frames.iter().find(|f| !is_system(f))?;
    let mut s = f.func.clone().unwrap_or_default();
    if let Some(file) = &f.file {
        s.push_str(&format!(
            " ({file}{})",
            f.line.map(|l| format!(":{l}")).unwrap_or_default()
        ));
    } else if let Some(module) = &f.module {
        s.push_str(&format!(
            " in {}",
            module.rsplit('/').next().unwrap_or(module)
        ));
    }
    Some(s)
}

fn frame_text(f: &Frame) -> String {
    let func = f.func.as_deref().unwrap_or("??");
    let place = match (&f.file, f.line) {
        (Some(file), Some(line)) => format!("{file}:{line}"),
        _ => f
            .module
            .as_deref()
            .map(|m| m.rsplit('/').next().unwrap_or(m).to_string())
            .unwrap_or_default(),
    };
    format!("{func} ({place})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_ordered_alloc_bug_program_groups_into_its_two_bugs() {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/ncu-reference/sanitizer/stream-ordered-alloc-bug.memcheck.xml"
        ));
        let (findings, n) = read_xml(path, Tool::Memcheck, &[]).unwrap();
        assert_eq!(n, 10);
        assert_eq!(findings.len(), 2, "{findings:#?}");
        let api = &findings[0];
        assert_eq!(
            (
                api.kind.as_str(),
                api.api.as_deref(),
                api.error.as_deref(),
                api.count
            ),
            (
                "Api",
                Some("cuMemFreeAsync"),
                Some("CUDA_ERROR_INVALID_VALUE"),
                2
            )
        );
        assert_eq!(api.user_frame.as_deref(), Some("test in seed_bug"));
        let oob = &findings[1];
        assert_eq!(
            (oob.kernel.as_deref(), oob.count),
            (Some("shortKernel_2"), 8)
        );
        assert_eq!(
            oob.summary,
            "Invalid __global__ read of size 4 bytes is out of bounds"
        );
        assert_eq!(
            oob.example_thread.as_deref(),
            Some("thread (32,0,0) in block (8,0,0)")
        );
        assert!(findings.iter().all(|f| f.status == Status::Fail));
    }

    #[test]
    fn allowed_findings_warn_with_their_reason() {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/ncu-reference/sanitizer/stream-ordered-alloc-bug.memcheck.xml"
        ));
        let allow = [Allow {
            pattern: Regex::new("cuMemFreeAsync").unwrap(),
            reason: "tracked in #42".into(),
        }];
        let (findings, _) = read_xml(path, Tool::Memcheck, &allow).unwrap();
        assert_eq!(findings[0].status, Status::Warn);
        assert!(findings[0].message.ends_with("allowed: tracked in #42"));
        assert_eq!(findings[1].status, Status::Fail);
    }

    #[test]
    fn an_empty_report_has_no_findings() {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/ncu-reference/sanitizer/clean-program.memcheck-leakcheck.xml"
        ));
        let (findings, n) = read_xml(path, Tool::Memcheck, &[]).unwrap();
        assert_eq!((findings.len(), n), (0, 0));
    }

    #[test]
    fn hazard_and_leak_sums_saturate_instead_of_wrapping() {
        // The real racecheck and leak records, each added twice with the largest count/size.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/h200/memory/");
        for (file, tool) in [
            ("race_app.racecheck.xml", Tool::Racecheck),
            ("leaky_app.memcheck-leakcheck.xml", Tool::Memcheck),
        ] {
            let text = std::fs::read_to_string(format!("{dir}{file}")).unwrap();
            let huge = u64::MAX.to_string();
            let text = text
                .replace("<count>4096</count>", &format!("<count>{huge}</count>"))
                .replace("Leaked 1048576 bytes", &format!("Leaked {huge} bytes"))
                .replace("<size>1048576</size>", &format!("<size>{huge}</size>"));
            let mut grouper = Grouper::new(tool);
            for _ in 0..2 {
                xml::read_records(Path::new(file), text.as_bytes(), |r| grouper.add(r)).unwrap();
            }
            let findings = grouper.finish(&[]);
            assert!(!findings.is_empty(), "{file}");
            let f = &findings[0];
            assert!(f.count >= 2, "{file}: {f:#?}");
            if tool == Tool::Racecheck {
                assert_eq!(f.count, u64::MAX, "{file}");
            } else {
                assert_eq!(f.bytes, Some(u64::MAX), "{file}: {f:#?}");
            }
        }
    }
}
