//! Each gate's results as sections, one function per gate: the metric
//! gate's kernels and whole run, compute-sanitizer's tools, the graph
//! memory. The titles, the grouping and the order of every section are
//! decided here, once, for every format.

use super::{Check, Section, SectionKind, TOTAL, rank, rows};
use crate::memory::MemoryResult;
use crate::sanitizer::SanitizerFinding;
use crate::verdict::Report;
use std::collections::BTreeMap;

/// The metric gate: a section per kernel by name (its structural checks,
/// rules and new ncu findings, in the report's order), then the whole run's
/// rules when a rule gates it.
pub(super) fn metrics(report: &Report) -> Vec<Section<'_>> {
    let mut kernels: BTreeMap<&str, Vec<Check<'_>>> = BTreeMap::new();
    let mut total: Vec<Check<'_>> = Vec::new();
    let measured = report.structure.iter().map(rows::structure_check).chain(
        report
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| rows::rule_check(i, r)),
    );
    for check in measured.chain(report.findings.iter().map(rows::finding)) {
        match check.kernel {
            Some(k) => kernels.entry(k).or_default().push(check),
            None => total.push(check),
        }
    }
    let mut sections: Vec<Section<'_>> = kernels
        .into_iter()
        .map(|(k, checks)| Section::new(k.to_string(), SectionKind::Kernel, checks))
        .collect();
    if !total.is_empty() {
        sections.push(Section::new(TOTAL.into(), SectionKind::Total, total));
    }
    sections
}

/// compute-sanitizer: a section per tool, in the order the tools ran, each
/// finding what needs attention first.
pub(super) fn sanitizer(findings: &[SanitizerFinding]) -> Vec<Section<'_>> {
    let mut tools: Vec<&str> = Vec::new();
    for f in findings {
        if !tools.contains(&f.tool.as_str()) {
            tools.push(f.tool.as_str());
        }
    }
    tools
        .into_iter()
        .map(|tool| {
            let checks = findings
                .iter()
                .filter(|f| f.tool.as_str() == tool)
                .map(rows::sanitizer)
                .collect();
            list(format!("compute-sanitizer {tool}"), checks)
        })
        .collect()
}

/// The graph-memory audit: one section, what needs attention first.
pub(super) fn memory(results: &[MemoryResult]) -> Vec<Section<'_>> {
    if results.is_empty() {
        return Vec::new();
    }
    vec![list(
        "GPU memory".into(),
        results.iter().map(rows::memory).collect(),
    )]
}

/// A list section, its rows what needs attention first (in the report's order otherwise).
fn list<'r>(title: String, mut checks: Vec<Check<'r>>) -> Section<'r> {
    checks.sort_by_key(|c| rank(c.status));
    Section::new(title, SectionKind::List, checks)
}
