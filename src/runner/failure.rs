//! Why a profiled run failed, from ncu's exit status and what it printed —
//! each class with the reason and the fix. Every class is tested against
//! real ncu output recorded on the H200 (fixtures/h200, fixtures/ncu-reference/logs).

use super::process::Exit;
use crate::error::Error;

/// Metric names of GH100 (`ncu --query-metrics --chip gh100`, ncu 2025.3.1), for suggestions.
const GH100_METRICS: &str = include_str!("gh100-metrics.txt");

/// Classifies a finished `ncu` profiling run. `Ok` when a report can be imported.
pub fn classify(
    ncu: &str,
    exit: &Exit,
    lines: &[String],
    report_exists: bool,
    app_tail: &str,
) -> Result<(), Error> {
    let log = lines.join("\n");
    let tool = |message: String, hint: &str| Error::Tool {
        message,
        hint: hint.to_string(),
    };
    match exit {
        Exit::NotFound => {
            return Err(tool(
                format!("`{ncu}` not found: Nsight Compute is not installed or not on PATH"),
                "install Nsight Compute (it ships with the CUDA toolkit), or set [profile] ncu / NCUGATE_NCU to its path; `ncugate doctor` checks the setup",
            ));
        }
        Exit::SpawnFailed(e) => {
            return Err(tool(
                format!("`{ncu}` could not be started: {e}"),
                "check that ncu is executable; `ncugate doctor` checks the setup",
            ));
        }
        Exit::TimedOut(d) => {
            return Err(tool(
                format!(
                    "the profiled run timed out after {}s; the app and ncu were killed (process group){}",
                    d.as_secs(),
                    tail_suffix(app_tail)
                ),
                "raise [app] timeout / --timeout, profile fewer launches (launch_count, kernel_name), or use mode = \"fast\"",
            ));
        }
        _ => {}
    }
    if log.contains("ERR_NVGPUCTRPERM") {
        return Err(tool(
            "ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM)".into(),
            "run as root, or allow all users: `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d/ then reload the driver (see https://developer.nvidia.com/ERR_NVGPUCTRPERM); in a container add --cap-add=SYS_ADMIN",
        ));
    }
    if let Some(metric) = unknown_metric(&log) {
        let hint = if metric.starts_with("sys__memory_throughput") {
            "`sys__memory_throughput` does not exist: \"Memory Throughput\" is gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed, DRAM is dram__throughput.avg.pct_of_peak_sustained_elapsed".to_string()
        } else {
            let near = suggestions(&metric);
            if near.is_empty() {
                "check the name with `ncu --query-metrics`".to_string()
            } else {
                format!(
                    "did you mean {}? (`ncu --query-metrics` lists them all)",
                    near.join(", ")
                )
            }
        };
        return Err(Error::Tool {
            message: format!("ncu does not know the metric `{metric}`"),
            hint,
        });
    }
    let unsupported: Vec<&str> = log
        .lines()
        .filter_map(|l| l.strip_prefix("==ERROR== Metric "))
        .filter_map(|l| l.split_once(" is not supported"))
        .map(|(m, _)| m)
        .collect();
    if !unsupported.is_empty() {
        return Err(tool(
            format!(
                "ncu cannot collect {} in this profiling mode",
                unsupported.join(", ")
            ),
            "graph-profiling mode (range replay) rejects SASS-level metrics: use graph_profiling = \"node\", or drop these metrics from the thresholds",
        ));
    }
    if let Some(line) = log
        .lines()
        .find(|l| l.contains("does not exist or is not an executable"))
    {
        return Err(tool(
            format!(
                "the app could not be started: {}",
                line.trim_start_matches("==ERROR== ")
            ),
            "check [app] command (the first element is the program; relative paths are from [app] workdir) and that `make -C kernels` / [build] built it",
        ));
    }
    if let Some(code) = app_error_code(&log) {
        return Err(tool(
            format!(
                "the app exited with code {code} under ncu{}",
                tail_suffix(app_tail)
            ),
            "run the app without ncu to see why; its full output is in app.log in the work dir",
        ));
    }
    if log.contains("No kernels were profiled") {
        let available: Vec<&str> = log
            .lines()
            .skip_while(|l| !l.starts_with("Available Kernels"))
            .skip(1)
            .take_while(|l| !l.starts_with("=="))
            .map(str::trim)
            .collect();
        let listed = if available.is_empty() {
            String::new()
        } else {
            format!(" (the app launched: {})", available.join(" "))
        };
        return Err(tool(
            format!("ncu profiled no kernels, although it exited 0{listed}"),
            "check [profile] kernel_name / launch_skip / launch_count, and that the app launches kernels on the GPU",
        ));
    }
    match exit {
        Exit::Code(0) if report_exists => Ok(()),
        Exit::Code(0) => Err(tool(
            "ncu exited 0 but wrote no report".into(),
            "look at ncu.log in the work dir; check that the work dir is writable",
        )),
        other => Err(tool(
            format!("ncu failed ({other}){}", tail_suffix(&last_lines(&log, 3))),
            "look at ncu.log in the work dir",
        )),
    }
}

/// The metric of `==ERROR== Failed to find metric regex:^NAME\.(…)$` or `… metric NAME`.
fn unknown_metric(log: &str) -> Option<String> {
    let line = log.lines().find(|l| l.contains("Failed to find metric"))?;
    let rest = line.split("Failed to find metric").nth(1)?.trim();
    let rest = rest.strip_prefix("regex:").unwrap_or(rest);
    let rest = rest.trim_start_matches('^');
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
        .collect();
    let name = name.trim_end_matches('\\').trim_end_matches('.');
    Some(name.replace("\\.", "."))
}

/// `==ERROR== The application returned an error code (N).`
fn app_error_code(log: &str) -> Option<i32> {
    let line = log
        .lines()
        .find(|l| l.contains("The application returned an error code"))?;
    line.split('(')
        .nth(1)?
        .split(')')
        .next()?
        .trim()
        .parse()
        .ok()
}

/// The three known metric names closest to `name` (by base name, then roll-up kept).
pub fn suggestions(name: &str) -> Vec<String> {
    let (base, suffix) = match name.find('.') {
        Some(i) => (&name[..i], &name[i..]),
        None => (name, ""),
    };
    let mut scored: Vec<(f64, &str)> = GH100_METRICS
        .lines()
        .map(|m| (strsim::jaro_winkler(base, m), m))
        .filter(|(s, _)| *s > 0.8)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored
        .into_iter()
        .take(3)
        .map(|(_, m)| format!("{m}{suffix}"))
        .collect()
}

fn tail_suffix(tail: &str) -> String {
    if tail.trim().is_empty() {
        String::new()
    } else {
        format!("; its last output: {}", tail.trim().replace('\n', " | "))
    }
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn typos_get_real_names() {
        let near = suggestions("sm__inst_exectued.sum");
        assert_eq!(
            near.first().map(String::as_str),
            Some("sm__inst_executed.sum"),
            "{near:?}"
        );
    }

    #[test]
    fn the_unknown_metric_regex_is_read_back_to_a_name() {
        let log = include_str!("../../fixtures/h200/graph_app.base.fail-unknown-metric.ncu.log");
        assert_eq!(
            unknown_metric(log).as_deref(),
            Some("sys__memory_throughput")
        );
        let err = classify("ncu", &Exit::Code(9), &lines(log), false, "").unwrap_err();
        assert!(
            err.hint()
                .contains("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")
        );
    }
}
