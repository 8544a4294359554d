//! Human formatting of values in base units, shared by every reporter and
//! by the gates that word their own messages (compute-sanitizer, graph
//! memory, baseline diffs), and a command line as a shell shows it. A leaf.

/// A value in its base unit, scaled for reading: `48.54 us`, `67.11 MB`, `12.06M inst`, `49.41%`.
pub(crate) fn format_value(v: f64, unit: &str) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    match unit {
        "ns" => scaled(v, &[(1e9, "s"), (1e6, "ms"), (1e3, "us")], "ns"),
        "%" => format!("{v:.2}%"),
        "byte" => scaled(
            v,
            &[(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB")],
            "B",
        ),
        "byte/s" => scaled(
            v,
            &[(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "KB/s")],
            "B/s",
        ),
        "hz" => scaled(v, &[(1e9, "GHz"), (1e6, "MHz"), (1e3, "kHz")], "Hz"),
        _ => {
            let suffix = if unit.is_empty() {
                String::new()
            } else {
                format!(" {unit}")
            };
            let a = v.abs();
            let (scale, letter) = if a >= 1e12 {
                (1e12, "T")
            } else if a >= 1e9 {
                (1e9, "G")
            } else if a >= 1e6 {
                (1e6, "M")
            } else if a >= 1e4 {
                (1e3, "K")
            } else {
                (1.0, "")
            };
            if scale == 1.0 {
                if v.fract() == 0.0 {
                    format!("{v:.0}{suffix}")
                } else {
                    format!("{v:.2}{suffix}")
                }
            } else {
                format!("{:.2}{letter}{suffix}", v / scale)
            }
        }
    }
}

fn scaled(v: f64, steps: &[(f64, &str)], base: &str) -> String {
    for &(scale, name) in steps {
        if v.abs() >= scale {
            return format!("{:.2} {name}", v / scale);
        }
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {base}")
    } else {
        format!("{v:.2} {base}")
    }
}

/// A baseline as `mean ±stddev` (just the mean when the runs agree exactly).
pub(crate) fn format_mu_sigma(stats: &crate::aggregate::Stats, unit: &str) -> String {
    if stats.stddev == 0.0 {
        format_value(stats.mean, unit)
    } else {
        format!(
            "{} ±{}",
            format_value(stats.mean, unit),
            format_value(stats.stddev, unit)
        )
    }
}

/// The first sentence of an ncu rule description (they run to a paragraph).
pub(crate) fn first_sentence(text: &str) -> &str {
    match text.find(". ") {
        Some(i) => &text[..=i],
        None => text,
    }
}

/// The change from `from` to `to`: `+100.0%`, `-3.2%`, `±0`, or `0 → 2.6K` when `from` is 0.
pub(crate) fn format_change(from: f64, to: f64) -> String {
    if from == to {
        "±0%".into()
    } else if from == 0.0 {
        format!("new (0 → {})", format_value(to, ""))
    } else {
        format!("{:+.1}%", (to - from) / from.abs() * 100.0)
    }
}

/// `n` and the word for it: `1 finding`, `3 findings` (`one` and `many`
/// are the word's two forms: `launch`, `launches`).
pub(crate) fn count(n: impl std::fmt::Display, one: &str, many: &str) -> String {
    let word = if n.to_string() == "1" { one } else { many };
    format!("{n} {word}")
}

/// Lowercase hex of bytes (a digest): `[0xab, 0x01]` is `ab01`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A command line as a shell would show it: each word through [`shell_quote`].
pub(crate) fn shell_words<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| shell_quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A word as a POSIX shell needs it: as it is when every character is one
/// a shell leaves alone, else in single quotes (a `'` inside as `'\''`).
pub(crate) fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_naturally() {
        assert_eq!(format_value(48_544.0, "ns"), "48.54 us");
        assert_eq!(format_value(1_420_832.0, "ns"), "1.42 ms");
        assert_eq!(format_value(67_116_288.0, "byte"), "67.12 MB");
        assert_eq!(format_value(12_058_624.0, "inst"), "12.06M inst");
        assert_eq!(format_value(49.41, "%"), "49.41%");
        assert_eq!(format_value(0.0, "inst"), "0 inst");
        assert_eq!(format_change(10.0, 12.0), "+20.0%");
        assert_eq!(format_change(0.0, 0.0), "±0%");
        assert_eq!(format_change(0.0, 2627.85), "new (0 → 2627.85)");
    }

    #[test]
    fn bytes_in_hex() {
        assert_eq!(hex(&[0xab, 0x01, 0x00]), "ab0100");
        assert_eq!(hex(&[]), "");
    }

    #[test]
    fn words_are_quoted_only_where_a_shell_needs_it() {
        assert_eq!(shell_quote("--size=4"), "--size=4");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(
            shell_words(&["./app", "--n", "two words"]),
            "./app --n 'two words'"
        );
    }
}
