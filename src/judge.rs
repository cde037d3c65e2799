//! Judging a ranking against the gold set: which retrieved documents carry a
//! label, at which rank, with which grade.
//!
//! Every metric rgate offers depends only on the ranks and grades of the
//! *labeled* documents a run retrieved, the number retrieved, and the gold
//! set's grade counts (trec_eval computes them from the same data:
//! `form_res_rels.c`). So a [`Ranking`] keeps just that: a few hits instead
//! of a thousand document ids, whatever the run's size.
//!
//! Span labels (SPEC "Span labels") are judged here too, by the rule the
//! README's "Span labels" section states: a span is credited once, at the
//! first rank where the chunks ranked so far together cover at least
//! `span_coverage` of it; a chunk counts as relevant for precision-style
//! metrics when it carries that share of a span or lies that much inside
//! one. A query with span labels then has two views of its ranking:
//! credited labels ([`Ranking::hits`]) and relevant chunks
//! ([`Ranking::chunks`]). A query without spans has one, and pays nothing.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::gold::{same_id, GoldQuery, GoldSet};

/// The default share of a span that retrieved chunks must cover (and of a
/// chunk that must lie inside a span) for it to count.
pub const DEFAULT_SPAN_COVERAGE: f64 = 0.5;

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
    /// Labels credited, by increasing rank, one per label: a labeled
    /// document at its rank, a span at the rank where it became covered.
    /// Several spans credited at one rank come highest grade first.
    pub hits: Vec<Hit>,
    /// The retrieved chunks that count as relevant (or judged) for
    /// precision-style metrics, by rank, each with the highest grade it
    /// matches. `None` when the query has no span labels: each hit is then
    /// exactly one retrieved document, and `hits` serves both views.
    pub chunks: Option<Vec<Hit>>,
}

/// Where a retrieved chunk lies in its source document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Located<'a> {
    pub doc: &'a str,
    pub start: u64,
    /// Exclusive.
    pub end: u64,
}

/// An owned [`Located`]: where a baseline's ranked chunk lies, stored so
/// the baseline can be re-scored against changed span labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub doc: String,
    pub start: u64,
    pub end: u64,
}

impl Place {
    pub fn located(&self) -> Located<'_> {
        Located {
            doc: &self.doc,
            start: self.start,
            end: self.end,
        }
    }
}

impl From<Located<'_>> for Place {
    fn from(l: Located<'_>) -> Place {
        Place {
            doc: l.doc.to_string(),
            start: l.start,
            end: l.end,
        }
    }
}

/// A ranked result that may bear on a query's labels: the grade of its id
/// label, if it has one, and its location, if known.
#[derive(Debug, Clone, Copy)]
pub struct Touch<'a> {
    pub rank: u32,
    pub id_grade: Option<i32>,
    pub loc: Option<Located<'a>>,
}

impl Ranking {
    /// The view precision-style metrics count: relevant chunks.
    #[inline]
    pub fn chunk_hits(&self) -> &[Hit] {
        self.chunks.as_deref().unwrap_or(&self.hits)
    }

