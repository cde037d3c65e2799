//! A paired test kept whole: what the gate needs to read a test's p-value
//! against any margin, and its bound at any level, *after* the
//! multiplicity correction has fixed the level each check is decided at.
//!
//! Every bound here is the test inverted (Lehmann & Romano 2005, §3.5): the
//! one-sided upper bound at level 1 - a is the largest delta0 that the test
//! of H0 "delta >= delta0" does not reject at level a, so for every margin,
//! "p < a" holds exactly when the margin lies beyond the bound. That is the
//! promise SPEC "Statistics, second edition" makes ("a bound that is the
//! rule"): a randomization check gets a randomization bound, a bootstrap
//! check one from the same resamples, a t-test check the t interval.
//!
//! - t-test: `p_less(d0) = F((mean - d0) / se)`, inverted in closed form.
//! - bootstrap-t: `p_less(d0) = (1 + #{t*_b <= (mean - d0) / se}) / (B + 1)`;
//!   inverted by an order statistic: rejecting at level a means fewer than
//!   `k = ceil(a (B + 1) - 1)` resampled t's lie at or below the observed
//!   one, i.e. `t*_(k) > (mean - d0) / se`, i.e. `d0 > mean - se t*_(k)`.
//! - sign-flip: `p_less(d0)` is Fisher's test of the deltas `d - d0`, which is
//!   not linear in `d0`; its inversion is found by bisection (to 1e-12 of the
//!   deltas' range) on the same enumeration or the same random sign
//!   patterns, so the bound is the test's own.
//!
//! Two-sided p-values are twice the smaller one-sided one (capped at 1), so a
//! two-sided (1 - alpha) interval excludes 0 exactly when the two-sided p is
//! below alpha.
//!
//! # References
//! - E. L. Lehmann, J. P. Romano (2005). *Testing Statistical Hypotheses*,
//!   3rd ed. Springer. §3.5 (confidence bounds from tests).
//! - P. Hall (1992). *The Bootstrap and Edgeworth Expansion*. Springer. Ch. 3.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::envelope::Envelope;
use super::signflip::{thresholds, Thresholds};
use super::{alpha_is_usable, TestOutcome, TIE_SLACK};

/// Slack on the t scale under which a resampled t counts as "as extreme"
/// as the observed one: resamples that reproduce the sample's composition
/// give the observed t up to rounding.
const T_SLACK: f64 = 1e-9;

/// A paired test of the mean delta, inverted on demand; see the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct Inference {
    mean_delta: f64,
    kind: Kind,
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    /// No queries, or no visible variability: every p is 1, every bound
    /// unbounded.
    NoInformation,
    /// Non-finite deltas: p = 1, NaN bounds.
    Undefined,
    /// `n` deltas all equal to the mean: the exact sign-flip test of n equal
    /// values, `2^-n` in the direction of the move.
    Constant {
        n: usize,
    },
    Student {
        se: f64,
        dist: StudentsTParams,
    },
    /// Resampled t's, ascending.
    BootstrapT {
        se: f64,
        t: Vec<f64>,
    },
    /// A stratified bootstrap whose every resample reproduces the observed
    /// statistic (each stratum's deltas constant): the shift method's
    /// answer, p = 1/(B + 1) for any margin the mean lies beyond, the
    /// point interval where that is below the level.
    Degenerate {
        resamples: u32,
    },
    /// Every pattern's threshold ([`super::signflip`]).
    SignFlip(Thresholds),
    /// Student's t made monotone in the loss ([`super::envelope`]): the
    /// deltas' envelope and the negated deltas' (for the lower side).
    Envelope {
        low: Box<Envelope>,
        high: Box<Envelope>,
    },
    /// A percentile bootstrap: the resampled statistics, ascending, read
    /// at Hesterberg's expanded level (`k`: sqrt(n / (n - 1)); `df`: n - 1).
    Percentile {
        stats: Vec<f64>,
        k: f64,
        df: f64,
    },
}

/// `StudentsT` does not implement `PartialEq`; its degrees of freedom do.
#[derive(Clone, Copy, Debug, PartialEq)]
struct StudentsTParams {
    df: f64,
}

impl StudentsTParams {
    fn dist(self) -> Option<StudentsT> {
        StudentsT::new(0.0, 1.0, self.df).ok()
    }
}

impl Inference {
    pub(crate) fn undefined(mean_delta: f64) -> Inference {
        Inference {
            mean_delta,
            kind: Kind::Undefined,
        }
    }

