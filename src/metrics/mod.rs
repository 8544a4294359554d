//! The metric gate: one workload's ncu data against its baseline under the
//! threshold rules, into a [`Report`]. [`check`] reads top to bottom, a stage
//! a step:
//!
//! 1. **acquire** (`acquire.rs`): the `--input` exports as given, or the app
//!    built and profiled under ncu `--runs` times;
//! 2. **read** (`read.rs`): each export read once into a run (values born in
//!    base units), the details pages' findings, the kernels' code; then the
//!    instrument is checked (`instrument.rs`): a counter that cannot read 0
//!    for a kernel that ran, or a baseline kernel a capture limit kept out of
//!    the profiled window, is an error before any verdict;
//! 3. **pick the baseline** (`pick.rs`): one file, the file of this data's GPU
//!    in a suite's folder, or a rolling baseline made from the history;
//! 4. **judge** ([`crate::compare`]): fingerprint, structure, rules, findings,
//!    shared GPU and environmental downgrades, in that order;
//! 5. **the stages that add words, never verdicts**: source lines
//!    (`explain/`), the sanitizer when `[sanitizer]` asks for it, the
//!    notes about the data (`notes.rs`), then `history.rs` (creep from an
//!    anchor; the run recorded).
//!
//! The report goes back to `crate::commands::execute`, which renders it in
//! every format asked for and takes the exit code from it. `baseline record`
//! ([`record()`]) shares steps 1 and 2 and ends in a baseline file instead;
//! `profile` ([`profile`]) is step 1 alone; [`suite`] runs them for each
//! workload of a suite's shard.

mod acquire;
mod explain;
mod history;
mod instrument;
mod notes;
mod pick;
mod read;
mod record;
pub(crate) mod suite;

pub use acquire::profile;
pub use record::record;

use crate::compare::{self, Inputs};
use crate::config::{BaselinePlace, CheckConfig, Source};
use crate::error::{Error, Result};
use crate::gated::{Failed, Gated};
use crate::parse;
use crate::rules::Thresholds;
use crate::runner::process::ProcessRunner;
use crate::shared_gpu::GpuEnvironment;
use crate::status::Status;
use crate::verdict::Report;
use std::path::PathBuf;

/// `ncugate check`: the report, or the error with its error report (which
/// is written wherever the reports go, like any other). A suite checks each
/// workload with this same function.
pub fn check(config: &CheckConfig, processes: &dyn ProcessRunner) -> Gated<Report> {
    let mut known = Known::given(config);
    steps(config, processes, &mut known).map_err(|error| known.fail(error))
}

