//! The skew criterion (SPEC "Statistics, second edition", skewed deltas):
//! when a few queries carry most of a check's change, the report says so
//! and names them ([`crate::compare::skew_of`] applies it to a check).
//!
//! Every test rgate offers reads the mean delta through an approximation
//! that skewness spoils first: the t-test through the normal, the shift
//! bootstrap through a null that is the resampled distribution moved to
//! zero (its error term at order n^-1/2 is proportional to the skewness;
//! Hall 1992, ch. 3), the sign-flip test through symmetry. When 35% of the
//! queries lose a little and 3% gain a lot, the mean of a typical sample
//! lies below the true mean, and each of them false-alarms far above
//! alpha (issue 26 measured 0.265). No test fixes that at n = 100; the
//! report can at least say that the verdict rests on a few queries.
//!
//! The criterion, on the summands of the check's statistic (the per-query
//! deltas; for the macro overall check each weighted by n / (H n_h), so
//! the mean of the summands is the mean of stratum means):
//!
//! 1. **Strongly skewed**, by Cochran's rule for when the mean of a skewed
//!    sample is close enough to normal, n > 25 G1^2 (Cochran 1977, §2.15;
//!    G1 the adjusted Fisher-Pearson skewness, Joanes & Gill 1998): flagged
//!    when n <= 25 G1^2, so |G1| >= 2 at n = 100, >= 4 at n = 400. Unchanged
//!    deltas (all 0) have no skewness and are never flagged.
//! 2. **Carried by a few**: the ceil(5% n) largest deltas on the skewed
//!    side (gains for G1 > 0, losses for G1 < 0) carry more than half of
//!    all the movement on that side (the sum of those deltas' sizes).
//!
//! Both must hold: skewness alone also flags a smooth long tail that no
//! few queries carry; concentration alone flags symmetric churn (three
//! queries up, three down). The false-flag and hit rates of this rule are
//! measured by `cargo run --release --example skew` (see the README).
//!
//! # References
//! - W. G. Cochran (1977). *Sampling Techniques*, 3rd ed. Wiley. §2.15.
//! - D. N. Joanes, C. A. Gill (1998). Comparing measures of sample skewness
//!   and kurtosis. *The Statistician* 47(1), 183-189 (G1).
//! - P. Hall (1992). *The Bootstrap and Edgeworth Expansion*. Springer.

/// "A few" is this share of a scope's queries, rounded up.
pub const FEW_SHARE: f64 = 0.05;

/// Cochran's constant: the mean of n draws is near enough to normal when
/// n > 25 G1^2.
pub const COCHRAN: f64 = 25.0;

/// Which way the few moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Gain,
    Loss,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::Gain => "gain",
            Direction::Loss => "loss",
        }
    }
}

/// What [`detect`] found on a slice of summands: the positions of the
/// carriers, largest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Detected {
    /// G1 of the summands.
    pub skewness: f64,
    pub direction: Direction,
    /// Positions in the slice of the ceil(5% n) largest summands on the
    /// skewed side (fewer when fewer moved that way), largest first, ties
    /// in slice order.
    pub carriers: Vec<usize>,
    /// How many summands moved that way at all.
    pub movers: usize,
    /// The carriers' share of the movement that way, in (0.5, 1].
    pub share: f64,
}

/// G1, the adjusted Fisher-Pearson skewness: sqrt(n (n - 1)) / (n - 2)
/// times m3 / m2^1.5 with central moments m_k = mean((x - mean)^k).
/// `None` below 3 values or without spread.
pub fn skewness(x: &[f64]) -> Option<f64> {
    let n = x.len();
    if n < 3 || x.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let nf = n as f64;
    let mean = x.iter().sum::<f64>() / nf;
    let (mut m2, mut m3) = (0.0, 0.0);
    for v in x {
        let d = v - mean;
        m2 += d * d;
        m3 += d * d * d;
    }
    m2 /= nf;
    m3 /= nf;
    // Spread below rounding noise of the mean is no spread.
    if m2 <= (f64::EPSILON * mean.abs()).powi(2) || m2 == 0.0 {
        return None;
    }
    let g1 = m3 / m2.powf(1.5);
    Some(g1 * (nf * (nf - 1.0)).sqrt() / (nf - 2.0))
}

