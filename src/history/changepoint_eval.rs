//! The change-point test's rates, measured on recorded GPU noise (the
//! table in README.md, "How often `history changes` is wrong"):
//!
//! - **Noise pools** (A/A: the same code run again): the reference app's base
//!   variant profiled 3 times on the H200, 3 launches of each of its 3
//!   kernels per run (`fixtures/h200/graph_app.base.fast.run{1,2,3}.raw.csv`),
//!   for kernel time, DRAM throughput and DRAM bytes — 9 pools of 9 values;
//!   and nvbench's two runs of the same 88 states (`fixtures/public-nvbench`,
//!   the GPU time of the second over the first) — 1 pool of 88 ratios.
//! - **False alarms**: the change points found in the recorded series as
//!   they are (each pool in run order), and in long series resampled from
//!   each pool (seeded bootstrap: [`SERIES`] series of [`LENGTH`] runs per
//!   pool) — every one found is false.
//! - **Detection**: the same resampled series with a step of 2, 5, 10 or 20%
//!   planted at run [`STEP_AT`]: found when a change point lies within
//!   [`NEAR`] runs of it.
//!
//! Per-launch values stand in for per-run means, so the noise is, if
//! anything, larger than a history's: the first launch of each run is the
//! slowest (a warm-up a run's mean absorbs), which makes the pools bimodal.
//! The measurement is deterministic; `scripts/changepoint-rates.sh` prints
//! the table and each pool's false alarms.

use super::changepoint::{Settings, find};
use std::path::Path;

/// Resampled series per pool.
const SERIES: usize = 30;
/// Runs per resampled series.
const LENGTH: usize = 200;
/// Where a step is planted.
const STEP_AT: usize = 100;
/// How far from the planted step a found change point may lie.
const NEAR: usize = 3;
/// The steps planted, as fractions.
const STEPS: [f64; 4] = [0.02, 0.05, 0.10, 0.20];
/// The settings measured: the defaults.
const SETTINGS: Settings = Settings {
    p: crate::options::history::DEFAULT_CHANGE_P,
    window: crate::options::history::DEFAULT_CHANGE_WINDOW,
};

/// The published rates (README.md): the measurement may not do worse.
/// False alarms per 1,000 resampled runs.
const PUBLISHED_FALSE_PER_1000: f64 = 0.52;
/// Detection of each planted step, percent.
const PUBLISHED_DETECTED_PCT: [f64; 4] = [85.0, 100.0, 100.0, 100.0];

fn fixture(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(path)
}

/// The H200 pools: (name, values in run order) per kernel × metric.
fn h200_pools() -> Vec<(String, Vec<f64>)> {
    const METRICS: [&str; 3] = [
        "gpu__time_duration.sum",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__bytes.sum",
    ];
    let mut pools: Vec<(String, Vec<f64>)> = Vec::new();
    for run in 1..=3 {
        let path = fixture(&format!("h200/graph_app.base.fast.run{run}.raw.csv"));
        let mut reader = csv::Reader::from_path(&path).expect("fixture");
        let header = reader.headers().expect("header").clone();
        let column = |name: &str| header.iter().position(|h| h == name).expect(name);
        let kernel = column("Kernel Name");
        // The first row after the header holds the units.
        for row in reader.records().skip(1) {
            let row = row.expect("row");
            for m in METRICS {
                let name = format!("{} · {m}", row[kernel].split('(').next().unwrap_or(""));
                let v: f64 = row[column(m)].parse().expect("number");
                match pools.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, values)) => values.push(v),
                    None => pools.push((name, vec![v])),
                }
            }
        }
    }
    pools
}

/// nvbench's GPU time of each state, second run over first.
fn nvbench_pool() -> (String, Vec<f64>) {
    let times = |file: &str| -> Vec<(String, f64)> {
        let text =
            std::fs::read_to_string(fixture(&format!("public-nvbench/{file}"))).expect("fixture");
        let doc: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let mut out = Vec::new();
        for b in doc["benchmarks"].as_array().expect("benchmarks") {
            for s in b["states"].as_array().expect("states") {
                let gpu = s["summaries"].as_array().and_then(|all| {
                    all.iter()
                        .find(|x| x["tag"] == "nv/cold/time/gpu/mean")
                        .and_then(|x| x["data"][0]["value"].as_str())
                        .and_then(|v| v.parse::<f64>().ok())
                });
                if let Some(t) = gpu {
                    out.push((format!("{} {}", b["name"], s["name"]), t));
                }
            }
        }
        out
    };
    let first = times("nvbench.axes.ref.json");
    let second = times("nvbench.axes.cmp.json");
    let ratios = first
        .iter()
        .filter_map(|(k, a)| second.iter().find(|(j, _)| j == k).map(|(_, b)| b / a))
        .collect();
    ("nvbench GPU time, run 2 / run 1".into(), ratios)
}

