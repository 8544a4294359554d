//! Suites: several workloads (apps) gated in one run, each with its own
//! baselines per GPU model, split deterministically over CI runners with
//! `--shard K/N` and merged back into one verdict with `ncugate merge`.
//!
//! The workloads (`[[workload]]`, or `[app]` as the workload `default`) and
//! the shard come from [`crate::config`]; [`crate::baseline::layout`] lays out
//! `baselines/<workload>/<gpu>.json`; [`shard`] plans the split; `crate::metrics::suite`
//! gates this shard's workloads, each with the same [`crate::metrics`] gate a
//! single check uses; [`report`] is the one report of a run; [`render`] shows
//! it; [`read`] reads reports back, validated (a suite's, or a single
//! check's for the history); [`merge`] joins shard reports.

pub mod merge;
pub(crate) mod read;
mod recompute;
pub(crate) mod render;
pub(crate) mod report;
pub mod shard;

pub(crate) use report::SuiteReport;
