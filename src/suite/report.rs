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
pub const SUITE_SCHEMA_VERSION: u32 = 2;
/// The oldest suite report `schema_version` still read by `merge`.
pub const OLDEST_SUITE_SCHEMA_VERSION: u32 = 1;
/// The `kind` of a suite report (a single check's report has none).
pub const KIND: &str = "suite";

/// One workload's part of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorkloadReport {
    pub name: String,
    #[serde(default)]
    pub tags: Vec<String>,
    /// The baseline compared with (empty when none was found).
    pub baseline: String,
    /// Wall time of the workload's profiled run(s) in seconds (absent for `--input`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    pub report: Report,
}

/// Everything a suite run decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SuiteReport {
    pub schema_version: u32,
    pub kind: String,
    pub ncugate_version: String,
    pub outcome: Outcome,
    pub exit_code: i32,
    /// This run's shard (`"2/3"`); absent for an unsharded or merged run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", regex(pattern = r"^[1-9][0-9]*/[1-9][0-9]*$"))]
    pub shard: Option<Shard>,
    /// The shard reports a merged report was made from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<String>,
    /// Every workload selected for the run, before sharding, in config order.
    pub suite: Vec<String>,
    /// The workloads this run was to gate (its shard of `suite`).
    pub planned: Vec<String>,
    /// SHA-256 over each workload's name and thresholds text.
    pub thresholds_sha256: String,
    /// SHA-256 over the baseline files of the suite's workloads.
    pub baselines_sha256: String,
    /// The SHA-256 of each of those files, by its path in the baselines folder
    /// (`fp64/nvidia-h200-cc90-132sm.json`); merge names the files shards saw differently.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub baseline_files: BTreeMap<String, String>,
    pub workloads: Vec<WorkloadReport>,
}

impl SuiteReport {
    /// A report with the given workloads; outcome and exit code from them.
    pub fn new(
        shard: Option<Shard>,
        suite: Vec<String>,
        planned: Vec<String>,
        thresholds_sha256: String,
        baselines_sha256: String,
        workloads: Vec<WorkloadReport>,
    ) -> SuiteReport {
        let mut report = SuiteReport {
            schema_version: SUITE_SCHEMA_VERSION,
            kind: KIND.into(),
            ncugate_version: env!("CARGO_PKG_VERSION").into(),
            outcome: Outcome::Pass,
            exit_code: crate::exit::PASS,
            shard,
            merged_from: Vec::new(),
            suite,
            planned,
            thresholds_sha256,
            baselines_sha256,
            baseline_files: BTreeMap::new(),
            workloads,
        };
        report.finish();
        report
    }

    /// Error if any workload errored, else regression if any regressed, else pass.
    pub fn finish(&mut self) {
        let outcomes = self.workloads.iter().map(|w| w.report.outcome);
        self.outcome = outcomes.fold(Outcome::Pass, |acc, o| match (acc, o) {
            (Outcome::Error, _) | (_, Outcome::Error) => Outcome::Error,
            (Outcome::Regression, _) | (_, Outcome::Regression) => Outcome::Regression,
            _ => Outcome::Pass,
        });
        self.exit_code = self.outcome.exit_code();
    }

    /// The names of the workloads with `outcome`.
    pub fn with_outcome(&self, outcome: Outcome) -> Vec<&str> {
        self.workloads
            .iter()
            .filter(|w| w.report.outcome == outcome)
            .map(|w| w.name.as_str())
            .collect()
    }

    /// One line: `REGRESSION (exit 1): 3 workloads — 1 regressed (infer), 2 passed`.
    pub fn headline(&self) -> String {
        let word = self.outcome.title();
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
            self.exit_code,
            if n == 1 { "" } else { "s" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(name: &str, outcome: Outcome) -> WorkloadReport {
        let mut report = Report::empty("b.json", vec![], vec![], "t");
        report.outcome = outcome;
        report.exit_code = outcome.exit_code();
        WorkloadReport {
            name: name.into(),
            tags: vec![],
            baseline: "b.json".into(),
            seconds: None,
            report,
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
        assert_eq!(r([Pass, Pass, Pass]).exit_code, 0);
        let reg = r([Pass, Regression, Pass]);
        assert_eq!(reg.exit_code, 1);
        assert_eq!(
            reg.headline(),
            "REGRESSION (exit 1): 3 workloads — 1 regressed (b), 2 passed"
        );
        let err = r([Regression, Error, Pass]);
        assert_eq!(err.exit_code, 2);
        assert!(err.headline().contains("1 errored (b), 1 regressed (a)"));
    }
}
