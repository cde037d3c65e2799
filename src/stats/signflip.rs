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

/// Sorted positions per word of a pattern's flip bits.
const WORD: usize = 64;

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

/// The deltas in ascending order, with what a pattern's scan reads.
///
/// A pattern arrives as its flip bits in *sorted* order (bit `r` of word
/// `w`: the query at sorted position `64 w + r`). With `C_j` and `SF_j` the
/// count and sum of the flipped among the first `j` positions, `N` and `S`
/// over all, and `P_j` the sum of the first `j` values,
///
/// `h(u_j) = u_j (j - 2 C_j + N) - P_j + 2 SF_j - S`
///
/// (unflipped below minus flipped above, each weighted by its distance to
/// `u_j`), and between two breaks `h` rises with slope `j - 2 C_j + N`.
/// The sums of flipped values come from one table per four positions
/// (the sum of each of the 16 subsets), so a word of 64 positions costs 16
/// look-ups, and the scan skips whole words until `h` at a word's end
/// reaches the target, then walks that word position by position.
struct Sorted {
    values: Vec<f64>,
    /// Canonical index of the query at each sorted position.
    queries: Vec<u32>,
    /// `P_j`, `j = 0..=n`.
    prefix: Vec<f64>,
    /// Per four positions: the sum of the values of each subset.
    nibbles: Vec<[f64; 16]>,
    /// Half the tie slack, on the scale of `g_e / 2`.
    sigma: f64,
}

/// Where a scan stands: `j` positions passed, `c` of them flipped, with
/// flipped values summing to `sf`.
#[derive(Clone, Copy)]
struct Cursor {
    j: usize,
    c: u32,
    sf: f64,
}

impl Sorted {
    fn new(deltas: &[f64]) -> Sorted {
        let n = deltas.len();
        let mut queries: Vec<u32> = (0..n as u32).collect();
        queries.sort_by(|&a, &b| deltas[a as usize].total_cmp(&deltas[b as usize]).then(a.cmp(&b)));
        let values: Vec<f64> = queries.iter().map(|&q| deltas[q as usize]).collect();
        let mut prefix = Vec::with_capacity(n + 1);
        let mut run = 0.0;
        prefix.push(0.0);
        for &v in &values {
            run += v;
            prefix.push(run);
        }
        let words = n.div_ceil(WORD).max(1);
        let mut nibbles = vec![[0.0f64; 16]; words * (WORD / 4)];
        for (k, table) in nibbles.iter_mut().enumerate() {
            for (subset, slot) in table.iter_mut().enumerate() {
                let mut s = 0.0;
                for b in 0..4 {
                    if subset >> b & 1 == 1 {
                        s += values.get(4 * k + b).copied().unwrap_or(0.0);
                    }
                }
                *slot = s;
            }
        }
        // Sums of values equal on paper come out a few ulps apart in
        // another order: a slack of 1e-12 of the largest sum a side can
        // hold keeps them tied, as the other tests' TIE_SLACK does.
        let scale: f64 = deltas.iter().map(|d| d.abs()).sum::<f64>().max(1.0);
        Sorted {
            values,
            queries,
            prefix,
            nibbles,
            sigma: 0.5 * TIE_SLACK * scale,
        }
    }

    /// `(count, sum)` of the flipped among the 64 positions of word `w`.
    fn word_sums(&self, w: usize, word: u64) -> (u32, f64) {
        let tables = &self.nibbles[w * (WORD / 4)..(w + 1) * (WORD / 4)];
        let mut s = 0.0;
        for (k, t) in tables.iter().enumerate() {
            s += t[((word >> (4 * k)) & 15) as usize];
        }
        (word.count_ones(), s)
    }

    /// `(theta, phi)` of the pattern whose flips in sorted order are `bits`;
    /// `sums` is scratch space, one slot per word.
    fn thresholds(&self, bits: &[u64], sums: &mut [(u32, f64)]) -> (f64, f64) {
        let (mut nf, mut sft) = (0u32, 0.0f64);
        for (w, (&word, slot)) in bits.iter().zip(sums.iter_mut()).enumerate() {
            *slot = self.word_sums(w, word);
            nf += slot.0;
            sft += slot.1;
        }
        let sigma = self.sigma;
        let start = Cursor { j: 0, c: 0, sf: 0.0 };
        let (phi, at) = self.find(bits, sums, nf, sft, start, -sigma, false);
        let (theta, _) = self.find(bits, sums, nf, sft, at, sigma, true);
        (theta, phi)
    }

