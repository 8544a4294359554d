//! The SVG charts of the HTML report, one per gated metric: the baseline
//! mean with its ±σ whisker and the allowed band on the worse side, the
//! current value in the verdict's colour, and the limit (plotters).

use crate::status::Status;
use crate::verdict::RuleResult;
use plotters::prelude::*;

/// A divisor and label that make `max` readable in `unit` (ns → us, byte → MB, …).
fn display_scale(max: f64, unit: &str) -> (f64, String) {
    let steps: &[(f64, &str)] = match unit {
        "ns" => &[(1e9, "s"), (1e6, "ms"), (1e3, "us"), (1.0, "ns")],
        "byte" => &[
            (1e12, "TB"),
            (1e9, "GB"),
            (1e6, "MB"),
            (1e3, "KB"),
            (1.0, "B"),
        ],
        "byte/s" => &[(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1.0, "B/s")],
        "%" => &[(1.0, "%")],
        _ => &[(1e9, "G"), (1e6, "M"), (1e3, "K"), (1.0, "")],
    };
    for &(d, label) in steps {
        if max.abs() >= d {
            let label = if matches!(unit, "ns" | "byte" | "byte/s" | "%") {
                label.to_string()
            } else {
                format!("{label} {unit}").trim().to_string()
            };
            return (d, label);
        }
    }
    (1.0, unit.to_string())
}

/// The allowed band, on the worse side of the mean only: a rule never limits
/// an improvement, so the chart draws none.
fn band(worse: crate::rules::Worse, mean: f64, allowance: f64) -> (f64, f64) {
    match worse {
        crate::rules::Worse::Higher => (mean, mean + allowance),
        crate::rules::Worse::Lower => ((mean - allowance).max(0.0), mean),
    }
}

/// Characters of a chart title that fit its 520-pixel width at 14 px.
const CAPTION_CHARS: usize = 58;
/// Chart text size as plotters takes it: titles, tick labels and the unit
/// alike. Its SVG writes sizes as this / 1.24: 15 is 12.1 px, the smallest
/// that reads well at the page's scale.
const TEXT_PX: u32 = 15;
/// The axis ends at this many times the larger of the baseline's allowed
/// bound and its limit: a current value beyond it (+908%) is drawn to the
/// edge with its value written, so that the allowed band stays visible.
const CAP: f64 = 3.0;

/// The axis maximum and whether the current value `x` runs past it.
fn axis_top(x: f64, reference: f64) -> (f64, bool) {
    if reference > 0.0 && x > reference * CAP {
        (reference * CAP, true)
    } else {
        (x.max(reference), false)
    }
}

