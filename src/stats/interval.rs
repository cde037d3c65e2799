//! Intervals on metric means: a stratified bootstrap of the per-query
//! values (not of deltas), giving one interval per metric for the overall
//! (micro) mean, the mean of stratum means (macro) and every stratum, all
//! from the same resamples.
//!
//! # Method
//! Each resample draws, in every stratum, as many queries as it holds, with
//! replacement (Efron & Tibshirani 1993, ch. 8: resample as the sample was
//! drawn). A resample's stratum means give that stratum's bootstrap
//! distribution; the micro statistic is the sum over strata divided by n,
//! the macro one the mean of the stratum means. One set of draws serves
//! every scope, so the intervals cost one pass of n draws per resample.
//!
//! For a metric whose values lie in [0, 1] (every rgate metric but the
//! counts, utility and a few gains) the interval is Clopper & Pearson's
//! (0/1 values) or Wilson's score interval (graded values) at the scope's
//! *effective* number of queries (see `unit_interval`): a percentile
//! interval of a 0/1 metric is the Wald
//! interval in disguise and under-covers near 0 and 1 (hit_rate@3 on 12
//! queries: .916 for a nominal .95), while the expansion below, which
//! makes up for it at n = 5, is far too wide for graded values there
//! (recall@10 on 5 queries covered 1.000). Coverage by simulation through
//! the binary: `scripts/eval_interval_coverage.py`.
//!
//! For other metrics the interval is the *expanded* percentile interval
//! (Hesterberg 2015, section 3.3): the plain percentile interval of a mean
//! is too narrow in small samples, because the bootstrap's spread is the
//! plug-in variance (divisor n, not n - 1) and its tails are normal ones,
//! not Student's. Hesterberg widens it by reading the percentiles at
//! alpha' with `z_{1-alpha'/2} = sqrt(n / (n - 1)) t_{1-alpha/2, n-1}`.
//! With strata the same two corrections are, per metric, the ratio of the
//! unbiased to the plug-in variance of the weighted mean, `sum w_h^2 s_h^2
//! / n_h` over `sum w_h^2 s_h^2 (n_h - 1) / n_h^2`, and Student's t at the
//! Welch-Satterthwaite degrees of freedom of that unbiased variance
//! (Satterthwaite 1946); with one stratum they are Hesterberg's exactly.
//!
//! # No spread
//! Where every stratum of a scope shows a single value (a 4-query stratum
//! where every query hits), every resample repeats it and the bootstrap
//! interval shrinks to a point, which misses the truth whenever it is not
//! exactly that value: with a true hit rate of 0.9, four queries all hit
//! 66% of the time. For a metric whose values lie in [0, 1] the interval is
//! then Clopper & Pearson's interval (0/1 values) or Wilson's score
//! interval (Wilson 1927) at the mean, with the
//! effective number of queries `1 / sum w_h^2 / n_h`: it needs no observed
//! spread, because a variable in [0, 1] with mean mu has variance at most
//! mu (1 - mu) (Bhatia & Davis 2000), the binomial's. Without such bounds
//! a scope without spread has no interval.
//!
//! # Degenerate input (never a panic)
//! - A scope with no query, or whose strata each hold one query (no
//!   variability to see): no interval (`None`).
//! - All values of a scope equal: Wilson's interval (see "No spread") for
//!   a metric in [0, 1], else none.
//! - A metric with a non-finite value in a scope: no interval there.
//! - `resamples == 0` or `level` outside (0, 1): no intervals.
//!
//! # Determinism
//! Resamples come in blocks of [`BLOCK`]; block `i` reads stream `i` of the
//! seeded ChaCha8 generator (as [`super::bootstrap`] does), query indices are
//! drawn with Lemire's widening-multiply rejection method written out below,
//! and every sum runs in a fixed order, so any number of threads gives the
//! same bits. Results depend on the order of the rows the caller passes: the
//! caller lays them out in a canonical order (see `crate::eval`).
//!
//! # References
//! - B. Efron, R. J. Tibshirani (1993). *An Introduction to the Bootstrap*.
//!   Chapman & Hall. Ch. 8 (stratified resampling), ch. 13 (percentile
//!   intervals).
//! - T. C. Hesterberg (2015). What teachers should know about the bootstrap:
//!   resampling in the undergraduate statistics curriculum. *The American
//!   Statistician* 69(4), 371-386 (the expanded percentile interval).
//! - F. E. Satterthwaite (1946). An approximate distribution of estimates of
//!   variance components. *Biometrics Bulletin* 2(6), 110-114.
//! - E. L. Korn, B. I. Graubard (1998). Confidence intervals for
//!   proportions with small expected number of positive counts estimated
//!   from survey data. *Survey Methodology* 24(2), 193-201 (the effective
//!   sample size of a proportion's interval).
//! - C. J. Clopper, E. S. Pearson (1934). The use of confidence or
//!   fiducial limits illustrated in the case of the binomial.
//!   *Biometrika* 26(4), 404-413.
//! - E. B. Wilson (1927). Probable inference, the law of succession, and
//!   statistical inference. *JASA* 22(158), 209-212.
//! - R. Bhatia, C. Davis (2000). A better bound on the variance. *The
//!   American Mathematical Monthly* 107(4), 353-357.
//! - D. Lemire (2019). Fast random integer generation in an interval. *ACM
//!   TOMACS* 29(1).

