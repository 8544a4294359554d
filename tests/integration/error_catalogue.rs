//! Every error variant as `ncugate` prints it (`ncugate: error: …`, the
//! detail, `hint: …`), in one snapshot. The `name` functions match without a
//! wildcard, so a new variant does not compile until it has a sample here.

use ncugate::error::HistoryError;
use ncugate::error::{
    BaselineError, ConfigError, Error, ExportError, FileKind, Made, MergeError, MetricNear,
    NcuFailure, ProcessError, ReportError, SanitizerFailure, ToolError,
};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

fn io(kind: ErrorKind) -> std::io::Error {
    std::io::Error::from(kind)
}

fn p(path: &str) -> PathBuf {
    PathBuf::from(path)
}

fn s(text: &str) -> String {
    text.to_string()
}

fn config_errors() -> Vec<ConfigError> {
    use ConfigError as E;
    vec![
        E::CommandLine {
            message: s("error: unexpected argument '--bogus' found"),
        },
        E::InvalidValue {
            flag: s("--mode"),
            value: s("fastest"),
            why: s("not a value it takes"),
            suggested: Some(s("fast")),
            valid: vec![s("fast"), s("full")],
        },
        E::InvalidValue {
            flag: s("--env"),
            value: s("X"),
            why: s("expected KEY=VALUE"),
            suggested: None,
            valid: vec![],
        },
        E::InvalidVariable {
            message: s("invalid value 'sometimes' for '--leak-check'"),
        },
        E::NotApplicable {
            flag: s("--runs"),
            because: s("to exports given with --input"),
            instead: s(" (each export is one run)"),
        },
        E::UnbalancedBuild {
            command: s("make 'all"),
        },
        E::UnbalancedAnswer {
            answer: s("./app 'a b"),
        },
        E::InvalidShard { given: s("3/2") },
        E::ZeroRuns,
        E::InputAndApp,
        E::NoBaselineForInputs,
        E::NoInput,
        E::NoAppToProfile,
        E::NoConfigFile,
        E::NoAppToSanitize,
        E::NoAppToAudit,
        E::NoAppToInit,
        E::InitWouldOverwrite {
            existing: vec![s("ncugate.toml")],
        },
        E::InitWouldOverwrite {
            existing: vec![s("ncugate.toml"), s("thresholds.toml")],
        },
        E::AppAndWorkloads,
        E::BaselineAndWorkloads,
        E::SkipMaxAge { value: s("soon") },
        E::InputsGlob {
            name: s("train"),
            pattern: s("src/[a"),
            why: s("invalid range pattern"),
        },
        E::DuplicateWorkload { name: s("train") },
        E::WorkloadWithoutCommand { name: s("train") },
        E::UnsafeWorkloadName { name: s("../x") },
        E::NoSuchWorkload {
            name: s("trian"),
            known: vec![s("train"), s("infer")],
            suggested: Some(s("train")),
        },
        E::NoSuchTag {
            tag: s("nighty"),
            known: vec![s("nightly")],
            suggested: Some(s("nightly")),
        },
        E::NoSuchTag {
            tag: s("nightly"),
            known: vec![],
            suggested: None,
        },
        E::OneWorkloadFlag {
            flag: s("--baseline"),
            selected: vec![s("train"), s("infer")],
        },
        E::ShardWithOneWorkloadFlag {
            flag: s("--baseline"),
        },
        E::InvalidAllowPattern {
            pattern: s("(["),
            reason: s("unclosed group"),
        },
        E::AllowWithoutReason { pattern: s("leak") },
        E::WorkFoldersBusy {
            processes: 64,
            folder: p("ncugate-out/train"),
        },
    ]
}

fn config_name(e: &ConfigError) -> &'static str {
    use ConfigError as E;
    match e {
        E::CommandLine { .. } => "CommandLine",
        E::InvalidValue { .. } => "InvalidValue",
        E::InvalidVariable { .. } => "InvalidVariable",
        E::NotApplicable { .. } => "NotApplicable",
        E::UnbalancedBuild { .. } => "UnbalancedBuild",
        E::UnbalancedAnswer { .. } => "UnbalancedAnswer",
        E::InvalidShard { .. } => "InvalidShard",
        E::ZeroRuns => "ZeroRuns",
        E::InputAndApp => "InputAndApp",
        E::NoBaselineForInputs => "NoBaselineForInputs",
        E::NoInput => "NoInput",
        E::NoAppToProfile => "NoAppToProfile",
        E::NoConfigFile => "NoConfigFile",
        E::NoAppToSanitize => "NoAppToSanitize",
        E::NoAppToAudit => "NoAppToAudit",
        E::NoAppToInit => "NoAppToInit",
        E::InitWouldOverwrite { .. } => "InitWouldOverwrite",
        E::AppAndWorkloads => "AppAndWorkloads",
        E::BaselineAndWorkloads => "BaselineAndWorkloads",
        E::SkipMaxAge { .. } => "SkipMaxAge",
        E::InputsGlob { .. } => "InputsGlob",
        E::DuplicateWorkload { .. } => "DuplicateWorkload",
        E::WorkloadWithoutCommand { .. } => "WorkloadWithoutCommand",
        E::UnsafeWorkloadName { .. } => "UnsafeWorkloadName",
        E::NoSuchWorkload { .. } => "NoSuchWorkload",
        E::NoSuchTag { .. } => "NoSuchTag",
        E::OneWorkloadFlag { .. } => "OneWorkloadFlag",
        E::ShardWithOneWorkloadFlag { .. } => "ShardWithOneWorkloadFlag",
        E::InvalidAllowPattern { .. } => "InvalidAllowPattern",
        E::AllowWithoutReason { .. } => "AllowWithoutReason",
        E::WorkFoldersBusy { .. } => "WorkFoldersBusy",
    }
}

