//! `history changes` on noisy series and the history's stale-data alerts,
//! through the real binary on a SQLite store: the reference app's three base
//! runs on the H200 recorded again and again (A/A: no change point), then the
//! same reports with every kernel time raised by 10% (a step: one change
//! point, at its first commit); a workload that stopped reporting on main
//! listed by `history show`/`changes` and warned about by a recording check.

use crate::common::Gate;

/// A gate folder with `pass1.json`…`pass3.json` (checks of the three base
/// runs) and `step1.json`…`step3.json`: the same reports **edited by this
/// test**, every `gpu__time_duration.sum` value and its per-run samples ×
/// 1.10 (no GPU ran them; they stand for a 10% slower build).
fn noisy_reports() -> Gate {
    let g = Gate::recorded();
    for i in 1..=3 {
        let pass = format!("pass{i}.json");
        g.check()
            .baseline("baseline.json")
            .input(format!("base{i}.csv"))
            .json(&pass)
            .run()
            .code(0);
        let mut doc = g.json(&pass);
        for row in doc["rules"].as_array_mut().expect("rules") {
            if row["metric"] != "gpu__time_duration.sum" {
                continue;
            }
            let scaled = |v: &serde_json::Value| v.as_f64().map(|x| x * 1.10);
            row["current"] = serde_json::json!(scaled(&row["current"]));
            let runs: Vec<Option<f64>> = row["current_runs"]
                .as_array()
                .expect("runs")
                .iter()
                .map(scaled)
                .collect();
            row["current_runs"] = serde_json::json!(runs);
        }
        g.write(
            &format!("step{i}.json"),
            serde_json::to_string_pretty(&doc).expect("JSON"),
        );
    }
    g
}

/// Records `report` as `commit` on main, `hour` hours into 2026-11-01.
fn record_at(g: &Gate, url: &str, report: &str, commit: &str, hour: usize) {
    let time = format!("2026-11-01T{hour:02}:00:00Z");
    g.history_record(url, report, (commit, "main", &time))
        .code(0);
}

#[test]
fn changes_name_a_step_in_timings_once_and_nothing_in_their_noise() {
    let g = noisy_reports();
    let url = "sqlite:h.sqlite";
    for i in 0..12 {
        record_at(
            &g,
            url,
            &format!("pass{}.json", i % 3 + 1),
            &format!("a{i:02}"),
            i,
        );
    }
    for i in 0..6 {
        record_at(
            &g,
            url,
            &format!("step{}.json", i % 3 + 1),
            &format!("s{i:02}"),
            12 + i,
        );
    }
    let out = g.run(&["history", "changes", "--json", "--history", url]);
    out.code(0);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let changes = doc["changes"].as_array().expect("changes");
    let timing: Vec<&serde_json::Value> = changes
        .iter()
        .filter(|c| c["metric"] == "gpu__time_duration.sum")
        .collect();
    // Each of the 3 kernels' time: one change, at the step's first commit.
    assert_eq!(timing.len(), 3, "{}", out.stdout);
    for c in &timing {
        assert_eq!(
            (c["commit"].as_str(), c["test"].as_str()),
            (Some("s00"), Some("e-divisive")),
            "{c}"
        );
        let (from, to) = (
            c["from"].as_f64().expect("from"),
            c["to"].as_f64().expect("to"),
        );
        assert!((to / from - 1.10).abs() < 0.01, "{c}");
        assert!(c["p_value"].as_f64().expect("p") < 0.001, "{c}");
    }
    // No other series moved: the counts were the same in every run.
    assert_eq!(timing.len(), changes.len(), "{}", out.stdout);
    let text = g.run(&["history", "changes", "--history", url]);
    text.code(0)
        .stdout_has("s00 (main) · produce(float *, long) · gpu__time_duration.sum: 124.13 us → 136.54 us (+10.0%)");
    text.stdout_has("[change point: mean of the runs before vs. from it, Welch p = ");
    text.stdout_has(" < 0.001 (window 50)]");

    // A shorter window (a flag over the default) still holds the step's two sides.
    let narrow = g.run(&[
        "history",
        "changes",
        "--history",
        url,
        "--change-window",
        "12",
    ]);
    narrow
        .code(0)
        .stdout_has("s00 (main)")
        .stdout_has("(window 12)");
    // The trend page marks the change point.
    g.run(&["history", "show", "--history", url, "--html", "trends"])
        .code(0);
    let page = g.read("trends/trends-1.html");
    assert!(page.contains("change points at <code>s00</code>"), "{page}");
    // Failing or changed series come first on the page, and the index says so.
    assert!(
        g.read("trends/index.html").contains("failing or changed"),
        "the index counts them"
    );
}

