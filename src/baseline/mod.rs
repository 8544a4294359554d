//! The baseline file: per kernel, launches per run and per-metric statistics
//! over the recorded runs, with the GPU fingerprint and the inputs' SHA-256.
//!
//! JSON, `schema_version: 2` (version 1 is still read), pretty-printed with a stable key order (struct
//! fields in declaration order, maps sorted) so that a diff of two baselines
//! is reviewable. Writes are atomic ([`crate::io::atomic`]): a temp file in the same
//! directory, then a rename.

pub(crate) mod diff;
pub(crate) mod distinct;
pub(crate) mod keys;
pub(crate) mod layout;
mod metrics;
pub mod record;
mod utf8;

use crate::aggregate::Stats;
use crate::error::{BaselineError, Error, Result};
pub(crate) use crate::io::write_atomic;
use crate::model::{Finding, Fingerprint, GraphProfiling, KernelKeyMode};
pub(crate) use metrics::{MetricMap, interned};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use utf8::Utf8Reader;

/// The baseline schema this version reads and writes.
pub(crate) const SCHEMA_VERSION: u32 = 2;
/// The oldest baseline `schema_version` still read: version 2 only added
/// optional fields, so a version-1 file reads as a version-2 one without them.
pub(crate) const OLDEST_SCHEMA_VERSION: u32 = 1;

/// A recorded baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    pub(crate) schema_version: u32,
    pub(crate) ncugate_version: String,
    /// RFC 3339, UTC.
    pub(crate) created: String,
    pub(crate) kernel_key: KernelKeyMode,
    pub(crate) fingerprint: Fingerprint,
    /// Raw exports, one per recorded run.
    pub(crate) inputs: Vec<InputFile>,
    /// Details exports whose rule results were recorded (may be empty).
    #[serde(default)]
    pub(crate) details: Vec<InputFile>,
    /// The thresholds the baseline was recorded for.
    pub(crate) thresholds: String,
    /// How ncugate profiled the runs, when it did (absent for baselines recorded from exports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) profile: Option<ProfileSettings>,
    /// Mean wall time of one profiled run in seconds (ncu included), and
    /// of the warm-up runs before it (`[app] warmup`), when ncugate profiled
    /// it: what a check costs, which `--shard` balances.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cost_seconds: Option<f64>,
    /// `true` when the exports profiled whole CUDA graphs as one result
    /// (`--graph-profiling graph`), `false` for per-node results; absent when
    /// the exports did not show it. A check refuses the other mode.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "graph_mode_wire"
    )]
    #[schemars(with = "Option<bool>")]
    pub(crate) graph_mode: Option<GraphProfiling>,
    /// The Nsight Compute version that wrote the runs' reports, where they
    /// say (reports read natively, e.g. `2022.2.0.0 (build 31140043)
    /// (public-release)`); a check of runs another version wrote says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) profiler_version: Option<String>,
    /// What ncugate saw of the GPU while the runs were profiled: each
    /// kernel's SM clock and elapsed cycles (from the exports), and, when
    /// ncugate profiled them, any other process on the GPU (`shared`
    /// says so). A check compares its own clock with this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) gpu: Option<crate::shared_gpu::GpuEnvironment>,
    /// Number of runs (= inputs).
    pub(crate) runs: u64,
    /// Every launch of a run together.
    pub(crate) total: KernelEntry,
    pub(crate) kernels: BTreeMap<String, KernelEntry>,
    /// Kernels the recorded runs did not launch alike (an autotuner's
    /// candidates, a JIT's choice): how many runs had each and its launch
    /// range. Not in `kernels`, not in `total`, never gated; absent when
    /// every run launched the same kernels alike.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) variable: BTreeMap<String, crate::varies::VariableKernel>,
}

