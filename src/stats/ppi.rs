//! Prediction-powered inference (PPI++) for the mean of per-query metric
//! values: many queries graded by a model, a uniform random sample of them
//! graded by people too. The model's values carry the precision, the verified
//! sample removes their bias, and the interval stays valid whatever the
//! model's errors (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, "Prediction-
//! powered inference", Science 382, 2023). Power tuning (PPI++: Angelopoulos,
//! Duchi, Zrnic, "PPI++: Efficient prediction-powered inference",
//! arXiv:2311.01453, 2023) scales the model's part by a lambda chosen for the
//! smallest variance, so an uninformative model costs nothing (lambda near 0
//! falls back to the people-only estimate).
//!
//! # The estimator, as ppi-python computes it
//! The definitions match ppi-python 0.2.3's `ppi_mean_ci` and
//! `ppi_mean_pointestimate` with `lam=None` (power tuned, clipped) and
//! `alternative="two-sided"`, and its `classical_mean_ci` for the people-only
//! part; `tests/it/ppi_conformance.rs` holds them to 1e-6 on fixtures that
//! `scripts/ppi_reference.py` made with it. With `Y` the people's values on
//! the n verified queries, `Yh` the model's on the same queries and `Yu` the
//! model's on the N "unlabeled" ones:
//! - `lambda = cov(Y, Yh) / ((1 + n/N) var(Yh ++ Yu))`, clipped to [0, 1],
//!   where `cov` divides by n and `var` is the sample variance (n + N - 1)
//!   of the n + N model values taken together: the variance-minimising
//!   coefficient of PPI++ (its eq. for the mean, `_calc_lam_glm` with the
//!   identity Hessian), with the estimators ppi-python uses.
//! - `mean = lambda mean(Yu) + mean(Y - lambda Yh)`.
//! - `se^2 = var0(lambda Yu) / N + var0(Y - lambda Yh) / n` (both dividing by
//!   the count, numpy's default `std`).
//! - people-only: `mean(Y)`, `se = sd0(Y) / sqrt(n)` (`classical_mean_ci`),
//!   which is the same formula at lambda = 0.
//!
//! # Which queries are "unlabeled"
//! rgate passes every model-graded query, verified ones included, as `Yu`
//! ([`PpiInput::model_all`]). The quantity a gate is about is the mean over
//! the gold set's queries as people would grade them. The verified queries
//! are a uniform draw without replacement from those N (`gold verify-sample`
//! records it), so for any fixed lambda `mean(Y - lambda Yh)` is unbiased for
//! the N-query mean of `Y - lambda Yh`, and adding `lambda mean(Yu)` over the
//! same N queries makes the whole estimate unbiased for the N-query mean of
//! `Y`: the model's part cancels exactly, whatever its errors. For that
//! target the standard error above is conservative (it ignores the
//! finite-population correction `1 - n/N` and charges the model's term a
//! variance it does not have once the N queries are fixed). Read as an
//! estimate of a mean over a population of queries the gold set was drawn
//! from, the overlap of the two sets adds a covariance term of relative order
//! n/N to the variance that ppi-python's formula (written for independent
//! sets) leaves out; it is small while people verify a small share of the
//! queries, which is the case PPI is for. Passing only the unverified queries
//! instead would leave nothing "unlabeled" in a stratum people verified
//! entirely (N = n), where this layout gives exactly the people's mean (the
//! model's two terms cancel).
//!
//! # Where rgate departs from ppi-python (degenerate input only)
//! - A model without spread (`var(Yh ++ Yu) = 0`): ppi-python divides 0 by 0
//!   and returns NaN; here lambda is 0 (the model says nothing).
//! - Fewer than [`MIN_VERIFIED`] verified queries: the SPEC makes such a
//!   stratum people-only (a lambda tuned on a handful of pairs is noise), and
//!   with a single verified query the people-only standard error is infinite
//!   (no information), not ppi-python's 0.
//! - Input it cannot use (no verified query, more verified than model-graded
//!   queries, lengths that differ, a non-finite value) is refused
//!   ([`PpiError`]); the library's callers turn that into an input error.
//!
//! The same estimator serves means (per-query metric values) and paired
//! deltas (per-query current minus baseline values, each computed with the
//! model's labels and with the people's): it is a mean of numbers either way.
//! Strata are estimated apart and combined by [`combine`].

use std::fmt;

use super::power::{normal_cdf, z_quantile};

/// Verified queries a stratum needs before the model's values are used at
/// all (SPEC: "a stratum with fewer than 10 verified queries uses person
/// labels only").
pub const MIN_VERIFIED: usize = 10;

