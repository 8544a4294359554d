//! `ncugate check`: one workload's data against its baseline under the
//! threshold rules, into a [`Report`]; an error comes with an error report.
//! A suite checks each workload with this same function.

use super::memory::sanitizer_stage;
use super::*;

/// `ncugate check`: the report, or the error with its error report (which
/// is written wherever the reports go, like any other).
pub fn check(config: &CheckConfig, processes: &dyn ProcessRunner) -> Gated<Report> {
    check_report(config, processes).map_err(|failed| {
        let (error, inputs, details) = *failed;
        let paths = |p: &[PathBuf]| p.iter().map(|p| p.display().to_string()).collect();
        let report = Report::error(
            &config.baseline.display(),
            paths(&inputs),
            paths(&details),
            &thresholds_name(config),
            error.report_line(),
        );
        Failed::with_report(error, report)
    })
}

/// The thresholds file a check reads, as its report names it.
pub(super) fn thresholds_name(config: &CheckConfig) -> String {
    config
        .thresholds
        .as_ref()
        .map_or(crate::rules::DEFAULT_SOURCE.to_string(), |p| {
            p.display().to_string()
        })
}

/// An error before any comparison, with the inputs and details known by then.
type CheckError = Box<(Error, Vec<PathBuf>, Vec<PathBuf>)>;

fn check_report(
    config: &CheckConfig,
    processes: &dyn ProcessRunner,
) -> std::result::Result<Report, CheckError> {
    let given = match &config.source {
        Source::Inputs(i) => i.clone(),
        Source::Profile { .. } => Vec::new(),
    };
    let fail = |e: Error| Box::new((e, given.clone(), config.details.clone()));
    let import = parse::NcuImport {
        ncu: &config.ncu,
        runner: processes,
        native: !config.import_with_ncu,
    };
    let thresholds = Thresholds::load(config.thresholds.as_deref()).map_err(fail)?;
    let metrics = thresholds.metrics();
    let (baseline, baseline_path, acquired, runs) = match &config.baseline {
        BaselinePlace::File(path) => {
            let baseline = Baseline::load(path).map_err(fail)?;
            usable(config, &baseline, path, &thresholds).map_err(fail)?;
            let expected = Some(baseline.total.launches.mean.round() as u64);
            let acquired = acquire(
                &config.source,
                &config.details,
                &metrics,
                expected,
                config.outputs.github,
                processes,
            )
            .map_err(fail)?;
            let fail = |e: Error| Box::new((e, acquired.inputs.clone(), acquired.details.clone()));
            let runs = read_runs(
                &acquired.inputs,
                &metrics,
                baseline.kernel_key,
                &thresholds,
                import,
            )
            .map_err(fail)?;
            (baseline, path.clone(), acquired, runs)
        }
        BaselinePlace::Dir {
            dir,
            workload,
            record,
        } => {
            let files = suite::baselines::files(dir, workload).map_err(fail)?;
            if files.is_empty() {
                return Err(fail(missing_baseline(dir, workload, None, &[], record)));
            }
            // The candidates' key mode parses the data once in the usual case.
            let first = Baseline::load(&files[0]).map_err(fail)?;
            let acquired = acquire(
                &config.source,
                &config.details,
                &metrics,
                None,
                config.outputs.github,
                processes,
            )
            .map_err(fail)?;
            let fail = |e: Error| Box::new((e, acquired.inputs.clone(), acquired.details.clone()));
            let mut runs = read_runs(
                &acquired.inputs,
                &metrics,
                first.kernel_key,
                &thresholds,
                import,
            )
            .map_err(fail)?;
            let fingerprint = runs
                .first()
                .map(|r| r.fingerprint.clone())
                .unwrap_or_default();
            let path = suite::baselines::path(dir, workload, &fingerprint);
            if !path.exists() {
                let gpus = suite::baselines::gpus(&files);
                return Err(fail(missing_baseline(
                    dir,
                    workload,
                    Some(&suite::baselines::slug(&fingerprint)),
                    &gpus,
                    record,
                )));
            }
            let baseline = Baseline::load(&path).map_err(fail)?;
            usable(config, &baseline, &path, &thresholds).map_err(fail)?;
            if baseline.kernel_key != first.kernel_key {
                runs = read_runs(
                    &acquired.inputs,
                    &metrics,
                    baseline.kernel_key,
                    &thresholds,
                    import,
                )
                .map_err(fail)?;
            }
            (baseline, path, acquired, runs)
        }
    };
    let fail = |e: Error| Box::new((e, acquired.inputs.clone(), acquired.details.clone()));
    let findings = read_findings(&acquired.details, baseline.kernel_key, import).map_err(fail)?;
    let mut report = compare::compare(&Inputs {
        baseline: &baseline,
        baseline_path: baseline_path.display().to_string(),
        runs: &runs,
        findings: findings.as_ref().map(|(f, _)| f),
        details_paths: acquired
            .details
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        thresholds: &thresholds,
        allow_device_mismatch: config.allow_device_mismatch,
    })
    .map_err(fail)?;
    for (p, s) in report.profiling.iter_mut().zip(&acquired.seconds) {
        p.seconds = Some(*s);
    }
    if let Source::Profile { runner, .. } = &config.source {
        report
            .notes
            .extend(cost_note(runner, &metrics, &runs, &acquired.seconds));
    }
    if let Some(sanitizer) = &config.sanitizer {
        sanitizer_stage(&mut report, sanitizer, processes).map_err(fail)?;
        report.finish();
    }
    match (&baseline.profile, &acquired.profile) {
        (Some(b), None) => report.notes.push(format!("the inputs' ncu settings are unknown; the baseline was profiled with --clock-control {} --graph-profiling {}", b.clock_control, b.graph_profiling.as_str())),
        (None, Some(c)) => report.notes.push(format!("the baseline does not record its ncu settings (recorded from exports); this run used --clock-control {} --graph-profiling {}", c.clock_control, c.graph_profiling.as_str())),
        (Some(b), Some(c)) if b.mode != c.mode => report.notes.push(format!("the baseline was profiled in {:?} mode, this run in {:?} mode (same gated metrics)", b.mode, c.mode).to_lowercase()),
        _ => {}
    }
    Ok(report)
}

