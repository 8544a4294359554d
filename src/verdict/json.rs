//! A report as its JSON holds it: what `--json` writes and
//! `schemas/report.v2.json` describes. The outcome and the exit code are
//! not fields of [`Report`] (they are computed from its checks, see
//! [`Report::outcome`]), yet the JSON has always had them, third and
//! fourth: [`Written`] lists the JSON's fields in its order, the model's
//! own and the computed ones (serde's `remote` mirror, whose `getter`s call
//! the model), so serializing a report writes the verdict computed on
//! write, borrowing the report, and its schema is the JSON's.
//!
//! The field documentation below is the schema's: it describes the JSON.

use super::{CodeResult, Devices, FindingResult, Report, RuleResult, StructureResult, Subject};
use crate::status::Outcome;
use serde::{Deserialize, Serialize, Serializer};
use std::sync::Arc;

/// Everything a reporter needs.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(remote = "Report")]
pub(super) struct Written {
    pub(crate) schema_version: u32,
    pub(crate) ncugate_version: String,
    #[serde(getter = "Report::outcome")]
    pub(crate) outcome: Outcome,
    #[serde(getter = "Report::exit_code")]
    pub(crate) exit_code: i32,
    /// What was gated: the metric gate, a compute-sanitizer run, the graph-memory audit.
    pub(crate) subject: Subject,
    /// The baseline file (metric gate only; empty otherwise).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) baseline: String,
    pub(crate) inputs: Vec<String>,
    pub(crate) details: Vec<String>,
    /// The thresholds file (metric gate only; empty otherwise).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) thresholds: String,
    pub(crate) kernel_key: crate::model::KernelKeyMode,
    pub(crate) devices: Option<Devices>,
    /// Errors that made the outcome `error`, each `message (hint: …)`.
    pub(crate) errors: Vec<String>,
    pub(crate) structure: Vec<StructureResult>,
    pub(crate) rules: Vec<RuleResult>,
    pub(crate) findings: Vec<FindingResult>,
    /// Per kernel, whether its machine code changed since the baseline (when
    /// both sides came from reports that embed it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) code: Vec<CodeResult>,
    /// Per explained kernel, the source lines (or opcodes) whose counters
    /// changed most since the baseline's source profile.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) explain: Vec<crate::explain::Explained>,
    /// compute-sanitizer findings, grouped (empty when the sanitizer stage did not run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) sanitizer: Vec<crate::sanitizer::SanitizerFinding>,
    /// Graph-memory checks (empty when the memory stage did not run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) memory: Vec<crate::memory::MemoryResult>,
    /// What profiling each input cost: launches, ncu's replay passes per kernel, seconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) profiling: Vec<crate::runner::passes::Profiling>,
    /// Things a reader should know that are not checks (e.g. findings not compared).
    pub(crate) notes: Vec<crate::note::Note>,
    /// Set when the GPU was shared during the check's run (another process
    /// on it, or an SM clock well under the baseline's): what showed it and
    /// how many rules were not gated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shared_gpu: Option<crate::shared_gpu::SharedGpu>,
    /// The baseline kernels compared under their current key (the rows
    /// name the current one): a kernel whose key changed with the code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) renamed: Vec<super::Renamed>,
    /// Set when the check ran degraded: ncu could not read the performance
    /// counters and trace mode gated the launch structure alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) degraded: Option<super::Degraded>,
}

impl Serialize for Report {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Written::serialize(self, serializer)
    }
}

