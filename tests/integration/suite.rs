//! Suites offline: `[[workload]]` tables, baselines per workload and GPU,
//! `--shard` and `ncugate merge`, driven by ncu output recorded on an H200
//! (`fixtures/h200`). Profiling is replayed by [`common::FixtureNcu`], which
//! plays the recorded log and export of the variant named on the app's command line.

use crate::common;
use clap::Parser;
use common::Gate;
use ncugate::cli::Cli;
use ncugate::config::Config;
use std::path::Path;

/// Four workloads of the reference app. `strided` and `unfolded` are gated
/// against baselines recorded from the base app: they are the regressions.
const SUITE: &str = r#"
[profile]
ncu = "ncu"

[[workload]]
name = "base"
command = ["kernels/build/graph_app", "--inject", "base"]
tags = ["pr"]

[[workload]]
name = "fp64"
command = ["kernels/build/graph_app", "--inject", "fp64"]
tags = ["nightly"]

[[workload]]
name = "strided"
command = ["kernels/build/graph_app", "--inject", "strided"]
tags = ["pr", "nightly"]

[[workload]]
name = "unfolded"
command = ["kernels/build/graph_app", "--inject", "unfolded-loop"]
tags = ["nightly"]
"#;

/// A scratch dir with the suite and the baselines of every workload recorded
/// from exports: base, fp64 from their own runs; strided, unfolded from base runs.
fn suite() -> Gate {
    let g = Gate::new();
    g.write("ncugate.toml", SUITE);
    for i in 1..=3 {
        g.h200(
            &format!("graph_app.base.fast.run{i}.raw.csv"),
            &format!("base{i}.csv"),
        );
    }
    g.h200("graph_app.fp64.fast.raw.csv", "fp64.csv");
    let base = [
        "--input",
        "base1.csv",
        "--input",
        "base2.csv",
        "--input",
        "base3.csv",
    ];
    for (workload, inputs) in [
        ("base", &base[..]),
        ("fp64", &["--input", "fp64.csv"][..]),
        ("strided", &base[..]),
        ("unfolded", &base[..]),
    ] {
        g.record()
            .workload(workload)
            .args(inputs)
            .run()
            .code(0)
            .stdout_has(&format!("baselines/{workload}/nvidia-h200-cc90-132sm.json"));
    }
    g
}

/// Runs `ncugate ARGS` in-process with the fixture ncu; the exit code.
fn run_suite(g: &Gate, args: &[&str]) -> i32 {
    let config_path = g.path("ncugate.toml");
    // In-process: file arguments are made absolute inside the scratch dir.
    let mut owned: Vec<String> = Vec::new();
    let mut next_is_file = false;
    for a in args {
        owned.push(if next_is_file {
            g.path(a).display().to_string()
        } else {
            a.to_string()
        });
        next_is_file = matches!(
            *a,
            "--json" | "--junit" | "--markdown" | "--html" | "--thresholds"
        );
    }
    let mut argv = vec!["ncugate"];
    argv.extend(owned.iter().map(String::as_str));
    let config_arg = config_path.display().to_string();
    argv.extend_from_slice(&["--config", &config_arg, "--no-build", "-q"]);
    if args[0] == "check" {
        argv.extend_from_slice(&["--color", "never"]);
    }
    let cli = Cli::try_parse_from(&argv).expect("valid command line");
    let Config::Suite(config) = Config::try_from(cli).expect("valid config") else {
        panic!("not a suite run: {argv:?}");
    };
    common::execute(&Config::Suite(config), &common::FixtureNcu::default())
}

/// The JSON report without what may differ between an unsharded and a merged
/// run: timings, and the shard bookkeeping.
fn comparable(text: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(text).expect("JSON");
    let o = v.as_object_mut().expect("object");
    for key in ["shard", "merged_from", "planned"] {
        o.remove(key);
    }
    for w in o["workloads"].as_array_mut().expect("workloads") {
        w.as_object_mut().expect("workload").remove("seconds");
        // The explain stage's note says how long it took (`explained 0
        // kernels in 0.1 s, …`): a timing too.
        if let Some(notes) = w["report"]["notes"].as_array_mut() {
            for note in notes {
                let timed = note
                    .as_str()
                    .filter(|n| n.starts_with("explained "))
                    .and_then(|n| Some((n.find(" in ")?, n.find(" s, ")?, n)));
                if let Some((from, to, n)) = timed {
                    *note = format!("{} in … s{}", &n[..from], &n[to + 2..]).into();
                }
            }
        }
        if let Some(runs) = w["report"]["profiling"].as_array_mut() {
            for run in runs {
                run.as_object_mut().expect("run").remove("seconds");
            }
        }
    }
    v
}