/// `graph_mode` as the baseline file writes it: `true` for whole graphs,
/// `false` for their nodes.
mod graph_mode_wire {
    use crate::model::GraphProfiling;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        mode: &Option<GraphProfiling>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match mode {
            Some(mode) => s.serialize_bool(*mode == GraphProfiling::Graph),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<GraphProfiling>, D::Error> {
        Ok(Option::<bool>::deserialize(d)?.map(|graph| {
            if graph {
                GraphProfiling::Graph
            } else {
                GraphProfiling::Node
            }
        }))
    }
}

/// The ncu settings a profiled baseline was recorded with. A check refuses
/// to compare runs made with another clock control or graph-profiling mode.
// The ncu values are kept as strings, as written: a baseline stays readable
// whatever value another ncugate version recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProfileSettings {
    pub(crate) mode: crate::runner::Mode,
    pub(crate) graph_profiling: GraphProfiling,
    pub(crate) clock_control: String,
    pub(crate) cache_control: String,
    pub(crate) replay_mode: String,
    /// `false` when ncu profiled only between the app's
    /// cudaProfilerStart/Stop (`--profile-from-start off`).
    #[serde(default = "profile_from_start", skip_serializing_if = "Clone::clone")]
    pub(crate) profile_from_start: bool,
    /// How many times the app ran without ncu before the profiled runs
    /// (`[app] warmup`): what it keeps between processes was warm then.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) warmup: u32,
    /// The NVTX ranges ncu profiled in (`--nvtx-include`), if any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) nvtx_include: Vec<String>,
    /// The environment variables that steer kernel choice as the app saw
    /// them (see [`crate::runner::kernel_env`]); absent in baselines
    /// recorded before it was kept, which are then not compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kernel_env: Option<BTreeMap<String, String>>,
    /// The driver and its CUDA version (`driver`, `cuda`), where NVML told them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) toolchain: BTreeMap<String, String>,
}

fn profile_from_start() -> bool {
    true
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl ProfileSettings {
    pub(crate) fn of(config: &crate::runner::RunnerConfig) -> ProfileSettings {
        use crate::runner::kernel_env;
        ProfileSettings {
            mode: config.mode,
            graph_profiling: config.graph_profiling,
            clock_control: config.effective_clock_control().to_string(),
            cache_control: config.cache_control.to_string(),
            replay_mode: config.replay_mode.to_string(),
            profile_from_start: config.profile_from_start,
            warmup: config.warmup,
            nvtx_include: config.nvtx_include.clone(),
            kernel_env: Some(kernel_env::snapshot(
                kernel_env::own(),
                &config.env,
                &config.kernel_env,
            )),
            toolchain: kernel_env::toolchain(),
        }
    }

    /// With the `NAME VERSION` lines of `[profile] toolchain_command` in
    /// `toolchain` (beside the driver's, which win).
    pub(crate) fn with_versions(
        mut self,
        config: &crate::runner::RunnerConfig,
        processes: &dyn crate::runner::process::ProcessRunner,
    ) -> ProfileSettings {
        self.add_versions(crate::runner::kernel_env::versions(config, processes));
        self
    }

    /// Adds `NAME VERSION` parts to `toolchain`; a part it has already (the
    /// driver's) is kept.
    pub(crate) fn add_versions(&mut self, versions: impl IntoIterator<Item = (String, String)>) {
        for (name, version) in versions {
            self.toolchain.entry(name).or_insert(version);
        }
    }

    /// What differs from `baseline` in what picks and selects the
    /// kernels: the environment that steers kernel choice, the warm-up
    /// runs and the profiled range. Empty when nothing does (or a side does not know).
    pub(crate) fn changes_from(&self, baseline: &ProfileSettings) -> Vec<String> {
        let mut out = match (&baseline.kernel_env, &self.kernel_env) {
            (Some(b), Some(c)) => crate::runner::kernel_env::changes(b, c),
            _ => Vec::new(),
        };
        out.extend(crate::runner::kernel_env::toolchain_changes(
            &baseline.toolchain,
            &self.toolchain,
        ));
        if baseline.profile_from_start != self.profile_from_start {
            out.push(format!(
                "profile_from_start {} → {}",
                baseline.profile_from_start, self.profile_from_start
            ));
        }
        if baseline.warmup != self.warmup {
            out.push(format!("warmup {} → {}", baseline.warmup, self.warmup));
        }
        if baseline.nvtx_include != self.nvtx_include {
            let show = |r: &[String]| match r.is_empty() {
                true => "(none)".to_string(),
                false => format!("`{}`", crate::text::escape::printable(r.join(", "))),
            };
            out.push(format!(
                "nvtx_include {} → {}",
                show(&baseline.nvtx_include),
                show(&self.nvtx_include)
            ));
        }
        out
    }
}

/// An input file and its digest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct InputFile {
    pub(crate) path: String,
    pub(crate) sha256: String,
}

