//! Paired, stratified bootstrap of the mean delta, for several metrics at once.
//!
//! Resampling queries (not metric values) keeps each query's deltas together,
//! which is what makes the test paired; resampling within strata keeps every
//! resample's mix of query types equal to the gold set's, so a stratum of hard
//! queries cannot be over- or under-drawn by chance (the resampling mirrors
//! how the sample was drawn; Efron & Tibshirani 1993, ch. 8).
//!
//! p-values use the shift method (Efron & Tibshirani 1993, ch. 16): the
//! resampled statistics, moved to mean zero (`null_b = stat_b - observed`),
//! estimate the statistic's distribution under "no change", and the p-value is
//! the share at least as extreme as what was observed. The `+1`s count the
//! observed sample as one of the resamples, so a p-value is never 0 and an
//! identical pair of runs gives exactly 1. Intervals are percentile intervals
//! (ch. 13) with type 7 quantiles.

use rand::RngCore;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::inference::Inference;
use super::quantile::{quantile_sorted, sort_total};
use super::{block_rng, StatsError, Strata, TestOutcome, Weighting, BLOCK_SIZE, TIE_SLACK};

/// Knobs of one bootstrap run; `seed` and `resamples` belong in every report so
/// the numbers can be reproduced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BootstrapSettings {
    pub resamples: u32,
    pub seed: u64,
    pub weighting: Weighting,
    pub alpha: f64,
}

/// [`try_bootstrap`] for callers that build the delta matrix and the strata
/// together and so cannot get the shapes wrong. A shape error, which is a bug,
/// still does not panic: it yields `n_metrics` outcomes with a NaN statistic,
/// p-values of 1 and NaN intervals.
pub fn bootstrap(
    deltas: &[f64],
    n_metrics: usize,
    strata: &Strata,
    s: &BootstrapSettings,
) -> Vec<TestOutcome> {
    try_bootstrap(deltas, n_metrics, strata, s)
        .unwrap_or_else(|_| vec![TestOutcome::undefined(f64::NAN); n_metrics])
}

/// [`try_bootstrap_alphas`] for callers that build the deltas, the strata and
/// the alphas together; a shape error (a bug) gives undefined outcomes as
/// [`bootstrap`] does.
pub fn bootstrap_alphas(
    deltas: &[f64],
    n_metrics: usize,
    strata: &Strata,
    s: &BootstrapSettings,
    alphas: &[f64],
) -> Vec<TestOutcome> {
    try_bootstrap_alphas(deltas, n_metrics, strata, s, alphas)
        .unwrap_or_else(|_| vec![TestOutcome::undefined(f64::NAN); n_metrics])
}

/// Paired, stratified bootstrap for several metrics at once.
///
/// `deltas` is query-major (`deltas[q * n_metrics + j]`), so one drawn query is
/// one contiguous row and each resample draws its indices once for all metrics:
/// the cost is dominated by random draws, not by the number of metrics.
///
/// Errors when `deltas.len()` is not a multiple of `n_metrics`, or when the
/// strata do not list each query `0..n` exactly once. Data conditions are not
/// errors; see the module docs of [`crate::stats`] for n < 2, non-finite deltas
/// and unusable `alpha`. With `resamples == 0` there is no distribution to
/// read: p-values are 1 and the intervals unbounded.
pub fn try_bootstrap(
    deltas: &[f64],
    n_metrics: usize,
    strata: &Strata,
    s: &BootstrapSettings,
) -> Result<Vec<TestOutcome>, StatsError> {
    try_bootstrap_alphas(deltas, n_metrics, strata, s, &vec![s.alpha; n_metrics])
}

/// [`try_bootstrap`] with an alpha per column (`s.alpha` is ignored): the
/// gate tests each metric plainly and against its margin at a corrected
/// alpha, and passing both as columns of one matrix draws the resampled
/// indices once for both. Each column's sums are the same operations in the
/// same order as when it is tested alone, so the outcomes are bit-identical.
pub fn try_bootstrap_alphas(
    deltas: &[f64],
    n_metrics: usize,
    strata: &Strata,
    s: &BootstrapSettings,
    alphas: &[f64],
) -> Result<Vec<TestOutcome>, StatsError> {
    if alphas.len() != n_metrics {
        return Err(StatsError::Alphas {
            given: alphas.len(),
            n_metrics,
        });
    }
    let outcomes = outcomes(deltas, n_metrics, strata, s, alphas)?;
    Ok(outcomes
        .into_iter()
        .zip(alphas)
        .map(|(o, &a)| o.checked_alpha(a))
        .collect())
}

fn outcomes(
    deltas: &[f64],
    n_metrics: usize,
    strata: &Strata,
    s: &BootstrapSettings,
    alphas: &[f64],
) -> Result<Vec<TestOutcome>, StatsError> {
    let m = n_metrics;
    let (observed, blocks) = match draw(deltas, m, strata, s, false)? {
        Draws::Nothing(outcomes) => return Ok(outcomes),
        Draws::Blocks { observed, blocks } => (observed, blocks),
    };
    let outcomes = (0..m)
        .map(|j| {
            let obs = observed[j];
            if !obs.is_finite() {
                return TestOutcome::undefined(obs);
            }
            let mut stats: Vec<f64> = blocks
                .iter()
                .flat_map(|blk| blk.chunks_exact(m).map(move |row| row[j]))
                .collect();
            outcome_from_resamples(obs, &mut stats, alphas[j])
        })
        .collect();
    Ok(outcomes)
}

/// What resampling produced: nothing to resample (the outcomes are known
/// without it), or the observed statistics and the resamples, block by block.
enum Draws {
    Nothing(Vec<TestOutcome>),
    Blocks {
        observed: Vec<f64>,
        blocks: Vec<Vec<f64>>,
    },
}