#[test]
fn merged_shards_give_the_unsharded_verdict_and_json() {
    let g = suite();
    let whole = run_suite(
        &g,
        &["check", "--json", "whole.json", "--junit", "whole.xml"],
    );
    assert_eq!(whole, 1, "strided and unfolded regress");
    let whole_json = g.read("whole.json");
    let report: serde_json::Value = serde_json::from_str(&whole_json).expect("JSON");
    let outcomes: Vec<(String, String)> = report["workloads"]
        .as_array()
        .expect("list")
        .iter()
        .map(|w| {
            (
                w["name"].as_str().expect("name").to_string(),
                w["report"]["outcome"]
                    .as_str()
                    .expect("outcome")
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            ("base".to_string(), "pass".to_string()),
            ("fp64".into(), "pass".into()),
            ("strided".into(), "regression".into()),
            ("unfolded".into(), "regression".into()),
        ]
    );
    common::assert_valid_junit(&g.path("whole.xml"));

    for n in [2, 3] {
        let mut shards = Vec::new();
        let mut gated = Vec::new();
        for k in 1..=n {
            let (shard, json) = (format!("{k}/{n}"), format!("shard-{k}-of-{n}.json"));
            let code = run_suite(&g, &["check", "--shard", &shard, "--json", &json]);
            let r: serde_json::Value = serde_json::from_str(&g.read(&json)).expect("JSON");
            assert_eq!(r["shard"], shard.as_str());
            assert_eq!(code, r["exit_code"].as_i64().expect("code") as i32);
            gated.extend(
                r["workloads"]
                    .as_array()
                    .expect("list")
                    .iter()
                    .map(|w| w["name"].as_str().expect("name").to_string()),
            );
            shards.push(json);
        }
        gated.sort();
        assert_eq!(gated, ["base", "fp64", "strided", "unfolded"], "{n} shards");
        let mut args = vec!["merge", "--expect-shards"];
        let n_text = n.to_string();
        args.push(&n_text);
        // Any order of the shard files.
        args.extend(shards.iter().rev().map(String::as_str));
        let merged_json = format!("merged-{n}.json");
        let merged_xml = format!("merged-{n}.xml");
        args.extend_from_slice(&[
            "--json",
            &merged_json,
            "--junit",
            &merged_xml,
            "--markdown",
            "merged.md",
            "--html",
            "html",
        ]);
        g.run(&args)
            .code(1)
            .stdout_has("2 regressed (strided, unfolded), 2 passed");
        assert_eq!(
            comparable(&g.read(&merged_json)),
            comparable(&whole_json),
            "{n} shards"
        );
        common::assert_valid_junit(&g.path(&merged_xml));
        let junit = g.read(&merged_xml);
        assert!(
            junit.contains("<testsuite name=\"strided: void scale&lt;2&gt;(const float *, float *, long, int)\""),
            "a testsuite per workload × kernel: {junit}"
        );
        let md = g.read("merged.md");
        assert!(md.contains("## ❌ ncugate suite: regression"), "{md}");
        assert!(
            md.contains("### ❌ ncugate: regression"),
            "workload sections one level down: {md}"
        );
        assert!(
            g.read("html/index.html")
                .contains("href=\"strided/index.html\"")
        );
        assert!(g.path("html/strided/index.html").exists());
    }
}

#[test]
fn merge_refuses_what_would_make_the_verdict_wrong() {
    let g = suite();
    for k in 1..=3 {
        run_suite(
            &g,
            &[
                "check",
                "--shard",
                &format!("{k}/3"),
                "--json",
                &format!("s{k}.json"),
            ],
        );
    }
    g.run(&["merge", "s1.json", "s3.json"])
        .one_clear_error("cannot merge: shard 2/3 is missing");
    g.run(&[
        "merge",
        "--expect-shards",
        "2",
        "s1.json",
        "s2.json",
        "s3.json",
    ])
    .one_clear_error("--expect-shards 2, but s1.json is shard 1/3");
    g.run(&["merge", "s1.json", "s2.json", "s3.json", "s2.json"])
        .one_clear_error("shard 2/3 is given twice (s2.json, s2.json)");
    // Unsharded runs of single workloads merge too, each workload once.
    for (json, input) in [("u1.json", "base1.csv"), ("u2.json", "base2.csv")] {
        g.check()
            .workload("base")
            .input(input)
            .json(json)
            .run()
            .code(0);
    }
    g.run(&["merge", "u1.json", "u2.json"])
        .one_clear_error("workload `base` is reported twice (u1.json and u2.json)");
    g.run(&["merge", "u1.json", "s1.json"])
        .one_clear_error("some reports are shards and some are not");
    // Different thresholds: shard 2 run with another rules file.
    let rules = std::fs::read_to_string(Path::new(common::THRESHOLDS).join("default.toml"))
        .expect("default rules");
    g.write(
        "other.toml",
        rules.replacen("max_change = \"20%\"", "max_change = \"25%\"", 1),
    );
    run_suite(
        &g,
        &[
            "check",
            "--shard",
            "2/3",
            "--thresholds",
            "other.toml",
            "--json",
            "t2.json",
        ],
    );
    g.run(&["merge", "s1.json", "t2.json", "s3.json"])
        .one_clear_error("were made with different thresholds");
    // Different baselines: shard 3 after base was re-recorded. In the
    // checkout, the reports made with the old file are refused first: their
    // rows are not what the baseline here makes.
    let old_base = g.read("baselines/base/nvidia-h200-cc90-132sm.json");
    g.record().workload("base").input("base1.csv").run().code(0);
    run_suite(&g, &["check", "--shard", "3/3", "--json", "b3.json"]);
    let stale = ["s1.json", "s2.json", "s3.json"]
        .into_iter()
        .find(|f| g.read(f).contains("\"name\": \"base\""))
        .expect("a shard gated base");
    g.run(&["merge", "s1.json", "s2.json", "b3.json"])
        .one_clear_error(&format!("{stale}: workload `base`: baseline "))
        .stderr_has("base/nvidia-h200-cc90-132sm.json has SHA-256");
    // Merged where the baselines are not (rows held to their own numbers,
    // and said so), the file that differs is named, not only a digest of the
    // whole folder.
    let elsewhere = Gate::new();
    for f in ["s1.json", "s2.json", "b3.json"] {
        elsewhere.write(f, g.read(f));
    }
    // The reports name the baselines by absolute path: away, as on another machine.
    std::fs::rename(g.path("baselines"), g.path("baselines.away")).expect("move");
    elsewhere
        .run(&["merge", "s1.json", "s2.json", "b3.json"])
        .one_clear_error("were made with different baselines: base/nvidia-h200-cc90-132sm.json (")
        .stderr_has("rows held to their own numbers only, not recomputed");
    // Reports without the per-file digests (version 1, or edited) compare the whole digest.
    let mut old: serde_json::Value = serde_json::from_str(&g.read("b3.json")).expect("JSON");
    old.as_object_mut()
        .expect("object")
        .remove("baseline_files");
    elsewhere.write("o3.json", old.to_string());
    elsewhere
        .run(&["merge", "s1.json", "s2.json", "o3.json"])
        .one_clear_error("were made with different baselines (");
    std::fs::rename(g.path("baselines.away"), g.path("baselines")).expect("move back");
    g.write("baselines/base/nvidia-h200-cc90-132sm.json", old_base);
    // Digests that differ only after the 12 hex digits a message shows still differ.
    for field in ["thresholds_sha256", "baselines_sha256"] {
        let text = g.read("s3.json");
        let at = text.find(&format!("\"{field}\": \"")).expect(field) + field.len() + 5;
        let old = &text[at + 12..at + 13];
        let new = if old == "0" { "1" } else { "0" };
        let edited = format!("{}{new}{}", &text[..at + 12], &text[at + 13..]);
        g.write("d3.json", edited);
        let what = field.trim_end_matches("_sha256");
        g.run(&["merge", "s1.json", "s2.json", "d3.json"])
            .one_clear_error(&format!("were made with different {what}"));
    }
    // Another ncugate version.
    let edited = g.read("s3.json").replace(
        &format!("\"ncugate_version\": \"{}\"", env!("CARGO_PKG_VERSION")),
        "\"ncugate_version\": \"0.0.1\"",
    );
    g.write("v3.json", edited);
    g.run(&["merge", "s1.json", "s2.json", "v3.json"])
        .one_clear_error("different ncugate versions");
    // A single check's report (no [[workload]], --baseline FILE) is not a suite report.
    let single = Gate::recorded();
    single
        .check()
        .baseline("baseline.json")
        .input("base1.csv")
        .json("single.json")
        .run()
        .code(0);
    single
        .run(&["merge", "single.json"])
        .one_clear_error("not a suite report");
}

#[test]
fn a_missing_baseline_names_the_command_that_records_it_and_the_others_still_run() {
    let g = suite();
    std::fs::remove_dir_all(g.path("baselines/fp64")).expect("rm");
    let code = run_suite(&g, &["check", "--json", "r.json"]);
    assert_eq!(code, 2, "an errored workload wins over regressions");
    let r: serde_json::Value = serde_json::from_str(&g.read("r.json")).expect("JSON");
    let outcome = |name: &str| {
        r["workloads"]
            .as_array()
            .expect("list")
            .iter()
            .find(|w| w["name"] == name)
            .map(|w| w["report"]["outcome"].as_str().expect("o").to_string())
    };
    assert_eq!(outcome("fp64").as_deref(), Some("error"));
    assert_eq!(outcome("base").as_deref(), Some("pass"), "still gated");
    assert_eq!(
        outcome("strided").as_deref(),
        Some("regression"),
        "still gated"
    );
    let errors = r["workloads"][1]["report"]["errors"][0]
        .as_str()
        .expect("error");
    assert!(
        errors.contains("no baseline for workload `fp64`"),
        "{errors}"
    );
    assert!(
        errors.contains("`ncugate baseline record --workload fp64 --config "),
        "{errors}"
    );

    // On the command line, CPU-only with exports: the exact command, with the inputs.
    g.check().workload("fp64").input("fp64.csv").run()
        .one_clear_error("workload `fp64`: ")
        .stderr_has("hint: record it on this runner: `ncugate baseline record --workload fp64 --input fp64.csv`");
}

#[test]
fn an_unreadable_baselines_folder_is_an_error_not_an_empty_digest() {
    // A workload's folder that is a file cannot be listed: before, the suite
    // report's baselines digest silently became "" and merged with any other.
    let g = suite();
    std::fs::remove_dir_all(g.path("baselines/fp64")).expect("rm");
    g.write("baselines/fp64", "not a folder");
    g.check()
        .json("r.json")
        .run()
        .one_clear_error("baselines folder")
        .stderr_has("baselines/fp64");
    assert!(!g.path("r.json").exists(), "no report with an empty digest");
}

#[test]
fn a_workload_with_baselines_for_other_gpus_only_names_them() {
    let g = suite();
    std::fs::rename(
        g.path("baselines/fp64/nvidia-h200-cc90-132sm.json"),
        g.path("baselines/fp64/nvidia-a100-cc80-108sm.json"),
    )
    .expect("mv");
    g.check().workload("fp64").input("fp64.csv").run()
        .one_clear_error("no baseline for workload `fp64` on this GPU (nvidia-h200-cc90-132sm.json); there are baselines for nvidia-a100-cc80-108sm")
        .stderr_has("hint: record it on this runner: `ncugate baseline record --workload fp64 --input fp64.csv`");
}

/// The data is read with the first baseline's kernel key mode; when this
/// GPU's baseline has another, it is read again with that one (read once
/// with the wrong mode, every kernel would be new and missing).
#[test]
fn the_data_is_keyed_like_the_baseline_of_its_gpu_whatever_the_others_use() {
    let g = suite();
    let elsewhere = Gate::new();
    elsewhere.h200("graph_app.fp64.fast.raw.csv", "fp64.csv");
    elsewhere
        .record()
        .args(&["--kernel-key", "function"])
        .input("fp64.csv")
        .output("function.json")
        .run()
        .code(0);
    let other = elsewhere.read("function.json");
    assert!(other.contains("\"kernel_key\": \"function\""), "{other}");
    // Sorted first among the candidates, so its mode is the one tried first.
    g.write("baselines/fp64/a-other-gpu.json", other);
    g.check()
        .workload("fp64")
        .input("fp64.csv")
        .args(&["--show", "all"])
        .run()
        .code(0)
        .stdout_has("ncugate: PASS (exit 0): 0 failed, 23 passed");
}

#[test]
fn exports_are_checked_as_one_workload_against_the_baseline_of_their_gpu() {
    let g = suite();
    g.h200("graph_app.strided.fast.raw.csv", "strided.csv");
    g.check()
        .workload("base")
        .input("base2.csv")
        .run()
        .code(0)
        .stdout_has("PASS  base\n\nncugate suite: PASS (exit 0): 1 workload — 1 passed");
    g.check()
        .workload("base")
        .input("base2.csv")
        .args(&["--show", "all"])
        .run()
        .code(0)
        .stdout_has("── workload base [pr] ──");
    g.check()
        .workload("strided")
        .input("strided.csv")
        .json("s.json")
        .run()
        .code(1)
        .stdout_has("1 regressed (strided)");
    assert!(
        g.read("s.json")
            .contains("baselines/strided/nvidia-h200-cc90-132sm.json")
    );
    // Several workloads and one set of exports do not mix.
    g.check()
        .args(&["--tag", "pr"])
        .input("strided.csv")
        .run()
        .one_clear_error("--input belongs to one workload, but 2 are selected (base, strided)");
    g.check()
        .workload("stirded")
        .input("strided.csv")
        .run()
        .one_clear_error("no workload named `stirded`")
        .stderr_has("did you mean `strided`?");
    // --baseline FILE still works for one workload.
    g.check()
        .workload("base")
        .input("base1.csv")
        .baseline("baselines/base/nvidia-h200-cc90-132sm.json")
        .run()
        .code(0);
}

#[test]
fn a_suite_config_is_validated_once() {
    let g = Gate::new();
    g.write("ncugate.toml", "[[workload]]\nname = \"a\"\ncommand = [\"x\"]\n[[workload]]\nname = \"a\"\ncommand = [\"y\"]\n");
    g.check()
        .input("x.csv")
        .run()
        .one_clear_error("two [[workload]] tables are named `a`");
    g.write(
        "ncugate.toml",
        "[[workload]]\nname = \"../a\"\ncommand = [\"x\"]\n",
    );
    g.check()
        .run()
        .one_clear_error("workload name `../a` is not safe as a file name");
    g.write(
        "ncugate.toml",
        "[app]\ncommand = [\"x\"]\n[[workload]]\nname = \"a\"\ncommand = [\"y\"]\n",
    );
    g.check()
        .run()
        .one_clear_error("both [app] command and [[workload]] tables");
    g.write("ncugate.toml", SUITE);
    g.check()
        .args(&["--shard", "3/2"])
        .run()
        .one_clear_error("--shard 3/2: expected K/N");
    g.check()
        .args(&["--tag", "weekly"])
        .run()
        .one_clear_error("no workload is tagged `weekly`");
}

#[test]
fn recording_profiles_each_workload_of_the_shard_and_stores_its_cost() {
    let g = Gate::new();
    g.write("ncugate.toml", SUITE);
    let code = run_suite(
        &g,
        &[
            "baseline", "record", "--runs", "2", "--tag", "nightly", "--shard", "1/2",
        ],
    );
    assert_eq!(code, 0);
    // Unknown costs: by name, fp64 → 1, strided → 2, unfolded → 1.
    for (workload, here) in [
        ("fp64", true),
        ("strided", false),
        ("unfolded", true),
        ("base", false),
    ] {
        let path = g.path(&format!("baselines/{workload}/nvidia-h200-cc90-132sm.json"));
        assert_eq!(path.exists(), here, "{workload}");
        if here {
            let b: serde_json::Value = serde_json::from_str(
                &g.read(&format!("baselines/{workload}/nvidia-h200-cc90-132sm.json")),
            )
            .expect("JSON");
            assert_eq!(
                b["cost_seconds"], 1.5,
                "mean wall time of the profiled runs"
            );
            assert_eq!(b["runs"], 2);
        }
    }
}

#[test]
fn merge_writes_its_files_before_stdout_and_survives_a_closed_or_full_one() {
    // Before: the suite report went to stdout first, through print!, which
    // panicked (exit 101) when the reader was gone and left no file report.
    let gate = Gate::new();
    let mut args = vec!["merge".to_string()];
    for k in 1..=2 {
        let name = format!("regressed.shard-{k}-of-2.json");
        let shard = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/suite/h200");
        gate.copy(shard.join(&name), &name);
        args.push(name);
    }
    args.extend(["--json".into(), "merged.json".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // `ncugate merge … | head -0`: the reader is gone before ncugate writes.
    let out = gate.run_stdout_closed(&args);
    let stderr = &out.stderr;
    assert_eq!(out.code, 1, "the verdict stands: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        gate.path("merged.json").is_file(),
        "the file report is written first"
    );
    // `ncugate merge … > /dev/full`: exit 2 with one error line, the file still written.
    if Path::new("/dev/full").exists() {
        std::fs::remove_file(gate.path("merged.json")).expect("remove");
        let out = gate.run_stdout_full(&args).expect("/dev/full");
        let stderr = &out.stderr;
        assert_eq!(out.code, 2, "{stderr}");
        assert_eq!(
            stderr
                .matches("ncugate: error: cannot write standard output")
                .count(),
            1,
            "{stderr}"
        );
        assert!(stderr.contains("hint: "), "{stderr}");
        assert!(gate.path("merged.json").is_file());
    }
}

#[test]
fn a_huge_shard_count_plans_only_the_shards_that_get_work() {
    // It allocated one list per shard: --shard 1/4294967295 aborted (out of memory).
    let g = suite();
    let code = run_suite(
        &g,
        &["check", "--shard", "1/4294967295", "--json", "h1.json"],
    );
    let report: serde_json::Value = serde_json::from_str(&g.read("h1.json")).expect("JSON");
    let workloads = report["workloads"].as_array().expect("workloads");
    assert_eq!(workloads.len(), 1, "one workload per shard at most");
    let outcome = workloads[0]["report"]["outcome"].as_str().expect("outcome");
    assert_eq!(code, if outcome == "pass" { 0 } else { 1 });
    run_suite(
        &g,
        &[
            "check",
            "--shard",
            "4294967295/4294967295",
            "--json",
            "hn.json",
        ],
    );
    let report: serde_json::Value = serde_json::from_str(&g.read("hn.json")).expect("JSON");
    assert_eq!(report["workloads"].as_array().map(Vec::len), Some(0));
}

#[test]
fn merge_recomputes_every_outcome_and_refuses_a_report_its_checks_contradict() {
    let g = suite();
    assert_eq!(run_suite(&g, &["check", "--json", "whole.json"]), 1);
    g.run(&["merge", "whole.json"])
        .code(1)
        .stdout_has("2 regressed (strided, unfolded), 2 passed");
    let whole: serde_json::Value = serde_json::from_str(&g.read("whole.json")).expect("JSON");
    let tampered = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v = whole.clone();
        edit(&mut v);
        g.write(name, serde_json::to_string_pretty(&v).expect("JSON"));
        g.run(&["merge", name])
    };
    // Each edit merged to exit 0 or kept a wrong verdict.
    let says_pass = |v: &mut serde_json::Value| {
        for name in ["strided", "unfolded"] {
            let r = workload(v, name);
            r["outcome"] = "pass".into();
            r["exit_code"] = 0.into();
        }
    };
    tampered("pass.json", &|v| {
        says_pass(v);
        v["outcome"] = "pass".into();
        v["exit_code"] = 0.into();
    })
    .one_clear_error(
        "workload `strided` says pass (exit 0) but its checks make it regression (exit 1)",
    );
    tampered("inner.json", &says_pass)
        .one_clear_error("workload `strided` says pass (exit 0) but its checks make it regression");
    tampered("outer.json", &|v| {
        v["outcome"] = "pass".into();
        v["exit_code"] = 0.into();
    })
    .one_clear_error("the report says pass (exit 0) but its workloads make it regression (exit 1)");
    tampered("errors.json", &|v| {
        let r = workload(v, "base");
        r["errors"] = serde_json::json!(["ncu failed"]);
    })
    .one_clear_error("workload `base` says pass (exit 0) but its checks make it error (exit 2)");
    tampered("rule-error.json", &|v| {
        let r = workload(v, "base");
        r["rules"][0]["status"] = "error".into();
    })
    .one_clear_error("workload `base` says pass (exit 0) but its checks make it error (exit 2)");
    tampered("no-checks.json", &|v| {
        let r = workload(v, "base");
        for list in ["rules", "structure", "findings"] {
            r[list] = serde_json::json!([]);
        }
    })
    .one_clear_error("workload `base` has no check that ran");
    tampered("skipped.json", &|v| {
        let r = workload(v, "base");
        for list in ["rules", "structure", "findings"] {
            for check in r[list].as_array_mut().expect(list) {
                check["status"] = "skipped".into();
            }
        }
    })
    .one_clear_error("workload `base` has no check that ran");
    // Every FAIL row made `pass` (or `warn`), the outcomes with them: each
    // outcome agreed with its rows and merged to exit 0, while each row's own
    // numbers (current, baseline mean, allowance) still failed it.
    for (says, file) in [("pass", "rows-pass.json"), ("warn", "rows-warn.json")] {
        tampered(file, &|v| {
            says_pass(v);
            v["outcome"] = "pass".into();
            v["exit_code"] = 0.into();
            for name in ["strided", "unfolded"] {
                let r = workload(v, name);
                for row in r["rules"].as_array_mut().expect("rules") {
                    if row["status"] == "fail" {
                        row["status"] = says.into();
                    }
                }
                for row in r["structure"].as_array_mut().expect("structure") {
                    if row["status"] == "fail" {
                        row["status"] = "pass".into();
                    }
                }
            }
        })
        .one_clear_error(&format!("says {says}, but its numbers fail it"));
    }
    tampered("schema.json", &|v| {
        let r = workload(v, "base");
        r["schema_version"] = 99.into();
    })
    .one_clear_error("workload `base`: report schema_version 99");
    tampered("empty.json", &|v| {
        v["workloads"] = serde_json::json!([]);
        v["suite"] = serde_json::json!([]);
        v["planned"] = serde_json::json!([]);
        v["outcome"] = "pass".into();
        v["exit_code"] = 0.into();
    });
    g.run(&["merge", "empty.json", "empty.json"])
        .one_clear_error("nothing was gated");
    // A duplicate key: serde_json kept the last (`"status": "pass"`).
    let text = g.read("whole.json");
    let fail = text.find("\"status\": \"fail\"").expect("a FAIL row");
    let duplicated = format!(
        "{}\"status\": \"fail\", \"status\": \"pass\"{}",
        &text[..fail],
        &text[fail + "\"status\": \"fail\"".len()..]
    );
    g.write("dup.json", duplicated);
    g.run(&["merge", "dup.json"])
        .one_clear_error("duplicate key `status`");
}

/// The report of workload `name` in a suite report.
fn workload<'v>(v: &'v mut serde_json::Value, name: &str) -> &'v mut serde_json::Value {
    let list = v["workloads"].as_array_mut().expect("workloads");
    let w = list.iter_mut().find(|w| w["name"] == name).expect(name);
    &mut w["report"]
}

