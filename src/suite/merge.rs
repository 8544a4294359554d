//! `ncugate merge`: the JSON reports of a suite's shards (or of separate
//! runs of single workloads) joined into one report and one exit code, on
//! any machine. It refuses what would make the verdict wrong: a missing or
//! repeated shard, a workload reported twice, shards made with different
//! thresholds, baselines or ncugate versions, a report with duplicate keys,
//! a written outcome that its checks contradict (every outcome is recomputed
//! by the code `check` uses), a rule row whose own numbers fail it while it
//! says otherwise, and a merge that gates nothing.

use super::report::{KIND, SUITE_SCHEMA_VERSION, SuiteReport};
use crate::config::Shard;
use crate::error::{Error, FileKind, Made, MergeError, ReportError, Result};
use crate::verdict::Said;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Reads one suite report.
pub fn read(path: &Path) -> Result<SuiteReport> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| Error::read(FileKind::ShardReport, path, source))?;
    let bad = |error: ReportError| Error::Report {
        path: path.to_path_buf(),
        error,
    };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        bad(ReportError::NotJson {
            reason: e.to_string(),
        })
    })?;
    // serde_json keeps the last of two equal keys: `"status":"fail","status":"pass"` would pass.
    crate::baseline::keys::no_duplicate_keys_or_unprintable(&text).map_err(|e| {
        bad(ReportError::DuplicateKey {
            reason: e.to_string(),
        })
    })?;
    if value.get("kind").and_then(|k| k.as_str()) != Some(KIND) {
        return Err(bad(ReportError::NotSuite));
    }
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v)
            if (u64::from(super::report::OLDEST_SUITE_SCHEMA_VERSION)
                ..=u64::from(SUITE_SCHEMA_VERSION))
                .contains(&v) => {}
        found => {
            return Err(bad(ReportError::SchemaVersion {
                found,
                reads: SUITE_SCHEMA_VERSION,
            }));
        }
    }
    let invalid = |e: serde_json::Error| {
        bad(ReportError::Invalid {
            reason: e.to_string(),
        })
    };
    let said = SaidSuite::deserialize(&value).map_err(invalid)?;
    let report: SuiteReport = serde_json::from_value(value).map_err(invalid)?;
    recomputed(report, &said).map_err(bad)
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

/// The report with every outcome recomputed from its checks by the code
/// `check` uses, or why it cannot be trusted: a written outcome that its
/// checks contradict, a workload report of another schema version, or a
/// workload that gated nothing (no check that ran, no error).
fn recomputed(
    mut report: SuiteReport,
    said: &SaidSuite,
) -> std::result::Result<SuiteReport, ReportError> {
    // Names from a file are checked as names from ncugate.toml: one names a
    // folder of the HTML report (`../../x` wrote outside it).
    let names = report.suite.iter().chain(&report.planned);
    for name in names.chain(report.workloads.iter().map(|w| &w.name)) {
        crate::config::workload::check_name(name)
            .map_err(|_| ReportError::UnsafeName { name: name.clone() })?;
    }
    for (w, written) in report.workloads.iter_mut().zip(&said.workloads) {
        let name = &w.name;
        let inner = w.report.schema_version;
        if !crate::verdict::reads_report_version(u64::from(inner)) {
            return Err(ReportError::WorkloadSchemaVersion {
                workload: name.clone(),
                found: inner,
                reads: crate::verdict::REPORT_SCHEMA_VERSION,
            });
        }
        if let Some(row) = w.report.rules.iter().find(|r| !r.status_fits_numbers()) {
            let number = |v: Option<f64>| v.map_or("none".to_string(), |v| format!("{v}"));
            return Err(ReportError::RowContradicted {
                workload: name.clone(),
                row: crate::kernel_key::printable(format!(
                    "{} · {} says {}",
                    row.kernel.as_deref().unwrap_or("(total)"),
                    row.rule,
                    row.status.as_str()
                )),
                numbers: format!(
                    "{} against baseline {}, allowance {}",
                    number(row.current),
                    number(row.baseline.map(|b| b.mean)),
                    number(row.allowance)
                ),
            });
        }
        // A version-1 report reads as a version-2 one; it is written back as such.
        w.report.schema_version = crate::verdict::REPORT_SCHEMA_VERSION;
        let (written, makes) = (written.report, Said::of(&w.report));
        if written != makes {
            return Err(ReportError::Contradicted {
                workload: Some(name.clone()),
                says: written.outcome.as_str().to_string(),
                says_exit: written.exit_code,
                makes: makes.outcome.as_str().to_string(),
                makes_exit: makes.exit_code,
            });
        }
        let gated = w
            .report
            .statuses()
            .any(|s| s != crate::status::Status::Skipped);
        if !gated && w.report.errors.is_empty() {
            return Err(ReportError::NothingGated {
                workload: name.clone(),
            });
        }
    }
    let (written, makes) = (said.said, report.outcome());
    if written.outcome != makes || written.exit_code != makes.exit_code() {
        return Err(ReportError::Contradicted {
            workload: None,
            says: written.outcome.as_str().to_string(),
            says_exit: written.exit_code,
            makes: makes.as_str().to_string(),
            makes_exit: makes.exit_code(),
        });
    }
    Ok(report)
}

