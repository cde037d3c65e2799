//! JSON and JSONL runs. The list order is the ranking; a `{docid: score}`
//! object (pytrec_eval's and ranx's run dict) is ranked by trec_eval's rule
//! instead. Result items may be ids or objects with an id (and `score`,
//! and its location, `doc`, `start`, `end`, for gold sets with span
//! labels): unknown keys in a result object are left alone so retrievers
//! can attach what they like.
//!
//! Other tools' spellings are read as they are written, where the meaning
//! is unambiguous: the query id as `query_id` or `qid`; the ranking as
//! `results`, `docs` or `hits`; a result's id as `id`, `doc_id`, `docid` or
//! `docno`. `query` is not taken for the id: tools use it for the query's
//! text. A JSONL file may instead hold one scored document per line
//! (`{"query_id": "q1", "doc_id": "c7", "score": 0.83}`, ir_datasets'
//! ScoredDoc), ranked per query by trec_eval's rule.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use anyhow::Result;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{keep_depth, JudgedRun, KeepIds, RunFormat, Tally};
use crate::chunks::ChunkMap;
use crate::diag::{clip_message, excerpt, input_error, input_error_hint, line_of, looks_binary, strip_bom};
use crate::gold::GoldSet;
use crate::judge::{Located, Place, QueryLabels, Ranking};

/// Reads and judges a JSON or JSONL run; also returns how many results
/// carried a location of their own.
pub fn read(
    path: &Path,
    format: RunFormat,
    gold: &GoldSet,
    labels: &[QueryLabels],
    keep: KeepIds,
    chunks: Option<&ChunkMap>,
) -> Result<(JudgedRun, usize)> {
    let mut acc = Acc::new(path, gold, labels, keep, chunks);
    match format {
        RunFormat::Jsonl => {
            // Streamed: memory is one line (at most LINE_LIMIT) and what
            // is kept per query, whatever the file's size.
            let mut lines = crate::input::Lines::open(path, "JSONL run", "check the path")?;
            read_lines(path, &mut lines, &mut acc)?
        }
        _ => {
            let raw = crate::input::read(
                path,
                "JSON run",
                crate::input::JSON_RUN_LIMIT,
                "check the path; runs are TREC, JSON or JSONL files",
            )?;
            let bytes = strip_bom(&raw);
            let text = std::str::from_utf8(bytes)
                .map_err(|e| input_error(path, Some(line_of(bytes, e.valid_up_to())), "not valid UTF-8"))?;
            // The map's values stay unparsed text until their turn, so a
            // large run costs its size and one query's ranking, not the
            // whole tree of values at once.
            let Entries(entries) = serde_json::from_str(text).map_err(|e| {
                input_error_hint(
                    path,
                    Some(e.line()),
                    format!("invalid JSON: {}", json_message(&e)),
                    "a JSON run maps query ids to ranked lists: {\"q1\": [\"c7\", \"c1\"]}",
                )
            })?;
            let mut first: HashMap<&str, usize> = HashMap::new();
            // Entries come in the file's order, so each line number is the
            // last one plus the newlines since: counting from the start for
            // every query made a 100,000-query run take 16 s.
            let (mut counted_to, mut line) = (0usize, 1usize);
            for (qid, results) in &entries {
                // The value's own offset in the text (RawValue borrows
                // from it): the line of `"q1": [`.
                let at = results.get().as_ptr() as usize - text.as_ptr() as usize;
                if at >= counted_to {
                    line += memchr::memchr_iter(b'\n', &text.as_bytes()[counted_to..at]).count();
                    counted_to = at;
                } else {
                    line = line_of(text.as_bytes(), at);
                    counted_to = at;
                }
                if let Some(f) = first.insert(qid.as_str(), line) {
                    return Err(input_error_hint(
                        path,
                        Some(line),
                        format!("query `{}` appears again (first at line {f})", excerpt(qid)),
                        "give each query one entry with its whole ranking",
                    ));
                }
                let Strict(results) = serde_json::from_str(results.get()).map_err(|e| {
                    input_error_hint(
                        path,
                        Some(line + e.line() - 1),
                        format!("query `{}`: invalid JSON: {}", excerpt(qid), json_message(&e)),
                        "a JSON run maps query ids to ranked lists: {\"q1\": [\"c7\", \"c1\"]}",
                    )
                })?;
                acc.query(qid, &results, Some(line))?;
            }
        }
    }
    let located = acc.located;
    let places = std::mem::take(&mut acc.places);
    let mut judged = acc.finish(format);
    if gold.has_spans() && judged.top_ids.is_some() {
        judged.top_places = Some(places);
    }
    Ok((judged, located))
}

