//! `ncugate init`: start gating your own app. Writes `ncugate.toml` (the app
//! command, its build, the profile settings, where the baseline and the
//! thresholds live) and a commented thresholds file to edit, never over an
//! existing file without `--force`. Asks nothing on a CI runner (everything
//! comes from flags) and at most three questions on a terminal (the app, its
//! build, and what to profile when an autotuner shows). With a GPU and ncu it
//! builds and profiles the app once and lists the kernels it found, so the
//! first `baseline record` holds no surprise: kernels that an autotuner times
//! at run time (XLA's, Inductor's, cuDNN's) vary between runs, and `init`
//! offers to profile only the steady state after the warm-up.

use crate::error::{Error, Result};
use crate::model::KernelKeyMode;
use crate::runner::process::ProcessRunner;
use crate::runner::progress::Progress;
use std::fmt::Write as _;
use std::io::BufRead;
use std::path::Path;

/// The config file `init` writes and every command reads by default.
pub(crate) const CONFIG_FILE: &str = "ncugate.toml";
/// The thresholds file `init` writes.
pub(crate) const THRESHOLDS_FILE: &str = "ncugate-thresholds.toml";
/// Where `ncugate baseline record` will write, as set in `[gate] baseline`.
pub(crate) const BASELINE_FILE: &str = "ncugate-baseline.json";

use crate::config::InitConfig;

/// Where `init` asks for what it was not told.
pub trait Prompt {
    /// Asks `question`; the line answered, without its line end (empty at
    /// the end of the input).
    fn ask(&mut self, question: &str) -> Result<String>;
}

/// The terminal: the question on standard error (standard output carries
/// only what `init` did), the answer from standard input.
pub(crate) struct Terminal;

impl Prompt for Terminal {
    fn ask(&mut self, question: &str) -> Result<String> {
        use std::io::Write;
        let mut err = std::io::stderr().lock();
        // A question nobody can see still reads its answer.
        let _ = err
            .write_all(question.as_bytes())
            .and_then(|()| err.flush());
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|source| {
                Error::read(
                    crate::error::FileKind::Stdin,
                    std::path::Path::new("-"),
                    source,
                )
            })?;
        Ok(line.trim_end_matches(['\r', '\n']).to_string())
    }
}

/// Answers given in advance (a test's), in order; the questions asked are kept.
#[derive(Debug, Default)]
pub struct Answers {
    pub(crate) answers: std::collections::VecDeque<String>,
    pub asked: Vec<String>,
}

impl Answers {
    pub fn new<'a>(answers: impl IntoIterator<Item = &'a str>) -> Answers {
        Answers {
            answers: answers.into_iter().map(String::from).collect(),
            asked: Vec::new(),
        }
    }
}

impl Prompt for Answers {
    fn ask(&mut self, question: &str) -> Result<String> {
        self.asked.push(question.to_string());
        Ok(self.answers.pop_front().unwrap_or_default())
    }
}

/// What `init` did, for standard output; and when the files were written but
/// the trial run failed, its error (exit 2 after the lines that say what was
/// written).
#[derive(Debug)]
pub struct Done {
    pub stdout: String,
    pub trial: Option<Error>,
}

