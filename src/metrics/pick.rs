//! Stage 3, pick the baseline: one file, the file of the data's GPU in a
//! suite's `<dir>/<workload>/<gpu>.json`, or the rolling baseline of the
//! history's last accepted runs. A baseline file is loaded and vetted
//! ([`usable`]) before anything is profiled.

use crate::baseline::{Baseline, ProfileSettings, layout};
use crate::config::{BaselinePlace, CheckConfig, Source};
use crate::error::{Error, Result};
use crate::model::{Fingerprint, KernelKeyMode, Run};
use crate::rules::Thresholds;
use std::path::{Path, PathBuf};

/// The baseline a check compares with, the runs read for it, and where it came from.
pub(super) struct Chosen {
    pub(super) path: PathBuf,
    pub(super) baseline: Baseline,
    pub(super) runs: Vec<Run>,
    /// The runs' one fingerprint ([`crate::model::common_fingerprint`]), made once.
    pub(super) fingerprint: Fingerprint,
    /// Which history runs a rolling baseline was made of.
    pub(super) note: Option<String>,
}

/// The baseline a check compares with, as far as it is known before the
/// data: one file, or a workload's baselines of which the data's GPU picks one.
pub(super) enum Candidates<'a> {
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
    pub(super) fn of(config: &'a CheckConfig, thresholds: &Thresholds) -> Result<Candidates<'a>> {
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
                let files = layout::files(dir, workload)?;
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

    /// The one baseline a check without ncu's data compares with (trace
    /// mode: no fingerprint picks a GPU's file): the file, or a workload's
    /// only file; an error for several files or a rolling baseline.
    pub(super) fn sole(&self) -> Result<(PathBuf, Baseline)> {
        let refuse = |place: String, reason: &str| {
            Err(Error::from(crate::error::ToolError::TraceBaseline {
                place,
                reason: reason.to_string(),
            }))
        };
        match self {
            Candidates::File { path, baseline } => Ok((path.clone(), (**baseline).clone())),
            Candidates::PerGpu {
                files,
                dir,
                workload,
                ..
            } => match &files[..] {
                [one] => Ok((one.clone(), Baseline::load(one)?)),
                _ => refuse(
                    format!("{}/", dir.join(workload).display()),
                    "it holds a baseline per GPU, and only ncu's data tells which GPU ran",
                ),
            },
            Candidates::History { .. } => refuse(
                crate::config::BaselinePlace::History.display(),
                "a rolling baseline is made of the history's ncu runs of the data's GPU",
            ),
        }
    }

    /// The kernel key mode to read the data with.
    pub(super) fn kernel_key(&self) -> KernelKeyMode {
        match self {
            Candidates::File { baseline, .. } => baseline.kernel_key,
            Candidates::PerGpu { kernel_key, .. } | Candidates::History { kernel_key, .. } => {
                *kernel_key
            }
        }
    }

    /// Launches per run the progress line expects, when one baseline is known.
    pub(super) fn expected_launches(&self) -> Option<u64> {
        match self {
            Candidates::File { baseline, .. } => Some(baseline.total.launches.mean.round() as u64),
            Candidates::PerGpu { .. } | Candidates::History { .. } => None,
        }
    }

    /// The baseline for the data's GPU, vetted, and the runs read with its
    /// key mode (`read` reads them again when it differs from the first
    /// candidate's).
    pub(super) fn choose(
        self,
        config: &CheckConfig,
        thresholds: &Thresholds,
        runs: Vec<Run>,
        read: impl Fn(KernelKeyMode) -> Result<Vec<Run>>,
    ) -> Result<Chosen> {
        let chosen = |path, baseline, runs: Vec<Run>| {
            Ok(Chosen {
                path,
                baseline,
                fingerprint: crate::model::common_fingerprint(&runs)?,
                runs,
                note: None,
            })
        };
        let (dir, workload, record, files, kernel_key) = match self {
            Candidates::File { path, baseline } => return chosen(path, *baseline, runs),
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
            let gpus = layout::gpus(&files);
            let gpu = layout::slug(&fingerprint);
            return Err(missing_baseline(dir, workload, Some(&gpu), &gpus, record));
        }
        let baseline = Baseline::load(&path)?;
        usable(config, &baseline, &path, thresholds)?;
        let runs = if baseline.kernel_key == kernel_key {
            runs
        } else {
            read(baseline.kernel_key)?
        };
        chosen(path, baseline, runs)
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
    let mut store = history::open(&history.url, history::Access::Read, history.timeout)?;
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
        fingerprint,
        note: Some(rolling::note(&shown, &history.workload, &made.commits)),
    })
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

/// The one file of `place` for data of this GPU: the file itself, or
/// `<dir>/<workload>/<gpu>.json`.
pub(super) fn baseline_file(place: &BaselinePlace, fingerprint: &Fingerprint) -> PathBuf {
    match place {
        BaselinePlace::File(path) => path.clone(),
        BaselinePlace::Dir { dir, workload, .. } => layout::path(dir, workload, fingerprint),
        BaselinePlace::History => PathBuf::from(crate::config::history::BASELINE_WORD),
    }
}
