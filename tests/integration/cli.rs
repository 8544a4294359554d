//! Command-line hygiene: `--build` split like a shell, build output shown
//! apart, flags that would do nothing refused with exit 2 and a reason, each
//! subcommand's help limited to its own flags, completions and man pages, and
//! errors that point at the fix (TOML as toml reports it, metric-name
//! suggestions, hints that fit the missing file).

use crate::common;
use common::Gate;

#[test]
fn build_is_split_like_a_shell_and_its_output_is_shown_apart() {
    let gate = Gate::new();
    let out = gate.run(&[
        "profile",
        "--build",
        "sh -c 'echo hello world; exit 3'",
        "--",
        "true",
    ]);
    out.code(2);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(
        lines.contains(
            &"ncugate: error: the build failed (exit code 3): sh -c 'echo hello world; exit 3'"
        ),
        "{}",
        out.stderr
    );
    assert!(lines.contains(&"  | hello world"), "{}", out.stderr);
    assert!(out.stderr.contains("hint: fix the build; its output is in"));

    let out = gate.run(&["profile", "--build", "sh -c 'unbalanced", "--", "true"]);
    out.code(2);
    assert!(
        out.stderr
            .contains("--build sh -c 'unbalanced: unbalanced quote")
    );
}

#[test]
fn profiling_flags_are_refused_with_input_unless_they_come_from_the_environment() {
    let gate = Gate::recorded();
    gate.fast_run("base");
    let check = ["check", "--baseline", "baseline.json", "--input", "run.csv"];
    for (flag, value) in [
        ("--kernel-name", "foo"),
        ("--timeout", "1"),
        ("--ncu", "/nope"),
        ("--clock-control", "base"),
        ("--build", "make"),
    ] {
        let mut args = check.to_vec();
        args.extend([flag, value]);
        let out = gate.run(&args);
        out.code(2);
        assert!(
            out.stderr.contains(&format!(
                "ncugate: error: {flag} does not apply with --input: the exports were profiled already"
            )),
            "{flag}: {}",
            out.stderr
        );
    }
    // A CI-wide variable is not a typed flag: the gate goes on.
    let out = gate.run_with(
        &check,
        &[("NCUGATE_KERNEL_NAME", "foo"), ("NCUGATE_TIMEOUT", "1")],
    );
    out.code(0);
    let out = gate
        .record()
        .input("run.csv")
        .args(&["--runs", "5", "-o", "b.json"])
        .run();
    out.code(2);
    assert!(out.stderr.contains("--runs does not apply with --input"));
}

#[test]
fn a_value_a_flag_does_not_take_is_one_error_line_and_a_hint() {
    let gate = Gate::new();
    for (args, line, hint) in [
        (
            &["profile", "--env", "CUDA_VISIBLE_DEVICES", "--", "app"][..],
            "ncugate: error: --env CUDA_VISIBLE_DEVICES: expected KEY=VALUE, e.g. --env CUDA_VISIBLE_DEVICES=0",
            "hint: `--help` describes --env",
        ),
        (
            &["sanitize", "--tool", "racechek", "--", "app"][..],
            "ncugate: error: --tool racechek: not a value it takes (did you mean `racecheck`?)",
            "hint: --tool takes memcheck, racecheck, initcheck, synccheck",
        ),
        (
            &["check", "--kernel-key", "name", "--input", "x.csv"][..],
            "ncugate: error: --kernel-key name: not a value it takes",
            "hint: --kernel-key takes demangled, function",
        ),
    ] {
        let out = gate.run(args);
        out.code(2);
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines, [line, hint], "{args:?}");
    }
}

#[test]
fn ncu_flags_are_refused_by_sanitize_and_leaks_saying_where_they_belong() {
    let gate = Gate::new();
    let out = gate
        .sanitize()
        .args(&["--mode", "full", "--clock-control", "base"])
        .run();
    out.code(2);
    assert!(
        out.stderr.starts_with(
            "ncugate: error: --mode does not apply to `ncugate sanitize`; it is a flag of `ncugate check`, `ncugate baseline record`, `ncugate profile`"
        ),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("hint: drop --mode"));
    let out = gate.run(&["leaks", "--kernel-name", "x"]);
    out.code(2);
    assert!(
        out.stderr
            .contains("--kernel-name does not apply to `ncugate leaks`")
    );
    // Saved XML: nothing runs, so run flags are refused.
    gate.write("x.xml", "<ComputeSanitizerOutput/>");
    let out = gate.sanitize().xml("x.xml").args(&["--timeout", "5"]).run();
    out.code(2);
    assert!(
        out.stderr.contains("--timeout does not apply with --xml"),
        "{}",
        out.stderr
    );
}

