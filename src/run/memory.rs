//! Runs held in memory rather than in a file: what a Python caller has
//! (pytrec_eval's and ir_measures' `{qid: {doc: score}}`, a ranked
//! `{qid: [doc, ...]}`, a DataFrame's rows), judged by the same code as a
//! JSON run ([`super::json`]) with the same ranking rule as TREC input:
//! scores descending, ties broken by document id descending (trec_eval's
//! rule), so a dict and the TREC file written from it score alike.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;
use rayon::prelude::*;

use super::trec::{QueryBuf, UNLABELED};
use super::{json, keep_depth, JudgedRun, KeepIds, RunFormat, RunOptions, Tally};
use crate::diag::{excerpt, input_error_hint};
use crate::gold::GoldSet;
use crate::judge::{doc_hash, QueryLabels, Ranking};

/// One query's results.
#[derive(Debug, Clone, PartialEq)]
pub enum Ranked {
    /// Already in rank order, best first.
    Ids(Vec<String>),
    /// Scored, in any order: ranked by trec_eval's rule.
    Scored(Vec<(String, f64)>),
    /// Either of the two with the ids packed into one buffer: what the
    /// Python module builds, one allocation per query where `Ids` and
    /// `Scored` take one per id (7 million for a 70,000 x 100 run, and as
    /// many frees).
    Packed(Packed),
}

/// A query's documents, their ids back to back in one string: a ranked
/// list (best first), or scored documents in any order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Packed {
    text: String,
    /// Where each id ends in `text`.
    ends: Vec<usize>,
    /// Each document's score; `None` for a ranked list.
    scores: Option<Vec<f64>>,
}

impl Packed {
    /// An empty ranked list: documents are pushed best first.
    pub fn ranked() -> Packed {
        Packed::default()
    }

    /// An empty set of scored documents.
    pub fn scored() -> Packed {
        Packed {
            scores: Some(Vec::new()),
            ..Packed::default()
        }
    }

    /// Room for `n` documents whose ids take `bytes` bytes together.
    pub fn reserve(&mut self, n: usize, bytes: usize) {
        self.text.reserve(bytes);
        self.ends.reserve(n);
        if let Some(s) = &mut self.scores {
            s.reserve(n);
        }
    }

    /// Appends a document; `score` is kept only by a scored set (a ranked
    /// list's order is its ranking).
    pub fn push(&mut self, id: &str, score: f64) {
        self.text.push_str(id);
        self.ends.push(self.text.len());
        if let Some(s) = &mut self.scores {
            s.push(score);
        }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Bytes of all the ids together.
    pub fn text_len(&self) -> usize {
        self.text.len()
    }

    pub fn is_scored(&self) -> bool {
        self.scores.is_some()
    }

    /// The `i`th document's id.
    pub fn id(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }

    /// Each document's id, with its score when the set is scored.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Option<f64>)> + '_ {
        (0..self.len()).map(|i| (self.id(i), self.scores.as_ref().map(|s| s[i])))
    }
}

/// A run in memory. `name` stands where a file's path would in warnings
/// and errors.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRun {
    pub name: String,
    pub queries: Vec<(String, Ranked)>,
}

/// Builds a run from `(query, document, score)` rows, queries in order of
/// first appearance, each query's documents packed ([`Ranked::Packed`]).
#[derive(Debug, Default)]
pub struct RowsBuilder {
    queries: Vec<(String, Ranked)>,
    at: HashMap<String, usize>,
}

impl RowsBuilder {
    pub fn push(&mut self, query: &str, doc: &str, score: f64) {
        let i = match self.at.get(query) {
            Some(&i) => i,
            None => {
                self.at.insert(query.to_string(), self.queries.len());
                self.queries
                    .push((query.to_string(), Ranked::Packed(Packed::scored())));
                self.queries.len() - 1
            }
        };
        if let Ranked::Packed(p) = &mut self.queries[i].1 {
            p.push(doc, score);
        }
    }

    pub fn finish(self, name: impl Into<String>) -> MemoryRun {
        MemoryRun {
            name: name.into(),
            queries: self.queries,
        }
    }
}

/// Queries judged together on one thread, sharing its buffers.
const JUDGE_CHUNK: usize = 512;

