//! The outcome of a comparison: one result per kernel × rule, per structural
//! check and per new ncu finding, and the overall outcome that decides the
//! exit code. Built by `compare`, consumed by `report`; serialized as the
//! `--json` report (its `schema_version` is [`REPORT_SCHEMA_VERSION`]).

use crate::aggregate::Stats;
use crate::note::Note;
use crate::rules::{Per, Severity, Worse};
use crate::status::{Outcome, Status};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

mod json;

/// Version of the JSON report schema.
pub(crate) const REPORT_SCHEMA_VERSION: u32 = 2;
/// The oldest report `schema_version` still read (`merge`, `history record`):
/// version 2 only added optional fields.
pub(crate) const OLDEST_REPORT_SCHEMA_VERSION: u32 = 1;

/// Whether a report of `version` can be read.
pub(crate) fn reads_report_version(version: u64) -> bool {
    (u64::from(OLDEST_REPORT_SCHEMA_VERSION)..=u64::from(REPORT_SCHEMA_VERSION)).contains(&version)
}

/// One rule applied to one kernel key (or to the run total).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RuleResult {
    // The key is shared with the kernel's other results, as are the rule,
    // metric, unit and `why` with the rule's: at 100,000 kernels a copy per
    // result is most of a report's memory. The rare `why` and a downgrade's
    // evidence are one pointer each (`Arc<String>`), not two.
    /// The kernel key; `None` for a `per = "total"` rule.
    pub kernel: Option<Arc<str>>,
    pub rule: Arc<str>,
    pub metric: Arc<str>,
    pub per: Per,
    pub aggregate: crate::model::Aggregate,
    pub worse: Worse,
    pub severity: Severity,
    /// Line of the `[[rule]]` in `thresholds`.
    pub line: usize,
    pub unit: Arc<str>,
    pub baseline: Option<Stats>,
    /// The current value: the mean over the current runs.
    pub current: Option<f64>,
    /// One value per current run.
    pub current_runs: Box<[f64]>,
    /// Change from the baseline mean, percent (`None` when the mean is 0).
    pub change_pct: Option<f64>,
    /// Allowed change in the worse direction, base units: `max(max_change·|μ| + noise·σ, noise_floor)`.
    pub allowance: Option<f64>,
    pub limit: Option<f64>,
    pub status: Status,
    /// One line saying what happened.
    pub message: String,
    /// The rule's `why`, for failures.
    pub why: Option<Arc<String>>,
    /// Set when the result is not gated: why, and what showed it. The JSON
    /// writes it as it always has, in the fields `not_gated` (a shared GPU's
    /// evidence) and `downgraded` (a failure made a warning).
    #[serde(flatten, with = "json::downgrade")]
    #[schemars(with = "json::DowngradeFields")]
    pub downgrade: Option<Downgrade>,
}

impl RuleResult {
    /// `KERNEL · RULE`, as an error names the row.
    pub(crate) fn named(&self) -> String {
        format!(
            "{} · {}",
            self.kernel.as_deref().unwrap_or("(total)"),
            self.rule
        )
    }
}

/// Why a rule result is not gated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reason {
    /// The GPU was shared and the metric is one another process can move
    /// (`[gate] shared_gpu = "warn"`).
    SharedGpu,
    /// A timing-only failure of a kernel whose machine code, instruction
    /// counts, launches and launch configuration are unchanged
    /// (`--environmental warn`).
    Environmental,
    /// ncu could not read the performance counters (ERR_NVGPUCTRPERM) and
    /// `[gate] locked_counters = "trace"` gated the launch structure alone.
    CountersLocked,
    /// The kernel's code was not the same in every run (an autotuner or JIT
    /// built it another way): its rules that do not measure time are listed
    /// ungated, its time and launches stay gated, and a whole run's rule
    /// whose change is such kernels' is listed ungated too. Or an autotuner
    /// moved launches between its picks: every rule of those kernels, time
    /// too, is listed ungated, and the whole run's rules stay gated.
    CodeVaries,
}

