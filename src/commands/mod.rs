//! The pipeline of each subcommand, in order: config → build → profile (ncu)
//! → parse → aggregate → compare → report → exit code. Every command is a
//! function of its config and a [`ProcessRunner`] that returns a value (a
//! report, a suite run, a [`Text`]) or a [`Failed`]; [`execute`]
//! (`execute.rs`) shows that value and takes the exit code from it, in one
//! place. `check.rs` and `record.rs` hold the metric gate's two commands,
//! `sanitize.rs` and `leaks.rs` the sanitizer and leak gates, `suites.rs` the same commands
//! over a suite's workloads and `merge`; this file what they share (getting
//! the data, parsing it, the notes about it, the baseline file for a GPU),
//! `profile` and `baseline diff`.

mod check;
mod execute;
mod history;
mod leaks;
mod record;
mod sanitize;
mod suites;

pub use check::check;
pub use execute::{Failed, Gated, Text, capture_stdout, execute, print_error};
pub use history::history;
pub use leaks::leaks;
pub use record::record;
pub use sanitize::sanitize;
pub use suites::{SuiteRun, merge, suite};

use crate::baseline::{self, Baseline, InputFile, ProfileSettings};
use crate::compare::{self, Inputs};
use crate::config::{BaselinePlace, CheckConfig, RecordConfig, SanitizeConfig, Source};
use crate::error::{Error, Result};
use crate::model::{Findings, Fingerprint, KernelKeyMode, Run};
use crate::parse;
use crate::report::{self, terminal};
use crate::rules::Thresholds;
use crate::runner::process::ProcessRunner;
use crate::runner::progress::Progress;
use crate::runner::{self, RunnerConfig};
use crate::sanitizer::run::SanitizerConfig;
use crate::shared_gpu::GpuEnvironment;
use crate::status::Outcome;
use crate::suite;
use crate::verdict::{Report, Subject};
use std::path::{Path, PathBuf};

/// The exports a check or a recording works on, and how they were made.
struct Acquired {
    inputs: Vec<PathBuf>,
    details: Vec<PathBuf>,
    profile: Option<ProfileSettings>,
    /// Wall seconds of each profiled run (empty for `--input` files).
    seconds: Vec<f64>,
    /// The `.ncu-rep` reports of the runs, whose cubins hold the kernels'
    /// code (the `--input` files: those that are not reports have none).
    reports: Vec<PathBuf>,
    /// What the GPU probe saw during the profiled runs (empty for `--input` files).
    gpu: Vec<crate::shared_gpu::Sample>,
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
            reports: inputs.clone(),
            gpu: Vec::new(),
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
                reports: Vec::new(),
                gpu: Vec::new(),
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
                acquired.reports.push(artifacts.report);
                acquired.gpu.extend(artifacts.gpu);
            }
            Ok(acquired)
        }
    }
}

use crate::format::shell_words;

/// The source pages given, read as source profiles; a page that does not
/// read is a note (the profiles only add words to a report).
fn read_source_pages(
    pages: &[PathBuf],
    key_mode: KernelKeyMode,
) -> (Vec<crate::explain::SourceProfile>, Vec<String>) {
    let mut profiles = Vec::new();
    let mut notes = Vec::new();
    for path in pages {
        let read = std::fs::read(path)
            .map_err(|e| e.to_string())
            .and_then(|data| crate::explain::page::read_source_page(&data, key_mode));
        match read {
            Ok(p) if p.kernel.is_empty() => notes.push(format!(
                "{}: no line information and no instructions (build with -lineinfo to see source lines)",
                path.display()
            )),
            Ok(p) => profiles.push(p),
            Err(e) => notes.push(format!("{}: not read: {e}", path.display())),
        }
    }
    (profiles, notes)
}

