//! The metric gate's concerns: the app and ncu's profiling (`[app]`,
//! `[profile]`) and what it compares with (`[gate]`).

use super::{config, layer, layers, profile, toml};
use crate::config::Config;

#[test]
fn app_and_profile_settings_flag_over_env_over_file_over_default() {
    layers(
        "config::precedence::metric::profile_layers",
        &[
            ("NCUGATE_REPLAY_MODE", "range"),
            ("NCUGATE_NCU", "env-ncu"),
            ("NCUGATE_TIMEOUT", "2"),
            ("NCUGATE_OUT", "env-out"),
            ("NCUGATE_WORKDIR", "env-wd"),
        ],
    );
}

#[test]
#[ignore = "a child of app_and_profile_settings_flag_over_env_over_file_over_default"]
fn profile_layers() {
    let Some(with_env) = layer() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let file = toml(
        &dir,
        "ncugate.toml",
        "[app]\ntimeout = 3\nworkdir = \"file-wd\"\n[profile]\nreplay_mode = \"app-range\"\nncu = \"file-ncu\"\nout_dir = \"file-out\"\n",
    );
    let empty = toml(&dir, "empty.toml", "");
    let flags = [
        "--replay-mode",
        "application",
        "--ncu",
        "flag-ncu",
        "--timeout",
        "1",
        "--out",
        "flag-out",
        "--workdir",
        "flag-wd",
    ];
    let r = profile(&file, &flags);
    assert_eq!(
        (r.replay_mode.as_str(), r.ncu.as_str(), r.timeout.as_secs()),
        ("application", "flag-ncu", 1)
    );
    assert_eq!(
        (r.out_dir, r.workdir),
        ("flag-out".into(), "flag-wd".into())
    );
    let r = profile(&file, &[]);
    if with_env {
        assert_eq!(
            (r.replay_mode.as_str(), r.ncu.as_str(), r.timeout.as_secs()),
            ("range", "env-ncu", 2)
        );
        assert_eq!((r.out_dir, r.workdir), ("env-out".into(), "env-wd".into()));
    } else {
        assert_eq!(
            (r.replay_mode.as_str(), r.ncu.as_str(), r.timeout.as_secs()),
            ("app-range", "file-ncu", 3)
        );
        assert_eq!(r.out_dir, dir.path().join("file-out"));
        assert_eq!(r.workdir, dir.path().join("file-wd"));
        let r = profile(&empty, &[]);
        assert_eq!(
            (r.replay_mode.as_str(), r.ncu.as_str(), r.timeout.as_secs()),
            ("kernel", "ncu", 1800)
        );
        assert_eq!(r.out_dir, dir.path().join("target/ncugate"));
        assert_eq!(r.workdir, dir.path().join("."));
    }
}

#[test]
fn gate_settings_flag_over_env_over_file_over_default() {
    layers(
        "config::precedence::metric::gate_layers",
        &[
            ("NCUGATE_THRESHOLDS", "env.toml"),
            ("NCUGATE_KERNEL_KEY", "demangled"),
            ("NCUGATE_BASELINE", "env.json"),
        ],
    );
}

#[test]
#[ignore = "a child of gate_settings_flag_over_env_over_file_over_default"]
fn gate_layers() {
    use crate::config::BaselinePlace;
    use crate::model::KernelKeyMode::{Demangled, Function};
    use crate::rules::ThresholdsSource::{BuiltIn, File};
    let Some(with_env) = layer() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let file = toml(
        &dir,
        "ncugate.toml",
        "[gate]\nbaseline = \"file.json\"\nthresholds = \"file.toml\"\nkernel_key = \"function\"\n",
    );
    let file = file.to_str().expect("utf-8 path");
    let check = |flags: &[&str]| {
        let mut args = vec!["check", "--config", file, "--input", "x.csv"];
        args.extend(flags);
        match config(&args) {
            Config::Check(c) => (c.baseline, c.thresholds, c.kernel_key),
            other => panic!("{other:?}"),
        }
    };
    let record_key = |flags: &[&str]| {
        let mut args = vec!["baseline", "record", "--config", file, "--input", "x.csv"];
        args.extend(flags);
        match config(&args) {
            Config::Record(c) => c.kernel_key,
            other => panic!("{other:?}"),
        }
    };
    let typed = ["--baseline", "flag.json", "--thresholds", "flag.toml"];
    let (baseline, thresholds, _) = check(&[&typed[..], &["--kernel-key", "function"]].concat());
    assert_eq!(baseline, BaselinePlace::File("flag.json".into()));
    assert_eq!(thresholds, File("flag.toml".into()));
    assert_eq!(record_key(&["--kernel-key", "function"]), Function);
    let (baseline, thresholds, key) = check(&[]);
    if with_env {
        assert_eq!(baseline, BaselinePlace::File("env.json".into()));
        assert_eq!(thresholds, File("env.toml".into()));
        assert_eq!((key, record_key(&[])), (Some(Demangled), Demangled));
    } else {
        assert_eq!(baseline, BaselinePlace::File(dir.path().join("file.json")));
        assert_eq!(thresholds, File(dir.path().join("file.toml")));
        // check takes the key of its baseline; [gate] kernel_key says how to record.
        assert_eq!((key, record_key(&[])), (None, Function));
        let empty = toml(&dir, "empty.toml", "[gate]\nbaseline = \"b.json\"\n");
        let empty = empty.to_str().expect("utf-8 path");
        match config(&["check", "--config", empty, "--input", "x.csv"]) {
            Config::Check(c) => assert_eq!((c.thresholds, c.kernel_key), (BuiltIn, None)),
            other => panic!("{other:?}"),
        }
        match config(&["baseline", "record", "--config", empty, "--input", "x.csv"]) {
            Config::Record(c) => assert_eq!((c.thresholds, c.kernel_key), (BuiltIn, Demangled)),
            other => panic!("{other:?}"),
        }
    }
}
