//! The versions of the kernel-picking libraries a profiled run mapped, for
//! the baseline's toolchain fingerprint: which cuBLAS, cuDNN, NCCL… the app
//! actually loaded, and for a Python app which torch, triton, jaxlib… it ran.
//! A library bump changes the kernels a workload launches; a check names
//! the change (``libcublas `13.0.2.14` → `13.1.0.3` ``) instead of blaming
//! the pull request.
//!
//! Read from the paths [`super::loaded`] saw in `/proc/<pid>/maps`, which
//! are the files themselves (links resolved):
//!
//! - a CUDA library of the system, `libcublas.so.13.0.2.14`: its stem and
//!   the version its file name carries (`libcublas` `13.0.2.14`); a name
//!   with only the major (`libcudnn.so.9`) gives that;
//! - a file inside a Python environment (`…/site-packages/torch/lib/…`):
//!   the version of the distribution that installed it, from the name of
//!   its `NAME-VERSION.dist-info` folder beside it (`torch` `2.11.0+cu130`,
//!   `nvidia-cublas` `13.0.2.14`, `jaxlib` `0.11.2`), for the distributions
//!   in [`PACKAGES`]; `jax` is named with `jaxlib`, being pure Python.
//!
//! Nothing here runs the app's code or reads more than folder names (and,
//! for a library whose distribution the names do not tell, at most
//! [`MAX_RECORD`] bytes of each candidate's `RECORD`).

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The CUDA libraries whose version picks kernels, by file stem. The driver
/// (`libcuda`) is not among them: NVML tells its version.
pub(crate) const LIBRARIES: &[&str] = &[
    "libcudart",
    "libcublas",
    "libcublasLt",
    "libcudnn",
    "libcudnn_adv",
    "libcudnn_cnn",
    "libcudnn_ops",
    "libcudnn_engines_precompiled",
    "libcudnn_engines_runtime_compiled",
    "libcudnn_graph",
    "libcudnn_heuristic",
    "libnccl",
    "libcufft",
    "libcusparse",
    "libcusparseLt",
    "libcusolver",
    "libcurand",
    "libcutensor",
    "libnvrtc",
    "libnvJitLink",
    "libnvinfer",
    "libnvshmem_host",
];

/// The Python distributions (normalized names, or their prefix before
/// `*`) whose version picks kernels.
pub(crate) const PACKAGES: &[&str] = &[
    "torch",
    "triton",
    "pytorch_triton",
    "jaxlib",
    "jax_cuda*",
    "nvidia_*",
    "cupy*",
    "tensorrt*",
    "flash_attn*",
    "xformers",
    "transformer_engine*",
    "tensorflow*",
    "onnxruntime_gpu",
    "flashinfer*",
    "vllm",
    "deepspeed",
    "apex",
];

/// At most this much of one distribution's `RECORD` is read.
const MAX_RECORD: u64 = 16 << 20;
/// At most this many `.dist-info` folders of one environment are listed.
const MAX_DISTRIBUTIONS: usize = 4096;

/// `NAME` → `VERSION` for the kernel-picking libraries among `mapped`.
/// Where two files of one name disagree (two cuBLAS builds mapped), both
/// versions are kept, joined by ` + `.
pub(crate) fn of(mapped: &[PathBuf]) -> BTreeMap<String, String> {
    let mut environments: HashMap<PathBuf, Environment> = HashMap::new();
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut add = |name: String, version: String| {
        let kept = out.entry(name).or_default();
        if !kept.split(" + ").any(|v| v == version) {
            if !kept.is_empty() {
                kept.push_str(" + ");
            }
            kept.push_str(&version);
        }
    };
    for path in mapped {
        if let Some((site, relative)) = in_environment(path) {
            let env = environments
                .entry(site.to_path_buf())
                .or_insert_with(|| Environment::list(site));
            if let Some(found) = env.owner(&relative, path) {
                let (name, version) = (found.name.clone(), found.version.clone());
                if let Some(jax) = env.named("jax").filter(|_| name == "jaxlib") {
                    add("jax".to_string(), jax.version.clone());
                }
                add(name.replace('_', "-"), version);
            }
        } else if let Some((stem, version)) = system_library(path) {
            add(stem, version);
        }
    }
    out
}

/// A system library's stem and the version its file name carries
/// (`libcublasLt.so.13.0.2.14` → `libcublasLt`, `13.0.2.14`), for the
/// stems in [`LIBRARIES`]; none for a name with no version after `.so`.
fn system_library(path: &Path) -> Option<(String, String)> {
    let name = path.file_name()?.to_str()?;
    let (stem, version) = name.split_once(".so.")?;
    let known = LIBRARIES.contains(&stem);
    let plain = !version.is_empty()
        && version.len() <= 32
        && version
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()));
    (known && plain).then(|| (stem.to_string(), version.to_string()))
}

