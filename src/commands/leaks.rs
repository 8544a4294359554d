//! `ncugate leaks`: the graph-memory gate.

use super::*;

/// `ncugate leaks`: the graph-memory gate.
pub fn leaks(config: &crate::config::LeaksConfig, processes: &dyn ProcessRunner) -> Gated<Report> {
    let subject = Subject::Memory {
        app: shell_words(&config.runner.app),
    };
    let mut report = Report::about(subject.clone(), Vec::new());
    let result = crate::memory::run::run(&config.audit(), processes).map(|found| {
        report.memory = found.memory;
        report.notes.extend(found.notes);
        report
    });
    conclude(result, Vec::new(), subject)
}