/// One kernel key (or the run total) in the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct KernelEntry {
    /// Launches per run.
    pub(crate) launches: Stats,
    #[schemars(with = "BTreeMap<String, MetricEntry>")]
    pub(crate) metrics: MetricMap,
    /// ncu rule results per rule name, when details were recorded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) findings: BTreeMap<String, Finding>,
    // Boxed, as the code and the source profile are rare: a baseline of
    // 100,000 kernels without them holds 100,000 of this entry.
    /// The kernel's machine code in brief (fingerprint, instructions, opcodes,
    /// launch configurations), when the baseline was recorded from reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) code: Option<Box<crate::code::KernelCode>>,
    /// The kernel's source-counter profile (per source line, per opcode),
    /// when `baseline record` was given one (`--source-page`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) source: Option<Box<crate::explain::SourceProfile>>,
}

/// One metric of one kernel: statistics over runs of each way of combining
/// the kernel's launches in a run, so any rule's `aggregate` can be checked
/// without re-recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MetricEntry {
    /// The base unit (see `units.rs`): `ns`, `byte`, `%`, `inst`, …
    #[serde(deserialize_with = "metrics::read_interned")]
    pub(crate) unit: std::sync::Arc<str>,
    pub(crate) sum: Stats,
    pub(crate) mean: Stats,
    pub(crate) max: Stats,
    pub(crate) min: Stats,
}

impl MetricEntry {
    /// The statistics for `aggregate`.
    pub(crate) fn stats(&self, aggregate: crate::model::Aggregate) -> &Stats {
        use crate::model::Aggregate::*;
        match aggregate {
            Sum => &self.sum,
            Mean => &self.mean,
            Max => &self.max,
            Min => &self.min,
        }
    }
}

impl Baseline {
    /// Reads and validates a baseline file, as a stream: a baseline of
    /// 100,000 kernels is 465 MB of JSON, which is never held whole. One
    /// pass checks the keys and strings and finds the version, a second
    /// reads the typed baseline. A baseline that can be read only once (a
    /// named pipe, `--baseline <(…)`) is read whole once, within the input
    /// size limit, and both passes read that.
    pub fn load(path: &Path) -> Result<Baseline> {
        // A `baseline record` killed while writing left its temp file here.
        crate::io::atomic::remove_stale_temps(path);
        let spooled = match crate::io::bounded::can_reopen(path) {
            true => None,
            false => Some(crate::io::bounded::read(
                crate::error::FileKind::Baseline,
                path,
            )?),
        };
        let open = |path: &Path| open(path, spooled.as_deref());
        let walked = keys::no_duplicate_keys_or_unprintable_in(open(path)?);
        let version = match walked {
            Ok(version) => version,
            Err(e) if e.is_io() => return Err(read_error(path, e)),
            // The version's and the syntax's errors come first, as they would from a head read.
            Err(e) => {
                // A file that is not UTF-8 is a read error wherever the bad byte is.
                std::io::copy(&mut Utf8Reader::new(open(path)?), &mut std::io::sink()).map_err(
                    |source| Error::read(crate::error::FileKind::Baseline, path, source),
                )?;
                vet_version(path, head_version(path, open(path)?)?)?;
                let (path, reason) = (path.to_path_buf(), e.to_string());
                return Err(match reason.contains(keys::UNPRINTABLE) {
                    true => BaselineError::Unprintable { path, reason },
                    false => BaselineError::DuplicateKey { path, reason },
                }
                .into());
            }
        };
        vet_version(path, version)?;
        serde_json::from_reader(open(path)?).map_err(|e| match e.is_io() {
            true => read_error(path, e),
            false => BaselineError::Invalid {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }
            .into(),
        })
    }

