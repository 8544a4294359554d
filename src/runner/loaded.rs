//! The shared libraries a profiled run's processes load: ncu and the app it
//! starts, with what they open at run time (`dlopen`: a Python
//! interpreter's PyTorch, cuDNN, cuBLAS and Triton libraries, the CUDA
//! driver). A light thread reads `/proc/<pid>/maps` of every process of the
//! run's tree while it goes on ([`FIRST`], then each [`EVERY`]) and keeps
//! the files mapped whose name is a shared library's (`*.so`, `*.so.N…`).
//! The verdict cache (`crate::skip`) records them beside the verdict and
//! hashes them on the next check.
//!
//! A look sees what is mapped at that moment: a library loaded and unloaded
//! between two looks, or a process that lives less than one interval, is
//! not seen. Each process's map is read as hostile input: at most
//! [`MAX_LINES`] lines of it, at most [`MAX_LIBRARIES`] libraries in all.

use std::collections::BTreeSet;
use std::io::BufRead;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The first look, this long after the run starts (its libraries load early).
pub(crate) const FIRST: Duration = Duration::from_millis(50);
/// Then a look this often.
pub(crate) const EVERY: Duration = Duration::from_millis(250);
/// At most this many lines of one process's map are read.
const MAX_LINES: usize = 1 << 16;
/// At most this many libraries are kept for one run.
pub(crate) const MAX_LIBRARIES: usize = 4096;
/// The file in a run's directory that lists them, one path a line.
pub(crate) const FILE: &str = "libraries.txt";

/// Runs `run`, which says the pid of the process it starts, and returns
/// its result and the libraries that process and its descendants mapped,
/// sorted. A run that says no pid (a replayed one) maps none.
pub(crate) fn during<T>(run: impl FnOnce(&mut dyn FnMut(u32)) -> T) -> (T, Vec<PathBuf>) {
    let root = AtomicU32::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let looker = scope.spawn(|| watch(&root, &stop));
        let out = run(&mut |pid| root.store(pid, Ordering::SeqCst));
        stop.store(true, Ordering::SeqCst);
        let seen = looker.join().unwrap_or_default();
        (out, seen.into_iter().collect())
    })
}