/// The thresholds file a check reads, as its report names it.
pub(crate) fn thresholds_name(config: &CheckConfig) -> String {
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

/// The check, stage by stage (see the module's header).
fn steps(config: &CheckConfig, processes: &dyn ProcessRunner, known: &mut Known) -> Result<Report> {
    let import = parse::NcuImport {
        ncu: &config.ncu,
        runner: processes,
        native: !config.import_with_ncu,
    };
    let thresholds =
        Thresholds::load_for(config.thresholds.file(), read::all_nvbench(&config.source))?;
    let metrics = acquire::with_clock_metrics(thresholds.metrics(), &config.source);
    let candidates = pick::Candidates::of(config, &thresholds)?;
    // An `--input` report holds its own rule results: read with it, used
    // when the baseline has findings to compare them with.
    let (details, given) = read::with_input_reports(&config.source, &config.details);

    // 1. acquire (the counters locked under locked_counters = "trace": trace mode instead)
    let c = &candidates;
    let mut acquired =
        match acquire::or_trace(config, &details, &metrics, c, &thresholds, processes)? {
            acquire::Got::Profiled(acquired) => *acquired,
            acquire::Got::Traced(report) => return Ok(*report),
        };
    known.inputs.clone_from(&acquired.inputs);
    known.details = acquired.details[..given.min(acquired.details.len())].to_vec();

    // 2. read, each file once (the runs again only when the baseline picked
    // groups launches otherwise)
    let read::Read {
        runs,
        code,
        mut details,
    } = read::read(
        &acquired.inputs,
        &acquired.details,
        &metrics,
        candidates.kernel_key(),
        &thresholds,
        import,
        read::Metrics::Later,
    )?;
    let again = |key| read::runs(&acquired.inputs, &metrics, key, import);
    instrument::counters(&runs)?;

    // 3. pick the baseline
    let chosen = candidates.choose(config, &thresholds, runs, again)?;
    let (baseline_path, baseline, runs) = (chosen.path, chosen.baseline, chosen.runs);
    // Another GPU before a missing metric: that GPU's export lacks it because it is another GPU.
    let current = chosen.fingerprint;
    let same = compare::same_device(&baseline, &current, config.allow_device_mismatch)?;
    read::has_metrics(&runs, &thresholds)?;
    if baseline.details.is_empty() && given < details.len() {
        details.truncate(given);
        acquired.details.truncate(given);
    }
    let window = instrument::window(&config.source, &runs, &baseline)?;
    let findings = read::findings(details, baseline.kernel_key, import)?;
    let changed = read::Opcodes::IfChangedFrom(&baseline);
    let (code, code_note) = read::code(
        &acquired.reports,
        &code,
        baseline.kernel_key,
        changed,
        import,
    );

    // 4. judge
    let data = notes::DataNotes::of(&config.source, &metrics, &runs, &acquired.seconds);
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
        device: compare::Device {
            current: &current,
            same,
        },
        notes: data.details_page,
        code: code.as_ref(),
        environmental: config.environmental,
        autotuned_builds: config.autotuned_builds,
    };
    let mut report = compare::compare(&inputs)?;

    // 5. the stages that add words
    report.note_each(code_note);
    report.note_each(window);
    explain::stage(&mut report, &baseline, &runs, config, processes);
    for (p, s) in report.profiling.iter_mut().zip(&acquired.seconds) {
        p.seconds = Some(*s);
    }
    report.libraries = std::mem::take(&mut acquired.libraries);
    report.notes.append(&mut acquired.retried);
    report.note_each(chosen.note);
    report.note_each(data.cost);
    if let Some(sanitizer) = &config.sanitizer {
        let ran = crate::sanitizer::run::run_all(sanitizer, processes)?;
        report.note_each(ran.notes);
        report.sanitizer.extend(ran.findings);
    }
    // A rolling baseline keeps no ncu settings: its runs were checks like this one.
    if !matches!(config.baseline, BaselinePlace::History) {
        let settings = notes::settings(baseline.profile.as_ref(), acquired.profile.as_ref());
        report.note_each(settings);
        if let (Some(b), Some(c)) = (&baseline.profile, &acquired.profile) {
            blame_environment(&mut report, &c.changes_from(b));
        }
    }
    if let Some(h) = &config.history {
        history::after_check(h, &mut report, &inputs, processes)?;
    }
    Ok(report)
}

/// A check whose kernel-picking environment or profiled range differs from
/// the baseline's: a warning first among the notes (the headline counts it)
/// and the change beside each failure, in every format.
fn blame_environment(report: &mut crate::verdict::Report, changes: &[String]) {
    if changes.is_empty() {
        return;
    }
    let said = changes.join("; ");
    let note = crate::note::Note::warning(format!("{}{said}", crate::verdict::ENVIRONMENT_CHANGED));
    report.notes.insert(0, note);
    let beside = format!(" (environment changed: {said})");
    for row in report.rules.iter_mut().filter(|r| r.status == Status::Fail) {
        row.message.push_str(&beside);
    }
    for row in report
        .structure
        .iter_mut()
        .filter(|r| r.status == Status::Fail)
    {
        row.message.push_str(&beside);
    }
}
