//! Progress while ncu profiles: an indicatif bar on a terminal, one plain line
//! per profiled kernel in CI (no terminal), driven by ncu's
//! `==PROF== Profiling "name" - N: … - P passes` lines. ncu prints none in CSV
//! mode (fast mode prints the raw page as CSV), so there a terminal shows a
//! spinner with the elapsed time, and the kernels are counted from the CSV.

use super::ncu::parse_progress;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// The progress display of one profiled run.
pub struct Progress {
    bar: Option<ProgressBar>,
    interactive: bool,
    /// Launches expected (from the baseline), for the bar's length.
    expected: Option<u64>,
    /// Kernels profiled so far.
    profiled: u64,
    /// Print nothing (still count).
    quiet: bool,
    /// GitHub Actions: ncu's per-kernel lines go inside a collapsed `::group::` on stdout.
    github: bool,
}

impl Progress {
    /// A bar on a terminal (stderr), plain lines otherwise; `quiet` prints nothing.
    pub fn new(expected: Option<u64>, quiet: bool) -> Progress {
        Progress {
            bar: None,
            interactive: !quiet && std::io::stderr().is_terminal(),
            expected,
            profiled: 0,
            quiet,
            github: false,
        }
    }

    /// GitHub Actions mode: the per-kernel lines in a `::group::` on stdout.
    pub(crate) fn github(mut self, on: bool) -> Progress {
        self.github = on;
        if on {
            self.interactive = false;
        }
        self
    }

    /// Starts the display; `per_kernel`: ncu will print a progress line per kernel.
    pub(crate) fn start(&mut self, command: &str, per_kernel: bool) {
        if self.quiet {
            return;
        }
        crate::text::escape::say(&format!("ncugate: profile: {command}"));
        if self.github {
            // ncugate's own command: only the quoted command is made inert.
            let command = crate::text::escape::shown(command);
            println!("::group::ncu profiling ({command})");
            super::interrupt::log_group(true);
        }
        if self.interactive {
            let expected = self.expected.filter(|_| per_kernel);
            let bar = match expected {
                Some(n) => ProgressBar::new(n),
                None => ProgressBar::new_spinner(),
            };
            let template = match (expected, per_kernel) {
                (Some(_), _) => "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
                (None, true) => "{spinner} [{elapsed_precise}] {pos} kernels {msg}",
                (None, false) => "{spinner} [{elapsed_precise}] ncu is profiling the app",
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            bar.enable_steady_tick(std::time::Duration::from_millis(200));
            self.bar = Some(bar);
        }
    }

    /// Feeds one output line.
    pub(crate) fn line(&mut self, line: &str) {
        let Some(p) = parse_progress(line) else {
            return;
        };
        self.profiled += 1;
        if self.quiet {
            return;
        }
        let passes = p
            .passes
            .map(|n| format!(", {n} passes"))
            .unwrap_or_default();
        match &self.bar {
            Some(bar) => {
                bar.set_position(self.profiled);
                bar.set_message(crate::text::escape::shown(&format!(
                    "{} (#{}{passes})",
                    p.kernel, p.index
                )));
            }
            None if self.github => {
                println!(
                    "{}",
                    crate::text::escape::log_text(
                        &format!("ncugate: profiled {} (#{}{passes})", p.kernel, p.index),
                        false
                    )
                )
            }
            None => crate::text::escape::say(&format!(
                "ncugate: profiled {} (#{}{passes})",
                p.kernel, p.index
            )),
        }
    }

    #[cfg(test)]
    /// Kernel launches profiled so far (from ncu's progress lines).
    pub(crate) fn profiled(&self) -> u64 {
        self.profiled
    }

    pub(crate) fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        if !self.quiet {
            if self.github {
                println!("::endgroup::");
                super::interrupt::log_group(false);
            }
            if self.profiled > 0 {
                crate::text::escape::say(&format!(
                    "ncugate: ncu profiled {} kernel launches",
                    self.profiled
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Progress;

    #[test]
    fn a_quiet_run_prints_nothing_and_still_counts() {
        let log = include_str!("../../fixtures/h200/graph_app.base.full.ncu.log");
        for quiet in [true, false] {
            let mut progress = Progress::new(None, quiet);
            log.lines().for_each(|l| progress.line(l));
            progress.finish();
            assert_eq!(progress.profiled(), 9, "quiet: {quiet}");
        }
    }
}