    /// `h(u_j)` at a cursor (`j < n`).
    fn h(&self, at: Cursor, nf: u32, sft: f64) -> f64 {
        let j = at.j;
        let coef = j as f64 - 2.0 * f64::from(at.c) + f64::from(nf);
        self.values[j] * coef - self.prefix[j] + 2.0 * at.sf - sft
    }

    /// The first d0 at or after the cursor's break where `h` reaches
    /// `target` (`> target` when `strict`, else `>=`), and the cursor at
    /// the break where it did.
    #[allow(clippy::too_many_arguments)]
    fn find(
        &self,
        bits: &[u64],
        sums: &[(u32, f64)],
        nf: u32,
        sft: f64,
        mut at: Cursor,
        target: f64,
        strict: bool,
    ) -> (f64, Cursor) {
        let n = self.values.len();
        let reached = |h: f64| if strict { h > target } else { h >= target };
        while at.j < n {
            // Whole words first: h is non-decreasing, so a word whose
            // end has not reached the target holds no crossing.
            if at.j.is_multiple_of(WORD) && at.j + WORD < n {
                let (c, s) = sums[at.j / WORD];
                let end = Cursor {
                    j: at.j + WORD,
                    c: at.c + c,
                    sf: at.sf + s,
                };
                if !reached(self.h(end, nf, sft)) {
                    at = end;
                    continue;
                }
            }
            let h = self.h(at, nf, sft);
            if reached(h) {
                return (self.interpolate(at, h, nf, target), at);
            }
            let flipped = (bits[at.j / WORD] >> (at.j % WORD)) & 1 == 1;
            if flipped {
                at.c += 1;
                at.sf += self.values[at.j];
            }
            at.j += 1;
        }
        // Right of the largest delta h rises with the unflipped count:
        // h(d0) = (n - N) d0 - (P_n - S).
        let unflipped = n as f64 - f64::from(nf);
        let d0 = if unflipped > 0.0 {
            ((target + self.prefix[n] - sft) / unflipped).max(self.values[n - 1])
        } else {
            f64::INFINITY
        };
        (d0, at)
    }

    /// The point on the piece left of break `at.j` where `h` (equal to
    /// `h_at` at the break) equals `target`, kept inside the piece.
    fn interpolate(&self, at: Cursor, h_at: f64, nf: u32, target: f64) -> f64 {
        let u = self.values[at.j];
        if at.j == 0 {
            // Left of the smallest delta h rises with the flipped count;
            // with none flipped it is 0 there.
            return if nf > 0 {
                u - (h_at - target) / f64::from(nf)
            } else {
                f64::NEG_INFINITY
            };
        }
        let below = self.values[at.j - 1];
        let slope = at.j as f64 - 2.0 * f64::from(at.c) + f64::from(nf);
        if slope <= 0.0 || u <= below {
            return below;
        }
        (u - (h_at - target) / slope).clamp(below, u)
    }
}

/// Transposes a 64 x 64 bit matrix in place: afterwards bit `c` of row `r`
/// is what bit `r` of row `c` was (Warren, *Hacker's Delight*, 2nd ed.,
/// §7-3: swap the off-diagonal blocks of halves, then quarters, ...).
fn transpose64(a: &mut [u64; 64]) {
    let mut j = 32;
    let mut m: u64 = 0x0000_0000_FFFF_FFFF;
    while j != 0 {
        let mut k = 0;
        while k < 64 {
            // Rows k and k + j: the high j bits of each 2j-bit field of
            // row k trade places with the low j bits of row k + j.
            let t = ((a[k] >> j) ^ a[k + j]) & m;
            a[k] ^= t << j;
            a[k + j] ^= t;
            k = (k + j + 1) & !j;
        }
        j >>= 1;
        m ^= m << j;
    }
}

