//! Paired significance tests for retrieval metrics: pure functions over slices
//! and seeds, with no I/O, so the gate's verdict can be re-derived from the
//! numbers in a report.
//!
//! # Why these tests
//! IR evaluation compares two systems on the *same* queries, so every test here
//! is paired: it works on the per-query deltas `d_q = candidate_q - baseline_q`
//! and its statistic is their mean. Sakai (2014) argues that IR papers should
//! report effect sizes with interval estimates next to p-values, and that the
//! paired t-test, the paired bootstrap and the randomization test are the
//! defensible defaults; Smucker, Allan & Carterette (2007) show that on TREC
//! data the three agree closely while the sign and Wilcoxon tests do not.
//!
//! - [`bootstrap`]: the default. Paired, optionally stratified, shift method
//!   (Efron & Tibshirani 1993, ch. 16) for p-values and percentile intervals
//!   (ch. 13). Distribution-free, which matters because metric deltas are
//!   discrete and skewed (a binary hit rate gives deltas in {-1, 0, 1}).
//! - [`t_test`]: the classical paired t-test (Student's t with n - 1 degrees of
//!   freedom); cheap, and robust for the sample sizes of gold sets.
//! - [`randomization`]: Fisher's sign-flip test; exact for up to 40 non-zero
//!   deltas, Monte Carlo beyond.
//! - [`holm`] / [`bonferroni`]: family-wise error control across the checks of
//!   one retriever (Holm 1979).
//! - [`interval`]: intervals on metric means (not deltas) for `eval`:
//!   stratified bootstrap, expanded percentile (Hesterberg 2015).
//! - [`ppi`]: prediction-powered inference (PPI++) for means and deltas
//!   when a model graded every query and people a random sample of them.
//! - [`min_detectable_drop`] / [`queries_needed`]: the normal-approximation
//!   power calculation that tells a user whether the gold set can enforce a
//!   tolerance at all (Cohen 1988, ch. 2).
//!
//! # Determinism
//! Every random draw comes from ChaCha8 (`rand_chacha::ChaCha8Rng`, seeded with
//! `seed_from_u64`). ChaCha8 is a counter-based stream cipher with a documented,
//! platform-independent output, and eight rounds are far beyond what resampling
//! needs (Aumasson 2019, "Too much crypto"). Resamples are cut into fixed blocks
//! of [`BLOCK_SIZE`]; block `i` reads stream `i` of the seeded generator, so
//! rayon may run blocks on any number of threads and the results, combined in
//! block order, are bit-identical. Indices are drawn from `u32` ranges only,
//! because `gen_range` over `usize` consumes randomness differently on 32- and
//! 64-bit targets, and with a sampler written out in this module, so a rand
//! upgrade cannot silently change which queries a seed picks. Floating-point
//! sums run in a fixed order and never use fused multiply-add, so the
//! bootstrap and randomization outputs are the same bits on every IEEE-754
//! machine. The t-test and the power functions go through
//! `statrs` special functions (`ln`, `exp`), which may differ in the last ulp
//! between platform math libraries.
//!
//! # Degenerate input (never a panic)
//! - No queries, or no way to see variability (n < 2, or every stratum holds
//!   fewer than two queries): "no information": every p-value is 1 and every
//!   interval is unbounded (`-inf`/`+inf`); `mean_delta` is 0 when there are
//!   no queries. A single query can never make a drop significant.
//! - Non-finite deltas (NaN, ±inf): `mean_delta` carries the non-finite value,
//!   every p-value is 1 and the interval fields are NaN. Callers are expected to
//!   reject non-finite metric values before testing (the SPEC makes a
//!   non-finite score an input error); this only keeps a bug from panicking.
//! - `alpha` outside the open interval (0, 1): p-values are computed as usual,
//!   the interval fields are NaN.
//! - Zero variance: all deltas 0 gives p = 1 exactly; n deltas equal to the
//!   same non-zero value give the exact sign-flip p, 2^-n (see [`t_test`]):
//!   two equal losses are never significant.
//!
//! # References
//! - B. Efron, R. J. Tibshirani (1993). *An Introduction to the Bootstrap*.
//!   Chapman & Hall. Ch. 13 (percentile intervals), ch. 16 (hypothesis tests,
//!   shifting the sample to impose the null).
//! - T. Sakai (2014). Statistical reform in information retrieval? *SIGIR Forum*
//!   48(1), 3-12.
//! - M. D. Smucker, J. Allan, B. Carterette (2007). A comparison of statistical
//!   significance tests for information retrieval evaluation. *CIKM*.
//! - S. Holm (1979). A simple sequentially rejective multiple test procedure.
//!   *Scandinavian Journal of Statistics* 6(2), 65-70.
//! - R. J. Hyndman, Y. Fan (1996). Sample quantiles in statistical packages.
//!   *The American Statistician* 50(4), 361-365 (type 7 quantiles).
//! - E. Horowitz, S. Sahni (1974). Computing partitions with applications to
//!   the knapsack problem. *JACM* 21(2) (meet-in-the-middle subset sums).
//! - J. Cohen (1988). *Statistical Power Analysis for the Behavioral Sciences*,
//!   2nd ed.

