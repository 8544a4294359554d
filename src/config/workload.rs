//! A workload: one app of a suite with its runner settings, its threshold
//! rules and its tags, and how `--workload` / `--tag` pick workloads.

use crate::error::{Error, Result};
use crate::runner::RunnerConfig;

/// The name `[app]` takes when a config has no `[[workload]]` tables.
pub(crate) const DEFAULT_WORKLOAD: &str = "default";

/// One workload, its settings merged (flag over `[[workload]]` over `[app]`/`[profile]`/`[build]`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Workload {
    pub(crate) name: String,
    pub(crate) tags: Vec<String>,
    pub(crate) runner: RunnerConfig,
    /// This workload's threshold rules.
    pub(crate) thresholds: crate::rules::ThresholdsSource,
    /// `[[workload]] autotuned_builds`, where set: it stands over `[gate]`'s,
    /// the flag over it.
    pub(crate) autotuned_builds: Option<crate::compare::code::AutotunedBuilds>,
    /// Declared `inputs`: paths and globs relative to `ncugate.toml`'s folder,
    /// made absolute.
    pub(crate) inputs: Vec<String>,
}

/// A workload name is a folder name under the baselines directory: ASCII
/// letters, digits, `.`, `_` and `-`, not starting with `.` or `-`.
pub(crate) fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with(['.', '-'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(Error::from(crate::error::ConfigError::UnsafeWorkloadName {
            name: name.to_string(),
        }))
    }
}

/// The workloads named by `names` or carrying one of `tags` (all when both
/// are empty), in the config's order. Unknown names and tags that match
/// nothing are errors, so a typo never gates less than asked.
pub(crate) fn select(
    all: Vec<Workload>,
    names: &[String],
    tags: &[String],
) -> Result<Vec<Workload>> {
    let known: Vec<&str> = all.iter().map(|w| w.name.as_str()).collect();
    for name in names {
        if !known.contains(&name.as_str()) {
            return Err(Error::from(crate::error::ConfigError::NoSuchWorkload {
                name: name.clone(),
                known: known.iter().map(|k| k.to_string()).collect(),
                suggested: crate::suggest::closest(name, known.iter().copied()).map(str::to_string),
            }));
        }
    }
    for tag in tags {
        if !all.iter().any(|w| w.tags.contains(tag)) {
            let mut tags: Vec<&str> = all
                .iter()
                .flat_map(|w| w.tags.iter().map(String::as_str))
                .collect();
            tags.sort_unstable();
            tags.dedup();
            return Err(Error::from(crate::error::ConfigError::NoSuchTag {
                tag: tag.clone(),
                suggested: crate::suggest::closest(tag, tags.iter().copied()).map(str::to_string),
                known: tags.iter().map(|t| t.to_string()).collect(),
            }));
        }
    }
    if names.is_empty() && tags.is_empty() {
        return Ok(all);
    }
    Ok(all
        .into_iter()
        .filter(|w| names.contains(&w.name) || w.tags.iter().any(|t| tags.contains(t)))
        .collect())
}

#[cfg(test)]
impl Workload {
    /// A workload named `name` that runs `app` with the defaults, for tests.
    pub(crate) fn for_tests(name: &str, app: &str) -> Workload {
        Workload {
            name: name.into(),
            tags: vec![],
            runner: RunnerConfig {
                build: None,
                app: vec![app.into()],
                env: vec![],
                workdir: ".".into(),
                timeout: std::time::Duration::from_secs(1),
                retries: 0,
                warmup: 0,
                mode: crate::runner::Mode::Fast,
                graph_profiling: crate::model::GraphProfiling::Node,
                clock_control: crate::runner::ClockControl::None,
                cache_control: crate::runner::CacheControl::All,
                replay_mode: crate::runner::ReplayMode::Kernel,
                kernel_name: None,
                launch_skip: None,
                launch_count: None,
                extra_metrics: vec![],
                dcgm: crate::runner::Dcgm::Fail,
                ncu: "ncu".into(),
                profile_from_start: true,
                nvtx_include: Vec::new(),
                kernel_env: Vec::new(),
                toolchain_command: Vec::new(),
                out_dir: ".".into(),
            },
            thresholds: crate::rules::ThresholdsSource::BuiltIn,
            autotuned_builds: None,
            inputs: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(name: &str, tags: &[&str]) -> Workload {
        let mut w = Workload::for_tests(name, "app");
        w.tags = tags.iter().map(|t| t.to_string()).collect();
        w
    }

    fn names(w: &[Workload]) -> Vec<&str> {
        w.iter().map(|w| w.name.as_str()).collect()
    }

    #[test]
    fn names_and_tags_pick_a_union_in_config_order() {
        let all = vec![
            workload("train", &["nightly"]),
            workload("infer", &["pr"]),
            workload("micro", &["pr", "nightly"]),
        ];
        let s = |n: &[&str], t: &[&str]| {
            let n: Vec<String> = n.iter().map(|x| x.to_string()).collect();
            let t: Vec<String> = t.iter().map(|x| x.to_string()).collect();
            select(all.clone(), &n, &t)
        };
        assert_eq!(names(&s(&[], &[]).unwrap()), ["train", "infer", "micro"]);
        assert_eq!(names(&s(&[], &["pr"]).unwrap()), ["infer", "micro"]);
        assert_eq!(
            names(&s(&["train"], &["pr"]).unwrap()),
            ["train", "infer", "micro"]
        );
        assert_eq!(names(&s(&["micro"], &[]).unwrap()), ["micro"]);
        let e = s(&["trian"], &[]).unwrap_err();
        assert!(e.to_string().contains("no workload named `trian`"));
        assert!(e.hint().contains("did you mean `train`?"), "{}", e.hint());
        let e = s(&[], &["nighty"]).unwrap_err();
        assert!(e.hint().contains("did you mean `nightly`?"), "{}", e.hint());
    }

    #[test]
    fn names_must_be_safe_file_names() {
        for good in ["default", "train-step", "gemm_4k.fp16"] {
            check_name(good).unwrap();
        }
        for bad in ["", "../x", "a/b", ".hidden", "-x", "a b", "ü"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}
