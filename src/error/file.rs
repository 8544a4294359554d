//! [`FileKind`]: what a file ncugate reads is for, so that an error about it
//! names it and hints at the fix that fits (a missing baseline is recorded, a
//! missing shard report is uploaded, a broken export is exported again).

use std::path::Path;

/// The variable that sets the input size limit, in bytes (read by
/// `crate::io::bounded`, named by [`super::Error::TooLarge`]'s hint).
pub const MAX_INPUT_SIZE_VARIABLE: &str = "NCUGATE_MAX_INPUT_SIZE";

/// What a read past the input size limit fails with, inside an
/// [`std::io::Error`]: [`super::Error::read`] makes it
/// [`super::Error::TooLarge`].
#[derive(Debug, Clone, Copy)]
pub struct TooLarge {
    /// The limit, in bytes.
    pub limit: u64,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "larger than the input size limit ({} bytes)", self.limit)
    }
}

impl std::error::Error for TooLarge {}

/// What a file that ncugate reads is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// An ncu export given to `--input` or `--details` (a CSV of either
    /// page, or a `.ncu-rep` report); `-` is standard input.
    Export,
    /// A details-page CSV export read for its metrics (`--input`).
    DetailsPage,
    /// A details-page CSV export read for its findings (`--details`).
    Findings,
    /// A baseline file (`--baseline`, `[gate] baseline`, a suite's per-GPU file).
    Baseline,
    /// A suite's baselines folder (`[gate] baselines`).
    BaselinesFolder,
    /// `ncugate.toml` (`--config`, `NCUGATE_CONFIG`).
    Config,
    /// A thresholds file (`--thresholds`).
    Thresholds,
    /// compute-sanitizer's XML (`--xml`, or what a run saved).
    SanitizerXml,
    /// A JSON report of `ncugate check`, as `ncugate merge` reads it.
    ShardReport,
    /// The graph-memory history (one JSON object per line).
    MemoryHistory,
    /// The graph audit library's JSON report.
    AuditReport,
    /// Standard input, read for `ncugate init`'s answers.
    Stdin,
    /// The workloads predicted to skip (`--planned-skips`), as
    /// `ncugate check --predict-skips` wrote them.
    PlannedSkips,
}

impl FileKind {
    /// The file as an error message names it: `baseline b.json`, `standard input`.
    pub(crate) fn named(self, path: &Path) -> String {
        if self == FileKind::Stdin || (self == FileKind::Export && path == Path::new("-")) {
            return "standard input".into();
        }
        match self.noun() {
            Some(noun) => format!("{noun} {}", path.display()),
            None => path.display().to_string(),
        }
    }

