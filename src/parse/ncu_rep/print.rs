//! Values as `ncu --csv --page raw --print-units base` prints them.
//!
//! ncu prints whole numbers with thousands separators (`1,980,000`) and
//! other numbers rounded to two decimals (`820,874.67`); a string value is
//! printed as it is; a metric the report lists without a value is `no data`
//! (or an empty cell when it has instance values, see [`cell`]), and a value
//! that is not a number `nan`. Printing the report's values the same way makes the
//! native read give the same numbers as the CSV path, to the last digit.

use super::container::Metric;
use super::schema::MetricValue;

/// What ncu prints for a metric the report lists without a value.
pub(crate) const NO_DATA: &str = "no data";

/// The raw-page cell of `metric`: its value; without one, `no data` when
/// the metric has no instance values either, and an empty cell when it has
/// some. A `--set full` report stores its PM-sampling metrics (the
/// `*.TriageCompute.*` ratios) as a series of instance values with no value
/// of their own, and ncu leaves their cells empty; a metric the report lists
/// with nothing at all (`sass__inst_executed_register_spilling_mem_local` of
/// that report) reads `no data`.
pub(crate) fn cell(metric: &Metric) -> String {
    match &metric.value {
        Some(v) => value(v),
        None if metric.instances.is_empty() => NO_DATA.into(),
        None => String::new(),
    }
}

/// The text ncu's raw page shows for `value`.
pub(crate) fn value(value: &MetricValue) -> String {
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

    #[test]
    fn a_metric_without_a_value_is_no_data_unless_it_has_instances() {
        let metric = |value: Option<MetricValue>, instances: Vec<MetricValue>| Metric {
            name: "m".into(),
            value,
            instances,
        };
        assert_eq!(cell(&metric(None, Vec::new())), NO_DATA);
        assert_eq!(cell(&metric(None, vec![double(0.5), double(0.0)])), "");
        assert_eq!(cell(&metric(Some(double(2.0)), vec![double(0.5)])), "2");
    }
}
