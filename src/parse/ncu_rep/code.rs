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
use std::collections::{BTreeMap, HashMap};

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
    // Each module's sections are indexed once, however many kernels it holds.
    let mut indexes: BTreeMap<u64, Option<Sections<'_>>> = BTreeMap::new();
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
                    let index = indexes
                        .entry(r)
                        .or_insert_with(|| report.modules.get(&r).and_then(|elf| sections(elf)));
                    function_in(index.as_ref()?, mangled)
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
#[cfg(test)]
fn function(elf: &[u8], mangled: &str) -> Option<Code> {
    function_in(&sections(elf)?, mangled)
}

/// The code of function `mangled` in a cubin already indexed (its `.text.<mangled>` section).
fn function_in(sections: &Sections<'_>, mangled: &str) -> Option<Code> {
    let text = (*sections.get(format!(".text.{mangled}").as_bytes())?)?;
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

/// A cubin's sections by name: the first section of a name, and its bytes
/// (`None`: it holds none in the file, or they are out of the file).
type Sections<'a> = HashMap<&'a [u8], Option<&'a [u8]>>;

/// Every section of an ELF64 little-endian cubin by name, in one pass: the
/// sections up to the first whose header or name is unreadable (a scan by
/// name stopped there too). Looking a name up per kernel scanned every
/// header, and each name to its NUL, again: a hostile cubin of many
/// sections whose names share one long unterminated run took minutes.
fn sections(elf: &[u8]) -> Option<Sections<'_>> {
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
    // Each header's name offset; `None` from the first unreadable one on.
    let starts: Vec<(usize, usize)> = (0..count)
        .map_while(|i| {
            let h = header(i)?;
            Some((h, strtab.checked_add(u32_at(elf, h, 0)?)?))
        })
        .collect();
    let ends = name_ends(elf, starts.iter().map(|&(_, at)| at));
    // Names may overlap (a linker shares suffixes); names that overlap over
    // and over (each a suffix of one long run) are a hostile cubin's, and
    // hashing them would read the run once per name: its code is unknown.
    let named: usize = ends
        .iter()
        .filter_map(|(&at, end)| Some(end.as_ref()? - at))
        .sum();
    if named > 4 * elf.len() + (1 << 16) {
        return None;
    }
    let mut out = Sections::new();
    for &(h, at) in &starts {
        let Some(&Some(end)) = ends.get(&at) else {
            break;
        };
        let bytes = (|| {
            // SHT_NOBITS holds no bytes in the file.
            if u32_at(elf, h, 4)? == 8 {
                return None;
            }
            let (offset, size) = (u64_at(elf, h, 0x18)?, u64_at(elf, h, 0x20)?);
            elf.get(offset..offset.checked_add(size)?)
        })();
        out.entry(&elf[at..end]).or_insert(bytes);
    }
    Some(out)
}

/// The end (its NUL) of the name at each offset of `starts`: `None` past the
/// file or with no NUL after it. The offsets in order, each search starts
/// where the last one's NUL serves no more: the file is read once.
fn name_ends(elf: &[u8], starts: impl Iterator<Item = usize>) -> HashMap<usize, Option<usize>> {
    let mut sorted: Vec<usize> = starts.collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out = HashMap::with_capacity(sorted.len());
    // `None`: not searched yet; `Some(None)`: no NUL after the last search's start.
    let mut nul: Option<Option<usize>> = None;
    for at in sorted {
        if nul.is_none_or(|n| n.is_some_and(|n| n < at)) {
            nul = Some(
                elf.get(at..)
                    .and_then(|rest| rest.iter().position(|&b| b == 0))
                    .map(|p| at + p),
            );
        }
        out.insert(at, nul.flatten());
    }
    out
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

    /// A cubin of 20,000 sections whose names are suffixes of one 100 KB
    /// run, `.text.k` last: a scan by name read every name to its NUL for
    /// each kernel looked up (10^9 bytes here: minutes unoptimized); the
    /// index reads the run once, finds the names overlap far past what a
    /// linker's shared suffixes do, and gives the code as unknown.
    #[test]
    fn many_sections_with_long_names_are_indexed_once() {
        const SECTIONS: usize = 20_000;
        const RUN: usize = 100_000;
        let mut elf = vec![0u8; 0x40];
        elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
        let strtab = elf.len();
        elf.extend(std::iter::repeat_n(b'a', RUN));
        elf.extend(b"\0.text.k\0");
        let text = elf.len();
        elf.extend([0u8; 32]);
        let shoff = elf.len();
        elf[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        elf[0x3a..0x3c].copy_from_slice(&0x40u16.to_le_bytes());
        elf[0x3c..0x3e].copy_from_slice(&u16::try_from(SECTIONS + 1).expect("u16").to_le_bytes());
        for i in 0..=SECTIONS {
            let mut h = [0u8; 0x40];
            let (name, offset, size) = match i {
                // The string table itself.
                0 => (0, strtab, RUN + 9),
                i if i == SECTIONS => (RUN + 1, text, 32),
                i => (i * 5, strtab, 1),
            };
            h[..4].copy_from_slice(&u32::try_from(name).expect("u32").to_le_bytes());
            h[4..8].copy_from_slice(&1u32.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&(offset as u64).to_le_bytes());
            h[0x20..0x28].copy_from_slice(&(size as u64).to_le_bytes());
            elf.extend(h);
        }
        assert_eq!(function(&elf, "k"), None);
        // The same cubin with names that do not overlap gives the code.
        for i in 1..SECTIONS {
            let at = shoff + i * 0x40;
            elf[at..at + 4].copy_from_slice(&u32::try_from(RUN + 1).expect("u32").to_le_bytes());
        }
        let code = function(&elf, "k").expect("the first `.text.k` is found");
        assert_eq!(
            code.instructions, 0,
            "the first `.text.k` is a 1-byte section"
        );
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
