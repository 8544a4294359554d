//! Numbers as ncu prints them: `"65,536"`, `41.248000`, `2,581,269,200,930.95`,
//! `n/a`, or an empty cell.
//!
//! Digits are read into an integer mantissa and a decimal exponent, the unit's
//! power of ten is added to the exponent, and the result is converted to `f64`
//! once. So `41.248 us` and `41,248 ns` become the same `f64`, bit for bit,
//! which is what lets auto-unit and base-unit exports aggregate identically.

/// One cell of a metric column.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Cell {
    /// A number, already in the base unit.
    Value(f64),
    /// `n/a` or an empty cell: the metric was not collected for this launch.
    Missing,
    /// Text that is not a number (e.g. `PolicySpread`).
    Text,
}

/// Parses a cell and scales it by `10^exp10`.
pub(crate) fn parse_cell(raw: &[u8], exp10: i32) -> Cell {
    parse_printed(raw, exp10).0
}

/// [`parse_cell`], with the value's step as printed: the place of its last
/// digit in the base unit (`41.41` us: 10 ns; `41,408` ns: 1 ns), so a value
/// printed rounded is within half a step of the value ncu measured. The
/// step is 0 for a cell that is not a number.
pub(crate) fn parse_printed(raw: &[u8], exp10: i32) -> (Cell, f64) {
    let s = trim(raw);
    if s.is_empty() || s.eq_ignore_ascii_case(b"n/a") {
        return (Cell::Missing, 0.0);
    }
    match parse_decimal(s) {
        Some((negative, mantissa, exp)) => {
            // Saturating: an exponent past i32 reads as infinite (and is
            // refused as not finite), never wraps around to a tiny value.
            let exp = exp.saturating_add(exp10);
            let v = to_f64(mantissa, exp);
            (Cell::Value(if negative { -v } else { v }), to_f64(1, exp))
        }
        None => (Cell::Text, 0.0),
    }
}

/// Why a parsed metric value cannot come from ncu, if it cannot: counters,
/// times, sizes, rates and percentages are finite and never negative.
pub(crate) fn impossible(v: f64) -> Option<&'static str> {
    if !v.is_finite() {
        Some("not a finite number")
    } else if v < 0.0 {
        Some("negative, and no ncu counter, time, size, rate or percentage is")
    } else {
        None
    }
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t' | b'\r', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t' | b'\r'] = s {
        s = rest;
    }
    s
}

