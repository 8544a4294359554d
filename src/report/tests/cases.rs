//! The hand-made reports the snapshots are built from: what `compare`, the
//! sanitizer and the memory audit would fill in, written out by hand.

use crate::aggregate::Stats;
use crate::memory::MemoryResult;
use crate::model::{Aggregate, Finding};
use crate::rules::{Per, Severity, Worse};
use crate::sanitizer::SanitizerFinding;
use crate::status::Status;
use crate::verdict::{
    Devices, FindingResult, Report, RuleResult, StructureCheck, StructureResult, Subject,
};

const SCALE: &str = "void scale<0>(const float *, float *, long, int)";
const PRODUCE: &str = "produce(float *, long)";
/// A C++ name with every character some format must escape: Markdown's `|`,
/// `` ` ``, `*`, `_`; HTML's and XML's `<`, `>`, `&`, `"`, `'`; GitHub's `:`, `,`, `%`.
const HOSTILE: &str = "void k<'a', \"q\">(T*, std::array<char, 2>&) | `x` _y_ 50%: <script>";

fn stats(values: &[f64]) -> Option<Stats> {
    Stats::of(values)
}

/// One rule result, as `compare` would fill it.
#[allow(clippy::too_many_arguments)]
fn rule(
    kernel: Option<&str>,
    metric: &str,
    unit: &str,
    baseline: &[f64],
    current: f64,
    allowance: f64,
    status: Status,
    message: &str,
    why: Option<&str>,
) -> RuleResult {
    let b = stats(baseline);
    let change_pct = b
        .filter(|b| b.mean != 0.0)
        .map(|b| (current - b.mean) / b.mean.abs() * 100.0);
    RuleResult {
        kernel: kernel.map(Into::into),
        rule: format!("{metric} (sum)").into(),
        metric: metric.into(),
        per: if kernel.is_some() {
            Per::Kernel
        } else {
            Per::Total
        },
        aggregate: Aggregate::Sum,
        worse: Worse::Higher,
        severity: Severity::Fail,
        line: 41,
        unit: unit.into(),
        baseline: b,
        current: Some(current),
        current_runs: Box::new([current]),
        change_pct,
        allowance: Some(allowance),
        limit: None,
        status,
        message: message.into(),
        why: why.map(|w| w.to_string().into()),
        downgrade: None,
    }
}

fn launches(kernel: &str, baseline: f64, current: u64, status: Status) -> StructureResult {
    StructureResult {
        kernel: kernel.into(),
        check: StructureCheck::Launches,
        baseline_launches: Some(baseline),
        baseline_range: None,
        current_launches: vec![current, current],
        recorded_in: None,
        status,
        message: if status == Status::Pass {
            format!("{current} launches per run, as in the baseline")
        } else {
            format!(
                "launched {current} times per run, baseline {baseline}: a redundant or dropped launch"
            )
        },
    }
}

fn metrics_report() -> Report {
    let mut r = Report::empty(
        "baseline.json",
        vec!["run.csv".into()],
        vec![],
        "thresholds.toml",
    );
    r.devices = Some(Devices {
        baseline: "NVIDIA H200 (CC 9.0, 132 SMs)".into(),
        current: "NVIDIA H200 (CC 9.0, 132 SMs)".into(),
        mismatch_allowed: false,
    });
    r
}

pub(crate) fn pass() -> Report {
    let mut r = metrics_report();
    r.structure.push(launches(PRODUCE, 3.0, 3, Status::Pass));
    r.rules.push(rule(
        Some(PRODUCE),
        "sm__inst_executed.sum",
        "inst",
        &[55_050_000.0, 55_050_000.0],
        55_050_000.0,
        11_010_000.0,
        Status::Pass,
        "±0% (55.05M inst vs baseline 55.05M inst)",
        None,
    ));
    r.rules.push(rule(
        Some(PRODUCE),
        "sm__inst_executed_pipe_fp64.sum",
        "inst",
        &[0.0, 0.0],
        0.0,
        0.0,
        Status::Pass,
        "±0% (0 inst vs baseline 0 inst)",
        None,
    ));
    r
}

