//! The pipeline of each subcommand, in order: config → build → profile (ncu)
//! → parse → aggregate → compare → report → exit code.

use crate::baseline::{self, Baseline, InputFile, ProfileSettings};
use crate::compare::{self, Inputs};
use crate::config::{BaselinePlace, CheckConfig, RecordConfig, SanitizeConfig, Source};
use crate::error::{Error, Result};
use crate::exit;
use crate::model::{Findings, KernelKeyMode, Run};
use crate::parse;
use crate::report::{self, terminal};
use crate::rules::Thresholds;
use crate::runner::process::ProcessRunner;
use crate::runner::progress::Progress;
use crate::runner::{self, RunnerConfig};
use crate::sanitizer::run::SanitizerConfig;
use crate::suite;
use crate::verdict::{Outcome, Report, Subject};
use std::path::{Path, PathBuf};

/// The exports a check or a recording works on, and how they were made.
struct Acquired {
    inputs: Vec<PathBuf>,
    details: Vec<PathBuf>,
    profile: Option<ProfileSettings>,
    /// Wall seconds of each profiled run (empty for `--input` files).
    seconds: Vec<f64>,
}

/// `--input` files as given, or the app built and profiled `runs` times.
fn acquire(
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
        }),
        Source::Profile {
            runner: config,
            runs,
            quiet,
        } => {
            runner::build(config, runner)?;
            let mut acquired = Acquired {
                inputs: Vec::new(),
                details: details.to_vec(),
                profile: Some(ProfileSettings::of(config)),
                seconds: Vec::new(),
            };
            for i in 1..=*runs {
                let name = if *runs == 1 {
                    "run".to_string()
                } else {
                    format!("run-{i}")
                };
                let mut progress = Progress::new(expected, *quiet).github(github);
                let artifacts =
                    runner::profile_once(config, metrics, &name, runner, &mut progress)?;
                eprintln!(
                    "ncugate: artifacts of {name} ({:.1}s): {}",
                    artifacts.seconds,
                    artifacts.dir.display()
                );
                acquired.inputs.push(artifacts.raw);
                acquired.details.extend(artifacts.details);
                acquired.seconds.push(artifacts.seconds);
            }
            Ok(acquired)
        }
    }
}

/// `ncugate check` with real processes.
pub fn check(config: &CheckConfig) -> i32 {
    check_with(config, &runner::process::RealRunner)
}

/// `ncugate check`: returns the exit code. File reports are written in every
/// case, an error report when the gate could not decide.
pub fn check_with(config: &CheckConfig, processes: &dyn ProcessRunner) -> i32 {
    let checked = check_workload(config, processes);
    if let Some(error) = &checked.error {
        if let Err(write_error) = report::write_all(&checked.report, &config.outputs) {
            print_error(&write_error);
        }
        print_error(error);
        return exit::ERROR;
    }
    let report = checked.report;
    print!("{}", terminal::render(&report, &config.style));
    if let Err(error) = report::write_all(&report, &config.outputs) {
        print_error(&error);
        return exit::ERROR;
    }
    explain_error_rows(&report);
    report.exit_code
}

/// After the table: why an exit 2 came from rows that could not be evaluated.
pub fn explain_error_rows(report: &Report) {
    if report.outcome == Outcome::Error && report.errors.is_empty() {
        let n = report.counts().error;
        eprintln!("ncugate: error: {n} check(s) could not be evaluated (ERROR rows above)");
        eprintln!(
            "hint: each ERROR row says what is missing; fix the input or baseline, or mark the rule `optional = true`"
        );
    }
}

/// One check's result: the report (an error report when the gate could not
/// decide, with the error), and the wall time of the profiled run.
pub struct Checked {
    pub report: Report,
    pub error: Option<Error>,
    /// Seconds the profiled run(s) took; `None` for `--input`.
    pub seconds: Option<f64>,
}

