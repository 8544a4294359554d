//! ncugate: turn Nsight Compute exports into a CI gate.
//!
//! The pipeline, one module per stage:
//! [`config`] (validated options) → [`parse`] (ncu CSV exports, values born
//! in base units via [`units`]) → [`model`] / [`aggregate`] (per kernel key,
//! per run) → [`baseline`] (recorded statistics) → [`rules`] (thresholds) →
//! [`compare`] (where verdicts are decided, into [`verdict`]) → [`report`]
//! (terminal, Markdown, JUnit, JSON) → [`exit`] code.
//!
//! Leaves every stage may use: [`error`], [`status`], [`format`](mod@format), [`suggest`],
//! [`model`]. No module uses one that uses it back (tests/integration/module_cycles.rs).

pub mod aggregate;
pub mod baseline;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod config;
pub mod docs;
pub mod doctor;
pub mod error;
pub mod exit;
pub mod format;
pub mod init;
pub mod kernel_key;
pub mod memory;
pub mod model;
pub mod parse;
pub mod report;
pub mod rules;
pub mod runner;
pub mod sanitizer;
pub mod schema;
pub mod status;
pub mod suggest;
pub mod suite;
pub mod units;
pub mod verdict;
