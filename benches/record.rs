//! Throughput and peak memory of `ncugate baseline record` on a large `--set full` raw export.
//!
//! Run it with:
//!
//! ```text
//! cargo bench --bench record
//! ```
//!
//! (`cargo test --all-targets` also runs it, without `--bench`: then it only checks, on a 2 MB
//! file, that it works.)
//!
//! The input is built once from `fixtures/ncu-reference/h200.graph_app.full.node.raw.csv`
//! (~2,238 quoted columns): its header and units rows, then its 9 data rows repeated, with the
//! `ID` column renumbered, until the file reaches `NCUGATE_BENCH_MB` (default 1100 MB, i.e.
//! more than 1 GiB). A second, smaller file (`NCUGATE_BENCH_SMALL_MB`, default 256; 0 skips
//! it) shows that peak memory does not grow with the input. Both are kept in
//! `target/bench-data/` and reused while their size is right.
//!
//! On each file, best of `NCUGATE_BENCH_RUNS` (default 3) runs of:
//!
//! * `ncugate baseline record --input BIG.csv --thresholds thresholds/set-full.toml` (the
//!   release binary cargo builds for this bench, `CARGO_BIN_EXE_ncugate`);
//! * for context, `cat BIG.csv` to /dev/null (the page-cache read speed), and a plain
//!   `csv::ByteRecord` loop counting records (this binary re-run as a child).
//!
//! Every program runs under GNU `/usr/bin/time -f %M` for its peak RSS (timed here), or, where
//! that is missing, under `python3`, which times it and reads `getrusage(RUSAGE_CHILDREN)`
//! (that reading includes python's own ~14 MB, which the child inherits until it execs);
//! without either, the RSS is shown as unknown. Files are read from the page cache (a warm-up
//! read precedes the runs), so the figures are CPU cost, not disk speed. MB = 10^6 bytes. The
//! result is printed as a Markdown table. Targets: ≥ 800 MB/s on one core, peak RSS < 50 MB
//! whatever the file size.

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const FIXTURE: &str = "fixtures/ncu-reference/h200.graph_app.full.node.raw.csv";
const THRESHOLDS: &str = "thresholds/set-full.toml";
const NCUGATE: &str = env!("CARGO_BIN_EXE_ncugate");
/// Set in the environment of the child that runs the `csv::ByteRecord` loop on the file it names.
const CSV_LOOP_CHILD: &str = "NCUGATE_BENCH_CSV_LOOP";
const NCUGATE_RECORD: &str = "`ncugate baseline record`";
const TARGET_MB_PER_S: f64 = 800.0;
const TARGET_RSS_MB: f64 = 50.0;

/// Runs `argv[1:]` with stdout sent to stderr, then prints `seconds max_rss_kb exit_code`.
const PY_TIMER: &str = "import resource, subprocess, sys, time\n\
t = time.perf_counter()\n\
r = subprocess.run(sys.argv[1:], stdout=sys.stderr)\n\
e = time.perf_counter() - t\n\
print(e, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)\n";

fn main() {
    if let Ok(path) = std::env::var(CSV_LOOP_CHILD) {
        csv_loop_child(Path::new(&path));
        return;
    }
    if let Err(e) = run() {
        eprintln!("record bench failed: {e}");
        std::process::exit(1);
    }
}

/// A program to time: its table label, command line and extra environment variable.
struct Subject<'a> {
    what: &'static str,
    argv: Vec<&'a str>,
    env: Option<(&'static str, &'a str)>,
}

/// One measured row of the table.
struct Figure {
    what: &'static str,
    bytes: u64,
    secs: f64,
    rss_kb: Option<u64>,
}

