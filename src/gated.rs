//! What every command returns: a value — a gate's report, a [`Text`] — or a
//! [`Failed`] (the error, with the error report a gate still writes); and the
//! one way anything reaches standard output ([`Text::show`], [`print_stdout`],
//! [`print_error`]), which tests can capture ([`capture_stdout`]).

use crate::error::{Error, Result};
use crate::note::Note;
use crate::status::Outcome;
use crate::verdict::{Report, Subject};

/// A command that could not decide (exit 2): the error to print, and for a
/// gate the error report that still goes wherever reports go.
#[derive(Debug)]
pub struct Failed {
    pub(crate) error: Error,
    pub(crate) report: Option<Box<Report>>,
}

impl Failed {
    /// The error of a gate, with the error report to write.
    pub(crate) fn with_report(error: Error, report: Report) -> Failed {
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
    /// Notes, warnings and their hints for standard error, shown first,
    /// each worded by its kind (`ncugate: note: …`, `hint: …`).
    pub notes: Vec<Note>,
    pub(crate) stdout: String,
    pub(crate) outcome: Outcome,
}

impl Text {
    /// Text of a command that did what it was asked.
    pub(crate) fn pass(stdout: String) -> Text {
        Text {
            notes: Vec::new(),
            stdout,
            outcome: Outcome::Pass,
        }
    }

    /// Shows the text: the notes, then standard output. False when standard
    /// output could not be written (the error is said).
    pub(crate) fn show(&self) -> bool {
        for note in &self.notes {
            crate::text::escape::say(&note.line());
        }
        print_stdout(&self.stdout)
    }
}

/// The end of `sanitize` and `leaks`: the finished report, or the error
/// with an error report about the same subject.
pub(crate) fn conclude(
    result: Result<Report>,
    inputs: Vec<String>,
    subject: Subject,
) -> Gated<Report> {
    match result {
        Ok(report) => Ok(report),
        Err(error) => {
            let mut report = Report::about(subject, inputs);
            report.errors.push(error.report_line());
            Err(Failed::with_report(error, report))
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
pub(crate) fn print_stdout(text: &str) -> bool {
    use std::io::Write;
    let captured = CAPTURED.with_borrow_mut(|captured| {
        captured
            .as_mut()
            .map(|buf| buf.extend_from_slice(crate::text::escape::log_text(text, true).as_bytes()))
    });
    if captured.is_some() {
        return true;
    }
    let text = crate::text::escape::log_text(text, true);
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

/// Prints a usage error of the command line (clap's own, or ncugate's word
/// on a misplaced flag) through the border every line passes: it quotes the
/// arguments as given, and a workflow may build them from any input.
pub fn print_usage_error(text: &str) {
    eprint!("{}", crate::text::escape::log_text(text, true));
}

/// Prints clap's error (an unknown argument, a missing value) through
/// [`print_usage_error`], coloured as clap would colour it on a terminal.
pub fn print_clap_error(error: &clap::Error) {
    use std::io::IsTerminal;
    let rendered = error.render();
    let text = if std::io::stderr().is_terminal() {
        rendered.ansi().to_string()
    } else {
        rendered.to_string()
    };
    print_usage_error(&text);
}

/// Prints an expected failure once: `ncugate: error: …`, its detail (toml's
/// report, a command's output) indented below, and its `hint:`.
pub fn print_error(error: &Error) {
    eprint!("{}", error.printed());
}
