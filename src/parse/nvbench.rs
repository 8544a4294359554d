//! Reading nvbench's JSON output (`nvbench --json FILE`) as a run.
//!
//! nvbench measures each benchmark at each point of its axes (a *state*,
//! e.g. `Device=0 BlockSize=2^8 NumBlocks=2^6`) many times and writes, per
//! state, *summaries* tagged like `nv/cold/time/gpu/mean` with their values
//! as decimal strings. Each benchmark × state becomes one kernel of the run,
//! keyed `benchmark [state]`, launched once; each summary with a numeric
//! `value` becomes a metric named by its tag. Values leave here in the base
//! units of the rest of the gate: durations in `ns`, percentages (nvbench
//! writes fractions) in `%`, rates per second, sizes in `byte`.
//!
//! nvbench also measured each mean's noise: `X/mean` has a sibling
//! `X/stdev/relative`. That relative deviation times the mean is kept as the
//! value's σ ([`crate::model::MetricAcc::sigma`]), so a baseline recorded
//! from one file has the noise band nvbench measured, and a rule's `noise = k`
//! allows k of it.
//!
//! A file is told apart by its content: its first character is `{`, which
//! no ncu CSV export starts with. A JSON file without nvbench's
//! `meta.version.nvbench`, with a value that is no number, or with one
//! benchmark × state twice is refused, naming where.

