use super::*;

fn clocked(hz: &[(&str, f64)]) -> GpuEnvironment {
    let kernels: BTreeMap<String, KernelClock> = hz
        .iter()
        .map(|(k, hz)| {
            (
                k.to_string(),
                KernelClock {
                    sm_clock_hz: *hz,
                    cycles: None,
                },
            )
        })
        .collect();
    GpuEnvironment {
        sm_clock_hz: clock::mean_hz(&kernels),
        kernels,
        ..GpuEnvironment::default()
    }
}

fn process(pid: u32, name: &str, ours: bool) -> GpuProcess {
    GpuProcess {
        pid,
        device: 0,
        name: name.into(),
        memory_bytes: Some(1_184_890_880),
        ours,
        ..GpuProcess::default()
    }
}

#[test]
fn a_clock_a_tenth_under_the_baselines_is_a_shared_gpu_and_jitter_is_not() {
    // The H200 recordings: `finish` at 1.969 GHz quiet, 1.479 beside the GEMM loop;
    // the cuBLAS GEMM runs at 1.70 GHz even on a quiet GPU.
    let baseline = clocked(&[("finish", 1.969e9), ("gemm", 1.702e9)]);
    let quiet = clocked(&[("finish", 1.950e9), ("gemm", 1.690e9)]);
    assert_eq!(assess(&quiet, Some(&baseline)), None);
    let shared = clocked(&[("finish", 1.479e9), ("gemm", 1.256e9)]);
    let s = assess(&shared, Some(&baseline)).expect("a 25% drop");
    assert!(
        s.evidence
            .starts_with("SM clock 1368 MHz vs 1836 MHz in the baseline (-26%"),
        "{}",
        s.evidence
    );
    assert!(
        s.evidence.contains("power or a thermal limit"),
        "{}",
        s.evidence
    );
    // No baseline clock (an old baseline): no clock evidence.
    assert_eq!(assess(&shared, None), None);
}

#[test]
fn a_neighbour_is_named_with_its_memory_and_our_own_processes_are_not() {
    let sample = Sample {
        utilization_pct: Some(100),
        processes: vec![
            process(1866, "graph_app", true),
            process(1791, "python3", false),
        ],
        ..Sample::default()
    };
    let env = GpuEnvironment::observe(&[], &[sample.clone(), sample]);
    assert_eq!(env.neighbours, [process(1791, "python3", false)]);
    assert!(!env.unattributed);
    let s = assess(&env, None).expect("a neighbour");
    assert_eq!(
        s.evidence,
        "GPU shared with pid 1791 python3, 1.2 GB; utilization up to 100%"
    );
    assert_eq!(
        env.shared_alone().as_deref(),
        Some("GPU shared with pid 1791 python3, 1.2 GB")
    );
}

#[test]
fn processes_that_cannot_be_told_from_ours_are_no_evidence() {
    // Another PID namespace: NVML's pids are none of ours.
    let sample = Sample {
        utilization_pct: Some(30),
        processes: vec![process(4242, "graph_app", false)],
        ..Sample::default()
    };
    let env = GpuEnvironment::observe(&[], &[sample]);
    assert!(env.unattributed);
    assert!(env.neighbours.is_empty());
    assert_eq!(assess(&env, None), None);
}

#[test]
fn a_process_on_another_gpu_of_the_machine_is_no_neighbour() {
    let mut elsewhere = process(5150, "train", false);
    elsewhere.device = 3;
    let sample = Sample {
        utilization_pct: Some(90),
        processes: vec![process(1866, "graph_app", true), elsewhere],
        ..Sample::default()
    };
    let env = GpuEnvironment::observe(&[], &[sample]);
    assert!(env.neighbours.is_empty());
    assert!(!env.unattributed);
    assert_eq!(assess(&env, None), None);
}

#[test]
fn a_process_in_another_mig_instance_is_no_neighbour_and_one_in_ours_is() {
    // A GPU split into MIG instances: NVML lists every instance's processes
    // on the one physical GPU, each with its GPU instance id.
    let on = |pid, name, ours, instance| GpuProcess {
        gpu_instance: Some(instance),
        ..process(pid, name, ours)
    };
    let sample = Sample {
        utilization_pct: None,
        processes: vec![
            on(1866, "graph_app", true, 1),
            on(1791, "python3", false, 2),
            on(1802, "trainer", false, 1),
        ],
        ..Sample::default()
    };
    let env = GpuEnvironment::observe(&[], &[sample]);
    assert_eq!(env.neighbours, [on(1802, "trainer", false, 1)]);
    // Without instance ids (no MIG), every process on the GPU is a neighbour.
    let sample = Sample {
        utilization_pct: None,
        processes: vec![
            process(1866, "graph_app", true),
            on(1791, "python3", false, 2),
        ],
        ..Sample::default()
    };
    let env = GpuEnvironment::observe(&[], &[sample]);
    assert_eq!(env.neighbours.len(), 1);
}