/// One stratum: the metric value of every query computed with the model's
/// labels (N values), and for the people-verified queries (n, a uniform
/// random sample of those N) the value with the model's labels and with the
/// people's, same order.
#[derive(Debug, Clone, Copy)]
pub struct PpiInput<'a> {
    pub model_all: &'a [f64],
    pub model_verified: &'a [f64],
    pub people_verified: &'a [f64],
}

/// The estimate of one stratum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PpiEstimate {
    /// PPI++ estimate and its standard error (normal approximation).
    pub mean: f64,
    pub se: f64,
    /// Power-tuned weight of the model's values, in [0, 1]; 0 when
    /// `people_only`.
    pub lambda: f64,
    /// N: queries with model values (verified ones included).
    pub n_model: usize,
    /// n: queries people verified.
    pub n_verified: usize,
    /// The estimate from the verified sample alone (people's values only),
    /// for the interval reports print beside the PPI one.
    pub people_mean: f64,
    pub people_se: f64,
    /// True when `n_verified < MIN_VERIFIED`: the stratum uses person labels
    /// only (`mean`/`se` equal `people_mean`/`people_se`).
    pub people_only: bool,
}

/// Strata combined by their weights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PpiCombined {
    /// `sum w_h mean_h` and `sqrt(sum w_h^2 se_h^2)`: strata are estimated
    /// from disjoint queries, so their errors are independent.
    pub mean: f64,
    pub se: f64,
    /// The same combination of the strata's people-only estimates.
    pub people_mean: f64,
    pub people_se: f64,
    /// Sums over the strata.
    pub n_model: usize,
    pub n_verified: usize,
    /// The weight-averaged lambda of the strata (`sum w_h lambda_h / sum
    /// w_h`, people-only strata counting 0): a summary of how much of the
    /// estimate rests on the model, for reports. No estimate uses it.
    pub lambda: f64,
    /// Strata combined, and how many of them are people-only.
    pub strata: usize,
    pub people_only_strata: usize,
}

/// Why an input cannot be estimated. These are caller bugs or input the
/// caller should have refused with a message naming the file.
#[derive(Debug, Clone, PartialEq)]
pub enum PpiError {
    /// No verified query: nothing can correct the model's bias.
    NoVerified,
    /// `model_verified` and `people_verified` differ in length.
    Mismatch {
        model_verified: usize,
        people_verified: usize,
    },
    /// More verified queries than model-graded ones: the verified queries
    /// must be a sample of the model-graded ones.
    MoreVerifiedThanModel { n_verified: usize, n_model: usize },
    /// A NaN or infinite value (or lambda).
    NonFinite,
    /// `combine` got no strata, or a weight that is negative or not finite.
    Weights,
}

impl fmt::Display for PpiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PpiError::NoVerified => write!(f, "no query verified by people"),
            PpiError::Mismatch {
                model_verified,
                people_verified,
            } => write!(
                f,
                "{model_verified} model values but {people_verified} people values for the verified queries"
            ),
            PpiError::MoreVerifiedThanModel { n_verified, n_model } => write!(
                f,
                "{n_verified} verified queries but only {n_model} with model values"
            ),
            PpiError::NonFinite => write!(f, "a metric value is not a finite number"),
            PpiError::Weights => write!(f, "no strata, or a stratum weight that is negative or not finite"),
        }
    }
}

impl std::error::Error for PpiError {}

/// The power-tuned PPI++ estimate of one stratum; None when the input is
/// refused (see [`try_ppi_mean`] for the reason).
pub fn ppi_mean(input: &PpiInput) -> Option<PpiEstimate> {
    try_ppi_mean(input).ok()
}

/// [`ppi_mean`] with the reason for a refusal.
pub fn try_ppi_mean(input: &PpiInput) -> Result<PpiEstimate, PpiError> {
    check(input)?;
    let lambda = tuned_lambda(input);
    Ok(estimate(input, lambda))
}

/// The PPI estimate with a fixed lambda (1: classic PPI; 0: people only).
/// Any finite lambda is used as given; the [`MIN_VERIFIED`] rule still
/// applies.
pub fn ppi_mean_with_lambda(input: &PpiInput, lambda: f64) -> Option<PpiEstimate> {
    try_ppi_mean_with_lambda(input, lambda).ok()
}

/// [`ppi_mean_with_lambda`] with the reason for a refusal.
pub fn try_ppi_mean_with_lambda(input: &PpiInput, lambda: f64) -> Result<PpiEstimate, PpiError> {
    check(input)?;
    if !lambda.is_finite() {
        return Err(PpiError::NonFinite);
    }
    Ok(estimate(input, lambda))
}

/// The power-tuned lambda alone (clipped to [0, 1], 0 for a model without
/// spread), whatever the number of verified queries.
pub fn power_tuned_lambda(input: &PpiInput) -> Option<f64> {
    check(input).ok()?;
    Some(tuned_lambda(input))
}

