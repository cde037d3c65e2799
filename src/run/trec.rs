//! TREC runs, read as bytes in large blocks.
//!
//! Memory stays proportional to one query, not to the file: almost every
//! TREC run lists each query's lines together, so a query is judged and
//! dropped as soon as the next one starts. If a finished query shows up
//! again (a shuffled file), the file is read a second time keeping every
//! query until the end; the result is the same either way.
//!
//! Ranking never sorts a whole query. trec_eval sorts by (score desc, docid
//! desc) and spends most of its time doing so; here only the rank of each
//! *labeled* document is needed, which is one plus the number of entries
//! ordered before it. The few labeled entries are sorted, and every other
//! entry is placed among them with a comparison or two.

use std::cmp::Ordering;
use std::io::Read;
use std::path::Path;

use anyhow::Result;

use super::{keep_depth, JudgedRun, KeepIds, RunFormat, Tally};
use crate::diag::{input_error, input_error_hint};
use crate::gold::GoldSet;
use crate::judge::{Hit, QueryLabels, Ranking};

/// Grade of an entry with no label.
const UNLABELED: i32 = i32::MIN;

#[derive(Debug, Clone, Copy)]
struct Entry {
    score: f64,
    start: u32,
    len: u32,
    grade: i32,
}

/// One query's entries, their ids packed into one buffer.
#[derive(Debug, Default)]
pub(crate) struct QueryBuf {
    entries: Vec<Entry>,
    arena: Vec<u8>,
}

impl QueryBuf {
    fn push(&mut self, doc: &[u8], score: f64, grade: i32) {
        let start = self.arena.len() as u32;
        self.arena.extend_from_slice(doc);
        self.entries.push(Entry {
            score,
            start,
            len: doc.len() as u32,
            grade,
        });
    }

    fn doc(&self, e: &Entry) -> &[u8] {
        &self.arena[e.start as usize..(e.start + e.len) as usize]
    }

    /// trec_eval's order: `Less` when `a` ranks before `b`.
    #[inline]
    fn order(&self, a: &Entry, b: &Entry) -> Ordering {
        match b.score.partial_cmp(&a.score) {
            Some(Ordering::Equal) | None => self.doc(b).cmp(self.doc(a)),
            Some(o) => o,
        }
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.arena.clear();
    }

    /// Drops repeated ids, keeping the best-ranked occurrence; returns how
    /// many were dropped.
    fn dedupe(&mut self, table: &mut Vec<u32>) -> usize {
        let n = self.entries.len();
        if n < 2 {
            return 0;
        }
        let size = (n * 2).next_power_of_two();
        table.clear();
        table.resize(size, u32::MAX);
        let mask = size - 1;
        let mut dropped: Vec<usize> = Vec::new();
        for i in 0..n {
            let doc = self.doc(&self.entries[i]);
            let mut slot = (hash(doc) as usize) & mask;
            loop {
                let j = table[slot];
                if j == u32::MAX {
                    table[slot] = i as u32;
                    break;
                }
                let j = j as usize;
                if self.doc(&self.entries[j]) == doc {
                    // Same id twice: the better-ranked occurrence stays.
                    if self.entries[i].score > self.entries[j].score {
                        table[slot] = i as u32;
                        dropped.push(j);
                    } else {
                        dropped.push(i);
                    }
                    break;
                }
                slot = (slot + 1) & mask;
            }
        }
        if dropped.is_empty() {
            return 0;
        }
        dropped.sort_unstable();
        let mut k = 0;
        let mut idx = 0;
        self.entries.retain(|_| {
            let keep = !(k < dropped.len() && dropped[k] == idx);
            if !keep {
                k += 1;
            }
            idx += 1;
            keep
        });
        dropped.len()
    }

