//! Throughput and peak memory of `ncugate baseline record` on a large `--set full` raw export,
//! and of its CSV scanner (`parse::scan`) against `simd-csv` doing the same work.
//!
//! Run it with:
//!
//! ```text
//! cargo bench --bench record
//! ```
//!
//! (`cargo test --all-targets` also runs it, without `--bench`: then it only checks, on a 2 MB
//! file, that it works.)
//!
//! The input is built once from `fixtures/ncu-reference/h200.graph_app.full.node.raw.csv`
//! (~2,238 quoted columns): its header and units rows, then its 9 data rows repeated, with the
//! `ID` column renumbered, until the file reaches `NCUGATE_BENCH_MB` (default 1100 MB, i.e.
//! more than 1 GiB). A second, smaller file (`NCUGATE_BENCH_SMALL_MB`, default 256; 0 skips
//! it) shows that peak memory does not grow with the input. Both are kept in
//! `target/bench-data/` (or `NCUGATE_BENCH_DATA`) and reused while their size is right.
//!
//! On each file, best of `NCUGATE_BENCH_RUNS` (default 3) interleaved runs of:
//!
//! * `ncugate baseline record --input BIG.csv --thresholds thresholds/set-full.toml` (the
//!   release binary cargo builds for this bench, or `NCUGATE_BENCH_NCUGATE`);
//! * `parse::raw::read_raw_rows` with the gate's metrics, once on `parse::scan::RowScanner` and
//!   once on `simd-csv`'s `ZeroCopyReader` behind the same `RowSource` interface
//!   (`simd_rows.rs`): the same work (find the wanted columns, parse and fold every value,
//!   hash the input), so the two differ only in the CSV reader; both must give the same
//!   launches, sums and digest, or the bench fails;
//! * for context, a plain `csv::ByteRecord` loop and a plain `simd-csv` `ZeroCopyReader` loop
//!   counting records, and `cat BIG.csv` to /dev/null (the page-cache read speed).
//!
//! Every program except `cat` and `ncugate` is this binary re-run as a child. Each runs under
//! GNU `/usr/bin/time -f %M` for its peak RSS (timed here), or, where that is missing, under
//! `python3`, which times it and reads `getrusage(RUSAGE_CHILDREN)` (that reading includes
//! python's own ~14 MB, which the child inherits until it execs); without either, the RSS is
//! shown as unknown. Files are read from the page cache (a warm-up read precedes the runs), so
//! the figures are CPU cost, not disk speed. MB = 10^6 bytes. The result is printed as a
//! Markdown table, then the verdicts: ≥ 800 MB/s on one core and peak RSS < 50 MB whatever the
//! file size for `baseline record`; for `simd-csv`, the rule for replacing the scanner with it
//! (≥ 90% of the scanner's throughput within the same 50 MB RSS bound).
//!
//! To run the bench binary outside cargo (e.g. copied to another machine), point it at a
//! checkout with `NCUGATE_BENCH_ROOT` (fixture, thresholds, working directory), at a release
//! `ncugate` with `NCUGATE_BENCH_NCUGATE`, and pass `--bench`.

mod children;
mod fixture;
mod meter;
mod simd_rows;

use children::{CHILD_VAR, Child, FILE_VAR, SUMMARY};
use fixture::{Fixture, warm_page_cache};
use meter::{Meter, Subject};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

const FIXTURE: &str = "fixtures/ncu-reference/h200.graph_app.full.node.raw.csv";
const THRESHOLDS: &str = "thresholds/set-full.toml";
const NCUGATE_RECORD: &str = "`ncugate baseline record`";
const TARGET_MB_PER_S: f64 = 800.0;
const TARGET_RSS_MB: f64 = 50.0;
/// The share of the scanner's throughput `simd-csv` must reach to replace it.
const ADOPT_RATIO: f64 = 0.90;

fn main() {
    if children::run_if_child(THRESHOLDS) {
        return;
    }
    if let Err(e) = run() {
        eprintln!("record bench failed: {e}");
        std::process::exit(1);
    }
}

/// One measured row of the table: the best time of its runs and the highest RSS.
struct Figure {
    what: &'static str,
    bytes: u64,
    secs: f64,
    rss_kb: Option<u64>,
}

