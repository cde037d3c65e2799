//! Fisher's sign-flip randomization test of the mean delta (Fisher 1935;
//! recommended for IR by Smucker, Allan & Carterette 2007 and Sakai 2014).
//!
//! Under "no difference" the two runs are exchangeable on every query, so each
//! delta is as likely to carry either sign. The p-value is the share of the
//! 2^k sign patterns of the k non-zero deltas whose mean is at least as extreme
//! as the observed one. Zero deltas are the same under either sign and are left
//! out of k (they still count in n, which only scales the mean).
//!
//! Up to [`EXACT_MAX_NONZERO`] non-zero deltas the count is exact, by meet in
//! the middle (Horowitz & Sahni 1974): the sums of each half's 2^(k/2) patterns
//! are enumerated in sorted order, and the pairs on each side of the observed
//! sum are counted with two pointers: O(2^(k/2)) time and memory instead of
//! O(2^k) time. Beyond that, `resamples` random
//! patterns give a Monte Carlo p = (1 + count) / (B + 1).
//!
//! The interval fields carry the t interval of [`super::t_test`]: a
//! sign-flip interval would need test inversion over a grid of shifts, which
//! costs a randomization test per grid point for little practical difference.

use rand::RngCore;
use rayon::prelude::*;

use super::{block_rng, t_test, TestOutcome, BLOCK_SIZE, TIE_SLACK};

/// Largest number of non-zero deltas enumerated exactly: two halves of 2^20
/// sums, 16 MB and a fraction of a second.
pub const EXACT_MAX_NONZERO: usize = 40;

/// Sign-flip randomization test; see the module docs for method and interval.
///
/// Comparisons happen on the sum of the deltas (the mean times n) with a tie
/// slack of `1e-12 * max(1, sum |d|)`, i.e. at most 1e-12 on the scale of the
/// mean for deltas in [-1, 1]. `resamples` and `seed` only matter in the Monte
/// Carlo regime (more than 40 non-zero deltas). Edge cases: no deltas gives
/// p = 1 and an unbounded interval; all deltas zero gives p = 1 exactly;
/// non-finite deltas give p = 1 and NaN intervals.
pub fn randomization(deltas: &[f64], resamples: u32, seed: u64, alpha: f64) -> TestOutcome {
    let interval = t_test(deltas, alpha);
    if deltas.is_empty() || !interval.mean_delta.is_finite() {
        return interval;
    }
    let magnitudes: Vec<f64> = deltas.iter().filter(|&&d| d != 0.0).map(|d| d.abs()).collect();
    let observed: f64 = deltas.iter().sum();
    let total: f64 = magnitudes.iter().sum();
    let tol = TIE_SLACK * total.max(1.0);
    let (p_less, p_greater, p_two_sided) = if magnitudes.len() <= EXACT_MAX_NONZERO {
        exact(&magnitudes, observed, tol)
    } else {
        monte_carlo(&magnitudes, observed, tol, resamples, seed)
    };
    TestOutcome {
        p_less,
        p_greater,
        p_two_sided,
        ..interval
    }
}

/// Sums of `±v_i` over all 2^len sign patterns, ascending. Built by merging
/// (Horowitz & Sahni 1974): if the sums of the first i values are sorted, so
/// are `s - v` and `s + v`, and one linear merge sorts the next level, so no
/// sort is ever needed. `fl(s ± v)` is monotone in `s`, so this holds in
/// floating point too.
fn sorted_signed_sums(values: &[f64]) -> Vec<f64> {
    let full = 1usize << values.len();
    let mut sums = Vec::with_capacity(full);
    let mut next = Vec::with_capacity(full);
    sums.push(0.0);
    for &v in values {
        next.clear();
        let (mut i, mut j) = (0, 0);
        while i < sums.len() && j < sums.len() {
            let (lo, hi) = (sums[i] - v, sums[j] + v);
            if lo <= hi {
                next.push(lo);
                i += 1;
            } else {
                next.push(hi);
                j += 1;
            }
        }
        next.extend(sums[i..].iter().map(|s| s - v));
        next.extend(sums[j..].iter().map(|s| s + v));
        std::mem::swap(&mut sums, &mut next);
    }
    sums
}

/// Pairs with `a + b <= t`, tested as `b <= t - a`; both slices ascending, so
/// the cut in `right` only moves left as `a` grows (two pointers, linear).
fn pairs_at_most(left: &[f64], right: &[f64], t: f64) -> u64 {
    let mut j = right.len();
    let mut count = 0u64;
    for &a in left {
        let limit = t - a;
        while j > 0 && right[j - 1] > limit {
            j -= 1;
        }
        count += j as u64;
    }
    count
}