/// Checks the shapes and draws every resample (see [`try_bootstrap`] for
/// the degenerate cases that need none).
fn draw(
    deltas: &[f64],
    m: usize,
    strata: &Strata,
    s: &BootstrapSettings,
    studentized: bool,
) -> Result<Draws, StatsError> {
    if m == 0 || !deltas.len().is_multiple_of(m) {
        if m == 0 && deltas.is_empty() {
            return Ok(Draws::Nothing(Vec::new()));
        }
        return Err(StatsError::Shape {
            len: deltas.len(),
            n_metrics: m,
        });
    }
    let n = deltas.len() / m;
    check_partition(strata, n)?;
    if n == 0 {
        // No queries, no change: 0 rather than the 0/0 of an empty mean.
        return Ok(Draws::Nothing(vec![TestOutcome::no_information(0.0); m]));
    }

    let observed = observed_statistics(deltas, m, strata, s.weighting);
    let variability_visible = strata.groups().iter().any(|g| g.len() >= 2);
    if !variability_visible || s.resamples == 0 {
        return Ok(Draws::Nothing(
            observed
                .iter()
                .map(|&o| {
                    if o.is_finite() {
                        TestOutcome::no_information(o)
                    } else {
                        TestOutcome::undefined(o)
                    }
                })
                .collect(),
        ));
    }

    let groups = groups(strata, n, s.weighting);
    let job = Job {
        deltas,
        m,
        n: n as f64,
        groups: &groups,
        weighting: s.weighting,
        studentized,
    };

    let b = s.resamples;
    let n_blocks = b.div_ceil(BLOCK_SIZE);
    let blocks: Vec<Vec<f64>> = (0..n_blocks)
        .into_par_iter()
        .map(|i| {
            let count = (b - i * BLOCK_SIZE).min(BLOCK_SIZE);
            let mut rng = block_rng(s.seed, u64::from(i));
            job.run(&mut rng, count)
        })
        .collect();
    Ok(Draws::Blocks { observed, blocks })
}

/// The resampling groups of `strata` (never empty), with the weights of
/// their variance in the statistic.
fn groups(strata: &Strata, n: usize, weighting: Weighting) -> Vec<Group<'_>> {
    let h = strata.groups().iter().filter(|g| !g.is_empty()).count() as f64;
    strata
        .groups()
        .iter()
        .filter_map(|g| {
            let len = u32::try_from(g.len()).ok().filter(|&l| l > 0)?;
            let lenf = f64::from(len);
            let w = match weighting {
                Weighting::Micro => lenf / n as f64,
                Weighting::Macro => 1.0 / h,
            };
            let var_weight = if len >= 2 {
                w * w / (lenf * (lenf - 1.0))
            } else {
                0.0
            };
            Some(Group {
                idx: g,
                draw: Below::new(len),
                len: lenf,
                var_weight,
            })
        })
        .collect()
}

/// The studentized (bootstrap-t) test of each metric's mean delta: one
/// [`Inference`] per metric, which gives the p-value against any margin and
/// the bound at any level from the same resamples (see
/// [`super::inference`]). Shapes and degenerate cases as [`try_bootstrap`];
/// a metric whose observed standard error is 0 (every stratum's deltas
/// constant) has no spread to studentize by: every resample reproduces the
/// observed statistic, and the answer is the shift method's (p = 1/(B + 1)
/// beyond the mean, a point interval).
///
/// Why studentized: the shift method's null (the resampled means, centred)
/// has the spread of a variance with an `n` denominator and no correction
/// for skew, so it is liberal at gold-set sizes (0.063 at n = 31 and 0.064
/// at n = 60 for a nominal 0.05, measured in issue 26); dividing each
/// resample by its own standard error makes the statistic nearly pivotal
/// and the test second-order accurate (Hall 1992, ch. 3; Efron &
/// Tibshirani 1993, ch. 12 and 16.4).
pub fn try_bootstrap_t(
    deltas: &[f64],
    n_metrics: usize,
    strata: &Strata,
    s: &BootstrapSettings,
) -> Result<Vec<Inference>, StatsError> {
    let m = n_metrics;
    let (observed, blocks) = match draw(deltas, m, strata, s, true)? {
        Draws::Nothing(outcomes) => return Ok(outcomes.iter().map(Inference::from_degenerate).collect()),
        Draws::Blocks { observed, blocks } => (observed, blocks),
    };
    let n = deltas.len() / m;
    let groups = groups(strata, n, s.weighting);
    Ok((0..m)
        .map(|j| {
            let obs = observed[j];
            if !obs.is_finite() {
                return Inference::undefined(obs);
            }
            let se = observed_se(deltas, m, j, &groups);
            if se.is_nan() || se <= 0.0 {
                return Inference::degenerate(obs, s.resamples);
            }
            let mut t: Vec<f64> = blocks
                .iter()
                .flat_map(|blk| blk.chunks_exact(2 * m).map(move |row| (row[j], row[m + j])))
                .map(|(stat, se_b)| studentize(stat - obs, se_b))
                .collect();
            sort_total(&mut t);
            Inference::bootstrap_t(obs, se, t)
        })
        .collect())
}

