//! Skipping unchanged workloads, never silently: a suite check computes
//! each workload's input digest (`digest.rs`), looks it up in the verdict
//! cache (`cache.rs`), hashes again the shared libraries the entry's run
//! mapped (`mapped.rs`: those the app opened with `dlopen` too), and on a
//! hit carries the recorded verdict instead of
//! profiling — the workload's report is the recorded one, marked
//! [`Carried`] with the commit and date it came from, and every report
//! format names it. On a miss the line says which part changed; after a
//! completed check (pass or regression, never an error) the entry is
//! written. A carried regression stays a regression: the carried report's
//! checks decide its outcome, as they did when it was measured.
//!
//! Safe by default: off unless `[gate] skip_unchanged` or `--skip-unchanged`
//! asks; `declared` skips only workloads whose inputs are fully known
//! (declared `inputs`, a baseline file); the accepted branches
//! (`[history] branches`, default main) run everything; a verdict older
//! than `skip_max_age` is not carried.

mod cache;
pub(crate) mod digest;
mod hash;
mod libraries;
mod mapped;

pub(crate) use crate::config::skip::Settings;
use crate::config::{CheckConfig, Workload};
use crate::options::skip::SkipUnchanged;
use crate::runner::process::ProcessRunner;
use crate::suite::report::Carried;
use crate::verdict::Report;

/// What to do with one workload.
#[derive(Debug)]
pub(crate) enum Decision {
    /// Carry the recorded report.
    Skip(Carried, Box<Report>),
    /// Profile it; the digest to record after, and the line's reason.
    Run(Option<digest::Digest>, String),
}

/// A suite run's skipping: its settings, the commit and accepted branch it
/// runs on, and what it knows of the machine.
pub(crate) struct Session<'a> {
    settings: &'a Settings,
    commit: String,
    accepted_branch: Option<String>,
    machine: Vec<digest::Part>,
}