/// Runs `init`: questions through `prompt` when interactive; `gpu` says
/// whether a GPU and ncu are usable here.
pub fn run(
    config: &InitConfig,
    prompt: &mut dyn Prompt,
    gpu: bool,
    processes: &dyn ProcessRunner,
) -> Result<Done> {
    let config_path = config.dir.join(CONFIG_FILE);
    let thresholds_path = config.dir.join(THRESHOLDS_FILE);
    refuse_to_overwrite(config, &[&config_path, &thresholds_path])?;
    let mut app = config.app.clone();
    let mut build = config.build.clone();
    if config.interactive {
        if app.is_empty() {
            app = ask_words(prompt, "App command to gate (e.g. ./build/app --iters 3): ")?;
        }
        if build.is_none() {
            let words = ask_words(
                prompt,
                "Build command, run before profiling (empty: none): ",
            )?;
            build = (!words.is_empty()).then_some(words);
        }
    }
    if app.is_empty() {
        return Err(Error::from(crate::error::ConfigError::NoAppToInit));
    }
    write(
        &config_path,
        &config_text(&app, build.as_deref(), &Steady::All),
    )?;
    write(&thresholds_path, &thresholds_text(&app))?;
    let mut out = String::new();
    let _ = writeln!(out, "ncugate: wrote {}", config_path.display());
    let _ = writeln!(
        out,
        "ncugate: wrote {} (the built-in rules, commented: edit them)",
        thresholds_path.display()
    );
    if !config.profile {
        let _ = writeln!(out, "ncugate: not profiling (--no-profile)");
    } else if !gpu {
        let _ = writeln!(
            out,
            "ncugate: no usable GPU and ncu here, so no trial run; on the GPU runner, `ncugate profile` lists the kernels (`ncugate doctor` says what is missing)"
        );
    } else {
        match trial_run(&config_path, &thresholds_path, processes) {
            Ok((listing, kernels)) => {
                out.push_str(&listing);
                let tuners =
                    crate::varies::autotuner::recognise(kernels.iter().map(String::as_str));
                if !tuners.is_empty() {
                    let steady = steady_state(config, prompt, &tuners, &mut out)?;
                    if steady != Steady::All {
                        write(&config_path, &config_text(&app, build.as_deref(), &steady))?;
                    }
                }
            }
            Err(error) => {
                return Ok(Done {
                    stdout: out,
                    trial: Some(error),
                });
            }
        }
    }
    let _ = writeln!(out, "\nnext, on the GPU runner, in this folder:");
    let _ = writeln!(
        out,
        "  ncugate baseline record    # profile 3 runs → {BASELINE_FILE} (commit it)"
    );
    let _ = writeln!(
        out,
        "  ncugate check              # in CI: build, profile, gate; exit 0 pass, 1 regression, 2 error"
    );
    Ok(Done {
        stdout: out,
        trial: None,
    })
}

/// Refuses when one of `paths` exists, unless `--force`.
fn refuse_to_overwrite(config: &InitConfig, paths: &[&Path]) -> Result<()> {
    let existing: Vec<String> = paths
        .iter()
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if existing.is_empty() || config.force {
        return Ok(());
    }
    Err(Error::from(crate::error::ConfigError::InitWouldOverwrite {
        existing,
    }))
}

/// What part of the app's run is profiled, as `init` writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Steady {
    /// The whole run (ncu's default).
    All,
    /// Between `cudaProfilerStart` and `cudaProfilerStop` (`profile_from_start = false`).
    ProfilerApi,
    /// Inside an NVTX range (`nvtx_include`).
    Nvtx(String),
    /// The whole run, after one run without ncu that warms the caches the
    /// autotuner keeps between processes (`[app] warmup = 1`).
    WarmUp,
}

/// The first profile showed kernels of `tuners`: says so with each fix,
/// and on a terminal asks whether to profile only the steady state.
fn steady_state(
    config: &InitConfig,
    prompt: &mut dyn Prompt,
    tuners: &[(crate::varies::autotuner::Autotuner, String)],
    out: &mut String,
) -> Result<Steady> {
    let _ = writeln!(
        out,
        "ncugate: the first profile shows kernels that an autotuner times at run time; they vary between runs:"
    );
    for (tuner, kernel) in tuners {
        let kernel = crate::text::escape::printable(kernel.clone());
        let _ = writeln!(
            out,
            "  {}: `{kernel}`
    fix: {}",
            tuner.name(),
            tuner.fix()
        );
    }
    if !config.interactive {
        let _ = writeln!(
            out,
            "ncugate: to profile only the steady state, set [profile] profile_from_start = false (the app calls cudaProfilerStart/Stop, torch.cuda.profiler.start/stop) or nvtx_include = [\"RANGE/\"]; to warm the autotuner's caches first (a fresh CI runner's are cold), [app] warmup = 1"
        );
        return Ok(Steady::All);
    }
    let answer = prompt.ask(
        "Profile only the steady state, after the autotuner's warm-up? Enter: the whole run; w: the whole run, after one run without ncu that warms the autotuner's caches; p: between cudaProfilerStart/Stop; or an NVTX range to include (e.g. step/): ",
    )?;
    let steady = match answer.trim() {
        "" => Steady::All,
        "w" | "W" => Steady::WarmUp,
        "p" | "P" => Steady::ProfilerApi,
        range => Steady::Nvtx(range.to_string()),
    };
    Ok(steady)
}

