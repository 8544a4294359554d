//! Code fingerprints: what each kernel's machine code is, so that a check can
//! say whether a kernel's code changed, and how.
//!
//! Read natively from the cubins a `.ncu-rep` embeds ([`crate::parse::ncu_rep::code`]):
//! per kernel, a fingerprint of its function's bytes, its static instruction
//! count and its launch configurations — milliseconds, no `ncu` call. The
//! opcode histogram needs the disassembly (`ncu --import R --page source
//! --print-source sass`, about 1.2 s): `baseline record` reads it always,
//! `check` only when some kernel's code changed. CSV inputs carry no code:
//! their kernels' code is unknown and nothing is said about it.

use crate::model::KernelKeyMode;
use crate::parse::ncu_rep::code as native;
use crate::runner::ncu::Page;
use crate::runner::process::ProcessRunner;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One kernel key's code, as a baseline stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KernelCode {
    /// SHA-256 of the function's bytes in the cubin (16 hex digits); for a
    /// key that groups several functions, of their fingerprints in order.
    pub fingerprint: String,
    /// Static instructions, without the `NOP`s that pad the function.
    pub instructions: u64,
    /// Static count per opcode (`FFMA`, `LDG`, …), when the disassembly was read.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) opcodes: BTreeMap<String, u64>,
    /// Launch configurations seen, `grid (x, y, z) block (x, y, z)`, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launch: Vec<String>,
    /// The functions' mangled names, sorted: what a CUPTI trace names the
    /// kernel by (trace mode maps it to this key with them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mangled: Vec<String>,
    /// The other fingerprints the recorded runs' code had, sorted: an
    /// autotuner picked another build of the kernel in some run. A check
    /// gates only such a kernel's time and launches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<String>,
}

/// Every kernel key's code in one report.
pub(crate) type CodeMap = BTreeMap<String, KernelCode>;

/// The code of every kernel of a report whose cubins hold it; `None` for a
/// file that is not a report the native reader knows (a CSV export).
pub fn of_report(path: &Path, key_mode: KernelKeyMode) -> Option<CodeMap> {
    use std::io::Read;
    // One open: the magic first, so a CSV is not read whole for nothing;
    // none for a file read once already (a named pipe).
    if !crate::io::bounded::can_reopen(path) {
        return None;
    }
    let mut file = crate::io::bounded::open(path).ok()?;
    let mut data = vec![0u8; 4];
    file.read_exact(&mut data).ok()?;
    let compressed = crate::parse::ncu_rep::zstd::is_compressed(&data);
    if data[..] != crate::parse::ncu_rep::container::MAGIC[..] && !compressed {
        return None;
    }
    file.read_to_end(&mut data).ok()?;
    let data = crate::parse::ncu_rep::zstd::inflate(&data).ok()?;
    Some(of_launches(&native::read(&data).ok()?, key_mode))
}

/// The code of every kernel key of `launches` (a report's, as
/// [`native::of_report`] reads them).
pub(crate) fn of_launches(launches: &[native::LaunchCode], key_mode: KernelKeyMode) -> CodeMap {
    let mut functions: BTreeMap<String, BTreeMap<String, native::Code>> = BTreeMap::new();
    let mut launch: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for l in launches {
        let key = crate::kernel_key::kernel_key(&l.name, key_mode);
        if let (Some(g), Some(b)) = (l.grid, l.block) {
            launch.entry(key.clone()).or_default().insert(format!(
                "grid {} block {}",
                dims(g),
                dims(b)
            ));
        }
        let Some(code) = &l.code else { continue };
        functions
            .entry(key)
            .or_default()
            .insert(l.mangled.clone(), code.clone());
    }
    functions
        .into_iter()
        .map(|(key, functions)| {
            // A BTreeMap's keys: sorted, each once.
            let mangled = functions.keys().cloned().collect();
            let code = combine(functions.into_values().collect());
            let launch = launch.remove(&key).unwrap_or_default();
            let entry = KernelCode {
                launch: launch.into_iter().collect(),
                mangled,
                ..code
            };
            (key, entry)
        })
        .collect()
}

fn dims(d: [u64; 3]) -> String {
    format!("({}, {}, {})", d[0], d[1], d[2])
}

/// One key's functions as one code.
fn combine(functions: Vec<native::Code>) -> KernelCode {
    let instructions = functions.iter().map(|c| c.instructions).sum();
    let fingerprint = match &functions[..] {
        [one] => one.fingerprint.clone(),
        many => {
            let joined: Vec<&str> = many.iter().map(|c| c.fingerprint.as_str()).collect();
            let digest = crate::parse::sha256_bytes(joined.join("+").as_bytes());
            digest.get(..16).unwrap_or_default().to_string()
        }
    };
    KernelCode {
        fingerprint,
        instructions,
        opcodes: BTreeMap::new(),
        launch: Vec::new(),
        mangled: Vec::new(),
        others: Vec::new(),
    }
}

