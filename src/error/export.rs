//! [`ExportError`]: an ncu export whose content cannot be gated, or runs
//! that do not belong together. Shown as `PATH: message` (`Error::Export`).

/// What is wrong with one export (or with it beside the others).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    #[error("the file is empty")]
    Empty,
    /// A well-formed export without a single kernel launch.
    #[error("no kernel launches in this export")]
    NoKernels,
    #[error("binary data, not a CSV export")]
    Binary,
    /// No CSV header, and ncu's own lines say why.
    #[error("no ncu CSV header in {lines} lines; ncu said: {said}")]
    NcuComplained { lines: usize, said: String },
    /// No CSV header: ncu wrote its results to a report file instead.
    #[error("no ncu CSV header in {lines} lines; ncu wrote its results to {report}")]
    ResultsInReport { lines: usize, report: String },
    /// ncu's human-readable output (`Section:` tables), not `--csv`.
    #[error(
        "this is ncu's text report (`Section:` tables), not a CSV export (no CSV header in {lines} lines)"
    )]
    TextReport { lines: usize },
    /// The last row has no line break.
    #[error("the export ends in the middle of a row: it is truncated")]
    Truncated,
    /// A details page given where a raw page belongs (`--input`).
    #[error("this is a details page, not a raw page")]
    DetailsPageAsInput,
    #[error("not an ncu raw-page CSV export (no \"ID\" and \"Kernel Name\" columns)")]
    NotRawPage,
    /// A table saved from the Summary page of the Nsight Compute GUI.
    #[error(
        "this is the Summary page of the Nsight Compute GUI (one row per result, values rounded for reading), not an ncu CSV export"
    )]
    GuiSummaryPage,
    #[error("the second row is not ncu's units row")]
    NoUnitsRow,
    #[error("header only: no units row and no launches (truncated export?)")]
    HeaderOnly,
    /// A row with another number of fields than the header.
    #[error(
        "line {line} has {fields} fields, the header has {width}: the export is truncated or corrupt"
    )]
    FieldCount {
        line: usize,
        fields: usize,
        width: usize,
    },
    /// The SM count column holds no number.
    #[error("line {line}: `{column}` is {value:?}, not a number: the GPU cannot be identified")]
    UnknownSmCount {
        line: usize,
        column: String,
        value: String,
    },
    /// A value ncu never writes (`problem` says why: NaN, infinite, …).
    #[error("line {line}: metric `{metric}` is {value:?}: {problem}")]
    ImpossibleValue {
        line: usize,
        metric: String,
        value: String,
        problem: String,
    },
    #[error("line {line}: the sum of metric `{metric}` overflows")]
    SumOverflows { line: usize, metric: String },
    #[error("line {line}: metric `{metric}` has the non-numeric value {value:?}")]
    NotNumeric {
        line: usize,
        metric: String,
        value: String,
    },
    /// A metric name that matches two rows of one launch on a details page.
    #[error("`{metric}` names two metrics of one launch (\"{first}\" and \"{second}\")")]
    AmbiguousMetric {
        metric: String,
        /// The rows' places (`Section: label`), and the label.
        first: String,
        second: String,
        label: String,
    },
    /// Runs of one check from different GPU models.
    #[error("recorded on {gpu}, but {other} was recorded on {other_gpu}")]
    DifferentGpus {
        gpu: String,
        other: String,
        other_gpu: String,
    },
    /// Runs of one check in different graph-profiling modes.
    #[error(
        "profiled with --graph-profiling {mode}, but {other} with --graph-profiling {other_mode}"
    )]
    DifferentGraphModes {
        mode: String,
        other: String,
        other_mode: String,
    },
    /// One metric in two units across the recorded runs.
    #[error("metric `{metric}` is in {unit} here but in {other_unit} in {other}")]
    DifferentUnits {
        metric: String,
        unit: String,
        other_unit: String,
        other: String,
    },
    /// A gated metric without a value in some launches of `scope`.
    #[error("metric `{metric}` is n/a or empty for some launches of {scope}")]
    MissingValues { metric: String, scope: String },
    /// A gated metric that is not in the export; `near` is what it may have meant.
    #[error("metric `{metric}` is not in this export")]
    MissingMetric { metric: String, near: MetricNear },
    /// A `.ncu-rep` the native reader does not read (another version or kind of result).
    #[error("{reason}")]
    ReportUnsupported { reason: String },
    /// A `.ncu-rep` of a known version that is truncated or damaged.
    #[error("not a readable report: {reason}")]
    ReportCorrupt { reason: String },
    /// A JSON file that is not nvbench's `--json` output as written, or one
    /// whose benchmarks cannot be read (`reason` says where).
    #[error("not a readable nvbench JSON file: {reason}")]
    NvbenchMalformed { reason: String },
    /// A `.ncu-rep` result that lists one metric twice with different values.
    #[error(
        "result {result} (kernel `{kernel}`) lists metric `{metric}` twice, with different values: which is the launch's cannot be told"
    )]
    ReportRepeatedMetric {
        kernel: String,
        result: usize,
        metric: String,
    },
    /// A `.ncu-rep` whose results name strings that would copy to more than
    /// the reader's budget for a file of its size.
    #[error(
        "its results name strings that copy to more than {limit} bytes ({per_byte} per byte of the file and {beyond} more): a crafted string table or repeated field"
    )]
    ReportOverBudget {
        limit: usize,
        per_byte: usize,
        beyond: usize,
    },
    /// A `.ncu-rep` whose messages would decode to more list entries than
    /// the reader's budget for a file of its size.
    #[error(
        "its messages would decode to more than {limit} bytes of list entries ({per_byte} per byte of the file and {beyond} more): a crafted run of empty entries"
    )]
    ReportDecodeOverBudget {
        limit: usize,
        per_byte: usize,
        beyond: usize,
    },
    /// A `.ncu-repz` whose Zstandard stream inflates to more than the
    /// reader's budget for a file of its size (a Zstandard bomb).
    #[error(
        "its Zstandard stream inflates to more than {limit} bytes ({per_byte} per byte of the file and {beyond} more, at most the input size limit): a Zstandard bomb"
    )]
    ReportInflateOverBudget {
        limit: usize,
        per_byte: usize,
        beyond: usize,
    },
    /// A raw page that names one metric in two columns with different values.
    #[error(
        "line {line}: metric `{metric}` is in column {first} ({first_value:?}) and in column {second} ({second_value:?}): which one is it?"
    )]
    ContradictoryColumns {
        line: usize,
        metric: String,
        first: usize,
        first_value: String,
        second: usize,
        second_value: String,
    },
    /// A details page with one metric twice in one place, with different values.
    #[error(
        "row {line}: metric `{metric}` is {second_value:?} here but {first_value:?} in an earlier row of the same launch and place ({place})"
    )]
    ContradictoryRows {
        line: usize,
        metric: String,
        place: String,
        first_value: String,
        second_value: String,
    },
    /// One export given twice to `baseline record`: a noise band of copies.
    #[error("the same export as {first} (SHA-256 {digest}…): one run given twice")]
    SameExportTwice { first: String, digest: String },
    /// One run given twice to `baseline record` in two forms (a report and
    /// its CSV, two pages of one report): the same processes, kernels and
    /// launches, and the same values of a metric that differs from run to run.
    #[error(
        "the same run as {first}: {processes} launched the same kernels with the same `{metric}`, in another format: one run given twice"
    )]
    SameRunTwice {
        first: String,
        processes: String,
        metric: String,
    },
    /// Recorded runs that launched different kernels.
    #[error(
        "no kernel was launched alike by every run (`{kernel}` differs between {other} and this run): the runs launched different kernels"
    )]
    DifferentKernels { kernel: String, other: String },
    /// Statistics over the recorded runs that overflow `f64`.
    #[error(
        "metric `{metric}` of {scope}: the statistics of its {aggregate} over the runs overflow a 64-bit float"
    )]
    StatisticsOverflow {
        metric: String,
        scope: String,
        aggregate: String,
    },
    /// A gated metric whose every value is `n/a`.
    #[error(
        "metric `{metric}` is in this export but `n/a` in every launch: ncu could not collect it on this GPU or with this ncu version"
    )]
    NotAvailable { metric: String },
    /// A counter that cannot read 0 for a launch that ran read 0 (`all`:
    /// every one of the kernel's `all` metrics read 0): no counter was collected.
    #[error(
        "kernel `{kernel}` ran ({launches} launches) but `{metric}` read 0{}: ncu collected no counters for it",
        all.map(|n| format!(", as did all {n} of its metrics")).unwrap_or_default()
    )]
    CounterReadZero {
        kernel: String,
        launches: u64,
        metric: String,
        all: Option<usize>,
    },
    /// A kernel of the baseline absent from a run that `launch_count` cut short.
    #[error(
        "kernel `{kernel}` of the baseline is not among the {count} launches ncu profiled as often as in the baseline (launch_count = {count}, launch_skip = {skip}): its launches may have come after the window closed"
    )]
    OutsideWindow {
        kernel: String,
        count: u64,
        skip: u64,
    },
}