    /// Judges ranked ids with their locations (rank = position + 1). Only a
    /// query with span labels looks at the locations.
    pub fn from_located<'a>(
        items: impl IntoIterator<Item = (&'a str, Option<Located<'a>>)>,
        labels: &QueryLabels,
    ) -> Ranking {
        if labels.spans.is_none() {
            return Ranking::from_ordered(items.into_iter().map(|(id, _)| id), labels);
        }
        let mut touches = Vec::new();
        let mut num_ret = 0u32;
        for (id, loc) in items {
            num_ret += 1;
            let id_grade = labels.grade(id.as_bytes());
            let loc = loc.filter(|l| labels.touches(l));
            if id_grade.is_some() || loc.is_some() {
                touches.push(Touch {
                    rank: num_ret,
                    id_grade,
                    loc,
                });
            }
        }
        Ranking::from_touches(num_ret, &touches, labels)
    }

    /// Judges the results that bear on the labels, given by increasing
    /// rank; `num_ret` counts every result. Every other result matches no
    /// label and covers no span, so it changes no credit.
    pub fn from_touches(num_ret: u32, touches: &[Touch], labels: &QueryLabels) -> Ranking {
        let mut hits = Vec::new();
        let Some(sp) = labels.spans.as_deref() else {
            for t in touches {
                if let Some(grade) = t.id_grade {
                    hits.push(Hit { rank: t.rank, grade });
                }
            }
            return Ranking {
                num_ret,
                hits,
                chunks: None,
            };
        };
        let cov = sp.coverage;
        let mut covered: Vec<Vec<(u64, u64)>> = vec![Vec::new(); sp.spans.len()];
        let mut covered_len = vec![0u64; sp.spans.len()];
        let mut credited = vec![false; sp.spans.len()];
        let mut chunks = Vec::new();
        for t in touches {
            let mut chunk_grade = t.id_grade;
            if let Some(grade) = t.id_grade {
                hits.push(Hit { rank: t.rank, grade });
            }
            if let Some(loc) = t.loc {
                let chunk_len = loc.end.saturating_sub(loc.start);
                for si in sp.overlapping(&loc) {
                    let (start, end, grade) = sp.spans[si];
                    // Loaders refuse empty spans and chunks; saturating
                    // keeps a hand-built one from wrapping around.
                    let span_len = end.saturating_sub(start) as f64;
                    let from = start.max(loc.start);
                    let to = end.min(loc.end).max(from);
                    let inter = (to - from) as f64;
                    if inter >= cov * span_len || inter >= cov * chunk_len as f64 {
                        chunk_grade = Some(chunk_grade.map_or(grade, |g| g.max(grade)));
                    }
                    if !credited[si]
                        && union_len(&mut covered[si], &mut covered_len[si], from, to) as f64
                            >= cov * span_len
                    {
                        credited[si] = true;
                        hits.push(Hit { rank: t.rank, grade });
                    }
                }
            }
            if let Some(grade) = chunk_grade {
                chunks.push(Hit { rank: t.rank, grade });
            }
        }
        // Credits of one rank, highest grade first: the order nDCG places
        // them in (see `metrics::graded`).
        hits.sort_by(|a, b| a.rank.cmp(&b.rank).then(b.grade.cmp(&a.grade)));
        Ranking {
            num_ret,
            hits,
            chunks: Some(chunks),
        }
    }

    /// Judges an ordered list of unique ids (rank = position + 1).
    pub fn from_ordered<'a>(ids: impl IntoIterator<Item = &'a str>, labels: &QueryLabels) -> Ranking {
        let mut r = Ranking::default();
        if labels.spans.is_some() {
            // Ids alone cannot cover a span; only id labels can match.
            r.chunks = Some(Vec::new());
        }
        for id in ids {
            r.num_ret += 1;
            if let Some(grade) = labels.grade(id.as_bytes()) {
                let hit = Hit {
                    rank: r.num_ret,
                    grade,
                };
                r.hits.push(hit);
                if let Some(c) = r.chunks.as_mut() {
                    c.push(hit);
                }
            }
        }
        r
    }
}

/// Adds `[from, to)` to a sorted list of disjoint intervals and returns the
/// length they cover together: overlapping chunks are not counted twice.
/// Only the intervals the new one touches are merged (a binary search and
/// one splice), so many small chunks inside one long span stay cheap.
fn union_len(list: &mut Vec<(u64, u64)>, covered: &mut u64, from: u64, to: u64) -> u64 {
    // Intervals ending before `from` or starting after `to` stay apart.
    let lo = list.partition_point(|&(_, e)| e < from);
    let hi = list.partition_point(|&(s, _)| s <= to);
    let (mut start, mut end) = (from, to);
    for &(s, e) in &list[lo..hi] {
        start = start.min(s);
        end = end.max(e);
        *covered -= e - s;
    }
    *covered += end - start;
    list.splice(lo..hi, std::iter::once((start, end)));
    *covered
}

/// The span labels of one query, indexed per document: spans sorted by
/// start, so the spans a chunk overlaps are found by a binary search and a
/// short scan, however many spans and chunks there are.
#[derive(Debug, Clone)]
pub struct SpanIndex {
    coverage: f64,
    /// (start, end, grade) per span, in gold order.
    spans: Vec<(u64, u64, i32)>,
    by_doc: HashMap<String, DocSpans>,
}

#[derive(Debug, Clone, Default)]
struct DocSpans {
    /// Span indices sorted by start.
    order: Vec<u32>,
    /// The longest span of the document: no span that starts more than
    /// this before a chunk can reach it.
    max_len: u64,
}

impl SpanIndex {
    fn new(q: &GoldQuery, coverage: f64) -> SpanIndex {
        let spans: Vec<(u64, u64, i32)> = q.spans.iter().map(|s| (s.start, s.end, s.grade)).collect();
        let mut by_doc: HashMap<String, DocSpans> = HashMap::new();
        for (i, s) in q.spans.iter().enumerate() {
            let d = by_doc.entry(s.doc.clone()).or_default();
            d.order.push(i as u32);
            d.max_len = d.max_len.max(s.end.saturating_sub(s.start));
        }
        for d in by_doc.values_mut() {
            d.order.sort_unstable_by_key(|&i| spans[i as usize].0);
        }
        SpanIndex {
            coverage,
            spans,
            by_doc,
        }
    }

