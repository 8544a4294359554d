//! The integration tests, one binary (building one test binary per file cost a link each).
//! Each module drives the `ncugate` binary or the library on recorded H200 fixtures and real
//! exports from public repositories; `common` holds the shared helpers.

mod common;

mod baseline;
mod bounded_inputs;
mod cli;
mod code;
mod concurrency;
mod cost;
mod dcgm;
mod details_names;
mod error_catalogue;
mod errors;
mod exports;
mod function_length;
mod history;
mod history_changes;
mod hostile_output;
mod hostile_reports;
mod impossible_inputs;
mod impossible_xml;
mod init;
mod interrupt;
mod json_schemas;
mod leaks;
mod locked_counters;
mod mig;
mod module_cycles;
mod msrv;
mod ncu_rep;
mod ncu_repz;
mod never_silent;
mod nvbench;
mod nvtx_exports;
mod oracle;
mod output;
mod public_exports;
mod readme;
mod reference;
mod reports;
mod runner;
mod sanitizer;
mod shared_gpu;
mod skip;
mod suite;
mod tampered_reports;
mod varies;
mod verdicts;
