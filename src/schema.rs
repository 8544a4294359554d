//! JSON Schemas of the files ncugate writes for other tools to read: the
//! baseline, the `--json` report of one gate, and the `--json` report of a
//! suite (a shard's or a merged one). They are generated from the very types
//! that are serialized (schemars reads their serde attributes), so they
//! cannot drift from the code; `schemas/` holds them, committed, and the
//! `json_schemas` test fails when a type changes without them
//! (`UPDATE_SCHEMAS=1 cargo test --test integration json_schemas` rewrites them).

use schemars::JsonSchema;

/// One schema file: its name under `schemas/` and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaFile {
    pub name: String,
    pub text: String,
}

/// Every schema, named after the document and its `schema_version`.
pub fn files() -> Vec<SchemaFile> {
    vec![
        file::<crate::baseline::Baseline>(
            format!("baseline.v{}.json", crate::baseline::SCHEMA_VERSION),
            "A baseline recorded by `ncugate baseline record`",
        ),
        signed::<crate::verdict::Report>(
            format!("report.v{}.json", crate::verdict::REPORT_SCHEMA_VERSION),
            "The `--json` report of `ncugate check`, `sanitize` or `leaks`",
        ),
        signed::<crate::suite::report::SuiteReport>(
            format!(
                "suite-report.v{}.json",
                crate::suite::report::SUITE_SCHEMA_VERSION
            ),
            "The `--json` report of a suite run, a shard of one, or `ncugate merge`",
        ),
    ]
}

/// The member a report signed with `NCUGATE_REPORT_KEY` ends with (see
/// `crate::report::sign`): written after the report is serialized, so no
/// type has it.
const SIGNATURE: &str = r#"{
  "description": "With NCUGATE_REPORT_KEY set: `hmac-sha256:` and the HMAC-SHA-256 of the file's bytes before this member, in hex. Always the last member.",
  "type": "string",
  "pattern": "^hmac-sha256:[0-9a-f]{64}$"
}"#;

fn file<T: JsonSchema>(name: String, description: &str) -> SchemaFile {
    schema_file(schemars::schema_for!(T), name, description)
}

/// The schema of a report that may end in a signature.
fn signed<T: JsonSchema>(name: String, description: &str) -> SchemaFile {
    let mut schema = schemars::schema_for!(T);
    let signature: serde_json::Value = serde_json::from_str(SIGNATURE).unwrap_or_default();
    if let Some(properties) = schema.get_mut("properties").and_then(|p| p.as_object_mut()) {
        properties.insert("signature".into(), signature);
    }
    schema_file(schema, name, description)
}

fn schema_file(mut schema: schemars::Schema, name: String, description: &str) -> SchemaFile {
    schema.insert("description".into(), description.into());
    // Serializing a JSON value cannot fail; an empty file would fail the up-to-date test.
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    SchemaFile { name, text }
}
