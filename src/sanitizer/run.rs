//! Running compute-sanitizer on the app (behind the process runner, like ncu).

use super::{Allow, SanitizerFinding, Tool};
use crate::error::{Error, Result, SanitizerFailure};
use crate::runner::process::{CommandSpec, Exit, ProcessRunner};
use std::path::PathBuf;
use std::time::Duration;

/// compute-sanitizer exits with this when it found errors (`--error-exitcode`),
/// so its findings are told apart from the app's own failure.
pub(crate) const FOUND_ERRORS: i32 = 86;

/// How to run compute-sanitizer.
#[derive(Debug, Clone)]
pub struct SanitizerConfig {
    /// Each a separate run.
    pub tools: Vec<Tool>,
    /// `--leak-check full` with memcheck.
    pub leak_check: bool,
    pub print_limit: u64,
    pub allow: Vec<Allow>,
    pub program: String,
    pub app: Vec<String>,
    pub env: Vec<(String, String)>,
    pub workdir: PathBuf,
    pub timeout: Duration,
    pub out_dir: PathBuf,
}

/// What one tool's run produced.
#[derive(Debug, Clone)]
pub(crate) struct ToolRun {
    pub(crate) xml: PathBuf,
    pub(crate) findings: Vec<SanitizerFinding>,
    /// Records in the XML.
    pub(crate) records: u64,
    /// "ERROR SUMMARY: N errors" from the sanitizer's output (it may exceed `records`: print limit).
    pub(crate) reported: Option<u64>,
    /// A note for the report (e.g. the app's own non-zero exit).
    pub(crate) note: Option<String>,
}

pub(crate) fn args(config: &SanitizerConfig, tool: Tool, xml: &std::path::Path) -> Vec<String> {
    let mut a: Vec<String> = vec!["--tool".into(), tool.as_str().into()];
    if tool == Tool::Memcheck && config.leak_check {
        a.extend(["--leak-check".into(), "full".into()]);
    }
    a.extend([
        "--xml".into(),
        "--save".into(),
        xml.to_string_lossy().into_owned(),
        "--print-limit".into(),
        config.print_limit.to_string(),
        "--error-exitcode".into(),
        FOUND_ERRORS.to_string(),
        "--target-processes".into(),
        "all".into(),
    ]);
    a.extend(config.app.iter().cloned());
    a
}

/// Runs one tool and groups its findings.
pub(crate) fn run_tool(
    config: &SanitizerConfig,
    tool: Tool,
    runner: &dyn ProcessRunner,
) -> Result<ToolRun> {
    if config.app.is_empty() {
        return Err(Error::from(crate::error::ConfigError::NoAppToSanitize));
    }
    std::fs::create_dir_all(&config.out_dir).map_err(|source| Error::Write {
        path: config.out_dir.clone(),
        source,
    })?;
    let xml = config.out_dir.join(format!("sanitizer.{tool}.xml"));
    let _ = std::fs::remove_file(&xml);
    let mut spec = CommandSpec::new(config.program.clone(), args(config, tool, &xml));
    spec.env = config.env.clone();
    spec.workdir = Some(config.workdir.clone());
    spec.timeout = Some(config.timeout);
    crate::text::escape::say(&format!("ncugate: sanitize: {}", spec.display()));
    let done = runner.run(&spec, &mut |_| {});
    let log = config.out_dir.join(format!("sanitizer.{tool}.log"));
    crate::runner::write_lines(&log, &done.lines)?;
    let tail = done.tail(3);
    let fail = |failure: SanitizerFailure| {
        Error::from(crate::error::ToolError::Sanitizer {
            failure,
            log: log.clone(),
        })
    };
    let app_code = match &done.exit {
        Exit::NotFound => {
            return Err(crate::error::ToolError::SanitizerNotFound {
                program: config.program.clone(),
            }
            .into());
        }
        Exit::SpawnFailed(e) => {
            return Err(fail(SanitizerFailure::SpawnFailed {
                program: config.program.clone(),
                reason: e.clone(),
            }));
        }
        // The sanitizer's runs set no crash stall: only the timeout ends them.
        Exit::TimedOut(d) | Exit::HungAfterCrash(d) => {
            return Err(fail(SanitizerFailure::TimedOut {
                seconds: d.as_secs(),
            }));
        }
        Exit::Signal(s) => {
            return Err(fail(SanitizerFailure::Killed {
                signal: s.to_string(),
            }));
        }
        Exit::Code(c) => *c,
    };
    if !xml.exists() {
        return Err(fail(SanitizerFailure::NoXml {
            code: app_code,
            tail,
        }));
    }
    // It prints a summary as it ends; without one it stopped before the app
    // did, and an XML of what it saw so far would read as a clean run.
    if !done.lines.iter().any(|l| ended(l)) {
        return Err(fail(SanitizerFailure::NoSummary {
            code: app_code,
            tail,
        }));
    }
    let (findings, records) = super::read_xml(&xml, tool, &config.allow)?;
    let reported = done.lines.iter().find_map(|l| error_summary(l));
    let note = match app_code {
        0 | FOUND_ERRORS => None,
        code if findings.is_empty() => {
            return Err(fail(SanitizerFailure::AppExit { code, tail }));
        }
        code => Some(format!(
            "the app itself exited with code {code} under {tool}"
        )),
    };
    Ok(ToolRun {
        xml,
        findings,
        records,
        reported,
        note,
    })
}