/// A rule result that is not gated: why, what showed it, and whether it
/// made a failure a warning. Every way a result stops being gated is one of
/// these, put there by [`RuleResult::ungate`].
#[derive(Debug, Clone, PartialEq)]
pub struct Downgrade {
    pub(crate) reason: Reason,
    /// The evidence the result carries: for a shared GPU the report's
    /// (`shared_gpu.evidence`: the neighbours, the clock). An environmental
    /// one carries none: its evidence is its kernel's unchanged code, in
    /// the report's `code`. A report read from a file may carry anything
    /// here; `crate::suite::read` checks it against the report.
    pub(crate) evidence: Option<Arc<String>>,
    /// The result had failed its rule (`fail`, or `warn` of a warn-severity
    /// rule) and is a warning because of this downgrade; false for a shared
    /// GPU's sensitive result within its allowance, marked and otherwise
    /// left as it was.
    pub(crate) failed: bool,
}

/// The start of the note a check adds when the environment that picks
/// kernels, or the profiled range, is not the baseline's: the headline says
/// so wherever the note is (see [`Report::counts`]).
pub(crate) const ENVIRONMENT_CHANGED: &str = "environment changed since the baseline: ";

/// Why every rule of a trace-mode check is not gated.
pub(crate) const COUNTERS_LOCKED: &str = "counters locked (ERR_NVGPUCTRPERM): trace mode";

/// How the evidence of a [`Reason::CodeVaries`] downgrade starts: the rest
/// says what showed it (the recorded runs' builds, or the autotuner that
/// named the kernel).
pub(crate) const CODE_VARIES: &str = "code varies between runs";

/// Why a timing-only failure with unchanged code is environmental.
pub(crate) const ENVIRONMENTAL: &str = "environmental: timing-only change with unchanged code, instruction counts and launch configuration — clocks, other work on the GPU, thermals";

impl Downgrade {
    /// The reason as a downgraded failure's message gives it, in `not
    /// gated (…): `: a shared GPU's first part of the evidence (the
    /// neighbour, or the clock; the report's header has all of it), or why
    /// the failure is environmental.
    pub(crate) fn why(&self) -> String {
        match self.reason {
            Reason::SharedGpu => self.neighbour().to_string(),
            Reason::Environmental => format!("{ENVIRONMENTAL}; --environmental warn"),
            Reason::CountersLocked => COUNTERS_LOCKED.to_string(),
            Reason::CodeVaries => self
                .evidence
                .as_deref()
                .map_or(CODE_VARIES, String::as_str)
                .to_string(),
        }
    }

    /// The first part of the evidence: the neighbour, or the clock.
    pub(crate) fn neighbour(&self) -> &str {
        let evidence = self.evidence.as_deref().map_or("", String::as_str);
        evidence.split("; ").next().unwrap_or_default()
    }
}

impl RuleResult {
    /// Whether the row's own numbers fail it, as the rule's judgment does:
    /// the current value past its limit, or worse than the baseline mean by
    /// more than its allowance. Such a row is `fail`, or a `warn` of a
    /// warn-severity rule or of a downgraded failure; `merge` refuses a row
    /// that says anything else (a report edited to pass kept its numbers).
    pub(crate) fn numbers_fail(&self) -> bool {
        self.current.is_some_and(|x| self.fails_at(x))
    }

    /// Whether the value `x` would fail this row's rule against its
    /// baseline: past the limit, or worse than the baseline mean (or, where
    /// the recorded runs are more than the allowance apart, than the worst
    /// of them: [`crate::rules::Worse::spread`]) by more than the allowance.
    /// The row does not say whether its rule counts deterministic work (the
    /// one kind measured from the worst run); `merge` holds that to the
    /// thresholds where they are at hand (`crate::suite::recompute`).
    pub(crate) fn fails_at(&self, x: f64) -> bool {
        let Some(stats) = self.baseline else {
            return false;
        };
        let past_limit = self.limit.is_some_and(|limit| self.worse.past(x, limit));
        past_limit
            || self.allowance.is_some_and(|a| {
                let [worst, _] = self
                    .worse
                    .spread(&stats, Some(a))
                    .unwrap_or([stats.mean, stats.mean]);
                self.worse.worse_by(x, worst) > a
            })
    }

