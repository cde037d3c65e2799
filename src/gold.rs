//! Gold sets: the labeled queries every metric is computed against.
//!
//! Four input forms (SPEC "Gold set"): native YAML, JSON and JSONL, and TREC
//! qrels with an optional strata file. All of them become one [`GoldSet`]:
//! queries in file order, each with its stratum and labels. Relevance is not
//! decided here: whether a grade counts as relevant depends on the relevance
//! level of the evaluation (trec_eval's `-l`), see [`crate::judge`].
//!
//! A label is a chunk id or a span of a source document (SPEC "Span
//! labels"): `{doc, start, end, grade}`, character offsets, end exclusive.
//! Spans survive re-chunking; [`crate::judge`] decides which retrieved chunks
//! cover them.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::diag::{
    clip_message, excerpt, input_error, input_error_hint, line_of, name_some, read_text_input, strip_bom,
    yaml_guard, Warnings,
};

/// Query ids to positions, for the ungrouped-qrels reader's borrowed ids.
/// SipHash's DoS resistance (pointless for the user's own files) costs
/// more than the rest of a lookup.
type IdMap<'t, V> = HashMap<&'t str, V, std::hash::BuildHasherDefault<IdHasher>>;

/// [`IdHasher`] over an id's bytes.
#[inline]
fn id_hash(id: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = IdHasher::default();
    h.write(id);
    h.finish()
}

/// Query ids to positions in [`GoldSet::queries`]: an open-addressing
/// table of (position + 1, low 32 bits of the id's hash), the id itself
/// read from the query. The run readers look a query up at every change of
/// query id and the qrels reader at every new query: 70,000 of each for a
/// 70k-query gold set. Keyed by the queries' own ids, it costs no String
/// per query (a `HashMap<String, u32>` did: a second copy of every id).
#[derive(Debug, Clone, Default)]
struct QueryIndex {
    /// A power of two long (or empty); (0, _) marks a free slot.
    slots: Vec<(u32, u32)>,
    len: usize,
}

impl QueryIndex {
    /// Room for `n` ids before the table grows.
    fn with_capacity(n: usize) -> QueryIndex {
        let mut t = QueryIndex::default();
        t.grow_to(n);
        t
    }

    fn grow_to(&mut self, n: usize) {
        // At most 7/8 full.
        let size = (n + n / 7 + 1).next_power_of_two().max(8);
        if size <= self.slots.len() {
            return;
        }
        let old = std::mem::replace(&mut self.slots, vec![(0, 0); size]);
        let mask = size - 1;
        for (pos, tag) in old.into_iter().filter(|&(p, _)| p != 0) {
            let mut slot = tag as usize & mask;
            while self.slots[slot].0 != 0 {
                slot = (slot + 1) & mask;
            }
            self.slots[slot] = (pos, tag);
        }
    }

    /// The position of `id`, or the free slot where it would go.
    #[inline]
    fn find(&self, queries: &[GoldQuery], id: &[u8], hash: u64) -> Result<u32, usize> {
        if self.slots.is_empty() {
            return Err(0);
        }
        let mask = self.slots.len() - 1;
        let tag = hash as u32;
        let mut slot = tag as usize & mask;
        loop {
            let (pos, t) = self.slots[slot];
            if pos == 0 {
                return Err(slot);
            }
            if t == tag
                && queries
                    .get(pos as usize - 1)
                    .is_some_and(|q| same_id(q.id.as_bytes(), id))
            {
                return Ok(pos - 1);
            }
            slot = (slot + 1) & mask;
        }
    }

    fn get(&self, queries: &[GoldQuery], id: &[u8]) -> Option<usize> {
        self.find(queries, id, id_hash(id)).ok().map(|p| p as usize)
    }

    /// Records that `queries[pos]` has the id hashed to `hash`, which
    /// [`QueryIndex::find`] did not find (at `slot`).
    fn insert(&mut self, mut slot: usize, hash: u64, pos: u32) {
        let tag = hash as u32;
        if (self.len + 1) * 8 > self.slots.len() * 7 {
            self.grow_to((self.len + 1) * 2);
            let mask = self.slots.len() - 1;
            slot = tag as usize & mask;
            while self.slots[slot].0 != 0 {
                slot = (slot + 1) & mask;
            }
        }
        self.slots[slot] = (pos + 1, tag);
        self.len += 1;
    }
}

/// Eight bytes at a time, multiplied and rotated, then a murmur3 finaliser
/// so that every output bit (hashbrown reads the top seven) depends on
/// every input byte.
#[derive(Default, Clone, Copy)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0 ^ bytes.len() as u64;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            h = (h ^ word8(c, 0))
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .rotate_left(29);
        }
        h = (h ^ short_word(chunks.remainder())).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = h;
    }

    #[inline]
    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

/// [`str::lines`] with the newlines found by memchr: `lines` searches
/// for them a character at a time, which was a tenth of loading 500,000
/// qrels lines.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        // As `lines`: a `\r` goes only with the `\n` after it.
        let line = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(p) => {
                let line = &rest[..p];
                rest = &rest[p + 1..];
                line.strip_suffix('\r').unwrap_or(line)
            }
            None => std::mem::take(&mut rest),
        };
        Some(line)
    })
}

/// Byte equality of two ids, inline: `==` on slices calls memcmp, whose
/// call costs more than comparing a short id, and the readers compare ids
/// at every line (the query id of a run line with the one before, a
/// judgment with the query's others). Up to 16 bytes: two overlapping loads.
#[inline]
pub(crate) fn same_id(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => word4(a, 0) == word4(b, 0) && word4(a, n - 4) == word4(b, n - 4),
        8..=16 => word8(a, 0) == word8(b, 0) && word8(a, n - 8) == word8(b, n - 8),
        _ => a == b,
    }
}

#[inline(always)]
fn word4(s: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&s[at..at + 4]);
    u32::from_le_bytes(w)
}

#[inline(always)]
fn word8(s: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&s[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Up to 8 bytes as one word, every byte counted (the length is hashed
/// separately): two overlapping loads, or for 1-3 bytes the first, middle
/// and last.
#[inline(always)]
pub(crate) fn short_word(t: &[u8]) -> u64 {
    let n = t.len();
    match n {
        0 => 0,
        1..=3 => u64::from(t[0]) | u64::from(t[n / 2]) << 8 | u64::from(t[n - 1]) << 16,
        4..=7 => u64::from(word4(t, 0)) | u64::from(word4(t, n - 4)) << 32,
        _ => word8(t, 0),
    }
}

/// The first 8 bytes of `id`, zero-padded, as a big-endian number: numbers
/// compare as the bytes do, up to ids that differ only past the 8th byte
/// or by trailing zero bytes.
#[inline]
fn id_prefix(id: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let n = id.len().min(8);
    w[..n].copy_from_slice(&id[..n]);
    u64::from_be_bytes(w)
}

/// The stratum of queries that name none.
pub const DEFAULT_STRATUM: &str = "default";

/// Names reserved for aggregate rows in reports; a stratum may not take them.
pub const RESERVED_STRATA: [&str; 2] = ["all", "macro"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub id: String,
    /// trec_eval semantics: >= relevance level is relevant, 0.. is judged,
    /// negative is "in the pool, not judged".
    pub grade: i32,
}

/// A query's chunk-id labels, packed: every id in one buffer, and the end
/// of each id and its grade. A String per label made loading 500,000 qrels
/// lines half a million allocations and three times the memory; labels
/// are read in order or looked up through [`crate::judge::QueryLabels`],
/// never changed one at a time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels {
    ids: String,
    /// (end of the id in `ids`, grade) per label, in order.
    ends: Vec<(usize, i32)>,
}

/// One label of a [`Labels`], borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabelRef<'a> {
    pub id: &'a str,
    pub grade: i32,
}

impl LabelRef<'_> {
    pub fn to_label(self) -> Label {
        Label {
            id: self.id.to_string(),
            grade: self.grade,
        }
    }
}

impl Labels {
    /// Room for `labels` labels whose ids take `id_bytes` bytes together.
    pub fn with_capacity(labels: usize, id_bytes: usize) -> Labels {
        Labels {
            ids: String::with_capacity(id_bytes),
            ends: Vec::with_capacity(labels),
        }
    }

    pub fn push(&mut self, id: &str, grade: i32) {
        self.ids.push_str(id);
        self.ends.push((self.ids.len(), grade));
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<LabelRef<'_>> {
        let &(end, grade) = self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1].0 };
        Some(LabelRef {
            id: &self.ids[start..end],
            grade,
        })
    }

    pub fn iter(&self) -> LabelIter<'_> {
        LabelIter {
            labels: self,
            start: 0,
            next: 0,
        }
    }

    /// Every id, one after the other: the bytes [`Labels::iter`] slices.
    pub fn id_bytes(&self) -> &str {
        &self.ids
    }

    /// The grades in order, without slicing out the ids.
    pub fn grades(&self) -> impl ExactSizeIterator<Item = i32> + '_ {
        self.ends.iter().map(|&(_, grade)| grade)
    }
}

impl FromIterator<Label> for Labels {
    fn from_iter<I: IntoIterator<Item = Label>>(it: I) -> Labels {
        let mut out = Labels::default();
        for l in it {
            out.push(&l.id, l.grade);
        }
        out
    }
}

impl From<Vec<Label>> for Labels {
    fn from(v: Vec<Label>) -> Labels {
        let mut out = Labels::with_capacity(v.len(), v.iter().map(|l| l.id.len()).sum());
        for l in &v {
            out.push(&l.id, l.grade);
        }
        out
    }
}

impl<'a> IntoIterator for &'a Labels {
    type Item = LabelRef<'a>;
    type IntoIter = LabelIter<'a>;
    fn into_iter(self) -> LabelIter<'a> {
        self.iter()
    }
}

/// The labels of a [`Labels`] in order.
#[derive(Debug, Clone)]
pub struct LabelIter<'a> {
    labels: &'a Labels,
    /// Where the next id starts.
    start: usize,
    next: usize,
}

impl<'a> Iterator for LabelIter<'a> {
    type Item = LabelRef<'a>;

    #[inline]
    fn next(&mut self) -> Option<LabelRef<'a>> {
        let &(end, grade) = self.labels.ends.get(self.next)?;
        let id = &self.labels.ids[self.start..end];
        self.start = end;
        self.next += 1;
        Some(LabelRef { id, grade })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.labels.ends.len() - self.next;
        (n, Some(n))
    }
}

impl ExactSizeIterator for LabelIter<'_> {}

/// A labeled range of a source document. Offsets are whatever unit the
/// team's chunker reports (characters, by SPEC); rgate never reads the
/// document, it only compares ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanLabel {
    pub doc: String,
    pub start: u64,
    /// Exclusive; always greater than `start`.
    pub end: u64,
    pub grade: i32,
}