use rand::RngCore;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use statrs::distribution::{Beta, ContinuousCDF, Normal, StudentsT};

use super::block_rng;
use super::quantile::{quantile_sorted, sort_total};

/// Resamples per random stream. Smaller than the tests' block so that the
/// few hundred resamples of an interval still spread over every thread.
/// Part of the reproducibility contract: changing it changes the intervals.
pub const BLOCK: u32 = 32;

/// Resamples summed in one pass over a stratum's rows (see `Job::run`);
/// part of the reproducibility contract, as [`BLOCK`] is.
const LANES: usize = 8;

/// A two-sided interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// The knobs of [`mean_intervals`]; all three belong in the report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntervalSettings {
    pub resamples: u32,
    pub seed: u64,
    /// Coverage asked for, e.g. 0.95.
    pub level: f64,
}

/// Intervals per metric for each scope; `None` where there is none (see
/// the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct MeanIntervals {
    /// The mean over all queries (micro).
    pub micro: Vec<Option<Interval>>,
    /// The mean of the non-empty strata's means (macro).
    pub macro_mean: Vec<Option<Interval>>,
    /// `strata[h][j]`: stratum `h` (in the caller's group order), metric `j`.
    pub strata: Vec<Vec<Option<Interval>>>,
}

/// Intervals on the means of `values`, which is query-major
/// (`values[q * n_metrics + j]`) with the queries of each stratum in
/// consecutive rows: the first `group_sizes[0]` rows are stratum 0, and so
/// on. Empty strata are allowed (they get no interval and weigh nothing).
/// `unit_range[j]` says metric `j`'s values can only lie in [0, 1] (what
/// the interval of a scope without spread relies on). A shape mismatch (a
/// caller bug) gives no interval anywhere.
pub fn mean_intervals(
    values: &[f64],
    n_metrics: usize,
    group_sizes: &[usize],
    unit_range: &[bool],
    s: &IntervalSettings,
) -> MeanIntervals {
    let m = n_metrics;
    let none = || MeanIntervals {
        micro: vec![None; m],
        macro_mean: vec![None; m],
        strata: vec![vec![None; m]; group_sizes.len()],
    };
    let n: usize = group_sizes.iter().sum();
    let bad_level = !(s.level > 0.0 && s.level < 1.0);
    if m == 0 || values.len() != n * m || unit_range.len() != m || s.resamples == 0 || bad_level {
        return none();
    }
    let Ok(sizes) = group_sizes
        .iter()
        .map(|&g| u32::try_from(g))
        .collect::<Result<Vec<u32>, _>>()
    else {
        return none();
    };
    let mut starts = Vec::with_capacity(sizes.len());
    let mut at = 0usize;
    for &g in group_sizes {
        starts.push(at);
        at += g;
    }
    let job = Job {
        values,
        m,
        n: n as f64,
        groups: sizes
            .iter()
            .zip(&starts)
            .map(|(&len, &start)| Group {
                rows: &values[start * m..(start + len as usize) * m],
                draw: Below::new(len.max(1)),
                len,
            })
            .collect(),
    };
    let stride = job.stride();
    let b = s.resamples;
    let blocks: Vec<Vec<f64>> = (0..b.div_ceil(BLOCK))
        .into_par_iter()
        .map(|i| {
            let count = (b - i * BLOCK).min(BLOCK);
            job.run(&mut block_rng(s.seed, u64::from(i)), count)
        })
        .collect();
    // Column `c` of a resample's row: stratum h is c = h * m + j, then micro
    // (g * m + j) and macro ((g + 1) * m + j).
    let column = |c: usize| -> Vec<f64> {
        let mut x: Vec<f64> = blocks
            .iter()
            .flat_map(|blk| blk.chunks_exact(stride).map(move |row| row[c]))
            .collect();
        sort_total(&mut x);
        x
    };
    let alpha = 1.0 - s.level;
    let g = sizes.len();
    let spread = Spread::of(values, m, group_sizes);
    let non_empty = group_sizes.iter().filter(|&&k| k > 0).count() as f64;
    let interval = |c: usize, j: usize, weight: &dyn Fn(usize) -> f64| -> Option<Interval> {
        let in_scope: Vec<usize> = (0..g)
            .filter(|&h| group_sizes[h] > 0 && weight(h) > 0.0)
            .collect();
        let parts: Vec<(f64, usize, f64)> = in_scope
            .iter()
            .map(|&h| (weight(h), group_sizes[h], spread.plug_in[h * m + j]))
            .collect();
        let finite = parts.iter().all(|p| p.2.is_finite());
        let visible = parts.iter().any(|p| p.1 >= 2);
        if parts.is_empty() || !finite || !visible {
            return None;
        }
        if in_scope.iter().all(|&h| spread.constant[h * m + j]) {
            if !unit_range[j] {
                return None;
            }
            let mean: f64 = in_scope.iter().map(|&h| weight(h) * spread.mean[h * m + j]).sum();
            let n_eff = 1.0 / parts.iter().map(|&(w, n_h, _)| w * w / n_h as f64).sum::<f64>();
            let binary = in_scope.iter().all(|&h| spread.binary[h * m + j]);
            let size: usize = in_scope.iter().map(|&h| group_sizes[h]).sum();
            return without_spread(mean, n_eff, size, binary, alpha);
        }
        if unit_range[j] {
            let mean: f64 = in_scope.iter().map(|&h| weight(h) * spread.mean[h * m + j]).sum();
            let binary = in_scope.iter().all(|&h| spread.binary[h * m + j]);
            return unit_interval(mean, &parts, binary, alpha);
        }
        let a = expanded_alpha(alpha, &parts);
        let x = column(c);
        let (low, high) = (quantile_sorted(&x, a / 2.0), quantile_sorted(&x, 1.0 - a / 2.0));
        (low.is_finite() && high.is_finite()).then_some(Interval { low, high })
    };
    let micro = (0..m)
        .map(|j| interval(g * m + j, j, &|h| group_sizes[h] as f64 / n as f64))
        .collect();
    let macro_mean = (0..m)
        .map(|j| interval((g + 1) * m + j, j, &|_| 1.0 / non_empty))
        .collect();
    let strata = (0..g)
        .map(|h| {
            (0..m)
                .map(|j| interval(h * m + j, j, &|k| if k == h { 1.0 } else { 0.0 }))
                .collect()
        })
        .collect();
    MeanIntervals {
        micro,
        macro_mean,
        strata,
    }
}