    /// Whether the status is one its numbers allow (see [`Self::numbers_fail`]).
    pub(crate) fn status_fits_numbers(&self) -> bool {
        !self.numbers_fail()
            || self.status == Status::Fail && self.severity == Severity::Fail
            || self.status == Status::Warn && (self.severity == Severity::Warn || self.downgraded())
    }

    /// Whether the rule measures time (`ns`, `cycle`): what a clock, a
    /// neighbour or the heat moves without any change to the code.
    pub(crate) fn measures_time(&self) -> bool {
        matches!(&*self.unit, "ns" | "cycle")
    }

    /// Whether a downgrade made this result's failure a warning.
    pub(crate) fn downgraded(&self) -> bool {
        self.downgrade.as_ref().is_some_and(|d| d.failed)
    }

    /// Leaves the result ungated for `reason`, with the `evidence` it
    /// carries: a failing result (`fail`, or `warn` of a warn-severity rule)
    /// becomes a warning whose message starts with why (`not gated (WHY):
    /// …`); any other keeps its status and says `not gated`. The one way a
    /// result stops being gated, whatever the reason, in every format.
    pub(crate) fn ungate(&mut self, reason: Reason, evidence: Option<Arc<String>>) {
        let failed = matches!(self.status, Status::Fail | Status::Warn);
        let downgrade = Downgrade {
            reason,
            evidence,
            failed,
        };
        if failed {
            self.status = Status::Warn;
            self.message = format!("not gated ({}): {}", downgrade.why(), self.message);
        }
        self.downgrade = Some(downgrade);
    }

    /// The verdict word for tables: the status, except that a `changed`
    /// result says which way it moved (`higher`, `lower`) and a result left
    /// ungated (a shared GPU's sensitive metric, a downgraded failure) says
    /// `not gated` (its status, `warn` for a downgraded failure, still counts).
    pub(crate) fn verdict(&self) -> &'static str {
        if self.downgrade.is_some() {
            return "not gated";
        }
        match (self.status, self.current, self.baseline) {
            (Status::Changed, Some(x), Some(b)) if x > b.mean => "higher",
            (Status::Changed, Some(_), Some(_)) => "lower",
            (status, _, _) => status.as_str(),
        }
    }
}

/// What a structural check looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StructureCheck {
    Launches,
    NewKernel,
    MissingKernel,
    /// A kernel the baseline's runs did not launch alike (an autotuner's
    /// candidate): listed, never gated.
    Varies,
    /// A kernel an autotuner picks, launched another number of times than
    /// the baseline's runs did, where the autotuner moved the launches
    /// between its picks (their sum is the recorded one): listed, never
    /// gated ([`crate::compare::structure::moved_picks`]).
    PicksMoved,
}

impl StructureCheck {
    /// Whether rows of this check are listed and never gated: a kernel
    /// that varies between runs, or launches an autotuner moved between
    /// its picks.
    pub(crate) fn never_gated(self) -> bool {
        matches!(self, StructureCheck::Varies | StructureCheck::PicksMoved)
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            StructureCheck::Launches => "launch count",
            StructureCheck::NewKernel => "new kernel",
            StructureCheck::MissingKernel => "missing kernel",
            StructureCheck::Varies => "not gated: varies between runs",
            StructureCheck::PicksMoved => "not gated: picks moved",
        }
    }
}

/// One structural check of one kernel key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StructureResult {
    pub kernel: String,
    pub check: StructureCheck,
    /// Launches per run in the baseline (mean), if the kernel is there.
    pub baseline_launches: Option<f64>,
    /// The fewest and the most launches per run of the baseline's runs, if
    /// the kernel is there (reports written before this field have only the
    /// mean).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_range: Option<[f64; 2]>,
    /// Launches in each current run.
    pub current_launches: Vec<u64>,
    /// For a kernel that varies between runs: how many of the baseline's
    /// runs launched it, and how many runs the baseline has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_in: Option<[u64; 2]>,
    pub status: Status,
    pub message: String,
}