/// The percentile bootstrap of each metric's mean delta, as an
/// [`Inference`]: the resampled statistics themselves (stratified, as
/// [`try_bootstrap`] draws them), read at Hesterberg's expanded level
/// (see `Inference::percentile`). Each resampled statistic is a weighted
/// mean of the sample's deltas with the draws fixed by the seed, so every
/// bound, an order statistic of them, is monotone in every delta: a query
/// that loses more can only lower it (the studentized bootstrap it
/// replaces as `test: bootstrap` was not: a resample drawing one value
/// has no spread and an infinite t, and 28 of 30 queries lost passed
/// where 26 failed). Shapes and degenerate cases as [`try_bootstrap`].
pub fn bootstrap_percentile(
    deltas: &[f64],
    n_metrics: usize,
    strata: &Strata,
    s: &BootstrapSettings,
) -> Vec<Inference> {
    let m = n_metrics;
    let (observed, blocks) = match draw(deltas, m, strata, s, false) {
        Ok(Draws::Nothing(outcomes)) => return outcomes.iter().map(Inference::from_degenerate).collect(),
        Ok(Draws::Blocks { observed, blocks }) => (observed, blocks),
        Err(_) => return (0..m).map(|_| Inference::undefined(f64::NAN)).collect(),
    };
    let n = deltas.len().checked_div(m).unwrap_or(0);
    (0..m)
        .map(|j| {
            let obs = observed[j];
            if !obs.is_finite() {
                return Inference::undefined(obs);
            }
            let stats: Vec<f64> = blocks
                .iter()
                .flat_map(|blk| blk.chunks_exact(m).map(move |row| row[j]))
                .collect();
            Inference::percentile(obs, stats, n)
        })
        .collect()
}

/// [`try_bootstrap_t`] for callers that build the deltas and the strata
/// together; a shape error (a bug) gives undefined inferences.
pub fn bootstrap_t(
    deltas: &[f64],
    n_metrics: usize,
    strata: &Strata,
    s: &BootstrapSettings,
) -> Vec<Inference> {
    try_bootstrap_t(deltas, n_metrics, strata, s)
        .unwrap_or_else(|_| (0..n_metrics).map(|_| Inference::undefined(f64::NAN)).collect())
}

/// One resample's t: its centred statistic over its standard error. A
/// resample without spread (every drawn delta of each group equal) has an
/// infinite t in the direction it moved, and 0 where it did not move.
fn studentize(centred: f64, se: f64) -> f64 {
    if se > 0.0 {
        centred / se
    } else if centred > TIE_SLACK {
        f64::INFINITY
    } else if centred < -TIE_SLACK {
        f64::NEG_INFINITY
    } else {
        0.0
    }
}

/// The observed statistic's standard error for metric `j`, from each
/// group's two-pass sample variance, weighted as in the resamples.
fn observed_se(deltas: &[f64], m: usize, j: usize, groups: &[Group<'_>]) -> f64 {
    let mut var = 0.0;
    for g in groups.iter().filter(|g| g.var_weight > 0.0) {
        let vals: Vec<f64> = g.idx.iter().map(|&q| deltas[q as usize * m + j]).collect();
        let sd = super::sample_sd(&vals);
        var += sd * sd * (g.len - 1.0) * g.var_weight;
    }
    var.sqrt()
}

/// Shift-method p-values and percentile bounds from the resampled statistics
/// (which it sorts in place).
fn outcome_from_resamples(observed: f64, stats: &mut [f64], alpha: f64) -> TestOutcome {
    let (mut less, mut greater, mut two) = (0u64, 0u64, 0u64);
    for &st in stats.iter() {
        let null = st - observed;
        less += u64::from(null <= observed + TIE_SLACK);
        greater += u64::from(null >= observed - TIE_SLACK);
        two += u64::from(null.abs() >= observed.abs() - TIE_SLACK);
    }
    let denom = stats.len() as f64 + 1.0;
    let p = |count: u64| ((count as f64 + 1.0) / denom).min(1.0);
    sort_total(stats);
    let q = |level: f64| quantile_sorted(stats, level);
    TestOutcome {
        mean_delta: observed,
        p_less: p(less),
        p_greater: p(greater),
        p_two_sided: p(two),
        ci_low: q(alpha / 2.0),
        ci_high: q(1.0 - alpha / 2.0),
        lower_bound: q(alpha),
        upper_bound: q(1.0 - alpha),
    }
}

/// Rejects strata built for a different query set; O(n), negligible next to
/// the resampling.
fn check_partition(strata: &Strata, n: usize) -> Result<(), StatsError> {
    let err = |reason: String| StatsError::Strata { n_queries: n, reason };
    let mut seen = vec![false; n];
    for &i in strata.groups().iter().flatten() {
        let slot = seen
            .get_mut(i as usize)
            .ok_or_else(|| err(format!("query index {i} is out of range")))?;
        if *slot {
            return Err(err(format!("query index {i} is in two strata")));
        }
        *slot = true;
    }
    match seen.iter().position(|&x| !x) {
        Some(i) => Err(err(format!("query index {i} is in no stratum"))),
        None => Ok(()),
    }
}

/// The statistic on the original sample, computed exactly like a resample's
/// (micro: sequential sum over queries / n; macro: per-stratum sums in group
/// order), so a resample that reproduces the sample reproduces the bits.
fn observed_statistics(deltas: &[f64], m: usize, strata: &Strata, w: Weighting) -> Vec<f64> {
    let mut acc = vec![0.0; m];
    match w {
        Weighting::Micro => {
            for row in deltas.chunks_exact(m) {
                add_row(&mut acc, row);
            }
            let n = (deltas.len() / m) as f64;
            acc.iter_mut().for_each(|a| *a /= n);
        }
        Weighting::Macro => {
            let mut sub = vec![0.0; m];
            let mut h = 0.0;
            for g in strata.groups().iter().filter(|g| !g.is_empty()) {
                sub.fill(0.0);
                for &q in g {
                    let q = q as usize;
                    add_row(&mut sub, &deltas[q * m..q * m + m]);
                }
                let len = g.len() as f64;
                for (a, s) in acc.iter_mut().zip(&sub) {
                    *a += s / len;
                }
                h += 1.0;
            }
            acc.iter_mut().for_each(|a| *a /= h);
        }
    }
    acc
}

#[inline(always)]
fn add_row(acc: &mut [f64], row: &[f64]) {
    for (a, &x) in acc.iter_mut().zip(row) {
        *a += x;
    }
}

struct Group<'a> {
    idx: &'a [u32],
    draw: Below,
    len: f64,
    /// What a resample's `sum_sq - sum^2 / len` of this group is multiplied
    /// by to give its share of the statistic's variance: w^2 / (len (len - 1))
    /// with w the group's weight in the statistic (len / n micro, 1 / H
    /// macro); 0 for a group of one, which never varies.
    var_weight: f64,
}