/// The Python environment folder (`…/site-packages`, `…/dist-packages`) a
/// path is inside, and the path relative to it.
fn in_environment(path: &Path) -> Option<(&Path, PathBuf)> {
    let site = path.ancestors().skip(1).find(|a| {
        matches!(
            a.file_name().and_then(OsStr::to_str),
            Some("site-packages" | "dist-packages")
        )
    })?;
    Some((site, path.strip_prefix(site).ok()?.to_path_buf()))
}

/// One installed distribution: its normalized name and version.
#[derive(Debug)]
struct Distribution {
    name: String,
    version: String,
    folder: PathBuf,
}

/// The kernel-picking distributions of one Python environment, from its
/// `.dist-info` folders' names.
struct Environment {
    distributions: Vec<Distribution>,
    /// What a `RECORD` said, per relative path, once read.
    records: Option<HashMap<PathBuf, usize>>,
}

impl Environment {
    fn list(site: &Path) -> Environment {
        let mut distributions: Vec<Distribution> = std::fs::read_dir(site)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .take(MAX_DISTRIBUTIONS * 8)
            .filter_map(|e| {
                let folder = e.file_name();
                let folder = folder.to_str()?;
                let (name, version) = folder.strip_suffix(".dist-info")?.rsplit_once('-')?;
                let name = normalize(name);
                (wanted(&name) && plain_version(version)).then(|| Distribution {
                    name,
                    version: version.to_string(),
                    folder: e.path(),
                })
            })
            .take(MAX_DISTRIBUTIONS)
            .collect();
        distributions.sort_by(|a, b| a.name.cmp(&b.name));
        Environment {
            distributions,
            records: None,
        }
    }

    fn named(&self, name: &str) -> Option<&Distribution> {
        self.distributions.iter().find(|d| d.name == name)
    }

    /// The distribution that installed `relative`: by its top folder's
    /// name, for `nvidia/…` by the library's stem, else by the `RECORD`s.
    fn owner(&mut self, relative: &Path, path: &Path) -> Option<&Distribution> {
        let top = relative.components().next()?.as_os_str().to_str()?;
        let top = normalize(top);
        if let Some(i) = self.by_name(&top, path) {
            return self.distributions.get(i);
        }
        let records = self.records.get_or_insert_with(|| {
            let mut index = HashMap::new();
            for (i, d) in self.distributions.iter().enumerate() {
                for file in record(&d.folder) {
                    index.entry(file).or_insert(i);
                }
            }
            index
        });
        let i = *records.get(relative)?;
        self.distributions.get(i)
    }

    fn by_name(&self, top: &str, path: &Path) -> Option<usize> {
        let find =
            |want: &dyn Fn(&str) -> bool| self.distributions.iter().position(|d| want(&d.name));
        if top == "nvidia" {
            // CUDA's wheels share the `nvidia` folder: the library names its wheel.
            let stem = path.file_name()?.to_str()?.split(".so").next()?;
            let wheel = nvidia_wheel(stem)?;
            return find(&|n| {
                n == wheel || n.strip_prefix(wheel).is_some_and(|r| r.starts_with("_cu"))
            });
        }
        find(&|n| n == top)
    }
}

/// The wheel (normalized, before any `_cuNN`) that ships an `nvidia/` library.
fn nvidia_wheel(stem: &str) -> Option<&'static str> {
    Some(match stem {
        "libcublas" | "libcublasLt" => "nvidia_cublas",
        s if s.starts_with("libcudnn") => "nvidia_cudnn",
        "libnccl" => "nvidia_nccl",
        "libcufft" | "libcufftw" => "nvidia_cufft",
        "libcusparse" => "nvidia_cusparse",
        "libcusparseLt" => "nvidia_cusparselt",
        "libcusolver" | "libcusolverMg" => "nvidia_cusolver",
        "libcurand" => "nvidia_curand",
        "libnvJitLink" => "nvidia_nvjitlink",
        "libnvrtc" | "libnvrtc-builtins" => "nvidia_cuda_nvrtc",
        "libcudart" => "nvidia_cuda_runtime",
        "libcupti" => "nvidia_cuda_cupti",
        s if s.starts_with("libnvshmem") => "nvidia_nvshmem",
        "libcutensor" => "cutensor",
        _ => return None,
    })
}

/// The files a distribution's `RECORD` lists (its first [`MAX_RECORD`] bytes).
fn record(folder: &Path) -> Vec<PathBuf> {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(folder.join("RECORD")) else {
        return Vec::new();
    };
    let mut text = Vec::new();
    if file.take(MAX_RECORD).read_to_end(&mut text).is_err() {
        return Vec::new();
    }
    text.split(|&c| c == b'\n')
        .filter_map(|line| line.split(|&c| c == b',').next())
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(OsStr::from_bytes(p)))
        .collect()
}

/// A distribution's name as wheels write it: lower case, `-` and `.` as `_`.
fn normalize(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '-' | '.' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// Whether `name` is one of [`PACKAGES`] (or `jax`, named with `jaxlib`).
fn wanted(name: &str) -> bool {
    name == "jax"
        || PACKAGES.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *p,
        })
}

