//! Metrics that count labeled documents in the top k: recall, precision,
//! hit rate (trec_eval's `recall.k`, `P.k`, `success.k`) and judged@k
//! (ir_measures' `Judged@k`).
//!
//! Recall and hit rate count credited labels ([`Ranking::hits`]: a span
//! once covered); precision and judged@k count retrieved chunks
//! ([`Ranking::chunk_hits`]). The two are the same list unless the query
//! has span labels.

use crate::judge::{Hit, QueryContext, Ranking};

fn relevant_within(hits: &[Hit], q: &QueryContext, k: u32) -> u32 {
    hits.iter()
        .take_while(|h| h.rank <= k)
        .filter(|h| q.relevant(h.grade))
        .count() as u32
}

/// Relevant in the top k over all relevant; 0 when nothing is relevant
/// (trec_eval leaves the value at 0 then).
pub fn recall(r: &Ranking, q: &QueryContext, k: u32) -> f64 {
    if q.num_rel == 0 {
        return 0.0;
    }
    f64::from(relevant_within(&r.hits, q, k)) / f64::from(q.num_rel)
}

/// Relevant in the top k over k, even when fewer than k were retrieved
/// (trec_eval's `P.k`: a short ranking is not rewarded).
pub fn precision(r: &Ranking, q: &QueryContext, k: u32) -> f64 {
    f64::from(relevant_within(r.chunk_hits(), q, k)) / f64::from(k)
}

pub fn hit_rate(r: &Ranking, q: &QueryContext, k: u32) -> f64 {
    if r.hits
        .iter()
        .take_while(|h| h.rank <= k)
        .any(|h| q.relevant(h.grade))
    {
        1.0
    } else {
        0.0
    }
}

/// Relevant in the top k over the most that could be there, min(k, R)
/// (trec_eval's `relative_P.k`, `m_rel_P.c`); 0 when nothing is relevant.
pub fn relative_precision(r: &Ranking, q: &QueryContext, k: u32) -> f64 {
    if q.num_rel == 0 {
        return 0.0;
    }
    f64::from(relevant_within(r.chunk_hits(), q, k)) / f64::from(k.min(q.num_rel))
}

/// Share of the retrieved top k that carry a label of grade 0 or more.
/// The denominator is what was retrieved within k (not k itself), as
/// ir_measures' `Judged@k` computes it: the question is how much of what
/// the retriever *returned* the gold set covers, and an empty slot is not an
/// unjudged result. No results: 0. Unlike ir_measures, a negative grade
/// (pooled, not judged) does not count as judged, per trec_eval's meaning.
pub fn judged(r: &Ranking, k: u32) -> f64 {
    let shown = r.num_ret.min(k);
    if shown == 0 {
        return 0.0;
    }
    let judged = r
        .chunk_hits()
        .iter()
        .take_while(|h| h.rank <= k)
        .filter(|h| h.grade >= 0)
        .count() as u32;
    f64::from(judged) / f64::from(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(num_rel: u32) -> QueryContext {
        QueryContext {
            num_rel,
            ideal: vec![1.0; num_rel as usize],
            relevance_level: 1,
            zeros: 0,
        }
    }

    fn ranking(num_ret: u32, hits: &[(u32, i32)]) -> Ranking {
        Ranking {
            num_ret,
            hits: hits.iter().map(|&(rank, grade)| Hit { rank, grade }).collect(),
            chunks: None,
        }
    }

    #[test]
    fn counts_in_the_top_k() {
        // ranks 1 (rel), 3 (grade 0), 4 (rel); 3 relevant in the gold set.
        let r = ranking(10, &[(1, 1), (3, 0), (4, 2)]);
        let q = ctx(3);
        assert_eq!(recall(&r, &q, 1), 1.0 / 3.0);
        assert_eq!(recall(&r, &q, 3), 1.0 / 3.0);
        assert_eq!(recall(&r, &q, 4), 2.0 / 3.0);
        assert_eq!(precision(&r, &q, 4), 0.5);
        assert_eq!(hit_rate(&r, &q, 1), 1.0);
        assert_eq!(judged(&r, 4), 0.75);
    }

    #[test]
    fn cutoff_beyond_the_ranking() {
        let r = ranking(2, &[(2, 1)]);
        let q = ctx(1);
        assert_eq!(precision(&r, &q, 10), 0.1);
        assert_eq!(recall(&r, &q, 10), 1.0);
        assert_eq!(judged(&r, 10), 0.5);
    }

    #[test]
    fn no_relevant_label_scores_zero() {
        let r = ranking(5, &[(1, 0)]);
        let q = ctx(0);
        assert_eq!(recall(&r, &q, 5), 0.0);
        assert_eq!(hit_rate(&r, &q, 5), 0.0);
        assert_eq!(judged(&r, 5), 0.2);
    }

    #[test]
    fn negative_grades_are_not_judged() {
        let r = ranking(2, &[(1, -1), (2, 0)]);
        assert_eq!(judged(&r, 2), 0.5);
        assert_eq!(judged(&Ranking::default(), 10), 0.0);
    }

    #[test]
    fn relevance_level_two() {
        let r = ranking(3, &[(1, 1), (2, 2)]);
        let q = QueryContext {
            num_rel: 1,
            ideal: vec![2.0, 1.0],
            relevance_level: 2,
            zeros: 0,
        };
        assert_eq!(hit_rate(&r, &q, 1), 0.0);
        assert_eq!(recall(&r, &q, 2), 1.0);
    }
}
