//! The command line as clap sees it: the subcommands, each a set of flags.
//! The settings that also live in `ncugate.toml` are flattened in from
//! [`crate::options`], where each is defined once. No logic here beyond
//! naming a refused value or a misplaced flag: [`crate::config`] turns a
//! [`Cli`] into a validated [`crate::config::Config`] once.
//!
//! The `///` comments here are `--help` text, written for a terminal: they name
//! ncugate.toml tables (`[gate] baseline`) and placeholders (`<command>`), which
//! rustdoc would take for links and HTML.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

use crate::options::gate::BaselinesDir;
use crate::options::profile::OutDir;
use crate::options::{
    AppOptions, ExplainOptions, GateOptions, HistoryOptions, MemoryOptions, ProfileOptions,
    SanitizerOptions,
};
use crate::report::terminal::Show;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const ABOUT: &str = "Gate CI on Nsight Compute data: which kernel got worse, by how much, and why.";

/// `ncugate`.
#[derive(Debug, Parser)]
#[command(name = "ncugate", version, about = ABOUT, after_help = crate::exit::TABLE)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: CliCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum CliCommand {
    /// Start gating your app here: write ncugate.toml and a commented thresholds file; with a GPU, profile once and list the kernels.
    Init(InitArgs),
    /// Profile the app under ncu (or read ncu exports) and gate it against the baseline; exit 0, 1 or 2.
    #[command(
        after_help = crate::exit::TABLE,
        mut_arg("thresholds", |a| a.help("Threshold rules (TOML) to gate with (default: [gate] thresholds, else the built-in thresholds/default.toml)")),
        mut_arg("quiet", |a| a.help_heading("Reports"))
    )]
    Check(Box<CheckArgs>),
    /// Record or compare baselines.
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// Build the app and profile it under ncu once; keep every artifact in the work dir.
    #[command(
        after_help = crate::exit::RECORD_TABLE,
        mut_arg("workloads", |a| a.help("Profile only this workload (repeatable; default: every workload)")),
        mut_arg("extra_metrics", |a| a.help("Also collect this metric (repeatable; NCUGATE_EXTRA_METRICS is comma-separated; adds to [profile] extra_metrics; default: none beyond the thresholds' metrics)")),
        mut_arg("quiet", |a| a.help("No progress output (ncu's and the app's lines go to the work dir only)").help_heading(None::<&str>))
    )]
    Profile(Box<ProfileOnlyArgs>),
    /// Run compute-sanitizer on the app, or gate saved XML, and gate its findings; exit 0, 1 or 2.
    #[command(after_help = crate::exit::SANITIZE_TABLE)]
    Sanitize(Box<SanitizeArgs>),
    /// Run the app with the CUDA-graph audit library and NVML sampling; fail on leaked graph executables or memory growth.
    #[command(after_help = crate::exit::LEAKS_TABLE)]
    Leaks(Box<LeaksArgs>),
    /// Join the JSON reports of a suite's shards into one verdict and every report format (no GPU needed); exit 0, 1 or 2.
    #[command(after_help = crate::exit::MERGE_TABLE)]
    Merge(Box<MergeArgs>),
    /// Keep every run in a history store (SQLite or PostgreSQL) and show each kernel's trend.
    History(Box<HistoryArgs>),
    /// Check the GPU, ncu, compute-sanitizer, nvcc and performance-counter access.
    Doctor,
    /// Print a shell completion script: `ncugate completions bash > /etc/bash_completion.d/ncugate`.
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one page per command into a folder.
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// Build command run before profiling, split like a shell does (e.g. "make -j8"; default: asked for on a terminal, else none: no [build] table).
    #[arg(long, value_name = "COMMAND")]
    pub(crate) build: Option<String>,
    /// Replace an existing ncugate.toml / ncugate-thresholds.toml.
    #[arg(long)]
    pub(crate) force: bool,
    /// Do not profile the app once, even with a GPU here.
    #[arg(long)]
    pub(crate) no_profile: bool,
    /// Ask nothing, even on a terminal (CI runners never get questions).
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,
    /// Print the built-in thresholds, each `[[rule]]` numbered as reports name it ("built-in rule 3"), and write nothing.
    #[arg(long, conflicts_with_all = ["build", "force", "no_profile", "app"])]
    pub(crate) print_thresholds: bool,
    /// The app and its arguments, as ncu should run it (default: asked for on a terminal; required on CI).
    #[arg(last = true, value_name = "APP ARGS")]
    pub(crate) app: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// Write ncugate.1 and ncugate-<command>.1 for every command into this folder (default: none, ncugate.1 to standard output).
    #[arg(long, value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
}