impl SpanLabel {
    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct GoldQuery {
    pub id: String,
    pub text: Option<String>,
    /// Index into [`GoldSet::strata`].
    pub stratum: u32,
    pub labels: Labels,
    /// Span labels, beside the chunk-id labels (a query may mix both).
    pub spans: Vec<SpanLabel>,
}

impl GoldQuery {
    /// Grades of every label, chunk ids first, then spans.
    pub fn grades(&self) -> impl Iterator<Item = i32> + '_ {
        self.labels.grades().chain(self.spans.iter().map(|s| s.grade))
    }

    /// How many labels of either kind.
    pub fn label_count(&self) -> usize {
        self.labels.len() + self.spans.len()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoldFormat {
    Yaml,
    Json,
    Jsonl,
    Qrels,
}

impl fmt::Display for GoldFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GoldFormat::Yaml => "yaml",
            GoldFormat::Json => "json",
            GoldFormat::Jsonl => "jsonl",
            GoldFormat::Qrels => "qrels",
        })
    }
}

#[derive(Debug, Clone)]
pub struct GoldSet {
    pub path: PathBuf,
    pub format: GoldFormat,
    pub queries: Vec<GoldQuery>,
    /// Stratum names in order of first appearance.
    pub strata: Vec<String>,
    /// What native gold queries carry beside their labels (`answer`,
    /// `meta`), by query position; only queries that have any. Kept for
    /// reports and tools that read the gold set through rgate; no metric
    /// and not the fingerprint looks at it.
    pub extras: HashMap<usize, QueryExtra>,
    index: QueryIndex,
}

/// The optional fields of a native gold query that no metric reads: a
/// reference `answer` (RAG gold sets carry one) and free-form `meta`
/// (also spelled `metadata`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryExtra {
    pub answer: Option<serde_yaml::Value>,
    pub meta: Option<serde_yaml::Value>,
}

impl GoldSet {
    /// Builds a gold set from parts; validates ids and strata the same way
    /// the file loaders do (errors point at `path` without a line).
    pub fn from_parts(
        path: impl Into<PathBuf>,
        format: GoldFormat,
        queries: Vec<GoldQuery>,
        strata: Vec<String>,
    ) -> Result<GoldSet> {
        let path = path.into();
        let mut index = QueryIndex::with_capacity(queries.len());
        for (i, q) in queries.iter().enumerate() {
            let h = id_hash(q.id.as_bytes());
            match index.find(&queries, q.id.as_bytes(), h) {
                Ok(_) => return Err(input_error(&path, None, format!("duplicate query id `{}`", q.id))),
                Err(slot) => index.insert(slot, h, i as u32),
            }
        }
        Ok(GoldSet {
            path,
            format,
            queries,
            strata,
            extras: HashMap::new(),
            index,
        })
    }

    pub fn len(&self) -> usize {
        self.queries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
    }

    pub fn position(&self, query_id: &str) -> Option<usize> {
        self.index.get(&self.queries, query_id.as_bytes())
    }

    /// Byte-keyed lookup for the run parsers, which never build a String.
    /// Ids are compared as bytes: bytes that are not UTF-8 match no id.
    pub fn position_bytes(&self, query_id: &[u8]) -> Option<usize> {
        self.index.get(&self.queries, query_id)
    }

    /// Whether any query carries a span label: only then do runs need
    /// locations or a chunk map.
    pub fn has_spans(&self) -> bool {
        self.queries.iter().any(|q| !q.spans.is_empty())
    }

    pub fn stratum_name(&self, query: usize) -> &str {
        &self.strata[self.queries[query].stratum as usize]
    }

    /// Query positions sorted by id bytes: the order trec_eval processes
    /// queries in (it sorts its input by qid with strcmp). Means summed in
    /// this order round exactly like trec_eval's.
    pub fn id_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.queries.len()).collect();
        // Qrels usually list queries in this order already: one pass checks.
        if !self.queries.windows(2).all(|w| w[0].id <= w[1].id) {
            order.sort_by(|&a, &b| self.queries[a].id.as_bytes().cmp(self.queries[b].id.as_bytes()));
        }
        order
    }

    /// Query count per stratum, in stratum order.
    pub fn stratum_sizes(&self) -> Vec<usize> {
        let mut sizes = vec![0; self.strata.len()];
        for q in &self.queries {
            sizes[q.stratum as usize] += 1;
        }
        sizes
    }

    /// sha256 of a canonical form: queries sorted by id, each with its
    /// stratum and its labels sorted by id. Query text is left out on
    /// purpose: rewording a query does not change any score, and the
    /// fingerprint exists to tell when stored scores need re-scoring.
    ///
    /// Each query is one line of compact JSON, `["q1","stratum",[["a",1]]]`,
    /// written straight into a reused buffer (serde_json's string escaping,
    /// no intermediate values): stored baselines carry this value, so the
    /// bytes hashed must never change. A query with span labels adds them
    /// as a fourth element, sorted, `[["doc",start,end,grade]]`; a query
    /// without keeps the bytes it always had.
    pub fn fingerprint(&self) -> String {
        let mut order: Vec<&GoldQuery> = self.queries.iter().collect();
        // Qrels usually come sorted by query id already: checked in one
        // pass, which is cheaper than even a sort that finds them sorted.
        if !order.windows(2).all(|w| w[0].id <= w[1].id) {
            order.sort_unstable_by(|a, b| a.id.cmp(&b.id));
        }
        // Stratum names escaped once, not once per query.
        let strata: Vec<Vec<u8>> = self
            .strata
            .iter()
            .map(|s| {
                let mut v = Vec::new();
                json_string(&mut v, s);
                v
            })
            .collect();
        let mut h = Sha256::new();
        h.update(b"rgate-gold-v1\n");
        // Lines are gathered into blocks of about 64 KiB before hashing:
        // one call per block instead of one per query.
        let mut line: Vec<u8> = Vec::with_capacity(1 << 16);
        // Each label with its id's first 8 bytes as a big-endian number
        // (zero-padded): comparing those numbers orders ids as their bytes
        // do, and only ids that share 8 leading bytes (or differ by
        // trailing zero bytes) need the full comparison. A qrels file lists
        // a query's labels in any order, so almost every query is sorted.
        let mut labels: Vec<(u64, LabelRef)> = Vec::new();
        let by_id = |a: &(u64, LabelRef), b: &(u64, LabelRef)| a.0.cmp(&b.0).then_with(|| a.1.id.cmp(b.1.id));
        for q in order {
            labels.clear();
            labels.extend(q.labels.iter().map(|l| (id_prefix(l.id.as_bytes()), l)));
            if !labels.windows(2).all(|w| by_id(&w[0], &w[1]).is_le()) {
                labels.sort_unstable_by(by_id);
            }
            line.push(b'[');
            json_string(&mut line, &q.id);
            line.push(b',');
            line.extend_from_slice(&strata[q.stratum as usize]);
            line.extend_from_slice(b",[");
            for (i, (_, l)) in labels.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                line.push(b'[');
                json_string(&mut line, l.id);
                line.push(b',');
                push_int(&mut line, i64::from(l.grade));
                line.push(b']');
            }
            line.push(b']');
            if !q.spans.is_empty() {
                let mut spans: Vec<&SpanLabel> = q.spans.iter().collect();
                spans.sort_unstable_by(|a, b| (&a.doc, a.start, a.end).cmp(&(&b.doc, b.start, b.end)));
                line.extend_from_slice(b",[");
                for (i, s) in spans.iter().enumerate() {
                    if i > 0 {
                        line.push(b',');
                    }
                    line.push(b'[');
                    json_string(&mut line, &s.doc);
                    line.extend_from_slice(format!(",{},{},{}]", s.start, s.end, s.grade).as_bytes());
                }
                line.push(b']');
            }
            line.extend_from_slice(b"]\n");
            if line.len() >= 1 << 16 {
                h.update(&line);
                line.clear();
            }
        }
        h.update(&line);
        format!("sha256:{:x}", h.finalize())
    }

    /// Loads a gold set, detecting its form from the extension, then the
    /// content. `strata_file` applies to TREC qrels only.
    pub fn load(path: &Path, strata_file: Option<&Path>) -> Result<(GoldSet, Warnings)> {
        let hint = "check the path; gold sets are YAML, JSON, JSONL or TREC qrels";
        let raw = read_text_input(path, "gold set", hint, hint)?;
        // A byte order mark would otherwise become part of the first query
        // id (qrels: a phantom query) or a syntax error (JSON).
        let bytes = strip_bom(&raw);
        let format = detect_format(path, bytes);
        let mut warnings = Warnings::default();
        let gold = match format {
            GoldFormat::Qrels => {
                let strata = match strata_file {
                    Some(sp) => Some(read_strata_file(sp)?),
                    None => None,
                };
                parse_qrels(path, bytes, strata.as_deref(), &mut warnings)?
            }
            _ => {
                if let Some(sp) = strata_file {
                    return Err(input_error_hint(
                        sp,
                        None,
                        "a strata file goes with TREC qrels only",
                        format!(
                            "{} is a {format} gold set: put `stratum:` on each query instead",
                            path.display()
                        ),
                    ));
                }
                parse_native(path, bytes, format)?
            }
        };
        if gold.is_empty() {
            // Every metric would average over nothing and every gate pass
            // with no checks: an empty gold set is a broken pipeline.
            return Err(input_error_hint(
                path,
                None,
                format!("the gold set has no queries ({format})"),
                "check that the file was written completely; a gold set needs at least one query",
            ));
        }
        Ok((gold, warnings))
    }
}

/// Extension first (`.yaml/.yml/.json/.jsonl`), then content: a first line of
/// four fields ending in an integer is qrels; `{` opens JSON or JSONL.
pub fn detect_format(path: &Path, bytes: &[u8]) -> GoldFormat {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
    {
        Some(e) if e == "yaml" || e == "yml" => return GoldFormat::Yaml,
        Some(e) if e == "jsonl" => return GoldFormat::Jsonl,
        Some(e) if e == "json" => return GoldFormat::Json,
        _ => {}
    }
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(64 * 1024)]);
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or("");
    if first.starts_with('{') {
        // A complete object on the first line means one query per line.
        if serde_json::from_str::<serde_json::Value>(first).is_ok() {
            return GoldFormat::Jsonl;
        }
        return GoldFormat::Json;
    }
    let fields: Vec<&str> = first.split_whitespace().collect();
    if fields.len() == 4 && fields[3].parse::<i64>().is_ok() {
        return GoldFormat::Qrels;
    }
    GoldFormat::Yaml
}

/// `s` as serde_json writes a JSON string (the fingerprint's escaping).
/// serde_json escapes only `"`, `\\` and control characters below 0x20:
/// an id without any is copied as it is, the usual case.
fn json_string(out: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
        return;
    }
    // Writing to a Vec cannot fail, and a &str always serialises.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// `v` in decimal, as `to_string` writes it, without allocating.
