//! The one report of a suite run: a [`Report`] per workload, the suite's
//! outcome, and what `ncugate merge` needs to join shards safely (the shard,
//! the workload lists, digests of the thresholds and baselines, the version).
//! Serialized as the `--json` report of a suite (`kind: "suite"`).

use crate::status::Outcome;
use crate::verdict::Report;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::config::Shard;

/// Version of the suite JSON report.
pub(crate) const SUITE_SCHEMA_VERSION: u32 = 2;
/// The oldest suite report `schema_version` still read by `merge`.
pub(crate) const OLDEST_SUITE_SCHEMA_VERSION: u32 = 1;
/// The `kind` of a suite report (a single check's report has none).
pub(crate) const KIND: &str = "suite";

/// One workload's part of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct WorkloadReport {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) tags: Vec<String>,
    /// The baseline compared with (empty when none was found).
    pub(crate) baseline: String,
    /// Wall time of the workload's profiled run(s) in seconds (absent for `--input`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) seconds: Option<f64>,
    pub(crate) report: Report,
    /// Set when the workload was skipped: its inputs were unchanged since
    /// the check whose report this is, which ran on `carried.commit`. Its
    /// checks were measured then, not in this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) carried: Option<Carried>,
}

/// Where a skipped workload's report comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct Carried {
    /// The commit whose check measured the report.
    pub(crate) commit: String,
    /// When that check finished, in Unix seconds.
    pub(crate) time: i64,
    /// The input digest both runs share (SHA-256).
    pub(crate) digest: String,
}

impl Carried {
    /// `1a2b3c4 (2026-12-05)`.
    pub(crate) fn since(&self) -> String {
        format!("{} ({})", self.short_commit(), self.date())
    }

    /// The commit's first 7 characters.
    pub(crate) fn short_commit(&self) -> String {
        self.commit.chars().take(7).collect()
    }

    /// The day of [`Carried::time`], UTC.
    pub(crate) fn date(&self) -> String {
        jiff::Timestamp::from_second(self.time)
            .map(|t| t.strftime("%Y-%m-%d").to_string())
            .unwrap_or_else(|_| "unknown date".into())
    }

    /// `inputs unchanged since 1a2b3c4 (pass, 2026-12-05)`.
    pub(crate) fn label(&self, outcome: Outcome) -> String {
        format!(
            "inputs unchanged since {} ({}, {})",
            self.short_commit(),
            outcome.title().to_lowercase(),
            self.date()
        )
    }
}

/// Everything a suite run decided. Its outcome and exit code are computed
/// from its workloads' ([`SuiteReport::outcome`]) and written computed
/// (`Written`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SuiteReport {
    pub(crate) schema_version: u32,
    pub(crate) kind: String,
    pub(crate) ncugate_version: String,
    /// This run's shard (`"2/3"`); absent for an unsharded or merged run.
    #[serde(default)]
    pub(crate) shard: Option<Shard>,
    /// The shard reports a merged report was made from.
    #[serde(default)]
    pub(crate) merged_from: Vec<String>,
    /// Every workload selected for the run, before sharding, in config order.
    pub(crate) suite: Vec<String>,
    /// The workloads this run was to gate (its shard of `suite`).
    pub(crate) planned: Vec<String>,
    /// SHA-256 over each workload's name and thresholds text.
    pub(crate) thresholds_sha256: String,
    /// SHA-256 over the baseline files of the suite's workloads.
    pub(crate) baselines_sha256: String,
    /// The SHA-256 of each of those files, by its path in the baselines folder
    /// (`fp64/nvidia-h200-cc90-132sm.json`); merge names the files shards saw differently.
    #[serde(default)]
    pub(crate) baseline_files: BTreeMap<String, String>,
    pub(crate) workloads: Vec<WorkloadReport>,
}

/// A suite report as its JSON holds it (`schemas/suite-report.v2.json`):
/// the fields of [`SuiteReport`] in the JSON's order with the outcome and
/// exit code computed on write (serde's `remote` mirror, as a check's
/// report is written). Its field documentation is the schema's.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(remote = "SuiteReport")]
struct Written {
    pub(crate) schema_version: u32,
    pub(crate) kind: String,
    pub(crate) ncugate_version: String,
    #[serde(getter = "SuiteReport::outcome")]
    pub(crate) outcome: Outcome,
    #[serde(getter = "SuiteReport::exit_code")]
    pub(crate) exit_code: i32,
    /// This run's shard (`"2/3"`); absent for an unsharded or merged run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", regex(pattern = r"^[1-9][0-9]*/[1-9][0-9]*$"))]
    pub(crate) shard: Option<Shard>,
    /// The shard reports a merged report was made from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) merged_from: Vec<String>,
    /// Every workload selected for the run, before sharding, in config order.
    pub(crate) suite: Vec<String>,
    /// The workloads this run was to gate (its shard of `suite`).
    pub(crate) planned: Vec<String>,
    /// SHA-256 over each workload's name and thresholds text.
    pub(crate) thresholds_sha256: String,
    /// SHA-256 over the baseline files of the suite's workloads.
    pub(crate) baselines_sha256: String,
    /// The SHA-256 of each of those files, by its path in the baselines folder
    /// (`fp64/nvidia-h200-cc90-132sm.json`); merge names the files shards saw differently.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) baseline_files: BTreeMap<String, String>,
    pub(crate) workloads: Vec<WorkloadReport>,
}

impl Serialize for SuiteReport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Written::serialize(self, serializer)
    }
}