/// The level at which to read the percentiles so that they cover `1 -
/// alpha` (module docs): `parts` are (weight, n_h, plug-in variance of
/// stratum h's values) for the strata in the statistic.
fn expanded_alpha(alpha: f64, parts: &[(f64, usize, f64)]) -> f64 {
    let mut plug_in = 0.0;
    let mut unbiased = 0.0;
    let mut df_denominator = 0.0;
    for &(w, n_h, var) in parts {
        let n_h = n_h as f64;
        plug_in += w * w * var / n_h;
        if n_h >= 2.0 {
            let u = w * w * var / (n_h - 1.0);
            unbiased += u;
            df_denominator += u * u / (n_h - 1.0);
        }
    }
    if plug_in <= 0.0 || unbiased <= 0.0 || df_denominator <= 0.0 {
        // No spread: every resample is the same value; alpha is moot.
        return alpha;
    }
    let df = unbiased * unbiased / df_denominator;
    let t = match StudentsT::new(0.0, 1.0, df) {
        Ok(t) if df < 1e7 => t.inverse_cdf(1.0 - alpha / 2.0),
        _ => normal().inverse_cdf(1.0 - alpha / 2.0),
    };
    let z = (unbiased / plug_in).sqrt() * t;
    let a = 2.0 * (1.0 - normal().cdf(z));
    if a.is_finite() {
        a.clamp(0.0, alpha)
    } else {
        alpha
    }
}