/// `ncugate merge`.
#[derive(Debug, Args)]
pub(crate) struct MergeArgs {
    /// The shards' `--json` reports (one per shard; in any order).
    #[arg(required = true, value_name = "REPORT.json")]
    pub(crate) reports: Vec<PathBuf>,
    /// Refuse unless exactly N shards (1/N … N/N) are given (default: the N the shards name).
    #[arg(long, value_name = "N")]
    pub(crate) expect_shards: Option<u32>,
    /// The terminal report lists failures only (as `--show fail`): no line for a workload that passed, no table under the "why" lines.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    #[command(flatten)]
    pub(crate) report: ReportArgs,
}

/// Which workloads of a suite (`[[workload]]` tables) to run, and where their baselines are.
#[derive(Debug, Args, Default)]
pub(crate) struct SuiteArgs {
    /// Run only this workload (repeatable; with --input: the workload the exports belong to; default: every workload).
    #[arg(long = "workload", value_name = "NAME")]
    pub(crate) workloads: Vec<String>,
    /// Run only the workloads with this tag (repeatable; default: any tag).
    #[arg(long = "tag", value_name = "TAG")]
    pub(crate) tags: Vec<String>,
    /// Run shard K of N: a deterministic share of the workloads, balanced by their recorded cost (default: none, the whole suite).
    #[arg(long, env = "NCUGATE_SHARD", value_name = "K/N")]
    pub(crate) shard: Option<String>,
    #[command(flatten)]
    pub(crate) baselines: BaselinesDir,
}

impl SuiteArgs {
    /// Any suite flag given.
    pub(crate) fn any(&self) -> bool {
        !self.workloads.is_empty()
            || !self.tags.is_empty()
            || self.shard.is_some()
            || self.baselines.baselines.is_some()
    }
}

