//! [`ReportError`] and [`MergeError`]: the JSON reports `ncugate merge` and
//! `ncugate history record` read, and the sets of them merge refuses to join.

/// What is wrong with one report given to `ncugate merge` or `ncugate
/// history record` (shown as `PATH: message`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportError {
    #[error("not a JSON report ({reason})")]
    NotJson { reason: String },
    #[error("not a suite report (it has no \"kind\": \"suite\")")]
    NotSuite,
    /// `found` is the version it has, `None` when it has none.
    #[error(
        "suite report schema_version {} (this ncugate reads {reads})",
        .found.map_or("missing".to_string(), |v| v.to_string())
    )]
    SchemaVersion { found: Option<u64>, reads: u32 },
    /// A single check's report of a version this ncugate does not read
    /// (`found`: `None` when it has none).
    #[error(
        "report schema_version {} (this ncugate reads {reads})",
        .found.map_or("missing".to_string(), |v| v.to_string())
    )]
    CheckSchemaVersion { found: Option<u64>, reads: u32 },
    #[error("invalid suite report: {reason}")]
    Invalid { reason: String },
    /// A single check's report whose JSON is not a report's shape.
    #[error("invalid report: {reason}")]
    InvalidCheck { reason: String },
    /// A row that the baseline and thresholds files it names do not make.
    #[error(
        "workload `{workload}`: {differs}: the row was not made from the files the report names"
    )]
    Recomputed { workload: String, differs: String },
    /// `NCUGATE_REPORT_KEY` is set and the report carries no signature.
    #[error(
        "the report is not signed, and NCUGATE_REPORT_KEY is set: only signed reports are read"
    )]
    Unsigned,
    /// The report's signature is not the one the key makes of its bytes.
    #[error(
        "the report's signature does not match its content: it was changed after it was signed, or signed with another key"
    )]
    BadSignature,
    /// Two entries for one key: serde would keep the last (`"status"` twice).
    #[error("{reason}")]
    DuplicateKey { reason: String },
    /// A workload name that is not safe as a file name (it names a folder of the HTML report).
    #[error("workload name `{name}` is not safe as a file name")]
    UnsafeName { name: String },
    #[error("workload `{workload}`: report schema_version {found} (this ncugate reads {reads})")]
    WorkloadSchemaVersion {
        workload: String,
        found: u32,
        reads: u32,
    },
    /// A written outcome that the checks (of `workload`, or of the whole
    /// report's workloads) recomputed contradict.
    #[error(
        "{} says {says} (exit {says_exit}) but its {} make it {makes} (exit {makes_exit})",
        .workload.as_ref().map_or("the report".to_string(), |w| format!("workload `{w}`")),
        if .workload.is_some() { "checks" } else { "workloads" }
    )]
    Contradicted {
        workload: Option<String>,
        says: String,
        says_exit: i32,
        makes: String,
        makes_exit: i32,
    },
    #[error("workload `{workload}` has no check that ran (every check skipped, or none)")]
    NothingGated { workload: String },
    /// A rule row whose status its own numbers (current value, baseline
    /// mean, allowance, limit) contradict, or a structural row whose launch
    /// counts do: they fail it and it says otherwise.
    /// `row` names it and what it says, `numbers` are its numbers.
    #[error("workload `{workload}`: {row}, but its numbers fail it ({numbers})")]
    RowContradicted {
        workload: String,
        row: String,
        numbers: String,
    },
    /// A row whose per-run samples are not the ones its own value was made
    /// of (a rule's `current` is the mean of its `current_runs`), or that
    /// count other runs than the report's other rows, or launch counts that
    /// add up to more launches than the report says its runs profiled: the
    /// history would keep the samples as baseline material.
    #[error("workload `{workload}`: {row} disagrees with its per-run samples ({numbers})")]
    SamplesDisagree {
        workload: String,
        row: String,
        numbers: String,
    },
    /// A rule row left ungated without the evidence for it in its report:
    /// `row` names it and why it says it is not gated (shared GPU,
    /// environmental), `missing` what is missing or wrong.
    #[error("workload `{workload}`: {row}, but {missing}")]
    Unevidenced {
        workload: String,
        row: String,
        missing: String,
    },
}

