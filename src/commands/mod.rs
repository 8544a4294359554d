//! The subcommands, each a function of its config (and a [`crate::runner::process::ProcessRunner`]
//! for those that run processes) that returns a value — a report, a suite
//! run, a [`Text`] — or a [`Failed`]. A command only wires its config to a
//! gate: the metric gate is [`crate::metrics`], the sanitizer gate
//! [`crate::sanitizer`], the graph-memory gate [`crate::memory`], suites
//! [`crate::metrics::suite`], the history [`crate::history::command`].
//! [`execute()`] (`execute.rs`) shows the value and takes the exit code from
//! it, in one place.

mod diff;
mod execute;
mod leaks;
mod sanitize;

pub use crate::gated::{
    Failed, Gated, Text, capture_stdout, print_clap_error, print_error, print_usage_error,
};
pub use crate::history::command::history;
pub use crate::metrics::suite::{SuiteRun, merge, suite};
pub use crate::metrics::{check, profile, record};
pub use diff::diff;
pub use execute::execute;
pub use leaks::leaks;
pub use sanitize::sanitize;
