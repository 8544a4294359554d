//! The compute-sanitizer tools ncugate runs and gates, as typed on the
//! command line (`--tool`), in `ncugate.toml` (`[sanitizer] tools`) and as
//! compute-sanitizer spells them (`--tool memcheck`).

use std::fmt;
use std::path::Path;

/// A compute-sanitizer tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tool {
    /// Out-of-bounds and misaligned accesses, API errors, and (with leak_check) memory never freed.
    #[default]
    Memcheck,
    /// Shared-memory data races.
    Racecheck,
    /// Reads of device memory never written.
    Initcheck,
    /// Invalid uses of synchronization primitives.
    Synccheck,
}

impl Tool {
    /// As compute-sanitizer's `--tool` takes it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Tool::Memcheck => "memcheck",
            Tool::Racecheck => "racecheck",
            Tool::Initcheck => "initcheck",
            Tool::Synccheck => "synccheck",
        }
    }

    /// The tool that most likely wrote a saved XML file: the one its name
    /// mentions (`run.racecheck.xml`), else memcheck, compute-sanitizer's default.
    pub(crate) fn of_file_name(path: &Path) -> Tool {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        [Tool::Racecheck, Tool::Initcheck, Tool::Synccheck]
            .into_iter()
            .find(|t| name.contains(t.as_str()))
            .unwrap_or(Tool::Memcheck)
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_files_name_says_its_tool() {
        assert_eq!(
            Tool::of_file_name(Path::new("a/run.RaceCheck.xml")),
            Tool::Racecheck
        );
        assert_eq!(
            Tool::of_file_name(Path::new("synccheck.xml")),
            Tool::Synccheck
        );
        assert_eq!(Tool::of_file_name(Path::new("seed.xml")), Tool::Memcheck);
    }
}
