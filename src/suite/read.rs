//! The one reader of the JSON reports ncugate wrote, shared by the commands
//! that read them back: `merge` (suite reports, [`suite`]) and `history
//! record` (a check's report or a suite's, [`read`]). A report decides
//! what CI does and what the history keeps as baseline material, and the
//! file may have been edited, so it is read as hostile input and believed
//! only as far as its own numbers go:
//!
//! - the signature, with `NCUGATE_REPORT_KEY` set ([`crate::report::sign`]);
//! - the text: no duplicate key (serde keeps the last: `"status": "fail",
//!   "status": "pass"` would pass) and no unprintable character; a schema
//!   version this ncugate reads; the model's shape;
//! - a suite's names (each names a folder of the HTML report) and its
//!   workloads, each a metric gate's report;
//! - every check report — a single check's, or a suite's workload, the very
//!   same steps (`validate`): each rule row against its own numbers
//!   ([`RuleResult::status_fits_numbers`]: a failing row edited to `pass`
//!   kept its current value, baseline mean and allowance) and each launch
//!   count against its own ([`StructureResult::status_fits_numbers`]); each
//!   downgrade against its evidence in the report (a shared-GPU downgrade
//!   needs the report's shared-GPU evidence, an environmental one its
//!   kernel's unchanged code); the written outcome and exit code against the
//!   ones its checks make ([`Report::outcome`]); a metric gate's report that
//!   gated nothing; then each rule row's baseline statistics, allowance and
//!   limit against the baseline and thresholds files the report names,
//!   where they are (`recompute.rs`);
//! - a suite's written outcome against its workloads'.
//!
//! Any of these is the report's error (exit 2, the file, what is wrong, and
//! a hint); nothing of a refused file is used.

use super::recompute::Recomputed;
use super::report::{KIND, OLDEST_SUITE_SCHEMA_VERSION, SUITE_SCHEMA_VERSION, SuiteReport};
use crate::error::{Error, FileKind, ReportError, Result};
use crate::report::sign::ReportKey;
use crate::status::Status;
use crate::verdict::{self, Downgrade, Reason, Report, RuleResult, Said, StructureResult, Subject};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// What a report file holds, every report in it validated (boxed: a
/// report is a few hundred bytes, and the two differ).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Read {
    /// A single check's report.
    Check(Box<Report>),
    /// A suite's report: its workloads' reports in it.
    Suite(Box<SuiteReport>),
}

/// Reads the report at `path`: a single check's, validated as the workload
/// `name` (the name it is recorded under), or a suite's.
pub(crate) fn read(path: &Path, name: &str, key: Option<&ReportKey>) -> Result<Read> {
    let value = parse(path, key)?;
    if value.get("kind").is_none() {
        check(value, name).map(|r| Read::Check(Box::new(r)))
    } else {
        suite_of(value)
    }
    .map_err(|error| bad(path, error))
}

/// The check's report at `path` (under `fixtures/`), validated as the
/// workload `name`: a recording the tests replay.
#[cfg(test)]
pub(crate) fn recorded_check(path: &Path, name: &str) -> Report {
    match read(path, name, None) {
        Ok(Read::Check(report)) => *report,
        other => panic!("{}: {other:?}", path.display()),
    }
}

/// Reads the suite report at `path` (a single check's report is refused:
/// `merge` joins suites).
pub(crate) fn suite(path: &Path, key: Option<&ReportKey>) -> Result<SuiteReport> {
    let value = parse(path, key)?;
    match suite_of(value) {
        Ok(Read::Suite(report)) => Ok(*report),
        Ok(Read::Check(_)) => Err(bad(path, ReportError::NotSuite)),
        Err(error) => Err(bad(path, error)),
    }
}

fn bad(path: &Path, error: ReportError) -> Error {
    Error::Report {
        path: path.to_path_buf(),
        error,
    }
}

/// The file's JSON, once its signature is good (with `key`, it must have
/// one: see [`crate::report::sign`]) and it is known to hold one value for
/// each key and only printable text.
fn parse(path: &Path, key: Option<&ReportKey>) -> Result<serde_json::Value> {
    let text = crate::io::bounded::read_to_string(FileKind::ShardReport, path)?;
    let text = crate::report::sign::verified(&text, key).map_err(|e| bad(path, e))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        bad(
            path,
            ReportError::NotJson {
                reason: e.to_string(),
            },
        )
    })?;
    crate::baseline::keys::no_duplicate_keys_or_unprintable(&text).map_err(|e| {
        bad(
            path,
            ReportError::DuplicateKey {
                reason: e.to_string(),
            },
        )
    })?;
    Ok(value)
}