pub(crate) fn regression() -> Report {
    let mut r = metrics_report();
    r.structure.push(launches(SCALE, 3.0, 6, Status::Fail));
    r.structure.push(launches(PRODUCE, 3.0, 3, Status::Pass));
    r.rules.push(rule(
        Some(SCALE),
        "gpu__time_duration",
        "ns",
        &[151_000.0, 151_420.0, 150_900.0],
        300_480.0,
        25_600.0,
        Status::Fail,
        "+98.9% (300.48 us vs baseline 151.11 us ±275.92 ns), allowed +16.9%",
        Some("the kernel takes longer"),
    ));
    r.rules.push(rule(
        Some(PRODUCE),
        "dram__bytes",
        "byte",
        &[339_080_000.0],
        300_000_000.0,
        33_908_000.0,
        Status::Improved,
        "improved -11.5% (300.00 MB vs baseline 339.08 MB)",
        None,
    ));
    let mut changed = rule(
        Some(PRODUCE),
        "sm__warps_active",
        "warp",
        &[1000.0],
        1300.0,
        100.0,
        Status::Changed,
        "+30.0% (1300 warp vs baseline 1000 warp), no direction is rated",
        None,
    );
    changed.severity = Severity::Warn;
    r.rules.push(changed);
    let mut warn = rule(
        Some(PRODUCE),
        "lts__t_sectors",
        "sector",
        &[100.0],
        200.0,
        0.0,
        Status::Warn,
        "new (0 → 200 sector), allowed 0",
        Some("more L2 traffic"),
    );
    warn.baseline = stats(&[0.0]);
    warn.change_pct = None;
    warn.severity = Severity::Warn;
    r.rules.push(warn);
    r.rules.push(rule(
        None,
        "sm__inst_executed",
        "inst",
        &[132_120_000.0],
        187_170_000.0,
        26_424_000.0,
        Status::Fail,
        "+41.7% (187.17M inst vs baseline 132.12M inst), allowed +20.0%",
        Some("the run as a whole executes more instructions"),
    ));
    r.notes
        .push("findings were not compared: the baseline has no details page".into());
    r
}

fn error() -> Report {
    Report::error(
        "baseline.json",
        vec!["bad.csv".into()],
        vec![],
        "thresholds.toml",
        "bad.csv: no ncu CSV header in 2 lines (hint: pass an ncu CSV export: `ncu --csv ./app > out.csv`)".into(),
    )
}

fn finding(kernel: &str, rule: &str, speedup: Option<f64>, status: Status) -> FindingResult {
    FindingResult {
        kernel: kernel.into(),
        finding: Finding {
            rule: rule.into(),
            rule_type: "OPT".into(),
            section: "SourceCounters".into(),
            launches: 3,
            estimated_speedup_pct: speedup,
            speedup_type: "global".into(),
            description: "This kernel has uncoalesced global accesses resulting in a total of 6291456 excessive sectors. Check the L2 Theoretical Sectors Global Excessive table.".into(),
        },
        status,
    }
}

pub(crate) fn findings() -> Report {
    let mut r = metrics_report();
    r.rules.push(rule(
        Some(SCALE),
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld",
        "sector",
        &[6_290_000.0],
        12_580_000.0,
        1_258_000.0,
        Status::Fail,
        "+100.0% (12.58M sector vs baseline 6.29M sector), allowed +20.0%",
        Some("more global-load sectors for the same work: uncoalesced or strided access"),
    ));
    r.findings.push(finding(
        SCALE,
        "UncoalescedGlobalAccess",
        Some(77.4),
        Status::Fail,
    ));
    r.findings.push(finding(
        PRODUCE,
        "MemoryCacheAccessPattern",
        None,
        Status::Pass,
    ));
    r
}

pub(crate) fn hostile() -> Report {
    let mut r = metrics_report();
    r.baseline = "perf/<base>.json".into();
    r.structure.push(launches(HOSTILE, 1.0, 2, Status::Fail));
    r.rules.push(rule(
        Some(HOSTILE),
        "gpu__time_duration",
        "ns",
        &[100.0],
        150.0,
        20.0,
        Status::Fail,
        "+50.0% (150 ns vs baseline 100 ns) in <b>k</b> & \"q\"\nsecond line",
        Some("<img src=x onerror=alert(1)> & `code` | pipe"),
    ));
    r.findings
        .push(finding(HOSTILE, "Rule<&\"'>", Some(12.0), Status::Warn));
    r.notes.push("a note with <tags> & *stars* | pipes".into());
    r
}

fn sanitizer() -> Report {
    let mut r = Report::empty("", vec!["app.memcheck.xml".into()], vec![], "");
    r.subject = Subject::Sanitizer {
        tools: vec!["memcheck".into()],
        app: Some("./bad_app --n 4".into()),
    };
    r.sanitizer.push(SanitizerFinding {
        tool: crate::sanitizer::Tool::Memcheck,
        kind: crate::sanitizer::RecordKind::Other("Precise".into()),
        summary: "Invalid __global__ write of size 4 bytes".into(),
        api: None,
        error: Some("out of bounds".into()),
        kernel: Some("oob_write(int *, int)".into()),
        user_frame: Some("main in bad_app.cu:41".into()),
        count: 32,
        bytes: None,
        example_stack: vec![
            "cudaLaunchKernel".into(),
            "oob_write<int>(int*, int)".into(),
            "main in bad_app.cu:41".into(),
        ],
        example_thread: Some("thread (31,0,0) block (0,0,0)".into()),
        status: Status::Fail,
        allowed: None,
        message: "32 × Invalid __global__ write of size 4 bytes in oob_write(int *, int) (out of bounds), from main in bad_app.cu:41".into(),
    });
    r.sanitizer.push(SanitizerFinding {
        tool: crate::sanitizer::Tool::Memcheck,
        kind: crate::sanitizer::RecordKind::Leak,
        summary: "Leaked 1024 bytes".into(),
        api: Some("cudaMalloc".into()),
        error: None,
        kernel: None,
        user_frame: None,
        count: 1,
        bytes: Some(1024),
        example_stack: vec![],
        example_thread: None,
        status: Status::Pass,
        allowed: Some("known leak in the CUDA runtime".into()),
        message: "1 × Leaked 1024 bytes (allowed: known leak in the CUDA runtime)".into(),
    });
    r
}

