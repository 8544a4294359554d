//! Where every command ends. A command returns a value — a gate's
//! [`Report`], a suite run, a [`Text`] — or a [`Failed`]; it prints nothing
//! but progress on standard error. [`execute`] runs the command that the
//! config names, then, in this one place, writes the file reports, prints
//! the terminal view and the error lines, and takes the exit code from the
//! value's [`Outcome`].

use super::suites::SuiteRun;
use super::*;
use crate::config::Config;
use crate::suite::{SuiteReport, render};

/// A command that could not decide (exit 2): the error to print, and for a
/// gate the error report that still goes wherever reports go.
#[derive(Debug)]
pub struct Failed {
    pub error: Error,
    pub report: Option<Box<Report>>,
}

impl Failed {
    /// The error of a gate, with the error report to write.
    pub fn with_report(error: Error, report: Report) -> Failed {
        Failed {
            error,
            report: Some(Box::new(report)),
        }
    }
}

impl From<Error> for Failed {
    fn from(error: Error) -> Failed {
        Failed {
            error,
            report: None,
        }
    }
}

/// A gate's value, or why it could not decide.
pub type Gated<T> = std::result::Result<T, Failed>;

/// What a command that writes no report says, and the verdict that it
/// carries (`baseline diff` is a regression when the baselines differ).
#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    /// Notes, warnings and their hints for standard error, shown first.
    pub notes: Vec<String>,
    pub stdout: String,
    pub outcome: Outcome,
}

impl Text {
    /// Text of a command that did what it was asked.
    pub fn pass(stdout: String) -> Text {
        Text {
            notes: Vec::new(),
            stdout,
            outcome: Outcome::Pass,
        }
    }

    /// Shows the text: the notes, then standard output. False when standard
    /// output could not be written (the error is said).
    pub(super) fn show(&self) -> bool {
        for note in &self.notes {
            eprintln!("{note}");
        }
        print_stdout(&self.stdout)
    }
}

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
            SuiteRun::Checked(report, failed) => {
                let streamed = render::terminal_after_status_lines(&report, &c.style);
                suite_report(&report, streamed, &failed, &c.outputs)
            }
            SuiteRun::Done(said, failed) => workloads(said, &failed),
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
    if let Err(error) = report::write_all(&report, outputs) {
        print_error(&error);
        return Outcome::Error;
    }
    if !print_stdout(&terminal::render(&report, style)) {
        return Outcome::Error;
    }
    explain_error_rows(&report);
    report.outcome
}

/// A suite's report: like a gate's (`text`: its terminal view), then each
/// workload that errored, with why.
fn suite_report(
    report: &SuiteReport,
    text: String,
    failed: &[(String, Error)],
    outputs: &report::Outputs,
) -> Outcome {
    if let Err(error) = render::write_all(report, outputs) {
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
    report.outcome
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
    for (name, error) in failed {
        eprintln!("ncugate: error: workload `{name}`: {error}");
        for line in error.detail() {
            eprintln!("  | {line}");
        }
        eprintln!("hint: {}", error.hint());
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
    if report.outcome == Outcome::Error && report.errors.is_empty() {
        let n = report.counts().error;
        eprintln!(
            "ncugate: error: {} could not be evaluated (ERROR rows above)",
            crate::format::count(n, "check", "checks")
        );
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

thread_local! {
    /// What this thread's commands write to standard output while
    /// [`capture_stdout`] runs.
    static CAPTURED: std::cell::RefCell<Option<Vec<u8>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` and returns its value with what it wrote to standard output on
/// this thread, which then does not reach the process's standard output.
/// For tests that run commands in their own process: the test harness
/// captures `print!`, not writes to the standard output handle.
pub fn capture_stdout<T>(f: impl FnOnce() -> T) -> (T, String) {
    let outer = CAPTURED.replace(Some(Vec::new()));
    let value = f();
    let captured = CAPTURED.replace(outer).unwrap_or_default();
    (value, String::from_utf8_lossy(&captured).into_owned())
}

/// Writes text to standard output without panicking when stdout is gone: a
/// reader that stopped early (`| head -1`) keeps the verdict's exit code; a
/// full disk or any other failure is exit 2 with one error line (the file
/// reports are already written): false then.
fn print_stdout(text: &str) -> bool {
    use std::io::Write;
    let captured = CAPTURED.with_borrow_mut(|captured| {
        captured
            .as_mut()
            .map(|buf| buf.extend_from_slice(text.as_bytes()))
    });
    if captured.is_some() {
        return true;
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => true,
        Err(e) => {
            print_error(&Error::Write {
                path: "standard output".into(),
                source: e,
            });
            false
        }
    }
}

/// Prints an expected failure once: `ncugate: error: …`, its detail (toml's
/// report, a command's output) indented below, and its `hint:`.
pub fn print_error(error: &Error) {
    eprint!("{}", error.printed());
}