fn export_errors() -> Vec<ExportError> {
    use ExportError as E;
    vec![
        E::Empty,
        E::NoKernels,
        E::Binary,
        E::NcuComplained {
            lines: 3,
            said: s("==ERROR== unrecognised option '--sectoin'"),
        },
        E::ResultsInReport {
            lines: 12,
            report: s("/tmp/run.ncu-rep"),
        },
        E::TextReport { lines: 40 },
        E::Truncated,
        E::DetailsPageAsInput,
        E::NotRawPage,
        E::GuiSummaryPage,
        E::NoUnitsRow,
        E::HeaderOnly,
        E::FieldCount {
            line: 7,
            fields: 12,
            width: 40,
        },
        E::UnknownSmCount {
            line: 3,
            column: s("device__attribute_multiprocessor_count"),
            value: s("n/a"),
        },
        E::ImpossibleValue {
            line: 4,
            metric: s("gpu__time_duration.sum"),
            value: s("-5"),
            problem: s("a duration is never negative"),
        },
        E::SumOverflows {
            line: 9,
            metric: s("dram__bytes.sum"),
        },
        E::NotNumeric {
            line: 3,
            metric: s("launch__func_cache_config"),
            value: s("CachePreferNone"),
        },
        E::AmbiguousMetric {
            metric: s("Duration"),
            first: s("GPU Speed Of Light Throughput"),
            second: s("Launch Statistics"),
            label: s("Duration"),
        },
        E::DifferentGpus {
            gpu: s("NVIDIA H200 (sm_90, 132 SMs)"),
            other: s("run1.csv"),
            other_gpu: s("NVIDIA A100 (sm_80, 108 SMs)"),
        },
        E::DifferentGraphModes {
            mode: s("graph"),
            other: s("run1.csv"),
            other_mode: s("node"),
        },
        E::DifferentUnits {
            metric: s("dram__bytes.sum"),
            unit: s("byte"),
            other_unit: s("Mbyte"),
            other: s("run1.csv"),
        },
        E::MissingValues {
            metric: s("sm__inst_executed.sum"),
            scope: s("kernel `scale`"),
        },
        E::NotAvailable {
            metric: s("dramc__throughput.avg.pct_of_peak_sustained_elapsed"),
        },
        E::MissingMetric {
            metric: s("sys__memory_throughput"),
            near: MetricNear::NotAnNcuMetric,
        },
        E::MissingMetric {
            metric: s("sm__inst_exectued.sum"),
            near: MetricNear::InExport(s("sm__inst_executed.sum")),
        },
        E::MissingMetric {
            metric: s("smsp__inst_executed.sum"),
            near: MetricNear::KnownToNcu(s("sm__inst_executed.sum")),
        },
        E::MissingMetric {
            metric: s("zz__nothing"),
            near: MetricNear::Nothing,
        },
        E::ReportUnsupported {
            reason: s("report format version 6 (this ncugate reads version 7)"),
        },
        E::NvbenchMalformed {
            reason: s(
                "benchmark 2 (`copy_sweep_grid_shape`), state 5: summary `nv/cold/time/gpu/mean` has value \"fast\", not a number",
            ),
        },
        E::ReportCorrupt {
            reason: s("block 2 ends 1,024 bytes past the end of the file"),
        },
        E::ReportRepeatedMetric {
            kernel: s("scale(float*, int)"),
            result: 4,
            metric: s("gpu__time_duration.sum"),
        },
        E::ReportOverBudget {
            limit: 21_193_216,
            per_byte: 16,
            beyond: 16_777_216,
        },
        E::ReportDecodeOverBudget {
            limit: 61_048_636,
            per_byte: 20,
            beyond: 1_048_576,
        },
        E::ReportInflateOverBudget {
            limit: 27_017_216,
            per_byte: 256,
            beyond: 16_777_216,
        },
        E::ContradictoryColumns {
            line: 3,
            metric: s("sm__inst_executed.sum"),
            first: 12,
            first_value: s("55,050,240"),
            second: 40,
            second_value: s("45,000,000"),
        },
        E::ContradictoryRows {
            line: 18,
            metric: s("sm__inst_executed.sum"),
            place: s("Compute Workload Analysis"),
            first_value: s("55050240"),
            second_value: s("45000000"),
        },
        E::SameExportTwice {
            first: s("r1.csv"),
            digest: s("ae957444a059"),
        },
        E::SameRunTwice {
            first: s("r1.ncu-rep"),
            processes: s("process 3089"),
            metric: s("gpu__time_duration.sum"),
        },
        E::DifferentKernels {
            kernel: s("scale"),
            other: s("r1.csv"),
        },
        E::StatisticsOverflow {
            metric: s("sm__inst_executed.sum"),
            scope: s("kernel `scale`"),
            aggregate: s("sum"),
        },
        E::CounterReadZero {
            kernel: s("scale"),
            launches: 3,
            metric: s("sm__inst_executed.sum"),
            all: Some(6),
        },
        E::OutsideWindow {
            kernel: s("finish"),
            count: 100,
            skip: 0,
        },
    ]
}