impl ReportError {
    /// The `hint:` line: the fix.
    pub(crate) fn hint(&self) -> String {
        match self {
            ReportError::NotJson { .. } => "pass the files written by `ncugate check --json FILE`",
            ReportError::NotSuite => "merge the --json reports of `ncugate check` runs of a suite (with [[workload]] tables, --workload or --shard)",
            ReportError::SchemaVersion { .. } => "merge with the ncugate version that wrote the shards",
            ReportError::CheckSchemaVersion { .. } => "read it with the ncugate version that wrote it",
            ReportError::Recomputed { .. } => "run it in the checkout the checks ran in, on the reports as `ncugate check` wrote them; if the baselines or thresholds changed since, check again",
            ReportError::Unsigned => "run `ncugate check` with the same NCUGATE_REPORT_KEY secret so it signs its report, or unset the variable to read unsigned reports",
            ReportError::BadSignature => "use the report exactly as `ncugate check` wrote it, checked with the key it was signed with (the same NCUGATE_REPORT_KEY secret)",
            ReportError::Invalid { .. }
            | ReportError::InvalidCheck { .. }
            | ReportError::DuplicateKey { .. } => "pass the files exactly as `ncugate check --json` wrote them",
            ReportError::UnsafeName { .. }
            | ReportError::WorkloadSchemaVersion { .. }
            | ReportError::Contradicted { .. }
            | ReportError::RowContradicted { .. }
            | ReportError::SamplesDisagree { .. }
            | ReportError::Unevidenced { .. }
            | ReportError::NothingGated { .. } => "pass the files exactly as `ncugate check --json` wrote them (was the report edited?)",
        }
        .into()
    }
}

/// Reports that cannot be merged into one verdict (shown as `cannot merge: …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("no reports given")]
    NoReports,
    #[error("the reports hold no workload: nothing was gated")]
    NoWorkloads,
    /// Two reports made with different `what` (ncugate versions, thresholds, baselines).
    #[error("{first} and {other} were made with different {what} ({a} vs {b})")]
    Different {
        first: String,
        other: String,
        what: Made,
        a: String,
        b: String,
    },
    /// Two shards that read a baseline file with different content (or only one of them had it).
    #[error("{first} and {other} were made with different baselines: {files}")]
    DifferentBaselineFiles {
        first: String,
        other: String,
        files: String,
    },
    #[error("some reports are shards and some are not")]
    ShardsAndNot,
    #[error("--expect-shards {expected}, but no report is a shard")]
    ExpectedShards { expected: u32 },
    #[error("workload `{workload}` is reported twice ({first} and {second})")]
    Twice {
        workload: String,
        first: String,
        second: String,
    },
    #[error("workload `{workload}` of the suite is in no report")]
    NotReported { workload: String },
    #[error("--expect-shards {expected}, but {report} is shard {shard}")]
    ShardCount {
        expected: u32,
        report: String,
        shard: String,
    },
    #[error("{first} is shard {first_shard} but {other} is shard {other_shard}")]
    MixedCounts {
        first: String,
        first_shard: String,
        other: String,
        other_shard: String,
    },
    #[error("{first} and {other} split different suites ({a} vs {b})")]
    DifferentSuites {
        first: String,
        other: String,
        a: String,
        b: String,
    },
    #[error("{report} (shard {shard}) planned workload `{workload}` but has no result for it")]
    Unfinished {
        report: String,
        shard: String,
        workload: String,
    },
    #[error("shard {index}/{count} is missing")]
    MissingShard { index: u32, count: u32 },
    #[error("shard {index}/{count} is given twice ({})", .reports.join(", "))]
    ShardTwice {
        index: u32,
        count: u32,
        reports: Vec<String>,
    },
}

/// What two shards must have been made with alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Made {
    NcugateVersions,
    Thresholds,
    Baselines,
}

impl std::fmt::Display for Made {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Made::NcugateVersions => "ncugate versions",
            Made::Thresholds => "thresholds",
            Made::Baselines => "baselines",
        })
    }
}

impl MergeError {
    /// The `hint:` line: the fix.
    pub(crate) fn hint(&self) -> String {
        use MergeError as E;
        match self {
            E::NoReports => "pass the shards' JSON reports",
            E::NoWorkloads => "check that the shards selected workloads (--workload, --tag, [[workload]] tables)",
            E::Different { what: Made::NcugateVersions, .. } => "run every shard with the same ncugate version",
            E::Different { what: Made::Thresholds, .. } => "run every shard from the same commit (same thresholds files)",
            E::Different { what: Made::Baselines, .. } | E::DifferentBaselineFiles { .. } => "run every shard from the same commit (same baselines folder)",
            E::ShardsAndNot => "merge either the N shards of one run, or separate unsharded runs",
            E::ExpectedShards { .. } => "drop --expect-shards, or merge the reports of `check --shard K/N`",
            E::Twice { .. } => "each workload must be gated once: merge one report per shard",
            E::NotReported { .. } => "a shard stopped before gating it: rerun that shard",
            E::ShardCount { .. } => "run shards 1/N … N/N with the N you expect",
            E::MixedCounts { .. } => "every shard of one run uses the same N",
            E::DifferentSuites { .. } => "run every shard with the same config, --workload and --tag",
            E::Unfinished { .. } => "the shard stopped early: rerun it",
            E::MissingShard { .. } => "pass the JSON report of every shard 1/N … N/N (did one runner fail to upload its report?)",
            E::ShardTwice { .. } => "pass each shard's report once",
        }
        .into()
    }
}
