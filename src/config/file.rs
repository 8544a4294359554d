//! `ncugate.toml`: the project's settings for the runner and the gates.
//! Unknown keys are errors. Relative paths are relative to the file's
//! folder; those of the option tables are resolved when the file is read, so
//! they layer with flags (relative to the current folder) as they are.

use crate::error::{Error, Result};
use crate::options::{
    AppOptions, ExplainOptions, GateOptions, HistoryOptions, MemoryOptions, ProfileOptions,
    SanitizerOptions,
};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The default config file, looked up in the current directory.
pub(crate) const DEFAULT_FILE: &str = "ncugate.toml";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(default)]
    pub(crate) build: BuildSection,
    #[serde(default)]
    pub(crate) app: AppOptions,
    #[serde(default)]
    pub(crate) profile: ProfileOptions,
    #[serde(default)]
    pub(crate) gate: GateOptions,
    /// `[explain]`: `check`'s explain stage.
    #[serde(default)]
    pub(crate) explain: ExplainOptions,
    /// Present: `check` also runs compute-sanitizer.
    pub(crate) sanitizer: Option<SanitizerOptions>,
    /// `[memory]`: the graph-memory gate's limits.
    #[serde(default)]
    pub(crate) memory: MemoryOptions,
    /// `[[workload]]`: a suite of apps gated together (none: `[app]` is the one workload `default`).
    #[serde(default, rename = "workload")]
    pub(crate) workloads: Vec<WorkloadSection>,
    /// `[history]`: the store of every run and the accepted branches.
    #[serde(default)]
    pub(crate) history: HistoryOptions,
    /// The folder relative paths are resolved against.
    #[serde(skip)]
    pub(crate) base_dir: PathBuf,
    /// Where it was read from, for messages.
    #[serde(skip)]
    pub(crate) source: Option<PathBuf>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BuildSection {
    /// `[build] command`: argv of the build, run in `[app] workdir` (no shell;
    /// default: none, nothing is built).
    pub(crate) command: Option<Vec<String>>,
}

/// `[[workload]]`: one app of a suite. Unset keys come from `[app]`,
/// `[profile]`, `[build]` and `[gate]`; the app and profiling keys are those
/// of [`AppOptions`] and [`ProfileOptions`], read by them.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(try_from = "toml::Table")]
pub(crate) struct WorkloadSection {
    /// Required and unique; letters, digits, `.`, `_`, `-` (it names the workload's baseline folder).
    pub(crate) name: String,
    /// `[[workload]] command`: the app's argv, no shell (required); and
    /// `workdir`, `env` (added to, and overriding, `[app] env`), `timeout`, `retries` and `warmup`.
    pub(crate) app: AppOptions,
    /// `kernel_name`, `launch_skip`, `launch_count` and `extra_metrics` (added
    /// to `[profile] extra_metrics`).
    pub(crate) profile: ProfileOptions,
    /// This workload's threshold rules (default: `[gate] thresholds`).
    pub(crate) thresholds: Option<PathBuf>,
    /// What an autotuner's new build is gated on in this workload (default:
    /// `[gate] autotuned_builds`): a suite mixes jobs that keep the
    /// autotuner's cache with jobs that start from an empty one.
    pub(crate) autotuned_builds: Option<crate::compare::code::AutotunedBuilds>,
    /// This workload's build argv; `[]` builds nothing (default: `[build] command`).
    pub(crate) build: Option<Vec<String>>,
    /// Labels for `--tag` (default: none).
    pub(crate) tags: Vec<String>,
    /// The files the workload's kernels come from: paths and globs relative
    /// to `ncugate.toml`, hashed into its input digest (default: none: the
    /// workload is never skipped as unchanged).
    pub(crate) inputs: Vec<String>,
}

/// The keys of a `[[workload]]` table that [`AppOptions`] reads.
const WORKLOAD_APP_KEYS: &[&str] = &["command", "workdir", "env", "timeout", "retries", "warmup"];
/// The keys of a `[[workload]]` table that [`ProfileOptions`] reads; its
/// other keys are shared by every workload, in `[profile]`.
const WORKLOAD_PROFILE_KEYS: &[&str] = &[
    "kernel_name",
    "launch_skip",
    "launch_count",
    "extra_metrics",
    "profile_from_start",
    "nvtx_include",
];
/// The workload's own keys.
const WORKLOAD_KEYS: &[&str] = &[
    "name",
    "thresholds",
    "autotuned_builds",
    "build",
    "tags",
    "inputs",
];

/// The own part of a `[[workload]]` table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadOwn {
    name: String,
    thresholds: Option<PathBuf>,
    autotuned_builds: Option<crate::compare::code::AutotunedBuilds>,
    build: Option<Vec<String>>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    inputs: Vec<String>,
}

