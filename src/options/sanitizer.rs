//! compute-sanitizer as a gate: `ncugate sanitize`'s flags, their
//! `NCUGATE_*` variables and `[sanitizer]` in `ncugate.toml` (whose presence
//! also makes `ncugate check` run this stage).

use super::{layered, value_enum};
use crate::error::{Error, Result};
use crate::runner::RunnerConfig;
use crate::sanitizer::run::SanitizerConfig;
use crate::sanitizer::{Allow, Tool};
use clap::Args;
use serde::Deserialize;

/// `[sanitizer]`, and the flags of `ncugate sanitize` that override it.
#[derive(Debug, Clone, Default, PartialEq, Args, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SanitizerOptions {
    /// Tool(s) to run, each a separate run (default: [sanitizer] tools, else memcheck).
    #[arg(long = "tool", value_enum, value_delimiter = ',', value_name = "TOOL")]
    #[serde(default)]
    pub(crate) tools: Vec<Tool>,
    /// Report memory never freed (compute-sanitizer `--leak-check full`, memcheck only; default: [sanitizer] leak_check, else true); `--leak-check=false` turns it off.
    #[arg(
        long,
        env = "NCUGATE_LEAK_CHECK",
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_parser = clap::builder::BoolishValueParser::new(),
    )]
    pub(crate) leak_check: Option<bool>,
    /// compute-sanitizer --print-limit (records kept in the XML; default 10000).
    #[arg(long, value_name = "N")]
    pub(crate) print_limit: Option<u64>,
    /// The compute-sanitizer executable (default: compute-sanitizer from PATH).
    #[arg(long = "sanitizer", env = "NCUGATE_SANITIZER", value_name = "PATH")]
    pub(crate) program: Option<String>,
    /// A known finding that only warns: REGEX=REASON (repeatable; adds to [sanitizer] allow; default: none, every finding fails).
    #[arg(long = "allow", value_name = "REGEX=REASON")]
    #[serde(default)]
    pub(crate) allow: Vec<AllowEntry>,
}

layered!(SanitizerOptions { tools, leak_check, print_limit, program } adds { allow });

value_enum!(Tool {
    Memcheck = "memcheck": "Out-of-bounds and misaligned accesses, API errors, and (with leak_check) memory never freed",
    Racecheck = "racecheck": "Shared-memory data races",
    Initcheck = "initcheck": "Reads of device memory never written",
    Synccheck = "synccheck": "Invalid uses of synchronization primitives",
});

/// memcheck's leak check unless told otherwise: a sanitizer gate reports memory never freed.
pub(crate) const DEFAULT_LEAK_CHECK: bool = true;
/// compute-sanitizer `--print-limit` unless told otherwise.
pub(crate) const DEFAULT_PRINT_LIMIT: u64 = 10_000;
/// The compute-sanitizer ncugate runs when nothing names one.
pub(crate) const DEFAULT_PROGRAM: &str = "compute-sanitizer";

impl SanitizerOptions {
    /// compute-sanitizer's settings, the defaults filled in, running the app as
    /// `runner` does; the allow list's patterns compiled and each with a reason.
    pub(crate) fn resolve(self, runner: &RunnerConfig) -> Result<SanitizerConfig> {
        let options = self;
        let mut allow = Vec::with_capacity(options.allow.len());
        for entry in options.allow {
            let pattern = regex::Regex::new(&entry.pattern).map_err(|e| {
                Error::from(crate::error::ConfigError::InvalidAllowPattern {
                    pattern: entry.pattern.clone(),
                    reason: e.to_string(),
                })
            })?;
            if entry.reason.trim().is_empty() {
                return Err(Error::from(crate::error::ConfigError::AllowWithoutReason {
                    pattern: entry.pattern.clone(),
                }));
            }
            allow.push(Allow {
                pattern,
                reason: entry.reason,
            });
        }
        let mut tools = options.tools;
        if tools.is_empty() {
            tools.push(Tool::default());
        }
        tools.dedup();
        Ok(SanitizerConfig {
            tools,
            leak_check: options.leak_check.unwrap_or(DEFAULT_LEAK_CHECK),
            print_limit: options.print_limit.unwrap_or(DEFAULT_PRINT_LIMIT),
            allow,
            program: options.program.unwrap_or_else(|| DEFAULT_PROGRAM.into()),
            app: runner.app.clone(),
            env: runner.env.clone(),
            workdir: runner.workdir.clone(),
            timeout: runner.timeout,
            out_dir: runner.out_dir.join("sanitizer"),
        })
    }
}

/// A known finding that only warns, with the reason it is allowed:
/// `[[sanitizer.allow]]` or `--allow REGEX=REASON`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AllowEntry {
    /// A regex matched against "kind summary api error kernel user-frame" (required).
    pub(crate) pattern: String,
    /// Why it is allowed, shown in every report (required).
    pub(crate) reason: String,
}

impl std::str::FromStr for AllowEntry {
    type Err = String;

    /// `REGEX=REASON`, split at the first `=`.
    fn from_str(s: &str) -> Result<AllowEntry, String> {
        let (pattern, reason) = s.split_once('=').ok_or_else(|| {
            "expected REGEX=REASON, e.g. --allow 'cuMemFreeAsync=tracked in #42'".to_string()
        })?;
        Ok(AllowEntry {
            pattern: pattern.into(),
            reason: reason.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn flags_ncugate_toml_and_compute_sanitizer_spell_tools_alike() {
        for tool in Tool::value_variants() {
            let typed = tool.to_possible_value().map(|v| v.get_name().to_string());
            assert_eq!(typed.as_deref(), Some(tool.as_str()));
            let read: Tool = toml::Value::String(tool.as_str().into())
                .try_into()
                .unwrap();
            assert_eq!(read, *tool);
        }
    }
}
