//! The shared libraries an executable needs, for its input digest: read
//! from the ELF file itself (its `DT_NEEDED` entries, transitively), each
//! resolved as the dynamic loader would in its common cases: the
//! `DT_RPATH`/`DT_RUNPATH` folders (`$ORIGIN` expanded), `LD_LIBRARY_PATH`,
//! the folders `/etc/ld.so.conf.d/*.conf` lists, then the default folders.
//! No process is run (`ldd` would run the loader on the file).
//!
//! What this does not see: libraries the app opens at run time with
//! `dlopen` (the CUDA driver, cuDNN and cuBLAS under PyTorch, Triton's
//! compiled kernels). Those belong in a workload's declared `inputs`.
//! The file is hostile input: every offset is bounds-checked, and a file
//! that is no 64-bit little-endian ELF has no libraries here.

use std::path::{Path, PathBuf};

/// At most this many libraries are followed (a loop or a huge tree ends here).
const MAX_LIBRARIES: usize = 256;
/// An ELF larger than this is not parsed for its libraries (its content
/// is still hashed): 2 GiB.
const MAX_ELF_BYTES: u64 = 2 << 30;

/// The loader's default folders, after the configured ones.
const DEFAULT_DIRS: [&str; 6] = [
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];

/// Every library `exe` needs, transitively, as `(name, resolved path)`; a
/// name that resolves nowhere has no path.
pub(crate) fn needed(exe: &Path, ld_library_path: Option<&str>) -> Vec<(String, Option<PathBuf>)> {
    let mut configured: Vec<PathBuf> = ld_library_path
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    configured.extend(ld_so_conf());
    let mut out: Vec<(String, Option<PathBuf>)> = Vec::new();
    let mut queue: Vec<PathBuf> = vec![exe.to_path_buf()];
    while let Some(file) = queue.pop() {
        let Some(dynamic) = read_dynamic(&file) else {
            continue;
        };
        let origin = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let search: Vec<PathBuf> = dynamic
            .paths
            .iter()
            .flat_map(|p| std::env::split_paths(p).collect::<Vec<_>>())
            .map(|p| expand_origin(&p, &origin))
            .chain(configured.iter().cloned())
            .chain(DEFAULT_DIRS.iter().map(PathBuf::from))
            .collect();
        for name in dynamic.needed {
            if out.iter().any(|(n, _)| *n == name) || out.len() >= MAX_LIBRARIES {
                continue;
            }
            let found = search.iter().map(|d| d.join(&name)).find(|p| p.is_file());
            if let Some(path) = &found {
                queue.push(path.clone());
            }
            out.push((name, found));
        }
    }
    out.sort();
    out
}

/// `$ORIGIN` (and `${ORIGIN}`) in a run path: the folder of the file.
fn expand_origin(path: &Path, origin: &Path) -> PathBuf {
    let text = path.to_string_lossy();
    let origin = origin.to_string_lossy();
    PathBuf::from(
        text.replace("${ORIGIN}", &origin)
            .replace("$ORIGIN", &origin),
    )
}

/// The folders `/etc/ld.so.conf.d/*.conf` list (their `include` lines aside).
fn ld_so_conf() -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir("/etc/ld.so.conf.d") else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = dir
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "conf"))
        .collect();
    files.sort();
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| {
            text.lines()
                .map(|l| l.split('#').next().unwrap_or_default().trim().to_string())
                .filter(|l| l.starts_with('/'))
                .map(PathBuf::from)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// An ELF file's `DT_NEEDED` names and its `DT_RPATH`/`DT_RUNPATH` values.
#[derive(Debug, Default, PartialEq, Eq)]
struct Dynamic {
    needed: Vec<String>,
    paths: Vec<String>,
}

fn read_dynamic(file: &Path) -> Option<Dynamic> {
    let size = std::fs::metadata(file).ok()?.len();
    if size > MAX_ELF_BYTES {
        return None;
    }
    parse(&std::fs::read(file).ok()?)
}

fn u16_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u16::from_le_bytes(b.get(at..at.checked_add(2)?)?.try_into().ok()?).into())
}
fn u32_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u32::from_le_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?).into())
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}
fn idx(v: u64) -> Option<usize> {
    usize::try_from(v).ok()
}

