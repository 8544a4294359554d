//! Prints the raw page of a `.ncu-rep` as the native reader rebuilds it — the
//! CSV `ncu --import R --csv --page raw --print-units base` prints — so the
//! two can be compared with `cmp` on a machine that has ncu, and timed.
//! With `--rules`, prints the rule rows of the details page instead (the rows
//! of `ncu --import R --csv --page details` that have a `Rule Name`).
//!
//! ```sh
//! cargo build --release --example ncu_rep_raw
//! target/release/examples/ncu_rep_raw R.ncu-rep > native.csv
//! ncu --import R.ncu-rep --csv --page raw --print-units base > ncu.csv
//! cmp native.csv ncu.csv
//! ```

use ncugate::parse::ncu_rep::{container, details_page, raw_page};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<_> = std::env::args_os().skip(1).collect();
    let rules = args.first().is_some_and(|a| a == "--rules");
    if rules {
        args.remove(0);
    }
    let Some(path) = args.first() else {
        eprintln!("usage: ncu_rep_raw [--rules] REPORT.ncu-rep");
        return ExitCode::from(2);
    };
    let data = match std::fs::read(path) {
        Ok(data) => data,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", path.to_string_lossy());
            return ExitCode::from(2);
        }
    };
    match container::read(&data) {
        Ok(report) => {
            let page = if rules {
                details_page(&report)
            } else {
                raw_page(&report)
            };
            if std::io::stdout().write_all(&page.to_csv()).is_err() {
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
