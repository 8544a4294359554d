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
    eprintln!(
        "ncugate: error: {flag} does not apply to `ncugate {}`; it is a flag of {}{why}",
        here.join(" "),
        list.join(", ")
    );
    eprintln!(
        "hint: drop {flag} here (`ncugate {} --help` lists the flags that apply)",
        here.join(" ")
    );
    true
}

fn main() {
    let matches = match Cli::command().try_get_matches() {
        Ok(matches) => matches,
        Err(e) if e.kind() == clap::error::ErrorKind::UnknownArgument => {
            if !misplaced(&e) {
                let _ = e.print();
            }
            std::process::exit(exit::ERROR);
        }
        Err(e) => {
            // Usage errors are exit 2 like every other error; help and version exit 0.
            let code = if e.use_stderr() {
                exit::ERROR
            } else {
                exit::PASS
            };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let config = match Config::from_matches(&matches) {
        Ok(config) => config,
        Err(e) => {
            commands::print_error(&e);
            std::process::exit(exit::ERROR);
        }
    };
    let real = ncugate::runner::process::RealRunner;
    let result = match config {
        Config::Check(config) => Ok(commands::check(&config)),
        Config::Record(config) => commands::record(&config),
        Config::Diff { old, new } => commands::diff(&old, &new),
        Config::Profile(config) => commands::profile(&config, &real),
        Config::Sanitize(config) => Ok(commands::sanitize(&config, &real)),
        Config::Leaks(config) => Ok(commands::leaks(&config, &real)),
        Config::Suite(config) => Ok(ncugate::suite::run::run_with(&config, &real)),
        Config::Merge(config) => Ok(ncugate::suite::merge::run(&config)),
        Config::Doctor => Ok(ncugate::doctor::run(&ncugate::config::default_ncu(), &real)),
        Config::Completions(shell) => Ok(ncugate::docs::completions(shell)),
        Config::Man(dir) => ncugate::docs::man(dir.as_deref()),
        Config::Init(config) => ncugate::init::run(
            &config,
            &mut std::io::stdin().lock(),
            ncugate::doctor::can_profile(&ncugate::config::default_ncu(), &real),
            &real,
        ),
    };
    std::process::exit(result.unwrap_or_else(|e| {
        commands::print_error(&e);
        exit::ERROR
    }));
}