/// A version as a folder name may carry one: a digit first, then at most
/// 64 of letters, digits, `.`, `+`, `_`, `!`.
fn plain_version(v: &str) -> bool {
    v.starts_with(|c: char| c.is_ascii_digit())
        && v.len() <= 64
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '_' | '!'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Python environment laid out as pip leaves one, in a temp folder.
    fn environment(dists: &[&str], files: &[&str]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let site = dir.path().join("lib/python3.12/site-packages");
        for d in dists {
            std::fs::create_dir_all(site.join(d)).expect("dist-info");
        }
        for f in files {
            let path = site.join(f);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("folders");
            std::fs::write(path, b"").expect("file");
        }
        (dir, site)
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn system_libraries_give_the_version_their_file_name_carries() {
        let mapped: Vec<PathBuf> = [
            "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcublasLt.so.13.0.2.14",
            "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcublas.so.13.0.2.14",
            "/usr/lib/x86_64-linux-gnu/libcudnn.so.9",
            "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04",
            "/usr/lib/x86_64-linux-gnu/libssl.so.3",
            "/usr/lib/x86_64-linux-gnu/libnccl.so",
            "/usr/lib/x86_64-linux-gnu/libcufft.so.12.0.rc1",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(
            of(&mapped),
            map(&[
                ("libcublas", "13.0.2.14"),
                ("libcublasLt", "13.0.2.14"),
                ("libcudnn", "9"),
            ])
        );
    }

    /// The layout of a PyTorch 2.11 (CUDA 13) environment with JAX beside it:
    /// the CUDA 13 wheels put their libraries in `nvidia/cu13/lib`.
    #[test]
    fn python_libraries_give_their_distribution_and_version() {
        let (_dir, site) = environment(
            &[
                "torch-2.11.0+cu130.dist-info",
                "triton-3.6.0.dist-info",
                "nvidia_cublas-13.0.2.14.dist-info",
                "nvidia_cudnn_cu13-9.13.0.50.dist-info",
                "jax-0.11.2.dist-info",
                "jaxlib-0.11.2.dist-info",
                "numpy-2.5.2.dist-info",
            ],
            &[],
        );
        let mapped: Vec<PathBuf> = [
            "torch/lib/libtorch_cuda.so",
            "torch/lib/libc10_cuda.so",
            "triton/_C/libtriton.so",
            "nvidia/cu13/lib/libcublas.so.13",
            "nvidia/cu13/lib/libcudnn_graph.so.9",
            "jaxlib/_jax.so",
            "numpy/_core/_multiarray_umath.cpython-312-x86_64-linux-gnu.so",
        ]
        .iter()
        .map(|f| site.join(f))
        .collect();
        assert_eq!(
            of(&mapped),
            map(&[
                ("jax", "0.11.2"),
                ("jaxlib", "0.11.2"),
                ("nvidia-cublas", "13.0.2.14"),
                ("nvidia-cudnn-cu13", "9.13.0.50"),
                ("torch", "2.11.0+cu130"),
                ("triton", "3.6.0"),
            ])
        );
    }

    /// A library whose top folder names no distribution (JAX's CUDA plugin
    /// installs `jax_plugins/`): its distribution's `RECORD` lists it.
    #[test]
    fn a_record_names_the_distribution_the_folder_name_does_not() {
        let (_dir, site) = environment(
            &[
                "jax_cuda13_plugin-0.11.2.dist-info",
                "jaxlib-0.11.2.dist-info",
            ],
            &[],
        );
        std::fs::write(
            site.join("jax_cuda13_plugin-0.11.2.dist-info/RECORD"),
            "jax_plugins/xla_cuda13/__init__.py,sha256=x,10\n\
             jax_plugins/xla_cuda13/cuda_plugin_extension.so,sha256=y,20\n",
        )
        .expect("RECORD");
        let mapped = [site.join("jax_plugins/xla_cuda13/cuda_plugin_extension.so")];
        assert_eq!(of(&mapped), map(&[("jax-cuda13-plugin", "0.11.2")]));
        // A file no RECORD lists is nobody's.
        assert!(of(&[site.join("jax_plugins/other/x.so")]).is_empty());
    }

    #[test]
    fn two_builds_of_one_library_are_both_named() {
        let mapped: Vec<PathBuf> = ["/a/libcublas.so.13.0.2.14", "/b/libcublas.so.12.9.1.4"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(of(&mapped), map(&[("libcublas", "13.0.2.14 + 12.9.1.4")]));
    }

    /// Folder names are what the environment says, not trusted: a version
    /// with a slash, quotes or 200 characters, or no version, is left out.
    #[test]
    fn odd_folder_names_are_left_out() {
        let long = format!("torch-{}.dist-info", "1".repeat(200));
        let (_dir, site) = environment(&[&long, "triton-.dist-info", "cupy-x1.dist-info"], &[]);
        let mapped: Vec<PathBuf> = ["torch/lib/a.so", "triton/_C/libtriton.so", "cupy/b.so"]
            .iter()
            .map(|f| site.join(f))
            .collect();
        assert!(of(&mapped).is_empty(), "{:?}", of(&mapped));
    }
}