impl schemars::JsonSchema for SuiteReport {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        Written::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        Written::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Written::json_schema(generator)
    }
}

impl SuiteReport {
    /// A report with the given workloads.
    pub(crate) fn new(
        shard: Option<Shard>,
        suite: Vec<String>,
        planned: Vec<String>,
        thresholds_sha256: String,
        baselines_sha256: String,
        workloads: Vec<WorkloadReport>,
    ) -> SuiteReport {
        SuiteReport {
            schema_version: SUITE_SCHEMA_VERSION,
            kind: KIND.into(),
            ncugate_version: env!("CARGO_PKG_VERSION").into(),
            shard,
            merged_from: Vec::new(),
            suite,
            planned,
            thresholds_sha256,
            baselines_sha256,
            baseline_files: BTreeMap::new(),
            workloads,
        }
    }

    /// The suite's answer, computed from its workloads' each time it is
    /// asked: error if any workload errored, else regression if any
    /// regressed, else pass.
    pub(crate) fn outcome(&self) -> Outcome {
        self.workloads
            .iter()
            .map(|w| w.report.outcome())
            .fold(Outcome::Pass, Outcome::worst)
    }

    /// The process exit code of [`SuiteReport::outcome`].
    pub(crate) fn exit_code(&self) -> i32 {
        self.outcome().exit_code()
    }

    /// The names of the workloads with `outcome`.
    pub(crate) fn with_outcome(&self, outcome: Outcome) -> Vec<&str> {
        self.workloads
            .iter()
            .filter(|w| w.report.outcome() == outcome)
            .map(|w| w.name.as_str())
            .collect()
    }

    /// One line: `REGRESSION (exit 1): 3 workloads — 1 regressed (infer), 2 passed`.
    pub(crate) fn headline(&self) -> String {
        let word = self.outcome().title();
        let mut parts = Vec::new();
        for (outcome, what) in [
            (Outcome::Error, "errored"),
            (Outcome::Regression, "regressed"),
            (Outcome::Pass, "passed"),
        ] {
            let names = self.with_outcome(outcome);
            if names.is_empty() {
                continue;
            }
            if outcome == Outcome::Pass {
                parts.push(format!("{} {what}", names.len()));
            } else {
                parts.push(format!("{} {what} ({})", names.len(), names.join(", ")));
            }
        }
        // Checks left ungated are counted in each workload's headline; the
        // suite's names the workloads that have any, so a pass says so.
        let ungated: Vec<&str> = self
            .workloads
            .iter()
            .filter(|w| w.carried.is_none())
            .filter(|w| !w.report.counts().not_gated_words().is_empty())
            .map(|w| w.name.as_str())
            .collect();
        if !ungated.is_empty() {
            parts.push(format!(
                "{} with checks not gated ({})",
                ungated.len(),
                ungated.join(", ")
            ));
        }
        let carried: Vec<String> = self
            .workloads
            .iter()
            .filter_map(|w| {
                let c = w.carried.as_ref()?;
                Some(format!("{} from {}", w.name, c.short_commit()))
            })
            .collect();
        if !carried.is_empty() {
            parts.push(format!(
                "{} skipped, inputs unchanged, verdicts carried ({})",
                carried.len(),
                carried.join(", ")
            ));
        }
        let n = self.workloads.len();
        let scope = match self.shard {
            Some(s) => format!(" in shard {s}"),
            None => String::new(),
        };
        let list = if parts.is_empty() {
            "nothing to gate".to_string()
        } else {
            parts.join(", ")
        };
        format!(
            "{word} (exit {}): {n} workload{}{scope} — {list}",
            self.exit_code(),
            if n == 1 { "" } else { "s" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workload whose checks make `outcome`: none (pass), a failed launch
    /// count (regression), an error.
    fn workload(name: &str, outcome: Outcome) -> WorkloadReport {
        let mut report = Report::empty("b.json", vec![], vec![], "t");
        let launches = |status| crate::verdict::StructureResult {
            kernel: "k".into(),
            check: crate::verdict::StructureCheck::Launches,
            baseline_launches: Some(1.0),
            baseline_range: None,
            current_launches: vec![2],
            recorded_in: None,
            status,
            message: String::new(),
        };
        match outcome {
            Outcome::Pass => {}
            Outcome::Regression => report.structure.push(launches(crate::status::Status::Fail)),
            Outcome::Error => report.errors.push("ncu failed".into()),
        }
        assert_eq!(report.outcome(), outcome);
        WorkloadReport {
            name: name.into(),
            tags: vec![],
            baseline: "b.json".into(),
            seconds: None,
            report,
            carried: None,
        }
    }

    #[test]
    fn error_beats_regression_beats_pass() {
        let names = vec!["a".to_string(), "b".into(), "c".into()];
        let r = |o: [Outcome; 3]| {
            SuiteReport::new(
                None,
                names.clone(),
                names.clone(),
                String::new(),
                String::new(),
                vec![
                    workload("a", o[0]),
                    workload("b", o[1]),
                    workload("c", o[2]),
                ],
            )
        };
        use Outcome::*;
        assert_eq!(r([Pass, Pass, Pass]).exit_code(), 0);
        let reg = r([Pass, Regression, Pass]);
        assert_eq!(reg.exit_code(), 1);
        assert_eq!(
            reg.headline(),
            "REGRESSION (exit 1): 3 workloads — 1 regressed (b), 2 passed"
        );
        let err = r([Regression, Error, Pass]);
        assert_eq!(err.exit_code(), 2);
        assert!(err.headline().contains("1 errored (b), 1 regressed (a)"));
    }
}