#[derive(Debug, Args)]
pub(crate) struct LeaksArgs {
    #[command(flatten)]
    pub(crate) memory: MemoryOptions,
    #[command(flatten)]
    pub(crate) report: ReportArgs,
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

#[derive(Debug, Args)]
pub(crate) struct SanitizeArgs {
    #[command(flatten)]
    pub(crate) sanitizer: SanitizerOptions,
    /// Gate XML saved earlier (`compute-sanitizer --xml --save FILE`) instead of running (repeatable; default: none, compute-sanitizer runs the app).
    #[arg(long = "xml", value_name = "FILE")]
    pub(crate) xml: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) report: ReportArgs,
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

/// How to build and run the app (override `ncugate.toml`).
#[derive(Debug, Args, Default)]
#[command(next_help_heading = "App")]
pub(crate) struct RunArgs {
    /// Config file (default: ./ncugate.toml if present).
    #[arg(long, env = "NCUGATE_CONFIG", value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) app: AppOptions,
    #[command(flatten)]
    pub(crate) out: OutDir,
    #[command(flatten)]
    pub(crate) build: BuildArgs,
    /// No progress output; the terminal report lists failures only (as `--show fail`), in "why" lines without the table that repeats them.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// Whether and how to build the app before it runs.
#[derive(Debug, Args, Default)]
pub(crate) struct BuildArgs {
    /// Build command, split into words like a shell does (quotes, backslashes; no expansion; default: [build] command, else none: nothing is built).
    #[arg(long = "build", env = "NCUGATE_BUILD", value_name = "COMMAND")]
    pub(crate) build: Option<String>,
    /// Skip [build] command.
    #[arg(long, env = "NCUGATE_NO_BUILD")]
    pub(crate) no_build: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ProfileOnlyArgs {
    #[command(flatten)]
    pub(crate) suite: SuiteArgs,
    #[command(flatten)]
    pub(crate) ncu: ProfileOptions,
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum BaselineCommand {
    /// Record a baseline from one raw export per run.
    #[command(
        after_help = crate::exit::RECORD_TABLE,
        mut_arg("thresholds", |a| a.help("Threshold rules (TOML) whose metrics the baseline records (default: [gate] thresholds, else the built-in thresholds/default.toml)")),
        mut_arg("quiet", |a| a.help("No progress output: the line saying what was recorded, and errors").help_heading(None::<&str>))
    )]
    Record(Box<RecordArgs>),
    /// Show what changed between two baselines.
    #[command(after_help = crate::exit::DIFF_TABLE)]
    Diff(DiffArgs),
}

/// Where and how to report (shared by check, sanitize and leaks).
#[derive(Debug, Args)]
#[command(next_help_heading = "Reports")]
pub(crate) struct ReportArgs {
    /// Write a JUnit XML report (one testcase per check; default: none, not written).
    #[arg(long, value_name = "FILE")]
    pub(crate) junit: Option<PathBuf>,
    /// Write a Markdown report (for a CI summary page; default: none, not written).
    #[arg(long, value_name = "FILE")]
    pub(crate) markdown: Option<PathBuf>,
    /// Write a JSON report (schema_version 2; default: none, not written).
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    /// Write a static HTML report (index.html, style.css, charts/*.svg; no JavaScript, no inline styles) into this folder (default: none, not written). With a history store (--history), each failing metric's section also shows its trend over the stored runs (charts/trend-N.svg, the first 5).
    #[arg(long, value_name = "DIR")]
    pub(crate) html: Option<PathBuf>,
    /// When to colour the terminal report.
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    pub(crate) color: ColorArg,
    /// Which rows of the terminal table to print: failures and errors; also warnings and improvements; every check (default: changed; with -q, fail). File reports always hold every row.
    #[arg(long, value_enum, value_name = "ROWS", env = "NCUGATE_SHOW")]
    pub(crate) show: Option<Show>,
    /// Output for a CI system: `github` adds ::error/::warning annotations, the Markdown report (with a chart) in $GITHUB_STEP_SUMMARY and result/regressions/report in $GITHUB_OUTPUT.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub(crate) format: FormatArg,
}

crate::options::value_enum!(Show {
    Fail = "fail": "Failures and errors only",
    Changed = "changed": "Failures, errors, warnings and improvements",
    All = "all": "Every check",
});

/// `--format`.
#[derive(Debug, Clone, Copy, ValueEnum, Default)]
pub(crate) enum FormatArg {
    /// GitHub Actions mode when GITHUB_ACTIONS=true, plain text otherwise.
    #[default]
    Auto,
    /// Plain text only.
    Text,
    /// Annotations, step summary with a chart, and step outputs.
    Github,
}

/// `--color`.
#[derive(Debug, Clone, Copy, ValueEnum, Default)]
pub(crate) enum ColorArg {
    /// Colour when stdout is a terminal and NO_COLOR is unset.
    #[default]
    Auto,
    Always,
    Never,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The baseline to compare with (from `ncugate baseline record`; default: [gate] baseline, else the baselines folder); `history`: the last accepted runs in the history store (--history), in a suite each workload's own.
    #[arg(long, env = "NCUGATE_BASELINE", value_name = "FILE")]
    pub(crate) baseline: Option<PathBuf>,
    /// An ncu CSV export of the current run — the raw page (`ncu --import R.ncu-rep --csv --page raw`) or the details page (what `ncu --csv ./app > out.csv` saves), preamble and all — or a .ncu-rep or .ncu-repz report, or `-` for standard input; repeat for several runs (their mean is compared). Without --input, ncugate builds and profiles the app (default: none, profile the app).
    #[arg(long = "input", value_name = "RAW.csv")]
    pub(crate) inputs: Vec<PathBuf>,
    /// Details-page export(s) of the current run (`--page details`), or its .ncu-rep (or .ncu-repz): new ncu rule results are listed next to the verdicts (default: a report --input's own rule results, else none).
    #[arg(long = "details", value_name = "DETAILS.csv")]
    pub(crate) details: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) gate: GateOptions,
    #[command(flatten)]
    pub(crate) skip: crate::options::skip::SkipArgs,
    /// Compare even when the baseline was recorded on a different GPU.
    #[arg(long)]
    pub(crate) allow_device_mismatch: bool,
    #[command(flatten)]
    pub(crate) explain: ExplainOptions,
    #[command(flatten)]
    pub(crate) history: CheckHistoryArgs,
    #[command(flatten)]
    pub(crate) suite: SuiteArgs,
    #[command(flatten)]
    pub(crate) report: ReportArgs,
    #[command(flatten)]
    pub(crate) ncu: ProfileOptions,
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

/// A check's use of the history store: its settings, and the names its own
/// run is recorded under.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct CheckHistoryArgs {
    #[command(flatten)]
    pub(crate) options: HistoryOptions,
    /// The workload name a single check's run is kept under in the history (a suite check keeps each workload's run, and reads its rolling baseline, under the workload's own name).
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub(crate) history_workload: String,
    /// The commit the recorded run is kept under (default: $GITHUB_SHA, $GIT_COMMIT, else `git rev-parse HEAD`).
    #[arg(long, value_name = "SHA")]
    pub(crate) commit: Option<String>,
    /// The branch the recorded run was made on (default: $GITHUB_REF_NAME, $BRANCH_NAME, else git's current branch).
    #[arg(long, value_name = "NAME")]
    pub(crate) branch: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct RecordArgs {
    /// An ncu CSV export of one run (raw or details page, or `-` for standard input), or a .ncu-rep or .ncu-repz report; repeat for several runs (each is one sample; one run given twice — the same file, or a report and a page exported from it — is refused). Without --input, ncugate builds and profiles the app --runs times (default: none, profile the app).
    #[arg(long = "input", value_name = "RAW.csv")]
    pub(crate) inputs: Vec<PathBuf>,
    /// Profiled runs to record when no --input is given.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub(crate) runs: u32,
    /// Details-page export(s), or the .ncu-rep (or .ncu-repz): their ncu rule results are recorded, so `check --details` can list new ones (default: a report --input's own rule results, else none).
    #[arg(long = "details", value_name = "DETAILS.csv")]
    pub(crate) details: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) gate: GateOptions,
    /// Where to write the baseline (atomically; default: [gate] baseline, else the baselines folder).
    #[arg(long, short, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// A source page of one kernel (`ncu --import R --csv --page source --print-source cuda,sass` of a report profiled with `--section SourceCounters --import-source yes`), stored as the kernel's source profile for `check --explain`; repeat for several kernels (default: none; see --source).
    #[arg(long = "source-page", value_name = "SOURCE.csv")]
    pub(crate) source_pages: Vec<PathBuf>,
    /// After the runs, profile each kernel's first launch once more with ncu's SourceCounters section and store its per-line counters (one extra ncu run per kernel, about 4.6 s each on the reference app), so that a failing check can name source lines.
    #[arg(long)]
    pub(crate) source: bool,
    #[command(flatten)]
    pub(crate) suite: SuiteArgs,
    #[command(flatten)]
    pub(crate) ncu: ProfileOptions,
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

#[derive(Debug, Args)]
pub(crate) struct DiffArgs {
    /// The older baseline (required).
    pub(crate) old: PathBuf,
    /// The newer baseline (required).
    pub(crate) new: PathBuf,
    /// Also print the line diff of the two files.
    #[arg(long)]
    pub(crate) file_diff: bool,
}

/// `ncugate history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The history store: sqlite:PATH or postgres://USER@HOST:PORT/DATABASE (default: [history] url, else none: no history).
    #[arg(
        long = "history",
        env = "NCUGATE_HISTORY",
        value_name = "URL",
        global = true
    )]
    pub(crate) history: Option<String>,
    /// How many seconds a PostgreSQL history server may take to answer a connection or a statement (default: [history] timeout, else 30).
    #[arg(
        long = "history-timeout",
        env = "NCUGATE_HISTORY_TIMEOUT",
        value_name = "SECONDS",
        global = true
    )]
    pub(crate) timeout: Option<std::num::NonZeroU64>,
    /// Config file (default: ./ncugate.toml if present).
    #[arg(long, env = "NCUGATE_CONFIG", value_name = "FILE", global = true)]
    pub(crate) config: Option<PathBuf>,
    #[command(subcommand)]
    pub(crate) command: HistoryCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HistoryCommand {
    /// Add the runs of `check` / `merge` JSON reports (a run: workload × GPU × commit); the same report twice is one run.
    Record(HistoryRecordArgs),
    /// Make every run of COMMIT baseline material (an intended change).
    Accept(HistoryAcceptArgs),
    /// Print the series: a sparkline per workload × kernel × metric, oldest first.
    Show(HistoryShowArgs),
    /// List the commits where a series changed: the exact commit for counts, E-Divisive change points (Welch p < --change-p) for the rest.
    Changes(HistoryShowArgs),
}

