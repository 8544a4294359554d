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
//! no kernel) and `PYTORCH_CUDA_ALLOC_CONF` (memory, not kernels). `[profile]
//! kernel_env = ["MY_VAR"]` adds names. A value is shown only when it is no
//! secret: a name with TOKEN, KEY, SECRET or PASSWORD in it is kept as a
//! digest, and any value passes the password redaction of reports.

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

/// Whether `name` steers kernel choice (built in, or one of `extra`).
pub(crate) fn steers(name: &str, extra: &[String]) -> bool {
    NAMES.contains(&name)
        || PREFIXES.iter().any(|p| name.starts_with(p))
        || extra.iter().any(|e| e == name)
}

/// The value as a baseline keeps it: a secret's as a digest.
fn kept(name: &str, value: &str) -> String {
    let upper = name.to_ascii_uppercase();
    if SECRET_WORDS.iter().any(|w| upper.contains(w)) {
        use sha2::{Digest, Sha256};
        let digest = crate::format::hex(&Sha256::digest(value.as_bytes()));
        return format!("(secret, sha256 {})", &digest[..12]);
    }
    crate::text::secret::redact(value)
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
/// ``XLA_FLAGS `--xla_gpu_autotune_level=0` → (unset)``.
pub(crate) fn changes(
    baseline: &BTreeMap<String, String>,
    current: &BTreeMap<String, String>,
) -> Vec<String> {
    let shown = |v: Option<&String>| {
        v.map_or_else(
            || "(unset)".to_string(),
            |v| format!("`{}`", crate::text::escape::printable(v.clone())),
        )
    };
    let names: std::collections::BTreeSet<&String> =
        baseline.keys().chain(current.keys()).collect();
    names
        .into_iter()
        .filter(|n| baseline.get(*n) != current.get(*n))
        .map(|n| format!("{n} {} → {}", shown(baseline.get(n)), shown(current.get(n))))
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
        let app = env(&[("TRITON_CACHE_DIR", "/cache")]);
        let kept = snapshot(own, &app, &["MY_VAR".to_string()]);
        let names: Vec<&str> = kept.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "MY_VAR",
                "TRITON_API_TOKEN",
                "TRITON_CACHE_DIR",
                "XLA_FLAGS"
            ]
        );
        assert_eq!(
            kept["TRITON_CACHE_DIR"], "/cache",
            "the workload's env wins"
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
