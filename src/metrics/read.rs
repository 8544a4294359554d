//! Stage 2, read: each file read once ([`crate::parse::ingest`]) into its
//! run (an `--input`), its rule results (a `--details`: a file that is both
//! is read once for both) and its kernels' code (a report); the rule
//! results become findings once the baseline's kernel key is known.

use crate::baseline::{self, Baseline, InputFile};
use crate::config::Source;
use crate::error::Result;
use crate::model::{Findings, KernelKeyMode, Run};
use crate::parse::{self, ingest};
use crate::rules::Thresholds;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// When the kernels' opcode histograms are read (one `ncu --import` of the
/// SASS page): always (`baseline record`), or only when some kernel's code
/// differs from this baseline's (`check`).
pub(super) enum Opcodes<'a> {
    Always,
    IfChangedFrom(&'a Baseline),
}

/// The kernels' code, from the first of the reports that embeds it (runs of
/// one build share it), with a note when the opcodes could not be read. A
/// report that is an input was read with its run (`inputs`, [`Read::code`]);
/// only the others (the reports of profiled runs, whose runs come from their
/// CSVs) are read here.
pub(super) fn code(
    reports: &[PathBuf],
    inputs: &[InputCode],
    key_mode: KernelKeyMode,
    opcodes: Opcodes,
    import: parse::NcuImport,
) -> (Option<crate::code::CodeMap>, Option<String>) {
    let Some((report, mut codes)) = reports
        .iter()
        .filter(|p| p.as_path() != Path::new("-"))
        .find_map(|p| report_code(p, inputs, key_mode).map(|c| (p, c)))
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

/// The kernels' code in the report `p`: from its launches when it is an
/// input (read with its run), else read from the file; `None` when it holds
/// no code.
fn report_code(
    p: &Path,
    inputs: &[InputCode],
    key_mode: KernelKeyMode,
) -> Option<crate::code::CodeMap> {
    match inputs.iter().find(|(input, _)| input == p) {
        Some((_, launches)) => launches
            .as_deref()
            .map(|l| crate::code::of_launches(l, key_mode)),
        None => crate::code::of_report(p, key_mode),
    }
}

/// Every fingerprint each kernel's code had in `reports` (the runs of one
/// recording): more than one when an autotuner built the kernel another way
/// in some run. Each report is read natively (milliseconds, no `ncu` call);
/// a report that holds no code adds nothing.
pub(super) fn fingerprints(
    reports: &[PathBuf],
    inputs: &[InputCode],
    key_mode: KernelKeyMode,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in reports.iter().filter(|p| p.as_path() != Path::new("-")) {
        for (kernel, c) in report_code(p, inputs, key_mode).into_iter().flatten() {
            seen.entry(kernel).or_default().insert(c.fingerprint);
        }
    }
    seen
}

/// The inputs, each read once: their runs, what the reports among them
/// hold of the kernels' code, and the `--details` files' rule results.
pub(super) struct Read {
    pub(super) runs: Vec<Run>,
    /// Each input with its kernel launches' code.
    pub(super) code: Vec<InputCode>,
    /// Each `--details` file with its rule results as read (`None`: a file
    /// named before, whose results serve again), for [`findings`].
    pub(super) details: Details,
}

/// An input and its kernel launches' code ([`ingest::Input::code`]).
pub(super) type InputCode = (PathBuf, Option<Vec<parse::ncu_rep::code::LaunchCode>>);

/// The `--details` files in order, each with its rule results as read.
pub(super) type Details = Vec<(PathBuf, Option<ingest::Details>)>;

/// Reads every input and `--details` file once, inputs first, in order; a
/// metric that a non-optional rule needs must be in each run (`check_metrics`
/// says when). A file named twice is read once: not standard input, which
/// a second read finds as the first left it. What the `--details` files
/// hold is the check's error only when it reads its [`findings`].
pub(super) fn read(
    inputs: &[PathBuf],
    details: &[PathBuf],
    metrics: &[String],
    key_mode: KernelKeyMode,
    thresholds: &Thresholds,
    import: parse::NcuImport,
    check_metrics: Metrics,
) -> Result<Read> {
    let again = |paths: &[PathBuf], path: &PathBuf| {
        path.as_path() != Path::new("-") && paths.contains(path)
    };
    let mut read = Read {
        runs: Vec::with_capacity(inputs.len()),
        code: Vec::with_capacity(inputs.len()),
        details: Vec::with_capacity(details.len()),
    };
    let mut of_inputs: Vec<(PathBuf, ingest::Details)> = Vec::new();
    for (i, path) in inputs.iter().enumerate() {
        if let Some(first) = inputs[..i]
            .iter()
            .position(|p| p.as_path() != Path::new("-") && p == path)
        {
            read.runs.push(read.runs[first].clone());
            read.code.push(read.code[first].clone());
            continue;
        }
        let also_details = again(details, path);
        let input = ingest::input(path, also_details, metrics, key_mode, import)?;
        if check_metrics == Metrics::Now {
            has_metrics(std::slice::from_ref(&input.run), thresholds)?;
        }
        if let Some(d) = input.details {
            of_inputs.push((path.clone(), d));
        }
        read.runs.push(input.run);
        read.code.push((path.clone(), input.code));
    }
    for (i, path) in details.iter().enumerate() {
        let read_now = match of_inputs.iter().position(|(p, _)| p == path) {
            Some(at) => Some(of_inputs.swap_remove(at).1),
            None if again(&details[..i], path) => None,
            None => Some(ingest::details(path, import)),
        };
        read.details.push((path.clone(), read_now));
    }
    Ok(read)
}

/// The runs of `inputs` alone, read again when the baseline picked groups
/// launches by another kernel key than the one they were read with.
pub(super) fn runs(
    inputs: &[PathBuf],
    metrics: &[String],
    key_mode: KernelKeyMode,
    import: parse::NcuImport,
) -> Result<Vec<Run>> {
    inputs
        .iter()
        .map(|path| ingest::input(path, false, metrics, key_mode, import).map(|i| i.run))
        .collect()
}

/// The `--details` files, then each `--input` report not among them (a
/// report holds its own rule results: they once needed `--details R.ncu-rep`
/// too), and how many were given. A profiled run's details come with it.
pub(super) fn with_input_reports(source: &Source, details: &[PathBuf]) -> (Vec<PathBuf>, usize) {
    let mut all = details.to_vec();
    if let Source::Inputs(inputs) = source {
        for input in inputs {
            if ingest::has_report_name(input) && !all.contains(input) {
                all.push(input.clone());
            }
        }
    }
    (all, details.len())
}

/// When [`read`] checks that every run has each non-optional rule's
/// metric: at once, or later by the caller (`check` first makes sure the data
/// is from the baseline's GPU: an A100 export lacks an H200 metric because it
/// is another GPU, which is the error to show).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Metrics {
    Now,
    Later,
}