#[derive(Debug, Args)]
pub(crate) struct HistoryRecordArgs {
    /// `--json` reports of `ncugate check` or `ncugate merge`.
    #[arg(required = true, value_name = "REPORT.json")]
    pub(crate) reports: Vec<PathBuf>,
    /// The commit the reports are of (default: GITHUB_SHA, GIT_COMMIT, else `git rev-parse HEAD`).
    #[arg(long, value_name = "SHA")]
    pub(crate) commit: Option<String>,
    /// The branch (default: GITHUB_REF_NAME, BRANCH_NAME, else `git rev-parse --abbrev-ref HEAD`).
    #[arg(long, value_name = "NAME")]
    pub(crate) branch: Option<String>,
    /// When the runs were made: RFC 3339 (2026-12-02T01:00:00Z) or seconds since 1970 (default: now).
    #[arg(long, value_name = "T")]
    pub(crate) time: Option<String>,
    /// The workload a single check's report is recorded under (suite reports name their own; `default` is [app]'s).
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub(crate) workload: String,
}

#[derive(Debug, Args)]
pub(crate) struct HistoryAcceptArgs {
    /// The commit whose runs become baseline material (as recorded).
    #[arg(value_name = "COMMIT")]
    pub(crate) commit: String,
}

#[derive(Debug, Args)]
pub(crate) struct HistoryShowArgs {
    /// Only this workload (default: every workload).
    #[arg(long, value_name = "NAME")]
    pub(crate) workload: Option<String>,
    /// Only kernels whose key contains this text (default: every kernel).
    #[arg(long, value_name = "TEXT")]
    pub(crate) kernel: Option<String>,
    /// Only metrics whose name contains this text, or the rule of this name (default: every metric).
    #[arg(long, value_name = "TEXT")]
    pub(crate) metric: Option<String>,
    /// Only the last N runs of each series (default: every run).
    #[arg(long, value_name = "N")]
    pub(crate) last: Option<usize>,
    /// Print JSON instead of the sparklines.
    #[arg(long)]
    pub(crate) json: bool,
    /// `show`: also write DIR/index.html, a trend chart per kernel × metric with the allowance band and the accepted runs marked (default: none, not written).
    #[arg(long, value_name = "DIR")]
    pub(crate) html: Option<PathBuf>,
    /// `show --html`: the rules whose max_change draws the band (default: [gate] thresholds, else the built-in thresholds/default.toml).
    #[arg(long, value_name = "FILE")]
    pub(crate) thresholds: Option<PathBuf>,
    /// `show --html`: the accepted runs the band's mean is taken over, as `check --window` (default: [history] window, else 5).
    #[arg(long, value_name = "N")]
    pub(crate) window: Option<usize>,
    /// The change-point test's significance level (default: [history] change_p, else 0.001).
    #[arg(long, env = "NCUGATE_CHANGE_P", value_name = "P")]
    pub(crate) change_p: Option<f64>,
    /// The runs the change-point test searches at once and compares on each side (default: [history] change_window, else 50).
    #[arg(long, env = "NCUGATE_CHANGE_WINDOW", value_name = "N")]
    pub(crate) change_window: Option<usize>,
    /// List a workload × GPU as stale when its last run on an accepted branch is older than this: days (14d) or commits (30c) (default: [history] stale_after, else 14d).
    #[arg(long, env = "NCUGATE_STALE_AFTER", value_name = "AGE")]
    pub(crate) stale_after: Option<String>,
}