pub mod binomial;
mod bootstrap;
mod correction;
pub mod envelope;
mod inference;
pub mod interval;
mod power;
pub mod ppi;
mod quantile;
mod randomization;
pub mod signflip;
pub mod skew;
mod ttest;

use std::collections::BTreeMap;
use std::fmt;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub use bootstrap::{
    bootstrap, bootstrap_alphas, bootstrap_percentile, bootstrap_t, try_bootstrap, try_bootstrap_alphas,
    try_bootstrap_t, BootstrapSettings,
};
pub use correction::{benjamini_hochberg, bonferroni, holm};
pub use inference::Inference;
pub use power::{
    chance_any_below, min_detectable_drop, normal_cdf, queries_needed, t_quantile, z_quantile, Watch,
};
pub use quantile::quantile_sorted;
pub use randomization::{randomization, EXACT_MAX_NONZERO};
pub use ttest::t_test;

/// Largest B a re-test goes to (the gate's borderline re-test, compare's
/// re-test of p-values at their Monte Carlo floor).
pub const MAX_RESAMPLES: u32 = 200_000;

/// Resamples per random stream. Part of the reproducibility contract: changing
/// it changes every bootstrap and Monte Carlo result for a given seed.
pub const BLOCK_SIZE: u32 = 256;

/// Slack under which a resampled statistic counts as "as extreme as" the
/// observed one. Deltas that are equal on paper (binary metrics give many)
/// differ by rounding once summed in another order; without slack those ties
/// would fall on either side at random and make p-values too small.
pub const TIE_SLACK: f64 = 1e-12;

/// A uniform index below `range` (positive): Lemire's widening multiply
/// with rejection (Lemire 2019, "Fast random integer generation in an
/// interval"). Written out rather than taken from rand's `gen_range`, so
/// that a rand upgrade cannot change which queries a seed draws (the
/// power estimate's resamples, `gold verify-sample`'s draw).
pub fn uniform_below(rng: &mut ChaCha8Rng, range: u32) -> u32 {
    use rand::RngCore;
    let range = range.max(1);
    let zone = u32::MAX - range.wrapping_neg() % range;
    loop {
        let wide = u64::from(rng.next_u32()) * u64::from(range);
        if (wide as u32) <= zone {
            return (wide >> 32) as u32;
        }
    }
}

/// Query indices grouped by stratum. Resampling happens within each group, so
/// the mix of query types in every resample matches the gold set's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Strata {
    groups: Vec<Vec<u32>>,
}

impl Strata {
    /// One group per distinct label, in increasing label order; indices within
    /// a group are in query order. Labels that never occur produce no group (so
    /// a stray large label cannot allocate billions of empty groups); with dense
    /// labels `0..k`, `groups()[l]` holds the queries of label `l`. Queries
    /// beyond index `u32::MAX` are not representable and are left out, which
    /// [`try_bootstrap`] then reports as a mismatch.
    pub fn from_labels(labels: &[u32]) -> Strata {
        let mut by_label: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for (i, &label) in labels.iter().enumerate() {
            let Ok(i) = u32::try_from(i) else { break };
            by_label.entry(label).or_default().push(i);
        }
        Strata {
            groups: by_label.into_values().collect(),
        }
    }

    /// The unstratified case. `single(0)` has no group at all, so that no
    /// constructor ever yields an empty group.
    pub fn single(n: usize) -> Strata {
        if n == 0 {
            return Strata { groups: Vec::new() };
        }
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        Strata {
            groups: vec![(0..n).collect()],
        }
    }