/// Reads `[-+]digits[,digits]*[.digits][e[-+]digits]` into (sign, mantissa, exponent).
/// Returns `None` for anything else. Mantissas beyond 19 digits keep the
/// leading 19 digits and shift the exponent (values stay correct to ~1e-19).
fn parse_decimal(s: &[u8]) -> Option<(bool, u64, i32)> {
    let mut i = 0;
    let negative = match s.first() {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut mantissa: u64 = 0;
    let mut exp: i32 = 0;
    let mut digits = 0;
    let mut seen_point = false;
    while i < s.len() {
        let c = s[i];
        match c {
            b'0'..=b'9' => {
                if mantissa < 1_000_000_000_000_000_000 {
                    mantissa = mantissa * 10 + u64::from(c - b'0');
                    if seen_point {
                        exp -= 1;
                    }
                } else if !seen_point {
                    exp += 1;
                }
                digits += 1;
            }
            // Thousands separator: only between digits of the integer part.
            b',' if !seen_point && digits > 0 => {}
            b'.' if !seen_point => seen_point = true,
            b'e' | b'E' if digits > 0 => {
                let e: i32 = std::str::from_utf8(&s[i + 1..]).ok()?.parse().ok()?;
                exp = exp.checked_add(e)?;
                i = s.len();
                break;
            }
            _ => return None,
        }
        i += 1;
    }
    debug_assert!(i >= s.len());
    (digits > 0).then_some((negative, mantissa, exp))
}

const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `mantissa × 10^exp`, correctly rounded.
///
/// Fast path (Clinger): a mantissa below 2^53 and |exp| ≤ 22 are both exact
/// in `f64`, so one multiplication or division rounds once. Otherwise the
/// standard library's parser does it.
fn to_f64(mantissa: u64, exp: i32) -> f64 {
    if mantissa < (1 << 53) && exp.unsigned_abs() <= 22 {
        let m = mantissa as f64;
        let p = POW10[exp.unsigned_abs() as usize];
        return if exp >= 0 { m * p } else { m / p };
    }
    format!("{mantissa}e{exp}").parse().unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ncu_number_shapes() {
        assert_eq!(parse_cell(b"65,536", 0), Cell::Value(65536.0));
        assert_eq!(parse_cell(b"12582912.000000", 0), Cell::Value(12582912.0));
        assert_eq!(parse_cell(b"2,147,483,647", 0), Cell::Value(2147483647.0));
        assert_eq!(parse_cell(b"0.008192", 6), Cell::Value(8192.0));
        assert_eq!(parse_cell(b"-1.5", 0), Cell::Value(-1.5));
        assert_eq!(parse_cell(b"1e3", 0), Cell::Value(1000.0));
        // An exponent at i32::MAX plus a unit's power of ten saturates to infinity.
        assert_eq!(parse_cell(b"1e2147483647", 6), Cell::Value(f64::INFINITY));
        assert_eq!(parse_cell(b"1e-2147483648", -3), Cell::Value(0.0));
        assert_eq!(parse_cell(b"n/a", 0), Cell::Missing);
        assert_eq!(parse_cell(b"", 0), Cell::Missing);
        assert_eq!(parse_cell(b" ", 0), Cell::Missing);
        assert_eq!(parse_cell(b"PolicySpread", 0), Cell::Text);
        assert_eq!(parse_cell(b"(256, 1, 1)", 0), Cell::Text);
        assert_eq!(parse_cell(b"1.2.3", 0), Cell::Text);
        assert_eq!(parse_cell(b",5", 0), Cell::Text);
        assert_eq!(parse_cell(b"-", 0), Cell::Text);
    }

    #[test]
    fn auto_and_base_units_give_the_same_bits() {
        // `41.248000 us` (auto) and `41,248 ns` (base) from the same H200 report.
        assert_eq!(parse_cell(b"41.248000", 3), parse_cell(b"41,248", 0));
        // `1.420832 ms` vs `1,420,832 ns`; `997.632 us` vs `997,632 ns`.
        assert_eq!(parse_cell(b"1.420832", 6), Cell::Value(1_420_832.0));
        assert_eq!(parse_cell(b"997.632", 3), Cell::Value(997_632.0));
        // `2.581269 Tbyte/s` is 2,581,269,000,000 byte/s exactly.
        assert_eq!(
            parse_cell(b"2.581269", 12),
            Cell::Value(2_581_269_000_000.0)
        );
    }

    #[test]
    fn a_step_is_the_place_of_the_last_digit_printed() {
        // One H200 duration as the details page (`41.41` us), the raw page
        // (`41.408000` us) and the raw page in base units (`41,408` ns) print it.
        assert_eq!(parse_printed(b"41.41", 3), (Cell::Value(41_410.0), 10.0));
        assert_eq!(parse_printed(b"41.408000", 3).1, 0.001);
        assert_eq!(parse_printed(b"41,408", 0), (Cell::Value(41_408.0), 1.0));
        assert_eq!(parse_printed(b"1e3", 0).1, 1000.0);
        assert_eq!(parse_printed(b"n/a", 0), (Cell::Missing, 0.0));
        assert_eq!(parse_printed(b"PolicySpread", 0), (Cell::Text, 0.0));
    }

    #[test]
    fn long_mantissas_stay_close() {
        let Cell::Value(v) = parse_cell(b"123456789012345678901234.5", 0) else {
            panic!()
        };
        assert!((v / 1.2345678901234568e23 - 1.0).abs() < 1e-15);
        let Cell::Value(v) = parse_cell(b"3.14159265358979323846", 0) else {
            panic!()
        };
        assert!((v - std::f64::consts::PI).abs() < 1e-15);
    }
}
