//! Runs one program and measures its wall time and peak RSS.

use std::fs;
use std::io;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Runs `argv[1:]` with stdout sent to stderr, then prints `seconds max_rss_kb exit_code`.
const PY_TIMER: &str = "import resource, subprocess, sys, time\n\
t = time.perf_counter()\n\
r = subprocess.run(sys.argv[1:], stdout=sys.stderr)\n\
e = time.perf_counter() - t\n\
print(e, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)\n";

/// A program to time: its table label, command line and extra environment.
pub struct Subject {
    pub what: &'static str,
    pub argv: Vec<String>,
    pub env: Vec<(&'static str, String)>,
}

/// One run of a subject.
pub struct Measured {
    pub secs: f64,
    /// Peak RSS in KiB, if the meter knows it.
    pub rss_kb: Option<u64>,
    /// What the program wrote to stderr.
    pub stderr: String,
}

/// How a child's time and peak RSS are measured.
#[derive(Clone, Copy, PartialEq)]
pub enum Meter {
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
    pub fn detect(dir: &Path) -> (Meter, Option<u64>) {
        let probe = Subject {
            what: "true",
            argv: vec!["true".into()],
            env: Vec::new(),
        };
        for meter in [Meter::GnuTime, Meter::Python] {
            if let Ok(Measured {
                rss_kb: Some(floor_kb),
                ..
            }) = meter.measure(dir, &probe)
            {
                return (meter, Some(floor_kb));
            }
        }
        (Meter::Unmetered, None)
    }

    pub fn describe(self) -> &'static str {
        match self {
            Meter::GnuTime => "GNU time's %M (the child's ru_maxrss)",
            Meter::Python => {
                "python3's getrusage(RUSAGE_CHILDREN).ru_maxrss, which includes python's own RSS at fork"
            }
            Meter::Unmetered => "nowhere (neither /usr/bin/time nor python3 works here)",
        }
    }

    /// Runs the subject once (stdout discarded).
    pub fn measure(self, dir: &Path, subject: &Subject) -> io::Result<Measured> {
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
                let mut c = Command::new(&argv[0]);
                c.args(&argv[1..]);
                c
            }
        };
        command
            .current_dir(dir)
            .envs(subject.env.iter().map(|(k, v)| (k, v)))
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
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let failed = |why: String| io::Error::other(format!("{}: {why}\n{stderr}", argv.join(" ")));
        if !output.status.success() {
            return Err(failed(format!("{}", output.status)));
        }
        let (secs, rss_kb) = match self {
            Meter::GnuTime => {
                let text = fs::read_to_string(&rss_file)?;
                let _ = fs::remove_file(&rss_file);
                match text.lines().last().map(|l| l.trim().parse()) {
                    Some(Ok(rss_kb)) => (elapsed, Some(rss_kb)),
                    _ => return Err(failed(format!("unexpected GNU time output {text:?}"))),
                }
            }
            Meter::Python => {
                let stdout = String::from_utf8_lossy(&output.stdout);
                let fields: Vec<&str> = stdout.split_whitespace().collect();
                match fields[..] {
                    [secs, rss_kb, "0"] => match (secs.parse(), rss_kb.parse()) {
                        (Ok(secs), Ok(rss_kb)) => (secs, Some(rss_kb)),
                        _ => return Err(failed(format!("unexpected timer output {stdout:?}"))),
                    },
                    [_, _, code] => return Err(failed(format!("exit code {code}"))),
                    _ => return Err(failed(format!("unexpected timer output {stdout:?}"))),
                }
            }
            Meter::Unmetered => (elapsed, None),
        };
        Ok(Measured {
            secs,
            rss_kb,
            stderr,
        })
    }
}
