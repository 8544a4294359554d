//! ncugate: turn Nsight Compute exports into a CI gate.
//!
//! The pipeline, one module per stage:
//! [`config`] (validated options) → [`parse`] (ncu CSV exports, values born
//! in base units via [`units`]) → [`model`] / [`aggregate`] (per kernel key,
//! per run) → [`baseline`] (recorded statistics) → [`rules`] (thresholds) →
//! [`compare`] (where verdicts are decided, into [`verdict`]) → [`report`]
//! (terminal, Markdown, JUnit, JSON) → [`exit`] code.

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
pub mod suite;
pub mod units;
pub mod verdict;
