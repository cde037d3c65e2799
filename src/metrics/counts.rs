//! Set measures over the whole retrieved list, as trec_eval computes them
//! from its counts (`m_num_ret.c`, `m_num_rel.c`, `m_num_rel_ret.c`,
//! `m_num_nonrel_judged_ret.c`, `m_set_P.c`, `m_set_rel_P.c`,
//! `m_set_recall.c`, `m_set_map.c`, `m_set_F.c`, `m_utility.c`), and
//! ir_measures' `NumRet`, `NumRel`, `NumRelRet`, `SetP`, `SetR`, `SetF`.
//!
//! Each is a function of four counts: retrieved, relevant, relevant
//! retrieved, judged retrieved. The counts are summed over queries for the
//! `all` line of the `num_*` measures (trec_eval prints their sum, not a
//! mean: [`super::Agg::Sum`]).

use super::params::Params;
use crate::judge::{QueryContext, Ranking};

/// Relevant retrieved: trec_eval's `num_rel_ret`.
pub fn rel_ret(r: &Ranking, q: &QueryContext) -> u32 {
    r.chunk_hits().iter().filter(|h| q.relevant(h.grade)).count() as u32
}

pub fn num_q(_: &Ranking, _: &QueryContext, _: u32, _: &Params) -> f64 {
    1.0
}

pub fn num_ret(r: &Ranking, _: &QueryContext, _: u32, _: &Params) -> f64 {
    f64::from(r.num_ret)
}

pub fn num_rel(_: &Ranking, q: &QueryContext, _: u32, _: &Params) -> f64 {
    f64::from(q.num_rel)
}

pub fn num_rel_ret(r: &Ranking, q: &QueryContext, _: u32, _: &Params) -> f64 {
    f64::from(rel_ret(r, q))
}

/// Retrieved documents judged not relevant (a grade from 0 up to the
/// relevance level): neither outside the pool nor pooled but unjudged.
pub fn num_nonrel_judged_ret(r: &Ranking, q: &QueryContext, _: u32, _: &Params) -> f64 {
    let judged = r.chunk_hits().iter().filter(|h| h.grade >= 0).count() as u32;
    f64::from(judged - rel_ret(r, q))
}

/// Relevant retrieved over retrieved; 0 when nothing was retrieved.
pub fn set_p(r: &Ranking, q: &QueryContext, _: u32, _: &Params) -> f64 {
    if r.num_ret == 0 {
        return 0.0;
    }
    f64::from(rel_ret(r, q)) / f64::from(r.num_ret)
}

/// Relevant retrieved over the smaller of retrieved and relevant.
pub fn set_relative_p(r: &Ranking, q: &QueryContext, _: u32, _: &Params) -> f64 {
    if r.num_ret == 0 || q.num_rel == 0 {
        return 0.0;
    }
    f64::from(rel_ret(r, q)) / f64::from(r.num_ret.min(q.num_rel))
}

/// Relevant retrieved over relevant.
pub fn set_recall(r: &Ranking, q: &QueryContext, _: u32, _: &Params) -> f64 {
    if q.num_rel == 0 {
        return 0.0;
    }
    f64::from(rel_ret(r, q)) / f64::from(q.num_rel)
}

/// set_P times set_recall, as trec_eval multiplies it out.
pub fn set_map(r: &Ranking, q: &QueryContext, _: u32, _: &Params) -> f64 {
    if r.num_ret == 0 || q.num_rel == 0 {
        return 0.0;
    }
    let rr = f64::from(rel_ret(r, q));
    (rr * rr) / (f64::from(r.num_ret) * f64::from(q.num_rel))
}

/// F with beta (trec_eval's parameter, 1 by default; ir_measures'
/// `SetF(beta=...)`): (beta + 1) P R / (beta P + R), as trec_eval writes it
/// (so beta weighs like beta squared elsewhere).
pub fn set_f(r: &Ranking, q: &QueryContext, _: u32, p: &Params) -> f64 {
    let rr = rel_ret(r, q);
    if rr == 0 {
        return 0.0;
    }
    let beta = p.pair("beta").or_else(|| p.nums.first().copied()).unwrap_or(1.0);
    let prec = f64::from(rr) / f64::from(r.num_ret);
    let rec = f64::from(rr) / f64::from(q.num_rel);
    (beta + 1.0) * prec * rec / (beta * prec + rec)
}

/// a rel_ret + b nonrel_ret + c rel_nonret + d nonrel_nonret, coefficients
/// 1, -1, 0, 0 unless given. The collection size trec_eval's `-N` gives is
/// 0 here as in trec_eval by default, so d weighs a negative count.
pub fn utility(r: &Ranking, q: &QueryContext, _: u32, p: &Params) -> f64 {
    let c: [f64; 4] = match p.nums.as_slice() {
        [a, b, c, d] => [*a, *b, *c, *d],
        _ => [1.0, -1.0, 0.0, 0.0],
    };
    let rr = f64::from(rel_ret(r, q));
    let ret = f64::from(r.num_ret);
    let rel = f64::from(q.num_rel);
    c[0] * rr + c[1] * (ret - rr) + c[2] * (rel - rr) + c[3] * (rr - ret - rel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::Hit;

    #[test]
    fn counts_by_hand() {
        // 10 retrieved: relevant at 1 and 4, judged non-relevant at 2,
        // pooled but unjudged at 3; 3 relevant in all.
        let r = Ranking {
            num_ret: 10,
            hits: [(1, 1), (2, 0), (3, -1), (4, 2)]
                .iter()
                .map(|&(rank, grade)| Hit { rank, grade })
                .collect(),
            chunks: None,
        };
        let q = QueryContext {
            num_rel: 3,
            ideal: vec![2.0, 1.0, 1.0],
            relevance_level: 1,
            zeros: 1,
        };
        let none = Params::default();
        assert_eq!(num_rel_ret(&r, &q, 0, &none), 2.0);
        assert_eq!(num_nonrel_judged_ret(&r, &q, 0, &none), 1.0);
        assert_eq!(set_p(&r, &q, 0, &none), 0.2);
        assert_eq!(set_relative_p(&r, &q, 0, &none), 2.0 / 3.0);
        assert_eq!(set_recall(&r, &q, 0, &none), 2.0 / 3.0);
        assert_eq!(set_map(&r, &q, 0, &none), 4.0 / 30.0);
        let f = 2.0 * 0.2 * (2.0 / 3.0) / (0.2 + 2.0 / 3.0);
        assert!((set_f(&r, &q, 0, &none) - f).abs() < 1e-15);
        // 2 - 8 by default.
        assert_eq!(utility(&r, &q, 0, &none), -6.0);
    }
}
