//! The environment that picks kernels: the variables autotuners, JIT
//! compilers and math libraries read to choose what runs, as the profiled app
//! sees them (ncugate's own environment, then the workload's `env`). A
//! baseline records them with the ncu settings; a check whose values differ
//! says so in its headline and beside each failure, naming the variable.
//!
//! The list: `XLA_FLAGS` (XLA's autotune level and cache), `TORCHINDUCTOR_*`
//! (Inductor's max-autotune and caches), `TORCH_CUDNN_*`, `CUDNN_*`,
//! `TRITON_*` (Triton's cache and autotuning), `CUBLAS_*`, `CUBLASLT_*`
//! (cuBLAS workspace and heuristics), `NVIDIA_TF32_OVERRIDE` (TF32 math) and
//! `CUDA_MODULE_LOADING` (lazy loading). Not kept: `TF_*` (too many that pick
//! no kernel), `PYTORCH_CUDA_ALLOC_CONF` (memory, not kernels), the places
//! among them (a name ending in `_DIR`, `_HOME` or `_PATH`:
//! `TORCHINDUCTOR_CACHE_DIR`, `TRITON_CACHE_DIR`) and the paths in
//! `XLA_FLAGS` (kept as `--xla_gpu_per_fusion_autotune_cache_dir=…`): where
//! a cache lives picks no kernel, and a CI job's own temp folder would
//! otherwise say "environment changed" in every check. `[profile] kernel_env = ["MY_VAR"]`
//! adds names, places too. A value is shown only when it is no secret: a
//! name with TOKEN, KEY, SECRET or PASSWORD in it is kept as a digest, and
//! any value passes the password redaction of reports.

use std::collections::BTreeMap;

/// Variables kept by their exact name.
pub(crate) const NAMES: [&str; 3] = ["XLA_FLAGS", "NVIDIA_TF32_OVERRIDE", "CUDA_MODULE_LOADING"];

/// Variables kept by the start of their name.
pub(crate) const PREFIXES: [&str; 6] = [
    "TORCHINDUCTOR_",
    "TORCH_CUDNN_",
    "CUDNN_",
    "TRITON_",
    "CUBLAS_",
    "CUBLASLT_",
];

/// Words that make a variable's value a secret, never shown.
const SECRET_WORDS: [&str; 4] = ["TOKEN", "KEY", "SECRET", "PASSWORD"];

/// Ends of a variable's name that make its value a place (a cache, a dump
/// folder, a tool), not a choice.
const PLACE_ENDS: [&str; 3] = ["_DIR", "_HOME", "_PATH"];

/// Ends of an `XLA_FLAGS` flag's name whose value is a place.
const XLA_PLACE_ENDS: [&str; 5] = ["_dir", "_to", "_from", "_path", "_file"];

/// Whether `name`'s value is where something lives (`TRITON_CACHE_DIR`).
fn is_place(name: &str) -> bool {
    PLACE_ENDS.iter().any(|end| name.ends_with(end))
}

/// Whether `name` steers kernel choice (built in and not a place, or one of `extra`).
pub(crate) fn steers(name: &str, extra: &[String]) -> bool {
    extra.iter().any(|e| e == name)
        || ((NAMES.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p)))
            && !is_place(name))
}

