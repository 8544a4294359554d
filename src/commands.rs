//! The pipeline of each subcommand, in order: thresholds → baseline → parse →
//! aggregate → compare → report → exit code.

use crate::baseline::{self, Baseline, InputFile};
use crate::compare::{self, Inputs};
use crate::config::{CheckConfig, RecordConfig};
use crate::error::{Error, Result};
use crate::exit;
use crate::model::{Findings, KernelKeyMode, Run};
use crate::parse;
use crate::report::{self, terminal};
use crate::rules::Thresholds;
use crate::verdict::{Outcome, Report};
use std::path::{Path, PathBuf};

/// `ncugate check`: returns the exit code. File reports are written in every
/// case, an error report when the gate could not decide.
pub fn check(config: &CheckConfig) -> i32 {
    let report = match check_report(config) {
        Ok(report) => report,
        Err(error) => {
            let paths = |p: &[PathBuf]| p.iter().map(|p| p.display().to_string()).collect();
            let thresholds = config
                .thresholds
                .as_ref()
                .map_or(crate::rules::DEFAULT_SOURCE.to_string(), |p| {
                    p.display().to_string()
                });
            let report = Report::error(
                &config.baseline.display().to_string(),
                paths(&config.inputs),
                paths(&config.details),
                &thresholds,
                format!("{error} (hint: {})", error.hint()),
            );
            if let Err(write_error) = report::write_all(&report, &config.outputs) {
                print_error(&write_error);
            }
            print_error(&error);
            return exit::ERROR;
        }
    };
    print!("{}", terminal::render(&report, config.color));
    if let Err(error) = report::write_all(&report, &config.outputs) {
        print_error(&error);
        return exit::ERROR;
    }
    if report.outcome == Outcome::Error && report.errors.is_empty() {
        let n = report.counts().error;
        eprintln!("ncugate: error: {n} check(s) could not be evaluated (ERROR rows above)");
        eprintln!(
            "hint: each ERROR row says what is missing; fix the input or baseline, or mark the rule `optional = true`"
        );
    }
    report.exit_code
}

fn check_report(config: &CheckConfig) -> Result<Report> {
    let thresholds = Thresholds::load(config.thresholds.as_deref())?;
    let baseline = Baseline::load(&config.baseline)?;
    if let Some(mode) = config.kernel_key
        && mode != baseline.kernel_key
    {
        return Err(Error::Usage {
            message: format!(
                "--kernel-key {mode} conflicts with the baseline, which was recorded with --kernel-key {}",
                baseline.kernel_key
            ),
            hint: format!(
                "drop --kernel-key (check uses the baseline's), or re-record the baseline with --kernel-key {mode}"
            ),
        });
    }
    let metrics = thresholds.metrics();
    for rule in thresholds.rules.iter().filter(|r| !r.optional) {
        if !baseline.total.metrics.contains_key(&rule.metric) {
            return Err(Error::Baseline {
                path: config.baseline.clone(),
                message: format!("metric `{}` (thresholds line {}) is not in the baseline", rule.metric, rule.line),
                hint: "re-record the baseline with these thresholds: `ncugate baseline record --thresholds …`".into(),
            });
        }
    }
    let runs = read_runs(&config.inputs, &metrics, baseline.kernel_key, &thresholds)?;
    let findings = read_findings(&config.details, baseline.kernel_key)?;
    compare::compare(&Inputs {
        baseline: &baseline,
        baseline_path: config.baseline.display().to_string(),
        runs: &runs,
        findings: findings.as_ref().map(|(f, _)| f),
        details_paths: config
            .details
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        thresholds: &thresholds,
        allow_device_mismatch: config.allow_device_mismatch,
    })
}

/// Parses every input; a metric that a non-optional rule needs must be in each.
fn read_runs(
    inputs: &[PathBuf],
    metrics: &[String],
    key_mode: KernelKeyMode,
    thresholds: &Thresholds,
) -> Result<Vec<Run>> {
    let mut runs = Vec::with_capacity(inputs.len());
    for path in inputs {
        let run = parse::read_run(path, metrics, key_mode)?;
        for rule in thresholds.rules.iter().filter(|r| !r.optional) {
            if run
                .metric_index(&rule.metric)
                .is_some_and(|m| run.metrics[m].unit.is_none())
            {
                return Err(baseline::record::missing_metric(&run, &rule.metric));
            }
        }
        runs.push(run);
    }
    Ok(runs)
}

