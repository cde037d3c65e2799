//! Paired t-test on the per-query deltas: Student's t with n - 1 degrees of
//! freedom. Sakai (2014) and Smucker et al. (2007) find it agrees closely with
//! the bootstrap and randomization tests on IR metrics at gold-set sizes, and it
//! costs nothing, so it is also the interval behind [`super::randomization`].

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::{alpha_is_usable, mean, sample_sd, TestOutcome};

/// Paired t-test of `mean(deltas) = 0`, with the t interval of the mean delta
/// at level 1 - alpha (two-sided `ci_*`, one-sided `*_bound`).
///
/// Edge cases, chosen so the gate never reads significance into noise:
/// - n < 2: no variance estimate, so "no information": p = 1, unbounded
///   interval (for n = 0, `mean_delta` is 0).
/// - Zero variance with mean 0 (identical runs): p = 1 and the interval is
///   the point 0.
/// - Zero variance with a non-zero mean (every query moved by the same amount):
///   t is infinite and says nothing about chance, so the p-values are the
///   exact sign-flip test's: 2^-n in the direction of the move (two equal
///   losses give 0.25, never 0), 1 the other way, twice the smaller
///   two-sided. The interval is that test inverted: the point `mean_delta`
///   where 2^-n is below the interval's tail level, unbounded where n is too
///   small to exclude anything.
/// - Non-finite deltas: see the module docs (p = 1, NaN interval).
pub fn t_test(deltas: &[f64], alpha: f64) -> TestOutcome {
    t_outcome(deltas, alpha).checked_alpha(alpha)
}

fn t_outcome(deltas: &[f64], alpha: f64) -> TestOutcome {
    let n = deltas.len();
    if n == 0 {
        return TestOutcome::no_information(0.0);
    }
    let m = mean(deltas);
    if !m.is_finite() {
        return TestOutcome::undefined(m);
    }
    if n < 2 {
        return TestOutcome::no_information(m);
    }
    let sd = sample_sd(deltas);
    if !sd.is_finite() {
        return TestOutcome::undefined(m);
    }
    if sd == 0.0 {
        zero_variance(m, n, alpha)
    } else {
        let Ok(dist) = StudentsT::new(0.0, 1.0, (n - 1) as f64) else {
            return TestOutcome::undefined(m);
        };
        let se = sd / (n as f64).sqrt();
        let t = m / se;
        let (ci_low, ci_high, lower_bound, upper_bound) = if alpha_is_usable(alpha) {
            let half = dist.inverse_cdf(1.0 - alpha / 2.0) * se;
            let one = dist.inverse_cdf(1.0 - alpha) * se;
            (m - half, m + half, m - one, m + one)
        } else {
            (f64::NAN, f64::NAN, f64::NAN, f64::NAN)
        };
        TestOutcome {
            mean_delta: m,
            p_less: dist.cdf(t),
            p_greater: dist.sf(t),
            p_two_sided: (2.0 * dist.sf(t.abs())).min(1.0),
            ci_low,
            ci_high,
            lower_bound,
            upper_bound,
        }
    }
}

