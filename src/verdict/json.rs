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
use serde::{Serialize, Serializer};

/// Everything a reporter needs.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(remote = "Report")]
pub(super) struct Written {
    pub schema_version: u32,
    pub ncugate_version: String,
    #[serde(getter = "Report::outcome")]
    pub outcome: Outcome,
    #[serde(getter = "Report::exit_code")]
    pub exit_code: i32,
    /// What was gated: the metric gate, a compute-sanitizer run, the graph-memory audit.
    pub subject: Subject,
    /// The baseline file (metric gate only; empty otherwise).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub baseline: String,
    pub inputs: Vec<String>,
    pub details: Vec<String>,
    /// The thresholds file (metric gate only; empty otherwise).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub thresholds: String,
    pub kernel_key: crate::model::KernelKeyMode,
    pub devices: Option<Devices>,
    /// Errors that made the outcome `error`, each `message (hint: …)`.
    pub errors: Vec<String>,
    pub structure: Vec<StructureResult>,
    pub rules: Vec<RuleResult>,
    pub findings: Vec<FindingResult>,
    /// Per kernel, whether its machine code changed since the baseline (when
    /// both sides came from reports that embed it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub code: Vec<CodeResult>,
    /// Per explained kernel, the source lines (or opcodes) whose counters
    /// changed most since the baseline's source profile.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub explain: Vec<crate::explain::Explained>,
    /// compute-sanitizer findings, grouped (empty when the sanitizer stage did not run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sanitizer: Vec<crate::sanitizer::SanitizerFinding>,
    /// Graph-memory checks (empty when the memory stage did not run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<crate::memory::MemoryResult>,
    /// What profiling each input cost: launches, ncu's replay passes per kernel, seconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiling: Vec<crate::runner::passes::Profiling>,
    /// Things a reader should know that are not checks (e.g. findings not compared).
    pub notes: Vec<String>,
    /// Set when the GPU was shared during the check's run (another process
    /// on it, or an SM clock well under the baseline's): what showed it and
    /// how many rules were not gated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_gpu: Option<crate::shared_gpu::SharedGpu>,
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
/// not list is silently left out of the JSON); `trends` is never written.
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
        sanitizer: _,
        memory: _,
        profiling: _,
        notes: _,
        shared_gpu: _,
    } = report;
}