    pub(crate) fn no_information(mean_delta: f64) -> Inference {
        Inference {
            mean_delta,
            kind: Kind::NoInformation,
        }
    }

    /// The inference a degenerate bootstrap outcome stands for (no queries,
    /// no variability, non-finite input).
    pub(crate) fn from_degenerate(o: &TestOutcome) -> Inference {
        if o.mean_delta.is_finite() && !o.ci_low.is_nan() {
            Inference::no_information(o.mean_delta)
        } else {
            Inference::undefined(o.mean_delta)
        }
    }

    pub(crate) fn degenerate(mean_delta: f64, resamples: u32) -> Inference {
        Inference {
            mean_delta,
            kind: Kind::Degenerate { resamples },
        }
    }

    pub(crate) fn bootstrap_t(mean_delta: f64, se: f64, sorted_t: Vec<f64>) -> Inference {
        Inference {
            mean_delta,
            kind: Kind::BootstrapT { se, t: sorted_t },
        }
    }

    /// The sign-flip test of `deltas` (mean `mean_delta`, which the caller
    /// computed in its own summation order), inverted through each sign
    /// pattern's threshold ([`super::signflip`]): every pattern for up to
    /// [`super::signflip::EXACT_N`] deltas, `resamples` random ones from
    /// `seed` beyond. The deltas must come in the caller's canonical query
    /// order: it fixes which random sign each query gets. Deltas all equal
    /// are the exact `2^-n` of [`Kind::Constant`], whatever their number.
    pub(crate) fn sign_flip(deltas: &[f64], resamples: u32, seed: u64, mean_delta: f64) -> Inference {
        if deltas.is_empty() {
            return Inference::no_information(0.0);
        }
        if !mean_delta.is_finite() || deltas.iter().any(|d| !d.is_finite()) {
            return Inference::undefined(mean_delta);
        }
        if deltas.iter().all(|&d| d == deltas[0]) {
            return Inference {
                mean_delta,
                kind: Kind::Constant { n: deltas.len() },
            };
        }
        if deltas.len() > super::signflip::EXACT_N && resamples == 0 {
            return Inference::no_information(mean_delta);
        }
        Inference {
            mean_delta,
            kind: Kind::SignFlip(thresholds(deltas, resamples, seed)),
        }
    }

    /// The paired t-test of `deltas`.
    pub fn t_test(deltas: &[f64]) -> Inference {
        let n = deltas.len();
        if n == 0 {
            return Inference::no_information(0.0);
        }
        let m = super::mean(deltas);
        if !m.is_finite() {
            return Inference::undefined(m);
        }
        if n < 2 {
            return Inference::no_information(m);
        }
        let sd = super::sample_sd(deltas);
        if !sd.is_finite() {
            return Inference::undefined(m);
        }
        if sd == 0.0 {
            return Inference {
                mean_delta: m,
                kind: Kind::Constant { n },
            };
        }
        Inference {
            mean_delta: m,
            kind: Kind::Student {
                se: sd / (n as f64).sqrt(),
                dist: StudentsTParams { df: (n - 1) as f64 },
            },
        }
    }

    /// The gate's t-test: Student's t with the envelope that makes it
    /// monotone in the loss ([`super::envelope`]); equal to
    /// [`Inference::t_test`] wherever no low (for a rise: high) outlier
    /// inflates the spread.
    pub fn t_test_monotone(deltas: &[f64]) -> Inference {
        let plain = Inference::t_test(deltas);
        match plain.kind {
            Kind::Student { .. } => {
                let low = Envelope::new(deltas);
                let high = low.negated();
                Inference {
                    mean_delta: plain.mean_delta,
                    kind: Kind::Envelope {
                        low: Box::new(low),
                        high: Box::new(high),
                    },
                }
            }
            _ => plain,
        }
    }

    /// A percentile bootstrap from its resampled statistics (any order;
    /// sorted here) of a scope of `n` queries.
    pub(crate) fn percentile(mean_delta: f64, mut stats: Vec<f64>, n: usize) -> Inference {
        super::quantile::sort_total(&mut stats);
        let nf = n.max(2) as f64;
        Inference {
            mean_delta,
            kind: Kind::Percentile {
                stats,
                k: (nf / (nf - 1.0)).sqrt(),
                df: nf - 1.0,
            },
        }
    }

