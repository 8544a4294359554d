//! Output for CI logs: the terminal report fits the width (100 columns when
//! not a terminal, `COLUMNS` when set), failures come first, `--show` picks
//! the rows, long names are shortened in the terminal only, and the step
//! summary folds the full table into `<details>`.

use crate::common;
use common::Gate;

/// The redundant-node variant (6 failed, 17 passed) with a base baseline.
fn redundant() -> Gate {
    let gate = Gate::recorded();
    gate.fast_run("redundant-node");
    gate
}

fn check<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["check", "--baseline", "baseline.json", "--input", "run.csv"];
    args.extend_from_slice(extra);
    args
}

/// Widest line in characters (not bytes: `μ`, `✗`, `…` are one column each).
fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// The rows of the checks table, each ending in its verdict word: a line,
/// or a name on its own line and its values below (joined here by two spaces).
fn table_rows(text: &str) -> Vec<String> {
    let start = text.find("\nchecks").expect("a checks table");
    let mut rows: Vec<String> = Vec::new();
    let lines = text[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with("  "));
    // The header (one line, or two when each name has its own) ends at the first kernel.
    for line in lines.skip_while(|l| l.starts_with("    ")) {
        match (line.strip_prefix("      "), rows.last_mut()) {
            (Some(values), Some(row)) => {
                row.push_str("  ");
                row.push_str(values);
            }
            _ if line.starts_with("    ") => rows.push(line.to_string()),
            _ => {}
        }
    }
    rows
}

#[test]
fn a_100_column_log_shows_every_check_within_100_columns_failures_first() {
    let gate = redundant();
    let out = gate.run(&check(&["--show", "all"]));
    out.code(1);
    assert!(
        widest(&out.stdout) <= 100,
        "a line is wider than 100 columns:\n{}",
        out.stdout
    );
    let rows = table_rows(&out.stdout);
    // 6 metrics × 3 kernels + 2 whole-run rules + 3 launch counts (one failed).
    assert_eq!(rows.len(), 23, "every check: {rows:#?}");
    // Failing kernels first, and in each kernel its failures first.
    let table = &out.stdout[out.stdout.find("\nchecks").unwrap()..];
    let kernels: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("    "))
        .collect();
    assert_eq!(
        kernels,
        [
            "  ✗ void scale<0>(const float *, float *, long, int)",
            "  ✗ (total)",
            "  ✓ produce(float *, long)",
            "  ✓ void finish<float>(const float *, const float *, float *, long)"
        ]
    );
    assert!(rows[..5].iter().all(|r| r.ends_with("FAIL")), "{table}");
    assert!(rows[5].ends_with("pass"), "{table}");
    // Failures and their reasons come before the table.
    let why = out.stdout.find("\nwhy:").unwrap();
    let table = out.stdout.find("\nchecks").unwrap();
    assert!(why < table);
}

#[test]
fn the_default_lists_what_changed_and_says_how_many_are_hidden() {
    let gate = redundant();
    let out = gate.run(&check(&[]));
    out.code(1);
    let rows = table_rows(&out.stdout);
    assert_eq!(rows.len(), 6, "{rows:#?}");
    assert!(rows.iter().all(|r| r.ends_with("FAIL")), "{rows:#?}");
    assert!(
        out.stdout.contains("17 others not shown: --show all"),
        "{}",
        out.stdout
    );
    // The file reports keep every check.
}

#[test]
fn show_fail_and_quiet_list_only_failures_and_a_pass_lists_nothing() {
    let gate = Gate::recorded();
    gate.fast_run("base");
    for extra in [&["--show", "fail"][..], &["-q"][..], &[][..]] {
        let out = gate.run(&check(extra));
        out.code(0);
        if extra == ["-q"] {
            // No table under -q: the headline says it.
            assert!(!out.stdout.contains("checks"), "{}", out.stdout);
            out.stdout_has("ncugate: PASS (exit 0): 0 failed, 23 passed");
            continue;
        }
        assert!(
            out.stdout
                .contains("checks: nothing failed; 23 passed (--show all lists them)")
                || out.stdout.contains(
                    "checks: nothing failed, warned or improved; 23 passed (--show all lists them)"
                ),
            "{extra:?}: {}",
            out.stdout
        );
        assert!(out.stdout.lines().count() < 12, "{extra:?}: {}", out.stdout);
    }
    let all = gate.run(&check(&[
        "--show",
        "all",
        "--junit",
        "r.xml",
        "--markdown",
        "r.md",
    ]));
    // 6 metrics × 3 kernels + 2 whole-run rules + 3 launch counts: the headline's 23.
    assert_eq!(table_rows(&all.stdout).len(), 23, "{}", all.stdout);
    // The same count in every format: JUnit had a 24th testcase, the device,
    // which is what makes the checks comparable, not a check (now a property).
    let junit = gate.read("r.xml");
    assert_eq!(junit.matches("<testcase ").count(), 23, "{junit}");
    assert!(
        junit.contains("<property name=\"device\" value=\"NVIDIA H200"),
        "{junit}"
    );
    let markdown = gate.read("r.md");
    assert!(markdown.contains("23 passed"), "{markdown}");
}

