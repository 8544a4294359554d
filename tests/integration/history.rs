//! The history store, driven through the real binary against SQLite and a
//! throwaway PostgreSQL cluster alike: migration from an empty database,
//! record and re-record (one run), what becomes baseline material and
//! `accept`, 20 concurrent writers with no run lost, a damaged store and an
//! unreachable one (exit 2 with a hint, never a pass). The PostgreSQL tests
//! start their own cluster (`initdb` + `pg_ctl`, Unix socket only, in a temp
//! folder; as `nobody` when run as root, which PostgreSQL refuses); a machine
//! without the server fails them with what to install.

use crate::common::Gate;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A gate folder with `pass.json` (a passing check of the reference app's
/// base run) and `regression.json` (its unfolded-loop variant, a regression).
fn reports() -> Gate {
    let g = Gate::recorded();
    let pass = g
        .check()
        .baseline("baseline.json")
        .input("base1.csv")
        .json("pass.json")
        .run();
    assert_eq!(pass.code, 0, "{}", pass.stderr);
    g.h200("graph_app.unfolded-loop.fast.raw.csv", "unfolded.csv");
    let regression = g
        .check()
        .baseline("baseline.json")
        .input("unfolded.csv")
        .json("regression.json")
        .run();
    assert_eq!(regression.code, 1, "{}", regression.stderr);
    g
}

/// `ncugate history record REPORT --commit C --branch B --history URL`, all on one day.
fn record(g: &Gate, url: &str, report: &str, commit: &str, branch: &str) -> crate::common::Outcome {
    g.history_record(url, report, (commit, branch, "2026-12-01T00:00:00Z"))
}

/// The series as `history show --json` prints them.
fn series(g: &Gate, url: &str, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["history", "show", "--json", "--history", url];
    args.extend_from_slice(extra);
    let out = g.run(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    doc["series"].as_array().expect("series").clone()
}

/// (commit, accepted, outcome) of each run in the first series.
fn runs(g: &Gate, url: &str) -> Vec<(String, bool, String)> {
    let all = series(g, url, &[]);
    assert!(!all.is_empty(), "no series");
    all[0]["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|p| {
            (
                p["commit"].as_str().expect("commit").to_string(),
                p["accepted"].as_bool().expect("accepted"),
                p["outcome"].as_str().expect("outcome").to_string(),
            )
        })
        .collect()
}

/// The scenarios every store passes; `fresh(name)` is the URL of a new, empty database.
fn scenarios(fresh: &dyn Fn(&str) -> String) {
    let g = reports();

    // From an empty database to the current schema, then one run, then the same one again.
    let url = fresh("record");
    let out = record(&g, &url, "pass.json", "c1", "main");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("1 added, 0 already recorded"),
        "{}",
        out.stdout
    );
    let again = record(&g, &url, "pass.json", "c1", "main");
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again.stdout.contains("0 added, 1 already recorded"),
        "{}",
        again.stdout
    );
    assert_eq!(
        runs(&g, &url),
        [("c1".to_string(), true, "pass".to_string())]
    );
    let shown = g.run(&["history", "show", "--history", &url]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert!(shown.stdout.contains("default on "), "{}", shown.stdout);
    assert!(
        shown
            .stdout
            .contains("[1 runs, 1 accepted, last c1 on main]"),
        "{}",
        shown.stdout
    );

    // A regression on main and a pass on a branch are kept, but are no baseline
    // material until accepted.
    assert_eq!(record(&g, &url, "regression.json", "c2", "main").code, 0);
    let branch = record(&g, &url, "pass.json", "c3", "feature");
    assert!(
        branch.stdout.contains("no baseline material"),
        "{}",
        branch.stdout
    );
    assert_eq!(
        runs(&g, &url),
        [
            ("c1".to_string(), true, "pass".to_string()),
            ("c2".into(), false, "regression".into()),
            ("c3".into(), false, "pass".into()),
        ]
    );
    let accepted = g.run(&["history", "accept", "c2", "--history", &url]);
    assert_eq!(accepted.code, 0, "{}", accepted.stderr);
    assert!(runs(&g, &url)[1].1, "c2 accepted");
    let unknown = g.run(&["history", "accept", "nope", "--history", &url]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("no run of commit `nope`"),
        "{}",
        unknown.stderr
    );
    // Another report of the same workload, GPU and commit (a re-run job) replaces the run.
    let rerun = record(&g, &url, "regression.json", "c3", "feature");
    assert_eq!(rerun.code, 0, "{}", rerun.stderr);
    assert!(
        rerun
            .stdout
            .contains("0 added, 0 already recorded, 1 replaced"),
        "{}",
        rerun.stdout
    );
    assert_eq!(
        runs(&g, &url)[2],
        ("c3".to_string(), false, "regression".to_string())
    );
    let last = series(&g, &url, &["--last", "2"]);
    assert_eq!(last[0]["points"].as_array().expect("points").len(), 2);

    // A workload that last ran on main a month before c1 and c2 is stale, by days and by commits.
    g.history_record(&url, "pass.json", ("c0", "main", "2026-11-01T00:00:00Z"))
        .code(0);
    g.run(&[
        "history",
        "record",
        "pass.json",
        "--workload",
        "gone",
        "--commit",
        "c0",
        "--branch",
        "main",
        "--time",
        "2026-11-01T00:00:00Z",
        "--history",
        &url,
    ])
    .code(0);
    let stale = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["history", "changes", "--json", "--history", url.as_str()];
        args.extend_from_slice(extra);
        let out = g.run(&args);
        out.code(0);
        let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
        doc["stale"]
            .as_array()
            .expect("stale")
            .iter()
            .map(|s| format!("{} {}", s["workload"].as_str().unwrap_or(""), s["commits"]))
            .collect()
    };
    // By days (14, the default) `default` goes stale too once its 2026-12-01 runs are old.
    assert!(stale(&[]).contains(&"gone 2".to_string()), "14 days");
    assert_eq!(stale(&["--stale-after", "1c"]), ["gone 2"]);
    assert!(stale(&["--stale-after", "2c"]).is_empty());

    // 20 writers at once, each its own commit: 20 runs.
    let url = fresh("concurrent");
    let children: Vec<_> = (0..20)
        .map(|i| {
            let commit = format!("k{i:02}");
            g.ncugate(&["history", "record", "pass.json"])
                .args(&["--commit", &commit, "--branch", "main"])
                .history(&url)
                .std_command()
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn ncugate")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("wait");
        assert!(
            out.status.success(),
            "a writer failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        runs(&g, &url).len(),
        20,
        "runs lost among concurrent writers"
    );
}

/// One error line and a hint, exit 2.
/// Thresholds that let one step of the unfolded-loop variant (+45% kernel
/// time) pass (`max_change = "50%"`) and hold the drift since the anchor to 25%.
const CREEP: &str = "[[rule]]\nmetric = \"gpu__time_duration.sum\"\nper = \"kernel\"\naggregate = \"sum\"\nworse = \"higher\"\nmax_change = \"50%\"\nmax_drift = \"25%\"\n";

/// `check --history URL ARGS` (the data and the rest in `args`).
fn check_with_history(g: &Gate, url: &str, args: &[&str]) -> crate::common::Outcome {
    g.check().history(url).args(args).run()
}

/// `check` of `input` against the rolling baseline with `creep.toml`'s
/// rules, recording nothing; `extra` after.
fn check_creep(g: &Gate, url: &str, input: &str, extra: &[&str]) -> crate::common::Outcome {
    g.check()
        .history(url)
        .baseline("history")
        .input(input)
        .thresholds("creep.toml")
        .args(&["--history-record", "never"])
        .args(extra)
        .run()
}

/// The rolling baseline (`--baseline history --window N`), the check's own
/// run recorded on an accepted branch only, and creep since an anchor.
fn rolling_baseline_and_creep(fresh: &dyn Fn(&str) -> String) {
    let g = reports();
    g.write("creep.toml", CREEP);
    let url = fresh("rolling");

    // No accepted run yet: exit 2 with what to do, never a pass.
    let empty = record(&g, &url, "regression.json", "c0", "main");
    assert_eq!(empty.code, 0, "{}", empty.stderr);
    let none = check_with_history(&g, &url, &["--baseline", "history", "--input", "base2.csv"]);
    none.one_clear_error("has no accepted run of workload `default`");

    // Two accepted runs of the base build: the baseline is theirs, and says so.
    g.two_accepted_runs(&url);
    let pass = check_with_history(
        &g,
        &url,
        &[
            "--baseline",
            "history",
            "--input",
            "base2.csv",
            "--commit",
            "c3",
            "--branch",
            "main",
        ],
    );
    pass.code(0)
        .stdout_has("baseline:   history ")
        .stdout_has("the last 2 accepted run(s) of workload `default` on this GPU, commits c1, c2")
        .stdout_has("this run is recorded as commit c3 on main (baseline material)");

    // The same rules as a recorded baseline: the unfolded loop fails as it does against a file.
    let regression = check_with_history(
        &g,
        &url,
        &[
            "--baseline",
            "history",
            "--window",
            "2",
            "--input",
            "unfolded.csv",
            "--commit",
            "c4",
            "--branch",
            "main",
        ],
    );
    regression
        .code(1)
        .stdout_has("commits c2, c3")
        .stdout_has("sm__inst_executed.sum (sum) [FAIL]: +174.3%")
        .stdout_has("trend of sm__inst_executed.sum on void scale<1>")
        .stdout_has("this run is recorded as commit c4 on main (not baseline material)");

    // A pull request's build reads the history and writes nothing, unless asked.
    let before = runs(&g, &url).len();
    let pr = g
        .check()
        .history(&url)
        .baseline("history")
        .input("base2.csv")
        .env("GITHUB_SHA", "c5")
        .env("GITHUB_REF_NAME", "12/merge")
        .run();
    pr.code(0).stdout_has("this run is not recorded");
    assert_eq!(runs(&g, &url).len(), before, "a PR build wrote the history");
    let asked = g
        .check()
        .history(&url)
        .baseline("history")
        .input("base2.csv")
        .args(&["--history-record", "always"])
        .env("GITHUB_SHA", "c5")
        .env("GITHUB_REF_NAME", "12/merge")
        .run();
    asked
        .code(0)
        .stdout_has("recorded as commit c5 on 12/merge (not baseline material)");

    // Creep: one step of +45% is within max_change = 50%, but the kernel
    // drifted +45% since the anchor c1, past max_drift = 25%.
    check_creep(&g, &url, "unfolded.csv", &["--anchor", "c1"])
        .code(1)
        .stdout_has("drift since c1: +45% over 3 commits (each within +50%), allowed +25%");
    // Without the anchor the same step passes: the drift is what failed it.
    check_creep(&g, &url, "unfolded.csv", &[]).code(0);
    // An anchor the history does not have is an error, not an unchecked creep.
    check_creep(&g, &url, "base2.csv", &["--anchor", "v0.9"]).one_clear_error("at anchor `v0.9`");

    // The trend page: a chart per series, the allowance band where a rule has max_change.
    let page = g.run(&[
        "history",
        "show",
        "--history",
        &url,
        "--kernel",
        "finish",
        "--metric",
        "gpu__time",
        "--html",
        "trends",
    ]);
    page.code(0)
        .stdout_has("trends of 1 series on 1 page(s) written to trends/index.html");
    // An index, a page per workload × GPU and the stylesheet: no inline style
    // (Jenkins' Content-Security-Policy blocks them).
    let index = g.read("trends/index.html");
    assert!(index.contains("href=\"trends-1.html\""), "{index}");
    let html = g.read("trends/trends-1.html");
    for page in [&index, &html] {
        assert!(
            !page.contains("<style") && !page.contains(" style=\""),
            "{page}"
        );
        assert!(
            page.contains("<link rel=\"stylesheet\" href=\"style.css\">"),
            "{page}"
        );
    }
    assert!(g.path("trends/style.css").exists());
    assert_eq!(html.matches("<svg").count(), 1, "{html}");
    assert!(html.contains("fill=\"#CFD8DC\""), "no band: {html}");
    assert!(
        html.contains("void finish&lt;float&gt;"),
        "names are escaped"
    );
}

fn assert_store_error(out: &crate::common::Outcome, says: &str) {
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stderr);
    assert!(
        lines[0].starts_with("ncugate: error: history store "),
        "{}",
        out.stderr
    );
    assert!(lines[0].contains(says), "{}", out.stderr);
    assert!(lines[1].starts_with("hint: "), "{}", out.stderr);
}

