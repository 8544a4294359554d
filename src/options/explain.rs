//! The explain stage of `check`: which kernels it names source lines for,
//! at most how many, how long its extra ncu runs may take and the source
//! pages of the run, as flags (`--explain`, `--explain-kernels`,
//! `--explain-budget`, `--source-page`), `NCUGATE_*` variables and
//! `[explain]` in `ncugate.toml`, with their defaults; and the clap side of
//! the domain's [`ExplainMode`].

use super::{layered, value_enum};
use crate::explain::ExplainMode;
use clap::Args;
use serde::Deserialize;
use std::path::PathBuf;

/// `[explain]`, and the flags of `check` that override it. The fields are
/// named as the flags are (the names are clap's ids, which must not clash
/// with another option struct's `mode`); the table's keys are the short
/// names: `mode`, `kernels`, `budget`.
#[derive(Debug, Clone, Default, PartialEq, Args, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExplainOptions {
    /// Which kernels the explain stage names source lines for (default: [explain] mode, else on-fail): `on-fail` (the failing ones, worst first), `always`, `never`. It needs source pages of the run (--source-page) and the baseline's (baseline record --source-page); it never changes the verdict. When ncugate profiles, each kernel's explain run profiles the launch whose value moved most from the baseline's mean per launch (the why says which: `launch 3 of 3`).
    #[arg(long, value_enum, env = "NCUGATE_EXPLAIN", value_name = "WHEN")]
    #[serde(rename = "mode", default, deserialize_with = "mode")]
    pub(crate) explain: Option<ExplainMode>,
    /// At most this many kernels explained, the worst first (default: [explain] kernels, else 3).
    #[arg(long, env = "NCUGATE_EXPLAIN_KERNELS", value_name = "N")]
    #[serde(rename = "kernels")]
    pub(crate) explain_kernels: Option<usize>,
    /// Seconds the explain runs may take together when ncugate profiles (default: [explain] budget, else 60; one extra ncu run per explained kernel, about 4.6 s on the reference app); kernels left when it is spent are not explained (a note says so).
    #[arg(
        long,
        env = "NCUGATE_EXPLAIN_BUDGET",
        value_name = "SECONDS",
        value_parser = seconds
    )]
    #[serde(rename = "budget", default, deserialize_with = "budget")]
    pub(crate) explain_budget: Option<f64>,
    /// A source page of one kernel of this run, profiled with `--section SourceCounters --import-source yes` and exported with `ncu --import R --csv --page source --print-source cuda,sass`; repeat for several kernels (default: none; the baseline's source profile and one extra ncu run per failing kernel when ncugate profiles).
    #[arg(long = "source-page", value_name = "SOURCE.csv")]
    #[serde(skip)]
    pub(crate) source_pages: Vec<PathBuf>,
}

layered!(ExplainOptions {
    explain,
    explain_kernels,
    explain_budget,
    source_pages,
});

/// The kernels explained unless told otherwise: the failing ones.
pub(crate) const DEFAULT_MODE: ExplainMode = ExplainMode::OnFail;
/// At most this many kernels explained unless told otherwise.
pub(crate) const DEFAULT_KERNELS: usize = 3;
/// Seconds the explain runs may take together unless told otherwise.
pub(crate) const DEFAULT_BUDGET_S: f64 = 60.0;

/// The explain stage of one check, resolved: which kernels, at most how
/// many, in how long, from which source pages.
#[derive(Debug, Clone, Default)]
pub struct Explain {
    /// Which kernels are explained (`--explain`).
    pub mode: ExplainMode,
    /// At most this many, the worst first (`--explain-kernels`).
    pub kernels: usize,
    /// Seconds the explain runs may take together (`--explain-budget`).
    pub budget: f64,
    /// Source pages of the current run (`--source-page`).
    pub pages: Vec<PathBuf>,
}

impl ExplainOptions {
    /// The explain stage's settings, each given or its default.
    pub(crate) fn resolve(self) -> Explain {
        Explain {
            mode: self.explain.unwrap_or(DEFAULT_MODE),
            kernels: self.explain_kernels.unwrap_or(DEFAULT_KERNELS),
            budget: self.explain_budget.unwrap_or(DEFAULT_BUDGET_S),
            pages: self.source_pages,
        }
    }
}

value_enum!(ExplainMode {
    OnFail = "on-fail": "The failing kernels (the worst first, at most --explain-kernels)",
    Always = "always": "Every kernel with a source profile on both sides",
    Never = "never": "None",
});

/// A number of seconds: finite and not negative (`nan` made the explain
/// budget endless: no elapsed time is `>=` it).
fn seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) => finite_seconds(v),
        Err(e) => Err(e.to_string()),
    }
}

/// `v` if it is a number of seconds.
fn finite_seconds(v: f64) -> Result<f64, String> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err("seconds are a finite number, 0 or more".into())
    }
}

/// `[explain] budget`: seconds, as `--explain-budget` takes them (TOML has
/// `nan` and `inf` too).
fn budget<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Option::<f64>::deserialize(d)?
        .map(finite_seconds)
        .transpose()
        .map_err(serde::de::Error::custom)
}

/// `[explain] mode`: the names `--explain` takes.
fn mode<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<ExplainMode>, D::Error> {
    use clap::ValueEnum;
    let Some(name) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    ExplainMode::from_str(&name, false).map(Some).map_err(|_| {
        let names: Vec<String> = ExplainMode::value_variants()
            .iter()
            .filter_map(ExplainMode::to_possible_value)
            .map(|v| format!("`{}`", v.get_name()))
            .collect();
        serde::de::Error::custom(format!(
            "unknown variant `{name}`, expected one of {}",
            names.join(", ")
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Result<ExplainOptions, String> {
        toml::from_str(text).map_err(|e: toml::de::Error| e.message().to_string())
    }

    #[test]
    fn the_table_takes_the_names_and_numbers_the_flags_take() {
        let read = table("mode = \"always\"\nkernels = 5\nbudget = 90").unwrap();
        assert_eq!(read.explain, Some(ExplainMode::Always));
        assert_eq!(read.explain_kernels, Some(5));
        assert_eq!(read.explain_budget, Some(90.0));
        assert_eq!(
            table("mode = \"on-fail\"").unwrap().explain,
            Some(DEFAULT_MODE)
        );
        assert_eq!(table("").unwrap(), ExplainOptions::default());
        let e = table("mode = \"sometimes\"").unwrap_err();
        assert_eq!(
            e,
            "unknown variant `sometimes`, expected one of `on-fail`, `always`, `never`"
        );
        for budget in ["nan", "inf", "-1.0"] {
            let e = table(&format!("budget = {budget}")).unwrap_err();
            assert!(e.contains("seconds are a finite number"), "{budget}: {e}");
        }
        // The run's own pages are no project setting.
        let e = table("source_pages = [\"s.csv\"]").unwrap_err();
        assert!(e.contains("unknown field `source_pages`"), "{e}");
    }

    #[test]
    fn unset_settings_take_their_defaults() {
        let explain = ExplainOptions::default().resolve();
        assert_eq!(explain.mode, DEFAULT_MODE);
        assert_eq!(DEFAULT_MODE, ExplainMode::default());
        assert_eq!(
            (explain.kernels, explain.budget),
            (DEFAULT_KERNELS, DEFAULT_BUDGET_S)
        );
        assert!(explain.pages.is_empty());
    }
}
