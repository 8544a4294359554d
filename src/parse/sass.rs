//! The SASS page of a report (`ncu --import R --csv --page source
//! --print-source sass`): per kernel, its static opcode histogram.
//!
//! The page repeats, for every profiled launch, a `"Kernel Name","…"` row,
//! an `"Address","Source"` header and one row per instruction. A kernel's
//! histogram is read from its first listing; an opcode is the mnemonic
//! without its modifiers (`IMAD.MOV.U32` counts as `IMAD`) and without the
//! predicate (`@P0 EXIT` counts as `EXIT`); the `NOP`s that pad a function
//! are not counted.

use crate::model::KernelKeyMode;
use std::collections::BTreeMap;

/// Opcode → static count, per kernel key.
pub(crate) type Histograms = BTreeMap<String, BTreeMap<String, u64>>;

/// Reads a SASS page; kernels are keyed as a run keys them (`key_mode`).
/// The histograms only add to a report, so a page that does not read is
/// a reason (for a note), not an error.
pub fn read_sass(data: &[u8], key_mode: KernelKeyMode) -> Result<Histograms, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(data);
    let mut out = Histograms::new();
    let mut current: Option<String> = None;
    for record in reader.records() {
        let record = record.map_err(|e| format!("the SASS page does not read as CSV: {e}"))?;
        match (record.get(0), record.get(1)) {
            (Some("Kernel Name"), Some(name)) => {
                let key = crate::kernel_key::kernel_key(
                    &crate::parse::ncu_rep::names::shown(name),
                    key_mode,
                );
                // A later launch of a kernel already read repeats its listing.
                current = (!out.contains_key(&key)).then(|| {
                    out.insert(key.clone(), BTreeMap::new());
                    key
                });
            }
            (Some("Address"), Some("Source")) => {}
            (Some(_), Some(instruction)) => {
                let (Some(kernel), Some(op)) = (&current, opcode(instruction)) else {
                    continue;
                };
                if let Some(histogram) = out.get_mut(kernel) {
                    *histogram.entry(op).or_default() += 1;
                }
            }
            _ => {}
        }
    }
    if out.is_empty() && !data.iter().all(u8::is_ascii_whitespace) {
        return Err("the SASS page has no `Kernel Name` row".into());
    }
    Ok(out)
}

/// The opcode of one SASS line: `@!P0 BRA 0x…` → `BRA`, `IMAD.WIDE R2, …` →
/// `IMAD`; `None` for `NOP` and for a line without one.
pub(crate) fn opcode(instruction: &str) -> Option<String> {
    let mut words = instruction.split_whitespace();
    let mut word = words.next()?;
    if word.starts_with('@') {
        word = words.next()?;
    }
    let op = word.split('.').next()?.trim_end_matches(',');
    let valid = !op.is_empty()
        && op
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    (valid && op != "NOP").then(|| op.to_string())
}

#[cfg(test)]
mod tests {
    use super::opcode;

    #[test]
    fn opcodes_drop_predicates_and_modifiers() {
        assert_eq!(
            opcode("      IMAD.MOV.U32 R3, RZ, RZ, RZ").as_deref(),
            Some("IMAD")
        );
        assert_eq!(opcode("@P0   EXIT").as_deref(), Some("EXIT"));
        assert_eq!(opcode("@!PT  BRA 0x7ff7d57a0d30").as_deref(), Some("BRA"));
        assert_eq!(opcode("      NOP"), None);
        assert_eq!(opcode(""), None);
        assert_eq!(opcode("\u{1b}[31m"), None);
    }
}