fn export_name(e: &ExportError) -> &'static str {
    use ExportError as E;
    match e {
        E::Empty => "Empty",
        E::NoKernels => "NoKernels",
        E::Binary => "Binary",
        E::NcuComplained { .. } => "NcuComplained",
        E::ResultsInReport { .. } => "ResultsInReport",
        E::TextReport { .. } => "TextReport",
        E::Truncated => "Truncated",
        E::DetailsPageAsInput => "DetailsPageAsInput",
        E::NotRawPage => "NotRawPage",
        E::GuiSummaryPage => "GuiSummaryPage",
        E::NoUnitsRow => "NoUnitsRow",
        E::HeaderOnly => "HeaderOnly",
        E::FieldCount { .. } => "FieldCount",
        E::UnknownSmCount { .. } => "UnknownSmCount",
        E::ImpossibleValue { .. } => "ImpossibleValue",
        E::SumOverflows { .. } => "SumOverflows",
        E::NotNumeric { .. } => "NotNumeric",
        E::AmbiguousMetric { .. } => "AmbiguousMetric",
        E::DifferentGpus { .. } => "DifferentGpus",
        E::DifferentGraphModes { .. } => "DifferentGraphModes",
        E::DifferentUnits { .. } => "DifferentUnits",
        E::MissingValues { .. } => "MissingValues",
        E::ReportUnsupported { .. } => "ReportUnsupported",
        E::ReportCorrupt { .. } => "ReportCorrupt",
        E::NvbenchMalformed { .. } => "NvbenchMalformed",
        E::ReportRepeatedMetric { .. } => "ReportRepeatedMetric",
        E::ReportOverBudget { .. } => "ReportOverBudget",
        E::ReportDecodeOverBudget { .. } => "ReportDecodeOverBudget",
        E::ReportInflateOverBudget { .. } => "ReportInflateOverBudget",
        E::ContradictoryColumns { .. } => "ContradictoryColumns",
        E::ContradictoryRows { .. } => "ContradictoryRows",
        E::SameExportTwice { .. } => "SameExportTwice",
        E::SameRunTwice { .. } => "SameRunTwice",
        E::DifferentKernels { .. } => "DifferentKernels",
        E::StatisticsOverflow { .. } => "StatisticsOverflow",
        E::CounterReadZero { .. } => "CounterReadZero",
        E::OutsideWindow { .. } => "OutsideWindow",
        E::NotAvailable { .. } => "NotAvailable",
        E::MissingMetric { .. } => "MissingMetric",
    }
}

fn baseline_errors() -> Vec<BaselineError> {
    use BaselineError as E;
    let path = p("baseline.json");
    vec![
        E::NotJson {
            path: path.clone(),
            reason: s("expected value at line 1 column 1"),
        },
        E::NoSchemaVersion { path: path.clone() },
        E::SchemaVersion {
            path: path.clone(),
            found: 99,
            reads: 1,
        },
        E::DuplicateKey {
            path: path.clone(),
            reason: s("duplicate key `scale` in kernels"),
        },
        E::Unprintable {
            path: path.clone(),
            reason: s(
                "a string in kernels holds U+202E, a control, noncharacter or bidirectional character that ncugate never writes at line 3 column 20",
            ),
        },
        E::Invalid {
            path: path.clone(),
            reason: s("missing field `total`"),
        },
        E::Missing {
            path: p("baselines/train"),
            workload: s("train"),
            gpu: None,
            others: vec![],
            record: s("ncugate baseline record --workload train"),
        },
        E::Missing {
            path: p("baselines/train"),
            workload: s("train"),
            gpu: Some(s("nvidia-h200")),
            others: vec![s("nvidia-a100")],
            record: s("ncugate baseline record --workload train"),
        },
        E::MetricMissing {
            path: path.clone(),
            metric: s("dram__throughput.avg.pct_of_peak_sustained_elapse"),
            line: 4,
            thresholds: s("thresholds.toml"),
            near: Some(s("dram__throughput.avg.pct_of_peak_sustained_elapsed")),
        },
        E::MetricMissing {
            path,
            metric: s("l1tex__t_bytes.sum"),
            line: 9,
            thresholds: s("thresholds.toml"),
            near: None,
        },
        E::Device {
            recorded: s("NVIDIA H200 (sm_90, 132 SMs)"),
            current: s("NVIDIA A100 (sm_80, 108 SMs)"),
        },
        E::KernelKey {
            asked: s("function"),
            recorded: s("demangled"),
        },
        E::ClockControl {
            recorded: s("base"),
            current: s("none"),
        },
        E::GraphProfiling {
            recorded: s("node"),
            current: s("graph"),
        },
        E::SharedGpu {
            evidence: s(
                "GPU shared with pid 1791 python3, 1.2 GB; SM clock 1470 MHz vs 1966 MHz in the baseline",
            ),
            sensitive: 9,
            recording: false,
        },
        E::SharedGpu {
            evidence: s("GPU shared with pid 1791 python3, 1.2 GB"),
            sensitive: 0,
            recording: true,
        },
        E::ExportGraphProfiling {
            export: s("run.csv"),
            mode: s("graph"),
            recorded: s("node"),
        },
        E::ExportGraphProfiling {
            export: s("run.csv"),
            mode: s("node"),
            recorded: s("graph"),
        },
    ]
}

