//! nDCG (Järvelin & Kekäläinen 2002) as trec_eval 9 computes `ndcg` and
//! `ndcg_cut.k`: gain = the grade itself, discount log2(rank + 1), ideal =
//! every positive grade of the query sorted descending, whatever the
//! relevance level. Sums run rank by rank in the same order as trec_eval's,
//! so the printed decimals agree.
//!
//! With span labels a gain sits where its span is credited. The ideal
//! ranking places one label per rank, but one chunk can credit two spans
//! at once; so the j-th credited span of positive grade counts at rank
//! max(r, j) (spans of one rank highest grade first), and a cutoff k keeps
//! those whose counted rank is within k. Since max(r, j) >= j, no ranking
//! beats the ideal (nDCG <= 1); without spans every j-th hit already sits
//! at rank >= j, so nothing changes.

use crate::judge::{QueryContext, Ranking};

pub fn ndcg(r: &Ranking, q: &QueryContext, k: u32) -> f64 {
    let mut dcg = 0.0;
    if r.chunks.is_some() {
        let mut j = 0u32;
        for h in r.hits.iter().take_while(|h| h.rank <= k) {
            if h.grade > 0 {
                j += 1;
                let at = h.rank.max(j);
                if at <= k {
                    dcg += f64::from(h.grade) / f64::from(at.saturating_add(1)).log2();
                }
            }
        }
    } else {
        for h in r.hits.iter().take_while(|h| h.rank <= k) {
            if h.grade > 0 {
                dcg += f64::from(h.grade) / f64::from(h.rank + 1).log2();
            }
        }
    }
    let mut ideal = 0.0;
    for (i, g) in q.ideal.iter().enumerate().take(k.min(u32::MAX - 1) as usize) {
        ideal += g / ((i + 2) as f64).log2();
    }
    if ideal > 0.0 {
        dcg / ideal
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::Hit;

    fn ranking(hits: &[(u32, i32)]) -> Ranking {
        Ranking {
            num_ret: 10,
            hits: hits.iter().map(|&(rank, grade)| Hit { rank, grade }).collect(),
            chunks: None,
        }
    }

    #[test]
    fn graded_by_hand() {
        // grades 2 at rank 2, 1 at rank 1; gold grades {2, 1, 0}.
        let q = QueryContext {
            num_rel: 2,
            ideal: vec![2.0, 1.0],
            relevance_level: 1,
        };
        let r = ranking(&[(1, 1), (2, 2), (3, 0)]);
        let dcg = 1.0 + 2.0 / 3f64.log2();
        let idcg = 2.0 + 1.0 / 3f64.log2();
        assert!((ndcg(&r, &q, u32::MAX) - dcg / idcg).abs() < 1e-15);
        // cut at 1: dcg 1, ideal 2
        assert!((ndcg(&r, &q, 1) - 0.5).abs() < 1e-15);
    }

    #[test]
    fn seed_query_three() {
        // relevant c3, c9 (grade 1) at ranks 3 and 2.
        let q = QueryContext {
            num_rel: 2,
            ideal: vec![1.0, 1.0],
            relevance_level: 1,
        };
        let r = ranking(&[(2, 1), (3, 1)]);
        let want = (1.0 / 3f64.log2() + 0.5) / (1.0 + 1.0 / 3f64.log2());
        assert!((ndcg(&r, &q, 3) - want).abs() < 1e-15);
    }

    #[test]
    fn nothing_positive_scores_zero() {
        let q = QueryContext {
            num_rel: 0,
            ideal: vec![],
            relevance_level: 1,
        };
        assert_eq!(ndcg(&ranking(&[(1, 0)]), &q, 10), 0.0);
    }

    #[test]
    fn cutoff_beyond_the_ideal_length() {
        let q = QueryContext {
            num_rel: 1,
            ideal: vec![1.0],
            relevance_level: 1,
        };
        assert_eq!(ndcg(&ranking(&[(1, 1)]), &q, 1000), 1.0);
    }
}
