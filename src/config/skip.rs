//! A suite check's skipping of unchanged workloads, resolved: the
//! `[gate] skip_unchanged` / `--skip-unchanged` settings
//! (`crate::options::skip`), the commit a cached verdict is kept under and
//! whether the branch is accepted (`[history] branches`), which runs every
//! workload. `crate::skip` acts on it.

use super::file::FileConfig;
use crate::options::Layer;
use crate::options::skip::Skip;
use std::path::PathBuf;

/// A suite check's skipping, resolved from the settings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Settings {
    pub(crate) skip: Skip,
    /// `ncugate.toml`, hashed into every digest.
    pub(crate) config_file: Option<PathBuf>,
    /// The commit this run checks: what a cached verdict is carried from.
    pub(crate) commit: String,
    /// The branch, when it is accepted: every workload runs.
    pub(crate) accepted_branch: Option<String>,
}

/// The skipping of a suite check: the commit its entries are kept under
/// (`--commit`, else the CI's variable, else `unknown`) and whether its
/// branch (`--branch`, else the CI's variable) is accepted.
pub(super) fn settings(
    skip: crate::options::skip::Skip,
    history: &crate::cli::CheckHistoryArgs,
    file: &FileConfig,
) -> Settings {
    let from_env = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()))
    };
    let commit = history
        .commit
        .clone()
        .or_else(|| from_env(super::history::COMMIT_VARIABLES))
        .unwrap_or_else(|| "unknown".into());
    let branch = history
        .branch
        .clone()
        .or_else(|| from_env(super::history::BRANCH_VARIABLES));
    let accepted = history
        .options
        .clone()
        .over(file.history.clone())
        .branches();
    Settings {
        skip,
        config_file: file.source.clone(),
        commit,
        accepted_branch: branch.filter(|b| accepted.contains(b)),
    }
}
