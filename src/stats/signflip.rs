//! The sign-flip test of the mean delta against every margin at once:
//! each sign pattern's *threshold*, the margin at which it stops counting
//! as "at least as extreme as the sample", so that the p-value at any
//! margin is a count of thresholds and the bound at any level is one of
//! them (an order statistic), as the bootstrap-t's resampled t's are.
//!
//! # Why thresholds
//! Testing H0 "delta >= d0" by flipping signs means flipping the shifted
//! deltas `x_i = d_i - d0`: pattern `e` (one sign per query) counts toward
//! `p_less(d0)` when `sum e_i |x_i| <= sum x_i`. The difference of the two
//! sides is
//!
//! `g_e(d0) = 2 [ sum_{e_i = +1} (d0 - d_i)^+  -  sum_{e_i = -1} (d_i - d0)^+ ]`
//!
//! which is continuous, piecewise linear with its breaks at the deltas, and
//! non-decreasing in `d0`; so the margins a pattern counts for form a ray
//! `d0 <= theta_e`, and `p_less(d0)` is the share of patterns with
//! `theta_e >= d0`. The same holds for `p_greater` with the ray
//! `d0 >= phi_e`. One pass over the sorted deltas per pattern finds both;
//! the bisection this replaces re-ran the whole test some fifty times per
//! bound and was only as exact as its stopping rule.
//!
//! `g_e` is also non-increasing in every `d_i`: a query that loses more can
//! only lower each threshold, so with the patterns fixed (they are drawn
//! per query, in the caller's canonical order, from the seed) every
//! p-value and bound is monotone in the loss, not only in expectation
//! (the property the gate's verdict relies on: losing more queries never
//! turns a failure into a pass).
//!
//! Under "the change did nothing" the two runs are exchangeable on every
//! query, each delta is as likely to carry either sign, and the test is
//! exact at margin 0 whatever the deltas look like: sparse, tied, heavy
//! tailed (Fisher 1935; Lehmann & Romano 2005, §15.2). At a margin the
//! null is "symmetric about d0"; a drop of exactly d0 with skewed deltas is
//! only approximately that, which is what the calibration measures.
//!
//! Up to [`EXACT_N`] queries every one of the 2^n patterns is enumerated
//! (the p-values are exact fractions of 2^n); beyond, `B` random patterns
//! give the Monte Carlo p `(1 + count) / (B + 1)`, a valid p-value for
//! every B (Phipson & Smyth 2010).
//!
//! # References
//! - R. A. Fisher (1935). *The Design of Experiments*. Oliver & Boyd.
//! - E. L. Lehmann, J. P. Romano (2005). *Testing Statistical Hypotheses*,
//!   3rd ed. Springer. §3.5 (bounds from tests), §15.2 (randomization).
//! - B. Phipson, G. K. Smyth (2010). Permutation p-values should never be
//!   zero. *Statistical Applications in Genetics and Molecular Biology*
//!   9(1).

use rand::RngCore;
use rayon::prelude::*;

use super::{block_rng, BLOCK_SIZE, TIE_SLACK};

/// Largest number of deltas whose 2^n sign patterns are all enumerated:
/// 65,536 patterns, as cheap as the default 10,000 random ones.
pub const EXACT_N: usize = 16;

/// A group this large counts its flipped members with a bit mask (a
/// popcount per 64 queries) rather than one by one; the zeros of an
/// unchanged metric are most of a large scope.
const MASK_GROUP: usize = 128;

/// The thresholds of every pattern, ascending, and how to turn a count of
/// them into a p-value.
#[derive(Clone, Debug, PartialEq)]
pub struct Thresholds {
    /// `theta_e`: the pattern counts toward `p_less(d0)` iff `d0 <= theta_e`.
    pub upper: Vec<f64>,
    /// `phi_e`: the pattern counts toward `p_greater(d0)` iff `d0 >= phi_e`.
    pub lower: Vec<f64>,
    /// Added to every count: 1 for the sample itself under Monte Carlo,
    /// 0 when every pattern is enumerated (the sample's is among them).
    pub plus: f64,
    /// The denominator: `B + 1`, or `2^n`.
    pub total: f64,
    pub exact: bool,
}

impl Thresholds {
    /// One-sided p of H0 "delta >= d0".
    pub fn p_less(&self, d0: f64) -> f64 {
        let at_or_above = self.upper.len() - self.upper.partition_point(|&t| t < d0);
        ((at_or_above as f64 + self.plus) / self.total).min(1.0)
    }