fn zero_variance(m: f64, n: usize, alpha: f64) -> TestOutcome {
    if m == 0.0 {
        return TestOutcome {
            ci_low: 0.0,
            ci_high: 0.0,
            lower_bound: 0.0,
            upper_bound: 0.0,
            ..TestOutcome::no_information(0.0)
        };
    }
    // Of the 2^n sign patterns of n equal deltas, one is as extreme in the
    // observed direction; for n beyond f64's exponent range this is 0.0,
    // which is then the truth to every printed digit.
    let tail = 0.5f64.powi(i32::try_from(n).unwrap_or(i32::MAX));
    let (p_less, p_greater) = if m < 0.0 { (tail, 1.0) } else { (1.0, tail) };
    // Inverting the test: any shift other than m leaves n equal non-zero
    // deltas, rejected at level a iff 2^-n <= a.
    let bound = |a: f64| {
        if tail <= a {
            (m, m)
        } else {
            (f64::NEG_INFINITY, f64::INFINITY)
        }
    };
    let (ci_low, ci_high) = bound(alpha / 2.0);
    let (lower_bound, upper_bound) = bound(alpha);
    TestOutcome {
        mean_delta: m,
        p_less,
        p_greater,
        p_two_sided: (2.0 * tail).min(1.0),
        ci_low,
        ci_high,
        lower_bound,
        upper_bound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    #[test]
    fn matches_scipy() {
        // scipy.stats.ttest_1samp([0.1, -0.2, 0.3, 0.05, -0.1], 0)
        //   statistic=0.3487429162314578, pvalue=0.7448652012024438
        // scipy.stats.t.ppf(0.975, 4) = 2.7764451051977934, ppf(0.95, 4) = 2.1318467863266495
        let d = [0.1, -0.2, 0.3, 0.05, -0.1];
        let o = t_test(&d, 0.05);
        assert!((o.mean_delta - 0.03).abs() < 1e-15);
        assert!((o.p_two_sided - 0.744_865_201_202_443_8).abs() < 1e-9);
        assert!((o.p_less + o.p_greater - 1.0).abs() < 1e-12);
        let se = sample_sd(&d) / 5f64.sqrt();
        assert!((o.ci_high - (0.03 + 2.776_445_105_197_793 * se)).abs() < 1e-9);
        assert!((o.upper_bound - (0.03 + 2.131_846_786_326_649 * se)).abs() < 1e-9);
    }

    #[test]
    fn edge_cases() {
        let empty = t_test(&[], 0.05);
        assert_eq!((empty.mean_delta, empty.p_two_sided), (0.0, 1.0));
        let one = t_test(&[-0.3], 0.05);
        assert_eq!((one.mean_delta, one.p_less), (-0.3, 1.0));
        assert!(one.ci_low == f64::NEG_INFINITY && one.ci_high == f64::INFINITY);
        let same = t_test(&[0.0; 9], 0.05);
        assert_eq!((same.p_less, same.p_greater, same.p_two_sided), (1.0, 1.0, 1.0));
        assert_eq!((same.ci_low, same.ci_high), (0.0, 0.0));
        // Nine zeros: every sign pattern gives 0, so the one-sided bounds
        // sit at 0 too (a margin test on an unchanged run must not see an
        // unbounded loss).
        assert_eq!((same.lower_bound, same.upper_bound), (0.0, 0.0));
        // Constant deltas: the exact sign-flip p, 2^-n (1/512 for nine).
        let shifted = t_test(&[-0.1; 9], 0.05);
        assert_eq!(
            (shifted.p_less, shifted.p_greater, shifted.p_two_sided),
            (1.0 / 512.0, 1.0, 2.0 / 512.0)
        );
        let m = shifted.mean_delta;
        assert!((m + 0.1).abs() < 1e-15);
        assert_eq!((shifted.lower_bound, shifted.upper_bound), (m, m));
        let up = t_test(&[0.2; 3], 0.05);
        assert_eq!((up.p_less, up.p_greater), (1.0, 0.125));
        assert!(up.ci_low == f64::NEG_INFINITY && up.upper_bound == f64::INFINITY);
        // Two equal losses are not significant: p = 1/4.
        let two = t_test(&[-0.5, -0.5], 0.05);
        assert_eq!((two.p_less, two.p_two_sided), (0.25, 0.5));
        let nan = t_test(&[0.1, f64::NAN], 0.05);
        assert!(nan.mean_delta.is_nan() && nan.ci_low.is_nan() && nan.p_less == 1.0);
        let inf = t_test(&[0.1, f64::INFINITY], 0.05);
        assert!(inf.mean_delta.is_infinite() && inf.p_two_sided == 1.0);
        assert!(t_test(&[0.1], 0.0).ci_high.is_nan());
        let bad_alpha = t_test(&[0.1, 0.3, -0.1], f64::NAN);
        assert!(bad_alpha.ci_low.is_nan() && bad_alpha.p_two_sided < 1.0);
    }

    proptest! {
        #[test]
        fn interval_is_nan_free_and_contains_mean(d in vec(-1.0f64..1.0, 0..50)) {
            let o = t_test(&d, 0.05);
            for v in [o.mean_delta, o.p_less, o.p_greater, o.p_two_sided, o.ci_low, o.ci_high] {
                prop_assert!(!v.is_nan());
            }
            prop_assert!(o.ci_low <= o.mean_delta && o.mean_delta <= o.ci_high);
            prop_assert!(o.ci_low <= o.lower_bound && o.upper_bound <= o.ci_high);
            prop_assert!(o.p_two_sided <= 1.0 && o.p_less <= 1.0 && o.p_greater <= 1.0);
        }

        #[test]
        fn negation_swaps_one_sided(d in vec(-1.0f64..1.0, 2..50)) {
            let neg: Vec<f64> = d.iter().map(|x| -x).collect();
            let (a, b) = (t_test(&d, 0.05), t_test(&neg, 0.05));
            prop_assert!((a.p_less - b.p_greater).abs() < 1e-12);
            prop_assert!((a.p_two_sided - b.p_two_sided).abs() < 1e-12);
        }
    }
}
