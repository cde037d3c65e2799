//! Measures for gold sets whose judgments are incomplete by design (built
//! by pooling): bpref (Buckley & Voorhees, SIGIR 2004; trec_eval's
//! `m_bpref.c`, and `m_gm_bpref.c` for its geometric mean), infAP (Yilmaz &
//! Aslam, CIKM 2006; `m_infap.c`) and the share unjudged in the top k
//! (`m_unjudged.c`'s `unj`).
//!
//! A retrieved document is judged relevant (grade at least the relevance
//! level), judged non-relevant (a grade from 0 below the level), pooled but
//! not judged (a negative grade: trec_eval's `RELVALUE_UNJUDGED`), or not in
//! the gold set at all (`RELVALUE_NONPOOL`). Only labeled documents are in a
//! [`Ranking`]'s hits, and the last kind is every other rank.

use super::params::Params;
use crate::judge::{QueryContext, Ranking};

/// For each judged relevant document retrieved, the share of the first R
/// judged non-relevant documents (R = relevant count) ranked below it, where
/// only judged documents count; summed and divided by R.
pub fn bpref(r: &Ranking, q: &QueryContext, _: u32, _: &Params) -> f64 {
    let num_nonrel = q.num_nonrel();
    let mut nonrel_so_far = 0u32;
    let mut sum = 0.0;
    for h in r.chunk_hits() {
        if h.grade < 0 {
            continue;
        }
        if !q.relevant(h.grade) {
            nonrel_so_far += 1;
        } else if nonrel_so_far > 0 {
            sum += 1.0 - f64::from(nonrel_so_far.min(q.num_rel)) / f64::from(num_nonrel.min(q.num_rel));
        } else {
            sum += 1.0;
        }
    }
    if q.num_rel > 0 {
        sum / f64::from(q.num_rel)
    } else {
        sum
    }
}

/// infAP: at each judged relevant document at 0-based position j > 0,
/// 1/(j+1) + j/(j+1) times the share of the ranks above it that are in the
/// pool times the (smoothed) precision among the judged ones above it;
/// 1 at j = 0; summed and divided by the relevant count. trec_eval's
/// epsilon, 0.00001, smooths the precision.
pub fn inf_ap(r: &Ranking, q: &QueryContext, _: u32, _: &Params) -> f64 {
    const EPS: f64 = 0.00001;
    let (mut rel, mut nonrel, mut unjudged) = (0u32, 0u32, 0u32);
    let mut sum = 0.0;
    for h in r.chunk_hits() {
        if h.grade < 0 {
            unjudged += 1;
            continue;
        }
        if !q.relevant(h.grade) {
            nonrel += 1;
            continue;
        }
        rel += 1;
        let j = h.rank - 1;
        if j == 0 {
            sum += 1.0;
        } else {
            let fj = f64::from(j);
            let above = f64::from(rel - 1 + nonrel + unjudged);
            let prec = (f64::from(rel - 1) + EPS) / (f64::from(rel - 1 + nonrel) + 2.0 * EPS);
            sum += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (above / fj) * prec;
        }
    }
    if q.num_rel > 0 {
        sum / f64::from(q.num_rel)
    } else {
        sum
    }
}

/// Share of the top k (over k, even past the end of the ranking) that is
/// unjudged: outside the gold set or pooled but not judged.
pub fn unjudged(r: &Ranking, _: &QueryContext, k: u32, _: &Params) -> f64 {
    let shown = r.num_ret.min(k);
    let judged = r
        .chunk_hits()
        .iter()
        .take_while(|h| h.rank <= shown)
        .filter(|h| h.grade >= 0)
        .count() as u32;
    f64::from(shown - judged) / f64::from(k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::Hit;

    fn ranking(num_ret: u32, hits: &[(u32, i32)]) -> Ranking {
        Ranking {
            num_ret,
            hits: hits.iter().map(|&(rank, grade)| Hit { rank, grade }).collect(),
            chunks: None,
        }
    }

    #[test]
    fn bpref_by_hand() {
        // R = 2 relevant, 3 judged non-relevant. Ranking: N R - R, with an
        // unjudged pooled document before the first.
        let q = QueryContext {
            num_rel: 2,
            ideal: vec![1.0, 1.0],
            relevance_level: 1,
            zeros: 3,
        };
        let r = ranking(5, &[(1, -1), (2, 0), (3, 1), (5, 1)]);
        // Each relevant has 1 non-relevant above: 1 - 1/min(3, 2), twice.
        let p = Params::default();
        assert_eq!(bpref(&r, &q, 0, &p), 0.5);
        assert_eq!(unjudged(&r, &q, 5, &p), 2.0 / 5.0);
        assert_eq!(unjudged(&r, &q, 10, &p), 2.0 / 10.0);
    }

    #[test]
    fn inf_ap_with_full_judgments_is_ap() {
        // Every retrieved document judged: infAP's estimate equals AP up to
        // its epsilon.
        let q = QueryContext {
            num_rel: 3,
            ideal: vec![1.0; 3],
            relevance_level: 1,
            zeros: 2,
        };
        let r = ranking(4, &[(1, 1), (2, 0), (3, 1), (4, 0)]);
        let ap = (1.0 + 2.0 / 3.0) / 3.0;
        assert!((inf_ap(&r, &q, 0, &Params::default()) - ap).abs() < 1e-4);
    }
}