#[test]
fn the_sqlite_store_keeps_every_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().to_path_buf();
    scenarios(&|name| {
        let path = root.join(format!("{name}.sqlite"));
        if name == "record" {
            // An empty file is an empty SQLite database: migrated, not refused.
            std::fs::write(&path, "").expect("write");
        }
        format!("sqlite:{}", path.display())
    });
    rolling_baseline_and_creep(&|name| {
        format!("sqlite:{}", root.join(format!("{name}.sqlite")).display())
    });
    assert_schema_is_current(&root.join("record.sqlite"));
}

/// The SQLite store at `path` is at the schema version this ncugate writes.
fn assert_schema_is_current(path: &Path) {
    let db = rusqlite::Connection::open(path).expect("open");
    let version: i64 = db
        .query_row("SELECT MAX(version) FROM schema_version", [], |r| r.get(0))
        .expect("schema_version");
    assert_eq!(version, ncugate::history::store::SCHEMA_VERSION);
}

#[test]
fn a_damaged_or_missing_sqlite_store_is_an_error() {
    let g = reports();
    g.write(
        "junk.sqlite",
        "this is not a database, just text that is long enough to have a header page\n".repeat(64),
    );
    let out = record(&g, "sqlite:junk.sqlite", "pass.json", "c1", "main");
    assert_store_error(&out, "sqlite:junk.sqlite");
    assert!(out.stderr.contains("move it away"), "{}", out.stderr);
    let out = record(
        &g,
        "sqlite:no/such/folder/h.sqlite",
        "pass.json",
        "c1",
        "main",
    );
    assert_store_error(&out, "unable to open");
    let out = g.run(&["history", "show", "--history", "sqlite:missing.sqlite"]);
    assert_store_error(&out, "no such file");
    assert!(!g.path("missing.sqlite").exists(), "show creates nothing");
}

