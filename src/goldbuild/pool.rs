//! `gold pool`: TREC-style pooling. For each query, the union of the top K
//! of every run is what a person judges; a chunk no run retrieves cannot
//! change any run's metrics, so it need not be judged.
//!
//! Candidates are listed in a seeded order, not by any run's rank, so the
//! labeler is not nudged by position (a chunk shown first reads as more
//! relevant), and rows for labels the gold set already has come pre-filled.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::provenance::{self, Provenance};
use super::seeded_key;
use super::sheet::{SheetRow, PERSON};
use crate::diag::{excerpt, input_error, input_error_hint, Warnings};
use crate::gold::GoldSet;
use crate::judge;
use crate::run::{self, KeepIds, RunOptions};

pub struct PoolInputs<'a> {
    /// The queries to pool for: `gold sample`'s output, or any gold set.
    pub queries: &'a Path,
    pub runs: &'a [PathBuf],
    pub depth: u32,
    /// JSONL `{"id", "text"}`: chunk text for the labeler.
    pub corpus: Option<&'a Path>,
    /// An existing gold set whose labels pre-fill the sheet.
    pub gold: Option<&'a Path>,
    pub seed: u64,
}

/// The labeling sheet's rows, query by query in the queries file's order.
pub fn pool(inp: &PoolInputs) -> Result<(Vec<SheetRow>, Warnings)> {
    let (mut queries, mut warnings) = GoldSet::load(inp.queries, None)?;
    // Pooling reads only the runs' top ids: span labels, which would need
    // the runs' chunk maps to judge, play no part in it.
    for q in &mut queries.queries {
        q.spans.clear();
    }
    if queries.is_empty() {
        return Err(input_error_hint(
            inp.queries,
            None,
            "no queries to pool for",
            "make a queries file with `rgate gold sample --log LOG`",
        ));
    }
    let labels = judge::label_index(&queries);
    let opts = RunOptions {
        format: None,
        keep_ids: KeepIds::Depth(inp.depth),
        chunks: None,
    };
    let mut pooled: Vec<Vec<String>> = vec![Vec::new(); queries.len()];
    let mut seen: Vec<HashSet<String>> = vec![HashSet::new(); queries.len()];
    for path in inp.runs {
        let judged = run::read(path, &queries, &labels, &opts)?;
        for w in judged.warnings.iter() {
            warnings.push(w.clone());
        }
        let top = judged.top_ids.unwrap_or_default();
        for (q, ids) in top.into_iter().enumerate() {
            for id in ids {
                if seen[q].insert(id.clone()) {
                    pooled[q].push(id);
                }
            }
        }
    }
    let existing: HashMap<(String, String), (i32, Option<Provenance>)> = match inp.gold {
        Some(g) => {
            let (gold, w) = GoldSet::load(g, None)?;
            for x in w.iter() {
                warnings.push(x.clone());
            }
            let prov = provenance::read(g)?;
            let mut m = HashMap::new();
            for q in &gold.queries {
                for l in &q.labels {
                    let p = prov.get(&q.id).and_then(|p| p.get(l.id)).cloned();
                    m.insert((q.id.clone(), l.id.to_string()), (l.grade, p));
                }
            }
            m
        }
        None => HashMap::new(),
    };
    let wanted: HashSet<&str> = pooled.iter().flatten().map(String::as_str).collect();
    let texts = match inp.corpus {
        Some(c) => corpus_texts(c, &wanted)?,
        None => HashMap::new(),
    };
    if let Some(corpus) = inp.corpus {
        let missing = wanted.iter().filter(|id| !texts.contains_key(**id)).count();
        if missing > 0 {
            warnings.push(format!(
                "{}: {missing} pooled chunk{} not in the corpus; their rows have no text",
                corpus.display(),
                if missing == 1 { " is" } else { "s are" }
            ));
        }
    }
    let mut rows = Vec::new();
    for (qi, q) in queries.queries.iter().enumerate() {
        let mut ids = pooled[qi].clone();
        ids.sort_by_key(|id| seeded_key(inp.seed, &[&q.id, id]));
        for id in ids {
            let mut row = SheetRow {
                query_id: q.id.clone(),
                query: q.text.clone().unwrap_or_default(),
                stratum: queries.stratum_name(qi).to_string(),
                chunk_id: id.clone(),
                text: texts.get(&id).cloned(),
                grade: None,
                source: None,
                labeler: None,
                verified: false,
                labeled_at: None,
            };
            if let Some((grade, prov)) = existing.get(&(q.id.clone(), id.clone())) {
                row.grade = Some(*grade);
                match prov {
                    Some(p) => {
                        row.source = Some(p.source.clone());
                        row.labeler = p.labeler.clone();
                        row.verified = p.verified;
                        row.labeled_at = p.at.clone();
                    }
                    None => {
                        row.source = Some(PERSON.into());
                        row.labeler = Some("gold".into());
                        row.verified = true;
                    }
                }
            }
            rows.push(row);
        }
    }
    Ok((rows, warnings))
}

