//! Values as `ncu --csv --page raw --print-units base` prints them.
//!
//! ncu prints whole numbers with thousands separators (`1,980,000`) and
//! other numbers rounded to two decimals (`820,874.67`); a string value is
//! printed as it is; a metric the report lists without a value is `no data`,
//! and a value that is not a number `nan`. Printing the report's values the same way makes the
//! native read give the same numbers as the CSV path, to the last digit.

use super::schema::MetricValue;

/// What ncu prints for a metric the report lists without a value.
pub const NO_DATA: &str = "no data";

/// The text ncu's raw page shows for `value`.
pub fn value(value: &MetricValue) -> String {
    if let Some(s) = &value.string {
        return s.clone();
    }
    if let Some(v) = value.uint64 {
        return grouped(&v.to_string());
    }
    if let Some(v) = value.uint32 {
        return grouped(&v.to_string());
    }
    if let Some(v) = value.double {
        return real(v);
    }
    if let Some(v) = value.float {
        return real(f64::from(v));
    }
    NO_DATA.into()
}

/// A floating-point value: whole numbers without decimals, others with two.
fn real(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    let text = if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    };
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.as_str()),
    };
    let (whole, decimals) = match digits.split_once('.') {
        Some((w, d)) => (w, Some(d)),
        None => (digits, None),
    };
    let mut out = format!("{sign}{}", grouped(whole));
    if let Some(d) = decimals {
        out.push('.');
        out.push_str(d);
    }
    out
}

/// Digits with a comma every three from the right.
fn grouped(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn double(v: f64) -> MetricValue {
        MetricValue {
            double: Some(v),
            ..Default::default()
        }
    }

    #[test]
    fn prints_like_ncu() {
        assert_eq!(value(&double(820_874.666_666)), "820,874.67");
        assert_eq!(value(&double(847_104.0)), "847,104");
        assert_eq!(value(&double(19.995)), "20.00");
        assert_eq!(value(&double(0.0)), "0");
        assert_eq!(value(&double(-1234.5)), "-1,234.50");
        assert_eq!(
            value(&MetricValue {
                uint64: Some(150_109_880_320),
                ..Default::default()
            }),
            "150,109,880,320"
        );
        assert_eq!(
            value(&MetricValue {
                string: Some("No-CC".into()),
                ..Default::default()
            }),
            "No-CC"
        );
        assert_eq!(value(&double(f64::NAN)), "nan");
        assert_eq!(value(&MetricValue::default()), NO_DATA);
    }
}
