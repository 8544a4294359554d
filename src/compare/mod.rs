//! Compare current runs with a baseline, in the order that makes the answer
//! trustworthy: the GPU fingerprint first (different hardware is not
//! comparable), then the passes of the judgment, in the order `PASSES`
//! gives: the structure (new, missing kernels, launch counts — a redundant
//! graph node shows up exactly here), the threshold rules, the ncu findings
//! that explain them, then the policies that leave some results ungated —
//! a shared GPU's sensitive rules ([`not_gated`]), the code compared
//! (`code.rs`), timing-only failures of unchanged code ([`environmental`]).
//! Each policy marks a result with one typed [`crate::verdict::Downgrade`].

pub(crate) mod code;
pub(crate) mod environmental;
mod findings;
pub(crate) mod identity;
pub(crate) mod not_gated;
mod rule;
pub(crate) use rule::{allowance, locked};
pub(crate) mod structure;

use crate::baseline::Baseline;
use crate::error::{Error, Result};
use crate::model::{Findings, Fingerprint, Run};
use crate::note::Note;
use crate::rules::Thresholds;
use crate::verdict::{Devices, REPORT_SCHEMA_VERSION, Report};
use std::collections::BTreeMap;

/// How the message of a rule whose `kernels` filter matches no kernel starts
/// (a typo to fix, never a rule to make optional).
pub(crate) const NO_KERNEL_MATCHES: &str = "`kernels = ";

/// Everything a comparison looks at.
pub(crate) struct Inputs<'a> {
    pub(crate) baseline: &'a Baseline,
    pub(crate) baseline_path: String,
    pub(crate) runs: &'a [Run],
    /// Findings of the `--details` exports, when given.
    pub(crate) findings: Option<&'a Findings>,
    pub(crate) details_paths: Vec<String>,
    pub(crate) thresholds: &'a Thresholds,
    /// The runs' GPU against the baseline's, judged once by the caller.
    pub(crate) device: Device<'a>,
    /// Notes about the data the report starts with (e.g. metrics read from the details page).
    pub(crate) notes: Vec<String>,
    /// The current kernels' code, when the inputs embed it.
    pub(crate) code: Option<&'a crate::code::CodeMap>,
    /// What a timing-only failure with unchanged code becomes.
    pub(crate) environmental: environmental::Environmental,
    /// What an autotuner's new build of a kernel is gated on.
    pub(crate) autotuned_builds: code::AutotunedBuilds,
    /// What ncugate saw of the GPU during the current runs.
    pub(crate) gpu: &'a crate::shared_gpu::GpuEnvironment,
    /// `[gate] shared_gpu`: what to do with sensitive rules on a shared GPU.
    pub(crate) shared_gpu: crate::shared_gpu::Policy,
}

/// The current runs' GPU: their one fingerprint
/// ([`crate::model::common_fingerprint`]) and whether it is the baseline's
/// ([`same_device`], whose error, a mismatch not allowed, the caller gave).
#[derive(Clone, Copy)]
pub(crate) struct Device<'a> {
    pub(crate) current: &'a Fingerprint,
    pub(crate) same: bool,
}

