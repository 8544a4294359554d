//! `--json`: the whole [`Report`], versioned by its `schema_version`.

use crate::verdict::Report;

/// The report as pretty-printed JSON.
pub fn render(report: &Report) -> String {
    // Serializing plain data with string keys cannot fail; keep a valid
    // document even if it somehow did.
    let mut text = serde_json::to_string_pretty(report).unwrap_or_else(|e| {
        format!(
            "{{\"schema_version\": {}, \"outcome\": \"error\", \"errors\": [{:?}]}}",
            report.schema_version,
            e.to_string()
        )
    });
    text.push('\n');
    text
}