#[test]
fn each_subcommands_help_lists_only_its_own_flags() {
    let gate = Gate::new();
    let help = gate.sanitize().arg("--help").run();
    help.code(0);
    for ncu_only in [
        "--mode",
        "--graph-profiling",
        "--clock-control",
        "--cache-control",
        "--replay-mode",
        "--kernel-name",
        "--launch-skip",
        "--launch-count",
        "--extra-metric",
        "--ncu ",
    ] {
        assert!(
            !help.stdout.contains(ncu_only),
            "sanitize --help offers {ncu_only}"
        );
    }
    assert!(!help.stdout.contains("kernel × rule"));
    let check = gate.check().arg("--help").run();
    assert!(check.stdout.contains("Profiling (ncu):"));
    assert!(check.stdout.contains("--kernel-name"));
    let record = gate.record().arg("--help").run();
    assert!(
        !record.stdout.contains("--junit"),
        "record writes no report"
    );
}

#[test]
fn completions_and_man_pages_come_from_the_cli_definition() {
    let gate = Gate::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = gate.run(&["completions", shell]);
        out.code(0);
        assert!(out.stdout.contains("ncugate"), "{shell}");
        assert!(
            out.stdout.contains("kernel-name"),
            "{shell}: flags completed"
        );
    }
    let out = gate.run(&["completions", "tcsh"]);
    out.code(2);
    let man = gate.run(&["man"]);
    man.code(0);
    assert!(man.stdout.contains(".TH ncugate 1"), "{}", man.stdout);
    let out = gate.run(&["man", "--dir", "man"]);
    out.code(0);
    let page = gate.read("man/ncugate-baseline-record.1");
    assert!(page.contains(".TH ncugate-baseline-record 1"));
    assert!(page.contains("runs"));
}

