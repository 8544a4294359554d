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
        file::<crate::verdict::Report>(
            format!("report.v{}.json", crate::verdict::REPORT_SCHEMA_VERSION),
            "The `--json` report of `ncugate check`, `sanitize` or `leaks`",
        ),
        file::<crate::suite::report::SuiteReport>(
            format!(
                "suite-report.v{}.json",
                crate::suite::report::SUITE_SCHEMA_VERSION
            ),
            "The `--json` report of a suite run, a shard of one, or `ncugate merge`",
        ),
    ]
}

fn file<T: JsonSchema>(name: String, description: &str) -> SchemaFile {
    let mut schema = schemars::schema_for!(T);
    schema.insert("description".into(), description.into());
    // Serializing a JSON value cannot fail; an empty file would fail the up-to-date test.
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    SchemaFile { name, text }
}