type Checked<T> = std::result::Result<T, ReportError>;

fn invalid(e: serde_json::Error) -> ReportError {
    ReportError::Invalid {
        reason: e.to_string(),
    }
}

/// A single check's report, validated as the workload `name`, its rows
/// recomputed from its measurements.
fn check(value: serde_json::Value, name: &str) -> Checked<Report> {
    let report = validated(value, name)?;
    recomputed(name, &report, None)?;
    Ok(report)
}

/// A check's report kept in the verdict cache (`crate::skip`), validated as
/// the workload `name` as a shard's is: its version, its shape, and its
/// written outcome against the one its checks make. Its rows are not
/// recomputed against the baseline and thresholds files: the digest that
/// must match before it is carried covers those files.
pub(crate) fn cached(value: serde_json::Value, name: &str) -> std::result::Result<Report, String> {
    validated(value, name).map_err(|e| e.to_string())
}

/// A check's report read as the workload `name`: its version before its
/// shape (a newer report may not read as this one), then its written
/// outcome against the one its checks make ([`validate`]).
fn validated(value: serde_json::Value, name: &str) -> Checked<Report> {
    let version = value.get("schema_version").and_then(|v| v.as_u64());
    if !version.is_some_and(verdict::reads_report_version) {
        return Err(ReportError::CheckSchemaVersion {
            found: version,
            reads: verdict::REPORT_SCHEMA_VERSION,
        });
    }
    let invalid = |e: serde_json::Error| ReportError::InvalidCheck {
        reason: e.to_string(),
    };
    let said = Said::deserialize(&value).map_err(invalid)?;
    let report: Report = serde_json::from_value(value).map_err(invalid)?;
    validate(name, &report, said)?;
    Ok(report)
}

/// The verdicts a suite report's JSON says: its own and each workload's.
#[derive(Deserialize)]
struct SaidSuite {
    #[serde(flatten)]
    said: Said,
    workloads: Vec<SaidWorkload>,
}

#[derive(Deserialize)]
struct SaidWorkload {
    report: Said,
}

/// A suite's report (or a check's, which has no `kind`: said as such).
fn suite_of(value: serde_json::Value) -> Checked<Read> {
    match value.get("kind").and_then(|k| k.as_str()) {
        Some(KIND) => {}
        _ => return Err(ReportError::NotSuite),
    }
    let version = value.get("schema_version").and_then(|v| v.as_u64());
    if !version.is_some_and(|v| {
        (u64::from(OLDEST_SUITE_SCHEMA_VERSION)..=u64::from(SUITE_SCHEMA_VERSION)).contains(&v)
    }) {
        return Err(ReportError::SchemaVersion {
            found: version,
            reads: SUITE_SCHEMA_VERSION,
        });
    }
    let said = SaidSuite::deserialize(&value).map_err(invalid)?;
    let mut report: SuiteReport = serde_json::from_value(value).map_err(invalid)?;
    // Names from a file are checked as names from ncugate.toml: one names a
    // folder of the HTML report (`../../x` wrote outside it).
    let names = report.suite.iter().chain(&report.planned);
    for name in names.chain(report.workloads.iter().map(|w| &w.name)) {
        crate::config::workload::check_name(name)
            .map_err(|_| ReportError::UnsafeName { name: name.clone() })?;
    }
    for (w, written) in report.workloads.iter_mut().zip(&said.workloads) {
        let inner = w.report.schema_version;
        if !verdict::reads_report_version(u64::from(inner)) {
            return Err(ReportError::WorkloadSchemaVersion {
                workload: w.name.clone(),
                found: inner,
                reads: verdict::REPORT_SCHEMA_VERSION,
            });
        }
        // A suite runs the metric gate on each workload; another gate's
        // report would pass with no check at all.
        if !matches!(w.report.subject, Subject::Metrics) {
            return Err(ReportError::Invalid {
                reason: format!(
                    "workload `{}` holds a {} report; a suite's workloads are the metric gate's",
                    w.name,
                    w.report.subject.gate()
                ),
            });
        }
        validate(&w.name, &w.report, written.report)?;
        recomputed(&w.name, &w.report, Some(&report.baseline_files))?;
        // A version-1 report reads as a version-2 one (version 2 only added
        // optional fields), and `merge` writes it back as such.
        w.report.schema_version = verdict::REPORT_SCHEMA_VERSION;
    }
    let (written, makes) = (said.said, report.outcome());
    if written != Said::of_outcome(makes) {
        return Err(ReportError::Contradicted {
            workload: None,
            says: written.outcome.as_str().to_string(),
            says_exit: written.exit_code,
            makes: makes.as_str().to_string(),
            makes_exit: makes.exit_code(),
        });
    }
    Ok(Read::Suite(Box::new(report)))
}

