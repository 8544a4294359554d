//! The graph audit library travels inside the binary: its C source is
//! embedded at build time and compiled on first use on the GPU runner (which
//! has a C compiler and CUPTI from the CUDA toolkit) into a cache folder keyed
//! by the hash of what goes into the build — the source, the compiler and the
//! CUPTI it links — so an installed `ncugate` needs no checkout, a new
//! ncugate or toolkit gets a fresh build, and later runs reuse it.

use crate::error::{Error, Result};
use crate::runner::RunnerConfig;
use crate::runner::process::{CommandSpec, Exit, ProcessRunner};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// `inject/ncugate_audit.c`, as this binary was built with it.
pub(crate) const SOURCE: &str = include_str!("../../inject/ncugate_audit.c");
/// The library's file name inside its cache folder.
pub(crate) const FILE_NAME: &str = "libncugate_audit.so";

/// Where the CUDA toolkit's CUPTI headers and libraries are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    /// The C compiler (`$CC`, else `cc`, else `gcc`).
    pub cc: String,
    /// The CUDA toolkit (`$CUDA_HOME`, `$CUDA_PATH`, else `/usr/local/cuda`).
    pub cuda_home: PathBuf,
}

impl Toolchain {
    /// From the environment, as `make` would see it.
    pub(crate) fn from_env() -> Toolchain {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        // `cc` is the POSIX name; some images only have `gcc`.
        let default_cc = ["cc", "gcc"]
            .into_iter()
            .find(|c| on_path(c))
            .unwrap_or("cc");
        Toolchain {
            cc: var("CC").unwrap_or_else(|| default_cc.into()),
            cuda_home: var("CUDA_HOME")
                .or_else(|| var("CUDA_PATH"))
                .map_or_else(|| PathBuf::from("/usr/local/cuda"), PathBuf::from),
        }
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}

/// CUPTI's header and library folders, and the folders to find `libcuda.so` in at link time.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Cupti {
    include: PathBuf,
    lib: PathBuf,
    link: Vec<PathBuf>,
}

fn find_cupti(home: &Path) -> Result<Cupti> {
    let targets = home.join("targets/x86_64-linux");
    let first = |candidates: &[PathBuf]| candidates.iter().find(|p| p.is_file()).cloned();
    let header = first(&[
        targets.join("include/cupti.h"),
        home.join("extras/CUPTI/include/cupti.h"),
        home.join("include/cupti.h"),
    ]);
    let library = first(&[
        targets.join("lib/libcupti.so"),
        home.join("extras/CUPTI/lib64/libcupti.so"),
        home.join("lib64/libcupti.so"),
    ]);
    let (Some(header), Some(library)) = (header, library) else {
        return Err(Error::from(crate::error::ToolError::NoCupti {
            cuda_home: home.to_path_buf(),
        }));
    };
    let parent = |p: &Path| p.parent().map(Path::to_path_buf).unwrap_or_default();
    // libcuda.so at link time: the toolkit's stub (the driver's own library runs).
    let link = [
        targets.join("lib/stubs"),
        home.join("lib64/stubs"),
        PathBuf::from("/usr/local/nvidia/lib64"),
    ]
    .into_iter()
    .filter(|d| d.is_dir())
    .collect();
    Ok(Cupti {
        include: parent(&header),
        lib: parent(&library),
        link,
    })
}