/// A value clap refused (`--mode fastest`, `--env X`, `--tool foo`) as
/// ncugate states every usage error: what was wrong with which flag, and a
/// hint with the values it takes; `None` for every other kind of clap error.
pub fn value_error(e: &clap::Error) -> Option<crate::error::Error> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if !matches!(
        e.kind(),
        ErrorKind::InvalidValue | ErrorKind::ValueValidation
    ) {
        return None;
    }
    let text = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let arg = text(ContextKind::InvalidArg)?;
    // `--env <KEY=VALUE>` → `--env`; a positional stays as clap names it.
    let flag = arg.split(' ').next().unwrap_or(&arg).to_string();
    let value = text(ContextKind::InvalidValue).unwrap_or_default();
    let why = match std::error::Error::source(e) {
        Some(source) => source.to_string(),
        None => "not a value it takes".to_string(),
    };
    let suggested = match e.get(ContextKind::SuggestedValue) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(s)) => s.first().cloned(),
        _ => None,
    };
    let valid = match e.get(ContextKind::ValidValue) {
        Some(ContextValue::Strings(values)) => values.clone(),
        _ => Vec::new(),
    };
    Some(crate::error::Error::from(
        crate::error::ConfigError::InvalidValue {
            flag,
            value,
            why,
            suggested,
            valid,
        },
    ))
}

