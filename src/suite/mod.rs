//! Suites: several workloads (apps) gated in one run, each with its own
//! baselines per GPU model, split deterministically over CI runners with
//! `--shard K/N` and merged back into one verdict with `ncugate merge`.
//!
//! The workloads (`[[workload]]`, or `[app]` as the workload `default`) and
//! the shard come from [`crate::config`]; [`baselines`] lays out
//! `baselines/<workload>/<gpu>.json`; [`shard`] plans the split; [`report`]
//! is the one report of a run; [`render`] shows it; [`merge`] joins shard
//! reports. The commands that run a suite are in [`crate::commands`], which
//! uses this module and never the other way round.

pub mod baselines;
pub mod merge;
pub mod render;
pub mod report;
pub mod shard;

pub use report::SuiteReport;
