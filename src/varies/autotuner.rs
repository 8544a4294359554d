//! Autotuners recognised by their own kernels' names, and the fix that fits
//! each. The names are the ones these tools launch while they time their
//! candidates, as seen in public profiles:
//!
//! - XLA's autotuner (JAX, TensorFlow): `stream_executor::RedzoneAllocatorKernelImpl`,
//!   `xla_fp_comparison<float>`, `DelayKernel`, `RepeatBufferKernelImpl` around
//!   candidate fusions named `gemm_fusion_dot_general_N` (an H100 run of a JAX model).
//!   XLA names every kernel it generates after its fusion (`loop_add_fusion`,
//!   `input_reduce_fusion_2`, `gemm_fusion_dot_1`): those are XLA's builds too.
//!   On an H100 (jaxlib 0.11.2, default flags), processes of one unchanged
//!   jitted MLP built `loop_add_fusion` two ways, one reading its input
//!   through the TMA (no LSU global loads) and one through plain loads.
//! - Inductor's `max-autotune` (`torch.compile`): Triton template candidates
//!   `triton_tem_fused_mm_0`, `triton_mm_16`, `triton_mm_plus_mm_0` (its
//!   "AUTOTUNE mm(…)" logs and output code).
//! - cuDNN's algorithm search (`torch.backends.cudnn.benchmark = True`):
//!   `cudnn::detail::implicit_convolve_sgemm<…>`, `volta_scudnn_128x128_…`,
//!   `maxwell_scudnn_winograd_…`, and its `xmma_fprop`/`xmma_dgrad`/`xmma_wgrad` engines.
//! - `@triton.autotune` times its configs under the kernel's own name, so it
//!   has no name of its own: a variable kernel nothing here recognises is
//!   offered every fix.

/// A tool that picks kernels at run time by timing candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Autotuner {
    /// XLA's autotuner (JAX, TensorFlow): its GEMM candidates, and the
    /// builds of the fusions it generates.
    Xla,
    /// `torch.compile(mode="max-autotune")`'s template selection.
    Inductor,
    /// cuDNN's algorithm search, `torch.backends.cudnn.benchmark = True`.
    Cudnn,
    /// `@triton.autotune`.
    Triton,
}

impl Autotuner {
    /// Every autotuner, in the order their fixes are listed.
    pub(crate) const ALL: [Autotuner; 4] = [
        Autotuner::Xla,
        Autotuner::Inductor,
        Autotuner::Cudnn,
        Autotuner::Triton,
    ];

    /// Its name in a message.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Autotuner::Xla => "XLA's autotuner",
            Autotuner::Inductor => "torch.compile max-autotune (Inductor)",
            Autotuner::Cudnn => "cuDNN's algorithm search (cudnn.benchmark)",
            Autotuner::Triton => "@triton.autotune",
        }
    }

    /// What earlier versions called it in their reports: XLA's was "XLA's
    /// GEMM autotuner" before its fusions were known as its builds too.
    pub(crate) fn earlier_names(self) -> &'static [&'static str] {
        match self {
            Autotuner::Xla => &["XLA's GEMM autotuner"],
            Autotuner::Inductor | Autotuner::Cudnn | Autotuner::Triton => &[],
        }
    }

    /// The fix that fits it.
    pub(crate) fn fix(self) -> &'static str {
        match self {
            Autotuner::Xla => {
                "XLA: XLA_FLAGS=--xla_gpu_autotune_level=0, or keep its choices with --xla_gpu_per_fusion_autotune_cache_dir=DIR, warmed before the profiled runs ([app] warmup = 1)"
            }
            Autotuner::Inductor => {
                "Inductor: keep its caches between runs, warmed before the profiled runs ([app] warmup = 1; TORCHINDUCTOR_CACHE_DIR=DIR on a runner kept between jobs), or compile before the measured range (profile_from_start = false)"
            }
            Autotuner::Cudnn => {
                "cuDNN: torch.backends.cudnn.benchmark = False, or run a warm-up step before the measured range (profile_from_start = false or nvtx_include)"
            }
            Autotuner::Triton => {
                "Triton: autotune once before the measured range, or pin one triton.Config (where your Triton has it, cache_results=True keeps the choice in TRITON_CACHE_DIR)"
            }
        }
    }

    /// The autotuner whose own kernel `kernel` is, if any.
    pub(crate) fn of(kernel: &str) -> Option<Autotuner> {
        const XLA: [&str; 5] = [
            "RedzoneAllocatorKernel",
            "xla_fp_comparison",
            "DelayKernel",
            "RepeatBufferKernel",
            "gemm_fusion_dot",
        ];
        const INDUCTOR: [&str; 3] = ["triton_tem_", "triton_mm", "triton_bmm"];
        const CUDNN: [&str; 4] = ["cudnn", "xmma_fprop", "xmma_dgrad", "xmma_wgrad"];
        if XLA.iter().any(|n| kernel.contains(n)) || is_xla_fusion(kernel) {
            Some(Autotuner::Xla)
        } else if INDUCTOR.iter().any(|n| kernel.contains(n)) {
            Some(Autotuner::Inductor)
        } else if CUDNN
            .iter()
            .any(|n| kernel.to_ascii_lowercase().contains(n))
        {
            Some(Autotuner::Cudnn)
        } else {
            None
        }
    }
}