    /// Writes the baseline atomically (temp file in the same directory + rename).
    pub(crate) fn save(&self, path: &Path) -> Result<()> {
        let mut text = serde_json::to_string_pretty(self).map_err(|e| Error::Write {
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        text.push('\n');
        write_atomic(path, text.as_bytes())
    }
}

/// The baseline file as a stream. The JSON reader checks every string as
/// UTF-8, and JSON has no other place for a byte that is not ASCII: a file
/// that reads is UTF-8 (one that does not is checked whole, [`Utf8Reader`]).
/// Its bytes when it was read whole (`spooled`), else the file, bounded.
fn open<'a>(
    path: &Path,
    spooled: Option<&'a [u8]>,
) -> Result<std::io::BufReader<Box<dyn std::io::Read + 'a>>> {
    let read: Box<dyn std::io::Read + 'a> = match spooled {
        Some(bytes) => Box::new(bytes),
        None => Box::new(
            crate::io::bounded::open(path)
                .map_err(|source| Error::read(crate::error::FileKind::Baseline, path, source))?,
        ),
    };
    Ok(std::io::BufReader::with_capacity(1 << 16, read))
}

/// A read error met while parsing: the file's, not the JSON's.
fn read_error(path: &Path, e: serde_json::Error) -> Error {
    Error::read(crate::error::FileKind::Baseline, path, e.into())
}

/// The top-level `schema_version` alone, every other key skipped; the
/// error of text that is not JSON.
fn head_version(
    path: &Path,
    mut reader: impl std::io::BufRead,
) -> Result<Option<serde_json::Value>> {
    #[derive(Deserialize)]
    struct Head {
        schema_version: Option<serde_json::Value>,
    }
    let not_json = |e: serde_json::Error| match e.is_io() {
        true => read_error(path, e),
        false => BaselineError::NotJson {
            path: path.to_path_buf(),
            reason: e.to_string(),
        }
        .into(),
    };
    let object = loop {
        let buf = reader.fill_buf().unwrap_or_default();
        let blank = buf.iter().take_while(|c| c.is_ascii_whitespace()).count();
        if blank < buf.len() || buf.is_empty() {
            break buf.get(blank) == Some(&b'{');
        }
        reader.consume(blank);
    };
    if object {
        Ok(serde_json::from_reader::<_, Head>(reader)
            .map_err(not_json)?
            .schema_version)
    } else {
        // Not an object: invalid JSON, or JSON without a version.
        serde_json::from_reader::<_, serde::de::IgnoredAny>(reader).map_err(not_json)?;
        Ok(None)
    }
}

/// The version found, checked: one this ncugate reads.
fn vet_version(path: &Path, version: Option<serde_json::Value>) -> Result<()> {
    match version.as_ref().and_then(serde_json::Value::as_u64) {
        Some(v) if (u64::from(OLDEST_SCHEMA_VERSION)..=u64::from(SCHEMA_VERSION)).contains(&v) => {
            Ok(())
        }
        Some(v) => Err(BaselineError::SchemaVersion {
            path: path.to_path_buf(),
            found: v,
            reads: SCHEMA_VERSION,
        }
        .into()),
        None => Err(BaselineError::NoSchemaVersion {
            path: path.to_path_buf(),
        }
        .into()),
    }
}