/// SplitMix64: a seeded generator, so every measurement is repeatable.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z % n as u64) as usize
    }
}

/// The measured rates.
#[derive(Debug)]
struct Rates {
    pools: usize,
    recorded_runs: usize,
    recorded_false: usize,
    resampled_runs: usize,
    resampled_false: usize,
    series_with_false: usize,
    detected: [usize; 4],
    series: usize,
}

fn measure() -> Rates {
    let mut pools = h200_pools();
    pools.push(nvbench_pool());
    let mut rng = Rng(0x006e_6375_6761_7465);
    let mut r = Rates {
        pools: pools.len(),
        recorded_runs: 0,
        recorded_false: 0,
        resampled_runs: 0,
        resampled_false: 0,
        series_with_false: 0,
        detected: [0; 4],
        series: 0,
    };
    for (name, values) in &pools {
        let before = r.resampled_false;
        r.recorded_runs += values.len();
        r.recorded_false += find(values, SETTINGS).len();
        for _ in 0..SERIES {
            let series: Vec<f64> = (0..LENGTH)
                .map(|_| values[rng.below(values.len())])
                .collect();
            let found = find(&series, SETTINGS).len();
            r.resampled_runs += LENGTH;
            r.resampled_false += found;
            r.series_with_false += usize::from(found > 0);
            r.series += 1;
            for (k, step) in STEPS.iter().enumerate() {
                let stepped: Vec<f64> = series
                    .iter()
                    .enumerate()
                    .map(|(i, v)| if i >= STEP_AT { v * (1.0 + step) } else { *v })
                    .collect();
                let hit = find(&stepped, SETTINGS)
                    .iter()
                    .any(|c| c.index.abs_diff(STEP_AT) <= NEAR);
                r.detected[k] += usize::from(hit);
            }
        }
        println!("{name}: {} false alarm(s)", r.resampled_false - before);
    }
    r
}

fn table(r: &Rates) -> String {
    let pct = |n: usize| 100.0 * n as f64 / r.series as f64;
    let mut out = format!(
        "| data | runs | change points found (all false) |\n|---|---|---|\n\
         | recorded A/A series, as they are ({} pools) | {} | {} |\n\
         | resampled A/A series ({} × {} runs) | {} | {} ({:.2} per 1,000 runs; {:.1}% of series) |\n\n\
         | planted step | detected within ±{NEAR} runs |\n|---|---|\n",
        r.pools,
        r.recorded_runs,
        r.recorded_false,
        r.series,
        LENGTH,
        r.resampled_runs,
        r.resampled_false,
        1000.0 * r.resampled_false as f64 / r.resampled_runs as f64,
        pct(r.series_with_false),
    );
    for (k, step) in STEPS.iter().enumerate() {
        out.push_str(&format!(
            "| +{:.0}% | {:.1}% |\n",
            step * 100.0,
            pct(r.detected[k])
        ));
    }
    out
}

#[test]
fn change_point_rates_stay_within_the_published_ones() {
    let r = measure();
    println!("{}", table(&r));
    assert_eq!(
        r.recorded_false, 0,
        "a false alarm on recorded A/A runs: {r:?}"
    );
    let false_per_1000 = 1000.0 * r.resampled_false as f64 / r.resampled_runs as f64;
    assert!(
        false_per_1000 <= PUBLISHED_FALSE_PER_1000,
        "{false_per_1000} false alarms per 1,000 runs, published {PUBLISHED_FALSE_PER_1000}"
    );
    for (k, published) in PUBLISHED_DETECTED_PCT.iter().enumerate() {
        let pct = 100.0 * r.detected[k] as f64 / r.series as f64;
        assert!(
            pct >= *published,
            "a {}% step: {pct}% detected, published {published}%",
            STEPS[k] * 100.0
        );
    }
}
