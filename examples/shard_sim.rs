//! How well `--shard K/N` balances a suite: 40 workloads whose costs are
//! drawn (with replacement, seeded) from the wall times of real profiled runs
//! on an H200 (`fixtures/h200/index.tsv`: every ncu run that wrote a report),
//! split with ncugate's own planner; the makespan (the slowest shard) against
//! the ideal total/N, and against a lower bound of the best possible split,
//! for N = 2, 4 and 8, over many draws.
//!
//! `cargo run --release --example shard_sim [-- DRAWS [WORKLOADS]]`

use ncugate::suite::shard;

/// splitmix64: a small, seeded generator, so the table is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let draws: usize = args.next().map_or(Ok(1000), |a| a.parse())?;
    let workloads: usize = args.next().map_or(Ok(40), |a| a.parse())?;
    let index = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/h200/index.tsv");
    let text = std::fs::read_to_string(index)?;
    // name, ncu_exit, seconds, report, command
    let costs: Vec<f64> = text
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() >= 4 && f[1] == "0" && f[3] == "yes").then(|| f[2].parse().ok())?
        })
        .collect();
    let (min, max) = costs
        .iter()
        .fold((f64::MAX, 0.0_f64), |(a, b), &c| (a.min(c), b.max(c)));
    println!(
        "{} recorded profiled runs, {min:.2}–{max:.2} s; {workloads} workloads per suite, {draws} suites",
        costs.len()
    );
    println!();
    println!(
        "| N | ideal total/N (mean) | makespan (mean) | mean over ideal | worst over ideal | suites within 10% of ideal | worst over a lower bound of the best split |"
    );
    println!("|---|---|---|---|---|---|---|");
    for n in [2_u32, 4, 8] {
        let mut rng = Rng(0x5EED_0000 + u64::from(n));
        let (mut ideal_sum, mut span_sum, mut ratio_sum, mut worst, mut within) =
            (0.0, 0.0, 0.0, 0.0_f64, 0);
        // No split beats total/N, the longest workload, or the N-th and (N+1)-th longest
        // together (two of the N+1 longest share a shard): a lower bound of the best split.
        let mut worst_bound = 0.0_f64;
        for _ in 0..draws {
            let suite: Vec<(String, Option<f64>)> = (0..workloads)
                .map(|i| {
                    let c = costs[(rng.next() % costs.len() as u64) as usize];
                    (format!("w{i:02}"), Some(c))
                })
                .collect();
            let total: f64 = suite.iter().filter_map(|(_, c)| *c).sum();
            let ideal = total / f64::from(n);
            let span = shard::makespan(&suite, &shard::plan(&suite, n));
            let ratio = span / ideal;
            let mut sorted: Vec<f64> = suite.iter().filter_map(|(_, c)| *c).collect();
            sorted.sort_by(|a, b| b.total_cmp(a));
            let n_us = n as usize;
            let pair = if sorted.len() > n_us {
                sorted[n_us - 1] + sorted[n_us]
            } else {
                0.0
            };
            let bound = ideal.max(sorted[0]).max(pair);
            worst_bound = worst_bound.max(span / bound);
            ideal_sum += ideal;
            span_sum += span;
            ratio_sum += ratio;
            worst = worst.max(ratio);
            if ratio <= 1.10 {
                within += 1;
            }
        }
        let d = draws as f64;
        println!(
            "| {n} | {:.1} s | {:.1} s | {:+.1}% | {:+.1}% | {}/{draws} | {:+.1}% |",
            ideal_sum / d,
            span_sum / d,
            (ratio_sum / d - 1.0) * 100.0,
            (worst - 1.0) * 100.0,
            within,
            (worst_bound - 1.0) * 100.0
        );
    }
    Ok(())
}