impl StructureResult {
    /// Whether the row's own numbers fail it, as the structural check does:
    /// a new or a missing kernel always (the thresholds' policy only says
    /// whether that is a failure, a warning or no row at all); a launch
    /// count outside the baseline runs' range, as `check` judges it. A
    /// report written before the range was kept has only the mean: a whole
    /// mean is then read as the count of every baseline run (an app launches
    /// a kernel as often in each run; one whose runs differed almost always
    /// has a fractional mean), a fractional one tells nothing.
    pub(crate) fn numbers_fail(&self) -> bool {
        let outside = |lo: f64, hi: f64| {
            self.current_launches
                .iter()
                .any(|&n| (n as f64) < lo || (n as f64) > hi)
        };
        match (self.check, self.baseline_range, self.baseline_launches) {
            (StructureCheck::NewKernel | StructureCheck::MissingKernel, _, _) => true,
            (StructureCheck::Varies | StructureCheck::PicksMoved, _, _) => false,
            (StructureCheck::Launches, Some([lo, hi]), _) => outside(lo, hi),
            (StructureCheck::Launches, None, Some(b)) => b.fract() == 0.0 && outside(b, b),
            (StructureCheck::Launches, None, None) => false,
        }
    }

    /// Whether the status is one its numbers allow: a row whose numbers
    /// fail it is `fail` (a launch count, or a kernel under a `fail`
    /// policy) or `warn` (a kernel under a `warn` policy).
    pub(crate) fn status_fits_numbers(&self) -> bool {
        let failed = match self.check {
            StructureCheck::Launches => self.status == Status::Fail,
            StructureCheck::NewKernel | StructureCheck::MissingKernel => {
                matches!(self.status, Status::Fail | Status::Warn)
            }
            // Never gated: only `pass` fits, whatever it says.
            StructureCheck::Varies | StructureCheck::PicksMoved => {
                return self.status == Status::Pass;
            }
        };
        !self.numbers_fail() || failed || self.status == Status::Error
    }
}

/// An ncu rule result that is new since the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct FindingResult {
    pub(crate) kernel: String,
    pub(crate) finding: crate::model::Finding,
    pub(crate) status: Status,
}

/// Whether one kernel's machine code changed since the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct CodeResult {
    pub(crate) kernel: String,
    pub(crate) changed: bool,
    /// `code unchanged`, or `code changed (+12 instructions: 8 DFMA new, 2 FFMA gone)`.
    pub(crate) summary: String,
    /// The code fingerprints, baseline then current.
    pub(crate) baseline_fingerprint: String,
    pub(crate) current_fingerprint: String,
}

/// GPU fingerprints of both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct Devices {
    pub(crate) baseline: String,
    pub(crate) current: String,
    /// True when they differ and `--allow-device-mismatch` let the comparison go on.
    pub(crate) mismatch_allowed: bool,
}

/// What a report gated; each gate names what it looked at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "gate", rename_all = "snake_case")]
pub(crate) enum Subject {
    /// ncu metrics against a baseline under threshold rules.
    Metrics,
    /// compute-sanitizer findings: the tools run (or read from XML) and the app.
    Sanitizer {
        tools: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        app: Option<String>,
    },
    /// The CUDA-graph memory audit of the app.
    Memory { app: String },
}

impl Subject {
    /// The gate's name: `metrics`, `sanitizer`, `memory`.
    pub(crate) fn gate(&self) -> &'static str {
        match self {
            Subject::Metrics => "metrics",
            Subject::Sanitizer { .. } => "sanitizer",
            Subject::Memory { .. } => "memory",
        }
    }
}

