//! `ncugate merge`: the JSON reports of a suite's shards (or of separate
//! runs of single workloads) joined into one report and one exit code, on
//! any machine. Each report is read by [`super::read`], which refuses one
//! that cannot be trusted (duplicate keys, a written outcome that its checks
//! contradict, a row whose own numbers fail it while it says otherwise, a
//! downgrade without its evidence, a workload that gated nothing); merge
//! itself refuses what would make the joined verdict wrong: a missing or
//! repeated shard, a workload reported twice, shards made with different
//! thresholds, baselines or ncugate versions, and a merge that gates nothing.

use super::report::SuiteReport;
use crate::config::Shard;
use crate::error::{Made, MergeError, Result};
use std::collections::HashMap;
use std::path::PathBuf;

/// Reads and merges the reports.
/// With `key`, each must be signed with it.
pub(crate) fn merge_files(
    paths: &[PathBuf],
    expect_shards: Option<u32>,
    key: Option<&crate::report::sign::ReportKey>,
) -> Result<SuiteReport> {
    let mut reports = Vec::with_capacity(paths.len());
    for path in paths {
        reports.push((path.display().to_string(), super::read::suite(path, key)?));
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