/// [`super::recompute::against_files`], said on standard error when the files are
/// not here to recompute the rows from.
fn recomputed(
    name: &str,
    report: &Report,
    digests: Option<&std::collections::BTreeMap<String, String>>,
) -> Checked<()> {
    if let Recomputed::NotHere(why) = super::recompute::against_files(name, report, digests)? {
        let note = crate::note::Note::new(format!(
            "workload `{name}`: rows held to their own numbers only, not recomputed: {why} (run in the checkout the checks ran in)"
        ));
        eprintln!("{}", crate::text::escape::printable(note.line()));
    }
    Ok(())
}

/// The validation of one check's report (a single check's, or a suite's
/// workload `name`), in the order a reader can act on: each row against its
/// own numbers and its downgrade's evidence, then the written verdict
/// against the checks', then whether it gated anything at all.
fn validate(name: &str, report: &Report, written: Said) -> Checked<()> {
    let contradicted = |row: String, numbers: String| ReportError::RowContradicted {
        workload: name.to_string(),
        row: crate::text::escape::printable(row),
        numbers,
    };
    if let Some(row) = report.rules.iter().find(|r| !r.status_fits_numbers()) {
        let number = |v: Option<f64>| v.map_or("none".to_string(), |v| format!("{v}"));
        return Err(contradicted(
            format!("{} says {}", row.named(), row.status.as_str()),
            format!(
                "{} against baseline {}, allowance {}",
                number(row.current),
                number(row.baseline.map(|b| b.mean)),
                number(row.allowance)
            ),
        ));
    }
    if let Some(row) = report.structure.iter().find(|s| !s.status_fits_numbers()) {
        return Err(contradicted(
            format!("{} says {}", structure_row(row), row.status.as_str()),
            launches(row),
        ));
    }
    // A launch count not gated because an autotuner moved launches between
    // its picks: the report's own launch-count rows must show the move.
    let moved = crate::compare::structure::moved_picks(&report.structure);
    if let Some(row) = report.structure.iter().find(|s| {
        s.check == crate::verdict::StructureCheck::PicksMoved && !moved.contains_key(&s.kernel)
    }) {
        return Err(contradicted(
            format!(
                "{} says its autotuner moved launches between its picks",
                structure_row(row)
            ),
            format!(
                "{}; the report's launch counts of that autotuner's kernels show no such move",
                launches(row)
            ),
        ));
    }
    samples_agree(name, report)?;
    for row in &report.rules {
        if let Some(d) = &row.downgrade
            && let Some(missing) = unevidenced(report, &moved, row, d)
        {
            let reason = match d.reason {
                Reason::SharedGpu => "shared GPU",
                Reason::Environmental => "environmental",
                Reason::CountersLocked => "counters locked",
                Reason::CodeVaries => "code varies",
            };
            return Err(ReportError::Unevidenced {
                workload: name.to_string(),
                row: crate::text::escape::printable(format!(
                    "{} is not gated ({reason})",
                    row.named()
                )),
                missing,
            });
        }
    }
    let makes = Said::of(report);
    if written != makes {
        return Err(ReportError::Contradicted {
            workload: Some(name.to_string()),
            says: written.outcome.as_str().to_string(),
            says_exit: written.exit_code,
            makes: makes.outcome.as_str().to_string(),
            makes_exit: makes.exit_code,
        });
    }
    // A sanitizer's or a memory audit's report with no finding is its pass;
    // a metric gate's with no check that ran gated nothing.
    let gated = report.statuses().any(|s| s != Status::Skipped);
    if matches!(report.subject, Subject::Metrics) && !gated && report.errors.is_empty() {
        return Err(ReportError::NothingGated {
            workload: name.to_string(),
        });
    }
    Ok(())
}

