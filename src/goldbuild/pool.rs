//! `gold pool`: TREC-style pooling. For each query, the union of the top K
//! of every run is what a person judges; a chunk no run retrieves cannot
//! change any run's metrics, so it need not be judged.
//!
//! Candidates are listed in a seeded order, not by any run's rank, so the
//! labeler is not nudged by position (a chunk shown first reads as more
//! relevant), and rows for labels the gold set already has come pre-filled.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;

use super::provenance::Provenance;
use super::seeded_key;
use super::sheet::{self, SheetFormat, SheetRow, PERSON};
use crate::chunks::ChunkMap;
use crate::diag::{excerpt, input_error, input_error_hint, usage_error, Warnings};
use crate::fsutil::Rewrite;
use crate::gold::GoldSet;
use crate::judge;
use crate::run::{self, KeepIds, RunOptions};

pub struct PoolInputs<'a> {
    /// The queries to pool for: `gold sample`'s output, or any gold set.
    /// Optional with `holes`, where the gold set's queries are the default.
    pub queries: Option<&'a Path>,
    pub runs: &'a [PathBuf],
    pub depth: u32,
    /// JSONL `{"id", "text"}`: chunk text for the labeler.
    pub corpus: Option<&'a Path>,
    /// An existing gold set whose labels pre-fill the sheet.
    pub gold: Option<&'a Path>,
    pub seed: u64,
    /// Only the holes: the pooled pairs `gold` has no label for.
    pub holes: bool,
    /// Where the runs' chunks lie, for holes of a gold set with span labels
    /// (results that carry their own location need none).
    pub chunks: Option<Arc<ChunkMap>>,
}

