//! Each kernel's code against the baseline's: `code unchanged` or `code
//! changed (…)` per kernel, in the *why* of its failing rules; what it
//! found tells the environmental pass ([`super::environmental`]) which
//! kernels' timing-only failures unchanged code leaves unexplained.

use super::environmental::Sameness;
use crate::baseline::Baseline;
use crate::code::{self, CodeMap};
use crate::status::Status;
use crate::verdict::{CodeResult, Report};
use std::collections::BTreeMap;

/// Compares the code of every kernel both sides know, and says it; what is
/// the same of each kernel on both sides, for the environmental pass.
pub(super) fn check(
    report: &mut Report,
    baseline: &Baseline,
    current: &CodeMap,
) -> BTreeMap<String, Sameness> {
    let mut same = BTreeMap::new();
    for (kernel, now) in current {
        let Some(before) = baseline.kernels.get(kernel).and_then(|e| e.code.as_ref()) else {
            continue;
        };
        let change = code::change(before, now);
        let unchanged = change == code::Change::Unchanged;
        let launch =
            before.launch.is_empty() || now.launch.is_empty() || before.launch == now.launch;
        same.insert(
            kernel.clone(),
            Sameness {
                code: unchanged,
                launch,
            },
        );
        report.code.push(CodeResult {
            kernel: kernel.clone(),
            changed: !unchanged,
            summary: change.summary(),
            baseline_fingerprint: before.fingerprint.clone(),
            current_fingerprint: now.fingerprint.clone(),
        });
    }
    if report.code.is_empty() {
        return same;
    }
    for rule in report
        .rules
        .iter_mut()
        .filter(|r| matches!(r.status, Status::Fail | Status::Warn))
    {
        let Some(c) = rule
            .kernel
            .as_ref()
            .and_then(|k| report.code.iter().find(|c| *c.kernel == **k))
        else {
            continue;
        };
        rule.why = Some(match rule.why.take() {
            Some(why) => format!("{}; {why}", c.summary).into(),
            None => c.summary.clone().into(),
        });
    }
    report.note(note(&report.code));
    blame_autotuner(report);
    same
}

/// A failing kernel whose code changed under the name an autotuner gives
/// the kernels it picks (`gemm_fusion_dot`: XLA): the autotuner chooses
/// such a kernel's configuration by timing, in each process, so its code can
/// change with unchanged source. Said beside each such failure and in a
/// warning with the fix that fits the autotuner (seen on an H100: a jitted
/// JAX MLP, the same fusion names in every run, one check's fusions built
/// with other instructions than the baseline's).
fn blame_autotuner(report: &mut Report) {
    use crate::varies::autotuner::Autotuner;
    let mut blamed: BTreeMap<Autotuner, Vec<String>> = BTreeMap::new();
    for rule in report.rules.iter_mut().filter(|r| r.status == Status::Fail) {
        let Some(kernel) = rule.kernel.as_deref() else {
            continue;
        };
        let changed = report
            .code
            .iter()
            .any(|c| c.changed && *c.kernel == *kernel);
        let Some(tuner) = Autotuner::of(kernel).filter(|_| changed) else {
            continue;
        };
        let said = format!(
            "{} picks this kernel's configuration at run time",
            tuner.name()
        );
        rule.why = Some(match rule.why.take() {
            Some(why) => format!("{why}; {said}").into(),
            None => said.into(),
        });
        let kernels = blamed.entry(tuner).or_default();
        if !kernels.iter().any(|k| k == kernel) {
            kernels.push(kernel.to_string());
        }
    }
    for (tuner, kernels) in blamed {
        report.notes.push(crate::note::Note::warning(format!(
            "code changed in kernels that {} picks by timing, in each process ({}): unchanged \
             source can change them, so these failures may be its choice, not the change under \
             test; pin it — {}",
            tuner.name(),
            kernels.join(", "),
            tuner.fix()
        )));
    }
}

/// `code: 2 kernels unchanged; scale: code changed (…)`.
fn note(results: &[CodeResult]) -> String {
    let unchanged = results.iter().filter(|c| !c.changed).count();
    let mut parts = vec![format!(
        "code: {} unchanged",
        crate::format::count(unchanged, "kernel", "kernels")
    )];
    parts.extend(
        results
            .iter()
            .filter(|c| c.changed)
            .map(|c| format!("{}: {}", c.kernel, c.summary)),
    );
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::blame_autotuner;
    use crate::status::Status;
    use crate::verdict::{CodeResult, Report};

    /// A failing report whose first failing kernel is XLA's fusion
    /// `gemm_fusion_dot` (as the H100 JAX run named it), its code `changed`.
    fn jax(changed: bool) -> Report {
        let mut report = crate::report::tests::cases::regression();
        let rule = report
            .rules
            .iter_mut()
            .find(|r| r.status == Status::Fail && r.kernel.is_some())
            .expect("a failing kernel rule");
        rule.kernel = Some("gemm_fusion_dot".into());
        report.code.push(CodeResult {
            kernel: "gemm_fusion_dot".to_string(),
            changed,
            summary: "code changed (+96 instructions: 64 HMMA new, 36 LDGSTS new)".to_string(),
            baseline_fingerprint: "a".to_string(),
            current_fingerprint: "b".to_string(),
        });
        report
    }

    #[test]
    fn a_failing_kernel_an_autotuner_picks_with_changed_code_names_the_autotuner() {
        let mut report = jax(true);
        let notes = report.notes.len();
        blame_autotuner(&mut report);
        let rule = report
            .rules
            .iter()
            .find(|r| r.kernel.as_deref() == Some("gemm_fusion_dot"))
            .expect("the rule");
        let why = rule.why.as_deref().map(String::as_str).unwrap_or_default();
        assert!(
            why.ends_with("XLA's GEMM autotuner picks this kernel's configuration at run time"),
            "{why}"
        );
        assert_eq!(report.notes.len(), notes + 1);
        let note = &report.notes[notes];
        assert_eq!(note.kind, crate::note::Kind::Warning, "{note:?}");
        assert!(
            note.text.contains("(gemm_fusion_dot)")
                && note
                    .text
                    .contains("--xla_gpu_per_fusion_autotune_cache_dir"),
            "{note:?}"
        );
    }

    #[test]
    fn unchanged_code_or_a_kernel_no_autotuner_names_is_left_alone() {
        let mut report = jax(false);
        let before = report.clone();
        blame_autotuner(&mut report);
        assert_eq!(report, before);
        let mut report = crate::report::tests::cases::regression();
        let before = report.clone();
        blame_autotuner(&mut report);
        assert_eq!(report, before);
    }
}
