//! Stage 1, acquire: the exports a check or a recording works on — the
//! `--input` files as given, or the app built and profiled under ncu — and
//! `ncugate profile`, which is this stage alone.

use crate::baseline::ProfileSettings;
use crate::config::Source;
use crate::error::Result;
use crate::gated::Text;
use crate::rules::Thresholds;
use crate::runner::process::ProcessRunner;
use crate::runner::progress::Progress;
use crate::runner::{self, RunnerConfig};
use std::path::PathBuf;

/// The exports a check or a recording works on, and how they were made.
pub(super) struct Acquired {
    pub(super) inputs: Vec<PathBuf>,
    pub(super) details: Vec<PathBuf>,
    pub(super) profile: Option<ProfileSettings>,
    /// Wall seconds of each profiled run (empty for `--input` files).
    pub(super) seconds: Vec<f64>,
    /// Wall seconds of the warm-up runs before them, in all (`[app] warmup`).
    pub(super) warmup_seconds: f64,
    /// The `.ncu-rep` reports of the runs, whose cubins hold the kernels'
    /// code (the `--input` files: those that are not reports have none).
    pub(super) reports: Vec<PathBuf>,
    /// What the GPU probe saw during the profiled runs (empty for `--input` files).
    pub(super) gpu: Vec<crate::shared_gpu::Sample>,
    /// The shared libraries the profiled runs mapped, sorted, each once.
    pub(super) libraries: Vec<PathBuf>,
    /// A warning for each run profiled again after it crashed or hung
    /// under ncu (`[app] retries`).
    pub(super) retried: Vec<crate::note::Note>,
}

/// `--input` files as given, or the app built and profiled `runs` times.
pub(super) fn acquire(
    source: &Source,
    details: &[PathBuf],
    metrics: &[String],
    expected: Option<u64>,
    github: bool,
    runner: &dyn ProcessRunner,
) -> Result<Acquired> {
    match source {
        Source::Inputs(inputs) => Ok(Acquired {
            inputs: inputs.clone(),
            details: details.to_vec(),
            profile: None,
            seconds: Vec::new(),
            warmup_seconds: 0.0,
            reports: inputs.clone(),
            gpu: Vec::new(),
            libraries: Vec::new(),
            retried: Vec::new(),
        }),
        Source::Profile {
            runner: config,
            runs,
            quiet,
        } => {
            runner::build(config, runner)?;
            let warmup_seconds = runner::warmup::warm_up(config, runner)?;
            let mut acquired = Acquired {
                inputs: Vec::new(),
                details: details.to_vec(),
                profile: Some(ProfileSettings::of(config).with_versions(config, runner)),
                seconds: Vec::new(),
                warmup_seconds,
                reports: Vec::new(),
                gpu: Vec::new(),
                libraries: Vec::new(),
                retried: Vec::new(),
            };
            for i in 1..=*runs {
                let name = if *runs == 1 {
                    "run".to_string()
                } else {
                    format!("run-{i}")
                };
                let artifacts = profile_retrying(config, &name, &mut acquired.retried, |dir| {
                    let mut progress = Progress::new(expected, *quiet).github(github);
                    runner::profile_once(config, metrics, dir, runner, &mut progress)
                })?;
                crate::text::escape::say(&format!(
                    "ncugate: artifacts of {name} ({:.1}s): {}",
                    artifacts.seconds,
                    artifacts.dir.display()
                ));
                acquired.inputs.push(artifacts.raw);
                acquired.details.extend(artifacts.details);
                acquired.seconds.push(artifacts.seconds);
                acquired.reports.push(artifacts.report);
                acquired.gpu.extend(artifacts.gpu);
                acquired.libraries.extend(artifacts.libraries);
            }
            acquired.libraries.sort();
            acquired.libraries.dedup();
            // The CUDA libraries and Python packages the runs loaded join
            // the toolchain fingerprint (the driver's entries win).
            if let Some(profile) = acquired.profile.as_mut() {
                profile.add_versions(runner::versions::of(&acquired.libraries));
            }
            Ok(acquired)
        }
    }
}

/// Profiles the run `name` with `profile` (its work dir's name), and again,
/// up to `[app] retries` times, while it fails because the app crashed or
/// hung under ncu: each retry works in `NAME-retry-N`, leaving the failed
/// attempt's logs where they were, and is said now and kept in `retried`
/// for the report. Seen on an H100: a jitted JAX app printed `Segmentation
/// fault` under ncu and hung in 1 of 10 checks, and hung in another session.
fn profile_retrying<T>(
    config: &runner::RunnerConfig,
    name: &str,
    retried: &mut Vec<crate::note::Note>,
    mut profile: impl FnMut(&str) -> Result<T>,
) -> Result<T> {
    let mut attempt = 0;
    loop {
        let dir = match attempt {
            0 => name.to_string(),
            n => format!("{name}-retry-{n}"),
        };
        match profile(&dir) {
            Err(crate::error::Error::Ncu { failure, logs })
                if failure.transient() && attempt < config.retries =>
            {
                attempt += 1;
                let logs = logs.map_or(String::new(), |l| format!("; logs: {}", l.display()));
                let said = format!(
                    "{name} was profiled again (retry {attempt} of {}): {failure}{logs}",
                    config.retries
                );
                crate::text::escape::say(&format!("ncugate: warning: {said}"));
                retried.push(crate::note::Note::warning(said));
            }
            other => return other,
        }
    }
}