/// Looks until `stop`: [`FIRST`] after the root is known, then each [`EVERY`].
fn watch(root: &AtomicU32, stop: &AtomicBool) -> BTreeSet<PathBuf> {
    let mut seen = BTreeSet::new();
    let mut next: Option<Instant> = None;
    while !stop.load(Ordering::SeqCst) {
        let pid = root.load(Ordering::SeqCst);
        if pid != 0 {
            let at = *next.get_or_insert_with(|| Instant::now() + FIRST);
            if Instant::now() >= at {
                look(pid, &mut seen);
                next = Some(Instant::now() + EVERY);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    seen
}

/// One look: the libraries `root` and its descendants map now.
fn look(root: u32, seen: &mut BTreeSet<PathBuf>) {
    let mut family = vec![root];
    family.extend(super::procfs::descendants(root));
    for pid in family {
        let Ok(maps) = std::fs::File::open(format!("/proc/{pid}/maps")) else {
            continue;
        };
        for lib in libraries(std::io::BufReader::new(maps)) {
            if seen.len() >= MAX_LIBRARIES {
                return;
            }
            seen.insert(lib);
        }
    }
}

/// The shared-library files a `/proc/<pid>/maps` text maps, each once, in
/// order of first mapping. A line is `address perms offset dev inode
/// path`; a path of a file since deleted ends ` (deleted)` and is left out
/// (there is nothing to hash), as are anonymous and `[special]` regions.
pub(crate) fn libraries(maps: impl BufRead) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for line in maps.split(b'\n').take(MAX_LINES).map_while(|l| l.ok()) {
        let Some(path) = path_of(&line) else {
            continue;
        };
        if path.ends_with(b" (deleted)") || !is_library(path) {
            continue;
        }
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(path));
        if !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// The path of a map line: what follows its fifth field, when it is absolute.
fn path_of(line: &[u8]) -> Option<&[u8]> {
    let mut rest = line;
    for _ in 0..5 {
        let start = rest.iter().position(|c| !c.is_ascii_whitespace())?;
        rest = &rest[start..];
        let end = rest.iter().position(|c| c.is_ascii_whitespace())?;
        rest = &rest[end..];
    }
    let start = rest.iter().position(|c| !c.is_ascii_whitespace())?;
    let path = &rest[start..];
    path.starts_with(b"/").then_some(path)
}

/// Whether a file's name is a shared library's: `.so` at its end or
/// followed by a version (`libcublasLt.so.13`, `_C.cpython-312-x86_64-linux-gnu.so`).
fn is_library(path: &[u8]) -> bool {
    let name = path.rsplit(|&c| c == b'/').next().unwrap_or(path);
    name.windows(3)
        .enumerate()
        .any(|(i, w)| w == b".so" && matches!(name.get(i + 3), None | Some(b'.')) && i > 0)
}

/// The list as a run's directory keeps it: one path a line.
pub(crate) fn lines(libraries: &[PathBuf]) -> Vec<String> {
    libraries.iter().map(|p| p.display().to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PYTHON: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/linux/proc-maps.python3-ssl.txt"
    );

    /// A real Python process's map (its `dlopen`ed extension modules and
    /// their libraries): its 25 library files, each once, and nothing else.
    #[test]
    fn a_python_processs_map_gives_its_loaded_libraries_once_each() {
        let text = std::fs::read(PYTHON).unwrap();
        let libs = libraries(&text[..]);
        assert_eq!(libs.len(), 25, "{libs:?}");
        let has = |p: &str| libs.contains(&PathBuf::from(p));
        assert!(has("/usr/lib/x86_64-linux-gnu/libssl.so.3"), "{libs:?}");
        assert!(has("/usr/lib/x86_64-linux-gnu/libcrypto.so.3"));
        assert!(has(
            "/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_ssl.cpython-311-x86_64-linux-gnu.so"
        ));
        assert!(has("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"));
        // The interpreter, the locale archive and gconv's cache are no libraries.
        assert!(!libs.iter().any(|p| {
            let p = p.to_string_lossy();
            p.ends_with("python3.11") || p.contains("locale") || p.ends_with(".cache")
        }));
    }

    /// Stand-in lines (written here, not recorded): a deleted file, a path
    /// with a space, a name that only contains `.so`, and garbage.
    #[test]
    fn deleted_files_and_names_that_are_no_library_are_left_out() {
        let text = b"7f00-7f01 r-xp 00000000 fe:00 12 /tmp/jit/kernel.so (deleted)\n\
            7f01-7f02 r-xp 00000000 fe:00 13 /opt/my libs/libx.so.1\n\
            7f02-7f03 r--p 00000000 fe:00 14 /data/notes.sock\n\
            7f03-7f04 r--p 00000000 fe:00 15 /data/.so\n\
            7f04-7f05 rw-p 00000000 00:00 0 \n\
            garbage\n\
            \xff\xfe 1 2 3 4 /lib/libz.so\n";
        assert_eq!(
            libraries(&text[..]),
            [
                PathBuf::from("/opt/my libs/libx.so.1"),
                PathBuf::from("/lib/libz.so")
            ]
        );
    }

    /// This test's own process maps libc: a run that says its pid is
    /// looked at; one that says none maps nothing.
    #[test]
    fn a_running_process_is_looked_at_and_a_replayed_one_is_not() {
        let mut child = std::process::Command::new("sleep")
            .arg("2")
            .spawn()
            .unwrap();
        let ((), libs) = during(|spawned| {
            spawned(child.id());
            std::thread::sleep(FIRST + Duration::from_millis(200));
        });
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            libs.iter()
                .any(|p| p.to_string_lossy().contains("/libc.so")),
            "{libs:?}"
        );
        let ((), none) = during(|_| std::thread::sleep(Duration::from_millis(100)));
        assert!(none.is_empty());
    }
}
