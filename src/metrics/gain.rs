//! Gain-based measures as trec_eval computes them rank by rank: nDCG with a
//! gain per grade (`m_ndcg.c` with `-m ndcg.1=3,2=9`), `G` and `binG`
//! (`m_G.c`, `m_binG.c`), `ndcg_rel` and `Rndcg` (`m_ndcg_rel.c`,
//! `m_Rndcg.c`), rank-biased precision (Moffat & Zobel, TOIS 2008;
//! `m_rbp.c`) and its residual (`m_rbp_resid.c`).
//!
//! The gains are trec_eval's `setup_gains` (`gain_init.c`): one entry per
//! grade from 0 to the highest judged grade (here only the grades judged,
//! and 0: a grade no label has changes neither the ideal ranking, nor any
//! retrieved document's gain, nor the range rbp scales by), its gain the grade unless a
//! `grade=gain` parameter sets it, ordered by gain. The ideal ranking walks
//! those entries from the highest gain down, as many ranks each as the gold
//! set has labels of that grade. trec_eval orders gains with a comparison
//! that truncates their difference to an integer, so two gains less than 1
//! apart may come in either order there; here they are ordered exactly
//! (the same whenever gains are whole numbers, as by default).

use super::params::Params;
use crate::judge::{QueryContext, Ranking};

/// trec_eval's relevance value for a rank without a label (not in the pool).
const NONPOOL: i64 = -1;
/// For a pooled document without a judgment (a negative grade).
const UNJUDGED: i64 = -2;

/// Each rank's relevance value, trec_eval's `results_rel_list`.
pub(crate) fn rel_list(r: &Ranking) -> Vec<i64> {
    let mut rel = vec![NONPOOL; r.num_ret as usize];
    for h in r.chunk_hits() {
        if let Some(slot) = rel.get_mut(h.rank as usize - 1) {
            *slot = if h.grade < 0 { UNJUDGED } else { i64::from(h.grade) };
        }
    }
    rel
}

/// One gain entry: a grade, its gain, and how many labels have the grade.
#[derive(Debug, Clone, Copy)]
struct Level {
    grade: i64,
    gain: f64,
    count: u32,
}

struct Gains(Vec<Level>);

impl Gains {
    fn new(q: &QueryContext, p: &Params) -> Gains {
        let mut levels: Vec<Level> = p
            .gains()
            .map(|(grade, gain)| Level {
                grade,
                gain,
                count: 0,
            })
            .collect();
        for (g, count) in q.grade_counts() {
            match levels.iter_mut().find(|l| l.grade == g) {
                Some(l) => l.count = count,
                None => levels.push(Level {
                    grade: g,
                    gain: g as f64,
                    count,
                }),
            }
        }
        levels.sort_by(|a, b| a.gain.total_cmp(&b.gain));
        Gains(levels)
    }

    fn gain(&self, rel: i64) -> f64 {
        self.0.iter().find(|l| l.grade == rel).map_or(0.0, |l| l.gain)
    }

    fn ideal(&self) -> Ideal<'_> {
        let cur = self.0.len();
        Ideal {
            levels: &self.0,
            cur,
            at_level: 0,
            gain: if cur > 0 { self.0[cur - 1].gain } else { 0.0 },
        }
    }
}

/// The ideal ranking's gain, rank after rank (trec_eval's `cur_level`,
/// `num_at_level`, `ideal_gain`).
struct Ideal<'a> {
    levels: &'a [Level],
    /// One past the current level.
    cur: usize,
    at_level: u32,
    gain: f64,
}

impl Ideal<'_> {
    fn advance(&mut self) {
        self.at_level += 1;
        while self.cur > 0 && self.at_level > self.levels[self.cur - 1].count {
            self.at_level = 1;
            self.cur -= 1;
            self.gain = if self.cur > 0 {
                self.levels[self.cur - 1].gain
            } else {
                0.0
            };
        }
    }
}

fn discount(i: usize) -> f64 {
    ((i + 2) as f64).log2()
}

