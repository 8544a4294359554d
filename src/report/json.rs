//! `--json`: the whole [`Report`](crate::verdict::Report) behind the view,
//! versioned by its `schema_version` — the model itself, for machines, so
//! nothing the view words for people is in it.

use super::view::View;

/// The view's report as pretty-printed JSON.
pub fn render(view: &View<'_>) -> String {
    let report = view.report;
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
