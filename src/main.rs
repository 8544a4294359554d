//! The `ncugate` binary: parse the command line, run the pipeline, exit 0/1/2.

use clap::Parser;
use ncugate::cli::Cli;
use ncugate::commands;
use ncugate::config::Config;
use ncugate::exit;

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Usage errors are exit 2 like every other error (clap would use 2
            // as well; help and version print and exit 0).
            let code = if e.use_stderr() {
                exit::ERROR
            } else {
                exit::PASS
            };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let code = match Config::from(cli) {
        Config::Check(config) => commands::check(&config),
        Config::Record(config) => commands::record(&config).unwrap_or_else(|e| {
            commands::print_error(&e);
            exit::ERROR
        }),
        Config::Diff { old, new } => commands::diff(&old, &new).unwrap_or_else(|e| {
            commands::print_error(&e);
            exit::ERROR
        }),
    };
    std::process::exit(code);
}
