//! TREC qrels, with an optional strata file: the grouped one-pass reader
//! and the any-order reader it falls back to.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;

use super::builder::{bad_query_id, Builder};
use super::index::{id_hash, lines, same_id, IdMap};
use super::{GoldFormat, GoldQuery, GoldSet, Labels, DEFAULT_STRATUM};
use crate::diag::{excerpt, input_error, input_error_hint, line_of, name_some, strip_bom, Warnings};

// ---- TREC qrels -----------------------------------------------------------

pub(super) fn read_strata_file(path: &Path) -> Result<Vec<(String, String, usize)>> {
    let raw = crate::input::read(
        path,
        "strata file",
        crate::input::GOLD_LIMIT,
        "check the --strata path; a strata file has `qid<TAB>stratum` lines",
    )?;
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
pub(super) fn parse_qrels(
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
        let digits = grade.strip_prefix(['-', '+']).unwrap_or(grade);
        let why = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            "is out of range (grades are integers below 2^31)"
        } else if grade.parse::<f64>().is_ok_and(f64::is_finite) {
            "is a decimal number; grades are integers (0 = judged non-relevant, 1, 2, ...)"
        } else {
            "is not an integer"
        };
        input_error(path, Some(line_no), format!("grade `{}` {why}", excerpt(grade)))
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

impl Builder<'_> {
    /// Takes the queries of a grouped qrels file, in order, giving each
    /// its stratum; `false` (the builder then unusable) at the first
    /// query id seen before (the second pass groups and reports) or
    /// stratum refused. The ids were checked and hashed as they were read;
    /// the queries stay where they are: no query is moved to be indexed.
    pub(super) fn adopt(&mut self, grouped: GroupedQueries, stratum_of: &HashMap<&str, &str>) -> bool {
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
pub(super) struct GroupedQueries {
    pub(super) queries: Vec<GoldQuery>,
    /// `id_hash` of each query's id.
    pub(super) hashes: Vec<u64>,
    /// The same hashes (with the low bit set, 0 marking a free slot) in an
    /// open-addressing set, a power of two long, at most 3/4 full: a query
    /// id that comes back is noticed when it does. A file not grouped
    /// would otherwise be read to its end, a query per line for a shuffled
    /// one, before [`Builder::adopt`] found the repeated id: 1.5 times the
    /// time of reading it the one way that can.
    pub(super) seen: Vec<u64>,
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
    pub(super) hashes: Vec<u64>,
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
    use crate::gold::GoldSet;
    use sha2::{Digest, Sha256};

    use crate::gold::tests::load_str;

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
