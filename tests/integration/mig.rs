//! MIG offline: an export whose GPU is a MIG instance gets a fingerprint
//! and a baseline file name with the profile and a report that says its
//! clocks were not locked; a run pointed at a MIG instance
//! (`CUDA_VISIBLE_DEVICES=MIG-…`) makes ncu run with `--clock-control
//! none` whatever `clock_control` says. No MIG recording exists here: the
//! export is the H200 recording `fixtures/h200/graph_app.base.fast.run1.raw.csv`
//! with its `device__attribute_display_name` replaced, in the test, by the
//! name CUDA gives an H100 MIG 1g.10gb instance (a labelled stand-in).

use crate::common::{Gate, H200};

const MIG_NAME: &str = "NVIDIA H100 80GB HBM3 MIG 1g.10gb";

fn mig_export(gate: &Gate) {
    let real = std::fs::read_to_string(format!("{H200}/graph_app.base.fast.run1.raw.csv"))
        .expect("the H200 export");
    assert!(real.contains("\"NVIDIA H200\""));
    gate.write(
        "mig.csv",
        real.replace("\"NVIDIA H200\"", &format!("\"{MIG_NAME}\"")),
    );
}

#[test]
fn a_mig_gpu_is_named_in_the_baseline_folder_and_its_clocks_are_said_unlocked() {
    let gate = Gate::new();
    mig_export(&gate);
    gate.run(&[
        "baseline", "record", "--input", "mig.csv", "--output", "b.json",
    ])
    .code(0)
    .stdout_has(MIG_NAME);
    let baseline = gate.json("b.json");
    assert_eq!(baseline["fingerprint"]["gpus"][0]["name"], MIG_NAME);
    gate.run(&["check", "--baseline", "b.json", "--input", "mig.csv"])
        .code(0)
        .stdout_has("is a MIG instance (1g.10gb): its clocks were not locked");
    // The same export of the whole GPU says nothing of MIG.
    gate.h200("graph_app.base.fast.run1.raw.csv", "h200.csv");
    gate.run(&[
        "baseline", "record", "--input", "h200.csv", "--output", "h.json",
    ])
    .code(0);
    let out = gate.run(&["check", "--baseline", "h.json", "--input", "h200.csv"]);
    out.code(0);
    assert!(!out.stdout.contains("MIG"), "{}", out.stdout);
}

#[test]
fn a_run_on_a_mig_instance_profiles_with_clock_control_none() {
    let gate = Gate::new();
    let ncu = gate
        .ncu("quick-ncu")
        .log_argv("ncu.calls")
        .fail(3, "no GPU here")
        .install();
    let out = gate
        .record()
        .ncu(&ncu)
        .args(&["--clock-control", "base"])
        .env(
            "CUDA_VISIBLE_DEVICES",
            "MIG-4e2e5ba6-3e5c-5b1c-9f3e-2c1b0e6d5a10",
        )
        .app(&["./app"])
        .run();
    out.one_clear_error("exit code 3")
        .stderr_has("names a MIG instance: ncu runs with --clock-control none, not base");
    let argv = gate.read("ncu.calls");
    assert!(argv.contains("--clock-control none"), "{argv}");
    assert!(!argv.contains("--clock-control base"), "{argv}");
}
