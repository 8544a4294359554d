//! Shared helpers for the integration tests: a temp dir holding copies of
//! real fixtures under short names, and the real binary run inside it, so
//! reports mention only relative paths and snapshots are stable. Its command
//! lines are built a flag at a time ([`Ncugate`]); ncu is played by one
//! stand-in, `tests/bin/fixture-ncu`, set up per test by [`Gate::ncu`], with
//! [`FixtureNcu`] as its twin in the test process and [`steps`] for the
//! library's `ReplayRunner`.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

pub const H200: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/h200");
pub const REFERENCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/ncu-reference");
pub const THRESHOLDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/thresholds");
/// The one stand-in ncu, a shell script: its header says what it plays.
pub const FIXTURE_NCU: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bin/fixture-ncu");
pub const XSD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/schemas/jenkins-xunit-junit-10.xsd"
);

/// `ncugate::commands::execute` in the test process: the exit code, with
/// the reports it prints kept from the test's output (the harness captures
/// `print!`, not ncugate's writes to the standard output handle).
pub fn execute(
    config: &ncugate::config::Config,
    runner: &dyn ncugate::runner::process::ProcessRunner,
) -> i32 {
    ncugate::commands::capture_stdout(|| ncugate::commands::execute(config, runner)).0
}

/// A scratch directory for one test.
pub struct Gate {
    pub dir: tempfile::TempDir,
}

