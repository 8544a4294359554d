//! ncu rule results that are new since the baseline: the *why* next to a verdict.

use crate::baseline::Baseline;
use crate::model::Findings;
use crate::rules::Policy;
use crate::status::Status;
use crate::verdict::{FindingResult, Report};

pub(super) fn check(
    report: &mut Report,
    baseline: &Baseline,
    current: Option<&Findings>,
    policy: Policy,
) {
    let recorded = !baseline.details.is_empty();
    match (recorded, current) {
        (false, None) => return,
        (true, None) => {
            report.note(
                "findings not compared: pass the current run's details export with --details",
            );
            return;
        }
        (false, Some(_)) => {
            report.note("findings not compared: the baseline was recorded without --details");
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
    // A kernel the baseline does not have (renamed, or a variant) is compared
    // with the baseline as a whole: only rules no baseline kernel triggered are new.
    let anywhere: std::collections::BTreeSet<&String> = baseline
        .kernels
        .values()
        .flat_map(|k| k.findings.keys())
        .collect();
    for (kernel, rules) in current {
        let mut new: Vec<FindingResult> = Vec::new();
        for (name, finding) in rules {
            let known = match baseline.kernels.get(kernel) {
                Some(k) => k.findings.contains_key(name),
                None => anywhere.contains(name),
            };
            if !known {
                new.push(FindingResult {
                    kernel: kernel.clone(),
                    finding: finding.clone(),
                    status,
                });
            }
        }
        // Largest estimated speedup first: the likeliest explanation leads.
        new.sort_by(|a, b| {
            b.finding
                .estimated_speedup_pct
                .unwrap_or(0.0)
                .total_cmp(&a.finding.estimated_speedup_pct.unwrap_or(0.0))
        });
        report.findings.extend(new);
    }
}