/// Whether `kernel` is named as XLA names the kernels it generates: after
/// the fusion it emits, `loop_add_fusion`, `input_reduce_fusion_2`,
/// `fusion_7`, `wrapped_broadcast` — one word of letters, digits and
/// underscores (no C++ signature) that ends in `fusion` or `fusion_N`, or
/// starts `wrapped_`.
fn is_xla_fusion(kernel: &str) -> bool {
    let word = !kernel.is_empty()
        && kernel
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    // `loop_multiply_fusion_1`: XLA numbers the second fusion of a kind.
    let stem = match kernel.trim_end_matches(|c: char| c.is_ascii_digit()) {
        numbered if numbered.len() < kernel.len() => numbered.strip_suffix('_').unwrap_or(kernel),
        _ => kernel,
    };
    word && (stem == "fusion" || stem.ends_with("_fusion") || kernel.starts_with("wrapped_"))
}

/// The fixes for the autotuners `kernels` name, joined; a general one when
/// they name none (a JIT, an autotuner of another library).
pub(crate) fn fixes_for<'a>(kernels: impl IntoIterator<Item = &'a str>) -> String {
    let tuners = recognise(kernels);
    if tuners.is_empty() {
        return "the autotuner's or JIT's cache, a pinned configuration, or profile only the \
                steady state after it (profile_from_start = false)"
            .to_string();
    }
    let fixes: Vec<&str> = tuners.iter().map(|(t, _)| t.fix()).collect();
    fixes.join("; ")
}

/// The autotuners among `kernels`' names, each with the first kernel that showed it.
pub(crate) fn recognise<'a>(
    kernels: impl IntoIterator<Item = &'a str>,
) -> Vec<(Autotuner, String)> {
    let mut out: Vec<(Autotuner, String)> = Vec::new();
    for kernel in kernels {
        if let Some(tuner) = Autotuner::of(kernel)
            && !out.iter().any(|(t, _)| *t == tuner)
        {
            out.push((tuner, kernel.to_string()));
        }
    }
    out.sort_by_key(|(t, _)| *t);
    out
}

#[cfg(test)]
mod tests {
    use super::{Autotuner, recognise};

