//! Interpolated precision (trec_eval's `m_iprec_at_recall.c`,
//! `m_11pt_avg.c`) and precision at multiples of R (`m_Rprec_mult.c`).
//!
//! Interpolated precision at recall level x is the highest precision at any
//! rank where recall is at least x. trec_eval turns x into a count of
//! relevant documents, `lround(x * R)` (trec_eval 10; 9 added 0.9 and
//! truncated), and walks the ranking from the bottom up; this does the
//! same, so the same ranks are compared.

use super::params::Params;
use crate::judge::{QueryContext, Ranking};

/// Whether each of the first `num_ret` ranks holds a relevant document.
fn relevant_ranks(r: &Ranking, q: &QueryContext) -> Vec<bool> {
    let mut rel = vec![false; r.num_ret as usize];
    for h in r.chunk_hits() {
        if q.relevant(h.grade) {
            if let Some(slot) = rel.get_mut(h.rank as usize - 1) {
                *slot = true;
            }
        }
    }
    rel
}

/// Interpolated precision at each recall level of `levels`, by trec_eval's
/// loop: levels are consumed from the last, which trec_eval's sorted cutoffs
/// make the highest. Also returns the order they were consumed in, which is
/// the order 11pt_avg sums them in.
fn interpolated(r: &Ranking, q: &QueryContext, levels: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let rel = relevant_ranks(r, q);
    let rel_ret = rel.iter().filter(|&&b| b).count() as i64;
    let cuts: Vec<i64> = levels
        .iter()
        .map(|x| (x * f64::from(q.num_rel)).round() as i64)
        .collect();
    let mut out = vec![0.0; levels.len()];
    let mut consumed = Vec::with_capacity(levels.len());
    let mut cur = cuts.len();
    while cur > 0 && cuts[cur - 1] > rel_ret {
        cur -= 1;
    }
    let mut int_precis = if r.num_ret == 0 {
        0.0
    } else {
        rel_ret as f64 / f64::from(r.num_ret)
    };
    let mut so_far = rel_ret;
    let mut i = rel.len();
    while i > 0 && so_far > 0 {
        let precis = so_far as f64 / i as f64;
        if int_precis < precis {
            int_precis = precis;
        }
        if rel[i - 1] {
            while cur > 0 && so_far == cuts[cur - 1] {
                out[cur - 1] = int_precis;
                consumed.push(cur - 1);
                cur -= 1;
            }
            so_far -= 1;
        }
        i -= 1;
    }
    while cur > 0 {
        out[cur - 1] = int_precis;
        consumed.push(cur - 1);
        cur -= 1;
    }
    (out, consumed)
}

/// `iprec_at_recall_x`: the recall level is the metric's parameter.
pub fn iprec_at_recall(r: &Ranking, q: &QueryContext, _: u32, p: &Params) -> f64 {
    let x = p.nums.first().copied().unwrap_or(0.0);
    interpolated(r, q, &[x]).0[0]
}

/// trec_eval's default recall levels: 0.0, 0.1, ..., 1.0.
pub const ELEVEN_POINTS: [f64; 11] = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];

/// The mean interpolated precision over the recall levels given (the 11
/// points by default), summed in the order trec_eval's loop reaches them.
pub fn eleven_pt_avg(r: &Ranking, q: &QueryContext, _: u32, p: &Params) -> f64 {
    let levels: &[f64] = if p.nums.is_empty() {
        &ELEVEN_POINTS
    } else {
        &p.nums
    };
    let (values, consumed) = interpolated(r, q, levels);
    let mut sum = 0.0;
    for i in consumed {
        sum += values[i];
    }
    sum / levels.len() as f64
}

/// Precision at rank x * R (rounded as trec_eval does: `+ 0.9`, then
/// truncated); past the end of the ranking, relevant retrieved over that
/// rank.
pub fn rprec_mult(r: &Ranking, q: &QueryContext, _: u32, p: &Params) -> f64 {
    let x = p.nums.first().copied().unwrap_or(1.0);
    let cut = (x * f64::from(q.num_rel) + 0.9) as i64;
    let rel = relevant_ranks(r, q);
    let rel_ret = rel.iter().filter(|&&b| b).count() as i64;
    if cut > i64::from(r.num_ret) {
        return rel_ret as f64 / cut as f64;
    }
    // trec_eval's loop stops once no relevant document is left above: the
    // value at a rank reached after that stays 0.
    let mut so_far = rel_ret;
    let mut i = rel.len() as i64;
    while i > 0 && so_far > 0 {
        if i == cut {
            return so_far as f64 / i as f64;
        }
        if rel[i as usize - 1] {
            so_far -= 1;
        }
        i -= 1;
    }
    0.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::Hit;

    #[test]
    fn interpolated_precision_by_hand() {
        // Relevant at ranks 2 and 4 of 5; R = 4. Precision there: 1/2, 2/4.
        let r = Ranking {
            num_ret: 5,
            hits: vec![Hit { rank: 2, grade: 1 }, Hit { rank: 4, grade: 1 }],
            chunks: None,
        };
        let q = QueryContext {
            num_rel: 4,
            ideal: vec![1.0; 4],
            relevance_level: 1,
            zeros: 0,
        };
        let v = interpolated(&r, &q, &[0.0, 0.25, 0.5, 0.75]).0;
        assert_eq!(v, [0.5, 0.5, 0.5, 0.0]);
        // R-prec multiples: 0.5 R = rank 2 (0.5 * 4 + 0.9 = 2.9): 1/2.
        let p = super::super::params::float_cutoff(0.5);
        assert_eq!(rprec_mult(&r, &q, 0, &p), 0.5);
        // 2 R = rank 8, past the end: 2 / 8.
        let p = super::super::params::float_cutoff(2.0);
        assert_eq!(rprec_mult(&r, &q, 0, &p), 0.25);
    }
}
