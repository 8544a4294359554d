//! Skipping unchanged workloads, offline: a suite of the reference app's
//! workloads profiled by the stand-in ncu (`tests/bin/fixture-ncu`, replaying
//! H200 recordings), whose calls are counted in its argv log. A second check
//! of an unchanged suite calls ncu for no workload whose inputs are known,
//! says `SKIP` with the commit its verdict is carried from, in every format;
//! each kind of input, changed, runs the workload again.

use crate::common::{Gate, Outcome};

/// `base` and `strided` declare their inputs (`strided` is gated against
/// base's baseline: a regression); `loose` declares none.
fn suite(extra_gate: &str) -> Gate {
    let g = Gate::new();
    let ncu = g.ncu("ncu").log_argv("calls.log").install();
    std::fs::create_dir_all(g.path("src")).expect("src dir");
    g.write("src/base.cu", "__global__ void base() {}\n")
        .write("src/strided.cu", "__global__ void strided() {}\n")
        .write("kernels.cfg", "tile = 128\n");
    g.write(
        "ncugate.toml",
        format!(
            r#"
[profile]
ncu = "{ncu}"

[gate]
skip_unchanged = "declared"
{extra_gate}

[[workload]]
name = "base"
command = ["kernels/build/graph_app", "--inject", "base"]
inputs = ["src/base.cu", "*.cfg"]

[[workload]]
name = "strided"
command = ["kernels/build/graph_app", "--inject", "strided"]
inputs = ["src/strided.cu"]

[[workload]]
name = "loose"
command = ["kernels/build/graph_app", "--inject", "base"]
"#
        ),
    );
    g.base_runs();
    for w in ["base", "strided", "loose"] {
        g.record()
            .workload(w)
            .base_inputs()
            .run()
            .code(0)
            .stdout_has(&format!("baselines/{w}/nvidia-h200-cc90-132sm.json"));
    }
    g
}

