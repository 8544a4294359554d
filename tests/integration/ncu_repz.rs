//! Compressed reports (`.ncu-repz`, a Zstandard stream of a `.ncu-rep`'s
//! bytes) read natively: the converted public reports of
//! `fixtures/ncu-repz/` gate as their `.ncu-rep`s do, with the same values
//! and the same profiler version; a file is told by its bytes, not its
//! name; the Zstandard layouts NVIDIA's reader reads (several frames,
//! skippable frames, no content size) read alike; a cut stream is corrupt
//! and a Zstandard bomb is refused in little memory, exit 2 with a hint.
//! `oracle.rs` holds the compressed reports to NVIDIA's reader.

use crate::common::Gate;
use ncugate::parse::ncu_rep::{container, zstd};
use std::path::Path;

const REPZ: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/ncu-repz");
const PUBLIC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/public-ncu-rep");
const SET_FULL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/thresholds/set-full.toml");
const BEFORE: &str = "ncar-gpu-workshop.MW_Baseline";
const AFTER: &str = "ncar-gpu-workshop.MW_DivToMult";

fn without_ncu(gate: &Gate, args: &[&str]) -> crate::common::Outcome {
    gate.run_with(args, &[("NCUGATE_NCU", "/nonexistent/ncu")])
}

/// `baseline record` of `input` (its rule results too) into `output`, with
/// `thresholds/set-full.toml` and no ncu.
fn record(gate: &Gate, input: &str, output: &str) -> crate::common::Outcome {
    let args = [
        "baseline",
        "record",
        "--thresholds",
        SET_FULL,
        "--input",
        input,
        "--details",
        input,
        "--output",
        output,
    ];
    without_ncu(gate, &args)
}

/// A baseline without what names its input files (their paths and digests).
fn without_inputs(gate: &Gate, name: &str) -> serde_json::Value {
    let mut json = gate.json(name);
    for key in ["inputs", "details", "created"] {
        json.as_object_mut().expect("object").remove(key);
    }
    json
}

/// `ncugate::parse::ncu_rep::zstd` mirrors one stored byte of each fixture:
/// a `.ncu-repz` of `fixtures/ncu-repz/` inflates to its `.ncu-rep`.
#[test]
fn the_converted_reports_inflate_to_their_ncu_reps() {
    for name in [BEFORE, AFTER] {
        let repz = std::fs::read(Path::new(REPZ).join(format!("{name}.ncu-repz"))).expect("repz");
        let rep = std::fs::read(Path::new(PUBLIC).join(format!("{name}.ncu-rep"))).expect("rep");
        assert_eq!(&repz[..4], &zstd::FRAME_MAGIC, "{name}: a Zstandard frame");
        assert!(repz.len() * 12 < rep.len(), "{name}: compressed");
        let inflated = zstd::inflate(&repz).expect("inflates");
        assert!(inflated[..] == rep[..], "{name}: the .ncu-rep's bytes");
    }
}

