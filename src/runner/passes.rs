//! What profiling costs: ncu's replay passes per kernel launch. Each pass
//! reruns every profiled kernel, so passes multiply the time a gate takes.
//! The count comes from the raw page (`profiler__replayer_passes`: the number
//! ncu's progress lines end with, which it does not print in CSV mode), so it
//! is known for every export; a table measured on an H200 names the metrics
//! that cost extra passes when a thresholds file takes more than one.

use crate::model::{MetricAcc, Run};
use serde::Serialize;

/// Passes of each metric collected alone, measured on an H200 (see the file's header).
const MEASURED: &str = include_str!("passes-h200.tsv");

/// The fewest and the most replay passes of a launch in one run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub(crate) struct Passes {
    pub(crate) min: u64,
    pub(crate) max: u64,
}

impl Passes {
    /// From the per-launch accumulator; `None` when no launch had the column.
    pub(crate) fn of(acc: &MetricAcc) -> Option<Passes> {
        (acc.present > 0).then(|| Passes {
            min: acc.min.round() as u64,
            max: acc.max.round() as u64,
        })
    }
}

impl std::fmt::Display for Passes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.min, self.max) {
            (1, 1) => f.write_str("1 pass per kernel"),
            (a, b) if a == b => write!(f, "{a} passes per kernel"),
            (a, b) => write!(f, "{a}–{b} passes per kernel"),
        }
    }
}

/// What profiling one input cost.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub(crate) struct Profiling {
    pub(crate) input: String,
    pub(crate) launches: u64,
    /// ncu's replay passes per kernel launch; `None` when the export lacks `profiler__replayer_passes`.
    pub(crate) passes_per_kernel: Option<Passes>,
    /// Wall seconds of the profiled run (ncu with the app), when ncugate ran it.
    pub(crate) seconds: Option<f64>,
}

impl Profiling {
    pub(crate) fn of(run: &Run, seconds: Option<f64>) -> Profiling {
        Profiling {
            input: run.source.display().to_string(),
            launches: run.total.launches,
            passes_per_kernel: Passes::of(&run.total.passes),
            seconds,
        }
    }
}

impl std::fmt::Display for Profiling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.passes_per_kernel {
            Some(p) => write!(f, "{p}, {} kernel launches", self.launches)?,
            None => write!(
                f,
                "{} kernel launches (passes unknown: the export has no profiler__replayer_passes)",
                self.launches
            )?,
        }
        if let Some(s) = self.seconds {
            write!(f, ", profiled in {s:.1} s")?;
        }
        Ok(())
    }
}

/// Passes per kernel of `metric` collected alone on an H200, when measured.
pub(crate) fn measured(metric: &str) -> Option<u64> {
    MEASURED
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .find(|(m, _)| *m == metric)
        .and_then(|(_, p)| p.trim().parse().ok())
}

/// A note for a run that took more than one pass per kernel: which of the
/// collected metrics are responsible and what they cost. `builtin` are the
/// built-in rules' metrics (one pass together).
pub(crate) fn note(
    collected: &[String],
    builtin: &[String],
    passes: Passes,
    seconds: Option<f64>,
) -> Option<String> {
    if passes.max <= 1 {
        return None;
    }
    let took = match seconds {
        Some(s) => format!(" (this run: {s:.1} s)"),
        None => String::new(),
    };
    let mut costly = Vec::new();
    let mut unmeasured = Vec::new();
    for m in collected {
        match measured(m) {
            Some(p) if p > 1 => costly.push(format!("{m} ({p} passes)")),
            Some(_) => {}
            None => unmeasured.push(m.as_str()),
        }
    }
    let beyond: Vec<&str> = collected
        .iter()
        .filter(|m| !builtin.contains(m))
        .map(String::as_str)
        .collect();
    let mut text = format!(
        "ncu replayed every kernel {} times ({passes}; the built-in rules' metrics take 1): each pass reruns the kernel, so profiling costs about that many times more{took}.",
        passes.max
    );
    if !costly.is_empty() {
        text.push_str(&format!(
            " Responsible, measured alone on an H200: {}.",
            costly.join(", ")
        ));
    } else if !beyond.is_empty() {
        text.push_str(&format!(
            " Beyond the built-in set: {}; none takes more than 1 pass alone on an H200, so their combination does.",
            beyond.join(", ")
        ));
    }
    if !unmeasured.is_empty() {
        text.push_str(&format!(" Not measured: {}.", unmeasured.join(", ")));
    }
    text.push_str(
        " Gate cheaper metrics (thresholds/default.toml lists the costs) or accept the cost.",
    );
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table agrees with the recorded logs: each `one.METRIC.log` ends its
    /// progress lines with the passes the table gives.
    #[test]
    fn the_table_is_what_the_recorded_logs_say() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/h200/passes");
        let mut checked = 0;
        for line in MEASURED.lines().filter(|l| !l.starts_with('#')) {
            let (metric, passes) = line.split_once('\t').expect("metric<TAB>passes");
            let log = std::fs::read_to_string(format!("{dir}/one.{metric}.log")).expect("log");
            let seen: Vec<u64> = log
                .lines()
                .filter_map(crate::runner::ncu::parse_progress)
                .filter_map(|p| p.passes)
                .collect();
            assert_eq!(seen.len(), 3, "{metric}: 3 kernels profiled");
            assert!(
                seen.iter().all(|&p| p.to_string() == passes),
                "{metric}: {seen:?} vs {passes}"
            );
            checked += 1;
        }
        assert!(checked >= 20);
        assert_eq!(
            measured("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
            Some(6)
        );
        assert_eq!(measured("nope"), None);
    }

    #[test]
    fn the_note_names_the_costly_metric() {
        let builtin: Vec<String> = crate::rules::Thresholds::builtin()
            .expect("builtin")
            .metrics();
        let one = Passes { min: 1, max: 1 };
        assert_eq!(note(&builtin, &builtin, one, None), None);
        let mut seed = vec![
            "sm__inst_executed.sum".to_string(),
            "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed".to_string(),
        ];
        let six = Passes { min: 6, max: 6 };
        let text = note(&seed, &builtin, six, Some(4.6)).expect("note");
        assert!(
            text.contains("6 passes per kernel")
                && text.contains(
                    "Responsible, measured alone on an H200: gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed (6 passes)"
                )
                && text.contains("this run: 4.6 s"),
            "{text}"
        );
        seed.push("my__metric.sum".into());
        let text = note(&seed, &builtin, six, None).expect("note");
        assert!(text.contains("Not measured: my__metric.sum."), "{text}");
        let combo: Vec<String> = builtin
            .iter()
            .cloned()
            .chain(["lts__t_sectors.sum".to_string()])
            .collect();
        let three = Passes { min: 3, max: 3 };
        let text = note(&combo, &builtin, three, None).expect("note");
        assert!(
            text.contains(
                "Beyond the built-in set: lts__t_sectors.sum; none takes more than 1 pass alone"
            ),
            "{text}"
        );
    }

    #[test]
    fn passes_read_as_words() {
        assert_eq!(Passes { min: 1, max: 1 }.to_string(), "1 pass per kernel");
        assert_eq!(
            Passes { min: 38, max: 38 }.to_string(),
            "38 passes per kernel"
        );
        assert_eq!(
            Passes { min: 1, max: 6 }.to_string(),
            "1–6 passes per kernel"
        );
    }
}