    /// Number of strata (groups), not of queries.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    pub fn groups(&self) -> &[Vec<u32>] {
        &self.groups
    }

    /// Total number of queries over all groups.
    pub fn n_queries(&self) -> usize {
        self.groups.iter().map(Vec::len).sum()
    }
}

/// How queries are weighted in the statistic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weighting {
    /// Mean over all queries: large strata dominate, as in trec_eval's `all`.
    Micro,
    /// Mean of stratum means: every stratum counts the same, so a regression in
    /// a small stratum (say, identifier lookups) is not drowned out.
    Macro,
}

/// Direction of the alternative hypothesis about `mean(candidate - baseline)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alternative {
    TwoSided,
    /// Candidate below baseline: a drop, what the gate looks for.
    Less,
    /// Candidate above baseline: an improvement.
    Greater,
}

/// The result of one paired test on one metric. All three p-values are always
/// present so a report can show the one the user asked for and the gate can
/// use the one-sided one, without running the test twice.
#[derive(Clone, Debug, PartialEq)]
pub struct TestOutcome {
    /// Observed statistic: micro or macro mean of the deltas.
    pub mean_delta: f64,
    pub p_less: f64,
    pub p_greater: f64,
    pub p_two_sided: f64,
    /// Two-sided (1 - alpha) interval of the statistic.
    pub ci_low: f64,
    pub ci_high: f64,
    /// One-sided (1 - alpha) bounds: the alpha and 1 - alpha quantiles.
    pub lower_bound: f64,
    pub upper_bound: f64,
}

impl TestOutcome {
    pub fn p(&self, alt: Alternative) -> f64 {
        match alt {
            Alternative::TwoSided => self.p_two_sided,
            Alternative::Less => self.p_less,
            Alternative::Greater => self.p_greater,
        }
    }

    /// Nothing can be concluded (no queries, or no visible variability): no
    /// evidence against the null, and an interval that excludes nothing.
    pub(crate) fn no_information(mean_delta: f64) -> TestOutcome {
        TestOutcome {
            mean_delta,
            p_less: 1.0,
            p_greater: 1.0,
            p_two_sided: 1.0,
            ci_low: f64::NEG_INFINITY,
            ci_high: f64::INFINITY,
            lower_bound: f64::NEG_INFINITY,
            upper_bound: f64::INFINITY,
        }
    }

    /// Non-finite input: keep the poisoned statistic visible, claim nothing.
    pub(crate) fn undefined(mean_delta: f64) -> TestOutcome {
        TestOutcome {
            mean_delta,
            p_less: 1.0,
            p_greater: 1.0,
            p_two_sided: 1.0,
            ci_low: f64::NAN,
            ci_high: f64::NAN,
            lower_bound: f64::NAN,
            upper_bound: f64::NAN,
        }
    }

    /// Overwrites the interval fields with NaN when `alpha` cannot define a
    /// (1 - alpha) interval, whatever path produced them.
    pub(crate) fn checked_alpha(mut self, alpha: f64) -> TestOutcome {
        if !alpha_is_usable(alpha) {
            self.ci_low = f64::NAN;
            self.ci_high = f64::NAN;
            self.lower_bound = f64::NAN;
            self.upper_bound = f64::NAN;
        }
        self
    }
}

/// Why [`try_bootstrap`] refused its input. These are caller bugs (the delta
/// matrix and the strata were built for different query sets), never data
/// conditions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StatsError {
    /// `deltas.len()` is not a multiple of `n_metrics`.
    Shape { len: usize, n_metrics: usize },
    /// The strata do not list every query index `0..n` exactly once.
    Strata { n_queries: usize, reason: String },
    /// Not one alpha per metric.
    Alphas { given: usize, n_metrics: usize },
}

impl fmt::Display for StatsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StatsError::Shape { len, n_metrics } => write!(
                f,
                "delta matrix of {len} values cannot hold {n_metrics} metrics per query"
            ),
            StatsError::Strata { n_queries, reason } => {
                write!(f, "strata do not partition the {n_queries} queries: {reason}")
            }
            StatsError::Alphas { given, n_metrics } => {
                write!(f, "{given} alphas given for {n_metrics} metrics")
            }
        }
    }
}