/// The thresholds of the sign-flip test of `deltas` (given in the caller's
/// canonical query order, which fixes which random sign each query gets):
/// every pattern for up to [`EXACT_N`] deltas, `resamples` random ones
/// from `seed` beyond. Finite deltas only (the caller checks).
///
/// Random patterns come 64 at a time: block `i` of [`BLOCK_SIZE`]
/// patterns reads its own stream ([`block_rng`]), and each run of 64
/// patterns in it draws one word per query in canonical order, bit `k`
/// being that query's sign in the run's pattern `k`. A query keeps its
/// signs whatever the other deltas are (the monotonicity below relies on
/// it); gathering the words in sorted order and transposing 64 x 64 bit
/// blocks gives each pattern its flips in sorted order, one word per 64
/// positions, which is what [`Sorted`]'s scan reads.
pub fn thresholds(deltas: &[f64], resamples: u32, seed: u64) -> Thresholds {
    let n = deltas.len();
    let sorted = Sorted::new(deltas);
    let words = n.div_ceil(WORD).max(1);
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
            let len = (count - start).min(u64::from(BLOCK_SIZE)) as usize;
            let mut rng = block_rng(seed, i);
            let mut sums = vec![(0u32, 0.0f64); words];
            let (mut up, mut lo) = (Vec::with_capacity(len), Vec::with_capacity(len));
            if exact {
                let mut bits = [0u64; 1];
                for k in 0..len as u64 {
                    let pattern = start + k;
                    bits[0] = sorted
                        .queries
                        .iter()
                        .enumerate()
                        .fold(0, |acc, (r, &q)| acc | (((pattern >> q) & 1) << r));
                    let (theta, phi) = sorted.thresholds(&bits, &mut sums);
                    up.push(theta);
                    lo.push(phi);
                }
                return (up, lo);
            }
            let mut canonical = vec![0u64; n];
            // Per pattern of the run, its flips in sorted order.
            let mut runs = vec![[0u64; 64]; words];
            let mut bits = vec![0u64; words];
            let mut done = 0;
            while done < len {
                let take = (len - done).min(64);
                for w in canonical.iter_mut() {
                    *w = rng.next_u64();
                }
                for (w, block) in runs.iter_mut().enumerate() {
                    for (r, row) in block.iter_mut().enumerate() {
                        *row = sorted
                            .queries
                            .get(w * WORD + r)
                            .map_or(0, |&q| canonical[q as usize]);
                    }
                    transpose64(block);
                }
                for k in 0..take {
                    for (b, block) in bits.iter_mut().zip(&runs) {
                        *b = block[k];
                    }
                    let (theta, phi) = sorted.thresholds(&bits, &mut sums);
                    up.push(theta);
                    lo.push(phi);
                }
                done += take;
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
    use rand::RngCore;

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

    /// `(theta, phi)` of one pattern straight from the definition: `h` at
    /// every distinct delta, the first break past each target, and the
    /// line between it and the break before (the ends by their slopes).
    fn reference(d: &[f64], flipped: &[bool], sigma: f64) -> (f64, f64) {
        let h = |d0: f64| -> f64 {
            d.iter()
                .zip(flipped)
                .map(|(&v, &f)| if f { -(v - d0).max(0.0) } else { (d0 - v).max(0.0) })
                .sum()
        };
        let mut u: Vec<f64> = d.to_vec();
        u.sort_by(f64::total_cmp);
        u.dedup();
        let n_f = flipped.iter().filter(|&&f| f).count() as f64;
        let unflipped = d.len() as f64 - n_f;
        let first = |target: f64, strict: bool| -> f64 {
            let reached = |x: f64| if strict { x > target } else { x >= target };
            for (k, &v) in u.iter().enumerate() {
                let hv = h(v);
                if reached(hv) {
                    if k == 0 {
                        return if n_f > 0.0 {
                            v - (hv - target) / n_f
                        } else {
                            f64::NEG_INFINITY
                        };
                    }
                    let (u0, h0) = (u[k - 1], h(u[k - 1]));
                    return (u0 + (v - u0) * (target - h0) / (hv - h0)).clamp(u0, v);
                }
            }
            let last = u[u.len() - 1];
            if unflipped > 0.0 {
                last + (target - h(last)) / unflipped
            } else {
                f64::INFINITY
            }
        };
        (first(sigma, true), first(-sigma, false))
    }

    /// Transposing swaps rows and columns: checked bit by bit against the
    /// definition on a matrix of distinct rows.
    #[test]
    fn transpose_swaps_rows_and_columns() {
        let mut a = [0u64; 64];
        for (r, row) in a.iter_mut().enumerate() {
            *row = (r as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (r as u64) << 7;
        }
        let before = a;
        transpose64(&mut a);
        for (r, row) in a.iter().enumerate() {
            for (c, col) in before.iter().enumerate() {
                assert_eq!((row >> c) & 1, (col >> r) & 1, "row {r} column {c}");
            }
        }
    }

    /// The Monte Carlo thresholds are those of the patterns the documented
    /// layout draws (block streams, 64 patterns per run, one word per query
    /// in canonical order), each found by the definition: the word-skipping
    /// scan, the subset tables and the transposition change nothing.
    #[test]
    fn monte_carlo_thresholds_are_those_of_the_documented_patterns() {
        let n = 150;
        let d: Vec<f64> = (0..n)
            .map(|i| match i % 5 {
                0 => 0.0,
                1 => -0.25,
                _ => (((i * 37) % 101) as f64 / 50.0 - 1.0) * 0.7,
            })
            .collect();
        let b = 300u32;
        let seed = 11;
        let t = thresholds(&d, b, seed);
        let sigma = 0.5 * TIE_SLACK * d.iter().map(|v| v.abs()).sum::<f64>().max(1.0);
        let (mut up, mut lo) = (Vec::new(), Vec::new());
        for block in 0..u64::from(b.div_ceil(BLOCK_SIZE)) {
            let mut rng = block_rng(seed, block);
            let len = (u64::from(b) - block * u64::from(BLOCK_SIZE)).min(u64::from(BLOCK_SIZE));
            let mut done = 0;
            while done < len {
                let words: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
                for k in 0..(len - done).min(64) {
                    let flipped: Vec<bool> = words.iter().map(|w| (w >> k) & 1 == 1).collect();
                    let (theta, phi) = reference(&d, &flipped, sigma);
                    up.push(theta);
                    lo.push(phi);
                }
                done += 64;
            }
        }
        crate::stats::quantile::sort_total(&mut up);
        crate::stats::quantile::sort_total(&mut lo);
        assert_eq!(up.len(), t.upper.len());
        for (a, b) in up.iter().zip(&t.upper).chain(lo.iter().zip(&t.lower)) {
            assert!((a - b).abs() <= 1e-9, "{a} {b}");
        }
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

        /// One pattern's scan equals the definition, ties and zeros
        /// included, however long the scope (whole words skipped or not).
        #[test]
        fn scan_matches_the_definition(
            d in proptest::collection::vec(prop_oneof![Just(0.0), Just(-0.5), Just(1.0), -1.0f64..1.0], 1..300),
            seed: u64,
        ) {
            let sorted = Sorted::new(&d);
            let mut rng = block_rng(seed, 0);
            let flipped: Vec<bool> = d.iter().map(|_| rng.next_u32() & 1 == 1).collect();
            let words = d.len().div_ceil(WORD);
            let mut bits = vec![0u64; words];
            for (r, &q) in sorted.queries.iter().enumerate() {
                bits[r / WORD] |= u64::from(flipped[q as usize]) << (r % WORD);
            }
            let mut sums = vec![(0, 0.0); words];
            let (theta, phi) = sorted.thresholds(&bits, &mut sums);
            let (rt, rp) = reference(&d, &flipped, sorted.sigma);
            let close = |a: f64, b: f64| a == b || (a - b).abs() <= 1e-9;
            prop_assert!(close(theta, rt), "theta {} reference {}", theta, rt);
            prop_assert!(close(phi, rp), "phi {} reference {}", phi, rp);
        }

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