/// Reads and merges the reports.
pub fn merge_files(paths: &[PathBuf], expect_shards: Option<u32>) -> Result<SuiteReport> {
    let mut reports = Vec::with_capacity(paths.len());
    for path in paths {
        reports.push((path.display().to_string(), read(path)?));
    }
    merge(reports, expect_shards)
}

/// Merges `(name, report)` pairs.
pub fn merge(
    reports: Vec<(String, SuiteReport)>,
    expect_shards: Option<u32>,
) -> Result<SuiteReport> {
    let Some((first_name, first)) = reports.first() else {
        return Err(MergeError::NoReports.into());
    };
    for (name, r) in &reports[1..] {
        // Compared whole; only the message shortens a digest.
        let same = |what: Made, a: &str, b: &str| {
            if a == b {
                Ok(())
            } else {
                let (a, b) = if short(a) == short(b) {
                    (a.to_string(), b.to_string())
                } else {
                    (short(a), short(b))
                };
                Err(MergeError::Different {
                    first: first_name.clone(),
                    other: name.clone(),
                    what,
                    a,
                    b,
                })
            }
        };
        same(
            Made::NcugateVersions,
            &first.ncugate_version,
            &r.ncugate_version,
        )?;
        same(
            Made::Thresholds,
            &first.thresholds_sha256,
            &r.thresholds_sha256,
        )?;
        // Shards of one run read one baselines folder; separate runs of single
        // workloads each gated against their own baseline, which may have been
        // re-recorded between them (the digest covers every workload's files).
        if first.shard.is_some() && r.shard.is_some() {
            // Name the files that differ when both reports list them (version 2).
            if let Some(files) = different_files(first, r) {
                return Err(MergeError::DifferentBaselineFiles {
                    first: first_name.clone(),
                    other: name.clone(),
                    files,
                }
                .into());
            }
            same(
                Made::Baselines,
                &first.baselines_sha256,
                &r.baselines_sha256,
            )?;
        }
    }
    let sharded = reports.iter().filter(|(_, r)| r.shard.is_some()).count();
    if sharded != 0 && sharded != reports.len() {
        return Err(MergeError::ShardsAndNot.into());
    }
    if sharded > 0 {
        check_shards(&reports, expect_shards)?;
    } else if let Some(n) = expect_shards {
        return Err(MergeError::ExpectedShards { expected: n }.into());
    }
    // Each workload once, in the order first seen; looked up by name (a
    // list search made 8,000 workloads quadratic).
    let mut seen: Vec<&str> = Vec::new();
    let mut reported_in: HashMap<&str, &str> = HashMap::new();
    for (name, r) in &reports {
        for w in &r.workloads {
            if let Some(other) = reported_in.insert(&w.name, name) {
                return Err(MergeError::Twice {
                    workload: w.name.clone(),
                    first: other.to_string(),
                    second: name.clone(),
                }
                .into());
            }
            seen.push(&w.name);
        }
    }
    let suite: Vec<String> = if sharded > 0 {
        first.suite.clone()
    } else {
        seen.iter().map(|n| n.to_string()).collect()
    };
    if let Some(missing) = suite.iter().find(|s| !reported_in.contains_key(s.as_str())) {
        return Err(MergeError::NotReported {
            workload: missing.clone(),
        }
        .into());
    }
    let position: HashMap<&str, usize> = suite
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_str(), i))
        .collect();
    let mut workloads: Vec<_> = reports
        .iter()
        .flat_map(|(_, r)| r.workloads.iter().cloned())
        .collect();
    workloads.sort_by_key(|w| position.get(w.name.as_str()).copied());
    if workloads.is_empty() {
        return Err(MergeError::NoWorkloads.into());
    }
    let mut merged = SuiteReport::new(
        None,
        suite.clone(),
        suite,
        first.thresholds_sha256.clone(),
        first.baselines_sha256.clone(),
        workloads,
    );
    merged.ncugate_version = first.ncugate_version.clone();
    merged.baseline_files = first.baseline_files.clone();
    merged.merged_from = reports.into_iter().map(|(name, _)| name).collect();
    Ok(merged)
}