/// What a run of the binary did.
pub struct Outcome {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Default for Gate {
    fn default() -> Self {
        Gate::new()
    }
}

impl Gate {
    pub fn new() -> Gate {
        Gate {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// A scratch dir with `baseline.json` recorded from the three base runs
    /// of the reference app, which are there too ([`Gate::base_baseline`]).
    pub fn recorded() -> Gate {
        let gate = Gate::new();
        gate.base_baseline(&[]);
        gate
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Copies `from` (absolute) into the scratch dir as `name`.
    pub fn copy(&self, from: impl AsRef<Path>, name: &str) -> &Gate {
        std::fs::copy(from.as_ref(), self.path(name))
            .unwrap_or_else(|e| panic!("copy {}: {e}", from.as_ref().display()));
        self
    }

    /// Copies `fixtures/h200/<file>` as `name`.
    pub fn h200(&self, file: &str, name: &str) -> &Gate {
        self.copy(Path::new(H200).join(file), name)
    }

    /// Copies `fixtures/ncu-reference/<file>` as `name`.
    pub fn reference(&self, file: &str, name: &str) -> &Gate {
        self.copy(Path::new(REFERENCE).join(file), name)
    }

    pub fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> &Gate {
        std::fs::write(self.path(name), bytes).expect("write");
        self
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_else(|e| panic!("read {name}: {e}"))
    }

    /// The JSON document in the scratch dir's file `name`.
    pub fn json(&self, name: &str) -> serde_json::Value {
        serde_json::from_str(&self.read(name)).unwrap_or_else(|e| panic!("{name}: not JSON: {e}"))
    }

    /// Runs `ncugate ARGS` in the scratch dir.
    pub fn run(&self, args: &[&str]) -> Outcome {
        self.run_with(args, &[])
    }

    pub fn run_with(&self, args: &[&str], env: &[(&str, &str)]) -> Outcome {
        self.command(args, env)
            .output()
            .expect("run ncugate")
            .into()
    }

    /// Runs `ncugate ARGS` and also returns its peak resident set in KiB.
    ///
    /// Through a `python3` parent: a child's `ru_maxrss` includes the
    /// high-water mark of the process that spawned it (the memory map it
    /// replaced at exec), and this test binary, running many tests at once,
    /// can peak far above ncugate. python3's own ~10 MB is the floor of the
    /// figure instead.
    pub fn run_measured(&self, args: &[&str]) -> (Outcome, i64) {
        const MEASURE: &str = "import resource, subprocess, sys\n\
            code = subprocess.call(sys.argv[1:])\n\
            print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n\
            sys.exit(code)\n";
        let bin = assert_cmd::cargo::cargo_bin!("ncugate");
        let cmd = self.command(args, &[]);
        let mut python = Command::new("python3");
        python.arg("-c").arg(MEASURE).arg(bin).args(cmd.get_args());
        python.current_dir(self.dir.path());
        for (key, value) in cmd.get_envs() {
            match value {
                Some(value) => python.env(key, value),
                None => python.env_remove(key),
            };
        }
        let out = python.output().expect("run python3");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let (stderr, last) = stderr
            .trim_end()
            .rsplit_once('\n')
            .map_or(("", stderr.trim_end()), |(rest, last)| (rest, last));
        let max_kb = last
            .parse()
            .unwrap_or_else(|_| panic!("no RSS line: {last}"));
        let outcome = Outcome {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: format!("{stderr}\n"),
        };
        (outcome, max_kb)
    }

    /// Runs `ncugate ARGS` with its standard output closed before it writes
    /// (`ncugate … | head -0`).
    pub fn run_stdout_closed(&self, args: &[&str]) -> Outcome {
        let mut child = self
            .command(args, &[])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn ncugate");
        drop(child.stdout.take());
        // Its stdout taken, the output has none.
        child.wait_with_output().expect("wait for ncugate").into()
    }

    /// Runs `ncugate ARGS > /dev/full`; `None` where there is no /dev/full.
    pub fn run_stdout_full(&self, args: &[&str]) -> Option<Outcome> {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .ok()?;
        let out = self
            .command(args, &[])
            .stdout(full)
            .output()
            .expect("run ncugate");
        Some(out.into())
    }

    /// `ncugate ARGS` in the scratch dir with `env` added, none of the
    /// caller's settings for ncugate (its environment variables) inherited.
    pub fn command<A: AsRef<OsStr>>(
        &self,
        args: impl IntoIterator<Item = A>,
        env: &[(&str, &str)],
    ) -> Command {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("ncugate"));
        cmd.current_dir(self.dir.path())
            .args(args)
            .env_remove("NCUGATE_BASELINE")
            .env_remove("NCUGATE_THRESHOLDS")
            .env_remove("NCUGATE_KERNEL_KEY")
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_OUTPUT")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("COLUMNS")
            .env_remove("NCUGATE_SHOW")
            .env_remove("NCUGATE_HISTORY")
            .env_remove("NCUGATE_MAX_INPUT_SIZE")
            .env_remove("GITHUB_SHA")
            .env_remove("GITHUB_REF_NAME")
            .env_remove("GIT_COMMIT")
            .env_remove("BRANCH_NAME")
            .env("NO_COLOR", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Copies the three base runs of the reference app (fast mode) as
    /// `base1.csv`, `base2.csv`, `base3.csv`.
    pub fn base_runs(&self) -> &Gate {
        for i in 1..=3 {
            self.h200(
                &format!("graph_app.base.fast.run{i}.raw.csv"),
                &format!("base{i}.csv"),
            );
        }
        self
    }

    /// Copies the raw page of the recorded fast run of the reference app's
    /// `--inject` variant (base: its first run) as `run.csv`.
    pub fn fast_run(&self, variant: &str) -> &Gate {
        self.h200(&format!("{}.raw.csv", fast_recording(variant)), "run.csv")
    }

    /// Copies the recorded `--set full` run of the reference app's `--inject`
    /// variant: its raw page as `run.csv`, its details page as `run.details.csv`.
    pub fn full_run(&self, variant: &str) -> &Gate {
        self.h200(&format!("graph_app.{variant}.full.raw.csv"), "run.csv")
            .h200(
                &format!("graph_app.{variant}.full.details.csv"),
                "run.details.csv",
            )
    }

    /// Records `baseline.json` from the three base runs of the reference app (fast mode).
    pub fn base_baseline(&self, extra: &[&str]) -> Outcome {
        let out = self
            .base_runs()
            .record()
            .base_inputs()
            .output("baseline.json")
            .args(extra)
            .run();
        assert_eq!(out.code, 0, "record failed: {}", out.stderr);
        out
    }

    /// Records `output` from the reference app's `--set full` base run: its raw
    /// page (copied as `base.csv`) and details page (`base.details.csv`), for
    /// the gates that need ncu's findings.
    pub fn full_baseline(&self, output: &str, extra: &[&str]) -> Outcome {
        self.h200("graph_app.base.full.raw.csv", "base.csv")
            .h200("graph_app.base.full.details.csv", "base.details.csv");
        let out = self
            .record()
            .input("base.csv")
            .details("base.details.csv")
            .output(output)
            .args(extra)
            .run();
        assert_eq!(out.code, 0, "record failed: {}", out.stderr);
        out
    }

    /// `ncugate ARGS`, a command line to add to and run (see [`Ncugate`]).
    pub fn ncugate(&self, args: &[&str]) -> Ncugate<'_> {
        Ncugate {
            gate: self,
            args: Vec::new(),
            env: Vec::new(),
        }
        .args(args)
    }

    /// `ncugate check`.
    pub fn check(&self) -> Ncugate<'_> {
        self.ncugate(&["check"])
    }

    /// `ncugate baseline record`.
    pub fn record(&self) -> Ncugate<'_> {
        self.ncugate(&["baseline", "record"])
    }

    /// `ncugate sanitize`.
    pub fn sanitize(&self) -> Ncugate<'_> {
        self.ncugate(&["sanitize"])
    }
}

/// `Ncugate` methods that each add one flag with its value: `name => "--flag"`.
macro_rules! flags {
    ($($name:ident => $flag:literal,)*) => {
        $(
            #[doc = concat!("`", $flag, " VALUE`.")]
            pub fn $name(self, value: impl AsRef<OsStr>) -> Self {
                self.flag($flag, value)
            }
        )*
    };
}

/// A command line of the binary, built a flag at a time, that runs in its
/// scratch dir as [`Gate::command`] sets it up:
/// `gate.check().baseline("b.json").input("run.csv").json("r.json").run()`.
/// The flags that the tests give again and again have a method each; any
/// other is an [`Ncugate::arg`].
#[must_use = "a command line does nothing until it runs"]
pub struct Ncugate<'g> {
    gate: &'g Gate,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
}