    /// Indices of the spans that share some text with `loc`.
    fn overlapping<'s>(&'s self, loc: &Located) -> impl Iterator<Item = usize> + 's {
        let (start, end) = (loc.start, loc.end);
        let (order, from): (&[u32], usize) = match self.by_doc.get(loc.doc) {
            Some(d) => {
                let lowest = start.saturating_sub(d.max_len);
                let from = d.order.partition_point(|&i| self.spans[i as usize].0 < lowest);
                (&d.order, from)
            }
            None => (&[], 0),
        };
        order[from..]
            .iter()
            .map(|&i| i as usize)
            .take_while(move |&i| self.spans[i].0 < end)
            .filter(move |&i| self.spans[i].1 > start)
    }
}

/// Label lookup for one query: an open-addressing table over the label ids,
/// probed with the same hash the TREC reader computes once per line (and
/// reuses to drop repeated ids). A retrieved id that carries no label, the
/// usual case, costs one hash and one or two table reads instead of a
/// comparison with every label.
///
/// Everything lives in one allocation, little-endian words then bytes:
/// the table, `slots` pairs of (label index + 1, high half of the id's
/// hash), 0 marking an empty slot; the end of each label's id in the
/// packed ids; each label's grade; the packed ids. A gold set of 70,000
/// queries makes 70,000 of these before any run can be read: one
/// allocation each instead of three, and a third fewer bytes, where page
/// faults cost as much as the work. A slot carries enough of the hash to
/// turn away a different id without reading any label.
#[derive(Debug, Clone)]
pub struct QueryLabels {
    data: Box<[u8]>,
    /// Table slots, a power of two (1 with no labels).
    slots: u32,
    /// Labels.
    len: u32,
    /// The query's span labels; `None` for the usual query without any.
    spans: Option<Box<SpanIndex>>,
}

/// The little-endian word at byte `at`.
#[inline(always)]
fn word_at(data: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&data[at..at + 4]);
    u32::from_le_bytes(w)
}

impl QueryLabels {
    pub fn new(q: &GoldQuery) -> QueryLabels {
        QueryLabels::with_coverage(q, DEFAULT_SPAN_COVERAGE)
    }

    /// Whether the query has span labels, so that results need locations.
    #[inline]
    pub fn has_spans(&self) -> bool {
        self.spans.is_some()
    }

    /// Whether a located chunk shares any text with a span of the query:
    /// the only chunks span judging needs to see.
    pub fn touches(&self, loc: &Located) -> bool {
        self.spans
            .as_deref()
            .is_some_and(|sp| sp.overlapping(loc).next().is_some())
    }

    /// Labels judged at a span coverage in (0, 1].
    pub fn with_coverage(q: &GoldQuery, coverage: f64) -> QueryLabels {
        let n = q.labels.len();
        let slots = if n == 0 { 1 } else { (n * 2).next_power_of_two() };
        // The gold set keeps a query's ids packed already: one copy.
        let ids = q.labels.id_bytes().as_bytes();
        let mut data = vec![0u8; slots * 8 + n * 8 + ids.len()];
        let (table, rest) = data.split_at_mut(slots * 8);
        let (ends, rest) = rest.split_at_mut(n * 4);
        let (grades, arena) = rest.split_at_mut(n * 4);
        arena.copy_from_slice(ids);
        let mask = slots - 1;
        let mut end = 0usize;
        let records = ends.chunks_exact_mut(4).zip(grades.chunks_exact_mut(4));
        for (i, (l, (e, g))) in q.labels.iter().zip(records).enumerate() {
            let id = l.id.as_bytes();
            end += id.len();
            e.copy_from_slice(&(end as u32).to_le_bytes());
            g.copy_from_slice(&l.grade.to_le_bytes());
            let h = doc_hash(id);
            let mut slot = h as usize & mask;
            while table[slot * 8..slot * 8 + 4] != [0; 4] {
                slot = (slot + 1) & mask;
            }
            let entry = (u64::from(i as u32 + 1)) | (h >> 32) << 32;
            table[slot * 8..slot * 8 + 8].copy_from_slice(&entry.to_le_bytes());
        }
        QueryLabels {
            data: data.into(),
            slots: slots as u32,
            len: n as u32,
            spans: (!q.spans.is_empty()).then(|| Box::new(SpanIndex::new(q, coverage))),
        }
    }

