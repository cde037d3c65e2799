//! Geometric means (trec_eval's `gm_map` and `gm_bpref`) under the paired
//! tests of the gate and compare.
//!
//! trec_eval's geometric mean is exp of the mean of ln(max(v, 0.00001))
//! (`MIN_GEO_MEAN`, trec_eval.h). Over the same queries, the ratio of two
//! runs' geometric means is exp of the mean paired difference of those
//! logs, so a paired test of the log values is a test of that ratio, as
//! the arithmetic tests are of a difference. A tolerance reaches the log
//! scale through the baseline's geometric mean GM_b (a drop t is the ratio
//! 1 - t / GM_b, as `max_drop_pct` resolves through the baseline mean), and
//! every number a report prints goes back into the metric's units: a mean
//! is the geometric mean, a delta x on the log scale is GM_b (e^x - 1).

use super::Comparison;
use crate::eval::Scores;
use crate::metrics::{Agg, Metric, MIN_GEO_MEAN};

/// Whether `m` is tested on the log scale.
pub fn is_geometric(m: &Metric) -> bool {
    m.family().agg == Agg::GeoMean
}

/// One query's value on the log scale.
pub fn log_value(v: f64) -> f64 {
    v.max(MIN_GEO_MEAN).ln()
}

pub fn log_values(v: &[f64]) -> Vec<f64> {
    v.iter().map(|&x| log_value(x)).collect()
}

/// The width of the log scale, -ln(0.00001): a log value y lies in
/// [-span, 0].
pub fn log_span() -> f64 {
    -MIN_GEO_MEAN.ln()
}

/// Log values moved onto [0, 1] ((y + span) / span: 0 where the value is
/// at the floor, 1 at a perfect score), for the gate's power model, which
/// reads a value as what a query has left to lose.
pub fn unit_scaled(logs: &[f64]) -> Vec<f64> {
    let span = log_span();
    logs.iter().map(|&y| (y + span) / span).collect()
}

/// `scores` with every geometric-mean metric's values on the log scale;
/// `None` when it has none (nothing to copy).
pub fn logged(scores: &Scores) -> Option<Scores> {
    if !scores.metrics.iter().any(is_geometric) {
        return None;
    }
    Some(Scores {
        metrics: scores.metrics.clone(),
        values: scores
            .metrics
            .iter()
            .zip(&scores.values)
            .map(|(m, v)| if is_geometric(m) { log_values(v) } else { v.clone() })
            .collect(),
    })
}

/// The log-scale margin of a drop of `t` from the geometric mean `gm_b`:
/// -ln(1 - t / gm_b). A geometric mean never falls below 0.00001, so a
/// tolerance reaching past that is the largest drop possible.
pub fn log_tolerance(t: f64, gm_b: f64) -> f64 {
    // NaN (no baseline values) too.
    if gm_b.is_nan() || gm_b <= MIN_GEO_MEAN {
        return 0.0;
    }
    let t = t.clamp(0.0, gm_b - MIN_GEO_MEAN);
    -(-t / gm_b).ln_1p()
}

/// Maps log-scale numbers back into the metric's units, about the
/// baseline's geometric mean.
#[derive(Debug, Clone, Copy)]
pub struct Back {
    pub gm_b: f64,
}

impl Back {
    /// A change x of the mean log: GM_b (e^x - 1).
    pub fn delta(self, x: f64) -> f64 {
        self.gm_b * x.exp_m1()
    }

    /// A drop (a positive margin) x of the mean log: GM_b (1 - e^-x).
    pub fn drop(self, x: f64) -> f64 {
        -self.gm_b * (-x).exp_m1()
    }
}

/// A comparison tested on the log scale, in the metric's units: the two
/// geometric means, their difference and its interval. Returns the mapping
/// for the caller's other numbers.
pub fn to_units(c: &mut Comparison) -> Back {
    let back = Back {
        gm_b: c.baseline.exp(),
    };
    c.baseline = back.gm_b;
    c.current = c.current.exp();
    c.delta = back.delta(c.delta);
    c.ci_low = back.delta(c.ci_low);
    c.ci_high = back.delta(c.ci_high);
    back
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: AP 0.5 and 0.2 have the geometric mean sqrt(0.1) =
    /// 0.316228; with the second at 0.1 it is sqrt(0.05) = 0.223607, a
    /// change of -0.092621, and exp of the mean log difference (ln(0.1/0.2)
    /// / 2) is their ratio, 0.707107.
    #[test]
    fn a_log_change_maps_back_to_the_geometric_means() {
        let base = log_values(&[0.5, 0.2]);
        let cur = log_values(&[0.5, 0.1]);
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let mut c = Comparison {
            metric: "gm_map".parse().unwrap(),
            stratum: "all".into(),
            n: 2,
            baseline: mean(&base),
            current: mean(&cur),
            delta: mean(&cur) - mean(&base),
            ci_low: f64::NEG_INFINITY,
            ci_high: 0.0,
            p_value: 0.5,
            p_adjusted: f64::NAN,
        };
        let back = to_units(&mut c);
        assert!((c.baseline - 0.316_228).abs() < 1e-6, "{}", c.baseline);
        assert!((c.current - 0.223_607).abs() < 1e-6, "{}", c.current);
        assert!((c.delta + 0.092_621).abs() < 1e-6, "{}", c.delta);
        assert!((c.current / c.baseline - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        // The interval's ends: no rise, and at most the whole mean lost.
        assert_eq!(c.ci_high, 0.0);
        assert!((c.ci_low + back.gm_b).abs() < 1e-12);
        // A drop of 0.1 from 0.316228 is the ratio 0.683772: ln of its
        // inverse, 0.380130, and back.
        let t = log_tolerance(0.1, back.gm_b);
        assert!((t - 0.380_130).abs() < 1e-6, "{t}");
        assert!((back.drop(t) - 0.1).abs() < 1e-12);
        // A tolerance past the mean is the largest drop possible.
        assert!((back.drop(log_tolerance(1.0, back.gm_b)) - (back.gm_b - MIN_GEO_MEAN)).abs() < 1e-12);
    }
}
