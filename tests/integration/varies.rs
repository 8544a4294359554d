//! Kernels that vary between recorded runs (an autotuner's candidates, a
//! JIT's choice): recorded apart, listed by every check in every format,
//! never gated; kernels every run launched alike are gated as before, and a
//! kernel no recorded run launched still fails as new. The inputs are real
//! H200 exports of the reference app's variants, composed into runs that
//! disagree as `fixtures/h200/varies/README.md` says.

use crate::common::{Gate, args_with};

const FINISH_FLOAT: &str = "void finish<float>(const float *, const float *, float *, long)";
const FINISH_DOUBLE: &str = "void finish<double>(const float *, const float *, float *, long)";
const SCALE: &str = "void scale<0>(const float *, float *, long, int)";

/// Runs 1 and 2 of the base app and the `fp64` variant's run, as three
/// recorded runs of one workload whose `finish` kernel changed its template
/// argument in one of them (`varied.json`).
fn varied() -> Gate {
    let gate = Gate::new();
    gate.base_runs()
        .h200("graph_app.fp64.fast.raw.csv", "fp64.csv");
    gate.record()
        .input("base1.csv")
        .input("base2.csv")
        .input("fp64.csv")
        .output("varied.json")
        .run()
        .code(0)
        .stderr_has("2 kernels vary between the 3 runs")
        .stderr_has("kept in the baseline, listed by every check, never gated");
    gate
}

#[test]
fn runs_that_disagree_record_their_stable_kernels_and_keep_the_others_apart() {
    let gate = varied();
    let baseline = gate.json("varied.json");
    let kernels: Vec<&str> = baseline["kernels"]
        .as_object()
        .expect("kernels")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(kernels, ["produce(float *, long)", SCALE]);
    assert_eq!(
        baseline["variable"][FINISH_FLOAT],
        serde_json::json!({"runs": 2, "launches": [3, 3]})
    );
    assert_eq!(
        baseline["variable"][FINISH_DOUBLE],
        serde_json::json!({"runs": 1, "launches": [3, 3]})
    );
    // The total is what every run launched alike: 6 launches, not 9.
    assert_eq!(baseline["total"]["launches"]["mean"], 6.0);
    // `finish` does about a third of the instructions: far past 5%, so
    // recording warns, and names no autotuner it could recognise.
    let out = gate
        .record()
        .input("base1.csv")
        .input("base2.csv")
        .input("fp64.csv")
        .output("again.json")
        .run();
    out.code(0)
        .stderr_has("ncugate: warning: 2 kernels that vary between runs carry")
        .stderr_has("of the sm__inst_executed.sum recorded (more than 5%)")
        .stderr_has("an autotuner or JIT that picks kernels at run time")
        .stderr_has("XLA_FLAGS=--xla_gpu_autotune_level=0")
        .stderr_has("torch.backends.cudnn.benchmark = False");
}

/// Only the first run differs, and the later ones agree: the signature of
/// a cache that was cold for the first process alone (seen on an H100: a
/// torch.compile max-autotune recording's first run timed 8 kernels of
/// candidates that the other two never launched). Recording says so and
/// names the warm-up; an odd run elsewhere is not that.
#[test]
fn a_first_run_alone_that_differs_is_named_as_a_cold_cache() {
    let gate = varied();
    let record = |inputs: [&str; 3], output: &str| {
        let mut record = gate.record();
        for input in inputs {
            record = record.input(input);
        }
        record.output(output).run()
    };
    let cold = record(["fp64.csv", "base1.csv", "base2.csv"], "cold.json");
    cold.code(0)
        .stderr_has("ncugate: warning: the first run alone launched other kernels than the other 2, which agree")
        .stderr_has("hint: record with [app] warmup = 1 (--warmup 1)");
    // `varied()` recorded the odd run last: nothing said of a cold cache.
    let last = record(["base1.csv", "base2.csv", "fp64.csv"], "last.json");
    last.code(0);
    assert!(
        !last.stderr.contains("the first run alone"),
        "{}",
        last.stderr
    );
}