fn baseline_name(e: &BaselineError) -> &'static str {
    use BaselineError as E;
    match e {
        E::NotJson { .. } => "NotJson",
        E::NoSchemaVersion { .. } => "NoSchemaVersion",
        E::SchemaVersion { .. } => "SchemaVersion",
        E::DuplicateKey { .. } => "DuplicateKey",
        E::Unprintable { .. } => "Unprintable",
        E::Invalid { .. } => "Invalid",
        E::Missing { .. } => "Missing",
        E::MetricMissing { .. } => "MetricMissing",
        E::Device { .. } => "Device",
        E::KernelKey { .. } => "KernelKey",
        E::ClockControl { .. } => "ClockControl",
        E::GraphProfiling { .. } => "GraphProfiling",
        E::SharedGpu { .. } => "SharedGpu",
        E::ExportGraphProfiling { .. } => "ExportGraphProfiling",
    }
}

fn report_errors() -> Vec<ReportError> {
    vec![
        ReportError::NotJson {
            reason: s("expected value at line 1 column 1"),
        },
        ReportError::NotSuite,
        ReportError::SchemaVersion {
            found: Some(9),
            reads: 1,
        },
        ReportError::SchemaVersion {
            found: None,
            reads: 1,
        },
        ReportError::CheckSchemaVersion {
            found: Some(9),
            reads: 2,
        },
        ReportError::Invalid {
            reason: s("missing field `workloads`"),
        },
        ReportError::InvalidCheck {
            reason: s("missing field `rules`"),
        },
        ReportError::Recomputed {
            workload: s("fp64"),
            differs: s(
                "scale · sm__inst_executed.sum (sum): baseline mean 1 in the report, 55050240 in the baseline file",
            ),
        },
        ReportError::Unsigned,
        ReportError::BadSignature,
        ReportError::DuplicateKey {
            reason: s("duplicate key `status` at line 9"),
        },
        ReportError::UnsafeName { name: s("../../x") },
        ReportError::WorkloadSchemaVersion {
            workload: s("train"),
            found: 7,
            reads: 1,
        },
        ReportError::Contradicted {
            workload: Some(s("train")),
            says: s("pass"),
            says_exit: 0,
            makes: s("regression"),
            makes_exit: 1,
        },
        ReportError::Contradicted {
            workload: None,
            says: s("pass"),
            says_exit: 0,
            makes: s("regression"),
            makes_exit: 1,
        },
        ReportError::NothingGated {
            workload: s("train"),
        },
        ReportError::RowContradicted {
            workload: s("train"),
            row: s(
                "void scale<2>(const float *, float *, long, int) · sm__inst_executed.sum (sum) says pass",
            ),
            numbers: s("92800000 against baseline 55050240, allowance 11010048"),
        },
        ReportError::SamplesDisagree {
            workload: s("default"),
            row: s("scale · gpu__time_duration.sum (sum) says current 1840"),
            numbers: s("the mean of its 1 run(s) is 1e308"),
        },
        ReportError::Unevidenced {
            workload: s("default"),
            row: s("scale · gpu__time_duration.sum (sum) is not gated (shared GPU)"),
            missing: s("the report has no shared-GPU evidence"),
        },
    ]
}

fn report_name(e: &ReportError) -> &'static str {
    match e {
        ReportError::NotJson { .. } => "NotJson",
        ReportError::NotSuite => "NotSuite",
        ReportError::SchemaVersion { .. } => "SchemaVersion",
        ReportError::CheckSchemaVersion { .. } => "CheckSchemaVersion",
        ReportError::Invalid { .. } => "Invalid",
        ReportError::InvalidCheck { .. } => "InvalidCheck",
        ReportError::DuplicateKey { .. } => "DuplicateKey",
        ReportError::Recomputed { .. } => "Recomputed",
        ReportError::Unsigned => "Unsigned",
        ReportError::BadSignature => "BadSignature",
        ReportError::UnsafeName { .. } => "UnsafeName",
        ReportError::WorkloadSchemaVersion { .. } => "WorkloadSchemaVersion",
        ReportError::Contradicted { .. } => "Contradicted",
        ReportError::NothingGated { .. } => "NothingGated",
        ReportError::RowContradicted { .. } => "RowContradicted",
        ReportError::SamplesDisagree { .. } => "SamplesDisagree",
        ReportError::Unevidenced { .. } => "Unevidenced",
    }
}