    #[inline]
    pub fn grade(&self, doc: &[u8]) -> Option<i32> {
        if self.len == 0 {
            return None;
        }
        self.grade_hashed(doc, doc_hash(doc))
    }

    /// [`QueryLabels::grade`] with `hash == doc_hash(doc)` already known.
    /// Always inlined: the TREC reader calls it once per run line, and as
    /// a call its prologue and epilogue were a quarter of its instructions.
    #[inline(always)]
    pub fn grade_hashed(&self, doc: &[u8], hash: u64) -> Option<i32> {
        let d = &self.data[..];
        let mask = self.slots as usize - 1;
        let tag = (hash >> 32) as u32;
        let mut slot = hash as usize & mask;
        loop {
            let i = word_at(d, slot * 8) as usize;
            if i == 0 {
                return None;
            }
            if word_at(d, slot * 8 + 4) == tag {
                let ends = self.slots as usize * 8;
                let arena = ends + self.len as usize * 8;
                let end = word_at(d, ends + (i - 1) * 4) as usize;
                let start = if i == 1 {
                    0
                } else {
                    word_at(d, ends + (i - 2) * 4) as usize
                };
                if d.get(arena + start..arena + end)
                    .is_some_and(|id| same_id(id, doc))
                {
                    let grades = ends + self.len as usize * 4;
                    return Some(word_at(d, grades + (i - 1) * 4) as i32);
                }
            }
            slot = (slot + 1) & mask;
        }
    }
}

/// FNV-1a folded 8 bytes at a time: ids are short, and this only has to
/// spread them over a per-query table. Shared by the label lookup and the
/// TREC reader's duplicate check, so each retrieved id is hashed once.
/// The last 1-7 bytes are folded as one word (the length is hashed too),
/// not a multiply each: MS MARCO's ids are 1-7 digits. The value is never
/// stored, so it may change between versions.
#[inline]
pub fn doc_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x0000_0100_0000_01b3;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let v = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h ^ v).wrapping_mul(K).rotate_left(23);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        h = (h ^ crate::gold::short_word(rest))
            .wrapping_mul(K)
            .rotate_left(23);
    }
    h ^ (h >> 29)
}

/// Per-query label lookups for a whole gold set, built once per evaluation,
/// before any run can be read: on every core (in query order).
pub fn label_index(gold: &GoldSet) -> Vec<QueryLabels> {
    label_index_at(gold, DEFAULT_SPAN_COVERAGE)
}

/// [`label_index`] at a span coverage other than the default.
pub fn label_index_at(gold: &GoldSet, coverage: f64) -> Vec<QueryLabels> {
    gold.queries
        .par_iter()
        .map(|q| QueryLabels::with_coverage(q, coverage))
        .collect()
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
    /// Labels of grade 0: with `ideal`, every judged grade's count (the
    /// measures of judged non-relevant documents, bpref's and the gain
    /// tables', need them).
    pub zeros: u32,
}

impl QueryContext {
    /// Labels judged not relevant: a grade from 0 below the relevance level
    /// (trec_eval sums `rel_levels` below `-l`).
    pub fn num_nonrel(&self) -> u32 {
        let below = self
            .ideal
            .iter()
            .filter(|&&g| g < f64::from(self.relevance_level))
            .count() as u32;
        if self.relevance_level > 0 {
            self.zeros + below
        } else {
            0
        }
    }

    /// (grade, labels) for grade 0 and each positive grade judged, by
    /// increasing grade; empty when no label has a grade of 0 or more.
    pub fn grade_counts(&self) -> Vec<(i64, u32)> {
        if self.ideal.is_empty() && self.zeros == 0 {
            return Vec::new();
        }
        let mut out = vec![(0i64, self.zeros)];
        for g in self.ideal.iter().rev() {
            let g = *g as i64;
            match out.last_mut() {
                Some(last) if last.0 == g => last.1 += 1,
                _ => out.push((g, 1)),
            }
        }
        out
    }

    /// The same query counted from relevance level `level` (ir_measures'
    /// `rel=`).
    pub fn at_level(&self, level: i32) -> QueryContext {
        let mut c = self.clone();
        c.relevance_level = level;
        let positive = self.ideal.iter().filter(|&&g| g >= f64::from(level)).count() as u32;
        c.num_rel = if level <= 0 {
            positive + self.zeros
        } else {
            positive
        };
        c
    }