#[test]
fn a_check_lists_variable_kernels_ungated_and_still_gates_the_stable_ones() {
    let gate = varied();
    // Run 3 of the base app: `finish<float>` is there, `finish<double>` is not.
    let out = gate
        .check()
        .baseline("varied.json")
        .input("base3.csv")
        .json("r.json")
        .markdown("r.md")
        .junit("r.xml")
        .html("html")
        .env("GITHUB_ACTIONS", "true")
        .run_as_github_step();
    out.code(0)
        .stdout_has("varies between runs (2 of 3 recorded runs, 3 launches): not gated; 3 launches per run now")
        .stdout_has("varies between runs (1 of 3 recorded runs, 3 launches): not gated; not launched now")
        .stdout_has("2 not gated (vary between runs)");
    let json = gate.json("r.json");
    let rows: Vec<&serde_json::Value> = json["structure"]
        .as_array()
        .expect("structure")
        .iter()
        .filter(|r| r["check"] == "varies")
        .collect();
    assert_eq!(rows.len(), 2, "{json}");
    assert!(rows.iter().all(|r| r["status"] == "pass"));
    assert!(
        rows.iter()
            .any(|r| r["kernel"] == FINISH_FLOAT && r["recorded_in"] == serde_json::json!([2, 3]))
    );
    // Every format lists both kernels with the reason, and counts them.
    let html = std::fs::read_to_string(gate.path("html/index.html")).expect("html");
    for (format, text) in [
        ("markdown", gate.read("r.md")),
        ("junit", gate.read("r.xml")),
        ("html", html),
        ("github summary", gate.read("summary.md")),
    ] {
        for needle in [
            "finish&lt;double&gt;",
            "varies between runs (1 of 3 recorded runs",
        ] {
            let plain = needle.replace("&lt;", "<").replace("&gt;", ">");
            assert!(
                text.contains(needle) || text.contains(&plain),
                "{format} lacks {plain:?}:\n{text}"
            );
        }
        assert!(
            text.contains("not gated (vary between runs)"),
            "{format}:\n{text}"
        );
    }
    // A stable kernel launched twice as often still fails.
    gate.h200("graph_app.redundant-node.fast.raw.csv", "redundant.csv");
    gate.check()
        .baseline("varied.json")
        .input("redundant.csv")
        .run()
        .code(1)
        .stdout_has("launched 6 times per run, baseline 3");
}

#[test]
fn a_kernel_no_recorded_run_launched_still_fails_as_new() {
    let gate = Gate::new();
    gate.base_runs()
        .h200("graph_app.redundant-node.fast.raw.csv", "redundant.csv")
        .h200("graph_app.fp64.fast.raw.csv", "fp64.csv");
    // `scale` launched 3, 3 and 6 times: it varies; the rest are stable.
    gate.record()
        .input("base1.csv")
        .input("base2.csv")
        .input("redundant.csv")
        .output("b.json")
        .run()
        .code(0);
    assert_eq!(
        gate.json("b.json")["variable"][SCALE],
        serde_json::json!({"runs": 3, "launches": [3, 6]})
    );
    // Six launches of the variable kernel pass, ungated.
    gate.check()
        .baseline("b.json")
        .input("redundant.csv")
        .run()
        .code(0)
        .stdout_has("varies between runs (3 of 3 recorded runs, 3–6 launches): not gated; 6 launches per run now");
    // `finish<double>` was never recorded: new, a regression. (With the
    // base run beside it, `finish<float>` is not missing, so the two are not
    // taken for one kernel renamed.)
    gate.check()
        .baseline("b.json")
        .input("fp64.csv")
        .input("base3.csv")
        .run()
        .code(1)
        .stdout_has(&format!("✗ {FINISH_DOUBLE}"))
        .stdout_has("new kernel")
        .stdout_has("not in the baseline (3/0 launches per run)");
}

#[test]
fn merge_refuses_a_new_kernel_passed_off_as_one_that_varies() {
    let gate = varied();
    gate.h200("graph_app.redundant-node.fast.raw.csv", "redundant.csv");
    // `merge` reads the reports of a suite's workloads.
    gate.write(
        "ncugate.toml",
        "[[workload]]\nname = \"w\"\ncommand = [\"kernels/build/graph_app\"]\n",
    );
    // A baseline whose only variable kernel is `scale`, checked with the
    // fp64 run: `finish<double>` is new and fails.
    gate.record()
        .input("base1.csv")
        .input("base2.csv")
        .input("redundant.csv")
        .output("b.json")
        .run()
        .code(0);
    gate.h200("graph_app.fp64.fast.raw.csv", "fp64.csv");
    gate.check()
        .baseline("b.json")
        .input("fp64.csv")
        .workload("w")
        .json("r.json")
        .run()
        .code(1);
    gate.run(&["merge", "r.json"]).code(1);
    // The honest report of a variable kernel merges.
    gate.check()
        .baseline("b.json")
        .input("redundant.csv")
        .workload("w")
        .json("ok.json")
        .run()
        .code(0);
    gate.run(&["merge", "ok.json"]).code(0);
    // The new kernel's failure edited into "varies between runs", passing.
    let mut report = gate.json("r.json");
    let workload = &mut report["workloads"][0]["report"];
    for row in workload["structure"].as_array_mut().expect("structure") {
        if row["kernel"] == FINISH_DOUBLE {
            row["check"] = "varies".into();
            row["status"] = "pass".into();
            row["recorded_in"] = serde_json::json!([1, 3]);
            row["baseline_range"] = serde_json::json!([3.0, 3.0]);
        }
    }
    // (The workload still fails on `finish<float>`, missing: its verdict stands.)
    gate.write(
        "forged.json",
        serde_json::to_string_pretty(&report).expect("JSON"),
    );
    gate.run(&["merge", "forged.json"])
        .one_clear_error("the baseline does not list it as varying between runs");
}

