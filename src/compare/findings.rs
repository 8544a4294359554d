//! ncu rule results that are new since the baseline: the *why* next to a verdict.

use crate::baseline::Baseline;
use crate::model::Findings;
use crate::rules::Policy;
use crate::verdict::{FindingResult, Report, Status};

pub(super) fn check(report: &mut Report, baseline: &Baseline, current: Option<&Findings>, policy: Policy) {
    let recorded = !baseline.details.is_empty();
    match (recorded, current) {
        (false, None) => return,
        (true, None) => {
            report.notes.push("findings not compared: pass the current run's details export with --details".into());
            return;
        }
        (false, Some(_)) => {
            report.notes.push("findings not compared: the baseline was recorded without --details".into());
            return;
        }
        (true, Some(_)) => {}
    }
    let Some(current) = current else { return };
    let status = match policy {
        Policy::Fail => Status::Fail,
        Policy::Warn => Status::Warn,
        Policy::Ignore => return,
    };
    for (kernel, rules) in current {
        let known = baseline.kernels.get(kernel).map(|k| &k.findings);
        for (name, finding) in rules {
            if known.is_some_and(|k| k.contains_key(name)) {
                continue;
            }
            report.findings.push(FindingResult { kernel: kernel.clone(), finding: finding.clone(), status });
        }
    }
}
