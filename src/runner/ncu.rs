//! Every ncu command line ncugate runs is built here — never through a
//! shell: a profiled run ([`NcuCommand::profile`]), an explain run's
//! source-counter profile ([`NcuCommand::source_counters`]) and the import
//! of a report's page ([`NcuCommand::import`], run by [`import`] or
//! [`read_page`]). Recorded runs replay these command lines
//! ([`super::replay`]), so what ncu is asked is decided in one file.

use super::process::{CommandSpec, Exit, ProcessRunner};
use super::{Mode, RunnerConfig};
use crate::error::{Error, NcuFailure, Result};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where a fast-mode run's ncu writes its own output (`--log-file`), in the run's directory.
pub const OUTPUT_FILE: &str = "ncu-output.log";

/// The `--log-file` of a fast-mode run exporting to `export`.
pub(crate) fn output_file(export: &Path) -> PathBuf {
    export.with_file_name(OUTPUT_FILE)
}

/// The extensions ncu adds to an `--export` name without one: `.ncu-rep`
/// up to Nsight Compute 2025.3, the compressed `.ncu-repz` where a later
/// one writes that instead (its default since 2026.3).
const EXPORT_EXTENSIONS: [&str; 2] = ["ncu-rep", "ncu-repz"];

/// Every report file ncu may write for `--export export` (to clear an
/// earlier run's before profiling).
pub(crate) fn report_files(export: &Path) -> Vec<PathBuf> {
    EXPORT_EXTENSIONS
        .iter()
        .map(|e| export.with_extension(e))
        .collect()
}

/// The report ncu wrote for `--export export`: the first of
/// [`report_files`] that exists, else the `.ncu-rep` (whose absence the
/// caller reports).
pub(crate) fn written_report(export: &Path) -> PathBuf {
    let files = report_files(export);
    files
        .iter()
        .find(|f| f.exists())
        .unwrap_or(&files[0])
        .clone()
}

/// A page `ncu --import REPORT --csv` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Page {
    /// `--page raw --print-units base`: every metric of every launch, in base units.
    Raw,
    /// `--page details --print-units base`: the sections' metrics and the rule results.
    Details,
    /// `--page source --print-source sass`: the disassembly, for opcode histograms.
    Sass,
    /// `--page source --print-source cuda,sass`: the source counters per line
    /// of CUDA source and per instruction, for an explain run.
    CudaAndSass,
}

impl Page {
    /// The page's name as `--page` spells it (and import failures name it).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Page::Raw => "raw",
            Page::Details => "details",
            Page::Sass | Page::CudaAndSass => "source",
        }
    }

    /// What follows `--page NAME`: the units of the metric pages, the views
    /// of the source page.
    fn options(self) -> [&'static str; 2] {
        match self {
            Page::Raw | Page::Details => ["--print-units", "base"],
            Page::Sass => ["--print-source", "sass"],
            Page::CudaAndSass => ["--print-source", "cuda,sass"],
        }
    }
}

/// One ncu command line: the ncu to run and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NcuCommand {
    ncu: String,
    args: Vec<String>,
}

