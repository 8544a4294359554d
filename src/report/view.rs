//! The report view: everything a reporter shows, decided once from a
//! [`Report`] — the outcome's words, the counts, what was gated, and the
//! results of every gate as [`Section`]s of [`Check`] rows: each kernel's
//! rules, structural checks and new ncu findings, the whole run's rules,
//! each compute-sanitizer tool's findings, the graph-memory checks. A
//! section has its title, its worst status and its rows in the order to show
//! them; a row has its words and cells already written. Every format
//! (terminal, Markdown, JUnit, GitHub, HTML, JSON) renders a [`View`] by
//! looping over its sections; none of them derives a word, a title or an
//! order from the report on its own, so they cannot disagree. A new gate is
//! a [`Subject`] variant and one function in `gates.rs` that makes its
//! sections.

mod gates;
mod rows;
mod section;

pub(crate) use section::{Cells, Check, Finding, Kind, Listed, STACK_FRAMES, Section, SectionKind};

use crate::status::{Outcome, Status};
use crate::verdict::{self, Counts, Devices, Report};

/// The label of the whole run where a kernel name would go.
pub(crate) const TOTAL: &str = "(total)";

/// Kernel key for display: the key, or `(total)` for the whole run.
pub fn scope_name(kernel: Option<&str>) -> &str {
    kernel.unwrap_or(TOTAL)
}

/// One report as every reporter shows it.
#[derive(Debug, Clone)]
pub struct View<'r> {
    /// The model itself, for the JSON report (which serializes it whole).
    pub(crate) report: &'r Report,
    /// What was gated, with what only that gate has (the metric gate's baseline and thresholds).
    pub(crate) subject: Subject<'r>,
    pub(crate) outcome: Outcome,
    pub(crate) exit_code: i32,
    pub(crate) counts: Counts,
    /// What was gated, `(label, value)` in the order every reporter shows them.
    pub(crate) header: Vec<(&'static str, String)>,
    /// Errors that made the outcome `error`, each `message (hint: …)`.
    pub(crate) errors: &'r [String],
    /// The GPU fingerprint check: passed, or a mismatch that was allowed.
    pub(crate) device: Option<DeviceNote>,
    /// Every gate's results: each kernel by name, the whole run, each
    /// compute-sanitizer tool, the graph memory — in the order to show them.
    pub(crate) sections: Vec<Section<'r>>,
    /// Things a reader should know that are not checks.
    pub(crate) notes: &'r [crate::note::Note],
    /// The ncugate version that wrote the report.
    pub(crate) version: &'r str,
}

/// What a report gated, as the view shows it.
#[derive(Debug, Clone)]
pub(crate) enum Subject<'r> {
    /// ncu metrics against a baseline under threshold rules.
    Metrics {
        /// The baseline file, when there was one.
        baseline: Option<&'r str>,
        thresholds: Thresholds<'r>,
        devices: Option<&'r Devices>,
    },
    /// compute-sanitizer tools on an app, or saved XML.
    Sanitizer {
        tools: &'r [String],
        app: Option<&'r str>,
    },
    /// The CUDA-graph memory audit of an app.
    Memory { app: &'r str },
}

/// Where the metric gate's threshold rules came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Thresholds<'r> {
    /// ncugate's own rules (`thresholds/default.toml (built in)`).
    BuiltIn(&'r str),
    /// A file the user named: annotations can point into it.
    File(&'r str),
}

impl<'r> Thresholds<'r> {
    /// The source as the report records it: a path, or the built-in rules' name.
    pub(crate) fn of(source: &'r str) -> Thresholds<'r> {
        if source.ends_with(" (built in)") {
            Thresholds::BuiltIn(source)
        } else {
            Thresholds::File(source)
        }
    }

    /// The words every reporter shows.
    pub(crate) fn as_str(&self) -> &'r str {
        match *self {
            Thresholds::BuiltIn(s) | Thresholds::File(s) => s,
        }
    }
}

/// The device fingerprint: what the JUnit report names in a property.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DeviceNote {
    pub(crate) status: Status,
    pub(crate) message: String,
}

impl<'r> View<'r> {
    /// The view of `report`: every section, cell and word, in one pass over its results.
    pub fn new(report: &'r Report) -> View<'r> {
        let subject = subject(report);
        let mut sections = gates::metrics(report);
        sections.extend(gates::sanitizer(&report.sanitizer));
        sections.extend(gates::memory(&report.memory));
        View {
            report,
            header: rows::header(report, &subject),
            device: device(&subject),
            subject,
            outcome: report.outcome(),
            exit_code: report.exit_code(),
            counts: report.counts(),
            errors: &report.errors,
            sections,
            notes: &report.notes,
            version: &report.ncugate_version,
        }
    }

    /// The outcome in lower case: `pass`, `regression`, `error`.
    pub(crate) fn outcome_word(&self) -> &'static str {
        self.outcome.as_str()
    }