fn check(input: &PpiInput) -> Result<(), PpiError> {
    let n = input.people_verified.len();
    if input.model_verified.len() != n {
        return Err(PpiError::Mismatch {
            model_verified: input.model_verified.len(),
            people_verified: n,
        });
    }
    if n == 0 {
        return Err(PpiError::NoVerified);
    }
    if n > input.model_all.len() {
        return Err(PpiError::MoreVerifiedThanModel {
            n_verified: n,
            n_model: input.model_all.len(),
        });
    }
    let all = input
        .model_all
        .iter()
        .chain(input.model_verified)
        .chain(input.people_verified);
    if all.clone().any(|v| !v.is_finite()) {
        return Err(PpiError::NonFinite);
    }
    Ok(())
}

/// Sequential mean; callers guarantee a non-empty slice.
fn mean_of(x: impl Iterator<Item = f64> + Clone) -> f64 {
    let (sum, count) = x.fold((0.0, 0usize), |(s, c), v| (s + v, c + 1));
    sum / count as f64
}

/// Variance dividing by the count (numpy's `var()` default), two-pass.
fn var0(x: impl Iterator<Item = f64> + Clone) -> f64 {
    let m = mean_of(x.clone());
    let (ss, count) = x.fold((0.0, 0usize), |(s, c), v| (s + (v - m) * (v - m), c + 1));
    ss / count as f64
}

/// PPI++'s variance-minimising lambda for a mean (see the module docs).
fn tuned_lambda(input: &PpiInput) -> f64 {
    let y = input.people_verified;
    let yh = input.model_verified;
    let yu = input.model_all;
    let n = y.len() as f64;
    let big_n = yu.len() as f64;
    let my = mean_of(y.iter().copied());
    let myh = mean_of(yh.iter().copied());
    let cov = y.iter().zip(yh).map(|(a, b)| (a - my) * (b - myh)).sum::<f64>() / n;
    let pooled = yh.iter().chain(yu).copied();
    let count = (yh.len() + yu.len()) as f64;
    let m = mean_of(pooled.clone());
    let var = pooled.map(|v| (v - m) * (v - m)).sum::<f64>() / (count - 1.0);
    let lambda = cov / ((1.0 + n / big_n) * var);
    if lambda.is_nan() {
        // 0 / 0: the model gives every query the same value.
        return 0.0;
    }
    lambda.clamp(0.0, 1.0)
}

/// People-only mean and standard error; infinite with one query (no spread
/// can be seen).
fn people_part(y: &[f64]) -> (f64, f64) {
    let mean = mean_of(y.iter().copied());
    if y.len() < 2 {
        return (mean, f64::INFINITY);
    }
    let se = (var0(y.iter().copied()) / y.len() as f64).sqrt();
    (mean, se)
}

fn estimate(input: &PpiInput, lambda: f64) -> PpiEstimate {
    let y = input.people_verified;
    let yh = input.model_verified;
    let yu = input.model_all;
    let n = y.len();
    let big_n = yu.len();
    let (people_mean, people_se) = people_part(y);
    let mut out = PpiEstimate {
        mean: people_mean,
        se: people_se,
        lambda: 0.0,
        n_model: big_n,
        n_verified: n,
        people_mean,
        people_se,
        people_only: true,
    };
    if n < MIN_VERIFIED {
        return out;
    }
    let imputed = yu.iter().map(|&v| lambda * v);
    let rectifier = y.iter().zip(yh).map(|(&a, &b)| a - lambda * b);
    out.mean = mean_of(imputed.clone()) + mean_of(rectifier.clone());
    out.se = (var0(imputed) / big_n as f64 + var0(rectifier) / n as f64).sqrt();
    out.lambda = lambda;
    out.people_only = false;
    out
}

/// Strata combined by their weights (micro: query counts over the total;
/// macro: 1/H). Strata are independent (disjoint queries, separate draws), so
/// variances add with squared weights. None without strata or with a weight
/// that is negative or not finite.
pub fn combine(parts: &[(f64, PpiEstimate)]) -> Option<PpiCombined> {
    try_combine(parts).ok()
}

/// [`combine`] with the reason for a refusal.
pub fn try_combine(parts: &[(f64, PpiEstimate)]) -> Result<PpiCombined, PpiError> {
    if parts.is_empty() || parts.iter().any(|(w, _)| !(w.is_finite() && *w >= 0.0)) {
        return Err(PpiError::Weights);
    }
    let mut out = PpiCombined {
        mean: 0.0,
        se: 0.0,
        people_mean: 0.0,
        people_se: 0.0,
        n_model: 0,
        n_verified: 0,
        lambda: 0.0,
        strata: parts.len(),
        people_only_strata: 0,
    };
    let (mut var, mut people_var, mut weight) = (0.0, 0.0, 0.0);
    for (w, e) in parts {
        out.mean += w * e.mean;
        out.people_mean += w * e.people_mean;
        var += weighted_var(*w, e.se);
        people_var += weighted_var(*w, e.people_se);
        out.n_model += e.n_model;
        out.n_verified += e.n_verified;
        out.lambda += w * e.lambda;
        weight += w;
        out.people_only_strata += usize::from(e.people_only);
    }
    out.se = var.sqrt();
    out.people_se = people_var.sqrt();
    out.lambda = if weight > 0.0 { out.lambda / weight } else { 0.0 };
    Ok(out)
}