fn push_int(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    let mut n = v.unsigned_abs();
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// Whether a query id contains white space, which TREC runs split on.
fn bad_query_id(id: &str) -> bool {
    id.chars().any(char::is_whitespace)
}

/// Collects queries and strata, checking uniqueness as they arrive.
struct Builder<'a> {
    path: &'a Path,
    queries: Vec<GoldQuery>,
    strata: Vec<String>,
    stratum_index: HashMap<String, u32>,
    index: QueryIndex,
    extras: HashMap<usize, QueryExtra>,
}

impl<'a> Builder<'a> {
    fn new(path: &'a Path) -> Self {
        Builder {
            path,
            queries: Vec::new(),
            strata: Vec::new(),
            stratum_index: HashMap::new(),
            index: QueryIndex::default(),
            extras: HashMap::new(),
        }
    }

    fn stratum(&mut self, name: &str, line: Option<usize>) -> Result<u32> {
        if let Some(&i) = self.stratum_index.get(name) {
            return Ok(i);
        }
        if name.trim().is_empty() {
            return Err(input_error(self.path, line, "empty stratum name"));
        }
        if RESERVED_STRATA.contains(&name) {
            return Err(input_error_hint(
                self.path,
                line,
                format!("stratum name `{name}` is reserved"),
                "`all` and `macro` name the aggregate rows in reports; rename the stratum",
            ));
        }
        let i = self.strata.len() as u32;
        self.strata.push(name.to_string());
        self.stratum_index.insert(name.to_string(), i);
        Ok(i)
    }

    /// Adds a query after checking its id and labels. `labels_checked`:
    /// the caller already refused empty and repeated label ids (the qrels
    /// reader does, with the line of each judgment).
    fn add(&mut self, q: GoldQuery, line: Option<usize>, labels_checked: bool) -> Result<()> {
        self.check_id(&q.id, line)?;
        if !labels_checked {
            if q.labels.iter().any(|l| l.id.is_empty()) {
                return Err(input_error(
                    self.path,
                    line,
                    format!("query `{}`: empty label id", excerpt(&q.id)),
                ));
            }
            if let Some(dup) = repeated_label(&q.labels) {
                return Err(input_error_hint(
                    self.path,
                    line,
                    format!(
                        "query `{}`: label `{}` appears twice",
                        excerpt(&q.id),
                        excerpt(q.labels.get(dup).map_or("", |l| l.id))
                    ),
                    "keep one entry per chunk id, with the grade you mean",
                ));
            }
        }
        if let Some(dup) = repeated_span(&q.spans) {
            let s = &q.spans[dup];
            return Err(input_error_hint(
                self.path,
                line,
                format!(
                    "query `{}`: span {}..{} of `{}` appears twice",
                    excerpt(&q.id),
                    s.start,
                    s.end,
                    excerpt(&s.doc)
                ),
                "keep one entry per span, with the grade you mean (overlapping spans are fine)",
            ));
        }
        let pos = self.queries.len() as u32;
        let h = id_hash(q.id.as_bytes());
        match self.index.find(&self.queries, q.id.as_bytes(), h) {
            Ok(first) => {
                return Err(input_error_hint(
                    self.path,
                    line,
                    format!(
                        "duplicate query id `{}` (query #{} has it already)",
                        excerpt(&q.id),
                        first + 1
                    ),
                    "query ids must be unique; rename or merge the two queries",
                ));
            }
            Err(slot) => self.index.insert(slot, h, pos),
        }
        self.queries.push(q);
        Ok(())
    }

    /// Refuses a query id that is empty or contains white space.
    fn check_id(&self, id: &str, line: Option<usize>) -> Result<()> {
        if id.is_empty() {
            return Err(input_error(self.path, line, "empty query id"));
        }
        if bad_query_id(id) {
            return Err(input_error_hint(
                self.path,
                line,
                format!("query id `{}` contains white space", excerpt(id)),
                "TREC runs split on white space, so ids cannot contain it",
            ));
        }
        Ok(())
    }

    /// Takes the queries of a grouped qrels file, in order, giving each
    /// its stratum; `false` (the builder then unusable) at the first
    /// query id seen before (the second pass groups and reports) or
    /// stratum refused. The ids were checked and hashed as they were read;
    /// the queries stay where they are: no query is moved to be indexed.
    fn adopt(&mut self, grouped: GroupedQueries, stratum_of: &HashMap<&str, &str>) -> bool {
        debug_assert!(self.queries.is_empty());
        let GroupedQueries {
            mut queries, hashes, ..
        } = grouped;
        self.index.grow_to(queries.len());
        // Without a strata file every query is in the default stratum:
        // looked up once, not once per query.
        let default_stratum = match stratum_of.is_empty() && !queries.is_empty() {
            true => match self.stratum(DEFAULT_STRATUM, None) {
                Ok(s) => Some(s),
                Err(_) => return false,
            },
            false => None,
        };
        for (i, &h) in hashes.iter().enumerate() {
            // The id is read only when a slot's hash matches.
            match self.index.find(&queries, queries[i].id.as_bytes(), h) {
                Ok(_) => return false,
                Err(slot) => self.index.insert(slot, h, i as u32),
            }
        }
        match default_stratum {
            // The queries were made in stratum 0, which the default is.
            Some(0) => {}
            Some(s) => queries.iter_mut().for_each(|q| q.stratum = s),
            None => {
                for q in &mut queries {
                    let name = stratum_of.get(q.id.as_str()).copied().unwrap_or(DEFAULT_STRATUM);
                    match self.stratum(name, None) {
                        Ok(s) => q.stratum = s,
                        Err(_) => return false,
                    }
                }
            }
        }
        self.queries = queries;
        true
    }

    fn finish(self, format: GoldFormat) -> GoldSet {
        GoldSet {
            path: self.path.to_path_buf(),
            format,
            queries: self.queries,
            strata: self.strata,
            extras: self.extras,
            index: self.index,
        }
    }
}

/// The index of the second occurrence of a repeated label id, if any.
/// Most queries have a handful of labels: compared pairwise; large pools
/// are sorted by id instead of hashed (no map per query).
fn repeated_label(labels: &Labels) -> Option<usize> {
    let ids: Vec<&str> = labels.iter().map(|l| l.id).collect();
    if ids.len() <= 16 {
        for j in 1..ids.len() {
            if ids[..j].contains(&ids[j]) {
                return Some(j);
            }
        }
        return None;
    }
    let mut idx: Vec<u32> = (0..ids.len() as u32).collect();
    idx.sort_unstable_by(|&a, &b| ids[a as usize].cmp(ids[b as usize]).then(a.cmp(&b)));
    idx.windows(2)
        .find(|w| ids[w[0] as usize] == ids[w[1] as usize])
        .map(|w| w[1] as usize)
}

/// The index of a span that repeats an earlier one (same document and
/// offsets), if any. Overlapping spans are allowed: a chunker with overlap,
/// migrated to spans, gives them.
fn repeated_span(spans: &[SpanLabel]) -> Option<usize> {
    if spans.len() < 2 {
        return None;
    }
    let mut idx: Vec<u32> = (0..spans.len() as u32).collect();
    let key = |i: u32| {
        let s = &spans[i as usize];
        (s.doc.as_str(), s.start, s.end)
    };
    idx.sort_unstable_by(|&a, &b| key(a).cmp(&key(b)).then(a.cmp(&b)));
    idx.windows(2)
        .filter(|w| key(w[0]) == key(w[1]))
        .map(|w| w[1] as usize)
        .min()
}

// ---- native YAML / JSON / JSONL ------------------------------------------

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a gold set: a map with `version: 1` and a `queries:` list"
)]
struct NativeFile {
    #[serde(default)]
    version: Option<Version>,
    queries: Vec<NativeQuery>,
}

/// `version:`, with a message that says what is expected (serde's would
/// say `u32`).
struct Version(u64);

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Version;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("the format version, 1")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Version, E> {
                Ok(Version(v))
            }
        }
        d.deserialize_u64(V)
    }
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a gold query: a map with `id`, `text`, `stratum`, `relevant`"
)]
struct NativeQuery {
    id: IdValue,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    stratum: Option<String>,
    #[serde(default)]
    relevant: Option<Relevant>,
    /// Who gave each label ([`crate::goldbuild::provenance`]); metrics
    /// ignore it.
    #[serde(default)]
    #[allow(dead_code)]
    provenance: Option<de::IgnoredAny>,
    /// A reference answer (RAG gold sets): kept, never scored.
    #[serde(default)]
    answer: Option<serde_yaml::Value>,
    #[serde(default, alias = "metadata")]
    meta: Option<serde_yaml::Value>,
}

/// An id written as a string or a bare integer (YAML reads `id: 301` as one).
struct IdValue(String);