/// Adds the opcode histograms of the report's SASS page (one `ncu --import`).
/// A failure is returned as a note: the fingerprints stand without it.
pub(crate) fn add_opcodes(
    codes: &mut CodeMap,
    report: &Path,
    key_mode: KernelKeyMode,
    ncu: &str,
    runner: &dyn ProcessRunner,
) -> Result<(), String> {
    let page = crate::runner::ncu::read_page(ncu, runner, report, Page::Sass)?;
    let histograms = crate::parse::sass::read_sass(&page, key_mode)?;
    for (key, code) in codes.iter_mut() {
        if let Some(h) = histograms.get(key) {
            code.opcodes.clone_from(h);
        }
    }
    Ok(())
}

/// What happened to one kernel's code between the baseline and this run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    Unchanged,
    /// Another fingerprint: the instruction delta and, with both opcode
    /// histograms, the opcodes that differ.
    Changed {
        instructions: (u64, u64),
        opcodes: Vec<(String, u64, u64)>,
    },
}

/// Compares two codes of one kernel.
pub(crate) fn change(baseline: &KernelCode, current: &KernelCode) -> Change {
    if baseline.fingerprint == current.fingerprint {
        return Change::Unchanged;
    }
    let mut opcodes = Vec::new();
    if !baseline.opcodes.is_empty() && !current.opcodes.is_empty() {
        let names: BTreeSet<&String> = baseline
            .opcodes
            .keys()
            .chain(current.opcodes.keys())
            .collect();
        for name in names {
            let (b, c) = (
                baseline.opcodes.get(name).copied().unwrap_or(0),
                current.opcodes.get(name).copied().unwrap_or(0),
            );
            if b != c {
                opcodes.push((name.clone(), b, c));
            }
        }
        // The largest changes first, then by name.
        opcodes.sort_by(|a, b| {
            b.2.abs_diff(b.1)
                .cmp(&a.2.abs_diff(a.1))
                .then(a.0.cmp(&b.0))
        });
    }
    Change::Changed {
        instructions: (baseline.instructions, current.instructions),
        opcodes,
    }
}

/// At most this many opcodes are named in a summary.
const NAMED_OPCODES: usize = 4;

impl Change {
    /// `code unchanged`, or `code changed (+12 instructions: 8 DFMA new, 2 FFMA gone)`.
    pub(crate) fn summary(&self) -> String {
        let Change::Changed {
            instructions: (before, after),
            opcodes,
        } = self
        else {
            return "code unchanged".into();
        };
        let delta = *after as i128 - *before as i128;
        let count = if delta == 0 {
            "same instruction count".to_string()
        } else {
            format!(
                "{delta:+} {}",
                if delta.abs() == 1 {
                    "instruction"
                } else {
                    "instructions"
                }
            )
        };
        let named: Vec<String> = opcodes
            .iter()
            .take(NAMED_OPCODES)
            .map(|(op, b, c)| match (b, c) {
                (0, c) => format!("{c} {op} new"),
                (b, 0) => format!("{b} {op} gone"),
                (b, c) if c > b => format!("{op} +{}", c - b),
                (b, c) => format!("{op} -{}", b - c),
            })
            .collect();
        let more = opcodes.len().saturating_sub(NAMED_OPCODES);
        let mut detail = named.join(", ");
        if more > 0 {
            detail.push_str(&format!(", {more} more"));
        }
        if detail.is_empty() {
            format!("code changed ({count})")
        } else {
            format!("code changed ({count}: {detail})")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(fingerprint: &str, instructions: u64, opcodes: &[(&str, u64)]) -> KernelCode {
        KernelCode {
            fingerprint: fingerprint.into(),
            instructions,
            opcodes: opcodes.iter().map(|(o, n)| (o.to_string(), *n)).collect(),
            launch: Vec::new(),
            mangled: Vec::new(),
            others: Vec::new(),
        }
    }

    #[test]
    fn summaries_name_the_opcodes_that_came_and_went() {
        let before = code("a", 30, &[("FFMA", 2), ("IMAD", 4)]);
        let after = code("b", 40, &[("DFMA", 8), ("IMAD", 6)]);
        assert_eq!(
            change(&before, &after).summary(),
            "code changed (+10 instructions: 8 DFMA new, 2 FFMA gone, IMAD +2)"
        );
        assert_eq!(change(&before, &before).summary(), "code unchanged");
        let no_opcodes = code("c", 29, &[]);
        assert_eq!(
            change(&before, &no_opcodes).summary(),
            "code changed (-1 instruction)"
        );
    }
}