    /// Ranks of the labeled entries, and the top `depth` ids if asked.
    fn judge(&self, depth: Option<usize>) -> (Ranking, Option<Vec<String>>) {
        let mut labeled: Vec<Entry> = self
            .entries
            .iter()
            .filter(|e| e.grade != UNLABELED)
            .copied()
            .collect();
        labeled.sort_unstable_by(|a, b| self.order(a, b));
        let mut ahead = vec![0u32; labeled.len() + 1];
        if !labeled.is_empty() {
            for e in self.entries.iter().filter(|e| e.grade == UNLABELED) {
                // How many labeled entries rank before this one; it ranks
                // before all the others.
                let p = labeled.partition_point(|l| self.order(l, e) == Ordering::Less);
                ahead[p] += 1;
            }
        }
        let mut hits = Vec::with_capacity(labeled.len());
        let mut unlabeled_before = 0;
        for (i, l) in labeled.iter().enumerate() {
            unlabeled_before += ahead[i];
            hits.push(Hit {
                rank: i as u32 + 1 + unlabeled_before,
                grade: l.grade,
            });
        }
        let ranking = Ranking {
            num_ret: self.entries.len() as u32,
            hits,
        };
        let ids = depth.map(|d| {
            let mut idx: Vec<usize> = (0..self.entries.len()).collect();
            let by = |a: &usize, b: &usize| self.order(&self.entries[*a], &self.entries[*b]);
            if d < idx.len() {
                if d == 0 {
                    idx.clear();
                } else {
                    idx.select_nth_unstable_by(d - 1, by);
                    idx.truncate(d);
                }
            }
            idx.sort_unstable_by(by);
            idx.iter()
                .map(|&i| String::from_utf8_lossy(self.doc(&self.entries[i])).into_owned())
                .collect()
        });
        (ranking, ids)
    }
}

/// FNV-1a folded 8 bytes at a time: ids are short, and this only has to
/// spread them over a per-query table.
#[inline]
fn hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let v = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h ^ v).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(23);
    }
    for &b in chunks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^ (h >> 29)
}

/// Where the lines of the query being read go.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Nothing,
    Gold(usize),
    Extra,
}

/// Per-query progress in streaming mode.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seen {
    No,
    Open,
    Done,
}

/// Raised internally when a finished query reappears in streaming mode.
struct Ungrouped;

struct Reader<'a> {
    path: &'a Path,
    gold: &'a GoldSet,
    labels: &'a [QueryLabels],
    depth: Option<usize>,
    /// Streaming (grouped) or keeping every query to the end.
    keep_all: bool,
    rankings: Vec<Ranking>,
    ids: Vec<Vec<String>>,
    seen: Vec<Seen>,
    bufs: Vec<QueryBuf>,
    current: QueryBuf,
    table: Vec<u32>,
    target: Target,
    last_qid: Vec<u8>,
    extra: std::collections::HashSet<Vec<u8>>,
    tally: Tally,
}

pub fn read(path: &Path, gold: &GoldSet, labels: &[QueryLabels], keep: KeepIds) -> Result<JudgedRun> {
    match read_mode(path, gold, labels, keep, false)? {
        Ok(run) => Ok(run),
        Err(Ungrouped) => match read_mode(path, gold, labels, keep, true)? {
            Ok(run) => Ok(run),
            Err(Ungrouped) => unreachable!("keep-all mode never reports ungrouped input"),
        },
    }
}