#[test]
fn single_workloads_checked_one_at_a_time_merge_across_a_re_recorded_baseline() {
    // Each report's digest covers every workload's baselines: re-recording fp64
    // between the two checks made merge refuse "different baselines".
    let g = suite();
    g.check()
        .workload("base")
        .input("base1.csv")
        .json("one.json")
        .run()
        .code(0);
    g.record()
        .workload("fp64")
        .input("base2.csv")
        .input("base3.csv")
        .run()
        .code(0);
    g.check()
        .workload("fp64")
        .input("base2.csv")
        .json("two.json")
        .run()
        .code(0);
    g.run(&["merge", "one.json", "two.json"])
        .code(0)
        .stdout_has("2 passed");
}

/// Thirty workloads of the reference app, two of them (`w07`, `w22`) the
/// strided variant gated against the base app's baseline, run in two
/// shards and merged: one status line per workload in run order, then only
/// the two failures in full, then the suite's headline. `-q` leaves the
/// passing workloads' lines out, and `--show all` shows every workload in full.
#[test]
fn a_merge_of_thirty_workloads_prints_a_line_each_and_the_failures_in_full() {
    let g = Gate::new();
    let names: Vec<String> = (1..=30).map(|i| format!("w{i:02}")).collect();
    let failing = ["w07", "w22"];
    let mut toml = String::from("[profile]\nncu = \"ncu\"\n");
    for name in &names {
        let variant = if failing.contains(&name.as_str()) {
            "strided"
        } else {
            "base"
        };
        toml.push_str(&format!(
            "\n[[workload]]\nname = \"{name}\"\ncommand = [\"kernels/build/graph_app\", \"--inject\", \"{variant}\"]\n"
        ));
    }
    g.write("ncugate.toml", toml);
    for i in 1..=3 {
        g.h200(
            &format!("graph_app.base.fast.run{i}.raw.csv"),
            &format!("base{i}.csv"),
        );
    }
    g.record().workload("w01").base_inputs().run().code(0);
    let gpu = "nvidia-h200-cc90-132sm.json";
    let recorded = g.read(&format!("baselines/w01/{gpu}"));
    for name in &names[1..] {
        std::fs::create_dir_all(g.path(&format!("baselines/{name}"))).expect("mkdir");
        g.write(&format!("baselines/{name}/{gpu}"), &recorded);
    }
    for k in 1..=2 {
        let (shard, json) = (format!("{k}/2"), format!("s{k}.json"));
        run_suite(&g, &["check", "--shard", &shard, "--json", &json]);
    }

    let merged = g.run(&["merge", "s1.json", "s2.json"]);
    merged.code(1);
    let lines: Vec<&str> = merged.stdout.lines().collect();
    // One status line per workload, in the merged report's order.
    let status: Vec<&str> = lines[..30].iter().map(|l| &l[..9]).collect();
    let expected: Vec<String> = names
        .iter()
        .map(|n| match failing.contains(&n.as_str()) {
            true => format!("FAIL  {n}"),
            false => format!("PASS  {n}"),
        })
        .collect();
    assert_eq!(status, expected, "{}", merged.stdout);
    for line in &lines[..30] {
        assert!(line.chars().count() <= 100, "{line}");
        match line.starts_with("FAIL") {
            true => assert!(line.contains(" — "), "a failure says why: {line}"),
            false => assert!(!line.contains(" — "), "a pass has no reason: {line}"),
        }
    }
    // Then the two failures in full, and nothing of the passing workloads.
    let rules: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("── workload"))
        .copied()
        .collect();
    assert_eq!(rules, ["── workload w07 ──", "── workload w22 ──"]);
    assert_eq!(
        lines.last().copied(),
        Some(
            "ncugate suite: REGRESSION (exit 1): 30 workloads — 2 regressed (w07, w22), 28 passed"
        )
    );
    let passing_words = merged.stdout.matches("ncugate: PASS").count();
    assert_eq!(passing_words, 0, "{}", merged.stdout);

    // -q: the failures' lines and why, no table, no line per passing workload.
    let quiet = g.run(&["merge", "-q", "s1.json", "s2.json"]);
    quiet.code(1);
    let status: Vec<&str> = quiet.stdout.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(status.len(), 2, "{}", quiet.stdout);
    assert!(status[0].starts_with("FAIL  w07") && status[1].starts_with("FAIL  w22"));
    assert!(quiet.stdout.contains("why:"), "{}", quiet.stdout);
    assert!(!quiet.stdout.contains("checks ("), "{}", quiet.stdout);
    assert!(quiet.stdout.len() < merged.stdout.len());

    // --show all: every workload in full.
    let all = g.run(&["merge", "--show", "all", "s1.json", "s2.json"]);
    assert_eq!(all.stdout.matches("── workload ").count(), 30);

    // The Markdown report lists the failures first too: its table (with why) and its sections.
    g.run(&["merge", "s1.json", "s2.json", "--markdown", "m.md"]);
    let md = g.read("m.md");
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| `w")).collect();
    assert!(
        rows[0].starts_with("| `w07` | ❌ regression | `scale"),
        "{md}"
    );
    assert!(
        rows[1].starts_with("| `w22` | ❌ regression | `scale"),
        "{md}"
    );
    assert!(rows[2].starts_with("| `w01` | ✅ pass |  |"), "{md}");
    let sections: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("## Workload"))
        .collect();
    assert_eq!(
        sections[..3],
        [
            "## Workload `w07`",
            "## Workload `w22`",
            "## Workload `w01`"
        ]
    );

    // The HTML index: failures first, each with its reason and a link; each
    // page titled with its workload and verdict, linking back.
    g.run(&["merge", "s1.json", "s2.json", "--html", "html"]);
    let index = g.read("html/index.html");
    let at = |needle: &str| {
        index
            .find(needle)
            .unwrap_or_else(|| panic!("{needle}: {index}"))
    };
    assert!(at("href=\"w07/index.html\"") < at("href=\"w22/index.html\""));
    assert!(at("href=\"w22/index.html\"") < at("href=\"w01/index.html\""));
    assert!(
        index.contains("<td class=\"why\">scale&lt;2&gt;:"),
        "{index}"
    );
    let page = g.read("html/w07/index.html");
    assert!(
        page.contains("<title>w07: REGRESSION — ncugate</title>"),
        "{page}"
    );
    assert!(page.contains("<a href=\"../index.html\">"), "{page}");
    assert!(
        g.read("html/w01/index.html")
            .contains("<title>w01: PASS — ncugate</title>")
    );
}

