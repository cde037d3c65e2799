//! `gold import`: merges a sheet's graded rows into a native gold set, with
//! each label's provenance, keeping ids, strata, texts and existing labels.
//!
//! A conflict (the sheet grades a chunk the gold set grades differently, or
//! two sheet rows disagree) writes nothing unless the caller says which side
//! wins: a silent overwrite of a reviewed label is how gold sets rot. A
//! person's grade is no conflict with a model's: the person's wins.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;
use serde_json::{json, Map, Value};

use super::excerpt;
use super::provenance::{self, Provenance};
use super::sheet::{SheetRow, MODEL, PERSON};
use crate::diag::{count, input_error_hint, usage_error, UserError};
use crate::fsutil::Rewrite;
use crate::gold::{id_of, GoldDoc, GoldFormat, GoldSet};
use crate::origin::now_utc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefer {
    Sheet,
    Gold,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct ImportOptions {
    pub accept_unverified: bool,
    pub prefer: Option<Prefer>,
    /// Drop the example queries `rgate init` wrote ([`template_ids`]).
    pub drop_template: bool,
    /// Write both label sets (SPEC "Gating on model labels"): the model's
    /// grade of every pair under `model:`, people's under `relevant` for
    /// the queries people graded in full, marked `verified: true`.
    pub with_model: bool,
}

/// The gold set `rgate init` writes, whose example queries a new user's
/// first import merges into.
const TEMPLATE: &str = include_str!("../templates/gold.yaml");

/// The ids of the queries among `queries` (id, text) that are `rgate
/// init`'s examples: the same id and the same text, so a real query that
/// happens to be called `q-001` is not taken for one. Their labels name
/// chunks of no real corpus, and they are scored with every real query.
pub fn template_ids<'a>(queries: impl IntoIterator<Item = (&'a str, Option<&'a str>)>) -> Vec<String> {
    let examples: Vec<(String, Option<String>)> =
        GoldDoc::parse(Path::new("gold.yaml"), TEMPLATE, GoldFormat::Yaml)
            .map(|d| {
                d.queries
                    .iter()
                    .map(|q| {
                        (
                            id_of(q),
                            q.get("text").and_then(Value::as_str).map(str::to_string),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
    queries
        .into_iter()
        .filter(|(id, text)| {
            examples
                .iter()
                .any(|(eid, etext)| eid == id && etext.as_deref() == *text)
        })
        .map(|(id, _)| id.to_string())
        .collect()
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
    /// `rgate init`'s example queries still in the gold set (see
    /// [`template_ids`]), and those this import dropped.
    pub template: Vec<String>,
    pub dropped: Vec<String>,
    /// With `with_model`: queries given model grades, how many grades,
    /// queries marked verified, and people's grades held back because
    /// people had not graded every pair of their query yet.
    pub model_queries: usize,
    pub model_grades: usize,
    pub verified_queries: usize,
    pub partial_grades: usize,
    /// With `with_model`: model grades the gold set held and the sheet
    /// replaced with another (a model graded the pair again).
    pub model_changed: usize,
}

/// What `--with-model` writes, per query of the sheet in order of first
/// appearance: the model's grade of each pair, and whether people graded
/// every pair (then their grades are the query's `relevant`).
struct ModelPlan<'a> {
    queries: Vec<PlannedQuery<'a>>,
}

struct PlannedQuery<'a> {
    id: &'a str,
    text: &'a str,
    model: Vec<(&'a str, i32)>,
    verified: bool,
}

/// A row's model grade: its own when a model gave it, else the model's
/// first pass a person then corrected (kept in `opinions`).
fn model_grade(row: &SheetRow) -> Option<i32> {
    if row.source.as_deref() == Some(MODEL) {
        return row.grade;
    }
    row.opinions.iter().find(|o| o.source == MODEL).map(|o| o.grade)
}

/// A row a person graded (and verified).
fn persons_grade(row: &SheetRow) -> bool {
    row.grade.is_some() && by_person(row) && row.verified
}

/// The plan, and the pairs two rows give two different model grades
/// (then nothing is written unless `prefer` says which wins: the later).
fn model_plan(rows: &[SheetRow], prefer: Option<Prefer>) -> (ModelPlan<'_>, Vec<Conflict>) {
    let mut conflicts = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    let mut queries: Vec<PlannedQuery> = Vec::new();
    for row in rows {
        let i = *at.entry(row.query_id.as_str()).or_insert_with(|| {
            queries.push(PlannedQuery {
                id: &row.query_id,
                text: &row.query,
                model: Vec::new(),
                verified: true,
            });
            queries.len() - 1
        });
        let q = &mut queries[i];
        q.verified &= persons_grade(row);
        if let Some(g) = model_grade(row) {
            match q.model.iter_mut().find(|(c, _)| *c == row.chunk_id) {
                Some(m) if m.1 != g && prefer.is_none() => conflicts.push(Conflict {
                    query_id: row.query_id.clone(),
                    chunk_id: row.chunk_id.clone(),
                    detail: format!("sheet rows give the model's grades {} and {g}", m.1),
                }),
                Some(m) => m.1 = g,
                None => q.model.push((&row.chunk_id, g)),
            }
        }
    }
    (ModelPlan { queries }, conflicts)
}

/// One graded (query, chunk) as the sheet settles it.
struct Graded<'a> {
    row: &'a SheetRow,
    grade: i32,
}

/// Whether a row carries a person's grade (a row without a source is a
/// person's: that is how a hand-edited sheet reads).
fn by_person(row: &SheetRow) -> bool {
    row.source.as_deref() != Some(MODEL)
}

/// Merges `rows` into the gold set at `into`. With conflicts and no
/// `prefer`, nothing is written and the report lists them.
///
/// The whole read-modify-write runs under the gold file's lock, reading the
/// file as it is then: imports of other sheets that ran meanwhile are kept
/// (they were lost when each import wrote back the copy it read first).
/// `on_wait` hears once if another rgate holds the lock.
pub fn import(
    rows: &[SheetRow],
    into: &Path,
    opts: ImportOptions,
    on_wait: &mut dyn FnMut(&str),
) -> Result<ImportReport> {
    let strata = check_strata(rows)?;
    let file = Rewrite::begin(into, &now_utc(), on_wait)?;
    let sheet_draws: std::collections::BTreeSet<&str> =
        rows.iter().filter_map(|r| r.draw.as_deref()).collect();
    let into = file.path();
    // A gold set that does not exist yet starts empty, in the form its
    // extension names (YAML by default).
    let exists = file.exists();
    // The gold set with its provenance, from one parse of the file: the
    // document to edit is read only when there is something to write (an
    // import that changes nothing held the whole file as values, 2.3 GB
    // for 100,000 queries with provenance).
    let mut gold = if exists {
        GoldSet::load_with_provenance(into, None)?.0
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
    check_draw(into, &gold, &sheet_draws)?;
    let prov = std::mem::take(&mut gold.provenance);
    let mut report = ImportReport::default();
    let examples = template_ids(gold.queries.iter().map(|q| (q.id.as_str(), q.text.as_deref())));
    if opts.drop_template {
        report.dropped = examples;
    } else {
        report.template = examples;
    }

    // The sheet's word per (query, chunk). A person's grade settles it over
    // a model's whatever the order; two rows that disagree otherwise are a
    // conflict unless the caller chose a side (then the later row wins).
    let mut order: Vec<(String, String)> = Vec::new();
    let mut settled: HashMap<(String, String), Graded> = HashMap::new();
    // With both label sets, people's grades count for the queries they
    // graded in full; a model's grade goes under `model:`, never into
    // `relevant`.
    let plan = match opts.with_model {
        true => {
            let (plan, conflicts) = model_plan(rows, opts.prefer);
            report.conflicts.extend(conflicts);
            // A model grade the gold set held, replaced by another.
            for pq in &plan.queries {
                let Some(old) = gold.position(pq.id).and_then(|p| gold.labeling.model_labels(p)) else {
                    continue;
                };
                let old: HashMap<&str, i32> = old.iter().map(|l| (l.id, l.grade)).collect();
                report.model_changed += pq
                    .model
                    .iter()
                    .filter(|(c, g)| old.get(c).is_some_and(|o| o != g))
                    .count();
            }
            Some(plan)
        }
        false => None,
    };
    let complete: std::collections::HashSet<&str> = plan
        .iter()
        .flat_map(|p| p.queries.iter().filter(|q| q.verified).map(|q| q.id))
        .collect();
    for row in rows {
        let Some(grade) = row.grade else {
            continue;
        };
        if plan.is_some() {
            if !persons_grade(row) {
                continue;
            }
            if !complete.contains(row.query_id.as_str()) {
                report.partial_grades += 1;
                continue;
            }
        }
        if !row.verified && !opts.accept_unverified {
            report.skipped_unverified += 1;
            continue;
        }
        let key = (row.query_id.clone(), row.chunk_id.clone());
        match settled.get(&key) {
            Some(prev) if by_person(prev.row) && !by_person(row) => {}
            Some(prev) if !by_person(prev.row) && by_person(row) => {
                settled.insert(key, Graded { row, grade });
            }
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
        let recorded = prov.get(&key.0).and_then(|m| m.get(&key.1));
        let gold_by_person = recorded.is_none_or(|p| p.source != MODEL);
        match existing.get(&(key.0.as_str(), key.1.as_str())) {
            Some(&old) if old == g.grade => report.unchanged_labels += 1,
            // A person's grade wins over a model's, on either side.
            Some(_) if by_person(g.row) && !gold_by_person => {
                report.changed_labels += 1;
                apply.push(key);
            }
            Some(_) if !by_person(g.row) && gold_by_person => report.unchanged_labels += 1,
            Some(&old) => match opts.prefer {
                None => report.conflicts.push(Conflict {
                    query_id: key.0.clone(),
                    chunk_id: key.1.clone(),
                    detail: format!(
                        "sheet {}, gold {old}{}",
                        who(g.row, g.grade),
                        recorded
                            .and_then(|p| p.labeler.as_deref())
                            .map(|l| format!(" ({l})"))
                            .unwrap_or_default()
                    ),
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
    let plan_writes = plan
        .as_ref()
        .is_some_and(|p| p.queries.iter().any(|q| !q.model.is_empty() || q.verified));
    if apply.is_empty() && report.dropped.is_empty() && !plan_writes {
        if !exists {
            // Writing `queries: []` would give a file every reader refuses.
            return Err(usage_error(
                format!(
                    "nothing to import into {}: the sheet has no {}grades{}",
                    into.display(),
                    if opts.accept_unverified { "" } else { "verified " },
                    if report.skipped_unverified > 0 {
                        format!(
                            " ({} no person verified)",
                            count(report.skipped_unverified, "model suggestion", "model suggestions")
                        )
                    } else {
                        String::new()
                    }
                ),
                "grade the rows with `rgate gold label` (or pass --accept-unverified to import model suggestions); nothing was written",
            ));
        }
        // The gold set already says all of it: nothing to write.
        return Ok(report);
    }

    let mut doc = if exists {
        GoldDoc::read(into, gold.format)?
    } else {
        GoldDoc::empty(gold.format)
    };
    if !report.dropped.is_empty() {
        doc.queries.retain(|q| !report.dropped.contains(&id_of(q)));
    }
    let queries = &mut doc.queries;
    let mut position: HashMap<String, usize> =
        queries.iter().enumerate().map(|(i, q)| (id_of(q), i)).collect();
    // New queries in the sheet's order: with both label sets, the queries
    // only the model graded are added first, where the sheet has them.
    let mut add_query = |queries: &mut Vec<Value>, id: &str, text: &str| -> usize {
        if let Some(&i) = position.get(id) {
            return i;
        }
        let mut q = Map::new();
        q.insert("id".into(), json!(id));
        if !text.is_empty() {
            q.insert("text".into(), json!(text));
        }
        if let Some(stratum) = strata.get(id) {
            q.insert("stratum".into(), json!(stratum));
        }
        queries.push(Value::Object(q));
        report.added_queries += 1;
        position.insert(id.to_string(), queries.len() - 1);
        queries.len() - 1
    };
    for pq in plan.iter().flat_map(|p| &p.queries) {
        if !pq.model.is_empty() || pq.verified {
            add_query(queries, pq.id, pq.text);
        }
    }
    // Each touched query's labels, starting from the gold set's, in order.
    let mut labels: HashMap<usize, Vec<(String, i32)>> = HashMap::new();
    // Each touched query's new records, by chunk, in order: made into
    // values only as the query is written (as values, 100,000 queries'
    // records were most of a 1.8 GB import).
    let mut records: HashMap<usize, Vec<&(String, String)>> = HashMap::new();
    for key in apply {
        let g = &settled[key];
        let qi = add_query(queries, &key.0, &g.row.query);
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
        records.entry(qi).or_default().push(key);
    }
    for (qi, ls) in labels {
        set_relevant(&mut queries[qi], ls);
    }
    if let Some(plan) = &plan {
        for pq in &plan.queries {
            if pq.model.is_empty() && !pq.verified {
                continue;
            }
            let qi = add_query(queries, pq.id, pq.text);
            let Some(q) = queries[qi].as_object_mut() else {
                continue;
            };
            if !pq.model.is_empty() {
                let m = q.entry("model").or_insert_with(|| Value::Object(Map::new()));
                if !m.is_object() {
                    *m = Value::Object(Map::new());
                }
                if let Value::Object(m) = m {
                    for (chunk, g) in &pq.model {
                        m.insert(chunk.to_string(), json!(g));
                    }
                }
                report.model_queries += 1;
                report.model_grades += pq.model.len();
            }
            if pq.verified {
                q.insert("verified".into(), json!(true));
                report.verified_queries += 1;
            }
            // The labels, then both label sets' marks, then their records.
            if let Some(p) = q.shift_remove("provenance") {
                q.insert("provenance".into(), p);
            }
        }
    }
    drop(position);
    // What is no longer needed goes before the text is written and parsed
    // again.
    let format = gold.format;
    drop((gold, prov, plan));
    let mut failed = None;
    let out = doc.into_text_with(|qi, q| {
        let Some(keys) = records.remove(&qi) else {
            return;
        };
        let Some(o) = q.as_object_mut() else {
            return;
        };
        let p = o.entry("provenance").or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = p {
            for key in keys {
                match serde_json::to_value(record(settled[key].row)) {
                    Ok(v) => {
                        m.insert(key.1.clone(), v);
                    }
                    Err(e) => failed = Some(e),
                }
            }
        }
        // A reviewer reads the labels first, then their records: a query
        // an older import wrote with `provenance` first is put in order.
        if let Some(p) = o.shift_remove("provenance") {
            o.insert("provenance".into(), p);
        }
    });
    if let Some(e) = failed {
        return Err(e.into());
    }
    drop(settled);
    validate(into, &out, format)?;
    file.write(out.as_bytes())?;
    Ok(report)
}

/// Refuses a sheet written for a verification draw the gold set does not
/// record (a draw `--replace` discarded, or another gold set's): its
/// grades would make verified queries outside the draw, which PPI must not
/// read as the random sample. Nothing is written.
fn check_draw(into: &Path, gold: &GoldSet, sheet: &std::collections::BTreeSet<&str>) -> Result<()> {
    let Some(first) = sheet.iter().next() else {
        return Ok(());
    };
    let recorded = gold.labeling.verify_sample.as_ref().map(|s| s.draw_id());
    if sheet.len() == 1 && recorded.as_deref() == Some(*first) {
        return Ok(());
    }
    let other = sheet
        .iter()
        .find(|d| Some(**d) != recorded.as_deref())
        .unwrap_or(first);
    Err(input_error_hint(
        into,
        None,
        format!(
            "the sheet was written for verification draw `{}`, and {}; nothing was written",
            excerpt(other),
            match &recorded {
                Some(r) => format!("the gold set records draw `{r}`"),
                None => "the gold set records no draw".to_string(),
            }
        ),
        "grade the sheet `rgate gold verify-sample` wrote for the recorded draw (the same command again writes it); a sheet of a discarded draw is no part of the random sample",
    ))
}

/// The provenance a sheet row gives its grade.
fn record(row: &SheetRow) -> Provenance {
    Provenance {
        source: row.source.clone().unwrap_or_else(|| PERSON.into()),
        labeler: row.labeler.clone(),
        at: row.labeled_at.clone(),
        verified: row.verified,
        prompt: row.prompt.clone(),
        // Every other grade the sheet held, for `gold agreement`.
        opinions: row.opinions.iter().map(provenance::to_gold).collect(),
    }
}

/// Refuses a sheet that gives one query two strata: the gold set has one
/// stratum per query, and keeping the first row's silently would file the
/// query under whichever row came first. Returns each query's stratum
/// (looked up once per query: scanning the rows for each new query made an
/// import of 100,000 queries quadratic).
fn check_strata(rows: &[SheetRow]) -> Result<HashMap<&str, &str>> {
    let mut first: HashMap<&str, &str> = HashMap::new();
    for r in rows {
        if r.stratum.is_empty() {
            continue;
        }
        match first.get(r.query_id.as_str()) {
            Some(&s) if s != r.stratum => {
                return Err(usage_error(
                    format!(
                        "query `{}` has two strata in the sheet: `{}` and `{}`",
                        excerpt(&r.query_id),
                        excerpt(s),
                        excerpt(&r.stratum)
                    ),
                    "give every row of a query the same stratum, then import again; nothing was written",
                ))
            }
            Some(_) => {}
            None => {
                first.insert(&r.query_id, &r.stratum);
            }
        }
    }
    Ok(first)
}

/// Parses what is about to be written with the readers' own rules: a gold
/// set they refuse (a reserved stratum, a query id with white space) would
/// make every later command exit 2, so the import refuses instead.
fn validate(into: &Path, text: &str, format: GoldFormat) -> Result<()> {
    let Err(e) = crate::gold::parse_native_text(into, text, format) else {
        return Ok(());
    };
    let why = match e.downcast_ref::<UserError>() {
        Some(u) => u.message.clone(),
        None => format!("{e:#}"),
    };
    Err(anyhow::Error::new(UserError {
        message: format!("refused: the gold set this import would write is one rgate cannot read ({why}); nothing was written"),
        hint: Some(
            "fix the sheet's rows for that query (a query id holds no white space; `all` and `macro` are reserved strata) and import again"
                .into(),
        ),
    }))
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