#[test]
fn a_baseline_clock_of_zero_or_below_is_no_evidence() {
    let baseline = clocked(&[("finish", 0.0), ("scale", -1.0e9)]);
    let now = clocked(&[("finish", 1.47e9), ("scale", 1.47e9)]);
    assert_eq!(assess(&now, Some(&baseline)), None);
}

#[test]
fn hostile_process_names_stay_on_one_line() {
    let env = GpuEnvironment {
        neighbours: vec![process(7, "evil\n::error::x", false)],
        ..GpuEnvironment::default()
    };
    let s = assess(&env, None).unwrap();
    assert!(!s.evidence.contains('\n'), "{}", s.evidence);
}

// Inside a PID namespace (`unshare --pid --fork --mount-proc`, what a
// container does), NVML lists every process — the app included — by its
// pid on the host, which names nothing here. The looks below are
// constructed in the shape the probe records; the numbers are those of the
// H100 run that showed the defect (the neighbour: a device-to-device copy
// loop of PyTorch, 4.8 GB; the SM clock did not move).

const GB: u64 = 1_000_000_000;
/// Device memory in use on an idle GPU (the driver's and persistence's).
const IDLE_USED: u64 = 600 << 20;

fn hidden(pid: u32, bytes: u64) -> GpuProcess {
    GpuProcess {
        pid,
        memory_bytes: Some(bytes),
        hidden: true,
        ..GpuProcess::default()
    }
}

fn look(
    phase: Phase,
    own: u32,
    used: u64,
    busy: Option<u32>,
    processes: Vec<GpuProcess>,
) -> Sample {
    Sample {
        utilization_pct: busy,
        processes,
        phase,
        devices: vec![DeviceLook {
            device: 0,
            memory_used_bytes: Some(used),
            gpu_pct: busy,
            memory_pct: busy,
            mps_clients: None,
        }],
        own_cuda_processes: Some(own),
        mps_control: None,
    }
}

/// Two pre-launch looks, then `during` looks, as one profiled run records them.
fn run(before: [Sample; 2], during: Vec<Sample>) -> GpuEnvironment {
    let mut samples = before.to_vec();
    samples.extend(during);
    GpuEnvironment::observe(&[], &samples)
}

#[test]
fn a_neighbour_whose_pid_is_not_visible_is_counted_and_its_memory_and_activity_seen() {
    let neighbour = || hidden(1458, 4_800_000_000);
    let app = hidden(2101, GB);
    let before = || {
        look(
            Phase::Before,
            0,
            IDLE_USED + 4_800_000_000,
            Some(97),
            vec![neighbour()],
        )
    };
    let during = || {
        look(
            Phase::During,
            1,
            IDLE_USED + 5_800_000_000,
            Some(100),
            vec![neighbour(), app.clone()],
        )
    };
    let env = run([before(), before()], vec![during(), during(), during()]);
    assert!(env.unattributed, "no pid NVML gave is ours");
    assert_eq!(env.neighbours, [neighbour()]);
    assert_eq!(env.tenancy.processes_beyond_own, Some(1));
    assert_eq!(env.tenancy.memory_beyond_own_bytes, Some(4_800_000_000));
    assert_eq!(env.tenancy.idle_gpu_pct, Some(97));
    let s = assess(&env, None).expect("a neighbour");
    assert_eq!(
        s.signals,
        [
            Signal::ProcessCount,
            Signal::MemoryBeyondOwn,
            Signal::ActivityWhileIdle
        ]
    );
    assert!(
        s.evidence.starts_with(
            "GPU shared with another process, pid not visible from this container, 4.8 GB; "
        ),
        "{}",
        s.evidence
    );
    assert!(
        s.headline()
            .contains("(detected by process count, memory beyond own, activity while idle)"),
        "{}",
        s.headline()
    );
    assert_eq!(s.unsupported(), None);
    assert_eq!(
        env.shared_alone()
            .as_deref()
            .map(|w| w.starts_with("GPU shared with another process")),
        Some(true)
    );
}

