//! `ncugate merge`: the JSON reports of a suite's shards (or of separate
//! runs of single workloads) joined into one report and one exit code, on
//! any machine. It refuses what would make the verdict wrong: a missing or
//! repeated shard, a workload reported twice, shards made with different
//! thresholds, baselines or ncugate versions.

use super::Shard;
use super::report::{KIND, SUITE_SCHEMA_VERSION, SuiteReport};
use crate::error::{Error, FileKind, Made, MergeError, ReportError, Result};
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
    if value.get("kind").and_then(|k| k.as_str()) != Some(KIND) {
        return Err(bad(ReportError::NotSuite));
    }
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(SUITE_SCHEMA_VERSION) => {}
        found => {
            return Err(bad(ReportError::SchemaVersion {
                found,
                reads: SUITE_SCHEMA_VERSION,
            }));
        }
    }
    serde_json::from_value(value).map_err(|e| {
        bad(ReportError::Invalid {
            reason: e.to_string(),
        })
    })
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
        let same = |what: Made, a: &str, b: &str| {
            if a == b {
                Ok(())
            } else {
                Err(MergeError::Different {
                    first: first_name.clone(),
                    other: name.clone(),
                    what,
                    a: a.to_string(),
                    b: b.to_string(),
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
            &short(&first.thresholds_sha256),
            &short(&r.thresholds_sha256),
        )?;
        same(
            Made::Baselines,
            &short(&first.baselines_sha256),
            &short(&r.baselines_sha256),
        )?;
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
    let mut seen: Vec<(String, String)> = Vec::new();
    for (name, r) in &reports {
        for w in &r.workloads {
            if let Some((_, other)) = seen.iter().find(|(n, _)| n == &w.name) {
                return Err(MergeError::Twice {
                    workload: w.name.clone(),
                    first: other.clone(),
                    second: name.clone(),
                }
                .into());
            }
            seen.push((w.name.clone(), name.clone()));
        }
    }
    let suite: Vec<String> = if sharded > 0 {
        first.suite.clone()
    } else {
        seen.iter().map(|(n, _)| n.clone()).collect()
    };
    if let Some(missing) = suite.iter().find(|s| seen.iter().all(|(n, _)| &n != s)) {
        return Err(MergeError::NotReported {
            workload: missing.clone(),
        }
        .into());
    }
    let mut workloads: Vec<_> = reports
        .iter()
        .flat_map(|(_, r)| r.workloads.iter().cloned())
        .collect();
    workloads.sort_by_key(|w| suite.iter().position(|s| s == &w.name));
    let mut merged = SuiteReport::new(
        None,
        suite.clone(),
        suite,
        first.thresholds_sha256.clone(),
        first.baselines_sha256.clone(),
        workloads,
    );
    merged.ncugate_version = first.ncugate_version.clone();
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

/// The first 12 hex digits, enough to tell two digests apart in a message.
fn short(digest: &str) -> String {
    digest.chars().take(12).collect()
}
