//! Sample quantiles by linear interpolation between order statistics:
//! Hyndman & Fan (1996) type 7, the default of numpy, R and Excel, so an
//! interval printed by rgate can be checked against a few lines of numpy.

/// Quantile `q` of an ascending slice (type 7: `h = (len - 1) q`, interpolate
/// between `x[floor h]` and `x[floor h + 1]`). NaN when the slice is empty or
/// `q` is not in `[0, 1]`; an unsorted slice gives an unspecified value but no
/// panic.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() || !(0.0..=1.0).contains(&q) {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor();
    let i = lo as usize;
    let frac = h - lo;
    match sorted.get(i + 1) {
        // Skip the interpolation at exact order statistics so that a constant
        // sample returns its value exactly (x + 0 * (x - x) would too, but not
        // when the neighbour is infinite).
        // The clamp keeps rounding from stepping outside the bracketing order
        // statistics, which keeps quantiles monotone in `q`.
        Some(&next) if frac > 0.0 => (sorted[i] + frac * (next - sorted[i])).max(sorted[i]).min(next),
        _ => sorted[i.min(sorted.len() - 1)],
    }
}

/// Sorts in place with a total order, so NaN (which only a caller bug can
/// produce) lands at the end instead of panicking a comparison.
pub(crate) fn sort_total(x: &mut [f64]) {
    x.sort_unstable_by(f64::total_cmp);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn matches_numpy_type7() {
        // numpy.quantile([1, 2, 3, 4], [0, .25, .5, .9, 1]) = [1, 1.75, 2.5, 3.7, 4]
        let x = [1.0, 2.0, 3.0, 4.0];
        let want = [(0.0, 1.0), (0.25, 1.75), (0.5, 2.5), (0.9, 3.7), (1.0, 4.0)];
        for (q, v) in want {
            assert!((quantile_sorted(&x, q) - v).abs() < 1e-12, "q={q}");
        }
    }

    #[test]
    fn degenerate_inputs() {
        assert!(quantile_sorted(&[], 0.5).is_nan());
        assert!(quantile_sorted(&[1.0], f64::NAN).is_nan());
        assert!(quantile_sorted(&[1.0], 1.5).is_nan());
        assert_eq!(quantile_sorted(&[3.0], 0.3), 3.0);
        assert_eq!(quantile_sorted(&[0.1, 0.1, 0.1], 0.37), 0.1);
    }

    proptest! {
        #[test]
        fn within_range_and_monotone(mut x in proptest::collection::vec(-1e3f64..1e3, 1..50),
                                     a in 0.0f64..=1.0, b in 0.0f64..=1.0) {
            sort_total(&mut x);
            let (qa, qb) = (quantile_sorted(&x, a.min(b)), quantile_sorted(&x, a.max(b)));
            prop_assert!(qa <= qb);
            prop_assert!(x[0] <= qa && qb <= x[x.len() - 1]);
        }
    }
}
