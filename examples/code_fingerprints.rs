//! Prints each kernel's code as `baseline record` stores it — fingerprint,
//! static instructions, launch configurations — read natively from the
//! cubins a `.ncu-rep` embeds, and how long the reading took.
//!
//! ```sh
//! cargo run --release --example code_fingerprints R.ncu-rep
//! ```

use ncugate::model::KernelKeyMode;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: code_fingerprints REPORT.ncu-rep");
        return ExitCode::from(2);
    };
    let start = Instant::now();
    let Some(codes) = ncugate::code::of_report(path.as_ref(), KernelKeyMode::Demangled) else {
        eprintln!(
            "error: {} is not a report this reader knows",
            path.to_string_lossy()
        );
        return ExitCode::from(2);
    };
    let took = start.elapsed();
    for (kernel, code) in &codes {
        println!(
            "{}  {:>6} instructions  {}  {}",
            code.fingerprint,
            code.instructions,
            code.launch.join(" | "),
            kernel.escape_debug()
        );
    }
    eprintln!(
        "{} kernels in {:.1} ms",
        codes.len(),
        took.as_secs_f64() * 1e3
    );
    ExitCode::SUCCESS
}