    /// The outcome as a headline shouts it, in the gate's word: `PASS`,
    /// `ERROR`, and for a failure `REGRESSION` (metrics), `FINDINGS`
    /// (compute-sanitizer), `LEAK` (graph memory). The exit code is the same 1.
    pub(crate) fn outcome_title(&self) -> &'static str {
        match (self.outcome, &self.subject) {
            (Outcome::Regression, Subject::Sanitizer { .. }) => "FINDINGS",
            (Outcome::Regression, Subject::Memory { .. }) => "LEAK",
            (outcome, _) => outcome.title(),
        }
    }

    /// The outcome's word with what a degraded check adds: `PASS (degraded:
    /// performance counters locked — launch structure only, 14 metric checks
    /// not gated)`; the word alone for any other check.
    pub(crate) fn outcome_label(&self) -> String {
        format!("{}{}", self.outcome_title(), self.counts.degraded_words())
    }

    /// The counts in words (`6 failed, 1 warning, 17 passed`), joined by `sep`.
    pub(crate) fn counts_text(&self, sep: &str) -> String {
        self.counts.words().join(sep)
    }

    /// Every measured check (rules and structural checks), section by section.
    pub(crate) fn measured(&self) -> impl Iterator<Item = (&Check<'r>, &Cells<'r>)> {
        self.sections.iter().flat_map(Section::measured)
    }

    /// The kernels whose worst status needs attention, by name.
    pub(crate) fn failing_kernels(&self) -> impl Iterator<Item = &Section<'r>> {
        self.sections
            .iter()
            .filter(|s| s.is_kernel() && s.status.needs_attention())
    }

    /// The whole run's section, when a rule gates it.
    pub(crate) fn total(&self) -> Option<&Section<'r>> {
        self.sections.iter().find(|s| s.kind == SectionKind::Total)
    }

    /// The whole-run rules that need attention.
    pub(crate) fn failing_total(&self) -> Vec<&Check<'r>> {
        self.total()
            .map(|t| t.checks.iter().filter(|c| c.needs_attention()).collect())
            .unwrap_or_default()
    }

    /// New findings of kernels that passed every check, by kernel name: still worth a look.
    pub(crate) fn findings_elsewhere(&self) -> Vec<(&Check<'r>, &Finding<'r>)> {
        self.sections
            .iter()
            .filter(|s| s.is_kernel() && !s.status.needs_attention())
            .flat_map(Section::findings)
            .collect()
    }

    /// The list sections of other gates (compute-sanitizer, graph memory), in order.
    pub(crate) fn lists(&self) -> impl Iterator<Item = &Section<'r>> {
        self.sections.iter().filter(|s| s.kind == SectionKind::List)
    }

    /// Where a rule is written, for the why line: `thresholds line 42`, or for
    /// the rules built into ncugate (the user has no such file)
    /// `built-in rule 3`, which `ncugate init --print-thresholds` numbers.
    pub(crate) fn rule_place(&self, line: usize) -> String {
        match self.subject {
            Subject::Metrics {
                thresholds: Thresholds::BuiltIn(_),
                ..
            } => crate::rules::builtin_rule_number(line).map_or_else(
                || format!("built-in thresholds line {line}"),
                |n| format!("built-in rule {n}"),
            ),
            _ => format!("thresholds line {line}"),
        }
    }

    /// The thresholds file annotations can point into, for the metric gate.
    pub(crate) fn thresholds_file(&self) -> Option<&'r str> {
        match self.subject {
            Subject::Metrics {
                thresholds: Thresholds::File(path),
                ..
            } => Some(path),
            _ => None,
        }
    }

    /// The one reason a suite's status line gives for this workload: its
    /// first error, else its worst check (first in order among equals) as
    /// `<kernel>: <what>` — `scale<0>: launched 6 times per run, baseline 3`,
    /// `(total): sm__inst_executed (sum) +41.7%, allowed +20.0%`. `None` when
    /// nothing needs attention.
    pub(crate) fn top_reason(&self) -> Option<String> {
        if let Some(error) = self.errors.first() {
            return Some(error.lines().next().unwrap_or_default().to_string());
        }
        let worst = self
            .sections
            .iter()
            .flat_map(|s| s.checks.iter().map(move |c| (s, c)))
            .filter(|(_, c)| c.needs_attention())
            .min_by_key(|(_, c)| rank(c.status))?;
        let (section, check) = worst;
        let scope = match section.kind {
            SectionKind::Kernel => short_kernel(&section.title).to_string(),
            SectionKind::Total => TOTAL.to_string(),
            SectionKind::List => check
                .listed()
                .map_or(section.title.clone(), |l| l.label.to_string()),
        };
        let what = match &check.kind {
            Kind::Measured(cells @ Cells { rule: Some(r), .. }) if !cells.change().is_empty() => {
                // The metric alone: the roll-up in `(sum)` tells little here.
                let name: &str = match r.rule.starts_with(&*r.metric) {
                    true => &r.metric,
                    false => &r.rule,
                };
                let (change, allowance) = (cells.change(), cells.allowance());
                match allowance.is_empty() {
                    true => format!("{name} {change}"),
                    false => format!("{name} {change} (allowed {allowance})"),
                }
            }
            // A structural check's message says it all before its explanation.
            Kind::Measured(_) => check
                .message
                .split_once(": ")
                .map_or(check.message.to_string(), |(head, _)| head.to_string()),
            Kind::Finding(_) => check.name.to_string(),
            Kind::Listed(_) => check.message.to_string(),
        };
        Some(format!("{scope}: {what}"))
    }

    /// The number of failed checks: GitHub's `regressions` output.
    pub(crate) fn regressions(&self) -> usize {
        self.counts.fail
    }
}