/// nDCG with the parameters' gains (trec_eval's `ndcg` with parameters).
pub fn ndcg_gains(r: &Ranking, q: &QueryContext, _: u32, p: &Params) -> f64 {
    let gains = Gains::new(q, p);
    let rel = rel_list(r);
    let mut ideal = gains.ideal();
    let (mut dcg, mut idcg) = (0.0, 0.0);
    let mut i = 0;
    while i < rel.len() && ideal.gain > 0.0 {
        let g = gains.gain(rel[i]);
        if g != 0.0 {
            dcg += g / discount(i);
        }
        ideal.advance();
        if ideal.gain > 0.0 {
            idcg += ideal.gain / discount(i);
        }
        i += 1;
    }
    while i < rel.len() {
        let g = gains.gain(rel[i]);
        if g != 0.0 {
            dcg += g / discount(i);
        }
        i += 1;
    }
    while ideal.gain > 0.0 {
        ideal.advance();
        if ideal.gain > 0.0 {
            idcg += ideal.gain / discount(i);
        }
        i += 1;
    }
    if idcg > 0.0 {
        dcg / idcg
    } else {
        0.0
    }
}

/// `G`: gain discounted by log2(2 + cost so far - gain so far), where the
/// cost of a rank is the ideal gain there (at least 1), over the ideal's
/// total gain.
pub fn g(r: &Ranking, q: &QueryContext, _: u32, p: &Params) -> f64 {
    const MIN_COST: f64 = 1.0;
    let gains = Gains::new(q, p);
    let rel = rel_list(r);
    let mut ideal = gains.ideal();
    let (mut results_g, mut sum_results, mut sum_ideal, mut sum_cost) = (0.0, 0.0, 0.0, 0.0);
    let mut i = 0;
    while i < rel.len() && ideal.gain > 0.0 {
        let g = gains.gain(rel[i]);
        sum_results += g;
        ideal.advance();
        if ideal.gain > 0.0 {
            sum_ideal += ideal.gain;
        }
        sum_cost += if ideal.gain >= MIN_COST {
            ideal.gain
        } else {
            MIN_COST
        };
        if g != 0.0 {
            results_g += g / (2.0 + sum_cost - sum_results).log2();
        }
        i += 1;
    }
    while i < rel.len() {
        let g = gains.gain(rel[i]);
        sum_results += g;
        sum_cost += MIN_COST;
        if g != 0.0 {
            results_g += g / (2.0 + sum_cost - sum_results).log2();
        }
        i += 1;
    }
    while ideal.gain > 0.0 {
        ideal.advance();
        if ideal.gain > 0.0 {
            sum_ideal += ideal.gain;
        }
    }
    if sum_ideal > 0.0 {
        results_g / sum_ideal
    } else {
        0.0
    }
}

/// `binG`: each relevant document at 0-based position i, the j-th found,
/// adds 1 / log2(3 + i - j); over the relevant count.
pub fn bin_g(r: &Ranking, q: &QueryContext, _: u32, _: &Params) -> f64 {
    let mut found = 0u32;
    let mut sum = 0.0;
    for h in r.chunk_hits() {
        if q.relevant(h.grade) {
            found += 1;
            sum += 1.0 / f64::from(3 + (h.rank - 1) - found).log2();
        }
    }
    if found > 0 {
        sum / f64::from(q.num_rel)
    } else {
        0.0
    }
}

