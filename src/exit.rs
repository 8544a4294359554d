//! The three exit codes of ncugate, defined once.
//!
//! A regression is a verdict, not an error: it has its own code so that a CI
//! stage can tell "the code got slower" from "the gate could not decide".

/// Every gated kernel and rule passed (warnings and improvements allowed).
pub const PASS: i32 = 0;
/// At least one rule or structural check with severity `fail` regressed.
pub const REGRESSION: i32 = 1;
/// The gate could not decide: bad or missing input, missing metric, no kernels,
/// unknown baseline schema, device mismatch, bad thresholds, I/O failure, or
/// the run was interrupted (SIGINT, SIGTERM: not 128+N, so that a CI step that
/// maps 0/1/2 sees "no verdict" rather than an unknown code).
pub const ERROR: i32 = 2;

/// The exit-code table as shown in `--help` and the README.
pub const TABLE: &str = "\
Exit codes:
  0  pass: no regression (warnings and improvements allowed)
  1  regression: a rule or structural check with severity \"fail\" failed
  2  error or incomparable: bad/missing input, missing metric, no kernels,
     unknown baseline schema, device mismatch, invalid thresholds,
     interrupted (SIGINT, SIGTERM, SIGHUP, SIGUSR1/2)";