#[test]
fn toml_errors_are_shown_as_toml_reports_them() {
    let gate = Gate::new();
    gate.fast_run("base");
    gate.write(
        "ncugate.toml",
        "[app]\ncommand = [\"./app\"]\n[profile\nmode = \"fast\"\n",
    );
    let out = gate.check().baseline("b.json").input("run.csv").run();
    out.code(2);
    let expected = "\
ncugate: error: ncugate.toml: invalid config
  | TOML parse error at line 3, column 9
  |   |
  | 3 | [profile
  |   |         ^
";
    assert!(out.stderr.starts_with(expected), "{}", out.stderr);
    gate.write(
        "t.toml",
        "[[rule]]\nmetric = \"x\"\nper = \"kernel\"\nworse = \"up\"\n",
    );
    let out = gate
        .check()
        .baseline("b.json")
        .input("run.csv")
        .args(&["--config", "none.toml"])
        .run();
    out.code(2);
    assert!(out.stderr.contains("cannot read config none.toml"));
    assert!(out.stderr.contains("hint: create one with `ncugate init"));
}

#[test]
fn a_misspelled_metric_gets_the_name_it_was_meant_to_be() {
    let gate = Gate::recorded();
    gate.fast_run("base");
    gate.write(
        "t.toml",
        "[[rule]]\nmetric = \"sm__inst_exectued.sum\"\nper = \"kernel\"\naggregate = \"sum\"\nworse = \"higher\"\nmax_change = \"+10%\"\n",
    );
    let out = gate
        .check()
        .baseline("baseline.json")
        .input("run.csv")
        .thresholds("t.toml")
        .run();
    out.code(2);
    assert!(
        out.stderr
            .contains("hint: did you mean `sm__inst_executed.sum` (it is in the baseline)?"),
        "{}",
        out.stderr
    );
    let out = gate
        .record()
        .input("run.csv")
        .thresholds("t.toml")
        .output("b.json")
        .run();
    out.code(2);
    assert!(
        out.stderr
            .contains("hint: did you mean `sm__inst_executed.sum`?"),
        "{}",
        out.stderr
    );
    // A name close to one of the export's own columns: that column is suggested.
    gate.write(
        "t2.toml",
        "[[rule]]\nmetric = \"dram__bytes_sum\"\nper = \"kernel\"\naggregate = \"sum\"\nworse = \"higher\"\nmax_change = \"+10%\"\n",
    );
    let out = gate
        .record()
        .input("run.csv")
        .thresholds("t2.toml")
        .output("b.json")
        .run();
    out.one_clear_error("metric `dram__bytes_sum` is not in this export");
    assert!(
        out.stderr
            .contains("hint: did you mean `dram__bytes.sum`? This export has that column"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_missing_file_gets_a_hint_that_fits_it() {
    let gate = Gate::new();
    gate.fast_run("base");
    let out = gate.check().baseline("nope.json").input("run.csv").run();
    out.code(2);
    assert!(out.stderr.contains("cannot read baseline nope.json"));
    assert!(
        out.stderr.contains(
            "hint: record it on the GPU runner: `ncugate baseline record --output nope.json`"
        ),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("raw"), "no export hint for a baseline");
    gate.base_baseline(&[]);
    let out = gate
        .check()
        .baseline("baseline.json")
        .input("run.csv")
        .thresholds("t.toml")
        .run();
    out.code(2);
    assert!(out.stderr.contains("cannot read thresholds t.toml"));
    assert!(
        out.stderr
            .contains("`ncugate init` writes a commented thresholds file")
    );
}

#[test]
fn ncu_not_found_is_said_first_with_no_launch_count_before_it() {
    let gate = Gate::new();
    let out = gate.run(&["profile", "--ncu", "/nope/ncu", "--", "/bin/true"]);
    out.one_clear_error("`/nope/ncu` not found");
    assert!(!out.stderr.contains("profiled 0"), "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(
        lines[0].starts_with("ncugate: profile: /nope/ncu "),
        "{}",
        out.stderr
    );
    assert!(lines[1].starts_with("ncugate: error: "), "{}", out.stderr);
}

#[test]
fn a_timeout_too_long_for_the_clock_means_no_deadline() {
    // `start + timeout` overflowed the clock: ncugate panicked after spawning
    // ncu (exit 101) and left it running. The stand-in ncu fails at once.
    let gate = Gate::new();
    let ncu = gate.ncu("quick-ncu").fail(3, "no GPU here").install();
    gate.record()
        .args(&["--timeout", "9223372036854775807"])
        .ncu(&ncu)
        .app(&["./app"])
        .run()
        .one_clear_error("exit code 3");
}

#[test]
fn short_help_fits_80_columns_and_each_subcommand_says_its_own_exit_codes() {
    let gate = Gate::new();
    let help = |args: &[&str]| {
        let out = gate.run_with(args, &[("COLUMNS", "80")]);
        out.code(0);
        out.stdout.clone()
    };
    let footers = [
        (&["check"][..], "1  regression: a rule or structural check"),
        (&["merge"][..], "1  regression: a workload regressed"),
        (&["sanitize"][..], "1  findings: compute-sanitizer reported"),
        (&["leaks"][..], "1  leak: graph executables alive at exit"),
        (
            &["baseline", "record"][..],
            "0  done: every workload recorded",
        ),
        (
            &["profile"][..],
            "0  done: every workload recorded (or profiled)",
        ),
        (&["baseline", "diff"][..], "1  the files differ"),
    ];
    for (command, footer) in footers {
        let short = help(&[command, &["-h"]].concat());
        let long = help(&[command, &["--help"]].concat());
        for text in [&short, &long] {
            let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > 80).collect();
            assert!(wide.is_empty(), "{command:?}: {wide:#?}");
            assert!(
                text.contains(footer),
                "{command:?} lacks {footer:?}:\n{text}"
            );
        }
        if !["check", "merge"].contains(&command[0]) {
            assert!(!short.contains("structural check"), "{command:?}:\n{short}");
        }
        assert!(short.lines().count() <= long.lines().count(), "{command:?}");
    }
    // -h leaves out the rarely used ncu flags; --help lists every one.
    let (short, long) = (help(&["check", "-h"]), help(&["check", "--help"]));
    for rare in [
        "--replay-mode",
        "--launch-skip",
        "--cache-control",
        "--workdir",
    ] {
        assert!(!short.contains(rare) && long.contains(rare), "{rare}");
    }
    // Texts true where they land.
    assert!(!help(&["check", "-h"]).contains("baseline record records"));
    let profile = help(&["profile", "--help"]);
    assert!(
        !profile.to_lowercase().contains("with --input"),
        "{profile}"
    );
    assert!(!profile.contains("the table"), "{profile}");
    let record = help(&["baseline", "record", "--help"]);
    assert!(!record.contains("the table that repeats"), "{record}");
    assert!(help(&["check", "--help"]).contains("schema_version 2"));
}

#[test]
fn an_explain_budget_that_is_no_number_of_seconds_is_refused() {
    // `--explain-budget nan` was taken: no elapsed time is `>=` NaN, so the
    // explain runs had no budget at all.
    let gate = Gate::new();
    for value in ["nan", "inf", "NaN", "1e400"] {
        let out = gate.check().args(&["--explain-budget", value]).run();
        out.code(2);
        assert!(
            out.stderr
                .contains(&format!("ncugate: error: --explain-budget {value}")),
            "{value}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains("a finite number"),
            "{value}: {}",
            out.stderr
        );
    }
}
