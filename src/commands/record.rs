//! `ncugate baseline record`: the runs' statistics per kernel into a baseline
//! file (or `<dir>/<workload>/<gpu>.json`), with the profiled wall time.

use super::*;

/// `ncugate baseline record`: writes the baseline; says where on standard
/// output, with what the reader should know about it (a details page read,
/// extra ncu passes, a baseline of one run) as notes.
pub fn record(config: &RecordConfig, processes: &dyn ProcessRunner) -> Result<Text> {
    let import = parse::NcuImport {
        ncu: &config.ncu,
        runner: processes,
        native: !config.import_with_ncu,
    };
    let thresholds = Thresholds::load(config.thresholds.as_deref())?;
    let mut metrics = thresholds.metrics();
    for m in &config.extra_metrics {
        if !metrics.contains(m) {
            metrics.push(m.clone());
        }
    }
    let acquired = acquire(
        &config.source,
        &config.details,
        &metrics,
        None,
        false,
        processes,
    )?;
    let runs = read_runs(
        &acquired.inputs,
        &metrics,
        config.kernel_key,
        &thresholds,
        import,
    )?;
    let mut notes = Vec::new();
    for run in runs
        .iter()
        .filter(|r| r.page == crate::model::ExportPage::Details)
    {
        notes.push(format!(
            "ncugate: {}: metrics read from the details page (by metric ID or details label)",
            run.source.display()
        ));
    }
    if let Source::Profile { runner, .. } = &config.source
        && let Some(note) = cost_note(runner, &metrics, &runs, &acquired.seconds)
    {
        notes.push(format!("ncugate: note: {note}"));
    }
    let passes = runs
        .iter()
        .filter_map(|r| runner::passes::Passes::of(&r.total.passes))
        .max_by_key(|p| p.max)
        .map(|p| format!(", {p}"))
        .unwrap_or_default();
    // Optional rules' metrics are recorded only where every run has them.
    let required: Vec<String> = metrics
        .iter()
        .filter(|m| {
            thresholds
                .rules
                .iter()
                .any(|r| &r.metric == *m && !r.optional)
                || config.extra_metrics.contains(m)
                || runs.iter().all(|r| {
                    r.metric_index(m)
                        .is_some_and(|i| r.metrics[i].unit.is_some())
                })
        })
        .cloned()
        .collect();
    let runs: Vec<Run> = runs
        .into_iter()
        .map(|run| keep_metrics(run, &required))
        .collect();
    let findings = read_findings(&acquired.details, config.kernel_key, import)?;
    let optional: Vec<String> = required
        .iter()
        .filter(|m| {
            !config.extra_metrics.contains(m)
                && thresholds
                    .rules
                    .iter()
                    .filter(|r| &&r.metric == m)
                    .all(|r| r.optional)
        })
        .cloned()
        .collect();
    let mut baseline = baseline::record::build(
        &runs,
        &required,
        &optional,
        findings.as_ref().map(|(f, files)| (f, files.clone())),
        &thresholds.source,
    )?;
    baseline.profile = acquired.profile;
    if !acquired.seconds.is_empty() {
        baseline.cost_seconds =
            Some(acquired.seconds.iter().sum::<f64>() / acquired.seconds.len() as f64);
    }
    let output = match &config.output {
        BaselinePlace::File(path) => path.clone(),
        BaselinePlace::Dir { dir, workload, .. } => {
            suite::baselines::path(dir, workload, &baseline.fingerprint)
        }
    };
    baseline.save(&output)?;
    if baseline.runs < 2 {
        let mut noisy: Vec<&str> = thresholds
            .rules
            .iter()
            .filter(|r| r.noise > 0.0)
            .map(|r| r.metric.as_str())
            .collect();
        noisy.dedup();
        notes.push(format!(
            "ncugate: warning: a baseline of {} run has no spread: σ is unknown, so the `noise` allowance (k·σ) of {} is 0 and only `max_change` applies",
            baseline.runs,
            if noisy.is_empty() {
                "the rules".to_string()
            } else {
                noisy.join(", ")
            }
        ));
        notes.push(
            "hint: record from 3 or more runs (repeat --input, or --runs 3) so timings get their measured noise band".into(),
        );
    }
    let launches: f64 = baseline.total.launches.mean;
    let line = format!(
        "ncugate: recorded {}: {} kernels, {launches} launches per run{passes}, {} metrics, {} run(s), {}, kernel key {}\n",
        output.display(),
        baseline.kernels.len(),
        required.len(),
        baseline.runs,
        baseline.fingerprint,
        baseline.kernel_key
    );
    Ok(Text {
        notes,
        ..Text::pass(line)
    })
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