/// `ndcg_rel`: nDCG averaged at each relevant document retrieved, the ones
/// not retrieved counting the final nDCG.
pub fn ndcg_rel(r: &Ranking, q: &QueryContext, _: u32, p: &Params) -> f64 {
    let gains = Gains::new(q, p);
    let rel = rel_list(r);
    let mut ideal = gains.ideal();
    let (mut dcg, mut idcg, mut sum) = (0.0, 0.0, 0.0);
    let (mut num_rel, mut num_rel_ret) = (0i64, 0i64);
    let mut i = 0;
    while i < rel.len() && ideal.gain > 0.0 {
        let g = gains.gain(rel[i]);
        if g != 0.0 {
            dcg += g / discount(i);
        }
        ideal.advance();
        if ideal.gain > 0.0 {
            num_rel += 1;
            idcg += ideal.gain / discount(i);
        }
        if g > 0.0 {
            sum += dcg / idcg;
            num_rel_ret += 1;
        }
        i += 1;
    }
    while i < rel.len() {
        let g = gains.gain(rel[i]);
        if g != 0.0 {
            dcg += g / discount(i);
        }
        if g > 0.0 {
            sum += dcg / idcg;
            num_rel_ret += 1;
        }
        i += 1;
    }
    while ideal.gain > 0.0 {
        ideal.advance();
        if ideal.gain > 0.0 {
            num_rel += 1;
            idcg += ideal.gain / discount(i);
        }
        i += 1;
    }
    sum += (num_rel - num_rel_ret) as f64 * dcg / idcg;
    if sum > 0.0 {
        sum / num_rel as f64
    } else {
        0.0
    }
}

/// `Rndcg`: nDCG averaged at each rank where the ideal gain changes (the R
/// of each grade), and at the end of the ranking.
pub fn rndcg(r: &Ranking, q: &QueryContext, _: u32, p: &Params) -> f64 {
    if q.num_rel == 0 {
        return 0.0;
    }
    let gains = Gains::new(q, p);
    let rel = rel_list(r);
    let mut ideal = gains.ideal();
    let mut old = ideal.gain;
    let (mut dcg, mut idcg, mut sum) = (0.0, 0.0, 0.0);
    let mut changed = 0u32;
    let mut i = 0;
    while i < rel.len() && ideal.gain > 0.0 {
        let g = gains.gain(rel[i]);
        ideal.advance();
        if old != ideal.gain {
            if idcg > 0.0 {
                sum += dcg / idcg;
                changed += 1;
            }
            old = ideal.gain;
        }
        if g != 0.0 {
            dcg += g / discount(i);
        }
        if ideal.gain > 0.0 {
            idcg += ideal.gain / discount(i);
        }
        i += 1;
    }
    if i < rel.len() {
        while i < rel.len() {
            let g = gains.gain(rel[i]);
            if g != 0.0 {
                dcg += g / discount(i);
            }
            i += 1;
        }
        if idcg > 0.0 {
            sum += dcg / idcg;
            changed += 1;
        }
    }
    while ideal.gain > 0.0 {
        ideal.advance();
        if old != ideal.gain {
            if idcg > 0.0 {
                sum += dcg / idcg;
                changed += 1;
            }
            old = ideal.gain;
        }
        if ideal.gain > 0.0 {
            idcg += ideal.gain / discount(i);
        }
        i += 1;
    }
    if changed == 0 {
        0.0
    } else {
        sum / f64::from(changed)
    }
}

/// trec_eval's persistence for `rbp` and `rbp_resid` without a `p=`.
pub const TREC_RBP_P: f64 = 0.9;

/// ir_measures' persistence for `RBP(rel=...)` without a `p=`.
pub const IR_MEASURES_RBP_P: f64 = 0.8;