fn merge_errors() -> Vec<MergeError> {
    use MergeError as E;
    let different = |what| E::Different {
        first: s("shard1.json"),
        other: s("shard2.json"),
        what,
        a: s("0123456789ab"),
        b: s("ba9876543210"),
    };
    vec![
        E::NoReports,
        E::NoWorkloads,
        different(Made::NcugateVersions),
        different(Made::Thresholds),
        different(Made::Baselines),
        E::DifferentBaselineFiles {
            first: s("shard1.json"),
            other: s("shard2.json"),
            files: s("fp64/nvidia-h200-cc90-132sm.json (87f30d5f14e8 vs 48e232947859)"),
        },
        E::ShardsAndNot,
        E::ExpectedShards { expected: 4 },
        E::Twice {
            workload: s("train"),
            first: s("shard1.json"),
            second: s("shard2.json"),
        },
        E::NotReported {
            workload: s("infer"),
        },
        E::ShardCount {
            expected: 4,
            report: s("shard1.json"),
            shard: s("1/3"),
        },
        E::MixedCounts {
            first: s("shard1.json"),
            first_shard: s("1/3"),
            other: s("shard2.json"),
            other_shard: s("2/4"),
        },
        E::DifferentSuites {
            first: s("shard1.json"),
            other: s("shard2.json"),
            a: s("train,infer"),
            b: s("train"),
        },
        E::Unfinished {
            report: s("shard2.json"),
            shard: s("2/2"),
            workload: s("infer"),
        },
        E::MissingShard { index: 2, count: 3 },
        E::ShardTwice {
            index: 1,
            count: 2,
            reports: vec![s("a.json"), s("b.json")],
        },
    ]
}

fn merge_name(e: &MergeError) -> &'static str {
    use MergeError as E;
    match e {
        E::NoReports => "NoReports",
        E::NoWorkloads => "NoWorkloads",
        E::Different { .. } => "Different",
        E::DifferentBaselineFiles { .. } => "DifferentBaselineFiles",
        E::ShardsAndNot => "ShardsAndNot",
        E::ExpectedShards { .. } => "ExpectedShards",
        E::Twice { .. } => "Twice",
        E::NotReported { .. } => "NotReported",
        E::ShardCount { .. } => "ShardCount",
        E::MixedCounts { .. } => "MixedCounts",
        E::DifferentSuites { .. } => "DifferentSuites",
        E::Unfinished { .. } => "Unfinished",
        E::MissingShard { .. } => "MissingShard",
        E::ShardTwice { .. } => "ShardTwice",
    }
}

fn tool_errors() -> Vec<ToolError> {
    let sanitizer = |failure| ToolError::Sanitizer {
        failure,
        log: p("ncugate-out/sanitizer.memcheck.log"),
    };
    vec![
        ToolError::SanitizerNotFound {
            program: s("compute-sanitizer"),
        },
        sanitizer(SanitizerFailure::SpawnFailed {
            program: s("compute-sanitizer"),
            reason: s("permission denied"),
        }),
        sanitizer(SanitizerFailure::TimedOut { seconds: 600 }),
        sanitizer(SanitizerFailure::Killed { signal: s("9") }),
        sanitizer(SanitizerFailure::NoXml {
            code: 1,
            tail: s("========= Error: Target application returned an error"),
        }),
        sanitizer(SanitizerFailure::NoXml {
            code: 1,
            tail: s(""),
        }),
        sanitizer(SanitizerFailure::NoSummary {
            code: 0,
            tail: s("========= COMPUTE-SANITIZER"),
        }),
        sanitizer(SanitizerFailure::AppExit {
            code: 3,
            tail: s("bad_app: invalid argument"),
        }),
        ToolError::AppNotFound {
            program: s("./build/app"),
        },
        ToolError::NoAuditReport {
            report: p("ncugate-out/audit.json"),
        },
        ToolError::NoCupti {
            cuda_home: p("/usr/local/cuda"),
        },
        ToolError::AuditLibrary {
            library: p("lib/audit.so"),
            reason: s("No such file or directory (os error 2)"),
        },
        ToolError::BuildFailedBefore {
            workload: s("train"),
            reason: s("exit code 2: make -C kernels"),
        },
        ToolError::NoKernelTrace {
            report: p("ncugate-out/trace/trace-1.json"),
        },
        ToolError::TraceDisabled {
            report: p("ncugate-out/trace/trace-1.json"),
            reason: s(
                "cuptiActivityEnable(CONCURRENT_KERNEL): CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
            ),
        },
        ToolError::TraceIncomplete {
            report: p("ncugate-out/trace/trace-1.json"),
            dropped: 12,
            records: 3000,
        },
        ToolError::TraceBaseline {
            place: s("history"),
            reason: s("a rolling baseline is made of ncu runs of this GPU"),
        },
    ]
}

fn tool_name(e: &ToolError) -> &'static str {
    match e {
        ToolError::SanitizerNotFound { .. } => "SanitizerNotFound",
        ToolError::Sanitizer { failure, .. } => match failure {
            SanitizerFailure::SpawnFailed { .. } => "Sanitizer/SpawnFailed",
            SanitizerFailure::TimedOut { .. } => "Sanitizer/TimedOut",
            SanitizerFailure::Killed { .. } => "Sanitizer/Killed",
            SanitizerFailure::NoXml { .. } => "Sanitizer/NoXml",
            SanitizerFailure::NoSummary { .. } => "Sanitizer/NoSummary",
            SanitizerFailure::AppExit { .. } => "Sanitizer/AppExit",
        },
        ToolError::AppNotFound { .. } => "AppNotFound",
        ToolError::NoAuditReport { .. } => "NoAuditReport",
        ToolError::NoCupti { .. } => "NoCupti",
        ToolError::AuditLibrary { .. } => "AuditLibrary",
        ToolError::BuildFailedBefore { .. } => "BuildFailedBefore",
        ToolError::NoKernelTrace { .. } => "NoKernelTrace",
        ToolError::TraceDisabled { .. } => "TraceDisabled",
        ToolError::TraceIncomplete { .. } => "TraceIncomplete",
        ToolError::TraceBaseline { .. } => "TraceBaseline",
    }
}

