//! Kernel identity across code changes. A change of template argument
//! (`scale<0>` → `scale<2>`) or of a generated kernel's number
//! (`triton_poi_fused_add_0` → `…_1`, as compilers renumber when kernels are
//! added) changes the kernel key: the kernel would be reported only as one
//! missing and one new kernel, without its numbers. A missing and a new
//! kernel are paired, and compared as one kernel under the current name, when
//! nothing else could be meant:
//!
//! 1. they share a function name (`function` key) and are the only missing and
//!    the only new kernel with it — or, among several, the only two with the
//!    same launches per run;
//! 2. else their function names differ only by a trailing number, they are
//!    the only such pair, and they launch as often per run.
//!
//! Before both: a missing and a new kernel whose machine code is the same
//! (same code fingerprint, and no other missing or new kernel has it) are one
//! kernel renamed, whatever the names.

use crate::aggregate::{self, Scope};
use crate::baseline::Baseline;
use crate::code::CodeMap;
use crate::kernel_key::kernel_key;
use crate::model::{KernelKeyMode, Run};
use std::collections::BTreeMap;

/// A baseline kernel compared with a current kernel of another key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pair {
    pub(crate) baseline: String,
    pub(crate) current: String,
    /// What changed, in words: `template arguments changed`.
    pub(crate) why: &'static str,
}

impl Pair {
    /// The note every report shows.
    pub(crate) fn note(&self) -> String {
        format!(
            "kernel renamed ({}): {} → {}; compared as one kernel",
            self.why, self.baseline, self.current
        )
    }
}

/// The pairs of missing and new kernels that are one kernel; `code` is the
/// current kernels' code, when the inputs embed it.
pub(crate) fn pairs(baseline: &Baseline, runs: &[Run], code: Option<&CodeMap>) -> Vec<Pair> {
    let current = aggregate::kernel_keys(runs);
    let mut new: Vec<&str> = current
        .iter()
        // A kernel that varied between the baseline's runs is not new.
        .filter(|k| !baseline.kernels.contains_key(*k) && !baseline.variable.contains_key(*k))
        .map(String::as_str)
        .collect();
    let mut missing: Vec<&str> = baseline
        .kernels
        .keys()
        .filter(|k| !current.contains(*k))
        .map(String::as_str)
        .collect();
    if new.is_empty() || missing.is_empty() {
        return Vec::new();
    }
    // Each new kernel's launches per run, counted once.
    let launches: BTreeMap<&str, Vec<u64>> = new
        .iter()
        .map(|&n| (n, aggregate::launches(runs, Scope::Kernel(n))))
        .collect();
    let per_run = |key: &str| launches.get(key).map_or(&[][..], Vec::as_slice);
    let as_baseline = |key: &str, launches: &[u64]| {
        baseline.kernels.get(key).is_some_and(|e| {
            launches
                .iter()
                .all(|&n| (n as f64) >= e.launches.min && (n as f64) <= e.launches.max)
        })
    };
    let mut out = same_code(baseline, &missing, &new, code);
    missing.retain(|m| out.iter().all(|p| p.baseline != *m));
    new.retain(|n| out.iter().all(|p| p.current != *n));
    for (level, group_of) in [
        (1, function as fn(&str) -> String),
        (2, numberless as fn(&str) -> String),
    ] {
        let mut groups: BTreeMap<String, (Vec<&str>, Vec<&str>)> = BTreeMap::new();
        for m in &missing {
            groups.entry(group_of(m)).or_default().0.push(m);
        }
        for n in &new {
            groups.entry(group_of(n)).or_default().1.push(n);
        }
        for (olds, news) in groups.values() {
            let found: Vec<(&str, &str)> = if olds.len() == 1 && news.len() == 1 && level == 1 {
                vec![(olds[0], news[0])]
            } else {
                // Only launch counts tell them apart: pair where exactly one of each matches.
                olds.iter()
                    .filter_map(|&o| {
                        let fits: Vec<&str> = news
                            .iter()
                            .copied()
                            .filter(|n| as_baseline(o, per_run(n)))
                            .collect();
                        let [n] = fits[..] else { return None };
                        let rivals = olds.iter().filter(|o2| as_baseline(o2, per_run(n))).count();
                        (rivals == 1).then_some((o, n))
                    })
                    .collect()
            };
            for (o, n) in found {
                out.push(Pair {
                    baseline: o.to_string(),
                    current: n.to_string(),
                    why: why(o, n, level),
                });
            }
        }
        missing.retain(|m| out.iter().all(|p| p.baseline != *m));
        new.retain(|n| out.iter().all(|p| p.current != *n));
    }
    out.sort_by(|a, b| a.current.cmp(&b.current));
    out
}

/// Missing and new kernels whose code fingerprint is theirs alone on each side.
fn same_code(
    baseline: &Baseline,
    missing: &[&str],
    new: &[&str],
    code: Option<&CodeMap>,
) -> Vec<Pair> {
    let Some(code) = code else {
        return Vec::new();
    };
    let old_print = |k: &str| {
        baseline
            .kernels
            .get(k)
            .and_then(|e| e.code.as_ref())
            .map(|c| c.fingerprint.as_str())
    };
    let new_print = |k: &str| code.get(k).map(|c| c.fingerprint.as_str());
    let mut out = Vec::new();
    for &m in missing {
        let Some(print) = old_print(m) else { continue };
        let news: Vec<&str> = new
            .iter()
            .copied()
            .filter(|n| new_print(n) == Some(print))
            .collect();
        let olds = missing
            .iter()
            .filter(|o| old_print(o) == Some(print))
            .count();
        if let ([n], 1) = (&news[..], olds) {
            out.push(Pair {
                baseline: m.to_string(),
                current: n.to_string(),
                why: "same code",
            });
        }
    }
    out
}

/// The baseline with each pair's kernel under its current key.
pub(crate) fn renamed(baseline: &Baseline, pairs: &[Pair]) -> Baseline {
    let mut out = baseline.clone();
    for p in pairs {
        if let Some(entry) = out.kernels.remove(&p.baseline) {
            out.kernels.insert(p.current.clone(), entry);
        }
    }
    out
}

fn function(key: &str) -> String {
    kernel_key(key, KernelKeyMode::Function)
}

/// The function name without a trailing number (`fused_add_12` → `fused_add_`).
fn numberless(key: &str) -> String {
    function(key)
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .to_string()
}

fn why(old: &str, new: &str, level: u8) -> &'static str {
    if level == 2 {
        return "renumbered";
    }
    if without_templates(old) == without_templates(new) {
        "template arguments changed"
    } else {
        "signature changed"
    }
}

/// The name with every `<…>` removed.
fn without_templates(name: &str) -> String {
    let mut depth = 0usize;
    name.chars()
        .filter(|&c| match c {
            '<' => {
                depth += 1;
                false
            }
            '>' if depth > 0 => {
                depth -= 1;
                false
            }
            _ => depth == 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_changed_in_words() {
        assert_eq!(
            why(
                "void scale<0>(const float *, float *, long, int)",
                "void scale<2>(const float *, float *, long, int)",
                1
            ),
            "template arguments changed"
        );
        assert_eq!(why("k(float *)", "k(double *)", 1), "signature changed");
        assert_eq!(
            numberless("triton_poi_fused_add_12"),
            "triton_poi_fused_add_"
        );
    }
}