#[test]
fn change_settings_out_of_range_are_errors_with_a_hint() {
    let g = Gate::new();
    let url = "sqlite:h.sqlite";
    g.run(&["history", "changes", "--history", url, "--change-p", "0"])
        .one_clear_error(
            "[history] change_p = 0 is not a significance level above 0 and at most 0.5",
        )
        .stderr_has("hint: set `change_p` in [history] of ncugate.toml (or its flag, --change-p)");
    g.run_with(
        &["history", "changes", "--history", url],
        &[("NCUGATE_CHANGE_WINDOW", "9")],
    )
    .one_clear_error("[history] change_window = 9 is not at least 10 runs");
    g.write("ncugate.toml", "[history]\nstale_after = \"2w\"\n");
    g.run(&[
        "history",
        "show",
        "--history",
        url,
        "--config",
        "ncugate.toml",
    ])
    .one_clear_error("[history] stale_after = 2w is not days as `14d` or commits as `30c`");
}

/// The stale workloads `history show --json` lists with `extra` flags.
fn stale(g: &Gate, url: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["history", "show", "--json", "--history", url];
    args.extend_from_slice(extra);
    let out = g.run(&args);
    out.code(0);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    doc["stale"]
        .as_array()
        .expect("stale")
        .iter()
        .map(|s| s["workload"].as_str().expect("workload").to_string())
        .collect()
}

#[test]
fn a_workload_that_stopped_reporting_on_main_is_stale() {
    let g = noisy_reports();
    let url = "sqlite:h.sqlite";
    // `gone` ran on main on 2026-01-01 and never again; `pr-only` never ran on main.
    g.run(&[
        "history",
        "record",
        "pass1.json",
        "--workload",
        "gone",
        "--commit",
        "g1",
        "--branch",
        "main",
        "--time",
        "2026-01-01T00:00:00Z",
        "--history",
        url,
    ])
    .code(0);
    g.run(&[
        "history",
        "record",
        "pass1.json",
        "--workload",
        "pr-only",
        "--commit",
        "p1",
        "--branch",
        "pr-1",
        "--time",
        "2026-01-01T00:00:00Z",
        "--history",
        url,
    ])
    .code(0);
    // `default` runs on main now: three commits after `gone`'s last.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    for (i, commit) in ["n1", "n2", "n3"].iter().enumerate() {
        let t = (now - 60 + i as u64).to_string();
        g.history_record(url, "pass2.json", (commit, "main", &t))
            .code(0);
    }
    assert_eq!(stale(&g, url, &[]), ["gone"], "default: 14 days");
    assert!(stale(&g, url, &["--stale-after", "4000d"]).is_empty());
    assert_eq!(stale(&g, url, &["--stale-after", "2c"]), ["gone"]);
    assert!(
        stale(&g, url, &["--stale-after", "3c"]).is_empty(),
        "3 commits since, not more"
    );
    assert!(stale(&g, url, &["--workload", "default"]).is_empty());
    g.run(&["history", "show", "--history", url])
        .code(0)
        .stdout_has("ncugate: stale: workload `gone` on NVIDIA H200")
        .stdout_has("has no run on an accepted branch for ");
    g.run(&["history", "changes", "--history", url])
        .code(0)
        .stdout_has("ncugate: stale: workload `gone` on NVIDIA H200");
    g.run_with(
        &["history", "changes", "--history", url],
        &[("NCUGATE_STALE_AFTER", "3c")],
    )
    .code(0);

    // A check that records warns about `gone` (not about itself), and still passes.
    let out = g
        .check()
        .baseline("baseline.json")
        .input("base3.csv")
        .args(&["--history", url, "--commit", "n4", "--branch", "main"])
        .run();
    out.code(0);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        all.contains("warning: history sqlite:h.sqlite: stale: workload `gone` on NVIDIA H200"),
        "{all}"
    );
    assert!(!all.contains("stale: workload `default`"), "{all}");
    assert!(!all.contains("`pr-only`"), "{all}");
}
