//! Where every command ends. A command returns a value — a gate's
//! [`Report`], a suite run, a [`Text`] — or a [`Failed`]; it prints nothing
//! but progress on standard error. [`execute`] runs the command that the
//! config names, then, in this one place, writes the file reports, prints
//! the terminal view and the error lines, and takes the exit code from the
//! value's [`Outcome`].

use super::{check, diff, history, leaks, merge, profile, record, sanitize, suite};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::gated::{Failed, Gated, Text, print_error, print_stdout};
use crate::metrics::suite::SuiteRun;
use crate::report::{self, terminal};
use crate::runner::process::ProcessRunner;
use crate::status::Outcome;
use crate::suite::{SuiteReport, render};
use crate::verdict::Report;

/// Runs the command `config` names with `processes`, shows its value and
/// returns the exit code: 0 pass, 1 regression, 2 error ([`crate::exit`]).
pub fn execute(config: &Config, processes: &dyn ProcessRunner) -> i32 {
    let outcome = match config {
        Config::Check(c) => gate(check(c, processes), &c.outputs, &c.style),
        Config::Record(c) => text(record(c, processes)),
        Config::Diff {
            old,
            new,
            file_diff,
        } => text(diff(old, new, *file_diff)),
        Config::Profile(c) => text(profile(c, processes)),
        Config::Sanitize(c) => gate(sanitize(c, processes), &c.outputs, &c.style),
        Config::Leaks(c) => gate(leaks(c, processes), &c.outputs, &c.style),
        Config::Suite(c) => match suite(c, processes) {
            Ok(SuiteRun::Checked(report, failed)) => {
                let streamed = render::terminal_after_status_lines(&report, &c.style);
                suite_report(&report, streamed, &failed, &c.outputs)
            }
            Ok(SuiteRun::Done(said, failed)) => workloads(said, &failed),
            Err(error) => failed(error.into(), &report::Outputs::default()),
        },
        Config::Merge(c) => match merge(c) {
            Ok(report) => {
                let text = render::terminal(&report, &c.style);
                suite_report(&report, text, &[], &c.outputs)
            }
            Err(error) => failed(error.into(), &report::Outputs::default()),
        },
        Config::History(c) => text(history(c, processes)),
        Config::Doctor => {
            let (said, outcome) = crate::doctor::run(&crate::config::default_ncu(), processes);
            text(Ok(Text {
                outcome,
                ..Text::pass(said)
            }))
        }
        Config::PrintThresholds => text(Ok(Text::pass(crate::rules::numbered_builtin()))),
        Config::Completions(shell) => text(Ok(Text::pass(crate::docs::completions(*shell)))),
        Config::Man(dir) => text(crate::docs::man(dir.as_deref()).map(Text::pass)),
        Config::Init(c) => {
            let gpu = crate::doctor::can_profile(&crate::config::default_ncu(), processes);
            match crate::init::run(c, &mut crate::init::Terminal, gpu, processes) {
                Ok(done) => {
                    let said = text(Ok(Text::pass(done.stdout)));
                    done.trial
                        .map_or(said, |e| failed(e.into(), &report::Outputs::default()))
                }
                Err(error) => failed(error.into(), &report::Outputs::default()),
            }
        }
    };
    outcome.exit_code()
}

/// A gate's report: the file reports first (a closed or full standard output
/// must not lose them), then the terminal view, then why rows could not be
/// evaluated.
fn gate(result: Gated<Report>, outputs: &report::Outputs, style: &terminal::Style) -> Outcome {
    let report = match result {
        Ok(report) => report,
        Err(f) => return failed(f, outputs),
    };
    // Escaped once, one document for the files and the terminal.
    let printable = report::printable::escaped(&report);
    let doc = report::Document::check(&printable);
    if let Err(error) = report::write_document(&doc, outputs) {
        print_error(&error);
        return Outcome::Error;
    }
    if !print_stdout(&terminal::document(&doc, style)) {
        return Outcome::Error;
    }
    explain_error_rows(&report);
    report.outcome()
}

/// A suite's report: like a gate's (`text`: its terminal view), then each
/// workload that errored, with why.
fn suite_report(
    report: &SuiteReport,
    text: String,
    failed: &[(String, Error)],
    outputs: &report::Outputs,
) -> Outcome {
    let printable = report::printable::escaped(report);
    let doc = render::document(&printable);
    if let Err(error) = report::write_document(&doc, outputs) {
        print_error(&error);
        return Outcome::Error;
    }
    if !print_stdout(&text) {
        return Outcome::Error;
    }
    for w in &report.workloads {
        if failed.iter().all(|(name, _)| name != &w.name) {
            explain_error_rows(&w.report);
        }
    }
    workload_errors(failed);
    report.outcome()
}

/// A suite recorded or profiled: what it said, then each workload that failed.
fn workloads(said: Text, failed: &[(String, Error)]) -> Outcome {
    let outcome = text(Ok(said));
    workload_errors(failed);
    if failed.is_empty() {
        outcome
    } else {
        Outcome::Error
    }
}

fn workload_errors(failed: &[(String, Error)]) {
    use crate::text::escape::shown;
    for (name, error) in failed {
        let mut text = format!(
            "ncugate: error: workload `{}`: {}\n",
            shown(name),
            shown(&error.to_string())
        );
        for line in error.detail() {
            text.push_str(&format!("  | {}\n", shown(&line)));
        }
        text.push_str(&format!("hint: {}", shown(&error.hint())));
        crate::text::escape::say(&text);
    }
}

/// What a command without a report says.
fn text(result: Result<Text>) -> Outcome {
    match result {
        Ok(said) if said.show() => said.outcome,
        Ok(_) => Outcome::Error,
        Err(error) => failed(error.into(), &report::Outputs::default()),
    }
}

/// A command that could not decide: its error report where the reports go
/// (a failure to write it is said first), then the error.
fn failed(f: Failed, outputs: &report::Outputs) -> Outcome {
    if let Some(report) = &f.report
        && let Err(error) = report::write_all(report, outputs)
    {
        print_error(&error);
    }
    print_error(&f.error);
    Outcome::Error
}

/// After the table: why an exit 2 came from rows that could not be evaluated.
fn explain_error_rows(report: &Report) {
    if report.outcome() == Outcome::Error && report.errors.is_empty() {
        let n = report.counts().error;
        crate::text::escape::say(&format!(
            "ncugate: error: {} could not be evaluated (ERROR rows above)",
            crate::format::count(n, "check", "checks")
        ));
        // A `kernels` filter that matches nothing is a typo to fix: `optional`
        // would hide it and leave the rule gating nothing.
        let filter_typo = report.rules.iter().any(|r| {
            r.status == crate::status::Status::Error
                && r.message.starts_with(crate::compare::NO_KERNEL_MATCHES)
        });
        if filter_typo {
            eprintln!(
                "hint: fix the rule's `kernels` filter in the thresholds file: an exact kernel key from the list above, or `regex:…`"
            );
        } else {
            eprintln!(
                "hint: each ERROR row says what is missing; fix the input or baseline, or mark the rule `optional = true`"
            );
        }
    }
}
