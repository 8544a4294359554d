//! The flags typed on the command line, as opposed to those clap filled in
//! from `NCUGATE_*` variables or defaults: a flag that does nothing in this
//! invocation is refused only when someone typed it, while a CI-wide
//! variable stays harmless.

use crate::cli::BuildArgs;
use crate::error::{Error, Result};
use crate::options::profile::OutDir;
use crate::options::{AppOptions, ProfileOptions, SanitizerOptions};
use std::path::PathBuf;

/// One flag typed on the command line.
#[derive(Debug)]
struct Typed {
    /// clap's id.
    id: String,
    /// As typed (`--leak-check`), or `the app after `--``.
    shown: String,
    /// The clap groups it belongs to: those of the option structs it is a field of.
    groups: Vec<String>,
}

/// The typed flags of the innermost subcommand.
#[derive(Debug, Default)]
pub(crate) struct Given(Vec<Typed>);

impl Given {
    /// The typed flags of the innermost subcommand of `matches`, named as
    /// `command` (the clap definition `matches` came from) spells them.
    pub(crate) fn from_matches(command: &clap::Command, matches: &clap::ArgMatches) -> Given {
        let (mut m, mut cmd) = (matches, command);
        while let Some((name, sub)) = m.subcommand() {
            m = sub;
            match cmd.find_subcommand(name) {
                Some(c) => cmd = c,
                None => break,
            }
        }
        let typed = |id: &str| {
            matches!(m.try_get_raw(id), Ok(Some(_)))
                && m.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
        };
        Given(
            m.ids()
                .filter(|id| typed(id.as_str()))
                .map(|id| {
                    let arg = cmd.get_arguments().find(|a| a.get_id() == id);
                    let shown = match arg.and_then(|a| a.get_long()) {
                        Some(long) => format!("--{long}"),
                        None => "the app after `--`".to_string(),
                    };
                    let groups = cmd
                        .get_groups()
                        .filter(|g| g.get_args().any(|a| a == id))
                        .map(|g| g.get_id().to_string())
                        .collect();
                    Typed {
                        id: id.to_string(),
                        shown,
                        groups,
                    }
                })
                .collect(),
        )
    }

    /// Whether the flag with clap id `id` was typed.
    pub(super) fn typed(&self, id: &str) -> bool {
        self.0.iter().any(|t| t.id == id)
    }

    /// Exit 2 when a flag of `flags` was typed: it does nothing `because`.
    pub(super) fn refuse(&self, flags: &Flags, because: &str, instead: &str) -> Result<()> {
        if let Some(t) = self.0.iter().find(|t| flags.contains(&t.id, &t.groups)) {
            let flag = &t.shown;
            return Err(Error::from(crate::error::ConfigError::NotApplicable {
                flag: flag.clone(),
                because: because.to_string(),
                instead: instead.to_string(),
            }));
        }
        Ok(())
    }
}

/// A set of flags: every field of some option structs (their clap groups,
/// which clap's derive makes of each struct's fields), but a few, and a few
/// more.
#[derive(Debug, Clone)]
pub(super) struct Flags {
    groups: Vec<clap::Id>,
    /// clap ids (the field names) taken out.
    except: Vec<&'static str>,
    /// clap ids added.
    and: Vec<&'static str>,
}

impl Flags {
    /// Every flag of the structs `T…`, as `Flags::of(&[T::group_id(), …])`.
    fn of(groups: &[Option<clap::Id>]) -> Flags {
        Flags {
            groups: groups.iter().flatten().cloned().collect(),
            except: Vec::new(),
            and: Vec::new(),
        }
    }

    /// The one flag `id`.
    pub(super) fn only(id: &'static str) -> Flags {
        Flags::of(&[]).and(id)
    }

    /// The same flags and `id`.
    pub(super) fn and(mut self, id: &'static str) -> Flags {
        self.and.push(id);
        self
    }

    /// The same flags but `id`.
    pub(super) fn except(mut self, id: &'static str) -> Flags {
        self.except.push(id);
        self
    }

    fn contains(&self, id: &str, groups: &[String]) -> bool {
        self.and.contains(&id)
            || !self.except.contains(&id)
                && groups.iter().any(|g| self.groups.iter().any(|r| r == g))
    }
}

/// The flags that run the app: its settings (but the app itself, which
/// `--input` refuses in its own words), the work dir and the build.
fn run_flags() -> [Option<clap::Id>; 3] {
    use clap::Args;
    [
        AppOptions::group_id(),
        OutDir::group_id(),
        BuildArgs::group_id(),
    ]
}

/// The flags that mean nothing when exports are gated: how to run and
/// profile the app, except `--ncu` when a `.ncu-rep` (or `.ncu-repz`) report needs it to
/// convert.
pub(super) fn profile_only(inputs: &[PathBuf]) -> Flags {
    use clap::Args;
    let flags = Flags::of(&[run_flags().as_slice(), &[ProfileOptions::group_id()]].concat())
        .except("command")
        .except("import_with_ncu");
    let reports = inputs.iter().any(|p| {
        p.extension()
            .is_some_and(|e| e == "ncu-rep" || e == "ncu-repz")
    });
    if reports { flags.except("ncu") } else { flags }
}

/// The flags that mean nothing when `sanitize --xml` gates saved XML: how to
/// run the app (the app too) and compute-sanitizer; the tools and the allow
/// list still apply to the XML.
pub(super) fn sanitize_run_only() -> Flags {
    use clap::Args;
    Flags::of(&[run_flags().as_slice(), &[SanitizerOptions::group_id()]].concat())
        .except("tools")
        .except("allow")
}

#[cfg(test)]
mod tests {
    use crate::cli::Cli;
    use crate::config::Config;
    use clap::CommandFactory;