/// Uniform draws from `0..range` with Lemire's widening-multiply rejection
/// method (Lemire 2019, "Fast random integer generation in an interval"),
/// the algorithm of rand 0.8's `Uniform<u32>`, written out here so the
/// mapping from ChaCha words to query indices is fixed by this file and cannot
/// change with a rand upgrade (rand 0.9 changed its integer sampling). It is
/// also cheaper without optimisation, which keeps debug-mode tests quick.
#[derive(Clone, Copy)]
struct Below {
    range: u32,
    /// Largest accepted low word: rejecting above it removes the modulo bias.
    zone: u32,
}

impl Below {
    /// `range` must be positive (groups are never empty).
    fn new(range: u32) -> Below {
        let reject = range.wrapping_neg() % range.max(1);
        Below {
            range,
            zone: u32::MAX - reject,
        }
    }

    #[inline(always)]
    fn sample(self, rng: &mut ChaCha8Rng) -> u32 {
        loop {
            let wide = u64::from(rng.next_u32()) * u64::from(self.range);
            if (wide as u32) <= self.zone {
                return (wide >> 32) as u32;
            }
        }
    }
}

/// The generator's 32-bit words, a buffer at a time, in the order
/// `next_u32` would return them: `fill_bytes` consumes whole words, each
/// as its four little-endian bytes. Words left in the buffer when a block
/// ends are never used; each block has its own stream.
struct Words {
    buf: [u32; 256],
    at: usize,
}

impl Words {
    fn new() -> Words {
        Words {
            buf: [0; 256],
            at: 256,
        }
    }

    #[inline(never)]
    fn refill(&mut self, rng: &mut ChaCha8Rng) {
        let mut bytes = [0u8; 1024];
        rng.fill_bytes(&mut bytes);
        for (w, b) in self.buf.iter_mut().zip(bytes.chunks_exact(4)) {
            *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        self.at = 0;
    }
}

/// Everything a block needs, shared read-only across threads.
struct Job<'a> {
    deltas: &'a [f64],
    m: usize,
    n: f64,
    groups: &'a [Group<'a>],
    weighting: Weighting,
    /// Also each resample's standard error (the bootstrap-t): rows of
    /// `2m`, the statistics then their standard errors.
    studentized: bool,
}