    pub fn new(q: &GoldQuery, relevance_level: i32) -> QueryContext {
        let mut num_rel = 0u32;
        let mut zeros = 0u32;
        let mut gains = 0;
        // How many labels of each grade 1..=SMALL: grades are nearly always
        // small, and then the ideal ranking is written out largest first
        // with no sort (a sort per query was a third of building these).
        const SMALL: usize = 8;
        let mut count = [0usize; SMALL];
        let mut small = true;
        for g in q.grades() {
            num_rel += u32::from(is_relevant(g, relevance_level));
            zeros += u32::from(g == 0);
            if g > 0 {
                gains += 1;
                match count.get_mut(g as usize - 1) {
                    Some(c) => *c += 1,
                    None => small = false,
                }
            }
        }
        // Counted first: room for exactly the positive grades, not every
        // label (a query's many judged-irrelevant labels would be 8 bytes
        // each, 70,000 times over, before any run is read).
        let mut ideal: Vec<f64> = Vec::with_capacity(gains);
        if small {
            for (g, &n) in count.iter().enumerate().rev() {
                ideal.extend(std::iter::repeat_n(g as f64 + 1.0, n));
            }
        } else {
            ideal.extend(q.grades().filter(|&g| g > 0).map(f64::from));
            // Equal gains are equal bits: an unstable sort gives the same
            // order.
            ideal.sort_unstable_by(|a, b| b.total_cmp(a));
        }
        QueryContext {
            num_rel,
            ideal,
            relevance_level,
            zeros,
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

/// Contexts for every query of a gold set, on every core (in query order).
pub fn contexts(gold: &GoldSet, relevance_level: i32) -> Vec<QueryContext> {
    gold.queries
        .par_iter()
        .map(|q| QueryContext::new(q, relevance_level))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_of_intervals_counts_shared_text_once() {
        let mut list = Vec::new();
        let mut covered = 0;
        assert_eq!(union_len(&mut list, &mut covered, 10, 20), 10);
        assert_eq!(union_len(&mut list, &mut covered, 30, 40), 20);
        // Touching [20, 30) joins all three.
        assert_eq!(union_len(&mut list, &mut covered, 15, 35), 30);
        assert_eq!(list, [(10, 40)]);
        assert_eq!(union_len(&mut list, &mut covered, 0, 5), 35);
        assert_eq!(union_len(&mut list, &mut covered, 40, 41), 36);
        assert_eq!(union_len(&mut list, &mut covered, 12, 13), 36);
        assert_eq!(list, [(0, 5), (10, 41)]);
    }
    use crate::gold::Label;

    #[test]
    fn label_lookup_finds_every_label_and_nothing_else() {
        for n in [0usize, 1, 3, 12, 13, 200] {
            let q = GoldQuery {
                id: "q".into(),
                text: None,
                stratum: 0,
                spans: Vec::new(),
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

    #[test]
    fn ideal_gains_are_the_positive_grades_largest_first() {
        let q = |grades: &[i32]| GoldQuery {
            id: "q".into(),
            text: None,
            stratum: 0,
            spans: Vec::new(),
            labels: grades
                .iter()
                .enumerate()
                .map(|(i, &grade)| Label {
                    id: format!("d{i}"),
                    grade,
                })
                .collect(),
        };
        let c = QueryContext::new(&q(&[1, 3, 0, 2, -1, 2, 8]), 2);
        assert_eq!(c.ideal, [8.0, 3.0, 2.0, 2.0, 1.0]);
        assert_eq!(c.num_rel, 4);
        // A grade past the counted ones: sorted instead, the same order.
        let c = QueryContext::new(&q(&[9, 1, 0, 1000, 3, i32::MAX]), 1);
        assert_eq!(c.ideal, [2147483647.0, 1000.0, 9.0, 3.0, 1.0]);
        assert_eq!(c.num_rel, 5);
        assert!(QueryContext::new(&q(&[0, -2]), 0).ideal.is_empty());
    }

    #[test]
    fn label_lookup_keeps_any_grade_and_id_length() {
        let long = "x".repeat(300);
        let labels = [
            ("", 7),
            ("a", i32::MIN),
            ("ab", i32::MAX),
            (long.as_str(), -1),
            ("é#0", 0),
        ];
        let q = GoldQuery {
            id: "q".into(),
            text: None,
            stratum: 0,
            spans: Vec::new(),
            labels: labels
                .iter()
                .map(|&(id, grade)| Label { id: id.into(), grade })
                .collect(),
        };
        let l = QueryLabels::new(&q);
        for (id, grade) in labels {
            assert_eq!(l.grade(id.as_bytes()), Some(grade), "{id:?}");
            assert_eq!(
                l.grade_hashed(id.as_bytes(), doc_hash(id.as_bytes())),
                Some(grade),
                "{id:?}"
            );
        }
        assert_eq!(l.grade(&long.as_bytes()[1..]), None);
        assert_eq!(l.grade("b".as_bytes()), None);
    }
}