#[test]
fn an_edited_report_records_nothing() {
    let g = reports();
    let edited = g
        .read("regression.json")
        .replacen("\"outcome\": \"regression\"", "\"outcome\": \"pass\"", 1)
        .replacen("\"exit_code\": 1", "\"exit_code\": 0", 1);
    assert_ne!(edited, g.read("regression.json"));
    g.write("edited.json", edited);
    let out = record(&g, "sqlite:h.sqlite", "edited.json", "c1", "main");
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("its checks make it regression"),
        "{}",
        out.stderr
    );
    assert!(!g.path("h.sqlite").exists(), "nothing written");
}

#[test]
fn the_url_comes_from_the_flag_the_variable_or_the_file() {
    let g = reports();
    g.write(
        "ncugate.toml",
        "[history]\nurl = \"sqlite:from-file.sqlite\"\nbranches = [\"release\"]\n",
    );
    let out = g.run(&[
        "history",
        "record",
        "pass.json",
        "--commit",
        "c1",
        "--branch",
        "release",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("1 baseline material"), "{}", out.stdout);
    assert!(g.path("from-file.sqlite").exists());
    let env = g.run_with(
        &[
            "history",
            "record",
            "pass.json",
            "--commit",
            "c1",
            "--branch",
            "main",
        ],
        &[("NCUGATE_HISTORY", "sqlite:from-env.sqlite")],
    );
    assert_eq!(env.code, 0, "{}", env.stderr);
    assert!(
        env.stdout.contains("0 baseline material"),
        "main is not [history] branches: {}",
        env.stdout
    );
    assert!(g.path("from-env.sqlite").exists());
    let bad = g.run(&["history", "show", "--history", "mysql://x"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("not a history URL"), "{}", bad.stderr);
}

/// A throwaway PostgreSQL cluster listening on a Unix socket in a temp folder.
struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
}

impl Cluster {
    fn start() -> Cluster {
        let bin = pg_bin();
        let dir = tempfile::tempdir().expect("temp dir");
        // The server may run as `nobody`: it must reach and write the folder.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
            .expect("chmod");
        let cluster = Cluster { dir, bin };
        let data = cluster.data();
        cluster.pg(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "ncugate",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
            ],
        );
        let options = format!(
            "-k {} -c listen_addresses='' -c fsync=off -p 5432",
            cluster.dir.path().display()
        );
        let log = cluster.dir.path().join("server.log").display().to_string();
        cluster.pg(
            "pg_ctl",
            &["-D", &data, "-l", &log, "-w", "-o", &options, "start"],
        );
        cluster
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// Runs a server program, as `nobody` when this process is root.
    fn pg(&self, program: &str, args: &[&str]) {
        let exe = self.bin.join(program);
        // SAFETY: geteuid has no preconditions and cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        let mut cmd = if root {
            let mut c = Command::new("runuser");
            c.args(["-u", "nobody", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let out = cmd
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .unwrap_or_else(|e| panic!("run {}: {e}", exe.display()));
        assert!(
            out.status.success(),
            "{program} {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The URL of database `name` (`postgres` is always there).
    fn url(&self, name: &str) -> String {
        let socket = self.dir.path().display().to_string().replace('/', "%2F");
        format!("postgresql://ncugate@{socket}:5432/{name}")
    }

    /// A new, empty database.
    fn fresh(&self, name: &str) -> String {
        let mut admin = postgres::Client::connect(&self.url("postgres"), postgres::NoTls)
            .expect("connect to the test cluster");
        admin
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .expect("create database");
        self.url(name)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data();
        self.pg("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
    }
}

/// The folder of the server's programs: the newest /usr/lib/postgresql/*/bin,
/// else `initdb` on PATH. None is a failure that says what to install.
fn pg_bin() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("initdb").is_file() && bin.join("pg_ctl").is_file())
        .collect();
    found.sort_by_key(|p| {
        p.parent()
            .and_then(Path::file_name)
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    if let Some(bin) = found.pop() {
        return bin;
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file());
    on_path.unwrap_or_else(|| {
        panic!(
            "the PostgreSQL server (initdb, pg_ctl) is not installed: the history tests start a throwaway cluster; install it (Debian/Ubuntu: `apt-get install postgresql`, Fedora: `dnf install postgresql-server`) and run the tests again"
        )
    })
}

#[test]
fn the_postgres_store_keeps_every_run() {
    let cluster = Cluster::start();
    scenarios(&|name| cluster.fresh(name));
    rolling_baseline_and_creep(&|name| cluster.fresh(name));
    crate::suite::suite_history(&|name| cluster.fresh(name));
    crate::skip::skip_store(&|name| cluster.fresh(name));
    let mut client =
        postgres::Client::connect(&cluster.url("record"), postgres::NoTls).expect("connect");
    let version: i64 = client
        .query_one("SELECT MAX(version) FROM schema_version", &[])
        .expect("schema_version")
        .get(0);
    assert_eq!(version, ncugate::history::store::SCHEMA_VERSION);

    // A database whose tables are not the history's, and a newer schema: exit 2.
    let g = reports();
    let url = cluster.fresh("foreign");
    let mut foreign = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
    foreign
        .batch_execute("CREATE TABLE schema_version (version BIGINT NOT NULL); INSERT INTO schema_version VALUES (1); CREATE TABLE runs (x INTEGER);")
        .expect("foreign tables");
    assert_store_error(
        &record(&g, &url, "pass.json", "c1", "main"),
        "does not exist",
    );
    foreign
        .batch_execute("INSERT INTO schema_version VALUES (7)")
        .expect("newer");
    assert_store_error(
        &record(&g, &url, "pass.json", "c1", "main"),
        "schema version 7 is newer",
    );

    // Nothing listens there: refused, exit 2.
    let nowhere = tempfile::tempdir().expect("temp dir");
    let url = format!(
        "postgresql://ncugate@{}:5432/postgres",
        nowhere.path().display().to_string().replace('/', "%2F")
    );
    let out = record(&g, &url, "pass.json", "c1", "main");
    assert_store_error(&out, "cannot connect");
    let out = g.run(&[
        "history",
        "show",
        "--history",
        "postgresql://ncugate:secret@127.0.0.1:1/x",
    ]);
    assert_store_error(&out, "cannot connect");
    assert!(
        !out.stderr.contains("secret"),
        "the password is not shown: {}",
        out.stderr
    );
}

#[test]
fn changes_name_the_commit_where_a_count_moved() {
    let g = reports();
    let url = "sqlite:h.sqlite";
    for (report, commit) in [
        ("pass.json", "c1"),
        ("pass.json", "c2"),
        ("regression.json", "c3"),
        ("pass.json", "c4"),
    ] {
        assert_eq!(record(&g, url, report, commit, "main").code, 0);
    }
    let out = g.run(&[
        "history",
        "changes",
        "--metric",
        "sm__inst_executed.sum",
        "--json",
        "--history",
        url,
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let changes: Vec<(&str, &str)> = doc["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            (
                c["commit"].as_str().expect("commit"),
                c["test"].as_str().expect("test"),
            )
        })
        .collect();
    // The total's instruction count moved at c3 and back at c4; no kernel
    // that ran in both moved, and the regressed one runs under another key.
    assert_eq!(
        changes,
        [("c3", "exact"), ("c4", "exact")],
        "{}",
        out.stdout
    );
    let args = [
        "history",
        "changes",
        "--metric",
        "sm__inst_executed.sum",
        "--history",
        url,
    ];
    // In a CI log (100 columns) every line fits.
    let logged = g.run(&args);
    assert!(
        logged.stdout.lines().all(|l| l.chars().count() <= 100),
        "{}",
        logged.stdout
    );
    let text = g.run_with(&args, &[("COLUMNS", "200")]);
    assert!(
        text.stdout.contains(
            "c3 (main) · (total) · sm__inst_executed.sum: 132.12M inst → 228.07M inst (+72.6%)"
        ),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("[a count: differs from the run before]"),
        "{}",
        text.stdout
    );
}

#[test]
fn a_version_1_store_is_migrated_with_its_runs() {
    use ncugate::history::store::{Dialect, MIGRATIONS, migration_sql};
    let g = reports();
    let path = g.path("v1.sqlite");
    {
        let db = rusqlite::Connection::open(&path).expect("open");
        db.execute_batch(&migration_sql(MIGRATIONS[0], Dialect::Sqlite))
            .expect("version 1 schema");
        db.execute_batch(
            "CREATE TABLE schema_version (version BIGINT NOT NULL); INSERT INTO schema_version VALUES (1);
             INSERT INTO series VALUES (1, 'default', 'NVIDIA H200 (CC 9.0, 132 SMs)', 'k', 'r', 'm', 'sum', 'inst');
             INSERT INTO runs VALUES (1, 'default', 'NVIDIA H200 (CC 9.0, 132 SMs)', 'c0', 'main', 0, 'regression', 'x', 0);
             INSERT INTO run_values VALUES (1, 1, 2.0, '', 'fail');",
        )
        .expect("a version 1 run");
    }
    let url = format!("sqlite:{}", path.display());
    assert_eq!(record(&g, &url, "pass.json", "c1", "main").code, 0);
    let all = series(&g, &url, &["--kernel", "k"]);
    let points = all[0]["points"].as_array().expect("points");
    assert_eq!(points[0]["status"], "fail", "{points:?}");
    assert_eq!(points[0]["commit"], "c0");
    assert_schema_is_current(&path);
}

#[test]
fn ncugate_toml_names_the_history_baseline_window_and_anchor() {
    let g = reports();
    g.write("creep.toml", CREEP);
    g.two_accepted_runs("sqlite:h.sqlite");
    g.write(
        "ncugate.toml",
        "[gate]\nbaseline = \"history\"\n[history]\nurl = \"sqlite:h.sqlite\"\nwindow = 1\nanchor = \"c1\"\n",
    );
    let out = g
        .check()
        .input("base2.csv")
        .args(&["--history-record", "never"])
        .run();
    out.code(0)
        .stdout_has("the last 1 accepted run(s) of workload `default` on this GPU, commits c2")
        .stdout_has("anchor c1: no rule of these thresholds has max_drift");
    g.check()
        .input("unfolded.csv")
        .thresholds("creep.toml")
        .args(&["--history-record", "never"])
        .run()
        .code(1)
        .stdout_has("drift since c1: +45% over 2 commits");
    // A file named by `--baseline` still wins over the file's "history".
    g.check()
        .input("base2.csv")
        .baseline("baseline.json")
        .args(&["--history-record", "never"])
        .run()
        .code(0)
        .stdout_has("baseline:   baseline.json");
}

#[test]
fn changes_refuses_the_trend_pages_flags() {
    // `history changes` draws no page: its --html (shared with `show`) is refused, not ignored.
    let g = Gate::new();
    let url = format!("sqlite:{}", g.path("h.sqlite").display());
    for flags in [
        ["--html", "trends"],
        ["--window", "3"],
        ["--thresholds", "t.toml"],
    ] {
        let args = [
            &["history", "changes", "--history", url.as_str()][..],
            &flags[..],
        ]
        .concat();
        g.run(&args)
            .one_clear_error(&format!("{} does not apply to history changes", flags[0]))
            .stderr_has("ncugate history show --html DIR");
    }
    assert!(!g.path("trends").exists());
}

/// The trend charts of a check's HTML report, by file name.
fn trend_charts(g: &Gate, dir: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(g.path(dir).join("charts"))
        .expect("charts folder")
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            name.starts_with("trend-")
                .then(|| (name.clone(), g.read(&format!("{dir}/charts/{name}"))))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_failing_check_draws_each_failing_metric_s_trend_into_its_html() {
    let g = reports();
    let url = format!("sqlite:{}", g.path("h.sqlite").display());
    for commit in ["c1", "c2"] {
        record(&g, &url, "pass.json", commit, "main").code(0);
    }
    // Recorded (main): the chart is the store's series, this run last.
    let failing = check_with_history(
        &g,
        &url,
        &[
            "--baseline",
            "history",
            "--input",
            "unfolded.csv",
            "--commit",
            "c3",
            "--branch",
            "main",
            "--html",
            "html",
            "--json",
            "r.json",
        ],
    );
    failing.code(1);
    let r: serde_json::Value = serde_json::from_str(&g.read("r.json")).expect("JSON");
    let trend_notes = r["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter(|n| n.as_str().is_some_and(|n| n.starts_with("trend of ")))
        .count();
    assert!(trend_notes >= 1, "{}", r["notes"]);
    let charts = trend_charts(&g, "html");
    assert_eq!(charts.len(), trend_notes.min(5), "{charts:?}");
    let index = g.read("html/index.html");
    // The whole run's series has every run (the unfolded `scale<1>` is a
    // kernel key of its own: its series starts here).
    let whole = |name: &str| {
        let i: usize = name
            .trim_start_matches("trend-")
            .trim_end_matches(".svg")
            .parse()
            .expect("rule index");
        r["rules"][i]["kernel"].is_null()
    };
    assert!(charts.iter().any(|(name, _)| whole(name)), "{charts:?}");
    for (name, svg) in &charts {
        assert!(
            index.contains(&format!("<img src=\"charts/{name}\"")),
            "{name} shown in its section"
        );
        // One point per run: c1, c2 and this one, labelled by commit.
        let points = if whole(name) { 3 } else { 1 };
        assert_eq!(svg.matches("<circle").count(), points, "{name}: {svg}");
        assert!(svg.contains("c3"), "{name}");
        // Legible: no text under 12 px.
        for size in svg.split("font-size=\"").skip(1) {
            let px: f64 = size.split('"').next().expect("size").parse().expect("px");
            assert!(px >= 12.0, "{name}: {px} px text");
        }
    }
    // The page draws the trend instead of naming the command that draws it.
    assert!(!index.contains("trend of "), "{index}");
    assert!(
        !r.to_string().contains("<svg"),
        "charts stay out of the JSON"
    );

    // Read only (a pull request's branch): the store's runs, then this run.
    let read_only = check_with_history(
        &g,
        &url,
        &[
            "--baseline",
            "history",
            "--input",
            "unfolded.csv",
            "--commit",
            "c4",
            "--branch",
            "12/merge",
            "--html",
            "pr",
        ],
    );
    read_only.code(1);
    let charts = trend_charts(&g, "pr");
    assert!(!charts.is_empty());
    for (name, svg) in &charts {
        let points = if whole(name) { 4 } else { 2 };
        assert_eq!(svg.matches("<circle").count(), points, "{name}: {svg}");
        assert!(svg.contains("this run"), "{name}");
    }
    // Nothing fails: no chart, and the store is not read for one.
    let pass = check_with_history(
        &g,
        &url,
        &[
            "--baseline",
            "history",
            "--input",
            "base2.csv",
            "--branch",
            "x",
            "--html",
            "ok",
        ],
    );
    pass.code(0);
    assert!(!g.path("ok/charts").join("trend-0.svg").exists());
}

#[test]
fn names_and_units_from_a_hostile_store_add_no_line() {
    // Another writer shares the store: every text it holds is hostile. A
    // series' unit was printed as it was, so a newline in it wrote
    // `::error::…` on a line of its own in `history show` and `changes`.
    let g = reports();
    for (commit, report) in [("c1", "pass.json"), ("c2", "regression.json")] {
        assert_eq!(
            record(&g, "sqlite:h.sqlite", report, commit, "main").code,
            0
        );
    }
    let db = rusqlite::Connection::open(g.path("h.sqlite")).expect("open");
    db.execute_batch(
        "UPDATE series SET unit = 'inst' || char(10) || '::error::unit' || char(8232) || 'ls' WHERE metric = 'sm__inst_executed.sum';
         UPDATE series SET kernel = kernel || char(13) || '::error::kernel' || char(8238) WHERE id = 1;
         UPDATE runs SET branch = 'main' || char(10) || '::error::branch' WHERE commit_sha = 'c2';",
    )
    .expect("tamper");
    drop(db);
    let dir = g.path("trend").display().to_string();
    for args in [
        &["history", "show", "--history", "sqlite:h.sqlite"][..],
        &["history", "changes", "--history", "sqlite:h.sqlite"],
        &[
            "history",
            "show",
            "--history",
            "sqlite:h.sqlite",
            "--html",
            &dir,
        ],
        // JSON kept U+2028 and U+202E as they were.
        &["history", "show", "--json", "--history", "sqlite:h.sqlite"],
        &[
            "history",
            "changes",
            "--json",
            "--history",
            "sqlite:h.sqlite",
        ],
    ] {
        let out = g.run(args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        for line in out.stdout.lines().chain(out.stderr.lines()) {
            assert!(
                !line.contains("::error::") || !line.trim_start().starts_with("::"),
                "{args:?}: {line:?}"
            );
            assert!(
                !line.contains(['\r', '\u{2028}', '\u{202E}']),
                "{args:?}: {line:?}"
            );
        }
    }
    let show = g.run(&["history", "show", "--history", "sqlite:h.sqlite"]);
    assert!(
        show.stdout.contains("inst\\u{a}::error::unit\\u{2028}ls"),
        "{}",
        show.stdout
    );
    for page in std::fs::read_dir(g.path("trend")).expect("trend").flatten() {
        if page.path().is_file() {
            let text = std::fs::read_to_string(page.path()).expect("page");
            assert!(
                !text.contains(['\u{2028}', '\u{202E}', '\r']),
                "{}",
                page.path().display()
            );
        }
    }
}

#[test]
fn a_huge_value_in_the_store_draws_no_chart_and_ends() {
    // A mean near f64::MAX (or infinite) in the store made the trend chart's
    // band and axis infinite: `history show --html` never ended.
    let g = reports();
    for (commit, report) in [
        ("c1", "pass.json"),
        ("c2", "pass.json"),
        ("c3", "regression.json"),
    ] {
        let time = format!("2026-12-0{}T00:00:00Z", &commit[1..]);
        let out = g.history_record("sqlite:h.sqlite", report, (commit, "main", &time));
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let db = rusqlite::Connection::open(g.path("h.sqlite")).expect("open");
    db.execute_batch(
        "UPDATE run_values SET mean = 1e308 WHERE series_id = 1;
         UPDATE run_values SET mean = 9e999 WHERE series_id = 2;",
    )
    .expect("tamper");
    drop(db);
    let dir = g.path("trend").display().to_string();
    let out = g.run(&[
        "history",
        "show",
        "--history",
        "sqlite:h.sqlite",
        "--html",
        &dir,
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let page = g.read("trend/trends-1.html");
    assert!(page.contains("too large to chart"), "{page}");
}

/// `pass.json` with `edit` applied to its JSON, written as `name`.
fn edited_pass(g: &Gate, name: &str, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut doc = g.json("pass.json");
    edit(&mut doc);
    g.write(name, serde_json::to_string_pretty(&doc).expect("JSON"));
}

#[test]
fn a_passing_report_whose_samples_disagree_is_refused_and_a_regression_still_fails() {
    let g = reports();
    let url = "sqlite:h.sqlite";
    record(&g, url, "pass.json", "c1", "main").code(0);
    // The row the unfolded loop fails, its samples poisoned: `current` and
    // the status still pass, but the history keeps the samples.
    edited_pass(&g, "huge.json", |doc| {
        let rows = doc["rules"].as_array_mut().expect("rules");
        let row = rows
            .iter_mut()
            .find(|r| r["rule"] == "sm__inst_executed.sum (sum, total)")
            .expect("the row the regression fails");
        row["current_runs"] = serde_json::json!([1e308]);
    });
    let out = record(&g, url, "huge.json", "c2", "main");
    out.one_clear_error("disagrees with its per-run samples (the mean of its 1 run(s) is 1e308)");
    // A thousand launches of a kernel the run launched a few times.
    edited_pass(&g, "launches.json", |doc| {
        let rows = doc["structure"].as_array_mut().expect("structure");
        let row = rows
            .iter_mut()
            .find(|s| s["check"] == "launches")
            .expect("a launch count");
        row["current_launches"] = serde_json::json!([1000]);
        row["baseline_range"] = serde_json::json!([1.0, 1000.0]);
    });
    let out = record(&g, url, "launches.json", "c3", "main");
    out.one_clear_error("its kernels launch");
    // More samples than the report's runs.
    edited_pass(&g, "runs.json", |doc| {
        let row = &mut doc["rules"][0];
        let x = row["current"].clone();
        row["current_runs"] = serde_json::json!([x, x]);
    });
    record(&g, url, "runs.json", "c4", "main").one_clear_error(
        "(1 run(s), but produce(float *, long) · sm__inst_executed.sum (sum) has 2)",
    );
    // Nothing was kept: the regression fails against the rolling baseline.
    assert_eq!(runs(&g, url).len(), 1);
    check_with_history(
        &g,
        url,
        &[
            "--baseline",
            "history",
            "--input",
            "unfolded.csv",
            "--history-record",
            "never",
        ],
    )
    .code(1)
    .stdout_has("sm__inst_executed.sum (sum) [FAIL]");
}

/// `history show --json` of `url`, run as `nobody` when the tests run as
/// root (root may write a read-only file: the test is about a reader who
/// may not write).
fn show_as_a_reader(g: &Gate, url: &str) -> std::process::Output {
    let cmd = g.command(["history", "show", "--json", "--history", url], &[]);
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        let mut cmd = cmd;
        return cmd.output().expect("run ncugate");
    }
    Command::new("runuser")
        .current_dir(g.dir.path())
        .env_remove("NCUGATE_HISTORY")
        .env("NO_COLOR", "1")
        .args(["-u", "nobody", "--"])
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .output()
        .expect("run ncugate as nobody")
}

#[test]
fn readers_open_the_store_read_only() {
    use std::os::unix::fs::PermissionsExt;
    let g = reports();
    // An empty file is no history yet: `show` says so and writes nothing.
    g.write("empty.sqlite", "");
    g.run(&["history", "show", "--history", "sqlite:empty.sqlite"])
        .code(0)
        .stdout_has("no runs in the history match");
    assert_eq!(
        std::fs::read(g.path("empty.sqlite")).expect("read").len(),
        0,
        "show wrote"
    );

    let url = "sqlite:h.sqlite";
    record(&g, url, "pass.json", "c1", "main").code(0);
    // A writer holds the write lock: readers neither wait nor fail.
    let writer = rusqlite::Connection::open(g.path("h.sqlite")).expect("open");
    writer
        .execute_batch("BEGIN IMMEDIATE")
        .expect("the write lock");
    assert!(!series(&g, url, &[]).is_empty());
    g.check()
        .history(url)
        .baseline("history")
        .input("base2.csv")
        .args(&["--history-record", "never"])
        .run()
        .code(0);
    writer.execute_batch("ROLLBACK").expect("rollback");
    drop(writer);

    // A read-only file in a read-only folder is read.
    let shelf = g.path("shelf");
    std::fs::create_dir(&shelf).expect("mkdir");
    std::fs::copy(g.path("h.sqlite"), shelf.join("h.sqlite")).expect("copy");
    let mode = |path: &Path, mode| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod")
    };
    mode(g.dir.path(), 0o755);
    mode(&shelf.join("h.sqlite"), 0o444);
    mode(&shelf, 0o555);
    let out = show_as_a_reader(&g, "sqlite:shelf/h.sqlite");
    mode(&shelf, 0o755);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(
        !doc["series"].as_array().expect("series").is_empty(),
        "{doc}"
    );
    let left: Vec<_> = std::fs::read_dir(&shelf)
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(left, ["h.sqlite"], "a reader left files beside the store");
}

#[test]
fn the_last_runs_of_a_series_count_up_to_the_largest_number() {
    let g = reports();
    let url = "sqlite:h.sqlite";
    record(&g, url, "pass.json", "c1", "main").code(0);
    let all = series(&g, url, &["--last", "18446744073709551615"]);
    assert!(!all.is_empty(), "the largest --last shows every run");
    let out = g.run(&[
        "history",
        "show",
        "--history",
        url,
        "--last",
        "18446744073709551616",
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
}

#[test]
fn a_store_path_that_is_a_symbolic_link_is_refused() {
    let g = reports();
    std::fs::create_dir(g.path("elsewhere")).expect("mkdir");
    std::os::unix::fs::symlink(g.path("elsewhere/h.sqlite"), g.path("link.sqlite"))
        .expect("symlink");
    let out = record(&g, "sqlite:link.sqlite", "pass.json", "c1", "main");
    assert_store_error(&out, "is a symbolic link");
    assert!(
        !g.path("elsewhere/h.sqlite").exists(),
        "the link was followed"
    );
    // A planted link where SQLite keeps the store's WAL is refused too.
    record(&g, "sqlite:h.sqlite", "pass.json", "c1", "main").code(0);
    std::os::unix::fs::symlink(g.path("elsewhere/wal"), g.path("h.sqlite-wal")).expect("symlink");
    let out = g.run(&["history", "show", "--history", "sqlite:h.sqlite"]);
    assert_store_error(&out, "h.sqlite-wal is a symbolic link");
    assert!(!g.path("elsewhere/wal").exists(), "the link was followed");
}

#[test]
fn a_select_only_role_reads_the_postgres_store_and_readers_take_no_lock() {
    let cluster = Cluster::start();
    let g = reports();
    let url = cluster.fresh("readonly");
    record(&g, &url, "pass.json", "c1", "main").code(0);
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
    admin
        .batch_execute(
            "CREATE ROLE reader LOGIN;
             GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader;",
        )
        .expect("a SELECT-only role");
    let reader = url.replacen("ncugate@", "reader@", 1);
    assert!(!series(&g, &reader, &[]).is_empty());
    // The writers' lock held (a writer queued for a minute): readers do not wait.
    admin
        .query_one("SELECT pg_advisory_lock($1)", &[&0x006e_6375_6761_7465_i64])
        .expect("the writers' lock");
    assert!(!series(&g, &url, &[]).is_empty());
    g.check()
        .history(&reader)
        .baseline("history")
        .input("base2.csv")
        .args(&["--history-record", "never"])
        .run()
        .code(0);
    // A writer queued behind the lock gives up after the timeout, naming it.
    let queued = g.run(&[
        "history",
        "record",
        "pass.json",
        "--commit",
        "c2",
        "--branch",
        "main",
        "--history",
        &url,
        "--history-timeout",
        "1",
    ]);
    assert_store_error(&queued, "no answer to a statement within 1 s");
    // Recording as the reader is refused, with the server's reason.
    admin
        .query_one(
            "SELECT pg_advisory_unlock($1)",
            &[&0x006e_6375_6761_7465_i64],
        )
        .expect("unlock");
    let out = record(&g, &reader, "pass.json", "c2", "main");
    assert_store_error(&out, "permission denied");
}

/// A TCP server that accepts every connection and never says a word; its port.
fn silent_server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    port
}

#[test]
fn a_postgres_server_that_never_answers_is_an_error_after_the_timeout() {
    let g = reports();
    let port = silent_server();
    let url = format!("postgresql://ncugate:secret@127.0.0.1:{port}/history");
    let timed_out = |out: &crate::common::Outcome, seconds: &str| {
        assert_store_error(
            out,
            &format!("no answer to the connection's start-up within {seconds} s"),
        );
        assert!(
            out.stderr.contains(&format!("127.0.0.1:{port}")),
            "{}",
            out.stderr
        );
        assert!(!out.stderr.contains("secret"), "{}", out.stderr);
        assert!(out.stderr.contains("--history-timeout"), "{}", out.stderr);
    };
    // `[history] timeout`, under NCUGATE_HISTORY_TIMEOUT, under the flag.
    g.write("ncugate.toml", "[history]\ntimeout = 1\n");
    timed_out(&g.run(&["history", "show", "--history", &url]), "1");
    let env = [("NCUGATE_HISTORY_TIMEOUT", "2")];
    timed_out(
        &g.run_with(&["history", "show", "--history", &url], &env),
        "2",
    );
    let flag = [
        "history",
        "show",
        "--history",
        &url,
        "--history-timeout",
        "1",
    ];
    timed_out(&g.run_with(&flag, &env), "1");
    // A check reading its rolling baseline gives up the same way.
    let out = g
        .check()
        .history(&url)
        .baseline("history")
        .input("base2.csv")
        .args(&["--history-record", "never", "--history-timeout", "1"])
        .run();
    timed_out(&out, "1");
    let zero = g.run(&[
        "history",
        "show",
        "--history",
        &url,
        "--history-timeout",
        "0",
    ]);
    assert_eq!(zero.code, 2, "{}", zero.stderr);
}

#[test]
fn a_damaged_sample_names_its_run_and_how_to_remove_it() {
    let g = reports();
    let url = "sqlite:h.sqlite";
    record(&g, url, "pass.json", "c1", "main").code(0);
    let db = rusqlite::Connection::open(g.path("h.sqlite")).expect("open");
    let damaged = db
        .execute(
            "UPDATE run_values SET samples = '[1e3, \"x\"' WHERE series_id IN
                (SELECT id FROM series WHERE metric = 'sm__inst_executed.sum')",
            [],
        )
        .expect("damage");
    assert!(damaged > 0);
    drop(db);
    let out = g
        .check()
        .history(url)
        .baseline("history")
        .input("base2.csv")
        .args(&["--history-record", "never"])
        .run();
    out.one_clear_error("the run of commit c1 (run id 1) is damaged: the samples of ");
    assert!(
        out.stderr
            .contains("DELETE FROM run_values WHERE run_id = 1; DELETE FROM runs WHERE id = 1;"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("re-record"), "{}", out.stderr);
}