/// `baseline record` profiles with `XLA_FLAGS` set; a check with Inductor's
/// cache in another folder says nothing, one without `XLA_FLAGS` says so
/// in its headline and beside its failure, and `[profile]
/// profile_from_start = false` / `nvtx_include` reach ncu's command line.
#[test]
fn a_check_names_the_environment_that_picks_kernels_when_it_changed() {
    let gate = Gate::new();
    let ncu = gate.ncu("fake-ncu").log_argv("ncu.args").install();
    gate.write(
        "ncugate.toml",
        "[profile]\nprofile_from_start = false\nnvtx_include = [\"step/\"]\ntoolchain_command = [\"sh\", \"-c\", \"echo torch 2.5.1\"]\n",
    );
    gate.record()
        .ncu(&ncu)
        .output("b.json")
        .env("XLA_FLAGS", "--xla_gpu_autotune_level=0")
        .env("TRITON_API_TOKEN", "hunter2")
        .env("TORCHINDUCTOR_CACHE_DIR", "/tmp/job-1/inductor")
        .app(&["./graph_app", "--inject", "base"])
        .run()
        .code(0);
    let args = gate.read("ncu.args");
    assert!(args.contains("--profile-from-start off"), "{args}");
    assert!(args.contains("--nvtx --nvtx-include step/"), "{args}");
    let profile = &gate.json("b.json")["profile"];
    assert_eq!(
        profile["kernel_env"]["XLA_FLAGS"],
        "--xla_gpu_autotune_level=0"
    );
    assert_eq!(profile["profile_from_start"], false);
    assert_eq!(profile["toolchain"]["torch"], "2.5.1");
    assert!(!gate.read("b.json").contains("hunter2"));
    assert!(
        profile["kernel_env"]
            .get("TORCHINDUCTOR_CACHE_DIR")
            .is_none()
    );
    // Same environment, the caches in another job's folder: nothing said.
    gate.check()
        .ncu(&ncu)
        .baseline("b.json")
        .env("XLA_FLAGS", "--xla_gpu_autotune_level=0")
        .env("TRITON_API_TOKEN", "hunter2")
        .env("TORCHINDUCTOR_CACHE_DIR", "/tmp/job-2/inductor")
        .app(&["./graph_app", "--inject", "base"])
        .run()
        .code(0)
        .stdout_lacks("environment changed");
    // Without it, and a regression: both said, the failure beside the change.
    gate.write(
        "ncugate.toml",
        "[profile]\nnvtx_include = [\"step/\"]\ntoolchain_command = [\"sh\", \"-c\", \"echo torch 2.6.0\"]\n",
    );
    let out = gate
        .check()
        .ncu(&ncu)
        .baseline("b.json")
        .json("r.json")
        .junit("r.xml")
        .markdown("r.md")
        .app(&["./graph_app", "--inject", "strided"])
        .run();
    out.code(1)
        .stdout_has("environment changed")
        .stdout_has("XLA_FLAGS `--xla_gpu_autotune_level=0` → (unset)")
        .stdout_has("profile_from_start false → true")
        .stdout_has("torch `2.5.1` → `2.6.0`");
    assert!(!out.stdout.contains("hunter2"));
    let junit = gate.read("r.xml");
    assert!(
        junit.contains("name=\"environment_changed\"") && junit.contains("XLA_FLAGS"),
        "{junit}"
    );
    let markdown = gate.read("r.md");
    assert!(markdown.contains("environment changed"), "{markdown}");
    let json = gate.json("r.json");
    let failed: Vec<&serde_json::Value> = json["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter(|r| r["status"] == "fail")
        .collect();
    assert!(!failed.is_empty());
    assert!(failed.iter().all(|r| {
        r["message"].as_str().is_some_and(|m| {
            m.contains("(environment changed: ")
                && m.contains("XLA_FLAGS `--xla_gpu_autotune_level=0` → (unset)")
        })
    }));
}

/// The CUDA libraries and Python packages the run mapped join the
/// baseline's toolchain fingerprint, read from their file and `.dist-info`
/// folder names; a check whose app loaded other versions names each change
/// in its headline. The stand-in ncu runs preloaded with copies of a real
/// library of this machine, named as cuBLAS and PyTorch's CUDA library.
#[test]
fn a_check_names_the_cuda_libraries_and_packages_whose_versions_changed() {
    let gate = Gate::new();
    let ncu = gate.ncu("fake-ncu").delay("base", 0.0, 0.6).install();
    let real = crate::skip::a_mapped_library();
    let site = gate.path("venv/lib/python3.12/site-packages");
    std::fs::create_dir_all(site.join("torch/lib")).expect("torch folder");
    std::fs::create_dir_all(site.join("torch-2.11.0+cu130.dist-info")).expect("dist-info");
    std::fs::create_dir_all(gate.path("cuda")).expect("cuda folder");
    let torch = site.join("torch/lib/libtorch_cuda.so");
    std::fs::copy(&real, &torch).expect("copy");
    let mut cublas = Vec::new();
    for version in ["13.0.2.14", "13.1.0.3"] {
        let lib = gate.path(&format!("cuda/libcublas.so.{version}"));
        std::fs::copy(&real, &lib).expect("copy");
        cublas.push(lib.display().to_string());
    }
    let preload = |lib: &str| format!("{lib}:{}", torch.display());
    gate.record()
        .ncu(&ncu)
        .output("b.json")
        .env("LD_PRELOAD", preload(&cublas[0]))
        .app(&["./graph_app", "--inject", "base"])
        .run()
        .code(0);
    let toolchain = &gate.json("b.json")["profile"]["toolchain"];
    assert_eq!(toolchain["libcublas"], "13.0.2.14", "{toolchain}");
    assert_eq!(toolchain["torch"], "2.11.0+cu130", "{toolchain}");
    // The same libraries: nothing said.
    gate.check()
        .ncu(&ncu)
        .baseline("b.json")
        .env("LD_PRELOAD", preload(&cublas[0]))
        .app(&["./graph_app", "--inject", "base"])
        .run()
        .code(0)
        .stdout_lacks("environment changed");
    // cuBLAS and torch upgraded: the unchanged app passes, the changes named.
    std::fs::rename(
        site.join("torch-2.11.0+cu130.dist-info"),
        site.join("torch-2.12.0+cu130.dist-info"),
    )
    .expect("upgrade torch");
    gate.check()
        .ncu(&ncu)
        .baseline("b.json")
        .json("r.json")
        .env("LD_PRELOAD", preload(&cublas[1]))
        .app(&["./graph_app", "--inject", "base"])
        .run()
        .code(0)
        .stdout_has("environment changed")
        .stdout_has("libcublas `13.0.2.14` → `13.1.0.3`")
        .stdout_has("torch `2.11.0+cu130` → `2.12.0+cu130`");
}

/// Two runs of the base app and one of the `fp64` variant, recorded with
/// the kernel key `function`: `finish` is one kernel built two ways
/// (`fixtures/h200/*.ncu-rep`, real H200 reports), as an autotuner or JIT
/// that picks another build in some run leaves it.
fn built_two_ways() -> Gate {
    let gate = Gate::new();
    gate.h200("graph_app.base.fast.run1.ncu-rep", "base1.ncu-rep")
        .h200("ncu-rep/graph_app.base.fast.ncu-rep", "base2.ncu-rep")
        .h200("graph_app.fp64.fast.ncu-rep", "fp64.ncu-rep")
        .write(
            "ncugate.toml",
            "[[workload]]\nname = \"w\"\ncommand = [\"kernels/build/graph_app\"]\n",
        );
    gate.record()
        .input("base1.ncu-rep")
        .input("base2.ncu-rep")
        .input("fp64.ncu-rep")
        .arg("--kernel-key")
        .arg("function")
        .output("b.json")
        .run()
        .code(0)
        .stderr_has("the code of 1 kernel was not the same in the 3 runs: finish (2 builds)")
        .stderr_has("checks gate only its time and launches");
    gate
}

#[test]
fn a_kernel_built_two_ways_in_the_recorded_runs_is_gated_on_its_time_only() {
    let gate = built_two_ways();
    let baseline = gate.json("b.json");
    assert_eq!(
        baseline["kernels"]["finish"]["code"]["others"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    assert!(baseline["kernels"]["scale"]["code"].get("others").is_none());
    // A pass that left checks ungated says how many in its status line, and
    // the suite's headline names it.
    gate.check()
        .baseline("b.json")
        .input("base2.ncu-rep")
        .run()
        .code(0)
        .stdout_has("PASS  w — 5 metric checks not gated (code varies)")
        .stdout_has("1 workload — 1 passed, 1 with checks not gated (w)");
    // The base app passes; `finish`'s FP64 count, whose baseline mixes the
    // two builds, is listed as not gated with why.
    gate.check()
        .baseline("b.json")
        .input("base2.ncu-rep")
        .json("base.json")
        .arg("--show")
        .arg("all")
        .run()
        .code(0)
        .stdout_has("metric checks not gated (code varies)")
        .stdout_has("code varies between runs: finish (2 builds in the 3 recorded runs; ");
    // The fp64 variant, one of the recorded runs: `finish`'s FP64 rule is a
    // warning, not gated; the whole run's passes, since the recorded runs
    // are more than the allowance apart and it is no worse than the worst.
    gate.check()
        .baseline("b.json")
        .input("fp64.ncu-rep")
        .workload("w")
        .json("fp64.json")
        .arg("--show")
        .arg("all")
        .run()
        .code(0)
        .stdout_has("code varies between runs: finish (2 builds in the 3 recorded runs; ");
    let report = gate.json("fp64.json");
    let rules = report["workloads"][0]["report"]["rules"]
        .as_array()
        .expect("rules");
    let finish: Vec<&serde_json::Value> =
        rules.iter().filter(|r| r["kernel"] == "finish").collect();
    for r in &finish {
        let time = r["unit"] == "ns" || r["unit"] == "cycle";
        assert_eq!(r["not_gated"].is_string(), !time, "{r}");
    }
    let fp64 = "sm__inst_executed_pipe_fp64.sum";
    assert!(
        finish
            .iter()
            .any(|r| r["metric"] == fp64 && r["status"] == "pass" && r["not_gated"].is_string()),
        "{finish:?}"
    );
    let total = rules
        .iter()
        .find(|r| r["kernel"].is_null() && r["metric"] == fp64)
        .expect("the whole run's FP64 rule");
    assert_eq!(total["status"], "pass", "{total}");
    assert!(
        total["message"]
            .as_str()
            .is_some_and(|m| m.contains("more than the allowance apart: measured from the worst")),
        "{total}"
    );
    gate.run(&["merge", "fp64.json"]).code(0);
    // Recorded builds that ran half the FP64 instructions: the whole run's
    // change is `finish`'s, whose own FP64 rule is not gated (its code
    // varies), so the whole run's is not gated either, and says why.
    gate.write("halved.json", fp64_halved(&gate).to_string());
    gate.check()
        .baseline("halved.json")
        .input("fp64.ncu-rep")
        .json("halved-check.json")
        .run()
        .code(0)
        .stdout_has(
            "(sum, total) [warn]: not gated (code varies between runs: finish accounts for",
        );
    gate.run(&["merge", "halved-check.json"]).code(0);
    // Its time stays gated: a baseline whose runs took half the time fails.
    let mut quick = gate.json("b.json");
    let time = "gpu__time_duration.sum";
    halve(
        &mut quick["kernels"]["finish"]["metrics"][time]["sum"],
        &ALL_STATS,
    );
    gate.write("quick.json", quick.to_string());
    gate.check()
        .baseline("quick.json")
        .input("fp64.ncu-rep")
        .run()
        .code(1)
        .stdout_has("gpu__time_duration.sum (sum) [FAIL]");
}

#[test]
fn merge_refuses_code_varies_rows_the_baseline_or_the_rule_does_not_bear_out() {
    let gate = built_two_ways();
    // Recorded builds that ran half the FP64: the whole run's row is not
    // gated because of `finish`'s change, as the kernel rows say.
    gate.write("b.json", fp64_halved(&gate).to_string());
    gate.check()
        .baseline("b.json")
        .input("fp64.ncu-rep")
        .workload("w")
        .json("fp64.json")
        .run()
        .code(0);
    let report = gate.json("fp64.json");
    let forge = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut forged = report.clone();
        for row in forged["workloads"][0]["report"]["rules"]
            .as_array_mut()
            .expect("rules")
        {
            edit(row);
        }
        gate.write(name, serde_json::to_string_pretty(&forged).expect("JSON"));
    };
    // Another count of builds than the baseline file's.
    forge("builds.json", &|row| {
        if row["downgraded"]["reason"] == "code_varies" && row["kernel"].is_string() {
            row["not_gated"] = "code varies between runs: 3 builds in the 3 recorded runs".into();
        }
    });
    gate.run(&["merge", "builds.json"]).one_clear_error(
        "says `code varies between runs: 3 builds in the 3 recorded runs`, the baseline file `code varies between runs: 2 builds in the 3 recorded runs`",
    );
    // A kernel the recorded runs built one way.
    forge("scale.json", &|row| {
        if row["kernel"] == "finish" {
            row["kernel"] = "scale".into();
        }
        if let Some(why) = row["not_gated"]
            .as_str()
            .filter(|_| row["kernel"].is_null())
        {
            row["not_gated"] = why.replace("finish", "scale").into();
        }
    });
    gate.run(&["merge", "scale.json"])
        .one_clear_error("the baseline file recorded one build");
    // A time rule: time stays gated.
    forge("time.json", &|row| {
        if row["kernel"] == "finish" && row["unit"] == "ns" {
            row["not_gated"] = "code varies between runs: 2 builds in the 3 recorded runs".into();
        }
    });
    gate.run(&["merge", "time.json"]).one_clear_error(
        "is not gated (code varies), but it measures `ns`, time, which stays gated",
    );
    // A whole run's failure the kernels' rows do not explain: a larger count.
    forge("total.json", &|row| {
        if row["kernel"].is_null() && row["downgraded"]["reason"] == "code_varies" {
            let x = row["current"].as_f64().unwrap_or_default();
            row["current"] = (x * 2.0).into();
            row["current_runs"] = serde_json::json!([x * 2.0]);
        }
    });
    gate.run(&["merge", "total.json"]).one_clear_error(
        "it is a whole run's rule, and the report's rows of kernels built several ways do not explain its change",
    );
}

/// The steady-state JAX MLP replayed (`fixtures/h100/autotune-e2e/`: the
/// ncu reports of `scripts/gpu-autotune-e2e.sh` on an H100, XLA's default
/// flags): XLA built its two loop fusions two ways in the 3 recorded runs,
/// so their counts are not gated; each of the 8 unchanged checks passes,
/// and one with a fusion's FP64 count grown still fails on the whole run.
#[test]
fn the_jax_steady_state_records_and_passes_its_unchanged_checks() {
    let gate = Gate::new();
    let dir = "fixtures/h100/autotune-e2e/jax-steady-reports";
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    for i in 1..=3 {
        gate.copy(
            root.join(format!("jax-steady.record.run-{i}.ncu-rep")),
            &format!("r{i}.ncu-rep"),
        );
    }
    gate.record()
        .input("r1.ncu-rep")
        .input("r2.ncu-rep")
        .input("r3.ncu-rep")
        .output("jax.json")
        .run()
        .code(0)
        .stderr_has(
            "the code of 2 kernels was not the same in the 3 runs: loop_add_fusion (2 builds), \
             loop_multiply_fusion (2 builds)",
        );
    for i in 1..=8 {
        let name = format!("u{i}.ncu-rep");
        gate.copy(
            root.join(format!("jax-steady.unchanged-{i}.run.ncu-rep")),
            &name,
        );
        gate.check()
            .baseline("jax.json")
            .input(&name)
            .run()
            .code(0)
            .stdout_has("0 failed, 20 passed, 10 metric checks not gated (code varies)");
    }
    // The GEMM fusions were built alike in every run: gated whole. Against
    // a baseline where `gemm_fusion_dot` executed half the instructions,
    // the same run fails.
    let mut baseline = gate.json("jax.json");
    let mean = &mut baseline["kernels"]["gemm_fusion_dot"]["metrics"]["sm__inst_executed.sum"];
    halve(&mut mean["sum"], &["mean", "min", "max"]);
    gate.write(
        "halved.json",
        serde_json::to_string(&baseline).expect("JSON"),
    );
    let out = gate
        .check()
        .baseline("halved.json")
        .input("u1.ncu-rep")
        .run();
    out.code(1)
        .stdout_has("✗ gemm_fusion_dot")
        .stdout_has("+100.0%");
}

/// The steady-state JAX MLP as recorded on an H100 in another session
/// (`fixtures/h100/autotune-e2e/ten-and-kept/reports/`): the 3 recorded runs
/// built both loop fusions two ways; the check that also ran both GEMM
/// fusions built anew (check 4 of the 10 that passed there) passes, with
/// those kernels' counts not gated and their time gated; the wider layer
/// (profiled again after a hang) fails on XLA's new and missing GEMM fusions.
#[test]
fn the_jax_steady_state_passes_where_xla_built_every_fusion_anew() {
    let gate = Gate::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/h100/autotune-e2e/ten-and-kept/reports");
    let runs = ["run-1", "run-2", "run-3"].map(|r| format!("jax-steady.record.{r}.ncu-rep"));
    for run in &runs {
        gate.copy(root.join(run), run);
    }
    let mut record = gate.record();
    for run in &runs {
        record = record.input(run);
    }
    record.output("jax.json").run().code(0).stderr_has(
        "the code of 2 kernels was not the same in the 3 runs: loop_add_fusion (2 builds), \
         loop_multiply_fusion (2 builds)",
    );
    for (report, code, said) in [
        (
            "jax-steady.unchanged-4.run.ncu-rep",
            0,
            &[
                "PASS (exit 0): 0 failed, 10 passed, 20 metric checks not gated (code varies)",
                "gemm_fusion_dot (XLA's autotuner picks this kernel's build at run time",
            ][..],
        ),
        (
            "jax-steady.regression.run-retry-1.ncu-rep",
            1,
            &["✗ gemm_fusion_dot_general_2"][..],
        ),
    ] {
        gate.copy(root.join(report), report);
        let out = gate.check().baseline("jax.json").input(report).run();
        out.code(code);
        for needle in said {
            out.stdout_has(needle);
        }
    }
}

/// Halves the statistics `stats` names of a baseline's metric (JSON).
/// Every statistic a baseline keeps of a metric.
const ALL_STATS: [&str; 4] = ["mean", "stddev", "min", "max"];

/// The baseline `b.json` of [`built_two_ways`] as if its recorded builds
/// had run half the FP64 instructions: `finish`'s and the whole run's.
fn fp64_halved(gate: &Gate) -> serde_json::Value {
    let fp64 = "sm__inst_executed_pipe_fp64.sum";
    let mut halved = gate.json("b.json");
    halve(
        &mut halved["kernels"]["finish"]["metrics"][fp64]["sum"],
        &ALL_STATS,
    );
    halve(&mut halved["total"]["metrics"][fp64]["sum"], &ALL_STATS);
    halved
}

fn halve(stats: &mut serde_json::Value, which: &[&str]) {
    for stat in which {
        if let Some(x) = stats[*stat].as_f64() {
            stats[*stat] = (x / 2.0).into();
        }
    }
}

/// A rule on a metric another process can move (DRAM bytes) is never
/// measured from its recorded runs' worst: a report edited so that such a
/// row passes beside a far outlier is refused by `merge`, which holds it to
/// the thresholds (the report's own numbers cannot tell the rule's kind).
#[test]
fn merge_refuses_a_sensitive_row_passed_from_the_recorded_runs_worst() {
    let gate = built_two_ways();
    let bytes = "dram__bytes.sum";
    let mut wide = gate.json("b.json");
    let mean = wide["kernels"]["scale"]["metrics"][bytes]["sum"]["mean"]
        .as_f64()
        .expect("scale's DRAM bytes");
    wide["kernels"]["scale"]["metrics"][bytes]["sum"]["max"] = (mean * 4.0).into();
    gate.write("wide.json", wide.to_string());
    gate.check()
        .baseline("wide.json")
        .input("base2.ncu-rep")
        .workload("w")
        .json("wide-check.json")
        .run()
        .code(0);
    let mut forged = gate.json("wide-check.json");
    for row in forged["workloads"][0]["report"]["rules"]
        .as_array_mut()
        .expect("rules")
    {
        if row["kernel"] == "scale" && row["metric"] == bytes {
            let x = mean * 3.0;
            row["current"] = x.into();
            row["current_runs"] = serde_json::json!([x]);
        }
    }
    gate.write(
        "forged.json",
        serde_json::to_string_pretty(&forged).expect("JSON"),
    );
    gate.run(&["merge", "forged.json"]).one_clear_error(
        "its rule on `dram__bytes.sum` is not measured from the recorded runs' worst",
    );
}

/// `--warmup 1` runs the app once on its own, without ncu, before the
/// profiled runs (on a fresh CI runner, Inductor's cache is cold and the
/// first profiled run would time its candidates under ncu): the baseline
/// records it, a check without it says `environment changed`, and a
/// warm-up that fails is one clear error with the app's last line.
#[test]
fn warm_up_runs_go_before_the_profiled_runs_and_are_recorded() {
    use std::os::unix::fs::PermissionsExt;
    let gate = Gate::new();
    let ncu = gate.ncu("fake-ncu").install();
    // The app itself only runs in the warm-ups (the stand-in ncu plays its
    // recorded runs): each leaves a line behind.
    gate.write(
        "graph_app",
        "#!/bin/sh\necho \"warm $*\" >> warmed.txt\n[ -e fail ] && { echo 'cache dir not writable'; exit 3; }\nexit 0\n",
    );
    let app = gate.path("graph_app");
    std::fs::set_permissions(&app, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let warmed = || {
        std::fs::read_to_string(gate.path("warmed.txt"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    gate.record()
        .ncu(&ncu)
        .output("b.json")
        .args(&["--warmup", "1"])
        .app(&["./graph_app", "--inject", "base"])
        .run()
        .code(0)
        .stderr_has("ncugate: warm-up 1 of 1, without ncu: ./graph_app --inject base")
        .stderr_has("ncugate: warm-up 1 took ");
    assert_eq!(warmed(), 1, "one warm-up before the three recorded runs");
    assert_eq!(gate.json("b.json")["profile"]["warmup"], 1);
    gate.check()
        .ncu(&ncu)
        .baseline("b.json")
        .args(&["--warmup", "1"])
        .app(&["./graph_app", "--inject", "base"])
        .run()
        .code(0);
    assert_eq!(warmed(), 2);
    // Without it, the unchanged app passes, and the headline says why the
    // kernels may differ.
    gate.check()
        .ncu(&ncu)
        .baseline("b.json")
        .app(&["./graph_app", "--inject", "base"])
        .run()
        .code(0)
        .stdout_has("environment changed")
        .stdout_has("warmup 1 → 0");
    assert_eq!(warmed(), 2);
    gate.write("fail", "");
    gate.check()
        .ncu(&ncu)
        .baseline("b.json")
        .args(&["--warmup", "2"])
        .app(&["./graph_app", "--inject", "base"])
        .run()
        .one_clear_error("warm-up run 1 of the app failed (exit code 3): ./graph_app --inject base")
        .stderr_has("cache dir not writable")
        .stderr_has(
            "hint: the app must run to completion without ncu too (or set [app] warmup = 0)",
        );
}

/// An autotuner's new build: the steady-state JAX MLP's baseline from its
/// first recorded run alone, a check whose XLA built `loop_multiply_fusion`
/// another way (`fixtures/h100/autotune-e2e/jax-steady-reports/`), and the
/// baseline's instruction count of that fusion halved. By default its
/// counts are not gated (XLA may pick another build in each process); with
/// `--autotuned-builds all` or `[gate] autotuned_builds = "all"` (the
/// autotuner's cache kept between jobs) they are, and the check fails.
#[test]
fn an_autotuners_new_build_is_gated_whole_where_the_picks_are_kept() {
    let gate = Gate::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/h100/autotune-e2e/jax-steady-reports");
    gate.copy(root.join("jax-steady.record.run-1.ncu-rep"), "r1.ncu-rep");
    gate.copy(
        root.join("jax-steady.unchanged-1.run.ncu-rep"),
        "u1.ncu-rep",
    );
    gate.record()
        .input("r1.ncu-rep")
        .output("jax.json")
        .run()
        .code(0);
    let mut baseline = gate.json("jax.json");
    let fusion = &mut baseline["kernels"]["loop_multiply_fusion"]["metrics"];
    halve(&mut fusion["sm__inst_executed.sum"]["sum"], &ALL_STATS);
    gate.write(
        "halved.json",
        serde_json::to_string(&baseline).expect("JSON"),
    );
    let check = [
        "check",
        "--baseline",
        "halved.json",
        "--input",
        "u1.ncu-rep",
    ];
    gate.run(&check)
        .code(0)
        .stdout_has("loop_multiply_fusion (XLA's autotuner picks this kernel's build at run time")
        .stdout_has(
            "with the picks kept, `[gate] autotuned_builds = \"all\"` gates a new build whole",
        );
    let all = args_with(&check, &["--autotuned-builds", "all"]);
    gate.run(&all)
        .code(1)
        .stdout_has("✗ loop_multiply_fusion")
        .stdout_has("+128.0% (1.53M inst vs baseline 671.74K inst)")
        .stdout_has("XLA's autotuner picks this kernel's configuration at run time")
        .stdout_lacks("not gated (code varies");
    gate.write("ncugate.toml", "[gate]\nautotuned_builds = \"all\"\n");
    gate.run(&check).code(1);
    let time = args_with(&check, &["--autotuned-builds", "time"]);
    gate.run(&time).code(0);
    gate.write("ncugate.toml", "[gate]\nautotuned_builds = \"never\"\n");
    gate.run(&check).code(2);

    // In a suite, a workload whose job keeps the autotuner's cache says so
    // itself, over `[gate]`'s; the flag stands over both.
    gate.write(
        "ncugate.toml",
        "[gate]\nautotuned_builds = \"time\"\n\n\
         [[workload]]\nname = \"kept\"\ncommand = [\"true\"]\nautotuned_builds = \"all\"\n\n\
         [[workload]]\nname = \"cold\"\ncommand = [\"true\"]\n",
    );
    let suite = |workload: &'static str, extra: &[&'static str]| -> Vec<&'static str> {
        let check = [
            "check",
            "--workload",
            workload,
            "--baseline",
            "halved.json",
            "--input",
            "u1.ncu-rep",
        ];
        args_with(&check, extra)
    };
    gate.run(&suite("kept", &[]))
        .code(1)
        .stdout_has("+128.0% (1.53M inst vs baseline 671.74K inst)");
    gate.run(&suite("cold", &[]))
        .code(0)
        .stdout_has("loop_multiply_fusion (XLA's autotuner picks this kernel's build at run time");
    gate.run(&suite("kept", &["--autotuned-builds", "time"]))
        .code(0);
    gate.write(
        "ncugate.toml",
        "[[workload]]\nname = \"kept\"\ncommand = [\"true\"]\nautotuned_builds = \"whole\"\n",
    );
    gate.run(&suite("kept", &[]))
        .code(2)
        .stderr_has("unknown variant `whole`, expected `time` or `all`");
}