#[test]
fn a_failed_suite_build_shows_its_output_once_and_names_what_it_skipped() {
    // Both lines on standard error: ncugate reads a build's two streams through two pipes, so
    // lines written to both at once may arrive in either order (1 run in 4 under load).
    let gate = Gate::new();
    gate.write(
        "ncugate.toml",
        r#"
[build]
command = ["sh", "-c", "echo compiling train.cu >&2; echo 'train.cu:12: error: expected ;' >&2; exit 2"]

[[workload]]
name = "train-step"
command = ["./train"]

[[workload]]
name = "infer"
command = ["./infer"]
"#,
    );
    let out = gate.check().args(&["--color", "never"]).run();
    // The build's standard output and error are two pipes: which of its two
    // lines arrives first is up to the scheduler.
    let unwrapped = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        [
            "output: compiling train.cu ⏎ train.cu:12: error: expected ;",
            "output: train.cu:12: error: expected ; ⏎ compiling train.cu",
        ]
        .iter()
        .any(|o| unwrapped.contains(o)),
        "the build's output is not shown:\n{}",
        out.stdout
    );
    out.code(2)
        .stdout_has("the build failed (exit code 2)")
        .stdout_has("not run: its build failed for workload `train-step` (exit code 2: sh -c")
        .stdout_has("baseline:   ./baselines/train-step/\n")
        .stderr_has("  | train.cu:12: error: expected ;");
    for wrong in [
        "see above",
        "<gpu>",
        "input:      \n",
        "the build failed (exit code 2): the build failed",
    ] {
        assert!(!out.stdout.contains(wrong), "{wrong:?} in\n{}", out.stdout);
    }
    // Each status line is printed as its workload finishes, before the next
    // one starts (standard error and output in one stream, as a CI log has them).
    let bin = assert_cmd::cargo::cargo_bin!("ncugate");
    let merged = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("'{}' check --color never 2>&1", bin.display()))
        .current_dir(gate.path(""))
        .output()
        .expect("run ncugate");
    let log = String::from_utf8_lossy(&merged.stdout);
    let at = |needle: &str| {
        log.find(needle)
            .unwrap_or_else(|| panic!("{needle:?} not in\n{log}"))
    };
    assert!(
        at("ERROR train-step") < at("ncugate: workload infer"),
        "{log}"
    );
    assert!(at("ERROR infer") < at("── workload train-step ──"), "{log}");
    assert_eq!(log.matches("ERROR train-step").count(), 1, "{log}");
}

