//! `ncugate.toml`: the project's settings for the runner and the gate.
//! Unknown keys are errors. Relative paths are relative to the file's folder.

use crate::error::{Error, Result};
use crate::model::KernelKeyMode;
use crate::runner::{GraphProfiling, Mode};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The default config file, looked up in the current directory.
pub const DEFAULT_FILE: &str = "ncugate.toml";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(default)]
    pub build: BuildSection,
    #[serde(default)]
    pub app: AppSection,
    #[serde(default)]
    pub profile: ProfileSection,
    #[serde(default)]
    pub gate: GateSection,
    /// Present: `check` also runs compute-sanitizer.
    pub sanitizer: Option<SanitizerSection>,
    /// `[memory]`: the graph-memory gate's limits.
    #[serde(default)]
    pub memory: MemorySection,
    /// `[[workload]]`: a suite of apps gated together (none: `[app]` is the one workload `default`).
    #[serde(default, rename = "workload")]
    pub workloads: Vec<WorkloadSection>,
    /// The folder relative paths are resolved against.
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// Where it was read from, for messages.
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildSection {
    /// argv of the build, run in `[app] workdir` (no shell).
    pub command: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppSection {
    /// argv of the app (no shell).
    pub command: Option<Vec<String>>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub workdir: Option<PathBuf>,
    /// Seconds for the whole profiled run.
    pub timeout: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileSection {
    pub mode: Option<Mode>,
    pub graph_profiling: Option<GraphProfiling>,
    pub clock_control: Option<String>,
    pub cache_control: Option<String>,
    pub replay_mode: Option<String>,
    pub kernel_name: Option<String>,
    pub launch_skip: Option<u64>,
    pub launch_count: Option<u64>,
    #[serde(default)]
    pub extra_metrics: Vec<String>,
    pub ncu: Option<String>,
    /// Work dir for artifacts.
    pub out_dir: Option<PathBuf>,
}

/// `[sanitizer]`: compute-sanitizer as a gate stage.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SanitizerSection {
    /// memcheck, racecheck, initcheck, synccheck (default: memcheck).
    #[serde(default)]
    pub tools: Vec<String>,
    /// `--leak-check full` with memcheck (default true).
    pub leak_check: Option<bool>,
    pub print_limit: Option<u64>,
    /// The compute-sanitizer executable.
    pub program: Option<String>,
    /// Known findings that only warn, each with the reason it is allowed.
    #[serde(default)]
    pub allow: Vec<AllowEntry>,
}

/// `[memory]`: limits of `ncugate leaks` (bytes) and the history rule.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySection {
    pub audit_lib: Option<PathBuf>,
    pub max_live_execs: Option<u64>,
    pub max_live_graphs: Option<u64>,
    pub max_growth_per_iteration: Option<f64>,
    pub max_growth_per_second: Option<f64>,
    pub max_peak: Option<f64>,
    pub sample_ms: Option<u64>,
    pub history: Option<PathBuf>,
    pub history_window: Option<usize>,
    pub history_consecutive: Option<usize>,
    pub history_factor: Option<f64>,
    pub history_min_bytes: Option<f64>,
}

/// `[[sanitizer.allow]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllowEntry {
    /// A regex matched against "kind summary api error kernel user-frame".
    pub pattern: String,
    /// Why it is allowed (shown in every report).
    pub reason: String,
}

/// `[[workload]]`: one app of a suite. Unset keys come from `[app]`, `[profile]`, `[build]` and `[gate]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSection {
    /// Unique; letters, digits, `.`, `_`, `-` (it names the workload's baseline folder).
    pub name: String,
    /// argv of the app (no shell).
    pub command: Vec<String>,
    pub workdir: Option<PathBuf>,
    /// Added to (and overriding) `[app] env`.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Seconds for the whole profiled run.
    pub timeout: Option<u64>,
    pub kernel_name: Option<String>,
    pub launch_skip: Option<u64>,
    pub launch_count: Option<u64>,
    /// Added to `[profile] extra_metrics`.
    #[serde(default)]
    pub extra_metrics: Vec<String>,
    /// This workload's threshold rules (default: `[gate] thresholds`).
    pub thresholds: Option<PathBuf>,
    /// This workload's build argv; `[]` builds nothing (default: `[build] command`).
    pub build: Option<Vec<String>>,
    /// Labels for `--tag`.
    #[serde(default)]
    pub tags: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateSection {
    pub baseline: Option<PathBuf>,
    /// The baselines folder of a suite: `<dir>/<workload>/<gpu>.json` (default `baselines`).
    pub baselines: Option<PathBuf>,
    pub thresholds: Option<PathBuf>,
    pub kernel_key: Option<KernelKeyMode>,
}

impl FileConfig {
    /// Reads `path` if given (it must exist), else `./ncugate.toml` if it exists, else defaults.
    pub fn load(path: Option<&Path>) -> Result<FileConfig> {
        let (path, required) = match path {
            Some(p) => (p.to_path_buf(), true),
            None => (PathBuf::from(DEFAULT_FILE), false),
        };
        if !required && !path.exists() {
            return Ok(FileConfig {
                base_dir: PathBuf::from("."),
                ..FileConfig::default()
            });
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|source| Error::read_file("config", &path, source))?;
        let mut config: FileConfig = toml::from_str(&text).map_err(|e| {
            let known = "[app], [build], [profile], [gate], [sanitizer], [memory]";
            Error::toml(
                "config",
                &path.display().to_string(),
                &e,
                &format!("see the ncugate.toml section of the README (sections: {known}); `ncugate init --force` writes a fresh one"),
            )
        })?;
        config.base_dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        config.source = Some(path);
        Ok(config)
    }

    /// A path from the file, made relative to the file's folder.
    pub fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base_dir.join(p)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repository_config_parses() {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/ncugate.toml"));
        let config = FileConfig::load(Some(path)).unwrap();
        assert_eq!(config.profile.clock_control.as_deref(), Some("none"));
        assert!(config.app.command.is_some());
    }

    #[test]
    fn unknown_keys_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ncugate.toml");
        std::fs::write(&path, "[profile]\nmod = \"fast\"\n").unwrap();
        assert!(
            FileConfig::load(Some(&path))
                .unwrap_err()
                .detail()
                .join("\n")
                .contains("unknown field")
        );
    }
}