    /// The sign-flip randomization test of `deltas`; see [`Inference::sign_flip`].
    pub fn randomization(deltas: &[f64], resamples: u32, seed: u64) -> Inference {
        Inference::sign_flip(deltas, resamples, seed, super::mean(deltas))
    }

    pub fn mean_delta(&self) -> f64 {
        self.mean_delta
    }

    /// One-sided p of H0 "delta >= d0" (evidence of a delta below `d0`).
    pub fn p_less(&self, d0: f64) -> f64 {
        self.p_pair(d0).0
    }

    /// One-sided p of H0 "delta <= d0" (evidence of a delta above `d0`).
    pub fn p_greater(&self, d0: f64) -> f64 {
        self.p_pair(d0).1
    }

    /// Two-sided p of H0 "delta = d0": twice the smaller one-sided p.
    pub fn p_two_sided(&self, d0: f64) -> f64 {
        let (l, g) = self.p_pair(d0);
        (2.0 * l.min(g)).min(1.0)
    }

    fn p_pair(&self, d0: f64) -> (f64, f64) {
        let m = self.mean_delta;
        match &self.kind {
            Kind::NoInformation | Kind::Undefined => (1.0, 1.0),
            Kind::Constant { n } => {
                let tail = 0.5f64.powi(i32::try_from(*n).unwrap_or(i32::MAX));
                let shifted = m - d0;
                if shifted < 0.0 {
                    (tail, 1.0)
                } else if shifted > 0.0 {
                    (1.0, tail)
                } else {
                    (1.0, 1.0)
                }
            }
            Kind::Student { se, dist } => {
                let Some(t) = dist.dist() else {
                    return (1.0, 1.0);
                };
                let x = (m - d0) / se;
                (t.cdf(x), t.sf(x))
            }
            Kind::Degenerate { resamples } => {
                let least = 1.0 / (f64::from(*resamples) + 1.0);
                let shifted = m - d0;
                if shifted < -TIE_SLACK {
                    (least, 1.0)
                } else if shifted > TIE_SLACK {
                    (1.0, least)
                } else {
                    (1.0, 1.0)
                }
            }
            Kind::BootstrapT { se, t } => {
                let x = (m - d0) / se;
                let b = t.len() as f64;
                let at_most = t.partition_point(|&v| v <= x + T_SLACK);
                let at_least = t.len() - t.partition_point(|&v| v < x - T_SLACK);
                let p = |c: usize| ((c as f64 + 1.0) / (b + 1.0)).min(1.0);
                (p(at_most), p(at_least))
            }
            Kind::SignFlip(t) => (t.p_less(d0), t.p_greater(d0)),
            Kind::Envelope { low, high } => (low.p_less(d0), high.p_less(-d0)),
            Kind::Percentile { stats, k, df } => {
                let b = stats.len() as f64;
                let at_or_above = stats.len() - stats.partition_point(|&v| v < d0);
                let at_or_below = stats.partition_point(|&v| v <= d0);
                let raw = |c: usize| ((c as f64 + 1.0) / (b + 1.0)).min(1.0);
                (
                    unexpand(raw(at_or_above), *k, *df),
                    unexpand(raw(at_or_below), *k, *df),
                )
            }
        }
    }

    /// One-sided upper bound of delta at level 1 - a: the largest d0 that
    /// H0 "delta >= d0" is not rejected for at level a (`p_less(d0) >= a`).
    /// `+inf` when the test can reject no margin at that level; NaN for an
    /// unusable `a` or undefined input.
    pub fn upper(&self, a: f64) -> f64 {
        self.bound(a, Side::Upper)
    }

    /// One-sided lower bound of delta at level 1 - a: the smallest d0 that
    /// H0 "delta <= d0" is not rejected for at level a.
    pub fn lower(&self, a: f64) -> f64 {
        self.bound(a, Side::Lower)
    }

