//! `[app] warmup`: the app run on its own, without ncu, before the profiled
//! runs, so that what it keeps between processes (Inductor's and Triton's
//! caches, XLA's autotune cache where it is given one) is filled before a
//! run is measured. On a fresh CI runner those caches are cold: the first
//! profiled run would compile and time the autotuner's candidates under ncu.

use super::process::{CommandSpec, Exit, ProcessRunner};
use super::{RunnerConfig, create_dir, write_lines};
use crate::error::{Error, ProcessError, Result};

/// Runs the app `config.warmup` times as configured (its environment,
/// folder and time limit), each logged to `out_dir/warmup-N.log`; a run
/// that does not exit 0 is an error, with its last lines. The seconds the
/// warm-ups took, in all.
pub(crate) fn warm_up(config: &RunnerConfig, runner: &dyn ProcessRunner) -> Result<f64> {
    let Some((program, args)) = config.app.split_first() else {
        return Ok(0.0);
    };
    let mut seconds = 0.0;
    if config.warmup == 0 {
        return Ok(seconds);
    }
    create_dir(&config.out_dir)?;
    for run in 1..=config.warmup {
        let mut spec = CommandSpec::new(program.clone(), args.iter().cloned());
        spec.env = config.env.clone();
        spec.workdir = Some(config.workdir.clone());
        spec.timeout = Some(config.timeout);
        crate::text::escape::say(&format!(
            "ncugate: warm-up {run} of {}, without ncu: {}",
            config.warmup,
            spec.display()
        ));
        let done = runner.run(&spec, &mut |_| {});
        seconds += done.elapsed.as_secs_f64();
        let log = config.out_dir.join(format!("warmup-{run}.log"));
        write_lines(&log, &done.lines)?;
        match done.exit {
            Exit::Code(0) => crate::text::escape::say(&format!(
                "ncugate: warm-up {run} took {:.1}s: {}",
                done.elapsed.as_secs_f64(),
                log.display()
            )),
            Exit::NotFound => {
                return Err(Error::from(crate::error::ToolError::AppNotFound {
                    program: program.clone(),
                }));
            }
            other => {
                return Err(ProcessError::WarmUp {
                    run,
                    command: spec.display(),
                    exit: other.to_string(),
                    output: super::process::last_output(&done.lines, 5),
                    log,
                }
                .into());
            }
        }
    }
    Ok(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::replay::{Recorded, ReplayRunner};

    fn config(warmup: u32, out: &std::path::Path) -> RunnerConfig {
        RunnerConfig {
            warmup,
            app: vec!["python3".into(), "app.py".into(), "compile".into()],
            env: vec![("TORCHINDUCTOR_CACHE_DIR".into(), "/cache".into())],
            workdir: "/work".into(),
            out_dir: out.to_path_buf(),
            ..crate::config::Workload::for_tests("w", "app").runner
        }
    }

    #[test]
    fn the_app_runs_warmup_times_without_ncu_and_a_failed_run_is_an_error() {
        let out = std::env::temp_dir().join(format!("ncugate-warmup-{}", std::process::id()));
        let ok = || Recorded::log("compiled", Exit::Code(0));
        // Twice, as configured: the app itself, its environment, folder and limit.
        let runner = ReplayRunner::new(out.clone(), vec![ok(), ok()]);
        let seconds = warm_up(&config(2, &out), &runner).expect("warmed up");
        // The replay's runs take 1 ms each.
        assert!((seconds - 0.002).abs() < 1e-9, "{seconds}");
        let seen = runner.seen.lock().expect("seen").clone();
        assert_eq!(seen.len(), 2);
        for spec in &seen {
            assert_eq!(spec.display(), "python3 app.py compile");
            assert_eq!(
                spec.env,
                [("TORCHINDUCTOR_CACHE_DIR".into(), "/cache".into())]
            );
            assert_eq!(spec.workdir.as_deref(), Some(std::path::Path::new("/work")));
            assert!(spec.timeout.is_some());
        }
        let log = std::fs::read_to_string(out.join("warmup-2.log")).expect("log");
        assert_eq!(log, "compiled\n");
        // None by default: nothing runs.
        let runner = ReplayRunner::new(out.clone(), vec![]);
        warm_up(&config(0, &out), &runner).expect("nothing to do");
        assert!(runner.seen.lock().expect("seen").is_empty());
        // The second fails: an error naming it, its last lines and log.
        let failed = Recorded::log(
            "Traceback …\nOSError: [Errno 28] No space left",
            Exit::Code(1),
        );
        let runner = ReplayRunner::new(out.clone(), vec![ok(), failed]);
        let error = warm_up(&config(3, &out), &runner).expect_err("failed");
        assert_eq!(runner.seen.lock().expect("seen").len(), 2);
        let Error::Process(process) = &error else {
            panic!("{error:?}");
        };
        let ProcessError::WarmUp { run, output, .. } = process.as_ref() else {
            panic!("{error:?}");
        };
        assert_eq!(*run, 2);
        assert_eq!(
            output.last().map(String::as_str),
            Some("OSError: [Errno 28] No space left")
        );
        assert!(
            error
                .to_string()
                .starts_with("warm-up run 2 of the app failed (exit code 1)"),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(&out);
    }
}