/// Rank-biased precision: (1 - p) times the sum of gain times p^(rank - 1).
/// As trec_eval computes `rbp`, gains are the grades (or the parameters'),
/// scaled into [0, 1] when any lies outside (by the lowest and highest
/// gain). With ir_measures' `rel=` (`RBP(rel=1,p=0.8)`, which its cwl_eval
/// provider computes), gains are binary: 1 from that grade up.
pub fn rbp(r: &Ranking, q: &QueryContext, _: u32, p: &Params) -> f64 {
    if p.rel().is_some() {
        let persist = p.pair("p").unwrap_or(IR_MEASURES_RBP_P);
        let mut sum = 0.0;
        let mut cur = 1.0;
        let mut at = 1u32;
        for h in r.chunk_hits() {
            if !q.relevant(h.grade) {
                continue;
            }
            // p^(rank - 1), multiplied out rank by rank as trec_eval does.
            while at < h.rank {
                cur *= persist;
                at += 1;
            }
            sum += cur;
        }
        return (1.0 - persist) * sum;
    }
    let persist = p.pair("p").unwrap_or(TREC_RBP_P);
    let mut gains = Gains::new(q, p);
    let min = gains.0.iter().map(|l| l.gain).fold(f64::INFINITY, f64::min);
    let max = gains.0.iter().map(|l| l.gain).fold(f64::NEG_INFINITY, f64::max);
    if min < 0.0 || max > 1.0 {
        for l in &mut gains.0 {
            l.gain = (l.gain - min) / (max - min);
        }
    }
    let mut sum = 0.0;
    let mut cur = 1.0;
    for rel in rel_list(r) {
        let g = gains.gain(rel);
        if g != 0.0 {
            sum += g * cur;
        }
        cur *= persist;
    }
    (1.0 - persist) * sum
}

/// The most rank-biased precision could grow by if every unjudged document
/// retrieved were relevant, plus what lies past the end of the ranking: 0
/// when every document retrieved is judged, as trec_eval leaves it.
pub fn rbp_resid(r: &Ranking, _: &QueryContext, _: u32, p: &Params) -> f64 {
    let persist = p.pair("p").unwrap_or(TREC_RBP_P);
    let mut unjudged = 0u32;
    let mut sum = 0.0;
    let mut cur = 1.0;
    for rel in rel_list(r) {
        if rel < 0 {
            unjudged += 1;
            sum += cur;
        }
        cur *= persist;
    }
    if unjudged > 0 {
        cur + (1.0 - persist) * sum
    } else {
        0.0
    }
}

/// trec_eval's `relstring`: the grade at each of the first `len` ranks, `-`
/// outside the gold set, `.` pooled but unjudged, `>` above 9.
pub fn relstring(r: &Ranking, len: u32) -> String {
    rel_list(r)
        .into_iter()
        .take(len as usize)
        .map(|rel| match rel {
            10.. => '>',
            0..=9 => char::from(b'0' + rel as u8),
            NONPOOL => '-',
            UNJUDGED => '.',
            _ => '<',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::Hit;

    #[test]
    fn default_gains_give_trec_evals_ndcg() {
        // Grades 2 and 1 retrieved at ranks 2 and 1; the gold set has one of
        // each and a grade 0.
        let q = QueryContext {
            num_rel: 2,
            ideal: vec![2.0, 1.0],
            relevance_level: 1,
            zeros: 1,
        };
        let r = Ranking {
            num_ret: 3,
            hits: vec![
                Hit { rank: 1, grade: 1 },
                Hit { rank: 2, grade: 2 },
                Hit { rank: 3, grade: -1 },
            ],
            chunks: None,
        };
        let want = (1.0 + 2.0 / 3f64.log2()) / (2.0 + 1.0 / 3f64.log2());
        assert!((ndcg_gains(&r, &q, 0, &Params::default()) - want).abs() < 1e-15);
        // A gain of 10 for grade 1: the ideal puts it first.
        let p = super::super::params::parse("1=10").unwrap();
        let want = (10.0 + 2.0 / 3f64.log2()) / (10.0 + 2.0 / 3f64.log2());
        assert!((ndcg_gains(&r, &q, 0, &p) - want).abs() < 1e-15);
        assert_eq!(relstring(&r, 5), "12.");
        // rbp, p = 0.5, gains scaled by 2: (1/2)(1/2 + 1 * 1/2).
        let p = super::super::params::parse("p=0.5").unwrap();
        assert_eq!(rbp(&r, &q, 0, &p), 0.5);
        // One unjudged at rank 3: 0.5^3 + 0.5 * 0.25.
        assert_eq!(rbp_resid(&r, &q, 0, &p), 0.25);
    }
}