/// Each row's per-run samples against its own value and the report's other
/// rows. The samples are what the history keeps (a rolling baseline's
/// statistics are made of them, not of `current`), so a passing report whose
/// samples were edited — `1e308`, a thousand launches — would make every
/// later regression pass: they must be the ones the row's verdict was made
/// of, each row must count the same runs, and the kernels' launches must fit
/// in the launches the report says its runs profiled.
fn samples_agree(name: &str, report: &Report) -> Checked<()> {
    let disagree = |row: String, numbers: String| ReportError::SamplesDisagree {
        workload: name.to_string(),
        row: crate::text::escape::printable(row),
        numbers,
    };
    let number = |v: Option<f64>| v.map_or("none".to_string(), |v| format!("{v}"));
    // The runs the first row with samples counts, and that row.
    let mut runs: Option<(usize, String)> = None;
    let mut counted = |count: usize, row: String| match &runs {
        None => {
            runs = Some((count, row));
            Ok(())
        }
        Some((n, first)) if *n != count => Err(disagree(
            row,
            format!("{count} run(s), but {first} has {n}"),
        )),
        Some(_) => Ok(()),
    };
    for row in &report.rules {
        if let Some(why) = rule_samples_wrong(row.current, &row.current_runs) {
            return Err(disagree(
                format!("{} says current {}", row.named(), number(row.current)),
                why,
            ));
        }
        if !row.current_runs.is_empty() {
            counted(row.current_runs.len(), row.named())?;
        }
    }
    for row in &report.structure {
        if !row.current_launches.is_empty() {
            counted(row.current_launches.len(), structure_row(row))?;
        }
    }
    launches_fit(report).map_err(|numbers| disagree("its launch counts".into(), numbers))
}

/// Why a rule row's samples are not the ones `current` is the mean of
/// (`compare` makes it `Stats::of(samples).mean`; the JSON keeps each
/// number exactly, so only the last bits of the sum may differ); `None`
/// when they are. A row without samples keeps none in the history.
fn rule_samples_wrong(current: Option<f64>, samples: &[f64]) -> Option<String> {
    if samples.iter().any(|v| !v.is_finite()) {
        return Some("a sample is not a finite number".into());
    }
    match (current, crate::aggregate::Stats::of(samples)) {
        (_, None) => None,
        (None, Some(_)) => Some(format!("{} sample(s) but no current value", samples.len())),
        (Some(c), Some(stats)) => {
            let close = (c - stats.mean).abs() <= 1e-9 * c.abs().max(stats.mean.abs());
            (!close).then(|| {
                format!(
                    "the mean of its {} run(s) is {}",
                    samples.len(),
                    short_number(stats.mean)
                )
            })
        }
    }
}

