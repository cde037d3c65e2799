//! `gold migrate`: rewrites a gold set's chunk-id labels as span labels,
//! once, through the chunk map of the chunking they were written against,
//! so an existing gold set survives the next change of chunker.
//!
//! All or nothing: an id the map does not know is listed and nothing is
//! written (a label silently dropped is a query that can no longer be hit).
//! The file is rewritten atomically under its lock, as `gold import` writes,
//! keeping every other field of every query.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;
use serde_json::{json, Map, Value};

use crate::chunks::ChunkMap;
use crate::diag::input_error_hint;
use crate::fsutil::Rewrite;
use crate::gold::{id_of, GoldDoc, GoldFormat, GoldSet};
use crate::origin::now_utc;

#[derive(Debug, Default, PartialEq)]
pub struct MigrateReport {
    /// Chunk-id labels turned into spans.
    pub migrated: usize,
    /// Queries whose labels changed.
    pub queries: usize,
    /// Labels that landed on a span the query had already (two chunk ids
    /// with one location, or an id and an existing span): kept once, at
    /// the higher grade.
    pub merged: usize,
    /// (query id, chunk id) of labels the map does not know. Non-empty
    /// means nothing was written.
    pub missing: Vec<(String, String)>,
}

/// Rewrites the gold set at `path` in place. With ids missing from the
/// map, writes nothing and lists them.
///
/// Runs under the gold file's lock, reading the file as it is then, so an
/// import that finished meanwhile is kept; `on_wait` hears once if another
/// rgate holds the lock.
pub fn migrate(path: &Path, chunks: &ChunkMap, on_wait: &mut dyn FnMut(&str)) -> Result<MigrateReport> {
    let file = Rewrite::begin(path, &now_utc(), on_wait)?;
    let (gold, _) = GoldSet::load(path, None)?;
    if gold.format == GoldFormat::Qrels {
        return Err(input_error_hint(
            path,
            None,
            "TREC qrels cannot hold span labels",
            "convert the qrels to a YAML or JSONL gold set first, then migrate that",
        ));
    }
    let mut report = MigrateReport::default();
    // Per query id: its new `relevant` list, in label order, spans after.
    let mut rewritten: HashMap<&str, Vec<Value>> = HashMap::new();
    for q in &gold.queries {
        if q.labels.is_empty() {
            continue;
        }
        let mut spans: Vec<(String, u64, u64, i32)> = Vec::new();
        for l in &q.labels {
            match chunks.get(l.id) {
                Some(loc) => {
                    report.migrated += 1;
                    spans.push((loc.doc.to_string(), loc.start, loc.end, l.grade));
                }
                None => report.missing.push((q.id.clone(), l.id.to_string())),
            }
        }
        spans.extend(q.spans.iter().map(|s| (s.doc.clone(), s.start, s.end, s.grade)));
        let mut kept: Vec<(String, u64, u64, i32)> = Vec::with_capacity(spans.len());
        let mut at: HashMap<(String, u64, u64), usize> = HashMap::new();
        for (doc, start, end, grade) in spans {
            match at.get(&(doc.clone(), start, end)) {
                Some(&i) => {
                    report.merged += 1;
                    kept[i].3 = kept[i].3.max(grade);
                }
                None => {
                    at.insert((doc.clone(), start, end), kept.len());
                    kept.push((doc, start, end, grade));
                }
            }
        }
        report.queries += 1;
        rewritten.insert(
            q.id.as_str(),
            kept.into_iter()
                .map(|(doc, start, end, grade)| json!({"doc": doc, "start": start, "end": end, "grade": grade}))
                .collect(),
        );
    }
    if !report.missing.is_empty() || report.migrated == 0 {
        return Ok(report);
    }

    let mut doc = GoldDoc::read(path, gold.format)?;
    for q in &mut doc.queries {
        if let Some(list) = rewritten.get(id_of(q).as_str()) {
            if let Some(o) = q.as_object_mut() {
                o.insert("relevant".into(), Value::Array(list.clone()));
            }
        }
    }
    let out = doc.render();
    file.write(out.as_bytes())?;
    Ok(report)
}

/// A `relevant:` value keeping its span items, for writers that replace a
/// query's chunk-id labels (`gold import`): the spans follow the ids.
pub fn with_spans(old: Option<&Value>, ids: Value) -> Value {
    let spans: Vec<Value> = match old {
        Some(Value::Array(items)) => items.iter().filter(|v| v.get("doc").is_some()).cloned().collect(),
        _ => Vec::new(),
    };
    if spans.is_empty() {
        return ids;
    }
    let mut list: Vec<Value> = match ids {
        Value::Array(a) => a,
        Value::Object(m) => m
            .into_iter()
            .map(|(id, g)| {
                let mut o = Map::new();
                o.insert("id".into(), Value::String(id));
                o.insert("grade".into(), g);
                Value::Object(o)
            })
            .collect(),
        other => vec![other],
    };
    list.extend(spans);
    Value::Array(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_keeps_span_items_after_the_ids() {
        let old = json!(["a", {"doc": "d", "start": 0, "end": 5, "grade": 2}]);
        // Ids written as a map (graded) become items, the span follows.
        assert_eq!(
            with_spans(Some(&old), json!({"a": 1, "b": 3})),
            json!([{"id": "a", "grade": 1}, {"id": "b", "grade": 3}, {"doc": "d", "start": 0, "end": 5, "grade": 2}])
        );
        assert_eq!(
            with_spans(Some(&old), json!(["a", "b"])),
            json!(["a", "b", {"doc": "d", "start": 0, "end": 5, "grade": 2}])
        );
        // No span: the ids as they were written.
        assert_eq!(with_spans(Some(&json!(["a"])), json!({"a": 2})), json!({"a": 2}));
        assert_eq!(with_spans(None, json!(["a"])), json!(["a"]));
    }
}