/// Everything a reporter needs: what was gated and the result of every
/// check. The outcome and the exit code are not stored: [`Report::outcome`]
/// computes them from the checks, and the JSON writes them computed
/// (`json.rs`). Reading a report back ignores the written ones; the
/// validating reader (`crate::suite::read`) compares them with its own.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Report {
    pub(crate) schema_version: u32,
    pub(crate) ncugate_version: String,
    /// What was gated: the metric gate, a compute-sanitizer run, the graph-memory audit.
    pub(crate) subject: Subject,
    /// The baseline file (metric gate only; empty otherwise).
    #[serde(default)]
    pub(crate) baseline: String,
    pub(crate) inputs: Vec<String>,
    pub(crate) details: Vec<String>,
    /// The thresholds file (metric gate only; empty otherwise).
    #[serde(default)]
    pub(crate) thresholds: String,
    pub(crate) kernel_key: crate::model::KernelKeyMode,
    pub(crate) devices: Option<Devices>,
    /// Errors that made the outcome `error`, each `message (hint: …)`.
    pub errors: Vec<String>,
    pub structure: Vec<StructureResult>,
    pub rules: Vec<RuleResult>,
    pub(crate) findings: Vec<FindingResult>,
    /// Per kernel, whether its machine code changed since the baseline (when
    /// both sides came from reports that embed it).
    #[serde(default)]
    pub(crate) code: Vec<CodeResult>,
    /// Per explained kernel, the source lines (or opcodes) whose counters
    /// changed most since the baseline's source profile.
    #[serde(default)]
    pub(crate) explain: Vec<crate::explain::Explained>,
    /// Trend charts (SVG) of failing rules, from the history store, each
    /// with the index of its rule in `rules`: drawn into the HTML report of
    /// the check that made them, never written to JSON.
    #[serde(skip)]
    pub(crate) trends: Vec<(usize, String)>,
    /// The shared libraries the check's profiled runs mapped (ncu's and the
    /// app's, `dlopen`ed ones included), for the verdict cache: never
    /// written to a report.
    #[serde(skip)]
    pub(crate) libraries: Vec<std::path::PathBuf>,
    /// compute-sanitizer findings, grouped (empty when the sanitizer stage did not run).
    #[serde(default)]
    pub(crate) sanitizer: Vec<crate::sanitizer::SanitizerFinding>,
    /// Graph-memory checks (empty when the memory stage did not run).
    #[serde(default)]
    pub(crate) memory: Vec<crate::memory::MemoryResult>,
    /// What profiling each input cost: launches, ncu's replay passes per kernel, seconds.
    #[serde(default)]
    pub(crate) profiling: Vec<crate::runner::passes::Profiling>,
    /// Things a reader should know that are not checks (e.g. findings not compared).
    pub notes: Vec<Note>,
    /// Set when the GPU was shared during the check's run (another process
    /// on it, or an SM clock well under the baseline's): what showed it and
    /// how many rules were not gated.
    #[serde(default)]
    pub shared_gpu: Option<crate::shared_gpu::SharedGpu>,
    /// The baseline kernels compared under another key, as renamed.
    #[serde(default)]
    pub(crate) renamed: Vec<Renamed>,
    /// Set when the check ran degraded (trace mode: the counters were locked).
    #[serde(default)]
    pub(crate) degraded: Option<Degraded>,
}

/// A check that ran degraded: ncu could not read the performance counters
/// (ERR_NVGPUCTRPERM) and `[gate] locked_counters = "trace"` gated what a
/// CUPTI activity trace shows — the launch structure — and no metric rule.
/// How many rules were not gated is not stored: the rows say it
/// ([`Report::counts`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct Degraded {
    /// The mode that ran: `trace`.
    pub(crate) mode: String,
    /// Why: `performance counters locked (ERR_NVGPUCTRPERM)`.
    pub(crate) reason: String,
    /// What was gated: `launch structure only` (kernels, launches per run).
    pub(crate) gated: String,
    /// How the traced kernels were mapped to the baseline's keys.
    pub(crate) mapping: String,
}

/// What a degraded check's label says after `degraded: `.
pub(crate) const DEGRADED_REASON: &str = "performance counters locked";

