//! Each profiled kernel's machine code, from the cubins a report embeds.
//!
//! Every block of a report starts its payload with `SourceData` messages: one
//! per loaded module, carrying the module's ELF cubin. Each kernel result
//! names its module by reference. The kernel's code is the ELF section
//! `.text.<mangled name>`: its bytes are what the GPU runs, before the loader
//! places them (no load address is in them), so two runs of one binary give
//! the same bytes and any change of the code gives other bytes.
//!
//! From those bytes: a fingerprint (SHA-256) and the static instruction count
//! (128-bit instructions from Volta on; the `NOP`s that pad a function to its
//! alignment are not counted). Reading them costs milliseconds and no `ncu`
//! call; opcode names need the disassembly (`ncu --import R --page source
//! --print-source sass`, see [`crate::parse::sass`]).

use super::container::{self, Failure, LaunchKind, Report};
use std::collections::BTreeMap;

/// One kernel launch's code and launch configuration.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LaunchCode {
    pub(crate) mangled: String,
    /// The demangled name as ncu's pages print it (the kernel's name in a run).
    pub(crate) name: String,
    pub(crate) grid: Option<[u64; 3]>,
    pub(crate) block: Option<[u64; 3]>,
    /// `None` when the report does not hold the kernel's cubin or function.
    pub(crate) code: Option<Code>,
}

/// A function's code, in brief.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Code {
    /// SHA-256 of the function's section, the first 16 hex digits.
    pub(crate) fingerprint: String,
    /// Instructions, without the alignment `NOP`s.
    pub(crate) instructions: u64,
}

/// The SASS opcode field of a Volta-or-later instruction (its low 12 bits)
/// for `NOP`.
const NOP: u64 = 0x918;

/// Reads every kernel launch's code from a version-7 report's bytes (for a
/// report read for nothing else; one read for its runs gives it through
/// [`of_report`]).
pub(crate) fn read(data: &[u8]) -> Result<Vec<LaunchCode>, Failure> {
    let report = container::read(data)?;
    of_report(&report).ok_or_else(|| Failure::Corrupt("a module message is corrupt".into()))
}

/// Every kernel launch's code in a report already read, in the report's
/// order; `None` when one of its module messages did not decode (the code
/// is then unknown).
pub(crate) fn of_report(report: &Report) -> Option<Vec<LaunchCode>> {
    if report.unreadable_module {
        return None;
    }
    let mut cache: BTreeMap<(u64, &str), Option<Code>> = BTreeMap::new();
    let mut out = Vec::new();
    for launch in &report.launches {
        let LaunchKind::Kernel {
            mangled,
            function: name,
            demangled,
        } = &launch.kind
        else {
            continue;
        };
        let code = launch.module.and_then(|r| {
            cache
                .entry((r, mangled.as_str()))
                .or_insert_with(|| {
                    report
                        .modules
                        .get(&r)
                        .and_then(|elf| function(elf, mangled))
                })
                .clone()
        });
        out.push(LaunchCode {
            // The name as ncu shows it, as on the raw page.
            name: super::names::display(mangled, name, demangled),
            mangled: mangled.clone(),
            grid: launch.grid,
            block: launch.block,
            code,
        });
    }
    Some(out)
}

/// The code of function `mangled` in an ELF64 little-endian cubin: its
/// `.text.<mangled>` section. `None` for anything else (a malformed ELF
/// included: the code is then unknown, the report still reads).
pub(crate) fn function(elf: &[u8], mangled: &str) -> Option<Code> {
    let text = section(elf, &format!(".text.{mangled}"))?;
    let instructions = text
        .chunks_exact(16)
        .filter(|i| bytes_at::<8>(i, 0, 0).is_some_and(|w| u64::from_le_bytes(w) & 0xfff != NOP))
        .count() as u64;
    let digest = crate::parse::sha256_bytes(text);
    Some(Code {
        fingerprint: digest.get(..16)?.to_string(),
        instructions,
    })
}

/// `n` bytes at `base + off`, every offset checked: a hostile ELF's
/// offsets may point anywhere, or past `usize::MAX`.
fn bytes_at<const N: usize>(b: &[u8], base: usize, off: usize) -> Option<[u8; N]> {
    let at = base.checked_add(off)?;
    b.get(at..at.checked_add(N)?)?.try_into().ok()
}

fn u16_at(b: &[u8], base: usize, off: usize) -> Option<usize> {
    Some(u16::from_le_bytes(bytes_at(b, base, off)?) as usize)
}

fn u32_at(b: &[u8], base: usize, off: usize) -> Option<usize> {
    Some(u32::from_le_bytes(bytes_at(b, base, off)?) as usize)
}

fn u64_at(b: &[u8], base: usize, off: usize) -> Option<usize> {
    usize::try_from(u64::from_le_bytes(bytes_at(b, base, off)?)).ok()
}

/// The bytes of the section called `name`.
fn section<'a>(elf: &'a [u8], name: &str) -> Option<&'a [u8]> {
    // ELF64 (class 2), little-endian (data 1).
    if elf.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let shoff = u64_at(elf, 0, 0x28)?;
    let (entsize, count, names) = (
        u16_at(elf, 0, 0x3a)?,
        u16_at(elf, 0, 0x3c)?,
        u16_at(elf, 0, 0x3e)?,
    );
    if entsize < 0x40 {
        return None;
    }
    let header = |i: usize| shoff.checked_add(i.checked_mul(entsize)?);
    let strtab = u64_at(elf, header(names)?, 0x18)?;
    for i in 0..count {
        let h = header(i)?;
        let name_at = strtab.checked_add(u32_at(elf, h, 0)?)?;
        let rest = elf.get(name_at..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        if &rest[..end] != name.as_bytes() {
            continue;
        }
        // SHT_NOBITS holds no bytes in the file.
        if u32_at(elf, h, 4)? == 8 {
            return None;
        }
        let (offset, size) = (u64_at(elf, h, 0x18)?, u64_at(elf, h, 0x20)?);
        return elf.get(offset..offset.checked_add(size)?);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_elves_have_no_code() {
        assert_eq!(function(b"", "k"), None);
        assert_eq!(function(b"\x7fELF\x02\x01", "k"), None);
        let mut elf = vec![0u8; 0x40];
        elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
        elf[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
        elf[0x3a] = 0x40;
        elf[0x3c] = 3;
        assert_eq!(function(&elf, "k"), None);
    }

    #[test]
    fn cut_or_damaged_reports_never_panic() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/h200/explain/graph_app.base.fast.ncu-rep"
        );
        let data = std::fs::read(path).expect("fixture");
        assert_eq!(read(&data).expect("report").len(), 9);
        for cut in (0..data.len()).step_by(997) {
            let _ = read(&data[..cut]);
        }
        let mut damaged = data.clone();
        for at in (0..data.len()).step_by(331) {
            damaged[at] ^= 0xff;
            let _ = read(&damaged);
        }
    }
}