impl NcuCommand {
    /// `ncu … APP ARGS` for one profiled run exporting to `export` (without
    /// the extension ncu adds, [`written_report`]).
    ///
    /// `--metrics` always lists every gated metric: `--set full` lacks some
    /// (`sm__inst_executed.sum`), so full mode adds the set, never replaces the list.
    ///
    /// Fast mode prints the raw page (`--csv --page raw --print-units base`) at the
    /// end of the profiling run itself, so no second ncu process converts the report;
    /// `--log-file` keeps ncu's output (its messages, then the CSV) apart from the
    /// app's, which stays on standard output and error. Measured on the H200 (ncu
    /// 2025.3.1): without `--log-file` the app and ncu share standard output, and an
    /// app line without a final newline is glued to ncu's next line. The CSV is
    /// byte-for-byte what `ncu --import … --csv --page raw --print-units base` prints.
    /// ncu prints no per-kernel progress lines in CSV mode, so full mode, whose run is
    /// long, keeps them and imports both pages afterwards.
    pub(crate) fn profile(config: &RunnerConfig, metrics: &[String], export: &Path) -> NcuCommand {
        let mut args: Vec<String> = Vec::new();
        let mut push = |items: &[&str]| args.extend(items.iter().map(|s| s.to_string()));
        let mut all: Vec<String> = metrics.to_vec();
        for m in &config.extra_metrics {
            if !all.contains(m) {
                all.push(m.clone());
            }
        }
        if config.mode == Mode::Full {
            push(&["--set", "full"]);
        }
        push(&["--metrics", &all.join(",")]);
        push(&["--target-processes", "all"]);
        push(&["--graph-profiling", config.graph_profiling.as_str()]);
        push(&["--clock-control", config.effective_clock_control().as_str()]);
        push(&["--cache-control", config.cache_control.as_str()]);
        push(&["--replay-mode", config.replay_mode.as_str()]);
        push(&["--config-file", "off"]);
        if config.mode == Mode::Fast {
            let page = Page::Raw;
            push(&["--csv", "--page", page.name()]);
            push(&page.options());
            push(&["--log-file", &output_file(export).to_string_lossy()]);
        }
        if let Some(name) = &config.kernel_name {
            push(&["--kernel-name", name]);
        }
        if let Some(n) = config.launch_skip {
            push(&["--launch-skip", &n.to_string()]);
        }
        if let Some(n) = config.launch_count {
            push(&["--launch-count", &n.to_string()]);
        }
        // The steady state only: what the app brackets with
        // cudaProfilerStart/Stop, or the NVTX ranges named.
        if !config.profile_from_start {
            push(&["--profile-from-start", "off"]);
        }
        if !config.nvtx_include.is_empty() {
            push(&["--nvtx"]);
            for range in &config.nvtx_include {
                push(&["--nvtx-include", range]);
            }
        }
        push(&["-f", "--export", &export.to_string_lossy()]);
        args.extend(config.app.iter().cloned());
        NcuCommand {
            ncu: config.ncu.clone(),
            args,
        }
    }

