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

use super::schema::{RuleBodyItem, RuleResult};

/// One details-page row of a rule: name, type, description, speedup type,
/// speedup, and the section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleRow {
    pub section: String,
    pub name: String,
    pub kind: String,
    pub description: String,
    pub speedup_type: String,
    pub speedup: String,
}

/// The rows of one rule result.
pub fn rows(rule: &RuleResult) -> Vec<RuleRow> {
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
