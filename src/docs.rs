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

/// A page: clap_mangen's sections, each option with its `NCUGATE_*`
/// variable, then the command's exit codes as a table that keeps its lines
/// (roff would fill them into one paragraph).
fn render(cmd: &clap::Command, out: &mut Vec<u8>) -> Result<()> {
    let man = clap_mangen::Man::new(cmd.clone());
    let wrote = (|| -> std::io::Result<()> {
        man.render_title(out)?;
        man.render_name_section(out)?;
        man.render_synopsis_section(out)?;
        man.render_description_section(out)?;
        if cmd.get_arguments().any(|a| !a.is_hide_set()) {
            man.render_options_section(out)?;
        }
        if cmd.get_subcommands().any(|c| !c.is_hide_set()) {
            man.render_subcommands_section(out)?;
        }
        if let Some(after) = cmd.get_after_help() {
            out.extend_from_slice(exit_section(&after.to_string()).as_bytes());
        }
        if cmd
            .get_version()
            .or_else(|| cmd.get_long_version())
            .is_some()
        {
            man.render_version_section(out)?;
        }
        Ok(())
    })();
    wrote.map_err(|source| Error::Write {
        path: "man page".into(),
        source,
    })
}

/// `after_help` (the exit-code table) as roff: an `EXIT STATUS` section
/// when it is one, its lines kept as they are (`.nf`), roff's specials escaped.
fn exit_section(after: &str) -> String {
    let (heading, body) = match after.strip_prefix("Exit codes:") {
        Some(rest) => ("EXIT STATUS", rest.trim_start_matches('\n')),
        None => ("NOTES", after),
    };
    let mut roff = format!(".SH \"{heading}\"\n.nf\n");
    for line in body.lines() {
        // The page indents the section already: the help's own two spaces go.
        let line = line.strip_prefix("  ").unwrap_or(line);
        let line = line.replace('\\', "\\e").replace('-', "\\-");
        // A line starting with `.` or `'` would be read as a request.
        if line.starts_with(['.', '\'']) {
            roff.push_str("\\&");
        }
        roff.push_str(&line);
        roff.push('\n');
    }
    roff.push_str(".fi\n");
    roff
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_page_names_its_variables_and_keeps_its_exit_table_lines() {
        let page = super::man(None).expect("the top page");
        assert!(page.contains(".SH \"EXIT STATUS\"\n.nf\n0  pass"), "{page}");
        let dir = std::env::temp_dir().join(format!("ncugate-man-{}", std::process::id()));
        super::man(Some(&dir)).expect("the pages");
        let check = std::fs::read_to_string(dir.join("ncugate-check.1")).expect("ncugate-check.1");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(check.contains("NCUGATE_BASELINE"), "{check}");
        assert!(check.contains(".SH \"EXIT STATUS\""), "{check}");
    }
}
