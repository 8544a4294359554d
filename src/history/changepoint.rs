//! Change points of a noisy series: E-Divisive means (Matteson and James,
//! 2014) to place a split, Welch's t-test to decide whether it is one — the
//! method Apache Otava (formerly Hunter, MongoDB's change-point work) runs
//! on performance histories, with its settings: a significance level
//! (`[history] change_p`, default 0.001) and a window (`[history]
//! change_window`, default 50 runs).
//!
//! 1. **Place.** In every window of `window` runs (windows overlap by half),
//!    the split that maximises the E-Divisive energy statistic
//!    `Q = mn/(m+n) · (2/(mn)·Σ|x−y| − Σ|x−x'|/C(m,2) − Σ|y−y'|/C(n,2))` is a
//!    candidate when Welch's t-test between its two sides gives p < `p`;
//!    each side is searched again the same way (binary segmentation).
//! 2. **Confirm.** Each candidate is tested again between its neighbours
//!    (at most `window` runs on each side); the least significant one that
//!    fails is dropped and the rest tested again, until all pass.
//!
//! No randomness: the same series gives the same change points. The p of
//! the test is the level of one test at a chosen split, not the rate of
//! false alarms over a history (the split is the best of many): that rate
//! is measured on recorded GPU noise and published with the method.

pub(crate) use crate::options::history::{ChangeSettings as Settings, MIN_CHANGE_SIDE as MIN_SIDE};

/// One change point of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ChangePoint {
    /// The index of the first value after the change.
    pub(crate) index: usize,
    /// The mean of the values before it (up to `window`, since the last change).
    pub(crate) before: f64,
    /// The mean of the values from it (up to `window`, to the next change).
    pub(crate) after: f64,
    /// Welch's two-sided p between the two.
    pub(crate) p: f64,
}

/// The change points of `values`, oldest first.
pub(crate) fn find(values: &[f64], s: Settings) -> Vec<ChangePoint> {
    let window = s.window.max(2 * MIN_SIDE);
    let mut candidates = Vec::new();
    let mut start = 0;
    loop {
        let end = (start + window).min(values.len());
        split(values, start, end, s.p, &mut candidates);
        if end == values.len() {
            break;
        }
        start += window / 2;
    }
    candidates.sort_unstable();
    candidates.dedup();
    confirm(values, candidates, s.p, window)
}

/// Binary segmentation of `values[from..to]`: its best split when significant, then each side's.
fn split(values: &[f64], from: usize, to: usize, p: f64, out: &mut Vec<usize>) {
    let Some(at) = best_split(&values[from..to]).map(|t| from + t) else {
        return;
    };
    if welch(&values[from..at], &values[at..to]) < p {
        out.push(at);
        split(values, from, at, p, out);
        split(values, at, to, p, out);
    }
}

/// The split of `z` with the largest E-Divisive statistic, each side at
/// least [`MIN_SIDE`] long; updated in O(n) per step, O(n²) in all.
fn best_split(z: &[f64]) -> Option<usize> {
    let n = z.len();
    if n < 2 * MIN_SIDE {
        return None;
    }
    let dist = |i: usize, j: usize| (z[i] - z[j]).abs();
    // Start with X = z[..0] and Y = z, and move one value at a time from Y to X.
    let mut within_x = 0.0;
    let mut within_y: f64 = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .map(|(i, j)| dist(i, j))
        .sum();
    let mut between = 0.0;
    let mut best: Option<(usize, f64)> = None;
    for tau in 1..=n - MIN_SIDE {
        let moved = tau - 1;
        let to_x: f64 = (0..moved).map(|i| dist(i, moved)).sum();
        let to_y: f64 = (tau..n).map(|j| dist(moved, j)).sum();
        within_x += to_x;
        within_y -= to_y;
        between += to_y - to_x;
        if tau < MIN_SIDE {
            continue;
        }
        let (m, k) = (tau as f64, (n - tau) as f64);
        let q = m * k / (m + k)
            * (2.0 * between / (m * k)
                - within_x / (m * (m - 1.0) / 2.0)
                - within_y / (k * (k - 1.0) / 2.0));
        if best.is_none_or(|(_, b)| q > b) {
            best = Some((tau, q));
        }
    }
    best.map(|(tau, _)| tau)
}

