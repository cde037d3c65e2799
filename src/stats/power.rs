//! How small a drop a gold set can detect. A gate with a tolerance below this
//! will mostly pass real regressions of that size, so the report warns instead
//! of pretending. Normal approximation to the one-sided paired test (Cohen
//! 1988, ch. 2): a drop `delta` is detected with probability `power` at level
//! alpha when `delta >= (z_{1-alpha} + z_power) sd / sqrt(n)`.

use statrs::distribution::{ContinuousCDF, Normal};

/// Standard normal quantile; NaN outside (0, 1), where statrs would panic.
pub fn z_quantile(p: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) {
        return f64::NAN;
    }
    match Normal::new(0.0, 1.0) {
        Ok(n) => n.inverse_cdf(p),
        Err(_) => f64::NAN,
    }
}

/// Standard normal distribution function; NaN for NaN.
pub fn normal_cdf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    match Normal::new(0.0, 1.0) {
        Ok(n) => n.cdf(x),
        Err(_) => f64::NAN,
    }
}

/// `z_{1-alpha} + z_power`, or None when either level is outside (0, 1).
/// Negative when power < alpha, which asks for less than chance and is
/// treated as "any sample size will do".
fn z_sum(alpha: f64, power: f64) -> Option<f64> {
    let z = z_quantile(1.0 - alpha) + z_quantile(power);
    z.is_finite().then_some(z)
}

/// Minimum detectable drop (one-sided, level alpha, given power), in metric
/// units; `sd` is the sample standard deviation of the deltas (n - 1).
///
/// `n == 0` gives +inf (nothing is detectable without queries); a negative or
/// non-finite `sd`, or alpha/power outside (0, 1), gives NaN; `sd == 0` gives
/// 0. Never negative.
pub fn min_detectable_drop(sd: f64, n: usize, alpha: f64, power: f64) -> f64 {
    let Some(z) = z_sum(alpha, power) else {
        return f64::NAN;
    };
    if !(sd.is_finite() && sd >= 0.0) {
        return f64::NAN;
    }
    if n == 0 {
        return f64::INFINITY;
    }
    (z.max(0.0) * sd / (n as f64).sqrt()).max(0.0)
}

/// Queries needed so that a drop of `tolerance` is detectable:
/// `ceil(((z_{1-alpha} + z_power) sd / tolerance)^2)`, but at least 2, since a
/// paired test cannot estimate variability from fewer.
///
/// None when the question has no answer: `tolerance` not positive and finite,
/// `sd` negative or non-finite, alpha/power outside (0, 1), or a count that
/// does not fit in `usize`.
pub fn queries_needed(sd: f64, tolerance: f64, alpha: f64, power: f64) -> Option<usize> {
    let z = z_sum(alpha, power)?.max(0.0);
    if !(tolerance.is_finite() && tolerance > 0.0 && sd.is_finite() && sd >= 0.0) {
        return None;
    }
    let n = (z * sd / tolerance).powi(2).ceil();
    // 2^53 is where f64 stops counting exactly; far beyond any gold set.
    if !(n.is_finite() && n < 9_007_199_254_740_992.0) {
        return None;
    }
    usize::try_from(n as u64).ok().map(|n| n.max(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z_quantiles() {
        assert!((z_quantile(0.95) - 1.644_853_626_951_472_2).abs() < 1e-9);
        assert!((z_quantile(0.8) - 0.841_621_233_572_914_2).abs() < 1e-9);
        assert!(z_quantile(0.0).is_nan() && z_quantile(1.0).is_nan() && z_quantile(f64::NAN).is_nan());
    }

    #[test]
    fn mdd_matches_formula() {
        // (1.6449 + 0.8416) * 0.4445 / sqrt(50) = 0.15630
        let mdd = min_detectable_drop(0.4445, 50, 0.05, 0.8);
        assert!((mdd - 2.486_474_860_524_386 * 0.4445 / 50f64.sqrt()).abs() < 1e-9);
        assert!((mdd - 0.1563).abs() < 1e-4);
    }

    #[test]
    fn mdd_edge_cases() {
        assert_eq!(min_detectable_drop(0.3, 0, 0.05, 0.8), f64::INFINITY);
        assert_eq!(min_detectable_drop(0.0, 10, 0.05, 0.8), 0.0);
        assert!(min_detectable_drop(f64::NAN, 10, 0.05, 0.8).is_nan());
        assert!(min_detectable_drop(-1.0, 10, 0.05, 0.8).is_nan());
        assert!(min_detectable_drop(0.3, 10, 0.0, 0.8).is_nan());
        assert!(min_detectable_drop(0.3, 10, 0.05, 1.0).is_nan());
        assert_eq!(min_detectable_drop(0.3, 10, 0.5, 0.1), 0.0);
    }

    #[test]
    fn queries_needed_inverts_mdd() {
        let n = queries_needed(0.4445, 0.05, 0.05, 0.8).unwrap();
        // ((2.48647 * 0.4445) / 0.05)^2 = 488.6 -> 489
        assert_eq!(n, 489);
        assert!(min_detectable_drop(0.4445, n, 0.05, 0.8) <= 0.05);
        assert!(min_detectable_drop(0.4445, n - 1, 0.05, 0.8) > 0.05);
    }

    #[test]
    fn queries_needed_edge_cases() {
        assert_eq!(queries_needed(0.0, 0.01, 0.05, 0.8), Some(2));
        assert_eq!(queries_needed(0.1, 0.0, 0.05, 0.8), None);
        assert_eq!(queries_needed(0.1, f64::NAN, 0.05, 0.8), None);
        assert_eq!(queries_needed(f64::INFINITY, 0.1, 0.05, 0.8), None);
        assert_eq!(queries_needed(1.0, 1e-300, 0.05, 0.8), None);
        assert_eq!(queries_needed(0.1, 0.1, 1.5, 0.8), None);
        // A tolerance that is not a positive finite drop asks nothing
        // answerable: an infinite one would read as "2 queries suffice".
        assert_eq!(queries_needed(1.0, f64::INFINITY, 0.05, 0.8), None);
        assert_eq!(queries_needed(0.1, -0.05, 0.05, 0.8), None);
        assert_eq!(queries_needed(-0.1, 0.05, 0.05, 0.8), None);
    }
}