impl Ncugate<'_> {
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Several arguments (a slice of `&str`, so `&String`s coerce in it).
    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(OsString::from));
        self
    }

    fn flag(self, flag: &str, value: impl AsRef<OsStr>) -> Self {
        self.arg(flag).arg(value)
    }

    flags! {
        baseline => "--baseline",
        input => "--input",
        details => "--details",
        thresholds => "--thresholds",
        output => "--output",
        workload => "--workload",
        history => "--history",
        ncu => "--ncu",
        xml => "--xml",
        json => "--json",
        junit => "--junit",
        markdown => "--markdown",
        html => "--html",
    }

    /// `--input base1.csv --input base2.csv --input base3.csv` ([`Gate::base_runs`]).
    pub fn base_inputs(self) -> Self {
        self.input("base1.csv")
            .input("base2.csv")
            .input("base3.csv")
    }

    /// `-- APP`: the app to profile, last.
    pub fn app(self, app: &[&str]) -> Self {
        self.arg("--").args(app)
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// The process to spawn or run, as [`Gate::command`] makes it.
    pub fn std_command(&self) -> Command {
        let mut cmd = self.gate.command(&self.args, &[]);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }

    /// The same as an `assert_cmd` command: for its `write_stdin` and `timeout`.
    pub fn command(&self) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.std_command())
    }

    /// Runs it as a GitHub Actions step: `$GITHUB_STEP_SUMMARY` is the
    /// scratch file `summary.md` and `$GITHUB_OUTPUT` is `output.txt`, both
    /// empty first.
    pub fn run_as_github_step(self) -> Outcome {
        let gate = self.gate;
        gate.write("summary.md", "").write("output.txt", "");
        self.env("GITHUB_STEP_SUMMARY", gate.path("summary.md"))
            .env("GITHUB_OUTPUT", gate.path("output.txt"))
            .run()
    }

    /// Runs it (no standard input) and waits.
    pub fn run(&self) -> Outcome {
        self.std_command().output().expect("run ncugate").into()
    }
}

