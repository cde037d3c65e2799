//! Judging a ranking against the gold set: which retrieved documents carry a
//! label, at which rank, with which grade.
//!
//! Every metric rgate offers depends only on the ranks and grades of the
//! *labeled* documents a run retrieved, the number retrieved, and the gold
//! set's grade counts (trec_eval computes them from the same data:
//! `form_res_rels.c`). So a [`Ranking`] keeps just that: a few hits instead
//! of a thousand document ids, whatever the run's size.

use std::collections::HashMap;

use crate::gold::{GoldQuery, GoldSet};

/// One labeled document in a ranking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// 1-based rank.
    pub rank: u32,
    /// The label's grade (negative: in the pool, not judged).
    pub grade: i32,
}

/// The judged view of one query's ranking.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ranking {
    /// Documents retrieved (after dropping repeated ids).
    pub num_ret: u32,
    /// Labeled documents retrieved, by increasing rank.
    pub hits: Vec<Hit>,
}

impl Ranking {
    /// Judges an ordered list of unique ids (rank = position + 1).
    pub fn from_ordered<'a>(ids: impl IntoIterator<Item = &'a str>, labels: &QueryLabels) -> Ranking {
        let mut r = Ranking::default();
        for id in ids {
            r.num_ret += 1;
            if let Some(grade) = labels.grade(id.as_bytes()) {
                r.hits.push(Hit {
                    rank: r.num_ret,
                    grade,
                });
            }
        }
        r
    }
}

/// Label lookup for one query. Most gold queries have a handful of labels,
/// where a linear scan beats hashing every retrieved id; large TREC pools
/// get a hash map.
#[derive(Debug, Clone)]
pub enum QueryLabels {
    Few(Vec<(Box<[u8]>, i32)>),
    Many(HashMap<Box<[u8]>, i32>),
}

const SCAN_LIMIT: usize = 12;

impl QueryLabels {
    pub fn new(q: &GoldQuery) -> QueryLabels {
        let pairs = q.labels.iter().map(|l| (l.id.as_bytes().into(), l.grade));
        if q.labels.len() <= SCAN_LIMIT {
            QueryLabels::Few(pairs.collect())
        } else {
            QueryLabels::Many(pairs.collect())
        }
    }

    #[inline]
    pub fn grade(&self, doc: &[u8]) -> Option<i32> {
        match self {
            QueryLabels::Few(v) => v.iter().find(|(d, _)| &d[..] == doc).map(|(_, g)| *g),
            QueryLabels::Many(m) => m.get(doc).copied(),
        }
    }
}

/// Per-query label lookups for a whole gold set, built once per evaluation.
pub fn label_index(gold: &GoldSet) -> Vec<QueryLabels> {
    gold.queries.iter().map(QueryLabels::new).collect()
}

/// What a metric needs to know about the gold side of one query.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryContext {
    /// Labels with grade >= relevance level (trec_eval's `num_rel`).
    pub num_rel: u32,
    /// Gains of all positive grades, largest first: the ideal ranking for
    /// nDCG. trec_eval builds it from every judged grade, whatever `-l` says.
    pub ideal: Vec<f64>,
    pub relevance_level: i32,
}

impl QueryContext {
    pub fn new(q: &GoldQuery, relevance_level: i32) -> QueryContext {
        let num_rel = q
            .labels
            .iter()
            .filter(|l| is_relevant(l.grade, relevance_level))
            .count() as u32;
        let mut ideal: Vec<f64> = q
            .labels
            .iter()
            .filter(|l| l.grade > 0)
            .map(|l| f64::from(l.grade))
            .collect();
        ideal.sort_by(|a, b| b.total_cmp(a));
        QueryContext {
            num_rel,
            ideal,
            relevance_level,
        }
    }

    #[inline]
    pub fn relevant(&self, grade: i32) -> bool {
        is_relevant(grade, self.relevance_level)
    }
}

/// trec_eval: a grade is relevant when it reaches the level; negative grades
/// (pooled, unjudged) never are, even at level 0.
#[inline]
pub fn is_relevant(grade: i32, level: i32) -> bool {
    grade >= 0 && grade >= level
}

/// Contexts for every query of a gold set.
pub fn contexts(gold: &GoldSet, relevance_level: i32) -> Vec<QueryContext> {
    gold.queries
        .iter()
        .map(|q| QueryContext::new(q, relevance_level))
        .collect()
}
