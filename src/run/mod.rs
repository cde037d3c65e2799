//! Runs: what a retriever returned for each query, judged against the gold
//! set as it is read.
//!
//! Three forms (SPEC "Runs"): TREC (`qid Q0 docid rank score tag`, ranked by
//! score descending, ties by docid descending: trec_eval's rule, the rank
//! column ignored), a JSON map (`{"q1": ["c7", "c1"]}`; a `{docid: score}`
//! object per query is ranked like TREC, as pytrec_eval users write runs),
//! and JSONL (`{"query_id", "results"}`). In JSON the list order is the
//! ranking.
//!
//! Parsing never keeps a run in memory: each query becomes a [`Ranking`]
//! (its labeled hits) and, when asked, its top ids. See [`trec`] for how a
//! 7-million-line file stays within a few megabytes.

pub mod json;
pub mod memory;
pub mod trec;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;

use crate::chunks::ChunkMap;
use crate::diag::{input_error_hint, name_some, Warnings};
use crate::gold::GoldSet;
use crate::judge::{Place, QueryLabels, Ranking};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunFormat {
    Trec,
    Json,
    Jsonl,
}

impl fmt::Display for RunFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RunFormat::Trec => "trec",
            RunFormat::Json => "json",
            RunFormat::Jsonl => "jsonl",
        })
    }
}

/// How many top-ranked ids to keep per query, beside the judged hits: the
/// baseline store keeps them so a stored run can be re-scored after the
/// gold labels change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeepIds {
    #[default]
    None,
    Depth(u32),
    All,
}

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub format: Option<RunFormat>,
    pub keep_ids: KeepIds,
    /// Where the run's chunk ids lie, for gold sets with span labels.
    /// Results that carry their own location do not need it.
    pub chunks: Option<Arc<ChunkMap>>,
}

/// A run judged against a gold set, query by query in gold order.
#[derive(Debug, Clone)]
pub struct JudgedRun {
    pub path: PathBuf,
    pub format: RunFormat,
    pub rankings: Vec<Ranking>,
    /// Whether the run answered each gold query at all.
    pub present: Vec<bool>,
    /// Top ids per gold query, when [`RunOptions::keep_ids`] asked for them.
    pub top_ids: Option<Vec<Vec<String>>>,
    /// Where each of those ids lies (`None` where unknown), kept only for a
    /// gold set with span labels: a baseline re-scored against changed
    /// spans needs the text its chunks held, not only their ids.
    pub top_places: Option<Vec<Vec<Option<Place>>>>,
    pub warnings: Warnings,
    /// The run's tag (a TREC run's sixth field), which trec_eval prints as
    /// `runid`; set by the pipeline when that measure is asked for.
    pub run_tag: Option<String>,
}

/// What a parser tallies while reading, turned into warnings at the end.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub extra_queries: usize,
    pub duplicate_ids: usize,
    pub duplicate_queries: Vec<usize>,
    /// Results of queries with span labels whose location is unknown (no
    /// location of their own, and not in the chunk map).
    pub unlocated: usize,
}

impl JudgedRun {
    pub fn missing(&self) -> impl Iterator<Item = usize> + '_ {
        self.present
            .iter()
            .enumerate()
            .filter(|(_, p)| !**p)
            .map(|(i, _)| i)
    }

    fn finish(
        path: &Path,
        format: RunFormat,
        gold: &GoldSet,
        rankings: Vec<Ranking>,
        present: Vec<bool>,
        top_ids: Option<Vec<Vec<String>>>,
        tally: Tally,
    ) -> JudgedRun {
        let mut warnings = Warnings::default();
        if let Some(w) = absent_warning(path, gold, &present) {
            warnings.push(w);
        }
        if tally.extra_queries > 0 {
            warnings.push(format!(
                "{}: {} quer{} not in the gold set {}; ignored",
                path.display(),
                tally.extra_queries,
                if tally.extra_queries == 1 {
                    "y is"
                } else {
                    "ies are"
                },
                gold.path.display()
            ));
        }
        if tally.duplicate_ids > 0 {
            let names: Vec<&str> = tally
                .duplicate_queries
                .iter()
                .map(|&q| gold.queries[q].id.as_str())
                .collect();
            warnings.push(format!(
                "{}: {} repeated document id{} within a query's ranking (first occurrence counts), in {}",
                path.display(),
                tally.duplicate_ids,
                if tally.duplicate_ids == 1 { "" } else { "s" },
                name_some(&names, 5)
            ));
        }
        if tally.unlocated > 0 {
            warnings.push(format!(
                "{}: {} result{} of queries with span labels {} no location (none given, and not in the chunk map); {} match chunk-id labels only",
                path.display(),
                tally.unlocated,
                if tally.unlocated == 1 { "" } else { "s" },
                if tally.unlocated == 1 { "has" } else { "have" },
                if tally.unlocated == 1 { "it can" } else { "they can" },
            ));
        }
        JudgedRun {
            path: path.to_path_buf(),
            format,
            rankings,
            present,
            top_ids,
            top_places: None,
            run_tag: None,
            warnings,
        }
    }
}

