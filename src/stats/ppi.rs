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
//! target the standard error above is conservative in large samples (it
//! ignores the finite-population correction `1 - n/N` and charges the
//! model's term a variance it does not have once the N queries are fixed).
//! Read as an estimate of a mean over a population of queries the gold set
//! was drawn from, the overlap of the two sets adds a term
//! `2 lambda (cov(Y, Yh) - lambda var(Yh)) / N` to the variance that
//! ppi-python's formula (written for independent sets) leaves out. At the
//! tuned lambda it is `2 n / (N + n)` of the formula's variance for a model
//! that equals the people (se 11% short at n/N = 0.15), and shrinks with the
//! model's errors: for the simulation's judge below (15% false positives),
//! one stratum of N = 60-100, n = 10-30, coverage of the population mean
//! moved by at most 0.006 with the unverified queries alone as `Yu`. Passing only the unverified queries
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
//! # Measured limits (scripts/ppi_sim.py, 1,000 worlds each)
//! Four strata of 5-200 queries, a judge with 15% false positives and 5%
//! false negatives per pair, 15% of each stratum verified (at least 10):
//! for recall@10, 95% intervals of the mean cover the mean over all queries
//! with true labels 0.952 (people-only 0.964), always narrower than
//! people-only (effective n x1.37). The interval is a normal one with a
//! lambda tuned on the same few verified pairs, and it shares the Wald
//! interval's weakness at small n: with a binary metric near 1 (hit@10,
//! where that judge is nearly uninformative) coverage falls to 0.908
//! (people-only 0.944), and sparse paired deltas (most queries unchanged)
//! cover 0.81-0.90 with both estimators, since ten verified queries often
//! show no change at all. Student's t quantiles recover little (0.915).
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
    /// `se^2` split into the model's term (`var0(lambda Yu) / N`, which more
    /// verified queries do not shrink) and the rectifier's
    /// (`var0(Y - lambda Yh) / n`, which falls as 1/n): what
    /// [`PpiEstimate::verified_needed`] scales. People-only: 0 and
    /// `people_se^2`.
    pub model_var: f64,
    pub rectifier_var: f64,
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
    /// `sum w_h^2 model_var_h` and `sum w_h^2 rectifier_var_h`: the two
    /// parts of `se^2`, as in [`PpiEstimate`].
    pub model_var: f64,
    pub rectifier_var: f64,
    /// The effective number of verified queries of the test that ran on
    /// this estimate's per-query terms, when one did (the gate and compare:
    /// `crate::ppi::test_delta`); [`PpiCombined::effective_n`] gives it in
    /// place of the variance-based figure, so the n a check prints is the
    /// n its verdict had.
    pub test_effective_n: Option<f64>,
    /// The range the estimated quantity lies in (a metric's range for a
    /// mean, the deltas the baseline leaves room for): the intervals
    /// reports show ([`PpiCombined::shown_interval`]) are clipped to it. A
    /// normal interval knows no range, and "recall 1.04" is no bound
    /// anyone can read. Unbounded (+-inf) unless the caller sets it.
    pub range: (f64, f64),
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
        model_var: 0.0,
        rectifier_var: people_se * people_se,
    };
    if n < MIN_VERIFIED {
        return out;
    }
    let imputed = yu.iter().map(|&v| lambda * v);
    let rectifier = y.iter().zip(yh).map(|(&a, &b)| a - lambda * b);
    out.mean = mean_of(imputed.clone()) + mean_of(rectifier.clone());
    out.model_var = var0(imputed) / big_n as f64;
    out.rectifier_var = var0(rectifier) / n as f64;
    out.se = (out.model_var + out.rectifier_var).sqrt();
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
        model_var: 0.0,
        rectifier_var: 0.0,
        test_effective_n: None,
        range: (f64::NEG_INFINITY, f64::INFINITY),
    };
    let (mut var, mut people_var, mut weight) = (0.0, 0.0, 0.0);
    for (w, e) in parts {
        out.mean += w * e.mean;
        out.people_mean += w * e.people_mean;
        var += weighted(*w, e.se * e.se);
        people_var += weighted(*w, e.people_se * e.people_se);
        out.model_var += weighted(*w, e.model_var);
        out.rectifier_var += weighted(*w, e.rectifier_var);
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

/// `w^2 var`, with a stratum of weight 0 adding nothing even when its
/// variance is infinite (0 * inf would poison the sum with NaN).
fn weighted(w: f64, var: f64) -> f64 {
    if w == 0.0 {
        0.0
    } else {
        w * w * var
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

/// `z_{1-alpha} + z_power` (negative when power < alpha: any size will do),
/// None for levels outside (0, 1).
fn z_sum(alpha: f64, power: f64) -> Option<f64> {
    let z = z_quantile(1.0 - alpha) + z_quantile(power);
    z.is_finite().then_some(z.max(0.0))
}

/// `(z_{1-alpha} + z_power) se`: the normal-approximation power calculation
/// of `stats::min_detectable_drop` (Cohen 1988, ch. 2) with the PPI
/// standard error in place of `sd / sqrt(n)`. NaN for levels outside (0, 1)
/// or a NaN standard error, +inf for an infinite one.
fn detectable(se: f64, alpha: f64, power: f64) -> f64 {
    match z_sum(alpha, power) {
        Some(z) if !se.is_nan() => half_width(z, se),
        _ => f64::NAN,
    }
}

/// Verified queries for a standard error of `target_se`, scaling every
/// stratum's verified count by one factor at fixed lambda and fixed model
/// part: `se^2(f) = model_var + rectifier_var / f`. None when no count can
/// reach it (the model's part alone is as large: the model must improve or
/// grade more queries) or when the question is not a positive finite
/// target. At least [`MIN_VERIFIED`], below which a stratum is people-only.
fn verified_for_se(model_var: f64, rectifier_var: f64, n_verified: usize, target_se: f64) -> Option<usize> {
    if !(target_se.is_finite() && target_se > 0.0 && model_var.is_finite() && rectifier_var.is_finite()) {
        return None;
    }
    let room = target_se * target_se - model_var;
    if room <= 0.0 {
        return None;
    }
    // The relative slack keeps a count that is whole on paper (16 x 50) from
    // rounding up to the next query.
    let needed = (rectifier_var / room * n_verified as f64 * (1.0 - 1e-12)).ceil();
    // 2^53: where f64 stops counting exactly, far beyond any gold set.
    if !(needed.is_finite() && needed < 9_007_199_254_740_992.0) {
        return None;
    }
    usize::try_from(needed as u64).ok().map(|n| n.max(MIN_VERIFIED))
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

            /// [`Self::interval`] as reports show it: None where the
            /// standard error is 0 (no spread seen: a normal interval of
            /// width 0 would claim a certainty a handful of equal values
            /// does not give) or not finite; clipped to the quantity's
            /// range where one is known.
            pub fn shown_interval(&self, level: f64) -> Option<(f64, f64)> {
                (self.se > 0.0 && self.se.is_finite()).then(|| clip(self.interval(level), self.bounds()))
            }

            /// [`Self::people_interval`] as reports show it, likewise.
            pub fn shown_people_interval(&self, level: f64) -> Option<(f64, f64)> {
                (self.people_se > 0.0 && self.people_se.is_finite())
                    .then(|| clip(self.people_interval(level), self.bounds()))
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

            /// Minimum detectable drop of the margin test at tolerance 0
            /// (one-sided level `alpha`, detected with probability `power`):
            /// `(z_{1-alpha} + z_power) se`, applied to a delta's estimate.
            pub fn mde(&self, alpha: f64, power: f64) -> f64 {
                detectable(self.se, alpha, power)
            }

            /// The true drop the `confident-drop` decision (fail when the
            /// drop is confidently beyond `tolerance`) catches with
            /// probability `power`: `tolerance + mde`, the normal form of
            /// the README's "Minimum detectable drop".
            pub fn mde_beyond(&self, tolerance: f64, alpha: f64, power: f64) -> f64 {
                tolerance + self.mde(alpha, power)
            }

            /// Verified queries (in total, every stratum scaled alike, the
            /// model-graded ones unchanged) for a standard error of
            /// `target_se`; None when more verification cannot get there
            /// (see `verified_for_se`). A count above `n_model` says the
            /// gold set itself must grow.
            pub fn verified_needed(&self, target_se: f64) -> Option<usize> {
                verified_for_se(
                    self.model_var,
                    self.rectifier_var,
                    self.n_verified,
                    target_se,
                )
            }

            /// Verified queries for a two-sided interval of coverage
            /// `level` no wider than `width` (upper minus lower).
            pub fn verified_needed_for_width(&self, width: f64, level: f64) -> Option<usize> {
                if !(level > 0.0 && level < 1.0) {
                    return None;
                }
                self.verified_needed(width / 2.0 / z_quantile(1.0 - (1.0 - level) / 2.0))
            }

            /// Verified queries for a drop of `tolerance` to be detected
            /// (mde <= tolerance), as `stats::queries_needed` asks of a
            /// people-only gold set: a tolerance a gate can enforce.
            pub fn verified_needed_for_drop(&self, tolerance: f64, alpha: f64, power: f64) -> Option<usize> {
                let z = z_sum(alpha, power)?;
                if z == 0.0 && tolerance.is_finite() && tolerance > 0.0 {
                    // power <= alpha asks for less than chance.
                    return Some(MIN_VERIFIED);
                }
                self.verified_needed(tolerance / z)
            }
        }
    };
}

normal_summary!(PpiEstimate);
normal_summary!(PpiCombined);

impl PpiEstimate {
    /// People-only variance / PPI variance x n_verified: the number of
    /// verified queries people alone would need for the PPI interval's
    /// width.
    pub fn effective_n(&self) -> f64 {
        effective(self.se, self.people_se, self.n_verified)
    }

    fn bounds(&self) -> (f64, f64) {
        (f64::NEG_INFINITY, f64::INFINITY)
    }
}

impl PpiCombined {
    /// The effective number of verified queries: the test's when a test
    /// ran on this estimate ([`PpiCombined::test_effective_n`]), else people-only
    /// variance / PPI variance x n_verified (the number of verified
    /// queries people alone would need for the PPI interval's width).
    pub fn effective_n(&self) -> f64 {
        self.test_effective_n
            .unwrap_or_else(|| effective(self.se, self.people_se, self.n_verified))
    }

    fn bounds(&self) -> (f64, f64) {
        self.range
    }
}

/// `iv` clipped to `range` (NaN ends stay NaN).
fn clip(iv: (f64, f64), range: (f64, f64)) -> (f64, f64) {
    let f = |x: f64| {
        if x.is_nan() {
            x
        } else {
            x.max(range.0).min(range.1)
        }
    };
    (f(iv.0), f(iv.1))
}

/// The lambda in [0, 1] that makes a test's reference spread smallest,
/// for per-query terms `t_q = lambda a_q + b_q` (a PPI estimate's terms,
/// `crate::ppi::pseudo_deltas`, are of this form: `a_q` the model's part,
/// `b_q` the people's). `centered: false` minimises `sum t_q^2`, the
/// variance of the sign-flip test's reference distribution (each term's
/// sign flipped at random: `var = sum t_q^2`); `centered: true` minimises
/// `sum (t_q - mean t)^2`, the spread a t-test or a bootstrap reads.
///
/// Why not PPI++'s lambda: that one minimises the estimator's variance
/// under a model of independent samples; the test that decides reads a
/// different spread, and with a judge whose bias moves with the retriever
/// (the model-only terms then carry an offset the rectifier cancels in the
/// mean but the sign-flip reference counts as noise) the PPI++ lambda can
/// make the test weaker than people's labels alone. The spread is a convex
/// quadratic in lambda, minimised at `-sum a b / sum a^2` (centered: on the
/// centered a and b), clipped to [0, 1]; lambda = 0 is a candidate, and at
/// 0 the terms are the people-only test's, so the spread chosen is never
/// larger than people-only's. `sum t_q^2` is unchanged by flipping any
/// query's sign (its `a_q` and `b_q` flip together), so a lambda chosen on
/// it is the same for every sign pattern the sign-flip test compares, and
/// the test stays exact. 0 when the terms do not depend on lambda.
pub fn spread_lambda(a: &[f64], b: &[f64], centered: bool) -> f64 {
    let n = a.len().min(b.len());
    if n == 0 {
        return 0.0;
    }
    let (ma, mb) = if centered {
        (mean_of(a[..n].iter().copied()), mean_of(b[..n].iter().copied()))
    } else {
        (0.0, 0.0)
    };
    let (mut ab, mut aa) = (0.0, 0.0);
    for (x, y) in a[..n].iter().zip(&b[..n]) {
        ab += (x - ma) * (y - mb);
        aa += (x - ma) * (x - ma);
    }
    let lambda = -ab / aa;
    if lambda.is_finite() {
        lambda.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const Y: [f64; 10] = [1., 0., 1., 1., 0., 1., 0., 1., 1., 1.];
    const YH: [f64; 10] = [1., 0., 1., 0., 0., 1., 1., 1., 1., 1.];
    const REST: [f64; 10] = [1., 1., 0., 0., 1., 0., 1., 1., 0., 1.];

    fn all() -> Vec<f64> {
        YH.iter().chain(&REST).copied().collect()
    }

    fn input<'a>(all: &'a [f64], yh: &'a [f64], y: &'a [f64]) -> PpiInput<'a> {
        PpiInput {
            model_all: all,
            model_verified: yh,
            people_verified: y,
        }
    }

    /// By hand: means 0.7 and 0.7, cov = 1.10/10 = 0.11; the 30 model values
    /// hold 20 ones, so var = 30 (2/9) / 29; lambda = 0.11 / (1.5 var) =
    /// 0.319; mean = 0.319 (13/20) + 0.7 - 0.319 (0.7) = 0.68405.
    /// ppi-python 0.2.3 gives the same mean and (0.42643204, 0.94166796).
    #[test]
    fn hand_computed_binary_stratum() {
        let all = all();
        let e = ppi_mean(&input(&all, &YH, &Y)).unwrap();
        assert!((e.lambda - 0.319).abs() < 1e-12, "{}", e.lambda);
        assert!((e.mean - 0.68405).abs() < 1e-12, "{}", e.mean);
        let (lo, hi) = e.interval(0.95);
        assert!(
            (lo - 0.426_432_04).abs() < 1e-8 && (hi - 0.941_667_96).abs() < 1e-8,
            "{lo} {hi}"
        );
        assert!((e.model_var - 0.001_157_531_375).abs() < 1e-12);
        assert!((e.rectifier_var - 0.016_118_981).abs() < 1e-12);
        assert_eq!((e.n_model, e.n_verified, e.people_only), (20, 10, false));
        assert!((e.people_mean - 0.7).abs() < 1e-15);
        // 0.21 / 10 people-only variance against 0.017276512 for PPI.
        assert!((e.effective_n() - 0.021 / (e.se * e.se) * 10.0).abs() < 1e-9);
        assert!(e.effective_n() > 12.0);
    }

    /// Nine verified queries: people only (SPEC), ppi-python's
    /// classical_mean_ci: mean 6/9, se = sd0 / 3 = 0.157134840, interval
    /// (0.358688039, 0.974645294).
    #[test]
    fn below_min_verified_is_people_only() {
        let all = all();
        let e = ppi_mean(&input(&all, &YH[..9], &Y[..9])).unwrap();
        assert!(e.people_only);
        assert_eq!(e.lambda, 0.0);
        assert_eq!((e.mean, e.se), (e.people_mean, e.people_se));
        assert!((e.se - 0.157_134_840_263_677_2).abs() < 1e-12);
        let (lo, hi) = e.interval(0.95);
        assert!((lo - 0.358_688_039_033_404_9).abs() < 1e-9 && (hi - 0.974_645_294_299_928_4).abs() < 1e-9);
        assert_eq!(e.effective_n(), 9.0);
        assert_eq!(
            ppi_mean_with_lambda(&input(&all, &YH[..9], &Y[..9]), 1.0),
            Some(e)
        );
    }

    #[test]
    fn one_verified_query_says_nothing() {
        let e = ppi_mean(&input(&[0.5, 0.2], &[0.5], &[1.0])).unwrap();
        assert_eq!(e.se, f64::INFINITY);
        assert_eq!(e.interval(0.95), (f64::NEG_INFINITY, f64::INFINITY));
        assert_eq!(e.p_below(0.9), 1.0);
        assert_eq!(e.p_above(0.9), 1.0);
        assert_eq!(e.lower_bound(0.95), f64::NEG_INFINITY);
        assert_eq!(e.mde(0.05, 0.8), f64::INFINITY);
        assert_eq!(e.verified_needed(0.1), None);
    }

    #[test]
    fn refused_inputs() {
        let all = all();
        assert_eq!(try_ppi_mean(&input(&all, &[], &[])), Err(PpiError::NoVerified));
        assert_eq!(
            try_ppi_mean(&input(&all, &YH[..3], &Y[..4])),
            Err(PpiError::Mismatch {
                model_verified: 3,
                people_verified: 4
            })
        );
        assert_eq!(
            try_ppi_mean(&input(&YH[..3], &YH[..4], &Y[..4])),
            Err(PpiError::MoreVerifiedThanModel {
                n_verified: 4,
                n_model: 3
            })
        );
        let mut bad = all.clone();
        bad[15] = f64::NAN;
        assert_eq!(try_ppi_mean(&input(&bad, &YH, &Y)), Err(PpiError::NonFinite));
        assert_eq!(ppi_mean_with_lambda(&input(&all, &YH, &Y), f64::INFINITY), None);
        assert_eq!(power_tuned_lambda(&input(&all, &[], &[])), None);
        assert!(PpiError::NoVerified.to_string().contains("verified"));
    }

    /// A model that gives every query the same value: ppi-python divides 0 by
    /// 0; here lambda is 0 and the estimate is the people's.
    #[test]
    fn constant_model_has_lambda_zero() {
        let flat = [0.5; 30];
        let e = ppi_mean(&input(&flat, &flat[..10], &Y)).unwrap();
        assert_eq!(e.lambda, 0.0);
        assert!((e.mean - 0.7).abs() < 1e-15 && (e.se - e.people_se).abs() < 1e-15);
    }

    /// Everything verified (N = n): the model's two terms cancel and the
    /// estimate is the people's mean whatever lambda.
    #[test]
    fn fully_verified_stratum_gives_the_people_mean() {
        for lambda in [0.0, 0.3, 1.0] {
            let e = ppi_mean_with_lambda(&input(&YH, &YH, &Y), lambda).unwrap();
            assert!((e.mean - 0.7).abs() < 1e-12);
        }
    }

    #[test]
    fn normal_summaries_by_hand() {
        let e = PpiEstimate {
            mean: 0.0,
            se: 1.0,
            lambda: 0.5,
            n_model: 100,
            n_verified: 50,
            people_mean: 0.1,
            people_se: 2.0,
            people_only: false,
            model_var: 0.2,
            rectifier_var: 0.8,
        };
        let (lo, hi) = e.interval(0.95);
        assert!((hi - 1.959_963_984_540_054).abs() < 1e-9 && (lo + hi).abs() < 1e-15);
        let (lo, hi) = e.people_interval(0.9);
        assert!((lo - (0.1 - 2.0 * 1.644_853_626_951_472_2)).abs() < 1e-9);
        assert!((hi - (0.1 + 2.0 * 1.644_853_626_951_472_2)).abs() < 1e-9);
        assert!((e.lower_bound(0.95) + 1.644_853_626_951_472_2).abs() < 1e-9);
        assert!((e.upper_bound(0.95) - 1.644_853_626_951_472_2).abs() < 1e-9);
        // Phi(-1) = 0.158655253931457
        assert!((e.p_below(1.0) - 0.158_655_253_931_457).abs() < 1e-9);
        assert!((e.p_above(-1.0) - 0.158_655_253_931_457).abs() < 1e-9);
        assert!((e.p_below(-1.0) - (1.0 - 0.158_655_253_931_457)).abs() < 1e-9);
        assert_eq!(e.effective_n(), 200.0);
        assert!(e.interval(1.0).0.is_nan() && e.lower_bound(0.0).is_nan());
        assert_eq!(e.p_below(f64::NAN), 1.0);
    }

    #[test]
    fn zero_standard_error() {
        let e = PpiEstimate {
            mean: -0.1,
            se: 0.0,
            lambda: 1.0,
            n_model: 20,
            n_verified: 10,
            people_mean: -0.1,
            people_se: 0.0,
            people_only: false,
            model_var: 0.0,
            rectifier_var: 0.0,
        };
        assert_eq!(e.interval(0.95), (-0.1, -0.1));
        assert_eq!(
            (e.p_below(0.0), e.p_below(-0.1), e.p_above(-0.2)),
            (0.0, 1.0, 0.0)
        );
        assert_eq!(e.effective_n(), 10.0);
        assert_eq!(e.mde(0.05, 0.8), 0.0);
        assert_eq!(e.verified_needed(0.01), Some(MIN_VERIFIED));
    }

    /// (z_.95 + z_.8) = 2.486474860524386: se 0.01 detects 0.024865; at a
    /// tolerance of 0.02 the confident-drop decision catches 0.044865.
    /// se^2 = 2e-5 (model) + 8e-5 (rectifier, n = 50): se 0.005 needs
    /// 8e-5 / (2.5e-5 - 2e-5) = 16x the verified queries, 800; a drop of
    /// 0.02 needs se 0.0080435, 89.49 -> 90; a 95% interval 0.02 wide,
    /// se 0.01/1.959964, 663.15 -> 664; se below sqrt(2e-5) never.
    #[test]
    fn detectable_drop_and_verified_needed_by_hand() {
        let e = PpiEstimate {
            mean: 0.0,
            se: 0.01,
            lambda: 0.8,
            n_model: 1000,
            n_verified: 50,
            people_mean: 0.0,
            people_se: 0.02,
            people_only: false,
            model_var: 2e-5,
            rectifier_var: 8e-5,
        };
        assert!((e.mde(0.05, 0.8) - 0.024_864_748_605_243_86).abs() < 1e-12);
        assert!((e.mde_beyond(0.02, 0.05, 0.8) - 0.044_864_748_605_243_86).abs() < 1e-12);
        assert_eq!(e.verified_needed(0.005), Some(800));
        assert_eq!(e.verified_needed_for_drop(0.02, 0.05, 0.8), Some(90));
        assert_eq!(e.verified_needed_for_width(0.02, 0.95), Some(664));
        assert_eq!(e.verified_needed(0.004), None);
        assert_eq!(e.verified_needed(0.0), None);
        assert_eq!(e.verified_needed(f64::NAN), None);
        assert_eq!(e.verified_needed_for_width(0.02, 1.0), None);
        assert_eq!(e.verified_needed_for_drop(0.02, 0.5, 0.1), Some(MIN_VERIFIED));
        assert_eq!(e.verified_needed(1.0), Some(MIN_VERIFIED));
        assert!(e.mde(0.0, 0.8).is_nan());
    }

    fn estimate_with(mean: f64, se: f64, lambda: f64, people_only: bool) -> PpiEstimate {
        PpiEstimate {
            mean,
            se,
            lambda,
            n_model: 100,
            n_verified: 20,
            people_mean: mean + 0.01,
            people_se: 2.0 * se,
            people_only,
            model_var: se * se / 4.0,
            rectifier_var: 3.0 * se * se / 4.0,
        }
    }

    /// Weights 0.5/0.5, means 0.2/0.4, se 0.1/0.2: mean 0.3,
    /// se = sqrt(0.25 (0.01 + 0.04)) = 0.1118034; lambda (0.8 + 0) / 2.
    #[test]
    fn combine_by_hand() {
        let a = estimate_with(0.2, 0.1, 0.8, false);
        let b = estimate_with(0.4, 0.2, 0.0, true);
        let c = combine(&[(0.5, a), (0.5, b)]).unwrap();
        assert!((c.mean - 0.3).abs() < 1e-15);
        assert!((c.se - 0.0125f64.sqrt()).abs() < 1e-15);
        assert!((c.people_mean - 0.31).abs() < 1e-15);
        assert!((c.people_se - 0.05f64.sqrt()).abs() < 1e-15);
        assert!((c.lambda - 0.4).abs() < 1e-15);
        assert_eq!(
            (c.n_model, c.n_verified, c.strata, c.people_only_strata),
            (200, 40, 2, 1)
        );
        assert!((c.model_var + c.rectifier_var - c.se * c.se).abs() < 1e-15);
        assert!((c.effective_n() - 160.0).abs() < 1e-9);
        assert!(c.interval(0.95).0 < c.mean);
    }

    #[test]
    fn combine_refusals_and_weight_zero() {
        assert_eq!(try_combine(&[]), Err(PpiError::Weights));
        let a = estimate_with(0.2, 0.1, 0.8, false);
        assert_eq!(combine(&[(-0.1, a)]), None);
        assert_eq!(combine(&[(f64::NAN, a)]), None);
        let lone = estimate_with(0.9, f64::INFINITY, 0.0, true);
        let c = combine(&[(1.0, a), (0.0, lone)]).unwrap();
        assert_eq!((c.mean, c.se), (0.2, 0.1));
        let c = combine(&[(0.0, a)]).unwrap();
        assert_eq!((c.mean, c.se, c.lambda), (0.0, 0.0, 0.0));
    }

    /// By hand: `sum (lambda a + b)^2` is least at `-sum a b / sum a^2`.
    /// a = (1, 2), b = (-1, 0): 1/5. Centered, a - mean = (-0.5, 0.5),
    /// b - mean = (-0.5, 0.5): -0.5/0.5 = -1, clipped to 0. a = (1), b =
    /// (-3): 3, clipped to 1. No a: 0.
    #[test]
    fn spread_lambda_by_hand() {
        assert!((spread_lambda(&[1.0, 2.0], &[-1.0, 0.0], false) - 0.2).abs() < 1e-15);
        assert_eq!(spread_lambda(&[1.0, 2.0], &[-1.0, 0.0], true), 0.0);
        assert_eq!(spread_lambda(&[1.0], &[-3.0], false), 1.0);
        assert_eq!(spread_lambda(&[0.0, 0.0], &[1.0, 2.0], false), 0.0);
        assert_eq!(spread_lambda(&[], &[], true), 0.0);
        assert_eq!(spread_lambda(&[3.0, 3.0], &[1.0, -2.0], true), 0.0);
    }

    /// The reports' intervals stay within the quantity's range; the
    /// interval itself (ppi-python's) is not cut.
    #[test]
    fn shown_intervals_are_clipped_to_the_range() {
        let a = estimate_with(0.95, 0.1, 0.8, false);
        let mut c = combine(&[(1.0, a)]).unwrap();
        let (lo, hi) = c.interval(0.95);
        assert!(hi > 1.0 && lo < 0.95);
        assert_eq!(c.shown_interval(0.95), Some((lo, hi)));
        c.range = (0.0, 1.0);
        assert_eq!(c.shown_interval(0.95), Some((lo, 1.0)));
        assert_eq!(c.shown_people_interval(0.95).unwrap().1, 1.0);
        assert_eq!(c.interval(0.95), (lo, hi));
        c.test_effective_n = Some(33.0);
        assert_eq!(c.effective_n(), 33.0);
    }

    fn values() -> impl Strategy<Value = (Vec<f64>, Vec<f64>, Vec<f64>)> {
        (2usize..40, 0usize..60).prop_flat_map(|(n, extra)| {
            let grid = || (0u8..=20).prop_map(|v| f64::from(v) / 20.0 - 0.5);
            (
                proptest::collection::vec(grid(), n),
                proptest::collection::vec(grid(), n),
                proptest::collection::vec(grid(), extra),
            )
        })
    }

    proptest! {
        #[test]
        fn intervals_finite_and_lambda_in_unit_range((y, yh, rest) in values()) {
            let all: Vec<f64> = yh.iter().chain(&rest).copied().collect();
            let e = ppi_mean(&input(&all, &yh, &y)).unwrap();
            prop_assert!((0.0..=1.0).contains(&e.lambda));
            let (lo, hi) = e.interval(0.95);
            prop_assert!(lo.is_finite() && hi.is_finite() && lo <= e.mean && e.mean <= hi);
            let (plo, phi) = e.people_interval(0.95);
            prop_assert!(plo.is_finite() && phi.is_finite());
            prop_assert!(e.se.is_finite() && e.se >= 0.0);
            prop_assert!((0.0..=1.0).contains(&e.p_below(0.0)));
        }

        /// With the model equal to the people on the verified queries, the
        /// tuned PPI interval is never wider than people-only: at the tuned
        /// lambda the variance is lambda^2 a/N + (1-lambda)^2 b/n, and
        /// var(Yh ++ Yu) >= N a / (N + n - 1) keeps lambda a/N < (2 - lambda) b/n.
        #[test]
        fn perfect_model_never_widens((y, _yh, rest) in values()) {
            let all: Vec<f64> = y.iter().chain(&rest).copied().collect();
            let e = ppi_mean(&input(&all, &y, &y)).unwrap();
            let w = e.interval(0.95);
            let p = e.people_interval(0.95);
            prop_assert!(w.1 - w.0 <= p.1 - p.0 + 1e-12, "{:?} wider than {:?}", w, p);
            // The model may also be any sample of the queries it graded.
            let e = ppi_mean(&input(&rest.iter().chain(&y).copied().collect::<Vec<_>>(), &y, &y)).unwrap();
            prop_assert!(e.se <= e.people_se + 1e-12);
        }

        #[test]
        fn combine_one_stratum_is_identity((y, yh, rest) in values()) {
            let all: Vec<f64> = yh.iter().chain(&rest).copied().collect();
            let e = ppi_mean(&input(&all, &yh, &y)).unwrap();
            let c = combine(&[(1.0, e)]).unwrap();
            prop_assert_eq!((c.mean, c.se, c.people_mean, c.people_se), (e.mean, e.se, e.people_mean, e.people_se));
            prop_assert_eq!((c.n_model, c.n_verified, c.lambda), (e.n_model, e.n_verified, e.lambda));
            prop_assert_eq!(c.interval(0.9), e.interval(0.9));
            prop_assert_eq!(c.effective_n(), e.effective_n());
        }
    }
}