fn run() -> io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // `cargo bench` passes --bench; `cargo test --all-targets` runs this without it, on a
    // debug build: then only check that the bench works, on a small file.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let (big_mb, small_mb, runs) = if smoke {
        eprintln!("smoke run (not `cargo bench`): a 2 MB file, debug build, figures mean nothing");
        (2, 0, 1)
    } else {
        (
            env_u64("NCUGATE_BENCH_MB", 1100),
            env_u64("NCUGATE_BENCH_SMALL_MB", 256),
            env_u64("NCUGATE_BENCH_RUNS", 3).max(1),
        )
    };
    // target/release/ncugate → target/bench-data
    let data_dir = Path::new(NCUGATE)
        .parent()
        .and_then(Path::parent)
        .unwrap_or(root)
        .join("bench-data");
    fs::create_dir_all(&data_dir)?;
    let fixture = Fixture::read(&root.join(FIXTURE))?;
    let (meter, floor_kb) = Meter::detect(root);
    eprintln!(
        "peak RSS: {}; reads {} MB for `true`",
        meter.describe(),
        fmt_rss(floor_kb)
    );
    let out_json = data_dir.join("baseline.json");

    let mut sizes = vec![big_mb];
    if small_mb > 0 && small_mb != big_mb {
        sizes.push(small_mb);
    }
    let mut figures = Vec::new();
    for mb in sizes {
        let (path, rows) = fixture.ensure_file(&data_dir, mb)?;
        let bytes = fs::metadata(&path)?.len();
        eprintln!("{}: {} bytes, {rows} launches", path.display(), bytes);
        warm_page_cache(&path)?;

        let p = path.to_string_lossy().into_owned();
        let o = out_json.to_string_lossy().into_owned();
        let exe = std::env::current_exe()?.to_string_lossy().into_owned();
        let subjects = [
            Subject {
                what: NCUGATE_RECORD,
                argv: vec![
                    NCUGATE,
                    "baseline",
                    "record",
                    "--input",
                    &p,
                    "--thresholds",
                    THRESHOLDS,
                    "--output",
                    &o,
                ],
                env: None,
            },
            Subject {
                what: "`csv::ByteRecord` loop",
                argv: vec![&exe],
                env: Some((CSV_LOOP_CHILD, &p)),
            },
            Subject {
                what: "`cat` > /dev/null",
                argv: vec!["cat", &p],
                env: None,
            },
        ];
        for subject in subjects {
            let mut best: Option<(f64, Option<u64>)> = None;
            for _ in 0..runs {
                let (secs, rss_kb) = meter.measure(root, &subject)?;
                eprintln!(
                    "  {}: {secs:.3} s, {:.0} MB/s, peak RSS {}",
                    subject.what,
                    mb_per_s(bytes, secs),
                    fmt_rss(rss_kb)
                );
                if best.is_none_or(|(b, _)| secs < b) {
                    best = Some((secs, rss_kb));
                }
                if subject.what == NCUGATE_RECORD {
                    check_launches(&out_json, rows);
                }
            }
            let (secs, rss_kb) = best.unwrap_or((f64::NAN, None));
            figures.push(Figure {
                what: subject.what,
                bytes,
                secs,
                rss_kb,
            });
        }
    }
    print_table(&figures, runs, meter, floor_kb, !smoke);
    Ok(())
}

/// The fixture split into its header + units rows and its data rows (without their `ID` field).
struct Fixture {
    head: Vec<u8>,
    /// Each data row after its first field, from the comma on, newline included.
    rows: Vec<Vec<u8>>,
}

impl Fixture {
    fn read(path: &Path) -> io::Result<Fixture> {
        let text = fs::read(path)?;
        let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
        if lines.len() < 3 {
            return Err(io::Error::other(format!(
                "{}: expected a header, a units row and data rows",
                path.display()
            )));
        }
        let head = lines[..2].concat();
        let mut rows = Vec::new();
        for line in &lines[2..] {
            // The ID field is a quoted integer such as "0": no comma inside it.
            let comma = line
                .iter()
                .position(|&b| b == b',')
                .ok_or_else(|| io::Error::other("a data row without commas"))?;
            let mut row = line[comma..].to_vec();
            if !row.ends_with(b"\n") {
                row.push(b'\n');
            }
            rows.push(row);
        }
        Ok(Fixture { head, rows })
    }

    /// Writes (or reuses) the file of at least `mb` MB; returns its path and launch count.
    fn ensure_file(&self, dir: &Path, mb: u64) -> io::Result<(PathBuf, u64)> {
        let path = dir.join(format!("full-set-{mb}mb.raw.csv"));
        let mut counter = CountingSink(0);
        let rows = self.write(&mut counter, mb)?;
        if fs::metadata(&path).is_ok_and(|m| m.len() == counter.0) {
            return Ok((path, rows));
        }
        eprintln!("writing {} ({} bytes)", path.display(), counter.0);
        let tmp = path.with_extension("tmp");
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        self.write(&mut out, mb)?;
        out.into_inner()
            .map_err(io::IntoInnerError::into_error)?
            .sync_all()?;
        fs::rename(&tmp, &path)?;
        Ok((path, rows))
    }

