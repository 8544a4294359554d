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
    let config = match Config::try_from(cli) {
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
        Config::Doctor => Ok(ncugate::doctor::run()),
    };
    std::process::exit(result.unwrap_or_else(|e| {
        commands::print_error(&e);
        exit::ERROR
    }));
}
