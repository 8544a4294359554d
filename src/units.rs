//! Unit normalization at the border.
//!
//! ncu auto-scales units per column (`us` in one export, `ms` in another;
//! `Gbyte/s` next to `Tbyte/s`). Every value leaves the parser in **ncu's own
//! base units** — the ones `ncu --print-units base` prints: `ns` for durations,
//! `byte` for sizes, `hz` for frequencies, per-`s` for rates — so an export
//! in auto units and one in base units aggregate to the same numbers.
//!
//! Every conversion is a power of ten, so a unit is normalized to a base name
//! plus a decimal exponent; [`crate::parse::number`] applies the exponent while
//! converting the decimal digits, which keeps `41.248 us` and `41,248 ns` the
//! same `f64` bit for bit.

/// A unit as printed by ncu, resolved to its base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// The base unit name, e.g. `ns`, `byte/s`, `inst`, `%`, or `` (dimensionless).
    pub base: String,
    /// Multiply a value in the printed unit by `10^exp10` to get the base unit.
    pub(crate) exp10: i32,
}

impl Unit {
    /// Resolves a unit string from the units row of a raw export.
    ///
    /// Units this table does not know pass through unchanged (`exp10 = 0`);
    /// the baseline stores the base unit name and the comparison refuses to
    /// compare different names, so an unknown scaled unit can never be
    /// silently compared with its base.
    pub fn parse(printed: &str) -> Unit {
        let printed = printed.trim();
        let (num, den) = match printed.split_once('/') {
            Some((n, d)) => (n, Some(d)),
            None => (printed, None),
        };
        let (num_base, num_exp) = numerator(num);
        match den {
            None => Unit {
                base: num_base,
                exp10: num_exp,
            },
            Some(den) => {
                let (den_base, den_exp) = denominator(den);
                Unit {
                    base: format!("{num_base}/{den_base}"),
                    exp10: num_exp - den_exp,
                }
            }
        }
    }
}

/// SI prefixes ncu uses (decimal: `1.024000 Kbyte` is 1,024 bytes).
fn prefixed(unit: &str, base: &str) -> Option<i32> {
    let prefix = unit.strip_suffix(base)?;
    match prefix {
        "" => Some(0),
        "K" | "k" => Some(3),
        "M" => Some(6),
        "G" => Some(9),
        "T" => Some(12),
        "P" => Some(15),
        _ => None,
    }
}

/// Durations in ns, the unit of `gpu__time_duration` in base-unit exports.
/// Older ncu versions spell them `nsecond`, `usecond`, `msecond`, `second`.
fn time_in_ns(unit: &str) -> Option<i32> {
    match unit {
        "ns" | "nsecond" => Some(0),
        "us" | "usecond" => Some(3),
        "ms" | "msecond" => Some(6),
        "s" | "second" => Some(9),
        _ => None,
    }
}

fn numerator(unit: &str) -> (String, i32) {
    if let Some(exp) = time_in_ns(unit) {
        return ("ns".into(), exp);
    }
    for base in ["byte", "hz"] {
        if let Some(exp) = prefixed(unit, base) {
            return (base.into(), exp);
        }
    }
    // Short byte units (`MB`), as some tools rewrite ncu's `Mbyte`; decimal like ncu's.
    if let Some(exp) = prefixed(unit, "B") {
        return ("byte".into(), exp);
    }
    (unit.to_string(), 0)
}

/// A denominator: time becomes per-second (as in ncu's `byte/s`), sizes
/// become per-byte (`%/Kbyte` → `%/byte`).
fn denominator(unit: &str) -> (String, i32) {
    if let Some(exp_ns) = time_in_ns(unit) {
        return ("s".into(), exp_ns - 9);
    }
    if let Some(exp) = prefixed(unit, "byte") {
        return ("byte".into(), exp);
    }
    (unit.to_string(), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> (String, i32) {
        let unit = Unit::parse(s);
        (unit.base, unit.exp10)
    }

    #[test]
    fn every_auto_unit_seen_in_the_h200_exports_maps_to_the_base_ncu_prints() {
        // Pairs read from the same report exported with and without
        // `--print-units base` (fixtures/ncu-reference, H200, ncu 2025.3.1).
        let pairs = [
            ("%/Kbyte", "%/byte", -3),
            ("Gbyte", "byte", 9),
            ("Gbyte/s", "byte/s", 9),
            ("Ghz", "hz", 9),
            ("Kbyte", "byte", 3),
            ("Kbyte/block", "byte/block", 3),
            ("Kbyte/cycle", "byte/cycle", 3),
            ("Mbyte", "byte", 6),
            ("Mbyte/s", "byte/s", 6),
            ("Mhz", "hz", 6),
            ("Tbyte", "byte", 12),
            ("Tbyte/s", "byte/s", 12),
            ("sector/ns", "sector/s", 9),
            ("sector/us", "sector/s", 6),
            ("us", "ns", 3),
            ("ms", "ns", 6),
            ("s", "ns", 9),
            ("ns", "ns", 0),
            // Spellings of older ncu versions and of tools that rewrite units.
            ("nsecond", "ns", 0),
            ("usecond", "ns", 3),
            ("msecond", "ns", 6),
            ("Gbyte/second", "byte/s", 9),
            ("cycle/nsecond", "cycle/s", 9),
            ("MB", "byte", 6),
            ("KB", "byte", 3),
            ("B", "byte", 0),
        ];
        for (auto, base, exp) in pairs {
            assert_eq!(u(auto), (base.to_string(), exp), "{auto}");
            // A base unit maps to itself.
            assert_eq!(u(base).0, base, "{base}");
        }
    }

    #[test]
    fn units_without_a_scale_pass_through() {
        for s in [
            "%",
            "inst",
            "cycle",
            "inst/cycle",
            "sector",
            "warp",
            "",
            "register/thread",
            "byte/sector",
        ] {
            assert_eq!(u(s), (s.to_string(), 0));
        }
    }
}
