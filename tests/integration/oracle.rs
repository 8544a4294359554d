//! Differential tests of the native `.ncu-rep` reader against NVIDIA's own
//! reader, the `ncu_report` Python package (`tests/oracle/ncu_report_dump.py`
//! dumps what it reads as JSON; [`native`] dumps what ncugate's reader
//! decoded in the same shape).
//!
//! Every committed report must read the same with both: the same launches in
//! the same order, the same kernel names, the same metric names with the same
//! values and instance values. Then seeded mutants of each report
//! (truncations, bit flips, duplicated spans and blocks) are read with both:
//! ncugate must refuse, with a clean error, every mutant NVIDIA's reader
//! cannot read, and read the same as it where both read. Where NVIDIA's
//! reader reads what ncugate refuses (a cut or corrupt report it reads in
//! part), that is printed and expected: ncugate does not gate on what is
//! left of a broken report. [`UNEXPLAINED`] lists the mutants where the
//! readers part ways for reasons not yet known.
//!
//! Compressed reports (`.ncu-repz`) are held to it too: the committed ones
//! and the public reports in several Zstandard layouts, each inflated by
//! ncugate and by NVIDIA's reader.
//!
//! A third test fuzzes the reader alone (no oracle), bounded by
//! [`FUZZ_CASES`].
//!
//! NVIDIA's reader is not a Rust dependency: the tests run it with the Python
//! named by `NCUGATE_ORACLE_PYTHON` (default `python3`) when it can import
//! `ncu_report`, and otherwise say they skipped; with `NCUGATE_ORACLE=require`
//! (set by `.ci/run`) a missing reader fails them instead.

use ncugate::parse::ncu_rep::container::{self, Launch, LaunchKind, Metric};
use ncugate::parse::ncu_rep::schema::MetricValue;
use ncugate::parse::ncu_rep::zstd;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const DUMPER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/oracle/ncu_report_dump.py"
);

/// The relative tolerance of floating-point values: both readers hold the
/// same bits, so only a conversion could move them.
const FLOAT_TOLERANCE: f64 = 1e-12;