#[test]
fn our_own_processes_inside_a_namespace_are_no_neighbour_even_as_they_exit() {
    let app = || hidden(2101, GB);
    let before = || look(Phase::Before, 0, IDLE_USED, Some(0), vec![]);
    let during = |own| look(Phase::During, own, IDLE_USED + GB, Some(100), vec![app()]);
    // The last look: the app has left /proc's maps, NVML still lists its context.
    let env = run([before(), before()], vec![during(1), during(1), during(0)]);
    assert_eq!(env.tenancy.processes_beyond_own, Some(0));
    assert_eq!(env.tenancy.memory_beyond_own_bytes, Some(0));
    assert_eq!(assess(&env, None), None);
    // ncu with the driver loaded but no context of its own: two of ours, one listed.
    let env = run([before(), before()], vec![during(2), during(2)]);
    assert_eq!(assess(&env, None), None);
    // Two exits in a row would be a neighbour: the rule that needs two looks can fail.
    let env = run([before(), before()], vec![during(1), during(0), during(0)]);
    assert_eq!(env.tenancy.processes_beyond_own, Some(1));
    assert!(assess(&env, None).is_some());
}

#[test]
fn a_neighbour_that_starts_while_the_app_runs_is_counted() {
    let before = || look(Phase::Before, 0, IDLE_USED, Some(0), vec![]);
    let during = |n: u32| {
        let mut processes = vec![hidden(2101, GB)];
        processes.extend((0..n).map(|i| hidden(3000 + i, 2 * GB)));
        look(
            Phase::During,
            1,
            IDLE_USED + GB + u64::from(n) * 2 * GB,
            Some(100),
            processes,
        )
    };
    let env = run([before(), before()], vec![during(0), during(1), during(1)]);
    let s = assess(&env, None).expect("one more process than ours");
    assert_eq!(s.signals, [Signal::ProcessCount]);
    assert!(
        s.evidence
            .contains("1 compute process on the GPU beyond ncugate's own"),
        "{}",
        s.evidence
    );
}

#[test]
fn activity_counts_only_where_it_settled_and_memory_only_beyond_the_reservation() {
    // The probe reads no utilization too soon after ncugate's own last run.
    let before = |busy| look(Phase::Before, 0, IDLE_USED, busy, vec![]);
    let during = || {
        look(
            Phase::During,
            1,
            IDLE_USED + GB,
            Some(100),
            vec![hidden(2101, GB)],
        )
    };
    let env = run([before(None), before(None)], vec![during(), during()]);
    assert_eq!(env.tenancy.idle_gpu_pct, None);
    assert_eq!(assess(&env, None), None);
    let env = run([before(Some(0)), before(Some(3))], vec![during(), during()]);
    assert_eq!(env.tenancy.idle_gpu_pct, Some(3));
    assert_eq!(assess(&env, None), None);
    let env = run([before(None), before(Some(40))], vec![during(), during()]);
    let s = assess(&env, None).expect("busy while the app was not running");
    assert_eq!(s.signals, [Signal::ActivityWhileIdle]);
    assert!(
        s.evidence.contains("GPU 40% and memory 40% busy"),
        "{}",
        s.evidence
    );
    // Memory no listed process holds, in use since before launch, is the
    // reservation; 2 GiB more of it later is a tenant that started while the
    // app ran (less may be ncu's replay: 626 MiB seen on an H100).
    let during = |extra| {
        look(
            Phase::During,
            1,
            IDLE_USED + GB + extra,
            Some(100),
            vec![hidden(2101, GB)],
        )
    };
    let env = run(
        [before(Some(0)), before(Some(0))],
        vec![during(3 * GB), during(3 * GB)],
    );
    assert_eq!(env.tenancy.memory_beyond_own_bytes, Some(3 * GB));
    let s = assess(&env, None).expect("3 GB nobody of ours holds");
    assert_eq!(s.signals, [Signal::MemoryBeyondOwn]);
    let env = run(
        [before(Some(0)), before(Some(0))],
        vec![during(100 << 20), during(100 << 20)],
    );
    assert_eq!(assess(&env, None), None);
}