    /// One-sided p of H0 "delta <= d0".
    pub fn p_greater(&self, d0: f64) -> f64 {
        let at_or_below = self.lower.partition_point(|&t| t <= d0);
        ((at_or_below as f64 + self.plus) / self.total).min(1.0)
    }

    /// The largest d0 not rejected at level `a` by `p_less` (+inf when
    /// the test cannot reject at that level).
    pub fn upper_bound(&self, a: f64) -> f64 {
        // p_less(d0) >= a  <=>  #{theta >= d0} >= a total - plus.
        let need = (a * self.total - self.plus).ceil();
        if need <= 0.0 {
            return f64::INFINITY;
        }
        let b = self.upper.len();
        let need = (need as usize).min(b);
        if need == 0 {
            return f64::INFINITY;
        }
        self.upper[b - need]
    }

    /// The smallest d0 not rejected at level `a` by `p_greater`.
    pub fn lower_bound(&self, a: f64) -> f64 {
        let need = (a * self.total - self.plus).ceil();
        if need <= 0.0 {
            return f64::NEG_INFINITY;
        }
        let need = (need as usize).min(self.lower.len());
        if need == 0 {
            return f64::NEG_INFINITY;
        }
        self.lower[need - 1]
    }
}

/// The deltas sorted into groups of equal value, for the per-pattern scan.
struct Groups {
    /// Distinct values, ascending.
    values: Vec<f64>,
    sizes: Vec<u32>,
    /// Per group: its members' bit mask over the canonical order (groups
    /// of at least [`MASK_GROUP`]), or none (counted member by member).
    masks: Vec<Option<Vec<u64>>>,
    /// `(query, group)` of the members of small groups.
    small: Vec<(u32, u32)>,
    /// Half the tie slack, on the scale of `g_e / 2`.
    sigma: f64,
}

impl Groups {
    fn new(deltas: &[f64]) -> Groups {
        let n = deltas.len();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by(|&a, &b| deltas[a as usize].total_cmp(&deltas[b as usize]).then(a.cmp(&b)));
        let mut values: Vec<f64> = Vec::new();
        let mut members: Vec<Vec<u32>> = Vec::new();
        for &q in &order {
            let v = deltas[q as usize];
            if values.last() != Some(&v) {
                values.push(v);
                members.push(Vec::new());
            }
            if let Some(last) = members.last_mut() {
                last.push(q);
            }
        }
        let words = n.div_ceil(64);
        let mut masks = Vec::with_capacity(members.len());
        let mut small = Vec::new();
        for (g, m) in members.iter().enumerate() {
            if m.len() >= MASK_GROUP {
                let mut mask = vec![0u64; words];
                for &q in m {
                    mask[q as usize / 64] |= 1 << (q % 64);
                }
                masks.push(Some(mask));
            } else {
                masks.push(None);
                small.extend(m.iter().map(|&q| (q, g as u32)));
            }
        }
        // Sums of values equal on paper come out a few ulps apart in
        // another order: a slack of 1e-12 of the largest sum a side can
        // hold keeps them tied, as the other tests' TIE_SLACK does.
        let scale: f64 = deltas.iter().map(|d| d.abs()).sum::<f64>().max(1.0);
        Groups {
            sizes: members.iter().map(|m| m.len() as u32).collect(),
            values,
            masks,
            small,
            sigma: 0.5 * TIE_SLACK * scale,
        }
    }