#[test]
fn converted_public_reports_gate_as_their_ncu_reps_do() {
    let gate = Gate::new();
    gate.copy(
        Path::new(REPZ).join(format!("{BEFORE}.ncu-repz")),
        "before.ncu-repz",
    )
    .copy(
        Path::new(REPZ).join(format!("{AFTER}.ncu-repz")),
        "after.ncu-repz",
    )
    .copy(
        Path::new(PUBLIC).join(format!("{BEFORE}.ncu-rep")),
        "before.ncu-rep",
    );
    record(&gate, "before.ncu-repz", "z.json").code(0);
    record(&gate, "before.ncu-rep", "r.json").code(0);
    // The same kernels, values, code fingerprints, GPU and profiler version.
    assert_eq!(
        without_inputs(&gate, "z.json"),
        without_inputs(&gate, "r.json")
    );
    let z = gate.json("z.json");
    let time = &z["kernels"]["compute_tendencies_x_279_gpu"]["metrics"]["gpu__time_duration.sum"];
    assert_eq!(time["unit"], "ns");
    assert_eq!(time["sum"]["mean"], 6_190_944.0, "{time}");
    assert_eq!(
        z["kernels"]["compute_tendencies_x_279_gpu"]["metrics"]["dram__bytes_read.sum"]["sum"]["mean"],
        1_209_119_616.0
    );
    assert_eq!(z["fingerprint"]["gpus"][0]["name"], "Tesla V100-SXM2-32GB");
    assert_eq!(
        z["gpu"]["kernels"]["compute_tendencies_x_279_gpu"]["cycles"],
        8_024_031.0
    );
    let (digest, path) = (&z["inputs"][0]["sha256"], &z["inputs"][0]["path"]);
    assert_eq!(path, "before.ncu-repz");
    assert_eq!(
        digest, "735a99a7e495feac0d0a22eb069a5e2b52915c67e022836bacbc46064b53085a",
        "the digest is the compressed file's"
    );
    let check = |baseline: &str, input: &str| {
        without_ncu(
            &gate,
            &[
                "check",
                "--thresholds",
                SET_FULL,
                "--baseline",
                baseline,
                "--input",
                input,
                "--details",
                input,
            ],
        )
    };
    // The optimization: 6.19 ms -> 3.48 ms, and a rule result the baseline
    // did not have.
    check("z.json", "after.ncu-repz")
        .code(0)
        .stdout_has("-43.8%")
        .stdout_has("new ncu finding CPIStall (WRN)");
    record(&gate, "after.ncu-repz", "after.json").code(0);
    check("after.json", "before.ncu-repz")
        .code(1)
        .stdout_has("gpu__time_duration.sum (sum) [FAIL]: +77.8%");
}

#[test]
fn the_profiler_version_is_recorded_as_for_a_ncu_rep() {
    let gate = Gate::new();
    gate.copy(
        Path::new(REPZ).join(format!("{BEFORE}.ncu-repz")),
        "before.ncu-repz",
    )
    .copy(
        Path::new(PUBLIC).join(format!("{BEFORE}.ncu-rep")),
        "before.ncu-rep",
    );
    record(&gate, "before.ncu-repz", "z.json").code(0);
    let recorded = "2022.2.0.0 (build 31140043) (public-release)";
    assert_eq!(gate.json("z.json")["profiler_version"], recorded);
    // The .ncu-rep against the .ncu-repz's baseline: the same profiler.
    let same = without_ncu(
        &gate,
        &[
            "check",
            "--thresholds",
            SET_FULL,
            "--baseline",
            "z.json",
            "--input",
            "before.ncu-rep",
        ],
    );
    same.code(0).stdout_has("0 failed, 32 passed");
    assert!(!same.stdout.contains("profiler changed"), "{}", same.stdout);
}

/// A compressed report read under another name (a `.ncu-rep`, no
/// extension, a `.csv`) and a plain report named `.ncu-repz` all read by
/// their bytes: the same baseline each time.
#[test]
fn a_file_is_told_by_its_bytes_not_its_name() {
    let gate = Gate::new();
    let repz = Path::new(REPZ).join(format!("{BEFORE}.ncu-repz"));
    let rep = Path::new(PUBLIC).join(format!("{BEFORE}.ncu-rep"));
    gate.copy(&repz, "z.ncu-repz")
        .copy(&repz, "z-renamed.ncu-rep")
        .copy(&repz, "z-renamed")
        .copy(&repz, "z-renamed.csv")
        .copy(&rep, "plain.ncu-repz");
    record(&gate, "z.ncu-repz", "want.json").code(0);
    let want = without_inputs(&gate, "want.json");
    for name in [
        "z-renamed.ncu-rep",
        "z-renamed",
        "z-renamed.csv",
        "plain.ncu-repz",
    ] {
        let out = record(&gate, name, "got.json");
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        assert_eq!(without_inputs(&gate, "got.json"), want, "{name}");
    }
}

/// The layouts of a Zstandard stream NVIDIA's reader reads (checked in
/// `oracle.rs`): several frames, skippable frames before and after, made
/// here with ruzstd's encoder from the `.ncu-rep`.
pub(crate) fn layouts(rep: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    use ruzstd::encoding::{CompressionLevel, compress_to_vec};
    let frame = |b: &[u8]| compress_to_vec(b, CompressionLevel::Fastest);
    let skippable: Vec<u8> = [0x5e, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4].to_vec();
    let half = rep.len() / 2;
    let two = [frame(&rep[..half]), frame(&rep[half..])].concat();
    vec![
        ("one-frame", frame(rep)),
        ("two-frames", two),
        ("skippable-first", [skippable.clone(), frame(rep)].concat()),
        ("skippable-last", [frame(rep), skippable].concat()),
    ]
}

