//! The `ncugate` binary: parse the command line, run the pipeline, exit 0/1/2.

use clap::CommandFactory;
use ncugate::cli::Cli;
use ncugate::commands;
use ncugate::config::Config;
use ncugate::exit;

/// A flag that another subcommand takes: says so, with a hint, instead of
/// clap's "unexpected argument". False when the flag is unknown everywhere.
fn misplaced(e: &clap::Error) -> bool {
    use clap::error::{ContextKind, ContextValue};
    let Some(ContextValue::String(flag)) = e.get(ContextKind::InvalidArg) else {
        return false;
    };
    let owners = ncugate::cli::subcommands_with_flag(flag);
    if owners.is_empty() {
        return false;
    }
    let words: Vec<String> = std::env::args().skip(1).collect();
    let here: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .take_while(|w| !w.starts_with('-'))
        .collect();
    let flag = flag.split('=').next().unwrap_or(flag);
    let list: Vec<String> = owners.iter().map(|o| format!("`ncugate {o}`")).collect();
    let why = if ncugate::cli::subcommands_with_flag("--mode") == owners {
        " (it sets how ncu profiles, and only those run ncu)"
    } else {
        ""
    };
    commands::print_usage_error(&format!(
        "ncugate: error: {flag} does not apply to `ncugate {}`; it is a flag of {}{why}\nhint: drop {flag} here (`ncugate {} --help` lists the flags that apply)\n",
        here.join(" "),
        list.join(", "),
        here.join(" ")
    ));
    true
}

fn main() {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == ncugate::runner::guard::ARG)
    {
        std::process::exit(ncugate::runner::guard::serve());
    }
    ncugate::runner::guard::enable();
    ncugate::io::atomic::mark_start();
    if let Err(e) = ncugate::runner::interrupt::install() {
        let warning = ncugate::note::Note::warning(format!(
            "cannot catch SIGINT/SIGTERM ({e}); an interrupted run may leave processes and temp files"
        ));
        eprintln!("{}", warning.line());
    }
    let matches = match Cli::command().try_get_matches() {
        Ok(matches) => matches,
        Err(e) if e.kind() == clap::error::ErrorKind::UnknownArgument => {
            if !misplaced(&e) {
                commands::print_clap_error(&e);
            }
            std::process::exit(exit::ERROR);
        }
        Err(e) => {
            if let Some(error) = ncugate::cli::value_error(&e) {
                commands::print_error(&error);
                std::process::exit(exit::ERROR);
            }
            // Usage errors are exit 2 like every other error; help and version exit 0.
            if e.use_stderr() {
                commands::print_clap_error(&e);
                std::process::exit(exit::ERROR);
            }
            // Help and version on standard output: a reader that stopped early
            // is no error, a full disk is (it exited 0 having printed nothing).
            let printed = e
                .print()
                .and_then(|()| std::io::Write::flush(&mut std::io::stdout()));
            match printed {
                Err(source) if source.kind() != std::io::ErrorKind::BrokenPipe => {
                    commands::print_error(&ncugate::error::Error::Write {
                        path: "standard output".into(),
                        source,
                    });
                    std::process::exit(exit::ERROR);
                }
                _ => std::process::exit(exit::PASS),
            }
        }
    };
    let config = match ncugate::io::bounded::check_variable()
        .and_then(|()| Config::from_matches(&matches))
    {
        Ok(config) => config,
        Err(e) => {
            commands::print_error(&e);
            std::process::exit(exit::ERROR);
        }
    };
    // An interrupted run removes what an earlier run left at these paths.
    let outputs = match &config {
        Config::Check(c) => Some(&c.outputs),
        Config::Sanitize(c) => Some(&c.outputs),
        Config::Leaks(c) => Some(&c.outputs),
        Config::Suite(c) => Some(&c.outputs),
        Config::Merge(c) => Some(&c.outputs),
        _ => None,
    };
    if let Some(outputs) = outputs {
        ncugate::runner::interrupt::claim(outputs.files());
    }
    // The one real process runner; tests pass a replaying one to `execute`.
    let real = ncugate::runner::process::RealRunner;
    ncugate::runner::interrupt::exit(commands::execute(&config, &real));
}