    /// Header, units, then data rows until at least `mb` MB are written; returns the row count.
    fn write(&self, out: &mut impl Write, mb: u64) -> io::Result<u64> {
        let target = mb * 1_000_000;
        out.write_all(&self.head)?;
        let mut written = self.head.len() as u64;
        let mut id = 0u64;
        for row in self.rows.iter().cycle() {
            if written >= target {
                break;
            }
            let quoted_id = format!("\"{id}\"");
            out.write_all(quoted_id.as_bytes())?;
            out.write_all(row)?;
            written += (quoted_id.len() + row.len()) as u64;
            id += 1;
        }
        Ok(id)
    }
}

/// A writer that only counts, to know a file's size without writing it.
struct CountingSink(u64);

impl Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reads the file once so the timed runs read it from the page cache.
fn warm_page_cache(path: &Path) -> io::Result<()> {
    let mut file = File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    while file.read(&mut buf)? > 0 {}
    Ok(())
}

/// How a child's time and peak RSS are measured.
#[derive(Clone, Copy, PartialEq)]
enum Meter {
    /// `/usr/bin/time -f %M` (GNU time) runs the child; the time is taken here.
    GnuTime,
    /// `python3` runs the child and times it; RSS from `getrusage(RUSAGE_CHILDREN)`.
    Python,
    /// The child runs directly; its RSS is unknown.
    Unmetered,
}

impl Meter {
    /// The first meter that works here, and what it reads for `true` (the floor of its readings:
    /// a child's peak RSS includes what its parent had mapped when it was spawned).
    fn detect(dir: &Path) -> (Meter, Option<u64>) {
        let probe = Subject {
            what: "true",
            argv: vec!["true"],
            env: None,
        };
        for meter in [Meter::GnuTime, Meter::Python] {
            if let Ok((_, Some(floor_kb))) = meter.measure(dir, &probe) {
                return (meter, Some(floor_kb));
            }
        }
        (Meter::Unmetered, None)
    }

    fn describe(self) -> &'static str {
        match self {
            Meter::GnuTime => "GNU time's %M (the child's ru_maxrss)",
            Meter::Python => {
                "python3's getrusage(RUSAGE_CHILDREN).ru_maxrss, which includes python's own RSS at fork"
            }
            Meter::Unmetered => "nowhere (neither /usr/bin/time nor python3 works here)",
        }
    }

    /// Runs the subject once (stdout discarded); returns wall seconds and peak RSS in KiB if known.
    fn measure(self, dir: &Path, subject: &Subject) -> io::Result<(f64, Option<u64>)> {
        let argv = &subject.argv;
        let rss_file =
            std::env::temp_dir().join(format!("ncugate-bench-rss-{}", std::process::id()));
        let mut command = match self {
            Meter::GnuTime => {
                let mut c = Command::new("/usr/bin/time");
                c.arg("-f").arg("%M").arg("-o").arg(&rss_file).args(argv);
                c
            }
            Meter::Python => {
                let mut c = Command::new("python3");
                c.arg("-c").arg(PY_TIMER).args(argv);
                c
            }
            Meter::Unmetered => {
                let mut c = Command::new(argv[0]);
                c.args(&argv[1..]);
                c
            }
        };
        command
            .current_dir(dir)
            .envs(subject.env)
            .stdin(Stdio::null())
            .stderr(Stdio::piped());
        command.stdout(if self == Meter::Python {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        let start = Instant::now();
        let output = command.output()?;
        let elapsed = start.elapsed().as_secs_f64();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let failed = |why: String| io::Error::other(format!("{}: {why}\n{stderr}", argv.join(" ")));
        if !output.status.success() {
            return Err(failed(format!("{}", output.status)));
        }
        match self {
            Meter::GnuTime => {
                let text = fs::read_to_string(&rss_file)?;
                let _ = fs::remove_file(&rss_file);
                match text.lines().last().map(|l| l.trim().parse()) {
                    Some(Ok(rss_kb)) => Ok((elapsed, Some(rss_kb))),
                    _ => Err(failed(format!("unexpected GNU time output {text:?}"))),
                }
            }
            Meter::Python => {
                let stdout = String::from_utf8_lossy(&output.stdout);
                let fields: Vec<&str> = stdout.split_whitespace().collect();
                match fields[..] {
                    [secs, rss_kb, "0"] => match (secs.parse(), rss_kb.parse()) {
                        (Ok(secs), Ok(rss_kb)) => Ok((secs, Some(rss_kb))),
                        _ => Err(failed(format!("unexpected timer output {stdout:?}"))),
                    },
                    [_, _, code] => Err(failed(format!("exit code {code}"))),
                    _ => Err(failed(format!("unexpected timer output {stdout:?}"))),
                }
            }
            Meter::Unmetered => Ok((elapsed, None)),
        }
    }
}

/// Child mode: count the records of `path` with a plain `csv::ByteRecord` loop.
fn csv_loop_child(path: &Path) {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            std::process::exit(2);
        }
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(file);
    let mut record = csv::ByteRecord::new();
    let mut records = 0u64;
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(true) => records += 1,
            Ok(false) => break,
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                std::process::exit(2);
            }
        }
    }
    println!("{records} records");
}

