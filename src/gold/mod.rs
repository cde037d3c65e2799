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

//!
//! The rooms: [`model`] (labels, queries, forms), [`index`] (lookup by id),
//! [`builder`] (the checks every reader shares), [`native`] (YAML, JSON,
//! JSONL), [`qrels`] (TREC qrels) and [`write`] (the one writer of native
//! gold files).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use sha2::{Digest, Sha256};

use crate::diag::{input_error, input_error_hint, strip_bom, Warnings};

mod builder;
pub mod draw;
mod fast_yaml;
mod index;
mod memory;
mod model;
mod native;
mod qrels;
mod views;
mod write;

use index::{id_hash, id_prefix, QueryIndex};
pub(crate) use index::{same_id, short_word};
pub use memory::MemoryGold;
pub use model::*;
use native::{parse_native, ProvenanceUse};
use qrels::{parse_qrels, read_strata_file};
pub use views::{LabelMode, LabelView};
pub use write::{id_of, to_yaml, GoldDoc};
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
    /// Who gave each label, as a native gold file records it; filled only
    /// by [`GoldSet::load_with_provenance`] (metrics never read it).
    pub provenance: ProvenanceMap,
    /// Model grades, verified queries and the verification draw; empty for
    /// a gold set of people's labels only.
    pub labeling: Labeling,
    index: QueryIndex,
}

/// The optional fields of a native gold query that no metric reads: a
/// reference `answer` (RAG gold sets carry one) and free-form `meta`
/// (also spelled `metadata`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryExtra {
    pub answer: Option<serde_json::Value>,
    pub meta: Option<serde_json::Value>,
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
            provenance: ProvenanceMap::new(),
            labeling: Labeling::default(),
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

    /// Each stratum's rank among the strata sorted by name (bytes), by
    /// stratum number: a numbering that depends on the names alone, where
    /// the stratum numbers themselves follow first appearance in the file.
    /// Whatever resamples by stratum groups by this rank, so a gold file
    /// with its lines or its strata in another order draws the same
    /// queries from the same random streams (SPEC "Statistics, second
    /// edition": order-free).
    pub fn stratum_ranks(&self) -> Vec<u32> {
        let mut by_name: Vec<usize> = (0..self.strata.len()).collect();
        by_name.sort_by(|&a, &b| self.strata[a].as_bytes().cmp(self.strata[b].as_bytes()));
        let mut rank = vec![0u32; self.strata.len()];
        for (r, s) in by_name.into_iter().enumerate() {
            rank[s] = r as u32;
        }
        rank
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
        GoldSet::load_as(path, strata_file, false)
    }

    /// [`GoldSet::load`], keeping each label's provenance (native forms) in
    /// [`GoldSet::provenance`]: `gold validate` and `gold stats` read it
    /// from the same parse as the labels, not from a second one. A
    /// provenance that is not a map of chunk id to `{source, labeler, at,
    /// verified}` is an error here, with its line; [`GoldSet::load`]
    /// skips it unread, as the metrics do not need it.
    pub fn load_with_provenance(path: &Path, strata_file: Option<&Path>) -> Result<(GoldSet, Warnings)> {
        GoldSet::load_as(path, strata_file, true)
    }

    fn load_as(path: &Path, strata_file: Option<&Path>, provenance: bool) -> Result<(GoldSet, Warnings)> {
        let hint = "check the path; gold sets are YAML, JSON, JSONL or TREC qrels";
        let raw = crate::input::read_text(path, "gold set", crate::input::GOLD_LIMIT, hint, hint)?;
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
                let use_ = match provenance {
                    true => ProvenanceUse::Keep,
                    false => ProvenanceUse::Skip,
                };
                parse_native(path, bytes, format, use_)?
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

/// A native gold set's text parsed with the rules every reader applies,
/// for a writer to check what it is about to write (`gold import`: a
/// file the readers refuse would break every command after it), its
/// provenance checked as `gold validate` checks it, but not kept: the
/// caller wants the errors, and 100,000 queries' records are hundreds of
/// MB.
pub fn parse_native_text(path: &Path, text: &str, format: GoldFormat) -> Result<GoldSet> {
    parse_native(path, text.as_bytes(), format, ProvenanceUse::Check)
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
    // A qrels line is `qid iter docid grade`; a YAML gold set's first line
    // is a key (`version: 1`) or a list item (`- id: q1`), never four
    // bare words. So four fields, or an iteration column of 0/Q0, mean
    // qrels even when the grade is bad (`q1 0 d1 x`): the qrels reader then
    // says what is wrong on that line, not YAML that no map was found.
    let fields: Vec<&str> = first.split_whitespace().collect();
    let yaml_like = fields.first() == Some(&"-") || fields.iter().any(|f| f.ends_with(':'));
    let iter_column = fields.len() >= 3 && (fields[1] == "0" || fields[1].eq_ignore_ascii_case("q0"));
    if !yaml_like && (fields.len() == 4 || iter_column) {
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// Loads `content` as a gold file named `name` (its extension picks
    /// the format), for the tests of every reader.
    pub(crate) fn load_str(name: &str, content: &str) -> Result<(GoldSet, Warnings)> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(name);
        std::fs::File::create(&p)
            .unwrap()
            .write_all(content.as_bytes())
            .unwrap();
        GoldSet::load(&p, None)
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

    /// The check of a text about to be written (`gold import`) reads its
    /// provenance with every rule `gold validate` applies, and keeps none
    /// of it: 100,000 queries' records were held only to be dropped.
    #[test]
    fn a_text_checked_before_writing_keeps_no_provenance() {
        let text = "queries:\n- id: q1\n  relevant:\n    a: 1\n  provenance:\n    a: {source: person, labeler: ana, verified: true}\n";
        let g = parse_native_text(Path::new("g.yaml"), text, GoldFormat::Yaml).unwrap();
        assert_eq!((g.len(), g.provenance.len()), (1, 0));
        let (kept, _) = load_str("g.yaml", text).unwrap();
        assert!(kept.provenance.is_empty());
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("g.yaml");
        std::fs::write(&p, text).unwrap();
        let (kept, _) = GoldSet::load_with_provenance(&p, None).unwrap();
        assert_eq!(kept.provenance["q1"]["a"].labeler.as_deref(), Some("ana"));
        // Still checked: a source no reader takes is refused, with its line.
        for (format, bad) in [
            (GoldFormat::Yaml, text.replace("source: person", "source: robot")),
            (
                GoldFormat::Json,
                r#"{"queries": [{"id": "q1", "relevant": {"a": 1}, "provenance": {"a": {"source": "robot"}}}]}"#.into(),
            ),
        ] {
            let e = format!("{:#}", parse_native_text(Path::new("g"), &bad, format).unwrap_err());
            assert!(e.contains("source `robot` is neither person nor model"), "{e}");
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
}
