//! The explain stage of a check: for the worst failing kernels (or every
//! kernel, or none, as `--explain` says), the source lines whose counters
//! changed most since the baseline's source profile, in the *why* of their
//! failing rules — from the source pages given, or from one extra ncu run per
//! kernel within a time budget. It only adds words: whatever it finds or
//! misses, the verdict stays; what it could not do is a note. (Reading and
//! matching source profiles is [`crate::explain`].)

pub(super) mod choose;

use crate::baseline::Baseline;
use crate::config::{CheckConfig, Source};
use crate::explain::ExplainMode;
use crate::model::{KernelKeyMode, Run};
use crate::runner::process::ProcessRunner;
use crate::runner::{self, RunnerConfig};
use crate::verdict::Report;
use std::path::PathBuf;

/// The explain stage: the chosen kernels' source lines, from the source
/// pages given or, when ncugate profiles, from one extra ncu run per kernel
/// (within the time budget); what it cannot do is a note, never another
/// verdict.
pub(super) fn stage(
    report: &mut Report,
    baseline: &Baseline,
    runs: &[Run],
    config: &CheckConfig,
    processes: &dyn ProcessRunner,
) {
    use choose::{attach, chosen, pick_launch};
    let explain = &config.explain;
    let kernels = chosen(report, explain.mode, explain.kernels);
    if kernels.is_empty() {
        return;
    }
    let budget = Budget::new(explain.budget);
    let (profiles, mut notes) = match (&config.source, explain.pages.is_empty()) {
        (Source::Profile { runner, .. }, true) => {
            let seen: &Report = report;
            let pick = |k: &str| Some(pick_launch(seen, baseline, runs, k));
            profile_sources(&kernels, &pick, baseline, runner, budget, processes)
        }
        (_, true) => {
            // Nothing to explain with: said only when every kernel was asked for.
            if explain.mode == ExplainMode::Always {
                report.note(format!(
                    "explain: no source pages given (--source-page) for {}",
                    crate::format::count(kernels.len(), "kernel", "kernels")
                ));
            }
            return;
        }
        (_, false) => read_source_pages(&explain.pages, baseline.kernel_key, budget),
    };
    notes.extend(attach(report, baseline, &profiles, &kernels, budget));
    report.note_each(notes);
}

/// The time budget of one explain step (`--explain-budget`), counted from
/// its start: every part of it (reading the pages, each ncu run, matching
/// each kernel's lines) starts only while some is left, so a step that
/// overruns it is one page, run or kernel at most.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    start: std::time::Instant,
    seconds: f64,
}

impl Budget {
    pub(crate) fn new(seconds: f64) -> Budget {
        Budget {
            start: std::time::Instant::now(),
            seconds,
        }
    }

    /// No limit (`baseline record`, which has no budget).
    pub(crate) fn unbounded() -> Budget {
        Budget::new(f64::MAX)
    }

    pub(crate) fn spent(&self) -> bool {
        self.start.elapsed().as_secs_f64() >= self.seconds
    }

    /// The note of `what` (`2 kernels not explained`) left out when spent.
    pub(crate) fn note(&self, what: &str) -> String {
        format!(
            "explain: the time budget ({:.0} s, --explain-budget) was spent: {what}",
            self.seconds
        )
    }
}

/// The source pages given, read as source profiles; a page that does not
/// read is a note (the profiles only add words to a report).
pub(crate) fn read_source_pages(
    pages: &[PathBuf],
    key_mode: KernelKeyMode,
    budget: Budget,
) -> (Vec<crate::explain::SourceProfile>, Vec<String>) {
    let mut profiles = Vec::new();
    let mut notes = Vec::new();
    for (i, path) in pages.iter().enumerate() {
        if budget.spent() {
            let left = crate::format::count(pages.len() - i, "source page", "source pages");
            notes.push(budget.note(&format!("{left} not read")));
            break;
        }
        let read = crate::io::bounded::read_io(path)
            .map_err(|e| e.to_string())
            .and_then(|data| crate::explain::page::read_source_page(&data, key_mode));
        match read {
            Ok(p) if p.kernel.is_empty() => notes.push(format!(
                "{}: no line information and no instructions (build with -lineinfo to see source lines)",
                path.display()
            )),
            Ok(p) => profiles.push(p),
            Err(e) => notes.push(format!("{}: not read: {e}", path.display())),
        }
    }
    (profiles, notes)
}

/// One explain run per kernel, the worst first, until `budget` seconds are
/// spent; the cost is a note.
/// Profiles each kernel's source counters once: the launch `pick` chooses
/// (`None`: its first, as `baseline record` does).
pub(super) fn profile_sources(
    kernels: &[String],
    pick: &dyn Fn(&str) -> Option<choose::Pick>,
    baseline: &Baseline,
    runner: &RunnerConfig,
    budget: Budget,
    processes: &dyn ProcessRunner,
) -> (Vec<crate::explain::SourceProfile>, Vec<String>) {
    let start = std::time::Instant::now();
    let mut profiles = Vec::new();
    let mut notes = Vec::new();
    let mut runs = 0;
    for (i, kernel) in kernels.iter().enumerate() {
        if budget.spent() {
            let left = crate::format::count(kernels.len() - i, "kernel", "kernels");
            notes.push(budget.note(&format!("{left} not explained")));
            break;
        }
        let function = crate::kernel_key::kernel_key(kernel, KernelKeyMode::Function);
        runs += 1;
        let chosen = pick(kernel);
        let launch = chosen.map_or(runner::explain::Launch::FIRST, |p| {
            runner::explain::Launch {
                ordinal: p.ordinal,
                position: p.position,
            }
        });
        let page = runner::explain::source_page(
            runner,
            &function,
            launch,
            &format!("explain-{}", i + 1),
            processes,
        )
        .and_then(|data| crate::explain::page::read_source_page(&data, baseline.kernel_key));
        match page {
            Ok(mut p) => {
                // The page names the kernel as ncu does; it was asked for this one.
                p.kernel.clone_from(kernel);
                p.launch = chosen.map(|c| crate::explain::ProfiledLaunch {
                    index: c.index,
                    of: c.of,
                    skip: runner::explain::selection(runner, &function, launch).1,
                });
                profiles.push(p);
            }
            Err(e) => notes.push(format!("explain: {kernel}: {e}")),
        }
    }
    notes.push(format!(
        "explained {} in {:.1} s, {}",
        crate::format::count(profiles.len(), "kernel", "kernels"),
        start.elapsed().as_secs_f64(),
        crate::format::count(runs, "extra ncu run", "extra ncu runs")
    ));
    (profiles, notes)
}