/// Judges rankings already in memory (a Python dict, say), with the rules a
/// JSON run's rankings follow: repeats dropped (the first counts), queries
/// not in the gold set counted, gold queries not given reported absent.
/// The caller has refused a query given twice.
pub(super) fn judge_ranked<'i>(
    path: &Path,
    gold: &GoldSet,
    labels: &[QueryLabels],
    keep: KeepIds,
    chunks: Option<&ChunkMap>,
    queries: impl IntoIterator<Item = (&'i str, Vec<&'i str>)>,
) -> JudgedRun {
    let mut acc = Acc::new(path, gold, labels, keep, chunks);
    for (qid, ids) in queries {
        acc.ranked(qid, ids.into_iter().map(|d| (d, None)).collect());
    }
    let places = std::mem::take(&mut acc.places);
    let mut judged = acc.finish(RunFormat::Json);
    if gold.has_spans() && judged.top_ids.is_some() {
        judged.top_places = Some(places);
    }
    judged
}

/// Spellings of a query's id in a JSONL line, in the order they are tried.
pub(crate) const QUERY_KEYS: [&str; 2] = ["query_id", "qid"];
/// Spellings of a query's ranking.
const RESULTS_KEYS: [&str; 3] = ["results", "docs", "hits"];
/// Spellings of a result's (or a scored document's) id.
const DOC_KEYS: [&str; 4] = ["id", "doc_id", "docid", "docno"];

const LINE_HINT: &str = "each line is {\"query_id\": \"q1\", \"results\": [...]}, or one scored document {\"query_id\": \"q1\", \"doc_id\": \"c7\", \"score\": 0.83}";

/// The one key of `keys` that `obj` has: `Ok(None)` for none, an error
/// naming both when two spellings of one field meet.
fn pick<'o>(
    obj: &'o Map<String, Value>,
    keys: &[&'static str],
) -> Result<Option<(&'static str, &'o Value)>, String> {
    let mut found: Option<(&'static str, &Value)> = None;
    for &k in keys {
        if let Some(v) = obj.get(k) {
            if let Some((first, _)) = found {
                return Err(format!(
                    "both `{first}` and `{k}` are given; they mean the same field"
                ));
            }
            found = Some((k, v));
        }
    }
    Ok(found)
}

/// An id written as a JSON string or number.
fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// JSONL: one query per line with its ranking, or one scored document per
/// line (all lines of a file one way or the other).
fn read_lines<R: std::io::BufRead>(
    path: &Path,
    lines: &mut crate::input::Lines<R>,
    acc: &mut Acc,
) -> Result<()> {
    let mut first_line: HashMap<String, usize> = HashMap::new();
    // Scored documents per query, in order of first appearance.
    let mut scored: Vec<(String, Vec<(String, f64)>)> = Vec::new();
    let mut scored_at: HashMap<String, usize> = HashMap::new();
    let mut ranked_lines = 0usize;
    let mut buf = Vec::new();
    while let Some(line_no) = lines.next_line(&mut buf)? {
        if looks_binary(&buf) {
            return Err(input_error_hint(
                path,
                Some(line_no),
                "not a text file (it contains NUL bytes), so not a run",
                "check the path; runs are TREC, JSON or JSONL text files",
            ));
        }
        let line =
            std::str::from_utf8(&buf).map_err(|_| input_error(path, Some(line_no), "not valid UTF-8"))?;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let Strict(v) = serde_json::from_str(t).map_err(|e| {
            input_error_hint(
                path,
                Some(line_no),
                format!("not a JSON object: {}", json_message(&e)),
                LINE_HINT,
            )
        })?;
        let Value::Object(obj) = v else {
            return Err(input_error_hint(
                path,
                Some(line_no),
                "expected an object",
                LINE_HINT,
            ));
        };
        let bad = |msg: String| input_error_hint(path, Some(line_no), msg, LINE_HINT);
        let qid = match pick(&obj, &QUERY_KEYS).map_err(bad)? {
            Some((k, v)) => id_text(v).ok_or_else(|| bad(format!("`{k}` must be a string")))?,
            None => return Err(bad("missing `query_id` (or `qid`)".into())),
        };
        match pick(&obj, &RESULTS_KEYS).map_err(bad)? {
            Some((_, results)) => {
                if !scored.is_empty() {
                    return Err(bad(format!(
                        "query `{}`: a ranking line in a file of scored-document lines",
                        excerpt(&qid)
                    )));
                }
                ranked_lines += 1;
                if let Some(first) = first_line.insert(qid.clone(), line_no) {
                    return Err(input_error_hint(
                        path,
                        Some(line_no),
                        format!("query `{}` appears again (first at line {first})", excerpt(&qid)),
                        "give each query one line with its whole ranking",
                    ));
                }
                acc.query(&qid, results, Some(line_no))?;
            }
            None => {
                let doc = match pick(&obj, &DOC_KEYS).map_err(bad)? {
                    Some((k, v)) => id_text(v).ok_or_else(|| bad(format!("`{k}` must be a string")))?,
                    None => {
                        return Err(bad(format!(
                            "query `{}`: missing `results` (or `docs`, `hits`)",
                            excerpt(&qid)
                        )))
                    }
                };
                if ranked_lines > 0 {
                    return Err(bad(format!(
                        "query `{}`: a scored-document line in a file of ranking lines",
                        excerpt(&qid)
                    )));
                }
                let score = obj
                    .get("score")
                    .and_then(Value::as_f64)
                    .filter(|s| s.is_finite())
                    .ok_or_else(|| {
                        bad(format!(
                            "query `{}`, document `{}`: a scored-document line needs a finite `score`",
                            excerpt(&qid),
                            excerpt(&doc)
                        ))
                    })?;
                let at = *scored_at.entry(qid.clone()).or_insert_with(|| {
                    scored.push((qid, Vec::new()));
                    scored.len() - 1
                });
                scored[at].1.push((doc, score));
            }
        }
    }
    for (qid, mut docs) in scored {
        sort_trec(&mut docs);
        acc.ranked(&qid, docs.iter().map(|(d, _)| (d.as_str(), None)).collect());
    }
    Ok(())
}

/// trec_eval's order: score descending, ties by id descending.
pub(super) fn sort_trec<S: AsRef<str>>(pairs: &mut [(S, f64)]) {
    pairs.sort_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(b.0.as_ref().cmp(a.0.as_ref()))
    });
}

