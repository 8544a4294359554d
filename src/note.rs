//! Notes: what a reader should know that is not a check — a finding not
//! compared, a baseline of one run, a run recorded in the history. A note
//! is its text and its [`Kind`]; each place that shows one words the kind
//! itself: a report's terminal view `note: …`, standard error `ncugate:
//! note: …`, `ncugate: warning: …` and `hint: …`. The JSON report keeps
//! `notes` an array of strings, a note's text as it always was (see
//! [`Note`]'s `Serialize`).

use std::fmt;

/// What a note is to its reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Something to know: a report's note, `ncugate: note: …` on standard error.
    Note,
    /// Something likely to make a later check mislead or fail: `ncugate:
    /// warning: …`.
    Warning,
    /// The fix for the warning before it: `hint: …`.
    Hint,
    /// What ncugate did with the input, said plainly on standard error
    /// (`ncugate: …`), as `baseline record` always has.
    Said,
}

impl Kind {
    /// The word in front of a note of this kind, `None` for [`Kind::Said`].
    pub(crate) fn word(self) -> Option<&'static str> {
        match self {
            Kind::Note => Some("note"),
            Kind::Warning => Some("warning"),
            Kind::Hint => Some("hint"),
            Kind::Said => None,
        }
    }
}

/// One note: its kind and its text (without any `note:` in front).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub(crate) kind: Kind,
    pub text: String,
}

impl Note {
    /// A note of [`Kind::Note`]: something to know.
    pub(crate) fn new(text: impl Into<String>) -> Note {
        Note {
            kind: Kind::Note,
            text: text.into(),
        }
    }

    /// A note of [`Kind::Warning`]: something likely to mislead or fail later.
    pub fn warning(text: impl Into<String>) -> Note {
        Note {
            kind: Kind::Warning,
            text: text.into(),
        }
    }

    /// A note of [`Kind::Hint`]: the fix for the warning before it.
    pub(crate) fn hint(text: impl Into<String>) -> Note {
        Note {
            kind: Kind::Hint,
            text: text.into(),
        }
    }

    /// A note of [`Kind::Said`]: what ncugate did with the input.
    pub(crate) fn said(text: impl Into<String>) -> Note {
        Note {
            kind: Kind::Said,
            text: text.into(),
        }
    }

    /// The note with its kind's word: `note: …`, `warning: …` (a report's
    /// terminal view).
    pub(crate) fn labelled(&self) -> String {
        match self.kind.word() {
            Some(word) => format!("{word}: {}", self.text),
            None => self.text.clone(),
        }
    }

    /// The note as one line of standard error: `ncugate: note: …`,
    /// `ncugate: warning: …`, `ncugate: …`; a hint is `hint: …`, under the
    /// line it is the fix of.
    pub fn line(&self) -> String {
        match self.kind {
            Kind::Hint => self.labelled(),
            _ => format!("ncugate: {}", self.labelled()),
        }
    }
}

impl From<String> for Note {
    fn from(text: String) -> Note {
        Note::new(text)
    }
}

impl From<&str> for Note {
    fn from(text: &str) -> Note {
        Note::new(text)
    }
}

/// A report's note as its JSON and its Markdown and HTML write it: the text
/// of a note; a warning or a hint with its word in front, which reading the
/// JSON back takes for its kind again.
impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Kind::Note | Kind::Said => f.write_str(&self.text),
            Kind::Warning | Kind::Hint => f.write_str(&self.labelled()),
        }
    }
}

impl serde::Serialize for Note {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Note {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Note, D::Error> {
        let text = String::deserialize(deserializer)?;
        for kind in [Kind::Warning, Kind::Hint] {
            let word = kind.word().unwrap_or_default();
            if let Some(rest) = text.strip_prefix(word).and_then(|t| t.strip_prefix(": ")) {
                return Ok(Note {
                    kind,
                    text: rest.to_string(),
                });
            }
        }
        Ok(Note::new(text))
    }
}

/// In a schema, a note is the string the JSON holds.
impl schemars::JsonSchema for Note {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        String::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::Note;

    #[test]
    fn each_place_words_the_kind_and_the_json_keeps_the_text() {
        let note = Note::new("findings not compared");
        assert_eq!(note.labelled(), "note: findings not compared");
        assert_eq!(note.line(), "ncugate: note: findings not compared");
        let warning = Note::warning("a baseline of 1 run has no spread");
        assert_eq!(
            warning.line(),
            "ncugate: warning: a baseline of 1 run has no spread"
        );
        assert_eq!(Note::hint("record 3 runs").line(), "hint: record 3 runs");
        assert_eq!(Note::said("a.csv: read").line(), "ncugate: a.csv: read");
        for n in [
            note,
            warning,
            Note::hint("x"),
            Note::new("warning:no space"),
        ] {
            let json = serde_json::to_value(&n).expect("a string");
            assert_eq!(json, serde_json::Value::String(n.to_string()));
            let back: Note = serde_json::from_value(json.clone()).expect("a note");
            assert_eq!(serde_json::to_value(&back).ok(), Some(json), "{n:?}");
        }
    }
}