impl<'de> Deserialize<'de> for IdValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = IdValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an id (a string or an integer)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<IdValue, E> {
                Ok(IdValue(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<IdValue, E> {
                Ok(IdValue(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<IdValue, E> {
                Ok(IdValue(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

struct Grade(i32);

impl<'de> Deserialize<'de> for Grade {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Grade;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer grade (0 = judged non-relevant, 1, 2, ...)")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Grade, E> {
                i32::try_from(v)
                    .map(Grade)
                    .map_err(|_| E::custom(format!("grade {v} is out of range")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Grade, E> {
                i32::try_from(v)
                    .map(Grade)
                    .map_err(|_| E::custom(format!("grade {v} is out of range")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Grade, E> {
                Err(E::custom(format!(
                    "grade {v} is not an integer; grades are integers"
                )))
            }
        }
        d.deserialize_any(V)
    }
}

/// `relevant:` as a list (`[a, b]`, items `{id, grade}`, span items
/// `{doc, start, end, grade}`) or a map of id to grade. Order is kept as
/// written, per kind.
struct Relevant(Vec<Label>, Vec<SpanLabel>);

impl<'de> Deserialize<'de> for Relevant {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Relevant;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of chunk ids or spans, or a map of chunk id to grade")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Relevant, A::Error> {
                let mut out = Vec::new();
                let mut spans = Vec::new();
                while let Some(item) = seq.next_element::<LabelItem>()? {
                    match item {
                        LabelItem::Id(l) => out.push(l),
                        LabelItem::Span(s) => spans.push(s),
                    }
                }
                Ok(Relevant(out, spans))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Relevant, A::Error> {
                let mut out = Vec::new();
                while let Some((id, grade)) = map.next_entry::<IdValue, Grade>()? {
                    out.push(Label {
                        id: id.0,
                        grade: grade.0,
                    });
                }
                Ok(Relevant(out, Vec::new()))
            }
            fn visit_unit<E: de::Error>(self) -> std::result::Result<Relevant, E> {
                Ok(Relevant(Vec::new(), Vec::new()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A character offset: a non-negative integer.
struct Offset(u64);

impl<'de> Deserialize<'de> for Offset {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Offset;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a character offset (an integer, 0 or more)")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Offset, E> {
                Ok(Offset(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Offset, E> {
                u64::try_from(v)
                    .map(Offset)
                    .map_err(|_| E::custom(format!("offset {v} is negative; offsets count from 0")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Offset, E> {
                Err(E::custom(format!("offset {v} is not an integer")))
            }
        }
        d.deserialize_any(V)
    }
}

/// One list item: a bare id (grade 1), `{id, grade}`, or a span
/// `{doc, start, end, grade}` (grade 1 when left out).
enum LabelItem {
    Id(Label),
    Span(SpanLabel),
}

impl<'de> Deserialize<'de> for LabelItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LabelItem;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a chunk id, {id: ..., grade: ...} or a span {doc: ..., start: ..., end: ..., grade: ...}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<LabelItem, E> {
                Ok(LabelItem::Id(Label {
                    id: v.to_string(),
                    grade: 1,
                }))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<LabelItem, E> {
                Ok(LabelItem::Id(Label {
                    id: v.to_string(),
                    grade: 1,
                }))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<LabelItem, E> {
                Ok(LabelItem::Id(Label {
                    id: v.to_string(),
                    grade: 1,
                }))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<LabelItem, A::Error> {
                const FIELDS: &[&str] = &["id", "grade", "doc", "start", "end"];
                let mut id = None;
                let mut doc: Option<String> = None;
                let mut start = None;
                let mut end = None;
                let mut grade = 1;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "id" => id = Some(map.next_value::<IdValue>()?.0),
                        "grade" => grade = map.next_value::<Grade>()?.0,
                        "doc" => doc = Some(map.next_value::<IdValue>()?.0),
                        "start" => start = Some(map.next_value::<Offset>()?.0),
                        "end" => end = Some(map.next_value::<Offset>()?.0),
                        other => {
                            return Err(de::Error::unknown_field(other, FIELDS));
                        }
                    }
                }
                match (id, doc) {
                    (Some(_), Some(_)) => Err(de::Error::custom(
                        "a label has either `id` (a chunk) or `doc`, `start`, `end` (a span), not both",
                    )),
                    (Some(id), None) => {
                        if start.is_some() || end.is_some() {
                            return Err(de::Error::custom(
                                "`start` and `end` belong to a span label, which names its `doc` instead of an `id`",
                            ));
                        }
                        Ok(LabelItem::Id(Label { id, grade }))
                    }
                    (None, Some(doc)) => {
                        let start = start.ok_or_else(|| de::Error::missing_field("start"))?;
                        let end = end.ok_or_else(|| de::Error::missing_field("end"))?;
                        if doc.is_empty() {
                            return Err(de::Error::custom("a span label's `doc` is empty"));
                        }
                        if start >= end {
                            return Err(de::Error::custom(format!(
                                "span of `{}` has start {start} and end {end}; end is exclusive and must be greater than start",
                                excerpt(&doc)
                            )));
                        }
                        Ok(LabelItem::Span(SpanLabel {
                            doc,
                            start,
                            end,
                            grade,
                        }))
                    }
                    (None, None) => Err(de::Error::missing_field("id")),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Turns serde's "unknown field `x`" into a hint naming the nearest field.
fn field_hint(msg: &str) -> String {
    crate::diag::unknown_key_hint(msg).unwrap_or_else(|| {
        "see the gold set format: `version: 1` and `queries:`, each with id, text, stratum, relevant (and optionally answer, meta)".into()
    })
}

/// serde's message for a gold file, made readable: a missing `queries`
/// list and the parser's depth limit are named for what they mean, and a
/// quoted value is cut to an excerpt.
fn native_message(msg: &str) -> String {
    if msg.starts_with("missing field `queries`") {
        return "no `queries:` list".into();
    }
    if msg.contains("recursion limit exceeded") {
        return "nested too deeply to be a gold set".into();
    }
    clip_message(msg)
}

fn parse_native(path: &Path, bytes: &[u8], format: GoldFormat) -> Result<GoldSet> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| input_error(path, Some(line_of(bytes, e.valid_up_to())), "not valid UTF-8"))?;
    if text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        return Err(input_error_hint(
            path,
            None,
            format!("the gold set is empty ({format})"),
            "check that the file was written completely; a gold set needs at least one query",
        ));
    }
    if format == GoldFormat::Yaml {
        yaml_guard(text).map_err(|(line, why)| {
            input_error_hint(
                path,
                Some(line),
                format!("refused: {why}"),
                "write the gold set out plainly (no aliases, a few levels of nesting)",
            )
        })?;
    }
    let mut b = Builder::new(path);
    match format {
        GoldFormat::Jsonl => {
            for (i, line) in text.lines().enumerate() {
                let t = line.trim();
                if t.is_empty() {
                    continue;
                }
                let q: NativeQuery = serde_json::from_str(t).map_err(|e| {
                    let msg = e.to_string();
                    input_error_hint(
                        path,
                        Some(i + 1),
                        format!("not a gold query object: {}", native_message(&msg)),
                        field_hint(&msg),
                    )
                })?;
                add_native(&mut b, q, Some(i + 1))?;
            }
        }
        GoldFormat::Json | GoldFormat::Yaml => {
            let file: NativeFile = if format == GoldFormat::Json {
                serde_json::from_str(text).map_err(|e| {
                    let msg = e.to_string();
                    input_error_hint(
                        path,
                        Some(e.line()),
                        format!("invalid gold set: {}", native_message(&msg)),
                        field_hint(&msg),
                    )
                })?
            } else {
                serde_yaml::from_str(text).map_err(|e| {
                    let line = e.location().map(|l| l.line());
                    let msg = e.to_string();
                    input_error_hint(
                        path,
                        line,
                        format!("invalid gold set: {}", native_message(&msg)),
                        field_hint(&msg),
                    )
                })?
            };
            if let Some(Version(v)) = file.version {
                if v != 1 {
                    return Err(input_error_hint(
                        path,
                        None,
                        format!("gold set version {v} is not supported"),
                        "this rgate reads version 1; upgrade rgate",
                    ));
                }
            }
            let mut seen: HashMap<String, usize> = HashMap::new();
            for q in file.queries {
                let nth = seen.entry(q.id.0.clone()).or_insert(0);
                *nth += 1;
                let line = locate_id(text, &q.id.0, *nth);
                add_native(&mut b, q, line)?;
            }
        }
        GoldFormat::Qrels => unreachable!("qrels are parsed by parse_qrels"),
    }
    Ok(b.finish(format))
}

fn add_native(b: &mut Builder, q: NativeQuery, line: Option<usize>) -> Result<()> {
    let stratum = b.stratum(q.stratum.as_deref().unwrap_or(DEFAULT_STRATUM), line)?;
    let pos = b.queries.len();
    let (labels, spans) = q.relevant.map(|r| (r.0, r.1)).unwrap_or_default();
    b.add(
        GoldQuery {
            id: q.id.0,
            text: q.text,
            stratum,
            labels: labels.into(),
            spans,
        },
        line,
        false,
    )?;
    if q.answer.is_some() || q.meta.is_some() {
        b.extras.insert(
            pos,
            QueryExtra {
                answer: q.answer,
                meta: q.meta,
            },
        );
    }
    Ok(())
}

/// The line of the `nth` query whose id is `id`, found in the text: serde
/// gives no positions for values that parsed fine, and a validation error
/// without a line is much less useful.
fn locate_id(text: &str, id: &str, nth: usize) -> Option<usize> {
    let mut count = 0;
    for (i, line) in text.lines().enumerate() {
        let t = line
            .trim_start()
            .trim_start_matches("- ")
            .trim_start_matches('{')
            .trim_start();
        let rest = t
            .strip_prefix("id:")
            .or_else(|| t.strip_prefix("\"id\":"))
            .or_else(|| t.strip_prefix("'id':"));
        if let Some(rest) = rest {
            let v = rest.trim().trim_end_matches(',').trim_end_matches('}').trim();
            let v = v.trim_matches(|c| c == '"' || c == '\'');
            if v == id || v.starts_with(&format!("{id}\"")) || v.starts_with(&format!("{id}'")) {
                count += 1;
                if count == nth {
                    return Some(i + 1);
                }
            }
        }
    }
    None
}

// ---- TREC qrels -----------------------------------------------------------

fn read_strata_file(path: &Path) -> Result<Vec<(String, String, usize)>> {
    let raw =
        std::fs::read(path).map_err(|e| input_error(path, None, format!("cannot read strata file: {e}")))?;
    let bytes = strip_bom(&raw);
    let text = std::str::from_utf8(bytes)
        .map_err(|e| input_error(path, Some(line_of(bytes, e.valid_up_to())), "not valid UTF-8"))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let (q, s) = t
            .split_once('\t')
            .or_else(|| t.split_once(char::is_whitespace))
            .ok_or_else(|| {
                input_error_hint(
                    path,
                    Some(i + 1),
                    "expected `qid<TAB>stratum`",
                    "one query per line, tab separated",
                )
            })?;
        out.push((q.trim().to_string(), s.trim().to_string(), i + 1));
    }
    Ok(out)
}

/// One judgment as read, borrowing from the file's text.
struct QrelsLine<'t> {
    doc: &'t str,
    grade: i32,
    line: u32,
    /// The query's position in order of first appearance.
    q: u32,
}

/// TREC qrels. Files list a query's judgments together: such a file is
/// read in one pass that builds each query as its lines end. A file that
/// lists a query in two places, or one with an error found only once a
/// query is complete (a repeated judgment, a bad stratum or query id), is
/// read again by [`parse_qrels_any_order`], which reports exactly what it
/// always has. Errors within a line are the same in both passes and come
/// first, in line order.
fn parse_qrels(
    path: &Path,
    bytes: &[u8],
    strata_file: Option<&[(String, String, usize)]>,
    warnings: &mut Warnings,
) -> Result<GoldSet> {
    parse_qrels_split(path, bytes, strata_file, warnings, SPLIT_QRELS_BYTES)
}

/// From this size on, a grouped qrels file is read in two halves at once
/// (see [`parse_grouped_qrels`]); below it a second thread costs more
/// than it saves.
const SPLIT_QRELS_BYTES: usize = 1 << 20;

/// [`parse_qrels`], reading a grouped file in halves from `min_split`
/// bytes on (the tests split small files).
fn parse_qrels_split(
    path: &Path,
    bytes: &[u8],
    strata_file: Option<&[(String, String, usize)]>,
    warnings: &mut Warnings,
    min_split: usize,
) -> Result<GoldSet> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| input_error(path, Some(line_of(bytes, e.valid_up_to())), "not valid UTF-8"))?;
    // Later entries for a query win, as in `parse_qrels_any_order`.
    let stratum_of: HashMap<&str, &str> = strata_file
        .unwrap_or_default()
        .iter()
        .map(|(q, s, _)| (q.as_str(), s.as_str()))
        .collect();
    let Some(b) = parse_grouped_qrels(path, text, &stratum_of, min_split)? else {
        return parse_qrels_any_order(path, text, strata_file, warnings);
    };
    if let Some(sf) = strata_file {
        let unknown: Vec<&str> = sf
            .iter()
            .map(|(q, _, _)| q.as_str())
            .filter(|q| b.index.get(&b.queries, q.as_bytes()).is_none())
            .collect();
        unknown_strata_warning(path, &unknown, warnings);
    }
    Ok(b.finish(GoldFormat::Qrels))
}

/// The strata file's queries that the qrels lack, if any.
fn unknown_strata_warning(path: &Path, unknown: &[&str], warnings: &mut Warnings) {
    if !unknown.is_empty() {
        warnings.push(format!(
            "the strata file names {} quer{} absent from {}: {}",
            unknown.len(),
            if unknown.len() == 1 { "y" } else { "ies" },
            path.display(),
            name_some(unknown, 5)
        ));
    }
}

/// The fields of a qrels line, its grade parsed; `None` for a blank line.
/// The errors name the line, whichever pass reads it.
fn qrels_fields<'t>(path: &Path, line: &'t str, line_no: usize) -> Result<Option<(&'t str, &'t str, i32)>> {
    let mut f = line.split_ascii_whitespace();
    let (Some(qid), Some(_iter), Some(doc), Some(grade), None) =
        (f.next(), f.next(), f.next(), f.next(), f.next())
    else {
        let n = line.split_ascii_whitespace().count();
        if n == 0 {
            return Ok(None);
        }
        return Err(input_error_hint(
            path,
            Some(line_no),
            format!("expected 4 fields `qid iter docid grade`, found {n}"),
            if n == 6 {
                "six fields look like a TREC run: pass that file as --run, the qrels as --gold"
            } else {
                "TREC qrels have one judgment per line"
            },
        ));
    };
    let grade: i32 = grade.parse().map_err(|_| {
        input_error(
            path,
            Some(line_no),
            format!("grade `{}` is not an integer", excerpt(grade)),
        )
    })?;
    Ok(Some((qid, doc, grade)))
}

/// The reader of a grouped qrels file: each query's labels are gathered
/// in buffers reused from query to query and copied out once, at their
/// final size, when the query id changes. No list of every judgment and no
/// map of borrowed ids: at 500,000 lines those were 17 MB written once and
/// read once, and page faults cost as much as the parsing. From
/// `min_split` bytes on the text is cut in two at a change of query id and
/// the halves are read at once, on two threads; an id found in both halves
/// (a file not grouped after all) makes the file go to the second pass like
/// any other. `Ok(None)`: the file needs [`parse_qrels_any_order`] (see
/// [`parse_qrels`]).
fn parse_grouped_qrels<'p>(
    path: &'p Path,
    text: &str,
    stratum_of: &HashMap<&str, &str>,
    min_split: usize,
) -> Result<Option<Builder<'p>>> {
    let cut = match text.len() >= min_split {
        true => qrels_split_point(text),
        false => None,
    };
    let queries = match cut {
        None => grouped_queries(path, text, 0)?,
        Some(at) => {
            let (first, second) = text.split_at(at);
            let (a, b) = rayon::join(
                || grouped_queries(path, first, 0),
                || grouped_queries(path, second, memchr::memchr_iter(b'\n', first.as_bytes()).count()),
            );
            // The first half's lines come first: so do its errors. Its
            // `None` (it stopped at a query the second pass must report,
            // unread lines after it may hold an error that comes first)
            // sends the whole file to the second pass.
            let Some(mut a) = a? else {
                return Ok(None);
            };
            let Some(mut b) = b? else {
                return Ok(None);
            };
            a.queries.append(&mut b.queries);
            a.hashes.append(&mut b.hashes);
            Some(a)
        }
    };
    let mut b = Builder::new(path);
    Ok(queries.and_then(|q| b.adopt(q, stratum_of).then_some(b)))
}

/// Where to cut a qrels text in two: the start of the first line past the
/// middle whose query id differs from that of the last judgment before
/// it, so that no query is cut. `None` when there is no such line.
fn qrels_split_point(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let first_field = |from: usize, to: usize| text[from..to].split_ascii_whitespace().next();
    let mid = bytes.len() / 2;
    let mut at = mid + memchr::memchr(b'\n', &bytes[mid..])? + 1;
    // The query id of the last line before `at` that is not blank.
    let mut end = at - 1;
    let prev = loop {
        let start = memchr::memrchr(b'\n', &bytes[..end]).map_or(0, |p| p + 1);
        if let Some(qid) = first_field(start, end) {
            break Some(qid);
        }
        if start == 0 {
            break None;
        }
        end = start - 1;
    };
    while at < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |p| at + p);
        match first_field(at, end) {
            Some(qid) if Some(qid) != prev => return Some(at),
            _ => at = end + 1,
        }
    }
    None
}

/// The queries of (part of) a grouped qrels text, in order, each in
/// stratum 0 until [`Builder::adopt`] gives it its own; `first_line`:
/// lines before the text, for the line numbers of errors. `Ok(None)` at
/// the first query that repeats a judgment or comes back after another.
fn grouped_queries(path: &Path, text: &str, first_line: usize) -> Result<Option<GroupedQueries>> {
    // Room for a query per 128 bytes (the 70k-query qrels have one per
    // 156): the lists are not copied as they fill.
    let room = (text.len() / 128).min(1 << 20);
    let mut out = GroupedQueries {
        queries: Vec::with_capacity(room),
        hashes: Vec::with_capacity(room),
        seen: Vec::new(),
    };
    let mut query = QueryBuffer::default();
    let mut current: Option<&str> = None;
    for (i, line) in lines(text).enumerate() {
        let Some((qid, doc, grade)) = qrels_fields(path, line, first_line + i + 1)? else {
            continue;
        };
        if let Some(c) = current.filter(|c| !same_id(c.as_bytes(), qid.as_bytes())) {
            if !out.push(&mut query, c) {
                return Ok(None);
            }
        }
        current = Some(qid);
        query.push(doc, grade);
    }
    if let Some(c) = current {
        if !out.push(&mut query, c) {
            return Ok(None);
        }
    }
    Ok(Some(out))
}

/// The queries of a grouped qrels text, their ids checked (not empty, no
/// white space) and hashed for the index while they are at hand: indexing
/// them afterwards, one thread for all, then reads no id.
struct GroupedQueries {
    queries: Vec<GoldQuery>,
    /// `id_hash` of each query's id.
    hashes: Vec<u64>,
    /// The same hashes (with the low bit set, 0 marking a free slot) in an
    /// open-addressing set, a power of two long, at most 3/4 full: a query
    /// id that comes back is noticed when it does. A file not grouped
    /// would otherwise be read to its end, a query per line for a shuffled
    /// one, before [`Builder::adopt`] found the repeated id: 1.5 times the
    /// time of reading it the one way that can.
    seen: Vec<u64>,
}

impl GroupedQueries {
    /// Takes the query `qid` out of `buffer`; `false` when it repeats a
    /// judgment (see [`QueryBuffer::finish`]), its id contains white space
    /// or came before (or shares its 64-bit hash with one that did: then
    /// the second pass reads a file it need not, and reads it right).
    fn push(&mut self, buffer: &mut QueryBuffer, qid: &str) -> bool {
        let h = id_hash(qid.as_bytes());
        if bad_query_id(qid) || !self.first_time(h) {
            return false;
        }
        let Some(q) = buffer.finish(qid) else {
            return false;
        };
        self.queries.push(q);
        self.hashes.push(h);
        true
    }

    /// Adds `hash` to `seen`; `false` when it was there.
    fn first_time(&mut self, hash: u64) -> bool {
        if (self.hashes.len() + 1) * 4 > self.seen.len() * 3 {
            let size = (self.seen.len() * 2).max(1024);
            self.seen = vec![0; size];
            for &h in &self.hashes {
                set_insert(&mut self.seen, h | 1);
            }
        }
        set_insert(&mut self.seen, hash | 1)
    }
}

/// Adds `key` (not 0) to an open-addressing set of a power of two slots
/// with room left; `false` when it was there.
fn set_insert(set: &mut [u64], key: u64) -> bool {
    let mask = set.len() - 1;
    let mut slot = (key >> 1) as usize & mask;
    loop {
        match set[slot] {
            0 => {
                set[slot] = key;
                return true;
            }
            k if k == key => return false,
            _ => slot = (slot + 1) & mask,
        }
    }
}

/// One query's judgments while a grouped qrels file is read.
#[derive(Default)]
struct QueryBuffer {
    labels: Labels,
    /// The hash of each label id: labels are compared pairwise by hash,
    /// by bytes only when the hashes are equal.
    hashes: Vec<u64>,
    /// Label positions sorted by id, for a pool too large to compare
    /// pairwise.
    order: Vec<u32>,
}

impl QueryBuffer {
    fn push(&mut self, doc: &str, grade: i32) {
        self.labels.push(doc, grade);
        self.hashes.push(id_hash(doc.as_bytes()));
    }

    /// The query `qid` with the labels gathered, the buffer emptied;
    /// `None` when the query repeats a judgment: the error is left for the
    /// second pass.
    fn finish(&mut self, qid: &str) -> Option<GoldQuery> {
        if self.has_repeat() {
            return None;
        }
        // Cloning allocates exactly the size used, where the buffer grew
        // by doubling.
        let labels = self.labels.clone();
        self.labels.ids.clear();
        self.labels.ends.clear();
        self.hashes.clear();
        Some(GoldQuery {
            id: qid.to_string(),
            text: None,
            stratum: 0,
            labels,
            spans: Vec::new(),
        })
    }

    /// Whether a label id appears twice: compared pairwise for the usual
    /// handful of judgments, sorted for pools.
    fn has_repeat(&mut self) -> bool {
        let l = &self.labels;
        let n = l.len();
        let id = |i: usize| l.get(i).map_or(&[][..], |x| x.id.as_bytes());
        if n <= 16 {
            let h = &self.hashes;
            return (1..n).any(|j| (0..j).any(|i| h[i] == h[j] && same_id(id(i), id(j))));
        }
        self.order.clear();
        self.order.extend(0..n as u32);
        self.order
            .sort_unstable_by(|&a, &b| id(a as usize).cmp(id(b as usize)));
        self.order
            .windows(2)
            .any(|w| id(w[0] as usize) == id(w[1] as usize))
    }
}

/// TREC qrels in any order, in one pass over the text: fields are
/// borrowed, queries are found through one map of borrowed ids, and
/// repeated judgments are found per query once it is complete.
fn parse_qrels_any_order(
    path: &Path,
    text: &str,
    strata_file: Option<&[(String, String, usize)]>,
    warnings: &mut Warnings,
) -> Result<GoldSet> {
    // Query order is first appearance. The judgments go into one list;
    // only a file that lists a query in two places needs it sorted.
    // Room for a query per 128 bytes (the 70kq qrels have one per 156):
    // growing the map from empty rehashed it eleven times, 8% of the load.
    // Unused room costs little: only the control bytes are written.
    let mut position: IdMap<u32> =
        HashMap::with_capacity_and_hasher((text.len() / 128).min(1 << 20), Default::default());
    let mut qids: Vec<&str> = Vec::new();
    // About 20 bytes a line in the usual qrels file.
    let mut judged: Vec<QrelsLine> = Vec::with_capacity(text.len() / 20 + 1);
    let mut grouped = true;
    let mut last: Option<(&str, u32)> = None;
    for (i, line) in lines(text).enumerate() {
        let line_no = i + 1;
        let Some((qid, doc, grade)) = qrels_fields(path, line, line_no)? else {
            continue;
        };
        // Qrels list a query's judgments together: only a change of query
        // id needs the map.
        let q = match last {
            Some((id, q)) if same_id(id.as_bytes(), qid.as_bytes()) => q,
            _ => {
                let q = *position.entry(qid).or_insert_with(|| {
                    qids.push(qid);
                    qids.len() as u32 - 1
                });
                // A query seen before, not just now: the file is not grouped.
                grouped &= q as usize == qids.len() - 1;
                last = Some((qid, q));
                q
            }
        };
        judged.push(QrelsLine {
            doc,
            grade,
            line: line_no as u32,
            q,
        });
    }
    if !grouped {
        // Stable: each query's judgments stay in file order.
        judged.sort_by_key(|l| l.q);
    }
    let mut stratum_of: HashMap<&str, &str> = HashMap::new();
    if let Some(sf) = strata_file {
        let mut unknown = Vec::new();
        for (q, s, _line) in sf {
            if !position.contains_key(q.as_str()) {
                unknown.push(q.as_str());
            }
            stratum_of.insert(q, s);
        }
        unknown_strata_warning(path, &unknown, warnings);
    }
    drop(position);
    let mut b = Builder::new(path);
    b.queries.reserve(qids.len());
    b.index.grow_to(qids.len());
    // Without a strata file every query is in the default stratum: looked
    // up once, not once per query.
    let default_stratum = match stratum_of.is_empty() && !qids.is_empty() {
        true => Some(b.stratum(DEFAULT_STRATUM, None)?),
        false => None,
    };
    let mut rest = judged.as_slice();
    for (q, qid) in qids.into_iter().enumerate() {
        let n = rest.iter().take_while(|l| l.q as usize == q).count();
        let (judged, after) = rest.split_at(n);
        rest = after;
        if let Some((first, again)) = repeated_judgment(judged) {
            return Err(input_error_hint(
                path,
                Some(again as usize),
                format!(
                    "query `{}`: document `{}` is judged twice (first at line {first})",
                    excerpt(qid),
                    excerpt(judged.iter().find(|l| l.line == again).map_or("", |l| l.doc))
                ),
                "keep one judgment per (query, document)",
            ));
        }
        let stratum = match default_stratum {
            Some(s) => s,
            None => b.stratum(stratum_of.get(qid).copied().unwrap_or(DEFAULT_STRATUM), None)?,
        };
        let mut labels = Labels::with_capacity(judged.len(), judged.iter().map(|l| l.doc.len()).sum());
        for l in judged {
            labels.push(l.doc, l.grade);
        }
        b.add(
            GoldQuery {
                id: qid.to_string(),
                text: None,
                stratum,
                labels,
                spans: Vec::new(),
            },
            None,
            true,
        )?;
    }
    Ok(b.finish(GoldFormat::Qrels))
}

/// The lines of the first and second judgment of a repeated document, if
/// any: pairwise for the usual handful of judgments, sorted for pools.
fn repeated_judgment(judged: &[QrelsLine]) -> Option<(u32, u32)> {
    if judged.len() <= 16 {
        for j in 1..judged.len() {
            let doc = judged[j].doc.as_bytes();
            if let Some(first) = judged[..j].iter().find(|l| same_id(l.doc.as_bytes(), doc)) {
                return Some((first.line, judged[j].line));
            }
        }
        return None;
    }
    let mut idx: Vec<u32> = (0..judged.len() as u32).collect();
    idx.sort_unstable_by(|&a, &b| judged[a as usize].doc.cmp(judged[b as usize].doc).then(a.cmp(&b)));
    idx.windows(2)
        .filter(|w| judged[w[0] as usize].doc == judged[w[1] as usize].doc)
        .map(|w| (judged[w[0] as usize].line, judged[w[1] as usize].line))
        .min_by_key(|&(_, again)| again)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn load_str(name: &str, content: &str) -> Result<(GoldSet, Warnings)> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(name);
        std::fs::File::create(&p)
            .unwrap()
            .write_all(content.as_bytes())
            .unwrap();
        GoldSet::load(&p, None)
    }

    #[test]
    fn yaml_lists_maps_and_items() {
        let (g, w) = load_str(
            "g.yaml",
            "version: 1\nqueries:\n  - id: q1\n    stratum: how-to\n    relevant: [\"a#1\", b]\n  - id: 2\n    relevant: {\"x#0\": 2, y: 0}\n  - id: q3\n    relevant:\n      - {id: z, grade: 3}\n",
        )
        .unwrap();
        assert_eq!(g.len(), 3);
        assert_eq!(g.strata, vec!["how-to", "default"]);
        assert_eq!(g.queries[1].id, "2");
        assert_eq!(
            g.queries[1].labels.get(0).unwrap().to_label(),
            Label {
                id: "x#0".into(),
                grade: 2
            }
        );
        assert_eq!(g.queries[2].labels.get(0).unwrap().grade, 3);
        assert!(w.is_empty());
    }

    #[test]
    fn duplicate_query_id_names_its_line() {
        let err = load_str(
            "g.yaml",
            "queries:\n  - id: q1\n    relevant: [a]\n  - id: q1\n    relevant: [b]\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("g.yaml:4: duplicate query id `q1`"), "{err}");
    }

    #[test]
    fn unknown_field_suggests_the_right_one() {
        let err = load_str("g.yaml", "queries:\n  - id: q1\n    relevent: [a]\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("g.yaml:3"), "{err}");
        assert!(err.contains("did you mean `relevant`"), "{err}");
    }

    #[test]
    fn fractional_grades_are_refused() {
        let err = load_str("g.yaml", "queries:\n  - id: q1\n    relevant: {a: 1.5}\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not an integer"), "{err}");
    }

    #[test]
    fn jsonl_errors_carry_the_line() {
        let err = load_str(
            "g.jsonl",
            "{\"id\": \"q1\", \"relevant\": [\"a\"]}\n{\"id\": \"q2\", \"relevant\": [\"a\", \"a\"]}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("g.jsonl:2: query `q2`: label `a` appears twice"),
            "{err}"
        );
    }

    #[test]
    fn qrels_detected_from_content_with_negative_grades() {
        let (g, _) = load_str("qrels", "301 0 d1 1\n301 0 d2 -1\n302 0 d3 0\n").unwrap();
        assert_eq!(g.format, GoldFormat::Qrels);
        assert_eq!(g.queries[0].labels.get(1).unwrap().grade, -1);
        // 302 has no relevant label: kept (and warned about when prepared).
        assert_eq!(g.len(), 2);
    }

    #[test]
    fn qrels_duplicate_judgment_is_an_error() {
        let err = load_str("q.txt", "301 0 d1 1\n301 0 d1 0\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("q.txt:2:"), "{err}");
    }

    #[test]
    fn reserved_stratum_names_are_refused() {
        let err = load_str(
            "g.yaml",
            "queries:\n  - id: q1\n    stratum: all\n    relevant: [a]\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("reserved"), "{err}");
    }

    #[test]
    fn fingerprint_ignores_order_and_text_but_not_labels() {
        let (a, _) = load_str(
            "a.yaml",
            "queries:\n  - {id: q1, text: x, relevant: [a, b]}\n  - {id: q2, relevant: [c]}\n",
        )
        .unwrap();
        let (b, _) = load_str(
            "b.yaml",
            "queries:\n  - {id: q2, relevant: [c]}\n  - {id: q1, text: y, relevant: [b, a]}\n",
        )
        .unwrap();
        let (c, _) = load_str(
            "c.yaml",
            "queries:\n  - {id: q2, relevant: [c]}\n  - {id: q1, relevant: {a: 2, b: 1}}\n",
        )
        .unwrap();
        assert_eq!(a.fingerprint(), b.fingerprint());
        assert_ne!(a.fingerprint(), c.fingerprint());
    }

    #[test]
    fn fingerprint_is_the_one_stored_baselines_carry() {
        // Recorded in config/demo/baselines/ by an earlier rgate: a changed
        // canonical form would make every stored baseline re-score.
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let (g, _) = GoldSet::load(&root.join("config/demo/gold.yaml"), None).unwrap();
        assert_eq!(
            g.fingerprint(),
            "sha256:ea7d9cb4a7791155eb418646be16420850504e64727375b54c76c7775e9fc56b"
        );
        // The canonical text, by hand: ids needing JSON escapes, labels by id.
        let (g, _) = load_str(
            "g.yaml",
            "queries:\n  - id: \"q\\\"1\"\n    stratum: s\n    relevant: {b: 2, \"a\\tx\": 0}\n",
        )
        .unwrap();
        let mut h = Sha256::new();
        h.update(b"rgate-gold-v1\n[\"q\\\"1\",\"s\",[[\"a\\tx\",0],[\"b\",2]]]\n");
        assert_eq!(g.fingerprint(), format!("sha256:{:x}", h.finalize()));
    }

    #[test]
    fn span_labels_in_every_native_form_mixed_with_ids() {
        let yaml = "queries:\n  - id: q1\n    relevant:\n      - c7\n      - {doc: docs/auth.md, start: 1200, end: 1650, grade: 2}\n      - {id: c9, grade: 0}\n      - {doc: docs/auth.md, start: 0, end: 10}\n";
        let json = r#"{"queries": [{"id": "q1", "relevant": ["c7", {"doc": "docs/auth.md", "start": 1200, "end": 1650, "grade": 2}, {"id": "c9", "grade": 0}, {"doc": "docs/auth.md", "start": 0, "end": 10}]}]}"#;
        let jsonl = r#"{"id": "q1", "relevant": ["c7", {"doc": "docs/auth.md", "start": 1200, "end": 1650, "grade": 2}, {"id": "c9", "grade": 0}, {"doc": "docs/auth.md", "start": 0, "end": 10}]}"#;
        for (name, text) in [("g.yaml", yaml), ("g.json", json), ("g.jsonl", jsonl)] {
            let (g, _) = load_str(name, text).unwrap();
            let q = &g.queries[0];
            assert_eq!(
                q.labels.iter().map(|l| (l.id, l.grade)).collect::<Vec<_>>(),
                [("c7", 1), ("c9", 0)],
                "{name}"
            );
            assert_eq!(
                q.spans,
                [
                    SpanLabel {
                        doc: "docs/auth.md".into(),
                        start: 1200,
                        end: 1650,
                        grade: 2
                    },
                    SpanLabel {
                        doc: "docs/auth.md".into(),
                        start: 0,
                        end: 10,
                        grade: 1
                    },
                ],
                "{name}"
            );
            assert!(g.has_spans());
        }
    }

    #[test]
    fn bad_spans_are_named_with_their_line() {
        let cases = [
            ("{\"id\": \"q1\", \"relevant\": [{\"doc\": \"d\", \"start\": 9, \"end\": 9}]}\n", "g.jsonl:1: not a gold query object: span of `d` has start 9 and end 9"),
            ("{\"id\": \"q0\", \"relevant\": [\"a\"]}\n{\"id\": \"q1\", \"relevant\": [{\"doc\": \"d\", \"start\": -3, \"end\": 9}]}\n", "g.jsonl:2: not a gold query object: offset -3 is negative"),
            ("{\"id\": \"q1\", \"relevant\": [{\"doc\": \"d\", \"start\": 0}]}\n", "g.jsonl:1: not a gold query object: missing field `end`"),
            ("{\"id\": \"q1\", \"relevant\": [{\"doc\": \"d\", \"id\": \"c\", \"start\": 0, \"end\": 4}]}\n", "either `id` (a chunk) or `doc`"),
            ("{\"id\": \"q1\", \"relevant\": [{\"doc\": \"d\", \"start\": 0, \"end\": 4}, {\"doc\": \"d\", \"start\": 0, \"end\": 4, \"grade\": 2}]}\n", "g.jsonl:1: query `q1`: span 0..4 of `d` appears twice"),
            ("{\"id\": \"q1\", \"relevant\": [{\"doc\": \"d\", \"start\": 0.5, \"end\": 4}]}\n", "offset 0.5 is not an integer"),
        ];
        for (text, want) in cases {
            let err = format!("{:#}", load_str("g.jsonl", text).unwrap_err());
            assert!(err.contains(want), "{err}");
            assert!(err.contains("hint:"), "{err}");
        }
        // YAML: the line of the offending span.
        let err = load_str(
            "g.yaml",
            "queries:\n  - id: q1\n    relevant:\n      - {doc: d, start: 5, end: 2}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("g.yaml:4"), "{err}");
        // Overlapping spans are fine (a chunker with overlap migrates to them).
        let (g, _) = load_str("g.yaml", "queries:\n  - id: q1\n    relevant:\n      - {doc: d, start: 0, end: 10}\n      - {doc: d, start: 5, end: 15}\n").unwrap();
        assert_eq!(g.queries[0].spans.len(), 2);
    }

    #[test]
    fn fingerprint_of_spans() {
        // Without spans the canonical line is unchanged (see above); with
        // them a fourth element lists them sorted by (doc, start, end).
        let (g, _) = load_str(
            "g.yaml",
            "queries:\n  - id: q\n    stratum: s\n    relevant: [a, {doc: \"d\\\"x\", start: 5, end: 9, grade: 2}, {doc: c, start: 0, end: 1, grade: 0}]\n",
        )
        .unwrap();
        let mut h = Sha256::new();
        h.update(b"rgate-gold-v1\n[\"q\",\"s\",[[\"a\",1]],[[\"c\",0,1,0],[\"d\\\"x\",5,9,2]]]\n");
        assert_eq!(g.fingerprint(), format!("sha256:{:x}", h.finalize()));
    }

    #[test]
    fn lines_split_as_str_lines_does() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "a\r\nb",
            "a\n\nb\n",
            "\r\n",
            "a\rb\n",
            "é\nü\r\n\r",
        ] {
            assert_eq!(
                lines(text).collect::<Vec<_>>(),
                text.lines().collect::<Vec<_>>(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn same_id_is_byte_equality() {
        for len in 0..20usize {
            let a: Vec<u8> = (0..len as u8).map(|i| b'a' + i).collect();
            assert!(same_id(&a, &a.clone()), "len {len}");
            for i in 0..len {
                let mut b = a.clone();
                b[i] ^= 1;
                assert!(!same_id(&a, &b), "len {len}, byte {i}");
            }
            let mut longer = a.clone();
            longer.push(0);
            assert!(!same_id(&a, &longer), "a zero byte more is another id");
        }
    }

    #[test]
    fn fingerprint_escaping_and_grades_are_serde_jsons() {
        // The fast paths must write the bytes serde_json and `to_string`
        // wrote before them: stored baselines carry the hash.
        let mut strings: Vec<String> = (0u8..0x80).map(|b| format!("a{}z", b as char)).collect();
        strings.extend(["", "plain-id#3", "é ü", "\u{2028}", "\u{7f}x"].map(String::from));
        for s in &strings {
            let mut got = Vec::new();
            json_string(&mut got, s);
            assert_eq!(got, serde_json::to_vec(s).unwrap(), "{s:?}");
        }
        for v in [
            0i64,
            7,
            -1,
            10,
            -10,
            99,
            100,
            i64::from(i32::MIN),
            i64::from(i32::MAX),
            i64::MIN,
        ] {
            let mut got = Vec::new();
            push_int(&mut got, v);
            assert_eq!(got, v.to_string().into_bytes(), "{v}");
        }
    }

    /// Labels are sorted by a number made of their first 8 bytes, then by
    /// the whole id: the order must be the ids' byte order, also for ids
    /// that share 8 bytes, end in a zero byte, or are prefixes of others.
    #[test]
    fn fingerprint_sorts_labels_by_their_bytes() {
        use sha2::{Digest, Sha256};
        let sorted = [
            "a",
            "ab",
            "ab\u{0}",
            "ab\u{0}c",
            "abcdefgh",
            "abcdefgh\u{0}",
            "abcdefgh0",
            "abcdefgh1",
            "abcdefgi",
            "b",
            "é",
        ];
        let shuffled: Vec<&str> = [7, 2, 10, 0, 5, 9, 3, 8, 1, 6, 4]
            .iter()
            .map(|&i| sorted[i])
            .collect();
        let q = GoldQuery {
            id: "q".into(),
            text: None,
            stratum: 0,
            spans: Vec::new(),
            labels: shuffled
                .iter()
                .map(|id| Label {
                    id: id.to_string(),
                    grade: 1,
                })
                .collect(),
        };
        let g = GoldSet::from_parts("g", GoldFormat::Yaml, vec![q], vec!["s".into()]).unwrap();
        let labels: Vec<serde_json::Value> = sorted.iter().map(|id| serde_json::json!([id, 1])).collect();
        let line = serde_json::to_string(&serde_json::json!(["q", "s", labels])).unwrap();
        let mut h = Sha256::new();
        h.update(format!("rgate-gold-v1\n{line}\n").as_bytes());
        assert_eq!(g.fingerprint(), format!("sha256:{:x}", h.finalize()));
    }

    #[test]
    fn qrels_in_any_order_group_by_first_appearance() {
        // 302 comes first; 301's judgments are split by it and keep their
        // file order; the fingerprint is that of the grouped file.
        let (g, _) = load_str(
            "q.txt",
            "302 0 x 1\n301 0 d2 0\n302 0 y 2\n301 0 d1 1\n\n303 0 z 0\n",
        )
        .unwrap();
        let ids: Vec<&str> = g.queries.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["302", "301", "303"]);
        let labels =
            |i: usize| -> Vec<(&str, i32)> { g.queries[i].labels.iter().map(|l| (l.id, l.grade)).collect() };
        assert_eq!(labels(0), [("x", 1), ("y", 2)]);
        assert_eq!(labels(1), [("d2", 0), ("d1", 1)]);
        assert_eq!(labels(2), [("z", 0)]);
        assert_eq!(g.strata, ["default"]);
        let mut h = Sha256::new();
        h.update(
            b"rgate-gold-v1\n[\"301\",\"default\",[[\"d1\",1],[\"d2\",0]]]\n[\"302\",\"default\",[[\"x\",1],[\"y\",2]]]\n[\"303\",\"default\",[[\"z\",0]]]\n",
        );
        assert_eq!(g.fingerprint(), format!("sha256:{:x}", h.finalize()));
        // A repeat across the two places names both lines.
        let err = load_str("q.txt", "301 0 d1 1\n302 0 x 1\n301 0 d1 0\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("q.txt:3: query `301`: document `d1` is judged twice (first at line 1)"),
            "{err}"
        );
    }

    #[test]
    fn packed_labels_give_back_each_id_and_grade() {
        let v = vec![
            Label {
                id: "a#1".into(),
                grade: 2,
            },
            Label {
                id: "".into(),
                grade: 0,
            },
            Label {
                id: "bcd".into(),
                grade: -1,
            },
        ];
        let l: Labels = v.clone().into();
        assert_eq!(l.len(), 3);
        assert_eq!(l.iter().len(), 3);
        let got: Vec<(&str, i32)> = l.iter().map(|x| (x.id, x.grade)).collect();
        assert_eq!(got, [("a#1", 2), ("", 0), ("bcd", -1)]);
        assert_eq!(l.get(2), Some(LabelRef { id: "bcd", grade: -1 }));
        assert_eq!(l.get(3), None);
        assert_eq!(l.id_bytes(), "a#1bcd");
        assert_eq!(l.grades().collect::<Vec<_>>(), [2, 0, -1]);
        assert_eq!(v.into_iter().collect::<Labels>(), l);
        assert!(Labels::default().is_empty());
    }

    #[test]
    fn id_order_is_byte_order_whether_or_not_the_file_was_sorted() {
        let gold = |ids: &[&str]| {
            let queries = ids
                .iter()
                .map(|id| GoldQuery {
                    id: id.to_string(),
                    text: None,
                    stratum: 0,
                    labels: Labels::default(),
                    spans: Vec::new(),
                })
                .collect();
            GoldSet::from_parts("g", GoldFormat::Qrels, queries, vec!["s".into()]).unwrap()
        };
        assert_eq!(gold(&["10", "2", "Z", "a"]).id_order(), [0, 1, 2, 3]);
        assert_eq!(gold(&["b", "a", "c", "B"]).id_order(), [3, 1, 0, 2]);
        assert_eq!(gold(&["q1", "q10", "q2", "q1x"]).id_order(), [0, 1, 3, 2]);
    }

    /// Loads `qrels` with the strata file `strata` beside it.
    fn load_with_strata(qrels: &str, strata: &str) -> Result<(GoldSet, Warnings)> {
        let dir = tempfile::tempdir().unwrap();
        let (q, s) = (dir.path().join("q.txt"), dir.path().join("s.tsv"));
        std::fs::write(&q, qrels).unwrap();
        std::fs::write(&s, strata).unwrap();
        GoldSet::load(&q, Some(&s))
    }

    #[test]
    fn grouped_qrels_name_the_lines_of_a_repeated_judgment() {
        // Grouped files are read in one pass; blank lines still count.
        let err = load_str("q.txt", "301 0 a 1\n\n301 0 b 1\n301 0 a 0\n302 0 x 1\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("q.txt:4: query `301`: document `a` is judged twice (first at line 1)"),
            "{err}"
        );
        // A pool of 40, the repeat in the middle of it: lines 8 and 41.
        let mut text = String::new();
        for i in 0..40 {
            text.push_str(&format!("301 0 d{i} 1\n"));
            if i == 39 {
                text.push_str("301 0 d7 0\n");
            }
        }
        text.push_str("302 0 x 1\n");
        let err = load_str("q.txt", &text).unwrap_err().to_string();
        assert!(
            err.contains("q.txt:41: query `301`: document `d7` is judged twice (first at line 8)"),
            "{err}"
        );
        // The first query with a repeat is the one reported.
        let err = load_str("q.txt", "301 0 a 1\n302 0 b 1\n302 0 b 1\n303 0 c 1\n303 0 c 1\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("q.txt:3: query `302`: document `b` is judged twice (first at line 2)"),
            "{err}"
        );
    }

    #[test]
    fn a_malformed_line_is_reported_before_a_query_level_error() {
        // Every line is read before queries are checked: the bad grade on
        // line 4 wins over an earlier repeat or query id with white space.
        for (text, line) in [
            ("301 0 a 1\n301 0 a 0\n302 0 x 1\n303 0 y one\n", 4),
            ("302 0 x 1\n301\u{3000}1 0 a 1\n303 0 y 1\n303 0 z one\n", 4),
        ] {
            let err = load_str("q.txt", text).unwrap_err().to_string();
            assert!(
                err.contains(&format!("q.txt:{line}: grade `one` is not an integer")),
                "{err}"
            );
        }
        let err = load_str("q.txt", "301 0 a 1\n301\u{3000}2 0 x 1\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("query id `301\u{3000}2` contains white space"),
            "{err}"
        );
    }

    #[test]
    fn grouped_qrels_keep_file_order_and_find_every_query() {
        let mut text = String::new();
        // More queries than the index first has room for (a query per 128
        // bytes of file), and than the reader's table of query hashes (1,024
        // slots): both grow as queries arrive.
        for q in 0..3000 {
            text.push_str(&format!("q{q} 0 b 2\nq{q} 0 a 0\n"));
        }
        let (g, w) = load_str("q.txt", &text).unwrap();
        assert!(w.is_empty());
        assert_eq!(g.len(), 3000);
        for q in 0..3000 {
            let id = format!("q{q}");
            assert_eq!(g.position(&id), Some(q), "{id}");
            assert_eq!(g.position_bytes(id.as_bytes()), Some(q), "{id}");
            let labels: Vec<(&str, i32)> = g.queries[q].labels.iter().map(|l| (l.id, l.grade)).collect();
            assert_eq!(labels, [("b", 2), ("a", 0)]);
        }
        for absent in ["q3000", "q", "", "Q1", "q1 "] {
            assert_eq!(g.position(absent), None, "{absent:?}");
        }
        assert_eq!(g.position_bytes(b"q\xff"), None);
    }

    /// Reads `text` as qrels, cut in halves whatever its size.
    fn split_qrels(text: &str, strata: Option<&[(String, String, usize)]>) -> Result<(GoldSet, Warnings)> {
        let mut w = Warnings::default();
        let g = parse_qrels_split(Path::new("q.txt"), text.as_bytes(), strata, &mut w, 0)?;
        Ok((g, w))
    }

    #[test]
    fn qrels_are_cut_between_two_queries() {
        // 37 bytes: the middle (18) is the blank line's newline; the cut is
        // at the first line after it whose query is not the one before.
        let text = "q1 0 a 1\nq1 0 b 1\n\nq1 0 c 1\nq2 0 d 1\n";
        assert_eq!(qrels_split_point(text), Some(text.find("q2").unwrap()));
        assert_eq!(qrels_split_point("q1 0 a 1\nq1 0 b 1\nq1 0 c 1\n"), None);
        assert_eq!(qrels_split_point("q1 0 a 1"), None);
        assert_eq!(qrels_split_point(""), None);
    }

    #[test]
    fn the_one_pass_reader_stops_at_a_query_that_comes_back() {
        let read = |text: &str| grouped_queries(Path::new("q.txt"), text, 0).unwrap();
        assert!(read("1 0 a 1\n2 0 b 1\n1 0 c 1\n").is_none());
        // Past the first sizes of the set of ids seen (1024 slots, 3/4 full).
        let mut text: String = (0..2000).map(|q| format!("q{q} 0 d 1\n")).collect();
        let grouped = read(&text).unwrap();
        assert_eq!(grouped.queries.len(), 2000);
        assert_eq!(grouped.hashes.len(), 2000);
        text.push_str("q1500 0 e 1\n");
        assert!(read(&text).is_none());
    }

    #[test]
    fn qrels_read_in_halves_are_the_qrels_read_whole() {
        // 30 queries of 3 judgments; query 14 has 40, so that the middle
        // of the file falls inside it; a blank line in the middle of it.
        let mut text = String::new();
        let mut want: Vec<(String, Vec<(String, i32)>)> = Vec::new();
        for q in 0..30 {
            let n = if q == 14 { 40 } else { 3 };
            let labels: Vec<(String, i32)> = (0..n).map(|d| (format!("d{d}"), (q + d) % 3)).collect();
            for (i, (d, g)) in labels.iter().enumerate() {
                text.push_str(&format!("q{q} 0 {d} {g}\n"));
                if q == 14 && i == 20 {
                    text.push('\n');
                }
            }
            want.push((format!("q{q}"), labels));
        }
        let (g, w) = split_qrels(&text, None).unwrap();
        assert!(w.is_empty());
        let got: Vec<(String, Vec<(String, i32)>)> = g
            .queries
            .iter()
            .map(|q| {
                (
                    q.id.clone(),
                    q.labels.iter().map(|l| (l.id.to_string(), l.grade)).collect(),
                )
            })
            .collect();
        assert_eq!(got, want);
        for (i, (id, _)) in want.iter().enumerate() {
            assert_eq!(g.position(id), Some(i));
        }
        assert_eq!(g.strata, ["default"]);
        assert!(g.queries.iter().all(|q| q.stratum == 0));
        // Strata given by a file, in the second half too.
        let sf = vec![
            ("q29".to_string(), "late".to_string(), 1),
            ("q0".to_string(), "early".to_string(), 2),
        ];
        let (g, _) = split_qrels(&text, Some(&sf)).unwrap();
        assert_eq!(g.strata, ["early", "default", "late"]);
        assert_eq!(
            (g.stratum_name(0), g.stratum_name(1), g.stratum_name(29)),
            ("early", "default", "late")
        );
    }

    #[test]
    fn qrels_read_in_halves_report_the_lines_of_the_whole_file() {
        let mut text = String::new();
        for q in 0..20 {
            text.push_str(&format!("q{q} 0 a 1\nq{q} 0 b 0\n"));
        }
        // Line 36 is in the second half.
        let bad = text.replacen("q17 0 b 0", "q17 0 b x", 1);
        let err = split_qrels(&bad, None).unwrap_err().to_string();
        assert!(err.contains("q.txt:36: grade `x` is not an integer"), "{err}");
        let bad = text.replacen("q17 0 b 0", "q17 0 a 0", 1);
        let err = split_qrels(&bad, None).unwrap_err().to_string();
        assert!(
            err.contains("q.txt:36: query `q17`: document `a` is judged twice (first at line 35)"),
            "{err}"
        );
        // A repeat on line 4, bad grades on lines 12 and 36: the first bad
        // grade is reported, though the first half stops reading at line 4.
        let bad = text
            .replacen("q1 0 b 0", "q1 0 a 0", 1)
            .replacen("q5 0 b 0", "q5 0 b y", 1)
            .replacen("q17 0 b 0", "q17 0 b x", 1);
        let err = split_qrels(&bad, None).unwrap_err().to_string();
        assert!(err.contains("q.txt:12: grade `y` is not an integer"), "{err}");
        // q3 again at the end: in both halves, so grouped by first
        // appearance as any unsorted file is.
        let (g, _) = split_qrels(&format!("{text}q3 0 c 2\n"), None).unwrap();
        assert_eq!(g.len(), 20);
        let labels: Vec<(&str, i32)> = g.queries[3].labels.iter().map(|l| (l.id, l.grade)).collect();
        assert_eq!(labels, [("a", 1), ("b", 0), ("c", 2)]);
    }

    #[test]
    fn strata_files_apply_to_grouped_and_ungrouped_qrels_alike() {
        for qrels in [
            "1 0 a 1\n2 0 b 1\n3 0 c 1\n",
            "1 0 a 1\n2 0 b 1\n3 0 c 1\n1 0 d 0\n",
        ] {
            // 2 is named twice: the later line wins; 9 is not in the qrels.
            let (g, w) = load_with_strata(qrels, "2\tx\n9\ty\n3\tz\n2\tz\n").unwrap();
            let strata: Vec<&str> = (0..3).map(|q| g.stratum_name(q)).collect();
            assert_eq!(strata, ["default", "z", "z"], "{qrels:?}");
            assert_eq!(g.strata, ["default", "z"], "{qrels:?}");
            assert_eq!(w.0.len(), 1, "{qrels:?}");
            assert!(
                w.0[0].contains("the strata file names 1 query absent from") && w.0[0].ends_with("`9`"),
                "{w:?}"
            );
            let err = load_with_strata(qrels, "3\tall\n").unwrap_err().to_string();
            assert!(err.contains("q.txt: stratum name `all` is reserved"), "{err}");
        }
    }

    #[test]
    fn gold_sets_from_parts_refuse_a_repeated_query_id() {
        let q = |id: &str| GoldQuery {
            id: id.into(),
            text: None,
            stratum: 0,
            labels: Labels::default(),
            spans: Vec::new(),
        };
        let ok = GoldSet::from_parts("g", GoldFormat::Yaml, vec![q("a"), q("b")], vec!["s".into()]).unwrap();
        assert_eq!(
            (ok.position("a"), ok.position("b"), ok.position("c")),
            (Some(0), Some(1), None)
        );
        let err = GoldSet::from_parts(
            "g",
            GoldFormat::Yaml,
            vec![q("a"), q("b"), q("a")],
            vec!["s".into()],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("duplicate query id `a`"), "{err}");
    }

    #[test]
    fn qrels_repeats_are_found_in_large_pools_too() {
        let mut text = String::new();
        for i in 0..40 {
            text.push_str(&format!("301 0 d{i} 1\n"));
        }
        text.push_str("302 0 x 1\n301 0 d7 0\n");
        let err = load_str("q.txt", &text).unwrap_err().to_string();
        assert!(
            err.contains("q.txt:42: query `301`: document `d7` is judged twice (first at line 8)"),
            "{err}"
        );
    }
}