/// Pairs with `a + b >= t`, tested as `b >= t - a`; see [`pairs_at_most`].
fn pairs_at_least(left: &[f64], right: &[f64], t: f64) -> u64 {
    // j = number of b below the limit.
    let mut j = right.len();
    let mut count = 0u64;
    for &a in left {
        let limit = t - a;
        while j > 0 && right[j - 1] >= limit {
            j -= 1;
        }
        count += (right.len() - j) as u64;
    }
    count
}

/// Exact (less, greater, two-sided) p-values over all 2^k patterns.
pub(super) fn exact(magnitudes: &[f64], observed: f64, tol: f64) -> (f64, f64, f64) {
    let (left, right) = magnitudes.split_at(magnitudes.len() / 2);
    let (left, right) = (sorted_signed_sums(left), sorted_signed_sums(right));
    let total = (left.len() as u64) * (right.len() as u64);
    let less = pairs_at_most(&left, &right, observed + tol);
    let greater = pairs_at_least(&left, &right, observed - tol);
    let cut = observed.abs() - tol;
    let two = if cut <= 0.0 {
        total
    } else {
        pairs_at_least(&left, &right, cut) + pairs_at_most(&left, &right, -cut)
    };
    let p = |count: u64| (count as f64 / total as f64).min(1.0);
    (p(less), p(greater), p(two))
}