/// What a metric missing from an export may have meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetricNear {
    /// `sys__memory_throughput`: a name often quoted that ncu never had.
    NotAnNcuMetric,
    /// A column of this export close to it.
    InExport(String),
    /// A metric ncu knows close to it.
    KnownToNcu(String),
    /// Nothing close.
    Nothing,
}

impl ExportError {
    /// The `hint:` line: the fix.
    pub(crate) fn hint(&self) -> String {
        use ExportError as E;
        match self {
            E::Empty => "export the report with `ncu --import R.ncu-rep --csv --page raw > raw.csv`".into(),
            E::NoKernels => "ncu profiled nothing: check the app ran kernels and ncu's --kernel-name/--launch-skip filters".into(),
            E::Binary => "pass a CSV export, or a .ncu-rep report (converted with ncu when it is on PATH)".into(),
            E::NcuComplained { .. } => "fix what ncu complained about (`ncu --list-sections`, `ncu --query-metrics`, the kernel filter) and profile again".into(),
            E::ResultsInReport { report, .. } => format!("pass that report (`--input {report}`), or export it: `ncu --import {report} --csv --page raw`"),
            E::TextReport { .. } => "profile with `ncu --csv …`, or export a saved report: `ncu --import R.ncu-rep --csv --page raw`".into(),
            E::Truncated => "export it again (`ncu --import R.ncu-rep --csv --page …`) and check the disk was not full".into(),
            E::DetailsPageAsInput => "pass details exports with --details; --input takes `ncu --import R.ncu-rep --csv --page raw`".into(),
            E::NotRawPage => "export with `ncu --import R.ncu-rep --csv --page raw > raw.csv`".into(),
            E::GuiSummaryPage => "save the report (.ncu-rep) and pass it, or export it: `ncu --import R.ncu-rep --csv --page raw > raw.csv`".into(),
            E::NoUnitsRow => "export the raw page without --print-units none-like options: `ncu --import R.ncu-rep --csv --page raw`".into(),
            E::HeaderOnly => "re-export the report; the file ends after its first line".into(),
            E::FieldCount { .. } => "re-export the report with `ncu --import R.ncu-rep --csv --page raw`".into(),
            E::UnknownSmCount { .. } => "re-export the report; a raw page always has the GPU's SM count".into(),
            E::ImpossibleValue { .. } => "ncu never writes such a value: re-export the report, or fix the tool that rewrote it".into(),
            E::SumOverflows { .. } => "ncu never writes such values: re-export the report".into(),
            E::NotNumeric { .. } => "gate numeric metrics only (counters, throughputs, durations)".into(),
            E::AmbiguousMetric { first, second, label, .. } => format!("say which in the rule: metric = \"{first}: {label}\" or metric = \"{second}: {label}\""),
            E::DifferentGpus { .. } => "pass runs from one GPU model to one check".into(),
            E::DifferentGraphModes { .. } => "pass runs profiled in one graph-profiling mode".into(),
            E::DifferentUnits { .. } => "record runs exported the same way (e.g. all with `--print-units base`)".into(),
            E::ReportUnsupported { .. } => "read it through ncu: pass --import-with-ncu on a machine with Nsight Compute, or export `ncu --import R.ncu-rep --csv --page raw --print-units base > raw.csv`".into(),
            E::ReportCorrupt { .. } => "the report is truncated or damaged: copy or download it again, or profile again".into(),
            E::NvbenchMalformed { .. } => "pass the file `nvbench --json FILE` wrote, unedited (or a raw-page CSV of ncu); a truncated file needs the benchmark run again".into(),
            E::ReportRepeatedMetric { .. } => "ncu gives each metric of a result one value: profile again, or read it through ncu (--import-with-ncu) to see what ncu makes of it; fix the tool that edited the report".into(),
            E::ReportOverBudget { .. } => "an Nsight Compute report copies less than one byte of names per byte of the file: this one was crafted or damaged; profile again, or read it through ncu (--import-with-ncu) if you trust it".into(),
            E::ReportDecodeOverBudget { .. } => "an Nsight Compute report decodes to a few bytes of list entries per byte of the file: this one was crafted or damaged; profile again, or read it through ncu (--import-with-ncu) if you trust it".into(),
            E::ReportInflateOverBudget { .. } => format!("a compressed Nsight Compute report inflates to tens of times its size, not hundreds: this one was crafted or damaged; profile again, or if you trust it, inflate it yourself (`zstd -d R.ncu-repz -o R.ncu-rep`; {} bounds that file) and pass the .ncu-rep, or read it through ncu (--import-with-ncu)", crate::error::MAX_INPUT_SIZE_VARIABLE),
            E::ContradictoryColumns { .. } | E::ContradictoryRows { .. } => "ncu writes each metric once per launch: re-export the report, or fix the tool that merged or edited the export".into(),
            E::SameExportTwice { .. } => "record each run's own export (ncugate baseline record --runs N profiles N runs)".into(),
            E::SameRunTwice { .. } => "a report and the pages exported from it are one run: give each run once (ncugate baseline record --runs N profiles N runs)".into(),
            E::DifferentKernels { .. } => "record runs of one build with the same arguments; if one run is odd, profile it again (kernels that vary between runs are kept, ungated, beside those every run launches alike)".into(),
            E::StatisticsOverflow { .. } => "no ncu counter reaches 1e308: check the exports for a corrupted value".into(),
            E::MissingValues { .. } => "a baseline needs a value for every launch: check ncu's warnings for this metric (graph-profiling mode cannot collect some), or mark the rule `optional = true`".into(),
            E::MissingMetric { metric, near } => match near {
                MetricNear::NotAnNcuMetric => "`sys__memory_throughput` is not an ncu metric; use gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed (Memory Throughput) or dram__throughput.avg.pct_of_peak_sustained_elapsed".into(),
                MetricNear::InExport(m) => format!("did you mean `{m}`? This export has that column; fix the rule's metric name"),
                MetricNear::KnownToNcu(m) => format!("did you mean `{m}`? ncu knows that name; fix the rule, or profile with `ncu --metrics {metric},…`"),
                MetricNear::Nothing => format!("profile with `ncu --metrics {metric},…` (add it to --metrics even with --set full, which lacks some metrics), or mark the rule `optional = true`"),
            },
            E::CounterReadZero { .. } => "another profiler may hold the GPU's counters (DCGM profiling, a second ncu, Nsight Systems with GPU metrics): stop or pause it (`dcgmi profile --pause`) and profile again; if it repeats, see ncu's warnings in its log".into(),
            E::OutsideWindow { .. } => "raise [profile] launch_count until the window holds every kernel of the baseline, or record the baseline with the same launch_skip and launch_count".into(),
            E::NotAvailable { .. } => "check `ncu --query-metrics` on that GPU, gate another metric, or mark the rule `optional = true`".into(),
        }
    }
}
