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
        gpu_instance: None,
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
