//! Where reports go and how the terminal one looks: the `Reports` flags
//! (`--junit`, `--show`, `--color`, `--format`, …), with `-q`, `NO_COLOR`
//! and `GITHUB_ACTIONS`, `GITHUB_STEP_SUMMARY` and `GITHUB_OUTPUT` taken into
//! account once, here.

use crate::cli::{ColorArg, FormatArg, ReportArgs};
use crate::report::terminal::{Show, Style};
use crate::report::{GitHubFiles, Outputs};
use std::io::IsTerminal;

/// The report files and modes of one command.
pub(super) fn outputs(args: &ReportArgs) -> Outputs {
    Outputs {
        junit: args.junit.clone(),
        markdown: args.markdown.clone(),
        json: args.json.clone(),
        github: github_mode(args.format),
        github_files: github_files(),
        html: args.html.clone(),
        key: crate::report::sign::ReportKey::from_env(),
    }
}

/// The step summary and step outputs files a GitHub Actions runner names.
fn github_files() -> GitHubFiles {
    GitHubFiles {
        step_summary: std::env::var_os("GITHUB_STEP_SUMMARY").map(Into::into),
        output: std::env::var_os("GITHUB_OUTPUT").map(Into::into),
    }
}

/// GitHub Actions mode: asked for, or automatic inside a GitHub Actions job.
fn github_mode(arg: FormatArg) -> bool {
    match arg {
        FormatArg::Github => true,
        FormatArg::Text => false,
        FormatArg::Auto => std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true"),
    }
}

/// The terminal report's style: colour, width, and which rows `--show` (or `-q`) keeps.
pub(super) fn style(args: &ReportArgs, quiet: bool) -> Style {
    Style {
        color: use_color(args.color),
        width: crate::report::terminal::width(),
        show: match args.show {
            Some(show) => show,
            None if quiet => Show::Fail,
            None => Show::Changed,
        },
        quiet,
    }
}

/// Colour only on a terminal, and never when `NO_COLOR` is set to a non-empty value.
fn use_color(arg: ColorArg) -> bool {
    match arg {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}
