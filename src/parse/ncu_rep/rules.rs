//! Rule results as ncu's details page prints them.
//!
//! Each rule of a `--set`/`--section` run leaves a `RuleResult` per result:
//! its identifier (`Rule Name`), its section's identifier (`Section Name`)
//! and a body of items; every item with a message is one row of the details
//! page, with the message's type (`Rule Type`), its text (`Rule Description`)
//! and the item's estimated speedup (`Estimated Speedup Type`, `Estimated
//! Speedup`, in percent with four significant digits). The text's links are
//! printed as ncu prints them: `@section:ID:Title@` as `Title`,
//! `@url:Text:https://…@` as `Text (https://…)`.
//!
//! ncu lists a result's rules section by section, in the sections' display
//! order (`ProfilerSection.Order`, lower first), not in the order the report
//! stores them (the order the rules ran in); see [`in_section_order`].

use super::schema::{RuleBodyItem, RuleResult, Section};
use std::collections::HashMap;

/// One details-page row of a rule: name, type, description, speedup type,
/// speedup, and the section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RuleRow {
    pub(crate) section: String,
    pub(crate) name: String,
    pub(crate) kind: String,
    pub(crate) description: String,
    pub(crate) speedup_type: String,
    pub(crate) speedup: String,
}

/// `rules` in the order ncu's details page lists them: by the display order
/// of their section among `sections`, rules of one section in the order the
/// report stores them. A rule whose section is not listed, or has no order,
/// comes after the others, in stored order.
pub(crate) fn in_section_order(
    mut rules: Vec<RuleResult>,
    sections: &[Section],
) -> Vec<RuleResult> {
    // Each section's order, the first section of an identifier deciding, in
    // one pass: a scan of the sections per rule comparison made many rules
    // and sections quadratic.
    let mut orders: HashMap<&str, Option<u32>> = HashMap::with_capacity(sections.len());
    for s in sections {
        if let Some(id) = s.identifier.as_deref() {
            orders.entry(id).or_insert(s.order);
        }
    }
    let order = |rule: &RuleResult| {
        rule.section
            .as_deref()
            .and_then(|id| *orders.get(id)?)
            .unwrap_or(u32::MAX)
    };
    // A stable sort keeps the stored order within a section.
    rules.sort_by_cached_key(order);
    rules
}

/// The rows of one rule result.
pub(crate) fn rows(rule: &RuleResult) -> Vec<RuleRow> {
    let items = rule
        .body
        .as_ref()
        .map(|b| b.items.as_slice())
        .unwrap_or_default();
    items.iter().filter_map(|item| row(rule, item)).collect()
}

fn row(rule: &RuleResult, item: &RuleBodyItem) -> Option<RuleRow> {
    let message = item.message.as_ref()?;
    let kind = match message.kind.unwrap_or(0) {
        2 => "WRN",
        3 => "ERR",
        4 => "OPT",
        // None and Ok are information.
        _ => "INF",
    };
    let (speedup_type, speedup) = match &item.speedup {
        Some(s) => (
            match s.kind {
                Some(1) => "local",
                Some(2) => "global",
                _ => "",
            }
            .to_string(),
            s.value
                .filter(|v| v.is_finite())
                .map(significant4)
                .unwrap_or_default(),
        ),
        None => (String::new(), String::new()),
    };
    Some(RuleRow {
        section: rule.section.clone().unwrap_or_default(),
        name: rule.identifier.clone().unwrap_or_default(),
        kind: kind.into(),
        description: links(message.text.as_deref().unwrap_or_default()),
        speedup_type,
        speedup,
    })
}