/// The subcommands (as typed, e.g. `baseline record`) that accept the long
/// flag `flag` (`--mode`), to say where a flag belongs when another
/// subcommand refuses it.
pub fn subcommands_with_flag(flag: &str) -> Vec<String> {
    use clap::CommandFactory;
    let Some(long) = flag.strip_prefix("--") else {
        return Vec::new();
    };
    let long = long.split('=').next().unwrap_or(long);
    let mut found = Vec::new();
    fn walk(cmd: &clap::Command, path: &str, long: &str, found: &mut Vec<String>) {
        for sub in cmd.get_subcommands() {
            let name = if path.is_empty() {
                sub.get_name().to_string()
            } else {
                format!("{path} {}", sub.get_name())
            };
            if sub.get_arguments().any(|a| a.get_long() == Some(long)) {
                found.push(name.clone());
            }
            walk(sub, &name, long, found);
        }
    }
    walk(&Cli::command(), "", long, &mut found);
    found
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_cli_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }

    #[test]
    fn a_refused_value_is_said_as_ncugate_says_errors() {
        use clap::CommandFactory;
        let refused = |args: &[&str]| {
            let e = super::Cli::command()
                .try_get_matches_from([&["ncugate"], args].concat())
                .unwrap_err();
            let e = super::value_error(&e).expect("a value error");
            (e.to_string(), e.hint())
        };
        let (message, hint) = refused(&["profile", "--mode", "fastt"]);
        assert_eq!(
            message,
            "--mode fastt: not a value it takes (did you mean `fast`?)"
        );
        assert_eq!(hint, "--mode takes fast, full");
        let (message, hint) = refused(&["profile", "--env", "X"]);
        assert_eq!(
            message,
            "--env X: expected KEY=VALUE, e.g. --env CUDA_VISIBLE_DEVICES=0"
        );
        assert_eq!(hint, "`--help` describes --env");
        let (_, hint) = refused(&["sanitize", "--tool", "memchek"]);
        assert_eq!(
            hint,
            "--tool takes memcheck, racecheck, initcheck, synccheck"
        );
        let e = super::Cli::command()
            .try_get_matches_from(["ncugate", "nope"])
            .unwrap_err();
        assert!(super::value_error(&e).is_none());
    }

    #[test]
    fn a_flag_knows_which_subcommands_take_it() {
        assert_eq!(
            super::subcommands_with_flag("--mode"),
            ["check", "baseline record", "profile"]
        );
        assert_eq!(
            super::subcommands_with_flag("--junit=x.xml"),
            ["check", "sanitize", "leaks", "merge"]
        );
        assert!(super::subcommands_with_flag("--nope").is_empty());
    }

    /// The default a help text states in parentheses, as the words after
    /// `default` up to `;` or `)`, the last of an `else` chain: `(default: [gate] baselines,
    /// else baselines/ beside ncugate.toml)` → `baselines`.
    fn stated_default(help: &str) -> Option<String> {
        let (at, _) = help.match_indices("default").find(|(i, _)| {
            let before = &help[..*i];
            let in_parentheses = before.rfind('(') > before.rfind(')');
            in_parentheses && matches!(help[i + 7..].chars().next(), Some(' ' | ':' | ')'))
        })?;
        let rest = &help[at + "default".len()..];
        let clause = rest.trim_start_matches(':').trim_start();
        let clause = clause.split([';', ')']).next().unwrap_or(clause);
        let last = clause.rsplit(", else ").next().unwrap_or(clause);
        let last = last.trim_start_matches("the built-in ");
        let word = last.split_whitespace().next().unwrap_or(last);
        Some(word.trim_end_matches(['/', '.', ',']).to_string())
    }

    #[test]
    fn every_default_in_help_is_the_constant_the_code_uses() {
        use crate::options::{app, explain, gate, history, memory, profile, sanitizer};
        use clap::{CommandFactory, ValueEnum};
        let name = |v: &dyn Fn() -> Option<clap::builder::PossibleValue>| {
            v().map(|p| p.get_name().to_string())
        };
        let limits = crate::options::MemoryOptions::default().limits();
        let not_checked = |limit: Option<f64>| {
            assert!(limit.is_none());
            "not".to_string()
        };
        // Each flag whose help states a default, with the default the code
        // applies; `None`: said in words no constant holds (a folder of the
        // config, another setting).
        let expected: Vec<(&str, Option<String>)> = vec![
            ("timeout", Some(app::DEFAULT_TIMEOUT_S.to_string())),
            ("retries", Some(app::DEFAULT_RETRIES.to_string())),
            ("warmup", Some(app::DEFAULT_WARMUP.to_string())),
            ("workdir", None),
            (
                "thresholds",
                Some(
                    crate::rules::ThresholdsSource::BuiltIn
                        .path()
                        .display()
                        .to_string(),
                ),
            ),
            (
                "kernel-key",
                name(&|| crate::model::KernelKeyMode::default().to_possible_value()),
            ),
            (
                "shared-gpu",
                name(&|| crate::shared_gpu::Policy::default().to_possible_value()),
            ),
            (
                "environmental",
                name(&|| {
                    crate::compare::environmental::Environmental::default().to_possible_value()
                }),
            ),
            (
                "autotuned-builds",
                name(&|| crate::compare::code::AutotunedBuilds::default().to_possible_value()),
            ),
            (
                "locked-counters",
                name(&|| crate::trace::LockedCounters::default().to_possible_value()),
            ),
            (
                "explain",
                name(&|| explain::DEFAULT_MODE.to_possible_value()),
            ),
            (
                "explain-kernels",
                Some(explain::DEFAULT_KERNELS.to_string()),
            ),
            (
                "explain-budget",
                Some(explain::DEFAULT_BUDGET_S.to_string()),
            ),
            ("audit-lib", None),
            ("cache-dir", None),
            (
                "max-live-execs",
                Some(memory::DEFAULT_MAX_LIVE_EXECS.to_string()),
            ),
            (
                "max-live-graphs",
                Some(not_checked(limits.max_live_graphs.map(|l| l as f64))),
            ),
            (
                "max-growth-per-iteration",
                Some(memory::DEFAULT_MAX_GROWTH_PER_ITERATION.to_string()),
            ),
            (
                "max-growth-per-second",
                Some(not_checked(limits.max_growth_per_second)),
            ),
            ("max-peak", Some(not_checked(limits.max_peak))),
            ("sample-ms", Some(memory::DEFAULT_SAMPLE_MS.to_string())),
            (
                "history-window",
                Some(memory::DEFAULT_HISTORY_WINDOW.to_string()),
            ),
            (
                "history-consecutive",
                Some(memory::DEFAULT_HISTORY_CONSECUTIVE.to_string()),
            ),
            (
                "history-factor",
                Some(memory::DEFAULT_HISTORY_FACTOR.to_string()),
            ),
            (
                "history-min-bytes",
                Some(memory::DEFAULT_HISTORY_MIN_BYTES.to_string()),
            ),
            (
                "clock-control",
                Some(profile::DEFAULT_CLOCK_CONTROL.to_string()),
            ),
            (
                "cache-control",
                Some(profile::DEFAULT_CACHE_CONTROL.to_string()),
            ),
            (
                "replay-mode",
                Some(profile::DEFAULT_REPLAY_MODE.to_string()),
            ),
            ("ncu", Some(profile::DEFAULT_NCU.to_string())),
            (
                "mode",
                crate::runner::Mode::default()
                    .to_possible_value()
                    .map(|v| v.get_name().to_string()),
            ),
            (
                "graph-profiling",
                Some(crate::model::GraphProfiling::default().as_str().to_string()),
            ),
            // `resolve` takes these as literals (`unwrap_or(true)`, `unwrap_or_default()`).
            ("profile-from-start", Some(true.to_string())),
            ("import-with-ncu", Some(bool::default().to_string())),
            ("dcgm", Some(crate::runner::Dcgm::default().to_string())),
            ("out", Some(profile::DEFAULT_OUT_DIR.to_string())),
            ("tool", Some(crate::sanitizer::Tool::default().to_string())),
            (
                "print-limit",
                Some(sanitizer::DEFAULT_PRINT_LIMIT.to_string()),
            ),
            ("sanitizer", Some(sanitizer::DEFAULT_PROGRAM.to_string())),
            ("baselines", Some(gate::DEFAULT_BASELINES_DIR.to_string())),
            (
                "skip-unchanged",
                Some(crate::options::skip::DEFAULT_SKIP_UNCHANGED.to_string()),
            ),
            (
                "skip-max-age",
                Some(crate::options::skip::DEFAULT_SKIP_MAX_AGE.to_string()),
            ),
            (
                "config",
                Some(format!("./{}", crate::config::file::DEFAULT_FILE)),
            ),
            ("baseline", None),
            ("output", None),
            // `ncugate history`: a file key, the CI's variables, the clock.
            ("history", None),
            ("window", Some(history::DEFAULT_WINDOW.to_string())),
            ("anchor", None),
            (
                "history-record",
                name(&|| history::DEFAULT_RECORD.to_possible_value()),
            ),
            (
                "history-timeout",
                Some(history::DEFAULT_TIMEOUT.as_secs().to_string()),
            ),
            ("change-p", Some(history::DEFAULT_CHANGE_P.to_string())),
            (
                "change-window",
                Some(history::DEFAULT_CHANGE_WINDOW.to_string()),
            ),
            (
                "stale-after",
                Some(history::DEFAULT_STALE_AFTER.to_string()),
            ),
            ("commit", None),
            ("branch", None),
            ("time", None),
            // `quiet` changes it: `Style` holds the literal.
            ("show", None),
            (
                "leak-check",
                Some(sanitizer::DEFAULT_LEAK_CHECK.to_string()),
            ),
            // No default: what ncugate does without them, said in words.
            ("build", None),
            ("dir", None),
            ("expect-shards", None),
            ("workload", None),
            ("tag", None),
            ("shard", None),
            ("xml", None),
            ("junit", None),
            ("markdown", None),
            ("json", None),
            ("html", None),
            ("input", None),
            ("details", None),
            ("source-page", None),
            ("kernel", None),
            ("metric", None),
            ("last", None),
            ("kernel-name", None),
            ("launch-skip", None),
            ("launch-count", None),
            ("extra-metric", None),
            ("nvtx-include", None),
            ("env", None),
            ("allow", None),
            ("predict-skips", None),
            ("planned-skips", None),
        ];
        let mut seen = Vec::new();
        fn walk(cmd: &clap::Command, f: &mut dyn FnMut(&clap::Arg)) {
            cmd.get_arguments().for_each(&mut *f);
            cmd.get_subcommands().for_each(|sub| walk(sub, f));
        }
        walk(&super::Cli::command(), &mut |arg| {
            let (Some(long), Some(help)) = (arg.get_long(), arg.get_help()) else {
                return;
            };
            let Some(stated) = stated_default(&help.to_string()) else {
                return;
            };
            let Some((_, constant)) = expected.iter().find(|(flag, _)| *flag == long) else {
                panic!("--{long} states a default ({stated}): add it here with its constant");
            };
            if let Some(constant) = constant {
                assert_eq!(&stated, constant, "--{long}: {help}");
            }
            seen.push(long.to_string());
        });
        for (flag, _) in &expected {
            assert!(seen.iter().any(|s| s == flag), "--{flag} states no default");
        }
    }
}
