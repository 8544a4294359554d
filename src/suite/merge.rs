//! `ncugate merge`: the JSON reports of a suite's shards (or of separate
//! runs of single workloads) joined into one report and one exit code, on
//! any machine. It refuses what would make the verdict wrong: a missing or
//! repeated shard, a workload reported twice, shards made with different
//! thresholds, baselines or ncugate versions, a report with duplicate keys,
//! a written outcome that its checks contradict (every outcome is recomputed
//! by the code `check` uses), and a merge that gates nothing.

use super::Shard;
use super::report::{KIND, SUITE_SCHEMA_VERSION, SuiteReport};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Reads one suite report.
pub fn read(path: &Path) -> Result<SuiteReport> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let bad = |message: String, hint: &str| Error::Input {
        path: path.to_path_buf(),
        message,
        hint: hint.into(),
    };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        bad(
            format!("not a JSON report ({e})"),
            "pass the files written by `ncugate check --json FILE`",
        )
    })?;
    // serde_json keeps the last of two equal keys: `"status":"fail","status":"pass"` would pass.
    crate::baseline::keys::no_duplicate_keys(&text).map_err(|e| {
        bad(
            format!("{e}"),
            "pass the files exactly as `ncugate check --json` wrote them",
        )
    })?;
    if value.get("kind").and_then(|k| k.as_str()) != Some(KIND) {
        return Err(bad(
            "not a suite report (it has no \"kind\": \"suite\")".into(),
            "merge the --json reports of `ncugate check` runs of a suite (with [[workload]] tables, --workload or --shard)",
        ));
    }
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(SUITE_SCHEMA_VERSION) => {}
        other => {
            return Err(bad(
                format!(
                    "suite report schema_version {} (this ncugate reads {SUITE_SCHEMA_VERSION})",
                    other.map_or("missing".to_string(), |v| v.to_string())
                ),
                "merge with the ncugate version that wrote the shards",
            ));
        }
    }
    let report: SuiteReport = serde_json::from_value(value).map_err(|e| {
        bad(
            format!("invalid suite report: {e}"),
            "pass the files exactly as `ncugate check --json` wrote them",
        )
    })?;
    recomputed(report).map_err(|message| {
        bad(
            message,
            "pass the files exactly as `ncugate check --json` wrote them (was the report edited?)",
        )
    })
}