/// Compares; `Err` only for what makes the comparison meaningless (device
/// mismatch, another graph-profiling mode, a shared GPU under `shared_gpu = "refuse"`).
pub(crate) fn compare(inputs: &Inputs<'_>) -> Result<Report> {
    let Inputs {
        baseline,
        runs,
        thresholds,
        ..
    } = inputs;
    let current = inputs.device.current;
    let mut report = Report {
        schema_version: REPORT_SCHEMA_VERSION,
        ncugate_version: env!("CARGO_PKG_VERSION").to_string(),
        subject: crate::verdict::Subject::Metrics,
        baseline: inputs.baseline_path.clone(),
        inputs: runs
            .iter()
            .map(|r| r.source.display().to_string())
            .collect(),
        details: inputs.details_paths.clone(),
        thresholds: thresholds.source.clone(),
        kernel_key: baseline.kernel_key,
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
        profiling: runs
            .iter()
            .map(|r| crate::runner::passes::Profiling::of(r, None))
            .collect(),
        notes: inputs.notes.iter().cloned().map(Note::new).collect(),
        shared_gpu: None,
        renamed: Vec::new(),
        degraded: None,
    };

    comparable_mode(baseline, runs)?;
    let same_device = inputs.device.same;
    report.devices = Some(Devices {
        baseline: baseline.fingerprint.to_string(),
        current: current.to_string(),
        mismatch_allowed: !same_device,
    });
    setting_notes(inputs, &mut report);
    // A kernel whose key changed with the code (template arguments, a
    // generated kernel's number) is compared under its current key.
    let pairs = identity::pairs(baseline, runs, inputs.code);
    let renamed;
    let baseline: &Baseline = if pairs.is_empty() {
        baseline
    } else {
        renamed = identity::renamed(baseline, &pairs);
        report.note_each(pairs.iter().map(identity::Pair::note));
        report.renamed = pairs
            .iter()
            .map(|p| crate::verdict::Renamed {
                baseline: p.baseline.clone(),
                current: p.current.clone(),
            })
            .collect();
        &renamed
    };
    // Kernels the baseline's runs did not launch alike are listed, not
    // gated: the rules see the runs without them (their totals too).
    let stable =
        (!baseline.variable.is_empty()).then(|| crate::varies::without(runs, &baseline.variable));
    let share = crate::varies::Share::of(runs, |k| baseline.variable.contains_key(k));
    let names = baseline.variable.keys().map(String::as_str);
    report
        .notes
        .extend(crate::varies::warning(names, &share, "checked"));
    let mut judging = Judging {
        inputs,
        baseline,
        stable: stable.as_deref().unwrap_or(runs),
        same_code: BTreeMap::new(),
    };
    for pass in PASSES {
        judging.run(pass, &mut report)?;
    }
    // Listed in every format, whatever rows it shows: a passing row may be hidden.
    let ungated: Vec<String> = report
        .structure
        .iter()
        .filter(|s| s.check.never_gated())
        .map(|s| format!("`{}` {}", s.kernel, s.message))
        .collect();
    report.note_each(ungated);
    Ok(report)
}

/// Notes on what the comparison stands on: the profiler's version, MIG
/// clocks, a partial or allowed device mismatch, an unknown σ.
fn setting_notes(inputs: &Inputs<'_>, report: &mut Report) {
    let Inputs {
        baseline,
        runs,
        thresholds,
        ..
    } = inputs;
    let current = inputs.device.current;
    let same_device = inputs.device.same;
    let profiler = runs.iter().find_map(|r| r.profiler_version.as_deref());
    if let (Some(recorded), Some(now)) = (baseline.profiler_version.as_deref(), profiler)
        && recorded != now
    {
        report.note(format!(
            "the profiler changed: the baseline's reports were written by Nsight Compute {recorded}, this run's by {now}; metric definitions and rules can differ between versions"
        ));
    }
    for gpu in &current.gpus {
        if let Some(profile) = crate::runner::mig::profile_of(&gpu.name) {
            report.note(crate::runner::mig::clocks_note(&gpu.name, profile));
        }
    }
    if let Some(note) = partial_note(&baseline.fingerprint, current) {
        report.note(note);
    }
    if !same_device {
        report.note(format!(
            "device mismatch allowed by --allow-device-mismatch: baseline {}, current {}",
            baseline.fingerprint, current
        ));
    }

    // nvbench measured its noise: a baseline of one of its files has σ.
    let measured = (&baseline.total.metrics)
        .into_iter()
        .any(|(_, m)| m.mean.stddev > 0.0);
    if baseline.runs < 2 && !measured && thresholds.rules.iter().any(|r| r.noise > 0.0) {
        report.note(format!(
            "the baseline has {} run: σ is unknown, so `noise` allowances (k·σ) are 0; record 3 or more runs",
            baseline.runs
        ));
    }
}

/// One pass of the judgment: each decides some checks' statuses, or
/// changes the ones the passes before it decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// New and missing kernels, launch counts.
    Structure,
    /// Every threshold rule on every kernel and on the whole run.
    Rules,
    /// The ncu findings new since the baseline.
    Findings,
    /// A shared GPU's sensitive rules left ungated (or refused), with the
    /// words that go with them: elapsed cycles, the baseline's own GPU.
    SharedGpu,
    /// Each kernel's machine code against the baseline's (words only).
    Code,
    /// Timing-only failures of unchanged code made warnings (or said gated).
    Environmental,
}

/// The passes in order: the checks first, then the policies that downgrade
/// them. Each reads what the passes before it decided: the shared-GPU pass
/// the rules' statuses; the environmental pass the structure's, the rules'
/// as the shared GPU left them (a failure it made a warning is not one to
/// explain again) and what the code pass compared.
const PASSES: [Pass; 6] = [
    Pass::Structure,
    Pass::Rules,
    Pass::Findings,
    Pass::SharedGpu,
    Pass::Code,
    Pass::Environmental,
];