impl Degraded {
    /// Trace mode's: the launch structure, mapped as `mapping` says.
    pub(crate) fn trace(mapping: &str) -> Degraded {
        Degraded {
            mode: "trace".into(),
            reason: format!("{DEGRADED_REASON} (ERR_NVGPUCTRPERM)"),
            gated: "launch structure only".into(),
            mapping: mapping.into(),
        }
    }
}

/// A baseline kernel compared under its current key: its key changed with
/// the code (template arguments, a generated kernel's number), and the two
/// were found to be one kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct Renamed {
    /// Its key in the baseline.
    pub(crate) baseline: String,
    /// Its key in the current runs, which the report's rows use.
    pub(crate) current: String,
}

impl Report {
    /// A report for a check that failed before any comparison (exit 2).
    pub fn error(
        baseline: &str,
        inputs: Vec<String>,
        details: Vec<String>,
        thresholds: &str,
        message: String,
    ) -> Report {
        let mut report = Report::empty(baseline, inputs, details, thresholds);
        report.errors.push(message);
        report
    }

    /// A metric-gate report with no checks yet (its outcome pass until checks say otherwise).
    pub fn empty(
        baseline: &str,
        inputs: Vec<String>,
        details: Vec<String>,
        thresholds: &str,
    ) -> Report {
        Report {
            baseline: baseline.to_string(),
            details,
            thresholds: thresholds.to_string(),
            ..Report::about(Subject::Metrics, inputs)
        }
    }

    /// A report about `subject` with no checks yet. The metric gate's own
    /// fields (baseline, details, thresholds) stay empty, and out of the JSON,
    /// for the other gates.
    pub(crate) fn about(subject: Subject, inputs: Vec<String>) -> Report {
        Report {
            schema_version: REPORT_SCHEMA_VERSION,
            ncugate_version: env!("CARGO_PKG_VERSION").to_string(),
            subject,
            baseline: String::new(),
            inputs,
            details: Vec::new(),
            thresholds: String::new(),
            kernel_key: crate::model::KernelKeyMode::default(),
            devices: None,
            errors: Vec::new(),
            structure: Vec::new(),
            rules: Vec::new(),
            findings: Vec::new(),
            code: Vec::new(),
            explain: Vec::new(),
            trends: Vec::new(),
            libraries: Vec::new(),
            sanitizer: Vec::new(),
            memory: Vec::new(),
            profiling: Vec::new(),
            notes: Vec::new(),
            shared_gpu: None,
            renamed: Vec::new(),
            degraded: None,
        }
    }