/// What a check's acquire stage got: the profiled (or given) exports, or,
/// ncu refused the counters under `[gate] locked_counters = "trace"`, the
/// whole trace-mode check (see [`crate::trace`]).
pub(super) enum Got {
    Profiled(Box<Acquired>),
    Traced(Box<crate::verdict::Report>),
}

/// A check's acquire stage: [`acquire`], or trace mode when it failed with
/// ERR_NVGPUCTRPERM and the check asked for it.
pub(super) fn or_trace(
    config: &crate::config::CheckConfig,
    details: &[PathBuf],
    metrics: &[String],
    candidates: &super::pick::Candidates<'_>,
    thresholds: &Thresholds,
    processes: &dyn ProcessRunner,
) -> Result<Got> {
    let expected = candidates.expected_launches();
    let github = config.outputs.github;
    match acquire(
        &config.source,
        details,
        metrics,
        expected,
        github,
        processes,
    ) {
        Ok(acquired) => Ok(Got::Profiled(Box::new(acquired))),
        Err(e) if counters_locked(&e, config) => {
            let (path, baseline) = candidates.sole()?;
            traced(config, &path, &baseline, thresholds, processes)
                .map(|report| Got::Traced(Box::new(report)))
        }
        Err(e) => Err(e),
    }
}

/// Whether `error` is ncu's ERR_NVGPUCTRPERM in a check that asked for
/// trace mode then (`[gate] locked_counters = "trace"`). A check of
/// `--input` files never gets here: it profiles nothing.
fn counters_locked(error: &crate::error::Error, config: &crate::config::CheckConfig) -> bool {
    config.locked_counters == crate::trace::LockedCounters::Trace
        && matches!(
            error,
            crate::error::Error::Ncu { failure, .. }
                if **failure == crate::error::NcuFailure::CounterPermission
        )
}

/// The check in trace mode: the app traced instead of profiled, its launch
/// structure judged against `baseline` (see [`crate::trace`]).
fn traced(
    config: &crate::config::CheckConfig,
    path: &std::path::Path,
    baseline: &crate::baseline::Baseline,
    thresholds: &Thresholds,
    processes: &dyn ProcessRunner,
) -> Result<crate::verdict::Report> {
    let Source::Profile { runner, runs, .. } = &config.source else {
        // Only a profiled run meets ERR_NVGPUCTRPERM.
        return Err(crate::error::Error::ncu(
            crate::error::NcuFailure::CounterPermission,
            None,
        ));
    };
    crate::text::escape::say(
        "ncugate: ncu may not read the performance counters (ERR_NVGPUCTRPERM); locked_counters = \"trace\": gating the launch structure from a CUPTI trace, DEGRADED",
    );
    let traced = crate::trace::Traced {
        runner,
        runs: *runs,
        audit: &config.audit_lib,
        baseline_path: path,
        thresholds_name: super::thresholds_name(config),
    };
    crate::trace::check(&traced, baseline, thresholds, processes)
}

/// `metrics` and the clock metrics every profiled run collects too (the SM
/// clock and elapsed cycles of each kernel, in the same replay pass), read
/// from exports where they have them. Not when ncu profiles whole graphs:
/// that mode refuses some metrics, and a graph has no one kernel's clock.
pub(super) fn with_clock_metrics(mut metrics: Vec<String>, source: &Source) -> Vec<String> {
    if let Source::Profile { runner, .. } = source
        && runner.graph_profiling == crate::model::GraphProfiling::Graph
    {
        return metrics;
    }
    for m in crate::shared_gpu::clock::METRICS {
        if !metrics.iter().any(|have| have == m) {
            metrics.push(m.to_string());
        }
    }
    metrics
}