/// The labeling sheet's rows, query by query in the queries file's order.
pub fn pool(inp: &PoolInputs) -> Result<(Vec<SheetRow>, Warnings)> {
    let (queries, pooled, mut warnings) = if inp.holes { holes(inp)? } else { candidates(inp)? };
    // Holes carry no label by definition: nothing to pre-fill.
    let existing: HashMap<(String, String), (i32, Option<Provenance>)> = match inp.gold {
        Some(g) if !inp.holes => {
            // Labels and their provenance from one parse of the file.
            let (gold, w) = GoldSet::load_with_provenance(g, None)?;
            for x in w.iter() {
                warnings.push(x.clone());
            }
            let prov = &gold.provenance;
            let mut m = HashMap::new();
            for q in &gold.queries {
                for l in &q.labels {
                    let p = prov.get(&q.id).and_then(|p| p.get(l.id)).cloned();
                    m.insert((q.id.clone(), l.id.to_string()), (l.grade, p));
                }
            }
            m
        }
        _ => HashMap::new(),
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
                ..Default::default()
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

/// The union of every run's top K per query, each id once, in the order
/// the runs list them.
type Pooled = (GoldSet, Vec<Vec<String>>, Warnings);

fn candidates(inp: &PoolInputs) -> Result<Pooled> {
    let Some(path) = inp.queries else {
        return Err(usage_error(
            "gold pool needs --queries (or --holes with --gold)",
            "pass the queries to pool for: `rgate gold sample`'s output, or a gold set",
        ));
    };
    let (mut queries, mut warnings) = GoldSet::load(path, None)?;
    // Pooling reads only the runs' top ids: span labels, which would need
    // the runs' chunk maps to judge, play no part in it.
    for q in &mut queries.queries {
        q.spans.clear();
    }
    if queries.is_empty() {
        return Err(input_error_hint(
            path,
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
        run_warnings(path, &queries, &judged, &mut warnings);
        let top = judged.top_ids.unwrap_or_default();
        for (q, ids) in top.into_iter().enumerate() {
            for id in ids {
                if seen[q].insert(id.clone()) {
                    pooled[q].push(id);
                }
            }
        }
    }
    let empty: Vec<&str> = pooled
        .iter()
        .enumerate()
        .filter(|(_, ids)| ids.is_empty())
        .map(|(i, _)| queries.queries[i].id.as_str())
        .collect();
    if !empty.is_empty() {
        // Such a query gets no row, so no label, so it never enters the
        // gold set; and eval and gate do not score a run's queries that
        // are not in the gold set (SPEC "Runs"): it is not scored at all.
        warnings.push(format!(
            "{} no candidates in any run and no rows in the sheet: {}; no metric will score {} (eval and gate leave out queries the gold set lacks); check that the runs use the queries file's ids",
            crate::diag::count(empty.len(), "query has", "queries have"),
            crate::diag::name_some(&empty, 5),
            if empty.len() == 1 { "it" } else { "them" }
        ));
    }
    Ok((queries, pooled, warnings))
}

/// A run's warnings as pooling should say them: not the evaluators' "they
/// score 0" (pooling scores nothing) but what is true here, that this run
/// adds no candidates for the queries it lacks.
fn run_warnings(path: &Path, queries: &GoldSet, judged: &run::JudgedRun, warnings: &mut Warnings) {
    let scored_zero = run::absent_warning(path, queries, &judged.present);
    for w in judged
        .warnings
        .iter()
        .filter(|w| Some(*w) != scored_zero.as_ref())
    {
        warnings.push(w.clone());
    }
    let absent: Vec<&str> = judged.missing().map(|i| queries.queries[i].id.as_str()).collect();
    if !absent.is_empty() {
        warnings.push(format!(
            "{}: {} of {} queries {} absent from this run, which adds no candidates for {}: {}",
            path.display(),
            absent.len(),
            queries.len(),
            if absent.len() == 1 { "is" } else { "are" },
            if absent.len() == 1 { "it" } else { "them" },
            crate::diag::name_some(&absent, 5)
        ));
    }
}

/// The holes of the gold set in the runs' top K: for each query, the
/// ranked chunks that judged@K does not count as judged, and so exactly
/// what a fall in judged@K reports. Each run is judged against the gold
/// set as the gate judges it (span labels included: a chunk that carries
/// enough of a labeled span is judged, whatever its id), and a rank is a
/// hole when no label with a grade of 0 or more is credited there (a
/// negative grade is "pooled, not judged", as in trec_eval). A chunk that
/// is a hole in any run is listed once.
///
/// The queries are the gold set's, or those of `--queries` with the gold
/// set's labels (a query the gold set lacks has none, so every chunk of
/// its top K is a hole).
fn holes(inp: &PoolInputs) -> Result<Pooled> {
    let Some(gold_path) = inp.gold else {
        return Err(usage_error(
            "--holes needs --gold: the holes are the pairs that gold set has no label for",
            "rgate gold pool --holes --gold GOLD --run RUN --depth K",
        ));
    };
    let (gold, mut warnings) = GoldSet::load(gold_path, None)?;
    // The model's grades by query id, kept before `gold` becomes the
    // query list.
    let model: std::collections::HashMap<String, crate::gold::Labels> = gold
        .labeling
        .model
        .iter()
        .map(|(&p, l)| (gold.queries[p].id.clone(), l.clone()))
        .collect();
    let queries = match inp.queries {
        None => gold,
        Some(path) => {
            let (mut queries, w) = GoldSet::load(path, None)?;
            for x in w.iter() {
                warnings.push(x.clone());
            }
            for q in &mut queries.queries {
                let (labels, spans) = match gold.position(&q.id) {
                    Some(p) => (gold.queries[p].labels.clone(), gold.queries[p].spans.clone()),
                    None => Default::default(),
                };
                q.labels = labels;
                q.spans = spans;
            }
            queries
        }
    };
    if queries.is_empty() {
        return Err(input_error_hint(
            inp.queries.unwrap_or(gold_path),
            None,
            "no queries to pool for",
            "the holes are found for the gold set's queries",
        ));
    }
    let labels = judge::label_index(&queries);
    // A pair the model graded has a grade: no hole (people's grade of it
    // is what `gold verify-sample` asks for, on the drawn queries).
    let model_graded: Vec<HashSet<&str>> = queries
        .queries
        .iter()
        .map(|q| {
            model
                .get(&q.id)
                .map(|m| m.iter().map(|l| l.id).collect())
                .unwrap_or_default()
        })
        .collect();
    let opts = RunOptions {
        format: None,
        keep_ids: KeepIds::Depth(inp.depth),
        chunks: inp.chunks.clone(),
    };
    let mut pooled: Vec<Vec<String>> = vec![Vec::new(); queries.len()];
    let mut seen: Vec<HashSet<String>> = vec![HashSet::new(); queries.len()];
    for path in inp.runs {
        let judged = run::read(path, &queries, &labels, &opts)?;
        run_warnings(path, &queries, &judged, &mut warnings);
        let top = judged.top_ids.unwrap_or_default();
        for (q, ids) in top.into_iter().enumerate() {
            let judged_ranks: HashSet<u32> = judged.rankings[q]
                .chunk_hits()
                .iter()
                .filter(|h| h.grade >= 0)
                .map(|h| h.rank)
                .collect();
            for (i, id) in ids.into_iter().enumerate() {
                let rank = u32::try_from(i + 1).unwrap_or(u32::MAX);
                if !judged_ranks.contains(&rank)
                    && !model_graded[q].contains(id.as_str())
                    && seen[q].insert(id.clone())
                {
                    pooled[q].push(id);
                }
            }
        }
    }
    Ok((queries, pooled, warnings))
}

/// What [`write_into`] did to the sheet file.
#[derive(Debug, Default, PartialEq)]
pub struct Written {
    /// Pooled rows the sheet did not have, now added.
    pub added: usize,
    /// Rows already in the sheet, kept exactly as they were.
    pub kept: usize,
}

/// Writes pooled `rows` to the sheet at `path` under its lock. A sheet
/// already there is merged into, never replaced: its rows stay as they are
/// (grades, labelers, order), and only the (query, chunk) pairs it lacks
/// are added, each after the last row of its query (a new query's rows go
/// at the end), so pooling again with one more run, while people label the
/// sheet, costs no one a grade. The format follows the file's extension, as
/// every reader of the sheet decides it.
pub fn write_into(
    path: &Path,
    rows: Vec<SheetRow>,
    now: &str,
    on_wait: &mut dyn FnMut(&str),
) -> Result<Written> {
    let file = Rewrite::begin(path, now, on_wait)?;
    let existing = if file.exists() {
        sheet::read(file.path())?
    } else {
        Vec::new()
    };
    let (merged, written) = merge(existing, rows);
    file.write(sheet::render(&merged, SheetFormat::of(path))?.as_bytes())?;
    Ok(written)
}

/// The sheet `existing` with the rows of `pooled` it lacks added, each
/// after the last row of its query.
fn merge(existing: Vec<SheetRow>, pooled: Vec<SheetRow>) -> (Vec<SheetRow>, Written) {
    let have: HashSet<(String, String)> = existing
        .iter()
        .map(|r| (r.query_id.clone(), r.chunk_id.clone()))
        .collect();
    let mut fresh: HashMap<String, Vec<SheetRow>> = HashMap::new();
    let mut fresh_order: Vec<String> = Vec::new();
    let mut added = 0;
    for r in pooled {
        if have.contains(&(r.query_id.clone(), r.chunk_id.clone())) {
            continue;
        }
        added += 1;
        if !fresh.contains_key(&r.query_id) {
            fresh_order.push(r.query_id.clone());
        }
        fresh.entry(r.query_id.clone()).or_default().push(r);
    }
    let mut last: HashMap<&str, usize> = HashMap::new();
    for (i, r) in existing.iter().enumerate() {
        last.insert(r.query_id.as_str(), i);
    }
    let after: HashMap<usize, String> = last.iter().map(|(q, &i)| (i, q.to_string())).collect();
    let kept = existing.len();
    let mut out = Vec::with_capacity(kept + added);
    for (i, r) in existing.into_iter().enumerate() {
        out.push(r);
        if let Some(q) = after.get(&i) {
            out.extend(fresh.remove(q).unwrap_or_default());
        }
    }
    for q in fresh_order {
        out.extend(fresh.remove(&q).unwrap_or_default());
    }
    (out, Written { added, kept })
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
pub fn corpus_texts(path: &Path, wanted: &HashSet<&str>) -> Result<HashMap<String, String>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn row(q: &str, c: &str, grade: Option<i32>) -> SheetRow {
        SheetRow {
            query_id: q.into(),
            query: String::new(),
            stratum: String::new(),
            chunk_id: c.into(),
            text: None,
            grade,
            source: grade.map(|_| PERSON.into()),
            labeler: grade.map(|_| "ana".into()),
            verified: grade.is_some(),
            ..Default::default()
        }
    }

    fn pairs(rows: &[SheetRow]) -> Vec<(String, String, Option<i32>)> {
        rows.iter()
            .map(|r| (r.query_id.clone(), r.chunk_id.clone(), r.grade))
            .collect()
    }

    #[test]
    fn pooling_again_adds_only_new_pairs_and_keeps_every_grade() {
        let existing = vec![
            row("q1", "a", Some(3)),
            row("q1", "b", None),
            row("q2", "c", Some(0)),
        ];
        // Pooled again with one more run: q1 gains d, q2 gains e, q3 is new;
        // the pooled copies of a, b, c carry no grade and must not win.
        let pooled = vec![
            row("q1", "a", None),
            row("q1", "d", None),
            row("q2", "c", None),
            row("q3", "f", None),
            row("q2", "e", None),
            row("q1", "b", None),
        ];
        let (out, w) = merge(existing, pooled);
        let s = |q: &str, c: &str, g| (q.to_string(), c.to_string(), g);
        assert_eq!(
            pairs(&out),
            vec![
                s("q1", "a", Some(3)),
                s("q1", "b", None),
                s("q1", "d", None),
                s("q2", "c", Some(0)),
                s("q2", "e", None),
                s("q3", "f", None),
            ]
        );
        assert_eq!(w, Written { added: 3, kept: 3 });
    }

    #[test]
    fn a_new_sheet_is_the_pool() {
        let (out, w) = merge(Vec::new(), vec![row("q1", "a", None), row("q2", "b", None)]);
        assert_eq!(out.len(), 2);
        assert_eq!(w, Written { added: 2, kept: 0 });
    }
}
