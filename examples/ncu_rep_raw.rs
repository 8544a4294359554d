//! Prints the raw page of a `.ncu-rep` as the native reader rebuilds it — the
//! CSV `ncu --import R --csv --page raw --print-units base` prints — so the
//! two can be compared with `cmp` on a machine that has ncu, and timed.
//!
//! ```sh
//! cargo build --release --example ncu_rep_raw
//! target/release/examples/ncu_rep_raw R.ncu-rep > native.csv
//! ncu --import R.ncu-rep --csv --page raw --print-units base > ncu.csv
//! cmp native.csv ncu.csv
//! ```

use ncugate::parse::ncu_rep::{container, raw_page};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: ncu_rep_raw REPORT.ncu-rep");
        return ExitCode::from(2);
    };
    let data = match std::fs::read(&path) {
        Ok(data) => data,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", path.to_string_lossy());
            return ExitCode::from(2);
        }
    };
    match container::read(&data) {
        Ok(report) => {
            let csv = raw_page(&report).to_csv();
            if std::io::stdout().write_all(&csv).is_err() {
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