    /// `(theta, phi)` of the pattern whose flipped queries are the set bits
    /// of `flips` (bit `q % 64` of word `q / 64`). `plus` is scratch space,
    /// one slot per group.
    fn thresholds(&self, flips: &[u64], plus: &mut [u32]) -> (f64, f64) {
        for (g, mask) in self.masks.iter().enumerate() {
            plus[g] = match mask {
                Some(mask) => {
                    let flipped: u32 = mask.iter().zip(flips).map(|(m, f)| (m & f).count_ones()).sum();
                    self.sizes[g] - flipped
                }
                None => 0,
            };
        }
        for &(q, g) in &self.small {
            let flipped = (flips[q as usize / 64] >> (q % 64)) & 1;
            plus[g as usize] += 1 - flipped as u32;
        }
        // h(d0) = g_e(d0) / 2; at the break u_j:
        // A u_j - SA - (SN - N u_j), A/SA over the unflipped below j,
        // N/SN over the flipped above j.
        let (mut n_above, mut s_above) = (0.0f64, 0.0f64);
        let mut unflipped_total = 0.0;
        for (g, &v) in self.values.iter().enumerate() {
            let flipped = f64::from(self.sizes[g] - plus[g]);
            n_above += flipped;
            s_above += flipped * v;
            unflipped_total += f64::from(plus[g]);
        }
        let sigma = self.sigma;
        let (mut a, mut sa) = (0.0f64, 0.0f64);
        let mut prev: Option<(f64, f64)> = None;
        let mut phi: Option<f64> = None;
        for (g, &u) in self.values.iter().enumerate() {
            let flipped = f64::from(self.sizes[g] - plus[g]);
            n_above -= flipped;
            s_above -= flipped * u;
            let h = a * u - sa - (s_above - n_above * u);
            if phi.is_none() && h >= -sigma {
                phi = Some(match prev {
                    Some((u0, h0)) => interpolate(u0, h0, u, h, -sigma),
                    // Left of the smallest delta h rises with the slope of
                    // the flipped count; with none flipped it is 0 there.
                    None => {
                        let flipped_total = n_above + flipped;
                        if flipped_total > 0.0 {
                            u - (h + sigma) / flipped_total
                        } else {
                            f64::NEG_INFINITY
                        }
                    }
                });
            }
            if h > sigma {
                // h at the first break is <= 0, so a previous break exists.
                let theta = match prev {
                    Some((u0, h0)) => interpolate(u0, h0, u, h, sigma),
                    None => u,
                };
                return (theta, phi.unwrap_or(theta));
            }
            let unflipped = f64::from(plus[g]);
            a += unflipped;
            sa += unflipped * u;
            prev = Some((u, h));
        }
        // Right of the largest delta h rises with the unflipped count.
        let (u_last, h_last) = prev.unwrap_or((0.0, 0.0));
        let beyond = |target: f64| {
            if unflipped_total > 0.0 {
                u_last + (target - h_last) / unflipped_total
            } else {
                f64::INFINITY
            }
        };
        let theta = beyond(sigma);
        (theta, phi.unwrap_or_else(|| beyond(-sigma)))
    }
}

/// The point between two breaks where the linear piece reaches `target`,
/// kept inside the piece against rounding.
fn interpolate(u0: f64, h0: f64, u1: f64, h1: f64, target: f64) -> f64 {
    if h1 <= h0 {
        return u0;
    }
    (u0 + (u1 - u0) * (target - h0) / (h1 - h0)).clamp(u0, u1)
}