#[test]
fn long_kernel_names_are_shortened_in_the_middle_in_the_terminal_only() {
    let gate = redundant();
    let out = gate.run_with(
        &check(&[
            "--show",
            "all",
            "--markdown",
            "report.md",
            "--json",
            "r.json",
        ]),
        &[("COLUMNS", "80")],
    );
    out.code(1);
    let table = &out.stdout[out.stdout.find("\nchecks").unwrap()..];
    assert!(widest(table) <= 80, "{table}");
    // Too narrow for the standard deviations: the table keeps the means.
    assert!(table.contains("baseline μ "), "{table}");
    // Too narrow for the longest metric on a row with its values: every
    // name gets a line of its own, whole.
    let metric = "dram__throughput.avg.pct_of_peak_sustained_elapsed (mean)";
    assert!(table.contains(&format!("\n    {metric}\n")), "{table}");
    assert_eq!(table_rows(&out.stdout).len(), 23, "{table}");

    // 60 columns: the kernel names no longer fit either.
    let out = gate.run_with(&check(&["--show", "all"]), &[("COLUMNS", "60")]);
    let full = "void finish<float>(const float *, const float *, float *, long)";
    assert!(!out.stdout.contains(full), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("  ✓ void finish<float>(const flo…nst float *, float *, long)"),
        "{}",
        out.stdout
    );
    assert!(gate.read("report.md").contains(full));
    assert!(gate.read("r.json").contains(full));
    // Every line at 60 columns, the header's paths and the table's title too.
    for show in ["changed", "all"] {
        let args = check(&["--show", show]);
        let out = gate.run_with(&args, &[("COLUMNS", "60")]);
        assert!(widest(&out.stdout) <= 60, "{}", out.stdout);
    }
}

#[test]
fn the_step_summary_folds_the_full_table_into_details() {
    let gate = redundant();
    let out = gate.run(&check(&["--markdown", "report.md"]));
    out.code(1);
    let md = gate.read("report.md");
    let details = md
        .find("<details><summary>All 23 checks</summary>")
        .unwrap();
    let why = md.find("### Why").unwrap();
    assert!(why < details, "failures first:\n{md}");
    let end = md.find("</details>").unwrap();
    let table = &md[details..end];
    assert_eq!(table.lines().filter(|l| l.starts_with("| `")).count(), 23);
}

