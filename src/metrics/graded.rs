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

/// The highest grade gdeval accepts (its `$MAX_JUDGMENT`); a higher grade
/// counts as this one here, where gdeval would refuse the qrels.
pub const ERR_MAX_GRADE: i32 = 4;

/// Expected reciprocal rank (Chapelle et al., CIKM 2009) as gdeval.pl
/// computes it, which is what ir_measures' `ERR@k` runs: the chance that a
/// user stops at rank r is R_r = (2^g - 1) / 2^4, and ERR@k sums
/// R_r / r times the chance of reaching r, over the top k. A rank without a
/// positive grade changes neither the sum nor the chance, so only hits are
/// visited.
pub fn err(r: &Ranking, _: &QueryContext, k: u32) -> f64 {
    let max = f64::from(ERR_MAX_GRADE).exp2();
    let mut score = 0.0;
    let mut decay = 1.0;
    for h in r.chunk_hits().iter().take_while(|h| h.rank <= k) {
        if h.grade <= 0 {
            continue;
        }
        let stop = (f64::from(h.grade.min(ERR_MAX_GRADE)).exp2() - 1.0) / max;
        score += stop * decay / f64::from(h.rank);
        decay *= 1.0 - stop;
    }
    score
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
            zeros: 0,
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
            zeros: 0,
        };
        let r = ranking(&[(2, 1), (3, 1)]);
        let want = (1.0 / 3f64.log2() + 0.5) / (1.0 + 1.0 / 3f64.log2());
        assert!((ndcg(&r, &q, 3) - want).abs() < 1e-15);
    }

    #[test]
    fn err_by_hand() {
        // Grade 2 at rank 1 (R = 3/16), grade 4 at rank 3 (R = 15/16).
        let q = QueryContext {
            num_rel: 2,
            ideal: vec![4.0, 2.0],
            relevance_level: 1,
            zeros: 0,
        };
        let r = ranking(&[(1, 2), (2, 0), (3, 4)]);
        let want = 3.0 / 16.0 + (15.0 / 16.0) * (13.0 / 16.0) / 3.0;
        assert!((err(&r, &q, 10) - want).abs() < 1e-15);
        assert_eq!(err(&r, &q, 1), 3.0 / 16.0);
    }

    #[test]
    fn nothing_positive_scores_zero() {
        let q = QueryContext {
            num_rel: 0,
            ideal: vec![],
            relevance_level: 1,
            zeros: 0,
        };
        assert_eq!(ndcg(&ranking(&[(1, 0)]), &q, 10), 0.0);
    }

    #[test]
    fn cutoff_beyond_the_ideal_length() {
        let q = QueryContext {
            num_rel: 1,
            ideal: vec![1.0],
            relevance_level: 1,
            zeros: 0,
        };
        assert_eq!(ndcg(&ranking(&[(1, 1)]), &q, 1000), 1.0);
    }
}