/// One explain run per kernel, the worst first, until `budget` seconds are
/// spent; the cost is a note.
/// Profiles each kernel's source counters once: the launch `pick` chooses
/// (`None`: its first, as `baseline record` does).
fn profile_sources(
    kernels: &[String],
    pick: &dyn Fn(&str) -> Option<crate::compare::explain::Pick>,
    baseline: &Baseline,
    runner: &RunnerConfig,
    budget: f64,
    processes: &dyn ProcessRunner,
) -> (Vec<crate::explain::SourceProfile>, Vec<String>) {
    let start = std::time::Instant::now();
    let mut profiles = Vec::new();
    let mut notes = Vec::new();
    let mut runs = 0;
    for (i, kernel) in kernels.iter().enumerate() {
        if start.elapsed().as_secs_f64() >= budget {
            notes.push(format!(
                "explain: the time budget ({budget:.0} s, --explain-budget) was spent: {} not explained",
                crate::format::count(kernels.len() - i, "kernel", "kernels")
            ));
            break;
        }
        let function = crate::kernel_key::kernel_key(kernel, KernelKeyMode::Function);
        runs += 1;
        let chosen = pick(kernel);
        let launch = chosen.map_or(runner::explain::Launch::FIRST, |p| {
            runner::explain::Launch {
                ordinal: p.ordinal,
                position: p.position,
            }
        });
        let page = runner::explain::source_page(
            runner,
            &function,
            launch,
            &format!("explain-{}", i + 1),
            processes,
        )
        .and_then(|data| crate::explain::page::read_source_page(&data, baseline.kernel_key));
        match page {
            Ok(mut p) => {
                // The page names the kernel as ncu does; it was asked for this one.
                p.kernel.clone_from(kernel);
                p.launch = chosen.map(|c| crate::explain::ProfiledLaunch {
                    index: c.index,
                    of: c.of,
                    skip: runner::explain::selection(runner, &function, launch).1,
                });
                profiles.push(p);
            }
            Err(e) => notes.push(format!("explain: {kernel}: {e}")),
        }
    }
    notes.push(format!(
        "explained {} in {:.1} s, {}",
        crate::format::count(profiles.len(), "kernel", "kernels"),
        start.elapsed().as_secs_f64(),
        crate::format::count(runs, "extra ncu run", "extra ncu runs")
    ));
    (profiles, notes)
}

/// When the kernels' opcode histograms are read (one `ncu --import` of the
/// SASS page): always (`baseline record`), or only when some kernel's code
/// differs from this baseline's (`check`).
enum Opcodes<'a> {
    Always,
    IfChangedFrom(&'a Baseline),
}