/// The Python that imports `ncu_report`, or `None` (and a line saying the
/// test skipped) when there is none and `NCUGATE_ORACLE` is not `require`.
fn oracle_python(test: &str) -> Option<String> {
    let python = std::env::var("NCUGATE_ORACLE_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(&python)
        .args(["-c", "import ncu_report"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return Some(python);
    }
    let why = format!(
        "{python} cannot import ncu_report (pip install ncu-report==2026.3.1, \
         then NCUGATE_ORACLE_PYTHON=that python)"
    );
    assert!(
        std::env::var("NCUGATE_ORACLE").as_deref() != Ok("require"),
        "NCUGATE_ORACLE=require: {why}"
    );
    eprintln!("SKIPPED {test}: {why}");
    None
}

/// Every `.ncu-rep` under `fixtures/` (what `git ls-files '*.ncu-rep'`
/// lists), sorted.
fn committed_reports() -> Vec<PathBuf> {
    committed("ncu-rep")
}

/// Every `.ncu-repz` under `fixtures/`, sorted.
fn committed_compressed_reports() -> Vec<PathBuf> {
    committed("ncu-repz")
}

/// Every file under `fixtures/` with the extension `ext`, sorted.
fn committed(ext: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("fixtures dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, ext, out);
            } else if path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(ROOT).join("fixtures"), ext, &mut out);
    out.sort();
    out
}

/// What NVIDIA's reader made of each file, in order: its JSON line, or a
/// refusal naming how the reader died when it crashed on the file.
fn oracle(python: &str, files: &[PathBuf]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    while out.len() < files.len() {
        let rest = &files[out.len()..];
        let mut child = Command::new(python)
            .args([DUMPER, "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run the oracle");
        let list: String = rest.iter().map(|f| format!("{}\n", f.display())).collect();
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(list.as_bytes())
            .expect("write the file list");
        let done = child.wait_with_output().expect("oracle output");
        let before = out.len();
        for line in String::from_utf8_lossy(&done.stdout).lines() {
            out.push(serde_json::from_str(line).expect("oracle JSON line"));
        }
        if out.len() < files.len() && (out.len() == before || !done.status.success()) {
            // The reader died on the next file: that is its refusal of it.
            let file = &files[out.len()];
            let why = format!("ncu_report crashed ({})", done.status);
            out.push(json!({"file": file.display().to_string(), "ok": false, "error": why}));
        }
    }
    out
}

/// ncugate's reading of a report in the oracle's shape (see the dumper's
/// doc): what the native reader decoded, before any page or fold.
mod native {
    use super::*;

    pub fn dump(report: &container::Report) -> Value {
        Value::Array(report.launches.iter().map(launch).collect())
    }

    fn launch(l: &Launch) -> Value {
        let (workload, names) = match &l.kind {
            LaunchKind::Kernel {
                mangled,
                function,
                demangled,
            } => ("kernel", Some([mangled, function, demangled])),
            LaunchKind::Graph => ("graph", None),
            LaunchKind::Range => ("range", None),
            LaunchKind::CommandList { .. } => ("cmdlist", None),
        };
        let mut metrics = serde_json::Map::new();
        for m in &l.metrics {
            metrics.insert(m.name.clone(), metric(m));
        }
        json!({"workload": workload, "names": names, "metrics": metrics,
               "metric_count": l.metrics.len()})
    }

    fn metric(m: &Metric) -> Value {
        let (kind, own) = m.value.as_ref().map_or(("none", Value::Null), value);
        let instances: Vec<Value> = m.instances.iter().map(|v| value(v).1).collect();
        json!([kind, own, instances])
    }

    /// The value's kind and value; which field counts when several are set
    /// is the order ncugate prints them in (`print::value`).
    fn value(v: &MetricValue) -> (&'static str, Value) {
        let real = |x: f64| match x {
            x if x.is_nan() => json!("nan"),
            x if x.is_infinite() => json!(if x > 0.0 { "inf" } else { "-inf" }),
            x => json!(x),
        };
        match v {
            MetricValue {
                string: Some(s), ..
            } => ("string", json!(s)),
            MetricValue {
                uint64: Some(x), ..
            } => ("uint64", json!(x)),
            MetricValue {
                uint32: Some(x), ..
            } => ("uint32", json!(x)),
            MetricValue {
                double: Some(x), ..
            } => ("double", real(*x)),
            MetricValue { float: Some(x), .. } => ("float", real(f64::from(*x))),
            _ => ("none", Value::Null),
        }
    }
}

/// Every way the two readings of one report differ, one line each. The
/// launches are matched in order; where a launch differs from ncu_report's
/// at its index, one equal to it elsewhere is taken instead, as the readers
/// order processes differently (ncugate lists them by process ID, as ncu's
/// pages do, ncu_report by range).
fn disagreements(ours: &Value, theirs: &[Value]) -> Vec<String> {
    let ours = ours.as_array().expect("launches");
    let mut out = Vec::new();
    if ours.len() != theirs.len() {
        out.push(format!(
            "{} launches, ncu_report {}",
            ours.len(),
            theirs.len()
        ));
    }
    let mut unused: Vec<bool> = vec![true; theirs.len()];
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        let same = (0..theirs.len())
            .find(|&j| unused[j] && launch_disagreements(a, &theirs[j]).is_empty());
        match same {
            Some(j) => unused[j] = false,
            None => out.extend(
                launch_disagreements(a, b)
                    .into_iter()
                    .map(|d| format!("launch {i}: {d}")),
            ),
        }
    }
    out
}

fn launch_disagreements(ours: &Value, theirs: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if ours["workload"] != theirs["workload"] {
        out.push(format!(
            "workload {} vs {}",
            ours["workload"], theirs["workload"]
        ));
    }
    if let Some(names) = ours["names"].as_array() {
        for (name, key) in names.iter().zip(["mangled", "function", "demangled"]) {
            // A report without a demangled name (an OpenACC kernel's, an
            // XLA fusion's): ncu_report shows the mangled name in its place,
            // else the function name (where a corrupt report makes the two
            // differ, NVIDIA's reader takes the mangled one, as ncugate does).
            let name = match name.as_str() {
                Some("") if key == "demangled" && names[0] != "" => &names[0],
                Some("") if key == "demangled" => &names[1],
                _ => name,
            };
            if *name != theirs[key] {
                out.push(format!("{key} name {name} vs {}", theirs[key]));
            }
        }
    }
    let (a, b) = (ours["metrics"].as_object(), theirs["metrics"].as_object());
    let (a, b) = (a.expect("ours"), b.expect("theirs"));
    // A name the report lists twice (F.ncu-rep, a `--set full` report, has
    // three) is one metric to ncu_report; its value must be the last one's,
    // which `metrics` keeps. Refusing such reports is the reader's choice.
    if ours["metric_count"].as_u64() != Some(a.len() as u64) {
        eprintln!(
            "note: {} metric results for {} names (a name listed twice)",
            ours["metric_count"],
            a.len()
        );
    }
    for (name, value) in a {
        match b.get(name) {
            None => out.push(format!("{name}: only ncugate reads it")),
            Some(other) if !same_metric(value, other) => {
                out.push(format!("{name}: {value} vs ncu_report {other}"))
            }
            Some(_) => {}
        }
    }
    out.extend(
        b.keys()
            .filter(|n| !a.contains_key(*n))
            .map(|n| format!("{n}: only ncu_report reads it")),
    );
    out
}

/// Same kind, same value, same instance values: exact for integers and
/// strings, within [`FLOAT_TOLERANCE`] for floats.
fn same_metric(a: &Value, b: &Value) -> bool {
    let (a, b) = (a.as_array().expect("ours"), b.as_array().expect("theirs"));
    let (ia, ib) = (a[2].as_array(), b[2].as_array());
    a[0] == b[0]
        && same_value(&a[1], &b[1])
        && ia.map(Vec::len) == ib.map(Vec::len)
        && ia
            .into_iter()
            .flatten()
            .zip(ib.into_iter().flatten())
            .all(|(x, y)| same_value(x, y))
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= FLOAT_TOLERANCE * x.abs().max(y.abs())
        }
        _ => a == b,
    }
}