/// (workload, commit, accepted) of every run in the store, from the first
/// series of each workload as `history show --json` prints them.
fn history_runs(g: &Gate, url: &str) -> Vec<(String, String, bool)> {
    let out = g.run(&["history", "show", "--json", "--history", url]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let mut seen = std::collections::BTreeSet::new();
    let mut runs = Vec::new();
    for s in doc["series"].as_array().expect("series") {
        let workload = s["workload"].as_str().expect("workload").to_string();
        if !seen.insert(workload.clone()) {
            continue;
        }
        for p in s["points"].as_array().expect("points") {
            runs.push((
                workload.clone(),
                p["commit"].as_str().expect("commit").to_string(),
                p["accepted"].as_bool().expect("accepted"),
            ));
        }
    }
    runs.sort();
    runs
}

#[test]
fn a_suite_check_records_each_workload_and_gates_each_against_its_own_history() {
    let dir = tempfile::tempdir().expect("temp dir");
    suite_history(&|name| format!("sqlite:{}", dir.path().join(name).display()));
}

/// A suite check with a history store (`fresh(name)`: the URL of a new,
/// empty database): each workload recorded under its name, each gated
/// against its own rolling baseline, shards recording each workload once.
pub(crate) fn suite_history(fresh: &dyn Fn(&str) -> String) {
    let g = suite();
    let url = fresh("suite");
    let history = |commit: &'static str| {
        [
            "--history",
            url.as_str(),
            "--commit",
            commit,
            "--branch",
            "main",
        ]
    };
    // Against the baselines folder: each workload's run is recorded under
    // its own name; the two regressions are kept but are not baseline material.
    let mut args = vec!["check", "--json", "c1.json", "--html", "c1"];
    args.extend(history("c1"));
    assert_eq!(run_suite(&g, &args), 1);
    // Each regressed workload's page draws its failing metrics' trends.
    for w in ["strided", "unfolded"] {
        let page = g.read(&format!("c1/{w}/index.html"));
        assert!(page.contains("<img src=\"charts/trend-"), "{w}: {page}");
    }
    assert!(!g.read("c1/base/index.html").contains("trend-"));
    let c1 = |w: &str, accepted| (w.to_string(), "c1".to_string(), accepted);
    assert_eq!(
        history_runs(&g, &url),
        [
            c1("base", true),
            c1("fp64", true),
            c1("strided", false),
            c1("unfolded", false)
        ]
    );
    let r: serde_json::Value = serde_json::from_str(&g.read("c1.json")).expect("JSON");
    let notes = r["workloads"][2]["report"]["notes"].to_string();
    assert!(
        notes.contains("this run is recorded as commit c1 on main (not baseline material)"),
        "{notes}"
    );

    // The regressions were intended: accepted, they are each workload's
    // rolling baseline, and the same data passes against it. A workload
    // with no accepted run would be that workload's error.
    g.run(&["history", "accept", "c1", "--history", &url])
        .code(0);
    let mut args = vec!["check", "--baseline", "history", "--json", "c2.json"];
    args.extend(history("c2"));
    assert_eq!(run_suite(&g, &args), 0, "{}", g.read("c2.json"));
    let r: serde_json::Value = serde_json::from_str(&g.read("c2.json")).expect("JSON");
    for (i, w) in ["base", "fp64", "strided", "unfolded"].iter().enumerate() {
        let report = &r["workloads"][i]["report"];
        assert!(
            report["baseline"]
                .as_str()
                .expect("baseline")
                .starts_with("history "),
            "{report}"
        );
        let notes = report["notes"].to_string();
        assert!(
            notes.contains(&format!(
                "the last 1 accepted run(s) of workload `{w}` on this GPU, commits c1"
            )),
            "{w}: {notes}"
        );
    }

    // Sharded, then merged: each shard records the workloads it ran, so
    // every workload is in the store once for the commit.
    let mut shards = Vec::new();
    for k in 1..=2 {
        let (shard, json) = (format!("{k}/2"), format!("c3-{k}.json"));
        let mut args = vec![
            "check",
            "--shard",
            &shard,
            "--baseline",
            "history",
            "--json",
            &json,
        ];
        args.extend(history("c3"));
        assert_eq!(run_suite(&g, &args), 0);
        shards.push(json);
    }
    let mut args = vec!["merge", "--expect-shards", "2", "--json", "c3.json"];
    args.extend(shards.iter().map(String::as_str));
    g.run(&args).code(0);
    let c3: Vec<_> = history_runs(&g, &url)
        .into_iter()
        .filter(|(_, c, _)| c == "c3")
        .map(|(w, _, accepted)| (w, accepted))
        .collect();
    assert_eq!(
        c3,
        [
            ("base".to_string(), true),
            ("fp64".into(), true),
            ("strided".into(), true),
            ("unfolded".into(), true)
        ]
    );
}