impl Job<'_> {
    /// `count` resamples, resample-major (`out[r * m + j]`, or rows of
    /// `2m` when studentized).
    fn run(&self, rng: &mut ChaCha8Rng, count: u32) -> Vec<f64> {
        if self.studentized {
            self.run_with::<true>(rng, count)
        } else {
            self.run_with::<false>(rng, count)
        }
    }

    fn run_with<const S: bool>(&self, rng: &mut ChaCha8Rng, count: u32) -> Vec<f64> {
        // Monomorphised kernels for the common metric counts let the compiler
        // keep the accumulators in registers; the generic one covers the rest.
        // The second number is how many resamples are summed side by side.
        match self.m {
            1 => self.run_fixed::<1, 4, S>(rng, count),
            2 => self.run_fixed::<2, 4, S>(rng, count),
            3 => self.run_fixed::<3, 4, S>(rng, count),
            4 => self.run_fixed::<4, 4, S>(rng, count),
            5 => self.run_fixed::<5, 4, S>(rng, count),
            6 => self.run_fixed::<6, 4, S>(rng, count),
            7 => self.run_fixed::<7, 4, S>(rng, count),
            8 => self.run_fixed::<8, 4, S>(rng, count),
            10 => self.run_fixed::<10, 2, S>(rng, count),
            12 => self.run_fixed::<12, 2, S>(rng, count),
            14 => self.run_fixed::<14, 2, S>(rng, count),
            16 => self.run_fixed::<16, 2, S>(rng, count),
            _ => self.run_dyn(rng, count),
        }
    }

    /// Draws `L` resamples' query indices, in stream order, then sums the
    /// `L` of them side by side. Each resample's sums are the same
    /// additions in the same order as one resample at a time; interleaving
    /// only lets `L` independent chains of additions overlap, where one
    /// chain waits on each addition's latency.
    fn run_fixed<const M: usize, const L: usize, const S: bool>(
        &self,
        rng: &mut ChaCha8Rng,
        count: u32,
    ) -> Vec<f64> {
        let draws_per_resample: usize = self.groups.iter().map(|g| g.idx.len()).sum();
        let mut draws = vec![0u32; L * draws_per_resample];
        let mut out = Vec::with_capacity(count as usize * M * (1 + usize::from(S)));
        let mut words = Words::new();
        let mut left = count as usize;
        while left > 0 {
            let lanes = left.min(L);
            for lane in draws.chunks_exact_mut(draws_per_resample).take(lanes) {
                self.draw(rng, &mut words, lane);
            }
            if lanes == L {
                self.sum_side_by_side::<M, L, S>(&draws, draws_per_resample, &mut out);
            } else {
                for lane in draws.chunks_exact(draws_per_resample).take(lanes) {
                    self.sum_side_by_side::<M, 1, S>(lane, draws_per_resample, &mut out);
                }
            }
            left -= lanes;
        }
        out
    }

    /// One resample's query indices, group after group: [`Below::sample`]
    /// on the generator's words in stream order, taken from a buffer so
    /// that the loop makes no call and keeps its place in a register.
    #[inline(always)]
    fn draw(&self, rng: &mut ChaCha8Rng, words: &mut Words, into: &mut [u32]) {
        let mut i = 0;
        for g in self.groups {
            let end = i + g.idx.len();
            let (range, zone) = (u64::from(g.draw.range), g.draw.zone);
            while i < end {
                let mut k = words.at;
                while i < end && k < words.buf.len() {
                    let wide = u64::from(words.buf[k]) * range;
                    k += 1;
                    // Written either way (the index is in range), kept
                    // only when the word is accepted.
                    into[i] = g.idx[(wide >> 32) as usize];
                    i += usize::from(wide as u32 <= zone);
                }
                words.at = k;
                if k == words.buf.len() {
                    words.refill(rng);
                }
            }
        }
    }

    /// The statistics of the `L` resamples whose indices lie `stride` apart
    /// in `draws`, appended to `out` in order (each followed by its
    /// standard errors when `S`).
    #[inline(always)]
    fn sum_side_by_side<const M: usize, const L: usize, const S: bool>(
        &self,
        draws: &[u32],
        stride: usize,
        out: &mut Vec<f64>,
    ) {
        let mut acc = [[0.0f64; M]; L];
        let mut var = [[0.0f64; M]; L];
        let mut at = 0;
        for g in self.groups {
            let n = g.idx.len();
            let lanes: [&[u32]; L] = std::array::from_fn(|l| &draws[l * stride + at..l * stride + at + n]);
            let mut sub = [[0.0f64; M]; L];
            let mut sq = [[0.0f64; M]; L];
            for t in 0..n {
                for ((lane, sub), sq) in lanes.iter().zip(sub.iter_mut()).zip(sq.iter_mut()) {
                    let q = lane[t] as usize * M;
                    let row = &self.deltas[q..q + M];
                    for j in 0..M {
                        sub[j] += row[j];
                        if S {
                            sq[j] += row[j] * row[j];
                        }
                    }
                }
            }
            for l in 0..L {
                self.fold_stratum(&mut acc[l], &sub[l], g.len);
                if S {
                    fold_variance(&mut var[l], &sub[l], &sq[l], g);
                }
            }
            at += n;
        }
        for (a, v) in acc.iter_mut().zip(&var) {
            self.finish(a);
            out.extend_from_slice(a);
            if S {
                out.extend(v.iter().map(|v| v.sqrt()));
            }
        }
    }

    fn run_dyn(&self, rng: &mut ChaCha8Rng, count: u32) -> Vec<f64> {
        let m = self.m;
        let mut out = Vec::with_capacity(count as usize * m * (1 + usize::from(self.studentized)));
        let mut acc = vec![0.0f64; m];
        let mut var = vec![0.0f64; m];
        let mut sub = vec![0.0f64; m];
        let mut sq = vec![0.0f64; m];
        for _ in 0..count {
            acc.fill(0.0);
            var.fill(0.0);
            for g in self.groups {
                sub.fill(0.0);
                sq.fill(0.0);
                for _ in 0..g.idx.len() {
                    let q = g.idx[g.draw.sample(rng) as usize] as usize * m;
                    let row = &self.deltas[q..q + m];
                    add_row(&mut sub, row);
                    if self.studentized {
                        for (s, &x) in sq.iter_mut().zip(row) {
                            *s += x * x;
                        }
                    }
                }
                self.fold_stratum(&mut acc, &sub, g.len);
                if self.studentized {
                    fold_variance(&mut var, &sub, &sq, g);
                }
            }
            self.finish(&mut acc);
            out.extend_from_slice(&acc);
            if self.studentized {
                out.extend(var.iter().map(|v| v.sqrt()));
            }
        }
        out
    }

    #[inline(always)]
    fn fold_stratum(&self, acc: &mut [f64], sub: &[f64], len: f64) {
        match self.weighting {
            Weighting::Micro => add_row(acc, sub),
            Weighting::Macro => {
                for (a, s) in acc.iter_mut().zip(sub) {
                    *a += s / len;
                }
            }
        }
    }

    #[inline(always)]
    fn finish(&self, acc: &mut [f64]) {
        let d = match self.weighting {
            Weighting::Micro => self.n,
            Weighting::Macro => self.groups.len() as f64,
        };
        acc.iter_mut().for_each(|a| *a /= d);
    }
}

