//! `ncugate.toml`: the project's settings for the runner and the gates.
//! Unknown keys are errors. Relative paths are relative to the file's
//! folder; those of the option tables are resolved when the file is read, so
//! they layer with flags (relative to the current folder) as they are.

use crate::error::{Error, Result};
use crate::options::{AppOptions, GateOptions, MemoryOptions, ProfileOptions, SanitizerOptions};
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
    pub app: AppOptions,
    #[serde(default)]
    pub profile: ProfileOptions,
    #[serde(default)]
    pub gate: GateOptions,
    /// Present: `check` also runs compute-sanitizer.
    pub sanitizer: Option<SanitizerOptions>,
    /// `[memory]`: the graph-memory gate's limits.
    #[serde(default)]
    pub memory: MemoryOptions,
    /// `[[workload]]`: a suite of apps gated together (none: `[app]` is the one workload `default`).
    #[serde(default, rename = "workload")]
    pub workloads: Vec<WorkloadSection>,
    /// `[history]`: the store of every run and the accepted branches.
    #[serde(default)]
    pub history: super::history::HistorySection,
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
        config.resolve_option_paths();
        Ok(config)
    }

    /// The paths of the option tables, made relative to the file's folder.
    fn resolve_option_paths(&mut self) {
        let base = self.base_dir.clone();
        let resolve = |p: &mut Option<PathBuf>| {
            if let Some(path) = p.as_mut()
                && !path.is_absolute()
            {
                *path = base.join(&*path);
            }
        };
        resolve(&mut self.app.workdir);
        resolve(&mut self.profile.out_dir);
        resolve(&mut self.gate.baseline);
        resolve(&mut self.gate.baselines);
        resolve(&mut self.gate.thresholds);
        resolve(&mut self.memory.audit_lib);
        resolve(&mut self.memory.history);
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
        assert!(!config.app.command.is_empty());
    }

    #[test]
    fn option_paths_are_relative_to_the_files_folder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ncugate.toml");
        std::fs::write(
            &path,
            "[gate]\nthresholds = \"t.toml\"\nbaseline = \"/abs/b.json\"\n[memory]\nhistory = \"h/l.jsonl\"\n",
        )
        .unwrap();
        let config = FileConfig::load(Some(&path)).unwrap();
        assert_eq!(config.gate.thresholds, Some(dir.path().join("t.toml")));
        assert_eq!(config.gate.baseline, Some(PathBuf::from("/abs/b.json")));
        assert_eq!(config.memory.history, Some(dir.path().join("h/l.jsonl")));
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
