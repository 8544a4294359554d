//! A suite check's skipping of unchanged workloads, resolved: the
//! `[gate] skip_unchanged` / `--skip-unchanged` settings
//! (`crate::options::skip`), the commit a cached verdict is kept under and
//! whether the branch is accepted (`[history] branches`), which runs every
//! workload. `crate::skip` acts on it.

use super::file::FileConfig;
use crate::error::Result;
use crate::options::Layer;
use crate::options::skip::Skip;
use std::path::PathBuf;

/// A suite check's skipping, resolved from the settings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Settings {
    pub(crate) skip: Skip,
    /// `ncugate.toml`, hashed into every digest.
    pub(crate) config_file: Option<PathBuf>,
    /// The commit this run checks (`--commit`, else the CI's variable);
    /// `None`: ask git, else `unknown`.
    pub(crate) commit: Option<String>,
    /// The branch (`--branch`, else the CI's variable); `None`: ask git.
    pub(crate) branch: Option<String>,
    /// The accepted branches (`[history] branches`): they run every workload.
    pub(crate) accepted: Vec<String>,
    /// The history store's URL and round-trip timeout, when the check has
    /// one: the verdicts are kept there instead of in the work folders.
    pub(crate) store: Option<(String, std::time::Duration)>,
}

/// The skipping of a suite check, with the commit and branch the flags or
/// the CI's variables name (each validated as the history's are).
pub(super) fn settings(
    skip: crate::options::skip::Skip,
    history: &crate::cli::CheckHistoryArgs,
    file: &FileConfig,
    store: Option<&super::history::CheckHistory>,
) -> Result<Settings> {
    let from_env = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()))
    };
    let commit = history
        .commit
        .clone()
        .or_else(|| from_env(super::history::COMMIT_VARIABLES))
        .map(|c| super::history::checked("commit", c))
        .transpose()?;
    let branch = history
        .branch
        .clone()
        .or_else(|| from_env(super::history::BRANCH_VARIABLES))
        .map(|b| super::history::checked("branch", b))
        .transpose()?;
    Ok(Settings {
        skip,
        config_file: file.source.clone(),
        commit,
        branch,
        accepted: history
            .options
            .clone()
            .over(file.history.clone())
            .branches(),
        store: store.map(|h| (h.url.clone(), h.timeout)),
    })
}

/// The workloads a `--planned-skips` file names: one a line, blank lines
/// and `#` comments aside, each trimmed. Read as hostile input (bounded;
/// a name that is no workload of the suite plans nothing, since the plan
/// only looks names up).
pub(super) fn planned(file: &std::path::Path) -> Result<Vec<String>> {
    let text = crate::io::bounded::read_to_string(crate::error::FileKind::PlannedSkips, file)?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect())
}