/// `w^2 se^2`, with a stratum of weight 0 adding nothing even when its
/// standard error is infinite (0 * inf would poison the sum with NaN).
fn weighted_var(w: f64, se: f64) -> f64 {
    if w == 0.0 {
        0.0
    } else {
        w * w * se * se
    }
}

/// Two-sided interval of coverage `level` around `mean`; NaN for a level
/// outside (0, 1).
fn normal_interval(mean: f64, se: f64, level: f64) -> (f64, f64) {
    if !(level > 0.0 && level < 1.0) {
        return (f64::NAN, f64::NAN);
    }
    let half = half_width(z_quantile(1.0 - (1.0 - level) / 2.0), se);
    (mean - half, mean + half)
}

/// `z se`, 0 (not NaN) for a zero standard error.
fn half_width(z: f64, se: f64) -> f64 {
    if se == 0.0 {
        0.0
    } else {
        z * se
    }
}

/// One-sided bound at `level` (e.g. 0.95): `mean + sign z(level) se`.
fn bound(mean: f64, se: f64, level: f64, sign: f64) -> f64 {
    if !(level > 0.0 && level < 1.0) {
        return f64::NAN;
    }
    mean + sign * half_width(z_quantile(level), se)
}

/// P(Z <= (mean - margin) / se): the p-value of H0 "true mean >= margin"
/// against "true mean < margin". No information (infinite or NaN standard
/// error, NaN mean or margin) gives 1; a zero standard error gives 0 when the
/// mean is strictly below the margin and 1 otherwise.
fn p_less(mean: f64, se: f64, margin: f64) -> f64 {
    if mean.is_nan() || margin.is_nan() || !(se.is_finite() && se >= 0.0) {
        return 1.0;
    }
    if se == 0.0 {
        return if mean < margin { 0.0 } else { 1.0 };
    }
    let p = normal_cdf((mean - margin) / se);
    if p.is_nan() {
        1.0
    } else {
        p
    }
}

/// `people variance / PPI variance x n`: how many people-verified queries
/// alone would give the PPI interval's width (SPEC). n when the two are the
/// same (people-only) or both zero; +inf when only the PPI variance is zero.
fn effective(se: f64, people_se: f64, n: usize) -> f64 {
    let n = n as f64;
    if se == people_se {
        return n;
    }
    if se == 0.0 {
        return f64::INFINITY;
    }
    people_se * people_se / (se * se) * n
}

macro_rules! normal_summary {
    ($t:ty) => {
        impl $t {
            /// Two-sided normal (CLT) interval of coverage `level` (0.95 for
            /// a 95% interval); NaN for a level outside (0, 1).
            pub fn interval(&self, level: f64) -> (f64, f64) {
                normal_interval(self.mean, self.se, level)
            }

            /// The people-only interval, the same way.
            pub fn people_interval(&self, level: f64) -> (f64, f64) {
                normal_interval(self.people_mean, self.people_se, level)
            }

            /// People-only variance / PPI variance x n_verified: the number
            /// of verified queries people alone would need for the PPI
            /// interval's width.
            pub fn effective_n(&self) -> f64 {
                effective(self.se, self.people_se, self.n_verified)
            }

            /// One-sided normal p-value of H0 "true mean >= margin" against
            /// "true mean < margin" (a drop below the margin).
            pub fn p_below(&self, margin: f64) -> f64 {
                p_less(self.mean, self.se, margin)
            }

            /// One-sided normal p-value of H0 "true mean <= margin" against
            /// "true mean > margin".
            pub fn p_above(&self, margin: f64) -> f64 {
                p_less(-self.mean, self.se, -margin)
            }

            /// Lower one-sided bound at `one_sided_level` (0.95: the true
            /// mean is above it with 95% confidence).
            pub fn lower_bound(&self, one_sided_level: f64) -> f64 {
                bound(self.mean, self.se, one_sided_level, -1.0)
            }

            /// Upper one-sided bound at `one_sided_level`.
            pub fn upper_bound(&self, one_sided_level: f64) -> f64 {
                bound(self.mean, self.se, one_sided_level, 1.0)
            }
        }
    };
}

normal_summary!(PpiEstimate);
normal_summary!(PpiCombined);
