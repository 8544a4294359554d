//! The three exit codes of ncugate, defined once.
//!
//! A regression is a verdict, not an error: it has its own code so that a CI
//! stage can tell "the code got slower" from "the gate could not decide".

/// Every gated kernel and rule passed (warnings and improvements allowed).
pub const PASS: i32 = 0;
/// At least one rule or structural check with severity `fail` regressed.
pub(crate) const REGRESSION: i32 = 1;
/// The gate could not decide: bad or missing input, missing metric, no kernels,
/// unknown baseline schema, device mismatch, bad thresholds, I/O failure, or
/// the run was interrupted (SIGINT, SIGTERM: not 128+N, so that a CI step that
/// maps 0/1/2 sees "no verdict" rather than an unknown code).
pub const ERROR: i32 = 2;

/// The exit-code table as shown in `--help` and the README.
pub(crate) const TABLE: &str = "\
Exit codes:
  0  pass: no regression (warnings and improvements allowed)
  1  regression: a rule or structural check with severity \"fail\" failed
  2  error or incomparable: bad/missing input, missing metric, no kernels,
     unknown baseline schema, device mismatch, invalid thresholds,
     interrupted (SIGINT, SIGTERM, SIGHUP, SIGQUIT, …)";

/// The exit codes of `sanitize`, as shown in its `--help`.
pub(crate) const SANITIZE_TABLE: &str = "\
Exit codes:
  0  pass: no finding outside the allow-list (allowed findings warn)
  1  findings: compute-sanitizer reported an error that is not allowed
  2  error: the app or compute-sanitizer could not run, the XML is unreadable
     or truncated, interrupted (SIGINT, SIGTERM, SIGHUP, SIGQUIT, …)";

/// The exit codes of `leaks`, as shown in its `--help`.
pub(crate) const LEAKS_TABLE: &str = "\
Exit codes:
  0  pass: no leaked graph executable, memory within its limits
  1  leak: graph executables alive at exit, or memory growth, peak or live
     graphs beyond their limits (or the history rule)
  2  error: the audit library could not be built or loaded, the app failed,
     interrupted (SIGINT, SIGTERM, SIGHUP, SIGQUIT, …)";

/// The exit codes of `merge`, as shown in its `--help`.
pub(crate) const MERGE_TABLE: &str = "\
Exit codes:
  0  pass: every workload of every shard passed
  1  regression: a workload regressed
  2  error: a workload errored, a shard is missing or unreadable, or the shards
     come from different commits, thresholds or baselines";

/// The exit codes of `baseline record` and `profile`, as shown in their `--help`.
pub(crate) const RECORD_TABLE: &str = "\
Exit codes:
  0  done: every workload recorded (or profiled)
  2  error: the build, ncu or the app failed, an export is unreadable,
     interrupted (SIGINT, SIGTERM, SIGHUP, SIGQUIT, …)";

/// The exit codes of `baseline diff`, as shown in its `--help`: it compares
/// files, and says with its code whether they differ.
pub(crate) const DIFF_TABLE: &str = "\
Exit codes:
  0  the two files are identical
  1  the files differ (whether or not a mean moved outside the noise)
  2  error: a file cannot be read or is not a baseline";