/// Builds and profiles the app once as the new config says: its kernels, a
/// line each, and their names.
fn trial_run(
    config_path: &Path,
    thresholds: &Path,
    processes: &dyn ProcessRunner,
) -> Result<(String, Vec<String>)> {
    let runner = crate::config::runner_from_file(config_path)?;
    let rules = crate::rules::Thresholds::load(Some(thresholds))?;
    crate::runner::build(&runner, processes)?;
    let mut progress = Progress::new(None, false);
    let artifacts =
        crate::runner::profile_once(&runner, &rules.metrics(), "init", processes, &mut progress)?;
    let import = crate::parse::NcuImport {
        ncu: &runner.ncu,
        runner: processes,
        native: true,
    };
    let run = crate::parse::read_run(
        &artifacts.raw,
        &rules.metrics(),
        KernelKeyMode::default(),
        import,
    )?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "ncugate: profiled once in {:.1}s: {}, {} (artifacts: {})",
        artifacts.seconds,
        crate::format::count(run.kernels.len(), "kernel", "kernels"),
        crate::format::count(run.total.launches, "launch", "launches"),
        artifacts.dir.display()
    );
    let width = crate::report::terminal::width();
    for (kernel, k) in &run.kernels {
        let name = crate::report::columns::shorten_middle(kernel, width.saturating_sub(16));
        let _ = writeln!(out, "  {:>5} × {name}", k.launches);
    }
    Ok((out, run.kernels.keys().cloned().collect()))
}

fn ask_words(prompt: &mut dyn Prompt, question: &str) -> Result<Vec<String>> {
    let line = prompt.ask(question)?;
    shlex::split(line.trim()).ok_or_else(|| {
        Error::from(crate::error::ConfigError::UnbalancedAnswer {
            answer: line.trim().to_string(),
        })
    })
}

fn write(path: &Path, text: &str) -> Result<()> {
    crate::io::write_atomic(path, text.as_bytes())
}

/// A TOML array of strings: `["./app", "--iters", "3"]`.
fn toml_argv(words: &[String]) -> String {
    toml::Value::Array(words.iter().cloned().map(toml::Value::String).collect()).to_string()
}

/// `ncugate.toml` for `app`, commented; `steady`: what part of its run is profiled.
pub(crate) fn config_text(app: &[String], build: Option<&[String]>, steady: &Steady) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# ncugate.toml — written by `ncugate init`. Paths are relative to this file. Every key can be
# overridden on the command line (`ncugate check --help`) or by an NCUGATE_* variable.

[app]
# The app ncugate runs under ncu: its argv (no shell), run in `workdir`.
command = {}
# workdir = \".\"
# timeout = 1800                      # seconds for a whole profiled run; then it is killed
# env = {{ CUDA_VISIBLE_DEVICES = \"0\" }}
{}",
        toml_argv(app),
        match steady {
            Steady::WarmUp => "# Runs without ncu before the profiled ones: the autotuner's caches are warm then.\nwarmup = 1\n",
            _ => "# warmup = 0                          # runs without ncu first, to warm an autotuner's caches\n",
        }
    );
    let _ = writeln!(
        t,
        "[build]
# Run before every profiled run (argv, no shell); `--no-build` skips it."
    );
    match build {
        Some(b) => {
            let _ = writeln!(t, "command = {}\n", toml_argv(b));
        }
        None => {
            let _ = writeln!(t, "# command = [\"make\", \"-j8\"]\n");
        }
    }
    let _ = writeln!(
        t,
        "[profile]
# fast: only the gated metrics (the built-in set takes one replay pass per kernel);
# full: `--set full` plus them, for a report to open in Nsight Compute (much slower).
mode = \"fast\"
# The GPU's clocks as your users get them; \"base\" locks them (throughput moves ~10%).
# Recorded in the baseline: a check with another setting is refused.
clock_control = \"none\"
{}# kernel_name = \"regex:^my_\"           # profile only these kernels
# launch_skip = 0
# launch_count = 100

[gate]
# Recorded by `ncugate baseline record` on the GPU runner; commit it.
baseline = \"{BASELINE_FILE}\"
# The rules: which metrics, how much worse is a regression. Start from the built-in ones.
thresholds = \"{THRESHOLDS_FILE}\"
# How `baseline record` names kernels (the baseline records it; `check` uses the baseline's):
# \"demangled\" is the name exactly as ncu prints it, \"function\" the function name alone, so
# `scale<0>(float *)` and `scale<2>(float *)` are one kernel. With either, a kernel renamed by a
# change (template arguments, a generated kernel's number) is paired with its old name.
kernel_key = \"demangled\"
# Another process on the GPU moves durations and DRAM traffic: \"warn\" shows those rules as
# warnings naming it and gates the rest; \"refuse\" exits 2; \"gate\" gates everything.
# shared_gpu = \"warn\"
# A failure on time alone while the kernel's code, instruction counts and launches are unchanged
# is environmental (clocks, other work, thermals): \"warn\" shows it as a warning, \"fail\" gates it.
# environmental = \"warn\"
# A kernel an autotuner builds (XLA's fusions, Inductor's templates, cuDNN's) whose build is not the
# baseline's: \"time\" gates its time and launches only; \"all\" gates every rule, where the jobs
# keep the autotuner's cache between them.
# autotuned_builds = \"time\"",
        steady_lines(steady)
    );
    t
}