impl std::error::Error for StatsError {}

/// Sequential sum divided by n, so that it agrees bit for bit with the
/// bootstrap's observed statistic. Empty input gives NaN: there is no mean.
pub fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    x.iter().sum::<f64>() / x.len() as f64
}

/// Sample standard deviation (n - 1 denominator), two-pass. NaN for fewer than
/// two values (undefined). Exactly 0 when all values are equal: the two-pass
/// formula would otherwise return ~1e-17 whenever the mean is not exactly
/// representable, turning "no variance" into an absurdly large t statistic.
pub fn sample_sd(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return f64::NAN;
    }
    if x.iter().all(|&v| v == x[0]) {
        return 0.0;
    }
    let m = mean(x);
    let ss: f64 = x.iter().map(|&v| (v - m) * (v - m)).sum();
    (ss / (x.len() - 1) as f64).sqrt()
}

/// The generator for block `block`: seeded once from `seed`, then moved to its
/// own stream, so blocks are independent and can be computed in any order.
pub(crate) fn block_rng(seed: u64, block: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(block);
    rng
}

/// True when `alpha` can define a (1 - alpha) interval.
pub(crate) fn alpha_is_usable(alpha: f64) -> bool {
    alpha > 0.0 && alpha < 1.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn strata_from_labels_groups_in_label_order() {
        let s = Strata::from_labels(&[2, 0, 2, 1, 0]);
        assert_eq!(s.groups(), &[vec![1, 4], vec![3], vec![0, 2]]);
        assert_eq!(s.len(), 3);
        assert_eq!(s.n_queries(), 5);
        assert!(!s.is_empty());
    }

    #[test]
    fn strata_skip_absent_labels_without_allocating() {
        let s = Strata::from_labels(&[u32::MAX, 0]);
        assert_eq!(s.groups(), &[vec![1], vec![0]]);
    }

    #[test]
    fn single_and_empty_strata() {
        assert_eq!(Strata::single(3).groups(), &[vec![0, 1, 2]]);
        assert!(Strata::single(0).is_empty());
        assert!(Strata::from_labels(&[]).is_empty());
        assert_eq!(Strata::single(4), Strata::from_labels(&[7; 4]));
    }

    #[test]
    fn mean_and_sd_edge_cases() {
        assert!(mean(&[]).is_nan());
        assert_eq!(mean(&[2.0]), 2.0);
        assert!(sample_sd(&[]).is_nan());
        assert!(sample_sd(&[1.0]).is_nan());
        assert_eq!(sample_sd(&[0.1; 10]), 0.0);
        assert!((sample_sd(&[1.0, 2.0, 3.0, 4.0]) - 1.290_994_448_735_805_6).abs() < 1e-15);
        assert!(sample_sd(&[1.0, f64::NAN]).is_nan());
    }

    #[test]
    fn outcome_p_selects_alternative() {
        let o = TestOutcome {
            mean_delta: 0.0,
            p_less: 0.1,
            p_greater: 0.2,
            p_two_sided: 0.3,
            ci_low: 0.0,
            ci_high: 0.0,
            lower_bound: 0.0,
            upper_bound: 0.0,
        };
        assert_eq!(o.p(Alternative::Less), 0.1);
        assert_eq!(o.p(Alternative::Greater), 0.2);
        assert_eq!(o.p(Alternative::TwoSided), 0.3);
    }

    #[test]
    fn block_streams_differ_and_repeat() {
        use rand::RngCore;
        let a = block_rng(7, 0).next_u64();
        let b = block_rng(7, 1).next_u64();
        assert_ne!(a, b);
        assert_eq!(a, block_rng(7, 0).next_u64());
    }

    proptest! {
        #[test]
        fn from_labels_is_a_partition(labels in proptest::collection::vec(0u32..5, 0..60)) {
            let s = Strata::from_labels(&labels);
            let mut seen: Vec<u32> = s.groups().iter().flatten().copied().collect();
            seen.sort_unstable();
            prop_assert_eq!(seen, (0..labels.len() as u32).collect::<Vec<_>>());
            for g in s.groups() {
                prop_assert!(!g.is_empty());
                prop_assert!(g.iter().all(|&i| labels[i as usize] == labels[g[0] as usize]));
            }
        }
    }
}