const CORPUS_HINT: &str = "the corpus is JSONL {\"id\", \"text\"}";

/// One corpus line's id and text.
fn corpus_row(path: &Path, line_no: usize, buf: &[u8]) -> Result<Option<(String, String)>> {
    let line = std::str::from_utf8(buf).map_err(|_| input_error(path, Some(line_no), "not valid UTF-8"))?;
    let t = line.trim();
    if t.is_empty() {
        return Ok(None);
    }
    #[derive(serde::Deserialize)]
    struct Chunk {
        id: serde_json::Value,
        text: String,
    }
    let c: Chunk = serde_json::from_str(t)
        .map_err(|e| input_error_hint(path, Some(line_no), format!("not a corpus row: {e}"), CORPUS_HINT))?;
    let id = match c.id {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    };
    Ok(Some((id, c.text)))
}

/// The texts of the wanted chunks, reading the corpus line by line so a
/// corpus larger than memory still works (one line at most
/// [`crate::input::LINE_LIMIT`]). An id given twice is refused, wanted or
/// not: which text a labeler would see would depend on the order. Ids are
/// remembered by a 64-bit hash and their line (16 bytes each, not the id),
/// and a repeated hash is confirmed by reading the first line again.
fn corpus_texts(path: &Path, wanted: &HashSet<&str>) -> Result<HashMap<String, String>> {
    let mut lines = crate::input::Lines::open(path, "corpus", CORPUS_HINT)?;
    let mut out = HashMap::new();
    let mut seen: HashMap<u64, u32> = HashMap::new();
    let mut buf = Vec::new();
    while let Some(line_no) = lines.next_line(&mut buf)? {
        let Some((id, text)) = corpus_row(path, line_no, &buf)? else {
            continue;
        };
        let h = judge::doc_hash(id.as_bytes());
        match seen.get(&h) {
            None => {
                seen.insert(h, u32::try_from(line_no).unwrap_or(u32::MAX));
            }
            Some(&first) => {
                if corpus_id_at(path, first as usize)?.as_deref() == Some(id.as_str()) {
                    return Err(input_error_hint(
                        path,
                        Some(line_no),
                        format!(
                            "corpus id `{}` appears again (first at line {first})",
                            excerpt(&id)
                        ),
                        "give each chunk one line in the corpus",
                    ));
                }
            }
        }
        if wanted.contains(id.as_str()) {
            out.insert(id, text);
        }
    }
    Ok(out)
}

/// The id on line `n` of the corpus (a repeated hash's first line).
fn corpus_id_at(path: &Path, n: usize) -> Result<Option<String>> {
    let mut lines = crate::input::Lines::open(path, "corpus", CORPUS_HINT)?;
    let mut buf = Vec::new();
    while let Some(line_no) = lines.next_line(&mut buf)? {
        if line_no == n {
            return Ok(corpus_row(path, line_no, &buf)?.map(|(id, _)| id));
        }
    }
    Ok(None)
}
