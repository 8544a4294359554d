//! The ncu command lines ncugate composes — never through a shell.

use super::RunnerConfig;
use std::path::Path;

/// `ncu … APP ARGS` for one profiled run exporting to `export` (without `.ncu-rep`).
///
/// `--metrics` always lists every gated metric: `--set full` lacks some
/// (`sm__inst_executed.sum`), so full mode adds the set, never replaces the list.
pub fn profile_args(config: &RunnerConfig, metrics: &[String], export: &Path) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    let mut push = |a: &str, b: &str| {
        args.push(a.to_string());
        args.push(b.to_string());
    };
    let mut all: Vec<String> = metrics.to_vec();
    for m in &config.extra_metrics {
        if !all.contains(m) {
            all.push(m.clone());
        }
    }
    if config.mode == super::Mode::Full {
        push("--set", "full");
    }
    push("--metrics", &all.join(","));
    push("--target-processes", "all");
    push("--graph-profiling", config.graph_profiling.as_str());
    push("--clock-control", &config.clock_control);
    push("--cache-control", &config.cache_control);
    push("--replay-mode", &config.replay_mode);
    push("--config-file", "off");
    if let Some(name) = &config.kernel_name {
        push("--kernel-name", name);
    }
    if let Some(n) = config.launch_skip {
        push("--launch-skip", &n.to_string());
    }
    if let Some(n) = config.launch_count {
        push("--launch-count", &n.to_string());
    }
    push("-f", "--export");
    args.push(export.to_string_lossy().into_owned());
    args.extend(config.app.iter().cloned());
    args
}

/// `ncu --import REPORT --csv --page PAGE --print-units base`.
pub fn import_args(report: &Path, page: &str) -> Vec<String> {
    [
        "--import",
        &report.to_string_lossy(),
        "--csv",
        "--page",
        page,
        "--print-units",
        "base",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// One `==PROF== Profiling "name" - N: 0%....100% - P passes` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profiled {
    pub kernel: String,
    pub index: u64,
    pub passes: Option<u64>,
}

/// Parses ncu's per-kernel progress line.
pub fn parse_progress(line: &str) -> Option<Profiled> {
    let rest = line.strip_prefix("==PROF== Profiling \"")?;
    let (kernel, rest) = rest.split_once("\" - ")?;
    let (index, rest) = rest.split_once(':')?;
    let index = index.trim().parse().ok()?;
    let passes = rest
        .rsplit_once(" - ")
        .and_then(|(_, p)| {
            p.trim()
                .strip_suffix("passes")
                .or_else(|| p.trim().strip_suffix("pass"))
        })
        .and_then(|p| p.trim().parse().ok());
    Some(Profiled {
        kernel: kernel.to_string(),
        index,
        passes,
    })
}

/// True for lines ncu prints itself (the rest is the app's output).
pub fn is_ncu_line(line: &str) -> bool {
    line.starts_with("==PROF==")
        || line.starts_with("==WARNING==")
        || line.starts_with("==ERROR==")
        || line.starts_with("==INFO==")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_from_real_logs() {
        let log = include_str!("../../fixtures/h200/graph_app.base.fast.run1.ncu.log");
        let seen: Vec<Profiled> = log.lines().filter_map(parse_progress).collect();
        assert_eq!(seen.len(), 9);
        assert_eq!(
            seen[0],
            Profiled {
                kernel: "produce(float *, long)".into(),
                index: 0,
                passes: Some(8)
            }
        );
        assert_eq!(seen[1].kernel, "scale");
        assert_eq!(seen[8].index, 8);
        assert!(parse_progress("variant=base iters=3").is_none());
    }
}