/// What judging one query of a run gave.
enum Judged {
    /// The gold set has no such query.
    Extra,
    Gold {
        position: usize,
        ranking: Ranking,
        top_ids: Option<Vec<String>>,
        /// Repeated ids dropped.
        dropped: usize,
    },
}

impl MemoryRun {
    /// A run from `(query, document, score)` rows (a DataFrame's, or a
    /// TREC file's lines), queries in order of first appearance. A
    /// document given twice for a query keeps its best-ranked row, as a
    /// TREC run's does, with the same warning.
    pub fn from_rows<Q: AsRef<str>, D: AsRef<str>>(
        name: impl Into<String>,
        rows: impl IntoIterator<Item = (Q, D, f64)>,
    ) -> MemoryRun {
        let mut b = RowsBuilder::default();
        for (q, d, s) in rows {
            b.push(q.as_ref(), d.as_ref(), s);
        }
        b.finish(name)
    }

    /// Ranks and judges the run against the gold set. A query given twice,
    /// a score that is not finite, and span labels without a way to locate
    /// the results are errors, as they are in a file.
    pub fn judge(&self, gold: &GoldSet, labels: &[QueryLabels], opts: &RunOptions) -> Result<JudgedRun> {
        let path = Path::new(&self.name);
        self.check(path)?;
        if gold.has_spans() {
            if opts.chunks.is_none() {
                return Err(input_error_hint(
                    path,
                    None,
                    format!(
                        "{} has span labels, but this run's results carry no location and no chunk map was given",
                        gold.path.display()
                    ),
                    "evaluate a gold set with span labels from run files, with the chunking's map (rgate eval --chunks FILE)",
                ));
            }
            return Ok(self.judge_located(path, gold, labels, opts));
        }
        Ok(self.judge_ids(path, gold, labels, opts.keep_ids))
    }

    /// Refuses a query given twice and a score that is not finite, naming
    /// the first found in the caller's order.
    fn check(&self, path: &Path) -> Result<()> {
        let hint = "give each query once, with its documents as {doc: score} or as a ranked list";
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(self.queries.len());
        for (i, (qid, ranked)) in self.queries.iter().enumerate() {
            if let Some(first) = seen.insert(qid.as_str(), i) {
                return Err(input_error_hint(
                    path,
                    None,
                    format!(
                        "query `{}` is given twice (entries {} and {})",
                        excerpt(qid),
                        first + 1,
                        i + 1
                    ),
                    hint,
                ));
            }
            let bad = match ranked {
                Ranked::Ids(_) => None,
                Ranked::Scored(pairs) => pairs
                    .iter()
                    .find(|(_, s)| !s.is_finite())
                    .map(|(d, s)| (d.as_str(), *s)),
                Ranked::Packed(p) => p
                    .iter()
                    .find_map(|(d, s)| s.filter(|s| !s.is_finite()).map(|s| (d, s))),
            };
            if let Some((doc, s)) = bad {
                return Err(input_error_hint(
                    path,
                    None,
                    format!(
                        "query `{}`, document `{}`: score {s} is not a finite number",
                        excerpt(qid),
                        excerpt(doc)
                    ),
                    "give every result a finite score (or pass a ranked list of ids)",
                ));
            }
        }
        Ok(())
    }

    /// Judges a run against a gold set without span labels, as the TREC
    /// reader judges a query (its [`QueryBuf`]: each id hashed once for
    /// its label and the repeat check, and only the labeled documents
    /// sorted, not the whole ranking), queries in parallel. A ranked list
    /// enters with scores falling by rank, so that trec_eval's order is
    /// the list's; a repeated id keeps its best-ranked place either way,
    /// as in [`json::judge_ranked`], whose values these are.
    fn judge_ids(&self, path: &Path, gold: &GoldSet, labels: &[QueryLabels], keep: KeepIds) -> JudgedRun {
        let depth = keep_depth(keep);
        let parts: Vec<Vec<Judged>> = self
            .queries
            .par_chunks(JUDGE_CHUNK)
            .map(|chunk| {
                let mut buf = QueryBuf::default();
                let mut table = Vec::new();
                chunk
                    .iter()
                    .map(|(qid, ranked)| judge_query(gold, labels, qid, ranked, depth, &mut buf, &mut table))
                    .collect()
            })
            .collect();
        let mut rankings = vec![Ranking::default(); gold.len()];
        let mut present = vec![false; gold.len()];
        let mut top_ids = depth.map(|_| vec![Vec::new(); gold.len()]);
        let mut tally = Tally::default();
        for judged in parts.into_iter().flatten() {
            match judged {
                Judged::Extra => tally.extra_queries += 1,
                Judged::Gold {
                    position,
                    ranking,
                    top_ids: ids,
                    dropped,
                } => {
                    if dropped > 0 {
                        tally.duplicate_ids += dropped;
                        tally.duplicate_queries.push(position);
                    }
                    rankings[position] = ranking;
                    present[position] = true;
                    if let (Some(all), Some(ids)) = (top_ids.as_mut(), ids) {
                        all[position] = ids;
                    }
                }
            }
        }
        JudgedRun::finish(path, RunFormat::Json, gold, rankings, present, top_ids, tally)
    }