/// The `[profile]` lines that say which part of the run is profiled.
fn steady_lines(steady: &Steady) -> String {
    let both =
        "# Only the steady state, after the warm-up where an autotuner times its candidates:\n";
    match steady {
        Steady::All | Steady::WarmUp => format!(
            "{both}# profile_from_start = false   # between cudaProfilerStart/Stop (torch.cuda.profiler.start/stop)\n# nvtx_include = [\"step/\"]     # inside the NVTX range `step`\n"
        ),
        Steady::ProfilerApi => format!(
            "{both}# (the app calls cudaProfilerStart/Stop, in PyTorch torch.cuda.profiler.start/stop)\nprofile_from_start = false\n"
        ),
        Steady::Nvtx(range) => format!(
            "{both}nvtx_include = [{}]\n",
            toml::Value::String(range.clone())
        ),
    }
}

/// The built-in thresholds with a header for this project.
pub(crate) fn thresholds_text(app: &[String]) -> String {
    let builtin = crate::rules::DEFAULT_THRESHOLDS;
    // The built-in file's first line says it is built in; this copy is yours.
    let body = builtin.split_once('\n').map_or(builtin, |(first, rest)| {
        if first.starts_with('#') {
            rest
        } else {
            builtin
        }
    });
    format!(
        "# Thresholds for `{}` — written by `ncugate init` from ncugate's built-in rules; edit\n\
         # them: tighten what matters, add `why` to say what a failure means, `severity = \"warn\"`\n\
         # for checks that should not block a merge. Re-record the baseline after adding a metric.\n{body}",
        // A comment ends at a line break: an argument's newline would start a TOML line.
        crate::text::escape::printable(crate::format::shell_words(app))
    )
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_argument_with_a_newline_stays_in_its_comment() {
        let app = vec![
            "./app".to_string(),
            "x\n[[rule]]\nmetric = \"m\"\nmax_change = \"900%\"".into(),
        ];
        let text = thresholds_text(&app);
        let parsed: toml::Table = toml::from_str(&text).expect("valid TOML");
        let builtin: toml::Table =
            toml::from_str(&thresholds_text(&["./app".to_string()])).expect("valid TOML");
        assert_eq!(parsed, builtin, "no rule injected: {}", &text[..300]);
        assert!(text.lines().next().is_some_and(|l| l.contains("\\u{000a}")));
    }
    use super::*;

    #[test]
    fn the_files_it_writes_parse_as_what_they_are() {
        let app = vec!["./build/app".to_string(), "--name".into(), "a \"b\"".into()];
        let build = vec!["sh".to_string(), "-c".into(), "make -j8 && echo ok".into()];
        let text = config_text(&app, Some(&build), &Steady::All);
        let parsed: toml::Value = toml::from_str(&text).expect("TOML");
        assert_eq!(parsed["app"]["command"][2].as_str(), Some("a \"b\""));
        assert_eq!(
            parsed["build"]["command"][2].as_str(),
            Some("make -j8 && echo ok")
        );
        // Written with its comment, so a user sees the choice before the first baseline.
        assert_eq!(parsed["gate"]["kernel_key"].as_str(), Some("demangled"));
        assert!(text.contains("\"function\" the function name alone"));
        let rules =
            crate::rules::Thresholds::parse(&thresholds_text(&app), "t.toml").expect("rules");
        assert_eq!(
            rules.metrics(),
            crate::rules::Thresholds::builtin()
                .expect("builtin")
                .metrics()
        );
        assert!(
            thresholds_text(&app).starts_with("# Thresholds for `./build/app --name 'a \"b\"'`")
        );
    }
}