#[test]
fn mps_clients_beyond_ours_are_a_neighbour_and_mig_leaves_device_numbers_out() {
    let mut before = look(Phase::Before, 0, IDLE_USED, Some(0), vec![]);
    let mut during = look(
        Phase::During,
        1,
        IDLE_USED + GB,
        Some(100),
        vec![hidden(2101, GB)],
    );
    during.devices[0].mps_clients = Some(3);
    let env = run(
        [before.clone(), before.clone()],
        vec![during.clone(), during.clone()],
    );
    let s = assess(&env, None).expect("two more MPS clients");
    assert_eq!(s.signals, [Signal::Mps]);
    assert!(
        s.evidence.contains("2 MPS clients beyond ncugate's own"),
        "{}",
        s.evidence
    );
    // The MPS server NVML lists beside the app is no tenant: by name where its
    // pid is seen, by the allowance for one server where it is not.
    let mut alone = during.clone();
    alone.devices[0].mps_clients = Some(1);
    alone.processes.push(hidden(900, 30 << 20));
    let env = run(
        [before.clone(), before.clone()],
        vec![alone.clone(), alone.clone()],
    );
    assert_eq!(env.tenancy.processes_beyond_own, Some(0));
    assert_eq!(assess(&env, None), None);
    alone.processes[1] = GpuProcess {
        name: "nvidia-cuda-mps-server".into(),
        hidden: false,
        ..alone.processes[1].clone()
    };
    let env = run([before.clone(), before.clone()], vec![alone.clone(), alone]);
    assert!(env.neighbours.is_empty());
    assert_eq!(assess(&env, None), None);
    // A MIG instance: the device's memory and activity are every instance's.
    before.devices[0].gpu_pct = Some(90);
    during.devices[0].mps_clients = None;
    during.devices[0].memory_used_bytes = Some(IDLE_USED + 9 * GB);
    during.processes[0].gpu_instance = Some(1);
    let env = run([before.clone(), before], vec![during.clone(), during]);
    assert_eq!(env.tenancy.memory_beyond_own_bytes, None);
    assert_eq!(env.tenancy.idle_gpu_pct, None);
    assert_eq!(assess(&env, None), None);
}

#[test]
fn a_shared_gpu_claim_stands_only_on_the_numbers_of_its_signals() {
    let env = GpuEnvironment {
        neighbours: vec![process(1791, "python3", false)],
        ..GpuEnvironment::default()
    };
    let mut s = assess(&env, None).expect("a neighbour");
    assert_eq!(s.signals, [Signal::ProcessListed]);
    assert_eq!(s.unsupported(), None);
    let mut none = s.clone();
    none.signals.clear();
    assert!(none.unsupported().unwrap().contains("names no signal"));
    s.signals = vec![Signal::MemoryBeyondOwn];
    assert!(s.unsupported().unwrap().contains("`memory beyond own`"));
    s.tenancy.memory_beyond_own_bytes = Some(4 * GB);
    assert_eq!(s.unsupported(), None);
    s.signals = vec![Signal::ClockDrop];
    s.sm_clock_ratio = Some(0.95);
    assert!(s.unsupported().unwrap().contains("`clock drop`"));
    s.sm_clock_ratio = Some(0.75);
    assert_eq!(s.unsupported(), None);
    s.signals = vec![Signal::ProcessCount];
    assert!(s.unsupported().is_some());
}