    fn bound(&self, a: f64, side: Side) -> f64 {
        if !alpha_is_usable(a) {
            return f64::NAN;
        }
        let m = self.mean_delta;
        let unbounded = match side {
            Side::Upper => f64::INFINITY,
            Side::Lower => f64::NEG_INFINITY,
        };
        match &self.kind {
            Kind::Undefined => f64::NAN,
            Kind::NoInformation => unbounded,
            Kind::Constant { n } => {
                let tail = 0.5f64.powi(i32::try_from(*n).unwrap_or(i32::MAX));
                if tail < a {
                    m
                } else {
                    unbounded
                }
            }
            Kind::Student { se, dist } => {
                let Some(t) = dist.dist() else {
                    return f64::NAN;
                };
                let q = t.inverse_cdf(1.0 - a) * se;
                match side {
                    Side::Upper => m + q,
                    Side::Lower => m - q,
                }
            }
            Kind::Degenerate { resamples } => {
                if 1.0 / (f64::from(*resamples) + 1.0) < a {
                    m
                } else {
                    unbounded
                }
            }
            Kind::BootstrapT { se, t } => {
                let b = t.len();
                let k = (a * (b as f64 + 1.0) - 1.0).ceil();
                if k < 1.0 || b == 0 {
                    return unbounded;
                }
                let k = (k as usize).min(b);
                match side {
                    Side::Upper => m - se * t[k - 1],
                    Side::Lower => m - se * t[b - k],
                }
            }
            Kind::SignFlip(t) => match side {
                Side::Upper => t.upper_bound(a),
                Side::Lower => t.lower_bound(a),
            },
            Kind::Envelope { low, high } => match side {
                Side::Upper => low.upper(a),
                Side::Lower => -high.upper(a),
            },
            Kind::Percentile { stats, k, df } => {
                // p < a  <=>  raw < expand(a)  <=>  fewer than
                // expand(a) (B + 1) - 1 resamples at or beyond d0.
                let b = stats.len();
                let need = (expand(a, *k, *df) * (b as f64 + 1.0) - 1.0).ceil();
                if need < 1.0 || b == 0 {
                    return unbounded;
                }
                let need = (need as usize).min(b);
                match side {
                    Side::Upper => stats[b - need],
                    Side::Lower => stats[need - 1],
                }
            }
        }
    }

    /// The classic outcome at margin 0: p-values, the two-sided (1 - alpha)
    /// interval and the one-sided (1 - alpha) bounds, all from this test.
    pub fn outcome(&self, alpha: f64) -> TestOutcome {
        let (p_less, p_greater) = self.p_pair(0.0);
        let o = TestOutcome {
            mean_delta: self.mean_delta,
            p_less,
            p_greater,
            p_two_sided: (2.0 * p_less.min(p_greater)).min(1.0),
            ci_low: self.lower(alpha / 2.0),
            ci_high: self.upper(alpha / 2.0),
            lower_bound: self.lower(alpha),
            upper_bound: self.upper(alpha),
        };
        o.checked_alpha(alpha)
    }
}

/// Hesterberg's expanded level (2015, §3.3): the percentile a one-sided
/// bound at level `1 - a` is read at, `1 - Phi(k t_{1-a, df})`, which
/// makes up for the bootstrap's plug-in spread and normal tails. It
/// depends on n alone, not on the data, so the bound stays an order
/// statistic of the resamples and monotone in every delta.
fn expand(a: f64, k: f64, df: f64) -> f64 {
    let (Ok(t), normal) = (
        StudentsT::new(0.0, 1.0, df),
        statrs::distribution::Normal::standard(),
    ) else {
        return a;
    };
    if !(a > 0.0 && a < 1.0) {
        return a;
    }
    1.0 - normal.cdf(k * t.inverse_cdf(1.0 - a))
}

/// The inverse of [`expand`]: the level whose expanded level is `raw`.
fn unexpand(raw: f64, k: f64, df: f64) -> f64 {
    let (Ok(t), normal) = (
        StudentsT::new(0.0, 1.0, df),
        statrs::distribution::Normal::standard(),
    ) else {
        return raw;
    };
    if raw >= 1.0 {
        return 1.0;
    }
    if raw <= 0.0 {
        return 0.0;
    }
    (1.0 - t.cdf(normal.inverse_cdf(1.0 - raw) / k)).clamp(0.0, 1.0)
}

#[derive(Clone, Copy)]
enum Side {
    Upper,
    Lower,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{randomization, t_test, try_bootstrap_t, BootstrapSettings, Strata, Weighting};
    use proptest::prelude::*;

    fn boot(d: &[f64], b: u32) -> Inference {
        let s = BootstrapSettings {
            resamples: b,
            seed: 7,
            weighting: Weighting::Micro,
            alpha: 0.05,
        };
        try_bootstrap_t(d, 1, &Strata::single(d.len()), &s)
            .unwrap()
            .remove(0)
    }

