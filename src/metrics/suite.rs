//! The metric gate over a suite: `ncugate check|baseline record|profile` of
//! every workload of this shard, and `ncugate merge`.
//! `crate::config` resolved every workload's run; a suite run picks this
//! shard's workloads, builds each distinct build once, then checks, records
//! or profiles every workload in config order with the same per-workload
//! commands a single run uses. A workload that fails is reported (exit 2)
//! and the others still run.

use crate::baseline::layout as baselines;
use crate::config::Workload;
use crate::config::suite::{SuiteConfig, SuiteRuns};
use crate::config::{CheckConfig, MergeConfig, RecordConfig, Source};
use crate::error::{Error, Result};
use crate::gated::{Failed, Text};
use crate::runner::{self, RunnerConfig, process::ProcessRunner};
use crate::status::Outcome;
use crate::suite::report::{SuiteReport, WorkloadReport};
use crate::suite::{merge, render, shard};
use sha2::{Digest, Sha256};

/// Each workload that could not be gated, by name, with why.
pub(crate) type Failures = Vec<(String, Error)>;

/// What a suite run decided.
#[derive(Debug)]
pub enum SuiteRun {
    /// A suite check: the suite report.
    Checked(Box<SuiteReport>, Failures),
    /// A suite recorded or profiled: each workload's own text went to
    /// standard output as it finished; this is the closing summary.
    Done(Text, Failures),
}