    /// The status of every check of every gate: the one list [`Report::outcome`] and `counts` read.
    pub(crate) fn statuses(&self) -> impl Iterator<Item = Status> + '_ {
        self.rules
            .iter()
            .map(|r| r.status)
            .chain(self.structure.iter().map(|s| s.status))
            .chain(self.findings.iter().map(|f| f.status))
            .chain(self.sanitizer.iter().map(|f| f.status))
            .chain(self.memory.iter().map(|m| m.status))
    }

    /// The gate's answer, computed from the checks each time it is asked (so
    /// no stage can change a check and leave a stale verdict behind): error
    /// when an error stopped the gate or a check could not be evaluated, else
    /// regression when a check failed, else pass. Warnings, improvements and
    /// skipped checks pass.
    pub(crate) fn outcome(&self) -> Outcome {
        let worst = self.statuses().max().unwrap_or(Status::Pass);
        if !self.errors.is_empty() || worst == Status::Error {
            Outcome::Error
        } else if worst == Status::Fail {
            Outcome::Regression
        } else {
            Outcome::Pass
        }
    }

    /// The process exit code of [`Report::outcome`].
    pub fn exit_code(&self) -> i32 {
        self.outcome().exit_code()
    }

    /// Adds a note: something a reader should know that is not a check.
    pub(crate) fn note(&mut self, text: impl Into<String>) {
        self.notes.push(Note::new(text));
    }

    /// Adds a note of each text.
    pub(crate) fn note_each<T: Into<String>>(&mut self, texts: impl IntoIterator<Item = T>) {
        self.notes.extend(texts.into_iter().map(Note::new));
    }

    /// Counts of results by status: (fail, warn, error, improved, pass).
    pub(crate) fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for s in self.statuses() {
            match s {
                Status::Fail => c.fail += 1,
                Status::Warn => c.warn += 1,
                Status::Error => c.error += 1,
                Status::Improved => c.improved += 1,
                Status::Changed => c.changed += 1,
                Status::Pass => c.pass += 1,
                Status::Skipped => c.skipped += 1,
            }
        }
        c.error += self.errors.len();
        // Kernels that vary between runs, and launches an autotuner moved
        // between its picks, pass ungated: each counted apart.
        let ungated = |check: StructureCheck| {
            self.structure
                .iter()
                .filter(|s| s.check == check && s.status == Status::Pass)
                .count()
        };
        c.varies = ungated(StructureCheck::Varies);
        c.moved = ungated(StructureCheck::PicksMoved);
        c.pass -= (c.varies + c.moved).min(c.pass);
        // Rules a trace could not measure: counted apart from other skipped ones.
        c.locked = self
            .rules
            .iter()
            .filter(|r| {
                r.status == Status::Skipped
                    && r.downgrade
                        .as_ref()
                        .is_some_and(|d| d.reason == Reason::CountersLocked)
            })
            .count();
        c.skipped -= c.locked.min(c.skipped);
        // Rules of kernels whose code varies: counted apart from their status.
        for r in &self.rules {
            if r.downgrade
                .as_ref()
                .is_some_and(|d| d.reason == Reason::CodeVaries)
            {
                // Never a failure or an error: `ungate` made those warnings,
                // and it leaves skipped and errored rules alone.
                let bucket = match r.status {
                    Status::Warn => &mut c.warn,
                    Status::Improved => &mut c.improved,
                    Status::Changed => &mut c.changed,
                    Status::Pass => &mut c.pass,
                    Status::Fail | Status::Error | Status::Skipped => continue,
                };
                *bucket -= 1;
                c.code_varies += 1;
            }
        }
        c.degraded = self.degraded.is_some();
        c.environment_changed = self
            .notes
            .iter()
            .any(|n| n.text.starts_with(ENVIRONMENT_CHANGED));
        c
    }
}

/// The outcome and exit code a report's JSON says. The model never reads
/// them (it computes its own, [`Report::outcome`]); a reader of a report
/// compares them with the computed ones to catch an edited verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(crate) struct Said {
    pub(crate) outcome: Outcome,
    pub(crate) exit_code: i32,
}

impl Said {
    /// What the checks of `report` make it.
    pub(crate) fn of(report: &Report) -> Said {
        Said::of_outcome(report.outcome())
    }

    /// `outcome` with its exit code.
    pub(crate) fn of_outcome(outcome: Outcome) -> Said {
        Said {
            outcome,
            exit_code: outcome.exit_code(),
        }
    }
}

/// Result counts by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) fail: usize,
    pub(crate) warn: usize,
    pub(crate) error: usize,
    pub(crate) improved: usize,
    /// Passed, but moved beyond the allowance in a direction no rule rates.
    pub(crate) changed: usize,
    pub(crate) pass: usize,
    pub(crate) skipped: usize,
    /// Kernels listed but not gated because they vary between runs.
    pub(crate) varies: usize,
    /// Launch counts listed but not gated because an autotuner moved
    /// launches between its picks.
    pub(crate) moved: usize,
    /// The environment that picks kernels (or the profiled range) is not
    /// the baseline's: the headline says so.
    pub(crate) environment_changed: bool,
    /// Metric checks not gated because the counters were locked (trace mode).
    pub(crate) locked: usize,
    /// Metric checks not gated because their kernel's code varies between
    /// runs (whatever their status, a failure's or an error's aside).
    pub(crate) code_varies: usize,
    /// The check ran degraded (trace mode): the headline says so.
    pub(crate) degraded: bool,
}