/// The report with every outcome recomputed from its checks by the code
/// `check` uses, or why it cannot be trusted: a written outcome that its
/// checks contradict, a workload report of another schema version, or a
/// workload that gated nothing (no check that ran, no error).
fn recomputed(mut report: SuiteReport) -> std::result::Result<SuiteReport, String> {
    // Names from a file are checked as names from ncugate.toml: one names a
    // folder of the HTML report (`../../x` wrote outside it).
    let names = report.suite.iter().chain(&report.planned);
    for name in names.chain(report.workloads.iter().map(|w| &w.name)) {
        crate::config::workload::check_name(name).map_err(|e| e.to_string())?;
    }
    for w in &mut report.workloads {
        let name = &w.name;
        let inner = w.report.schema_version;
        if inner != crate::verdict::REPORT_SCHEMA_VERSION {
            return Err(format!(
                "workload `{name}`: report schema_version {inner} (this ncugate reads {})",
                crate::verdict::REPORT_SCHEMA_VERSION
            ));
        }
        let written = (w.report.outcome, w.report.exit_code);
        w.report.finish();
        if written != (w.report.outcome, w.report.exit_code) {
            return Err(format!(
                "workload `{name}` says {} (exit {}) but its checks make it {} (exit {})",
                written.0.as_str(),
                written.1,
                w.report.outcome.as_str(),
                w.report.exit_code
            ));
        }
        let gated = w
            .report
            .statuses()
            .any(|s| s != crate::status::Status::Skipped);
        if !gated && w.report.errors.is_empty() {
            return Err(format!(
                "workload `{name}` has no check that ran (every check skipped, or none)"
            ));
        }
    }
    let written = (report.outcome, report.exit_code);
    report.finish();
    if written != (report.outcome, report.exit_code) {
        return Err(format!(
            "the report says {} (exit {}) but its workloads make it {} (exit {})",
            written.0.as_str(),
            written.1,
            report.outcome.as_str(),
            report.exit_code
        ));
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

fn refuse(message: String, hint: &str) -> Error {
    Error::Usage {
        message: format!("cannot merge: {message}"),
        hint: hint.into(),
    }
}

/// Merges `(name, report)` pairs.
pub fn merge(
    reports: Vec<(String, SuiteReport)>,
    expect_shards: Option<u32>,
) -> Result<SuiteReport> {
    let Some((first_name, first)) = reports.first() else {
        return Err(refuse(
            "no reports given".into(),
            "pass the shards' JSON reports",
        ));
    };
    for (name, r) in &reports[1..] {
        // Compared whole; only the message shortens a digest.
        let same = |what: &str, a: &str, b: &str, hint: &str| {
            if a == b {
                Ok(())
            } else {
                let (a, b) = if short(a) == short(b) {
                    (a.to_string(), b.to_string())
                } else {
                    (short(a), short(b))
                };
                Err(refuse(
                    format!("{first_name} and {name} were made with different {what} ({a} vs {b})"),
                    hint,
                ))
            }
        };
        same(
            "ncugate versions",
            &first.ncugate_version,
            &r.ncugate_version,
            "run every shard with the same ncugate version",
        )?;
        same(
            "thresholds",
            &first.thresholds_sha256,
            &r.thresholds_sha256,
            "run every shard from the same commit (same thresholds files)",
        )?;
        // Shards of one run read one baselines folder; separate runs of single
        // workloads each gated against their own baseline, which may have been
        // re-recorded between them (the digest covers every workload's files).
        if first.shard.is_some() && r.shard.is_some() {
            same(
                "baselines",
                &first.baselines_sha256,
                &r.baselines_sha256,
                "run every shard from the same commit (same baselines folder)",
            )?;
        }
    }
    let sharded = reports.iter().filter(|(_, r)| r.shard.is_some()).count();
    if sharded != 0 && sharded != reports.len() {
        return Err(refuse(
            "some reports are shards and some are not".into(),
            "merge either the N shards of one run, or separate unsharded runs",
        ));
    }
    if sharded > 0 {
        check_shards(&reports, expect_shards)?;
    } else if let Some(n) = expect_shards {
        return Err(refuse(
            format!("--expect-shards {n}, but no report is a shard"),
            "drop --expect-shards, or merge the reports of `check --shard K/N`",
        ));
    }
    let mut seen: Vec<(String, String)> = Vec::new();
    for (name, r) in &reports {
        for w in &r.workloads {
            if let Some((_, other)) = seen.iter().find(|(n, _)| n == &w.name) {
                return Err(refuse(
                    format!(
                        "workload `{}` is reported twice ({other} and {name})",
                        w.name
                    ),
                    "each workload must be gated once: merge one report per shard",
                ));
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
        return Err(refuse(
            format!("workload `{missing}` of the suite is in no report"),
            "a shard stopped before gating it: rerun that shard",
        ));
    }
    let mut workloads: Vec<_> = reports
        .iter()
        .flat_map(|(_, r)| r.workloads.iter().cloned())
        .collect();
    workloads.sort_by_key(|w| suite.iter().position(|s| s == &w.name));
    if workloads.is_empty() {
        return Err(refuse(
            "the reports hold no workload: nothing was gated".into(),
            "check that the shards selected workloads (--workload, --tag, [[workload]] tables)",
        ));
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
        return Err(refuse(
            format!(
                "--expect-shards {expected}, but {first_name} is shard {}",
                shard(first)
            ),
            "run shards 1/N … N/N with the N you expect",
        ));
    }
    for (name, r) in reports {
        if shard(r).count != n {
            return Err(refuse(
                format!(
                    "{first_name} is shard {} but {name} is shard {}",
                    shard(first),
                    shard(r)
                ),
                "every shard of one run uses the same N",
            ));
        }
        if r.suite != first.suite {
            return Err(refuse(
                format!(
                    "{first_name} and {name} split different suites ({} vs {})",
                    first.suite.join(","),
                    r.suite.join(",")
                ),
                "run every shard with the same config, --workload and --tag",
            ));
        }
        let gated: Vec<&str> = r.workloads.iter().map(|w| w.name.as_str()).collect();
        if let Some(missing) = r.planned.iter().find(|p| !gated.contains(&p.as_str())) {
            return Err(refuse(
                format!(
                    "{name} (shard {}) planned workload `{missing}` but has no result for it",
                    shard(r)
                ),
                "the shard stopped early: rerun it",
            ));
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
                return Err(refuse(
                    format!("shard {k}/{n} is missing"),
                    "pass the JSON report of every shard 1/N … N/N (did one runner fail to upload its report?)",
                ));
            }
            1 => {}
            _ => {
                return Err(refuse(
                    format!("shard {k}/{n} is given twice ({})", with_k.join(", ")),
                    "pass each shard's report once",
                ));
            }
        }
    }
    Ok(())
}

/// The first 12 hex digits, to name a digest in a message (two digests that
/// share them are shown whole; the comparison is always on the whole digest).
fn short(digest: &str) -> String {
    digest.chars().take(12).collect()
}