    #[test]
    fn each_autotuner_is_known_by_its_own_kernels_and_nothing_else() {
        for (name, tuner) in [
            (
                "void stream_executor::RedzoneAllocatorKernelImpl<unsigned char>(unsigned char *, unsigned char, unsigned long long, unsigned long long *)",
                Some(Autotuner::Xla),
            ),
            (
                "void xla_fp_comparison<float>(float *, float *, float, unsigned long long, int *)",
                Some(Autotuner::Xla),
            ),
            ("gemm_fusion_dot_general_4", Some(Autotuner::Xla)),
            // XLA's own fusions, as ncu named them on an H100 (jaxlib 0.11.2).
            ("loop_add_fusion", Some(Autotuner::Xla)),
            ("loop_multiply_fusion_1", Some(Autotuner::Xla)),
            ("input_reduce_fusion_12", Some(Autotuner::Xla)),
            ("fusion_3", Some(Autotuner::Xla)),
            ("wrapped_broadcast", Some(Autotuner::Xla)),
            // A C++ kernel with a word like it is not XLA's.
            ("void my_fusion(float *)", None),
            ("fusion_kernel", None),
            ("LoopFusion", None),
            ("fusion_", None),
            ("triton_tem_fused_mm_0", Some(Autotuner::Inductor)),
            ("triton_mm_16", Some(Autotuner::Inductor)),
            // As ncu named the benchmark candidates on an H100 (PyTorch 2.x).
            ("triton_mm", Some(Autotuner::Inductor)),
            (
                "void cudnn::detail::implicit_convolve_sgemm<float, float, 512, 6, 8, 3, 3, 5, 1, true, false, true>(int)",
                Some(Autotuner::Cudnn),
            ),
            (
                "volta_scudnn_128x128_stridedB_splitK_xregs_large_nn_v1",
                Some(Autotuner::Cudnn),
            ),
            ("void scale<0>(const float *, float *, long, int)", None),
            ("triton_poi_fused_add_0", None),
        ] {
            assert_eq!(Autotuner::of(name), tuner, "{name}");
        }
        let found = recognise(["triton_mm_3", "DelayKernel", "triton_mm_4", "scale"]);
        assert_eq!(
            found,
            vec![
                (Autotuner::Xla, "DelayKernel".to_string()),
                (Autotuner::Inductor, "triton_mm_3".to_string())
            ]
        );
    }

