//! Family-wise error control across the checks of one retriever (metric x
//! stratum). A gate that runs twenty checks at alpha = 0.05 would otherwise
//! fail a harmless change most of the time.
//!
//! Holm's step-down procedure (Holm 1979) controls the family-wise error rate
//! under any dependence between the tests, like Bonferroni, and is uniformly
//! more powerful, so it is the default; Bonferroni stays for users who need the
//! simpler rule. Both return adjusted p-values (compare each with alpha) rather
//! than reject/accept flags, so a report can show them.

/// Treats a p-value that is NaN or above 1 as 1 (no evidence) and one below 0
/// as 0, so that a broken upstream value can neither panic the sort nor
/// produce an adjusted p-value outside [0, 1].
fn sanitize(p: f64) -> f64 {
    if p.is_nan() {
        1.0
    } else {
        p.clamp(0.0, 1.0)
    }
}

/// Holm-adjusted p-values, in input order: with the m p-values sorted
/// ascending, `adj_(i) = max_{j <= i} min(1, (m - j) p_(j))` (0-based). The
/// running maximum makes the result monotone in the raw p-values, so an
/// adjusted p-value never ranks a check as more significant than one with a
/// smaller raw p. Ties keep their input order (stable sort) and get equal
/// adjusted values.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let clean: Vec<f64> = p.iter().map(|&x| sanitize(x)).collect();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| clean[a].total_cmp(&clean[b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        let stepped = ((m - rank) as f64 * clean[i]).min(1.0);
        running = running.max(stepped);
        adjusted[i] = running;
    }
    adjusted
}

/// Benjamini-Hochberg adjusted p-values (Benjamini & Hochberg 1995), in
/// input order: with the m p-values sorted ascending, `adj_(i) = min_{j >=
/// i} min(1, m p_(j) / (j + 1))` (0-based). Rejecting where `adj < q`
/// controls the false discovery rate at q for independent or positively
/// dependent tests; under the complete null (no true difference anywhere)
/// that is the family-wise error rate, so with nothing better BH says "none"
/// as often as Holm. Otero, Parapar & Barreiro (ECIR 2025) recommend it over
/// Holm when many system variants are compared at once.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let clean: Vec<f64> = p.iter().map(|&x| sanitize(x)).collect();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| clean[a].total_cmp(&clean[b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        let stepped = (m as f64 * clean[i] / (rank + 1) as f64).min(1.0);
        running = running.min(stepped);
        adjusted[i] = running;
    }
    adjusted
}

/// Bonferroni-adjusted p-values: `min(1, m p)`, in input order.
pub fn bonferroni(p: &[f64]) -> Vec<f64> {
    let m = p.len() as f64;
    p.iter().map(|&x| (m * sanitize(x)).min(1.0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn holm_textbook_example() {
        let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
        let want = [0.03, 0.06, 0.06, 0.02];
        for (a, w) in adj.iter().zip(want) {
            assert!((a - w).abs() < 1e-12, "{adj:?}");
        }
    }

    /// By hand: p = 0.01, 0.04, 0.03, 0.005 sorted 0.005, 0.01, 0.03, 0.04;
    /// m p / rank = 0.02, 0.02, 0.04, 0.04; the running minimum from the
    /// top keeps them. With 0.05 added (m = 5): 0.025, 0.025, 0.05, 0.05,
    /// 0.05, and a large p at the top (0.9) stays 0.9.
    #[test]
    fn benjamini_hochberg_by_hand() {
        let close = |a: &[f64], w: &[f64]| a.iter().zip(w).all(|(x, y)| (x - y).abs() < 1e-12);
        let adj = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.005]);
        assert!(close(&adj, &[0.02, 0.04, 0.04, 0.02]), "{adj:?}");
        let adj = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.005, 0.05]);
        assert!(close(&adj, &[0.025, 0.05, 0.05, 0.025, 0.05]), "{adj:?}");
        // Sorted 0.02, 0.03, 0.9: 3 * 0.02 / 1 = 0.06, 3 * 0.03 / 2 = 0.045,
        // 0.9; the running minimum lowers the first to 0.045.
        let adj = benjamini_hochberg(&[0.9, 0.02, 0.03]);
        assert!(close(&adj, &[0.9, 0.045, 0.045]), "{adj:?}");
        assert!(benjamini_hochberg(&[]).is_empty());
        assert_eq!(benjamini_hochberg(&[f64::NAN, 0.01]), vec![1.0, 0.02]);
    }

    #[test]
    fn edge_cases() {
        assert!(holm(&[]).is_empty());
        assert!(bonferroni(&[]).is_empty());
        assert_eq!(holm(&[0.2]), vec![0.2]);
        assert_eq!(holm(&[f64::NAN, 0.01]), vec![1.0, 0.02]);
        assert_eq!(holm(&[-0.5, 2.0]), vec![0.0, 1.0]);
        assert_eq!(bonferroni(&[0.01, 0.5, f64::NAN]), vec![0.03, 1.0, 1.0]);
        assert_eq!(holm(&[0.01, 0.01]), vec![0.02, 0.02]);
    }

    proptest! {
        #[test]
        fn holm_bounds_and_monotone(p in proptest::collection::vec(0.0f64..=1.0, 0..30)) {
            let adj = holm(&p);
            let bon = bonferroni(&p);
            let bh = benjamini_hochberg(&p);
            prop_assert_eq!(adj.len(), p.len());
            for i in 0..p.len() {
                prop_assert!(bh[i] >= p[i] && bh[i] <= adj[i] + 1e-15);
                prop_assert!(adj[i] >= p[i]);
                prop_assert!(adj[i] <= 1.0);
                prop_assert!(adj[i] <= bon[i]);
                for j in 0..p.len() {
                    if p[i] <= p[j] {
                        prop_assert!(adj[i] <= adj[j]);
                    }
                }
            }
        }
    }
}
