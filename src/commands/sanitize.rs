//! `ncugate sanitize`, and the sanitizer stage that `check` runs when
//! `ncugate.toml` has a `[sanitizer]` section.

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
            "{tool}: {} in {} grouped into {}{reported}",
            crate::format::count(run.records, "record", "records"),
            run.xml.display(),
            crate::format::count(run.findings.len(), "finding", "findings")
        ));
        if let Some(note) = run.note {
            report.notes.push(note);
        }
        report.sanitizer.extend(run.findings);
    }
    Ok(())
}
