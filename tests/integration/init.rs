//! `ncugate init` in an empty folder: the files it writes, never overwriting,
//! no questions on CI, and the README's path — init, baseline record, check —
//! replayed from the H200 recordings of the reference app (so it runs here,
//! with no GPU).

use crate::common;
use clap::Parser;
use common::{Gate, H200};
use ncugate::cli::Cli;
use ncugate::config::Config;
use ncugate::config::InitConfig;
use ncugate::init::{Answers, run};
use ncugate::runner::process::Exit;
use ncugate::runner::replay::{Recorded, ReplayRunner};

#[test]
fn on_ci_it_asks_nothing_and_writes_both_files() {
    let gate = Gate::new();
    let out = gate.run_with(
        &[
            "init",
            "--build",
            "make -C 'my app'",
            "--",
            "./app",
            "--iters",
            "3",
        ],
        &[("CI", "true")],
    );
    out.code(0);
    assert!(!out.stdout.contains("App command"), "{}", out.stdout);
    assert!(
        out.stdout.contains("ncugate: wrote ./ncugate.toml"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("no usable GPU and ncu here"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("ncugate baseline record"));
    let config: toml::Value = toml::from_str(&gate.read("ncugate.toml")).expect("TOML");
    assert_eq!(
        config["app"]["command"],
        toml::Value::try_from(["./app", "--iters", "3"]).unwrap()
    );
    assert_eq!(
        config["build"]["command"],
        toml::Value::try_from(["make", "-C", "my app"]).unwrap()
    );
    assert_eq!(
        config["gate"]["thresholds"].as_str(),
        Some("ncugate-thresholds.toml")
    );
    // The kernel key is written, with what it means, not left to a default nobody sees.
    assert_eq!(config["gate"]["kernel_key"].as_str(), Some("demangled"));
    assert!(
        gate.read("ncugate.toml")
            .contains("# How `baseline record` names kernels"),
        "{}",
        gate.read("ncugate.toml")
    );
    let thresholds = gate.read("ncugate-thresholds.toml");
    assert!(thresholds.starts_with("# Thresholds for `./app --iters 3`"));
    assert!(thresholds.contains("[[rule]]"));
    // The written config is what `check --help` documents: it loads.
    let out = gate.run(&["profile", "--help"]);
    out.code(0);
}

#[test]
fn it_never_overwrites_without_force() {
    let gate = Gate::new();
    gate.write("ncugate.toml", "# mine\n");
    let out = gate.run(&["init", "--", "./app"]);
    out.one_clear_error("./ncugate.toml already exists; init never overwrites");
    assert!(out.stderr.contains("hint: edit them, or pass --force"));
    assert_eq!(gate.read("ncugate.toml"), "# mine\n");
    assert!(!gate.path("ncugate-thresholds.toml").exists());
    gate.run(&["init", "--force", "--", "./app"]).code(0);
    assert!(gate.read("ncugate.toml").contains("command = [\"./app\"]"));
}

#[test]
fn without_an_app_it_says_how_to_give_one() {
    let gate = Gate::new();
    gate.run(&["init"])
        .one_clear_error("no app: ncugate init needs the command that runs your CUDA app");
    assert!(!gate.path("ncugate.toml").exists());
}

#[test]
fn on_a_terminal_it_asks_for_the_app_and_the_build() {
    let gate = Gate::new();
    let config = InitConfig {
        dir: gate.dir.path().to_path_buf(),
        app: Vec::new(),
        build: None,
        force: false,
        profile: true,
        interactive: true,
    };
    let mut answers = Answers::new(["./build/app --name 'a b'", "make -j8"]);
    let replay = ReplayRunner::default();
    let done = run(&config, &mut answers, false, &replay).expect("init");
    assert_eq!(answers.asked.len(), 2, "{:?}", answers.asked);
    assert!(
        answers.asked[0].starts_with("App command"),
        "{:?}",
        answers.asked
    );
    assert!(done.stdout.contains("ncugate: wrote "), "{}", done.stdout);
    assert!(done.trial.is_none());
    let text = gate.read("ncugate.toml");
    assert!(
        text.contains(r#"command = ["./build/app", "--name", "a b"]"#),
        "{text}"
    );
    assert!(text.contains(r#"command = ["make", "-j8"]"#), "{text}");
}

#[test]
fn a_failed_trial_run_still_says_which_files_were_written() {
    let gate = Gate::new();
    let config = InitConfig {
        dir: gate.dir.path().to_path_buf(),
        app: vec!["./app".into()],
        build: None,
        force: false,
        profile: true,
        interactive: false,
    };
    // ncu does not start: no recorded step.
    let replay = ReplayRunner::default();
    let done = run(&config, &mut Answers::default(), true, &replay).expect("init");
    assert!(done.trial.is_some(), "{}", done.stdout);
    assert!(
        done.stdout.contains("ncugate: wrote ") && !done.stdout.contains("next, on the GPU runner"),
        "{}",
        done.stdout
    );
    assert!(gate.path("ncugate.toml").is_file());
}

/// A fast profiling run of the reference app as recorded on the H200.
fn profiled(name: &str) -> Recorded {
    common::steps::recorded_fast(H200, name, Exit::Code(0), true)
}

fn config_of(args: &[&str]) -> Config {
    Config::try_from(Cli::try_parse_from(args).expect("args")).expect("config")
}

#[test]
fn init_record_and_check_work_as_the_readme_says() {
    let gate = Gate::new();
    let dir = gate.dir.path();
    let out_dir = dir.join("target/ncugate");
    let config = InitConfig {
        dir: dir.to_path_buf(),
        app: vec![
            "kernels/build/graph_app".into(),
            "--iters".into(),
            "3".into(),
        ],
        build: None,
        force: false,
        profile: true,
        interactive: false,
    };
    // With a GPU: one trial run, kernels listed.
    let replay = ReplayRunner::new(
        out_dir.join("init"),
        vec![profiled("graph_app.base.fast.run1")],
    );
    let done = run(&config, &mut Answers::default(), true, &replay).expect("init");
    assert!(done.trial.is_none(), "{:?}", done.trial);
    assert!(
        done.stdout.contains("ncugate: profiled once in"),
        "{}",
        done.stdout
    );
    let seen = replay.seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].args.iter().any(|a| a == "kernels/build/graph_app"));
    drop(seen);

    let toml = dir.join("ncugate.toml");
    let toml = toml.to_str().unwrap();
    let Config::Record(record) = config_of(&[
        "ncugate", "baseline", "record", "--config", toml, "--runs", "1",
    ]) else {
        panic!("record");
    };
    assert_eq!(
        record.output,
        ncugate::config::BaselinePlace::File(dir.join("ncugate-baseline.json"))
    );
    let replay = ReplayRunner::new(
        out_dir.join("run"),
        vec![profiled("graph_app.base.fast.run2")],
    );
    assert_eq!(common::execute(&Config::Record(record), &replay), 0);
    assert!(dir.join("ncugate-baseline.json").is_file());

    let Config::Check(check) = config_of(&["ncugate", "check", "--config", toml]) else {
        panic!("check");
    };
    assert_eq!(
        check.thresholds.file(),
        Some(dir.join("ncugate-thresholds.toml").as_path())
    );
    let replay = ReplayRunner::new(
        out_dir.join("run"),
        vec![profiled("graph_app.base.fast.run3")],
    );
    let (code, said) = ncugate::commands::capture_stdout(|| {
        ncugate::commands::execute(&Config::Check(check.clone()), &replay)
    });
    assert_eq!(code, 0, "{said}");
    assert!(said.starts_with("ncugate: PASS (exit 0)"), "{said}");
    let replay = ReplayRunner::new(
        out_dir.join("run"),
        vec![profiled("graph_app.redundant-node.fast")],
    );
    assert_eq!(common::execute(&Config::Check(check.clone()), &replay), 1);
}