/// Warns when the baseline's launch count is not the number of data rows written.
fn check_launches(baseline: &Path, rows: u64) {
    let launches = fs::read(baseline)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| {
            v.pointer("/total/launches/mean")
                .and_then(serde_json::Value::as_f64)
        });
    match launches {
        Some(n) if (n - rows as f64).abs() < 0.5 => {}
        Some(n) => eprintln!("  warning: the baseline has {n} launches, the file {rows}"),
        None => eprintln!(
            "  warning: no total.launches.mean in {}",
            baseline.display()
        ),
    }
}

fn print_table(figures: &[Figure], runs: u64, meter: Meter, floor_kb: Option<u64>, verdicts: bool) {
    println!();
    println!("| What (best of {runs}) | File size (MB) | Seconds | MB/s | Peak RSS (MB) |");
    println!("|---|---:|---:|---:|---:|");
    for f in figures {
        println!(
            "| {} | {:.0} | {:.3} | {:.0} | {} |",
            f.what,
            f.bytes as f64 / 1e6,
            f.secs,
            mb_per_s(f.bytes, f.secs),
            fmt_rss(f.rss_kb)
        );
    }
    println!();
    println!(
        "MB = 10^6 bytes; files read from the page cache; peak RSS from {}.",
        meter.describe()
    );
    if let Some(kb) = floor_kb {
        println!(
            "The same measure reads {} MB for `true`: no reading can be lower.",
            fmt_rss(Some(kb))
        );
    }
    if !verdicts {
        return;
    }
    println!();
    for f in figures.iter().filter(|f| f.what == NCUGATE_RECORD) {
        let speed = mb_per_s(f.bytes, f.secs);
        let speed_ok = if speed >= TARGET_MB_PER_S {
            "meets"
        } else {
            "MISSES"
        };
        let rss_ok = match f.rss_kb.map(rss_mb) {
            Some(mb) if mb < TARGET_RSS_MB => "meets",
            Some(_) => "MISSES",
            None => "cannot check",
        };
        let rss = f
            .rss_kb
            .map_or_else(|| "unknown".into(), |kb| format!("{:.1} MB", rss_mb(kb)));
        println!(
            "{:.0} MB file: {speed:.0} MB/s {speed_ok} the {TARGET_MB_PER_S:.0} MB/s target; \
             peak RSS {rss} {rss_ok} the {TARGET_RSS_MB:.0} MB target",
            f.bytes as f64 / 1e6,
        );
    }
}

fn mb_per_s(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / 1e6 / secs
}

/// getrusage reports KiB on Linux; MB here are 10^6 bytes.
fn rss_mb(rss_kb: u64) -> f64 {
    rss_kb as f64 * 1024.0 / 1e6
}

fn fmt_rss(rss_kb: Option<u64>) -> String {
    rss_kb.map_or_else(|| "unknown".into(), |kb| format!("{:.1}", rss_mb(kb)))
}

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            eprintln!("{name}={v:?} is not a whole number; using {default}");
            default
        }),
        Err(_) => default,
    }
}
