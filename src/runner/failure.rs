//! Why a profiled run failed, from ncu's exit status and what it printed:
//! [`NcuFailure`] (beside the gate's other expected errors) names every known
//! class with its message and its fix, and [`classify`] reads a finished run
//! into one of them. Every class is tested
//! against real ncu output recorded on the H200 (fixtures/h200,
//! fixtures/ncu-reference/logs).

use super::process::{Exit, last_lines};
use crate::error::NcuFailure;

/// Metric names of GH100 (`ncu --query-metrics --chip gh100`, ncu 2025.3.1), for suggestions.
const GH100_METRICS: &str = include_str!("gh100-metrics.txt");

/// Classifies a finished `ncu` profiling run: `lines` are ncu's own messages,
/// `app_tail` the last lines the app printed. `Ok` when a report can be
/// imported. The order of the checks matters: an app that exits non-zero
/// makes ncu say so too, so ncu's own complaints (counters, metrics, mode,
/// a missing app) are read first.
pub(crate) fn classify(
    ncu: &str,
    exit: &Exit,
    lines: &[String],
    report_exists: bool,
    app_tail: &str,
) -> Result<(), NcuFailure> {
    let log = lines.join("\n");
    match exit {
        Exit::NotFound => {
            return Err(NcuFailure::NotFound {
                ncu: ncu.to_string(),
            });
        }
        Exit::SpawnFailed(e) => {
            return Err(NcuFailure::SpawnFailed {
                ncu: ncu.to_string(),
                reason: e.clone(),
            });
        }
        Exit::TimedOut(d) => {
            return Err(NcuFailure::TimedOut {
                seconds: d.as_secs(),
                app_tail: app_tail.to_string(),
            });
        }
        Exit::HungAfterCrash(d) => {
            return Err(NcuFailure::HungAfterCrash {
                seconds: d.as_secs(),
                app_tail: app_tail.to_string(),
            });
        }
        _ => {}
    }
    if log.contains("ERR_NVGPUCTRPERM") {
        return Err(NcuFailure::CounterPermission);
    }
    if log.contains("Profiling failed because a driver resource was unavailable") {
        return Err(NcuFailure::ProfilerBusy);
    }
    if let Some(metric) = unknown_metric(&log) {
        let suggestions = suggestions(&metric);
        return Err(NcuFailure::UnknownMetric {
            metric,
            suggestions,
        });
    }
    let unsupported: Vec<String> = log
        .lines()
        .filter_map(|l| l.strip_prefix("==ERROR== Metric "))
        .filter_map(|l| l.split_once(" is not supported"))
        .map(|(m, _)| m.to_string())
        .collect();
    if !unsupported.is_empty() {
        return Err(NcuFailure::UnsupportedInGraphMode {
            metrics: unsupported,
        });
    }
    if let Some(line) = log
        .lines()
        .find(|l| l.contains("does not exist or is not an executable"))
    {
        return Err(NcuFailure::AppMissing {
            detail: line.trim_start_matches("==ERROR== ").to_string(),
        });
    }
    if let Some(code) = app_error_code(&log) {
        return Err(NcuFailure::AppExit {
            code,
            app_tail: app_tail.to_string(),
        });
    }
    if log.contains("No kernels were profiled") {
        let launched = log
            .lines()
            .skip_while(|l| !l.starts_with("Available Kernels"))
            .skip(1)
            .take_while(|l| !l.starts_with("=="))
            .map(|l| l.trim().to_string())
            .collect();
        return Err(NcuFailure::NoKernels { launched });
    }
    match exit {
        Exit::Code(0) if report_exists => Ok(()),
        Exit::Code(0) => Err(NcuFailure::NoReport),
        other => Err(NcuFailure::Other {
            exit: other.to_string(),
            log_tail: last_lines(lines, 3, "\n"),
        }),
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
pub(crate) fn suggestions(name: &str) -> Vec<String> {
    let (base, suffix) = match name.find('.') {
        Some(i) => (&name[..i], &name[i..]),
        None => (name, ""),
    };
    crate::suggest::ranked(base, GH100_METRICS.lines())
        .into_iter()
        .take(3)
        .map(|m| format!("{m}{suffix}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::time::Duration;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    fn read(path: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// A full-mode run: ncu's messages and the app's output share the pipes.
    fn shared(path: &str, exit: Exit, report: bool) -> Result<(), NcuFailure> {
        classify("ncu", &exit, &lines(&read(path)), report, "")
    }

    /// A one-pass run recorded as `fixtures/h200/one-pass/fail-NAME.*`:
    /// ncu's log file, plus ncu's own lines from the pipes; the exit from `.exit`.
    fn one_pass(name: &str, report: bool) -> Result<(), NcuFailure> {
        let base = format!("fixtures/h200/one-pass/fail-{name}");
        let code: i32 = read(&format!("{base}.exit"))
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .expect("`exit N in S s`");
        let mut messages = lines(&read(&format!("{base}.ncu.log")));
        let mut app = Vec::new();
        for pipe in ["stdout", "stderr"] {
            for l in lines(&read(&format!("{base}.{pipe}"))) {
                if crate::runner::ncu::is_ncu_line(&l) {
                    messages.push(l);
                } else {
                    app.push(l);
                }
            }
        }
        let app_tail = last_lines(&app, 5, "\n");
        classify("ncu", &Exit::Code(code), &messages, report, &app_tail)
    }

    /// A recorded run, what classify made of it, and what it must have made.
    type Case = (
        &'static str,
        Result<(), NcuFailure>,
        fn(&NcuFailure) -> bool,
    );

    #[test]
    fn every_recorded_failure_has_its_class() {
        use NcuFailure as F;
        let h200 =
            |name: &str, exit, report| shared(&format!("fixtures/h200/{name}"), exit, report);
        let reference =
            |name: &str, exit| shared(&format!("fixtures/ncu-reference/logs/{name}"), exit, false);
        let cases: Vec<Case> = vec![
            (
                "h200 unknown metric",
                h200(
                    "graph_app.base.fail-unknown-metric.ncu.log",
                    Exit::Code(9),
                    false,
                ),
                |f| matches!(f, F::UnknownMetric { metric, .. } if metric == "sys__memory_throughput"),
            ),
            (
                "h200 bad args",
                h200(
                    "graph_app.base.fail-app-bad-args.ncu.log",
                    Exit::Code(1),
                    false,
                ),
                |f| matches!(f, F::AppExit { code: 1, .. }),
            ),
            (
                "h200 exit 3 after kernels",
                h200(
                    "graph_app.base.fail-app-exit3-after-kernels.ncu.log",
                    Exit::Code(3),
                    true,
                ),
                |f| matches!(f, F::AppExit { code: 3, .. }),
            ),
            (
                "h200 unknown variant",
                h200(
                    "graph_app.bogus.fail-app-unknown-variant.ncu.log",
                    Exit::Code(1),
                    false,
                ),
                |f| matches!(f, F::AppExit { code: 1, .. }),
            ),
            (
                "h200 no kernels",
                h200(
                    "graph_app.base.fail-no-kernels.ncu.log",
                    Exit::Code(0),
                    false,
                ),
                |f| matches!(f, F::NoKernels { launched } if launched.join(" ") == "1. finish 2. produce 3. scale"),
            ),
            (
                "h200 graph mode",
                h200(
                    "graph_app.base.graph-rejected.ncu.log",
                    Exit::Code(1),
                    false,
                ),
                |f| matches!(f, F::UnsupportedInGraphMode { metrics } if metrics.contains(&"sm__sass_thread_inst_executed_op_dfma_pred_on.sum".to_string())),
            ),
            (
                "h200 no report",
                h200("graph_app.base.fast.run1.ncu.log", Exit::Code(0), false),
                |f| matches!(f, F::NoReport),
            ),
            (
                "reference app missing",
                reference("ncu.app-missing.stdout.log", Exit::Code(1)),
                |f| matches!(f, F::AppMissing { detail } if detail.starts_with("'/tmp/nonexistent_app' does not exist")),
            ),
            (
                "reference app exits 1",
                reference("ncu.app-exits-1.stdout.log", Exit::Code(1)),
                |f| matches!(f, F::AppExit { code: 1, .. }),
            ),
            (
                "reference no kernels",
                reference("ncu.no-kernels.stdout.log", Exit::Code(0)),
                |f| matches!(f, F::NoKernels { .. }),
            ),
            (
                "reference unknown metric",
                reference("ncu.unknown-metric.stdout.log", Exit::Code(9)),
                |f| matches!(f, F::UnknownMetric { metric, .. } if metric == "sys__memory_throughput"),
            ),
            (
                "reported ERR_NVGPUCTRPERM",
                shared(
                    "fixtures/reported/ncu.err-nvgpuctrperm.log",
                    Exit::Code(1),
                    false,
                ),
                |f| matches!(f, F::CounterPermission),
            ),
            (
                "reported DCGM holds the profiling lock",
                shared(
                    "fixtures/reported/ncu.driver-resource-unavailable.log",
                    Exit::Code(1),
                    false,
                ),
                |f| matches!(f, F::ProfilerBusy),
            ),
            (
                "one-pass app missing",
                one_pass("app-missing", false),
                |f| matches!(f, F::AppMissing { .. }),
            ),
            (
                "one-pass bad args",
                one_pass("app-bad-args", false),
                |f| matches!(f, F::AppExit { code: 1, app_tail } if app_tail.contains("for testing how a gate handles a failing app")),
            ),
            ("one-pass exit 3", one_pass("exit3", true), |f| {
                matches!(f, F::AppExit { code: 3, .. })
            }),
            (
                "one-pass unknown metric",
                one_pass("unknown-metric", false),
                |f| matches!(f, F::UnknownMetric { metric, .. } if metric == "sys__memory_throughput"),
            ),
            (
                "one-pass no kernels",
                one_pass("no-kernels", false),
                |f| matches!(f, F::NoKernels { launched } if !launched.is_empty()),
            ),
            (
                "one-pass graph mode",
                one_pass("graph-rejected", false),
                |f| matches!(f, F::UnsupportedInGraphMode { .. }),
            ),
            (
                "not installed",
                classify("/opt/ncu", &Exit::NotFound, &[], false, ""),
                |f| matches!(f, F::NotFound { ncu } if ncu == "/opt/ncu"),
            ),
            (
                "timeout",
                classify(
                    "ncu",
                    &Exit::TimedOut(Duration::from_secs(600)),
                    &[],
                    false,
                    "step 9",
                ),
                |f| matches!(f, F::TimedOut { seconds: 600, app_tail } if app_tail == "step 9"),
            ),
            (
                "killed",
                classify(
                    "ncu",
                    &Exit::Signal(9),
                    &lines("==PROF== Connected\n\nlast words"),
                    false,
                    "",
                ),
                |f| matches!(f, F::Other { exit, log_tail } if exit == "killed by signal 9" && log_tail == "==PROF== Connected\nlast words"),
            ),
        ];
        for (name, result, expected) in cases {
            let failure = result.expect_err(name);
            assert!(expected(&failure), "{name}: {failure:?}");
            assert!(!failure.hint().is_empty(), "{name}");
        }
        assert_eq!(
            one_pass("exit3", true).expect_err("exit 3").to_string(),
            "the app exited with code 3 under ncu; its last output: variant=base iters=1 n=65536 checksum=134331.465273 execs_created=1 execs_destroyed=1 verify=ok"
        );
    }

    #[test]
    fn a_clean_run_with_a_report_is_no_failure() {
        let log = read("fixtures/h200/graph_app.base.fast.run1.ncu.log");
        assert_eq!(
            classify("ncu", &Exit::Code(0), &lines(&log), true, ""),
            Ok(())
        );
    }

    #[test]
    fn typos_get_real_names() {
        let near = suggestions("sm__inst_exectued.sum");
        assert_eq!(
            near.first().map(String::as_str),
            Some("sm__inst_executed.sum"),
            "{near:?}"
        );
        let hint = classify(
            "ncu",
            &Exit::Code(9),
            &lines("==ERROR== Failed to find metric sm__inst_exectued.sum"),
            false,
            "",
        )
        .expect_err("unknown")
        .hint();
        assert!(
            hint.starts_with("did you mean sm__inst_executed.sum"),
            "{hint}"
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
