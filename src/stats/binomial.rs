//! One-sided lower confidence bounds on the mean of values in [0, 1], from
//! the binomial distribution: what `eval --target` reads to say that a
//! metric's mean on queries like these reaches a target with 95%
//! confidence.
//!
//! # Why binomial bounds
//! The question is about the population mean (the expected recall@k of a
//! new query drawn like the gold set's), from a sample that is often small
//! (a stratum of 30 queries) and piled up at the top of [0, 1] (most
//! queries reach recall 1 at a deep enough k). The bootstrap's percentile
//! bound is over-confident exactly there: 30 queries that all reach recall
//! 1 resample to 1 every time and would "prove" a mean of 1. Bounds from
//! the binomial distribution need no spread to be seen and hold for every
//! sample size:
//!
//! - [`clopper_pearson_lower`]: exact for 0/1 values (hit rate, or recall
//!   where each query has one relevant label): the smallest p for which
//!   `P(Bin(n, p) >= s) >= a` (Clopper & Pearson 1934). With all 30 of 30
//!   it is `a^(1/30)` = 0.905 at a = 0.05.
//! - [`chernoff_lower`]: for values anywhere in [0, 1] (recall with several
//!   relevant labels): the relative-entropy (Chernoff) bound of the
//!   binomial, which Hoeffding (1963, Theorem 1) shows holds for any
//!   independent variables in [0, 1]: `P(mean >= mu + t) <= exp(-n
//!   KL(mu + t || mu))`, inverted. It equals Clopper-Pearson when every value
//!   is 1 and is somewhat wider otherwise (27 of 30: 0.718 against 0.761).
//!
//! A conformal bound was the other candidate: split conformal prediction
//! (Vovk et al. 2005) picks the depth at which a *new query's own* recall
//! reaches the target with probability 1 - a. That is a different promise
//! (per query, not the mean) and needs n >= 1/a - 1 queries per stratum to
//! say anything (19 at 95%), so rgate bounds the mean.
//!
//! # References
//! - C. J. Clopper, E. S. Pearson (1934). The use of confidence or fiducial
//!   limits illustrated in the case of the binomial. *Biometrika* 26(4),
//!   404-413.
//! - W. Hoeffding (1963). Probability inequalities for sums of bounded
//!   random variables. *JASA* 58(301), 13-30.
//! - V. Vovk, A. Gammerman, G. Shafer (2005). *Algorithmic Learning in a
//!   Random World*. Springer.

use statrs::function::beta::beta_reg;

/// Bisection steps: halving [0, 1] 100 times is far below f64's spacing.
const STEPS: usize = 100;

/// Whether `a` can be a one-sided error level.
fn usable(a: f64) -> bool {
    a > 0.0 && a < 1.0
}