/// The thresholds of the sign-flip test of `deltas` (given in the caller's
/// canonical query order, which fixes which random sign each query gets):
/// every pattern for up to [`EXACT_N`] deltas, `resamples` random ones
/// from `seed` beyond. Finite deltas only (the caller checks).
pub fn thresholds(deltas: &[f64], resamples: u32, seed: u64) -> Thresholds {
    let n = deltas.len();
    let groups = Groups::new(deltas);
    let words = n.div_ceil(64);
    let exact = n <= EXACT_N;
    let (count, blocks) = if exact {
        let count = 1u64 << n;
        (count, count.div_ceil(u64::from(BLOCK_SIZE)))
    } else {
        (u64::from(resamples), u64::from(resamples.div_ceil(BLOCK_SIZE)))
    };
    let per_block: Vec<(Vec<f64>, Vec<f64>)> = (0..blocks)
        .into_par_iter()
        .map(|i| {
            let start = i * u64::from(BLOCK_SIZE);
            let len = (count - start).min(u64::from(BLOCK_SIZE));
            let mut rng = block_rng(seed, i);
            let mut flips = vec![0u64; words.max(1)];
            let mut plus = vec![0u32; groups.values.len()];
            let (mut up, mut lo) = (Vec::with_capacity(len as usize), Vec::with_capacity(len as usize));
            for k in 0..len {
                if exact {
                    flips[0] = start + k;
                } else {
                    for w in flips.iter_mut() {
                        *w = rng.next_u64();
                    }
                    // Bits past the last query must not count as flips of
                    // a query (they do not: only members' bits are read).
                }
                let (theta, phi) = groups.thresholds(&flips, &mut plus);
                up.push(theta);
                lo.push(phi);
            }
            (up, lo)
        })
        .collect();
    let mut upper: Vec<f64> = Vec::with_capacity(count as usize);
    let mut lower: Vec<f64> = Vec::with_capacity(count as usize);
    for (u, l) in per_block {
        upper.extend(u);
        lower.extend(l);
    }
    super::quantile::sort_total(&mut upper);
    super::quantile::sort_total(&mut lower);
    let (plus, total) = if exact {
        (0.0, count as f64)
    } else {
        (1.0, f64::from(resamples) + 1.0)
    };
    Thresholds {
        upper,
        lower,
        plus,
        total,
        exact,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Direct sign-flip p-values of `d - d0` over every pattern, counting
    /// ties within 1e-9 as extreme, for checking the thresholds.
    fn brute(d: &[f64], d0: f64) -> (f64, f64) {
        let n = d.len();
        let x: Vec<f64> = d.iter().map(|v| v - d0).collect();
        let s: f64 = x.iter().sum();
        let (mut less, mut greater) = (0u64, 0u64);
        for mask in 0u64..(1 << n) {
            let t: f64 = x
                .iter()
                .enumerate()
                .map(|(i, v)| if mask >> i & 1 == 1 { -v.abs() } else { v.abs() })
                .sum();
            less += u64::from(t <= s + 1e-9);
            greater += u64::from(t >= s - 1e-9);
        }
        let total = (1u64 << n) as f64;
        (less as f64 / total, greater as f64 / total)
    }

    /// By hand: deltas -1, -1, -1, 1 at margin 0: P(sum <= -2) over 16
    /// patterns is 5/16. At margin -0.5 the shifted deltas are -0.5 (x3)
    /// and 1.5, sum 0: with 1.5 kept the other three must sum to -1.5 or
    /// less (all flipped: 1 pattern); with 1.5 flipped they may sum to
    /// anything up to their 1.5 (8 patterns): 9 of 16.
    #[test]
    fn hand_counted_p_values() {
        let d = [-1.0, -1.0, -1.0, 1.0];
        let t = thresholds(&d, 0, 0);
        assert!(t.exact);
        assert_eq!(t.p_less(0.0), 5.0 / 16.0);
        assert_eq!(t.p_less(-0.5), 9.0 / 16.0);
        assert_eq!(brute(&d, -0.5).0, 9.0 / 16.0);
    }

    #[test]
    fn all_zero_deltas_tie_everywhere_at_zero() {
        let t = thresholds(&[0.0; 20], 999, 1);
        assert_eq!(t.p_less(0.0), 1.0);
        assert_eq!(t.p_greater(0.0), 1.0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn thresholds_reproduce_the_enumeration(
            d in proptest::collection::vec(prop_oneof![Just(0.0), Just(-1.0), Just(1.0), Just(0.5), -1.0f64..1.0], 1..11),
            d0 in prop_oneof![Just(0.0), Just(-0.1), Just(0.25), -1.2f64..1.2],
        ) {
            let t = thresholds(&d, 0, 0);
            let (less, greater) = brute(&d, d0);
            // Away from a knife edge the two agree exactly.
            let near = t.upper.iter().chain(&t.lower).any(|&x| (x - d0).abs() < 1e-7);
            if !near {
                prop_assert_eq!(t.p_less(d0), less);
                prop_assert_eq!(t.p_greater(d0), greater);
            }
        }

        /// Lowering one delta never raises a threshold: the p of a drop
        /// and every upper bound are monotone in the loss (patterns fixed
        /// by the seed, per query).
        #[test]
        fn thresholds_fall_with_the_loss(
            d in proptest::collection::vec(-1.0f64..1.0, 17..120),
            which in 0usize..1000,
            by in 0.0f64..1.0,
        ) {
            let j = which % d.len();
            let mut worse = d.clone();
            worse[j] -= by;
            let (a, b) = (thresholds(&d, 499, 9), thresholds(&worse, 499, 9));
            for level in [0.001, 0.01, 0.05, 0.2] {
                prop_assert!(b.upper_bound(level) <= a.upper_bound(level) + 1e-12);
                prop_assert!(b.lower_bound(level) <= a.lower_bound(level) + 1e-12);
            }
            for d0 in [-0.3, -0.1, 0.0, 0.1] {
                prop_assert!(b.p_less(d0) <= a.p_less(d0));
            }
        }

        /// The bound is the test inverted: p < a exactly beyond it.
        #[test]
        fn bounds_invert_the_p_values(
            d in proptest::collection::vec(-1.0f64..1.0, 1..60),
            d0 in -1.0f64..1.0,
        ) {
            let t = thresholds(&d, 999, 4);
            for a in [0.003, 0.05, 0.3] {
                prop_assert_eq!(t.p_less(d0) < a, d0 > t.upper_bound(a));
                prop_assert_eq!(t.p_greater(d0) < a, d0 < t.lower_bound(a));
            }
        }
    }
}
