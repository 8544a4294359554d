//! Acquire: the app run `--runs` times as the profiled runs would have run
//! it (argv, environment, work dir, timeout), without ncu, with the audit
//! library injected (`CUDA_INJECTION64_PATH`) and its kernel trace asked
//! for (`NCUGATE_AUDIT_KERNELS=1`): each run leaves `trace-N.json`.

use crate::error::{Error, Result};
use crate::runner::RunnerConfig;
use crate::runner::process::ProcessRunner;
use std::path::PathBuf;

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
    let library = crate::memory::library::resolve(lib.given.as_ref(), &lib.cache_dir, processes)?;
    let dir = config.out_dir.join("trace");
    std::fs::create_dir_all(&dir).map_err(|source| Error::Write {
        path: dir.clone(),
        source,
    })?;
    let mut reports = Vec::new();
    for i in 1..=runs {
        let out = dir.join(format!("trace-{i}.json"));
        let _ = std::fs::remove_file(&out);
        let mut spec = crate::memory::library::injected(config, program, args, &library, &out);
        spec.env.push((KERNELS_VAR.into(), "1".into()));
        crate::text::escape::say(&format!(
            "ncugate: trace run {i} of {runs} (performance counters locked): CUDA_INJECTION64_PATH={} {KERNELS_VAR}=1 {}",
            library.display(),
            spec.display()
        ));
        let done = processes.run(&spec, &mut |_| {});
        let log = dir.join(format!("app-{i}.log"));
        crate::runner::write_lines(&log, &done.lines)?;
        crate::memory::library::app_ended(&done.exit, program, &spec, &done.lines, &log)?;
        reports.push(out);
    }
    Ok(reports)
}
