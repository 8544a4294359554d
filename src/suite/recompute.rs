//! A report's rule rows recomputed from the files it names: the baseline
//! (its SHA-256 checked where a suite report recorded it) and the
//! thresholds. `validate` in `read.rs` holds each row to its own numbers;
//! here those numbers are held to the files: the baseline statistics a row
//! quotes must be the baseline file's for its kernel, metric and aggregate,
//! and its allowance and limit the ones its rule makes of them. What is left
//! to a forger is the current measurement itself, which only a signed
//! report (`NCUGATE_REPORT_KEY`) vouches for.
//!
//! The files are read where the report names them, relative to the working
//! directory: `merge` and `history record` run in the checkout the checks ran
//! in. Where a file is not there (a rolling baseline made from the history,
//! a merge on another machine), the rows are held to their own numbers only,
//! and the reader says so.

use crate::baseline::Baseline;
use crate::error::ReportError;
use crate::rules::{Per, Thresholds};
use crate::status::Status;
use crate::verdict::{Renamed, Report, RuleResult, StructureCheck, StructureResult, Subject};
use std::collections::BTreeMap;
use std::path::Path;

/// What recomputing a report's rows came to: done, or why it could not be.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Recomputed {
    /// Every judged rule row agrees with the files.
    Agrees,
    /// The rows could not be held to the files: why.
    NotHere(String),
}

/// Holds the rule rows of `report` (the workload `name`) to the baseline
/// and thresholds files it names; `digests` are the suite report's
/// `baseline_files` (by path under the baselines folder), if any.
pub(crate) fn against_files(
    name: &str,
    report: &Report,
    digests: Option<&BTreeMap<String, String>>,
) -> Result<Recomputed, ReportError> {
    if !matches!(report.subject, Subject::Metrics) || report.baseline.is_empty() {
        return Ok(Recomputed::Agrees);
    }
    let path = Path::new(&report.baseline);
    let Ok(bytes) = crate::io::bounded::read_io(path) else {
        return Ok(Recomputed::NotHere(format!(
            "baseline {} is not here",
            report.baseline
        )));
    };
    let recorded = digests.and_then(|d| {
        d.iter()
            .find(|(file, _)| {
                report.baseline.ends_with(&format!("/{file}")) || report.baseline == **file
            })
            .map(|(_, sha)| sha.clone())
    });
    let differs = |what: String| ReportError::Recomputed {
        workload: name.to_string(),
        differs: crate::text::escape::printable(what),
    };
    if let Some(recorded) = recorded {
        let found = crate::parse::sha256_bytes(&bytes);
        if found != recorded {
            return Err(differs(format!(
                "baseline {} has SHA-256 {} here, the report was made with {}",
                report.baseline,
                &found[..12],
                recorded.get(..12).unwrap_or(&recorded)
            )));
        }
    }
    let baseline =
        Baseline::load(path).map_err(|e| differs(format!("baseline {}: {e}", report.baseline)))?;
    // A row that says a kernel varies between runs passes ungated: the
    // baseline file must say so, or it is a new kernel's failure hidden.
    for row in report
        .structure
        .iter()
        .filter(|s| s.check == StructureCheck::Varies)
    {
        if let Some(what) = varies_disagreement(row, &report.renamed, &baseline) {
            return Err(differs(format!(
                "{} · {}: {what}",
                row.kernel,
                row.check.as_str()
            )));
        }
    }
    // A launch count not gated because an autotuner moved launches between
    // its picks: the baseline file must have launched it as the row says.
    for row in report
        .structure
        .iter()
        .filter(|s| s.check == StructureCheck::PicksMoved)
    {
        let recorded = baseline
            .kernels
            .get(baseline_key(&report.renamed, &row.kernel))
            .map(|e| [e.launches.min, e.launches.max]);
        if recorded.is_none() || recorded != row.baseline_range {
            return Err(differs(format!(
                "{} · {}: the baseline file launched it otherwise",
                row.kernel,
                row.check.as_str()
            )));
        }
    }
    // A row not gated because its kernel's recorded runs had several
    // builds: the baseline file must have them, as many as it says.
    for row in &report.rules {
        if let Some(what) = code_varies_disagreement(row, &report.renamed, &baseline) {
            return Err(differs(format!("{}: {what}", row.named())));
        }
    }
    let thresholds = match thresholds(&report.thresholds) {
        Some(t) => t.map_err(|e| differs(format!("thresholds {}: {e}", report.thresholds)))?,
        None => {
            return Ok(Recomputed::NotHere(format!(
                "thresholds {} are not here",
                report.thresholds
            )));
        }
    };
    for row in report.rules.iter().filter(|r| judged(r)) {
        if let Some(what) = disagreement(row, &report.renamed, &baseline, &thresholds) {
            return Err(differs(format!("{}: {what}", row.named())));
        }
    }
    Ok(Recomputed::Agrees)
}

/// The thresholds a report names: ncugate's own, or a file that is here.
fn thresholds(named: &str) -> Option<crate::error::Result<Thresholds>> {
    if named == crate::rules::DEFAULT_SOURCE {
        return Some(Thresholds::builtin());
    }
    let path = Path::new(named);
    path.is_file().then(|| Thresholds::load(Some(path)))
}

/// The baseline key of the current kernel `kernel`: its own, unless the
/// report compared a renamed baseline kernel under it.
fn baseline_key<'k>(renamed: &'k [Renamed], kernel: &'k str) -> &'k str {
    renamed
        .iter()
        .find(|r| r.current == kernel)
        .map_or(kernel, |r| r.baseline.as_str())
}

