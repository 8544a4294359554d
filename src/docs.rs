//! `ncugate completions SHELL` and `ncugate man`: shell completion scripts
//! (clap_complete) and man pages (clap_mangen), generated from the same
//! clap definition as `--help`, so they never drift from it.

use crate::cli::Cli;
use crate::error::{Error, Result};
use clap::CommandFactory;
use std::path::Path;

/// The completion script for `shell`.
pub(crate) fn completions(shell: clap_complete::Shell) -> String {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "ncugate", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// `ncugate.1` for standard output; or, with `dir`, writes `ncugate.1` and
/// `ncugate-<command>.1` for every command (`ncugate-baseline-record.1`, …)
/// there and lists the files written.
pub(crate) fn man(dir: Option<&Path>) -> Result<String> {
    let cmd = Cli::command();
    let Some(dir) = dir else {
        let mut out = Vec::new();
        render(&cmd, &mut out)?;
        return Ok(String::from_utf8_lossy(&out).into_owned());
    };
    std::fs::create_dir_all(dir).map_err(|source| Error::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    write_pages(&cmd, "ncugate", dir, &mut written)?;
    Ok(written
        .iter()
        .map(|path| format!("{}\n", path.display()))
        .collect())
}

fn write_pages(
    cmd: &clap::Command,
    name: &str,
    dir: &Path,
    written: &mut Vec<std::path::PathBuf>,
) -> Result<()> {
    let cmd = cmd.clone().name(name.to_string());
    let mut page = Vec::new();
    render(&cmd, &mut page)?;
    let path = dir.join(format!("{name}.1"));
    crate::io::write_atomic(&path, &page)?;
    written.push(path);
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        write_pages(sub, &format!("{name}-{}", sub.get_name()), dir, written)?;
    }
    Ok(())
}

fn render(cmd: &clap::Command, out: &mut Vec<u8>) -> Result<()> {
    clap_mangen::Man::new(cmd.clone())
        .render(out)
        .map_err(|source| Error::Write {
            path: "man page".into(),
            source,
        })
}
