//! Time of `ncugate check` (and `ncugate baseline record`) against the number
//! of distinct kernels in a raw export: per-kernel work must stay linear.
//!
//! Run it with:
//!
//! ```text
//! cargo bench --bench check
//! ```
//!
//! (`cargo test --all-targets` also runs it, without `--bench`: then it only
//! checks, on 300 kernels, that it works.)
//!
//! The inputs are built from `fixtures/h200/graph_app.base.fast.run1.raw.csv`
//! (a real H200 export: header and units rows, 9 launches of 3 kernels): its
//! data rows repeated, with the `ID` column renumbered and each row's kernel
//! renamed (`produce(float *, long)` → `produce_k17(float *, long)`), so that
//! an export of N rows holds N distinct kernels of one launch each. Kernel
//! counts: `NCUGATE_BENCH_KERNELS` (comma-separated; default `6000,30000`).
//! Files go to `target/bench-data/`.
//!
//! For each size: `baseline record --input X.csv` once (timed), then `check
//! --baseline X.json --input X.csv` best of `NCUGATE_BENCH_RUNS` (default 3),
//! stdout to /dev/null; then the same check writing every report (`--junit`,
//! `--markdown`, `--json`, `--html`: one SVG chart per check) into a fresh
//! folder, best of as many runs. The check compares the export with the
//! baseline recorded from it, so every rule runs on every kernel and it exits
//! 0. The result is printed as a Markdown table.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const FIXTURE: &str = "fixtures/h200/graph_app.base.fast.run1.raw.csv";
const NCUGATE: &str = env!("CARGO_BIN_EXE_ncugate");

fn main() {
    if let Err(e) = run() {
        eprintln!("check bench failed: {e}");
        std::process::exit(1);
    }
}

fn run() -> io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let smoke = !std::env::args().any(|a| a == "--bench");
    let (sizes, runs) = if smoke {
        eprintln!("smoke run (not `cargo bench`): 300 kernels, debug build, figures mean nothing");
        (vec![300], 1)
    } else {
        let sizes = std::env::var("NCUGATE_BENCH_KERNELS")
            .unwrap_or_else(|_| "6000,30000".into())
            .split(',')
            .map(|n| n.trim().parse::<usize>().map_err(io::Error::other))
            .collect::<io::Result<Vec<_>>>()?;
        let runs = std::env::var("NCUGATE_BENCH_RUNS")
            .ok()
            .and_then(|r| r.parse::<usize>().ok())
            .unwrap_or(3)
            .max(1);
        (sizes, runs)
    };
    // target/release/ncugate → target/bench-data
    let data_dir = Path::new(NCUGATE)
        .parent()
        .and_then(Path::parent)
        .unwrap_or(root)
        .join("bench-data");
    fs::create_dir_all(&data_dir)?;
    let text = fs::read_to_string(root.join(FIXTURE))?;
    let mut rows = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes())
        .into_records()
        .collect::<Result<Vec<_>, _>>()
        .map_err(io::Error::other)?;
    let data: Vec<csv::StringRecord> = rows.split_off(2);
    let name_col = rows[0]
        .iter()
        .position(|h| h == "Kernel Name")
        .ok_or_else(|| io::Error::other("no Kernel Name column"))?;

    println!(
        "| kernels | export | `baseline record` | `check` (best of {runs}) | with every report |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for n in sizes {
        let csv_path = data_dir.join(format!("check-{n}-kernels.raw.csv"));
        write_export(&csv_path, &rows, &data, name_col, n)?;
        let bytes = fs::metadata(&csv_path)?.len();
        let baseline = data_dir.join(format!("check-{n}-kernels.baseline.json"));
        let (p, b) = (
            csv_path.display().to_string(),
            baseline.display().to_string(),
        );
        let (record_s, code) = time(&["baseline", "record", "--input", &p, "--output", &b])?;
        if code != 0 {
            return Err(io::Error::other(format!("record exited {code}")));
        }
        let check = ["check", "--baseline", &b, "--input", &p];
        let best = best_of(runs, &check, None)?;
        let reports = data_dir.join(format!("check-{n}-kernels.reports"));
        let file = |name: &str| reports.join(name).display().to_string();
        let (junit, markdown, json, html) =
            (file("r.xml"), file("r.md"), file("r.json"), file("html"));
        let every_report = [
            "--junit",
            &junit,
            "--markdown",
            &markdown,
            "--json",
            &json,
            "--html",
            &html,
        ];
        let with_reports: Vec<&str> = check.iter().chain(&every_report).copied().collect();
        let best_reports = best_of(runs, &with_reports, Some(&reports))?;
        println!(
            "| {n} | {:.1} MB | {record_s:.2} s | {best:.2} s | {best_reports:.2} s |",
            bytes as f64 / 1e6
        );
    }
    Ok(())
}

/// The header and units rows, then `n` data rows cycled from `data`, each
/// with its own `ID` and its own kernel name.
fn write_export(
    path: &PathBuf,
    head: &[csv::StringRecord],
    data: &[csv::StringRecord],
    name_col: usize,
    n: usize,
) -> io::Result<()> {
    let mut w = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Always)
        .from_writer(BufWriter::new(File::create(path)?));
    for r in head {
        w.write_record(r).map_err(io::Error::other)?;
    }
    for i in 0..n {
        let row = &data[i % data.len()];
        let mut out: Vec<String> = row.iter().map(str::to_string).collect();
        out[0] = i.to_string();
        out[name_col] = renamed(&row[name_col], i);
        w.write_record(&out).map_err(io::Error::other)?;
    }
    w.into_inner()
        .map_err(|e| io::Error::other(e.to_string()))?
        .flush()
}

/// `void scale<0>(…)` → `void scale_k7<0>(…)`: a distinct function per row.
fn renamed(name: &str, i: usize) -> String {
    let start = name.strip_prefix("void ").map_or(0, |_| 5);
    let end = name[start..]
        .find(['(', '<'])
        .map_or(name.len(), |e| start + e);
    format!("{}_k{i}{}", &name[..end], &name[end..])
}

/// The fastest of `runs` runs of `ncugate ARGS`, each into a fresh `folder`
/// when one is given; an exit code other than 0 is an error.
fn best_of(runs: usize, args: &[&str], folder: Option<&Path>) -> io::Result<f64> {
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        if let Some(folder) = folder.filter(|f| f.exists()) {
            fs::remove_dir_all(folder)?;
        }
        let (seconds, code) = time(args)?;
        if code != 0 {
            return Err(io::Error::other(format!(
                "`ncugate {}` exited {code}",
                args.join(" ")
            )));
        }
        best = best.min(seconds);
    }
    Ok(best)
}

/// Runs `ncugate ARGS`, stdout to /dev/null: wall seconds and exit code.
fn time(args: &[&str]) -> io::Result<(f64, i32)> {
    let start = Instant::now();
    let status = Command::new(NCUGATE)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    Ok((start.elapsed().as_secs_f64(), status.code().unwrap_or(-1)))
}
