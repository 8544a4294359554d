//! The command line as clap sees it. No logic here: `config.rs` turns a
//! [`Cli`] into a validated [`crate::config::Config`] once.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const ABOUT: &str = "Gate CI on Nsight Compute data: which kernel got worse, by how much, and why.";

/// `ncugate`.
#[derive(Debug, Parser)]
#[command(name = "ncugate", version, about = ABOUT, after_help = crate::exit::TABLE)]
pub struct Cli {
    #[command(subcommand)]
    pub command: CliCommand,
}

#[derive(Debug, Subcommand)]
pub enum CliCommand {
    /// Compare raw ncu exports with a baseline under threshold rules; exit 0, 1 or 2.
    #[command(after_help = crate::exit::TABLE)]
    Check(CheckArgs),
    /// Record or compare baselines.
    #[command(subcommand)]
    Baseline(BaselineCommand),
}

#[derive(Debug, Subcommand)]
pub enum BaselineCommand {
    /// Record a baseline from one raw export per run.
    Record(RecordArgs),
    /// Show what changed between two baselines.
    Diff(DiffArgs),
}

/// Key mode as typed on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum KeyArg {
    /// The demangled name exactly as ncu prints it.
    Demangled,
    /// The function name without return type, template arguments and parameters.
    Function,
}

/// `--color`.
#[derive(Debug, Clone, Copy, ValueEnum, Default)]
pub enum ColorArg {
    /// Colour when stdout is a terminal and NO_COLOR is unset.
    #[default]
    Auto,
    Always,
    Never,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The baseline to compare with (from `ncugate baseline record`).
    #[arg(long, env = "NCUGATE_BASELINE", value_name = "FILE")]
    pub baseline: PathBuf,
    /// Raw-page export of the current run (`ncu --import R.ncu-rep --csv --page raw`), or a .ncu-rep; repeat for several runs (their mean is compared).
    #[arg(long = "input", value_name = "RAW.csv", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Details-page export(s) of the current run (`--page details`): new ncu rule results are listed next to the verdicts.
    #[arg(long = "details", value_name = "DETAILS.csv")]
    pub details: Vec<PathBuf>,
    /// Threshold rules (TOML). Default: thresholds/default.toml, built in.
    #[arg(long, env = "NCUGATE_THRESHOLDS", value_name = "FILE")]
    pub thresholds: Option<PathBuf>,
    /// Kernel key mode; must match the baseline's (it is recorded there).
    #[arg(long, value_enum, env = "NCUGATE_KERNEL_KEY")]
    pub kernel_key: Option<KeyArg>,
    /// Compare even when the baseline was recorded on a different GPU.
    #[arg(long)]
    pub allow_device_mismatch: bool,
    /// Write a JUnit XML report (one testcase per kernel × rule and per structural check).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write a Markdown report (for a CI summary page).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write a JSON report (schema_version 1).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// When to colour the terminal report.
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Raw-page export of one run; repeat for several runs (each is one sample).
    #[arg(long = "input", value_name = "RAW.csv", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Details-page export(s): their ncu rule results are recorded, so `check --details` can list new ones.
    #[arg(long = "details", value_name = "DETAILS.csv")]
    pub details: Vec<PathBuf>,
    /// Threshold rules whose metrics to record. Default: the built-in thresholds/default.toml.
    #[arg(long, env = "NCUGATE_THRESHOLDS", value_name = "FILE")]
    pub thresholds: Option<PathBuf>,
    /// How launches are grouped into kernels.
    #[arg(long, value_enum, env = "NCUGATE_KERNEL_KEY")]
    pub kernel_key: Option<KeyArg>,
    /// Also record this metric (repeatable), e.g. for rules you plan to add.
    #[arg(long = "metric", value_name = "METRIC")]
    pub metrics: Vec<String>,
    /// Where to write the baseline (atomically).
    #[arg(long, short, value_name = "FILE")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The older baseline.
    pub old: PathBuf,
    /// The newer baseline.
    pub new: PathBuf,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_cli_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