    /// Judges a run against a gold set with span labels, through the JSON
    /// reader's rankings: each result located by the chunk map.
    fn judge_located(
        &self,
        path: &Path,
        gold: &GoldSet,
        labels: &[QueryLabels],
        opts: &RunOptions,
    ) -> JudgedRun {
        let ordered = self.queries.iter().map(|(qid, ranked)| {
            let ids: Vec<&str> = match ranked {
                Ranked::Ids(ids) => ids.iter().map(String::as_str).collect(),
                Ranked::Scored(pairs) => {
                    let mut pairs: Vec<(&str, f64)> = pairs.iter().map(|(d, s)| (d.as_str(), *s)).collect();
                    json::sort_trec(&mut pairs);
                    pairs.into_iter().map(|(d, _)| d).collect()
                }
                Ranked::Packed(p) if p.is_scored() => {
                    let mut pairs: Vec<(&str, f64)> = p.iter().map(|(d, s)| (d, s.unwrap_or(0.0))).collect();
                    json::sort_trec(&mut pairs);
                    pairs.into_iter().map(|(d, _)| d).collect()
                }
                Ranked::Packed(p) => p.iter().map(|(d, _)| d).collect(),
            };
            (qid.as_str(), ids)
        });
        json::judge_ranked(path, gold, labels, opts.keep_ids, opts.chunks.as_deref(), ordered)
    }
}

