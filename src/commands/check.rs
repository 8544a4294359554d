//! `ncugate check`: one workload's data against its baseline under the
//! threshold rules, into a [`Report`]; an error comes with an error report.
//! A suite checks each workload with this same function.

use super::sanitize::sanitizer_stage;
use super::*;

/// `ncugate check`: the report, or the error with its error report (which
/// is written wherever the reports go, like any other).
pub fn check(config: &CheckConfig, processes: &dyn ProcessRunner) -> Gated<Report> {
    let mut known = Known::given(config);
    steps(config, processes, &mut known).map_err(|error| known.fail(error))
}

/// The thresholds file a check reads, as its report names it.
pub(super) fn thresholds_name(config: &CheckConfig) -> String {
    config.thresholds.to_string()
}

/// A check under way: its config and the files it knows of, which its error
/// report names (the `--input` and `--details` files given, then the ones
/// profiled).
struct Known<'a> {
    config: &'a CheckConfig,
    inputs: Vec<PathBuf>,
    details: Vec<PathBuf>,
}

impl<'a> Known<'a> {
    fn given(config: &'a CheckConfig) -> Known<'a> {
        let inputs = match &config.source {
            Source::Inputs(i) => i.clone(),
            Source::Profile { .. } => Vec::new(),
        };
        Known {
            config,
            inputs,
            details: config.details.clone(),
        }
    }

    /// The error of any step, with its error report: built here, once.
    fn fail(&self, error: Error) -> Failed {
        let config = self.config;
        let paths = |p: &[PathBuf]| p.iter().map(|p| p.display().to_string()).collect();
        let report = Report::error(
            &config.baseline.display(),
            paths(&self.inputs),
            paths(&self.details),
            &thresholds_name(config),
            error.report_line(),
        );
        Failed::with_report(error, report)
    }
}

/// The check, step by step: thresholds → the baseline's candidates → the
/// data (profiled or given) → runs → the baseline for this data → the
/// comparison → the sanitizer stage → notes.
fn steps(config: &CheckConfig, processes: &dyn ProcessRunner, known: &mut Known) -> Result<Report> {
    let import = parse::NcuImport {
        ncu: &config.ncu,
        runner: processes,
        native: !config.import_with_ncu,
    };
    let thresholds = Thresholds::load(config.thresholds.file())?;
    let metrics = with_clock_metrics(thresholds.metrics(), &config.source);
    let candidates = Candidates::of(config, &thresholds)?;
    let acquired = acquire(
        &config.source,
        &config.details,
        &metrics,
        candidates.expected_launches(),
        config.outputs.github,
        processes,
    )?;
    known.inputs.clone_from(&acquired.inputs);
    known.details.clone_from(&acquired.details);
    let read = |key| {
        let later = Metrics::Later;
        read_runs(&acquired.inputs, &metrics, key, &thresholds, import, later)
    };
    let Read { runs, code } = read(candidates.kernel_key())?;
    let chosen = candidates.choose(config, &thresholds, runs, |key| read(key).map(|r| r.runs))?;
    let (baseline_path, baseline, runs) = (chosen.path, chosen.baseline, chosen.runs);
    // Another GPU before a missing metric: that GPU's export lacks it because it is another GPU.
    let current = crate::model::common_fingerprint(&runs)?;
    compare::same_device(&baseline, &current, config.allow_device_mismatch)?;
    has_metrics(&runs, &thresholds)?;
    let notes = DataNotes::of(&config.source, &metrics, &runs, &acquired.seconds);
    let findings = read_findings(&acquired.details, baseline.kernel_key, import)?;
    let (code, code_note) = read_code(
        &acquired.reports,
        &code,
        baseline.kernel_key,
        Opcodes::IfChangedFrom(&baseline),
        import,
    );
    let gpu = GpuEnvironment::observe(&runs, &acquired.gpu);
    let inputs = Inputs {
        gpu: &gpu,
        shared_gpu: config.shared_gpu,
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
        notes: notes.details_page,
        code: code.as_ref(),
        environmental: config.environmental,
    };
    let mut report = compare::compare(&inputs)?;
    report.notes.extend(code_note);
    explain_stage(&mut report, &baseline, &runs, config, processes);
    for (p, s) in report.profiling.iter_mut().zip(&acquired.seconds) {
        p.seconds = Some(*s);
    }
    report.notes.extend(chosen.note);
    report.notes.extend(notes.cost);
    if let Some(sanitizer) = &config.sanitizer {
        sanitizer_stage(&mut report, sanitizer, processes)?;
        report.finish();
    }
    // A rolling baseline keeps no ncu settings: its runs were checks like this one.
    if !matches!(config.baseline, BaselinePlace::History) {
        report.notes.extend(settings_note(
            baseline.profile.as_ref(),
            acquired.profile.as_ref(),
        ));
    }
    if let Some(history) = &config.history {
        super::history::after_check(history, &mut report, &inputs, processes)?;
    }
    Ok(report)
}

/// The explain stage: the chosen kernels' source lines, from the source
/// pages given or, when ncugate profiles, from one extra ncu run per kernel
/// (within the time budget); what it cannot do is a note, never another
/// verdict.
fn explain_stage(
    report: &mut Report,
    baseline: &Baseline,
    runs: &[Run],
    config: &CheckConfig,
    processes: &dyn ProcessRunner,
) {
    use crate::compare::explain::{ExplainMode, attach, chosen, pick_launch};
    let explain = &config.explain;
    let kernels = chosen(report, explain.mode, explain.kernels);
    if kernels.is_empty() {
        return;
    }
    let (profiles, mut notes) = match (&config.source, explain.pages.is_empty()) {
        (Source::Profile { runner, .. }, true) => {
            let seen: &Report = report;
            let pick = |k: &str| Some(pick_launch(seen, baseline, runs, k));
            profile_sources(&kernels, &pick, baseline, runner, explain.budget, processes)
        }
        (_, true) => {
            // Nothing to explain with: said only when every kernel was asked for.
            if explain.mode == ExplainMode::Always {
                report.notes.push(format!(
                    "explain: no source pages given (--source-page) for {}",
                    crate::format::count(kernels.len(), "kernel", "kernels")
                ));
            }
            return;
        }
        (_, false) => read_source_pages(&explain.pages, baseline.kernel_key),
    };
    notes.extend(attach(report, baseline, &profiles, &kernels));
    report.notes.extend(notes);
}

/// The baseline a check compares with, the runs read for it, and where it came from.
struct Chosen {
    path: PathBuf,
    baseline: Baseline,
    runs: Vec<Run>,
    /// Which history runs a rolling baseline was made of.
    note: Option<String>,
}

/// The baseline a check compares with, as far as it is known before the
/// data: one file, or a workload's baselines of which the data's GPU picks one.
enum Candidates<'a> {
    File {
        path: PathBuf,
        baseline: Box<Baseline>,
    },
    PerGpu {
        dir: &'a Path,
        workload: &'a str,
        record: &'a str,
        files: Vec<PathBuf>,
        /// The first candidate's key mode, which reads the data once in the usual case.
        kernel_key: KernelKeyMode,
    },
    /// The last accepted runs in the history, for the data's GPU.
    History {
        history: &'a crate::config::history::CheckHistory,
        /// The mode the data is read with first.
        kernel_key: KernelKeyMode,
        /// `--kernel-key`, which must agree with the history's runs.
        asked: Option<KernelKeyMode>,
    },
}