impl schemars::JsonSchema for Report {
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

/// Fails to compile when [`Report`] gains a field, so that whoever adds one
/// also decides here whether [`Written`] writes it (a field the mirror does
/// not list is silently left out of the JSON); `trends` and `libraries`
/// are never written.
#[allow(dead_code)]
fn every_field_is_written(report: &Report) {
    let Report {
        schema_version: _,
        ncugate_version: _,
        subject: _,
        baseline: _,
        inputs: _,
        details: _,
        thresholds: _,
        kernel_key: _,
        devices: _,
        errors: _,
        structure: _,
        rules: _,
        findings: _,
        code: _,
        explain: _,
        trends: _,
        libraries: _,
        sanitizer: _,
        memory: _,
        profiling: _,
        notes: _,
        shared_gpu: _,
        renamed: _,
        degraded: _,
    } = report;
}

/// A rule result's downgrade as the JSON has always written it, in two
/// fields: flattened into the result's object, last.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
pub(super) struct DowngradeFields {
    /// Set when the rule was not gated because the GPU was shared and the
    /// metric is one another process can move (`environment = "sensitive"`):
    /// the evidence. The status is then at worst `warn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    not_gated: Option<Arc<String>>,
    /// Set when a failing result is a warning that is not gated: why (its
    /// message starts `not gated (…): `). Reports written before it have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    downgraded: Option<Downgraded>,
}

/// Why a failing rule result is a warning that is not gated.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[schemars(rename = "Downgrade")]
enum Downgraded {
    /// The GPU was shared and the metric is one another process can move
    /// (`[gate] shared_gpu = "warn"`).
    SharedGpu {
        /// The first part of the evidence: the neighbour, or the clock (the
        /// report's `shared_gpu` has all of it).
        neighbour: String,
    },
    /// A timing-only failure of a kernel whose machine code, instruction
    /// counts, launches and launch configuration are unchanged
    /// (`--environmental warn`).
    Environmental,
    /// A rule that does not measure time, of a kernel whose code varies
    /// between runs (an autotuner or JIT builds it another way), or of the
    /// whole run where such kernels' change explains its own; any rule of
    /// a kernel whose launches an autotuner moved between its picks:
    /// `not_gated` says what showed it.
    CodeVaries,
}

/// `#[serde(with)]` of [`RuleResult::downgrade`]: the typed downgrade to
/// and from the two JSON fields. What ncugate writes reads back into the
/// same value (a `downgraded` neighbour is the first part of `not_gated`,
/// so it is not kept twice). Anything else a file may say reads into a
/// value the validating reader (`crate::suite::read`) refuses with the
/// report at hand — a shared-GPU downgrade without evidence, an
/// environmental one with a shared GPU's — or, for a neighbour that is not
/// the start of the evidence, is refused here, where it is seen.
pub(super) mod downgrade {
    use super::{DowngradeFields, Downgraded};
    use crate::verdict::{Downgrade, Reason};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        downgrade: &Option<Downgrade>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let fields = match downgrade {
            None => DowngradeFields {
                not_gated: None,
                downgraded: None,
            },
            Some(d) => DowngradeFields {
                not_gated: d.evidence.clone(),
                downgraded: d.failed.then(|| match d.reason {
                    Reason::SharedGpu => Downgraded::SharedGpu {
                        neighbour: d.neighbour().to_string(),
                    },
                    Reason::Environmental => Downgraded::Environmental,
                    Reason::CodeVaries => Downgraded::CodeVaries,
                    // Never a failure made a warning: the rule was not measured.
                    Reason::CountersLocked => Downgraded::Environmental,
                }),
            },
        };
        fields.serialize(serializer)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Downgrade>, D::Error> {
        let DowngradeFields {
            not_gated,
            downgraded,
        } = DowngradeFields::deserialize(deserializer)?;
        let reason = match (&not_gated, &downgraded) {
            (None, None) => return Ok(None),
            (Some(why), None) if **why == crate::verdict::COUNTERS_LOCKED => Reason::CountersLocked,
            (Some(why), None) if why.starts_with(crate::verdict::CODE_VARIES) => Reason::CodeVaries,
            (_, Some(Downgraded::CodeVaries)) => Reason::CodeVaries,
            (_, Some(Downgraded::Environmental)) => Reason::Environmental,
            (_, Some(Downgraded::SharedGpu { .. })) | (Some(_), None) => Reason::SharedGpu,
        };
        // A neighbour that is not the first part of the evidence would be
        // lost on writing the report back: refused here, where it is seen.
        if let (Some(Downgraded::SharedGpu { neighbour }), Some(evidence)) =
            (&downgraded, &not_gated)
            && evidence.split("; ").next() != Some(neighbour.as_str())
        {
            return Err(serde::de::Error::custom(format!(
                "`downgraded.neighbour` \"{neighbour}\" is not the start of `not_gated`"
            )));
        }
        Ok(Some(Downgrade {
            reason,
            evidence: not_gated,
            failed: downgraded.is_some(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::verdict::{Reason, Report, RuleResult};
    use serde_json::{Value, json};

    /// A rule row as ncugate writes it, with `fields` in place of its downgrade's.
    fn row(fields: Value) -> Value {
        let mut row = json!({
            "kernel": "k", "rule": "r", "metric": "gpu__time_duration.sum",
            "per": "kernel", "aggregate": "sum", "worse": "higher",
            "severity": "fail", "line": 3, "unit": "ns",
            "baseline": {"n": 3, "mean": 100.0, "stddev": 1.0, "min": 99.0, "max": 101.0},
            "current": 150.0, "current_runs": [150.0], "change_pct": 50.0,
            "allowance": 10.0, "limit": null, "status": "warn",
            "message": "m", "why": null
        });
        if let (Some(row), Some(fields)) = (row.as_object_mut(), fields.as_object()) {
            row.extend(fields.clone());
        }
        row
    }

    fn read(row: &Value) -> Result<RuleResult, serde_json::Error> {
        serde_json::from_value(row.clone())
    }

    #[test]
    fn what_ncugate_writes_of_a_downgrade_reads_back_as_it_was() {
        let evidence = "GPU shared with pid 7 python3, 1.2 GB; SM clock 1458 MHz";
        for (fields, reason, failed) in [
            (json!({}), None, false),
            (
                json!({"not_gated": evidence}),
                Some(Reason::SharedGpu),
                false,
            ),
            (
                json!({"not_gated": evidence,
                    "downgraded": {"reason": "shared_gpu", "neighbour": "GPU shared with pid 7 python3, 1.2 GB"}}),
                Some(Reason::SharedGpu),
                true,
            ),
            (
                json!({"downgraded": {"reason": "environmental"}}),
                Some(Reason::Environmental),
                true,
            ),
            (
                json!({"not_gated": crate::verdict::COUNTERS_LOCKED}),
                Some(Reason::CountersLocked),
                false,
            ),
            (
                json!({"not_gated": "code varies between runs: 2 builds in the 3 recorded runs"}),
                Some(Reason::CodeVaries),
                false,
            ),
            (
                json!({"not_gated": "code varies between runs: 2 builds in the 3 recorded runs",
                    "downgraded": {"reason": "code_varies"}}),
                Some(Reason::CodeVaries),
                true,
            ),
        ] {
            let written = row(fields);
            let r = read(&written).expect("a row ncugate writes");
            assert_eq!(r.downgrade.as_ref().map(|d| d.reason), reason);
            assert_eq!(r.downgraded(), failed);
            assert_eq!(serde_json::to_value(&r).ok(), Some(written));
        }
    }

    #[test]
    fn a_neighbour_that_is_not_the_evidence_is_refused() {
        let tampered = row(json!({"not_gated": "GPU shared with pid 7",
            "downgraded": {"reason": "shared_gpu", "neighbour": "pid 8"}}));
        let error = read(&tampered).err().map(|e| e.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|e| e.contains("is not the start of `not_gated`")),
            "{error:?}"
        );
    }

    #[test]
    fn the_verdict_is_written_computed_and_never_read() {
        let mut report = Report::empty("b.json", vec![], vec![], "t.toml");
        report.errors.push("ncu failed".into());
        let mut json = serde_json::to_value(&report).expect("JSON");
        assert_eq!(
            (&json["outcome"], &json["exit_code"]),
            (&json!("error"), &json!(2))
        );
        json["outcome"] = "pass".into();
        json["exit_code"] = 0.into();
        let read: Report = serde_json::from_value(json).expect("a report");
        assert_eq!(read.exit_code(), 2, "the written verdict is ignored");
    }
}
