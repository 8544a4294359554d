//! Stage 2, read: each export read once into a run, the details pages'
//! findings, and the kernels' code from the reports that embed it.

use crate::baseline::{self, Baseline, InputFile};
use crate::error::Result;
use crate::model::{Findings, KernelKeyMode, Run};
use crate::parse;
use crate::rules::Thresholds;
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

/// The inputs, each read once: their runs, and what the reports among them
/// hold of the kernels' code.
pub(super) struct Read {
    pub(super) runs: Vec<Run>,
    /// Each input with its kernel launches' code.
    pub(super) code: Vec<InputCode>,
}

/// An input and its kernel launches' code ([`parse::Input::code`]).
pub(super) type InputCode = (PathBuf, Option<Vec<parse::ncu_rep::code::LaunchCode>>);

/// Parses every input; a metric that a non-optional rule needs must be in each.
pub(super) fn runs(
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

/// When [`runs`] checks that every run has each non-optional rule's
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

/// Findings of all `--details` files together, with the files' digests.
pub(super) fn findings(
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