/// A JSON value as serde_json reads one, except that an object giving a
/// key twice is refused: serde_json keeps the last silently (RFC 8259
/// §4: names "SHOULD be unique", and parsers differ on which one wins), so
/// `{"query_id": "q1", "results": [...], "results": [...]}` would score a
/// ranking the retriever may not have meant.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> std::result::Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Value, D::Error> {
        Strict::deserialize(d).map(|s| s.0)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if out.contains_key(&k) {
                return Err(de::Error::custom(format!(
                    "the key `{}` is given twice in one object",
                    excerpt(&k)
                )));
            }
            let Strict(v) = map.next_value()?;
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

/// A JSON run's top-level map, each query's ranking left as text.
struct Entries<'t>(Vec<(String, &'t RawValue)>);

impl<'de> Deserialize<'de> for Entries<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of query id to ranking")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    out.push((k, map.next_value::<&'de RawValue>()?));
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// serde_json's message, with the depth limit said plainly and any quoted
/// value cut to an excerpt.
fn json_message(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    if msg.starts_with("recursion limit exceeded") {
        return format!("nested more than 128 levels deep at column {}", e.column());
    }
    clip_message(&msg)
}

struct Acc<'a> {
    path: &'a Path,
    gold: &'a GoldSet,
    labels: &'a [QueryLabels],
    chunks: Option<&'a ChunkMap>,
    depth: Option<usize>,
    /// Results that carried their own location.
    located: usize,
    /// Where each kept top id lies, for gold sets with span labels.
    places: Vec<Vec<Option<Place>>>,
    rankings: Vec<Ranking>,
    present: Vec<bool>,
    ids: Vec<Vec<String>>,
    tally: Tally,
}

impl<'a> Acc<'a> {
    fn new(
        path: &'a Path,
        gold: &'a GoldSet,
        labels: &'a [QueryLabels],
        keep: KeepIds,
        chunks: Option<&'a ChunkMap>,
    ) -> Self {
        let depth = keep_depth(keep);
        Acc {
            path,
            gold,
            labels,
            chunks,
            depth,
            located: 0,
            places: if depth.is_some() && gold.has_spans() {
                vec![Vec::new(); gold.len()]
            } else {
                Vec::new()
            },
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
                .map(|(i, item)| self.item(qid, i, item, line))
                .collect::<Result<Vec<(&str, Option<Located>)>>>()?,
            Value::Object(scores) => self
                .by_score(qid, scores, line)?
                .into_iter()
                .map(|d| (d, None))
                .collect(),
            _ => {
                return Err(input_error_hint(
                    self.path,
                    line,
                    format!("query `{}`: results must be a list", excerpt(qid)),
                    "write the ranking as [\"c7\", \"c1\"] or [{\"id\": \"c7\", \"score\": 0.8}]",
                ))
            }
        };
        self.ranked(qid, ordered);
        Ok(())
    }

