//! `ncugate baseline record`: the runs' statistics per kernel into a baseline
//! file (or `<dir>/<workload>/<gpu>.json`), with the profiled wall time.

use super::acquire::{acquire, with_clock_metrics};
use super::explain::{profile_sources, read_source_pages};
use super::notes::DataNotes;
use super::pick::baseline_file;
use super::read::{self, Metrics, Opcodes, Read};
use crate::baseline::{self, Baseline};
use crate::config::{RecordConfig, Source};
use crate::error::{Error, Result};
use crate::gated::Text;
use crate::model::Run;
use crate::note::Note;
use crate::parse;
use crate::rules::Thresholds;
use crate::runner::{self, process::ProcessRunner};
use crate::shared_gpu::GpuEnvironment;

/// `ncugate baseline record`: writes the baseline; says where on standard
/// output, with what the reader should know about it (a details page read,
/// extra ncu passes, a baseline of one run) as notes.
pub fn record(config: &RecordConfig, processes: &dyn ProcessRunner) -> Result<Text> {
    let import = parse::NcuImport {
        ncu: &config.ncu,
        runner: processes,
        native: !config.import_with_ncu,
    };
    let thresholds =
        Thresholds::load_for(config.thresholds.file(), read::all_nvbench(&config.source))?;
    let metrics = collected_metrics(&thresholds, &config.extra_metrics);
    let collected = with_clock_metrics(metrics.clone(), &config.source);
    let (details, _) = read::with_input_reports(&config.source, &config.details);
    let acquired = acquire(&config.source, &details, &collected, None, false, processes)?;
    let Read {
        runs,
        code,
        details,
    } = read::read(
        &acquired.inputs,
        &acquired.details,
        &collected,
        config.kernel_key,
        &thresholds,
        import,
        Metrics::Now,
    )?;
    super::instrument::counters(&runs)?;
    let gpu = recorded_gpu(&runs, &acquired.gpu, config.shared_gpu)?;
    if matches!(config.source, Source::Inputs(_)) {
        baseline::distinct::distinct_inputs(&runs)?;
    }
    let data = DataNotes::of(&config.source, &metrics, &runs, &acquired.seconds);
    let mut notes: Vec<Note> = data.details_page.iter().map(Note::said).collect();
    notes.extend(data.cost.map(Note::new));
    let passes = runs
        .iter()
        .filter_map(|r| runner::passes::Passes::of(&r.total.passes))
        .max_by_key(|p| p.max)
        .map(|p| format!(", {p}"))
        .unwrap_or_default();
    let recorded = Recorded::of(&metrics, &thresholds, &config.extra_metrics, &runs);
    // Measured before the columns are cut to the recorded metrics: the
    // instruction count may be collected for no rule.
    let variable = crate::varies::split(&runs);
    let share = crate::varies::Share::of(&runs, |k| variable.contains_key(k));
    let first_alone = crate::varies::first_run_alone(&runs);
    let runs: Vec<Run> = runs
        .into_iter()
        .map(|run| keep_metrics(run, &recorded.required))
        .collect();
    let findings = read::findings(details, config.kernel_key, import)?;
    let mut baseline = baseline::record::build(
        &runs,
        &recorded.required,
        &recorded.optional,
        findings.as_ref().map(|(f, files)| (f, files.clone())),
        &thresholds.source,
    )?;
    let code_note = add_code(
        &mut baseline,
        &acquired.reports,
        &code,
        config.kernel_key,
        import,
    );
    notes.extend(code_note.map(Note::new));
    notes.extend(add_source_profiles(config, &mut baseline, processes));
    baseline.profile = acquired.profile;
    if let Some(gpu) = gpu {
        if let Some(why) = &gpu.shared {
            notes.push(Note::warning(format!("{why} while recording: the baseline is marked as recorded on a shared GPU (a check says so); record it on a quiet GPU, or with --shared-gpu refuse to refuse")));
        }
        baseline.gpu = Some(gpu);
    }
    if !acquired.seconds.is_empty() {
        // What a check costs: its warm-ups, then one profiled run.
        let run = acquired.seconds.iter().sum::<f64>() / acquired.seconds.len() as f64;
        baseline.cost_seconds = Some(run + acquired.warmup_seconds);
    }
    let output = baseline_file(&config.output, &baseline.fingerprint);
    baseline.save(&output)?;
    notes.extend(warnings(&baseline, &thresholds));
    notes.extend(varies_notes(&baseline, &share, first_alone));
    notes.extend(code_varies_notes(&baseline));
    let line = format!(
        "ncugate: recorded {}: {}, {} per run{passes}, {}, {}, {}, kernel key {}\n",
        output.display(),
        crate::format::count(baseline.kernels.len(), "kernel", "kernels"),
        crate::format::count(
            crate::format::format_value(baseline.total.launches.mean, ""),
            "launch",
            "launches",
        ),
        crate::format::count(recorded.required.len(), "metric", "metrics"),
        crate::format::count(baseline.runs, "run", "runs"),
        baseline.fingerprint,
        baseline.kernel_key
    );
    Ok(Text {
        notes,
        ..Text::pass(line)
    })
}

