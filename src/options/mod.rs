//! Every setting a user gives, defined once per concern. Each struct here is
//! at the same time the concern's command-line flags (clap `Args`: the flag,
//! then its `NCUGATE_*` variable) and its `ncugate.toml` table (serde), so a
//! setting has one name, one type and one help text; a field only one side
//! knows is `#[arg(skip)]` or `#[serde(skip)]`.
//!
//! Beside each struct are its `DEFAULT_*` constants (which its `--help`
//! text states; a test in `crate::cli` holds the two together) and the
//! `resolve` that turns the layered settings into the typed values the gate
//! uses (`ProfileOptions::resolve`, `SanitizerOptions::resolve`,
//! `MemoryOptions::limits`, `ExplainOptions::resolve`,
//! `HistoryOptions::window`, …). [`Layer`] is the one precedence every
//! setting follows; `crate::config` stacks the layers for each command and
//! calls those.
//!
//! The domain's enums a flag takes (`--mode fast`) get their clap side here
//! too, from `value_enum!` beside the flag that takes them: the domain
//! modules name no clap type, and `ncugate.toml` reads the same names through
//! the enums' serde derive.
//!
//! The fields' `///` comments are `--help` text, written for a terminal: they
//! name ncugate.toml tables (`[gate] thresholds`), which rustdoc would take for links.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

pub(crate) mod app;
pub(crate) mod explain;
pub(crate) mod gate;
pub mod history;
pub(crate) mod memory;
pub mod profile;
pub(crate) mod sanitizer;
pub(crate) mod skip;

pub(crate) use app::AppOptions;
pub(crate) use explain::ExplainOptions;
pub(crate) use gate::GateOptions;
pub use history::HistoryOptions;
pub use memory::MemoryOptions;
pub use profile::ProfileOptions;
pub(crate) use sanitizer::SanitizerOptions;

/// Each `ncugate.toml` table an options struct reads, with that struct's
/// flags: a key of the table is the flag whose id is the key (a key no flag
/// overrides is `#[arg(skip)]` and absent). The book's reference chapter is
/// rendered from it.
pub fn file_tables() -> Vec<(&'static str, clap::Command)> {
    use clap::Args;
    let flags = |name: &'static str, augment: fn(clap::Command) -> clap::Command| {
        (name, augment(clap::Command::new(name)))
    };
    vec![
        flags("app", AppOptions::augment_args),
        flags("profile", ProfileOptions::augment_args),
        flags("gate", GateOptions::augment_args),
        flags("explain", ExplainOptions::augment_args),
        flags("history", HistoryOptions::augment_args),
        flags("sanitizer", SanitizerOptions::augment_args),
        flags("memory", MemoryOptions::augment_args),
    ]
}

/// Settings that stand over a lower layer. The precedence, highest first:
///
/// 1. a flag typed on the command line;
/// 2. its `NCUGATE_*` variable (clap reads 1 and 2, in this order, into one value);
/// 3. the key in `ncugate.toml`;
/// 4. the built-in default, applied by `crate::config` to what is still unset.
///
/// So `command_line.over(file)` is 1–3, and the default is the `unwrap_or`
/// that follows.
pub(crate) trait Layer: Sized {
    /// Each setting given in `self`, else `lower`'s.
    fn over(self, lower: Self) -> Self;
}

impl<T> Layer for Option<T> {
    fn over(self, lower: Self) -> Self {
        self.or(lower)
    }
}

/// A list given on a higher layer replaces the lower one (`--tool racecheck`
/// runs racecheck only). Lists that add up instead are named in
/// `layered!`'s `adds`.
impl<T> Layer for Vec<T> {
    fn over(self, lower: Self) -> Self {
        if self.is_empty() { lower } else { self }
    }
}

/// `impl Layer` for an options struct: every field layered with
/// [`Layer::over`], except the fields after `adds`, where the lower layer's
/// entries come first and the higher layer's are added after them. The
/// struct is destructured without `..`, so a field added to it and not here
/// does not compile.
macro_rules! layered {
    ($ty:ident { $($field:ident),* $(,)? } $(adds { $($add:ident),* $(,)? })?) => {
        impl $crate::options::Layer for $ty {
            fn over(self, lower: Self) -> Self {
                let $ty { $($field,)* $($($add,)*)? } = self;
                $ty {
                    $($field: $crate::options::Layer::over($field, lower.$field),)*
                    $($($add: {
                        let mut all = lower.$add;
                        all.extend($add);
                        all
                    },)*)?
                }
            }
        }
    };
}
pub(crate) use layered;

/// `impl clap::ValueEnum` for an enum of the domain, which then needs no
/// clap itself: each variant with the name a flag takes it by (the name
/// `ncugate.toml` takes too: a test holds them together) and, after `:`, the
/// line `--help` lists it with. The `match` is exhaustive, so a variant added
/// to the enum and not here does not compile; `value_variants` lists the same
/// variants, in the order `--help` shows them.
macro_rules! value_enum {
    ($ty:ident { $($variant:ident = $name:literal $(: $help:literal)?),+ $(,)? }) => {
        impl clap::ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                &[$(Self::$variant),+]
            }

            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(match self {
                    $(Self::$variant => clap::builder::PossibleValue::new($name)$(.help($help))?,)+
                })
            }
        }
    };
}
pub(crate) use value_enum;

#[cfg(test)]
mod tests {
    use super::Layer;
    use clap::ValueEnum;

    /// The names clap takes for `T`, checked to be the names ncugate.toml takes.
    fn names<T>() -> Vec<String>
    where
        T: ValueEnum + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        T::value_variants()
            .iter()
            .map(|v| {
                let name = v
                    .to_possible_value()
                    .expect("not skipped")
                    .get_name()
                    .to_string();
                let read: T = toml::Value::String(name.clone()).try_into().expect(&name);
                assert_eq!(&read, v, "{name}");
                name
            })
            .collect()
    }

    #[test]
    fn flags_and_ncugate_toml_spell_every_value_as_users_type_it() {
        use crate::model::GraphProfiling;
        use crate::model::KernelKeyMode;
        use crate::runner::Mode;
        use crate::sanitizer::Tool;
        assert_eq!(names::<Mode>(), ["fast", "full"]);
        assert_eq!(names::<GraphProfiling>(), ["node", "graph"]);
        assert_eq!(names::<KernelKeyMode>(), ["demangled", "function"]);
        assert_eq!(
            names::<Tool>(),
            ["memcheck", "racecheck", "initcheck", "synccheck"]
        );
    }

    #[test]
    fn a_set_value_stands_over_the_lower_layer() {
        assert_eq!(Some(1).over(Some(2)), Some(1));
        assert_eq!(None.over(Some(2)), Some(2));
        assert_eq!(None::<u8>.over(None), None);
        assert_eq!(vec![1].over(vec![2, 3]), [1]);
        assert_eq!(Vec::<u8>::new().over(vec![2, 3]), [2, 3]);
    }
}
