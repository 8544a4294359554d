//! [`ConfigError`]: a command line, `NCUGATE_*` variable or `ncugate.toml`
//! that asks for something ncugate cannot do.

use std::path::PathBuf;

/// A usage error: flags, variables or config that do not fit together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// clap refused the command line; `message` is clap's own.
    #[error("{message}")]
    CommandLine { message: String },
    /// clap refused a flag's value (`--mode fastest`).
    #[error("{flag} {value}: {why}{}", did_you_mean(.suggested))]
    InvalidValue {
        flag: String,
        value: String,
        /// Why the value was refused.
        why: String,
        /// The value clap thinks was meant.
        suggested: Option<String>,
        /// The values the flag takes, when clap knows them.
        valid: Vec<String>,
    },
    /// clap refused the value of an `NCUGATE_*` variable; `message` is clap's.
    #[error("{message} (set by its NCUGATE_* variable)")]
    InvalidVariable { message: String },
    /// A flag that was typed but would do nothing `because`; `instead` ends the hint.
    #[error("{flag} does not apply {because}")]
    NotApplicable {
        flag: String,
        because: String,
        instead: String,
    },
    #[error("--build {command}: unbalanced quote")]
    UnbalancedBuild { command: String },
    #[error("`{answer}`: unbalanced quote")]
    UnbalancedAnswer { answer: String },
    #[error("--shard {given}: expected K/N with 1 ≤ K ≤ N (e.g. 2/4)")]
    InvalidShard { given: String },
    #[error("--runs 0 records nothing")]
    ZeroRuns,
    #[error("both --input and an app after `--` were given")]
    InputAndApp,
    /// `check --input` with no baseline file, baselines folder or suite.
    #[error("check --input: no baseline to compare the exports with")]
    NoBaselineForInputs,
    #[error("no --input given")]
    NoInput,
    #[error("no app to profile: [app] command is empty")]
    NoAppToProfile,
    /// No `ncugate.toml` here, no app after `--` and no exports: nothing says what to gate.
    #[error("no ncugate.toml in this folder, and no app or exports to gate")]
    NoConfigFile,
    #[error("no app to run under compute-sanitizer")]
    NoAppToSanitize,
    #[error("no app to audit")]
    NoAppToAudit,
    #[error("no app: ncugate init needs the command that runs your CUDA app")]
    NoAppToInit,
    /// `ncugate init` would overwrite these files.
    #[error(
        "{} already {}; init never overwrites",
        .existing.join(" and "),
        if .existing.len() == 1 { "exists" } else { "exist" }
    )]
    InitWouldOverwrite { existing: Vec<String> },
    #[error("ncugate.toml has both [app] command and [[workload]] tables")]
    AppAndWorkloads,
    #[error("ncugate.toml has both [gate] baseline and [[workload]] tables")]
    BaselineAndWorkloads,
    /// `--skip-max-age` or `[gate] skip_max_age` is not an age.
    #[error("skip_max_age `{value}` is not an age")]
    SkipMaxAge { value: String },
    /// A `[[workload]]`'s `inputs` entry is not a glob.
    #[error("[[workload]] `{name}`: inputs entry `{pattern}` is not a glob: {why}")]
    InputsGlob {
        name: String,
        pattern: String,
        why: String,
    },
    #[error("two [[workload]] tables are named `{name}`")]
    DuplicateWorkload { name: String },
    #[error("[[workload]] `{name}` has no command")]
    WorkloadWithoutCommand { name: String },
    #[error("workload name `{name}` is not safe as a file name")]
    UnsafeWorkloadName { name: String },
    /// `--workload NAME` names no workload; `suggested` is the known name
    /// close to it, if any.
    #[error("no workload named `{name}`")]
    NoSuchWorkload {
        name: String,
        known: Vec<String>,
        suggested: Option<String>,
    },
    /// `--tag TAG` matches no workload; `suggested` as for a name.
    #[error("no workload is tagged `{tag}`")]
    NoSuchTag {
        tag: String,
        known: Vec<String>,
        suggested: Option<String>,
    },
    /// A flag of one workload (`--baseline`, the app after `--`) with a suite selected.
    #[error(
        "{flag} belongs to one workload, but {} are selected ({})",
        .selected.len(),
        .selected.join(", ")
    )]
    OneWorkloadFlag { flag: String, selected: Vec<String> },
    #[error("--shard splits a suite; it does not apply to {flag}")]
    ShardWithOneWorkloadFlag { flag: String },
    #[error("sanitizer allow pattern `{pattern}`: {reason}")]
    InvalidAllowPattern { pattern: String, reason: String },
    #[error("sanitizer allow pattern `{pattern}` has no reason")]
    AllowWithoutReason { pattern: String },
    /// Every work folder of one workload (`folder`, `folder.2`, …) is held
    /// by another running ncugate.
    #[error(
        "{processes} ncugate processes hold the work folders of {} at once",
        .folder.display()
    )]
    WorkFoldersBusy { processes: usize, folder: PathBuf },
}

