//! How small a drop a gold set can detect. A gate with a tolerance below this
//! will mostly pass real regressions of that size, so the report warns instead
//! of pretending. Normal approximation to the one-sided paired test (Cohen
//! 1988, ch. 2): a drop `delta` is detected with probability `power` at level
//! alpha when `delta >= (z_{1-alpha} + z_power) sd / sqrt(n)`.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

use super::{block_rng, Strata, BLOCK_SIZE};

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

/// Student's t quantile with `df` degrees of freedom (the normal one beyond
/// 1e7, where they agree to 1e-7); NaN for `p` outside (0, 1) or `df` < 1.
/// The gate's power uses it so that a small scope, whose standard error is
/// itself estimated from few queries, is not promised the normal's power
/// (the textbook t approximation to the power of a one-sample test; Cohen
/// 1988, ch. 2.3).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    let usable = p > 0.0 && p < 1.0 && df >= 1.0;
    if !usable {
        return f64::NAN;
    }
    if df > 1e7 {
        return z_quantile(p);
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => t.inverse_cdf(p),
        Err(_) => f64::NAN,
    }
}

/// One statistic watched by [`chance_any_below`]: the weighted sum, over the
/// strata, of the resampled stratum means of column `column`
/// (`weights[g]` for group `g` of the strata, in their order), and the
/// limit it must not fall below.
#[derive(Debug, Clone, PartialEq)]
pub struct Watch {
    pub column: usize,
    pub weights: Vec<f64>,
    pub limit: f64,
}

/// How often a stratified resample of `values` (query-major, `k` columns)
/// puts each watched statistic below its limit, and how often at least one
/// of them: the chance that some of several correlated checks fails, which
/// is not `1 - prod(1 - p_j)` when the checks share queries (an overall
/// check and its strata, two metrics of one query). Every resample draws
/// each stratum's queries with replacement once, for all statistics
/// (Efron & Tibshirani 1993, ch. 8); blocks of [`BLOCK_SIZE`] resamples
/// read their own streams, as the bootstrap's do, so the result is the
/// same for a seed on every machine.
///
/// Returns `(per watch, any)`; all zeros without resamples, watches or
/// queries. A shape mismatch (a caller bug) reads missing values as 0.
pub fn chance_any_below(
    values: &[f64],
    k: usize,
    strata: &Strata,
    watches: &[Watch],
    resamples: u32,
    seed: u64,
) -> (Vec<f64>, f64) {
    let mut each = vec![0u64; watches.len()];
    let mut any = 0u64;
    if resamples == 0 || watches.is_empty() || k == 0 || strata.is_empty() {
        return (vec![0.0; watches.len()], 0.0);
    }
    let groups = strata.groups();
    let value = |q: u32, j: usize| values.get(q as usize * k + j).copied().unwrap_or(0.0);
    let mut sums = vec![0.0; groups.len() * k];
    let blocks = resamples.div_ceil(BLOCK_SIZE);
    for block in 0..blocks {
        let mut rng = block_rng(seed, u64::from(block));
        let count = BLOCK_SIZE.min(resamples - block * BLOCK_SIZE);
        for _ in 0..count {
            sums.iter_mut().for_each(|s| *s = 0.0);
            for (g, members) in groups.iter().enumerate() {
                let len = u32::try_from(members.len()).unwrap_or(u32::MAX);
                for _ in 0..members.len() {
                    let q = members[super::uniform_below(&mut rng, len) as usize];
                    for j in 0..k {
                        sums[g * k + j] += value(q, j);
                    }
                }
            }
            let mut some = false;
            for (w, hit) in watches.iter().zip(each.iter_mut()) {
                let stat: f64 = groups
                    .iter()
                    .enumerate()
                    .map(|(g, m)| {
                        w.weights.get(g).copied().unwrap_or(0.0) * sums[g * k + w.column] / m.len() as f64
                    })
                    .sum();
                if stat < w.limit {
                    *hit += 1;
                    some = true;
                }
            }
            any += u64::from(some);
        }
    }
    let b = f64::from(resamples);
    (each.iter().map(|&c| c as f64 / b).collect(), any as f64 / b)
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
    fn t_quantiles_match_tables() {
        // t(0.95; 7) = 1.894579, t(0.8; 24) = 0.856855 (any t table).
        assert!((t_quantile(0.95, 7.0) - 1.894_578_605).abs() < 1e-6);
        assert!((t_quantile(0.8, 24.0) - 0.856_855_5).abs() < 1e-6);
        assert!((t_quantile(0.95, 1e8) - z_quantile(0.95)).abs() < 1e-12);
        assert!(t_quantile(0.95, 0.5).is_nan() && t_quantile(1.0, 5.0).is_nan());
    }

    /// Two perfectly correlated columns fail together: the chance that
    /// either falls below its limit is each one's chance, not
    /// 1 - (1 - p)^2; an independent third column adds to it.
    #[test]
    fn joint_chance_of_correlated_statistics() {
        // 40 queries in one stratum, values +-1 alternating: the resampled
        // mean is below -0.2 with probability P(Bin(40, 1/2) <= 15) = 0.0769.
        let n = 40;
        let mut v = Vec::new();
        for q in 0..n {
            let x = if q % 2 == 0 { 1.0 } else { -1.0 };
            v.extend([x, x]);
        }
        let strata = Strata::single(n);
        let watch = |column| Watch {
            column,
            weights: vec![1.0],
            limit: -0.2 - 1e-9,
        };
        let (each, any) = chance_any_below(&v, 2, &strata, &[watch(0), watch(1)], 4000, 7);
        assert_eq!(each[0], each[1]);
        assert_eq!(any, each[0]);
        assert!((each[0] - 0.0769).abs() < 0.015, "{each:?}");
        // Deterministic for a seed.
        assert_eq!(
            chance_any_below(&v, 2, &strata, &[watch(0)], 4000, 7).0[0],
            each[0]
        );
        assert_eq!(chance_any_below(&v, 2, &strata, &[], 10, 7), (vec![], 0.0));
        assert_eq!(
            chance_any_below(&v, 2, &strata, &[watch(0)], 0, 7),
            (vec![0.0], 0.0)
        );
    }

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