/// The checks a baseline must pass before any data is compared with it: the
/// kernel key asked for, every non-optional rule's metric, the ncu settings.
fn usable(
    config: &CheckConfig,
    baseline: &Baseline,
    path: &Path,
    thresholds: &Thresholds,
) -> Result<()> {
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
    for rule in thresholds.rules.iter().filter(|r| !r.optional) {
        if !baseline.total.metrics.contains_key(&rule.metric) {
            let known = baseline.total.metrics.keys().map(String::as_str);
            let hint = match closest(&rule.metric, known) {
                Some(near) => format!(
                    "did you mean `{near}` (it is in the baseline)? Fix the name in {} line {}, or re-record the baseline with these thresholds",
                    thresholds.source, rule.line
                ),
                None => "re-record the baseline with these thresholds: `ncugate baseline record --thresholds …`".into(),
            };
            return Err(Error::Baseline {
                path: path.to_path_buf(),
                message: format!(
                    "metric `{}` (thresholds line {}) is not in the baseline",
                    rule.metric, rule.line
                ),
                hint,
            });
        }
    }
    if let (Source::Profile { runner, .. }, Some(recorded)) = (&config.source, &baseline.profile) {
        comparable_settings(recorded, &ProfileSettings::of(runner))?;
    }
    Ok(())
}

/// No baseline for this workload (on this GPU): the command that records it.
fn missing_baseline(
    dir: &Path,
    workload: &str,
    gpu: Option<&str>,
    others: &[String],
    record: &str,
) -> Error {
    let message = match gpu {
        None => format!("no baseline for workload `{workload}`"),
        Some(gpu) => format!(
            "no baseline for workload `{workload}` on this GPU ({gpu}.json); there are baselines for {}",
            others.join(", ")
        ),
    };
    Error::Baseline {
        path: dir.join(workload),
        message,
        hint: format!("record it on this runner: `{record}`"),
    }
}

/// Runs made under another clock control or graph-profiling mode are not comparable.
fn comparable_settings(baseline: &ProfileSettings, current: &ProfileSettings) -> Result<()> {
    if baseline.clock_control != current.clock_control {
        return Err(Error::Usage {
            message: format!(
                "the baseline was profiled with --clock-control {}, this run would use --clock-control {}",
                baseline.clock_control, current.clock_control
            ),
            hint: format!(
                "clock control changes throughput by ~10%: use --clock-control {} (or [profile] clock_control), or re-record the baseline",
                baseline.clock_control
            ),
        });
    }
    if baseline.graph_profiling != current.graph_profiling {
        return Err(Error::Usage {
            message: format!("the baseline was profiled with --graph-profiling {}, this run would use {}", baseline.graph_profiling.as_str(), current.graph_profiling.as_str()),
            hint: "graph mode profiles a whole graph as one result: use the baseline's mode, or re-record the baseline".into(),
        });
    }
    Ok(())
}