/// `ncugate profile`: build, profile once, say where everything is.
pub fn profile(config: &RunnerConfig, processes: &dyn ProcessRunner) -> Result<Text> {
    let thresholds = Thresholds::builtin()?;
    runner::build(config, processes)?;
    let a = profile_retrying(config, "profile", &mut Vec::new(), |dir| {
        let mut progress = Progress::new(None, false);
        runner::profile_once(config, &thresholds.metrics(), dir, processes, &mut progress)
    })?;
    let mut text = format!(
        "ncugate: profiled in {:.1}s; artifacts in {}\n",
        a.seconds,
        a.dir.display()
    );
    let files = [
        ("report", Some(&a.report)),
        ("raw page", Some(&a.raw)),
        ("details page", a.details.as_ref()),
        ("ncu log", Some(&a.ncu_log)),
        ("app output", Some(&a.app_log)),
    ];
    for (what, path) in files {
        if let Some(path) = path {
            text.push_str(&format!("  {what:<13} {}\n", path.display()));
        }
    }
    Ok(Text::pass(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile that fails with `failures` in turn, then succeeds; the
    /// work dirs it was asked for.
    fn attempts(
        retries: u32,
        failures: Vec<crate::error::NcuFailure>,
    ) -> (Result<&'static str>, Vec<String>, Vec<crate::note::Note>) {
        let config = runner::RunnerConfig {
            retries,
            ..crate::config::Workload::for_tests("w", "app").runner
        };
        let mut failures = failures.into_iter();
        let mut dirs = Vec::new();
        let mut retried = Vec::new();
        let got = profile_retrying(&config, "run-2", &mut retried, |dir| {
            dirs.push(dir.to_string());
            match failures.next() {
                Some(f) => Err(crate::error::Error::ncu(
                    f,
                    Some(format!("/w/{dir}").into()),
                )),
                None => Ok("profiled"),
            }
        });
        (got, dirs, retried)
    }

    #[test]
    fn a_run_that_crashed_or_hung_under_ncu_is_profiled_again_up_to_retries() {
        use crate::error::NcuFailure;
        let hung = || NcuFailure::TimedOut {
            seconds: 90,
            app_tail: "Segmentation fault".into(),
        };
        let crashed = || NcuFailure::AppExit {
            code: 139,
            app_tail: "Segmentation fault (core dumped)".into(),
        };
        // Retried, each time in its own work dir, and said.
        let (got, dirs, retried) = attempts(2, vec![hung(), crashed()]);
        assert_eq!(got.ok(), Some("profiled"));
        assert_eq!(dirs, ["run-2", "run-2-retry-1", "run-2-retry-2"]);
        assert_eq!(retried.len(), 2);
        assert!(
            retried[0].text.starts_with(
                "run-2 was profiled again (retry 1 of 2): the profiled run timed out after 90s"
            ),
            "{retried:?}"
        );
        assert!(retried[0].text.ends_with("; logs: /w/run-2"), "{retried:?}");
        // No more than `retries`: the last failure is the check's.
        let (got, dirs, _) = attempts(1, vec![hung(), hung()]);
        assert!(got.is_err());
        assert_eq!(dirs.len(), 2);
        // None by default.
        let (got, dirs, retried) = attempts(0, vec![hung()]);
        assert!(got.is_err() && retried.is_empty());
        assert_eq!(dirs.len(), 1);
        // A failure that would fail again is never retried: an app that
        // exits 1, a metric ncu does not know.
        for failure in [
            NcuFailure::AppExit {
                code: 1,
                app_tail: "bad input".into(),
            },
            NcuFailure::UnknownMetric {
                metric: "x".into(),
                suggestions: vec![],
            },
        ] {
            let (got, dirs, _) = attempts(3, vec![failure]);
            assert!(got.is_err());
            assert_eq!(dirs.len(), 1);
        }
    }

    #[test]
    fn profiled_runs_collect_the_clock_metrics_but_whole_graph_profiles_do_not() {
        let runner = |graph_profiling| Source::Profile {
            runner: Box::new(RunnerConfig {
                build: None,
                app: vec!["app".into()],
                env: vec![],
                workdir: ".".into(),
                timeout: std::time::Duration::from_secs(1),
                retries: 0,
                warmup: 0,
                mode: runner::Mode::Fast,
                graph_profiling,
                clock_control: crate::options::profile::DEFAULT_CLOCK_CONTROL,
                cache_control: crate::options::profile::DEFAULT_CACHE_CONTROL,
                replay_mode: crate::options::profile::DEFAULT_REPLAY_MODE,
                kernel_name: None,
                launch_skip: None,
                launch_count: None,
                extra_metrics: vec![],
                dcgm: crate::runner::Dcgm::Fail,
                ncu: "ncu".into(),
                profile_from_start: true,
                nvtx_include: Vec::new(),
                kernel_env: Vec::new(),
                toolchain_command: Vec::new(),
                out_dir: ".".into(),
            }),
            runs: 1,
            quiet: true,
        };
        let rules = vec!["sm__inst_executed.sum".to_string()];
        let node = with_clock_metrics(rules.clone(), &runner(crate::model::GraphProfiling::Node));
        assert_eq!(
            node,
            [
                "sm__inst_executed.sum",
                "sm__cycles_elapsed.avg.per_second",
                "gpc__cycles_elapsed.max"
            ]
        );
        let graph = with_clock_metrics(rules.clone(), &runner(crate::model::GraphProfiling::Graph));
        assert_eq!(graph, rules);
        let exports = with_clock_metrics(rules, &Source::Inputs(vec![]));
        assert_eq!(exports.len(), 3);
    }
}
