//! The flags typed on the command line, as opposed to those clap filled in
//! from `NCUGATE_*` variables or defaults: a flag that does nothing in this
//! invocation is refused only when someone typed it, while a CI-wide
//! variable stays harmless.

use crate::error::{Error, Result};
use std::path::PathBuf;

/// The typed flags of the innermost subcommand: (clap id, as typed).
#[derive(Debug, Default)]
pub struct Given(Vec<(String, String)>);

impl Given {
    /// The typed flags of the innermost subcommand of `matches`, named as
    /// `command` (the clap definition `matches` came from) spells them.
    pub fn from_matches(command: &clap::Command, matches: &clap::ArgMatches) -> Given {
        let (mut m, mut cmd) = (matches, command);
        while let Some((name, sub)) = m.subcommand() {
            m = sub;
            match cmd.find_subcommand(name) {
                Some(c) => cmd = c,
                None => break,
            }
        }
        let typed = |id: &str| {
            matches!(m.try_get_raw(id), Ok(Some(_)))
                && m.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
        };
        Given(
            m.ids()
                .filter(|id| typed(id.as_str()))
                .map(|id| {
                    let arg = cmd.get_arguments().find(|a| a.get_id() == id);
                    let shown = match arg.and_then(|a| a.get_long()) {
                        Some(long) => format!("--{long}"),
                        None => "the app after `--`".to_string(),
                    };
                    (id.to_string(), shown)
                })
                .collect(),
        )
    }

    /// Exit 2 when one of `ids` was typed: it does nothing `because`.
    pub(super) fn refuse(&self, ids: &[&str], because: &str, instead: &str) -> Result<()> {
        if let Some((_, flag)) = self.0.iter().find(|(id, _)| ids.contains(&id.as_str())) {
            return Err(Error::from(crate::error::ConfigError::NotApplicable {
                flag: flag.clone(),
                because: because.to_string(),
                instead: instead.to_string(),
            }));
        }
        Ok(())
    }
}

/// The run and profiling flags (clap ids) that mean nothing when exports are gated.
const PROFILE_ONLY: &[&str] = &[
    "mode",
    "graph_profiling",
    "clock_control",
    "cache_control",
    "replay_mode",
    "kernel_name",
    "launch_skip",
    "launch_count",
    "extra_metrics",
    "ncu",
    "timeout",
    "out_dir",
    "workdir",
    "build",
    "no_build",
    "env",
];

/// The flags that mean nothing with these `--input` files: all of
/// [`PROFILE_ONLY`], except `--ncu` when a `.ncu-rep` report needs it to convert.
pub(super) fn profile_only(inputs: &[PathBuf]) -> Vec<&'static str> {
    let reports = inputs
        .iter()
        .any(|p| p.extension().is_some_and(|e| e == "ncu-rep"));
    PROFILE_ONLY
        .iter()
        .copied()
        .filter(|id| !(reports && *id == "ncu"))
        .collect()
}

/// The flags (clap ids) that mean nothing when `sanitize --xml` gates saved XML.
pub(super) const SANITIZE_RUN_ONLY: &[&str] = &[
    "timeout",
    "out_dir",
    "workdir",
    "build",
    "no_build",
    "env",
    "command",
    "leak_check",
    "print_limit",
    "program",
];

#[cfg(test)]
mod tests {
    use crate::cli::Cli;
    use crate::config::Config;
    use clap::CommandFactory;

    fn refused(args: &[&str]) -> String {
        let matches = Cli::command()
            .try_get_matches_from([&["ncugate"], args].concat())
            .unwrap();
        match Config::from_matches(&matches) {
            Err(e) => format!("{e} / {}", e.hint()),
            Ok(c) => panic!("{args:?} was accepted: {c:?}"),
        }
    }

    #[test]
    fn a_refused_flag_is_named_as_it_was_typed() {
        let e = refused(&["sanitize", "--xml", "a.xml", "--sanitizer", "cs"]);
        assert!(
            e.starts_with("--sanitizer does not apply with --xml"),
            "{e}"
        );
        let e = refused(&["sanitize", "--xml", "a.xml", "--leak-check=false"]);
        assert!(
            e.starts_with("--leak-check does not apply with --xml"),
            "{e}"
        );
        let e = refused(&["check", "--input", "a.csv", "--extra-metric", "m"]);
        assert!(
            e.starts_with("--extra-metric does not apply with --input"),
            "{e}"
        );
        let e = refused(&["check", "--input", "a.csv", "--out", "o"]);
        assert!(e.contains("drop --out, or leave out --input"), "{e}");
        let e = refused(&["sanitize", "--xml", "a.xml", "--", "app"]);
        assert!(e.starts_with("the app after `--` does not apply"), "{e}");
    }
}