/// Monte Carlo p-values with the same block/stream layout as the bootstrap, so
/// they are reproducible bit for bit whatever the thread count.
pub(super) fn monte_carlo(
    magnitudes: &[f64],
    observed: f64,
    tol: f64,
    resamples: u32,
    seed: u64,
) -> (f64, f64, f64) {
    let n_blocks = resamples.div_ceil(BLOCK_SIZE);
    let counts: Vec<[u64; 3]> = (0..n_blocks)
        .into_par_iter()
        .map(|i| {
            let count = (resamples - i * BLOCK_SIZE).min(BLOCK_SIZE);
            let mut rng = block_rng(seed, u64::from(i));
            let mut c = [0u64; 3];
            for _ in 0..count {
                let mut s = 0.0;
                for chunk in magnitudes.chunks(64) {
                    let bits = rng.next_u64();
                    for (k, &v) in chunk.iter().enumerate() {
                        // Bit k set flips the sign: an exact, branch-free negation.
                        let flip = ((bits >> k) & 1) << 63;
                        s += f64::from_bits(v.to_bits() ^ flip);
                    }
                }
                c[0] += u64::from(s <= observed + tol);
                c[1] += u64::from(s >= observed - tol);
                c[2] += u64::from(s.abs() >= observed.abs() - tol);
            }
            c
        })
        .collect();
    let denom = f64::from(resamples) + 1.0;
    let p = |j: usize| {
        let c: u64 = counts.iter().map(|c| c[j]).sum();
        ((c as f64 + 1.0) / denom).min(1.0)
    };
    (p(0), p(1), p(2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Direct enumeration of all 2^k patterns, for checking the fast path.
    fn brute(magnitudes: &[f64], observed: f64, tol: f64) -> (f64, f64, f64) {
        let k = magnitudes.len();
        let (mut l, mut g, mut t) = (0u64, 0u64, 0u64);
        for mask in 0u64..(1 << k) {
            let s: f64 = magnitudes
                .iter()
                .enumerate()
                .map(|(i, &v)| if mask >> i & 1 == 1 { -v } else { v })
                .sum();
            l += u64::from(s <= observed + tol);
            g += u64::from(s >= observed - tol);
            t += u64::from(s.abs() >= observed.abs() - tol);
        }
        let n = (1u64 << k) as f64;
        (l as f64 / n, g as f64 / n, t as f64 / n)
    }

    /// The merge holds for values of either sign (the callers pass
    /// magnitudes, where the `s - v` side is always the first to run out):
    /// by hand, ±(-1) ± 2 = -3, -1, 1, 3.
    #[test]
    fn signed_sums_of_negative_values_are_sorted() {
        assert_eq!(sorted_signed_sums(&[-1.0, 2.0]), [-3.0, -1.0, 1.0, 3.0]);
        assert_eq!(sorted_signed_sums(&[-0.5]), [-0.5, 0.5]);
    }

    /// Monte Carlo p-values are (count + 1) / (B + 1), ties counted on
    /// both sides: all-zero deltas tie with an observed 0 in every draw
    /// (p = 1), and no draw of 64 signs reaches the all-positive sum (p =
    /// 1/(B+1), the estimator's floor; chance 2^-64 per draw).
    #[test]
    fn monte_carlo_counts_ties_and_adds_one() {
        let (less, greater, two) = monte_carlo(&[0.0; 3], 0.0, 1e-9, 999, 7);
        assert_eq!((less, greater, two), (1.0, 1.0, 1.0));
        let (less, greater, two) = monte_carlo(&[1.0; 64], 64.0, 1e-9, 999, 7);
        assert_eq!(less, 1.0);
        assert_eq!(greater, 1.0 / 1000.0);
        assert_eq!(two, 1.0 / 1000.0);
    }

    #[test]
    fn binary_deltas_match_binomial() {
        // 3 gains, 7 losses: P(S <= -4) = P(Bin(10, 1/2) <= 3) = 176/1024.
        let mut d = vec![1.0; 3];
        d.extend([-1.0; 7]);
        d.extend([0.0; 40]);
        let o = randomization(&d, 1000, 1, 0.05);
        assert_eq!(o.p_less, 176.0 / 1024.0);
        assert_eq!(o.p_two_sided, 352.0 / 1024.0);
        assert_eq!(o.p_greater, (1024.0 - 56.0) / 1024.0);
        assert_eq!(o.ci_low, t_test(&d, 0.05).ci_low);
    }

    #[test]
    fn forty_equal_deltas_exact() {
        // k = 40, all -1: only the all-negative pattern is <= observed.
        let o = randomization(&[-1.0; 40], 0, 0, 0.05);
        assert_eq!(o.p_less, 1.0 / (1u64 << 40) as f64);
        assert_eq!(o.p_two_sided, 2.0 / (1u64 << 40) as f64);
        assert_eq!(o.p_greater, 1.0);
    }

    #[test]
    fn monte_carlo_agrees_with_exact() {
        let d: Vec<f64> = (0..30).map(|i| ((i * 7) % 11) as f64 / 10.0 - 0.55).collect();
        let mags: Vec<f64> = d.iter().filter(|&&x| x != 0.0).map(|x| x.abs()).collect();
        let obs: f64 = d.iter().sum();
        let e = exact(&mags, obs, 1e-12);
        let mc = monte_carlo(&mags, obs, 1e-12, 20_000, 5);
        assert!((e.0 - mc.0).abs() < 0.015, "{e:?} {mc:?}");
        assert!((e.2 - mc.2).abs() < 0.015, "{e:?} {mc:?}");
    }

    #[test]
    fn large_samples_use_monte_carlo_reproducibly() {
        let d: Vec<f64> = (0..500).map(|i| ((i * 13) % 7) as f64 / 6.0 - 0.52).collect();
        let a = randomization(&d, 999, 42, 0.05);
        assert_eq!(a, randomization(&d, 999, 42, 0.05));
        assert!(a.p_less > 0.0 && a.p_less <= 1.0);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build();
        if let Ok(pool) = pool {
            assert_eq!(a, pool.install(|| randomization(&d, 999, 42, 0.05)));
        }
        let none = randomization(&d, 0, 42, 0.05);
        assert_eq!(none.p_two_sided, 1.0);
    }

    #[test]
    fn edge_cases() {
        let empty = randomization(&[], 100, 1, 0.05);
        assert_eq!(empty.p_two_sided, 1.0);
        let zeros = randomization(&[0.0; 12], 100, 1, 0.05);
        assert_eq!(
            (zeros.p_less, zeros.p_greater, zeros.p_two_sided),
            (1.0, 1.0, 1.0)
        );
        let single = randomization(&[-0.2], 100, 1, 0.05);
        assert_eq!((single.p_less, single.p_two_sided), (0.5, 1.0));
        let nan = randomization(&[0.1, f64::NAN], 100, 1, 0.05);
        assert!(nan.mean_delta.is_nan() && nan.p_less == 1.0);
    }

    proptest! {
        #[test]
        fn meet_in_the_middle_equals_brute_force(d in proptest::collection::vec(
            prop_oneof![Just(0.0), Just(0.1), Just(-0.1), Just(0.5), -1.0f64..1.0], 0..13)) {
            let mags: Vec<f64> = d.iter().filter(|&&x| x != 0.0).map(|x| x.abs()).collect();
            let obs: f64 = d.iter().sum();
            let tol = 1e-12 * mags.iter().sum::<f64>().max(1.0);
            prop_assert_eq!(exact(&mags, obs, tol), brute(&mags, obs, tol));
        }

        #[test]
        fn negation_keeps_two_sided(d in proptest::collection::vec(-1.0f64..1.0, 0..20)) {
            let neg: Vec<f64> = d.iter().map(|x| -x).collect();
            let (a, b) = (randomization(&d, 100, 1, 0.05), randomization(&neg, 100, 1, 0.05));
            prop_assert_eq!(a.p_two_sided, b.p_two_sided);
            prop_assert_eq!(a.p_less, b.p_greater);
        }
    }
}