/// The warning about gold queries the run lacks, which the evaluating
/// commands score 0 (trec_eval's `-c`). `gold pool`, which scores nothing,
/// says something else instead (and finds this one to leave out).
pub fn absent_warning(path: &Path, gold: &GoldSet, present: &[bool]) -> Option<String> {
    let missing: Vec<&str> = present
        .iter()
        .enumerate()
        .filter(|(_, p)| !**p)
        .map(|(i, _)| gold.queries[i].id.as_str())
        .collect();
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "{}: {} of {} gold queries {} absent; {} 0 on every metric: {}",
        path.display(),
        missing.len(),
        gold.len(),
        if missing.len() == 1 { "is" } else { "are" },
        if missing.len() == 1 {
            "it scores"
        } else {
            "they score"
        },
        name_some(&missing, 5)
    ))
}

/// Detects the form from the extension, then the content: `{` opens JSON or
/// JSONL (a first line that is a whole object with `query_id` or `qid`),
/// anything else is TREC.
pub fn detect_format(path: &Path, head: &[u8]) -> RunFormat {
    let head = crate::diag::strip_bom(head);
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
    {
        Some(e) if e == "jsonl" => return RunFormat::Jsonl,
        Some(e) if e == "json" => return RunFormat::Json,
        _ => {}
    }
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    if head.get(start) == Some(&b'{') {
        let line_end = memchr::memchr(b'\n', &head[start..]).map_or(head.len(), |e| start + e);
        if let Ok(serde_json::Value::Object(m)) = serde_json::from_slice(&head[start..line_end]) {
            if json::QUERY_KEYS.iter().any(|k| m.contains_key(*k)) {
                return RunFormat::Jsonl;
            }
        }
        return RunFormat::Json;
    }
    RunFormat::Trec
}

/// Reads and judges a run.
pub fn read(path: &Path, gold: &GoldSet, labels: &[QueryLabels], opts: &RunOptions) -> Result<JudgedRun> {
    let mut file = crate::input::open(path, "run", "check the path; runs are TREC, JSON or JSONL files")?;
    let mut head = vec![0u8; 64 * 1024];
    let n =
        read_up_to(&mut file, &mut head).map_err(|e| input_error_hint(path, None, e, "check the file"))?;
    head.truncate(n);
    if crate::diag::looks_binary(&head) {
        return Err(input_error_hint(
            path,
            None,
            "not a text file (it contains NUL bytes), so not a run",
            "check the path; runs are TREC, JSON or JSONL text files",
        ));
    }
    let format = opts.format.unwrap_or_else(|| detect_format(path, &head));
    let chunks = opts.chunks.as_deref();
    let judged = match format {
        RunFormat::Trec => {
            if chunks.is_none() {
                no_locations(path, gold)?;
            }
            let mut judged = trec::read(path, gold, labels, opts.keep_ids, chunks)?;
            if gold.has_spans() {
                if let (Some(ids), Some(map)) = (&judged.top_ids, chunks) {
                    judged.top_places = Some(
                        ids.iter()
                            .map(|q| q.iter().map(|id| map.get(id).map(Place::from)).collect())
                            .collect(),
                    );
                }
            }
            judged
        }
        RunFormat::Json | RunFormat::Jsonl => {
            let (judged, located) = json::read(path, format, gold, labels, opts.keep_ids, chunks)?;
            if chunks.is_none() && located == 0 {
                no_locations(path, gold)?;
            }
            judged
        }
    };
    Ok(judged)
}

/// A gold set with span labels and a run that locates none of its results
/// (no locations, no chunk map): every span would score 0, which is a
/// broken setup rather than a result.
fn no_locations(path: &Path, gold: &GoldSet) -> Result<()> {
    if !gold.has_spans() {
        return Ok(());
    }
    Err(input_error_hint(
        path,
        None,
        format!(
            "{} has span labels, but this run's results carry no location and no chunk map was given",
            gold.path.display()
        ),
        "pass the chunking's map with --chunks FILE (`chunks:` for a configured retriever), or write results as {\"id\", \"doc\", \"start\", \"end\", \"score\"}",
    ))
}

fn read_up_to(r: &mut impl std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// The depth to which top ids are kept, or `None` for no ids.
pub(crate) fn keep_depth(keep: KeepIds) -> Option<usize> {
    match keep {
        KeepIds::None => None,
        KeepIds::Depth(d) => Some(d as usize),
        KeepIds::All => Some(usize::MAX),
    }
}