use crate::error::{Error, ExportError, Result};
use crate::model::{
    ExportPage, Fingerprint, Gpu, KernelKeyMode, KernelRun, MetricAcc, MetricColumn, Run,
};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Whether `head` (a file's first bytes) starts a JSON object: the one
/// input kind read here (a CSV export never starts with `{`).
pub(crate) fn looks_like(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    head.trim_ascii_start().starts_with(b"{")
}

/// Whether every one of `paths` is a file that starts as nvbench's JSON
/// does ([`looks_like`], from its first bytes): the inputs the built-in
/// nvbench rules are for. Standard input and named pipes, read once, are
/// not looked at here.
pub(crate) fn all_files(paths: &[std::path::PathBuf]) -> bool {
    use std::io::Read;
    !paths.is_empty()
        && paths.iter().all(|path| {
            let mut head = Vec::new();
            crate::io::bounded::can_reopen(path)
                && std::fs::File::open(path)
                    .and_then(|f| f.take(64).read_to_end(&mut head))
                    .is_ok()
                && looks_like(&head)
        })
}

/// The parts of the file read; other keys are left alone (nvbench adds
/// keys from version to version).
#[derive(Deserialize)]
struct File {
    meta: Meta,
    #[serde(default)]
    devices: Vec<Device>,
    benchmarks: Vec<Benchmark>,
}

#[derive(Deserialize)]
struct Meta {
    version: Versions,
}

#[derive(Deserialize)]
struct Versions {
    nvbench: serde_json::Value,
}

#[derive(Deserialize)]
struct Device {
    id: u64,
    name: String,
    /// `major·100 + minor·10`, e.g. 700 for CC 7.0.
    sm_version: u32,
    #[serde(default)]
    number_of_sms: Option<u32>,
}

#[derive(Deserialize)]
struct Benchmark {
    name: String,
    #[serde(default)]
    states: Vec<State>,
}

#[derive(Deserialize)]
struct State {
    name: String,
    #[serde(default)]
    device: Option<u64>,
    #[serde(default)]
    summaries: Option<Vec<Summary>>,
    #[serde(default)]
    is_skipped: bool,
}

#[derive(Deserialize)]
struct Summary {
    tag: String,
    #[serde(default)]
    hint: Option<String>,
    #[serde(default)]
    data: Vec<Datum>,
}

#[derive(Deserialize)]
struct Datum {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    value: serde_json::Value,
}

/// The suffix of a mean whose noise nvbench measured, and of its noise.
const MEAN: &str = "/mean";
const RELATIVE_STDEV: &str = "/stdev/relative";

/// A summary's unit and the factor from nvbench's value to it, by its `hint`.
fn unit_of(hint: Option<&str>) -> (&'static str, f64) {
    match hint {
        Some("duration") => ("ns", 1e9),
        Some("percentage") => ("%", 100.0),
        Some("byte_rate") => ("byte/s", 1.0),
        Some("item_rate") => ("item/s", 1.0),
        Some("bytes") => ("byte", 1.0),
        _ => ("", 1.0),
    }
}

/// One state's values by tag: (value in base units, σ in base units).
type Values = BTreeMap<String, (f64, f64)>;

/// Reads the nvbench JSON `data` of the file at `path` into a run holding
/// `metrics` (every summary when empty).
pub(crate) fn read_run(
    path: &Path,
    data: &[u8],
    metrics: &[String],
    key_mode: KernelKeyMode,
) -> Result<Run> {
    let bad = |reason: String| Error::export(path, ExportError::NvbenchMalformed { reason });
    let file: File = serde_json::from_slice(data).map_err(|e| {
        bad(match e.classify() {
            serde_json::error::Category::Eof => format!("it ends early ({e}): it is truncated"),
            _ => e.to_string(),
        })
    })?;
    if !file.meta.version.nvbench.is_object() {
        return Err(bad("`meta.version.nvbench` is not an object".into()));
    }
    let mut units: BTreeMap<String, &'static str> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut states: BTreeMap<String, Values> = BTreeMap::new();
    let mut gpus = Vec::new();
    for (b, bench) in file.benchmarks.iter().enumerate() {
        for (s, state) in bench.states.iter().enumerate() {
            if state.is_skipped {
                continue;
            }
            let at = || {
                format!(
                    "benchmark {b} (`{}`), state {s} (`{}`)",
                    bench.name, state.name
                )
            };
            let values = state_values(state, &mut units, &mut order)
                .map_err(|m| bad(format!("{}: {m}", at())))?;
            if let Some(id) = state.device {
                let device = file
                    .devices
                    .iter()
                    .find(|d| d.id == id)
                    .ok_or_else(|| bad(format!("{}: device {id} is not in `devices`", at())))?;
                gpus.push(Gpu {
                    name: device.name.clone(),
                    compute_capability: format!(
                        "{}.{}",
                        device.sm_version / 100,
                        device.sm_version % 100 / 10
                    ),
                    sm_count: device.number_of_sms,
                });
            }
            let key = format!("{} [{}]", bench.name, state.name);
            if states.insert(key, values).is_some() {
                return Err(bad(format!("{}: listed twice", at())));
            }
        }
    }
    if states.is_empty() {
        return Err(Error::export(path, ExportError::NoKernels));
    }
    gpus.sort();
    gpus.dedup();
    let wanted: Vec<String> = match metrics.is_empty() {
        true => order,
        false => metrics.to_vec(),
    };
    Ok(fold(path, data, states, &wanted, &units, gpus, key_mode))
}

/// The values of one state's summaries, by tag, with the σ of each mean
/// whose relative deviation is there too; `units` and `order` learn each
/// tag's unit and its place.
fn state_values(
    state: &State,
    units: &mut BTreeMap<String, &'static str>,
    order: &mut Vec<String>,
) -> std::result::Result<Values, String> {
    let mut out = Values::new();
    for summary in state.summaries.iter().flatten() {
        let Some(datum) = summary.data.iter().find(|d| d.name == "value") else {
            continue;
        };
        if !matches!(datum.kind.as_str(), "float64" | "int64") {
            continue;
        }
        let number = match &datum.value {
            serde_json::Value::String(text) => text.trim().parse::<f64>().ok(),
            serde_json::Value::Number(n) => n.as_f64(),
            _ => None,
        };
        let (unit, factor) = unit_of(summary.hint.as_deref());
        let value = number
            .map(|v| v * factor)
            .filter(|v| v.is_finite())
            .ok_or_else(|| {
                format!(
                    "summary `{}` has value {}, not a finite number",
                    summary.tag, datum.value
                )
            })?;
        match units.get(&summary.tag) {
            Some(u) if *u != unit => {
                return Err(format!(
                    "summary `{}` is in {unit} here and in {u} elsewhere",
                    summary.tag
                ));
            }
            Some(_) => {}
            None => {
                units.insert(summary.tag.clone(), unit);
                order.push(summary.tag.clone());
            }
        }
        if out.insert(summary.tag.clone(), (value, 0.0)).is_some() {
            return Err(format!("summary `{}` is listed twice", summary.tag));
        }
    }
    let noisy: Vec<(String, f64)> = out
        .iter()
        .filter_map(|(tag, (mean, _))| {
            let base = tag.strip_suffix(MEAN)?;
            // A percentage, in `%` here: the fraction of the mean is /100.
            let (relative, _) = out.get(&format!("{base}{RELATIVE_STDEV}"))?;
            Some((tag.clone(), (mean * relative / 100.0).abs()))
        })
        .collect();
    for (tag, sigma) in noisy {
        if let Some(entry) = out.get_mut(&tag) {
            entry.1 = sigma;
        }
    }
    Ok(out)
}

/// The run of the states' values: one launch per state, `wanted` metrics.
fn fold(
    path: &Path,
    data: &[u8],
    states: BTreeMap<String, Values>,
    wanted: &[String],
    units: &BTreeMap<String, &'static str>,
    gpus: Vec<Gpu>,
    key_mode: KernelKeyMode,
) -> Run {
    let columns: Vec<MetricColumn> = wanted
        .iter()
        .map(|name| MetricColumn {
            name: name.clone(),
            unit: units.get(name).map(|u| u.to_string()),
        })
        .collect();
    let mut total = KernelRun {
        metrics: vec![MetricAcc::default(); columns.len()],
        ..KernelRun::default()
    };
    let mut kernels = BTreeMap::new();
    for (key, values) in states {
        let mut kernel = KernelRun {
            launches: 1,
            metrics: vec![MetricAcc::default(); columns.len()],
            ..KernelRun::default()
        };
        for (i, column) in columns.iter().enumerate() {
            match values.get(&column.name) {
                Some(&(value, sigma)) => {
                    kernel.metrics[i].push_measured(value, sigma);
                    total.metrics[i].push_measured(value, sigma);
                }
                None => {
                    kernel.metrics[i].missing += 1;
                    total.metrics[i].missing += 1;
                }
            }
        }
        total.launches += 1;
        kernels.insert(key, kernel);
    }
    Run {
        source: path.to_path_buf(),
        sha256: super::sha256_bytes(data),
        fingerprint: Fingerprint { gpus },
        key_mode,
        graph_mode: None,
        page: ExportPage::Nvbench,
        metrics: columns,
        kernels,
        total,
        processes: BTreeMap::new(),
        profiler_version: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REF: &[u8] = include_bytes!("../../fixtures/public-nvbench/nvbench.axes.ref.json");

    fn run(data: &[u8]) -> Result<Run> {
        read_run(Path::new("t.json"), data, &[], KernelKeyMode::default())
    }

    #[test]
    fn each_benchmark_state_is_a_kernel_with_its_noise_as_sigma() {
        let run = run(REF).expect("the public file reads");
        // 126 states, 38 of them skipped (type combinations a device does not run).
        assert_eq!(run.kernels.len(), 88, "{:?}", run.kernels.keys().take(3));
        let gpu = run.metric_index("nv/cold/time/gpu/mean").expect("GPU time");
        assert_eq!(run.metrics[gpu].unit.as_deref(), Some("ns"));
        let simple = &run.kernels["simple [Device=0]"].metrics[gpu];
        assert!(
            (simple.sum - 1_003_471.584_979_422_5).abs() < 1e-6,
            "{}",
            simple.sum
        );
        // Noise 0.0005782350585973689 of the mean.
        assert!((simple.sigma - 580.237).abs() < 1e-2, "{}", simple.sigma);
        let names: Vec<String> = run.fingerprint.gpus.iter().map(|g| g.to_string()).collect();
        assert_eq!(
            names,
            [
                "Quadro GP100 (CC 6.0, 56 SMs)",
                "Quadro GV100 (CC 7.0, 80 SMs)"
            ]
        );
    }

    #[test]
    fn json_that_is_not_nvbench_and_bad_values_are_refused_saying_where() {
        let e = run(br#"{"name": "x"}"#).expect_err("not nvbench");
        assert!(e.to_string().contains("missing field `meta`"), "{e}");
        let text = String::from_utf8_lossy(REF).replacen(
            "\"value\": \"0.0010034715849794225\"",
            "\"value\": \"fast\"",
            1,
        );
        let e = run(text.as_bytes()).expect_err("a value that is no number");
        let message = e.to_string();
        assert!(
            message.contains("benchmark 0 (`simple`), state 0 (`Device=0`)")
                && message.contains("`nv/cold/time/gpu/mean` has value \"fast\""),
            "{message}"
        );
        let e = run(&REF[..REF.len() / 2]).expect_err("truncated");
        assert!(e.to_string().contains("it is truncated"), "{e}");
    }

    #[test]
    fn a_json_object_is_told_from_a_csv_by_its_first_character() {
        assert!(looks_like(b"\xef\xbb\xbf  {\n"));
        assert!(!looks_like(b"\"ID\",\"Kernel Name\""));
    }
}