    /// `ncu … APP ARGS` for an explain run: the one launch that `filter`
    /// (ncu's `-k`, `None`: every kernel) and `skip` (`--launch-skip`)
    /// select, profiled with the `SourceCounters` section and its source
    /// imported into `export`. Clocks are never locked: the counters, not
    /// the time, are compared (see [`super::explain`]).
    pub(crate) fn source_counters(
        config: &RunnerConfig,
        filter: Option<String>,
        skip: u64,
        export: &Path,
    ) -> NcuCommand {
        let skip = skip.to_string();
        let mut args: Vec<String> = [
            "--target-processes",
            "all",
            "--graph-profiling",
            config.graph_profiling.as_str(),
            "--clock-control",
            "none",
            "--config-file",
            "off",
            "--launch-skip",
            &skip,
            "--launch-count",
            "1",
            "--section",
            "SourceCounters",
            "--import-source",
            "yes",
            "-f",
            "--export",
            &export.to_string_lossy(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if let Some(filter) = filter {
            args.splice(8..8, ["-k".to_string(), filter]);
        }
        args.extend(config.app.iter().cloned());
        NcuCommand {
            ncu: config.ncu.clone(),
            args,
        }
    }

    /// `ncu --import REPORT --csv --page PAGE …` (see [`Page`]).
    pub(crate) fn import(ncu: &str, report: &Path, page: Page) -> NcuCommand {
        let mut args: Vec<String> = ["--import", &report.to_string_lossy(), "--csv"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(["--page", page.name()].map(String::from));
        args.extend(page.options().map(String::from));
        NcuCommand {
            ncu: ncu.to_string(),
            args,
        }
    }

    /// The arguments after the ncu program.
    pub(crate) fn args(&self) -> &[String] {
        &self.args
    }

    /// The command to run; the caller adds what a profiled run needs (the
    /// app's environment, working directory and timeout).
    pub(crate) fn spec(self) -> CommandSpec {
        CommandSpec::new(self.ncu, self.args)
    }
}

/// The arguments of [`NcuCommand::profile`].
pub fn profile_args(config: &RunnerConfig, metrics: &[String], export: &Path) -> Vec<String> {
    NcuCommand::profile(config, metrics, export).args
}

/// Runs `ncu --import REPORT --csv --page PAGE …` and hands its standard
/// output to `read` as it streams: the one way a report becomes CSV, for a
/// `.ncu-rep` given as input and for the pages of a profiled run. An ncu
/// that cannot be run or that fails is an [`Error::Ncu`], whatever `read`
/// made of its output.
pub(crate) fn import<T>(
    ncu: &str,
    runner: &dyn ProcessRunner,
    report: &Path,
    page: Page,
    read: impl FnOnce(&mut dyn Read) -> Result<T>,
) -> Result<T> {
    let spec = NcuCommand::import(ncu, report, page).spec();
    let mut read = Some(read);
    let mut parsed = None;
    let done = runner.run_reading(&spec, &mut |out| {
        parsed = read.take().map(|r| r(out));
    });
    let failed = |exit: String| NcuFailure::ImportFailed {
        command: spec.display(),
        report: report.to_path_buf(),
        page: page.name().to_string(),
        exit,
        tail: done.tail(5),
    };
    let failure = match (&done.exit, parsed) {
        (Exit::NotFound, _) => NcuFailure::NotFound { ncu: ncu.into() },
        (Exit::SpawnFailed(reason), _) => NcuFailure::SpawnFailed {
            ncu: ncu.into(),
            reason: reason.clone(),
        },
        (exit, _) if !exit.success() => failed(exit.to_string()),
        (_, Some(parsed)) => return parsed,
        (_, None) => failed("no output to read".into()),
    };
    Err(Error::ncu(failure, None))
}

/// Runs `ncu --import REPORT --csv --page PAGE …` and returns its whole
/// output: the source pages, which the stages that add words read (the
/// kernels' opcodes, an explain run's counters). A failure is the reason
/// for their note, not an error of the check.
pub(crate) fn read_page(
    ncu: &str,
    runner: &dyn ProcessRunner,
    report: &Path,
    page: Page,
) -> std::result::Result<Vec<u8>, String> {
    let spec = NcuCommand::import(ncu, report, page).spec();
    let mut data = Err("no output".to_string());
    let done = runner.run_reading(&spec, &mut |out| {
        let mut page = Vec::new();
        data = out
            .read_to_end(&mut page)
            .map(|_| page)
            .map_err(|e| e.to_string());
    });
    if !done.exit.success() {
        return Err(format!("`{}` failed ({})", spec.display(), done.exit));
    }
    data
}

/// The first bytes of the raw page's header row.
const RAW_HEADER: &[u8] = b"\"ID\",";

/// Splits what a fast-mode ncu wrote to its `--log-file`: its own messages
/// (returned, one per line) and the raw-page CSV, copied to `csv` as it is read.
/// The CSV starts at the header row (`"ID",…`); after it, a line that does not
/// start with a quote is a message again. Returns whether there was a CSV; a
/// missing output file (ncu stopped before writing one) is no CSV and no messages.
pub(crate) fn split_output(output: &Path, csv: &Path) -> std::io::Result<(Vec<String>, bool)> {
    use std::io::{BufRead, Write};
    let file = match std::fs::File::open(output) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), false)),
        Err(e) => return Err(e),
    };
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let mut writer: Option<std::io::BufWriter<std::fs::File>> = None;
    let mut messages = Vec::new();
    let mut line = Vec::new();
    while reader.read_until(b'\n', &mut line)? > 0 {
        let in_csv = match &writer {
            Some(_) => line.first() == Some(&b'"'),
            None => line.starts_with(RAW_HEADER),
        };
        if in_csv {
            if writer.is_none() {
                writer = Some(std::io::BufWriter::with_capacity(
                    1 << 16,
                    std::fs::File::create(csv)?,
                ));
            }
            if let Some(w) = writer.as_mut() {
                w.write_all(&line)?;
            }
        } else {
            let text = String::from_utf8_lossy(&line);
            messages.push(text.trim_end_matches(['\n', '\r']).to_string());
        }
        line.clear();
    }
    let wrote = writer.is_some();
    if let Some(mut w) = writer {
        w.flush()?;
    }
    Ok((messages, wrote))
}

/// One `==PROF== Profiling "name" - N: 0%....100% - P passes` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Profiled {
    pub(crate) kernel: String,
    pub(crate) index: u64,
    pub(crate) passes: Option<u64>,
}

