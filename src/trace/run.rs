//! Acquire: the app run `--runs` times as the profiled runs would have run
//! it (argv, environment, work dir, timeout), without ncu, with the audit
//! library injected (`CUDA_INJECTION64_PATH`) and its kernel trace asked
//! for (`NCUGATE_AUDIT_KERNELS=1`): each run leaves `trace-N.json`.

use crate::error::{Error, Result};
use crate::runner::RunnerConfig;
use crate::runner::process::{CommandSpec, Exit, ProcessRunner};
use std::path::{Path, PathBuf};

/// The audit library a trace injects: the one given (`--audit-lib`,
/// `NCUGATE_AUDIT_LIB`, `[memory] audit_lib`), else the one compiled from
/// the source embedded in ncugate, cached in `cache_dir`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuditLib {
    pub given: Option<PathBuf>,
    pub cache_dir: PathBuf,
}

/// The variable that asks the audit library for its kernel trace.
pub const KERNELS_VAR: &str = "NCUGATE_AUDIT_KERNELS";

/// Runs the app `runs` times under the trace; the report file of each run.
pub(crate) fn run(
    config: &RunnerConfig,
    runs: u32,
    lib: &AuditLib,
    processes: &dyn ProcessRunner,
) -> Result<Vec<PathBuf>> {
    let (program, args) = config
        .app
        .split_first()
        .ok_or_else(|| Error::from(crate::error::ConfigError::NoAppToAudit))?;
    let library = library(lib, processes)?;
    let dir = config.out_dir.join("trace");
    std::fs::create_dir_all(&dir).map_err(|source| Error::Write {
        path: dir.clone(),
        source,
    })?;
    let mut reports = Vec::new();
    for i in 1..=runs {
        let out = dir.join(format!("trace-{i}.json"));
        let _ = std::fs::remove_file(&out);
        let mut spec = CommandSpec::new(program.clone(), args.iter().cloned());
        spec.env = config.env.clone();
        spec.env.push((
            "CUDA_INJECTION64_PATH".into(),
            library.to_string_lossy().into_owned(),
        ));
        spec.env.push((
            "NCUGATE_AUDIT_OUT".into(),
            out.to_string_lossy().into_owned(),
        ));
        spec.env.push((KERNELS_VAR.into(), "1".into()));
        spec.workdir = Some(config.workdir.clone());
        spec.timeout = Some(config.timeout);
        crate::text::escape::say(&format!(
            "ncugate: trace run {i} of {runs} (performance counters locked): CUDA_INJECTION64_PATH={} {KERNELS_VAR}=1 {}",
            library.display(),
            spec.display()
        ));
        let done = processes.run(&spec, &mut |_| {});
        let log = dir.join(format!("app-{i}.log"));
        crate::runner::write_lines(&log, &done.lines)?;
        ended(&done.exit, program, &spec, &done.lines, &log)?;
        reports.push(out);
    }
    Ok(reports)
}

/// An app that did not exit 0 is an error, as under ncu.
fn ended(
    exit: &Exit,
    program: &str,
    spec: &CommandSpec,
    lines: &[String],
    log: &Path,
) -> Result<()> {
    match exit {
        Exit::Code(0) => Ok(()),
        Exit::NotFound => Err(Error::from(crate::error::ToolError::AppNotFound {
            program: program.to_string(),
        })),
        other => Err(Error::from(crate::error::ProcessError::App {
            command: spec.display(),
            exit: other.to_string(),
            output: crate::runner::process::last_lines(lines, 5, "\n")
                .lines()
                .map(str::to_string)
                .collect(),
            log: log.to_path_buf(),
        })),
    }
}

/// The library to inject, as an absolute path.
fn library(lib: &AuditLib, processes: &dyn ProcessRunner) -> Result<PathBuf> {
    let path = match &lib.given {
        Some(given) => given.clone(),
        None => {
            let tools = crate::memory::library::Toolchain::from_env();
            crate::memory::library::ensure(&lib.cache_dir, &tools, processes)?.path
        }
    };
    std::fs::canonicalize(&path).map_err(|source| {
        Error::from(crate::error::ToolError::AuditLibrary {
            library: path.clone(),
            reason: source.to_string(),
        })
    })
}