    fn refused(args: &[&str]) -> String {
        let matches = Cli::command()
            .try_get_matches_from([&["ncugate"], args].concat())
            .unwrap();
        match Config::from_matches(&matches) {
            Err(e) => format!("{e} / {}", e.hint()),
            Ok(c) => panic!("{args:?} was accepted: {c:?}"),
        }
    }

    /// Every flag of the option struct `T` but `except`, as typed with a value it takes.
    fn typed_flags<T: clap::Args>(except: &[&str]) -> Vec<Vec<String>> {
        T::augment_args(clap::Command::new("t"))
            .get_arguments()
            .filter(|a| !except.contains(&a.get_id().as_str()))
            .filter_map(|a| {
                let long = format!("--{}", a.get_long()?);
                if !a.get_action().takes_values() {
                    return Some(vec![long]);
                }
                let value = match a.get_possible_values().first() {
                    Some(v) => v.get_name().to_string(),
                    None if long == "--env" => "K=V".to_string(),
                    None => "1".to_string(),
                };
                Some(if a.is_require_equals_set() {
                    vec![format!("{long}={value}")]
                } else {
                    vec![long, value]
                })
            })
            .collect()
    }

    #[test]
    fn every_flag_of_the_run_and_profile_options_is_refused_with_exports() {
        use crate::cli::BuildArgs;
        use crate::options::profile::OutDir;
        use crate::options::{AppOptions, ProfileOptions, SanitizerOptions};
        // --import-with-ncu says how to read .ncu-rep exports.
        let mut flags = typed_flags::<ProfileOptions>(&["import_with_ncu"]);
        flags.extend(typed_flags::<AppOptions>(&["command"]));
        flags.extend(typed_flags::<OutDir>(&[]));
        flags.extend(typed_flags::<BuildArgs>(&[]));
        assert!(flags.len() > 15, "{flags:?}");
        for flag in &flags {
            let args: Vec<&str> = flag.iter().map(String::as_str).collect();
            let e = refused(&[&["check", "--input", "a.csv"], &args[..]].concat());
            assert!(e.contains("does not apply with --input"), "{flag:?}: {e}");
            if flag[0] != "--extra-metric" {
                let e = refused(&[&["baseline", "record", "--input", "a.csv"], &args[..]].concat());
                assert!(e.contains("does not apply with --input"), "{flag:?}: {e}");
            }
        }
        let e = refused(&["baseline", "record", "--input", "a.csv", "--runs", "2"]);
        assert!(e.starts_with("--runs does not apply"), "{e}");
        let mut flags = typed_flags::<SanitizerOptions>(&["tools", "allow"]);
        flags.extend(typed_flags::<AppOptions>(&["command"]));
        flags.extend(typed_flags::<OutDir>(&[]));
        flags.extend(typed_flags::<BuildArgs>(&[]));
        for flag in &flags {
            let args: Vec<&str> = flag.iter().map(String::as_str).collect();
            let e = refused(&[&["sanitize", "--xml", "a.xml"], &args[..]].concat());
            assert!(e.contains("does not apply with --xml"), "{flag:?}: {e}");
        }
    }

    #[test]
    fn locked_counters_is_refused_where_no_ncu_run_can_meet_them() {
        let e = refused(&[
            "check",
            "--baseline",
            "b.json",
            "--input",
            "a.csv",
            "--locked-counters",
            "trace",
        ]);
        assert!(
            e.starts_with("--locked-counters does not apply with --input"),
            "{e}"
        );
        let e = refused(&[
            "baseline",
            "record",
            "--output",
            "b.json",
            "--locked-counters",
            "trace",
            "--",
            "./app",
        ]);
        assert!(
            e.starts_with("--locked-counters does not apply in baseline record"),
            "{e}"
        );
        assert!(
            e.contains("drop --locked-counters, and record where ncu"),
            "{e}"
        );
    }

    #[test]
    fn the_flags_left_out_by_name_exist() {
        let cli = Cli::command();
        let ids = |name: &[&str]| -> Vec<String> {
            let mut cmd = &cli;
            for n in name {
                cmd = cmd.find_subcommand(n).expect(n);
            }
            cmd.get_arguments()
                .map(|a| a.get_id().to_string())
                .collect()
        };
        for id in ["command", "ncu", "extra_metrics", "import_with_ncu"] {
            assert!(ids(&["check"]).contains(&id.to_string()), "{id}");
        }
        assert!(ids(&["check"]).contains(&"locked_counters".to_string()));
        for id in ["runs", "extra_metrics", "locked_counters"] {
            assert!(
                ids(&["baseline", "record"]).contains(&id.to_string()),
                "{id}"
            );
        }
        for id in ["tools", "allow", "command"] {
            assert!(ids(&["sanitize"]).contains(&id.to_string()), "{id}");
        }
    }

    #[test]
    fn a_refused_flag_is_named_as_it_was_typed() {
        let e = refused(&["sanitize", "--xml", "a.xml", "--sanitizer", "cs"]);
        assert!(
            e.starts_with("--sanitizer does not apply with --xml"),
            "{e}"
        );
        let e = refused(&["sanitize", "--xml", "a.xml", "--leak-check=false"]);
        assert!(
            e.starts_with("--leak-check does not apply with --xml"),
            "{e}"
        );
        let e = refused(&["check", "--input", "a.csv", "--extra-metric", "m"]);
        assert!(
            e.starts_with("--extra-metric does not apply with --input"),
            "{e}"
        );
        let e = refused(&["check", "--input", "a.csv", "--out", "o"]);
        assert!(e.contains("drop --out, or leave out --input"), "{e}");
        let e = refused(&["sanitize", "--xml", "a.xml", "--", "app"]);
        assert!(e.starts_with("the app after `--` does not apply"), "{e}");
    }
}