/// Every shard 1/N … N/N exactly once, all of one suite.
fn check_shards(reports: &[(String, SuiteReport)], expect: Option<u32>) -> Result<()> {
    let shard = |r: &SuiteReport| r.shard.unwrap_or(Shard { index: 0, count: 0 });
    let (first_name, first) = &reports[0];
    let n = shard(first).count;
    if let Some(expected) = expect
        && expected != n
    {
        return Err(MergeError::ShardCount {
            expected,
            report: first_name.clone(),
            shard: shard(first).to_string(),
        }
        .into());
    }
    for (name, r) in reports {
        if shard(r).count != n {
            return Err(MergeError::MixedCounts {
                first: first_name.clone(),
                first_shard: shard(first).to_string(),
                other: name.clone(),
                other_shard: shard(r).to_string(),
            }
            .into());
        }
        if r.suite != first.suite {
            return Err(MergeError::DifferentSuites {
                first: first_name.clone(),
                other: name.clone(),
                a: first.suite.join(","),
                b: r.suite.join(","),
            }
            .into());
        }
        let gated: Vec<&str> = r.workloads.iter().map(|w| w.name.as_str()).collect();
        if let Some(missing) = r.planned.iter().find(|p| !gated.contains(&p.as_str())) {
            return Err(MergeError::Unfinished {
                report: name.clone(),
                shard: shard(r).to_string(),
                workload: missing.clone(),
            }
            .into());
        }
    }
    for k in 1..=n {
        let with_k: Vec<&str> = reports
            .iter()
            .filter(|(_, r)| shard(r).index == k)
            .map(|(name, _)| name.as_str())
            .collect();
        match with_k.len() {
            0 => {
                return Err(MergeError::MissingShard { index: k, count: n }.into());
            }
            1 => {}
            _ => {
                return Err(MergeError::ShardTwice {
                    index: k,
                    count: n,
                    reports: with_k.iter().map(|r| r.to_string()).collect(),
                }
                .into());
            }
        }
    }
    Ok(())
}

/// The baseline files two shards saw differently (or only one saw), named
/// with both short digests: `fp64/nvidia-h200-cc90-132sm.json (87f30d5f14e8 vs
/// 48e232947859)`; `None` when they saw the same files.
fn different_files(a: &SuiteReport, b: &SuiteReport) -> Option<String> {
    let (a, b) = (&a.baseline_files, &b.baseline_files);
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let mut named: Vec<String> = Vec::new();
    for file in a.keys().chain(b.keys().filter(|f| !a.contains_key(*f))) {
        let digest = |m: &std::collections::BTreeMap<String, String>| {
            m.get(file).map_or_else(|| "none".to_string(), |d| short(d))
        };
        if a.get(file) != b.get(file) {
            named.push(format!("{file} ({} vs {})", digest(a), digest(b)));
        }
    }
    const SHOWN: usize = 5;
    let more = named.len().saturating_sub(SHOWN);
    named.truncate(SHOWN);
    (!named.is_empty()).then(|| {
        let list = named.join(", ");
        if more > 0 {
            format!("{list} and {more} more")
        } else {
            list
        }
    })
}

/// The first 12 hex digits, to name a digest in a message (two digests that
/// share them are shown whole; the comparison is always on the whole digest).
fn short(digest: &str) -> String {
    digest.chars().take(12).collect()
}