/// A kernel's key as a short label: its name without the return type and
/// the parameter list (`void scale<0>(const float *, …)` → `scale<0>`); a
/// key without a parameter list stays whole.
pub(crate) fn short_kernel(key: &str) -> &str {
    let name = match key.find('(') {
        Some(0) | None => key,
        Some(i) => &key[..i],
    };
    let name = name.trim_end();
    // The return type is the words before the last space outside template arguments.
    let mut depth = 0usize;
    let mut start = 0;
    for (i, ch) in name.char_indices() {
        match ch {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            ' ' if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    match &name[start..] {
        "" => key,
        short => short,
    }
}

/// The outcome's emoji on a summary page.
pub(crate) fn outcome_emoji(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "✅",
        Outcome::Regression => "❌",
        Outcome::Error => "⚠️",
    }
}

/// Sort key: what needs attention first.
pub(crate) fn rank(status: Status) -> u8 {
    match status {
        Status::Error => 0,
        Status::Fail => 1,
        Status::Warn => 2,
        Status::Improved => 3,
        Status::Changed => 4,
        Status::Pass => 5,
        Status::Skipped => 6,
    }
}

/// The report's subject with the metric gate's own fields, which only the metric gate has.
fn subject(report: &Report) -> Subject<'_> {
    match &report.subject {
        verdict::Subject::Metrics => Subject::Metrics {
            baseline: (!report.baseline.is_empty()).then_some(report.baseline.as_str()),
            thresholds: Thresholds::of(&report.thresholds),
            devices: report.devices.as_ref(),
        },
        verdict::Subject::Sanitizer { tools, app } => Subject::Sanitizer {
            tools,
            app: app.as_deref(),
        },
        verdict::Subject::Memory { app } => Subject::Memory { app },
    }
}

/// The device fingerprint: the GPU, or the allowed mismatch (a warning).
fn device(subject: &Subject<'_>) -> Option<DeviceNote> {
    let Subject::Metrics {
        devices: Some(d), ..
    } = subject
    else {
        return None;
    };
    Some(if d.mismatch_allowed {
        DeviceNote {
            status: Status::Warn,
            message: format!(
                "device mismatch allowed: baseline {}, current {}",
                d.baseline, d.current
            ),
        }
    } else {
        DeviceNote {
            status: Status::Pass,
            message: d.current.clone(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::short_kernel;

    #[test]
    fn a_short_kernel_name_drops_the_return_type_and_the_parameters() {
        assert_eq!(
            short_kernel("void scale<0>(const float *, float *, long, int)"),
            "scale<0>"
        );
        assert_eq!(short_kernel("produce(float *, long)"), "produce");
        assert_eq!(
            short_kernel("void pair<std::pair<int, int>>(int)"),
            "pair<std::pair<int, int>>"
        );
        assert_eq!(short_kernel("scale"), "scale");
        assert_eq!(short_kernel("(total)"), "(total)");
    }
}