/// Tests every candidate again between its neighbours and drops the least
/// significant one that fails, until every one left passes.
fn confirm(values: &[f64], mut at: Vec<usize>, p: f64, window: usize) -> Vec<ChangePoint> {
    loop {
        let tested: Vec<ChangePoint> = (0..at.len())
            .map(|i| {
                let lo = if i == 0 { 0 } else { at[i - 1] };
                let hi = at.get(i + 1).copied().unwrap_or(values.len());
                let before = &values[lo.max(at[i].saturating_sub(window))..at[i]];
                let after = &values[at[i]..hi.min(at[i] + window)];
                ChangePoint {
                    index: at[i],
                    before: mean(before),
                    after: mean(after),
                    p: welch(before, after),
                }
            })
            .collect();
        let weakest = tested
            .iter()
            .enumerate()
            .filter(|(_, c)| c.p >= p)
            .max_by(|a, b| a.1.p.total_cmp(&b.1.p))
            .map(|(i, _)| i);
        match weakest {
            Some(i) => {
                at.remove(i);
            }
            None => return tested,
        }
    }
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Welch's two-sided p that `a` and `b` have the same mean; 1 when either
/// side is shorter than [`MIN_SIDE`]. Two constant sides: 0 when they
/// differ, 1 when equal (a value that never moves moved).
pub(crate) fn welch(a: &[f64], b: &[f64]) -> f64 {
    if a.len() < MIN_SIDE || b.len() < MIN_SIDE {
        return 1.0;
    }
    let (ma, mb) = (mean(a), mean(b));
    let var = |x: &[f64], m: f64| {
        x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() as f64 - 1.0)
    };
    let (va, vb) = (var(a, ma) / a.len() as f64, var(b, mb) / b.len() as f64);
    let se2 = va + vb;
    if se2.is_nan() || se2 <= 0.0 {
        return if ma == mb { 1.0 } else { 0.0 };
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2 * se2 / (va * va / (a.len() as f64 - 1.0) + vb * vb / (b.len() as f64 - 1.0));
    if !t.is_finite() || !df.is_finite() {
        return 1.0;
    }
    // P(|T| > t) for Student's t with df degrees of freedom.
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// The regularised incomplete beta function I_x(a, b) (Numerical Recipes §6.4).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    d = 1.0 / if d.abs() < TINY { TINY } else { d };
    let mut h = d;
    for m in 1..300 {
        let m = f64::from(m);
        for num in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + num * d;
            d = 1.0 / if d.abs() < TINY { TINY } else { d };
            c = 1.0 + num / c;
            if c.abs() < TINY {
                c = TINY;
            }
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = G[1..]
        .iter()
        .enumerate()
        .fold(G[0], |s, (i, g)| s + g / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Settings = Settings {
        p: 0.001,
        window: 50,
    };

    #[test]
    fn the_t_distribution_s_tail_matches_published_tables() {
        // Two-sided p of Student's t: t = 2.228 at 10 df is 0.05, t = 4.587 is 0.001,
        // t = 1.96 at very many df is 0.05.
        let p = |t: f64, df: f64| incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
        assert!((p(2.228, 10.0) - 0.05).abs() < 2e-4, "{}", p(2.228, 10.0));
        assert!((p(4.587, 10.0) - 0.001).abs() < 2e-5, "{}", p(4.587, 10.0));
        assert!((p(1.96, 1e6) - 0.05).abs() < 2e-4, "{}", p(1.96, 1e6));
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn welch_separates_a_step_from_noise() {
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        assert!(welch(&a, &[110.0, 111.0, 109.0, 110.5, 109.5]) < 1e-5);
        assert!(welch(&a, &[100.2, 99.8, 100.9, 99.1, 100.0]) > 0.5);
        assert_eq!(welch(&[5.0; 6], &[5.0; 6]), 1.0);
        assert_eq!(welch(&[5.0; 6], &[6.0; 6]), 0.0);
        assert_eq!(welch(&a[..2], &a), 1.0, "too few to test");
    }

    #[test]
    fn a_step_is_found_at_its_first_run_and_noise_is_not() {
        let noise = [
            0.3, -0.5, 0.1, 0.6, -0.2, -0.4, 0.5, 0.0, -0.6, 0.2, 0.4, -0.1,
        ];
        let series: Vec<f64> = (0..36)
            .map(|i| 100.0 + noise[i % noise.len()] + if i >= 20 { 5.0 } else { 0.0 })
            .collect();
        let found = find(&series, S);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].index, 20);
        assert!(
            (found[0].after - found[0].before - 5.0).abs() < 0.5,
            "{found:?}"
        );
        let flat: Vec<f64> = (0..36).map(|i| 100.0 + noise[i % noise.len()]).collect();
        assert!(find(&flat, S).is_empty());
        // One odd run is no change.
        let mut odd = flat.clone();
        odd[17] = 130.0;
        assert!(find(&odd, S).is_empty(), "{:?}", find(&odd, S));
    }

    #[test]
    fn steps_further_apart_than_a_window_are_each_found() {
        let noise = [
            0.3, -0.5, 0.1, 0.6, -0.2, -0.4, 0.5, 0.0, -0.6, 0.2, 0.4, -0.1,
        ];
        let level = |i: usize| match i {
            0..60 => 100.0,
            60..130 => 104.0,
            _ => 98.0,
        };
        let series: Vec<f64> = (0..200)
            .map(|i| level(i) + noise[i % noise.len()])
            .collect();
        let at: Vec<usize> = find(&series, S).iter().map(|c| c.index).collect();
        assert_eq!(at, [60, 130]);
        assert!(find(&series[..4], S).is_empty(), "too short to test");
    }
}