impl TryFrom<toml::Table> for WorkloadSection {
    type Error = String;

    /// The table's keys, split among the structs that read them, each of
    /// which refuses keys it does not know; a key none of them takes is
    /// refused here, as serde's `deny_unknown_fields` would (which does not
    /// work through `#[serde(flatten)]`).
    fn try_from(table: toml::Table) -> std::result::Result<WorkloadSection, String> {
        let (mut app, mut profile, mut own) =
            (toml::Table::new(), toml::Table::new(), toml::Table::new());
        for (key, value) in table {
            let part = if WORKLOAD_APP_KEYS.contains(&key.as_str()) {
                &mut app
            } else if WORKLOAD_PROFILE_KEYS.contains(&key.as_str()) {
                &mut profile
            } else if WORKLOAD_KEYS.contains(&key.as_str()) {
                &mut own
            } else {
                let expected: Vec<String> =
                    [WORKLOAD_KEYS, WORKLOAD_APP_KEYS, WORKLOAD_PROFILE_KEYS]
                        .concat()
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect();
                return Err(format!(
                    "unknown field `{key}` in a [[workload]], expected one of {}",
                    expected.join(", ")
                ));
            };
            part.insert(key, value);
        }
        let name = own.get("name").and_then(|n| n.as_str()).map(str::to_string);
        let own: WorkloadOwn = read_part(own, name.as_deref())?;
        let app: AppOptions = read_part(app, name.as_deref())?;
        let profile: ProfileOptions = read_part(profile, name.as_deref())?;
        Ok(WorkloadSection {
            name: own.name,
            app,
            profile,
            thresholds: own.thresholds,
            autotuned_builds: own.autotuned_builds,
            build: own.build,
            tags: own.tags,
            inputs: own.inputs,
        })
    }
}

/// One part of a `[[workload]]` table read by `T`; an error names the
/// workload and the key whose value `T` refuses (serde's message says only
/// what was wrong, and its place is the table's first line).
fn read_part<T: serde::de::DeserializeOwned>(
    part: toml::Table,
    workload: Option<&str>,
) -> std::result::Result<T, String> {
    let error = match part.clone().try_into::<T>() {
        Ok(read) => return Ok(read),
        Err(e) => e.message().to_string(),
    };
    // The key that `T` refuses alone: the others left out, `name` kept (it is required).
    let key = part.keys().find(|key| {
        let alone: toml::Table = part
            .iter()
            .filter(|(k, _)| k == key || k.as_str() == "name")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        alone.try_into::<T>().is_err()
    });
    let place = match (workload, key) {
        (Some(w), Some(k)) => format!("[[workload]] `{w}`, key `{k}`: "),
        (Some(w), None) => format!("[[workload]] `{w}`: "),
        (None, Some(k)) => format!("a [[workload]], key `{k}`: "),
        (None, None) => String::new(),
    };
    Err(format!("{place}{error}"))
}

/// What `check --baseline history` and `[gate] baseline = "history"` name:
/// the rolling baseline from the history, not a file.
pub(crate) const BASELINE_WORD: &str = "history";

impl FileConfig {
    /// A copy of every section but `[[workload]]` (empty): what each workload
    /// is merged over, copied once however many workloads there are.
    pub(crate) fn clone_without_workloads(&self) -> FileConfig {
        FileConfig {
            build: self.build.clone(),
            app: self.app.clone(),
            profile: self.profile.clone(),
            gate: self.gate.clone(),
            explain: self.explain.clone(),
            sanitizer: self.sanitizer.clone(),
            memory: self.memory.clone(),
            workloads: Vec::new(),
            history: self.history.clone(),
            base_dir: self.base_dir.clone(),
            source: self.source.clone(),
        }
    }

