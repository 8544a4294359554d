//! nvbench JSON as a metric source, on the two public recordings of
//! nvbench's axes example (fixtures/public-nvbench/README.md): a baseline
//! recorded from one file with the built-in nvbench rules, the other run
//! passes, and the same run with one state's GPU time raised fails naming
//! that benchmark × state.

use crate::common::Gate;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/public-nvbench");

fn gate() -> Gate {
    let gate = Gate::new();
    for name in [
        "nvbench.axes.ref.json",
        "nvbench.axes.cmp.json",
        "nvbench.axes.cmp.slower.json",
    ] {
        gate.copy(format!("{DIR}/{name}"), name);
    }
    gate
}

fn record(gate: &Gate) {
    gate.run(&[
        "baseline",
        "record",
        "--input",
        "nvbench.axes.ref.json",
        "--output",
        "b.json",
    ])
    .code(0)
    .stdout_has("88 kernels")
    .stdout_has("Quadro GP100 (CC 6.0, 56 SMs) + Quadro GV100 (CC 7.0, 80 SMs)");
}

#[test]
fn an_unchanged_nvbench_run_passes_against_a_baseline_of_the_other() {
    let gate = gate();
    record(&gate);
    let baseline = gate.json("b.json");
    assert_eq!(baseline["thresholds"], "thresholds/nvbench.toml (built in)");
    // σ of one file is nvbench's noise: 0.0578% of 1.0035 ms.
    let sigma = &baseline["kernels"]["simple [Device=0]"]["metrics"]["nv/cold/time/gpu/mean"]["mean"]
        ["stddev"];
    let sigma = sigma.as_f64().expect("a σ");
    assert!((sigma - 580.237).abs() < 0.01, "{sigma}");
    let out = gate.run(&[
        "check",
        "--baseline",
        "b.json",
        "--input",
        "nvbench.axes.cmp.json",
    ]);
    out.code(0)
        .stdout_has("PASS (exit 0): 0 failed, 264 passed")
        .stdout_has("thresholds: thresholds/nvbench.toml (built in)");
    assert!(!out.stdout.contains("σ is unknown"), "{}", out.stdout);
}

#[test]
fn one_state_slower_beyond_its_noise_fails_naming_benchmark_and_state() {
    let gate = gate();
    record(&gate);
    gate.run(&[
        "check",
        "--baseline",
        "b.json",
        "--input",
        "nvbench.axes.cmp.slower.json",
    ])
    .code(1)
    .stdout_has("REGRESSION (exit 1): 1 failed, 263 passed")
    .stdout_has("copy_sweep_grid_shape [Device=0 BlockSize=2^8 NumBlocks=2^8]")
    .stdout_has("nv/cold/time/gpu/mean (mean) [FAIL]: +9.9%")
    .stdout_has("+2% +3σ");
}

#[test]
fn a_malformed_or_foreign_json_file_exits_2_with_a_hint() {
    let gate = gate();
    let text = gate.read("nvbench.axes.cmp.json");
    gate.write("cut.json", &text[..text.len() / 3])
        .write("other.json", "{\"name\": \"not nvbench\"}\n")
        .write(
            "bad.json",
            text.replacen(
                "\"value\": \"0.001067108783223058\"",
                "\"value\": \"1e999\"",
                1,
            ),
        );
    for (file, needle) in [
        ("cut.json", "it is truncated"),
        ("other.json", "missing field `meta`"),
        (
            "bad.json",
            "state 4 (`Device=0 BlockSize=2^8 NumBlocks=2^8`): summary `nv/cold/time/gpu/mean` has value \"1e999\", not a finite number",
        ),
    ] {
        gate.run(&["baseline", "record", "--input", file, "--output", "b.json"])
            .code(2)
            .stderr_has("not a readable nvbench JSON file")
            .stderr_has(needle)
            .stderr_has("hint: pass the file `nvbench --json FILE` wrote");
    }
}