    /// Judges one query's ranked ids (repeats dropped, first counts).
    fn ranked(&mut self, qid: &str, ordered: Vec<(&str, Option<Located>)>) {
        self.located += ordered.iter().filter(|(_, l)| l.is_some()).count();
        let Some(q) = self.gold.position(qid) else {
            self.tally.extra_queries += 1;
            return;
        };
        let mut seen: HashSet<&str> = HashSet::with_capacity(ordered.len());
        let mut unique = Vec::with_capacity(ordered.len());
        let mut dropped = 0;
        for item in ordered {
            if seen.insert(item.0) {
                unique.push(item);
            } else {
                dropped += 1;
            }
        }
        if dropped > 0 {
            self.tally.duplicate_ids += dropped;
            self.tally.duplicate_queries.push(q);
        }
        let labels = &self.labels[q];
        self.rankings[q] = if labels.has_spans() {
            let chunks = self.chunks;
            let mut unlocated = 0;
            let r = Ranking::from_located(
                unique.iter().map(|&(id, loc)| {
                    let loc = loc.or_else(|| chunks.and_then(|c| c.get(id)));
                    if loc.is_none() {
                        unlocated += 1;
                    }
                    (id, loc)
                }),
                labels,
            );
            self.tally.unlocated += unlocated;
            r
        } else {
            Ranking::from_ordered(unique.iter().map(|&(id, _)| id), labels)
        };
        self.present[q] = true;
        if let Some(d) = self.depth {
            self.ids[q] = unique.iter().take(d).map(|(s, _)| s.to_string()).collect();
            if !self.places.is_empty() {
                let chunks = self.chunks;
                self.places[q] = unique
                    .iter()
                    .take(d)
                    .map(|&(id, loc)| loc.or_else(|| chunks.and_then(|c| c.get(id))).map(Place::from))
                    .collect();
            }
        }
    }

    /// A result: its id, and its location when it carries one.
    fn item<'v>(
        &self,
        qid: &str,
        i: usize,
        item: &'v Value,
        line: Option<usize>,
    ) -> Result<(&'v str, Option<Located<'v>>)> {
        let bad = |what: &str| {
            input_error_hint(
                self.path,
                line,
                format!("query `{}`, result {}: {what}", excerpt(qid), i + 1),
                "a result is an id string or {\"id\": \"c7\", \"score\": 0.83} (the id may be spelled doc_id, docid or docno)",
            )
        };
        match item {
            Value::String(s) => Ok((s, None)),
            Value::Object(o) => {
                let id = match pick(o, &DOC_KEYS).map_err(|e| bad(&e))? {
                    Some((_, Value::String(s))) => s.as_str(),
                    Some((k, _)) => return Err(bad(&format!("`{k}` must be a string"))),
                    None => return Err(bad("missing `id`")),
                };
                match o.get("score") {
                    None | Some(Value::Null) => {}
                    Some(Value::Number(n)) if n.as_f64().is_some_and(f64::is_finite) => {}
                    Some(_) => return Err(bad("`score` must be a finite number")),
                }
                let loc = match (o.get("doc"), o.get("start"), o.get("end")) {
                    (None, None, None) => None,
                    (Some(Value::String(doc)), Some(start), Some(end)) if !doc.is_empty() => {
                        let offset = |v: &Value, key: &str| {
                            v.as_u64()
                                .ok_or_else(|| bad(&format!("`{key}` must be an integer offset, 0 or more")))
                        };
                        let (start, end) = (offset(start, "start")?, offset(end, "end")?);
                        if start >= end {
                            return Err(bad(&format!(
                                "start {start} and end {end}: end is exclusive and must be greater than start"
                            )));
                        }
                        Some(Located { doc, start, end })
                    }
                    (Some(Value::String(_)), Some(_), Some(_)) => return Err(bad("`doc` is empty")),
                    (Some(_), Some(_), Some(_)) => return Err(bad("`doc` must be a string")),
                    _ => return Err(bad("a location needs all of `doc`, `start` and `end`")),
                };
                Ok((id, loc))
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
                    format!(
                        "query `{}`, document `{}`: score must be a finite number",
                        excerpt(qid),
                        excerpt(doc)
                    ),
                    "a scored ranking maps ids to numbers: {\"c7\": 0.83}",
                )
            })?;
            pairs.push((doc.as_str(), score));
        }
        sort_trec(&mut pairs);
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