fn process_errors() -> Vec<ProcessError> {
    let output = vec![
        s("graph_app.cu(12): error: identifier \"x\" is undefined"),
        s("make: *** [Makefile:9] Error 2"),
    ];
    vec![
        ProcessError::Build {
            program: s("make"),
            command: s("make -C kernels"),
            exit: s("exit code 2"),
            not_found: false,
            output: output.clone(),
            log: p("ncugate-out/build.log"),
        },
        ProcessError::Build {
            program: s("mkae"),
            command: s("mkae -C kernels"),
            exit: s("not found"),
            not_found: true,
            output: vec![],
            log: p("ncugate-out/build.log"),
        },
        ProcessError::AuditLibrary {
            command: s("cc -shared -o libncugate_audit.so audit.c -lcupti"),
            exit: s("exit code 1"),
            output: vec![s(
                "audit.c:1:10: fatal error: cupti.h: No such file or directory",
            )],
            log: p("cache/build.log"),
        },
        ProcessError::App {
            command: s("./build/app --iters 3"),
            exit: s("exit code 1"),
            output: vec![s("CUDA error: out of memory")],
            log: p("ncugate-out/app.log"),
        },
        ProcessError::DcgmPause {
            command: s("dcgmi profile --pause"),
            exit: s("exit code 255"),
            output: vec![s(
                "Error: unable to establish a connection to the specified host: localhost",
            )],
            log: p("target/ncugate/base-1/dcgmi.log"),
        },
        ProcessError::WarmUp {
            run: 1,
            command: s("python3 app.py compile"),
            exit: s("exit code 1"),
            output: vec![s("OSError: [Errno 28] No space left on device")],
            log: p("target/ncugate/warmup-1.log"),
        },
    ]
}

fn process_name(e: &ProcessError) -> &'static str {
    match e {
        ProcessError::Build { .. } => "Build",
        ProcessError::AuditLibrary { .. } => "AuditLibrary",
        ProcessError::App { .. } => "App",
        ProcessError::DcgmPause { .. } => "DcgmPause",
        ProcessError::WarmUp { .. } => "WarmUp",
    }
}

fn ncu_failures() -> Vec<NcuFailure> {
    use NcuFailure as F;
    vec![
        F::NotFound { ncu: s("ncu") },
        F::SpawnFailed {
            ncu: s("/opt/ncu"),
            reason: s("permission denied"),
        },
        F::TimedOut {
            seconds: 600,
            app_tail: s("step 41\nstep 42"),
        },
        F::HungAfterCrash {
            seconds: 60,
            app_tail: s("Segmentation fault"),
        },
        F::CounterPermission,
        F::ProfilerBusy,
        F::UnknownMetric {
            metric: s("sm__inst_exectued.sum"),
            suggestions: vec![s("sm__inst_executed.sum")],
        },
        F::UnknownMetric {
            metric: s("sys__memory_throughput.avg.pct_of_peak_sustained_elapsed"),
            suggestions: vec![],
        },
        F::UnknownMetric {
            metric: s("zz__nothing"),
            suggestions: vec![],
        },
        F::UnsupportedInGraphMode {
            metrics: vec![s("sm__sass_thread_inst_executed_op_dfma_pred_on.sum")],
        },
        F::AppMissing {
            detail: s("'/tmp/nonexistent_app' does not exist or is not an executable"),
        },
        F::AppExit {
            code: 1,
            app_tail: s("usage: graph_app --iters N"),
        },
        F::NoKernels {
            launched: vec![s("1. finish"), s("2. produce")],
        },
        F::NoReport,
        F::ImportFailed {
            command: s("ncu --import run.ncu-rep --csv --page raw --print-units base"),
            report: p("run.ncu-rep"),
            page: s("raw"),
            exit: s("exit code 1"),
            tail: s("==ERROR== Failed to open the report"),
        },
        F::Other {
            exit: s("killed by signal 9"),
            log_tail: s("==PROF== Connected"),
        },
    ]
}

fn ncu_name(f: &NcuFailure) -> &'static str {
    use NcuFailure as F;
    match f {
        F::NotFound { .. } => "NotFound",
        F::SpawnFailed { .. } => "SpawnFailed",
        F::TimedOut { .. } => "TimedOut",
        F::HungAfterCrash { .. } => "HungAfterCrash",
        F::CounterPermission => "CounterPermission",
        F::ProfilerBusy => "ProfilerBusy",
        F::UnknownMetric { .. } => "UnknownMetric",
        F::UnsupportedInGraphMode { .. } => "UnsupportedInGraphMode",
        F::AppMissing { .. } => "AppMissing",
        F::AppExit { .. } => "AppExit",
        F::NoKernels { .. } => "NoKernels",
        F::NoReport => "NoReport",
        F::ImportFailed { .. } => "ImportFailed",
        F::Other { .. } => "Other",
    }
}

