//! `--json`: the whole model behind a document — a check's
//! [`Report`], a suite's report — versioned by its `schema_version`: the
//! model itself, for machines, so nothing the view words for people is in it.

use super::document::Model;
use super::view::View;
use crate::verdict::Report;

/// The view's report as pretty-printed JSON.
pub fn render(view: &View<'_>) -> String {
    view.report.json()
}

impl Model for Report {
    fn json(&self) -> String {
        // Serializing plain data with string keys cannot fail; keep a valid
        // document even if it somehow did.
        let mut text = serde_json::to_string_pretty(self).unwrap_or_else(|e| {
            format!(
                "{{\"schema_version\": {}, \"outcome\": \"error\", \"errors\": [{:?}]}}",
                self.schema_version,
                e.to_string()
            )
        });
        text.push('\n');
        text
    }

    fn write_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        write_pretty(self, out)
    }
}

/// `model` as pretty-printed JSON with a final newline, written as it is
/// made: the same bytes as `serde_json::to_string_pretty` and a newline.
pub(crate) fn write_pretty<T: serde::Serialize + ?Sized>(
    model: &T,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, model)?;
    out.write_all(b"\n")
}