/// With `NCUGATE_REPORT_KEY` set, `check` signs its JSON report and `merge`
/// and `history record` read only reports signed with that key and left as
/// written: an edited row, a report signed with another key, or one not
/// signed at all is refused before anything in it is believed.
#[test]
fn with_a_report_key_only_reports_signed_with_it_and_unchanged_are_read() {
    let g = suite();
    let key = ("NCUGATE_REPORT_KEY", "ci-secret-1");
    for (name, input, json) in [
        ("base", "base1.csv", "one.json"),
        ("fp64", "fp64.csv", "two.json"),
    ] {
        g.check()
            .workload(name)
            .input(input)
            .json(json)
            .env(key.0, key.1)
            .run()
            .code(0);
    }
    let signed = g.read("one.json");
    let value: serde_json::Value = serde_json::from_str(&signed).expect("a signed report is JSON");
    let signature = value["signature"].as_str().expect("a signature");
    assert!(
        signature.starts_with("hmac-sha256:") && signature.len() == 76,
        "{signature}"
    );
    assert!(signed.ends_with(&format!("\"signature\": \"{signature}\"\n}}\n")));
    let merge = |files: &[&str], key: Option<&str>| {
        let mut args = vec!["merge"];
        args.extend(files);
        let mut run = g.ncugate(&args);
        if let Some(k) = key {
            run = run.env("NCUGATE_REPORT_KEY", k);
        }
        run.run()
    };
    merge(&["one.json", "two.json"], Some(key.1))
        .code(0)
        .stdout_has("2 passed");
    // Without the key the signature is not needed, and not in the way.
    merge(&["one.json", "two.json"], None).code(0);
    // Another key: refused.
    merge(&["one.json", "two.json"], Some("another"))
        .one_clear_error("one.json: the report's signature does not match its content");
    // A number changed after signing (the pass it says is still consistent
    // with the changed row, so only the signature can tell).
    let edited = signed.replacen("\"notes\": [", "\"notes\": [\"edited\", ", 1);
    assert_ne!(edited, signed);
    g.write("edited.json", &edited);
    merge(&["edited.json", "two.json"], Some(key.1))
        .one_clear_error("edited.json: the report's signature does not match its content");
    // Not signed: a report written without the key, or with the signature taken off.
    g.check()
        .workload("base")
        .input("base1.csv")
        .json("plain.json")
        .run()
        .code(0);
    merge(&["plain.json", "two.json"], Some(key.1))
        .one_clear_error("plain.json: the report is not signed, and NCUGATE_REPORT_KEY is set");
    let cut = signed.replace(&format!(",\n  \"signature\": \"{signature}\""), "");
    g.write("cut.json", &cut);
    merge(&["cut.json", "two.json"], Some(key.1)).one_clear_error("the report is not signed");
    // history record reads the same way.
    let record = |file: &str, key: &str| {
        g.ncugate(&[
            "history",
            "record",
            "--history",
            "sqlite:h.sqlite",
            "--commit",
            "c1",
            "--branch",
            "main",
            "--time",
            "2026-12-01T00:00:00Z",
            file,
        ])
        .env("NCUGATE_REPORT_KEY", key)
        .run()
    };
    record("edited.json", key.1).one_clear_error("the report's signature does not match");
    record("plain.json", key.1).one_clear_error("the report is not signed");
    assert!(!g.path("h.sqlite").exists(), "nothing recorded");
    record("one.json", key.1).code(0);
}

