//! Judging a ranking against the gold set: which retrieved documents carry a
//! label, at which rank, with which grade.
//!
//! Every metric rgate offers depends only on the ranks and grades of the
//! *labeled* documents a run retrieved, the number retrieved, and the gold
//! set's grade counts (trec_eval computes them from the same data:
//! `form_res_rels.c`). So a [`Ranking`] keeps just that: a few hits instead
//! of a thousand document ids, whatever the run's size.

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

/// Label lookup for one query: an open-addressing table over the label ids,
/// probed with the same hash the TREC reader computes once per line (and
/// reuses to drop repeated ids). A retrieved id that carries no label, the
/// usual case, costs one hash and one or two table reads instead of a
/// comparison with every label.
#[derive(Debug, Clone)]
pub struct QueryLabels {
    /// Label ids, packed.
    arena: Box<[u8]>,
    /// (start in `arena`, length, grade, hash) per label.
    labels: Box<[(u32, u32, i32, u64)]>,
    /// Label index + 1 per slot, 0 when empty; a power of two long.
    table: Box<[u32]>,
}

impl QueryLabels {
    pub fn new(q: &GoldQuery) -> QueryLabels {
        let n = q.labels.len();
        let size = if n == 0 { 1 } else { (n * 2).next_power_of_two() };
        let mut arena = Vec::with_capacity(q.labels.iter().map(|l| l.id.len()).sum());
        let mut labels = Vec::with_capacity(n);
        let mut table = vec![0u32; size];
        let mask = size - 1;
        for (i, l) in q.labels.iter().enumerate() {
            let id = l.id.as_bytes();
            let h = doc_hash(id);
            labels.push((arena.len() as u32, id.len() as u32, l.grade, h));
            arena.extend_from_slice(id);
            let mut slot = h as usize & mask;
            while table[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            table[slot] = i as u32 + 1;
        }
        QueryLabels {
            arena: arena.into(),
            labels: labels.into(),
            table: table.into(),
        }
    }

    #[inline]
    pub fn grade(&self, doc: &[u8]) -> Option<i32> {
        if self.labels.is_empty() {
            return None;
        }
        self.grade_hashed(doc, doc_hash(doc))
    }

    /// [`QueryLabels::grade`] with `hash == doc_hash(doc)` already known.
    #[inline]
    pub fn grade_hashed(&self, doc: &[u8], hash: u64) -> Option<i32> {
        let mask = self.table.len() - 1;
        let mut slot = hash as usize & mask;
        loop {
            let i = self.table[slot];
            if i == 0 {
                return None;
            }
            let (start, len, grade, h) = self.labels[i as usize - 1];
            if h == hash && &self.arena[start as usize..(start + len) as usize] == doc {
                return Some(grade);
            }
            slot = (slot + 1) & mask;
        }
    }
}

/// FNV-1a folded 8 bytes at a time: ids are short, and this only has to
/// spread them over a per-query table. Shared by the label lookup and the
/// TREC reader's duplicate check, so each retrieved id is hashed once.
#[inline]
pub fn doc_hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let v = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h ^ v).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(23);
    }
    for &b in chunks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^ (h >> 29)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gold::Label;

    #[test]
    fn label_lookup_finds_every_label_and_nothing_else() {
        for n in [0usize, 1, 3, 12, 13, 200] {
            let q = GoldQuery {
                id: "q".into(),
                text: None,
                stratum: 0,
                labels: (0..n)
                    .map(|i| Label {
                        id: format!("doc-{i}"),
                        grade: i as i32 - 1,
                    })
                    .collect(),
            };
            let l = QueryLabels::new(&q);
            for i in 0..n {
                assert_eq!(
                    l.grade(format!("doc-{i}").as_bytes()),
                    Some(i as i32 - 1),
                    "{n} labels"
                );
            }
            for probe in ["doc-", "doc-1000", "", "doc-00", "x"] {
                assert_eq!(l.grade(probe.as_bytes()), None, "{n} labels, {probe:?}");
            }
        }
    }
}