fn read_mode(
    path: &Path,
    gold: &GoldSet,
    labels: &[QueryLabels],
    keep: KeepIds,
    keep_all: bool,
) -> Result<std::result::Result<JudgedRun, Ungrouped>> {
    let mut file =
        std::fs::File::open(path).map_err(|e| input_error(path, None, format!("cannot read run: {e}")))?;
    let depth = keep_depth(keep);
    let n = gold.len();
    let mut r = Reader {
        path,
        gold,
        labels,
        depth,
        keep_all,
        rankings: vec![Ranking::default(); n],
        ids: if depth.is_some() {
            vec![Vec::new(); n]
        } else {
            Vec::new()
        },
        seen: vec![Seen::No; n],
        bufs: if keep_all {
            (0..n).map(|_| QueryBuf::default()).collect()
        } else {
            Vec::new()
        },
        current: QueryBuf::default(),
        table: Vec::new(),
        target: Target::Nothing,
        last_qid: Vec::new(),
        extra: Default::default(),
        tally: Tally::default(),
    };
    const BLOCK: usize = 1 << 22;
    let mut buf: Vec<u8> = vec![0; BLOCK];
    let mut filled = 0usize;
    let mut line_no = 0usize;
    loop {
        if filled == buf.len() {
            // A line longer than the block: grow rather than fail.
            buf.resize(buf.len() * 2, 0);
        }
        let got = loop {
            match file.read(&mut buf[filled..]) {
                Ok(k) => break k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(input_error(path, None, format!("read failed: {e}"))),
            }
        };
        let eof = got == 0;
        filled += got;
        let end = if eof {
            filled
        } else {
            match memchr::memrchr(b'\n', &buf[..filled]) {
                Some(p) => p + 1,
                None => continue,
            }
        };
        let mut pos = 0;
        while pos < end {
            let nl = memchr::memchr(b'\n', &buf[pos..end]).map_or(end, |p| pos + p);
            line_no += 1;
            if r.line(&buf[pos..nl], line_no)?.is_err() {
                return Ok(Err(Ungrouped));
            }
            pos = nl + 1;
        }
        if eof {
            break;
        }
        buf.copy_within(end..filled, 0);
        filled -= end;
    }
    r.close_current();
    if keep_all {
        for q in 0..n {
            if r.seen[q] != Seen::No {
                let b = std::mem::take(&mut r.bufs[q]);
                r.finalize(q, b);
            }
        }
    }
    let present = r.seen.iter().map(|s| *s != Seen::No).collect();
    let top_ids = depth.map(|_| r.ids);
    Ok(Ok(JudgedRun::finish(
        path,
        RunFormat::Trec,
        gold,
        r.rankings,
        present,
        top_ids,
        r.tally,
    )))
}

/// Splits on runs of spaces and tabs, as `sscanf("%s")` does.
#[inline]
fn fields<'b>(line: &'b [u8], out: &mut [&'b [u8]; 6]) -> usize {
    let mut n = 0;
    let mut i = 0;
    let len = line.len();
    while i < len && n < 6 {
        while i < len && (line[i] == b' ' || line[i] == b'\t' || line[i] == b'\r') {
            i += 1;
        }
        if i == len {
            break;
        }
        let s = i;
        while i < len && !(line[i] == b' ' || line[i] == b'\t' || line[i] == b'\r') {
            i += 1;
        }
        out[n] = &line[s..i];
        n += 1;
    }
    n
}

impl Reader<'_> {
    fn line(&mut self, line: &[u8], line_no: usize) -> Result<std::result::Result<(), Ungrouped>> {
        let mut f: [&[u8]; 6] = [&[]; 6];
        let n = fields(line, &mut f);
        if n == 0 {
            return Ok(Ok(()));
        }
        if n < 5 {
            return Err(input_error_hint(
                self.path,
                Some(line_no),
                format!(
                    "expected `qid Q0 docid rank score tag`, found {n} field{}",
                    if n == 1 { "" } else { "s" }
                ),
                if n == 4 {
                    "four fields look like TREC qrels: pass that file as --gold, the run as --run"
                } else {
                    "TREC runs have six white-space separated fields per line"
                },
            ));
        }
        let (qid, doc, score_field) = (f[0], f[2], f[4]);
        let score = parse_score(score_field).ok_or_else(|| {
            input_error_hint(
                self.path,
                Some(line_no),
                format!("score `{}` is not a number", String::from_utf8_lossy(score_field)),
                "the fifth field of a TREC run line is the score",
            )
        })?;
        if !score.is_finite() {
            return Err(input_error_hint(
                self.path,
                Some(line_no),
                format!("score `{}` is not finite", String::from_utf8_lossy(score_field)),
                "a ranking needs finite scores; fix the retriever's output",
            ));
        }
        if qid != self.last_qid.as_slice() && self.switch(qid).is_err() {
            return Ok(Err(Ungrouped));
        }
        if let Target::Gold(q) = self.target {
            let grade = self.labels[q].grade(doc).unwrap_or(UNLABELED);
            if self.keep_all {
                self.bufs[q].push(doc, score, grade);
            } else {
                self.current.push(doc, score, grade);
            }
        }
        Ok(Ok(()))
    }

    fn switch(&mut self, qid: &[u8]) -> std::result::Result<(), Ungrouped> {
        if !self.keep_all {
            self.close_current();
        }
        self.last_qid.clear();
        self.last_qid.extend_from_slice(qid);
        self.target = match self.gold.position_bytes(qid) {
            Some(q) => {
                match self.seen[q] {
                    Seen::Done if !self.keep_all => return Err(Ungrouped),
                    _ => self.seen[q] = Seen::Open,
                }
                Target::Gold(q)
            }
            None => {
                if self.extra.insert(qid.to_vec()) {
                    self.tally.extra_queries += 1;
                }
                Target::Extra
            }
        };
        Ok(())
    }

    fn close_current(&mut self) {
        if let Target::Gold(q) = self.target {
            if !self.keep_all {
                let b = std::mem::take(&mut self.current);
                self.finalize(q, b);
                self.seen[q] = Seen::Done;
            }
        }
        self.target = Target::Nothing;
    }

    fn finalize(&mut self, q: usize, mut b: QueryBuf) {
        let dropped = b.dedupe(&mut self.table);
        if dropped > 0 {
            self.tally.duplicate_ids += dropped;
            self.tally.duplicate_queries.push(q);
        }
        let (ranking, ids) = b.judge(self.depth);
        self.rankings[q] = ranking;
        if let Some(ids) = ids {
            self.ids[q] = ids;
        }
        b.clear();
        if !self.keep_all {
            // Reuse the allocation for the next query.
            self.current = b;
        }
    }
}