fn run() -> io::Result<()> {
    let root = env_path("NCUGATE_BENCH_ROOT").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    let ncugate = fs::canonicalize(
        env_path("NCUGATE_BENCH_NCUGATE").unwrap_or_else(|| env!("CARGO_BIN_EXE_ncugate").into()),
    )?;
    // `cargo bench` passes --bench; `cargo test --all-targets` runs this without it, on a
    // debug build: then only check that the bench works, on a small file.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let (big_mb, small_mb, runs) = if smoke {
        eprintln!("smoke run (not `cargo bench`): a 2 MB file, debug build, figures mean nothing");
        (2, 0, 1)
    } else {
        (
            env_u64("NCUGATE_BENCH_MB", 1100),
            env_u64("NCUGATE_BENCH_SMALL_MB", 256),
            env_u64("NCUGATE_BENCH_RUNS", 3).max(1),
        )
    };
    // target/release/ncugate → target/bench-data
    let data_dir = env_path("NCUGATE_BENCH_DATA").unwrap_or_else(|| {
        ncugate
            .parent()
            .and_then(Path::parent)
            .unwrap_or(&root)
            .join("bench-data")
    });
    fs::create_dir_all(&data_dir)?;
    let fixture = Fixture::read(&root.join(FIXTURE))?;
    let (meter, floor_kb) = Meter::detect(&root);
    eprintln!(
        "peak RSS: {}; reads {} MB for `true`",
        meter.describe(),
        fmt_rss(floor_kb)
    );
    let out_json = data_dir.join("baseline.json");
    let exe = std::env::current_exe()?.to_string_lossy().into_owned();

    let mut sizes = vec![big_mb];
    if small_mb > 0 && small_mb != big_mb {
        sizes.push(small_mb);
    }
    let mut figures = Vec::new();
    for mb in sizes {
        let (path, rows) = fixture.ensure_file(&data_dir, mb)?;
        let bytes = fs::metadata(&path)?.len();
        eprintln!("{}: {} bytes, {rows} launches", path.display(), bytes);
        warm_page_cache(&path)?;

        let p = path.to_string_lossy().into_owned();
        let mut subjects = vec![Subject {
            what: NCUGATE_RECORD,
            argv: [
                &ncugate.to_string_lossy(),
                "baseline",
                "record",
                "--input",
                &p,
                "--thresholds",
                THRESHOLDS,
                "--output",
                &out_json.to_string_lossy(),
            ]
            .map(String::from)
            .to_vec(),
            env: Vec::new(),
        }];
        for child in Child::ALL {
            subjects.push(Subject {
                what: child.what(),
                argv: vec![exe.clone()],
                env: vec![(CHILD_VAR, child.name().into()), (FILE_VAR, p.clone())],
            });
        }
        subjects.push(Subject {
            what: "`cat` > /dev/null (reference)",
            argv: vec!["cat".into(), p.clone()],
            env: Vec::new(),
        });

        // Interleaved, so that a slow phase of the machine hits every subject alike.
        let mut best: Vec<Option<(f64, Option<u64>)>> = vec![None; subjects.len()];
        let mut summaries: Vec<Option<String>> = vec![None; subjects.len()];
        for _ in 0..runs {
            for (i, subject) in subjects.iter().enumerate() {
                let m = meter.measure(&root, subject)?;
                eprintln!(
                    "  {}: {:.3} s, {:.0} MB/s, peak RSS {}",
                    subject.what,
                    m.secs,
                    mb_per_s(bytes, m.secs),
                    fmt_rss(m.rss_kb)
                );
                let rss_kb = match best[i] {
                    Some((_, Some(old))) => m.rss_kb.map(|new| new.max(old)),
                    _ => m.rss_kb,
                };
                let secs = best[i].map_or(m.secs, |(b, _)| b.min(m.secs));
                best[i] = Some((secs, rss_kb));
                if subject.what == NCUGATE_RECORD {
                    check_launches(&out_json, rows);
                }
                if let Some(line) = m.stderr.lines().rev().find_map(|l| l.strip_prefix(SUMMARY)) {
                    summaries[i] = Some(line.to_string());
                }
            }
        }
        check_same_result(&subjects, &summaries, rows)?;
        for (subject, best) in subjects.iter().zip(best) {
            let (secs, rss_kb) = best.unwrap_or((f64::NAN, None));
            figures.push(Figure {
                what: subject.what,
                bytes,
                secs,
                rss_kb,
            });
        }
    }
    print_table(&figures, runs, meter, floor_kb);
    if !smoke {
        print_verdicts(&figures);
    }
    Ok(())
}

/// The two `read_raw` children must read the same launches, sums and digest.
fn check_same_result(
    subjects: &[Subject],
    summaries: &[Option<String>],
    rows: u64,
) -> io::Result<()> {
    let summary_of = |child: Child| {
        subjects
            .iter()
            .position(|s| s.what == child.what())
            .and_then(|i| summaries[i].clone())
            .ok_or_else(|| io::Error::other(format!("{} printed no summary", child.what())))
    };
    let (scan, simd) = (summary_of(Child::RawScan)?, summary_of(Child::RawSimdCsv)?);
    if scan != simd {
        return Err(io::Error::other(format!(
            "the two readers disagree:\n  parse::scan: {scan}\n  simd-csv:    {simd}"
        )));
    }
    if !scan.starts_with(&format!("{rows} launches,")) {
        return Err(io::Error::other(format!(
            "{rows} launches written, read: {scan}"
        )));
    }
    eprintln!(
        "  both readers: {}",
        scan.split(", ").take(2).collect::<Vec<_>>().join(", ")
    );
    Ok(())
}

