//! Prints the raw page of a `.ncu-rep` (or a compressed `.ncu-repz`) as the
//! native reader rebuilds it — the
//! CSV `ncu --import R --csv --page raw --print-units base` prints — so the
//! two can be compared with `cmp` on a machine that has ncu, and timed.
//! With `--rules`, prints the rule rows of the details page instead (the rows
//! of `ncu --import R --csv --page details` that have a `Rule Name`).
//! With `--empty`, lists each result's metrics that have no value of their
//! own (`ID`, name, `none` for no value or `empty` for a value with no
//! field set, and how many instance values the metric has): how the report
//! stores the cells ncu prints as `no data` or leaves empty.
//! With `--charged`, prints what decoding the report allocates for repeated
//! fields and launches (what the reader's decode budget charges), the file's
//! size, and their ratio (the budget allows 20 per byte and 1 MiB more).
//!
//! ```sh
//! cargo build --release --example ncu_rep_raw
//! target/release/examples/ncu_rep_raw R.ncu-rep > native.csv
//! ncu --import R.ncu-rep --csv --page raw --print-units base > ncu.csv
//! cmp native.csv ncu.csv
//! ```

use ncugate::parse::ncu_rep::{container, details_page, raw_page, zstd};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<_> = std::env::args_os().skip(1).collect();
    let mode = args
        .first()
        .and_then(|a| a.to_str())
        .filter(|a| ["--rules", "--empty", "--charged"].contains(a))
        .map(String::from);
    if mode.is_some() {
        args.remove(0);
    }
    let Some(path) = args.first() else {
        eprintln!("usage: ncu_rep_raw [--rules|--empty|--charged] REPORT.ncu-rep");
        return ExitCode::from(2);
    };
    let data = match std::fs::read(path) {
        Ok(data) => data,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", path.to_string_lossy());
            return ExitCode::from(2);
        }
    };
    // A compressed report (`.ncu-repz`) is inflated first, as ncugate does.
    let data = match zstd::inflate(&data) {
        Ok(data) => data.into_owned(),
        Err(refused) => {
            let failure = container::Failure::from(refused);
            eprintln!("error: {}: {}", path.to_string_lossy(), failure.message());
            return ExitCode::from(2);
        }
    };
    if mode.as_deref() == Some("--charged") {
        return match container::charged(&data) {
            Ok(charged) => {
                println!(
                    "{charged} bytes charged, {} bytes of file, {:.2} per byte",
                    data.len(),
                    charged as f64 / data.len().max(1) as f64
                );
                ExitCode::SUCCESS
            }
            Err(failure) => {
                eprintln!("error: {}: {}", path.to_string_lossy(), failure.message());
                ExitCode::from(2)
            }
        };
    }
    match container::read(&data) {
        Ok(report) => {
            let out = match mode.as_deref() {
                Some("--rules") => details_page(&report).to_csv(),
                Some(_) => empty(&report).into_bytes(),
                None => raw_page(&report).to_csv(),
            };
            if std::io::stdout().write_all(&out).is_err() {
                return ExitCode::from(2);
            }
            ExitCode::SUCCESS
        }
        Err(failure) => {
            eprintln!("error: {}: {}", path.to_string_lossy(), failure.message());
            ExitCode::from(2)
        }
    }
}

/// One line per metric without a value of its own.
fn empty(report: &container::Report) -> String {
    let mut out = String::new();
    for (id, launch) in report.launches.iter().enumerate() {
        for m in &launch.metrics {
            let how = match &m.value {
                None => "none",
                Some(v)
                    if v.string.is_none()
                        && v.float.is_none()
                        && v.double.is_none()
                        && v.uint32.is_none()
                        && v.uint64.is_none() =>
                {
                    "empty"
                }
                Some(_) => continue,
            };
            out.push_str(&format!(
                "{id}\t{}\t{how}\t{} instances\n",
                m.name.escape_debug(),
                m.instances.len()
            ));
        }
    }
    out
}