/// `@section:ID:Title@` → `Title`, `@url:Text:URL@` → `Text (URL)`.
fn links(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        let after = &rest[at + 1..];
        let link = ["section:", "url:"]
            .into_iter()
            .find(|p| after.starts_with(p))
            .and_then(|p| Some((p, after.find('@')?)));
        let Some((prefix, end)) = link else {
            out.push_str(&rest[..=at]);
            rest = after;
            continue;
        };
        out.push_str(&rest[..at]);
        let body = &after[prefix.len()..end];
        let (first, second) = body.split_once(':').unwrap_or((body, ""));
        if prefix == "section:" {
            out.push_str(if second.is_empty() { first } else { second });
        } else if second.is_empty() {
            out.push_str(first);
        } else {
            out.push_str(&format!("{first} ({second})"));
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// `printf("%.4g")`: four significant digits, trailing zeros dropped.
fn significant4(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let exponent = v.abs().log10().floor() as i32;
    if !(-5..4).contains(&exponent) {
        let text = format!("{v:.3e}");
        let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
        let mantissa = trim_zeros(mantissa);
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    let decimals = (3 - exponent).max(0) as usize;
    trim_zeros(&format!("{v:.decimals$}"))
}

fn trim_zeros(text: &str) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(section: &str, name: &str) -> RuleResult {
        RuleResult {
            identifier: Some(name.into()),
            section: Some(section.into()),
            body: None,
        }
    }

    /// `(Section Name, Rule Name)` of each rule row of a details-page CSV,
    /// consecutive rows of one rule merged.
    fn listed(csv_path: &str) -> Vec<(String, String)> {
        let path = format!("{}/{csv_path}", env!("CARGO_MANIFEST_DIR"));
        // ncu ends a metric row after its value: rows are of unequal length.
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .from_path(&path)
            .expect("fixture");
        let header = reader.headers().expect("header").clone();
        let col = |name: &str| header.iter().position(|h| h == name).expect(name);
        let (section, name) = (col("Section Name"), col("Rule Name"));
        let mut out: Vec<(String, String)> = Vec::new();
        for record in reader.records() {
            let record = record.expect("row");
            let cell = |i: usize| record.get(i).unwrap_or_default().to_string();
            let row = (cell(section), cell(name));
            if !row.1.is_empty() && out.last() != Some(&row) {
                out.push(row);
            }
        }
        out
    }

    /// The `--set full` report of the H200 end-to-end run (`F.ncu-rep`)
    /// stores its rules in the order they ran; ncu lists them by section
    /// order (`F.ncu.details.csv`).
    #[test]
    fn rules_are_listed_in_section_order() {
        // The rules of `F.ncu-rep` that print rows, in the order it stores them.
        let stored: Vec<RuleResult> = [
            ("SpeedOfLight", "SOLBottleneck"),
            ("SchedulerStats", "IssueSlotUtilization"),
            ("Occupancy", "AchievedOccupancy"),
            ("WarpStateStats", "CPIStall"),
            ("ComputeWorkloadAnalysis", "HighPipeUtilization"),
            ("MemoryWorkloadAnalysis_Chart", "MemoryL2Compression"),
            ("SpeedOfLight_RooflineChart", "SOLFPRoofline"),
        ]
        .iter()
        .map(|(section, name)| rule(section, name))
        .collect();
        // The sections and orders of a `--set full` result, in stored order
        // (by identifier), as fixtures/public-ncu-rep's reports store them.
        let sections: Vec<Section> = [
            ("ComputeWorkloadAnalysis", 20),
            ("InstructionStats", 60),
            ("LaunchStats", 70),
            ("MemoryWorkloadAnalysis", 30),
            ("MemoryWorkloadAnalysis_Chart", 31),
            ("MemoryWorkloadAnalysis_Tables", 32),
            ("Occupancy", 80),
            ("SchedulerStats", 40),
            ("SourceCounters", 100),
            ("SpeedOfLight", 10),
            ("SpeedOfLight_RooflineChart", 11),
            ("WarpStateStats", 50),
        ]
        .into_iter()
        .map(|(identifier, order)| Section {
            identifier: Some(identifier.into()),
            order: Some(order),
        })
        .collect();
        let sorted: Vec<(String, String)> = in_section_order(stored, &sections)
            .into_iter()
            .map(|r| {
                (
                    r.section.unwrap_or_default(),
                    r.identifier.unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            sorted,
            listed("fixtures/h200/ncu-rep/e2e/F.ncu.details.csv")
        );
    }

    #[test]
    fn a_rule_of_an_unlisted_section_comes_last() {
        let sections = [Section {
            identifier: Some("B".into()),
            order: Some(5),
        }];
        let sorted = in_section_order(
            vec![rule("A", "a"), rule("B", "b"), rule("C", "c")],
            &sections,
        );
        let names: Vec<_> = sorted
            .iter()
            .filter_map(|r| r.identifier.as_deref())
            .collect();
        assert_eq!(names, ["b", "a", "c"]);
    }

    /// 40,000 rules over 40,000 sections, each rule's section listed last
    /// but one: a scan of the sections per comparison is ~10^10 steps
    /// (minutes unoptimized); one index of the sections is 80,000.
    #[test]
    fn many_rules_and_sections_sort_in_one_pass() {
        const N: u32 = 40_000;
        let sections: Vec<Section> = (0..N)
            .map(|i| Section {
                identifier: Some(format!("s{i}")),
                order: Some(N - i),
            })
            .collect();
        let rules: Vec<RuleResult> = (0..N).map(|i| rule(&format!("s{i}"), "r")).collect();
        let sorted = in_section_order(rules, &sections);
        assert_eq!(sorted[0].section.as_deref(), Some("s39999"));
        assert_eq!(sorted[N as usize - 1].section.as_deref(), Some("s0"));
    }

    #[test]
    fn speedups_print_with_four_significant_digits() {
        // As ncu 2025.3.1 printed them (fixtures/h200/graph_app.base.full.details.csv).
        assert_eq!(significant4(85.4567), "85.46");
        assert_eq!(significant4(0.000_894_94), "0.0008949");
        assert_eq!(significant4(2.4231), "2.423");
        assert_eq!(significant4(10.049), "10.05");
        assert_eq!(significant4(50.0), "50");
        assert_eq!(significant4(100.0), "100");
    }

    #[test]
    fn links_print_as_text() {
        assert_eq!(
            links(
                "Check the @section:LaunchStats:Launch Statistics@ and @section:SchedulerStats:Scheduler Statistics@ sections."
            ),
            "Check the Launch Statistics and Scheduler Statistics sections."
        );
        assert_eq!(
            links(
                "See the @url:CUDA Best Practices Guide:https://docs.nvidia.com/cuda/x.html#occupancy@ for more."
            ),
            "See the CUDA Best Practices Guide (https://docs.nvidia.com/cuda/x.html#occupancy) for more."
        );
        assert_eq!(links("a@b and 100%"), "a@b and 100%");
    }
}