/// Findings of all `--details` files together, with the files' digests.
fn read_findings(
    details: &[PathBuf],
    key_mode: KernelKeyMode,
) -> Result<Option<(Findings, Vec<InputFile>)>> {
    if details.is_empty() {
        return Ok(None);
    }
    let mut all = Findings::new();
    let mut files = Vec::new();
    for path in details {
        for (kernel, rules) in parse::read_findings(path, key_mode)? {
            let entry = all.entry(kernel).or_default();
            for (name, finding) in rules {
                entry.entry(name).or_insert(finding);
            }
        }
        files.push(InputFile {
            path: path.display().to_string(),
            sha256: parse::sha256_file(path)?,
        });
    }
    Ok(Some((all, files)))
}

/// `ncugate baseline record`.
pub fn record(config: &RecordConfig) -> Result<i32> {
    let thresholds = Thresholds::load(config.thresholds.as_deref())?;
    let mut metrics = thresholds.metrics();
    for m in &config.extra_metrics {
        if !metrics.contains(m) {
            metrics.push(m.clone());
        }
    }
    let runs = read_runs(&config.inputs, &metrics, config.kernel_key, &thresholds)?;
    // Optional rules' metrics are recorded only where every run has them.
    let required: Vec<String> = metrics
        .iter()
        .filter(|m| {
            thresholds
                .rules
                .iter()
                .any(|r| &r.metric == *m && !r.optional)
                || config.extra_metrics.contains(m)
                || runs.iter().all(|r| {
                    r.metric_index(m)
                        .is_some_and(|i| r.metrics[i].unit.is_some())
                })
        })
        .cloned()
        .collect();
    let runs: Vec<Run> = runs
        .into_iter()
        .map(|run| keep_metrics(run, &required))
        .collect();
    let findings = read_findings(&config.details, config.kernel_key)?;
    let optional: Vec<String> = required
        .iter()
        .filter(|m| {
            !config.extra_metrics.contains(m)
                && thresholds
                    .rules
                    .iter()
                    .filter(|r| &&r.metric == m)
                    .all(|r| r.optional)
        })
        .cloned()
        .collect();
    let baseline = baseline::record::build(
        &runs,
        &required,
        &optional,
        findings.as_ref().map(|(f, files)| (f, files.clone())),
        &thresholds.source,
    )?;
    baseline.save(&config.output)?;
    let launches: f64 = baseline.total.launches.mean;
    println!(
        "ncugate: recorded {}: {} kernels, {launches} launches per run, {} metrics, {} run(s), {}, kernel key {}",
        config.output.display(),
        baseline.kernels.len(),
        required.len(),
        baseline.runs,
        baseline.fingerprint,
        baseline.kernel_key
    );
    Ok(exit::PASS)
}

/// Drops metric columns that are not in `keep` (order follows `keep`).
fn keep_metrics(mut run: Run, keep: &[String]) -> Run {
    let index: Vec<usize> = keep.iter().filter_map(|m| run.metric_index(m)).collect();
    run.metrics = index.iter().map(|&i| run.metrics[i].clone()).collect();
    for k in run
        .kernels
        .values_mut()
        .chain(std::iter::once(&mut run.total))
    {
        k.metrics = index.iter().map(|&i| k.metrics[i]).collect();
    }
    run
}

/// `ncugate baseline diff OLD NEW`: exit 0 when equal, 1 when they differ (like `diff`).
pub fn diff(old: &Path, new: &Path) -> Result<i32> {
    let read = |p: &Path| {
        std::fs::read_to_string(p).map_err(|source| Error::Read {
            path: p.to_path_buf(),
            source,
        })
    };
    let (a, b) = (Baseline::load(old)?, Baseline::load(new)?);
    let (ta, tb) = (read(old)?, read(new)?);
    print!("{}", baseline::diff::render(&a, &b, &ta, &tb));
    Ok(if ta == tb {
        exit::PASS
    } else {
        exit::REGRESSION
    })
}

/// Prints an expected failure once: `ncugate: error: …` and its `hint:`.
pub fn print_error(error: &Error) {
    eprintln!("ncugate: error: {error}");
    eprintln!("hint: {}", error.hint());
}
