//! Map: each traced kernel (a mangled name) to one of the baseline's kernel
//! keys. By the mangled names the baseline recorded for each key, where it
//! has them (baselines recorded from `.ncu-rep` reports since trace mode);
//! else by the function name of the demangled name against the function
//! name of each key, a launch configuration telling apart the keys that
//! share one. A traced kernel that maps to no key is a new kernel.

use super::read::{Trace, TracedKernel};
use crate::baseline::Baseline;
use crate::kernel_key::kernel_key;
use crate::model::KernelKeyMode;
use std::collections::{BTreeMap, BTreeSet};

/// How the traced kernels were mapped to the baseline's keys, as the report says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mapping {
    /// Every traced kernel by a mangled name the baseline recorded.
    Mangled,
    /// By the demangled function name, for some kernels at least (a
    /// baseline without mangled names: older, or recorded from CSV).
    Function,
}

impl Mapping {
    pub(crate) fn words(self) -> &'static str {
        match self {
            Mapping::Mangled => {
                "traced kernels mapped to the baseline's keys by the mangled names it recorded"
            }
            Mapping::Function => {
                "traced kernels mapped to the baseline's keys by their demangled function names (the baseline records no mangled names for them; re-record it from .ncu-rep reports to map by mangled name)"
            }
        }
    }
}

/// One run's kernels under the baseline's keys.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Keyed {
    /// Launches per key.
    pub(crate) launches: BTreeMap<String, u64>,
    /// Launch configurations per key, `grid (…) block (…)`.
    pub(crate) configs: BTreeMap<String, BTreeSet<String>>,
    /// Traced GPU time per key, ns, and its launches: information only.
    pub(crate) ns: BTreeMap<String, (u64, u64)>,
    /// Launches per key that ran as CUDA graph nodes: information only.
    pub(crate) graph: BTreeMap<String, u64>,
}

/// The runs' kernels under the baseline's keys, and how they were mapped.
pub(crate) fn map(baseline: &Baseline, traces: &[Trace]) -> (Vec<Keyed>, Mapping) {
    let by_mangled: BTreeMap<&str, &str> = baseline
        .kernels
        .iter()
        .filter_map(|(key, e)| e.code.as_ref().map(|c| (key, c)))
        .flat_map(|(key, c)| c.mangled.iter().map(move |m| (m.as_str(), key.as_str())))
        .collect();
    let mut by_function: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for key in baseline.kernels.keys().chain(baseline.variable.keys()) {
        by_function
            .entry(kernel_key(key, KernelKeyMode::Function))
            .or_default()
            .push(key);
    }
    let mut mapping = Mapping::Mangled;
    let mut runs = Vec::with_capacity(traces.len());
    for trace in traces {
        let mut keyed = Keyed::default();
        for k in &trace.kernels {
            let key = match by_mangled.get(k.name.as_str()) {
                Some(key) => (*key).to_string(),
                None => {
                    mapping = Mapping::Function;
                    by_function_name(baseline, &by_function, k)
                }
            };
            *keyed.launches.entry(key.clone()).or_default() += k.launches;
            keyed
                .configs
                .entry(key.clone())
                .or_default()
                .insert(k.launch());
            *keyed.graph.entry(key.clone()).or_default() += k.graph_launches;
            let ns = keyed.ns.entry(key).or_default();
            ns.0 = ns.0.saturating_add(k.ns_total);
            ns.1 += k.launches;
        }
        runs.push(keyed);
    }
    (runs, mapping)
}

/// The key of `k` by its demangled function name; a key of its own (a new
/// kernel) when no baseline key, or more than one alike, has that name.
fn by_function_name(
    baseline: &Baseline,
    by_function: &BTreeMap<String, Vec<&str>>,
    k: &TracedKernel,
) -> String {
    let demangled = demangle(&k.name);
    let function = kernel_key(&demangled, KernelKeyMode::Function);
    let own = || kernel_key(&demangled, baseline.kernel_key);
    match by_function.get(&function).map(Vec::as_slice) {
        Some([one]) => (*one).to_string(),
        Some(many) => {
            // Keys sharing a function name (template instances): the one launched so.
            let launch = k.launch();
            let alike: Vec<&&str> = many
                .iter()
                .filter(|key| {
                    baseline
                        .kernels
                        .get(**key)
                        .and_then(|e| e.code.as_ref())
                        .is_some_and(|c| c.launch.contains(&launch))
                })
                .collect();
            match alike[..] {
                [one] => (*one).to_string(),
                _ => own(),
            }
        }
        None => own(),
    }
}

/// The demangled name of a mangled C++ name; a C symbol (cuBLAS's
/// `nvjet_…`) or a name that does not demangle, as it is.
pub(crate) fn demangle(name: &str) -> String {
    if !name.starts_with("_Z") {
        return name.to_string();
    }
    cpp_demangle::Symbol::new(name.as_bytes())
        .ok()
        .and_then(|s| s.demangle().ok())
        .unwrap_or_else(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::demangle;
    use crate::kernel_key::kernel_key;
    use crate::model::KernelKeyMode;

    #[test]
    fn a_mangled_name_has_the_function_key_of_ncus_demangled_name() {
        // The reference app's kernel: ncu prints `scale(float *, const float *, unsigned long)`.
        let d = demangle("_Z5scalePfPKfm");
        assert_eq!(kernel_key(&d, KernelKeyMode::Function), "scale");
        assert_eq!(
            kernel_key(
                "scale(float *, const float *, unsigned long)",
                KernelKeyMode::Function
            ),
            "scale"
        );
        let t = demangle("_Z6reduceILi256EEvPKfPfm");
        assert_eq!(kernel_key(&t, KernelKeyMode::Function), "reduce");
        assert_eq!(demangle("nvjet_hsh_64x8_64x16"), "nvjet_hsh_64x8_64x16");
        assert_eq!(demangle("_Zbroken"), "_Zbroken");
    }
}