/// The interval of a mean of values in [0, 1], at the scope's *effective*
/// number of queries, the mean's Bernoulli variance over its estimated
/// one, `n_eff = p (1 - p) / var` with `var = sum w_h^2 s_h^2 / n_h`
/// (Korn & Graubard 1998 use this design effect for survey proportions).
///
/// A 0/1 metric gets Clopper & Pearson's interval at `n_eff` successes
/// `p n_eff`, as Korn & Graubard do: with the plug-in variances, capped at
/// the scope's size and scaled by `(t(n-1) / t(df))^2` for the strata's
/// Welch-Satterthwaite degrees of freedom, so one stratum gets the exact
/// binomial interval. Its coverage is at least the level at every p (the
/// smallest over p in [0.05, 0.95] by exact binomial sums: 0.951-0.976 at
/// n = 5-100), where Wilson's score interval dips to 0.896 (n = 5) and
/// 0.914 (hit_rate@3 on 12 queries), and the percentile bootstrap's to
/// .916 on 12 queries. A graded metric gets Wilson's score interval at
/// `n_eff` with Student's quantile at the Welch-Satterthwaite degrees of
/// freedom (unbiased variances), which a handful of graded values need
/// (nDCG@10 on 5 queries: .920 with the expanded percentile). Both keep
/// the interval inside [0, 1] and off a point where every value is the
/// same. A stratum of one query shows no spread: it takes the Bernoulli
/// bound, `p_h (1 - p_h)` (Bhatia & Davis 2000), as a scope without any
/// spread does.
fn unit_interval(mean: f64, parts: &[(f64, usize, f64)], binary: bool, alpha: f64) -> Option<Interval> {
    let p = mean.clamp(0.0, 1.0);
    let (mut var, mut df_den) = (0.0, 0.0);
    let mut bound_var = 0.0;
    let mut plug_var = 0.0;
    let mut size = 0usize;
    for &(w, n_h, plug_in) in parts {
        let nf = n_h as f64;
        size += n_h;
        bound_var += w * w * p * (1.0 - p) / nf;
        if n_h >= 2 {
            let u = w * w * plug_in / (nf - 1.0);
            var += u;
            df_den += u * u / (nf - 1.0);
            plug_var += w * w * plug_in / nf;
        } else {
            var += w * w * p * (1.0 - p) / nf;
            plug_var += w * w * p * (1.0 - p) / nf;
        }
    }
    if var.is_nan() || var <= 0.0 || p <= 0.0 || p >= 1.0 {
        // No spread anywhere (or every value 0, or every value 1): the
        // Bernoulli bound, at the scope's size.
        let n_eff = if bound_var > 0.0 {
            p * (1.0 - p) / bound_var
        } else {
            1.0 / parts.iter().map(|&(w, n_h, _)| w * w / n_h as f64).sum::<f64>()
        };
        return without_spread(p, n_eff, size, binary, alpha);
    }
    let quantile = |df: f64, q: f64| match StudentsT::new(0.0, 1.0, df) {
        Ok(t) if df.is_finite() && df < 1e7 => t.inverse_cdf(q),
        _ => normal().inverse_cdf(q),
    };
    let df = if df_den > 0.0 {
        var * var / df_den
    } else {
        f64::INFINITY
    };
    if binary {
        let n = size as f64;
        let mut n_eff = (p * (1.0 - p) / plug_var).min(n);
        if n >= 2.0 && df.is_finite() && df < n - 1.0 {
            let q = 1.0 - alpha / 2.0;
            n_eff *= (quantile(n - 1.0, q) / quantile(df, q)).powi(2);
        }
        return clopper_pearson(p, n_eff, alpha);
    }
    wilson_z(p, p * (1.0 - p) / var, quantile(df, 1.0 - alpha / 2.0))
}

