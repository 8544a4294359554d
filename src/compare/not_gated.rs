//! Rules that are not gated because the GPU was shared: the shared-GPU
//! pass of the comparison, the one place that turns the evidence of
//! [`crate::shared_gpu`] into verdicts:
//!
//! - [`apply`]: under `[gate] shared_gpu = "warn"` every measured result of
//!   a sensitive rule ([`Thresholds::sensitive`]) is left ungated with the
//!   evidence ([`RuleResult::ungate`]), and one beyond its allowance becomes
//!   a warning that names the neighbour: never a silent pass, never a
//!   failure; deterministic rules are gated as always. `"refuse"` is an
//!   error (exit 2), `"gate"` gates everything. The report's `shared_gpu`
//!   says which and how many.
//! - [`cycles`]: a duration rule's message also gives the kernel's elapsed
//!   cycles on both sides.
//! - [`baseline_note`]: a baseline recorded on a shared GPU says so;
//!   [`unattributed_note`]: a probe that could not tell the app's processes apart;
//!   [`mps_note`]: MPS set up for the run.

use crate::error::{BaselineError, Error, Result};
use crate::rules::Thresholds;
use crate::shared_gpu::{GpuEnvironment, Policy, SharedGpu};
use crate::status::Status;
use crate::verdict::{Reason, Report, RuleResult};
use std::sync::Arc;

/// Applies `policy` to `report`'s rules when `shared` says the GPU was shared.
pub(crate) fn apply(
    report: &mut Report,
    thresholds: &Thresholds,
    shared: Option<SharedGpu>,
    policy: Policy,
) -> Result<()> {
    let Some(mut shared) = shared else {
        return Ok(());
    };
    shared.policy = policy;
    // A rule that could not be measured moved nothing a neighbour could have moved.
    let affected = |r: &RuleResult| {
        thresholds.sensitive(r.line, &r.metric)
            && !matches!(r.status, Status::Skipped | Status::Error)
    };
    match policy {
        Policy::Gate => {}
        Policy::Refuse => {
            let n = report.rules.iter().filter(|r| affected(r)).count();
            if n > 0 {
                return Err(Error::from(BaselineError::SharedGpu {
                    evidence: shared.evidence,
                    sensitive: n,
                    recording: false,
                }));
            }
        }
        Policy::Warn => {
            // One copy of the evidence, shared by every result it ungates.
            let evidence = Arc::new(shared.evidence.clone());
            for r in report.rules.iter_mut().filter(|r| affected(r)) {
                r.ungate(Reason::SharedGpu, Some(Arc::clone(&evidence)));
                shared.not_gated += 1;
                if r.downgraded() {
                    shared.over_allowance += 1;
                }
            }
        }
    }
    report.shared_gpu = Some(shared);
    Ok(())
}

/// Adds both sides' elapsed cycles to each duration rule's message of a
/// kernel whose exports have them: cycles do not stretch when the clock
/// falls, so they tell a slower clock from more work (see docs/src/shared-gpus.md for
/// how far that holds).
pub(crate) fn cycles(
    rules: &mut [RuleResult],
    baseline: Option<&GpuEnvironment>,
    current: &GpuEnvironment,
) {
    let Some(baseline) = baseline else { return };
    for r in rules
        .iter_mut()
        .filter(|r| r.metric.starts_with("gpu__time_duration"))
    {
        let Some(kernel) = r.kernel.as_deref() else {
            continue;
        };
        let (Some(b), Some(c)) = (
            baseline.kernels.get(kernel).and_then(|k| k.cycles),
            current.kernels.get(kernel).and_then(|k| k.cycles),
        ) else {
            continue;
        };
        let change = if b != 0.0 {
            format!(" ({:+.1}%)", (c - b) / b * 100.0)
        } else {
            String::new()
        };
        r.message.push_str(&format!(
            "; elapsed {} → {}{change}",
            crate::format::format_value(b, "cycle"),
            crate::format::format_value(c, "cycle")
        ));
    }
}

/// A note when NVML listed processes that could not be told from the app.
pub(crate) fn unattributed_note(current: &GpuEnvironment) -> Option<String> {
    current.unattributed.then(|| {
        "NVML listed GPU processes, none of them ncugate's own (another PID namespace?): they were counted against ncugate's own processes instead of told apart by pid".to_string()
    })
}

/// A note when MPS was set up for the run: its clients share the GPU's SMs
/// and show as MPS clients, which this run's looks counted.
pub(crate) fn mps_note(current: &GpuEnvironment) -> Option<String> {
    let at = current.mps_control.as_deref()?;
    let clients = match current.tenancy.mps_clients_beyond_own {
        Some(n) if n > 0 => format!("{n} beyond ncugate's own were listed"),
        Some(_) => "none beyond ncugate's own were listed".to_string(),
        None => "NVML listed none".to_string(),
    };
    Some(format!(
        "MPS is set up here ({}): other MPS clients may share the GPU; {clients}",
        crate::text::escape::one_line(at.to_string())
    ))
}

/// A note when the baseline itself was recorded on a shared GPU.
pub(crate) fn baseline_note(baseline: Option<&GpuEnvironment>) -> Option<String> {
    let why = baseline?.shared.as_deref()?;
    Some(format!(
        "the baseline was recorded on a shared GPU ({}): its durations and DRAM traffic may be a neighbour's too; re-record it on a quiet GPU",
        crate::text::escape::one_line(why.to_string())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mps_set_up_is_a_note_that_says_how_many_clients_were_counted() {
        let mut env = GpuEnvironment::default();
        assert_eq!(mps_note(&env), None);
        env.mps_control = Some("CUDA_MPS_PIPE_DIRECTORY=/tmp/mps\n::error::x".into());
        env.tenancy.mps_clients_beyond_own = Some(0);
        let note = mps_note(&env).expect("a note");
        assert!(!note.contains('\n'), "{note}");
        assert!(
            note.ends_with("none beyond ncugate's own were listed"),
            "{note}"
        );
        env.tenancy.mps_clients_beyond_own = Some(2);
        assert!(
            mps_note(&env)
                .unwrap()
                .ends_with("2 beyond ncugate's own were listed")
        );
    }
}