/// Clopper-Pearson one-sided lower bound at level 1 - a for `successes` of
/// `n` Bernoulli trials: the smallest p with `P(Bin(n, p) >= s) >= a`, which
/// is the a-quantile of Beta(s, n - s + 1). 0 for no success; NaN for no
/// trial, more successes than trials or an unusable `a`.
pub fn clopper_pearson_lower(successes: u64, n: u64, a: f64) -> f64 {
    if n == 0 || successes > n || !usable(a) {
        return f64::NAN;
    }
    if successes == 0 {
        return 0.0;
    }
    if successes == n {
        // Closed form: P(Bin(n, p) >= n) = p^n.
        return a.powf(1.0 / n as f64);
    }
    let (s, nf) = (successes as f64, n as f64);
    // P(Bin(n, p) >= s) = I_p(s, n - s + 1), increasing in p.
    let tail = |p: f64| beta_reg(s, nf - s + 1.0, p);
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..STEPS {
        let mid = 0.5 * (lo + hi);
        if tail(mid) >= a {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// Relative entropy of Bernoulli(p) from Bernoulli(q), `0 ln 0 = 0`.
fn kl(p: f64, q: f64) -> f64 {
    let term = |x: f64, y: f64| if x <= 0.0 { 0.0 } else { x * (x / y).ln() };
    term(p, q) + term(1.0 - p, 1.0 - q)
}

/// Chernoff-Hoeffding one-sided lower bound at level 1 - a on the mean of
/// `n` independent values in [0, 1] whose sample mean is `mean`: the
/// smallest q <= mean with `n KL(mean || q) <= ln(1/a)`. 0 for a mean of
/// 0; NaN for no value, a mean outside [0, 1] or an unusable `a`.
pub fn chernoff_lower(mean: f64, n: u64, a: f64) -> f64 {
    if n == 0 || !(0.0..=1.0).contains(&mean) || !usable(a) {
        return f64::NAN;
    }
    if mean == 0.0 {
        return 0.0;
    }
    let budget = (1.0 / a).ln() / n as f64;
    // KL(mean || q) falls from +inf at q = 0 to 0 at q = mean.
    let (mut lo, mut hi) = (0.0f64, mean);
    for _ in 0..STEPS {
        let mid = 0.5 * (lo + hi);
        if kl(mean, mid) <= budget {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The lower bound of the mean of `values` (each in [0, 1]) at level 1 - a:
/// Clopper-Pearson when `binary` (every value is 0 or 1 by construction),
/// else Chernoff-Hoeffding. `None` for no value, a value outside [0, 1], or
/// a value other than 0 and 1 where `binary` was claimed.
pub fn mean_lower_bound(values: &[f64], binary: bool, a: f64) -> Option<f64> {
    let n = values.len() as u64;
    if n == 0 || values.iter().any(|v| !(0.0..=1.0).contains(v)) {
        return None;
    }
    let b = if binary {
        if values.iter().any(|&v| v != 0.0 && v != 1.0) {
            return None;
        }
        let s = values.iter().filter(|&&v| v == 1.0).count() as u64;
        clopper_pearson_lower(s, n, a)
    } else {
        let sum: f64 = values.iter().sum();
        chernoff_lower((sum / n as f64).clamp(0.0, 1.0), n, a)
    };
    b.is_finite().then_some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Clopper-Pearson by hand: 30 of 30 at a = 0.05 is 0.05^(1/30); one
    /// success of n is 1 - (1 - a)^(1/n) (P(Bin >= 1) = 1 - (1 - p)^n = a).
    #[test]
    fn clopper_pearson_closed_forms() {
        assert!((clopper_pearson_lower(30, 30, 0.05) - 0.05f64.powf(1.0 / 30.0)).abs() < 1e-15);
        let one = 1.0 - 0.95f64.powf(1.0 / 20.0);
        assert!((clopper_pearson_lower(1, 20, 0.05) - one).abs() < 1e-12);
        assert_eq!(clopper_pearson_lower(0, 20, 0.05), 0.0);
        assert!(clopper_pearson_lower(3, 2, 0.05).is_nan());
        assert!(clopper_pearson_lower(1, 0, 0.05).is_nan());
    }

    /// 27 of 30, one-sided 95%: 0.761402, found once by bisection on the
    /// binomial tail summed term by term in Python (`sum(comb(30, k) p^k
    /// (1 - p)^(30 - k) for k in 27..30) = 0.05`).
    #[test]
    fn clopper_pearson_matches_the_binomial_tail() {
        let b = clopper_pearson_lower(27, 30, 0.05);
        assert!((b - 0.761402).abs() < 1e-6, "{b}");
        // At the bound the upper tail is exactly a.
        assert!((beta_reg(27.0, 4.0, b) - 0.05).abs() < 1e-9);
    }

    /// Chernoff by hand: a mean of 1 gives q^n = a, as Clopper-Pearson;
    /// at 0.9 of 30 the bound q solves 30 KL(0.9 || q) = ln 20.
    #[test]
    fn chernoff_by_hand() {
        let all = chernoff_lower(1.0, 30, 0.05);
        assert!((all - 0.05f64.powf(1.0 / 30.0)).abs() < 1e-12, "{all}");
        // 0.717779 by the same bisection in Python.
        let q = chernoff_lower(0.9, 30, 0.05);
        assert!((q - 0.717779).abs() < 1e-6, "{q}");
        assert!((30.0 * kl(0.9, q) - 20f64.ln()).abs() < 1e-9, "{q}");
        assert!(q < clopper_pearson_lower(27, 30, 0.05));
        assert_eq!(chernoff_lower(0.0, 30, 0.05), 0.0);
        assert!(chernoff_lower(1.5, 30, 0.05).is_nan());
    }

    #[test]
    fn mean_bound_refuses_what_it_cannot_bound() {
        assert_eq!(mean_lower_bound(&[], false, 0.05), None);
        assert_eq!(mean_lower_bound(&[0.5, 2.0], false, 0.05), None);
        assert_eq!(mean_lower_bound(&[0.5, 1.0], true, 0.05), None);
        let b = mean_lower_bound(&[1.0; 30], true, 0.05).unwrap();
        assert!((b - 0.05f64.powf(1.0 / 30.0)).abs() < 1e-15);
    }

    /// Coverage by simulation: the bound lies below the true mean at least
    /// 95% of the time, for 0/1 values (Clopper-Pearson) and for values
    /// spread over [0, 1] (Chernoff), at the sizes of a gold set's strata.
    #[test]
    fn bounds_cover_the_true_mean() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(31);
        let reps = 2000;
        for (n, p) in [(30usize, 0.9f64), (12, 0.7), (90, 0.95)] {
            let mut covered_binary = 0;
            let mut covered_frac = 0;
            for _ in 0..reps {
                let binary: Vec<f64> = (0..n)
                    .map(|_| f64::from(u8::from(rng.gen::<f64>() < p)))
                    .collect();
                if mean_lower_bound(&binary, true, 0.05).unwrap() <= p {
                    covered_binary += 1;
                }
                // Recall of a query with 4 relevant labels, each found with
                // probability p: mean p, values in {0, 1/4, ..., 1}.
                let frac: Vec<f64> = (0..n)
                    .map(|_| (0..4).filter(|_| rng.gen::<f64>() < p).count() as f64 / 4.0)
                    .collect();
                if mean_lower_bound(&frac, false, 0.05).unwrap() <= p {
                    covered_frac += 1;
                }
            }
            let (cb, cf) = (
                covered_binary as f64 / reps as f64,
                covered_frac as f64 / reps as f64,
            );
            assert!(cb >= 0.94, "n {n} p {p}: binary coverage {cb}");
            assert!(cf >= 0.94, "n {n} p {p}: fractional coverage {cf}");
        }
    }
}