/// The kernels' code, from the first of the reports that embeds it (runs of
/// one build share it), with a note when the opcodes could not be read. A
/// report that is an input was read with its run (`inputs`, [`Read::code`]);
/// only the others (the reports of profiled runs, whose runs come from their
/// CSVs) are read here.
fn read_code(
    reports: &[PathBuf],
    inputs: &[InputCode],
    key_mode: KernelKeyMode,
    opcodes: Opcodes,
    import: parse::NcuImport,
) -> (Option<crate::code::CodeMap>, Option<String>) {
    let Some((report, mut codes)) = reports
        .iter()
        .filter(|p| p.as_path() != Path::new("-"))
        .find_map(|p| {
            let code = match inputs.iter().find(|(input, _)| input == p) {
                Some((_, launches)) => launches
                    .as_deref()
                    .map(|l| crate::code::of_launches(l, key_mode)),
                None => crate::code::of_report(p, key_mode),
            };
            code.map(|c| (p, c))
        })
    else {
        return (None, None);
    };
    let wanted = match opcodes {
        Opcodes::Always => true,
        // A kernel new to the baseline may be one renamed: its opcodes are
        // wanted too.
        Opcodes::IfChangedFrom(baseline) => {
            baseline.kernels.values().any(|e| e.code.is_some())
                && codes.iter().any(|(k, c)| {
                    baseline
                        .kernels
                        .get(k)
                        .and_then(|e| e.code.as_ref())
                        .is_none_or(|b| b.fingerprint != c.fingerprint)
                })
        }
    };
    let note = if wanted && !codes.is_empty() {
        crate::code::add_opcodes(&mut codes, report, key_mode, import.ncu, import.runner)
            .err()
            .map(|e| format!("the kernels' opcodes were not read ({e}); code fingerprints are compared without them"))
    } else {
        None
    };
    (Some(codes), note)
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

/// What a reader should know about the data, made once for `check` and
/// `baseline record` alike: the runs whose metrics came from the details
/// page, and what ncu's extra passes cost (fast mode only).
struct DataNotes {
    details_page: Vec<String>,
    cost: Option<String>,
}

impl DataNotes {
    fn of(source: &Source, metrics: &[String], runs: &[Run], seconds: &[f64]) -> DataNotes {
        let details_page = runs
            .iter()
            .filter(|r| r.page != crate::model::ExportPage::Raw)
            .map(|r| {
                format!(
                    "{}: metrics read from the {} (by metric ID or details label)",
                    r.source.display(),
                    r.page
                )
            })
            .collect();
        let cost = match source {
            Source::Profile { runner, .. } => cost_note(runner, metrics, runs, seconds),
            Source::Inputs(_) => None,
        };
        DataNotes { details_page, cost }
    }
}

/// The one file of `place` for data of this GPU: the file itself, or
/// `<dir>/<workload>/<gpu>.json`.
fn baseline_file(place: &BaselinePlace, fingerprint: &Fingerprint) -> PathBuf {
    match place {
        BaselinePlace::File(path) => path.clone(),
        BaselinePlace::Dir { dir, workload, .. } => {
            suite::baselines::path(dir, workload, fingerprint)
        }
        BaselinePlace::History => PathBuf::from(crate::config::history::BASELINE_WORD),
    }
}

/// `metrics` and the clock metrics every profiled run collects too (the SM
/// clock and elapsed cycles of each kernel, in the same replay pass), read
/// from exports where they have them. Not when ncu profiles whole graphs:
/// that mode refuses some metrics, and a graph has no one kernel's clock.
fn with_clock_metrics(mut metrics: Vec<String>, source: &Source) -> Vec<String> {
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

/// The inputs, each read once: their runs, and what the reports among them
/// hold of the kernels' code.
struct Read {
    runs: Vec<Run>,
    /// Each input with its kernel launches' code.
    code: Vec<InputCode>,
}

/// An input and its kernel launches' code ([`parse::Input::code`]).
type InputCode = (PathBuf, Option<Vec<parse::ncu_rep::code::LaunchCode>>);

/// Parses every input; a metric that a non-optional rule needs must be in each.
fn read_runs(
    inputs: &[PathBuf],
    metrics: &[String],
    key_mode: KernelKeyMode,
    thresholds: &Thresholds,
    import: parse::NcuImport,
    check_metrics: Metrics,
) -> Result<Read> {
    let mut read = Read {
        runs: Vec::with_capacity(inputs.len()),
        code: Vec::with_capacity(inputs.len()),
    };
    for path in inputs {
        let input = parse::read_input(path, metrics, key_mode, import)?;
        if check_metrics == Metrics::Now {
            has_metrics(std::slice::from_ref(&input.run), thresholds)?;
        }
        read.runs.push(input.run);
        read.code.push((path.clone(), input.code));
    }
    Ok(read)
}

/// When [`read_runs`] checks that every run has each non-optional rule's
/// metric: at once, or later by the caller (`check` first makes sure the data
/// is from the baseline's GPU: an A100 export lacks an H200 metric because it
/// is another GPU, which is the error to show).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Metrics {
    Now,
    Later,
}

/// Every run has each non-optional rule's metric, or the error naming the first missing one.
fn has_metrics(runs: &[Run], thresholds: &Thresholds) -> Result<()> {
    for run in runs {
        for rule in thresholds.rules.iter().filter(|r| !r.optional) {
            if run
                .metric_index(&rule.metric)
                .is_some_and(|m| run.metrics[m].unit.is_none())
            {
                return Err(baseline::record::missing_metric(run, &rule.metric));
            }
        }
    }
    Ok(())
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

/// `ncugate profile`: build, profile once, say where everything is.
pub fn profile(config: &RunnerConfig, processes: &dyn ProcessRunner) -> Result<Text> {
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

/// `ncugate baseline diff OLD NEW`: a regression when they differ (exit 1, like `diff`).
pub fn diff(old: &Path, new: &Path, file_diff: bool) -> Result<Text> {
    let read = |p: &Path| {
        std::fs::read_to_string(p)
            .map_err(|source| Error::read(crate::error::FileKind::Baseline, p, source))
    };
    let (a, b) = (Baseline::load(old)?, Baseline::load(new)?);
    let (ta, tb) = (read(old)?, read(new)?);
    // The rules the new baseline was recorded for, when that file is at hand;
    // else the built-in ones.
    let thresholds = match Path::new(&b.thresholds) {
        p if p.is_file() => Thresholds::load(Some(p)).ok(),
        _ => Thresholds::builtin().ok(),
    };
    Ok(Text {
        outcome: if ta == tb {
            Outcome::Pass
        } else {
            Outcome::Regression
        },
        ..Text::pass(baseline::diff::render(
            &a,
            &b,
            &ta,
            &tb,
            thresholds.as_ref(),
            file_diff,
        ))
    })
}

/// The end of `sanitize` and `leaks`: the finished report, or the error
/// with an error report about the same subject.
fn conclude(result: Result<Report>, inputs: Vec<String>, subject: Subject) -> Gated<Report> {
    match result {
        Ok(mut report) => {
            report.finish();
            Ok(report)
        }
        Err(error) => {
            let mut report = Report::about(subject, inputs);
            report.errors.push(error.report_line());
            report.finish();
            Err(Failed::with_report(error, report))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiled_runs_collect_the_clock_metrics_but_whole_graph_profiles_do_not() {
        let runner = |graph_profiling| Source::Profile {
            runner: Box::new(RunnerConfig {
                build: None,
                app: vec!["app".into()],
                env: vec![],
                workdir: ".".into(),
                timeout: std::time::Duration::from_secs(1),
                mode: runner::Mode::Fast,
                graph_profiling,
                clock_control: crate::options::profile::DEFAULT_CLOCK_CONTROL,
                cache_control: crate::options::profile::DEFAULT_CACHE_CONTROL,
                replay_mode: crate::options::profile::DEFAULT_REPLAY_MODE,
                kernel_name: None,
                launch_skip: None,
                launch_count: None,
                extra_metrics: vec![],
                ncu: "ncu".into(),
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