#[test]
fn every_layout_inflates_to_the_report() {
    let rep = std::fs::read(Path::new(PUBLIC).join(format!("{AFTER}.ncu-rep"))).expect("rep");
    let want = container::read(&rep).expect("the .ncu-rep");
    for (layout, bytes) in layouts(&rep) {
        let inflated = zstd::inflate(&bytes).unwrap_or_else(|e| panic!("{layout}: {e:?}"));
        assert!(inflated[..] == rep[..], "{layout}");
        assert_eq!(container::read(&inflated).expect(layout), want, "{layout}");
    }
}

#[test]
fn a_cut_or_damaged_stream_is_a_corrupt_report() {
    let gate = Gate::new();
    let repz = std::fs::read(Path::new(REPZ).join(format!("{BEFORE}.ncu-repz"))).expect("repz");
    gate.write("cut.ncu-repz", &repz[..repz.len() / 2]);
    record(&gate, "cut.ncu-repz", "b.json")
        .one_clear_error("the Zstandard stream (a .ncu-repz) is corrupt: the frame at byte 0: ")
        .stderr_has("hint: the report is truncated or damaged");
    let mut flipped = repz.clone();
    let at = repz.len() - 2;
    flipped[at] ^= 0x10;
    gate.write("flipped.ncu-repz", &flipped);
    record(&gate, "flipped.ncu-repz", "b.json").one_clear_error("is corrupt");
    assert!(!gate.path("b.json").exists(), "no baseline is written");
}

/// A Zstandard frame made by hand (RFC 8878, section 3.1.1): no content
/// size, a 1 MiB window, then `blocks` run-length blocks of 128 KiB of
/// zeros, 4 bytes apiece.
fn rle_bomb(blocks: usize) -> Vec<u8> {
    let mut out = zstd::FRAME_MAGIC.to_vec();
    out.extend([0x00, 0x50]);
    for i in 0..blocks {
        let last = u32::from(i + 1 == blocks);
        let header = (128u32 << 10 << 3) | (1 << 1) | last;
        out.extend(&header.to_le_bytes()[..3]);
        out.push(0);
    }
    out
}

/// 32 KiB that would inflate to 1 GiB: refused once 25 MB are spent (256
/// per byte and 16 MiB), exit 2 with the hint, in under 100 MB; named as a
/// plain report, the same.
#[test]
fn a_zstd_bomb_is_refused_in_little_memory() {
    let bomb = rle_bomb(8192);
    assert_eq!(bomb.len(), 32_774);
    let gate = Gate::new();
    gate.write("bomb.ncu-repz", &bomb)
        .write("bomb.ncu-rep", &bomb);
    let limit = bomb.len() * 256 + (16 << 20);
    for name in ["bomb.ncu-repz", "bomb.ncu-rep"] {
        let (out, max_kb) =
            gate.run_measured(&["baseline", "record", "--input", name, "--output", "b.json"]);
        out.one_clear_error(&format!(
            "its Zstandard stream inflates to more than {limit} bytes (256 per byte of the file and 16777216 more, at most the input size limit): a Zstandard bomb"
        ))
        .stderr_has("hint: a compressed Nsight Compute report inflates to tens of times its size")
        .stderr_has("zstd -d R.ncu-repz -o R.ncu-rep");
        assert!(!gate.path("b.json").exists(), "no baseline is written");
        eprintln!("{name}: refused, peak RSS {max_kb} KB");
        assert!(max_kb < 100_000, "{name}: peak RSS {max_kb} KB");
    }
    // The input size limit caps the budget.
    let out = gate.run_with(
        &[
            "baseline",
            "record",
            "--input",
            "bomb.ncu-repz",
            "--output",
            "b.json",
        ],
        &[("NCUGATE_MAX_INPUT_SIZE", "3000000")],
    );
    out.one_clear_error("inflates to more than 3000000 bytes");
}
