//! Suites: several workloads (apps) gated in one run, each with its own
//! baselines per GPU model, split deterministically over CI runners with
//! `--shard K/N` and merged back into one verdict with `ncugate merge`.
//!
//! [`workloads`] reads `[[workload]]` (or `[app]` as the workload `default`)
//! and selects; [`baselines`] lays out `baselines/<workload>/<gpu>.json`;
//! [`shard`] plans the split; [`run`] checks, records and profiles each
//! workload; [`report`] is the one report of a run; [`render`] shows it;
//! [`merge`] joins shard reports.

pub mod baselines;
pub mod merge;
pub mod render;
pub mod report;
pub mod run;
pub mod shard;
pub mod workloads;

pub use report::SuiteReport;
pub use shard::Shard;
pub use workloads::Workload;