#[test]
fn every_committed_report_reads_as_nvidias_reader_reads_it() {
    let Some(python) = oracle_python("every_committed_report_reads_as_nvidias_reader_reads_it")
    else {
        return;
    };
    let files = committed_reports();
    assert!(files.len() >= 16, "only {} committed reports", files.len());
    let (mut launches, mut metrics, mut failures) = (0, 0, Vec::new());
    for (file, theirs) in files.iter().zip(oracle(&python, &files)) {
        let data = std::fs::read(file).expect("fixture");
        let ours = container::read(&data).expect("ncugate reads the fixture");
        assert_eq!(theirs["ok"], true, "{}: {theirs}", file.display());
        let theirs = theirs["launches"].as_array().expect("launches");
        launches += ours.launches.len();
        metrics += ours.launches.iter().map(|l| l.metrics.len()).sum::<usize>();
        let found = disagreements(&native::dump(&ours), theirs);
        failures.extend(found.iter().map(|d| format!("{}: {d}", file.display())));
    }
    eprintln!(
        "compared {} reports, {launches} launches, {metrics} metrics",
        files.len()
    );
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The compressed reports (`.ncu-repz`): each committed one, and each
/// committed `.ncu-rep` of `fixtures/public-ncu-rep/` in every Zstandard
/// layout `ncu_repz::layouts` makes (several frames, skippable frames),
/// inflated by ncugate and read by NVIDIA's reader (which inflates them with
/// libzstd): the same launches, names and every metric value.
#[test]
fn every_compressed_report_reads_as_nvidias_reader_reads_it() {
    let Some(python) = oracle_python("every_compressed_report_reads_as_nvidias_reader_reads_it")
    else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut files = committed_compressed_reports();
    assert!(files.len() >= 2, "only {} committed .ncu-repz", files.len());
    let public = Path::new(ROOT).join("fixtures/public-ncu-rep");
    for entry in std::fs::read_dir(&public)
        .expect("public reports")
        .flatten()
    {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "ncu-rep") {
            continue;
        }
        let rep = std::fs::read(&path).expect("report");
        let stem = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        for (layout, bytes) in crate::ncu_repz::layouts(&rep) {
            let file = dir.path().join(format!("{stem}.{layout}.ncu-repz"));
            std::fs::write(&file, bytes).expect("write");
            files.push(file);
        }
    }
    let (mut launches, mut metrics, mut failures) = (0, 0, Vec::new());
    for (file, theirs) in files.iter().zip(oracle(&python, &files)) {
        let data = std::fs::read(file).expect("report");
        let inflated = zstd::inflate(&data).expect("ncugate inflates it");
        let ours = container::read(&inflated).expect("ncugate reads it");
        assert_eq!(theirs["ok"], true, "{}: {theirs}", file.display());
        let theirs = theirs["launches"].as_array().expect("launches");
        assert!(!theirs.is_empty(), "{}: no launches", file.display());
        launches += ours.launches.len();
        metrics += ours.launches.iter().map(|l| l.metrics.len()).sum::<usize>();
        let found = disagreements(&native::dump(&ours), theirs);
        failures.extend(found.iter().map(|d| format!("{}: {d}", file.display())));
    }
    eprintln!(
        "compared {} compressed reports, {launches} launches, {metrics} metrics",
        files.len()
    );
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A seeded xorshift: the same mutants on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One seeded mutant of `data`: a truncation, 1 to 3 flipped bits, or a
/// span of up to 64 bytes written twice (a duplicated field or message).
fn mutant(data: &[u8], rng: &mut Rng) -> (String, Vec<u8>) {
    let mut out = data.to_vec();
    match rng.below(3) {
        0 => {
            let cut = rng.below(data.len());
            out.truncate(cut);
            (format!("cut at {cut}"), out)
        }
        1 => {
            let mut at = Vec::new();
            for _ in 0..=rng.below(3) {
                let i = rng.below(data.len());
                out[i] ^= 1 << rng.below(8);
                at.push(i);
            }
            (format!("bits flipped at {at:?}"), out)
        }
        _ => {
            let start = rng.below(data.len());
            let end = (start + 1 + rng.below(64)).min(data.len());
            out.splice(end..end, data[start..end].iter().copied());
            (format!("bytes {start}..{end} twice"), out)
        }
    }
}

/// How ncugate's reader ended on a mutant: read, refused, or a panic.
enum Native {
    Read(container::Report),
    Refused(String),
    Panicked,
}

fn native_read(data: &[u8]) -> Native {
    match std::panic::catch_unwind(|| container::read(data)) {
        Ok(Ok(report)) => Native::Read(report),
        Ok(Err(failure)) => Native::Refused(failure.message().to_string()),
        Err(_) => Native::Panicked,
    }
}

/// Mutants where the readers part ways, each reported, not failed on; a new
/// one fails the test. Cause not yet known: ncu_report reads the one launch
/// with no names and no metrics, and says nothing, where ncugate reads them
/// all. (Where ncu_report logs a missing `required` field — a device
/// attribute's name or value in a block header, an instance's value in a
/// result — ncugate now refuses the report too.) This mutant is drawn only
/// with the set of reports it was found in; the entry stays for when it is
/// drawn again.
const UNEXPLAINED: [&str; 1] = ["F.ncu-rep, bits flipped at [980067, 653769, 643215]"];

/// Mutants per committed report: 12 × 16 reports, about 200 a run.
const MUTANTS_PER_REPORT: usize = 12;

#[test]
fn seeded_mutants_read_alike_or_are_refused() {
    let Some(python) = oracle_python("seeded_mutants_read_alike_or_are_refused") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut rng = Rng(0x0005_eed0_f0dd_c0de);
    let (mut files, mut what) = (Vec::new(), Vec::new());
    for report in committed_reports() {
        let data = std::fs::read(&report).expect("fixture");
        for i in 0..MUTANTS_PER_REPORT {
            let (how, bytes) = mutant(&data, &mut rng);
            let name = report.file_name().expect("name").to_string_lossy();
            let file = dir.path().join(format!("{i}.{name}"));
            std::fs::write(&file, bytes).expect("write mutant");
            what.push(format!("{name}, {how}"));
            files.push(file);
        }
    }
    let mut all_failures = Vec::new();
    let mut tally = std::collections::BTreeMap::<&str, usize>::new();
    for ((file, how), theirs) in files.iter().zip(&what).zip(oracle(&python, &files)) {
        let data = std::fs::read(file).expect("mutant");
        let known = UNEXPLAINED.contains(&how.as_str());
        let mut failures_here = Vec::new();
        let failures = &mut failures_here;
        let verdict = match (native_read(&data), theirs["ok"] == true) {
            (Native::Panicked, _) => {
                failures.push(format!("{how}: ncugate panicked"));
                "ncugate panicked"
            }
            (Native::Refused(_), false) => "both refuse",
            (Native::Refused(why), true) => {
                // A truncated or corrupt report NVIDIA's reader reads in part:
                // ncugate refuses it rather than gate on what is left.
                eprintln!("expected: {how}: ncu_report reads it, ncugate refuses: {why}");
                "only ncu_report reads (expected)"
            }
            (Native::Read(_), false) => {
                failures.push(format!(
                    "{how}: ncugate reads what ncu_report refuses: {}",
                    theirs["error"]
                ));
                "only ncugate reads"
            }
            (Native::Read(ours), true) => {
                let found = disagreements(
                    &native::dump(&ours),
                    theirs["launches"].as_array().expect("launches"),
                );
                failures.extend(found.iter().map(|d| format!("{how}: {d}")));
                if found.is_empty() {
                    "both read alike"
                } else {
                    "both read, differently"
                }
            }
        };
        *tally.entry(verdict).or_default() += 1;
        if known && !failures_here.is_empty() {
            eprintln!(
                "unexplained ({} lines): {}",
                failures_here.len(),
                failures_here[0]
            );
        } else {
            all_failures.extend(failures_here);
        }
    }
    let failures = all_failures;
    eprintln!("{} mutants: {tally:?}", files.len());
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Seeded mutants of the committed compressed reports (cut, bits flipped,
/// spans written twice, as [`mutant`] makes them) read with both: ncugate
/// inflates and reads them (never a panic), and must refuse every one
/// NVIDIA's reader refuses, and read alike where both read. ncugate checks
/// the frames' checksums, so it refuses some NVIDIA's reader reads.
#[test]
fn compressed_mutants_read_alike_or_are_refused() {
    let Some(python) = oracle_python("compressed_mutants_read_alike_or_are_refused") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut rng = Rng(0x2e57_d00d_5eed_0042);
    let (mut files, mut what) = (Vec::new(), Vec::new());
    for report in committed_compressed_reports() {
        let data = std::fs::read(&report).expect("fixture");
        for i in 0..MUTANTS_PER_REPORT * 2 {
            let (how, bytes) = mutant(&data, &mut rng);
            let name = report.file_name().expect("name").to_string_lossy();
            let file = dir.path().join(format!("{i}.{name}"));
            std::fs::write(&file, bytes).expect("write mutant");
            what.push(format!("{name}, {how}"));
            files.push(file);
        }
    }
    let mut failures = Vec::new();
    let mut tally = std::collections::BTreeMap::<&str, usize>::new();
    for ((file, how), theirs) in files.iter().zip(&what).zip(oracle(&python, &files)) {
        let data = std::fs::read(file).expect("mutant");
        let ours = std::panic::catch_unwind(|| {
            zstd::inflate(&data)
                .map_err(container::Failure::from)
                .and_then(|inflated| container::read(&inflated))
        });
        let verdict = match (ours, theirs["ok"] == true) {
            (Err(_), _) => {
                failures.push(format!("{how}: ncugate panicked"));
                "ncugate panicked"
            }
            (Ok(Err(_)), false) => "both refuse",
            (Ok(Err(why)), true) => {
                eprintln!("expected: {how}: ncu_report reads it, ncugate refuses: {why:?}");
                "only ncu_report reads (expected)"
            }
            (Ok(Ok(_)), false) => {
                failures.push(format!(
                    "{how}: ncugate reads what ncu_report refuses: {}",
                    theirs["error"]
                ));
                "only ncugate reads"
            }
            (Ok(Ok(report)), true) => {
                let found = disagreements(
                    &native::dump(&report),
                    theirs["launches"].as_array().expect("launches"),
                );
                failures.extend(found.iter().map(|d| format!("{how}: {d}")));
                if found.is_empty() {
                    "both read alike"
                } else {
                    "both read, differently"
                }
            }
        };
        *tally.entry(verdict).or_default() += 1;
    }
    eprintln!("{} compressed mutants: {tally:?}", files.len());
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Fuzz cases per run; `NCUGATE_FUZZ_CASES` raises it locally.
const FUZZ_CASES: usize = 600;

/// A bounded fuzz run of the reader, with no oracle: stacked seeded
/// mutations (1 to 4 of [`mutant`]'s) of the committed reports, each read and,
/// where it reads, printed as ncu's raw and details pages. Never a panic, and
/// the output stays bounded by the input: every launch and every metric
/// result takes at least one byte of the file.
#[test]
fn fuzzed_reports_never_panic_and_stay_bounded() {
    let cases = std::env::var("NCUGATE_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(FUZZ_CASES);
    let reports: Vec<Vec<u8>> = committed_reports()
        .iter()
        .map(|f| std::fs::read(f).expect("fixture"))
        .collect();
    let mut rng = Rng(0xf022_5eed_1234_5678);
    let (mut read, mut refused) = (0, 0);
    for case in 0..cases {
        let mut data = reports[rng.below(reports.len())].clone();
        let mut how = Vec::new();
        for _ in 0..=rng.below(4) {
            if data.is_empty() {
                break;
            }
            let (what, next) = mutant(&data, &mut rng);
            how.push(what);
            data = next;
        }
        match native_read(&data) {
            Native::Panicked => panic!("case {case} ({how:?}): the reader panicked"),
            Native::Refused(_) => refused += 1,
            Native::Read(report) => {
                read += 1;
                let metrics: usize = report.launches.iter().map(|l| l.metrics.len()).sum();
                assert!(report.launches.len() + metrics <= data.len(), "case {case}");
                let pages = std::panic::catch_unwind(|| {
                    let page = ncugate::parse::ncu_rep::raw_page(&report);
                    let rules = ncugate::parse::ncu_rep::details_page(&report);
                    (page.rows.len(), rules.rows.len())
                });
                let (rows, rule_rows) =
                    pages.unwrap_or_else(|_| panic!("case {case} ({how:?}): a page panicked"));
                assert!(rows <= report.launches.len(), "case {case}: {rows} rows");
                assert!(
                    rule_rows <= data.len(),
                    "case {case}: {rule_rows} rule rows"
                );
            }
        }
    }
    eprintln!("{cases} fuzz cases: {read} read, {refused} refused");
    assert!(read > 0 && refused > 0, "{read} read, {refused} refused");
}