fn memory() -> Report {
    let mut r = Report::empty("", vec![], vec![], "");
    r.subject = Subject::Memory {
        app: "./graph_app".into(),
    };
    r.memory.push(MemoryResult {
        check: "graph memory growth".into(),
        value: Some(67_108_864.0),
        limit: Some(0.0),
        unit: "byte".into(),
        status: Status::Fail,
        message: "grew by 67.11 MB over 100 replays (limit 0 B)".into(),
    });
    r.memory.push(MemoryResult {
        check: "device memory (NVML)".into(),
        value: Some(1_000_000.0),
        limit: Some(10_000_000.0),
        unit: "byte".into(),
        status: Status::Pass,
        message: "1.00 MB used, limit 10.00 MB".into(),
    });
    r
}

/// Every situation, by the name its snapshots carry.
/// An unchanged workload beside another process: the duration beyond its
/// allowance is not gated (a warning naming the neighbour), the passing
/// DRAM rule is not gated either, the instruction count is gated as always.
pub(crate) fn shared() -> Report {
    let mut r = metrics_report();
    r.structure.push(launches(SCALE, 3.0, 3, Status::Pass));
    r.rules.push(rule(
        Some(SCALE),
        "gpu__time_duration.sum",
        "ns",
        &[154_070.0, 153_900.0, 154_240.0],
        183_050.0,
        23_600.0,
        Status::Fail,
        "+18.8% (183.05 us vs baseline 154.07 us ±170.00 ns), allowed +15.3%; elapsed 304.53K cycle → 265.70K cycle (-12.8%)",
        Some("the kernel takes longer"),
    ));
    r.rules.push(rule(
        Some(SCALE),
        "dram__bytes.sum",
        "byte",
        &[345_420_000.0],
        350_000_000.0,
        34_542_000.0,
        Status::Pass,
        "+1.3% (350.00 MB vs baseline 345.42 MB)",
        None,
    ));
    r.rules.push(rule(
        Some(SCALE),
        "sm__inst_executed.sum",
        "inst",
        &[55_050_000.0],
        55_050_000.0,
        11_010_000.0,
        Status::Pass,
        "±0% (55.05M inst vs baseline 55.05M inst)",
        None,
    ));
    let current = crate::shared_gpu::GpuEnvironment {
        neighbours: vec![crate::shared_gpu::GpuProcess {
            pid: 1791,
            device: 0,
            name: "python3".into(),
            memory_bytes: Some(1_184_890_880),
            ..Default::default()
        }],
        max_utilization_pct: Some(100),
        ..Default::default()
    };
    let shared = crate::shared_gpu::assess(&current, None);
    let thresholds = crate::rules::Thresholds::builtin().expect("built-in rules");
    crate::compare::not_gated::apply(&mut r, &thresholds, shared, crate::shared_gpu::Policy::Warn)
        .expect("warn never refuses");
    r
}

/// A trace-mode check (counters locked): the launch counts passed, every
/// rule of `pass` skipped and not gated as `crate::compare::locked` leaves
/// it, the label and notes trace mode adds.
pub(crate) fn degraded() -> Report {
    let mut r = pass();
    let why = std::sync::Arc::new(crate::verdict::COUNTERS_LOCKED.to_string());
    for rule in &mut r.rules {
        rule.current = None;
        rule.current_runs = Box::new([]);
        rule.change_pct = None;
        rule.allowance = None;
        rule.status = Status::Skipped;
        rule.message = format!("not gated: {}", crate::verdict::COUNTERS_LOCKED);
        rule.ungate(crate::verdict::Reason::CountersLocked, Some(why.clone()));
    }
    r.devices = None;
    r.inputs = vec!["target/ncugate/trace/trace-1.json".into()];
    r.degraded = Some(crate::verdict::Degraded::trace(
        "traced kernels mapped to the baseline's keys by the mangled names it recorded",
    ));
    r.note(format!(
        "2 metric checks not gated: {}",
        crate::verdict::COUNTERS_LOCKED
    ));
    r.notes.push(crate::note::Note::warning(
        "`produce(float *, long)`: launch configuration changed: baseline grid (65536, 1, 1) block (256, 1, 1), now grid (32768, 1, 1) block (256, 1, 1)",
    ));
    r
}

pub(crate) fn cases() -> Vec<(&'static str, Report)> {
    vec![
        ("pass", pass()),
        ("regression", regression()),
        ("error", error()),
        ("findings", findings()),
        ("hostile", hostile()),
        ("sanitizer", sanitizer()),
        ("memory", memory()),
        ("shared", shared()),
        ("degraded", degraded()),
    ]
}
