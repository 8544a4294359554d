//! The app's build and run under ncu ([`RunnerConfig`]):
//! [`AppOptions`](crate::options::AppOptions) over `[app]`, `--build` /
//! `--no-build` over `[build]`, `--out` over `[profile] out_dir`, and
//! [`ProfileOptions`] over `[profile]`.

use super::file::FileConfig;
use crate::cli::RunArgs;
use crate::error::{Error, Result};
use crate::options::profile::DEFAULT_NCU;
use crate::options::{Layer, ProfileOptions};
use crate::runner::RunnerConfig;
use std::path::Path;

/// The runner's settings: flag (or its `NCUGATE_*` variable) over file over default.
pub(crate) fn runner(
    args: &RunArgs,
    ncu: &ProfileOptions,
    file: &FileConfig,
) -> Result<RunnerConfig> {
    let app = args.app.clone().over(file.app.clone());
    let build = if args.build.no_build {
        None
    } else {
        match &args.build.build {
            Some(cmd) => Some(split_build(cmd)?),
            None => file.build.command.clone(),
        }
    };
    let profile = ncu.clone().over(file.profile.clone());
    Ok(profile.resolve(app, build, &args.out, &file.base_dir))
}

/// `--build COMMAND` split into words as a shell would (quotes and
/// backslashes; no expansion).
pub(super) fn split_build(cmd: &str) -> Result<Vec<String>> {
    shlex::split(cmd).ok_or_else(|| {
        Error::from(crate::error::ConfigError::UnbalancedBuild {
            command: cmd.to_string(),
        })
    })
}

/// The ncu executable: `--ncu` / `NCUGATE_NCU`, else `[profile] ncu`, else `ncu` from PATH.
pub(super) fn ncu_program(ncu: &ProfileOptions, file: &FileConfig) -> String {
    ncu.ncu
        .clone()
        .over(file.profile.ncu.clone())
        .unwrap_or_else(|| DEFAULT_NCU.into())
}

/// Whether `.ncu-rep` inputs go through `ncu --import` (`--import-with-ncu`,
/// `NCUGATE_IMPORT_WITH_NCU`, `[profile] import_with_ncu`) rather than the
/// native reader.
pub(super) fn import_with_ncu(ncu: &ProfileOptions, file: &FileConfig) -> bool {
    ncu.import_with_ncu
        .over(file.profile.import_with_ncu)
        .unwrap_or(false)
}

/// The ncu of commands that take no config flags (`doctor`, `init`):
/// `NCUGATE_NCU`, else `[profile] ncu` of ./ncugate.toml when it loads, else `ncu`.
pub fn default_ncu() -> String {
    let from_env = super::env_only::<ProfileOptions>().unwrap_or_default();
    let file = FileConfig::load(None).unwrap_or_default();
    ncu_program(&from_env, &file)
}

/// The runner settings of a config file alone (no flags), as `check` would use them.
pub fn runner_from_file(path: &Path) -> Result<RunnerConfig> {
    let file = FileConfig::load(Some(path))?;
    runner(&RunArgs::default(), &ProfileOptions::default(), &file)
}