/// One query of [`MemoryRun::judge_ids`], in `buf` (left empty after).
fn judge_query(
    gold: &GoldSet,
    labels: &[QueryLabels],
    qid: &str,
    ranked: &Ranked,
    depth: Option<usize>,
    buf: &mut QueryBuf,
    table: &mut Vec<u32>,
) -> Judged {
    let Some(position) = gold.position(qid) else {
        return Judged::Extra;
    };
    let l = &labels[position];
    let mut push = |doc: &str, score: f64| {
        let h = doc_hash(doc.as_bytes());
        let grade = l.grade_hashed(doc.as_bytes(), h).unwrap_or(UNLABELED);
        buf.push(doc.as_bytes(), h, score, grade);
    };
    // A list's rank as a score: the first highest, each next one lower,
    // never tied (exact below 2^53 entries).
    let by_rank = |i: usize| -(i as f64);
    match ranked {
        Ranked::Ids(ids) => ids.iter().enumerate().for_each(|(i, d)| push(d, by_rank(i))),
        Ranked::Scored(pairs) => pairs.iter().for_each(|(d, s)| push(d, *s)),
        Ranked::Packed(p) => p
            .iter()
            .enumerate()
            .for_each(|(i, (d, s))| push(d, s.unwrap_or_else(|| by_rank(i)))),
    }
    let dropped = buf.dedupe(table);
    let (ranking, top_ids) = buf.judge(depth, None);
    buf.clear();
    Judged::Gold {
        position,
        ranking,
        top_ids,
        dropped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gold::MemoryGold;
    use crate::judge::{label_index, Hit};

    fn gold() -> (GoldSet, Vec<QueryLabels>) {
        let g = MemoryGold {
            name: "gold".into(),
            queries: vec![
                ("q1".into(), vec![("a".into(), 1), ("b".into(), 2)]),
                ("q2".into(), vec![("x".into(), 1)]),
                ("q3".into(), vec![("z".into(), 3)]),
            ],
            strata: None,
        };
        let (gold, _) = g.build().unwrap();
        let labels = label_index(&gold);
        (gold, labels)
    }

    fn packed(scored: bool, docs: &[(&str, f64)]) -> Ranked {
        let mut p = if scored {
            Packed::scored()
        } else {
            Packed::ranked()
        };
        for (d, s) in docs {
            p.push(d, *s);
        }
        Ranked::Packed(p)
    }

    fn hits(h: &[(u32, i32)]) -> Vec<Hit> {
        h.iter().map(|&(rank, grade)| Hit { rank, grade }).collect()
    }

    /// Rankings worked out by hand: q1 scored, `a` and `c` tied at 0.5 (so
    /// `c`, the larger id, first), `a` given twice (its better row counts);
    /// q2 a ranked list repeating `y`; q9 not in the gold set; q3 absent.
    /// Each form of the same rankings (packed, owned, and through the JSON
    /// reader's path that gold sets with spans take) gives them.
    #[test]
    fn packed_owned_and_located_paths_rank_and_judge_alike() {
        let (gold, labels) = gold();
        let q1 = [("a", 0.5), ("b", 0.9), ("c", 0.5), ("a", 0.1)];
        let q2 = ["y", "x", "y", "w"];
        let runs = [
            vec![
                ("q1".to_string(), packed(true, &q1)),
                ("q2".to_string(), packed(false, &q2.map(|d| (d, 0.0)))),
                ("q9".to_string(), packed(false, &[("a", 0.0)])),
            ],
            vec![
                (
                    "q1".to_string(),
                    Ranked::Scored(q1.iter().map(|(d, s)| (d.to_string(), *s)).collect()),
                ),
                (
                    "q2".to_string(),
                    Ranked::Ids(q2.iter().map(|d| d.to_string()).collect()),
                ),
                ("q9".to_string(), Ranked::Ids(vec!["a".into()])),
            ],
        ];
        let opts = RunOptions {
            keep_ids: KeepIds::Depth(2),
            ..RunOptions::default()
        };
        for queries in runs {
            let run = MemoryRun {
                name: "run".into(),
                queries,
            };
            let path = Path::new("run");
            for judged in [
                run.judge(&gold, &labels, &opts).unwrap(),
                run.judge_located(path, &gold, &labels, &opts),
            ] {
                // q1: b 0.9, c 0.5, a 0.5 (a's 0.1 row dropped).
                assert_eq!(judged.rankings[0].num_ret, 3);
                assert_eq!(judged.rankings[0].hits, hits(&[(1, 2), (3, 1)]));
                // q2: y, x, w.
                assert_eq!(judged.rankings[1].num_ret, 3);
                assert_eq!(judged.rankings[1].hits, hits(&[(2, 1)]));
                assert_eq!(judged.rankings[2], Ranking::default());
                assert_eq!(judged.present, [true, true, false]);
                let top = judged.top_ids.as_ref().unwrap();
                assert_eq!(top[0], ["b", "c"]);
                assert_eq!(top[1], ["y", "x"]);
                assert!(top[2].is_empty());
                let w = judged.warnings.0.join("\n");
                assert!(w.contains("run: 1 of 3 gold queries is absent"), "{w}");
                assert!(
                    w.contains("run: 1 query is not in the gold set gold; ignored"),
                    "{w}"
                );
                assert!(
                    w.contains("run: 2 repeated document ids within a query's ranking (first occurrence counts), in `q1`, `q2`"),
                    "{w}"
                );
            }
        }
    }

    /// Rows group by query in order of first appearance, each query's
    /// documents packed with their scores.
    #[test]
    fn rows_group_by_query_into_packed_ids() {
        type Grouped<'a> = Vec<(&'a str, Vec<(&'a str, Option<f64>)>)>;
        let run = MemoryRun::from_rows("r", [("q2", "d1", 1.0), ("q1", "é", 0.5), ("q2", "", 2.0)]);
        let ids: Grouped = run
            .queries
            .iter()
            .map(|(q, r)| match r {
                Ranked::Packed(p) => (q.as_str(), p.iter().collect()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            ids,
            [
                ("q2", vec![("d1", Some(1.0)), ("", Some(2.0))]),
                ("q1", vec![("é", Some(0.5))]),
            ]
        );
    }
}