/// The stand-in ncu (`tests/bin/fixture-ncu`) set up in a scratch dir: a
/// link to it under the name a test gives, and its settings in the file
/// beside the link that it reads, so the one path carries them wherever
/// ncugate takes an ncu (`--ncu`, `NCUGATE_NCU`, `[profile] ncu`).
/// Unconfigured, it replays the H200 recordings of the reference app.
pub struct Ncu<'g> {
    gate: &'g Gate,
    name: String,
    settings: Vec<(&'static str, String)>,
    delays: Vec<String>,
}

impl Gate {
    /// The stand-in ncu as `name` in the scratch dir; [`Ncu::install`] makes it.
    pub fn ncu(&self, name: &str) -> Ncu<'_> {
        Ncu {
            gate: self,
            name: name.into(),
            settings: Vec::new(),
            delays: Vec::new(),
        }
    }
}

impl Ncu<'_> {
    fn set(mut self, key: &'static str, file: &str) -> Self {
        self.settings
            .push((key, self.gate.path(file).display().to_string()));
        self
    }

    /// Each call appends its arguments to the scratch file `file`, a line a call.
    pub fn log_argv(self, file: &str) -> Self {
        self.set("argv_log", file)
    }

    /// `--import R.ncu-rep` prints the file `R<suffix>` (a page recorded beside the report).
    pub fn import_page(mut self, suffix: &str) -> Self {
        self.settings.push(("import_suffix", suffix.into()));
        self
    }

    /// Fails at once: prints `message` on stderr and exits `code`.
    pub fn fail(mut self, code: i32, message: &str) -> Self {
        self.settings.push(("fail_code", code.to_string()));
        self.settings.push(("fail_message", message.into()));
        self
    }

    /// First writes `bytes` to stderr, within 30 s; blocked that long, it
    /// writes the scratch file `blocked` and exits 1.
    pub fn stderr_flood(mut self, bytes: usize, blocked: &str) -> Self {
        self.settings.push(("stderr_flood", bytes.to_string()));
        self.set("flood_blocked", blocked)
    }

    /// Runs until stopped: writes its pid to the scratch file `ncu_pid`,
    /// starts a sleeping app whose pid it then publishes in `app_pid` (whole:
    /// a test waits for that file), and waits for it.
    pub fn hang(self, ncu_pid: &str, app_pid: &str) -> Self {
        self.set("pid_file", ncu_pid).set("app_pid_file", app_pid)
    }

    /// The first call prints `Segmentation fault` as the app's output and
    /// hangs until stopped (it creates the scratch file `marker`); the calls
    /// after it replay as usual.
    pub fn hang_once(self, marker: &str) -> Self {
        self.set("hang_once", marker)
    }

    /// Sleeps `before` and `after` seconds around the replay of a variant
    /// matching the glob `variant`; the first match counts.
    pub fn delay(mut self, variant: &str, before: f64, after: f64) -> Self {
        self.delays.push(format!("{variant}:{before}:{after}"));
        self
    }

    /// Links the stand-in and writes its settings; its absolute path.
    pub fn install(mut self) -> String {
        let link = self.gate.path(&self.name);
        std::os::unix::fs::symlink(FIXTURE_NCU, &link).expect("link the stand-in ncu");
        if !self.delays.is_empty() {
            self.settings.push(("delays", self.delays.join(" ")));
        }
        // Shell assignments, each value single-quoted (a quote in it closed, escaped, reopened).
        let conf: String = self
            .settings
            .iter()
            .map(|(key, value)| format!("{key}='{}'\n", value.replace('\'', r"'\''")))
            .collect();
        self.gate.write(&format!("{}.conf", self.name), conf);
        link.display().to_string()
    }
}

