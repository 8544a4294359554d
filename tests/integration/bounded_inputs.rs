//! Files read once and within a size limit: `/dev/zero` and `/dev/urandom`
//! given as an export, a details file, a report (behind a `.ncu-rep` link),
//! a baseline or thresholds are refused with exit 2 and a hint instead of
//! filling memory; a real export is read up to the limit exactly. A named
//! pipe or a process substitution (`--input <(cat run.csv)`) is read once,
//! whole, header and all.

use crate::common::{Gate, Outcome};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The limit the tests set: above every input they read, far below what
/// a device given as a file would fill memory with.
const LIMIT: &str = "67108864";

/// Runs `command`; a run that does not end within a minute (a read that
/// never ends, a pipe opened twice) fails the test instead of hanging it.
fn within_a_minute(mut command: Command) -> Outcome {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ncugate");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ncugate did not end: a file read without end, or opened twice");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output").into()
}

#[test]
fn devices_given_as_files_are_refused_at_the_size_limit() {
    let gate = Gate::recorded();
    std::os::unix::fs::symlink("/dev/zero", gate.path("zero.ncu-rep")).expect("link");
    let cases: [(&str, &[&str]); 7] = [
        (
            "/dev/zero",
            &[
                "check",
                "--baseline",
                "baseline.json",
                "--input",
                "/dev/zero",
            ],
        ),
        (
            "/dev/urandom",
            &[
                "check",
                "--baseline",
                "baseline.json",
                "--input",
                "/dev/urandom",
            ],
        ),
        (
            "zero.ncu-rep",
            &[
                "check",
                "--baseline",
                "baseline.json",
                "--input",
                "zero.ncu-rep",
            ],
        ),
        (
            "/dev/zero",
            &[
                "check",
                "--baseline",
                "baseline.json",
                "--input",
                "base1.csv",
                "--details",
                "/dev/zero",
            ],
        ),
        (
            "/dev/zero",
            &["check", "--baseline", "/dev/zero", "--input", "base1.csv"],
        ),
        (
            "/dev/zero",
            &[
                "check",
                "--baseline",
                "baseline.json",
                "--input",
                "base1.csv",
                "--thresholds",
                "/dev/zero",
            ],
        ),
        (
            "/dev/zero",
            &[
                "baseline",
                "record",
                "--input",
                "/dev/zero",
                "--output",
                "b.json",
            ],
        ),
    ];
    for (file, args) in cases {
        let out = within_a_minute(
            gate.ncugate(args)
                .env("NCUGATE_MAX_INPUT_SIZE", LIMIT)
                .std_command(),
        );
        out.one_clear_error(&format!(
            "{file}: it is larger than the input size limit ({LIMIT} bytes)"
        ))
        .stderr_has("NCUGATE_MAX_INPUT_SIZE=BYTES");
    }
    // A limit that is no size is refused, not ignored.
    let out = within_a_minute(
        gate.ncugate(&[
            "check",
            "--baseline",
            "baseline.json",
            "--input",
            "base1.csv",
        ])
        .env("NCUGATE_MAX_INPUT_SIZE", "64M")
        .std_command(),
    );
    out.one_clear_error("NCUGATE_MAX_INPUT_SIZE=64M");
}

#[test]
fn a_real_export_reads_up_to_the_limit_exactly() {
    // The raw page streams, the details page is read whole: both stop at it.
    let gate = Gate::recorded();
    gate.h200("graph_app.base.full.details.csv", "details.csv");
    for input in ["base1.csv", "details.csv"] {
        let size = std::fs::metadata(gate.path(input)).expect("size").len();
        let run = |limit: u64| {
            within_a_minute(
                gate.check()
                    .baseline("baseline.json")
                    .input(input)
                    .env("NCUGATE_MAX_INPUT_SIZE", limit.to_string())
                    .std_command(),
            )
        };
        let out = run(size);
        assert!(
            !out.stderr.contains("size limit"),
            "{input}: {}",
            out.stderr
        );
        run(size - 1).one_clear_error(&format!(
            "{input}: it is larger than the input size limit ({} bytes)",
            size - 1
        ));
    }
}

/// `name` in the scratch dir made a named pipe that `file` is written into
/// once, by a thread of the test.
fn pipe_of(gate: &Gate, name: &str, file: &str) {
    let path = gate.path(name);
    let status = Command::new("mkfifo").arg(&path).status().expect("mkfifo");
    assert!(status.success());
    let data = std::fs::read(gate.path(file)).expect("file");
    std::thread::spawn(move || {
        if let Ok(mut pipe) = std::fs::OpenOptions::new().write(true).open(&path) {
            let _ = std::io::Write::write_all(&mut pipe, &data);
        }
    });
}

#[test]
fn a_named_pipe_is_read_once_whole() {
    // A baseline was opened once per pass: its second pass found the pipe empty.
    let gate = Gate::recorded();
    let regular = gate
        .check()
        .baseline("baseline.json")
        .input("base1.csv")
        .run();
    regular.code(0);
    for (flag, file) in [("--input", "base1.csv"), ("--baseline", "baseline.json")] {
        pipe_of(&gate, "pipe", file);
        let args = match flag {
            "--input" => ["check", "--baseline", "baseline.json", "--input", "pipe"],
            _ => ["check", "--baseline", "pipe", "--input", "base1.csv"],
        };
        let out = within_a_minute(gate.ncugate(&args).std_command());
        out.code(0);
        assert_eq!(
            out.stdout.replace("pipe", "base1.csv").lines().last(),
            regular.stdout.lines().last(),
            "{flag}"
        );
        std::fs::remove_file(gate.path("pipe")).expect("rm");
    }
}

#[test]
fn a_process_substitution_keeps_its_header() {
    let gate = Gate::recorded();
    let regular = gate
        .check()
        .baseline("baseline.json")
        .input("base1.csv")
        .run();
    let ncugate = gate.check().std_command();
    let program = ncugate.get_program().to_owned();
    for script in [
        r#""$0" check --baseline baseline.json --input <(cat base1.csv)"#,
        r#""$0" check --baseline <(cat baseline.json) --input <(cat base1.csv)"#,
        r#""$0" baseline record --input <(cat base1.csv) --input <(cat base2.csv) --output p.json"#,
    ] {
        let mut bash = Command::new("bash");
        bash.current_dir(gate.dir.path())
            .arg("-c")
            .arg(script)
            .arg(&program);
        let out = within_a_minute(bash);
        out.code(0);
        if script.contains(" check ") {
            assert_eq!(
                out.stdout.lines().last(),
                regular.stdout.lines().last(),
                "{script}"
            );
        }
    }
    let recorded = gate.json("p.json");
    assert_eq!(recorded["kernels"].as_object().map(|k| k.len()), Some(3));
}

#[test]
fn a_pipe_given_as_input_and_details_is_refused_not_waited_on() {
    // Its raw page streamed as the run; its rule results were read by
    // opening it again, which waited for a writer that never came.
    let gate = Gate::recorded();
    pipe_of(&gate, "pipe", "base1.csv");
    let args = [
        "check",
        "--baseline",
        "baseline.json",
        "--input",
        "pipe",
        "--details",
        "pipe",
    ];
    within_a_minute(gate.ncugate(&args).std_command())
        .one_clear_error("cannot read pipe: it can be read only once");
}