/// Every run has each non-optional rule's metric, or the error naming the first missing one.
pub(super) fn has_metrics(runs: &[Run], thresholds: &Thresholds) -> Result<()> {
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

/// Findings of all `--details` files together, keyed by `key_mode`, with
/// the files' digests; the first error of a file, in order.
pub(super) fn findings(
    details: Details,
    key_mode: KernelKeyMode,
    import: parse::NcuImport,
) -> Result<Option<(Findings, Vec<InputFile>)>> {
    if details.is_empty() {
        return Ok(None);
    }
    let mut all = Findings::new();
    let mut files = Vec::new();
    let mut seen: Vec<(PathBuf, Findings, String)> = Vec::new();
    for (path, read) in details {
        let (findings, sha256) = match read {
            Some(read) => {
                let (findings, sha256) = read.findings(&path, key_mode, import)?;
                seen.push((path.clone(), findings.clone(), sha256.clone()));
                (findings, sha256)
            }
            None => match seen.iter().find(|(p, _, _)| *p == path) {
                Some((_, findings, sha256)) => (findings.clone(), sha256.clone()),
                None => ingest::details(&path, import).findings(&path, key_mode, import)?,
            },
        };
        for (kernel, rules) in findings {
            let entry = all.entry(kernel).or_default();
            for (name, finding) in rules {
                entry.entry(name).or_insert(finding);
            }
        }
        files.push(InputFile {
            path: path.display().to_string(),
            sha256,
        });
    }
    Ok(Some((all, files)))
}

/// Whether every `--input` is an nvbench JSON file (by its first bytes):
/// the built-in rules are then nvbench's ([`Thresholds::load_for`]).
pub(crate) fn all_nvbench(source: &Source) -> bool {
    match source {
        Source::Inputs(paths) => parse::nvbench::all_files(paths),
        Source::Profile { .. } => false,
    }
}
