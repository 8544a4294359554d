//! NVTX exports (`ncu --nvtx`, fixtures/h200/nvtx/, recorded on an H200 from
//! kernels/nvtx_app.cu; commands in its README): both pages with the NVTX
//! columns before `Kernel Name`, and range-replay results, which ncu names
//! `range` and ncugate keys by their NVTX ranges. Each is recorded, checked
//! against itself (exit 0) and against a copy with the first result's
//! duration doubled (exit 1); the modified copies are generated here.

use crate::common::{Gate, H200, rule};
use crate::public_exports::{Field, doubled_where, header, raw_doubled};
use std::path::Path;

/// File, the kernel keys its baseline holds, and the launches per run.
const EXPORTS: &[(&str, &[&str], u64)] = &[
    (
        "nvtx_app.nvtx.metrics.details.csv",
        &[
            "axpy(float, const float *, float *, long)",
            "scale(float, float *, long)",
        ],
        4,
    ),
    (
        "nvtx_app.nvtx.sol.details.csv",
        &[
            "axpy(float, const float *, float *, long)",
            "scale(float, float *, long)",
        ],
        4,
    ),
    (
        "nvtx_app.nvtx.metrics.raw.csv",
        &[
            "axpy(float, const float *, float *, long)",
            "scale(float, float *, long)",
        ],
        4,
    ),
    (
        "nvtx_app.nvtx.import.raw.csv",
        &[
            "axpy(float, const float *, float *, long)",
            "scale(float, float *, long)",
        ],
        4,
    ),
    // `--replay-mode range --nvtx-include train/step/`: one result per step.
    (
        "nvtx_app.range-step.details.csv",
        &["range [train/step/] [epoch]"],
        2,
    ),
    // `--replay-mode range --nvtx-include epoch`, raw page: one result.
    ("nvtx_app.range-epoch.raw.csv", &["range [epoch]"], 1),
];

#[test]
fn nvtx_exports_and_range_results_are_gated_per_kernel_or_range() {
    let gate = Gate::new();
    gate.write("t.toml", rule("gpu__time_duration.sum"));
    for (i, (file, keys, launches)) in EXPORTS.iter().enumerate() {
        let data = std::fs::read(Path::new(H200).join("nvtx").join(file)).expect("read");
        let (_, head) = header(&data);
        let kernel = head
            .iter()
            .position(|h| h == "Kernel Name")
            .expect("Kernel Name");
        assert_eq!(
            [&head[kernel - 2], &head[kernel - 1]],
            [
                "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",
                "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
            ],
            "{file}: NVTX columns before Kernel Name"
        );
        let slow = if file.ends_with(".raw.csv") {
            raw_doubled(&data, "gpu__time_duration.sum")
        } else {
            doubled_where(&data, |row: Field| {
                ["gpu__time_duration.sum", "Duration"].contains(&row("Metric Name").as_str())
            })
        };
        let (me, worse, base) = (
            format!("{i}.csv"),
            format!("{i}.slow.csv"),
            format!("{i}.json"),
        );
        gate.write(&me, &data).write(&worse, slow);
        let rec = gate
            .record()
            .thresholds("t.toml")
            .input(&me)
            .output(&base)
            .run();
        assert_eq!(rec.code, 0, "{file}: {}", rec.stderr);
        let json: serde_json::Value =
            serde_json::from_str(&gate.read(&base)).expect("baseline JSON");
        let kernels = json["kernels"].as_object().expect("kernels");
        let mut found: Vec<&str> = kernels.keys().map(String::as_str).collect();
        found.sort_unstable();
        assert_eq!(found, *keys, "{file}: kernel keys");
        let total: u64 = kernels
            .values()
            .map(|k| k["launches"]["mean"].as_f64().expect("launches") as u64)
            .sum();
        assert_eq!(total, *launches, "{file}: launches");

        let same = gate
            .check()
            .thresholds("t.toml")
            .baseline(&base)
            .input(&me)
            .run();
        assert_eq!(same.code, 0, "{file}: {}{}", same.stdout, same.stderr);
        let out = gate
            .check()
            .thresholds("t.toml")
            .baseline(&base)
            .input(&worse)
            .run();
        assert_eq!(out.code, 1, "{file}: {}{}", out.stdout, out.stderr);
        assert!(out.stdout.contains("+100.0%"), "{file}: {}", out.stdout);
        assert!(out.stdout.contains(keys[0]), "{file}: {}", out.stdout);
    }
}

/// A PyTorch run saved with its output (`> out.csv 2>&1`): a Python traceback
/// and `==WARNING==` before the header, PyTorch and cuBLAS kernel names, NVTX
/// cells empty outside the ranges. Six kernels, ten launches; self passes, a
/// copy with the first kernel's duration doubled fails.
#[test]
fn a_pytorch_export_with_a_traceback_before_the_header_is_gated() {
    let gate = Gate::new();
    gate.write("t.toml", rule("gpu__time_duration.sum"));
    let data = crate::common::h200_bytes("nvtx/torch_app.nvtx.details.csv");
    let (at, _) = header(&data);
    let preamble = String::from_utf8_lossy(&data[..at]);
    assert!(
        preamble.starts_with("Traceback (most recent call last):"),
        "{preamble}"
    );
    assert!(preamble.contains("==WARNING=="), "{preamble}");
    let slow = doubled_where(&data, |row: Field| {
        row("Metric Name") == "gpu__time_duration.sum"
    });
    gate.write("p.csv", &data).write("p.slow.csv", slow);
    let rec = gate
        .record()
        .thresholds("t.toml")
        .input("p.csv")
        .output("p.json")
        .run();
    assert_eq!(rec.code, 0, "{}", rec.stderr);
    let json: serde_json::Value = serde_json::from_str(&gate.read("p.json")).expect("JSON");
    let kernels = json["kernels"].as_object().expect("kernels");
    assert_eq!(kernels.len(), 6, "{:?}", kernels.keys().collect::<Vec<_>>());
    let launches: f64 = kernels
        .values()
        .map(|k| k["launches"]["mean"].as_f64().expect("launches"))
        .sum();
    assert_eq!(launches, 10.0);
    assert!(
        kernels
            .keys()
            .any(|k| k.starts_with("void at::<unnamed>::vectorized_layer_norm_kernel<c10::Half,")),
        "{:?}",
        kernels.keys().collect::<Vec<_>>()
    );
    let same = gate
        .check()
        .thresholds("t.toml")
        .baseline("p.json")
        .input("p.csv")
        .run();
    assert_eq!(same.code, 0, "{}{}", same.stdout, same.stderr);
    let out = gate
        .check()
        .thresholds("t.toml")
        .baseline("p.json")
        .input("p.slow.csv")
        .run();
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("+100.0%"), "{}", out.stdout);
}