impl Counts {
    /// The counts in words, as every reporter writes them: the failures
    /// always, the rest only when there are some (`6 failed, 1 warning, 17 passed`).
    pub(crate) fn words(&self) -> Vec<String> {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut words = vec![format!("{} failed", self.fail)];
        for (n, one, many) in [
            (self.warn, "warning", "warnings"),
            (self.error, "error", "errors"),
            (self.improved, "improved", "improved"),
            (self.changed, "changed", "changed"),
            (self.pass, "passed", "passed"),
            (self.skipped, "skipped", "skipped"),
        ] {
            if n > 0 {
                words.push(plural(n, one, many));
            }
        }
        words.extend(self.not_gated_words());
        if self.environment_changed {
            words.push("environment changed".to_string());
        }
        words
    }

    /// The headline's words for what was listed but not gated (`2 not gated
    /// (vary between runs)`, `2 launch counts not gated (picks moved)`, `12
    /// metric checks not gated (code varies)`);
    /// empty when everything was gated.
    pub(crate) fn not_gated_words(&self) -> Vec<String> {
        [
            (
                self.varies,
                "not gated (varies between runs)",
                "not gated (vary between runs)",
            ),
            (
                self.moved,
                "launch count not gated (picks moved)",
                "launch counts not gated (picks moved)",
            ),
            (
                self.locked,
                "metric check not gated (counters locked)",
                "metric checks not gated (counters locked)",
            ),
            (
                self.code_varies,
                "metric check not gated (code varies)",
                "metric checks not gated (code varies)",
            ),
        ]
        .into_iter()
        .filter(|(n, _, _)| *n > 0)
        .map(|(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
        .collect()
    }

    /// What a degraded check adds to its outcome's word (`PASS (degraded:
    /// …)`), empty for any other: in every headline, whatever the format.
    pub(crate) fn degraded_words(&self) -> String {
        if !self.degraded {
            return String::new();
        }
        format!(
            " (degraded: {DEGRADED_REASON} — launch structure only, {} not gated)",
            crate::format::count(self.locked, "metric check", "metric checks")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{StructureCheck, StructureResult};
    use crate::status::Status;

    fn launches(baseline: f64, current: &[u64], status: Status) -> StructureResult {
        StructureResult {
            kernel: "scale".into(),
            check: StructureCheck::Launches,
            baseline_launches: Some(baseline),
            baseline_range: None,
            current_launches: current.to_vec(),
            recorded_in: None,
            status,
            message: String::new(),
        }
    }

    #[test]
    fn a_launch_count_row_is_held_to_its_own_numbers_where_they_tell() {
        // The redundant launch: 6 per run against 3 fails, whatever it says.
        assert!(launches(3.0, &[6, 6], Status::Fail).status_fits_numbers());
        assert!(!launches(3.0, &[6, 6], Status::Pass).status_fits_numbers());
        assert!(!launches(3.0, &[3, 6], Status::Warn).status_fits_numbers());
        assert!(launches(3.0, &[3, 3], Status::Pass).status_fits_numbers());
        // Baseline runs that launched it 3 and 4 times in a report without
        // the range: the row is believed.
        assert!(launches(3.5, &[4], Status::Pass).status_fits_numbers());
        // Baseline runs of 2 and 4 launches (a whole mean, 3): 2 is within
        // their range, so `pass` fits; 5 is not.
        let ranged = |current: &[u64], status| StructureResult {
            baseline_range: Some([2.0, 4.0]),
            ..launches(3.0, current, status)
        };
        assert!(ranged(&[2], Status::Pass).status_fits_numbers());
        assert!(ranged(&[4, 2], Status::Pass).status_fits_numbers());
        assert!(!ranged(&[5], Status::Pass).status_fits_numbers());
        assert!(ranged(&[5], Status::Fail).status_fits_numbers());
        let new = StructureResult {
            check: StructureCheck::NewKernel,
            baseline_launches: None,
            ..launches(0.0, &[1], Status::Warn)
        };
        assert!(new.status_fits_numbers());
        assert!(
            !StructureResult {
                status: Status::Pass,
                ..new
            }
            .status_fits_numbers()
        );
    }
}
