//! Metrics that depend on the positions of relevant documents: reciprocal
//! rank, average precision and R-precision (trec_eval's `recip_rank`, `map`,
//! `map_cut.k`, `Rprec`).
//!
//! With span labels, reciprocal rank and the terms of average precision sit
//! at the ranks where labels are credited ([`Ranking::hits`]); the
//! precision inside average precision, and R-precision, count relevant
//! chunks ([`Ranking::chunk_hits`]), as precision@k does.

use crate::judge::{QueryContext, Ranking};

/// 1 / rank of the first relevant document; 0 if it lies beyond `k` or
/// nothing relevant was retrieved.
pub fn reciprocal_rank(r: &Ranking, q: &QueryContext, k: u32) -> f64 {
    match r.hits.iter().find(|h| q.relevant(h.grade)) {
        Some(h) if h.rank <= k => 1.0 / f64::from(h.rank),
        _ => 0.0,
    }
}

/// Sum of precision at each relevant rank within `k`, over all relevant
/// (retrieved or not). Accumulated rank by rank as trec_eval's `m_map.c`
/// does, so the rounding matches.
pub fn average_precision(r: &Ranking, q: &QueryContext, k: u32) -> f64 {
    if q.num_rel == 0 {
        return 0.0;
    }
    if let Some(chunks) = r.chunks.as_deref() {
        return span_average_precision(r, chunks, q, k);
    }
    let mut rel_so_far = 0u32;
    let mut sum = 0.0;
    for h in r.hits.iter().take_while(|h| h.rank <= k) {
        if q.relevant(h.grade) {
            rel_so_far += 1;
            sum += f64::from(rel_so_far) / f64::from(h.rank);
        }
    }
    if rel_so_far == 0 {
        return 0.0;
    }
    sum / f64::from(q.num_rel)
}

/// Average precision with span labels: each relevant label credited within
/// `k` adds precision@r (relevant chunks in the top r, over r) at the rank r
/// where it was credited. Each term is at most 1 and there are at most
/// `num_rel` of them, so the value stays in [0, 1] even when one chunk
/// credits several spans; without spans it is the sum above, term by term.
fn span_average_precision(r: &Ranking, chunks: &[crate::judge::Hit], q: &QueryContext, k: u32) -> f64 {
    let mut rel_chunks = 0u32;
    let mut next = 0usize;
    let mut any = false;
    let mut sum = 0.0;
    for h in r.hits.iter().take_while(|h| h.rank <= k) {
        if !q.relevant(h.grade) {
            continue;
        }
        while next < chunks.len() && chunks[next].rank <= h.rank {
            if q.relevant(chunks[next].grade) {
                rel_chunks += 1;
            }
            next += 1;
        }
        any = true;
        sum += f64::from(rel_chunks) / f64::from(h.rank);
    }
    if !any {
        return 0.0;
    }
    sum / f64::from(q.num_rel)
}

/// Precision at rank R, R = number of relevant labels.
pub fn r_precision(r: &Ranking, q: &QueryContext) -> f64 {
    if q.num_rel == 0 {
        return 0.0;
    }
    let found = r
        .chunk_hits()
        .iter()
        .take_while(|h| h.rank <= q.num_rel)
        .filter(|h| q.relevant(h.grade))
        .count() as u32;
    f64::from(found) / f64::from(q.num_rel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::Hit;

    fn ranking(hits: &[(u32, i32)]) -> Ranking {
        Ranking {
            num_ret: 100,
            hits: hits.iter().map(|&(rank, grade)| Hit { rank, grade }).collect(),
            chunks: None,
        }
    }

    fn ctx(num_rel: u32) -> QueryContext {
        QueryContext {
            num_rel,
            ideal: vec![1.0; num_rel as usize],
            relevance_level: 1,
            zeros: 0,
        }
    }

    #[test]
    fn reciprocal_rank_skips_non_relevant_labels() {
        let r = ranking(&[(1, 0), (3, 1)]);
        assert_eq!(reciprocal_rank(&r, &ctx(1), u32::MAX), 1.0 / 3.0);
        assert_eq!(reciprocal_rank(&r, &ctx(1), 2), 0.0);
        assert_eq!(reciprocal_rank(&Ranking::default(), &ctx(1), 10), 0.0);
    }

    #[test]
    fn average_precision_by_hand() {
        // relevant at 1, 3, 6; 4 relevant in all: (1/1 + 2/3 + 3/6) / 4
        let r = ranking(&[(1, 1), (2, 0), (3, 2), (6, 1)]);
        let want = (1.0 + 2.0 / 3.0 + 0.5) / 4.0;
        assert!((average_precision(&r, &ctx(4), u32::MAX) - want).abs() < 1e-15);
        // cut at 5: (1 + 2/3) / 4
        let want5 = (1.0 + 2.0 / 3.0) / 4.0;
        assert!((average_precision(&r, &ctx(4), 5) - want5).abs() < 1e-15);
        assert_eq!(average_precision(&r, &ctx(0), 5), 0.0);
    }

    #[test]
    fn r_precision_by_hand() {
        let r = ranking(&[(1, 1), (3, 1), (4, 1)]);
        // R = 3: ranks 1..3 hold two relevant.
        assert_eq!(r_precision(&r, &ctx(3)), 2.0 / 3.0);
        assert_eq!(r_precision(&r, &ctx(0)), 0.0);
    }
}
