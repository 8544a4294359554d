//! Two ncugate processes gating the same workload in one checkout at once:
//! each reads its own profiling run. They shared `target/ncugate/<w>/run/`,
//! deleting and re-reading each other's files, and a regressed app's check
//! passed on the other process's data.

use crate::common::Gate;
use std::process::Stdio;

/// The stand-in ncu replaying the recordings with timings that interleave
/// two runs: the strided run writes its log first and finishes last, the
/// base run writes over it in between.
fn interleaving_ncu(gate: &Gate) -> String {
    gate.ncu("slow-ncu")
        .delay("strided", 0.0, 1.5)
        .delay("*", 0.7, 0.0)
        .install()
}

#[test]
fn two_checks_of_one_workload_at_once_each_gate_their_own_run() {
    let gate = Gate::new();
    gate.base_baseline(&[]).code(0);
    let ncu = interleaving_ncu(&gate);
    let check = |variant: &str| {
        gate.check()
            .baseline("baseline.json")
            .ncu(&ncu)
            .app(&["./graph_app", "--inject", variant])
            .std_command()
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn ncugate")
    };
    let strided = check("strided");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let base = check("base");
    let (strided, base) = (
        strided.wait_with_output().expect("strided"),
        base.wait_with_output().expect("base"),
    );
    let text = |o: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    assert_eq!(strided.status.code(), Some(1), "{}", text(&strided));
    assert_eq!(base.status.code(), Some(0), "{}", text(&base));
    assert!(
        text(&base).contains("is in use by another ncugate process; this run works in"),
        "{}",
        text(&base)
    );
}
