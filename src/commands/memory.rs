//! `ncugate sanitize` and `ncugate leaks`, and the sanitizer stage that
//! `check` runs when `ncugate.toml` has a `[sanitizer]` section.

use super::*;

/// `ncugate sanitize`: run compute-sanitizer (or read saved XML), gate the findings.
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
            .and_then(|()| sanitizer_stage(&mut report, &config.sanitizer, processes))
    } else {
        config.xml.iter().try_for_each(|(path, tool)| {
            let (findings, records) =
                crate::sanitizer::read_xml(path, *tool, &config.sanitizer.allow)?;
            report.notes.push(format!(
                "{tool}: {records} records in {} grouped into {} findings",
                path.display(),
                findings.len()
            ));
            report.sanitizer.extend(findings);
            Ok(())
        })
    };
    conclude(result.map(|()| report), inputs, subject)
}

/// Runs every configured sanitizer tool on the app; findings and notes go into `report`.
pub(super) fn sanitizer_stage(
    report: &mut Report,
    config: &SanitizerConfig,
    processes: &dyn ProcessRunner,
) -> Result<()> {
    for &tool in &config.tools {
        let run = crate::sanitizer::run::run_tool(config, tool, processes)?;
        let reported = match run.reported {
            Some(n) if n > run.records => format!(
                "; compute-sanitizer counted {n} errors, {} beyond --print-limit are not in the XML",
                n - run.records
            ),
            _ => String::new(),
        };
        report.notes.push(format!(
            "{tool}: {} records in {} grouped into {} findings{reported}",
            run.records,
            run.xml.display(),
            run.findings.len()
        ));
        if let Some(note) = run.note {
            report.notes.push(note);
        }
        report.sanitizer.extend(run.findings);
    }
    Ok(())
}

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

/// The end of `sanitize` and `leaks`: the finished report, or the error
/// with an error report about the same subject.
fn conclude(result: Result<Report>, inputs: Vec<String>, subject: Subject) -> Gated<Report> {
    match result {
        Ok(mut report) => {
            report.finish();
            Ok(report)
        }
        Err(error) => {
            let mut report = Report::about(subject, inputs);
            report.errors.push(error.report_line());
            report.finish();
            Err(Failed::with_report(error, report))
        }
    }
}