/// Gives each kernel of `baseline` its code, opcodes included, from the
/// first of `reports` that embeds it; a note when the opcodes could not be read.
fn add_code(
    baseline: &mut Baseline,
    reports: &[std::path::PathBuf],
    inputs: &[read::InputCode],
    key_mode: crate::model::KernelKeyMode,
    import: parse::NcuImport,
) -> Option<String> {
    let (code, note) = read::code(reports, inputs, key_mode, Opcodes::Always, import);
    let mut seen = read::fingerprints(reports, inputs, key_mode);
    for (kernel, mut code) in code.into_iter().flatten() {
        if let Some(entry) = baseline.kernels.get_mut(&kernel) {
            if let Some(all) = seen.remove(&kernel) {
                code.others = all.into_iter().filter(|f| *f != code.fingerprint).collect();
            }
            entry.code = Some(Box::new(code));
        }
    }
    note
}

/// The kernels whose code was not the same in every recorded run: their
/// time and launches are gated, the rest of their rules listed ungated;
/// with the fix of the autotuner each name shows, else every fix.
fn code_varies_notes(baseline: &Baseline) -> Vec<Note> {
    let varied: Vec<(&String, usize)> = baseline
        .kernels
        .iter()
        .filter_map(|(k, e)| e.code.as_ref().map(|c| (k, c.others.len())))
        .filter(|(_, others)| *others > 0)
        .collect();
    if varied.is_empty() {
        return Vec::new();
    }
    let named: Vec<String> = varied
        .iter()
        .map(|(k, others)| format!("{k} ({} builds)", others + 1))
        .collect();
    let fixes = crate::varies::autotuner::fixes_for(varied.iter().map(|(k, _)| k.as_str()));
    vec![Note::warning(format!(
        "the code of {} was not the same in the {} runs: {}; an autotuner or JIT built {} another way in some run, so checks gate only {} time and launches; to gate {} whole, keep the picks from one run to the next — {}",
        crate::format::count(varied.len(), "kernel", "kernels"),
        baseline.runs,
        named.join(", "),
        if varied.len() == 1 { "it" } else { "them" },
        if varied.len() == 1 { "its" } else { "their" },
        if varied.len() == 1 { "it" } else { "them" },
        fixes
    ))]
}

/// What the baseline keeps of the GPU the runs were profiled on (`None`
/// when the exports have no SM clock and nothing was seen); an error when
/// another process used the GPU and `policy` refuses that.
fn recorded_gpu(
    runs: &[Run],
    samples: &[crate::shared_gpu::Sample],
    policy: crate::shared_gpu::Policy,
) -> Result<Option<GpuEnvironment>> {
    let mut gpu = GpuEnvironment::observe(runs, samples);
    gpu.shared = gpu.shared_alone();
    if let (Some(why), crate::shared_gpu::Policy::Refuse) = (&gpu.shared, policy) {
        return Err(Error::from(crate::error::BaselineError::SharedGpu {
            evidence: why.clone(),
            sensitive: 0,
            recording: true,
        }));
    }
    Ok((gpu != GpuEnvironment::default()).then_some(gpu))
}

/// The metrics to collect: the rules' metrics, then `--extra-metric`s.
fn collected_metrics(thresholds: &Thresholds, extra: &[String]) -> Vec<String> {
    let mut metrics = thresholds.metrics();
    for m in extra {
        if !metrics.contains(m) {
            metrics.push(m.clone());
        }
    }
    metrics
}

/// The metrics a baseline records, and which of them are optional.
struct Recorded {
    /// Non-optional rules' metrics, `--extra-metric`s, and optional rules'
    /// metrics where every run has them (in collection order).
    required: Vec<String>,
    /// Those only optional rules use.
    optional: Vec<String>,
}

impl Recorded {
    fn of(metrics: &[String], thresholds: &Thresholds, extra: &[String], runs: &[Run]) -> Recorded {
        let rules_of = |m: &String| -> Vec<&crate::rules::Rule> {
            thresholds.rules.iter().filter(|r| &r.metric == m).collect()
        };
        let required: Vec<String> = metrics
            .iter()
            .filter(|m| {
                rules_of(m).iter().any(|r| !r.optional)
                    || extra.contains(m)
                    || runs.iter().all(|r| {
                        r.metric_index(m)
                            .is_some_and(|i| r.metrics[i].unit.is_some())
                    })
            })
            .cloned()
            .collect();
        let optional = required
            .iter()
            .filter(|m| !extra.contains(m) && rules_of(m).iter().all(|r| r.optional))
            .cloned()
            .collect();
        Recorded { required, optional }
    }
}

/// What a recorded baseline will make of later checks that its recording
/// should say: no spread, no GPU named.
fn warnings(baseline: &Baseline, thresholds: &Thresholds) -> Vec<Note> {
    let mut out = one_run_warning(baseline, thresholds);
    out.extend(unidentified_warning(baseline));
    out
}

