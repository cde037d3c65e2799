//! JSON and JSONL runs. The list order is the ranking; a `{docid: score}`
//! object (pytrec_eval's run dict) is ranked by trec_eval's rule instead.
//! Result items may be ids or objects with `id` (and `score`, and, later,
//! span locations): unknown keys in a result object are left alone so
//! retrievers can attach what they like.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use anyhow::Result;
use serde_json::{Map, Value};

use super::{keep_depth, JudgedRun, KeepIds, RunFormat, Tally};
use crate::diag::{input_error, input_error_hint, line_of};
use crate::gold::GoldSet;
use crate::judge::{QueryLabels, Ranking};

pub fn read(
    path: &Path,
    format: RunFormat,
    gold: &GoldSet,
    labels: &[QueryLabels],
    keep: KeepIds,
) -> Result<JudgedRun> {
    let bytes = std::fs::read(path).map_err(|e| input_error(path, None, format!("cannot read run: {e}")))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| input_error(path, Some(line_of(&bytes, e.valid_up_to())), "not valid UTF-8"))?;
    let mut acc = Acc::new(path, gold, labels, keep);
    match format {
        RunFormat::Jsonl => {
            let mut first_line: HashMap<String, usize> = HashMap::new();
            for (i, line) in text.lines().enumerate() {
                let t = line.trim();
                if t.is_empty() {
                    continue;
                }
                let line_no = i + 1;
                let v: Value = serde_json::from_str(t).map_err(|e| {
                    input_error_hint(
                        path,
                        Some(line_no),
                        format!("not a JSON object: {e}"),
                        "JSONL runs have one {\"query_id\": ..., \"results\": [...]} object per line",
                    )
                })?;
                let Value::Object(mut obj) = v else {
                    return Err(input_error_hint(
                        path,
                        Some(line_no),
                        "expected an object",
                        "JSONL runs have one {\"query_id\": ..., \"results\": [...]} object per line",
                    ));
                };
                let qid = match obj.remove("query_id") {
                    Some(Value::String(s)) => s,
                    Some(Value::Number(n)) => n.to_string(),
                    Some(_) => return Err(input_error(path, Some(line_no), "`query_id` must be a string")),
                    None => {
                        return Err(input_error_hint(
                            path,
                            Some(line_no),
                            "missing `query_id`",
                            "each line is {\"query_id\": \"q1\", \"results\": [...]}",
                        ))
                    }
                };
                let results = obj.remove("results").ok_or_else(|| {
                    input_error_hint(
                        path,
                        Some(line_no),
                        format!("query `{qid}`: missing `results`"),
                        "each line is {\"query_id\": \"q1\", \"results\": [...]}",
                    )
                })?;
                if let Some(first) = first_line.insert(qid.clone(), line_no) {
                    return Err(input_error_hint(
                        path,
                        Some(line_no),
                        format!("query `{qid}` appears again (first at line {first})"),
                        "give each query one line with its whole ranking",
                    ));
                }
                acc.query(&qid, &results, Some(line_no))?;
            }
        }
        _ => {
            let v: Value = serde_json::from_str(text).map_err(|e| {
                input_error_hint(
                    path,
                    Some(e.line()),
                    format!("invalid JSON: {e}"),
                    "a JSON run maps query ids to ranked lists: {\"q1\": [\"c7\", \"c1\"]}",
                )
            })?;
            let Value::Object(map) = v else {
                return Err(input_error_hint(
                    path,
                    Some(1),
                    "expected an object of query id to ranking",
                    "a JSON run maps query ids to ranked lists: {\"q1\": [\"c7\", \"c1\"]}",
                ));
            };
            for (qid, results) in &map {
                let line = locate_key(text, qid);
                acc.query(qid, results, line)?;
            }
        }
    }
    Ok(acc.finish(format))
}

/// The line of `"key":` in the text (serde_json keeps no positions).
fn locate_key(text: &str, key: &str) -> Option<usize> {
    let needle = serde_json::to_string(key).ok()?;
    let mut from = 0;
    while let Some(p) = text[from..].find(&needle) {
        let at = from + p;
        let rest = text[at + needle.len()..].trim_start();
        if rest.starts_with(':') {
            return Some(line_of(text.as_bytes(), at));
        }
        from = at + needle.len();
    }
    None
}