/// A scope whose spread is the Bernoulli bound at `n_eff`: the binomial
/// interval for 0/1 values (at most the scope's `size` trials), Wilson's
/// for graded ones.
fn without_spread(p: f64, n_eff: f64, size: usize, binary: bool, alpha: f64) -> Option<Interval> {
    if binary {
        clopper_pearson(p, n_eff.min(size as f64), alpha)
    } else {
        wilson(p, n_eff, alpha)
    }
}

/// Clopper & Pearson's (1934) interval at level `1 - alpha` for `p n` of
/// `n` trials, read off the beta distribution (`Beta(k, n - k + 1)` below,
/// `Beta(k + 1, n - k)` above); `n` may be fractional, an effective size
/// (Korn & Graubard 1998).
fn clopper_pearson(p: f64, n: f64, alpha: f64) -> Option<Interval> {
    if !(n.is_finite() && n > 0.0) {
        return None;
    }
    let p = p.clamp(0.0, 1.0);
    let k = p * n;
    let low = if k <= 0.0 {
        0.0
    } else {
        Beta::new(k, n - k + 1.0).ok()?.inverse_cdf(alpha / 2.0)
    };
    let high = if k >= n {
        1.0
    } else {
        Beta::new(k + 1.0, n - k).ok()?.inverse_cdf(1.0 - alpha / 2.0)
    };
    (low.is_finite() && high.is_finite() && low <= high).then_some(Interval { low, high })
}

/// Wilson's score interval at level `1 - alpha` for a mean `p` of `n`
/// values in [0, 1]; None when it cannot be formed.
fn wilson(p: f64, n: f64, alpha: f64) -> Option<Interval> {
    wilson_z(p, n, normal().inverse_cdf(1.0 - alpha / 2.0))
}

/// Wilson's score interval with the quantile `z`.
fn wilson_z(p: f64, n: f64, z: f64) -> Option<Interval> {
    let p = p.clamp(0.0, 1.0);
    let z2n = z * z / n;
    let centre = (p + z2n / 2.0) / (1.0 + z2n);
    let half = z / (1.0 + z2n) * (p * (1.0 - p) / n + z2n / (4.0 * n)).sqrt();
    let (low, high) = ((centre - half).max(0.0), (centre + half).min(1.0));
    (low.is_finite() && high.is_finite()).then_some(Interval { low, high })
}

fn normal() -> Normal {
    Normal::standard()
}

/// Per stratum and metric, the plug-in variance (divisor n_h) of the values:
/// the variance of one bootstrap draw.
struct Spread {
    /// `plug_in[h * m + j]`; NaN where a value is not finite.
    plug_in: Vec<f64>,
    /// Every value of stratum h, metric j, is the same (compared exactly:
    /// a mean of equal values need not round back to the value).
    constant: Vec<bool>,
    /// Every value of stratum h, metric j, is 0 or 1.
    binary: Vec<bool>,
    mean: Vec<f64>,
}