fn parse_score(field: &[u8]) -> Option<f64> {
    std::str::from_utf8(field).ok()?.parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(entries: &[(&str, f64, i32)]) -> QueryBuf {
        let mut b = QueryBuf::default();
        for &(d, s, g) in entries {
            b.push(d.as_bytes(), s, g);
        }
        b
    }

    #[test]
    fn ties_break_by_docid_descending() {
        // Same score: "b" ranks before "a"; "z" has the highest score.
        let b = buf(&[("a", 1.0, 1), ("b", 1.0, UNLABELED), ("z", 2.0, 2)]);
        let (r, ids) = b.judge(Some(10));
        assert_eq!(ids.unwrap(), ["z", "b", "a"]);
        assert_eq!(r.num_ret, 3);
        assert_eq!(r.hits, vec![Hit { rank: 1, grade: 2 }, Hit { rank: 3, grade: 1 }]);
    }

    #[test]
    fn ranks_count_every_entry_ahead() {
        let mut entries = Vec::new();
        for i in 0..50 {
            entries.push((
                format!("d{i:02}"),
                f64::from(100 - i),
                if i % 7 == 3 { 1 } else { UNLABELED },
            ));
        }
        let mut b = QueryBuf::default();
        for (d, s, g) in &entries {
            b.push(d.as_bytes(), *s, *g);
        }
        let (r, ids) = b.judge(Some(5));
        let ranks: Vec<u32> = r.hits.iter().map(|h| h.rank).collect();
        assert_eq!(ranks, [4, 11, 18, 25, 32, 39, 46]);
        assert_eq!(ids.unwrap(), ["d00", "d01", "d02", "d03", "d04"]);
    }

    #[test]
    fn duplicates_keep_the_best_ranked() {
        let mut b = buf(&[("a", 1.0, 1), ("x", 5.0, UNLABELED), ("a", 3.0, 1), ("a", 0.5, 1)]);
        let mut t = Vec::new();
        assert_eq!(b.dedupe(&mut t), 2);
        let (r, _) = b.judge(None);
        assert_eq!(r.num_ret, 2);
        assert_eq!(r.hits, vec![Hit { rank: 2, grade: 1 }]);
    }

    #[test]
    fn fields_split_on_any_blank() {
        let mut f: [&[u8]; 6] = [&[]; 6];
        let n = fields(b"301\tQ0  FR94-1 \t 104\t  2.12\tSTANDARD more junk", &mut f);
        assert_eq!(n, 6);
        assert_eq!(f[2], b"FR94-1");
        assert_eq!(f[4], b"2.12");
    }
}