    /// The t-test's p and interval equal the classic `t_test` (scipy-checked
    /// in its own tests).
    #[test]
    fn student_matches_t_test() {
        let d = [0.1, -0.2, 0.3, 0.05, -0.1, -0.4, 0.2];
        let i = Inference::t_test(&d);
        let o = t_test(&d, 0.05);
        assert!((i.p_less(0.0) - o.p_less).abs() < 1e-15);
        assert!((i.upper(0.05) - o.upper_bound).abs() < 1e-15);
        assert!((i.lower(0.025) - o.ci_low).abs() < 1e-15);
    }

    /// The exact sign-flip p at margin 0 equals the classic randomization
    /// test: 3 losses of 1 and one gain of 1 among 4 queries: P(sum <= -2)
    /// over 16 patterns = 5/16.
    #[test]
    fn sign_flip_matches_enumeration() {
        let d = [-1.0, -1.0, -1.0, 1.0];
        let i = Inference::randomization(&d, 1000, 1);
        assert_eq!(i.p_less(0.0), 5.0 / 16.0);
        assert_eq!(i.p_less(0.0), randomization(&d, 1000, 1, 0.05).p_less);
    }

    /// Bootstrap-t bound by hand: with B = 19 and a = 0.1, k = ceil(0.1 * 20
    /// - 1) = 1, so the upper bound is mean - se * (smallest t).
    #[test]
    fn bootstrap_t_bound_is_an_order_statistic() {
        let t: Vec<f64> = (0..19).map(|i| f64::from(i) - 9.0).collect();
        let i = Inference::bootstrap_t(-0.1, 0.05, t);
        assert!((i.upper(0.1) - (-0.1 - 0.05 * -9.0)).abs() < 1e-15);
        // k = ceil(0.25 * 20 - 1) = 4: the fourth smallest t, -6.
        assert!((i.upper(0.25) - (-0.1 + 0.05 * 6.0)).abs() < 1e-15);
        assert!((i.lower(0.25) - (-0.1 - 0.05 * 6.0)).abs() < 1e-15);
        // a (B + 1) <= 1: no resample count can reject.
        assert_eq!(i.upper(0.04), f64::INFINITY);
    }

    /// n equal losses: the exact sign-flip p is 2^-n; the bound is the point
    /// where that beats the level, unbounded where it cannot.
    #[test]
    fn constant_deltas() {
        let i = Inference::t_test(&[-0.5; 5]);
        assert_eq!(i.p_less(0.0), 1.0 / 32.0);
        assert_eq!(i.upper(0.05), -0.5);
        assert_eq!(i.upper(0.03), f64::INFINITY);
        assert_eq!(Inference::t_test(&[0.0; 5]).p_less(0.0), 1.0);
    }

    fn check_duality(i: &Inference, margins: &[f64], levels: &[f64]) -> Result<(), TestCaseError> {
        for &a in levels {
            let u = i.upper(a);
            let l = i.lower(a);
            for &d0 in margins {
                // Rejected exactly when the margin is beyond the bound, except
                // within the inversion's precision of it.
                let near = |b: f64| (d0 - b).abs() <= 1e-8;
                if !near(u) {
                    prop_assert_eq!(i.p_less(d0) < a, d0 > u, "upper {} margin {} level {}", u, d0, a);
                }
                if !near(l) {
                    prop_assert_eq!(
                        i.p_greater(d0) < a,
                        d0 < l,
                        "lower {} margin {} level {}",
                        l,
                        d0,
                        a
                    );
                }
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]

        /// Every test: "p < a" exactly when the margin lies beyond the bound.
        #[test]
        fn bounds_are_the_tests_inverted(
            d in proptest::collection::vec(-1.0f64..1.0, 3..36),
            margins in proptest::collection::vec(-0.6f64..0.6, 1..6),
        ) {
            let levels = [0.05, 0.0125, 0.2];
            let mean = crate::stats::mean(&d);
            check_duality(&Inference::t_test(&d), &margins, &levels)?;
            check_duality(&boot(&d, 499), &margins, &levels)?;
            check_duality(&Inference::sign_flip(&d, 999, 3, mean), &margins, &levels)?;
        }

        #[test]
        fn monte_carlo_sign_flip_is_inverted_too(
            d in proptest::collection::vec(-1.0f64..1.0, 41..60),
            margin in -0.3f64..0.3,
        ) {
            let mean = crate::stats::mean(&d);
            check_duality(&Inference::sign_flip(&d, 499, 3, mean), &[margin], &[0.05])?;
        }
    }
}