impl<'a> Candidates<'a> {
    /// A baseline file is loaded and vetted before any profiling; a
    /// workload's folder must hold at least one baseline.
    fn of(config: &'a CheckConfig, thresholds: &Thresholds) -> Result<Candidates<'a>> {
        match &config.baseline {
            BaselinePlace::File(path) => {
                let baseline = Baseline::load(path)?;
                usable(config, &baseline, path, thresholds)?;
                Ok(Candidates::File {
                    path: path.clone(),
                    baseline: Box::new(baseline),
                })
            }
            BaselinePlace::Dir {
                dir,
                workload,
                record,
            } => {
                let files = suite::baselines::files(dir, workload)?;
                let Some(first) = files.first() else {
                    return Err(missing_baseline(dir, workload, None, &[], record));
                };
                let kernel_key = Baseline::load(first)?.kernel_key;
                Ok(Candidates::PerGpu {
                    dir,
                    workload,
                    record,
                    files,
                    kernel_key,
                })
            }
            BaselinePlace::History => match &config.history {
                Some(history) => Ok(Candidates::History {
                    history,
                    kernel_key: config.kernel_key.unwrap_or_default(),
                    asked: config.kernel_key,
                }),
                None => Err(crate::error::HistoryError::NoStore.into()),
            },
        }
    }

    /// The kernel key mode to read the data with.
    fn kernel_key(&self) -> KernelKeyMode {
        match self {
            Candidates::File { baseline, .. } => baseline.kernel_key,
            Candidates::PerGpu { kernel_key, .. } | Candidates::History { kernel_key, .. } => {
                *kernel_key
            }
        }
    }

    /// Launches per run the progress line expects, when one baseline is known.
    fn expected_launches(&self) -> Option<u64> {
        match self {
            Candidates::File { baseline, .. } => Some(baseline.total.launches.mean.round() as u64),
            Candidates::PerGpu { .. } | Candidates::History { .. } => None,
        }
    }

    /// The baseline for the data's GPU, vetted, and the runs read with its
    /// key mode (`read` reads them again when it differs from the first
    /// candidate's).
    fn choose(
        self,
        config: &CheckConfig,
        thresholds: &Thresholds,
        runs: Vec<Run>,
        read: impl Fn(KernelKeyMode) -> Result<Vec<Run>>,
    ) -> Result<Chosen> {
        let chosen = |path, baseline, runs| Chosen {
            path,
            baseline,
            runs,
            note: None,
        };
        let (dir, workload, record, files, kernel_key) = match self {
            Candidates::File { path, baseline } => return Ok(chosen(path, *baseline, runs)),
            Candidates::History {
                history,
                kernel_key,
                asked,
            } => return from_history(history, (kernel_key, asked), thresholds, runs, read),
            Candidates::PerGpu {
                dir,
                workload,
                record,
                files,
                kernel_key,
            } => (dir, workload, record, files, kernel_key),
        };
        let fingerprint = runs
            .first()
            .map(|r| r.fingerprint.clone())
            .unwrap_or_default();
        let path = baseline_file(&config.baseline, &fingerprint);
        if !path.exists() {
            let gpus = suite::baselines::gpus(&files);
            let gpu = suite::baselines::slug(&fingerprint);
            return Err(missing_baseline(dir, workload, Some(&gpu), &gpus, record));
        }
        let baseline = Baseline::load(&path)?;
        usable(config, &baseline, &path, thresholds)?;
        let runs = if baseline.kernel_key == kernel_key {
            runs
        } else {
            read(baseline.kernel_key)?
        };
        Ok(chosen(path, baseline, runs))
    }
}

/// The rolling baseline for the data's GPU: the last accepted runs of this
/// workload in the history.
fn from_history(
    history: &crate::config::history::CheckHistory,
    (kernel_key, asked): (KernelKeyMode, Option<KernelKeyMode>),
    thresholds: &Thresholds,
    runs: Vec<Run>,
    read: impl Fn(KernelKeyMode) -> Result<Vec<Run>>,
) -> Result<Chosen> {
    use crate::history::{self, rolling};
    let fingerprint = crate::model::common_fingerprint(&runs)?;
    let shown = history::Location::parse(&history.url)?.shown();
    let mut store = history::open(&history.url, false)?;
    let window = rolling::Window {
        shown: &shown,
        workload: &history.workload,
        runs: history.window,
        kernel_key: asked,
    };
    let made = rolling::rolling(store.as_mut(), window, &fingerprint, thresholds)?;
    // The data was read with the asked mode, else the default: read it again
    // when the history's runs grouped launches otherwise.
    let runs = if made.baseline.kernel_key == kernel_key {
        runs
    } else {
        read(made.baseline.kernel_key)?
    };
    Ok(Chosen {
        path: PathBuf::from(format!("history {shown}")),
        baseline: made.baseline,
        runs,
        note: Some(rolling::note(&shown, &history.workload, &made.commits)),
    })
}

/// When the two sides' ncu settings differ or one is unknown: what the
/// reader should know (the settings that matter are refused by [`usable`]).
fn settings_note(
    baseline: Option<&ProfileSettings>,
    current: Option<&ProfileSettings>,
) -> Option<String> {
    match (baseline, current) {
        (Some(b), None) => Some(format!("the inputs' ncu settings are unknown; the baseline was profiled with --clock-control {} --graph-profiling {}", b.clock_control, b.graph_profiling.as_str())),
        (None, Some(c)) => Some(format!("the baseline does not record its ncu settings (recorded from exports); this run used --clock-control {} --graph-profiling {}", c.clock_control, c.graph_profiling.as_str())),
        (Some(b), Some(c)) if b.mode != c.mode => Some(format!("the baseline was profiled in {:?} mode, this run in {:?} mode (same gated metrics)", b.mode, c.mode).to_lowercase()),
        _ => None,
    }
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
        return Err(Error::from(crate::error::BaselineError::KernelKey {
            asked: mode.to_string(),
            recorded: baseline.kernel_key.to_string(),
        }));
    }
    for rule in thresholds.rules.iter().filter(|r| !r.optional) {
        if !baseline.total.metrics.contains_key(&rule.metric) {
            let known = baseline.total.metrics.keys();
            return Err(Error::from(crate::error::BaselineError::MetricMissing {
                path: path.to_path_buf(),
                metric: rule.metric.clone(),
                line: rule.line,
                thresholds: thresholds.source.to_string(),
                near: crate::suggest::closest(&rule.metric, known).map(str::to_string),
            }));
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
    Error::from(crate::error::BaselineError::Missing {
        path: dir.join(workload),
        workload: workload.to_string(),
        gpu: gpu.map(str::to_string),
        others: others.to_vec(),
        record: record.to_string(),
    })
}

/// Runs made under another clock control or graph-profiling mode are not comparable.
fn comparable_settings(baseline: &ProfileSettings, current: &ProfileSettings) -> Result<()> {
    if baseline.clock_control != current.clock_control {
        return Err(Error::from(crate::error::BaselineError::ClockControl {
            recorded: baseline.clock_control.to_string(),
            current: current.clock_control.to_string(),
        }));
    }
    if baseline.graph_profiling != current.graph_profiling {
        return Err(Error::from(crate::error::BaselineError::GraphProfiling {
            recorded: baseline.graph_profiling.as_str().to_string(),
            current: current.graph_profiling.as_str().to_string(),
        }));
    }
    Ok(())
}