impl<'a> Session<'a> {
    /// The commit and branch not given are git's; the commit git cannot
    /// name is `unknown`, the branch it cannot name is not accepted.
    pub(crate) fn new(settings: &'a Settings, processes: &dyn ProcessRunner) -> Session<'a> {
        let git = |args: &[&str], what| crate::history::command::git(processes, args, what).ok();
        let commit = settings
            .commit
            .clone()
            .or_else(|| git(&["rev-parse", "HEAD"], "commit"))
            .unwrap_or_else(|| "unknown".into());
        let branch = settings
            .branch
            .clone()
            .or_else(|| git(&["rev-parse", "--abbrev-ref", "HEAD"], "branch"));
        Session {
            settings,
            commit,
            accepted_branch: branch.filter(|b| settings.accepted.contains(b)),
            machine: digest::machine(),
        }
    }

    /// Whether `w` runs or carries its recorded verdict, with the status line that says so.
    pub(crate) fn decide(
        &self,
        w: &Workload,
        c: &CheckConfig,
        processes: &dyn ProcessRunner,
    ) -> Decision {
        let s = self.settings;
        let mut d = digest::of(w, c, s.config_file.as_deref(), &self.machine, processes);
        if let Some(branch) = &self.accepted_branch {
            d.known = self.known(w, &d.sha256);
            return Decision::Run(
                Some(d),
                format!("branch {branch} is accepted: it runs every workload"),
            );
        }
        if s.skip.when == SkipUnchanged::Declared && !d.unknown.is_empty() {
            d.known = self.known(w, &d.sha256);
            let why = d.unknown.join("; ");
            return Decision::Run(
                Some(d),
                format!(
                    "inputs not fully known ({why}): set skip_unchanged = \"always\" to skip it anyway"
                ),
            );
        }
        let place = self.place(w);
        let entry = match cache::read(&place, &w.name, &d.sha256) {
            Ok(Some(entry)) => entry,
            Ok(None) => {
                return Decision::Run(Some(d), "no verdict recorded for these inputs yet".into());
            }
            Err(why) => {
                crate::text::escape::say(&format!(
                    "ncugate: warning: workload {}: verdict cache {} unreadable ({why}): it runs",
                    w.name,
                    place.shown()
                ));
                return Decision::Run(Some(d), "verdict cache unreadable".into());
            }
        };
        if let Some(why) = changed(&entry, &mut d, &w.name) {
            return Decision::Run(Some(d), why);
        }
        let carried = Carried {
            commit: entry.commit.clone(),
            time: entry.time,
            digest: entry.digest.clone(),
        };
        let age = jiff::Timestamp::now()
            .as_second()
            .saturating_sub(entry.time);
        if age < 0 || age as u64 >= s.skip.max_age_s {
            return Decision::Run(
                Some(d),
                format!(
                    "the verdict of {} is older than skip_max_age",
                    carried.since()
                ),
            );
        }
        if entry.report.outcome() == crate::status::Outcome::Error {
            return Decision::Run(Some(d), "the recorded check did not complete".into());
        }
        if entry.report.degraded.is_some() {
            return Decision::Run(
                Some(d),
                "the recorded check ran degraded (trace mode)".into(),
            );
        }
        Decision::Skip(carried, Box::new(entry.report))
    }

    /// The libraries of `w`'s last entry (none when it has none or it
    /// cannot be read: this run then hashes every library in full).
    fn known(&self, w: &Workload, key: &str) -> Vec<mapped::Library> {
        match cache::read(&self.place(w), &w.name, key) {
            Ok(Some(entry)) => entry.libraries,
            _ => Vec::new(),
        }
    }

    /// Where `w`'s verdicts are kept: the history store, else its work folder.
    fn place(&self, w: &Workload) -> cache::Place {
        match &self.settings.store {
            Some((url, timeout)) => cache::Place::Store {
                url: url.clone(),
                timeout: *timeout,
            },
            None => cache::Place::File(w.runner.out_dir.clone()),
        }
    }

    /// Records `report` of `w` under `digest` when its check completed (a
    /// pass or a regression), with the libraries its run mapped, hashed now;
    /// a failure to write is a warning. A degraded check (trace mode, no
    /// metric gated) is never carried: the next run checks the metrics again.
    pub(crate) fn remember(&self, w: &Workload, digest: digest::Digest, report: &Report) {
        if report.outcome() == crate::status::Outcome::Error || report.degraded.is_some() {
            return;
        }
        let libraries = mapped::hash_all(&report.libraries, &digest.known);
        let mut parts = digest.parts;
        parts.extend(digest::loaded(&libraries));
        let entry = cache::Entry {
            format: digest::FORMAT.into(),
            workload: w.name.clone(),
            digest: digest::sum(&parts),
            parts,
            libraries,
            commit: self.commit.clone(),
            time: jiff::Timestamp::now().as_second(),
            report: report.clone(),
        };
        if let Err(e) = cache::write(&self.place(w), &entry) {
            crate::text::escape::say(&format!(
                "ncugate: warning: workload {}: verdict not cached: {e}",
                w.name
            ));
        }
    }
}

/// Why `entry` is not the verdict of digest `d` of `workload`, if it is
/// not: a part known before the run changed (named), or a library the
/// entry's run mapped is gone or changed (named by its path). The
/// libraries as hashed now go to `d.known`, whose digests the verdict kept
/// after this run reuses.
fn changed(entry: &cache::Entry, d: &mut digest::Digest, workload: &str) -> Option<String> {
    let then = digest::before_run(&entry.parts);
    if digest::sum(&then) != d.sha256 || entry.workload != workload {
        d.known = entry.libraries.clone();
        let part = digest::first_change(&then, &d.parts).unwrap_or_else(|| "workload".into());
        return Some(format!("inputs changed: {part}"));
    }
    let now = mapped::rehash(&entry.libraries);
    let (was, is) = (digest::loaded(&entry.libraries), digest::loaded(&now));
    d.known = now;
    let name = digest::first_change(&was, &is)?;
    Some(digest::library_change(&name, &is).unwrap_or_else(|| format!("inputs changed: {name}")))
}