    /// The word for the file in messages (`cannot read baseline …`,
    /// `…: invalid thresholds`); none for exports, which their path names.
    pub(crate) fn noun(self) -> Option<&'static str> {
        match self {
            FileKind::Baseline => Some("baseline"),
            FileKind::BaselinesFolder => Some("baselines folder"),
            FileKind::Config => Some("config"),
            FileKind::Thresholds => Some("thresholds"),
            FileKind::SanitizerXml => Some("sanitizer XML"),
            FileKind::ShardReport => Some("report"),
            FileKind::MemoryHistory => Some("history"),
            FileKind::AuditReport => Some("audit report"),
            FileKind::Stdin => Some("standard input"),
            FileKind::PlannedSkips => Some("planned skips"),
            FileKind::Export | FileKind::DetailsPage | FileKind::Findings => None,
        }
    }

    /// The fix for a TOML file of this kind that does not parse or validate;
    /// `keys` are the tables or keys it may hold.
    pub(crate) fn format_hint(self, keys: &[String]) -> String {
        let keys = keys.join(", ");
        match self {
            FileKind::Config => format!(
                "see the Configuration chapter of the book, docs/src/configuration.md (sections: {keys}); `ncugate init --force` writes a fresh one"
            ),
            FileKind::Thresholds => {
                format!(
                    "see the Thresholds chapter of the book, docs/src/thresholds.md; `[[rule]]` keys: {keys}"
                )
            }
            other => other.malformed_hint().to_string(),
        }
    }

    /// The fix for a file of this kind that cannot be read (`source`).
    pub(crate) fn read_hint(self, path: &Path, source: &std::io::Error) -> String {
        let missing = source.kind() == std::io::ErrorKind::NotFound;
        let shown = path.display();
        match (self, missing) {
            (FileKind::Stdin, _) => "answer the prompts on a terminal, or pass the app after `--`: `ncugate init -- ./build/app`".into(),
            (FileKind::Export, _) if path == Path::new("-") => "pipe an export into it (`ncu --import R.ncu-rep --csv --page raw | ncugate check --input -`), or name the file instead of `-`".into(),
            (FileKind::Export | FileKind::DetailsPage | FileKind::Findings, _) => {
                "check the path; inputs are `ncu --import R.ncu-rep --csv --page raw` exports".into()
            }
            (FileKind::Baseline, true) => format!(
                "record it on the GPU runner: `ncugate baseline record --output {shown}` (or from exports: `--input RUN.csv`), or point --baseline / [gate] baseline at an existing file"
            ),
            (FileKind::Config, true) => "create one with `ncugate init -- ./your-app`, or leave out --config / NCUGATE_CONFIG to use ./ncugate.toml or the defaults".into(),
            (FileKind::Thresholds, true) => "`ncugate init` writes a commented thresholds file; or leave out --thresholds to use the built-in rules".into(),
            (FileKind::SanitizerXml, true) => "save it with `compute-sanitizer --xml --save FILE ./app`, or leave out --xml to run compute-sanitizer".into(),
            (FileKind::ShardReport, true) => "pass the JSON reports the shards wrote (`ncugate check --shard K/N --json FILE`); did a runner fail to upload its report?".into(),
            (FileKind::BaselinesFolder, _) => "check that [gate] baselines names a readable folder".into(),
            (FileKind::PlannedSkips, true) => "write it in one job before the shards (`ncugate check --predict-skips FILE`) and give every shard runner that same file, or leave out --planned-skips / NCUGATE_PLANNED_SKIPS".into(),
            _ => "check that the file is readable".into(),
        }
    }

    /// The fix for a file of this kind whose content is not what it should be.
    pub(crate) fn malformed_hint(self) -> &'static str {
        match self {
            FileKind::Export => {
                "pass an ncu CSV export: `ncu --import R.ncu-rep --csv --page raw` (or `--page details`), or what `ncu --csv ./app > out.csv` wrote"
            }
            FileKind::DetailsPage => {
                "pass a details-page export (`ncu --csv ./app > out.csv`, or `ncu --import R.ncu-rep --csv --page details`)"
            }
            FileKind::Findings => {
                "pass `ncu --import R.ncu-rep --csv --page details` exports with --details"
            }
            FileKind::SanitizerXml => {
                "re-run compute-sanitizer with `--xml --save FILE`; a truncated file means it was killed or the disk filled"
            }
            FileKind::ShardReport => "pass the files exactly as `ncugate check --json` wrote them",
            FileKind::MemoryHistory => {
                "the history file holds one JSON object per line written by ncugate; remove the broken line"
            }
            FileKind::AuditReport => "rebuild the audit library: `make -C inject`",
            FileKind::Baseline => "record the baseline again with `ncugate baseline record`",
            FileKind::Config => {
                "see docs/src/configuration.md for its format; `ncugate init` writes a commented one"
            }
            FileKind::Thresholds => {
                "see docs/src/thresholds.md for its format; `ncugate init` writes a commented one"
            }
            FileKind::PlannedSkips => {
                "write it with `ncugate check --predict-skips FILE`: one workload name a line"
            }
            FileKind::BaselinesFolder | FileKind::Stdin => "check what it holds",
        }
    }
}