/// `name`'s value without its places: for `XLA_FLAGS`, the value of each
/// flag that names one is taken out (`--xla_gpu_per_fusion_autotune_cache_dir=…`:
/// that the cache is used is kept, where it lives is not); any other value as it is.
fn without_places(name: &str, value: &str) -> String {
    if name != "XLA_FLAGS" {
        return value.to_string();
    }
    value
        .split_whitespace()
        .map(|flag| match flag.split_once('=') {
            Some((name, _)) if XLA_PLACE_ENDS.iter().any(|end| name.ends_with(end)) => {
                format!("{name}=…")
            }
            _ => flag.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The value as a baseline keeps it: a secret's as a digest, `XLA_FLAGS`
/// without its places.
fn kept(name: &str, value: &str) -> String {
    let upper = name.to_ascii_uppercase();
    if SECRET_WORDS.iter().any(|w| upper.contains(w)) {
        use sha2::{Digest, Sha256};
        let digest = crate::format::hex(&Sha256::digest(value.as_bytes()));
        return format!("(secret, sha256 {})", &digest[..12]);
    }
    crate::text::secret::redact(&without_places(name, value))
}

/// The variables that steer kernel choice as the app sees them: `own` (the
/// process environment), then `app` (the workload's `env`, which wins).
pub(crate) fn snapshot(
    own: impl IntoIterator<Item = (String, String)>,
    app: &[(String, String)],
    extra: &[String],
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (name, value) in own.into_iter().chain(app.iter().cloned()) {
        if steers(&name, extra) {
            let value = kept(&name, &value);
            out.insert(name, value);
        }
    }
    out
}

/// The process environment, where it is text.
pub(crate) fn own() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// What changed from `baseline` to `current`, one phrase per variable:
/// ``XLA_FLAGS `--xla_gpu_autotune_level=0` → (unset)``. Places are
/// compared only where both sides kept them (`[profile] kernel_env` names
/// them; a baseline recorded before places were left out has them on its
/// side alone), and `XLA_FLAGS` without its places on either side.
pub(crate) fn changes(
    baseline: &BTreeMap<String, String>,
    current: &BTreeMap<String, String>,
) -> Vec<String> {
    let get = |side: &BTreeMap<String, String>, n: &str| side.get(n).map(|v| without_places(n, v));
    let shown = |v: Option<String>| {
        v.map_or_else(
            || "(unset)".to_string(),
            |v| format!("`{}`", crate::text::escape::printable(v)),
        )
    };
    let names: std::collections::BTreeSet<&String> =
        baseline.keys().chain(current.keys()).collect();
    names
        .into_iter()
        .filter(|n| !is_place(n) || (baseline.contains_key(*n) && current.contains_key(*n)))
        .filter(|n| get(baseline, n) != get(current, n))
        .map(|n| {
            format!(
                "{n} {} → {}",
                shown(get(baseline, n)),
                shown(get(current, n))
            )
        })
        .collect()
}

/// The driver and its CUDA version as NVML reports them (`driver`,
/// `cuda`); empty where NVML cannot be loaded (no driver, a CPU-only runner).
pub(crate) fn toolchain() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Ok(nvml) = nvml_wrapper::Nvml::init() else {
        return out;
    };
    if let Ok(driver) = nvml.sys_driver_version() {
        out.insert("driver".to_string(), driver);
    }
    if let Ok(v) = nvml.sys_cuda_driver_version() {
        out.insert(
            "cuda".to_string(),
            format!("{}.{}", v / 1000, (v % 1000) / 10),
        );
    }
    out
}

/// What changed between two toolchains, for the parts both know:
/// ``driver `580.159.04` → `590.10` ``.
pub(crate) fn toolchain_changes(
    baseline: &BTreeMap<String, String>,
    current: &BTreeMap<String, String>,
) -> Vec<String> {
    baseline
        .iter()
        .filter_map(|(part, was)| {
            let now = current.get(part)?;
            (now != was).then(|| {
                let show = |v: &String| crate::text::escape::printable(v.clone());
                format!("{part} `{}` → `{}`", show(was), show(now))
            })
        })
        .collect()
}

/// The `NAME VERSION` lines `config.toolchain_command` prints (its first
/// 16; a name of letters, digits, `_`, `.`, `-`), run with the app's
/// environment and folder within a minute; none when it is unset or fails.
pub(crate) fn versions(
    config: &super::RunnerConfig,
    processes: &dyn super::process::ProcessRunner,
) -> Vec<(String, String)> {
    let Some((program, args)) = config.toolchain_command.split_first() else {
        return Vec::new();
    };
    let mut spec = super::process::CommandSpec::new(program.clone(), args.iter().cloned());
    spec.env = config.env.clone();
    spec.workdir = Some(config.workdir.clone());
    spec.timeout = Some(std::time::Duration::from_secs(60));
    let done = processes.run(&spec, &mut |_| {});
    if !done.exit.success() {
        return Vec::new();
    }
    parse_versions(&done.lines)
}

/// `NAME VERSION` lines (a version starts with a digit): the first 16 that are one.
fn parse_versions(lines: &[String]) -> Vec<(String, String)> {
    lines
        .iter()
        .filter_map(|line| {
            let (name, version) = line.trim().split_once(char::is_whitespace)?;
            let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
            let version = version.trim();
            (!name.is_empty() && name.len() <= 64 && name.chars().all(plain))
                .then_some(())
                .filter(|_| {
                    version.starts_with(|c: char| c.is_ascii_digit()) && version.len() <= 100
                })
                .map(|_| {
                    (
                        name.to_string(),
                        crate::text::escape::printable(version.to_string()),
                    )
                })
        })
        .take(16)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{changes, parse_versions, snapshot, toolchain_changes};
    use std::collections::BTreeMap;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn only_what_steers_kernels_is_kept_and_secrets_never_show() {
        let own = env(&[
            ("XLA_FLAGS", "--xla_gpu_autotune_level=0"),
            ("HOME", "/root"),
            ("TRITON_CACHE_DIR", "/tmp/t"),
            ("TRITON_API_TOKEN", "hunter2"),
            ("MY_VAR", "1"),
        ]);
        let app = env(&[
            ("TRITON_CACHE_DIR", "/cache"),
            ("XLA_FLAGS", "--xla_gpu_autotune_level=2"),
        ]);
        let kept = snapshot(own.clone(), &app, &["MY_VAR".to_string()]);
        let names: Vec<&str> = kept.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            ["MY_VAR", "TRITON_API_TOKEN", "XLA_FLAGS"],
            "a cache's place is not kept"
        );
        assert_eq!(
            kept["XLA_FLAGS"], "--xla_gpu_autotune_level=2",
            "the workload's env wins"
        );
        let named = snapshot(own, &app, &["TRITON_CACHE_DIR".to_string()]);
        assert_eq!(
            named["TRITON_CACHE_DIR"], "/cache",
            "unless kernel_env names it"
        );
        assert!(kept["TRITON_API_TOKEN"].starts_with("(secret, sha256 "));
        assert!(!kept.values().any(|v| v.contains("hunter2")));
    }

    #[test]
    fn a_change_names_the_variable_and_both_values() {
        let baseline = snapshot(
            env(&[("XLA_FLAGS", "--xla_gpu_autotune_level=0")]),
            &[],
            &[],
        );
        let current = snapshot(env(&[("CUBLAS_WORKSPACE_CONFIG", ":4096:8")]), &[], &[]);
        assert_eq!(
            changes(&baseline, &current),
            [
                "CUBLAS_WORKSPACE_CONFIG (unset) → `:4096:8`",
                "XLA_FLAGS `--xla_gpu_autotune_level=0` → (unset)"
            ]
        );
        assert!(changes(&baseline, &baseline).is_empty());
    }

    /// A CI job's own temp folder for the caches of the recipes (Inductor's
    /// and Triton's, XLA's per-fusion autotune cache) is no change; using the
    /// cache or not, or another autotune level, is.
    #[test]
    fn where_a_cache_lives_is_no_change_but_using_one_is() {
        let job = |dir: &str| {
            snapshot(
                env(&[
                    ("TORCHINDUCTOR_CACHE_DIR", &format!("{dir}/inductor")),
                    ("TRITON_HOME", dir),
                    (
                        "XLA_FLAGS",
                        &format!(
                            "--xla_gpu_autotune_level=4  --xla_gpu_per_fusion_autotune_cache_dir={dir}/xla"
                        ),
                    ),
                ]),
                &[],
                &[],
            )
        };
        let (one, two) = (job("/tmp/job-1"), job("/tmp/job-2"));
        assert_eq!(
            one["XLA_FLAGS"],
            "--xla_gpu_autotune_level=4 --xla_gpu_per_fusion_autotune_cache_dir=…"
        );
        assert!(!one.contains_key("TORCHINDUCTOR_CACHE_DIR") && !one.contains_key("TRITON_HOME"));
        assert!(changes(&one, &two).is_empty());
        let no_cache = snapshot(
            env(&[("XLA_FLAGS", "--xla_gpu_autotune_level=4")]),
            &[],
            &[],
        );
        assert_eq!(
            changes(&one, &no_cache),
            [
                "XLA_FLAGS `--xla_gpu_autotune_level=4 --xla_gpu_per_fusion_autotune_cache_dir=…` → `--xla_gpu_autotune_level=4`"
            ]
        );
        // A baseline recorded when places were kept: its paths alone are no change.
        let mut old = BTreeMap::new();
        old.insert(
            "TRITON_CACHE_DIR".to_string(),
            "/tmp/job-0/triton".to_string(),
        );
        old.insert(
            "XLA_FLAGS".to_string(),
            "--xla_gpu_autotune_level=4 --xla_gpu_per_fusion_autotune_cache_dir=/tmp/job-0/xla"
                .to_string(),
        );
        assert!(changes(&old, &two).is_empty());
        // Named in kernel_env on both sides, a place is compared.
        let mut named = BTreeMap::new();
        named.insert(
            "TRITON_CACHE_DIR".to_string(),
            "/tmp/job-9/triton".to_string(),
        );
        assert_eq!(
            changes(&old, &named).first().map(String::as_str),
            Some("TRITON_CACHE_DIR `/tmp/job-0/triton` → `/tmp/job-9/triton`")
        );
    }

    #[test]
    fn a_toolchain_change_is_said_only_for_what_both_sides_know() {
        let of = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let baseline = of(&[("driver", "580.159.04"), ("cuda", "13.0")]);
        let current = of(&[("driver", "590.10")]);
        assert_eq!(
            toolchain_changes(&baseline, &current),
            ["driver `580.159.04` → `590.10`"]
        );
        assert!(toolchain_changes(&baseline, &of(&[])).is_empty());
    }

    #[test]
    fn versions_are_name_and_version_lines_and_nothing_else() {
        let lines: Vec<String> = [
            "torch 2.5.1+cu124",
            "triton 3.1.0",
            "Traceback (most recent call last):",
            "",
            "jax",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            parse_versions(&lines),
            [
                ("torch".to_string(), "2.5.1+cu124".to_string()),
                ("triton".to_string(), "3.1.0".to_string())
            ]
        );
    }
}