/// Warns when the baseline's launch count is not the number of data rows written.
fn check_launches(baseline: &Path, rows: u64) {
    let launches = fs::read(baseline)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| {
            v.pointer("/total/launches/mean")
                .and_then(serde_json::Value::as_f64)
        });
    match launches {
        Some(n) if (n - rows as f64).abs() < 0.5 => {}
        Some(n) => eprintln!("  warning: the baseline has {n} launches, the file {rows}"),
        None => eprintln!(
            "  warning: no total.launches.mean in {}",
            baseline.display()
        ),
    }
}

fn print_table(figures: &[Figure], runs: u64, meter: Meter, floor_kb: Option<u64>) {
    println!();
    println!("| What (best of {runs}) | File size (MB) | Seconds | MB/s | Peak RSS (MB) |");
    println!("|---|---:|---:|---:|---:|");
    for f in figures {
        println!(
            "| {} | {:.0} | {:.3} | {:.0} | {} |",
            f.what,
            f.bytes as f64 / 1e6,
            f.secs,
            mb_per_s(f.bytes, f.secs),
            fmt_rss(f.rss_kb)
        );
    }
    println!();
    println!(
        "MB = 10^6 bytes; files read from the page cache; peak RSS (highest of the runs) from {}.",
        meter.describe()
    );
    if let Some(kb) = floor_kb {
        println!(
            "The same measure reads {} MB for `true`: no reading can be lower.",
            fmt_rss(Some(kb))
        );
    }
}

fn print_verdicts(figures: &[Figure]) {
    println!();
    let rss_verdict = |f: &Figure| match f.rss_kb.map(rss_mb) {
        Some(mb) if mb < TARGET_RSS_MB => (format!("{mb:.1} MB"), "within"),
        Some(mb) => (format!("{mb:.1} MB"), "OUTSIDE"),
        None => ("unknown".into(), "cannot be checked against"),
    };
    for f in figures.iter().filter(|f| f.what == NCUGATE_RECORD) {
        let speed = mb_per_s(f.bytes, f.secs);
        let speed_ok = if speed >= TARGET_MB_PER_S {
            "meets"
        } else {
            "MISSES"
        };
        let (rss, rss_ok) = rss_verdict(f);
        println!(
            "{:.0} MB file: `baseline record` {speed:.0} MB/s {speed_ok} the {TARGET_MB_PER_S:.0} MB/s \
             target; peak RSS {rss} {rss_ok} the {TARGET_RSS_MB:.0} MB bound",
            f.bytes as f64 / 1e6,
        );
    }
    let of = |child: Child, bytes: u64| {
        figures
            .iter()
            .find(|f| f.what == child.what() && f.bytes == bytes)
    };
    for f in figures.iter().filter(|f| f.what == NCUGATE_RECORD) {
        let (Some(scan), Some(simd)) =
            (of(Child::RawScan, f.bytes), of(Child::RawSimdCsv, f.bytes))
        else {
            continue;
        };
        let ratio = scan.secs / simd.secs;
        let (rss, rss_ok) = rss_verdict(simd);
        let adopt = ratio >= ADOPT_RATIO && rss_ok == "within";
        println!(
            "{:.0} MB file: `read_raw` on simd-csv runs at {:.0}% of its speed on parse::scan \
             ({:.0} vs {:.0} MB/s; rule: ≥ {:.0}%), peak RSS {rss} {rss_ok} the {TARGET_RSS_MB:.0} MB \
             bound: {}",
            f.bytes as f64 / 1e6,
            ratio * 100.0,
            mb_per_s(simd.bytes, simd.secs),
            mb_per_s(scan.bytes, scan.secs),
            ADOPT_RATIO * 100.0,
            if adopt {
                "ADOPT simd-csv"
            } else {
                "keep parse::scan"
            }
        );
    }
}

fn mb_per_s(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / 1e6 / secs
}

/// getrusage reports KiB on Linux; MB here are 10^6 bytes.
fn rss_mb(rss_kb: u64) -> f64 {
    rss_kb as f64 * 1024.0 / 1e6
}

fn fmt_rss(rss_kb: Option<u64>) -> String {
    rss_kb.map_or_else(|| "unknown".into(), |kb| format!("{:.1}", rss_mb(kb)))
}

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            eprintln!("{name}={v:?} is not a whole number; using {default}");
            default
        }),
        Err(_) => default,
    }
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}
