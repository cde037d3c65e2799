//! Runs held in memory rather than in a file: what a Python caller has
//! (pytrec_eval's and ir_measures' `{qid: {doc: score}}`, a ranked
//! `{qid: [doc, ...]}`, a DataFrame's rows), judged by the same code as a
//! JSON run ([`super::json`]) with the same ranking rule as TREC input:
//! scores descending, ties broken by document id descending (trec_eval's
//! rule), so a dict and the TREC file written from it score alike.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;

use super::{json, JudgedRun, RunOptions};
use crate::diag::{excerpt, input_error_hint};
use crate::gold::GoldSet;
use crate::judge::QueryLabels;

/// One query's results.
#[derive(Debug, Clone, PartialEq)]
pub enum Ranked {
    /// Already in rank order, best first.
    Ids(Vec<String>),
    /// Scored, in any order: ranked by trec_eval's rule.
    Scored(Vec<(String, f64)>),
}

/// A run in memory. `name` stands where a file's path would in warnings
/// and errors.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRun {
    pub name: String,
    pub queries: Vec<(String, Ranked)>,
}

impl MemoryRun {
    /// A run from `(query, document, score)` rows (a DataFrame's, or a
    /// TREC file's lines), queries in order of first appearance. A
    /// document given twice for a query keeps its best-ranked row, as a
    /// TREC run's does, with the same warning.
    pub fn from_rows(
        name: impl Into<String>,
        rows: impl IntoIterator<Item = (String, String, f64)>,
    ) -> MemoryRun {
        let mut queries: Vec<(String, Ranked)> = Vec::new();
        let mut at: HashMap<String, usize> = HashMap::new();
        for (q, d, s) in rows {
            let i = match at.get(&q) {
                Some(&i) => i,
                None => {
                    at.insert(q.clone(), queries.len());
                    queries.push((q, Ranked::Scored(Vec::new())));
                    queries.len() - 1
                }
            };
            if let Ranked::Scored(v) = &mut queries[i].1 {
                v.push((d, s));
            }
        }
        MemoryRun {
            name: name.into(),
            queries,
        }
    }

    /// Ranks and judges the run against the gold set. A query given twice,
    /// a score that is not finite, and span labels without a way to locate
    /// the results are errors, as they are in a file.
    pub fn judge(&self, gold: &GoldSet, labels: &[QueryLabels], opts: &RunOptions) -> Result<JudgedRun> {
        let path = Path::new(&self.name);
        let hint = "give each query once, with its documents as {doc: score} or as a ranked list";
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(self.queries.len());
        let mut ordered: Vec<(&str, Vec<&str>)> = Vec::with_capacity(self.queries.len());
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
            let ids = match ranked {
                Ranked::Ids(ids) => ids.iter().map(String::as_str).collect(),
                Ranked::Scored(pairs) => {
                    if let Some((doc, s)) = pairs.iter().find(|(_, s)| !s.is_finite()) {
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
                    let mut pairs: Vec<(&str, f64)> = pairs.iter().map(|(d, s)| (d.as_str(), *s)).collect();
                    json::sort_trec(&mut pairs);
                    pairs.into_iter().map(|(d, _)| d).collect()
                }
            };
            ordered.push((qid.as_str(), ids));
        }
        if opts.chunks.is_none() && gold.has_spans() {
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
        Ok(json::judge_ranked(
            path,
            gold,
            labels,
            opts.keep_ids,
            opts.chunks.as_deref(),
            ordered,
        ))
    }
}