impl ConfigError {
    /// The `hint:` line: the fix.
    pub(crate) fn hint(&self) -> String {
        use ConfigError as E;
        match self {
            E::CommandLine { .. } => "see `ncugate --help`".into(),
            E::InvalidValue { flag, valid, .. } if valid.is_empty() => format!("`--help` describes {flag}"),
            E::InvalidValue { flag, valid, .. } => format!("{flag} takes {}", valid.join(", ")),
            E::InvalidVariable { .. } => "fix or unset the variable; the --help of the command that has the flag names it".into(),
            E::NotApplicable { flag, instead, .. } => format!("drop {flag}{instead}"),
            E::UnbalancedBuild { .. } => "quote like a shell: --build \"sh -c 'make -j8 && echo done'\", or set [build] command = [\"sh\", \"-c\", \"…\"] in ncugate.toml".into(),
            E::UnbalancedAnswer { .. } => "quote like a shell: ./app --name 'a b'".into(),
            E::InvalidShard { .. } => "run shard 1/N … N/N on N runners, then `ncugate merge` their JSON reports".into(),
            E::ZeroRuns => "use --runs 3 (the default) or more for a standard deviation".into(),
            E::InputAndApp => "gate existing exports with --input, or profile an app with `-- APP ARGS`, not both".into(),
            E::NoBaselineForInputs => "name the baseline file with --baseline FILE (or [gate] baseline in ncugate.toml), or a suite's baselines folder with --baselines DIR (or [gate] baselines)".into(),
            E::NoInput => "pass the raw export(s) to check: --input RAW.csv".into(),
            E::NoAppToProfile => "gate exports with --input RAW.csv, or profile an app: [app] command = [\"path/to/app\", \"args\"…] in ncugate.toml, or the app after `--`".into(),
            E::NoConfigFile => "`ncugate init -- ./your_app ARGS` writes ncugate.toml for your app (run it where the file should live, or pass --config FILE); to gate saved exports: `ncugate check --baseline baseline.json --input run.raw.csv`".into(),
            E::NoAppToSanitize => "pass the app after `--`, set [app] command in ncugate.toml, or gate a saved file with --xml".into(),
            E::NoAppToAudit => "pass the app after `--`, or set [app] command in ncugate.toml".into(),
            E::NoAppToInit => "pass it after `--`: `ncugate init -- ./build/app --iters 3` (add --build 'make -j8' to build it first)".into(),
            E::InitWouldOverwrite { .. } => "edit them, or pass --force to write fresh ones".into(),
            E::SkipMaxAge { .. } => "give a whole number and a unit: `30m`, `12h`, `7d` (s, m, h or d)".into(),
            E::InputsGlob { .. } => "write each entry as a path or glob relative to ncugate.toml (`src/attn/**`, `kernels/*.cu`)".into(),
            E::AppAndWorkloads => "move the app into a [[workload]] (e.g. name = \"default\"); [app] may keep env, workdir and timeout shared by every workload".into(),
            E::BaselineAndWorkloads => "a suite keeps one baseline per workload and GPU in [gate] baselines (default `baselines/`); remove [gate] baseline".into(),
            E::DuplicateWorkload { .. } => "workload names must be unique: they name the baseline folders".into(),
            E::WorkloadWithoutCommand { .. } => "add command = [\"path/to/app\", \"arg\"] (argv, no shell)".into(),
            E::UnsafeWorkloadName { .. } => "use ASCII letters, digits, `.`, `_` and `-` (e.g. `train-step`), not starting with `.` or `-`".into(),
            E::NoSuchWorkload { known, suggested, .. } => format!("the config defines {}{}", known.join(", "), did_you_mean(suggested)),
            E::NoSuchTag { known, .. } if known.is_empty() => "no workload has tags: add `tags = [\"…\"]` to a [[workload]]".into(),
            E::NoSuchTag { known, suggested, .. } => format!("known tags: {}{}", known.join(", "), did_you_mean(suggested)),
            E::OneWorkloadFlag { .. } => "say which with --workload NAME".into(),
            E::ShardWithOneWorkloadFlag { flag } => format!("drop --shard, or drop {flag} and let each shard profile its workloads"),
            E::InvalidAllowPattern { .. } => "patterns are regular expressions".into(),
            E::AllowWithoutReason { .. } => "every allowed finding needs a reason, shown in every report".into(),
            E::WorkFoldersBusy { .. } => "wait for them to finish, or give this run its own folder with --out".into(),
        }
    }
}

/// " (did you mean `x`?)" for a [`crate::suggest`]ion, else nothing.
fn did_you_mean(suggested: &Option<String>) -> String {
    match suggested {
        Some(s) => format!(" (did you mean `{s}`?)"),
        None => String::new(),
    }
}