    /// The folder of recordings `fixtures/h100/autotune-e2e/FOLDER`.
    fn recorded(folder: &str) -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/h100/autotune-e2e")
            .join(folder)
    }

    /// A conv recording's folder and its baseline.
    fn conv_recorded(folder: &str) -> (std::path::PathBuf, crate::baseline::Baseline) {
        let dir = recorded(folder);
        let baseline =
            crate::baseline::Baseline::load(&dir.join("conv.baseline.json")).expect("baseline");
        (dir, baseline)
    }

    /// A PyTorch conv with `cudnn.benchmark = True`, recorded on an H100
    /// (`fixtures/h100/autotune-e2e/conv/`): cuDNN's search picked its
    /// implicit-GEMM kernels 2 to 5 times a run; the baseline keeps them
    /// apart, and an unchanged check lists them, passing, as cuDNN's.
    #[test]
    fn recorded_on_an_h100_cudnn_benchmark_kernels_vary_and_are_named() {
        let (dir, baseline) = conv_recorded("conv");
        assert_eq!(baseline.variable.len(), 2);
        for (kernel, v) in &baseline.variable {
            assert_eq!(Autotuner::of(kernel), Some(Autotuner::Cudnn), "{kernel}");
            assert_eq!((v.runs, v.launches), (3, [2, 5]), "{kernel}");
        }
        let report = crate::suite::read::recorded_check(&dir.join("conv.unchanged-1.json"), "conv");
        let varies: Vec<&str> = report
            .structure
            .iter()
            .filter(|s| s.check == crate::verdict::StructureCheck::Varies)
            .map(|s| s.kernel.as_str())
            .collect();
        assert_eq!(varies.len(), 2);
        assert!(varies.iter().all(|k| baseline.variable.contains_key(*k)));
        assert_eq!(report.counts().fail, 0);
    }

    /// The same conv recorded in another session (`conv-swapped-picks/`):
    /// the 3 recorded runs launched two cuDNN kernels 2 and 5 times alike,
    /// and each of the 8 checks run launched them 5 and 2 times, failing on
    /// their launch counts and counters. cuDNN moved launches between its
    /// picks: judged again, each check passes with both listed, not gated,
    /// and the whole run's rules still gated.
    #[test]
    fn recorded_on_an_h100_cudnn_moving_launches_between_its_picks_passes() {
        use crate::verdict::StructureCheck;
        let (dir, baseline) = conv_recorded("conv-swapped-picks");
        assert!(baseline.variable.is_empty());
        for i in 1..=8 {
            let path = dir.join(format!("conv.unchanged-{i}.json"));
            let mut report = crate::suite::read::recorded_check(&path, "conv");
            assert!(report.counts().fail > 0, "check {i} as recorded");
            crate::compare::structure::mark_moved(&mut report.structure);
            crate::compare::code::tests_ungate_varying(&mut report, &baseline);
            let moved: Vec<&str> = report
                .structure
                .iter()
                .filter(|s| s.check == StructureCheck::PicksMoved)
                .map(|s| s.kernel.as_str())
                .collect();
            assert_eq!(moved.len(), 2, "check {i}");
            assert!(
                moved
                    .iter()
                    .all(|k| Autotuner::of(k) == Some(Autotuner::Cudnn))
            );
            assert_eq!(report.counts().fail, 0, "check {i}");
            let note = report
                .notes
                .iter()
                .find(|n| n.text.contains("moved launches between its picks"))
                .map(|n| n.text.as_str())
                .unwrap_or_default();
            assert!(
                note.starts_with(
                    "cuDNN's algorithm search (cudnn.benchmark) moved launches between its picks \
                     (2 kernels, 7 launches in all, as recorded): sm80_xmma_fprop"
                ) && note.contains("(2 → 5 launches)")
                    && note.contains("(5 → 2 launches)")
                    && note.contains("the whole run's rules still count them"),
                "check {i}: {note}"
            );
            let total = report
                .rules
                .iter()
                .filter(|r| r.kernel.is_none())
                .all(|r| r.downgrade.is_none());
            assert!(total, "check {i}: the whole run's rules stay gated");
            // As a shard's report, it reads back: its own launch counts show the move.
            use crate::report::document::Model;
            let written = std::env::temp_dir().join(format!(
                "ncugate-picks-moved-{}-{i}.json",
                std::process::id()
            ));
            std::fs::write(&written, report.json()).expect("written");
            let read = crate::suite::read::recorded_check(&written, "conv");
            let _ = std::fs::remove_file(&written);
            assert_eq!(read.counts().fail, 0, "check {i} read back");
            // One of the two launched once more: no move any longer, refused.
            if let Some(row) = report
                .structure
                .iter_mut()
                .find(|s| s.check == StructureCheck::PicksMoved)
            {
                row.current_launches = row.current_launches.iter().map(|n| n + 1).collect();
            }
            std::fs::write(&written, report.json()).expect("written");
            let forged = crate::suite::read::read(&written, "conv", None);
            let _ = std::fs::remove_file(&written);
            assert!(
                forged
                    .as_ref()
                    .err()
                    .is_some_and(|e| e.to_string().contains("show no such move")),
                "check {i}: {forged:?}"
            );
        }
    }

    /// The same workloads checked on an H100 by the ncugate that has both
    /// fixes (`fixed-on-gpu/`): the plain CUDA app's third check picked the
    /// configuration of 8.39M sectors and passed, measured from the worst
    /// recorded run; the conv's third check had cuDNN move launches
    /// between its picks and passed with both listed. Each report reads
    /// back through `merge`'s checks; the CUDA regression still fails.
    #[test]
    fn recorded_on_an_h100_the_picks_pass_as_checked_on_the_gpu() {
        use crate::status::Status;
        use crate::verdict::StructureCheck;
        let dir = recorded("fixed-on-gpu");
        let read = |name: &str, workload: &str| {
            crate::suite::read::recorded_check(&dir.join(name), workload)
        };
        for i in 1..=4 {
            let report = read(&format!("cuda-steady.unchanged-{i}.json"), "cuda-steady");
            assert_eq!(report.counts().fail, 0, "cuda-steady check {i}");
        }
        let third = read("cuda-steady.unchanged-3.json", "cuda-steady");
        assert!(third.rules.iter().any(|r| {
            r.status == Status::Pass
                && r.current == Some(8_388_608.0)
                && r.message.contains("measured from the worst of them")
        }));
        assert!(
            read("cuda-steady.regression.json", "cuda-steady")
                .counts()
                .fail
                > 0
        );
        for i in 1..=3 {
            let report = read(&format!("conv.unchanged-{i}.json"), "conv");
            assert_eq!(report.counts().fail, 0, "conv check {i}");
        }
        let moved = read("conv.unchanged-3.json", "conv")
            .structure
            .iter()
            .filter(|s| s.check == StructureCheck::PicksMoved)
            .count();
        assert_eq!(moved, 2);
        // The headline counts them apart from kernels that vary in the baseline.
        let words = read("conv.unchanged-3.json", "conv").counts().words();
        assert_eq!(
            words,
            [
                "0 failed",
                "86 passed",
                "2 launch counts not gated (picks moved)",
                "12 metric checks not gated (code varies)"
            ]
        );
    }

    /// The four autotuned workloads' full runs on an H100 (`ten-checks/`):
    /// torch.compile with max-autotune (whole run, Inductor's cache warm),
    /// the conv with `cudnn.benchmark` (whole run) and the steady Triton
    /// app each passed 10 unchanged checks and failed their regression
    /// (`compile-cold.*`: the cold recording's 3 checks). Every report
    /// reads back through `merge`'s checks; the torch.compile and conv
    /// regressions fail on a kernel every recorded run launched alike, the
    /// Triton one on its new kernel and the whole run.
    #[test]
    fn recorded_on_an_h100_ten_unchanged_checks_pass_and_the_regressions_fail() {
        use crate::status::Status;
        let dir = recorded("ten-checks");
        let read = |name: &str, workload: &str| {
            crate::suite::read::recorded_check(&dir.join(name), workload)
        };
        for (workload, checks, stable) in [
            ("compile-cold", 3, None),
            ("compile", 10, Some("float16_copy_kernel_cuda")),
            ("conv", 10, Some("at::elementwise_kernel<128, 2")),
            ("triton-steady", 10, None),
        ] {
            for i in 1..=checks {
                let report = read(&format!("{workload}.unchanged-{i}.json"), workload);
                let counts = report.counts();
                assert_eq!((counts.fail, counts.error), (0, 0), "{workload} check {i}");
            }
            let Some(stable) = stable else { continue };
            let report = read(&format!("{workload}.regression.json"), workload);
            let failed = report.rules.iter().any(|r| {
                r.status == Status::Fail
                    && r.downgrade.is_none()
                    && r.kernel.as_deref().is_some_and(|k| k.contains(stable))
            });
            assert!(failed, "{workload}: the regression fails on {stable}");
        }
        // The steady Triton app's one kernel is built anew in each process:
        // the extra op's new kernel and the whole run's count catch it.
        let report = read("triton-steady.regression.json", "triton-steady");
        assert!(report.counts().fail >= 2);
        assert!(
            report
                .rules
                .iter()
                .any(|r| r.kernel.is_none() && r.status == Status::Fail)
        );
    }

    /// Launches that did not move between picks: a sum that differs, one
    /// kernel alone, or kernels no autotuner names.
    #[test]
    fn launches_not_moved_between_picks_still_fail() {
        use crate::compare::structure::moved_picks;
        use crate::status::Status;
        use crate::verdict::{StructureCheck, StructureResult};
        let row = |kernel: &str, recorded: f64, now: u64| StructureResult {
            kernel: kernel.to_string(),
            check: StructureCheck::Launches,
            baseline_launches: Some(recorded),
            baseline_range: Some([recorded, recorded]),
            current_launches: vec![now],
            recorded_in: None,
            status: Status::Fail,
            message: String::new(),
        };
        let a = "sm80_xmma_fprop_implicit_gemm_tilesize128x32x8_cudnn";
        let b = "sm80_xmma_fprop_implicit_gemm_tilesize64x64x8_cudnn";
        assert_eq!(moved_picks(&[row(a, 2.0, 5), row(b, 5.0, 2)]).len(), 2);
        assert!(moved_picks(&[row(a, 2.0, 5), row(b, 5.0, 3)]).is_empty());
        assert!(moved_picks(&[row(a, 2.0, 5)]).is_empty());
        assert!(moved_picks(&[row("scale", 2.0, 5), row("axpy", 5.0, 2)]).is_empty());
        // Picks of two autotuners do not make one group.
        assert!(moved_picks(&[row(a, 2.0, 5), row("gemm_fusion_dot_1", 5.0, 2)]).is_empty());
    }
}