impl Gate {
    /// `ncugate ARGS | head -0`: the reader is gone before ncugate writes;
    /// it exits `code` all the same, with no panic.
    pub fn closed_stdout_exits(&self, args: &[&str], code: i32) -> Outcome {
        let out = self.run_stdout_closed(args);
        let stderr = &out.stderr;
        assert_eq!(out.code, code, "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        out
    }

    /// `ncugate ARGS > /dev/full` (where there is one): exit 2, the error
    /// says standard output could not be written, no panic.
    pub fn full_stdout_is_an_error(&self, args: &[&str]) {
        if let Some(out) = self.run_stdout_full(args) {
            let stderr = &out.stderr;
            assert_eq!(out.code, 2, "{stderr}");
            assert!(
                stderr.contains("ncugate: error: cannot write standard output"),
                "{stderr}"
            );
            assert!(!stderr.contains("panicked"), "{stderr}");
        }
    }

    /// `ncugate history record REPORT --commit C --branch B --time T --history URL`.
    pub fn history_record(
        &self,
        url: &str,
        report: &str,
        (commit, branch, time): (&str, &str, &str),
    ) -> Outcome {
        self.run(&[
            "history",
            "record",
            report,
            "--commit",
            commit,
            "--branch",
            branch,
            "--time",
            time,
            "--history",
            url,
        ])
    }

    /// Records `pass.json` in the history at `url` as two accepted runs on
    /// main a day apart: commits c1 and c2.
    pub fn two_accepted_runs(&self, url: &str) {
        for (commit, time) in [
            ("c1", "2026-11-01T00:00:00Z"),
            ("c2", "2026-11-02T00:00:00Z"),
        ] {
            self.history_record(url, "pass.json", (commit, "main", time))
                .code(0);
        }
    }
}

/// The name in `fixtures/h200` of the recording of an `--inject` variant's
/// fast profiling run (`NAME.ncu.log` is ncu's `--log-file`: messages, then
/// the raw page; `NAME.stdout.log`/`NAME.stderr.log` are the app's pipes), as
/// `tests/bin/fixture-ncu` names it.
pub fn fast_recording(variant: &str) -> String {
    match variant {
        "base" => "graph_app.base.fast.run1".into(),
        v => format!("graph_app.{v}.fast"),
    }
}

/// The bytes of `fixtures/h200/<name>`.
pub fn h200_bytes(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(H200).join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `tests/bin/fixture-ncu` in the test process, for the library's
/// `execute`: plays ncu from the recordings of the reference app. A
/// profiling run writes the `--inject` variant's recorded `--log-file` (or
/// prints it, with none), prints the app's recorded output and leaves a
/// report naming the variant; `--import` of that report prints the page
/// asked for: the source page of `scale` (`--page source`, as an explain run
/// imports it) or else the raw page (the CSV part of the recorded log file).
/// Every command is kept.
#[derive(Default)]
pub struct FixtureNcu {
    pub seen: std::sync::Mutex<Vec<Vec<String>>>,
    /// The check run's `--log-file` instead of the variant's recorded one.
    pub log: Option<Vec<u8>>,
    /// The variant whose source page the explain run of `--launch-skip`
    /// (given) gets, instead of the app's `--inject` variant.
    pub page_for_skip: Option<fn(&str) -> &'static str>,
}

impl ncugate::runner::process::ProcessRunner for FixtureNcu {
    fn run(
        &self,
        spec: &ncugate::runner::process::CommandSpec,
        on_line: &mut dyn FnMut(&str),
    ) -> ncugate::runner::process::Finished {
        use ncugate::runner::process::{Exit, Finished};
        self.seen.lock().expect("lock").push(spec.args.clone());
        let arg = |flag: &str| {
            let i = spec.args.iter().position(|a| a == flag)?;
            spec.args.get(i + 1).cloned()
        };
        let done = |exit: Exit, lines: Vec<String>| Finished {
            exit,
            lines,
            elapsed: std::time::Duration::from_millis(1500),
        };
        if let Some(report) = arg("--import") {
            let variant = std::fs::read_to_string(report).expect("report written by profiling");
            let page = if arg("--page").as_deref() == Some("source") {
                h200_bytes(&format!(
                    "explain/graph_app.{variant}.scale.sourcecounters.csv"
                ))
            } else {
                let log = h200_bytes(&format!("{}.ncu.log", fast_recording(&variant)));
                let text = String::from_utf8_lossy(&log);
                let csv = &text[text.find("\"ID\"").expect("raw page in the log")..];
                csv.as_bytes().to_vec()
            };
            if let Some(out) = &spec.stdout_to {
                std::fs::write(out, page).expect("write import");
            }
            return done(Exit::Code(0), vec![]);
        }
        let Some(mut variant) = arg("--inject") else {
            return done(
                Exit::SpawnFailed("not a profiling run of the app".into()),
                vec![],
            );
        };
        let explaining = spec.args.iter().any(|a| a == "SourceCounters");
        if let (true, Some(page), Some(skip)) =
            (explaining, self.page_for_skip, arg("--launch-skip"))
        {
            variant = page(&skip).to_string();
        }
        let name = fast_recording(&variant);
        let export = arg("--export").expect("--export");
        std::fs::write(format!("{export}.ncu-rep"), &variant).expect("write report");
        let mut pipes = String::new();
        for pipe in ["stdout", "stderr"] {
            pipes.push_str(&String::from_utf8_lossy(&h200_bytes(&format!(
                "{name}.{pipe}.log"
            ))));
        }
        let recorded = || h200_bytes(&format!("{name}.ncu.log"));
        match arg("--log-file") {
            Some(file) => std::fs::write(file, self.log.clone().unwrap_or_else(recorded))
                .expect("write log file"),
            None => pipes.push_str(&String::from_utf8_lossy(&recorded())),
        }
        let lines: Vec<String> = pipes.lines().map(str::to_string).collect();
        for l in &lines {
            on_line(l);
        }
        done(Exit::Code(0), lines)
    }
}

/// Steps for the library's `ReplayRunner` (recorded output, exit codes and
/// files in place of ncu's processes), shared by the tests that drive the
/// runner in the test process.
pub mod steps {
    use ncugate::runner::process::Exit;
    use ncugate::runner::replay::Recorded;
    use std::path::Path;

    /// A profiling run that printed `log`, exited `exit` and (maybe) wrote the report.
    pub fn profiled(log: &str, exit: Exit, report: bool) -> Recorded {
        let mut step = Recorded::log(log, exit);
        if report {
            step.files
                .push(("run.ncu-rep".into(), b"NVR\0recorded".to_vec()));
        }
        step
    }

    /// A fast-mode profiling run: the app's output `pipes`, ncu's messages
    /// and raw CSV in its `--log-file` (`log`), and (maybe) the report.
    pub fn fast(pipes: &str, log: Vec<u8>, exit: Exit, report: bool) -> Recorded {
        let mut step = profiled(pipes, exit, report);
        step.files
            .push((ncugate::runner::ncu::OUTPUT_FILE.into(), log));
        step
    }

    /// A fast-mode profiling run as recorded on the H200 in `dir`
    /// (`NAME.stdout.log`, `NAME.stderr.log`, `NAME.ncu.log`).
    pub fn recorded_fast(dir: &str, name: &str, exit: Exit, report: bool) -> Recorded {
        let read = |suffix: &str| {
            std::fs::read(Path::new(dir).join(format!("{name}.{suffix}")))
                .unwrap_or_else(|e| panic!("{name}.{suffix}: {e}"))
        };
        let pipes = [read("stdout.log"), read("stderr.log")].concat();
        fast(
            &String::from_utf8_lossy(&pipes),
            read("ncu.log"),
            exit,
            report,
        )
    }

    /// An `ncu --import` step whose standard output is `page`.
    pub fn imported(page: impl Into<Vec<u8>>) -> Recorded {
        Recorded {
            lines: vec![],
            exit: Exit::Code(0),
            stdout_file: Some(page.into()),
            files: vec![],
        }
    }
}

/// `check` as `ncugate.toml` gives it for the reference app: profiles with
/// `runner` once, against the baseline file `baseline`, with the built-in
/// rules and every other setting at its default; the reports in `outputs`.
pub fn profiled_check(
    baseline: PathBuf,
    runner: ncugate::runner::RunnerConfig,
    outputs: ncugate::report::Outputs,
) -> ncugate::config::CheckConfig {
    ncugate::config::CheckConfig {
        baseline: ncugate::config::BaselinePlace::File(baseline),
        source: ncugate::config::Source::Profile {
            runner: Box::new(runner),
            runs: 1,
            quiet: true,
        },
        details: vec![],
        thresholds: ncugate::rules::ThresholdsSource::BuiltIn,
        kernel_key: None,
        allow_device_mismatch: false,
        shared_gpu: Default::default(),
        outputs,
        style: Default::default(),
        sanitizer: None,
        ncu: "ncu".into(),
        import_with_ncu: false,
        history: None,
        environmental: Default::default(),
        autotuned_builds: Default::default(),
        explain: Default::default(),
        locked_counters: Default::default(),
        audit_lib: Default::default(),
    }
}

/// The text of `fixtures/h200/<file>`.
/// `args` and then `extra`: a command line given one more flag.
pub fn args_with<'a>(args: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    args.iter().chain(extra).copied().collect()
}

pub fn h200_text(file: &str) -> String {
    std::fs::read_to_string(Path::new(H200).join(file))
        .unwrap_or_else(|e| panic!("read fixtures/h200/{file}: {e}"))
}

/// A thresholds file of one rule: `metric` fails where it grows more than 20%.
pub fn rule(metric: &str) -> String {
    format!("[[rule]]\nmetric = \"{metric}\"\nworse = \"higher\"\nmax_change = \"20%\"\n")
}

/// `thresholds/<file>` with the first `from` replaced by `to` (which must be there).
pub fn rules_with(file: &str, from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(Path::new(THRESHOLDS).join(file))
        .unwrap_or_else(|e| panic!("read thresholds/{file}: {e}"));
    assert!(text.contains(from), "{file} lacks {from:?}");
    text.replacen(from, to, 1)
}

impl From<std::process::Output> for Outcome {
    fn from(out: std::process::Output) -> Outcome {
        Outcome {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Outcome {
    /// Asserts the exit code, showing the output when it is wrong.
    pub fn code(&self, expected: i32) -> &Outcome {
        assert_eq!(
            self.code, expected,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Asserts `needle` is in stdout, as printed or with the terminal report's
    /// line wrapping undone (runs of whitespace read as one space).
    pub fn stdout_has(&self, needle: &str) -> &Outcome {
        assert!(
            self.stdout_shows(needle),
            "stdout lacks {needle:?}:\n{}",
            self.stdout
        );
        self
    }

    /// Asserts `needle` is not in stdout, neither as printed nor with the
    /// terminal report's line wrapping undone.
    pub fn stdout_lacks(&self, needle: &str) -> &Outcome {
        assert!(
            !self.stdout_shows(needle),
            "stdout has {needle:?}:\n{}",
            self.stdout
        );
        self
    }

    /// Whether stdout has `needle` as printed or with its line wrapping undone.
    fn stdout_shows(&self, needle: &str) -> bool {
        let unwrapped = self.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        self.stdout.contains(needle) || unwrapped.contains(needle)
    }

    /// What it wrote to stderr.
    pub fn stderr(&self) -> &str {
        &self.stderr
    }

    pub fn stderr_has(&self, needle: &str) -> &Outcome {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}:\n{}",
            self.stderr
        );
        self
    }

    /// An exit-2 error: exactly one `ncugate: error:` line, its detail lines
    /// (`  | …`) if any, then one `hint:` line, last; no panic. (Progress lines
    /// may come before them.)
    pub fn one_clear_error(&self, needle: &str) -> &Outcome {
        self.code(2);
        let lines: Vec<&str> = self.stderr.lines().collect();
        let errors = lines
            .iter()
            .filter(|l| l.starts_with("ncugate: error: "))
            .count();
        assert_eq!(errors, 1, "expected one error line, got:\n{}", self.stderr);
        assert!(lines.len() >= 2, "{}", self.stderr);
        // Between them only the error's detail (toml's report, a command's output), as `  | …`.
        let at = lines
            .iter()
            .position(|l| l.starts_with("ncugate: error: "))
            .unwrap_or(0);
        assert!(
            lines[at + 1..lines.len() - 1]
                .iter()
                .all(|l| l.starts_with("  | ")),
            "{}",
            self.stderr
        );
        let (error, hint) = (lines[at], lines[lines.len() - 1]);
        assert!(
            error.starts_with("ncugate: error: ") && error.contains(needle),
            "{error}"
        );
        assert!(hint.starts_with("hint: ") && hint.len() > 10, "{hint}");
        assert!(!self.stderr.contains("panicked"));
        self
    }
}

/// Validates a JUnit file with xmllint against the Jenkins xUnit schema.
/// xmllint is installed by `.ci/run`; a missing xmllint fails the test.
pub fn assert_valid_junit(path: &Path) {
    let out = std::process::Command::new("xmllint")
        .args(["--noout", "--schema", XSD])
        .arg(path)
        .output()
        .expect("xmllint is required (Debian: libxml2-utils; .ci/run installs it)");
    assert!(
        out.status.success(),
        "JUnit invalid:\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(path).unwrap_or_default()
    );
}

/// Runner settings as `ncugate.toml` gives them for the reference app, with
/// `app` as the command line and every artifact under `out`.
pub fn runner_config(app: &[&str], workdir: &Path, out: &Path) -> ncugate::runner::RunnerConfig {
    ncugate::runner::RunnerConfig {
        build: None,
        app: app.iter().map(|a| a.to_string()).collect(),
        env: vec![],
        workdir: workdir.to_path_buf(),
        timeout: std::time::Duration::from_secs(600),
        retries: 0,
        warmup: 0,
        mode: ncugate::runner::Mode::Fast,
        graph_profiling: ncugate::model::GraphProfiling::Node,
        clock_control: ncugate::runner::ClockControl::None,
        cache_control: ncugate::runner::CacheControl::All,
        replay_mode: ncugate::runner::ReplayMode::Kernel,
        kernel_name: None,
        launch_skip: None,
        launch_count: None,
        extra_metrics: vec![],
        dcgm: ncugate::runner::Dcgm::Fail,
        ncu: "ncu".into(),
        profile_from_start: true,
        nvtx_include: Vec::new(),
        kernel_env: Vec::new(),
        toolchain_command: Vec::new(),
        out_dir: out.to_path_buf(),
    }
}

/// Why `value` does not validate against the JSON Schema `schemas/<schema>`
/// (empty: it does). The schema as the types generate it, which the
/// `json_schemas` test holds equal to the committed file.
pub fn json_schema_errors(schema: &str, value: &serde_json::Value) -> Vec<String> {
    let text = ncugate::schema::files()
        .into_iter()
        .find(|f| f.name == schema)
        .unwrap_or_else(|| panic!("no schema {schema}"))
        .text;
    let schema_json: serde_json::Value = serde_json::from_str(&text).expect("schema JSON");
    let validator = jsonschema::validator_for(&schema_json).expect("a valid JSON Schema");
    validator
        .iter_errors(value)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Asserts that `value` validates against the JSON Schema `schemas/<schema>`.
pub fn assert_valid_json(schema: &str, value: &serde_json::Value) {
    let errors = json_schema_errors(schema, value);
    assert!(
        errors.is_empty(),
        "not valid against schemas/{schema}: {errors:#?}"
    );
}
