//! The ncu settings ncugate passes through as ncu spells them
//! (`--clock-control none`): one enum per setting, typed on the command line,
//! read from `[profile]` in `ncugate.toml` and written into ncu's command line
//! and the baseline's `profile` record by the same names. Their defaults
//! are in `crate::options::profile`, beside the flags.

use std::fmt;

/// An enum of ncu values: `ncugate.toml` takes the kebab-case names ncu
/// takes (the flags take the same, from `crate::options::profile`), and
/// `as_str` gives them back for ncu's command line.
macro_rules! ncu_value {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize,
        )]
        #[serde(rename_all = "kebab-case")]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// As ncu's command line and the baseline spell it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

ncu_value! {
    /// ncu `--clock-control`: how ncu sets the GPU clocks while it profiles.
    ClockControl {
        /// Lock the clocks to base clock.
        Base = "base",
        /// Leave the clocks as they are.
        None = "none",
        /// Reset the clocks to their defaults.
        Reset = "reset",
    }
}

ncu_value! {
    /// ncu `--cache-control`: flush the caches before each replay pass or not.
    CacheControl {
        /// Flush every cache before each pass (ncu's default).
        All = "all",
        /// Keep the caches as the previous pass left them.
        None = "none",
    }
}

ncu_value! {
    /// ncu `--replay-mode`: how ncu replays a kernel to collect every metric.
    ReplayMode {
        /// Replay each kernel in place, saving and restoring memory (ncu's default).
        Kernel = "kernel",
        /// Run the whole application once per pass.
        Application = "application",
        /// Replay ranges of the app (cu(da)ProfilerStart/Stop or NVTX).
        Range = "range",
        /// Ranges, by running the whole application once per pass.
        AppRange = "app-range",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ncugate_toml_and_ncu_spell_the_values_alike() {
        for value in [ReplayMode::Kernel, ReplayMode::AppRange] {
            let read: ReplayMode = toml::Value::String(value.to_string()).try_into().unwrap();
            assert_eq!(read, value);
        }
        assert_eq!(ReplayMode::AppRange.as_str(), "app-range");
    }
}