/// The criterion of the module docs on the summands of a statistic.
pub fn detect(summands: &[f64]) -> Option<Detected> {
    let n = summands.len();
    let g1 = skewness(summands)?;
    if (n as f64) > COCHRAN * g1 * g1 {
        return None;
    }
    let direction = if g1 > 0.0 {
        Direction::Gain
    } else {
        Direction::Loss
    };
    let toward = |v: f64| match direction {
        Direction::Gain => v > 0.0,
        Direction::Loss => v < 0.0,
    };
    let mut side: Vec<usize> = (0..n).filter(|&i| toward(summands[i])).collect();
    let total: f64 = side.iter().map(|&i| summands[i].abs()).sum();
    if side.is_empty() || total <= 0.0 {
        return None;
    }
    // Stable: equal sizes keep the slice's (id) order.
    side.sort_by(|&a, &b| summands[b].abs().total_cmp(&summands[a].abs()));
    let few = ((FEW_SHARE * n as f64).ceil() as usize).max(1);
    let movers = side.len();
    side.truncate(few);
    let carried: f64 = side.iter().map(|&i| summands[i].abs()).sum();
    let share = carried / total;
    (share > 0.5).then_some(Detected {
        skewness: g1,
        direction,
        carriers: side,
        movers,
        share,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// G1 by hand: 0, 0, 0, 3 has mean 0.75, m2 = (3 * 0.5625 + 5.0625) / 4
    /// = 1.6875, m3 = (3 * -0.421875 + 11.390625) / 4 = 2.53125, g1 =
    /// 2.53125 / 1.6875^1.5 = 1.1547, G1 = g1 * sqrt(12) / 2 = 2.0.
    #[test]
    fn skewness_matches_the_hand_computation() {
        let g = skewness(&[0.0, 0.0, 0.0, 3.0]).unwrap();
        assert!((g - 2.0).abs() < 1e-12, "{g}");
        assert_eq!(skewness(&[1.0, 1.0, 1.0]), None);
        assert_eq!(skewness(&[1.0, 2.0]), None);
        assert!(skewness(&[-1.0, 0.0, 1.0]).unwrap().abs() < 1e-15);
    }

    /// The skewed scenario at n = 100: 35 queries lose 0.06, 3 gain
    /// 0.7 (mean 0). G1 = 5.14 (n = 100 <= 25 G1^2 = 661) and the 5 largest
    /// gains are the 3 gainers, who carry all of the gain.
    #[test]
    fn a_few_large_gains_among_many_small_losses_are_flagged() {
        let mut d = vec![0.0; 100];
        for v in d.iter_mut().take(35) {
            *v = -0.06;
        }
        for i in [50, 70, 90] {
            d[i] = 0.7;
        }
        let f = detect(&d).unwrap();
        assert_eq!(f.direction, Direction::Gain);
        assert_eq!(f.carriers, vec![50, 70, 90]);
        assert_eq!(f.movers, 3);
        assert!((f.share - 1.0).abs() < 1e-12);
        assert!(f.skewness > 4.0, "{}", f.skewness);
    }

    /// Not flagged: no change; symmetric churn (3 up, 3 down: G1 = 0); a
    /// drop spread over many queries (40 of 100 lose 0.1: G1 = -0.41); a
    /// skewed sample at a size where Cochran's rule holds (every 20th of
    /// 600 queries gains 1: G1 = 4.14, 25 G1^2 = 428 < 600).
    #[test]
    fn unchanged_symmetric_and_spread_changes_are_not_flagged() {
        assert_eq!(detect(&[0.0; 100]), None);
        let mut churn = vec![0.0; 100];
        churn[..3].copy_from_slice(&[1.0, 1.0, 1.0]);
        churn[3..6].copy_from_slice(&[-1.0, -1.0, -1.0]);
        assert_eq!(detect(&churn), None);
        let spread: Vec<f64> = (0..100).map(|i| if i < 40 { -0.1 } else { 0.0 }).collect();
        assert_eq!(detect(&spread), None);
        let large: Vec<f64> = (0..600).map(|i| if i % 20 == 0 { 1.0 } else { 0.0 }).collect();
        let g = skewness(&large).unwrap();
        assert!(600.0 > COCHRAN * g * g, "{g}");
        assert_eq!(detect(&large), None);
    }

    /// Skewed but not carried by a few: 20 of 100 queries gain, sizes
    /// 0.01..0.20 (G1 = 2.36, so Cochran's rule fails at n = 100), yet the
    /// 5 largest carry 0.9 of 2.1: less than half.
    #[test]
    fn a_long_tail_that_no_few_queries_carry_is_not_flagged() {
        let d: Vec<f64> = (0..100)
            .map(|i| if i < 20 { 0.01 * (i + 1) as f64 } else { 0.0 })
            .collect();
        let g = skewness(&d).unwrap();
        assert!(100.0 <= COCHRAN * g * g, "{g}");
        assert_eq!(detect(&d), None);
    }
}