/// A number as an error shows it: exactly, but `1e308` rather than its 309 digits.
fn short_number(x: f64) -> String {
    if x != 0.0 && !(1e-6..1e15).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// The kernels' launches (each kernel's row once) against the launches the
/// report's runs profiled (`profiling`): a launch is one kernel's, so they
/// cannot add up to more. A report without `profiling` says nothing to
/// hold them to.
fn launches_fit(report: &Report) -> std::result::Result<(), String> {
    if report.profiling.is_empty() {
        return Ok(());
    }
    let profiled = report
        .profiling
        .iter()
        .fold(0_u64, |all, p| all.saturating_add(p.launches));
    let mut kernels = std::collections::HashSet::new();
    let counted = report
        .structure
        .iter()
        .filter(|s| kernels.insert(s.kernel.as_str()))
        .flat_map(|s| s.current_launches.iter())
        .fold(0_u64, |all, &n| all.saturating_add(n));
    if counted > profiled {
        return Err(format!(
            "its kernels launch {counted} times in all, but its runs profiled {profiled} launches"
        ));
    }
    Ok(())
}

/// `KERNEL · launch count`, as an error names a structural row.
fn structure_row(row: &StructureResult) -> String {
    format!("{} · {}", row.kernel, row.check.as_str())
}

/// A structural row's numbers: `6 launches per run against baseline 3`.
fn launches(row: &StructureResult) -> String {
    let current: Vec<String> = row.current_launches.iter().map(u64::to_string).collect();
    let baseline = row.baseline_launches.map_or_else(
        || "none".to_string(),
        |b| crate::format::format_value(b, ""),
    );
    format!(
        "{} launches per run against baseline {baseline}",
        current.join("/")
    )
}

/// What the report lacks of the evidence for `row`'s downgrade `d`; `None`
/// when it has it. A shared-GPU downgrade carries the report's own
/// evidence, whose every signal has the numbers that show it, under `shared_gpu = "warn"` (the one policy that ungates); an
/// environmental one is a timing rule's failure of a kernel whose code the
/// report compared and found unchanged, and carries no shared GPU's evidence;
/// a code-varies one is a kernel's rule that does not measure time, saying
/// what showed the variation, or any rule of a kernel in `moved` (the picks
/// the report's own launch counts show an autotuner moved launches between).
fn unevidenced(
    report: &Report,
    moved: &BTreeMap<String, String>,
    row: &RuleResult,
    d: &Downgrade,
) -> Option<String> {
    match d.reason {
        Reason::SharedGpu => {
            let Some(shared) = &report.shared_gpu else {
                return Some("the report has no shared-GPU evidence".into());
            };
            if let Some(why) = shared.unsupported() {
                return Some(why);
            }
            if shared.policy != crate::shared_gpu::Policy::Warn {
                return Some(format!(
                    "the report's shared_gpu policy is `{}`, which ungates nothing",
                    shared.policy.as_str()
                ));
            }
            match d.evidence.as_deref() {
                None => Some("the row carries no evidence (`not_gated`)".into()),
                Some(e) if *e != shared.evidence => {
                    Some("its evidence is not the report's shared-GPU evidence".into())
                }
                Some(_) => None,
            }
        }
        Reason::CountersLocked => match (&report.degraded, row.status) {
            (None, _) => Some("the report is not a trace-mode report (`degraded`)".into()),
            (Some(_), crate::status::Status::Skipped) => None,
            (Some(_), status) => Some(format!("it says {}, not skipped", status.as_str())),
        },
        Reason::Environmental => {
            if d.evidence.is_some() {
                return Some("it carries a shared GPU's evidence (`not_gated`)".into());
            }
            if !row.measures_time() {
                return Some(format!("it measures `{}`, not time", row.unit));
            }
            let Some(kernel) = row.kernel.as_deref() else {
                return Some("the whole run has no code to be unchanged".into());
            };
            match report.code.iter().find(|c| c.kernel == kernel) {
                None => Some(format!("the report compared no code of `{kernel}`")),
                Some(c) if c.changed => Some(format!("the code of `{kernel}` changed")),
                Some(_) => None,
            }
        }
        Reason::CodeVaries => {
            let evidence = d.evidence.as_deref().map_or("", String::as_str);
            // Launches an autotuner moved between its picks: every rule of
            // theirs, time too, where the report's launch counts show it.
            if let Some(kernel) = row.kernel.as_deref()
                && crate::compare::structure::is_moved_picks(evidence)
            {
                return match moved.get(kernel) {
                    Some(e) if e == evidence => None,
                    _ => Some(format!(
                        "the report's launch counts do not show `{kernel}`'s launches moved between its autotuner's picks"
                    )),
                };
            }
            if row.measures_time() {
                return Some(format!(
                    "it measures `{}`, time, which stays gated",
                    row.unit
                ));
            }
            // A whole run's failure is not gated only where the report's own
            // rows of the kernels built several ways explain it.
            let Some(kernel) = row.kernel.as_deref() else {
                return match crate::compare::code::explained_by_builds(row, &report.rules) {
                    Some(e) if d.failed && e == evidence => None,
                    _ => Some(
                        "it is a whole run's rule, and the report's rows of kernels built several ways do not explain its change"
                            .into(),
                    ),
                };
            };
            // Built another way by an autotuner in this run: the report's
            // code comparison shows it. Built several ways in the recorded
            // runs: the baseline file shows it (`recompute` holds it there).
            let changed = report.code.iter().any(|c| c.kernel == kernel && c.changed);
            let autotuned = crate::compare::code::autotuned(kernel);
            if changed && crate::compare::code::is_autotuned(kernel, evidence) {
                return None;
            }
            if crate::compare::code::is_recorded_builds(evidence) {
                return None;
            }
            Some(match autotuned {
                Some(_) if !changed => format!("the report compared no changed code of `{kernel}`"),
                _ => "its evidence (`not_gated`) is neither an autotuner's new build nor the recorded runs' builds"
                    .to_string(),
            })
        }
    }
}
