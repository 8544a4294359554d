//! ncugate: turn Nsight Compute into a CI gate — metrics against a baseline,
//! compute-sanitizer findings, CUDA-graph memory — with exit 0 (pass),
//! 1 (regression) or 2 (error).
//!
//! Every command has the same shape: [`cli`] (clap, no logic) → [`config`]
//! (every setting, defined once in [`options`], layered flag over `NCUGATE_*`
//! over `ncugate.toml` over default and validated once into one config per
//! command) → a function in [`commands`] that wires that config to a gate,
//! with a [`runner::process::ProcessRunner`] (every process — build, app, ncu,
//! compute-sanitizer, git — runs through it; `main` builds the real one, the
//! tests a replaying one), and returns a value: a [`verdict::Report`], a
//! suite's [`suite::SuiteReport`] or a [`gated::Text`], or a
//! [`gated::Failed`]. [`commands::execute`] is the one place that writes
//! the file reports, prints the terminal view and takes the [`exit`] code from
//! the value's [`status::Outcome`].
//!
//! The gates, stage by stage:
//!
//! - **Metrics, `check`** ([`metrics`], one folder read top to bottom):
//!   acquire ([`runner`] builds the app and profiles it under ncu, or
//!   `--input` names exports) → read ([`parse`]: the raw page, values born in
//!   base units via [`units`], and the details page's findings; [`model`] /
//!   [`aggregate`] per [`kernel_key`], per run) → pick the baseline
//!   ([`baseline`]: one file, the one for this GPU in a suite's folder, or a
//!   rolling one from [`history`]) → judge ([`rules`], then [`compare`]
//!   decides, in order, fingerprint, structure, rules, findings, into a
//!   [`verdict::Report`]) → the stages that add words (source lines, with
//!   [`explain`] reading the profiles; the sanitizer stage when `[sanitizer]`
//!   asks for it; the history's creep and recording) → [`report`]: every gate
//!   turns its results into the sections of one [`report::View`] (each
//!   kernel, the whole run, each compute-sanitizer tool, the graph memory),
//!   each a list of checks with its title and order decided there; a
//!   [`report::Document`] of that one view (a check) or of a suite's
//!   workloads is rendered by one [`report::Reporter`] per format (terminal,
//!   Markdown, JUnit, JSON, HTML, GitHub), the same for both, and written by
//!   one path.
//! - **Baseline, `baseline record`** ([`metrics::record`]): the same
//!   acquisition, parsing and aggregation → [`baseline::record`] (statistics
//!   over the runs) → an atomically written baseline file; `baseline diff`
//!   is [`baseline::diff`].
//! - **Sanitizer, `sanitize`** ([`commands::sanitize`]): [`runner`] builds the
//!   app, [`sanitizer::run`] runs compute-sanitizer per tool (or `--xml` names
//!   saved XML) → [`sanitizer`] groups the records into findings → a report
//!   whose subject is the tool and the app.
//! - **Graph memory, `leaks`** ([`commands::leaks`]): [`memory::run`] runs the
//!   app with the CUPTI audit library injected and NVML sampling, judges the
//!   `[memory]` limits and appends the history → a report whose subject is
//!   the app.
//! - **Suites and `merge`** ([`metrics::suite`]):
//!   [`config`] selects the workloads, resolves each one's complete run and
//!   takes this runner's shard, [`suite`] plans the split by recorded cost,
//!   [`baseline::layout`] lays out `baselines/<workload>/<gpu>.json`;
//!   each workload is built once and gated by the same `check`, `baseline
//!   record` or `profile` as a single run; the workloads' reports become one
//!   [`suite::SuiteReport`], and `merge` joins shards' reports into one; its
//!   [`suite::render::document`] goes through the same reporters as a check.
//!
//! - **History, `history record | accept | show | changes`**
//!   ([`history::command`]): the JSON reports of `check` and `merge` become
//!   runs (workload × GPU × commit) in a [`history::Store`] — a SQLite file
//!   or a PostgreSQL server — whose series [`history::show`] draws and
//!   [`history::changes`] scans for the commits where they moved.
//!
//! Around them: [`doctor`], [`init`], [`docs`] (completions and man pages),
//! [`schema`] (the JSON Schemas in `schemas/`). Leaves every stage may use:
//! [`error`], [`status`], [`format`](mod@format), [`suggest`], [`model`],
//! [`note`], [`exit`]. No module uses one that uses it back, nor a file one of its
//! sibling files that uses it back (tests/integration/module_cycles.rs fails
//! on any cycle).

// `pub(crate)` by default: an item is `pub` only when the binary, the
// integration tests or the benches use it (the public surface above).
#![deny(unreachable_pub)]
// The documentation is for contributors, built with `--document-private-items`
// (`.ci/run`), where links to crate-private items resolve.
#![allow(rustdoc::private_intra_doc_links)]

pub mod aggregate;
pub mod baseline;
pub mod cli;
pub mod code;
pub mod commands;
pub(crate) mod compare;
pub mod config;
pub(crate) mod docs;
pub(crate) mod doctor;
pub mod error;
pub mod exit;
pub mod explain;
pub(crate) mod format;
pub(crate) mod gated;
pub mod history;
pub mod init;
pub mod io;
pub(crate) mod kernel_key;
pub mod memory;
pub(crate) mod metrics;
pub mod model;
pub mod note;
pub(crate) mod nvml;
pub mod options;
pub mod parse;
pub mod report;
pub mod rules;
pub mod runner;
pub mod sanitizer;
pub mod schema;
pub mod shared_gpu;
pub(crate) mod skip;
pub mod status;
pub(crate) mod suggest;
pub mod suite;
pub(crate) mod text;
pub mod trace;
pub mod units;
pub(crate) mod varies;
pub mod verdict;