/// Runs the suite: every planned workload, in config order.
pub fn suite(config: &SuiteConfig, processes: &dyn ProcessRunner) -> Result<SuiteRun> {
    let planned = planned(config);
    if let Some(shard) = config.shard {
        crate::text::escape::say(&format!(
            "ncugate: shard {shard}: {} of {}: {}",
            planned.len(),
            crate::format::count(config.workloads.len(), "workload", "workloads"),
            if planned.is_empty() {
                "none".to_string()
            } else {
                planned
                    .iter()
                    .map(|w| w.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
    }
    let mut builds = Builds::default();
    match &config.runs {
        SuiteRuns::Check(runs) if config.predict_skips.is_some() => {
            predict(config, runs, &mut builds, processes)
        }
        SuiteRuns::Check(runs) => check(
            config,
            &mine(config, runs, &planned),
            &mut builds,
            processes,
        ),
        SuiteRuns::Record(runs) => Ok(record(
            config,
            &mine(config, runs, &planned),
            &mut builds,
            processes,
        )),
        SuiteRuns::Profile(runs) => Ok(profile(
            &mine(config, runs, &planned),
            &mut builds,
            processes,
        )),
    }
}

/// The planned workloads, each with its run (`runs` is in the order of the
/// selected workloads).
fn mine<'a, T>(
    config: &'a SuiteConfig,
    runs: &'a [T],
    planned: &[&Workload],
) -> Vec<(&'a Workload, &'a T)> {
    let planned: std::collections::HashSet<&str> =
        planned.iter().map(|p| p.name.as_str()).collect();
    config
        .workloads
        .iter()
        .zip(runs)
        .filter(|(w, _)| planned.contains(w.name.as_str()))
        .collect()
}

/// `ncugate merge`: the shard reports joined into one suite report.
pub fn merge(config: &MergeConfig) -> Result<SuiteReport> {
    merge::merge_files(
        &config.reports,
        config.expect_shards,
        config.outputs.key.as_ref(),
    )
}

/// This run's workloads: the shard's share by recorded cost, or all.
pub(crate) fn planned(config: &SuiteConfig) -> Vec<&Workload> {
    let Some(s) = config.shard else {
        return config.workloads.iter().collect();
    };
    let costs: Vec<(String, Option<f64>)> = config
        .workloads
        .iter()
        .map(|w| {
            (
                w.name.clone(),
                baselines::cost(&config.baselines_dir, &w.name),
            )
        })
        .collect();
    // Only what every runner is given alike: the names, the baselines and
    // the `--planned-skips` file (empty unless skipping is on).
    let costs = shard::with_skips(&costs, &config.planned_skips);
    let plan = shard::plan(&costs, s.count);
    // Shards past the plan's get no workload.
    let mine: &[String] = plan.get((s.index - 1) as usize).map_or(&[], Vec::as_slice);
    config
        .workloads
        .iter()
        .filter(|w| mine.contains(&w.name))
        .collect()
}

/// `check --predict-skips FILE`: each selected workload (every shard's)
/// built and its skip decided, nothing profiled; the names of those a check
/// would skip written to FILE, one a line, for `--planned-skips`.
fn predict(
    config: &SuiteConfig,
    runs: &[CheckConfig],
    builds: &mut Builds,
    processes: &dyn ProcessRunner,
) -> Result<SuiteRun> {
    let Some(file) = &config.predict_skips else {
        return Ok(SuiteRun::Done(Text::pass(String::new()), Vec::new()));
    };
    let names = config
        .workloads
        .iter()
        .map(|w| w.name.chars().count())
        .max()
        .unwrap_or(0);
    let session = config
        .skip
        .as_ref()
        .map(|s| crate::skip::Session::new(s, processes));
    let mut skipped = Vec::new();
    for (w, c) in config.workloads.iter().zip(runs) {
        let Some(s) = &session else { break };
        if build_for(w, &c.source, builds, processes).is_err() {
            continue;
        }
        if let (_, Some(_)) = decided(s.decide(w, c, processes), w, names) {
            skipped.push(w.name.clone());
        }
    }
    let text: String = skipped.iter().map(|n| format!("{n}\n")).collect();
    crate::io::atomic::write_atomic(file, text.as_bytes())?;
    let said = format!(
        "ncugate: {} of {} predicted to skip{}; written to {}: give every shard runner this file (--planned-skips)\n",
        skipped.len(),
        crate::format::count(config.workloads.len(), "workload", "workloads"),
        if session.is_none() {
            " (skipping is off)"
        } else {
            ""
        },
        file.display()
    );
    Ok(SuiteRun::Done(Text::pass(said), Vec::new()))
}

/// A build that failed: the workload it failed for, and how (`exit code 2: make train`).
type BuildFailure = (String, String);

/// Builds already run in this invocation, and whether each worked.
#[derive(Default)]
struct Builds {
    done: Vec<(RunnerConfig, std::result::Result<(), BuildFailure>)>,
}

impl Builds {
    /// Runs the workload's build unless the same build (argv, folder, env) already ran.
    fn once(&mut self, w: &Workload, processes: &dyn ProcessRunner) -> Result<()> {
        let key = RunnerConfig {
            build: w.runner.build.clone(),
            workdir: w.runner.workdir.clone(),
            env: w.runner.env.clone(),
            ..w.runner.clone()
        };
        let same =
            |r: &RunnerConfig| r.build == key.build && r.workdir == key.workdir && r.env == key.env;
        if let Some((_, result)) = self.done.iter().find(|(r, _)| same(r)) {
            return result.clone().map_err(|(workload, reason)| {
                Error::from(crate::error::ToolError::BuildFailedBefore { workload, reason })
            });
        }
        let result = runner::build(&w.runner, processes);
        let how = |error: &Error| match error {
            Error::Process(p) => match p.as_ref() {
                crate::error::ProcessError::Build { exit, command, .. } => {
                    format!("{exit}: {command}")
                }
                other => other.to_string(),
            },
            other => other.to_string(),
        };
        self.done.push((
            key,
            result
                .as_ref()
                .map(|_| ())
                .map_err(|e| (w.name.clone(), how(e))),
        ));
        result
    }
}

/// SHA-256 over every workload's name and effective thresholds text.
pub(crate) fn thresholds_digest(config: &SuiteConfig) -> String {
    let mut hasher = Sha256::new();
    for w in &config.all {
        let text = match w.thresholds.file() {
            None => crate::rules::DEFAULT_THRESHOLDS.to_string(),
            Some(path) => match crate::io::bounded::read_io(path) {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(e) => format!("unreadable {}: {e}", path.display()),
            },
        };
        hasher.update(w.name.as_bytes());
        hasher.update([0]);
        hasher.update(text.as_bytes());
        hasher.update([0]);
    }
    crate::format::hex(&hasher.finalize())
}

/// A skip decision as the suite acts on it: the digest to record after a
/// run, or the carried verdict, its `SKIP` line said; a run's reason said as
/// a `RUN` line.
type Decided = (
    Option<crate::skip::digest::Digest>,
    Option<(crate::suite::report::Carried, Box<crate::verdict::Report>)>,
);

fn decided(decision: crate::skip::Decision, w: &Workload, names: usize) -> Decided {
    match decision {
        crate::skip::Decision::Skip(carried, report) => {
            Text::pass(format!(
                "SKIP  {:<names$}  {}\n",
                w.name,
                carried.label(report.outcome())
            ))
            .show();
            (None, Some((carried, report)))
        }
        crate::skip::Decision::Run(digest, why) => {
            crate::text::escape::say(&format!("RUN   {:<names$}  {why}", w.name));
            (digest, None)
        }
    }
}

/// Builds `w` unless its data are exports (`--input`) or its build already ran.
fn build_for(
    w: &Workload,
    source: &Source,
    builds: &mut Builds,
    processes: &dyn ProcessRunner,
) -> Result<()> {
    match source {
        Source::Profile { .. } => builds.once(w, processes),
        Source::Inputs(_) => Ok(()),
    }
}

fn check(
    config: &SuiteConfig,
    planned: &[(&Workload, &CheckConfig)],
    builds: &mut Builds,
    processes: &dyn ProcessRunner,
) -> Result<SuiteRun> {
    let suite: Vec<String> = config.workloads.iter().map(|w| w.name.clone()).collect();
    let every: Vec<String> = config.all.iter().map(|w| w.name.clone()).collect();
    // What the report says it was gated against: a folder that cannot be read
    // is an error here, not an empty digest that merges with any other.
    let (baselines_sha256, baseline_files) = match &config.baseline_file {
        // A missing file is each workload's error, said by its check.
        Some(file) if !file.exists() => (String::new(), Default::default()),
        Some(file) => (
            crate::parse::sha256_of(crate::error::FileKind::Baseline, file)?,
            Default::default(),
        ),
        None => {
            let files = baselines::file_digests(&config.baselines_dir, &every)?;
            (baselines::digest(&files), files)
        }
    };
    let mut reports: Vec<WorkloadReport> = Vec::new();
    let mut failed = Failures::new();
    let names = planned
        .iter()
        .map(|(w, _)| w.name.chars().count())
        .max()
        .unwrap_or(0);
    let skipping = config
        .skip
        .as_ref()
        .map(|s| crate::skip::Session::new(s, processes));
    for &(w, c) in planned {
        crate::text::escape::say(&format!("ncugate: workload {}", w.name));
        let built = build_for(w, &c.source, builds, processes).map_err(Failed::from);
        let (digest, carried) = match (&built, &skipping) {
            (Ok(()), Some(s)) => decided(s.decide(w, c, processes), w, names),
            _ => (None, None),
        };
        if let Some((carried, report)) = carried {
            reports.push(WorkloadReport {
                name: w.name.clone(),
                tags: w.tags.clone(),
                baseline: report.baseline.clone(),
                seconds: None,
                report: *report,
                carried: Some(carried),
            });
            continue;
        }
        let checked = built.and_then(|()| super::check(c, processes));
        if let (Some(s), Some(d), Ok(report)) = (&skipping, digest, &checked) {
            s.remember(w, d, report);
        }
        let report = match checked {
            Ok(report) => report,
            Err(Failed { error, report }) => {
                // A build that failed has no report of its own yet.
                let report = report.map_or_else(
                    || {
                        crate::verdict::Report::error(
                            &c.baseline.display(),
                            Vec::new(),
                            Vec::new(),
                            &super::thresholds_name(c),
                            error.report_line(),
                        )
                    },
                    |report| *report,
                );
                failed.push((w.name.clone(), error));
                report
            }
        };
        // Wall time of the profiled run(s); none for `--input`.
        let timed: Vec<f64> = report.profiling.iter().filter_map(|p| p.seconds).collect();
        reports.push(WorkloadReport {
            name: w.name.clone(),
            tags: w.tags.clone(),
            baseline: report.baseline.clone(),
            seconds: (!timed.is_empty()).then(|| timed.iter().sum()),
            report,
            carried: None,
        });
        // As nextest does: a line the moment the workload finishes; the
        // failures in full and the summary follow when all have run.
        let done = reports
            .last()
            .and_then(|w| render::status_line(w, names, &config.style));
        if let Some(line) = done {
            Text::pass(line).show();
        }
    }
    let mut report = SuiteReport::new(
        config.shard,
        suite,
        planned.iter().map(|(w, _)| w.name.clone()).collect(),
        thresholds_digest(config),
        baselines_sha256,
        reports,
    );
    report.baseline_files = baseline_files;
    Ok(SuiteRun::Checked(Box::new(report), failed))
}

fn record(
    config: &SuiteConfig,
    planned: &[(&Workload, &RecordConfig)],
    builds: &mut Builds,
    processes: &dyn ProcessRunner,
) -> SuiteRun {
    let mut failed = Failures::new();
    let mut outcome = Outcome::Pass;
    for &(w, c) in planned {
        crate::text::escape::say(&format!("ncugate: workload {}", w.name));
        let result =
            build_for(w, &c.source, builds, processes).and_then(|()| super::record(c, processes));
        match result {
            // Said as each workload is recorded: a suite takes minutes per workload.
            Ok(said) if !said.show() => outcome = Outcome::Error,
            Ok(_) => {}
            Err(error) => failed.push((w.name.clone(), error)),
        }
    }
    let n = planned.len();
    let summary = format!(
        "ncugate: recorded {} of {}{}\n",
        n - failed.len(),
        crate::format::count(n, "workload", "workloads"),
        match config.shard {
            Some(s) => format!(" (shard {s})"),
            None => String::new(),
        }
    );
    SuiteRun::Done(
        Text {
            outcome,
            ..Text::pass(summary)
        },
        failed,
    )
}

fn profile(
    planned: &[(&Workload, &RunnerConfig)],
    builds: &mut Builds,
    processes: &dyn ProcessRunner,
) -> SuiteRun {
    let mut failed = Failures::new();
    let mut outcome = Outcome::Pass;
    for &(w, runner) in planned {
        crate::text::escape::say(&format!("ncugate: workload {}", w.name));
        let result = builds
            .once(w, processes)
            .and_then(|()| super::profile(runner, processes));
        match result {
            Ok(said) if !said.show() => outcome = Outcome::Error,
            Ok(_) => {}
            Err(error) => failed.push((w.name.clone(), error)),
        }
    }
    SuiteRun::Done(
        Text {
            outcome,
            ..Text::pass(String::new())
        },
        failed,
    )
}
