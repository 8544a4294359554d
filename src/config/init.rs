//! `ncugate init`'s settings: what it was told, and whether it may ask.

use crate::error::Result;
use std::io::IsTerminal;
use std::path::PathBuf;

/// What `ncugate init` was told.
#[derive(Debug, Clone)]
pub struct InitConfig {
    /// The folder to write into (the current one).
    pub dir: PathBuf,
    /// The app and its arguments; empty: ask (terminal) or refuse (CI).
    pub app: Vec<String>,
    /// The build command; `None`: ask (terminal) or none (CI).
    pub build: Option<Vec<String>>,
    /// Replace existing files.
    pub force: bool,
    /// Profile once when a GPU and ncu are here.
    pub profile: bool,
    /// Ask for what is missing (stdin is a terminal and this is not CI).
    pub interactive: bool,
}

pub(super) fn init(args: crate::cli::InitArgs) -> Result<InitConfig> {
    let build = args
        .build
        .as_deref()
        .map(super::run::split_build)
        .transpose()?;
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    Ok(InitConfig {
        dir: PathBuf::from("."),
        app: args.app,
        build,
        force: args.force,
        profile: !args.no_profile,
        interactive: !args.yes && !ci && std::io::stdin().is_terminal(),
    })
}
