//! What every reporter renders: a [`Document`] of one or more workloads,
//! each with its own [`View`]. A single check is a document of one nameless
//! workload and no suite chrome; a suite adds its headline, its table of
//! workloads and the workload names, which the formats take as render
//! parameters (a heading one level down, a `<workload>: ` prefix, a folder)
//! — no format rewrites another's text.

use super::view::View;
use crate::status::Outcome;
use crate::verdict::{Counts, Report};

/// The model behind a document, for the JSON report (which serializes it whole).
pub(crate) trait Model {
    /// The model as pretty-printed JSON, with a final newline.
    fn json(&self) -> String;
    /// [`Model::json`] written as it is made.
    fn write_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()>;
}

/// One or more workloads' views, and a suite's own words when it is a suite.
pub(crate) struct Document<'r> {
    /// The model itself: a check's report or a suite's.
    pub(crate) model: &'r dyn Model,
    /// The suite's headline and table; `None` for a single check, which is
    /// printed without the suite chrome.
    pub(crate) suite: Option<Suite<'r>>,
    /// Every workload in run order; a single check's one workload has no name.
    pub(crate) workloads: Vec<Workload<'r>>,
}

/// A suite's own words: what a report of several workloads adds around them.
#[derive(Debug, Clone)]
pub(crate) struct Suite<'r> {
    pub(crate) outcome: Outcome,
    /// `REGRESSION (exit 1): 3 workloads — 1 regressed (infer), 2 passed`.
    pub(crate) headline: String,
    /// This run's shard (`1/2`) and the whole suite's workloads, when sharded.
    pub(crate) shard: Option<(String, &'r [String])>,
    /// The shard reports a merged report was made from.
    pub(crate) merged_from: &'r [String],
    /// The ncugate version that wrote the report.
    pub(crate) version: &'r str,
}

/// One workload's part of a document.
#[derive(Debug, Clone)]
pub(crate) struct Workload<'r> {
    /// The workload's name; `None` for a single check.
    pub(crate) name: Option<&'r str>,
    pub(crate) tags: &'r [String],
    /// Wall time of its profiled runs, `12.3 s`, or `—`.
    pub(crate) seconds: String,
    pub(crate) view: View<'r>,
    /// Set when the workload was skipped and its view carried from an
    /// earlier check: `inputs unchanged since 1a2b3c4 (pass, 2026-12-05)`.
    pub(crate) carried: Option<String>,
}

impl Workload<'_> {
    /// The workload's name, or empty for a single check.
    pub(crate) fn name(&self) -> &str {
        self.name.unwrap_or_default()
    }

    /// What a suite puts before the titles of this workload's rows: `<workload>: `.
    pub(crate) fn prefix(&self) -> String {
        self.name.map(|n| format!("{n}: ")).unwrap_or_default()
    }

    pub(crate) fn counts(&self) -> Counts {
        self.view.counts
    }
}

impl<'r> Document<'r> {
    /// The workloads as every suite report lists them: errors, then
    /// regressions, then passes, each in run order.
    pub(crate) fn failures_first(&self) -> Vec<&Workload<'r>> {
        let mut workloads: Vec<_> = self.workloads.iter().collect();
        workloads.sort_by_key(|w| std::cmp::Reverse(w.view.outcome.exit_code()));
        workloads
    }

    /// A single check's document: one nameless workload, no suite chrome.
    pub(crate) fn check(report: &'r Report) -> Document<'r> {
        Document {
            model: report,
            suite: None,
            workloads: vec![Workload {
                name: None,
                tags: &[],
                seconds: "—".into(),
                view: View::new(report),
                carried: None,
            }],
        }
    }

    /// The outcome of the whole document.
    pub(crate) fn outcome(&self) -> Outcome {
        match (&self.suite, self.workloads.first()) {
            (Some(suite), _) => suite.outcome,
            (None, Some(w)) => w.view.outcome,
            (None, None) => Outcome::Pass,
        }
    }

    /// Failed checks over all workloads: GitHub's `regressions` output.
    pub(crate) fn regressions(&self) -> usize {
        self.workloads.iter().map(|w| w.view.regressions()).sum()
    }

    /// The workloads that did not pass, in run order.
    pub(crate) fn failed_workloads(&self) -> Vec<&str> {
        self.workloads
            .iter()
            .filter(|w| w.view.outcome != Outcome::Pass)
            .map(Workload::name)
            .collect()
    }
}