const KINDS: [FileKind; 13] = [
    FileKind::Export,
    FileKind::DetailsPage,
    FileKind::Findings,
    FileKind::Baseline,
    FileKind::BaselinesFolder,
    FileKind::Config,
    FileKind::Thresholds,
    FileKind::SanitizerXml,
    FileKind::ShardReport,
    FileKind::MemoryHistory,
    FileKind::AuditReport,
    FileKind::Stdin,
    FileKind::PlannedSkips,
];

/// Every file kind in [`KINDS`]: a new one does not compile until it is listed.
fn kind_listed(kind: FileKind) -> bool {
    match kind {
        FileKind::Export
        | FileKind::DetailsPage
        | FileKind::Findings
        | FileKind::Baseline
        | FileKind::BaselinesFolder
        | FileKind::Config
        | FileKind::Thresholds
        | FileKind::SanitizerXml
        | FileKind::ShardReport
        | FileKind::MemoryHistory
        | FileKind::AuditReport
        | FileKind::Stdin
        | FileKind::PlannedSkips => KINDS.contains(&kind),
    }
}

fn file_path(kind: FileKind) -> &'static str {
    match kind {
        FileKind::Export => "raw.csv",
        FileKind::DetailsPage | FileKind::Findings => "details.csv",
        FileKind::Baseline => "baseline.json",
        FileKind::BaselinesFolder => "baselines",
        FileKind::Config => "ncugate.toml",
        FileKind::Thresholds => "thresholds.toml",
        FileKind::SanitizerXml => "memcheck.xml",
        FileKind::ShardReport => "nope.json",
        FileKind::MemoryHistory => "history.jsonl",
        FileKind::AuditReport => "audit.json",
        FileKind::Stdin => "-",
        FileKind::PlannedSkips => "skips.txt",
    }
}

/// Every variant of [`Error`] (and of the kinds it holds), named.
fn every_error() -> Vec<(String, Error)> {
    let mut all: Vec<(String, Error)> = Vec::new();
    let mut add = |name: String, e: Error| all.push((name, e));
    for kind in KINDS {
        assert!(kind_listed(kind));
        let path = Path::new(file_path(kind));
        add(
            format!("Read/{kind:?}/missing"),
            Error::read(kind, path, io(ErrorKind::NotFound)),
        );
        add(
            format!("Read/{kind:?}/denied"),
            Error::read(kind, path, io(ErrorKind::PermissionDenied)),
        );
        add(
            format!("Malformed/{kind:?}"),
            Error::malformed(kind, path, s("line 3: not what it should be")),
        );
    }
    add(
        s("Read/Export/stdin"),
        Error::read(FileKind::Export, Path::new("-"), io(ErrorKind::InvalidData)),
    );
    add(
        s("Toml"),
        Error::Toml {
            kind: FileKind::Config,
            path: s("ncugate.toml"),
            detail: s(
                "TOML parse error at line 2, column 1\n  |\n2 | [profil]\n  | ^^^^^^^^\nunknown field `profil`\n",
            ),
            keys: vec![s("[app]"), s("[profile]")],
        },
    );
    add(
        s("Toml"),
        Error::Toml {
            kind: FileKind::Thresholds,
            path: s("thresholds.toml"),
            detail: s(
                "TOML parse error at line 1, column 7\n  |\n1 | [[rule]\n  |       ^\ninvalid table header\n",
            ),
            keys: vec![s("metric"), s("max_change")],
        },
    );
    for e in process_errors() {
        add(format!("Process/{}", process_name(&e)), e.into());
    }
    add(
        s("Write"),
        Error::Write {
            path: p("report.md"),
            source: io(ErrorKind::PermissionDenied),
        },
    );
    add(
        s("LinkedFolder"),
        Error::LinkedFolder {
            path: p("html/charts"),
        },
    );
    add(
        s("TooLarge"),
        Error::TooLarge {
            kind: FileKind::Export,
            path: p("/dev/zero"),
            limit: 1 << 30,
        },
    );
    for e in export_errors() {
        add(
            format!("Export/{}", export_name(&e)),
            Error::export(Path::new("raw.csv"), e),
        );
    }
    for e in report_errors() {
        add(
            format!("Report/{}", report_name(&e)),
            Error::Report {
                path: p("shard1.json"),
                error: e,
            },
        );
    }
    for e in merge_errors() {
        add(format!("Merge/{}", merge_name(&e)), e.into());
    }
    for e in config_errors() {
        add(format!("Config/{}", config_name(&e)), e.into());
    }
    for e in baseline_errors() {
        add(format!("Baseline/{}", baseline_name(&e)), e.into());
    }
    for e in tool_errors() {
        add(format!("Tool/{}", tool_name(&e)), e.into());
    }
    add(
        s("Thresholds"),
        Error::Thresholds {
            path: s("thresholds.toml"),
            message: s("rule for `x` (line 2): `metric` is empty"),
            keys: vec![s("metric"), s("max_change"), s("limit")],
        },
    );
    for f in ncu_failures() {
        let name = ncu_name(&f);
        add(format!("Ncu/{name}"), Error::ncu(f.clone(), None));
        if name == "AppExit" {
            add(
                s("Ncu/AppExit/logs"),
                Error::ncu(f, Some(p("ncugate-out/run"))),
            );
        }
    }
    for e in history_errors() {
        add(format!("History/{}", history_name(&e)), e.into());
    }
    add(s("Interrupted"), Error::Interrupted { signal: "SIGTERM" });
    all
}