/// Stores the kernels' source profiles in `baseline`: from the given source
/// pages (`--source-page`), and profiled once more (`--source`). What could
/// not be read or matched, as notes.
fn add_source_profiles(
    config: &RecordConfig,
    baseline: &mut Baseline,
    processes: &dyn ProcessRunner,
) -> Vec<Note> {
    let unbounded = super::explain::Budget::unbounded();
    let (mut profiles, mut page_notes) =
        read_source_pages(&config.source_pages, config.kernel_key, unbounded);
    if let (true, Source::Profile { runner, .. }) = (config.profile_sources, &config.source) {
        let kernels: Vec<String> = baseline.kernels.keys().cloned().collect();
        let first = |_: &str| None;
        let (more, notes) =
            profile_sources(&kernels, &first, baseline, runner, unbounded, processes);
        profiles.extend(more);
        page_notes.extend(notes);
    }
    let mut notes: Vec<Note> = page_notes.into_iter().map(Note::new).collect();
    for profile in profiles {
        match baseline.kernels.get_mut(&profile.kernel) {
            Some(entry) => entry.source = Some(Box::new(profile)),
            None => notes.push(Note::new(format!(
                "the source page of {} names no kernel of the runs: not recorded",
                profile.kernel
            ))),
        }
    }
    notes
}

/// What recording kept apart: the kernels that vary between runs, a
/// warning when they carry much of the work, and one when the first run
/// alone made them vary (`first_alone`): a cache that was cold for it only.
fn varies_notes(baseline: &Baseline, share: &crate::varies::Share, first_alone: bool) -> Vec<Note> {
    if baseline.variable.is_empty() {
        return Vec::new();
    }
    let mut out = vec![Note::new(format!(
        "{} vary between the {} runs (an autotuner's candidates, a JIT's choice): kept in the baseline, listed by every check, never gated",
        crate::format::count(baseline.variable.len(), "kernel", "kernels"),
        baseline.runs
    ))];
    let names = baseline.variable.keys().map(String::as_str);
    out.extend(crate::varies::warning(names, share, "recorded"));
    let warmed = baseline.profile.as_ref().is_some_and(|p| p.warmup > 0);
    if first_alone && !warmed {
        out.push(Note::warning(format!(
            "the first run alone launched other kernels than the other {}, which agree: an autotuner timed its candidates in it with a cold cache (a fresh machine, or its cache emptied), and the later runs found its picks cached",
            baseline.runs.saturating_sub(1)
        )));
        out.push(Note::hint(
            "record with [app] warmup = 1 (--warmup 1), and check with it too: the app runs once without ncu first, so every profiled run finds the cache warm (with exports: run the app once before profiling)",
        ));
    }
    out
}

/// A baseline whose exports name no GPU (an older ncu's details page has no
/// `CC` and no device attributes): every check against it is a device
/// mismatch (exit 2) until it passes `--allow-device-mismatch`. Recording
/// said nothing of it.
fn unidentified_warning(baseline: &Baseline) -> Vec<Note> {
    if crate::model::shares_identity(&baseline.fingerprint, &baseline.fingerprint) {
        return Vec::new();
    }
    vec![
        Note::warning(
            "the exports name no GPU (no CC, device name or SM count): every check against this baseline is a device mismatch (exit 2) unless it passes --allow-device-mismatch",
        ),
        Note::hint(
            "record from exports that name the GPU (a raw page always does; a details page with its `CC` column), or check with --allow-device-mismatch",
        ),
    ]
}

/// A baseline of one run has no spread: which `noise` allowances that
/// zeroes, and how to record a better one. Nothing when no rule uses `noise`.
fn one_run_warning(baseline: &Baseline, thresholds: &Thresholds) -> Vec<Note> {
    // nvbench measured its own noise: σ is known from one file.
    if baseline.runs >= 2
        || (&baseline.total.metrics)
            .into_iter()
            .any(|(_, m)| m.mean.stddev > 0.0)
    {
        return Vec::new();
    }
    let mut noisy: Vec<&str> = thresholds
        .rules
        .iter()
        .filter(|r| r.noise > 0.0)
        .map(|r| r.metric.as_str())
        .collect();
    noisy.dedup();
    if noisy.is_empty() {
        return Vec::new();
    }
    let which = noisy.join(", ");
    vec![
        Note::warning(format!(
            "a baseline of {} run has no spread: σ is unknown, so the `noise` allowance (k·σ) of {which} is 0 and only `max_change` applies",
            baseline.runs
        )),
        Note::hint(
            "record from 3 or more runs (repeat --input, or --runs 3) so timings get their measured noise band",
        ),
    ]
}

/// Drops metric columns that are not in `keep` (order follows `keep`).
fn keep_metrics(mut run: Run, keep: &[String]) -> Run {
    let index: Vec<usize> = keep.iter().filter_map(|m| run.metric_index(m)).collect();
    run.metrics = index.iter().map(|&i| run.metrics[i].clone()).collect();
    for k in run
        .kernels
        .values_mut()
        .chain(std::iter::once(&mut run.total))
    {
        k.metrics = index.iter().map(|&i| k.metrics[i]).collect();
    }
    run
}