impl Spread {
    fn of(values: &[f64], m: usize, group_sizes: &[usize]) -> Spread {
        let mut plug_in = vec![0.0; group_sizes.len() * m];
        let mut constant = vec![true; group_sizes.len() * m];
        let mut binary = vec![true; group_sizes.len() * m];
        let mut means = vec![0.0; group_sizes.len() * m];
        let mut start = 0;
        for (h, &len) in group_sizes.iter().enumerate() {
            let rows = &values[start * m..(start + len) * m];
            start += len;
            if len == 0 {
                continue;
            }
            for j in 0..m {
                let col = rows.iter().skip(j).step_by(m);
                let mean = col.clone().sum::<f64>() / len as f64;
                let ss: f64 = col.clone().map(|&v| (v - mean) * (v - mean)).sum();
                plug_in[h * m + j] = if mean.is_finite() {
                    ss / len as f64
                } else {
                    f64::NAN
                };
                let first = rows[j];
                constant[h * m + j] = col.clone().all(|&v| v == first);
                binary[h * m + j] = col.clone().all(|&v| v == 0.0 || v == 1.0);
                means[h * m + j] = if constant[h * m + j] { first } else { mean };
            }
        }
        Spread {
            plug_in,
            constant,
            binary,
            mean: means,
        }
    }
}

struct Group<'a> {
    /// The stratum's rows, query-major.
    rows: &'a [f64],
    draw: Below,
    len: u32,
}

struct Job<'a> {
    values: &'a [f64],
    m: usize,
    n: f64,
    groups: Vec<Group<'a>>,
}

impl Job<'_> {
    /// Values per resample: every stratum's means, then micro, then macro.
    fn stride(&self) -> usize {
        (self.groups.len() + 2) * self.m
    }

    /// `count` resamples, resample-major (`out[r * stride + c]`).
    ///
    /// [`LANES`] resamples at a time, stratum by stratum: each lane's draws
    /// are counted (how often each query was drawn), then one pass over the
    /// stratum's rows adds `count * value` for every lane. The rows are read
    /// in order, once per [`LANES`] resamples, where adding each drawn row
    /// would jump through memory once per draw (at 70,000 queries that was
    /// ten times slower than reading the runs). The draws, in stream order,
    /// are lane 0's for the stratum, then lane 1's, and so on.
    fn run(&self, rng: &mut ChaCha8Rng, count: u32) -> Vec<f64> {
        let m = self.m;
        let stride = self.stride();
        let g = self.groups.len();
        let non_empty = self.groups.iter().filter(|gr| gr.len > 0).count() as f64;
        let widest = self.groups.iter().map(|gr| gr.len as usize).max().unwrap_or(0);
        let mut out = vec![0.0; count as usize * stride];
        let mut counts = vec![0u32; LANES * widest];
        let mut sums = vec![0.0; LANES * m];
        for chunk in out.chunks_mut(LANES * stride) {
            let lanes = chunk.len() / stride;
            for (h, gr) in self.groups.iter().enumerate() {
                let len = gr.len as usize;
                if len == 0 {
                    continue;
                }
                let counts = &mut counts[..lanes * len];
                counts.fill(0);
                for lane in counts.chunks_exact_mut(len) {
                    for _ in 0..len {
                        lane[gr.draw.sample(rng) as usize] += 1;
                    }
                }
                let sums = &mut sums[..lanes * m];
                sums.fill(0.0);
                for (q, row) in gr.rows.chunks_exact(m).enumerate() {
                    for (lane, sum) in sums.chunks_exact_mut(m).enumerate() {
                        let c = f64::from(counts[lane * len + q]);
                        for (s, &v) in sum.iter_mut().zip(row) {
                            *s += c * v;
                        }
                    }
                }
                let n_h = f64::from(gr.len);
                for (resample, sum) in chunk.chunks_exact_mut(stride).zip(sums.chunks_exact(m)) {
                    let (strata, rest) = resample.split_at_mut(g * m);
                    let (micro, macro_mean) = rest.split_at_mut(m);
                    for j in 0..m {
                        let mean = sum[j] / n_h;
                        strata[h * m + j] = mean;
                        micro[j] += sum[j];
                        macro_mean[j] += mean;
                    }
                }
            }
            for resample in chunk.chunks_exact_mut(stride) {
                let (micro, macro_mean) = resample[g * m..].split_at_mut(m);
                for j in 0..m {
                    micro[j] /= self.n;
                    macro_mean[j] /= non_empty;
                }
            }
        }
        debug_assert_eq!(self.values.len() % m.max(1), 0);
        out
    }
}

/// Uniform draws from `0..range` by Lemire's widening multiply with
/// rejection (the method of [`super::bootstrap`]'s sampler), written out so
/// the mapping from ChaCha words to queries is fixed by this file.
#[derive(Clone, Copy)]
struct Below {
    range: u32,
    zone: u32,
}