/// The compiler command line for `source` → `out`.
fn compile_args(tools: &Toolchain, cupti: &Cupti, source: &Path, out: &Path) -> Vec<String> {
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let mut args: Vec<String> = [
        "-O2",
        "-Wall",
        "-Wextra",
        "-shared",
        "-fPIC",
        "-fvisibility=hidden",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    args.push(format!("-I{}", s(&cupti.include)));
    args.push(format!("-I{}", s(&tools.cuda_home.join("include"))));
    args.extend(["-o".to_string(), s(out), s(source)]);
    args.push(format!("-L{}", s(&cupti.lib)));
    args.push(format!("-Wl,-rpath,{}", s(&cupti.lib)));
    args.extend(cupti.link.iter().map(|d| format!("-L{}", s(d))));
    args.extend(["-lcupti", "-lcuda", "-ldl", "-lpthread"].map(String::from));
    args
}

/// The cache key: what decides the build, hashed (16 hex digits).
fn key(tools: &Toolchain, cupti: &Cupti) -> String {
    let mut h = Sha256::new();
    h.update(SOURCE.as_bytes());
    for part in [
        tools.cc.clone(),
        cupti.include.display().to_string(),
        cupti.lib.display().to_string(),
    ] {
        h.update([0]);
        h.update(part.as_bytes());
    }
    crate::format::hex(&h.finalize()[..8])
}

/// The library to inject, as an absolute path: `given` (`--audit-lib`,
/// `NCUGATE_AUDIT_LIB`, `[memory] audit_lib`), else the one compiled from the
/// embedded source into `cache_dir` ([`ensure`]).
pub(crate) fn resolve(
    given: Option<&PathBuf>,
    cache_dir: &Path,
    processes: &dyn ProcessRunner,
) -> Result<PathBuf> {
    let path = match given {
        Some(given) => given.clone(),
        None => ensure(cache_dir, &Toolchain::from_env(), processes)?.path,
    };
    std::fs::canonicalize(&path).map_err(|source| {
        Error::from(crate::error::ToolError::AuditLibrary {
            library: path.clone(),
            reason: source.to_string(),
        })
    })
}

/// The app of `runner` (its argv, environment, work dir and timeout) with
/// `library` injected (`CUDA_INJECTION64_PATH`), its report to go to `out`.
pub(crate) fn injected(
    runner: &RunnerConfig,
    program: &str,
    args: &[String],
    library: &Path,
    out: &Path,
) -> CommandSpec {
    let mut spec = CommandSpec::new(program.to_string(), args.iter().cloned());
    spec.env = runner.env.clone();
    spec.env.push((
        "CUDA_INJECTION64_PATH".into(),
        library.to_string_lossy().into_owned(),
    ));
    spec.env.push((
        "NCUGATE_AUDIT_OUT".into(),
        out.to_string_lossy().into_owned(),
    ));
    spec.workdir = Some(runner.workdir.clone());
    spec.timeout = Some(runner.timeout);
    spec
}

/// An injected app that did not exit 0 is an error, as under ncu: its last
/// lines, and the log they were written to.
pub(crate) fn app_ended(
    exit: &Exit,
    program: &str,
    spec: &CommandSpec,
    lines: &[String],
    log: &Path,
) -> Result<()> {
    match exit {
        Exit::Code(0) => Ok(()),
        Exit::NotFound => Err(Error::from(crate::error::ToolError::AppNotFound {
            program: program.to_string(),
        })),
        other => Err(Error::from(crate::error::ProcessError::App {
            command: spec.display(),
            exit: other.to_string(),
            output: crate::runner::process::last_output(lines, 5),
            log: log.to_path_buf(),
        })),
    }
}

/// The library and whether this call compiled it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    pub path: PathBuf,
    pub compiled: bool,
}

/// The audit library compiled from the embedded source, from the cache
/// under `root` when it was built before.
pub fn ensure(root: &Path, tools: &Toolchain, processes: &dyn ProcessRunner) -> Result<Built> {
    let cupti = find_cupti(&tools.cuda_home)?;
    let dir = root.join(format!("audit-{}", key(tools, &cupti)));
    let lib = dir.join(FILE_NAME);
    if lib.is_file() {
        return Ok(Built {
            path: lib,
            compiled: false,
        });
    }
    let write_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Write { path, source }
    };
    // Each process builds in its own folder and renames the result into place:
    // two CI jobs starting at once never load half a library.
    let work = dir.join(format!("build-{}", std::process::id()));
    // Removed by the cleanup of SIGINT/SIGTERM while it exists.
    let Some(_tracked) = crate::runner::interrupt::Temp::track(&work) else {
        return Err(crate::runner::interrupt::error());
    };
    std::fs::create_dir_all(&work).map_err(write_err(&work))?;
    let source = dir.join("ncugate_audit.c");
    std::fs::write(&source, SOURCE).map_err(write_err(&source))?;
    let tmp = work.join(FILE_NAME);
    let spec = CommandSpec::new(tools.cc.clone(), compile_args(tools, &cupti, &source, &tmp));
    crate::text::escape::say(&format!(
        "ncugate: compiling the graph audit library: {}",
        spec.display()
    ));
    let done = processes.run(&spec, &mut |_| {});
    let log = dir.join("build.log");
    crate::runner::write_lines(&log, &done.lines)?;
    if !done.exit.success() || !tmp.is_file() {
        let _ = std::fs::remove_dir_all(&work);
        return Err(Error::from(crate::error::ProcessError::AuditLibrary {
            command: spec.display(),
            exit: done.exit.to_string(),
            output: crate::runner::process::last_output(&done.lines, 5),
            log,
        }));
    }
    std::fs::rename(&tmp, &lib).map_err(write_err(&lib))?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(Built {
        path: lib,
        compiled: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_source_is_the_injection_library() {
        assert!(SOURCE.contains("InitializeInjection"));
        assert!(SOURCE.contains("NCUGATE_AUDIT_OUT"));
    }

    #[test]
    fn the_key_changes_with_the_toolkit_and_the_compiler() {
        let tools = Toolchain {
            cc: "cc".into(),
            cuda_home: "/usr/local/cuda".into(),
        };
        let cupti = Cupti {
            include: "/a/include".into(),
            lib: "/a/lib".into(),
            link: Vec::new(),
        };
        let k = key(&tools, &cupti);
        assert_eq!(k.len(), 16);
        assert_eq!(k, key(&tools, &cupti));
        let other = Cupti {
            lib: "/b/lib".into(),
            ..cupti.clone()
        };
        assert_ne!(k, key(&tools, &other));
        let gcc = Toolchain {
            cc: "gcc-12".into(),
            ..tools
        };
        assert_ne!(k, key(&gcc, &cupti));
    }
}