/// Parses ncu's per-kernel progress line.
pub(crate) fn parse_progress(line: &str) -> Option<Profiled> {
    let rest = line.strip_prefix("==PROF== Profiling \"")?;
    let (kernel, rest) = rest.split_once("\" - ")?;
    let (index, rest) = rest.split_once(':')?;
    let index = index.trim().parse().ok()?;
    let passes = rest
        .rsplit_once(" - ")
        .and_then(|(_, p)| {
            p.trim()
                .strip_suffix("passes")
                .or_else(|| p.trim().strip_suffix("pass"))
        })
        .and_then(|p| p.trim().parse().ok());
    Some(Profiled {
        kernel: kernel.to_string(),
        index,
        passes,
    })
}

/// True for lines ncu prints itself (the rest is the app's output).
pub(crate) fn is_ncu_line(line: &str) -> bool {
    line.starts_with("==PROF==")
        || line.starts_with("==WARNING==")
        || line.starts_with("==ERROR==")
        || line.starts_with("==INFO==")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_command_lines_are_the_ones_recordings_replay() {
        let report = Path::new("/w/run 1.ncu-rep");
        let line = |page| NcuCommand::import("ncu", report, page).spec().args;
        let words = |s: &str| -> Vec<String> { s.split(' ').map(String::from).collect() };
        let mut want = words("--import R --csv --page raw --print-units base");
        want[1] = "/w/run 1.ncu-rep".into();
        assert_eq!(line(Page::Raw), want);
        want[4] = "details".into();
        assert_eq!(line(Page::Details), want);
        want.splice(4.., words("source --print-source sass"));
        assert_eq!(line(Page::Sass), want);
        want[6] = "cuda,sass".into();
        assert_eq!(line(Page::CudaAndSass), want);
    }

    #[test]
    fn progress_lines_from_real_logs() {
        // A full-mode run (no --csv): ncu prints a progress line per kernel.
        let log = include_str!("../../fixtures/h200/graph_app.base.full.ncu.log");
        let seen: Vec<Profiled> = log.lines().filter_map(parse_progress).collect();
        assert_eq!(seen.len(), 9);
        assert_eq!(
            seen[0],
            Profiled {
                kernel: "produce(float *, long)".into(),
                index: 0,
                passes: Some(38)
            }
        );
        assert_eq!(seen[1].kernel, "scale");
        assert_eq!(seen[8].index, 8);
        assert!(parse_progress("variant=base iters=3").is_none());
        // In CSV mode (fast mode's --csv --page raw) ncu prints none.
        let csv = include_str!("../../fixtures/h200/graph_app.base.fast.run1.ncu.log");
        assert_eq!(csv.lines().filter_map(parse_progress).count(), 0);
    }

    #[test]
    fn the_output_of_a_fast_run_splits_into_messages_and_the_import_csv() {
        let fx = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/h200/");
        let dir = tempfile::tempdir().expect("tmp");
        let csv = dir.path().join("raw.csv");
        let output = format!("{fx}graph_app.base.fast.run1.ncu.log");
        let (messages, streamed) = split_output(Path::new(&output), &csv).expect("split");
        assert!(streamed);
        assert_eq!(messages.len(), 4, "{messages:?}");
        assert!(messages[3].starts_with("==PROF== Report: "), "{messages:?}");
        // Byte for byte what `ncu --import … --csv --page raw --print-units base` printed.
        let imported = std::fs::read(format!("{fx}graph_app.base.fast.run1.raw.base-units.csv"))
            .expect("fixture");
        assert_eq!(std::fs::read(&csv).expect("csv"), imported);
        // A run that failed before the CSV: messages only, no CSV file.
        let failed = format!("{fx}one-pass/fail-unknown-metric.ncu.log");
        let csv2 = dir.path().join("none.csv");
        let (messages, streamed) = split_output(Path::new(&failed), &csv2).expect("split");
        assert!(!streamed && !csv2.exists());
        assert!(messages.iter().any(|m| m.contains("Failed to find metric")));
        let (messages, streamed) =
            split_output(&dir.path().join("absent.log"), &csv2).expect("absent");
        assert!(messages.is_empty() && !streamed);
    }
}
