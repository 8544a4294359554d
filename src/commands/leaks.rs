//! `ncugate leaks`: the graph-memory gate ([`crate::memory::run`]).

use crate::config::LeaksConfig;
use crate::format::shell_words;
use crate::gated::{Gated, conclude};
use crate::runner::process::ProcessRunner;
use crate::verdict::{Report, Subject};

/// `ncugate leaks`: a report whose subject is the app.
pub fn leaks(config: &LeaksConfig, processes: &dyn ProcessRunner) -> Gated<Report> {
    let subject = Subject::Memory {
        app: shell_words(&config.runner.app),
    };
    let mut report = Report::about(subject.clone(), Vec::new());
    let result = crate::memory::run::run(&config.audit(), processes).map(|found| {
        report.memory = found.memory;
        report.note_each(found.notes);
        report
    });
    conclude(result, Vec::new(), subject)
}