/// The line compute-sanitizer ends a run with: `========= ERROR SUMMARY: 0
/// errors` (racecheck: `========= RACECHECK SUMMARY: 1 hazard displayed …`).
/// The app's own output may run into it without a line break (`With async
/// malloc done!========= ERROR SUMMARY: 50004 errors`).
fn ended(line: &str) -> bool {
    line.contains("========= ERROR SUMMARY:") || line.contains("========= RACECHECK SUMMARY:")
}

/// `========= ERROR SUMMARY: 50004 errors` → 50004.
fn error_summary(line: &str) -> Option<u64> {
    let rest = line.split("ERROR SUMMARY:").nth(1)?;
    let number = rest.split_whitespace().next()?;
    number.replace(',', "").parse().ok()
}

/// What the configured tools found, with a note per tool (records read,
/// findings grouped, errors beyond `--print-limit`).
pub(crate) struct Ran {
    pub(crate) findings: Vec<SanitizerFinding>,
    pub(crate) notes: Vec<String>,
}

/// Runs every configured tool on the app: the sanitizer gate's stage, which
/// `sanitize` runs alone and `check` after the metric gate when
/// `[sanitizer]` asks for it.
pub(crate) fn run_all(config: &SanitizerConfig, processes: &dyn ProcessRunner) -> Result<Ran> {
    let mut ran = Ran {
        findings: Vec::new(),
        notes: Vec::new(),
    };
    for &tool in &config.tools {
        let run = run_tool(config, tool, processes)?;
        let reported = match run.reported {
            Some(n) if n > run.records => format!(
                "; compute-sanitizer counted {n} errors, {} beyond --print-limit are not in the XML",
                n - run.records
            ),
            _ => String::new(),
        };
        ran.notes.push(format!(
            "{tool}: {} in {} grouped into {}{reported}",
            crate::format::count(run.records, "record", "records"),
            run.xml.display(),
            crate::format::count(run.findings.len(), "finding", "findings")
        ));
        ran.notes.extend(run.note);
        ran.findings.extend(run.findings);
    }
    Ok(ran)
}

#[cfg(test)]
mod tests {
    #[test]
    fn error_summaries() {
        let text = include_str!(
            "../../fixtures/ncu-reference/sanitizer/stream-ordered-alloc-bug.memcheck.txt"
        );
        assert_eq!(text.lines().find_map(super::error_summary), Some(50004));
        assert_eq!(
            super::error_summary("========= ERROR SUMMARY: 0 errors"),
            Some(0)
        );
    }

    #[test]
    fn a_run_ends_with_its_summary_line() {
        let text = include_str!(
            "../../fixtures/ncu-reference/sanitizer/stream-ordered-alloc-bug.memcheck.txt"
        );
        assert!(text.lines().any(super::ended));
        assert!(super::ended(
            "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"
        ));
        assert!(!super::ended("========= COMPUTE-SANITIZER"));
        assert!(!super::ended("app: ERROR SUMMARY: printed by the app"));
    }
}