/// The charts of the redundant run's HTML report: file name → SVG text.
fn charts(gate: &Gate) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(gate.path("html/charts"))
        .expect("charts")
        .map(|e| {
            let path = e.expect("entry").path();
            let name = path
                .file_name()
                .expect("file name")
                .to_string_lossy()
                .into_owned();
            (name, std::fs::read_to_string(&path).expect("svg"))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn html_charts_have_whole_titles_and_no_empty_zero_charts() {
    let gate = redundant();
    gate.run(&check(&["--html", "html", "--json", "r.json"]))
        .code(1);
    let report: serde_json::Value = serde_json::from_str(&gate.read("r.json")).unwrap();
    let rules = report["rules"].as_array().unwrap();
    let zero = rules
        .iter()
        .filter(|r| r["baseline"]["mean"] == 0.0 && r["current"] == 0.0)
        .count();
    assert!(
        zero >= 4,
        "the fixture has all-zero FP64 and load checks: {zero}"
    );
    let charts = charts(&gate);
    assert_eq!(charts.len(), rules.len() - zero, "no chart for 0 vs 0");
    for (name, svg) in &charts {
        // The title is the rule, whole or shortened in the middle, never cut at the end,
        // and the total's does not start with a dash.
        // (plotters writes a text's content on its own line.)
        assert!(!svg.contains("\n— "), "{name}: {svg}");
        assert!(!svg.contains("pct_of_peak_sustained_elaps\n"), "{name}");
        // Legible: no text under 12 px (titles, ticks, the unit).
        for size in svg.split("font-size=\"").skip(1) {
            let px: f64 = size.split('"').next().unwrap().parse().unwrap();
            assert!(px >= 12.0, "{name}: {px} px text");
        }
    }
    let total = charts
        .iter()
        .find(|(_, svg)| svg.contains("\nsm__inst_executed.sum (sum, total)\n"))
        .expect("the total's chart titled by its rule");
    assert!(total.1.contains("(sum, total)"));
    let index = gate.read("html/index.html");
    // Whole, with a place to wrap after each `.` and run of `_`.
    assert!(
        index.contains("<figcaption><code>dram__<wbr>throughput.<wbr>avg.<wbr>pct_<wbr>of_<wbr>peak_<wbr>sustained_<wbr>elapsed (mean)</code> — allowed down to"),
        "full rule names under the charts"
    );
    assert!(index.contains(
        "<figcaption><code>sm__<wbr>inst_<wbr>executed.<wbr>sum (sum)</code> — allowed up to"
    ));
}

#[test]
fn the_sanitizer_html_shows_the_host_stack_and_what_was_gated() {
    let gate = Gate::new();
    gate.h200("memory/bad_app.memcheck.xml", "bad.memcheck.xml");
    let out = gate
        .sanitize()
        .xml("bad.memcheck.xml")
        .html("html")
        .markdown("r.md")
        .junit("j.xml")
        .json("r.json")
        .run();
    out.code(1);
    assert!(
        out.stdout
            .contains("  tool:       compute-sanitizer memcheck\n"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("thresholds:") && !out.stdout.contains("baseline:"));
    assert!(!out.stdout.contains("improved"), "{}", out.stdout);
    let index = gate.read("html/index.html");
    assert!(index.contains("<ul class=\"stack\">"), "{index}");
    let first_frame = out
        .stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("at "))
        .expect("a host frame in the terminal");
    assert!(
        index.contains(&format!(
            "<li>at <code>{}</code></li>",
            first_frame.replace('<', "&lt;").replace('>', "&gt;")
        )),
        "{first_frame}"
    );
    assert!(index.contains("<dt>tool</dt>") && !index.contains("<dt>thresholds</dt>"));
    let md = gate.read("r.md");
    assert!(md.contains("- tool: `compute-sanitizer memcheck`") && !md.contains("thresholds"));
    let junit = gate.read("j.xml");
    assert!(
        junit.contains("name=\"tool\"") && !junit.contains("name=\"baseline\""),
        "{junit}"
    );
    let json: serde_json::Value = serde_json::from_str(&gate.read("r.json")).unwrap();
    assert_eq!(json["subject"]["gate"], "sanitizer");
    assert_eq!(json["subject"]["tools"][0], "memcheck");
    assert!(json.get("baseline").is_none() && json.get("thresholds").is_none());
}

#[test]
fn a_built_in_rule_is_named_by_its_number_which_init_prints() {
    // The user has no thresholds file: "thresholds line 42" pointed into one.
    let gate = redundant();
    let out = gate.run(&check(&[]));
    out.code(1);
    assert!(!out.stdout.contains("thresholds line"), "{}", out.stdout);
    let joined = out.stdout.replace("\n          ", " ");
    let at = joined
        .find("(built-in rule ")
        .unwrap_or_else(|| panic!("{joined}"));
    let n: String = joined[at + 15..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    // `init --print-thresholds` numbers the rules the same way and writes nothing.
    let printed = gate.run(&["init", "--print-thresholds"]);
    printed.code(0);
    assert!(!gate.path("ncugate.toml").exists());
    let rule = printed
        .stdout
        .split(&format!("# built-in rule {n}\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("rule {n} in:\n{}", printed.stdout));
    let table = rule.split("[[rule]]").nth(1).expect("its table");
    // The why line's metric: the last metric name before the rule's number.
    let metric = joined[..at]
        .rsplit(|c: char| c.is_whitespace())
        .find(|w| w.contains("__"))
        .expect("a metric before the rule's number");
    assert!(
        table.contains(&format!("metric = \"{metric}")),
        "rule {n} is not {metric}:\n{table}"
    );
}
