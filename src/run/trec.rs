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
use crate::chunks::ChunkMap;
use crate::diag::{excerpt_bytes, input_error, input_error_hint, BOM};
use crate::gold::GoldSet;
use crate::judge::{doc_hash, Hit, QueryLabels, Ranking, Touch};

/// Grade of an entry with no label.
pub(super) const UNLABELED: i32 = i32::MIN;
/// Grade of an entry with no id label whose chunk overlaps a span label of
/// its query: ranked like a labeled entry, judged by its location.
const TOUCHES_SPAN: i32 = i32::MIN + 1;

#[derive(Debug, Clone, Copy)]
struct Entry {
    score: f64,
    /// [`doc_hash`] of the id: computed once, for the label lookup and the
    /// duplicate check.
    hash: u64,
    start: u32,
    len: u32,
    grade: i32,
}

/// One query's entries, their ids packed into one buffer.
#[derive(Debug, Default)]
pub(crate) struct QueryBuf {
    entries: Vec<Entry>,
    arena: Vec<u8>,
    /// Scratch of [`QueryBuf::judge`], kept between queries: two
    /// allocations a query were 140,000 for a 70,000-query run.
    labeled: Vec<Entry>,
    ahead: Vec<u32>,
}

impl QueryBuf {
    pub(super) fn push(&mut self, doc: &[u8], hash: u64, score: f64, grade: i32) {
        let start = self.arena.len() as u32;
        self.arena.extend_from_slice(doc);
        self.entries.push(Entry {
            score,
            hash,
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

    pub(super) fn clear(&mut self) {
        self.entries.clear();
        self.arena.clear();
    }

    /// Drops repeated ids, keeping the best-ranked occurrence; returns how
    /// many were dropped.
    pub(super) fn dedupe(&mut self, table: &mut Vec<u32>) -> usize {
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
            let h = self.entries[i].hash;
            let mut slot = (h as usize) & mask;
            loop {
                let j = table[slot];
                if j == u32::MAX {
                    table[slot] = i as u32;
                    break;
                }
                let j = j as usize;
                if self.entries[j].hash == h && self.doc(&self.entries[j]) == self.doc(&self.entries[i]) {
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

    /// Counts, for up to `N` labeled entries (sorted by `order`), how many
    /// unlabeled entries rank after exactly `p` of them, into `ahead[p]`.
    /// Counting those with a higher score takes fewer instructions than a
    /// binary search through `order`, and no branch per step; only a tie
    /// needs the ids. The scores sit in a fixed array of `N`, the rest NaN
    /// (neither above nor equal to any score; scores are finite): a
    /// fixed-length loop the compiler unrolls, instead of a loop over the
    /// labeled entries.
    #[inline]
    fn place_unlabeled<const N: usize>(&self, labeled: &[Entry], ahead: &mut [u32]) {
        let mut scores = [f64::NAN; N];
        for (s, l) in scores.iter_mut().zip(labeled) {
            *s = l.score;
        }
        for e in self.entries.iter().filter(|e| e.grade == UNLABELED) {
            let (mut p, mut tie) = (0, false);
            for s in scores {
                p += usize::from(s > e.score);
                tie |= s == e.score;
            }
            if tie {
                p = labeled.partition_point(|l| self.order(l, e) == Ordering::Less);
            }
            ahead[p] += 1;
        }
    }

    /// Ranks of the labeled entries, and the top `depth` ids if asked.
    /// `spans`: the query's labels and the run's chunk map, when the query
    /// has span labels.
    pub(super) fn judge(
        &mut self,
        depth: Option<usize>,
        spans: Option<(&QueryLabels, &ChunkMap)>,
    ) -> (Ranking, Option<Vec<String>>) {
        let mut labeled = std::mem::take(&mut self.labeled);
        labeled.clear();
        labeled.extend(self.entries.iter().filter(|e| e.grade != UNLABELED));
        labeled.sort_unstable_by(|a, b| self.order(a, b));
        let mut ahead = std::mem::take(&mut self.ahead);
        ahead.clear();
        ahead.resize(labeled.len() + 1, 0);
        if labeled.len() > 8 {
            for e in self.entries.iter().filter(|e| e.grade == UNLABELED) {
                // How many labeled entries rank before this one; it ranks
                // before all the others.
                let p = labeled.partition_point(|l| self.order(l, e) == Ordering::Less);
                ahead[p] += 1;
            }
        } else if labeled.len() > 4 {
            self.place_unlabeled::<8>(&labeled, &mut ahead);
        } else if !labeled.is_empty() {
            self.place_unlabeled::<4>(&labeled, &mut ahead);
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
        let ranking = match spans {
            None => Ranking {
                num_ret: self.entries.len() as u32,
                hits,
                chunks: None,
            },
            Some((labels, chunks)) => {
                let touches: Vec<Touch> = labeled
                    .iter()
                    .zip(&hits)
                    .map(|(l, h)| Touch {
                        rank: h.rank,
                        id_grade: (l.grade != TOUCHES_SPAN).then_some(l.grade),
                        loc: chunks.get_bytes(self.doc(l)),
                    })
                    .collect();
                Ranking::from_touches(self.entries.len() as u32, &touches, labels)
            }
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
        self.labeled = labeled;
        self.ahead = ahead;
        (ranking, ids)
    }
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
    /// The chunk map, when the gold set has span labels.
    chunks: Option<&'a ChunkMap>,
    depth: Option<usize>,
    /// Streaming (grouped) or keeping every query to the end.
    keep_all: bool,
    /// The queries judged so far with their rankings, in the order they
    /// were finished: a part of a split file holds only its own queries,
    /// not a slot for every gold query (70,000 of them, in each part).
    judged: Vec<(u32, Ranking)>,
    /// Top ids, beside `judged`, when asked for.
    ids: Vec<Vec<String>>,
    seen: Vec<Seen>,
    /// Where the last gold query read sits: runs list queries in the gold
    /// set's order more often than not, so the next one is tried before
    /// the id map (a lookup that misses the cache three times).
    last_gold: Option<usize>,
    bufs: Vec<QueryBuf>,
    current: QueryBuf,
    table: Vec<u32>,
    target: Target,
    last_qid: Vec<u8>,
    extra: std::collections::HashSet<Vec<u8>>,
    tally: Tally,
}

/// Files smaller than this are read on one thread: splitting costs more
/// than it saves.
const PARALLEL_MIN_BYTES: u64 = 8 << 20;

/// Reads and judges a TREC run; `chunks` locates its ids for gold sets
/// with span labels.
pub fn read(
    path: &Path,
    gold: &GoldSet,
    labels: &[QueryLabels],
    keep: KeepIds,
    chunks: Option<&ChunkMap>,
) -> Result<JudgedRun> {
    let chunks = chunks.filter(|_| gold.has_spans());
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let threads = rayon::current_num_threads();
    if len >= PARALLEL_MIN_BYTES && threads > 1 {
        // Several parts a thread, so that a thread slowed by other work
        // (the gold fingerprint, hashed meanwhile) hands parts over
        // instead of holding up the end; none smaller than the threshold.
        let parts = (len / PARALLEL_MIN_BYTES).clamp(threads as u64, threads as u64 * 4) as usize;
        if let Some(p) = read_parallel(path, gold, labels, keep, chunks, len, parts)? {
            return Ok(p.finish(path, gold));
        }
    }
    let p = match read_range(path, gold, labels, keep, chunks, false, None)? {
        Ok(p) => p,
        Err(Ungrouped) => match read_range(path, gold, labels, keep, chunks, true, None)? {
            Ok(p) => p,
            Err(Ungrouped) => unreachable!("keep-all mode never reports ungrouped input"),
        },
    };
    Ok(p.finish(path, gold))
}

/// What one reader found in its part of a file.
struct Partial {
    /// Each query read, once, with its ranking.
    judged: Vec<(u32, Ranking)>,
    /// Top ids, beside `judged`, when asked for.
    ids: Option<Vec<Vec<String>>>,
    extra: std::collections::HashSet<Vec<u8>>,
    tally: Tally,
}

impl Partial {
    /// Rankings, presence and ids by gold position.
    fn finish(self, path: &Path, gold: &GoldSet) -> JudgedRun {
        let n = gold.len();
        let mut rankings = vec![Ranking::default(); n];
        let mut present = vec![false; n];
        let ids = self.ids.map(|parts| {
            let mut all = vec![Vec::new(); n];
            for ((q, _), v) in self.judged.iter().zip(parts) {
                all[*q as usize] = v;
            }
            all
        });
        for (q, r) in self.judged {
            rankings[q as usize] = r;
            present[q as usize] = true;
        }
        JudgedRun::finish(path, RunFormat::Trec, gold, rankings, present, ids, self.tally)
    }
}

/// Reads a grouped file in `parts` parts, split where the query id
/// changes. `None` when the split does not hold (a query in two parts, or
/// any error): the sequential reader then gives the answer, or the error
/// with its true line number.
fn read_parallel(
    path: &Path,
    gold: &GoldSet,
    labels: &[QueryLabels],
    keep: KeepIds,
    chunks: Option<&ChunkMap>,
    len: u64,
    parts: usize,
) -> Result<Option<Partial>> {
    let mut bounds = vec![0u64];
    for i in 1..parts {
        let at = len * i as u64 / parts as u64;
        match query_boundary(path, at)? {
            Some(b) if b > *bounds.last().unwrap_or(&0) && b < len => bounds.push(b),
            _ => {}
        }
    }
    bounds.push(len);
    let ranges: Vec<(u64, u64)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    let results: Vec<Option<Partial>> = {
        use rayon::prelude::*;
        ranges
            .par_iter()
            .map(
                |&r| match read_range(path, gold, labels, keep, chunks, false, Some(r)) {
                    Ok(Ok(p)) => Some(p),
                    _ => None,
                },
            )
            .collect()
    };
    let mut seen = vec![false; gold.len()];
    let mut merged: Option<Partial> = None;
    for part in results {
        let Some(part) = part else { return Ok(None) };
        for &(q, _) in &part.judged {
            if std::mem::replace(&mut seen[q as usize], true) {
                return Ok(None);
            }
        }
        merged = Some(match merged {
            None => part,
            Some(mut m) => {
                m.judged.extend(part.judged);
                if let (Some(mi), Some(pi)) = (m.ids.as_mut(), part.ids) {
                    mi.extend(pi);
                }
                m.tally.duplicate_ids += part.tally.duplicate_ids;
                m.tally.duplicate_queries.extend(part.tally.duplicate_queries);
                m.tally.unlocated += part.tally.unlocated;
                m.extra.extend(part.extra);
                m
            }
        });
    }
    Ok(merged.map(|mut m| {
        m.tally.extra_queries = m.extra.len();
        m.tally.duplicate_queries.sort_unstable();
        m
    }))
}

/// The offset of the first line at or after `at` whose query id differs
/// from the line before it; `None` if there is none within a few MiB.
fn query_boundary(path: &Path, at: u64) -> Result<Option<u64>> {
    use std::io::{Seek, SeekFrom};
    let mut f = crate::input::open(path, "run", "check the path; runs are TREC, JSON or JSONL files")?;
    // Most queries change within a few KiB; only a query of many long
    // lines needs the larger window.
    for window in [64 << 10, 4 << 20] {
        f.seek(SeekFrom::Start(at))
            .map_err(|e| input_error(path, None, format!("seek failed: {e}")))?;
        let mut buf = vec![0u8; window];
        let n = super::read_up_to(&mut f, &mut buf)
            .map_err(|e| input_error(path, None, format!("read failed: {e}")))?;
        if let Some(b) = first_change(&buf[..n]) {
            return Ok(Some(at + b as u64));
        }
        if n < window {
            break;
        }
    }
    Ok(None)
}

/// The offset in `buf` of the first line whose query id differs from the
/// line before it, past the partial line `buf` starts in.
fn first_change(buf: &[u8]) -> Option<usize> {
    // Skip the partial line we landed in.
    let first_nl = memchr::memchr(b'\n', buf)?;
    let mut pos = first_nl + 1;
    let mut prev: Option<&[u8]> = None;
    while pos < buf.len() {
        let nl = memchr::memchr(b'\n', &buf[pos..]).map(|p| pos + p)?;
        let mut f6: [&[u8]; 6] = [&[]; 6];
        if fields(&buf[pos..nl], &mut f6) > 0 {
            let qid = f6[0];
            match prev {
                Some(p) if p != qid => return Some(pos),
                _ => prev = Some(qid),
            }
        }
        pos = nl + 1;
    }
    None
}

fn read_range(
    path: &Path,
    gold: &GoldSet,
    labels: &[QueryLabels],
    keep: KeepIds,
    chunks: Option<&ChunkMap>,
    keep_all: bool,
    range: Option<(u64, u64)>,
) -> Result<std::result::Result<Partial, Ungrouped>> {
    use std::io::{Seek, SeekFrom};
    let mut file = crate::input::open(path, "run", "check the path; runs are TREC, JSON or JSONL files")?;
    let mut remaining = u64::MAX;
    if let Some((start, end)) = range {
        file.seek(SeekFrom::Start(start))
            .map_err(|e| input_error(path, None, format!("seek failed: {e}")))?;
        remaining = end - start;
    }
    let from_start = range.is_none_or(|(start, _)| start == 0);
    let mut file = file.take(remaining);
    let depth = keep_depth(keep);
    let n = gold.len();
    let mut r = Reader {
        path,
        gold,
        labels,
        chunks,
        depth,
        keep_all,
        judged: Vec::new(),
        ids: Vec::new(),
        seen: vec![Seen::No; n],
        last_gold: None,
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
    // A reader per part, several parts a thread: a block small enough
    // that their buffers are not most of the memory touched.
    const BLOCK: usize = 1 << 20;
    let mut buf: Vec<u8> = vec![0; BLOCK];
    let mut filled = 0usize;
    let mut line_no = 0usize;
    loop {
        if filled == buf.len() {
            // A line longer than the block: grow rather than fail, up to
            // the line limit (an endless line would grow without end).
            if filled >= crate::input::LINE_LIMIT {
                return Err(input_error_hint(
                    path,
                    if from_start { Some(line_no + 1) } else { None },
                    format!(
                        "line longer than {}, the most a TREC run line may hold",
                        crate::input::size(crate::input::LINE_LIMIT as u64)
                    ),
                    "check the path; a TREC run line is `qid Q0 docid rank score tag`",
                ));
            }
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
        if from_start && line_no == 0 && buf[..end].starts_with(BOM) {
            // A byte order mark is not part of the first query id.
            pos = BOM.len();
        }
        let mut f: [&[u8]; 6] = [&[]; 6];
        let block = &buf[..end];
        while pos < end {
            let (n, nl) = scan_line(block, pos, &mut f);
            line_no += 1;
            if r.line(&f, n, line_no)?.is_err() {
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
    Ok(Ok(Partial {
        judged: r.judged,
        ids: depth.map(|_| r.ids),
        extra: r.extra,
        tally: r.tally,
    }))
}

/// Splits the line starting at `i` into up to six fields, on runs of
/// blanks (any byte up to the space, as `sscanf("%s")` treats white space),
/// and returns the field count and the offset of the line's end (its `\n`,
/// or the end of `buf`). A count of 7 means "more than six": the rest of the
/// line is not split.
///
/// A line that ends within the next 64 bytes (almost every run line) is
/// split without a branch per byte: one bit per byte for "blank" and for
/// "newline", then the fields are where the blank bits change. Byte loops
/// mispredict at the end of every field; this was a third of reading.
#[inline]
fn scan_line<'b>(buf: &'b [u8], i: usize, out: &mut [&'b [u8]; 6]) -> (usize, usize) {
    match buf.get(i..i + 64).and_then(|w| <&[u8; 64]>::try_from(w).ok()) {
        Some(w) => {
            let (blank, newline) = window_masks(w);
            if newline == 0 {
                return scan_line_bytes(buf, i, out);
            }
            let end = newline.trailing_zeros() as usize;
            // Past the line's end counts as blank, so every field ends.
            let blank = blank | (!0u64 << end);
            let before = (blank << 1) | 1;
            let mut starts = !blank & before;
            let mut ends = blank & !before;
            // Counted while taken: `count_ones` is a dozen instructions
            // on the x86-64 baseline, which has no popcnt.
            let mut count = 0;
            while starts != 0 && count < out.len() {
                let s = starts.trailing_zeros() as usize;
                let e = ends.trailing_zeros() as usize;
                starts &= starts - 1;
                ends &= ends - 1;
                out[count] = &w[s..e];
                count += 1;
            }
            if starts != 0 {
                count += 1;
            }
            (count, i + end)
        }
        None => scan_line_bytes(buf, i, out),
    }
}

/// One bit per byte of a 64-byte window (bit k for byte k): whether it is
/// blank (at most `b' '`), and whether it is `\n`. SSE2, which every
/// x86-64 processor has: four loads, two compares and a mask each.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn window_masks(w: &[u8; 64]) -> (u64, u64) {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_set1_epi8,
    };
    let mut blank = 0u64;
    let mut newline = 0u64;
    for k in 0..4 {
        // SAFETY: SSE2 is part of the x86-64 baseline, so the instructions
        // exist; the unaligned load reads w[16k..16k + 16], inside `w`.
        let (b, n) = unsafe {
            let x = _mm_loadu_si128(w.as_ptr().add(16 * k).cast::<__m128i>());
            // Unsigned: min(x, ' ') == x exactly where x <= ' '.
            let b = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(b' ' as i8)), x);
            let n = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\n' as i8));
            (_mm_movemask_epi8(b) as u16, _mm_movemask_epi8(n) as u16)
        };
        blank |= u64::from(b) << (16 * k);
        newline |= u64::from(n) << (16 * k);
    }
    (blank, newline)
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn window_masks(w: &[u8; 64]) -> (u64, u64) {
    window_masks_words(w)
}

/// [`window_masks`] eight bytes at a time in plain integers, for other
/// processors.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn window_masks_words(w: &[u8; 64]) -> (u64, u64) {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const SPACE_UP: u64 = 0x5f5f_5f5f_5f5f_5f5f; // 0x7f - b' '
    const NEWLINES: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    // The high bit of each byte to bit k of the top byte: the partial
    // products land on distinct bits, so nothing carries.
    const GATHER: u64 = 0x0102_0408_1020_4080;
    let mut blank = 0u64;
    let mut newline = 0u64;
    for (k, c) in w.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        // Per byte, without carries between bytes: the low seven bits plus
        // 0x5f reach the high bit iff they exceed b' '; a set high bit in
        // the byte itself (non-ASCII) is not blank either.
        let b = !(((x & LOW7) + SPACE_UP) | x) & HIGH;
        let y = x ^ NEWLINES;
        let n = !(((y & LOW7) + LOW7) | y) & HIGH;
        blank |= ((b >> 7).wrapping_mul(GATHER) >> 56) << (8 * k);
        newline |= ((n >> 7).wrapping_mul(GATHER) >> 56) << (8 * k);
    }
    (blank, newline)
}

/// [`scan_line`] a byte at a time: lines of 64 bytes or more, and the end
/// of a buffer.
fn scan_line_bytes<'b>(buf: &'b [u8], mut i: usize, out: &mut [&'b [u8]; 6]) -> (usize, usize) {
    let len = buf.len();
    let mut n = 0;
    loop {
        while i < len && buf[i] <= b' ' && buf[i] != b'\n' {
            i += 1;
        }
        if i >= len || buf[i] == b'\n' {
            return (n, i);
        }
        if n == out.len() {
            let end = memchr::memchr(b'\n', &buf[i..]).map_or(len, |p| i + p);
            return (n + 1, end);
        }
        let s = i;
        while i < len && buf[i] > b' ' {
            i += 1;
        }
        out[n] = &buf[s..i];
        n += 1;
    }
}

/// The fields of one line (no newline inside).
#[inline]
fn fields<'b>(line: &'b [u8], out: &mut [&'b [u8]; 6]) -> usize {
    scan_line(line, 0, out).0
}

impl Reader<'_> {
    fn line(
        &mut self,
        f: &[&[u8]; 6],
        n: usize,
        line_no: usize,
    ) -> Result<std::result::Result<(), Ungrouped>> {
        if n == 0 {
            return Ok(Ok(()));
        }
        // trec_eval needs six fields and ignores text after the sixth (its
        // own test data has such lines). A seventh field whose line has no
        // integer rank in the fourth, though, is a shifted line (an id with a
        // space in it): reading on would take the rank for the score.
        if n < 6 || (n > 6 && !is_rank(f[3])) {
            return Err(self.field_count_error(n, line_no));
        }
        let (qid, doc, score_field) = (f[0], f[2], f[4]);
        let score = parse_score(score_field).ok_or_else(|| {
            if f.iter()
                .any(|x| std::str::from_utf8(x).is_err() || x.contains(&0x7f))
            {
                return input_error_hint(
                    self.path,
                    Some(line_no),
                    "this line is not text, so the file is not a TREC run",
                    "check the path; a TREC run has lines `qid Q0 docid rank score tag`",
                );
            }
            input_error_hint(
                self.path,
                Some(line_no),
                format!("score `{}` is not a number", excerpt_bytes(score_field)),
                "the fifth field of a TREC run line is the score",
            )
        })?;
        if !score.is_finite() {
            return Err(input_error_hint(
                self.path,
                Some(line_no),
                format!("score `{}` is not finite", excerpt_bytes(score_field)),
                "a ranking needs finite scores; fix the retriever's output",
            ));
        }
        if !crate::gold::same_id(qid, &self.last_qid) && self.switch(qid).is_err() {
            return Ok(Err(Ungrouped));
        }
        if let Target::Gold(q) = self.target {
            let h = doc_hash(doc);
            let mut grade = self.labels[q].grade_hashed(doc, h).unwrap_or(UNLABELED);
            if let Some(chunks) = self.chunks {
                if grade == UNLABELED && self.labels[q].has_spans() {
                    match chunks.get_bytes(doc) {
                        Some(loc) if self.labels[q].touches(&loc) => grade = TOUCHES_SPAN,
                        Some(_) => {}
                        None => self.tally.unlocated += 1,
                    }
                }
            }
            if self.keep_all {
                self.bufs[q].push(doc, h, score, grade);
            } else {
                self.current.push(doc, h, score, grade);
            }
        }
        Ok(Ok(()))
    }

    /// Too few fields, or a seventh with the columns visibly shifted.
    #[cold]
    fn field_count_error(&self, n: usize, line_no: usize) -> anyhow::Error {
        let found = if n > 6 {
            "more than 6 fields and no rank in the fourth".to_string()
        } else {
            format!("{n} field{}", if n == 1 { "" } else { "s" })
        };
        let hint = match n {
            4 => "four fields look like TREC qrels: pass that file as --gold, the run as --run",
            5 => "the sixth field (the run tag) is missing; TREC runs have six white-space separated fields per line",
            7.. => "the fourth field is not a rank, so the columns are shifted: an id containing a space splits into two; TREC runs have six fields per line",
            _ => "TREC runs have six white-space separated fields per line",
        };
        input_error_hint(
            self.path,
            Some(line_no),
            format!("expected `qid Q0 docid rank score tag`, found {found}"),
            hint,
        )
    }

    fn switch(&mut self, qid: &[u8]) -> std::result::Result<(), Ungrouped> {
        if !self.keep_all {
            self.close_current();
        }
        self.last_qid.clear();
        self.last_qid.extend_from_slice(qid);
        let next = self.last_gold.map_or(0, |p| p + 1);
        let found = match self.gold.queries.get(next) {
            Some(g) if g.id.as_bytes() == qid => Some(next),
            _ => self.gold.position_bytes(qid),
        };
        self.target = match found {
            Some(q) => {
                self.last_gold = Some(q);
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
        let spans = self
            .chunks
            .filter(|_| self.labels[q].has_spans())
            .map(|c| (&self.labels[q], c));
        let (ranking, ids) = b.judge(self.depth, spans);
        self.judged.push((q as u32, ranking));
        if let Some(ids) = ids {
            self.ids.push(ids);
        }
        b.clear();
        if !self.keep_all {
            // Reuse the allocation for the next query.
            self.current = b;
        }
    }
}

/// Whether a field reads as a rank (an optionally signed integer).
fn is_rank(field: &[u8]) -> bool {
    let digits = field.strip_prefix(b"-").unwrap_or(field);
    !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
}

/// Scores decide ties, so they must be the correctly rounded doubles that
/// trec_eval's `atof` gives. Plain decimals with at most 15 digits take
/// Clinger's fast path: both the integer mantissa and the power of ten are
/// exact doubles, so one IEEE division rounds correctly. Anything else
/// (exponents, longer mantissas, `inf`) goes to the standard parser, which
/// rounds correctly too: which path a score takes never changes its value.
#[inline]
fn parse_score(field: &[u8]) -> Option<f64> {
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let (neg, digits) = match field.first() {
        Some(b'-') => (true, &field[1..]),
        Some(b'+') => (false, &field[1..]),
        _ => (false, field),
    };
    // Fifteen digits and a dot at most: more may still be a plain decimal
    // (leading zeros), but the standard parser handles those.
    if digits.len() > 16 {
        return parse_score_slow(field);
    }
    let mut mantissa: u64 = 0;
    let mut dot = None;
    for (i, &b) in digits.iter().enumerate() {
        let d = b.wrapping_sub(b'0');
        if d < 10 {
            mantissa = mantissa * 10 + u64::from(d);
        } else if b == b'.' && dot.is_none() {
            dot = Some(i);
        } else {
            return parse_score_slow(field);
        }
    }
    let (n_digits, frac_digits) = match dot {
        None => (digits.len(), 0),
        Some(at) => (digits.len() - 1, digits.len() - 1 - at),
    };
    if n_digits == 0 || n_digits > 15 {
        return parse_score_slow(field);
    }
    let v = mantissa as f64 / POW10[frac_digits];
    Some(if neg { -v } else { v })
}

#[cold]
fn parse_score_slow(field: &[u8]) -> Option<f64> {
    std::str::from_utf8(field).ok()?.parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(entries: &[(&str, f64, i32)]) -> QueryBuf {
        let mut b = QueryBuf::default();
        for &(d, s, g) in entries {
            b.push(d.as_bytes(), doc_hash(d.as_bytes()), s, g);
        }
        b
    }

    #[test]
    fn ties_break_by_docid_descending() {
        // Same score: "b" ranks before "a"; "z" has the highest score.
        let mut b = buf(&[("a", 1.0, 1), ("b", 1.0, UNLABELED), ("z", 2.0, 2)]);
        let (r, ids) = b.judge(Some(10), None);
        assert_eq!(ids.unwrap(), ["z", "b", "a"]);
        assert_eq!(r.num_ret, 3);
        assert_eq!(r.hits, vec![Hit { rank: 1, grade: 2 }, Hit { rank: 3, grade: 1 }]);
    }

    #[test]
    fn ties_between_labeled_and_unlabeled_entries_go_by_docid() {
        // Order: z (2.0), then the 1.0 ties by id descending: c, b, a; y
        // (0.5) last. Labeled: c (grade 2) at rank 2, a (grade 1) at 4.
        let mut b = buf(&[
            ("a", 1.0, 1),
            ("b", 1.0, UNLABELED),
            ("y", 0.5, UNLABELED),
            ("c", 1.0, 2),
            ("z", 2.0, UNLABELED),
        ]);
        let (r, ids) = b.judge(Some(5), None);
        assert_eq!(ids.unwrap(), ["z", "c", "b", "a", "y"]);
        assert_eq!(r.hits, vec![Hit { rank: 2, grade: 2 }, Hit { rank: 4, grade: 1 }]);
        assert_eq!(r.num_ret, 5);
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
            b.push(d.as_bytes(), doc_hash(d.as_bytes()), *s, *g);
        }
        let (r, ids) = b.judge(Some(5), None);
        let ranks: Vec<u32> = r.hits.iter().map(|h| h.rank).collect();
        assert_eq!(ranks, [4, 11, 18, 25, 32, 39, 46]);
        assert_eq!(ids.unwrap(), ["d00", "d01", "d02", "d03", "d04"]);
    }

    #[test]
    fn duplicates_keep_the_best_ranked() {
        let mut b = buf(&[("a", 1.0, 1), ("x", 5.0, UNLABELED), ("a", 3.0, 1), ("a", 0.5, 1)]);
        let mut t = Vec::new();
        assert_eq!(b.dedupe(&mut t), 2);
        let (r, _) = b.judge(None, None);
        assert_eq!(r.num_ret, 2);
        assert_eq!(r.hits, vec![Hit { rank: 2, grade: 1 }]);
    }

    #[test]
    fn fast_scores_equal_the_standard_parser() {
        for s in [
            "2.129133",
            "0",
            "-0.5",
            "+1.25",
            "1e3",
            "31.9251",
            "0.1",
            "123456789012345",
            "1234567890123456.5",
            "0.000000000000001234",
            ".5",
            "5.",
            "-.5",
            "inf",
            "nan",
            "abc",
            "1.2.3",
            "",
            "-",
            "0.30000000000000004",
            "999999999999999",
            "9999999999999999",
            "99999999999999.9",
            "0.00000000000001",
            "0000000000000001",
            "1..",
            "1e",
            "+",
            "..",
            // The bytes either side of the digits: `/` and `:` are not digits.
            "1:5",
            "0.5:",
            ":",
            "1/2",
        ] {
            let want = s.parse::<f64>().ok();
            let got = parse_score(s.as_bytes());
            match (want, got) {
                (Some(w), Some(g)) if w.is_nan() => assert!(g.is_nan(), "{s}"),
                (w, g) => assert_eq!(w, g, "{s}"),
            }
        }
    }

    proptest::proptest! {
        /// Ranks by counting and by binary search, with 0 to 12 labeled
        /// entries among up to 60, scores from a handful of values (ties
        /// everywhere): each labeled entry's rank is its place in the whole
        /// list sorted as trec_eval sorts (score descending, then id
        /// descending).
        #[test]
        fn judged_ranks_are_places_in_the_full_sort(
            entries in proptest::collection::vec((0u8..6, proptest::bool::weighted(0.2), 1i32..4), 1..60),
        ) {
            let rows: Vec<(String, f64, i32)> = entries
                .iter()
                .enumerate()
                .map(|(i, &(s, labeled, g))| (format!("d{i:02}"), (f64::from(s) - 3.0) * 0.5, if labeled { g } else { UNLABELED }))
                .collect();
            let mut b = QueryBuf::default();
            for (d, s, g) in &rows {
                b.push(d.as_bytes(), doc_hash(d.as_bytes()), *s, *g);
            }
            let (r, _) = b.judge(None, None);
            let mut sorted: Vec<&(String, f64, i32)> = rows.iter().collect();
            sorted.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap().then_with(|| b.0.cmp(&a.0)));
            let want: Vec<Hit> = sorted
                .iter()
                .enumerate()
                .filter(|(_, e)| e.2 != UNLABELED)
                .map(|(i, e)| Hit { rank: i as u32 + 1, grade: e.2 })
                .collect();
            proptest::prop_assert_eq!(r.hits, want);
        }

        #[test]
        fn fast_scores_match_std_on_random_decimals(v in -1e9f64..1e9, prec in 0usize..17) {
            let text = format!("{v:.prec$}");
            proptest::prop_assert_eq!(parse_score(text.as_bytes()), text.parse::<f64>().ok());
        }
    }

    /// Above the split threshold, the parallel reader must give every query
    /// exactly the ranking the file says (and the serial reader gives): a
    /// merge that dropped or mixed up parts' rankings changes recall.
    #[test]
    fn parallel_reader_equals_serial_above_the_split_threshold() {
        use crate::gold::{GoldFormat, GoldQuery, Label};
        use std::io::Write;
        const QUERIES: usize = 3600;
        const DEPTH: usize = 70;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.trec");
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let mut queries = Vec::new();
        for q in 0..QUERIES {
            // The relevant document of query q sits at rank q % DEPTH + 1;
            // a second label is never retrieved.
            queries.push(GoldQuery {
                id: format!("q{q:05}"),
                text: None,
                stratum: 0,
                spans: Vec::new(),
                labels: vec![
                    Label {
                        id: format!("d{q}-{}", q % DEPTH),
                        grade: 1 + (q % 3) as i32,
                    },
                    Label {
                        id: format!("never-{q}"),
                        grade: 1,
                    },
                ]
                .into(),
            });
            for r in 0..DEPTH {
                writeln!(out, "q{q:05} Q0 d{q}-{r} {} {}.5 a-run-tag", r + 1, 1000 - r).unwrap();
            }
        }
        out.flush().unwrap();
        drop(out);
        let len = std::fs::metadata(&path).unwrap().len();
        assert!(len >= PARALLEL_MIN_BYTES, "{len} bytes");
        let gold = GoldSet::from_parts(&path, GoldFormat::Qrels, queries, vec!["s".into()]).unwrap();
        let labels = crate::judge::label_index(&gold);
        let keep = KeepIds::Depth(2);
        let par = read_parallel(&path, &gold, &labels, keep, None, len, 4)
            .unwrap()
            .expect("a grouped file splits");
        // Split into 4, each part holds only its own queries.
        assert!(par.judged.len() == QUERIES, "{}", par.judged.len());
        let par = par.finish(&path, &gold);
        let Ok(ser) = read_range(&path, &gold, &labels, keep, None, false, None).unwrap() else {
            panic!("a grouped file streams");
        };
        let ser = ser.finish(&path, &gold);
        let (par_ids, ser_ids) = (par.top_ids.unwrap(), ser.top_ids.unwrap());
        for q in 0..QUERIES {
            let want = Ranking {
                num_ret: DEPTH as u32,
                hits: vec![Hit {
                    rank: (q % DEPTH) as u32 + 1,
                    grade: 1 + (q % 3) as i32,
                }],
                chunks: None,
            };
            assert_eq!(par.rankings[q], want, "parallel, query {q}");
            assert_eq!(ser.rankings[q], want, "serial, query {q}");
            assert!(par.present[q] && ser.present[q], "query {q}");
            assert_eq!(par_ids[q], [format!("d{q}-0"), format!("d{q}-1")]);
            assert_eq!(par_ids[q], ser_ids[q]);
        }
        assert!(par.warnings.is_empty() && ser.warnings.is_empty());
    }

    /// A split point is the start of the first line whose query differs
    /// from the line before it, past the partial line the offset lands in.
    #[test]
    fn query_boundary_finds_the_next_change_of_query() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.trec");
        let text = "q1 Q0 a 1 0.9 t\nq1 Q0 b 2 0.8 t\n\nq1 Q0 c 3 0.7 t\nq2 Q0 a 1 0.9 t\nq2 Q0 b 2 0.1 t\nq3 Q0 a 1 0.5 t\n";
        std::fs::write(&path, text).unwrap();
        let q2 = text.find("q2").unwrap() as u64;
        let q3 = text.find("q3").unwrap() as u64;
        // From inside the first line: the blank line is skipped, q2 starts
        // the next query.
        assert_eq!(query_boundary(&path, 3).unwrap(), Some(q2));
        // From inside q2's first line, q3's start.
        assert_eq!(query_boundary(&path, q2 + 1).unwrap(), Some(q3));
        // Inside the last query: no later change.
        assert_eq!(query_boundary(&path, q3 + 1).unwrap(), None);
        // A query longer than the first window (64 KiB): found in the second.
        let long: String = (0..3000).map(|r| format!("q1 Q0 d{r} {r} 0.5 t\n")).collect();
        assert!(long.len() > 64 << 10);
        let text = format!("{long}q2 Q0 a 1 0.9 t\n");
        std::fs::write(&path, &text).unwrap();
        assert_eq!(query_boundary(&path, 3).unwrap(), Some(long.len() as u64));
    }

    #[test]
    fn window_masks_flag_each_byte_value_at_each_position() {
        // Every byte value at every place of a window, the other bytes set
        // to a non-blank, a blank and a non-ASCII neighbour in turn.
        for fill in [b'x', b' ', 0xff] {
            for v in 0..=255u8 {
                for k in 0..64 {
                    let mut w = [fill; 64];
                    w[k] = v;
                    for (blank, newline) in [window_masks(&w), window_masks_words(&w)] {
                        for (j, &b) in w.iter().enumerate() {
                            assert_eq!(blank >> j & 1 == 1, b <= b' ', "byte {b:#x} at {j}");
                            assert_eq!(newline >> j & 1 == 1, b == b'\n', "byte {b:#x} at {j}");
                        }
                    }
                }
            }
        }
    }

    proptest::proptest! {
        /// The word-at-a-time split and the byte loop agree on every line,
        /// blanks and bytes of every kind, short and long, with the buffer
        /// ending anywhere after the line.
        #[test]
        fn scan_line_equals_the_byte_loop(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(vec![b' ', b'\t', b'\r', b'\n', 0u8, 0x0b, 0x80, 0xc3, 0xff, b'-', b'.']),
                    b'!'..=b'~',
                    proptest::strategy::Just(b' '),
                ],
                0..160,
            ),
            start in 0usize..40,
        ) {
            let start = start.min(bytes.len());
            let (mut a, mut b): ([&[u8]; 6], [&[u8]; 6]) = ([&[]; 6], [&[]; 6]);
            let fast = scan_line(&bytes, start, &mut a);
            let slow = scan_line_bytes(&bytes, start, &mut b);
            proptest::prop_assert_eq!(fast, slow);
            proptest::prop_assert_eq!(&a[..fast.0.min(6)], &b[..slow.0.min(6)]);
        }
    }

    #[test]
    fn fields_split_on_any_blank() {
        let mut f: [&[u8]; 6] = [&[]; 6];
        let n = fields(b"301\tQ0  FR94-1 \t 104\t  2.12\tSTANDARD", &mut f);
        assert_eq!(n, 6);
        assert_eq!(f[2], b"FR94-1");
        assert_eq!(f[4], b"2.12");
        // A seventh field is reported as "more than six", not dropped.
        assert_eq!(fields(b"301 Q0 d1 1 2.5 tag extra", &mut f), 7);
        assert_eq!(fields(b"301 Q0 d1 1 2.5 tag \t ", &mut f), 6);
    }
}