/// Baseline (mean bar, allowed band on the worse side, ±σ whisker) vs current (bar in the verdict's colour) and the limit.
pub(crate) fn chart(r: &RuleResult) -> Option<String> {
    let b = r.baseline?;
    let x = r.current?;
    // Zero before and after (no FP64 instructions, no global loads): nothing to draw; the
    // table row says it.
    if b.mean == 0.0 && b.max == 0.0 && x == 0.0 && r.limit.is_none_or(|l| l == 0.0) {
        return None;
    }
    let allowance = r.allowance.unwrap_or(0.0);
    let reference = [b.mean + allowance, b.max, r.limit.unwrap_or(0.0)]
        .into_iter()
        .fold(0.0f64, f64::max);
    let (top, capped) = axis_top(x, reference);
    let (div, label) = display_scale(top, &r.unit);
    // All zero (e.g. no FP64 instructions before or after): a 0..1 axis, not 0..1e-9.
    let xmax = if top > 0.0 { top / div * 1.15 } else { 1.0 };
    let color = match r.status {
        Status::Fail | Status::Error => RGBColor(0xc6, 0x28, 0x28),
        Status::Warn => RGBColor(0xef, 0x8f, 0x00),
        Status::Improved => RGBColor(0x1e, 0x88, 0xe5),
        // `higher`/`lower` is neither good nor bad: neutral, never pass-green.
        Status::Changed | Status::Skipped => RGBColor(0x57, 0x60, 0x6a),
        Status::Pass => RGBColor(0x2e, 0x7d, 0x32),
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (520, 150)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        // The kernel is the section's heading; the figure caption below holds the full name.
        let caption = super::columns::shorten_middle(&r.rule, CAPTION_CHARS);
        let mut c = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", TEXT_PX + 1))
            .margin(6)
            // Room for the tick labels and, below them, the unit.
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..xmax, 0f64..2f64)
            .ok()?;
        c.configure_mesh()
            .disable_y_mesh()
            .label_style(("sans-serif", TEXT_PX))
            .axis_desc_style(("sans-serif", TEXT_PX))
            .x_labels(6)
            .y_labels(5)
            .y_label_formatter(&|v| {
                if (*v - 0.5).abs() < 0.26 {
                    "current".into()
                } else if (*v - 1.5).abs() < 0.26 {
                    "baseline".into()
                } else {
                    String::new()
                }
            })
            .x_desc(label.as_str())
            .x_label_formatter(&|v| {
                format!("{v:.3}")
                    .trim_end_matches('0')
                    .trim_end_matches('.')
                    .to_string()
            })
            .draw()
            .ok()?;
        let (lo, hi) = band(r.worse, b.mean, allowance);
        let (lo, hi) = (lo / div, hi / div);
        c.draw_series([Rectangle::new(
            [(lo, 1.1), (hi, 1.9)],
            RGBColor(0xcf, 0xd8, 0xdc).filled(),
        )])
        .ok()?;
        c.draw_series([Rectangle::new(
            [(0.0, 1.3), (b.mean / div, 1.7)],
            RGBColor(0x60, 0x7d, 0x8b).filled(),
        )])
        .ok()?;
        if b.stddev > 0.0 {
            c.draw_series([PathElement::new(
                vec![
                    ((b.mean - b.stddev) / div, 1.5),
                    ((b.mean + b.stddev) / div, 1.5),
                ],
                BLACK.stroke_width(2),
            )])
            .ok()?;
        }
        let end = x.min(top) / div;
        c.draw_series([Rectangle::new([(0.0, 0.3), (end, 0.7)], color.filled())])
            .ok()?;
        if capped {
            // The bar runs off the axis: say where it ends.
            let text = crate::format::format_value(x, &r.unit);
            c.draw_series([Text::new(
                format!("{text} →"),
                (end * 0.62, 0.62),
                ("sans-serif", TEXT_PX).into_font().color(&WHITE),
            )])
            .ok()?;
        }
        if let Some(l) = r.limit {
            c.draw_series([PathElement::new(
                vec![(l / div, 0.05), (l / div, 1.95)],
                RED.stroke_width(2),
            )])
            .ok()?;
        }
        root.present().ok()?;
    }
    Some(svg)
}

#[cfg(test)]
mod tests {
    use crate::rules::Worse;

    #[test]
    fn the_allowed_band_is_on_the_worse_side_only() {
        assert_eq!(super::band(Worse::Higher, 100.0, 20.0), (100.0, 120.0));
        assert_eq!(super::band(Worse::Lower, 50.0, 5.0), (45.0, 50.0));
        assert_eq!(super::band(Worse::Lower, 3.0, 5.0), (0.0, 3.0));
    }

    #[test]
    fn a_huge_change_caps_the_axis_and_a_small_one_does_not() {
        assert_eq!(super::axis_top(908.0, 120.0), (360.0, true));
        assert_eq!(super::axis_top(150.0, 120.0), (150.0, false));
        assert_eq!(super::axis_top(90.0, 120.0), (120.0, false));
        assert_eq!(super::axis_top(5.0, 0.0), (5.0, false));
    }

    #[test]
    fn scales_read_naturally() {
        assert_eq!(super::display_scale(150_900.0, "ns"), (1e3, "us".into()));
        assert_eq!(
            super::display_scale(55_050_000.0, "inst"),
            (1e6, "M inst".into())
        );
        assert_eq!(super::display_scale(49.4, "%"), (1.0, "%".into()));
    }
}