/// Adds one group's share of a resample's variance of the statistic: its
/// sample variance (n - 1 denominator), weighted. One pass over sums and
/// sums of squares, so a variance that is zero on paper can come out as a
/// rounding residue: anything below 1e-10 of the sum of squares (far below
/// any spread a metric delta has) counts as none, which keeps a resample of
/// equal values from reading as a near-infinite t.
#[inline(always)]
fn fold_variance(var: &mut [f64], sub: &[f64], sq: &[f64], g: &Group<'_>) {
    if g.var_weight == 0.0 {
        return;
    }
    for ((v, &s), &q) in var.iter_mut().zip(sub).zip(sq) {
        let ss = q - s * s / g.len;
        if ss > 1e-10 * q {
            *v += ss * g.var_weight;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{block_rng, mean, Alternative};
    use proptest::collection::vec;
    use proptest::prelude::*;

    fn settings(resamples: u32, seed: u64) -> BootstrapSettings {
        BootstrapSettings {
            resamples,
            seed,
            weighting: Weighting::Micro,
            alpha: 0.05,
        }
    }

    fn one(deltas: &[f64], s: &BootstrapSettings) -> TestOutcome {
        bootstrap(deltas, 1, &Strata::single(deltas.len()), s).remove(0)
    }

    fn bits(o: &TestOutcome) -> [u64; 8] {
        [
            o.mean_delta,
            o.p_less,
            o.p_greater,
            o.p_two_sided,
            o.ci_low,
            o.ci_high,
            o.lower_bound,
            o.upper_bound,
        ]
        .map(f64::to_bits)
    }

    #[test]
    fn index_draws_match_rand_uniform() {
        // The hand-written sampler must consume the stream exactly like rand
        // 0.8's `Uniform<u32>`, as its doc comment claims.
        use rand::distributions::{Distribution, Uniform};
        for range in [1u32, 2, 3, 7, 100, 7000, 1 << 31, u32::MAX] {
            let (mut a, mut b) = (block_rng(5, 3), block_rng(5, 3));
            let uniform = Uniform::new(0, range);
            let below = Below::new(range);
            for _ in 0..2000 {
                assert_eq!(below.sample(&mut a), uniform.sample(&mut b), "range {range}");
            }
        }
    }

    #[test]
    fn identical_runs_give_p_one_exactly() {
        let o = one(&[0.0; 30], &settings(999, 1));
        assert_eq!(o.mean_delta, 0.0);
        assert_eq!((o.p_less, o.p_greater, o.p_two_sided), (1.0, 1.0, 1.0));
        assert_eq!((o.ci_low, o.ci_high), (0.0, 0.0));
    }

    #[test]
    fn clear_drop_is_detected() {
        let d: Vec<f64> = (0..40).map(|i| -0.1 + 0.01 * f64::from(i % 5)).collect();
        let o = one(&d, &settings(2000, 3));
        assert!(o.p(Alternative::Less) < 0.001);
        assert!(o.p_greater > 0.99);
        assert!(o.upper_bound < 0.0);
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        let s = settings(100, 1);
        assert_eq!(bootstrap(&[], 0, &Strata::single(0), &s), vec![]);
        let empty = bootstrap(&[], 2, &Strata::single(0), &s);
        assert_eq!(empty.len(), 2);
        assert!(empty.iter().all(|o| o.mean_delta == 0.0 && o.p_two_sided == 1.0));
        let single = one(&[-0.5], &s);
        assert_eq!(single.mean_delta, -0.5);
        assert_eq!(single.p_less, 1.0);
        assert_eq!(single.ci_low, f64::NEG_INFINITY);
        let nan = one(&[0.1, f64::NAN, 0.2], &s);
        assert!(nan.mean_delta.is_nan() && nan.ci_low.is_nan() && nan.p_less == 1.0);
        let bad_alpha = one(&[0.1, -0.2, 0.3], &BootstrapSettings { alpha: 1.5, ..s });
        assert!(bad_alpha.ci_low.is_nan() && bad_alpha.p_two_sided <= 1.0);
        assert!(one(&[0.1], &BootstrapSettings { alpha: -1.0, ..s })
            .ci_low
            .is_nan());
        let no_resamples = one(&[0.1, -0.2, 0.3], &settings(0, 1));
        assert_eq!(no_resamples.p_two_sided, 1.0);
        // Every stratum a singleton: no variability to resample.
        let singletons = bootstrap(&[0.1, 0.2], 1, &Strata::from_labels(&[0, 1]), &s);
        assert_eq!(singletons[0].p_less, 1.0);
    }

    #[test]
    fn shape_errors_are_reported() {
        let s = settings(10, 1);
        assert!(matches!(
            try_bootstrap(&[1.0, 2.0, 3.0], 2, &Strata::single(1), &s),
            Err(StatsError::Shape { .. })
        ));
        assert!(matches!(
            try_bootstrap(&[1.0, 2.0, 3.0], 1, &Strata::single(2), &s),
            Err(StatsError::Strata { .. })
        ));
        assert!(matches!(
            try_bootstrap(&[1.0, 2.0], 1, &Strata::single(3), &s),
            Err(StatsError::Strata { .. })
        ));
        let broken = bootstrap(&[1.0, 2.0, 3.0], 2, &Strata::single(1), &s);
        assert_eq!(broken.len(), 2);
        assert!(broken[0].mean_delta.is_nan());
    }

    #[test]
    fn macro_weights_strata_equally() {
        // Stratum 0: 4 queries at 0; stratum 1: 1... 2 queries at -1.
        let d = [0.0, 0.0, 0.0, 0.0, -1.0, -1.0];
        let strata = Strata::from_labels(&[0, 0, 0, 0, 1, 1]);
        let mac = BootstrapSettings {
            weighting: Weighting::Macro,
            ..settings(200, 1)
        };
        let o = bootstrap(&d, 1, &strata, &mac).remove(0);
        assert_eq!(o.mean_delta, -0.5);
        // Within-stratum resampling of constant strata never moves the statistic.
        assert_eq!((o.ci_low, o.ci_high), (-0.5, -0.5));
        let mic = bootstrap(&d, 1, &strata, &settings(200, 1)).remove(0);
        assert!((mic.mean_delta - -1.0 / 3.0).abs() < 1e-15);
    }

    #[test]
    fn metrics_match_separate_single_metric_runs() {
        // Indices are shared across metrics, so running a column alone with the
        // same seed must give the same numbers.
        let n = 37;
        let d: Vec<f64> = (0..n * 3)
            .map(|i| ((i * 7919) % 13) as f64 / 13.0 - 0.45)
            .collect();
        let s = settings(700, 11);
        let all = bootstrap(&d, 3, &Strata::single(n), &s);
        for (j, outcome) in all.iter().enumerate() {
            let col: Vec<f64> = d.chunks_exact(3).map(|r| r[j]).collect();
            assert_eq!(bits(outcome), bits(&one(&col, &s)));
        }
    }

    #[test]
    fn columns_at_their_own_alpha_match_separate_runs() {
        // The gate's plain and margin tests as 12 columns of one matrix,
        // stratified: each column must come out as when it is tested alone
        // at its alpha (the 12-column kernel, the p-values and the quantiles).
        let n = 41;
        let m = 12;
        let d: Vec<f64> = (0..n * m)
            .map(|i| ((i * 7919) % 23) as f64 / 23.0 - 0.4)
            .collect();
        let labels: Vec<u32> = (0..n as u32).map(|q| q % 3).collect();
        let strata = Strata::from_labels(&labels);
        let s = settings(900, 3);
        let alphas: Vec<f64> = (0..m).map(|j| if j < 6 { 0.05 } else { 0.01 }).collect();
        let all = bootstrap_alphas(&d, m, &strata, &s, &alphas);
        for j in 0..m {
            let col: Vec<f64> = d.chunks_exact(m).map(|r| r[j]).collect();
            let alone = bootstrap(
                &col,
                1,
                &strata,
                &BootstrapSettings {
                    alpha: alphas[j],
                    ..s
                },
            )
            .remove(0);
            assert_eq!(bits(&all[j]), bits(&alone), "column {j}");
        }
        let col6: Vec<f64> = d.chunks_exact(m).map(|r| r[6]).collect();
        let at_05 = bootstrap(&col6, 1, &strata, &s).remove(0);
        assert_ne!(
            all[6].ci_low, at_05.ci_low,
            "column 6 is read at its own alpha, not s.alpha"
        );
        assert!(matches!(
            try_bootstrap_alphas(&d, m, &strata, &s, &alphas[..5]),
            Err(StatsError::Alphas {
                given: 5,
                n_metrics: 12
            })
        ));
    }

    #[test]
    fn many_metrics_use_the_generic_kernel() {
        let n = 25;
        let m = 11;
        let d: Vec<f64> = (0..n * m).map(|i| ((i * 31) % 17) as f64 / 17.0 - 0.5).collect();
        let s = settings(300, 5);
        let all = bootstrap(&d, m, &Strata::single(n), &s);
        let col: Vec<f64> = d.chunks_exact(m).map(|r| r[10]).collect();
        assert_eq!(bits(&all[10]), bits(&one(&col, &s)));
    }

    #[test]
    fn buffered_words_are_the_stream_in_order() {
        use rand::RngCore;
        let (mut a, mut b) = (block_rng(3, 7), block_rng(3, 7));
        let mut words = Words::new();
        for i in 0..1000 {
            if words.at == words.buf.len() {
                words.refill(&mut a);
            }
            assert_eq!(words.buf[words.at], b.next_u32(), "word {i}");
            words.at += 1;
        }
    }

    /// The kernels against the bootstrap written out one resample at a
    /// time with rand's own `Uniform` (which `Below` reproduces, see
    /// above): every count of metrics, kernel and side-by-side width, and
    /// resample counts that leave a partial group of lanes, give the same
    /// bits.
    #[test]
    fn kernels_equal_one_resample_at_a_time() {
        use rand::distributions::{Distribution, Uniform};
        let labels: Vec<u32> = (0..53u32)
            .map(|i| [0, 1, 1, 2, 0, 1, 2, 2, 2][i as usize % 9])
            .collect();
        let strata = Strata::from_labels(&labels);
        for m in [1usize, 2, 3, 5, 6, 8, 9, 10, 16] {
            let deltas: Vec<f64> = (0..labels.len() * m)
                .map(|i| ((i * 7919) % 101) as f64 / 97.0 - 0.5)
                .collect();
            for (weighting, studentized) in [
                (Weighting::Micro, false),
                (Weighting::Macro, false),
                (Weighting::Micro, true),
                (Weighting::Macro, true),
            ] {
                for count in [1u32, 3, 4, 5, 7, 256] {
                    let groups = groups(&strata, labels.len(), weighting);
                    let job = Job {
                        deltas: &deltas,
                        m,
                        n: labels.len() as f64,
                        groups: &groups,
                        weighting,
                        studentized,
                    };
                    let got = job.run(&mut block_rng(11, 2), count);
                    let mut rng = block_rng(11, 2);
                    let mut want = Vec::new();
                    let h = strata.groups().len() as f64;
                    for _ in 0..count {
                        let mut acc = vec![0.0; m];
                        let mut var = vec![0.0; m];
                        for g in strata.groups() {
                            let pick = Uniform::new(0, g.len() as u32);
                            let mut sub = vec![0.0; m];
                            let mut sq = vec![0.0; m];
                            for _ in 0..g.len() {
                                let q = g[pick.sample(&mut rng) as usize] as usize;
                                for j in 0..m {
                                    sub[j] += deltas[q * m + j];
                                    sq[j] += deltas[q * m + j] * deltas[q * m + j];
                                }
                            }
                            let len = g.len() as f64;
                            let w = match weighting {
                                Weighting::Micro => len / labels.len() as f64,
                                Weighting::Macro => 1.0 / h,
                            };
                            for j in 0..m {
                                acc[j] += match weighting {
                                    Weighting::Micro => sub[j],
                                    Weighting::Macro => sub[j] / len,
                                };
                                let ss = sq[j] - sub[j] * sub[j] / len;
                                if g.len() >= 2 && ss > 1e-10 * sq[j] {
                                    var[j] += ss * (w * w / (len * (len - 1.0)));
                                }
                            }
                        }
                        let d = match weighting {
                            Weighting::Micro => labels.len() as f64,
                            Weighting::Macro => h,
                        };
                        want.extend(acc.iter().map(|a| a / d));
                        if studentized {
                            want.extend(var.iter().map(|v| v.sqrt()));
                        }
                    }
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(
                        bits(&got),
                        bits(&want),
                        "m {m}, {weighting:?}, studentized {studentized}, {count} resamples"
                    );
                }
            }
        }
    }

    #[test]
    fn same_result_on_one_and_two_threads() {
        let n = 300;
        let d: Vec<f64> = (0..n * 2).map(|i| ((i * 37) % 11) as f64 / 10.0 - 0.5).collect();
        let strata = Strata::from_labels(&(0..n as u32).map(|i| i % 3).collect::<Vec<_>>());
        let s = BootstrapSettings {
            weighting: Weighting::Macro,
            ..settings(3000, 99)
        };
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map(|pool| pool.install(|| bootstrap(&d, 2, &strata, &s)))
                .ok()
        };
        let (a, b) = (run(1), run(2));
        assert!(a.is_some());
        let to_bits =
            |v: &Option<Vec<TestOutcome>>| v.as_ref().map(|v| v.iter().map(bits).collect::<Vec<_>>());
        assert_eq!(to_bits(&a), to_bits(&b));
    }

    #[test]
    fn calibrated_under_the_null() {
        // 300 paired samples with no true difference (n = 100, symmetric deltas):
        // the one-sided test at alpha 0.05 must reject at a rate inside the
        // binomial 99.9% band around 5%.
        use rand::{Rng, SeedableRng};
        use statrs::distribution::{Binomial, DiscreteCDF};
        let trials = 300u64;
        let s = settings(2000, 20261129);
        let mut rejections = 0u64;
        for t in 0..trials {
            let mut gen = rand_chacha::ChaCha8Rng::seed_from_u64(1000 + t);
            let d: Vec<f64> = (0..100)
                .map(|_| {
                    if t % 2 == 0 {
                        // Continuous: difference of two iid uniform scores.
                        gen.gen::<f64>() - gen.gen::<f64>()
                    } else {
                        // Binary metric: -1, 0, +1 with a 60% tie rate.
                        [-1.0, 0.0, 0.0, 0.0, 1.0][gen.gen_range(0u32..5) as usize]
                    }
                })
                .collect();
            let o = one(&d, &s);
            rejections += u64::from(o.p(Alternative::Less) < 0.05);
        }
        let binom = Binomial::new(0.05, trials).unwrap();
        let (lo, hi) = (binom.inverse_cdf(0.0005), binom.inverse_cdf(0.9995));
        assert!(
            (lo..=hi).contains(&rejections),
            "{rejections} rejections of {trials}, band {lo}..={hi}"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn identical_runs_no_change(n in 0usize..80, seed: u64) {
            let o = one(&vec![0.0; n], &settings(199, seed));
            prop_assert_eq!(o.mean_delta, 0.0);
            prop_assert_eq!(o.p_two_sided, 1.0);
        }

        #[test]
        fn ci_contains_point_estimate(d in vec(-1.0f64..1.0, 1..60), seed: u64) {
            let o = one(&d, &settings(199, seed));
            prop_assert!(o.ci_low <= o.mean_delta + 1e-12, "{:?}", o);
            prop_assert!(o.mean_delta - 1e-12 <= o.ci_high, "{:?}", o);
            prop_assert!(o.ci_low <= o.lower_bound && o.upper_bound <= o.ci_high);
            prop_assert_eq!(o.mean_delta.to_bits(), mean(&d).to_bits());
        }

        #[test]
        fn swapping_runs_flips_sign_keeps_two_sided(d in vec(-1.0f64..1.0, 2..60), seed: u64) {
            let s = settings(199, seed);
            let neg: Vec<f64> = d.iter().map(|x| -x).collect();
            let (a, b) = (one(&d, &s), one(&neg, &s));
            prop_assert_eq!(a.mean_delta, -b.mean_delta);
            prop_assert_eq!(a.p_two_sided.to_bits(), b.p_two_sided.to_bits());
            prop_assert_eq!(a.p_less.to_bits(), b.p_greater.to_bits());
            prop_assert_eq!(a.p_greater.to_bits(), b.p_less.to_bits());
            prop_assert!((a.ci_low + b.ci_high).abs() < 1e-12);
            prop_assert!((a.lower_bound + b.upper_bound).abs() < 1e-12);
        }

        #[test]
        fn fixed_seed_repeats_bitwise(d in vec(-1.0f64..1.0, 0..120),
                                      labels in vec(0u32..4, 120),
                                      seed: u64, macro_: bool) {
            let m = 2;
            let n = d.len() / m;
            let strata = Strata::from_labels(&labels[..n]);
            let s = BootstrapSettings {
                weighting: if macro_ { Weighting::Macro } else { Weighting::Micro },
                ..settings(300, seed)
            };
            let run = || {
                let out = bootstrap(&d[..n * m], m, &strata, &s);
                out.iter().map(bits).collect::<Vec<_>>()
            };
            prop_assert_eq!(run(), run());
        }

        #[test]
        fn one_stratum_equals_unstratified(d in vec(-1.0f64..1.0, 1..60),
                                           label: u32, seed: u64, macro_: bool) {
            let s = BootstrapSettings {
                weighting: if macro_ { Weighting::Macro } else { Weighting::Micro },
                ..settings(199, seed)
            };
            let unstratified = one(&d, &settings(199, seed));
            let strata = Strata::from_labels(&vec![label; d.len()]);
            let stratified = bootstrap(&d, 1, &strata, &s).remove(0);
            prop_assert_eq!(bits(&unstratified), bits(&stratified));
        }

        #[test]
        fn p_values_are_probabilities(d in vec(-1.0f64..1.0, 0..40), seed: u64) {
            let o = one(&d, &settings(99, seed));
            for p in [o.p_less, o.p_greater, o.p_two_sided] {
                prop_assert!(p > 0.0 && p <= 1.0);
            }
        }
    }
}