/// The dynamic section of a 64-bit little-endian ELF: `None` for anything else.
fn parse(b: &[u8]) -> Option<Dynamic> {
    if b.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let (phoff, phentsize, phnum) = (u64_at(b, 0x20)?, u16_at(b, 0x36)?, u16_at(b, 0x38)?);
    // (p_vaddr, p_offset, p_filesz) of each PT_LOAD; the PT_DYNAMIC's (offset, size).
    let mut loads = Vec::new();
    let mut dynamic = None;
    for i in 0..phnum {
        let at = idx(phoff.checked_add(i.checked_mul(phentsize)?)?)?;
        let (kind, offset) = (u32_at(b, at)?, u64_at(b, at + 8)?);
        let (vaddr, filesz) = (u64_at(b, at + 16)?, u64_at(b, at + 32)?);
        match kind {
            1 => loads.push((vaddr, offset, filesz)),
            2 => dynamic = Some((offset, filesz)),
            _ => {}
        }
    }
    let (offset, size) = dynamic?;
    let (mut needed, mut paths, mut strtab) = (Vec::new(), Vec::new(), None);
    let mut at = offset;
    while at.checked_add(16)? <= offset.checked_add(size)? {
        let (tag, value) = (u64_at(b, idx(at)?)?, u64_at(b, idx(at)? + 8)?);
        match tag {
            0 => break,
            1 => needed.push(value),
            5 => strtab = Some(value),
            15 | 29 => paths.push(value),
            _ => {}
        }
        at += 16;
    }
    // DT_STRTAB is an address: the PT_LOAD that holds it gives its offset.
    let strtab = strtab?;
    let (vaddr, file_offset, _) = loads
        .iter()
        .find(|(v, _, len)| strtab >= *v && strtab < v.saturating_add(*len))?;
    let base = idx(strtab - vaddr + file_offset)?;
    let string = |off: u64| -> Option<String> {
        let start = base.checked_add(idx(off)?)?;
        let rest = b.get(start..)?;
        let end = rest.iter().position(|&c| c == 0)?;
        String::from_utf8(rest[..end].to_vec()).ok()
    };
    Some(Dynamic {
        needed: needed.into_iter().filter_map(string).collect(),
        paths: paths.into_iter().filter_map(string).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test binary itself is a real ELF of this machine's toolchain:
    /// it needs libc, found where the loader finds it.
    #[test]
    fn a_real_executable_names_libc_resolved_and_garbage_names_nothing() {
        let exe = std::env::current_exe().unwrap();
        let libs = needed(&exe, None);
        let libc = libs.iter().find(|(n, _)| n.starts_with("libc.so"));
        assert!(
            libc.is_some_and(|(_, p)| p.as_ref().is_some_and(|p| p.is_file())),
            "{libs:?}"
        );
        assert_eq!(parse(b"#!/bin/sh\necho hi\n"), None);
        assert_eq!(parse(b"\x7fELF\x02\x01"), None);
        let mut truncated = std::fs::read(&exe).unwrap();
        truncated.truncate(200);
        assert_eq!(parse(&truncated), None);
    }

    #[test]
    fn origin_is_the_folder_of_the_file() {
        assert_eq!(
            expand_origin(Path::new("$ORIGIN/../lib"), Path::new("/opt/app/bin")),
            PathBuf::from("/opt/app/bin/../lib")
        );
        assert_eq!(
            expand_origin(Path::new("${ORIGIN}"), Path::new("/x")),
            PathBuf::from("/x")
        );
    }
}