/// Runs one check and never fails: an error becomes an error report.
pub fn check_workload(config: &CheckConfig, processes: &dyn ProcessRunner) -> Checked {
    match check_report(config, processes) {
        Ok((report, seconds)) => Checked {
            report,
            error: None,
            seconds,
        },
        Err(failed) => {
            let (error, inputs, details) = *failed;
            let paths = |p: &[PathBuf]| p.iter().map(|p| p.display().to_string()).collect();
            let thresholds = config
                .thresholds
                .as_ref()
                .map_or(crate::rules::DEFAULT_SOURCE.to_string(), |p| {
                    p.display().to_string()
                });
            let report = Report::error(
                &config.baseline.display(),
                paths(&inputs),
                paths(&details),
                &thresholds,
                error.report_line(),
            );
            Checked {
                report,
                error: Some(error),
                seconds: None,
            }
        }
    }
}

/// An error before any comparison, with the inputs and details known by then.
type CheckError = Box<(Error, Vec<PathBuf>, Vec<PathBuf>)>;

fn check_report(
    config: &CheckConfig,
    processes: &dyn ProcessRunner,
) -> std::result::Result<(Report, Option<f64>), CheckError> {
    let given = match &config.source {
        Source::Inputs(i) => i.clone(),
        Source::Profile { .. } => Vec::new(),
    };
    let fail = |e: Error| Box::new((e, given.clone(), config.details.clone()));
    let import = parse::NcuImport {
        ncu: &config.ncu,
        runner: processes,
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
    let seconds = (!acquired.seconds.is_empty()).then(|| acquired.seconds.iter().sum());
    Ok((report, seconds))
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

/// The name among `known` closest to `name`, if one is close enough to be a typo.
pub fn closest<'a>(name: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    known
        .filter(|k| *k != name)
        .map(|k| (strsim::jaro_winkler(name, k), k))
        .filter(|(score, _)| *score > 0.9)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// When ncugate profiled in fast mode and ncu took more than one pass per
/// kernel: which metrics are responsible and what they cost. Full mode takes
/// `--set full`'s passes on purpose.
fn cost_note(
    runner: &RunnerConfig,
    metrics: &[String],
    runs: &[Run],
    seconds: &[f64],
) -> Option<String> {
    if runner.mode != runner::Mode::Fast {
        return None;
    }
    let (i, passes) = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| runner::passes::Passes::of(&r.total.passes).map(|p| (i, p)))
        .max_by_key(|(_, p)| p.max)?;
    let mut collected = metrics.to_vec();
    for m in &runner.extra_metrics {
        if !collected.contains(m) {
            collected.push(m.clone());
        }
    }
    let builtin = Thresholds::builtin()
        .map(|t| t.metrics())
        .unwrap_or_default();
    runner::passes::note(&collected, &builtin, passes, seconds.get(i).copied())
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

/// Parses every input; a metric that a non-optional rule needs must be in each.
fn read_runs(
    inputs: &[PathBuf],
    metrics: &[String],
    key_mode: KernelKeyMode,
    thresholds: &Thresholds,
    import: parse::NcuImport,
) -> Result<Vec<Run>> {
    let mut runs = Vec::with_capacity(inputs.len());
    for path in inputs {
        let run = parse::read_run(path, metrics, key_mode, import)?;
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
    import: parse::NcuImport,
) -> Result<Option<(Findings, Vec<InputFile>)>> {
    if details.is_empty() {
        return Ok(None);
    }
    let mut all = Findings::new();
    let mut files = Vec::new();
    for path in details {
        for (kernel, rules) in parse::read_findings(path, key_mode, import)? {
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

/// `ncugate baseline record` with real processes.
pub fn record(config: &RecordConfig) -> Result<i32> {
    record_with(config, &runner::process::RealRunner)
}

/// `ncugate baseline record`.
pub fn record_with(config: &RecordConfig, processes: &dyn ProcessRunner) -> Result<i32> {
    let import = parse::NcuImport {
        ncu: &config.ncu,
        runner: processes,
    };
    let thresholds = Thresholds::load(config.thresholds.as_deref())?;
    let mut metrics = thresholds.metrics();
    for m in &config.extra_metrics {
        if !metrics.contains(m) {
            metrics.push(m.clone());
        }
    }
    let acquired = acquire(
        &config.source,
        &config.details,
        &metrics,
        None,
        false,
        processes,
    )?;
    let runs = read_runs(
        &acquired.inputs,
        &metrics,
        config.kernel_key,
        &thresholds,
        import,
    )?;
    if let Source::Profile { runner, .. } = &config.source
        && let Some(note) = cost_note(runner, &metrics, &runs, &acquired.seconds)
    {
        eprintln!("ncugate: note: {note}");
    }
    let passes = runs
        .iter()
        .filter_map(|r| runner::passes::Passes::of(&r.total.passes))
        .max_by_key(|p| p.max)
        .map(|p| format!(", {p}"))
        .unwrap_or_default();
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
    let findings = read_findings(&acquired.details, config.kernel_key, import)?;
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
    let mut baseline = baseline::record::build(
        &runs,
        &required,
        &optional,
        findings.as_ref().map(|(f, files)| (f, files.clone())),
        &thresholds.source,
    )?;
    baseline.profile = acquired.profile;
    if !acquired.seconds.is_empty() {
        baseline.cost_seconds =
            Some(acquired.seconds.iter().sum::<f64>() / acquired.seconds.len() as f64);
    }
    let output = match &config.output {
        BaselinePlace::File(path) => path.clone(),
        BaselinePlace::Dir { dir, workload, .. } => {
            suite::baselines::path(dir, workload, &baseline.fingerprint)
        }
    };
    baseline.save(&output)?;
    if baseline.runs < 2 {
        let mut noisy: Vec<&str> = thresholds
            .rules
            .iter()
            .filter(|r| r.noise > 0.0)
            .map(|r| r.metric.as_str())
            .collect();
        noisy.dedup();
        eprintln!(
            "ncugate: warning: a baseline of {} run has no spread: σ is unknown, so the `noise` allowance (k·σ) of {} is 0 and only `max_change` applies",
            baseline.runs,
            if noisy.is_empty() {
                "the rules".to_string()
            } else {
                noisy.join(", ")
            }
        );
        eprintln!(
            "hint: record from 3 or more runs (repeat --input, or --runs 3) so timings get their measured noise band"
        );
    }
    let launches: f64 = baseline.total.launches.mean;
    println!(
        "ncugate: recorded {}: {} kernels, {launches} launches per run{passes}, {} metrics, {} run(s), {}, kernel key {}",
        output.display(),
        baseline.kernels.len(),
        required.len(),
        baseline.runs,
        baseline.fingerprint,
        baseline.kernel_key
    );
    Ok(exit::PASS)
}

/// `ncugate profile`: build, profile once, say where everything is.
pub fn profile(config: &RunnerConfig, processes: &dyn ProcessRunner) -> Result<i32> {
    let thresholds = Thresholds::builtin()?;
    runner::build(config, processes)?;
    let mut progress = Progress::new(None, false);
    let a = runner::profile_once(
        config,
        &thresholds.metrics(),
        "profile",
        processes,
        &mut progress,
    )?;
    println!(
        "ncugate: profiled in {:.1}s; artifacts in {}",
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
            println!("  {what:<13} {}", path.display());
        }
    }
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
        std::fs::read_to_string(p).map_err(|source| Error::read_file("baseline", p, source))
    };
    let (a, b) = (Baseline::load(old)?, Baseline::load(new)?);
    let (ta, tb) = (read(old)?, read(new)?);
    // The rules the new baseline was recorded for, when that file is at hand;
    // else the built-in ones.
    let thresholds = match Path::new(&b.thresholds) {
        p if p.is_file() => Thresholds::load(Some(p)).ok(),
        _ => Thresholds::builtin().ok(),
    };
    print!(
        "{}",
        baseline::diff::render(&a, &b, &ta, &tb, thresholds.as_ref())
    );
    Ok(if ta == tb {
        exit::PASS
    } else {
        exit::REGRESSION
    })
}

/// `ncugate sanitize`: run compute-sanitizer (or read saved XML), gate the findings.
pub fn sanitize(config: &SanitizeConfig, processes: &dyn ProcessRunner) -> i32 {
    let running = config.xml.is_empty();
    let inputs: Vec<String> = config
        .xml
        .iter()
        .map(|(p, _)| p.display().to_string())
        .collect();
    let mut tools: Vec<String> = if running {
        config.sanitizer.tools.clone()
    } else {
        config.xml.iter().map(|(_, tool)| tool.clone()).collect()
    };
    tools.dedup();
    let subject = Subject::Sanitizer {
        tools,
        app: running.then(|| shell_words(&config.sanitizer.app)),
    };
    let mut report = Report::empty("", inputs.clone(), Vec::new(), "");
    report.subject = subject.clone();
    let result = if running {
        runner::build(&config.runner, processes)
            .and_then(|()| sanitizer_stage(&mut report, &config.sanitizer, processes))
    } else {
        config.xml.iter().try_for_each(|(path, tool)| {
            let (findings, records) =
                crate::sanitizer::read_xml(path, tool, &config.sanitizer.allow)?;
            report.notes.push(format!(
                "{tool}: {records} records in {} grouped into {} findings",
                path.display(),
                findings.len()
            ));
            report.sanitizer.extend(findings);
            Ok(())
        })
    };
    conclude(
        result.map(|()| report),
        inputs,
        subject,
        &config.outputs,
        &config.style,
    )
}

/// A command line as a shell would show it: words with spaces or quotes quoted.
pub fn shell_words(words: &[String]) -> String {
    shlex::try_join(words.iter().map(String::as_str)).unwrap_or_else(|_| words.join(" "))
}

/// Runs every configured sanitizer tool on the app; findings and notes go into `report`.
fn sanitizer_stage(
    report: &mut Report,
    config: &SanitizerConfig,
    processes: &dyn ProcessRunner,
) -> Result<()> {
    for tool in &config.tools {
        let run = crate::sanitizer::run::run_tool(config, tool, processes)?;
        let reported = match run.reported {
            Some(n) if n > run.records => format!(
                "; compute-sanitizer counted {n} errors, {} beyond --print-limit are not in the XML",
                n - run.records
            ),
            _ => String::new(),
        };
        report.notes.push(format!(
            "{tool}: {} records in {} grouped into {} findings{reported}",
            run.records,
            run.xml.display(),
            run.findings.len()
        ));
        if let Some(note) = run.note {
            report.notes.push(note);
        }
        report.sanitizer.extend(run.findings);
    }
    Ok(())
}

/// `ncugate leaks`: the graph-memory gate.
pub fn leaks(config: &crate::config::LeaksConfig, processes: &dyn ProcessRunner) -> i32 {
    let subject = Subject::Memory {
        app: shell_words(&config.runner.app),
    };
    let mut report = Report::empty("", Vec::new(), Vec::new(), "");
    report.subject = subject.clone();
    let result = crate::memory::run::run(config, processes, &mut report).map(|()| report);
    conclude(result, Vec::new(), subject, &config.outputs, &config.style)
}

/// The end of `sanitize` and `leaks`: the report, or an error report, written
/// everywhere it was asked for; the exit code.
fn conclude(
    result: Result<Report>,
    inputs: Vec<String>,
    subject: Subject,
    outputs: &report::Outputs,
    style: &terminal::Style,
) -> i32 {
    let mut report = match result {
        Ok(report) => report,
        Err(error) => {
            let mut report = Report::error("", inputs, Vec::new(), "", error.report_line());
            report.subject = subject;
            if let Err(e) = report::write_all(&report, outputs) {
                print_error(&e);
            }
            print_error(&error);
            return exit::ERROR;
        }
    };
    report.finish();
    print!("{}", terminal::render(&report, style));
    if let Err(error) = report::write_all(&report, outputs) {
        print_error(&error);
        return exit::ERROR;
    }
    report.exit_code
}

/// Prints an expected failure once: `ncugate: error: …`, its detail (toml's
/// report, a command's output) indented below, and its `hint:`.
pub fn print_error(error: &Error) {
    eprintln!("ncugate: error: {error}");
    for line in error.detail() {
        eprintln!("  | {line}");
    }
    eprintln!("hint: {}", error.hint());
}
