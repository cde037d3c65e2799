//! `gold import`: merges a sheet's graded rows into a native gold set, with
//! each label's provenance, keeping ids, strata, texts and existing labels.
//!
//! A conflict (the sheet grades a chunk the gold set grades differently, or
//! two sheet rows disagree) writes nothing unless the caller says which side
//! wins: a silent overwrite of a reviewed label is how gold sets rot.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;
use serde_json::{json, Map, Value};

use super::provenance::Provenance;
use super::sheet::{SheetRow, MODEL, PERSON};
use crate::diag::input_error_hint;
use crate::fsutil::write_atomic;
use crate::gold::{id_of, GoldDoc, GoldFormat, GoldSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefer {
    Sheet,
    Gold,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct ImportOptions {
    pub accept_unverified: bool,
    pub prefer: Option<Prefer>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    pub query_id: String,
    pub chunk_id: String,
    /// What the sides say, e.g. "sheet 2 (ana), gold 0".
    pub detail: String,
}

#[derive(Debug, Default, PartialEq)]
pub struct ImportReport {
    pub added_labels: usize,
    pub changed_labels: usize,
    pub unchanged_labels: usize,
    pub added_queries: usize,
    /// Unverified model suggestions left out.
    pub skipped_unverified: usize,
    pub conflicts: Vec<Conflict>,
}

/// One graded (query, chunk) as the sheet settles it.
struct Graded<'a> {
    row: &'a SheetRow,
    grade: i32,
}

/// Merges `rows` into the gold set at `into`. With conflicts and no
/// `prefer`, nothing is written and the report lists them.
pub fn import(rows: &[SheetRow], into: &Path, opts: ImportOptions) -> Result<ImportReport> {
    // A gold set that does not exist yet starts empty, in the form its
    // extension names (YAML by default).
    let exists = into.exists();
    let gold = if exists {
        GoldSet::load(into, None)?.0
    } else {
        let format = match into.extension().and_then(|e| e.to_str()) {
            Some("json") => GoldFormat::Json,
            Some("jsonl") => GoldFormat::Jsonl,
            _ => GoldFormat::Yaml,
        };
        GoldSet::from_parts(into, format, Vec::new(), Vec::new())?
    };
    if gold.format == GoldFormat::Qrels {
        return Err(input_error_hint(
            into,
            None,
            "labels with provenance need a native gold set (YAML, JSON or JSONL), not TREC qrels",
            "convert the qrels to YAML first, or import into a new gold.yaml",
        ));
    }
    let mut report = ImportReport::default();

    // The sheet's word per (query, chunk): later rows win between sheet rows
    // only when the caller chose a side.
    let mut order: Vec<(String, String)> = Vec::new();
    let mut settled: HashMap<(String, String), Graded> = HashMap::new();
    for row in rows {
        let Some(grade) = row.grade else {
            continue;
        };
        if !row.verified && !opts.accept_unverified {
            report.skipped_unverified += 1;
            continue;
        }
        let key = (row.query_id.clone(), row.chunk_id.clone());
        match settled.get(&key) {
            Some(prev) if prev.grade != grade && opts.prefer.is_none() => {
                report.conflicts.push(Conflict {
                    query_id: key.0.clone(),
                    chunk_id: key.1.clone(),
                    detail: format!(
                        "sheet rows say {} and {}",
                        who(prev.row, prev.grade),
                        who(row, grade)
                    ),
                });
            }
            Some(_) => {
                settled.insert(key, Graded { row, grade });
            }
            None => {
                order.push(key.clone());
                settled.insert(key, Graded { row, grade });
            }
        }
    }
    let existing: HashMap<(&str, &str), i32> = gold
        .queries
        .iter()
        .flat_map(|q| q.labels.iter().map(move |l| ((q.id.as_str(), l.id), l.grade)))
        .collect();
    let mut apply: Vec<&(String, String)> = Vec::new();
    for key in &order {
        let g = &settled[key];
        match existing.get(&(key.0.as_str(), key.1.as_str())) {
            Some(&old) if old == g.grade => report.unchanged_labels += 1,
            Some(&old) => match opts.prefer {
                None => report.conflicts.push(Conflict {
                    query_id: key.0.clone(),
                    chunk_id: key.1.clone(),
                    detail: format!("sheet {}, gold {old}", who(g.row, g.grade)),
                }),
                Some(Prefer::Gold) => report.unchanged_labels += 1,
                Some(Prefer::Sheet) => {
                    report.changed_labels += 1;
                    apply.push(key);
                }
            },
            None => {
                report.added_labels += 1;
                apply.push(key);
            }
        }
    }
    if !report.conflicts.is_empty() {
        return Ok(report);
    }

    let mut doc = if exists {
        GoldDoc::read(into, gold.format)?
    } else {
        GoldDoc::empty(gold.format)
    };
    let queries = &mut doc.queries;
    let mut position: HashMap<String, usize> =
        queries.iter().enumerate().map(|(i, q)| (id_of(q), i)).collect();
    // Each touched query's labels, starting from the gold set's, in order.
    let mut labels: HashMap<usize, Vec<(String, i32)>> = HashMap::new();
    for key in apply {
        let g = &settled[key];
        let qi = match position.get(&key.0) {
            Some(&i) => i,
            None => {
                let mut q = Map::new();
                q.insert("id".into(), json!(key.0));
                if !g.row.query.is_empty() {
                    q.insert("text".into(), json!(g.row.query));
                }
                if !g.row.stratum.is_empty() {
                    q.insert("stratum".into(), json!(g.row.stratum));
                }
                queries.push(Value::Object(q));
                report.added_queries += 1;
                position.insert(key.0.clone(), queries.len() - 1);
                queries.len() - 1
            }
        };
        let ls = labels.entry(qi).or_insert_with(|| match gold.position(&key.0) {
            Some(p) => gold.queries[p]
                .labels
                .iter()
                .map(|l| (l.id.to_string(), l.grade))
                .collect(),
            None => Vec::new(),
        });
        match ls.iter_mut().find(|(id, _)| *id == key.1) {
            Some(l) => l.1 = g.grade,
            None => ls.push((key.1.clone(), g.grade)),
        }
        let prov = Provenance {
            source: g.row.source.clone().unwrap_or_else(|| PERSON.into()),
            labeler: g.row.labeler.clone(),
            at: g.row.labeled_at.clone(),
            verified: g.row.verified,
        };
        let q = queries[qi].as_object_mut().expect("gold queries are objects");
        let p = q.entry("provenance").or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = p {
            m.insert(key.1.clone(), serde_json::to_value(prov)?);
        }
    }
    for (qi, ls) in labels {
        set_relevant(&mut queries[qi], ls);
    }
    let out = doc.render();
    write_atomic(into, out.as_bytes())?;
    Ok(report)
}

/// Writes a query's labels into `relevant`, in order: a list while the
/// query had a list (or none) and every grade is 1, a map otherwise.
fn set_relevant(q: &mut Value, all: Vec<(String, i32)>) {
    let was_list = matches!(
        q.get("relevant"),
        Some(Value::Array(_)) | None | Some(Value::Null)
    );
    let relevant = if was_list && all.iter().all(|(_, g)| *g == 1) {
        Value::Array(all.into_iter().map(|(id, _)| json!(id)).collect())
    } else {
        Value::Object(all.into_iter().map(|(id, g)| (id, json!(g))).collect())
    };
    // Span labels stay, after the ids.
    let relevant = super::migrate::with_spans(q.get("relevant"), relevant);
    if let Some(o) = q.as_object_mut() {
        o.insert("relevant".into(), relevant);
    }
}

fn who(row: &SheetRow, grade: i32) -> String {
    let src = match row.source.as_deref() {
        Some(MODEL) => "model ",
        _ => "",
    };
    match &row.labeler {
        Some(l) => format!("{grade} ({src}{l})"),
        None => format!("{grade}"),
    }
}