    /// Reads `path` if given (it must exist), else `./ncugate.toml` if it exists, else defaults.
    pub(crate) fn load(path: Option<&Path>) -> Result<FileConfig> {
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
        let text = crate::io::bounded::read_to_string(crate::error::FileKind::Config, &path)?;
        let mut config: FileConfig = toml::from_str(&text).map_err(|e| {
            let known = [
                "[app]",
                "[build]",
                "[profile]",
                "[gate]",
                "[explain]",
                "[sanitizer]",
                "[memory]",
            ];
            Error::toml(
                crate::error::FileKind::Config,
                &path.display().to_string(),
                &e,
                &known,
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
        // `baseline = "history"` names the rolling baseline, not a file.
        if self
            .gate
            .baseline
            .as_ref()
            .is_some_and(|b| b.as_os_str() != BASELINE_WORD)
        {
            resolve(&mut self.gate.baseline);
        }
        resolve(&mut self.gate.baselines);
        resolve(&mut self.gate.thresholds);
        resolve(&mut self.memory.audit_lib);
        resolve(&mut self.memory.history);
        if let Some(url) = self.history.url.as_mut() {
            *url = sqlite_relative_to(url, &base);
        }
        for w in &mut self.workloads {
            resolve(&mut w.app.workdir);
            resolve(&mut w.thresholds);
        }
    }
}

/// A `sqlite:` store's relative path made relative to `base`, the file's
/// folder; any other URL as it is.
fn sqlite_relative_to(url: &str, base: &Path) -> String {
    match url.strip_prefix("sqlite:") {
        Some(path) if !path.starts_with('/') && !path.is_empty() => {
            format!("sqlite:{}", base.join(path).display())
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repository_config_parses() {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/ncugate.toml"));
        let config = FileConfig::load(Some(path)).unwrap();
        assert_eq!(
            config.profile.clock_control,
            Some(crate::runner::ClockControl::None)
        );
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
    fn a_workload_table_reads_the_app_and_profile_keys_and_refuses_a_typo() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ncugate.toml");
        let load = |workload: &str| {
            std::fs::write(&path, format!("[[workload]]\nname = \"w\"\n{workload}\n")).unwrap();
            FileConfig::load(Some(&path))
        };
        let config = load(
            "command = [\"app\"]\nworkdir = \"wd\"\nenv = { A = \"1\" }\ntimeout = 5\nretries = 2\nwarmup = 1\nkernel_name = \"k\"\nextra_metrics = [\"m\"]\nthresholds = \"t.toml\"\ntags = [\"pr\"]",
        )
        .unwrap();
        let w = &config.workloads[0];
        assert_eq!(w.app.command, ["app"]);
        assert_eq!(w.app.workdir, Some(dir.path().join("wd")));
        assert_eq!(w.app.timeout, Some(5));
        assert_eq!(w.app.retries, Some(2));
        assert_eq!(w.app.warmup, Some(1));
        assert_eq!(w.profile.kernel_name.as_deref(), Some("k"));
        assert_eq!(w.profile.extra_metrics, ["m"]);
        assert_eq!(w.thresholds, Some(dir.path().join("t.toml")));
        assert_eq!(w.tags, ["pr"]);
        for (typo, key) in [
            ("comand = [\"app\"]", "comand"),
            ("kernel_nme = \"k\"", "kernel_nme"),
            // A [profile] key shared by every workload, not one a workload sets.
            ("mode = \"full\"", "mode"),
        ] {
            let e = load(typo).unwrap_err().detail().join("\n");
            assert!(e.contains(&format!("unknown field `{key}`")), "{typo}: {e}");
        }
        // A refused value names its workload and key: serde's place is the table's first line.
        for (bad, said) in [
            (
                "timeout = \"x\"",
                "[[workload]] `w`, key `timeout`: invalid type",
            ),
            (
                "nvtx_include = 3",
                "[[workload]] `w`, key `nvtx_include`: invalid type",
            ),
            (
                "autotuned_builds = \"whole\"",
                "[[workload]] `w`, key `autotuned_builds`: unknown variant `whole`",
            ),
        ] {
            let e = load(&format!("command = [\"app\"]\n{bad}")).unwrap_err();
            assert!(e.detail().join("\n").contains(said), "{bad}: {e}");
        }
        let w = &load("command = [\"app\"]\nautotuned_builds = \"all\"")
            .unwrap()
            .workloads[0];
        assert_eq!(
            w.autotuned_builds,
            Some(crate::compare::code::AutotunedBuilds::All)
        );
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

    #[test]
    fn an_unknown_explain_key_is_refused_as_in_every_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ncugate.toml");
        let refused = |text: &str| {
            std::fs::write(&path, text).unwrap();
            let e = FileConfig::load(Some(&path)).unwrap_err();
            (e.detail().join("\n"), e.hint())
        };
        let (explain, explain_hint) = refused("[explain]\nkernel = 3\n");
        assert!(
            explain.contains("unknown field `kernel`, expected one of `mode`, `kernels`, `budget`"),
            "{explain}"
        );
        let (gate, gate_hint) = refused("[gate]\nkernel = 3\n");
        assert!(gate.contains("unknown field `kernel`"), "{gate}");
        assert_eq!(explain_hint, gate_hint);
        assert!(explain_hint.contains("[explain]"), "{explain_hint}");
        std::fs::write(
            &path,
            "[explain]\nmode = \"never\"\nkernels = 1\nbudget = 5.5\n",
        )
        .unwrap();
        let config = FileConfig::load(Some(&path)).unwrap();
        assert_eq!(config.explain.explain_kernels, Some(1));
        assert_eq!(config.explain.explain_budget, Some(5.5));
    }
}