/// ncu calls so far that profiled `--inject VARIANT`.
fn calls(g: &Gate, variant: &str) -> usize {
    std::fs::read_to_string(g.path("calls.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(&format!("--inject {variant}")))
        .count()
}

fn check(g: &Gate, extra: &[&str], env: &[(&str, &str)]) -> Outcome {
    let mut cmd = g
        .check()
        .args(&["--color", "never"])
        .args(extra)
        .env("GIT_COMMIT", "1a2b3c4d5e6f");
    for (k, v) in env {
        cmd = cmd.env(k, v);
    }
    cmd.run()
}

/// A suite checked once: every workload profiled, its verdict cached.
fn checked_once(extra_gate: &str) -> Gate {
    let g = suite(extra_gate);
    let first = check(&g, &[], &[]);
    first
        .code(1)
        .stderr_has("RUN   base     no verdict recorded for these inputs yet")
        .stderr_has("RUN   loose    inputs not fully known (it declares no `inputs`)");
    let calls_log = std::fs::read_to_string(g.path("calls.log")).unwrap_or_default();
    assert_eq!(
        (calls(&g, "base"), calls(&g, "strided")),
        (2, 2),
        "{calls_log}"
    );
    g
}

#[test]
fn an_unchanged_suite_skips_its_declared_workloads_named_in_every_format() {
    let g = checked_once("");
    let today = jiff::Timestamp::now().strftime("%Y-%m-%d").to_string();
    let second = g
        .check()
        .args(&["--color", "never"])
        .json("r.json")
        .junit("r.xml")
        .markdown("r.md")
        .html("html")
        .args(&["--format", "github"])
        .env("GIT_COMMIT", "ffff000")
        .run_as_github_step();
    // The carried regression stays a regression: exit 1.
    second
        .code(1)
        .stdout_has(&format!(
            "SKIP  base     inputs unchanged since 1a2b3c4 (pass, {today})"
        ))
        .stdout_has(&format!(
            "SKIP  strided  inputs unchanged since 1a2b3c4 (regression, {today})"
        ))
        .stdout_has("2 skipped, inputs unchanged, verdicts carried (base from 1a2b3c4, strided from 1a2b3c4)");
    // Only `loose` (no declared inputs) was profiled again; strided's
    // regression (profiled, then its source lines) not at all.
    assert_eq!((calls(&g, "base"), calls(&g, "strided")), (3, 2));
    let json = g.json("r.json");
    let carried = |name: &str| {
        json["workloads"]
            .as_array()
            .and_then(|w| w.iter().find(|w| w["name"] == name))
            .map(|w| w["carried"].clone())
            .unwrap_or_default()
    };
    assert_eq!(carried("base")["commit"], "1a2b3c4d5e6f");
    assert_eq!(carried("strided")["commit"], "1a2b3c4d5e6f");
    assert!(carried("loose").is_null(), "{json}");
    assert_eq!(json["outcome"], "regression");
    // Merge reads a carried workload as it reads any: validated, its verdict
    // recomputed from its checks, still marked carried.
    let merged = g.ncugate(&["merge", "r.json"]).json("m.json").run();
    merged.code(1);
    let m = g.json("m.json");
    let base = m["workloads"]
        .as_array()
        .and_then(|w| w.iter().find(|w| w["name"] == "base"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(base["carried"]["commit"], "1a2b3c4d5e6f", "{m}");
    let xml = g.read("r.xml");
    assert!(
        xml.contains(&format!("inputs unchanged since 1a2b3c4 (pass, {today})"))
            && xml.contains("<skipped"),
        "{xml}"
    );
    for file in ["r.md", "html/index.html", "summary.md"] {
        let text = g.read(file);
        assert!(
            text.contains("2 skipped, inputs unchanged, verdicts carried (base from 1a2b3c4, strided from 1a2b3c4)"),
            "{file}:\n{text}"
        );
    }
    assert!(
        g.read("r.md")
            .contains(&format!("inputs unchanged since 1a2b3c4 (pass, {today})")),
        "{}",
        g.read("r.md")
    );
}

#[test]
fn each_kind_of_input_changed_runs_the_workload_again() {
    let g = checked_once("");
    let mut base = calls(&g, "base");
    // Each change, then the check that must profile `base` again, naming the part.
    let mut reruns = |g: &Gate, extra: &[&str], env: &[(&str, &str)], part: &str| {
        let out = check(g, extra, env);
        if !part.is_empty() {
            out.stderr_has(&format!("RUN   base     {part}"));
        }
        assert_eq!(
            calls(g, "base"),
            base + 2,
            "{part}: base not profiled again"
        );
        base += 2;
        // And unchanged since: skipped (unless the change is a flag).
        if extra.is_empty() && env.is_empty() {
            check(g, &[], &[]).stdout_has("SKIP  base ");
            assert_eq!(calls(g, "base"), base + 1, "{part}: base not skipped after");
            base += 1;
        }
    };
    // Paths as declared: relative to ncugate.toml's folder.
    g.write("src/base.cu", "__global__ void base() { /* edited */ }\n");
    reruns(&g, &[], &[], "inputs changed: input:src/base.cu");
    g.write("kernels.cfg", "tile = 64\n");
    reruns(&g, &[], &[], "inputs changed: input:kernels.cfg");
    let strided_calls = calls(&g, "strided");
    reruns(
        &g,
        &[],
        &[("TRITON_ALWAYS_COMPILE", "1")],
        "inputs changed: env:TRITON_ALWAYS_COMPILE",
    );
    assert_eq!(calls(&g, "strided"), strided_calls + 2, "env reruns all");
    g.write("t.toml", crate::common::rules_with("default.toml", "", ""));
    reruns(
        &g,
        &["--thresholds", "t.toml"],
        &[],
        "inputs changed: thresholds",
    );
    let toml = g.read("ncugate.toml");
    g.write("ncugate.toml", format!("{toml}\n# edited\n"));
    reruns(&g, &[], &[], "inputs changed: config");
    g.record()
        .workload("base")
        .input("base1.csv")
        .input("base2.csv")
        .run()
        .code(0);
    reruns(
        &g,
        &[],
        &[],
        "inputs changed: baseline:nvidia-h200-cc90-132sm.json",
    );
    reruns(&g, &["--no-skip"], &[], "");
    reruns(&g, &["--skip-max-age", "0s"], &[], "the verdict of 1a2b3c4");
    reruns(
        &g,
        &[],
        &[("BRANCH_NAME", "main")],
        "branch main is accepted: it runs every workload",
    );
    // Settings given as flags or variables never reach ncugate.toml: each
    // is a part of its own.
    reruns(
        &g,
        &["--environmental", "fail"],
        &[],
        "inputs changed: setting:environmental",
    );
    reruns(
        &g,
        &[],
        &[("NCUGATE_PROFILE_FROM_START", "false")],
        "inputs changed: setting:profile_from_start",
    );
}

#[test]
fn the_accepted_branches_are_the_historys_and_the_flag_names_the_branch() {
    let g = checked_once("");
    let base = calls(&g, "base");
    // `--branch` over the CI's variable; [history] branches over the default.
    check(&g, &["--branch", "main"], &[("BRANCH_NAME", "feature")])
        .stderr_has("RUN   base     branch main is accepted: it runs every workload");
    assert_eq!(calls(&g, "base"), base + 2);
    check(&g, &[], &[("BRANCH_NAME", "feature")]).stdout_has("SKIP  base ");
    let toml = g.read("ncugate.toml");
    g.write(
        "ncugate.toml",
        format!("{toml}\n[history]\nbranches = [\"release\"]\n"),
    );
    // The config changed: this run records; the next on `main` skips.
    check(&g, &[], &[("BRANCH_NAME", "release")])
        .stderr_has("RUN   base     branch release is accepted");
    check(&g, &[], &[("BRANCH_NAME", "main")]).stdout_has("SKIP  base ");
    // A commit name that cannot be shown is refused as the history refuses it.
    check(&g, &["--commit", "a\u{1b}[31m"], &[])
        .code(2)
        .stderr_has("commit");
}

#[test]
fn a_corrupt_cache_is_a_warning_and_a_run_never_an_error() {
    let g = checked_once("");
    let cache = "target/ncugate/base/skip-cache.json";
    assert!(g.path(cache).is_file(), "no cache written");
    g.write(cache, "{\"format\": \"ncugate-skip-1\", \"digest\": ");
    let base = calls(&g, "base");
    check(&g, &[], &[])
        .code(1)
        .stderr_has("ncugate: warning: workload base: verdict cache")
        .stderr_has("unreadable (not an entry:");
    assert_eq!(calls(&g, "base"), base + 2);
    // A cache whose digest was edited to match is refused too: the digest is
    // recomputed from its parts.
    let mut entry: serde_json::Value = g.json(cache);
    entry["parts"][0]["value"] = "forged".into();
    g.write(cache, entry.to_string());
    check(&g, &[], &[]).stderr_has("its digest is not the digest of its parts");
}

#[test]
fn unknown_inputs_run_unless_always_is_set() {
    let g = checked_once("");
    let loose = || {
        std::fs::read_to_string(g.path("calls.log"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    let before = loose();
    check(&g, &["--skip-unchanged", "always"], &[]);
    let always = check(&g, &["--skip-unchanged", "always"], &[]);
    always.stdout_has("SKIP  loose ");
    // `loose`'s completed check was cached under `declared` too: `always`
    // carries it at once, and no workload is profiled.
    assert_eq!(loose(), before, "{}", g.read("calls.log"));
    check(&g, &["--skip-unchanged", "off"], &[]);
    assert_eq!(calls(&g, "strided"), 4, "off runs everything");
}

#[test]
fn a_bad_age_or_glob_is_a_config_error() {
    let g = suite("skip_max_age = \"soon\"");
    check(&g, &[], &[])
        .code(2)
        .stderr_has("skip_max_age `soon` is not an age")
        .stderr_has("hint: give a whole number and a unit");
}

#[test]
fn with_a_history_store_the_verdicts_are_kept_there_for_every_runner() {
    let dir = tempfile::tempdir().expect("temp dir");
    skip_store(&|name| format!("sqlite:{}", dir.path().join(name).display()));
}

/// The verdicts kept in the store `fresh` makes (SQLite here, PostgreSQL
/// in the history tests): a second runner with a fresh work folder skips.
pub(crate) fn skip_store(fresh: &dyn Fn(&str) -> String) {
    let g = suite("");
    let url = fresh("skip");
    let first = check(&g, &["--history", &url, "--branch", "pr-7"], &[]);
    first
        .code(1)
        .stderr_has("RUN   base     no verdict recorded for these inputs yet");
    assert!(
        !g.path("target/ncugate/base/skip-cache.json").exists(),
        "a store's verdicts went to the work folder"
    );
    // Another runner: a fresh work folder, the same store.
    std::fs::remove_dir_all(g.path("target/ncugate")).expect("remove the work folder");
    let base = calls(&g, "base");
    check(&g, &["--history", &url, "--branch", "pr-7"], &[])
        .code(1)
        .stdout_has("SKIP  base     inputs unchanged since 1a2b3c4 (pass, ")
        .stdout_has("SKIP  strided  inputs unchanged since 1a2b3c4 (regression, ");
    assert_eq!(calls(&g, "base"), base + 1, "only `loose` runs");
    // A change is named against the workload's newest entry in the store.
    g.write("src/base.cu", "__global__ void base() { /* edited */ }\n");
    check(&g, &["--history", &url, "--branch", "pr-7"], &[])
        .stderr_has("RUN   base     inputs changed: input:src/base.cu");
}

/// A shared library of this machine that the test process itself maps
/// (`libgcc_s`, which Rust's unwinder needs), from its `/proc/self/maps`.
pub(crate) fn a_mapped_library() -> std::path::PathBuf {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("read /proc/self/maps");
    let found = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.contains("/libgcc_s.so"));
    std::path::PathBuf::from(found.unwrap_or_else(|| panic!("no libgcc_s mapped:\n{maps}")))
}

/// A library the run maps that no ELF file names: the stand-in ncu runs
/// preloaded with a copy of a real library of this machine (the workload's
/// `LD_PRELOAD`), as a Python app's interpreter maps the torch libraries it
/// opens with `dlopen`, and lives 0.6 s so that the library recorder sees
/// it. The verdict keeps it; its content changed, the workload runs again
/// and the `RUN` line names it; gone, too.
#[test]
fn a_changed_library_that_the_run_mapped_runs_the_workload_again() {
    let g = Gate::new();
    let ncu = g
        .ncu("ncu")
        .log_argv("calls.log")
        .delay("base", 0.0, 0.6)
        .install();
    std::fs::create_dir_all(g.path("lib")).expect("lib dir");
    let lib = g.path("lib/libstandin.so.1");
    std::fs::copy(a_mapped_library(), &lib).expect("copy the library");
    std::fs::create_dir_all(g.path("src")).expect("src dir");
    g.write("src/base.cu", "__global__ void base() {}\n");
    g.write(
        "ncugate.toml",
        format!(
            r#"
[profile]
ncu = "{ncu}"

[gate]
skip_unchanged = "declared"

[[workload]]
name = "base"
command = ["kernels/build/graph_app", "--inject", "base"]
inputs = ["src/base.cu"]
env = {{ LD_PRELOAD = "{}" }}
"#,
            lib.display()
        ),
    );
    g.base_runs();
    g.record().workload("base").base_inputs().run().code(0);
    check(&g, &[], &[])
        .code(0)
        .stderr_has("RUN   base  no verdict recorded for these inputs yet");
    // The run's list, and the verdict's: the preloaded copy among them.
    let listed = g.read("target/ncugate/base/run/libraries.txt");
    assert!(listed.contains(&lib.display().to_string()), "{listed}");
    let entry = g.json("target/ncugate/base/skip-cache.json");
    assert_eq!(entry["format"], "ncugate-skip-3");
    let kept = entry["libraries"].as_array().cloned().unwrap_or_default();
    assert!(
        kept.iter().any(|l| l["path"] == lib.display().to_string()
            && l["sha256"].as_str().is_some_and(|s| s.len() == 16)),
        "{entry}"
    );
    let mut runs = calls(&g, "base");
    check(&g, &[], &[])
        .code(0)
        .stdout_has("SKIP  base  inputs unchanged since 1a2b3c4");
    assert_eq!(calls(&g, "base"), runs, "skipped, yet profiled");
    // Rebuilt (one byte more at its end: it still loads).
    let mut bytes = std::fs::read(&lib).expect("read the copy");
    bytes.push(0);
    std::fs::write(&lib, bytes).expect("change the copy");
    check(&g, &[], &[])
        .code(0)
        .stderr_has(&format!("RUN   base  library changed: {}", lib.display()));
    runs += 1;
    assert_eq!(
        calls(&g, "base"),
        runs,
        "a changed library, yet not profiled"
    );
    check(&g, &[], &[]).code(0).stdout_has("SKIP  base ");
    assert_eq!(calls(&g, "base"), runs);
    std::fs::remove_file(&lib).expect("remove the copy");
    check(&g, &[], &[])
        .code(0)
        .stderr_has(&format!("RUN   base  library gone: {}", lib.display()));
    assert_eq!(
        calls(&g, "base"),
        runs + 1,
        "a gone library, yet not profiled"
    );
}

/// The workloads shard `k` of `n` plans, from its `ncugate: shard` line.
fn shard_of(out: &Outcome, k: u32, n: u32) -> Vec<String> {
    let said = format!("ncugate: shard {k}/{n}: ");
    let line = out
        .stderr()
        .lines()
        .find_map(|l| l.strip_prefix(&said).map(str::to_string))
        .unwrap_or_else(|| panic!("no shard line:\n{}", out.stderr()));
    let names = line.split_once(": ").map_or("", |(_, names)| names);
    names
        .split(", ")
        .filter(|n| *n != "none" && !n.is_empty())
        .map(str::to_string)
        .collect()
}

/// Six workloads, four unchanged since their cached verdicts: one job
/// predicts the skips (profiling nothing), and the shards given that file
/// split the two that run, one each, where the recorded costs alone put
/// both on shard 1. No workload is planned twice or dropped, and each
/// that runs is profiled once.
#[test]
fn shards_balance_the_workloads_that_will_run() {
    let g = Gate::new();
    let ncu = g.ncu("ncu").log_argv("calls.log").install();
    std::fs::create_dir_all(g.path("src")).expect("src dir");
    let names = ["w1", "w2", "w3", "w4", "w5", "w6"];
    let mut toml = format!("[profile]\nncu = \"{ncu}\"\n\n[gate]\nskip_unchanged = \"declared\"\n");
    for w in names {
        g.write(&format!("src/{w}.cu"), "__global__ void k() {}\n");
        toml.push_str(&format!(
            "\n[[workload]]\nname = \"{w}\"\ncommand = [\"kernels/build/graph_app\", \"--inject\", \"base\"]\ninputs = [\"src/{w}.cu\"]\n"
        ));
    }
    g.write("ncugate.toml", toml);
    g.base_runs();
    for w in names {
        g.record().workload(w).base_inputs().run().code(0);
    }
    // Each workload's profiling runs so far (its work folder is in ncu's argv).
    let profiled = |w: &str| {
        std::fs::read_to_string(g.path("calls.log"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(&format!("/{w}/run/")))
            .count()
    };
    check(&g, &[], &[]).code(0);
    assert!(
        names.iter().all(|w| profiled(w) == 1),
        "{}",
        g.read("calls.log")
    );
    g.write("src/w3.cu", "__global__ void k() { /* edited */ }\n");
    g.write("src/w5.cu", "__global__ void k() { /* edited */ }\n");
    let before = check(&g, &["--predict-skips", "skips.txt"], &[]);
    before
        .code(0)
        .stdout_has("SKIP  w1  inputs unchanged since 1a2b3c4")
        .stderr_has("RUN   w3  inputs changed: input:src/w3.cu")
        .stdout_has("4 of 6 workloads predicted to skip");
    assert_eq!(g.read("skips.txt"), "w1\nw2\nw4\nw6\n");
    assert!(
        names.iter().all(|w| profiled(w) == 1),
        "a prediction profiled"
    );
    let mut shards = Vec::new();
    for k in 1..=2 {
        let out = check(
            &g,
            &["--shard", &format!("{k}/2"), "--planned-skips", "skips.txt"],
            &[],
        );
        out.code(0);
        shards.push(shard_of(&out, k, 2));
    }
    let mut all: Vec<&String> = shards.iter().flatten().collect();
    all.sort();
    assert_eq!(all, names, "planned twice or dropped: {shards:?}");
    let on = |w: &str| shards.iter().position(|s| s.iter().any(|n| n == w));
    assert_ne!(on("w3"), on("w5"), "{shards:?}");
    assert!(
        names
            .iter()
            .all(|w| profiled(w) == 1 + usize::from(*w == "w3" || *w == "w5"))
    );
    // Planned on the recorded costs alone (none here: by name), both
    // edited workloads were on shard 1.
    let alone = check(&g, &["--shard", "1/2"], &[]);
    alone.code(0);
    assert_eq!(shard_of(&alone, 1, 2), ["w1", "w3", "w5"]);
}