/// How a `varies between runs` row differs from the baseline's record of
/// its kernel, if it does: a kernel the baseline gates (or never saw) does
/// not vary, and the runs and launches it quotes are the baseline's.
fn varies_disagreement(
    row: &StructureResult,
    renamed: &[Renamed],
    baseline: &Baseline,
) -> Option<String> {
    let Some(kernel) = baseline.variable.get(baseline_key(renamed, &row.kernel)) else {
        return Some("the baseline does not list it as varying between runs".into());
    };
    let [lo, hi] = kernel.launches;
    let quoted = (row.recorded_in, row.baseline_range);
    if quoted
        != (
            Some([kernel.runs, baseline.runs]),
            Some([lo as f64, hi as f64]),
        )
    {
        return Some(format!(
            "the baseline has it in {} of {} runs with {lo}–{hi} launches, the report says otherwise",
            kernel.runs, baseline.runs
        ));
    }
    None
}

/// How a row not gated because its kernel's recorded runs built it several
/// ways differs from the baseline file, if it does. A row the report's own
/// code comparison explains (an autotuner's new build) is `read.rs`'s.
fn code_varies_disagreement(
    row: &RuleResult,
    renamed: &[Renamed],
    baseline: &Baseline,
) -> Option<String> {
    let d = row
        .downgrade
        .as_ref()
        .filter(|d| d.reason == crate::verdict::Reason::CodeVaries)?;
    let evidence = d.evidence.as_deref()?;
    let kernel = row.kernel.as_deref()?;
    // An autotuner's new build, or launches it moved between its picks:
    // the report's own rows show those (`read.rs`), not the baseline file.
    if crate::compare::code::is_autotuned(kernel, evidence)
        || crate::compare::structure::is_moved_picks(evidence)
    {
        return None;
    }
    let recorded = baseline
        .kernels
        .get(baseline_key(renamed, kernel))
        .and_then(|e| e.code.as_deref())
        .and_then(|c| crate::compare::code::recorded_builds(c, baseline.runs));
    match recorded {
        Some(r) if r == **evidence => None,
        Some(r) => Some(format!("it says `{evidence}`, the baseline file `{r}`")),
        None => Some("it says its code varies, but the baseline file recorded one build".into()),
    }
}

/// A row whose rule measured something: one with baseline statistics.
fn judged(row: &RuleResult) -> bool {
    row.baseline.is_some() && !matches!(row.status, Status::Error | Status::Skipped)
}

/// How `row` differs from what its rule makes of the baseline, if it does.
fn disagreement(
    row: &RuleResult,
    renamed: &[Renamed],
    baseline: &Baseline,
    thresholds: &Thresholds,
) -> Option<String> {
    let Some(rule) = thresholds
        .rules
        .iter()
        .find(|r| r.line == row.line && *r.metric == *row.metric)
    else {
        return Some(format!(
            "the thresholds have no rule on `{}` at line {}",
            row.metric, row.line
        ));
    };
    if rule.per != row.per || rule.aggregate != row.aggregate || rule.worse != row.worse {
        return Some("its rule's per, aggregate or direction is not the thresholds'".into());
    }
    let entry = match (&row.kernel, rule.per) {
        (Some(kernel), Per::Kernel) => match baseline.kernels.get(baseline_key(renamed, kernel)) {
            Some(entry) => entry,
            None => return Some("the baseline has no such kernel".into()),
        },
        (None, Per::Total) => &baseline.total,
        _ => return Some("its kernel does not fit its rule's `per`".into()),
    };
    let Some(metric) = entry.metrics.get(&row.metric) else {
        return Some("the baseline has no such metric for its kernel".into());
    };
    let stats = metric.stats(rule.aggregate);
    let quoted = row.baseline.as_ref()?;
    let same = |a: f64, b: f64| a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs());
    if quoted.n != stats.n
        || !same(quoted.mean, stats.mean)
        || !same(quoted.stddev, stats.stddev)
        || !same(quoted.min, stats.min)
        || !same(quoted.max, stats.max)
    {
        return Some(format!(
            "baseline mean {} in the report, {} in the baseline file",
            quoted.mean, stats.mean
        ));
    }
    let allowance = crate::compare::allowance(rule, stats);
    let allowance_same = match (row.allowance, allowance) {
        (Some(a), Some(b)) => same(a, b),
        (None, None) => true,
        _ => false,
    };
    // Measured from the recorded runs' worst only where the rule counts the
    // kernel's own work: a time or a throughput that passes only that way
    // was edited to pass.
    if rule.environment != crate::rules::Environment::Deterministic
        && row.downgrade.is_none()
        && matches!(
            row.status,
            Status::Pass | Status::Improved | Status::Changed
        )
        && row
            .current
            .is_some_and(|x| allowance.is_some_and(|a| rule.worse.worse_by(x, stats.mean) > a))
    {
        return Some(format!(
            "it says {} but is worse than the baseline mean by more than its allowance, and its rule on `{}` is not measured from the recorded runs' worst",
            row.status.as_str(),
            row.metric
        ));
    }
    if !allowance_same || row.limit != rule.limit {
        let show = |v: Option<f64>| v.map_or("none".to_string(), |v| v.to_string());
        return Some(format!(
            "allowance {} and limit {} in the report, the rule makes {} and {}",
            show(row.allowance),
            show(row.limit),
            show(allowance),
            show(rule.limit)
        ));
    }
    None
}