/// A regression edited to pass with numbers that agree with each other — the
/// baseline mean set to the current value, or an allowance widened past the
/// change — is refused where the baseline and thresholds are: merge and
/// history record recompute each row's baseline statistics and allowance
/// from the files the report names.
#[test]
fn rows_whose_numbers_agree_but_not_with_the_baseline_and_thresholds_are_refused() {
    let g = suite();
    assert_eq!(run_suite(&g, &["check", "--json", "whole.json"]), 1);
    let whole: serde_json::Value = serde_json::from_str(&g.read("whole.json")).expect("JSON");
    g.run(&["merge", "whole.json"])
        .code(1)
        .stdout_has("2 regressed (strided, unfolded)");
    type Edit = fn(&mut serde_json::Value);
    let edits: [(&str, Edit, &str); 2] = [
        (
            "mean",
            |row| {
                let current = row["current"].clone();
                for stat in ["mean", "min", "max"] {
                    row["baseline"][stat] = current.clone();
                }
                row["change_pct"] = 0.0.into();
            },
            "in the report, 55050240 in the baseline file",
        ),
        (
            "allowance",
            |row| row["allowance"] = 1e12.into(),
            "allowance 1000000000000 and limit none in the report, the rule makes",
        ),
    ];
    for (name, edit, says) in edits {
        let mut report = whole.clone();
        let strided = workload(&mut report, "strided");
        for row in strided["rules"].as_array_mut().expect("rules") {
            if row["status"] == "fail" {
                edit(row);
                row["status"] = "pass".into();
            }
        }
        strided["outcome"] = "pass".into();
        strided["exit_code"] = 0.into();
        let file = format!("{name}.json");
        g.write(&file, serde_json::to_string_pretty(&report).expect("JSON"));
        g.run(&["merge", &file])
            .one_clear_error("workload `strided`: ")
            .stderr_has(says)
            .stderr_has("the row was not made from the files the report names");
        g.ncugate(&[
            "history",
            "record",
            "--history",
            "sqlite:h.sqlite",
            "--commit",
            "c1",
            "--branch",
            "main",
            "--time",
            "2026-12-01T00:00:00Z",
            &file,
        ])
        .run()
        .one_clear_error("workload `strided`: ");
    }
}