impl Below {
    /// `range` must be positive.
    fn new(range: u32) -> Below {
        let reject = range.wrapping_neg() % range;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(resamples: u32) -> IntervalSettings {
        IntervalSettings {
            resamples,
            seed: 7,
            level: 0.95,
        }
    }

    /// Hesterberg's expansion for one stratum of n: z' = sqrt(n/(n-1)) t.
    #[test]
    fn expansion_with_one_stratum_is_hesterbergs() {
        for n in [2usize, 5, 10, 40, 1000] {
            let a = expanded_alpha(0.05, &[(1.0, n, 0.3)]);
            let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
                .unwrap()
                .inverse_cdf(0.975);
            let z = (n as f64 / (n as f64 - 1.0)).sqrt() * t;
            let want = 2.0 * (1.0 - Normal::standard().cdf(z));
            assert!((a - want).abs() < 1e-12, "n {n}: {a} vs {want}");
            assert!(a < 0.05);
        }
        // Large n: hardly any expansion.
        assert!((expanded_alpha(0.05, &[(1.0, 100_000, 0.3)]) - 0.05).abs() < 1e-4);
    }

    /// Two strata of equal size and spread, equal weights: unbiased/plug-in
    /// = n_h/(n_h-1) and Satterthwaite's df = 2 (n_h - 1).
    #[test]
    fn expansion_with_two_equal_strata() {
        let a = expanded_alpha(0.05, &[(0.5, 6, 0.2), (0.5, 6, 0.2)]);
        let t = StudentsT::new(0.0, 1.0, 10.0).unwrap().inverse_cdf(0.975);
        let want = 2.0 * (1.0 - Normal::standard().cdf((6.0f64 / 5.0).sqrt() * t));
        assert!((a - want).abs() < 1e-12, "{a} vs {want}");
        // No spread anywhere: alpha unchanged.
        assert_eq!(expanded_alpha(0.05, &[(1.0, 5, 0.0)]), 0.05);
    }

    #[test]
    fn intervals_contain_the_mean_and_repeat() {
        // Stratum a: 0..9, stratum b: ten 1s and 0s alternating; two metrics.
        let mut v = Vec::new();
        for i in 0..10 {
            v.extend([f64::from(i), 1.0]);
        }
        for i in 0..10 {
            v.extend([f64::from(i % 2), 2.0]);
        }
        let r = mean_intervals(&v, 2, &[10, 10], &[false, false], &settings(400));
        assert_eq!(
            r,
            mean_intervals(&v, 2, &[10, 10], &[false, false], &settings(400))
        );
        let a = r.strata[0][0].unwrap();
        assert!(a.low < 4.5 && 4.5 < a.high, "{a:?}");
        // Within the values seen.
        assert!(a.low >= 0.0 && a.high <= 9.0);
        let b = r.strata[1][0].unwrap();
        assert!(
            b.low < 0.5 && 0.5 < b.high && b.low >= 0.0 && b.high <= 1.0,
            "{b:?}"
        );
        // A constant metric without known bounds: no spread, no interval.
        assert_eq!(r.strata[0][1], None);
        assert_eq!(r.micro[1], None);
        let m = r.micro[0].unwrap();
        assert!(m.low < 2.5 && 2.5 < m.high, "{m:?}");
        let mac = r.macro_mean[0].unwrap();
        assert!(mac.low < 2.5 && 2.5 < mac.high, "{mac:?}");
        // Another seed, other bits.
        let other = mean_intervals(
            &v,
            2,
            &[10, 10],
            &[false, false],
            &IntervalSettings {
                seed: 8,
                ..settings(400)
            },
        );
        assert_ne!(other.strata[0][0], r.strata[0][0]);
    }

    /// A scope without spread of a 0/1 metric: Clopper & Pearson's
    /// interval, [(alpha/2)^(1/n), 1] for n values all 1, and at a mean of
    /// 1/2 over two constant strata of 20 (n_eff = 40), the beta quantiles
    /// Beta(20, 21) at 0.025 and Beta(21, 20) at 0.975 (scipy.stats.beta:
    /// 0.33801781373723455, 0.6619821862627655); a stratum of twenty 0s
    /// reaches 1 - 0.025^(1/20). Ten values of 0.1 (not 0/1): Wilson's
    /// score interval, off the point.
    #[test]
    fn no_spread_in_the_unit_interval_gives_an_interval() {
        let r = mean_intervals(&[1.0; 10], 1, &[10], &[true], &settings(100));
        let i = r.micro[0].unwrap();
        assert!((i.low - 0.025f64.powf(0.1)).abs() < 1e-12, "{i:?}");
        assert_eq!(i.high, 1.0);
        let mut v = vec![1.0; 20];
        v.extend([0.0; 20]);
        let r = mean_intervals(&v, 1, &[20, 20], &[true], &settings(100));
        for i in [r.micro[0].unwrap(), r.macro_mean[0].unwrap()] {
            assert!(
                (i.low - 0.338_017_813_737_234_55).abs() < 1e-9
                    && (i.high - 0.661_982_186_262_765_5).abs() < 1e-9,
                "{i:?}"
            );
        }
        assert!((r.strata[1][0].unwrap().high - (1.0 - 0.025f64.powf(1.0 / 20.0))).abs() < 1e-12);
        // 0.1 ten times: a sum that does not round back to 1.0, still no spread.
        let r = mean_intervals(&[0.1; 10], 1, &[10], &[true], &settings(100));
        let i = r.micro[0].unwrap();
        assert!(i.low > 0.0 && i.low < 0.1 && i.high > 0.1, "{i:?}");
    }

    #[test]
    fn degenerate_inputs_give_no_interval_and_no_panic() {
        // One query per stratum: nothing to see.
        let r = mean_intervals(&[0.1, 0.9], 1, &[1, 1], &[true], &settings(100));
        assert_eq!(r.micro, vec![None]);
        assert_eq!(r.macro_mean, vec![None]);
        assert_eq!(r.strata, vec![vec![None], vec![None]]);
        // An empty stratum beside a real one: the real one's interval, none
        // for the empty one, and the empty one weighs nothing in macro.
        let r = mean_intervals(&[0.0, 1.0, 0.0, 1.0], 1, &[0, 4], &[true], &settings(200));
        assert_eq!(r.strata[0], vec![None]);
        assert_eq!(r.strata[1], r.macro_mean);
        assert_eq!(r.strata[1], r.micro);
        assert!(r.micro[0].is_some());
        // No queries, no metrics, a shape mismatch, no resamples, a bad level.
        assert_eq!(
            mean_intervals(&[], 1, &[], &[true], &settings(10)).micro,
            vec![None]
        );
        assert!(mean_intervals(&[], 0, &[], &[], &settings(10)).micro.is_empty());
        assert_eq!(
            mean_intervals(&[1.0, 2.0, 3.0], 2, &[2], &[true, true], &settings(10)).micro,
            vec![None, None]
        );
        assert_eq!(
            mean_intervals(&[1.0, 2.0], 1, &[2], &[true], &settings(0)).micro,
            vec![None]
        );
        let bad = IntervalSettings {
            level: 1.0,
            ..settings(10)
        };
        assert_eq!(
            mean_intervals(&[1.0, 2.0], 1, &[2], &[true], &bad).micro,
            vec![None]
        );
        // A non-finite value poisons only its metric.
        let r = mean_intervals(&[f64::NAN, 1.0, 0.0, 0.5], 2, &[2], &[true, true], &settings(50));
        assert_eq!(r.micro[0], None);
        assert!(r.micro[1].is_some());
    }

    /// The same resamples whatever the thread count: blocks are combined
    /// in block order.
    #[test]
    fn thread_count_does_not_change_the_bits() {
        let v: Vec<f64> = (0..300).map(|i| f64::from((i * 37) % 11) / 10.0).collect();
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| mean_intervals(&v, 3, &[40, 7, 53], &[true; 3], &settings(500)))
        };
        let one = run(1);
        assert_eq!(one, run(3));
        assert_eq!(one, run(8));
    }
}