/// What the passes read: the inputs, the baseline (its kernels renamed to
/// their current keys), and what the code pass found for the environmental one.
struct Judging<'a> {
    inputs: &'a Inputs<'a>,
    baseline: &'a Baseline,
    /// The runs without the baseline's variable kernels: what the rules gate.
    stable: &'a [Run],
    same_code: BTreeMap<String, environmental::Sameness>,
}

impl Judging<'_> {
    fn run(&mut self, pass: Pass, report: &mut Report) -> Result<()> {
        let (inputs, baseline) = (self.inputs, self.baseline);
        let (runs, thresholds) = (inputs.runs, inputs.thresholds);
        match pass {
            Pass::Structure => {
                report.structure = structure::check(baseline, runs, &thresholds.structure);
            }
            Pass::Rules => report.rules = rule::check_all(baseline, self.stable, thresholds),
            Pass::Findings => {
                findings::check(report, baseline, inputs.findings, thresholds.findings.new)
            }
            Pass::SharedGpu => {
                not_gated::cycles(&mut report.rules, baseline.gpu.as_ref(), inputs.gpu);
                report.note_each(not_gated::baseline_note(baseline.gpu.as_ref()));
                report.note_each(not_gated::unattributed_note(inputs.gpu));
                report.note_each(not_gated::mps_note(inputs.gpu));
                let shared = crate::shared_gpu::assess(inputs.gpu, baseline.gpu.as_ref());
                not_gated::apply(report, thresholds, shared, inputs.shared_gpu)?;
            }
            Pass::Code => {
                if let Some(current) = inputs.code {
                    self.same_code = code::check(report, baseline, current);
                }
                code::ungate_varying(report, baseline, inputs.autotuned_builds);
            }
            Pass::Environmental => {
                environmental::apply(report, &self.same_code, inputs.environmental);
            }
        }
        Ok(())
    }
}

/// Whether the runs' GPU is the baseline's; `Err` when it is not (or the two
/// share no fingerprint field) and the mismatch is not allowed. Checked before
/// anything else about the data: an A100 export missing an H200 metric is a
/// device mismatch first.
pub(crate) fn same_device(
    baseline: &Baseline,
    current: &Fingerprint,
    allow_mismatch: bool,
) -> Result<bool> {
    let identified = crate::model::shares_identity(&baseline.fingerprint, current);
    let same_device = identified && crate::model::same_hardware(&baseline.fingerprint, current);
    if !same_device && !allow_mismatch {
        return Err(Error::from(crate::error::BaselineError::Device {
            recorded: baseline.fingerprint.to_string(),
            current: if identified {
                current.to_string()
            } else {
                format!(
                    "{current}, which shares no GPU name, compute capability or SM count with the baseline to compare"
                )
            },
        }));
    }
    Ok(same_device)
}

/// A whole-graph result and per-node kernel results measure different
/// things: refuse to compare them (exit 2), whichever side the mode is known
/// from (the baseline's exports, or the settings it was profiled with).
fn comparable_mode(baseline: &Baseline, runs: &[Run]) -> Result<()> {
    let recorded = baseline
        .graph_mode
        .or_else(|| baseline.profile.as_ref().map(|p| p.graph_profiling));
    let Some(recorded) = recorded else {
        return Ok(());
    };
    for run in runs {
        if let Some(mode) = run.graph_mode
            && mode != recorded
        {
            return Err(Error::from(
                crate::error::BaselineError::ExportGraphProfiling {
                    export: run.source.display().to_string(),
                    mode: mode.as_str().to_string(),
                    recorded: recorded.as_str().to_string(),
                },
            ));
        }
    }
    Ok(())
}

/// A note for the report when either side's fingerprint lacks parts.
pub(crate) fn partial_note(baseline: &Fingerprint, current: &Fingerprint) -> Option<String> {
    let missing = |f: &Fingerprint| -> Vec<&'static str> {
        if f.gpus.is_empty() {
            return vec!["name", "compute capability", "SM count"];
        }
        let mut out: Vec<&'static str> = f.gpus.iter().flat_map(|g| g.unknown_parts()).collect();
        out.dedup();
        out
    };
    let (b, c) = (missing(baseline), missing(current));
    if b.is_empty() && c.is_empty() {
        return None;
    }
    let say = |side: &str, parts: &[&str]| {
        (!parts.is_empty()).then(|| {
            format!(
                "the {side} export does not give the GPU's {}",
                parts.join(", ")
            )
        })
    };
    let said: Vec<String> = [say("baseline's", &b), say("current", &c)]
        .into_iter()
        .flatten()
        .collect();
    Some(format!(
        "partial GPU fingerprint: {}; only the parts both sides know were compared",
        said.join("; ")
    ))
}