struct Acc<'a> {
    path: &'a Path,
    gold: &'a GoldSet,
    labels: &'a [QueryLabels],
    depth: Option<usize>,
    rankings: Vec<Ranking>,
    present: Vec<bool>,
    ids: Vec<Vec<String>>,
    tally: Tally,
}

impl<'a> Acc<'a> {
    fn new(path: &'a Path, gold: &'a GoldSet, labels: &'a [QueryLabels], keep: KeepIds) -> Self {
        let depth = keep_depth(keep);
        Acc {
            path,
            gold,
            labels,
            depth,
            rankings: vec![Ranking::default(); gold.len()],
            present: vec![false; gold.len()],
            ids: if depth.is_some() {
                vec![Vec::new(); gold.len()]
            } else {
                Vec::new()
            },
            tally: Tally::default(),
        }
    }

    fn query(&mut self, qid: &str, results: &Value, line: Option<usize>) -> Result<()> {
        let ordered = match results {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, item)| self.item_id(qid, i, item, line))
                .collect::<Result<Vec<&str>>>()?,
            Value::Object(scores) => self.by_score(qid, scores, line)?,
            _ => {
                return Err(input_error_hint(
                    self.path,
                    line,
                    format!("query `{qid}`: results must be a list"),
                    "write the ranking as [\"c7\", \"c1\"] or [{\"id\": \"c7\", \"score\": 0.8}]",
                ))
            }
        };
        let Some(q) = self.gold.position(qid) else {
            self.tally.extra_queries += 1;
            return Ok(());
        };
        let mut seen: HashSet<&str> = HashSet::with_capacity(ordered.len());
        let mut unique = Vec::with_capacity(ordered.len());
        let mut dropped = 0;
        for id in ordered {
            if seen.insert(id) {
                unique.push(id);
            } else {
                dropped += 1;
            }
        }
        if dropped > 0 {
            self.tally.duplicate_ids += dropped;
            self.tally.duplicate_queries.push(q);
        }
        self.rankings[q] = Ranking::from_ordered(unique.iter().copied(), &self.labels[q]);
        self.present[q] = true;
        if let Some(d) = self.depth {
            self.ids[q] = unique.iter().take(d).map(|s| s.to_string()).collect();
        }
        Ok(())
    }

    fn item_id<'v>(&self, qid: &str, i: usize, item: &'v Value, line: Option<usize>) -> Result<&'v str> {
        let bad = |what: &str| {
            input_error_hint(
                self.path,
                line,
                format!("query `{qid}`, result {}: {what}", i + 1),
                "a result is an id string or {\"id\": \"c7\", \"score\": 0.83}",
            )
        };
        match item {
            Value::String(s) => Ok(s),
            Value::Object(o) => {
                let id = match o.get("id") {
                    Some(Value::String(s)) => s.as_str(),
                    Some(_) => return Err(bad("`id` must be a string")),
                    None => return Err(bad("missing `id`")),
                };
                match o.get("score") {
                    None | Some(Value::Null) => {}
                    Some(Value::Number(n)) if n.as_f64().is_some_and(f64::is_finite) => {}
                    Some(_) => return Err(bad("`score` must be a finite number")),
                }
                Ok(id)
            }
            _ => Err(bad("expected an id or an object")),
        }
    }

    /// `{docid: score}`: score descending, ties by docid descending.
    fn by_score<'v>(
        &self,
        qid: &str,
        scores: &'v Map<String, Value>,
        line: Option<usize>,
    ) -> Result<Vec<&'v str>> {
        let mut pairs = Vec::with_capacity(scores.len());
        for (doc, s) in scores {
            let score = s.as_f64().filter(|v| v.is_finite()).ok_or_else(|| {
                input_error_hint(
                    self.path,
                    line,
                    format!("query `{qid}`, document `{doc}`: score must be a finite number"),
                    "a scored ranking maps ids to numbers: {\"c7\": 0.83}",
                )
            })?;
            pairs.push((doc.as_str(), score));
        }
        pairs.sort_by(|a, b| {
            b.1.partial_cmp(&a.1)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(b.0.cmp(a.0))
        });
        Ok(pairs.into_iter().map(|(d, _)| d).collect())
    }

    fn finish(self, format: RunFormat) -> JudgedRun {
        let top_ids = self.depth.map(|_| self.ids);
        JudgedRun::finish(
            self.path,
            format,
            self.gold,
            self.rankings,
            self.present,
            top_ids,
            self.tally,
        )
    }
}