#[cfg(test)]
mod steady_tests {
    use super::{Steady, config_text, steady_state};
    use crate::config::InitConfig;

    /// Kernel names of a torch.compile(mode="max-autotune") baseline recorded
    /// on an H100 (fixtures/h100/autotune-e2e/compile.baseline.json).
    const COMPILED: [&str; 3] = [
        "triton_tem_fused_addmm_relu_t_0",
        "triton_mm",
        "void at::vectorized_elementwise_kernel<4, at::FillFunctor<int>, std::array<char *, 1>>(int, T2, T3)",
    ];

    fn init(interactive: bool) -> InitConfig {
        InitConfig {
            dir: std::path::PathBuf::from("."),
            app: vec!["./app".into()],
            build: None,
            force: false,
            profile: true,
            interactive,
        }
    }

    #[test]
    fn each_answer_is_written_as_the_key_that_profiles_it() {
        let tuners = crate::varies::autotuner::recognise(COMPILED);
        assert_eq!(tuners.len(), 1, "{tuners:?}");
        for (answer, steady, key) in [
            ("", Steady::All, None),
            (
                "p",
                Steady::ProfilerApi,
                Some(("profile_from_start", "false")),
            ),
            (
                "step/",
                Steady::Nvtx("step/".into()),
                Some(("nvtx_include", "[\"step/\"]")),
            ),
            ("w", Steady::WarmUp, None),
        ] {
            let mut answers = super::Answers::new([answer]);
            let mut out = String::new();
            let got = steady_state(&init(true), &mut answers, &tuners, &mut out).expect("asked");
            assert_eq!(got, steady, "{answer:?}");
            assert_eq!(answers.asked.len(), 1);
            assert!(
                out.contains("torch.compile max-autotune (Inductor)"),
                "{out}"
            );
            let text = config_text(&["./app".into()], None, &got);
            let table: toml::Table = toml::from_str(&text).expect("valid TOML");
            let profile = table["profile"].as_table().expect("[profile]");
            match key {
                None => {
                    assert!(!profile.contains_key("profile_from_start"));
                    assert!(!profile.contains_key("nvtx_include"));
                }
                Some((k, v)) => assert_eq!(profile[k].to_string(), v, "{text}"),
            }
            let warmup = table["app"].get("warmup").map(|v| v.to_string());
            let want = (steady == Steady::WarmUp).then(|| "1".to_string());
            assert_eq!(warmup, want, "{text}");
            // What init writes, the config loader reads.
            let dir = tempfile::tempdir().expect("a folder");
            let path = dir.path().join("ncugate.toml");
            std::fs::write(&path, &text).expect("written");
            let runner = crate::config::runner_from_file(&path).expect("read back");
            assert_eq!(runner.warmup, u32::from(steady == Steady::WarmUp), "{text}");
        }
    }

    #[test]
    fn on_ci_it_asks_nothing_and_says_how() {
        let tuners = crate::varies::autotuner::recognise(COMPILED);
        let mut answers = super::Answers::default();
        let mut out = String::new();
        let got = steady_state(&init(false), &mut answers, &tuners, &mut out).expect("told");
        assert_eq!(got, Steady::All);
        assert!(answers.asked.is_empty());
        assert!(out.contains("profile_from_start = false"), "{out}");
        assert!(out.contains("`triton_tem_fused_addmm_relu_t_0`"), "{out}");
    }
}
