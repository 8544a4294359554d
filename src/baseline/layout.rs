//! The baselines folder of a suite: `<dir>/<workload>/<gpu>.json`, one
//! baseline per workload and GPU model, `<gpu>` a readable slug of the
//! fingerprint (`nvidia-h200-cc90-132sm`). `check` takes the file of the GPU
//! the data comes from; `baseline record` writes it.

use crate::baseline::Baseline;
use crate::error::{Error, Result};
use crate::model::Fingerprint;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A file-name slug of a fingerprint: `nvidia-h200-cc90-132sm`; several GPUs
/// joined with `+`; `unknown-gpu` when the export names none.
pub(crate) fn slug(fingerprint: &Fingerprint) -> String {
    if fingerprint.gpus.is_empty() {
        return "unknown-gpu".into();
    }
    let one = |g: &crate::model::Gpu| {
        let mut s = words(&g.name);
        let cc: String = g
            .compute_capability
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect();
        if !cc.is_empty() {
            s.push_str("-cc");
            s.push_str(&cc.to_ascii_lowercase());
        }
        if let Some(sms) = g.sm_count {
            s.push_str(&format!("-{sms}sm"));
        }
        s
    };
    fingerprint
        .gpus
        .iter()
        .map(one)
        .collect::<Vec<_>>()
        .join("+")
}

/// Lowercase ASCII words joined by `-`.
fn words(text: &str) -> String {
    let mut out = String::new();
    for part in text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
    {
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&part.to_ascii_lowercase());
    }
    if out.is_empty() {
        out.push_str("gpu");
    }
    out
}

/// `<dir>/<workload>/<slug>.json`.
pub(crate) fn path(dir: &Path, workload: &str, fingerprint: &Fingerprint) -> PathBuf {
    dir.join(workload)
        .join(format!("{}.json", slug(fingerprint)))
}

/// The baseline files of a workload, sorted by name (none when the folder is missing).
pub(crate) fn files(dir: &Path, workload: &str) -> Result<Vec<PathBuf>> {
    let folder = dir.join(workload);
    let entries = match std::fs::read_dir(&folder) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(Error::read(
                crate::error::FileKind::BaselinesFolder,
                &folder,
                source,
            ));
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// The GPU slugs a workload has baselines for (file stems).
pub(crate) fn gpus(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect()
}

/// The largest recorded cost (seconds per profiled run) among a workload's
/// baselines, whatever the GPU: every runner then sees the same costs.
/// Unreadable files count as unknown here; `check` reports them.
pub(crate) fn cost(dir: &Path, workload: &str) -> Option<f64> {
    files(dir, workload)
        .ok()?
        .iter()
        .filter_map(|p| Baseline::load(p).ok()?.cost_seconds)
        .filter(|c| c.is_finite())
        .reduce(f64::max)
}

/// The SHA-256 of every baseline file of `workloads`, by its path in the
/// folder (`fp64/nvidia-h200-cc90-132sm.json`): merge names the files two
/// shards saw differently. A folder that exists but cannot be read is an error.
pub(crate) fn file_digests(dir: &Path, workloads: &[String]) -> Result<BTreeMap<String, String>> {
    let mut digests = BTreeMap::new();
    for w in workloads {
        for file in files(dir, w)? {
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let sha = crate::parse::sha256_of(crate::error::FileKind::Baseline, &file)?;
            digests.insert(format!("{w}/{name}"), sha);
        }
    }
    Ok(digests)
}

/// SHA-256 over every file of [`file_digests`] (relative path and content
/// digest, sorted): one value that says two runs saw the same baselines.
pub(crate) fn digest(files: &BTreeMap<String, String>) -> String {
    let mut lines: Vec<String> = files.iter().map(|(f, sha)| format!("{f} {sha}")).collect();
    lines.sort();
    crate::format::hex(&Sha256::digest(lines.join("\n").as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Gpu;

    #[test]
    fn a_mig_instance_has_its_own_folder_name_with_its_profile() {
        let gpu = |name: &str, sms| Fingerprint {
            gpus: vec![Gpu {
                name: name.into(),
                compute_capability: "9.0".into(),
                sm_count: Some(sms),
            }],
        };
        let whole = slug(&gpu("NVIDIA H100 80GB HBM3", 132));
        let mig = slug(&gpu("NVIDIA H100 80GB HBM3 MIG 1g.10gb", 16));
        assert_eq!(whole, "nvidia-h100-80gb-hbm3-cc90-132sm");
        assert_eq!(mig, "nvidia-h100-80gb-hbm3-mig-1g-10gb-cc90-16sm");
    }

    #[test]
    fn slugs_are_readable_file_names() {
        let h200 = Gpu {
            name: "NVIDIA H200".into(),
            compute_capability: "9.0".into(),
            sm_count: Some(132),
        };
        let a100 = Gpu {
            name: "NVIDIA A100-SXM4-80GB".into(),
            compute_capability: "8.0".into(),
            sm_count: None,
        };
        let fp = |gpus: Vec<Gpu>| Fingerprint { gpus };
        assert_eq!(slug(&fp(vec![h200.clone()])), "nvidia-h200-cc90-132sm");
        assert_eq!(slug(&fp(vec![a100.clone()])), "nvidia-a100-sxm4-80gb-cc80");
        assert_eq!(
            slug(&fp(vec![a100, h200])),
            "nvidia-a100-sxm4-80gb-cc80+nvidia-h200-cc90-132sm"
        );
        assert_eq!(slug(&fp(vec![])), "unknown-gpu");
    }
}
