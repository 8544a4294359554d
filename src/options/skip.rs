//! Skipping unchanged workloads: `[gate] skip_unchanged` and
//! `[gate] skip_max_age` in `ncugate.toml`, and the check flags that stand
//! over them (`--skip-unchanged`, `--skip-max-age`, `--no-skip`, each with its
//! `NCUGATE_*` variable). The keys live in [`super::GateOptions`] (the
//! `[gate]` table); their defaults, the age's format and the resolution are
//! here.

use super::value_enum;
use crate::error::{ConfigError, Error, Result};
use crate::options::Layer;
use clap::Args;
use serde::Deserialize;

/// When a suite check may skip a workload whose inputs did not change since
/// a completed check of it, carrying that check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SkipUnchanged {
    /// Every workload runs.
    #[default]
    Off,
    /// Only workloads whose inputs are fully known: declared `inputs`, and
    /// a baseline file (not the rolling history).
    Declared,
    /// Every workload whose digest is unchanged, declared `inputs` or not.
    Always,
}

value_enum!(SkipUnchanged {
    Off = "off": "Every workload runs",
    Declared = "declared": "Skip only workloads that declare their `inputs` (files and globs) and are gated against a baseline file",
    Always = "always": "Skip any workload whose digest is unchanged, also those without declared `inputs`",
});

impl std::fmt::Display for SkipUnchanged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SkipUnchanged::Off => "off",
            SkipUnchanged::Declared => "declared",
            SkipUnchanged::Always => "always",
        })
    }
}

/// What a check skips unless told otherwise: nothing.
pub(crate) const DEFAULT_SKIP_UNCHANGED: SkipUnchanged = SkipUnchanged::Off;
/// How old a carried verdict may be unless told otherwise: 7 days.
pub(crate) const DEFAULT_SKIP_MAX_AGE: &str = "7d";

/// The check's flags over `[gate] skip_unchanged` and `[gate] skip_max_age`.
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub(crate) struct SkipArgs {
    /// Skip a suite's workload whose input digest (command, environment, executable, the shared libraries its last run mapped, declared `inputs`, config, thresholds, baseline, GPU, driver, ncu and ncugate versions) is unchanged since a completed check, carrying that check's verdict, named in every report (default: [gate] skip_unchanged, else off).
    #[arg(long, value_enum, env = "NCUGATE_SKIP_UNCHANGED", value_name = "WHEN")]
    pub(crate) skip_unchanged: Option<SkipUnchanged>,
    /// How old a carried verdict may be before the workload runs again: `30m`, `12h`, `7d` (default: [gate] skip_max_age, else 7d).
    #[arg(long, env = "NCUGATE_SKIP_MAX_AGE", value_name = "AGE")]
    pub(crate) skip_max_age: Option<String>,
    /// Run every workload: no skipping, whatever --skip-unchanged and [gate] skip_unchanged say.
    #[arg(long, env = "NCUGATE_NO_SKIP")]
    pub(crate) no_skip: bool,
    /// Profile nothing: decide each selected workload's skip (building as a check does), write the names of those a check would skip to FILE, one a line, and exit 0. Run it in one job before the shards and give every shard runner that file (--planned-skips) (default: none, a check).
    #[arg(long, env = "NCUGATE_PREDICT_SKIPS", value_name = "FILE")]
    pub(crate) predict_skips: Option<std::path::PathBuf>,
    /// With --shard and skipping on: plan the shards with the workloads FILE names (what --predict-skips wrote) at about 0 (1 ms each), so that they balance the work that runs. Every shard runner must be given the same file (default: none, shards planned on recorded costs).
    #[arg(long, env = "NCUGATE_PLANNED_SKIPS", value_name = "FILE")]
    pub(crate) planned_skips: Option<std::path::PathBuf>,
}

/// The skipping a check does, resolved: `None` when it skips nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Skip {
    pub(crate) when: SkipUnchanged,
    /// The oldest carried verdict reused, in seconds.
    pub(crate) max_age_s: u64,
}

impl SkipArgs {
    /// The flags over the file's keys, then the defaults.
    pub(crate) fn resolve(
        &self,
        file_when: Option<SkipUnchanged>,
        file_age: Option<String>,
    ) -> Result<Option<Skip>> {
        let when = self
            .skip_unchanged
            .over(file_when)
            .unwrap_or(DEFAULT_SKIP_UNCHANGED);
        let age = self
            .skip_max_age
            .clone()
            .over(file_age)
            .unwrap_or_else(|| DEFAULT_SKIP_MAX_AGE.to_string());
        let max_age_s = age_seconds(&age)?;
        if self.no_skip || when == SkipUnchanged::Off {
            return Ok(None);
        }
        Ok(Some(Skip { when, max_age_s }))
    }
}

/// `30s`, `30m`, `12h`, `7d` in seconds.
pub(crate) fn age_seconds(text: &str) -> Result<u64> {
    let bad = || {
        Error::from(ConfigError::SkipMaxAge {
            value: text.to_string(),
        })
    };
    let t = text.trim();
    let unit = t.chars().last().ok_or_else(bad)?;
    let scale: u64 = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => return Err(bad()),
    };
    let n: u64 = t[..t.len() - unit.len_utf8()].parse().map_err(|_| bad())?;
    n.checked_mul(scale).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_in_their_units_and_a_bad_one_is_refused() {
        assert_eq!(age_seconds("7d").unwrap(), 7 * 86_400);
        assert_eq!(age_seconds("12h").unwrap(), 12 * 3600);
        assert_eq!(age_seconds("30m").unwrap(), 1800);
        assert_eq!(age_seconds("0s").unwrap(), 0);
        for bad in ["", "7", "d", "7w", "-1d", "99999999999999999999d", "1.5h"] {
            let e = age_seconds(bad).unwrap_err().to_string();
            assert!(e.contains("skip_max_age"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_flag_stands_over_the_file_and_no_skip_over_both() {
        let flags = SkipArgs::default();
        assert_eq!(flags.resolve(None, None).unwrap(), None);
        let on = flags
            .resolve(Some(SkipUnchanged::Declared), Some("1h".into()))
            .unwrap();
        assert_eq!(
            on,
            Some(Skip {
                when: SkipUnchanged::Declared,
                max_age_s: 3600
            })
        );
        let always = SkipArgs {
            skip_unchanged: Some(SkipUnchanged::Always),
            ..SkipArgs::default()
        };
        assert_eq!(
            always.resolve(Some(SkipUnchanged::Off), None).unwrap(),
            Some(Skip {
                when: SkipUnchanged::Always,
                max_age_s: 7 * 86_400
            })
        );
        let none = SkipArgs {
            no_skip: true,
            ..always.clone()
        };
        assert_eq!(
            none.resolve(Some(SkipUnchanged::Always), None).unwrap(),
            None
        );
    }
}