/// The looks of a run recorded on an H100 by `scripts/gpu-container-e2e.sh`
/// (fixtures/h100/container-e2e/).
fn recorded(name: &str) -> GpuEnvironment {
    let path = format!(
        "{}/fixtures/h100/container-e2e/{name}.gpu-looks.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("recorded looks");
    let samples: Vec<Sample> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a look"))
        .collect();
    GpuEnvironment::observe(&[], &samples)
}

#[test]
fn recorded_on_an_h100_a_neighbour_in_another_namespace_is_seen_by_memory_and_activity() {
    // Inside its own PID namespace NVML lists only the namespace's processes
    // (the app under the namespace's pid): the copy-loop neighbour is not
    // listed, but its 2.7–2.8 GB are in use before launch and the GPU is busy.
    for name in [
        "ns.copy.ref.unchanged.1",
        "ns.copy.torch.unchanged.1",
        "ns.copy.wider",
    ] {
        let env = recorded(name);
        assert!(env.neighbours.is_empty(), "{name}: {:?}", env.neighbours);
        let s = assess(&env, None).expect(name);
        assert_eq!(
            s.signals,
            [Signal::ActivityWhileIdle, Signal::MemoryUnlisted],
            "{name}"
        );
        let unlisted = env.tenancy.memory_unlisted_bytes.expect("measured");
        assert!(
            (2_700 << 20..3_000 << 20).contains(&unlisted),
            "{name}: {unlisted}"
        );
        assert!(
            s.evidence
                .contains("GB of device memory in use before launch that no listed process holds"),
            "{}",
            s.evidence
        );
        assert_eq!(s.unsupported(), None);
    }
    // On the host the same neighbour is listed, by name: its memory is no
    // one's unlisted, but it is beyond ncugate's own.
    let env = recorded("host.copy.ref.unchanged.1");
    let s = assess(&env, None).expect("listed");
    assert_eq!(
        s.signals,
        [
            Signal::ProcessListed,
            Signal::MemoryBeyondOwn,
            Signal::ActivityWhileIdle
        ]
    );
    assert!(s.evidence.contains("python3, 2.8 GB"), "{}", s.evidence);
    // The quiet GPU, both ways: nothing, and no memory in use before launch.
    for name in ["ns.quiet.ref.unchanged.2", "host.quiet.torch.unchanged.2"] {
        let env = recorded(name);
        assert_eq!(assess(&env, None), None, "{name}");
        assert_eq!(env.tenancy.memory_unlisted_bytes, Some(0), "{name}");
    }
}

#[test]
fn memory_beyond_own_counts_each_gpu_once_however_many_looks_listed_the_app() {
    // Every look that lists the app named its GPU again; the sum over those
    // names multiplied a few MiB into gigabytes (7 GB on a quiet H100).
    for name in [
        "ns.quiet.ref.unchanged.2",
        "host.quiet.torch.unchanged.2",
        "ns.copy.torch.unchanged.1",
    ] {
        let env = recorded(name);
        let beyond = env.tenancy.memory_beyond_own_bytes.expect("measured");
        assert!(beyond < 64 << 20, "{name}: {beyond}");
    }
}

/// The looks of every check in `dir` (`fixtures/h100/container-e2e/`, one
/// cell of the 2 × 2 table a session): the 23 checks beside the neighbour
/// each name it by `signals` from the looks alone (the clock drop is the
/// exports' and not in them), never by one of ncugate's own processes; the
/// baselines' runs on the quiet GPU before it started (in the sessions that
/// recorded them: `quiet_runs`) name nothing.
fn ten_checks_each_name_it(dir: &str, namespace: bool, signals: &[Signal], quiet_runs: usize) {
    let path = format!(
        "{}/fixtures/h100/container-e2e/{dir}",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut names: Vec<String> = std::fs::read_dir(&path)
        .expect("the recordings")
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".gpu-looks.jsonl")
                .map(String::from)
        })
        .collect();
    names.sort();
    let (mut beside, mut quiet) = (0, 0);
    for name in &names {
        let env = recorded(&format!("{dir}/{name}"));
        if name.starts_with("quiet.") {
            quiet += 1;
            assert!(env.neighbours.is_empty(), "{name}: {:?}", env.neighbours);
            assert_eq!(assess(&env, None), None, "{name}");
            continue;
        }
        beside += 1;
        // From inside a namespace the neighbour is never listed; from the
        // host it is, by pid and name, and it is the only one.
        assert_eq!(
            env.neighbours.len(),
            usize::from(!namespace),
            "{name}: {:?}",
            env.neighbours
        );
        let s = assess(&env, None).expect(name);
        assert_eq!(s.signals, signals, "{name}");
    }
    assert_eq!((beside, quiet), (23, quiet_runs), "{names:?}");
}

#[test]
fn recorded_on_an_h100_ten_checks_each_in_a_namespace_beside_a_copy_loop_all_name_it() {
    use Signal::*;
    ten_checks_each_name_it("ns-copy-10", true, &[ActivityWhileIdle, MemoryUnlisted], 6);
}

#[test]
fn recorded_on_an_h100_ten_checks_each_in_a_namespace_beside_a_gemm_loop_all_name_it() {
    use Signal::*;
    ten_checks_each_name_it("ns-gemm-10", true, &[ActivityWhileIdle, MemoryUnlisted], 6);
}

#[test]
fn recorded_on_an_h100_ten_checks_each_on_the_host_beside_a_gemm_loop_all_name_it() {
    use Signal::*;
    ten_checks_each_name_it(
        "host-gemm-10",
        false,
        &[ProcessListed, ActivityWhileIdle],
        0,
    );
}

#[test]
fn recorded_on_an_h100_ten_checks_each_on_the_host_beside_a_copy_loop_all_name_it() {
    use Signal::*;
    ten_checks_each_name_it(
        "host-copy-10",
        false,
        &[ProcessListed, MemoryBeyondOwn, ActivityWhileIdle],
        0,
    );
}