fn history_errors() -> Vec<HistoryError> {
    use HistoryError as E;
    vec![
        E::NoStore,
        E::BadUrl {
            url: s("mysql://ci:***@db/x"),
            why: s("not a history URL"),
        },
        E::Store {
            store: s("sqlite:history.sqlite"),
            what: s("file is not a database"),
            fix: s(
                "history.sqlite is not a SQLite history (or it is damaged): move it away to start a new history, or point --history at the right file",
            ),
        },
        E::NoSuchCommit {
            commit: s("3f2c9e1"),
        },
        E::BadName {
            what: "branch",
            value: s("a\\nb"),
        },
        E::BadTime {
            text: s("yesterday"),
            why: s("failed to parse"),
        },
        E::LastZero,
        E::NoGit {
            what: "commit",
            command: s("git rev-parse HEAD"),
            tail: s("fatal: not a git repository"),
        },
        E::NotMetrics {
            workload: s("default"),
            gate: "sanitizer",
        },
        E::NoBaselineRuns {
            store: s("sqlite:history.sqlite"),
            workload: s("default"),
            gpu: s("NVIDIA H200 (cc 9.0, 132 SMs)"),
        },
        E::NoAnchorRun {
            store: s("sqlite:history.sqlite"),
            workload: s("default"),
            gpu: s("NVIDIA H200 (cc 9.0, 132 SMs)"),
            anchor: s("v1.2.0"),
        },
        E::RuleNotRecorded {
            store: s("sqlite:history.sqlite"),
            workload: s("default"),
            metric: s("gpu__time_duration.sum"),
            aggregate: s("max"),
            line: 7,
        },
        E::WindowZero,
        E::BadSetting {
            setting: "change_p",
            value: s("0"),
            expected: s("a significance level above 0 and at most 0.5 (default 0.001)"),
        },
    ]
}

fn history_name(e: &HistoryError) -> &'static str {
    match e {
        HistoryError::NoStore => "NoStore",
        HistoryError::BadUrl { .. } => "BadUrl",
        HistoryError::Store { .. } => "Store",
        HistoryError::NoSuchCommit { .. } => "NoSuchCommit",
        HistoryError::BadName { .. } => "BadName",
        HistoryError::BadTime { .. } => "BadTime",
        HistoryError::LastZero => "LastZero",
        HistoryError::NoGit { .. } => "NoGit",
        HistoryError::NotMetrics { .. } => "NotMetrics",
        HistoryError::NoBaselineRuns { .. } => "NoBaselineRuns",
        HistoryError::NoAnchorRun { .. } => "NoAnchorRun",
        HistoryError::RuleNotRecorded { .. } => "RuleNotRecorded",
        HistoryError::WindowZero => "WindowZero",
        HistoryError::BadSetting { .. } => "BadSetting",
    }
}

/// The catch-all of [`Error`]: a new top-level variant does not compile
/// until [`every_error`] makes one.
fn top_level_name(e: &Error) -> &'static str {
    match e {
        Error::Read { .. } => "Read",
        Error::Toml { .. } => "Toml",
        Error::Process(_) => "Process",
        Error::Write { .. } => "Write",
        Error::LinkedFolder { .. } => "LinkedFolder",
        Error::TooLarge { .. } => "TooLarge",
        Error::Malformed { .. } => "Malformed",
        Error::Export { .. } => "Export",
        Error::Report { .. } => "Report",
        Error::Merge(_) => "Merge",
        Error::Config(_) => "Config",
        Error::Baseline(_) => "Baseline",
        Error::Tool(_) => "Tool",
        Error::History(_) => "History",
        Error::Thresholds { .. } => "Thresholds",
        Error::Ncu { .. } => "Ncu",
        Error::Interrupted { .. } => "Interrupted",
    }
}

#[test]
fn every_error_as_printed() {
    let all = every_error();
    let mut text = String::new();
    for (i, (name, error)) in all.iter().enumerate() {
        // A second sample of one variant shows another case of its message or hint.
        let nth = all[..i].iter().filter(|(n, _)| n == name).count();
        assert!(
            name.starts_with(top_level_name(error)),
            "{name} is a {}",
            top_level_name(error)
        );
        let printed = error.printed();
        // One error line, its detail as `  | …`, one hint line.
        let lines: Vec<&str> = printed.lines().collect();
        assert!(lines[0].starts_with("ncugate: error: "), "{printed}");
        assert!(lines[lines.len() - 1].starts_with("hint: "), "{printed}");
        assert!(
            lines[1..lines.len() - 1]
                .iter()
                .all(|l| l.starts_with("  | ")),
            "{printed}"
        );
        let name = match nth {
            0 => name.clone(),
            n => format!("{name} ({})", n + 1),
        };
        text.push_str(&format!("── {name}\n{printed}"));
    }
    insta::assert_snapshot!("every_error_as_printed", text);
}
