//! `ncugate sanitize`: run compute-sanitizer (or read saved XML) and gate the
//! findings; the stage itself is [`crate::sanitizer::run::run_all`].

use crate::config::SanitizeConfig;
use crate::format::shell_words;
use crate::gated::{Gated, conclude};
use crate::runner::{self, process::ProcessRunner};
use crate::verdict::{Report, Subject};

/// `ncugate sanitize`: a report whose subject is the tools and the app.
pub fn sanitize(config: &SanitizeConfig, processes: &dyn ProcessRunner) -> Gated<Report> {
    let running = config.xml.is_empty();
    let inputs: Vec<String> = config
        .xml
        .iter()
        .map(|(p, _)| p.display().to_string())
        .collect();
    let mut tools: Vec<String> = if running {
        config
            .sanitizer
            .tools
            .iter()
            .map(|t| t.to_string())
            .collect()
    } else {
        config
            .xml
            .iter()
            .map(|(_, tool)| tool.to_string())
            .collect()
    };
    tools.dedup();
    let subject = Subject::Sanitizer {
        tools,
        app: running.then(|| shell_words(&config.sanitizer.app)),
    };
    let mut report = Report::about(subject.clone(), inputs.clone());
    let result = if running {
        runner::build(&config.runner, processes)
            .and_then(|()| crate::sanitizer::run::run_all(&config.sanitizer, processes))
            .map(|ran| {
                report.note_each(ran.notes);
                report.sanitizer.extend(ran.findings);
            })
    } else {
        config.xml.iter().try_for_each(|(path, tool)| {
            let (findings, records) =
                crate::sanitizer::read_xml(path, *tool, &config.sanitizer.allow)?;
            report.note(format!(
                "{tool}: {} in {} grouped into {}",
                crate::format::count(records, "record", "records"),
                path.display(),
                crate::format::count(findings.len(), "finding", "findings")
            ));
            report.sanitizer.extend(findings);
            Ok(())
        })
    };
    conclude(result.map(|()| report), inputs, subject)
}
