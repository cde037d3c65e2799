//! A fast reader for the block YAML that rgate's own writer
//! ([`super::write::to_yaml`]) emits, and hand edits of it: block maps and
//! sequences (indented or not), plain, single- and double-quoted scalars on
//! one line, literal blocks (`|`, `|-`, `|+`, with or without an
//! indentation indicator), blank and comment lines, and flow collections
//! (`{a: 1}`, `[x, y]`, on one line or run on over several, as people
//! write gold sets by hand) of one-line scalars.
//!
//! serde-saphyr reads a gold set at about 7 MB/s (100,000 queries with
//! provenance, 34 MB, took 4.9 s per parse); this reads the same subset at
//! a few hundred MB/s. It is a fast path only: anything it does not fully
//! understand — a comment inside a flow collection, anchors, tags,
//! multi-line plain or quoted
//! scalars, a tab, a carriage return, a plain scalar the YAML 1.2 core
//! schema could read as anything but a string or a plain integer, an
//! unknown or repeated field, a value of the wrong type — makes it decline
//! (`None`), and the file is read by serde-saphyr, which gives the answer
//! and the error messages. So it never reports an error itself, and what
//! it accepts it reads as serde-saphyr does (tests/it/gold_speed.rs and
//! the tests below compare the two on files rgate writes and on hand-made
//! variants).
//!
//! Queries are read one at a time, each turned into a [`FastQuery`] before
//! the next is read, and a provenance nobody asked for is dropped as read:
//! what is held is the queries' labels, not a tree of the whole file.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Value};

use super::native::ProvenanceUse;
use super::native::RawSample;
use super::{Label, Opinion, Provenance, SpanLabel, VerifySample};

/// A query as the fast path read it, with the lines of its id and stratum.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FastQuery {
    pub id: String,
    pub id_line: usize,
    pub text: Option<String>,
    pub stratum: Option<(String, usize)>,
    pub labels: Vec<Label>,
    pub spans: Vec<SpanLabel>,
    /// Only when asked for; `None` also when the query has none.
    pub provenance: Option<HashMap<String, Provenance>>,
    pub answer: Option<Value>,
    pub meta: Option<Value>,
    /// `model` and `verified`, boxed: most gold queries have neither, and
    /// every query read holds this field while the file is read (two
    /// fields inline made a 100,000-query gold set's peak 8 MB larger).
    pub labeling: Option<Box<FastLabeling>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct FastLabeling {
    pub model: Option<Vec<Label>>,
    pub verified: Option<bool>,
}

/// A gold file as the fast path read it: its queries, and its
/// `verify_sample` with the line of its key.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FastFile {
    pub queries: Vec<FastQuery>,
    pub verify_sample: Option<(VerifySample, usize)>,
}

/// The queries of a gold set in rgate's block YAML, or `None` when the
/// text is anything else (then serde-saphyr reads it). `provenance`: what
/// to do with each query's provenance; under [`ProvenanceUse::Check`] a
/// query keeps only one that fails the checks, for the builder to report
/// in its turn (the records of 100,000 good queries are not held).
pub(super) fn parse(text: &str, provenance: ProvenanceUse) -> Option<FastFile> {
    let top = top_level(text, |q| query(q, provenance))?;
    let verify_sample = match top.verify_sample {
        Some((v, inline_line)) => Some(sample(v, inline_line)?),
        None => None,
    };
    Some(FastFile {
        queries: top.queries,
        verify_sample,
    })
}

/// A gold file in the fast path's subset as the values serde-saphyr reads
/// it into (`gold import` edits the document as values): the top-level
/// map, with `queries` as null where it stands, and the queries; `None`
/// for anything else. Scalars are typed as in `answer` and `meta` (a
/// string, a plain integer, `true`, `false`, `null`); any other plain
/// scalar declines.
pub(crate) fn document(text: &str) -> Option<(Map<String, Value>, Vec<Value>)> {
    let top = top_level(text, value)?;
    let mut verify_sample = top.verify_sample.map(|(v, _)| v);
    let mut map = Map::new();
    for k in top.keys {
        let v = match k {
            "version" => Value::from(1),
            // As written: `gold verify-sample` replaces it whole.
            "verify_sample" => sample_value(verify_sample.take()?)?,
            _ => Value::Null,
        };
        map.insert(k.into(), v);
    }
    Some((map, top.queries))
}

/// The top level of a gold file as [`top_level`] reads it.
struct TopLevel<'t, T> {
    /// The keys in their order.
    keys: Vec<&'static str>,
    /// What `each` made of each query.
    queries: Vec<T>,
    /// `verify_sample`'s value (one map, a few lines, kept as nodes), and
    /// the line of its key when the value starts on that line (a flow map).
    verify_sample: Option<(Node<'t>, Option<usize>)>,
}

/// The top-level map of a gold file (`version: 1`, `queries:` and
/// `verify_sample:`, nothing else), each query handed to `each` as soon as
/// it is read and its tree of nodes dropped, so the nodes of one query are
/// held at a time, not those of the whole file (100,000 queries with
/// provenance made a tree of about 600 MB).
fn top_level<'t, T>(text: &'t str, mut each: impl FnMut(Node<'t>) -> Option<T>) -> Option<TopLevel<'t, T>> {
    if !plain_text(text) {
        return None;
    }
    let mut p = Parser {
        text,
        pos: 0,
        line: 1,
    };
    let first = p.peek()?;
    if first.indent != 0 {
        return None;
    }
    let mut keys = Vec::new();
    let mut queries: Option<Vec<T>> = None;
    let mut version = false;
    let mut verify_sample = None;
    while let Some(l) = p.peek() {
        if l.indent != 0 || is_seq_entry(p.content(l, l.start)) {
            return None;
        }
        let (k, after) = p.key(l, l.start)?;
        let rest = p.content(l, after);
        let inline = !rest.trim_start_matches(' ').is_empty();
        match k.text.as_ref() {
            "queries" if queries.is_none() => {
                let mut out = Vec::new();
                if inline {
                    let Node::Seq(items) = p.inline_value(l, after, Within::Map(0))? else {
                        return None;
                    };
                    for q in items {
                        out.push(each(q)?);
                    }
                } else {
                    p.next_line(l.end);
                    let next = p.peek()?;
                    if !is_seq_entry(p.content(next, next.start + next.indent)) {
                        return None;
                    }
                    p.seq_items(next.indent, |q| {
                        out.push(each(q)?);
                        Some(())
                    })?;
                }
                queries = Some(out);
                keys.push("queries");
            }
            "version" if !version && inline => match p.inline_value(l, after, Within::Map(0))? {
                Node::Scalar(s) if s.plain && s.text == "1" => {
                    version = true;
                    keys.push("version");
                }
                _ => return None,
            },
            "verify_sample" if verify_sample.is_none() => {
                let v = if inline {
                    (p.inline_value(l, after, Within::Map(0))?, Some(k.line))
                } else {
                    p.next_line(l.end);
                    (p.block_value(0)?, None)
                };
                verify_sample = Some(v);
                keys.push("verify_sample");
            }
            _ => return None,
        }
        if p.peek().is_some_and(|next| next.indent > 0) {
            return None;
        }
    }
    Some(TopLevel {
        keys,
        queries: queries?,
        verify_sample,
    })
}

/// `verify_sample: {seed, ids, drawn_at, ...}` read as the general
/// reader's [`RawSample`] (through its values: the record is a few lines),
/// with the line serde-saphyr places the map on: its first key's for a
/// block map, the line of `verify_sample:` (`inline_line`) for a flow map;
/// anything else, and a record the general reader would refuse, is left
/// to serde-saphyr (it says what is wrong).
fn sample(v: Node, inline_line: Option<usize>) -> Option<(VerifySample, usize)> {
    let Node::Map(fields) = &v else { return None };
    let line = inline_line.or_else(|| fields.first().map(|f| f.0.line))?;
    let raw: RawSample = serde_json::from_value(sample_value(v)?).ok()?;
    Some((raw.into_sample(Some(line)).ok()?, line))
}

/// [`value`], and a plain decimal fraction (`fraction: 0.1`) as a number:
/// the only place a gold file holds one.
fn sample_value(v: Node) -> Option<Value> {
    Some(match v {
        Node::Scalar(s) if s.plain && plain_decimal(&s.text) => {
            Value::from(s.text.parse::<f64>().ok().filter(|f| f.is_finite())?)
        }
        Node::Seq(items) => Value::Array(items.into_iter().map(sample_value).collect::<Option<_>>()?),
        Node::Map(entries) => {
            let mut m = Map::new();
            for (k, v) in entries {
                if m.insert(str_of(&k)?, sample_value(v)?).is_some() {
                    return None;
                }
            }
            Value::Object(m)
        }
        other => value(other)?,
    })
}

/// `0.25`, `1.0`: digits, a point, digits, as serde_json writes a
/// fraction; no sign, exponent or leading zero (other forms decline).
fn plain_decimal(s: &str) -> bool {
    let Some((int, frac)) = s.split_once('.') else {
        return false;
    };
    !int.is_empty()
        && !frac.is_empty()
        && (int == "0" || !int.starts_with('0'))
        && int.len() <= 18
        && frac.len() <= 20
        && int.bytes().chain(frac.bytes()).all(|c| c.is_ascii_digit())
}

/// No tab, no carriage return, no character YAML does not print (libyaml's
/// and saphyr's printable set): the parser below need not think of them.
fn plain_text(text: &str) -> bool {
    let b = text.as_bytes();
    if b.iter().all(|&c| (0x20..0x7f).contains(&c) || c == b'\n') {
        return true;
    }
    text.chars().all(|c| {
        matches!(c, '\n' | ' '..='~' | '\u{A0}'..='\u{D7FF}' | '\u{10000}'..)
            || (('\u{E000}'..='\u{FFFD}').contains(&c) && c != '\u{FEFF}')
    }) && !text.contains(['\u{85}', '\u{2028}', '\u{2029}'])
}

#[derive(Debug)]
struct Scalar<'t> {
    text: Cow<'t, str>,
    plain: bool,
    line: usize,
}

#[derive(Debug)]
enum Node<'t> {
    Scalar(Scalar<'t>),
    Map(Vec<(Scalar<'t>, Node<'t>)>),
    Seq(Vec<Node<'t>>),
}

/// A content line: neither blank nor a comment.
#[derive(Clone, Copy)]
struct LineAt {
    start: usize,
    indent: usize,
    end: usize,
}

struct Parser<'t> {
    text: &'t str,
    /// The start of the current line.
    pos: usize,
    line: usize,
}

impl<'t> Parser<'t> {
    /// The next content line, skipping blank and comment lines (which are
    /// consumed).
    fn peek(&mut self) -> Option<LineAt> {
        while self.pos < self.text.len() {
            let b = self.text.as_bytes();
            let end = memchr::memchr(b'\n', &b[self.pos..]).map_or(b.len(), |e| self.pos + e);
            let indent = b[self.pos..end].iter().take_while(|&&c| c == b' ').count();
            let first = b.get(self.pos + indent).copied();
            if self.pos + indent == end || first == Some(b'#') {
                self.next_line(end);
                continue;
            }
            return Some(LineAt {
                start: self.pos,
                indent,
                end,
            });
        }
        None
    }

    fn next_line(&mut self, end: usize) {
        self.pos = end + 1;
        self.line += 1;
    }

    fn content(&self, l: LineAt, from: usize) -> &'t str {
        &self.text[from..l.end]
    }

    /// A block map whose keys sit at column `n`; `first`: the first entry
    /// starts mid-line at that column (after a sequence's `- `).
    fn map_at(&mut self, n: usize, first: Option<LineAt>) -> Option<Node<'t>> {
        let mut entries = Vec::new();
        let mut at = first;
        loop {
            let l = match at.take() {
                Some(l) => l,
                None => match self.peek() {
                    Some(l) if l.indent == n && !is_seq_entry(self.content(l, l.start + n)) => l,
                    Some(l) if l.indent > n => return None,
                    _ => break,
                },
            };
            let from = l.start + n;
            let (key, after) = self.key(l, from)?;
            let rest = self.content(l, after);
            let value = if rest.trim_start_matches(' ').is_empty() {
                self.next_line(l.end);
                self.block_value(n)?
            } else {
                let v = self.inline_value(l, after, Within::Map(n))?;
                // Nothing deeper may follow a value on its line.
                if self.peek().is_some_and(|next| next.indent > n) {
                    return None;
                }
                v
            };
            entries.push((key, value));
        }
        Some(Node::Map(entries))
    }

    /// A block sequence whose `- ` sit at column `n`.
    fn seq_at(&mut self, n: usize) -> Option<Node<'t>> {
        let mut items = Vec::new();
        self.seq_items(n, |item| {
            items.push(item);
            Some(())
        })?;
        Some(Node::Seq(items))
    }

    /// The items of a block sequence whose `- ` sit at column `n`, each
    /// handed to `each` as soon as it is read.
    fn seq_items(&mut self, n: usize, mut each: impl FnMut(Node<'t>) -> Option<()>) -> Option<()> {
        while let Some(l) = self.peek() {
            if l.indent != n || !is_seq_entry(self.content(l, l.start + n)) {
                if l.indent > n {
                    return None;
                }
                break;
            }
            let after_dash = l.start + n + 1;
            let spaces = self
                .content(l, after_dash)
                .bytes()
                .take_while(|&c| c == b' ')
                .count();
            if spaces == 0 {
                // `-` alone on its line: the item is on the lines below.
                return None;
            }
            let col = after_dash + spaces;
            let rest = self.content(l, col);
            if is_seq_entry(rest) {
                return None;
            }
            let item = if self.key(l, col).is_some() {
                self.map_at(col - l.start, Some(l))?
            } else {
                let v = self.inline_value(l, col, Within::Seq(n))?;
                if self.peek().is_some_and(|next| next.indent > n) {
                    return None;
                }
                v
            };
            each(item)?;
        }
        Some(())
    }

    /// The value of a `key:` with nothing after it on its line: a block
    /// below, deeper than `n`, or a sequence at `n` itself (libyaml's
    /// indentless sequence). An empty value (null) is not for the fast path.
    fn block_value(&mut self, n: usize) -> Option<Node<'t>> {
        let l = self.peek()?;
        let rest = self.content(l, l.start + l.indent);
        if is_seq_entry(rest) && l.indent >= n {
            return self.seq_at(l.indent);
        }
        if l.indent > n {
            return self.map_at(l.indent, None);
        }
        None
    }

    /// A map key starting at byte `from` of line `l`, and where its value
    /// starts (after the `:`): `None` when this is no `key:`.
    fn key(&self, l: LineAt, from: usize) -> Option<(Scalar<'t>, usize)> {
        let s = self.content(l, from);
        let (text, plain, len) = match s.as_bytes().first()? {
            b'"' | b'\'' => {
                let (text, len) = quoted(s)?;
                (text, false, len)
            }
            _ => {
                let colon = plain_key_end(s)?;
                let key = s[..colon].trim_end_matches(' ');
                if !plain_start(key) || key.contains(" #") {
                    return None;
                }
                (Cow::Borrowed(key), true, colon)
            }
        };
        let after = s[len..].strip_prefix(':')?;
        if !(after.is_empty() || after.starts_with(' ')) {
            return None;
        }
        Some((
            Scalar {
                text,
                plain,
                line: self.line,
            },
            from + len + 1,
        ))
    }

    /// A value on its line from byte `from`: a scalar, a flow collection
    /// (which may run on over the lines below, deeper than what holds it),
    /// or a literal block (in a map only). What it took is consumed, up to
    /// the end of its last line.
    fn inline_value(&mut self, l: LineAt, from: usize, within: Within) -> Option<Node<'t>> {
        let s = self.content(l, from).trim_start_matches(' ');
        let line = self.line;
        let node = match s.as_bytes().first()? {
            b'"' | b'\'' => {
                let (text, len) = quoted(s)?;
                if !s[len..].trim_start_matches(' ').is_empty() {
                    return None;
                }
                Node::Scalar(Scalar {
                    text,
                    plain: false,
                    line,
                })
            }
            b'|' => match within {
                Within::Map(n) => {
                    self.next_line(l.end);
                    return self.literal(s, n, line);
                }
                Within::Seq(_) => return None,
            },
            b'{' | b'[' => {
                let floor = match within {
                    Within::Map(n) | Within::Seq(n) => n,
                };
                let mut f = Flow {
                    text: self.text,
                    pos: l.end - s.len(),
                    line,
                    floor,
                };
                let node = f.node(0)?;
                // Nothing but spaces after the collection, on its last line.
                let end = memchr::memchr(b'\n', &self.text.as_bytes()[f.pos..])
                    .map_or(self.text.len(), |e| f.pos + e);
                if !self.text[f.pos..end].bytes().all(|c| c == b' ') {
                    return None;
                }
                self.line = f.line;
                self.next_line(end);
                return Some(node);
            }
            _ => {
                let v = s.trim_end_matches(' ');
                if !plain_start(v) || v.contains(": ") || v.ends_with(':') || v.contains(" #") {
                    return None;
                }
                Node::Scalar(Scalar {
                    text: Cow::Borrowed(v),
                    plain: true,
                    line,
                })
            }
        };
        self.next_line(l.end);
        Some(node)
    }

    /// A literal block scalar after its header `|...` (the header's line
    /// consumed), in a map at indentation `n`.
    fn literal(&mut self, header: &str, n: usize, line: usize) -> Option<Node<'t>> {
        let h = header.trim_end_matches(' ').as_bytes();
        let (mut chomp, mut width) = (b' ', 0usize);
        for &c in &h[1..] {
            match c {
                b'-' | b'+' if chomp == b' ' => chomp = c,
                b'1'..=b'9' if width == 0 => width = usize::from(c - b'0'),
                _ => return None,
            }
        }
        let b = self.text.as_bytes();
        // The lines of the block: (start, end) of each, up to the first
        // non-blank line indented less than the content.
        let mut indent = if width > 0 { Some(n + width) } else { None };
        let mut lines: Vec<&'t str> = Vec::new();
        let mut trailing_blank = 0usize;
        while self.pos < b.len() {
            let end = memchr::memchr(b'\n', &b[self.pos..]).map_or(b.len(), |e| self.pos + e);
            let line_text = &self.text[self.pos..end];
            let spaces = line_text.bytes().take_while(|&c| c == b' ').count();
            let blank = spaces == line_text.len();
            let ci = match indent {
                Some(ci) => ci,
                None if blank => return None, // leading blank lines: not for the fast path
                None if spaces > n => {
                    indent = Some(spaces);
                    spaces
                }
                None => return None,
            };
            if blank {
                if spaces > ci {
                    return None;
                }
                trailing_blank += 1;
                lines.push("");
            } else if spaces >= ci {
                trailing_blank = 0;
                lines.push(&line_text[ci..]);
            } else {
                break;
            }
            if end == b.len() {
                // The file ends inside the block without a line break.
                return None;
            }
            self.next_line(end);
        }
        let content = lines.len() - trailing_blank;
        if content == 0 {
            return None;
        }
        let mut text = lines[..content].join("\n");
        match chomp {
            b'-' => {}
            b'+' => text.extend(std::iter::repeat_n('\n', trailing_blank + 1)),
            _ => text.push('\n'),
        }
        Some(Node::Scalar(Scalar {
            text: Cow::Owned(text),
            plain: false,
            line,
        }))
    }
}

/// `- x` or `-` alone: a sequence entry, not a plain scalar like `-x`.
fn is_seq_entry(s: &str) -> bool {
    s == "-" || s.starts_with("- ")
}

/// Where a plain key ends: the first `:` followed by a space or the end of
/// the line.
fn plain_key_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    (0..b.len()).find(|&i| b[i] == b':' && (i + 1 == b.len() || b[i + 1] == b' '))
}

/// Where an inline value sits: in a block map whose keys are at column
/// `n`, or in a block sequence whose `- ` are at column `n`. A flow
/// collection's later lines must be indented deeper than that.
#[derive(Clone, Copy)]
enum Within {
    Map(usize),
    Seq(usize),
}

/// How deep [`Flow::node`] follows nested flow collections: a whole query
/// written in flow style nests five deep (query, provenance, record,
/// opinions, opinion); [`crate::diag::yaml_guard`] bounds nesting anyway.
const FLOW_DEPTH: usize = 8;

/// A flow collection (`{a: 1, b: [x, y]}`), as hand-written gold sets and
/// the writer's provenance records use them, on one line or run on over
/// several. Keys are plain or quoted scalars followed by `: `; values are
/// scalars or flow collections. Each scalar lies on one line (a quoted
/// one closes on the line it opens); every later line is indented deeper
/// than [`Flow::floor`]. Anything else — a comment, a key without a
/// value, `? `, a trailing comma, JSON's `"a":1` — declines.
struct Flow<'t> {
    text: &'t str,
    pos: usize,
    line: usize,
    floor: usize,
}

impl<'t> Flow<'t> {
    /// Skips the spaces and line breaks between tokens.
    fn gap(&mut self) -> Option<()> {
        let b = self.text.as_bytes();
        let mut spaced = false;
        loop {
            match b.get(self.pos) {
                Some(b' ') => {
                    self.pos += 1;
                    spaced = true;
                }
                Some(b'\n') => {
                    self.pos += 1;
                    self.line += 1;
                    spaced = true;
                    let indent = b[self.pos..].iter().take_while(|&&c| c == b' ').count();
                    match b.get(self.pos + indent) {
                        None => return None,
                        Some(b'\n') => {}
                        Some(_) if indent <= self.floor => return None,
                        Some(_) => {}
                    }
                }
                Some(b'#') if spaced => return None,
                _ => return Some(()),
            }
        }
    }

    /// One flow node at the cursor (scalar or collection).
    fn node(&mut self, depth: usize) -> Option<Node<'t>> {
        let b = self.text.as_bytes();
        let close = match b.get(self.pos)? {
            b'{' => b'}',
            b'[' => b']',
            _ => return self.scalar(false).map(Node::Scalar),
        };
        if depth >= FLOW_DEPTH {
            return None;
        }
        self.pos += 1;
        self.gap()?;
        let (mut map, mut seq) = (Vec::new(), Vec::new());
        if b.get(self.pos) == Some(&close) {
            self.pos += 1;
        } else {
            loop {
                if close == b'}' {
                    let k = self.scalar(true)?;
                    if b.get(self.pos) != Some(&b':') || !matches!(b.get(self.pos + 1), Some(b' ' | b'\n')) {
                        return None;
                    }
                    self.pos += 1;
                    self.gap()?;
                    map.push((k, self.node(depth + 1)?));
                } else {
                    seq.push(self.node(depth + 1)?);
                }
                self.gap()?;
                match b.get(self.pos)? {
                    b',' => {
                        self.pos += 1;
                        self.gap()?;
                    }
                    &c if c == close => {
                        self.pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        Some(if close == b'}' {
            Node::Map(map)
        } else {
            Node::Seq(seq)
        })
    }

    /// A key (up to its `:`) or a scalar value (up to `,`, a bracket or the
    /// end of its line) at the cursor.
    fn scalar(&mut self, key: bool) -> Option<Scalar<'t>> {
        let b = self.text.as_bytes();
        let eol = memchr::memchr(b'\n', &b[self.pos..]).map_or(b.len(), |e| self.pos + e);
        let t: &'t str = &self.text[self.pos..eol];
        let (text, len, plain) = match t.as_bytes().first()? {
            b'"' | b'\'' => {
                let (text, len) = quoted(t)?;
                (text, len, false)
            }
            _ => {
                let end = t.find([',', '}', '[', ']', '{']).unwrap_or(t.len());
                let end = if key {
                    t[..end].find(": ").unwrap_or(end)
                } else {
                    end
                };
                let v = t[..end].trim_end_matches(' ');
                if !plain_start(v) || v.contains(": ") || v.ends_with(':') || v.contains(" #") {
                    return None;
                }
                (Cow::Borrowed(v), v.len(), true)
            }
        };
        let line = self.line;
        self.pos += len;
        Some(Scalar { text, plain, line })
    }
}

/// Whether a plain scalar may start this way in block context (no
/// indicator the fast path leaves to serde-saphyr).
fn plain_start(s: &str) -> bool {
    match s.as_bytes().first() {
        None => false,
        Some(b'-') => s.as_bytes().get(1).is_some_and(u8::is_ascii_digit),
        Some(c) => !b"#,[]{}&*!|>'\"%@`?:~".contains(c),
    }
}

/// A quoted scalar at the start of `s`, closed on the same line: its text
/// and how many bytes it took, quotes included.
fn quoted(s: &str) -> Option<(Cow<'_, str>, usize)> {
    let b = s.as_bytes();
    if b[0] == b'\'' {
        let mut out: Option<String> = None;
        let mut i = 1;
        let mut from = 1;
        while i < b.len() {
            if b[i] == b'\'' {
                if b.get(i + 1) == Some(&b'\'') {
                    let o = out.get_or_insert_with(String::new);
                    o.push_str(&s[from..=i]);
                    i += 2;
                    from = i;
                    continue;
                }
                let text = match out {
                    None => Cow::Borrowed(&s[1..i]),
                    Some(mut o) => {
                        o.push_str(&s[from..i]);
                        Cow::Owned(o)
                    }
                };
                return Some((text, i + 1));
            }
            i += 1;
        }
        return None;
    }
    // Double-quoted: the escapes rgate's writer uses, and `\/`, `\ `.
    let mut out: Option<String> = None;
    let mut from = 1;
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let text = match out {
                    None => Cow::Borrowed(&s[1..i]),
                    Some(mut o) => {
                        o.push_str(&s[from..i]);
                        Cow::Owned(o)
                    }
                };
                return Some((text, i + 1));
            }
            b'\\' => {
                let o = out.get_or_insert_with(String::new);
                o.push_str(&s[from..i]);
                let e = *b.get(i + 1)?;
                let simple = match e {
                    b'0' => Some('\0'),
                    b'a' => Some('\u{7}'),
                    b'b' => Some('\u{8}'),
                    b't' => Some('\t'),
                    b'n' => Some('\n'),
                    b'v' => Some('\u{b}'),
                    b'f' => Some('\u{c}'),
                    b'r' => Some('\r'),
                    b'e' => Some('\u{1b}'),
                    b'"' => Some('"'),
                    b'\\' => Some('\\'),
                    b'/' => Some('/'),
                    b' ' => Some(' '),
                    b'N' => Some('\u{85}'),
                    b'_' => Some('\u{a0}'),
                    b'L' => Some('\u{2028}'),
                    b'P' => Some('\u{2029}'),
                    _ => None,
                };
                let len = match simple {
                    Some(c) => {
                        o.push(c);
                        2
                    }
                    None => {
                        let digits = match e {
                            b'x' => 2,
                            b'u' => 4,
                            b'U' => 8,
                            _ => return None,
                        };
                        let hex = s.get(i + 2..i + 2 + digits)?;
                        if !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
                            return None;
                        }
                        o.push(char::from_u32(u32::from_str_radix(hex, 16).ok()?)?);
                        2 + digits
                    }
                };
                i += len;
                from = i;
            }
            _ => i += 1,
        }
    }
    None
}

// ---- typing, as serde-saphyr types what rgate's reader asks for -------

/// A plain integer whose text is its value: `0`, or digits without a
/// leading zero, optionally after `-` (at most 18 digits: fits an i64).
fn plain_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let ok = !digits.is_empty()
        && digits.len() <= 18
        && digits.bytes().all(|c| c.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && s != "-0";
    ok.then(|| s.parse().ok()).flatten()
}

/// Whether a plain scalar reads as this very string under YAML 1.2's core
/// schema (and the options rgate reads with): it starts with a letter or a
/// character no number starts with, and is no word that reads as a null,
/// boolean or number (YAML 1.1's words too, to be safe); or it starts with
/// a digit but holds a character no number form has (`2026-11-30T10:00Z`).
fn surely_string(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(&c) = b.first() else { return false };
    if c.is_ascii_alphabetic() || c >= 0x80 || c == b'_' || c == b'/' {
        if s.len() > 8 {
            return true;
        }
        let lower = s.to_ascii_lowercase();
        return !matches!(
            lower.as_str(),
            "null" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "inf" | "infinity" | "nan"
        );
    }
    c.is_ascii_digit()
        && b.iter().any(|&x| {
            !(x.is_ascii_hexdigit()
                || matches!(x, b'x' | b'X' | b'o' | b'O' | b'.' | b'_' | b'+' | b'-' | b':'))
        })
}

/// An id (query, label, span document): a string, or a plain integer as
/// its digits (the reader's `IdValue`).
fn id_of(s: &Scalar) -> Option<String> {
    if !s.plain || surely_string(&s.text) || plain_int(&s.text).is_some() {
        Some(s.text.to_string())
    } else {
        None
    }
}

/// A string field.
fn str_of(s: &Scalar) -> Option<String> {
    (!s.plain || surely_string(&s.text)).then(|| s.text.to_string())
}

fn scalar<'a, 't>(n: &'a Node<'t>) -> Option<&'a Scalar<'t>> {
    match n {
        Node::Scalar(s) => Some(s),
        _ => None,
    }
}

fn int_of(n: &Node) -> Option<i64> {
    let s = scalar(n)?;
    if s.plain {
        plain_int(&s.text)
    } else {
        None
    }
}

/// A key of a struct-like map: its text when a string.
fn field<'a>(k: &'a Scalar) -> Option<&'a str> {
    (!k.plain || surely_string(&k.text)).then_some(k.text.as_ref())
}

fn query(node: Node, want_provenance: ProvenanceUse) -> Option<FastQuery> {
    let Node::Map(entries) = node else { return None };
    let mut q = FastQuery {
        id: String::new(),
        id_line: 0,
        text: None,
        stratum: None,
        labels: Vec::new(),
        spans: Vec::new(),
        provenance: None,
        answer: None,
        meta: None,
        labeling: None,
    };
    let mut seen = [false; 9];
    for (k, v) in entries {
        let slot = match field(&k)? {
            "id" => 0,
            "text" => 1,
            "stratum" => 2,
            "relevant" => 3,
            "provenance" => 4,
            "answer" => 5,
            "meta" | "metadata" => 6,
            "model" => 7,
            "verified" => 8,
            _ => return None,
        };
        if std::mem::replace(&mut seen[slot], true) {
            return None;
        }
        match slot {
            0 => {
                let s = scalar(&v)?;
                q.id = id_of(s)?;
                q.id_line = s.line;
            }
            1 => q.text = Some(str_of(scalar(&v)?)?),
            2 => {
                let s = scalar(&v)?;
                q.stratum = Some((str_of(s)?, s.line));
            }
            3 => relevant(v, &mut q)?,
            // Unwanted, the provenance is dropped as read, never turned
            // into records: serde-saphyr skips it unread too, whatever its
            // shape, so this reads what it reads.
            4 => match want_provenance {
                ProvenanceUse::Skip => {}
                ProvenanceUse::Keep => q.provenance = Some(provenance(v)?),
                ProvenanceUse::Check => {
                    let p = provenance(v)?;
                    if super::native::check_provenance(&p).is_err() {
                        q.provenance = Some(p);
                    }
                }
            },
            5 => q.answer = Some(value(v)?),
            6 => q.meta = Some(value(v)?),
            7 => {
                // A map of chunk id to an integer grade, as the reader's
                // `ModelGrades` takes it.
                let Node::Map(entries) = v else { return None };
                let mut model = Vec::with_capacity(entries.len());
                for (k, g) in entries {
                    model.push(Label {
                        id: id_of(&k)?,
                        grade: i32::try_from(int_of(&g)?).ok()?,
                    });
                }
                q.labeling.get_or_insert_with(Default::default).model = Some(model);
            }
            _ => {
                let s = scalar(&v)?;
                q.labeling.get_or_insert_with(Default::default).verified =
                    Some(match (s.plain, s.text.as_ref()) {
                        (true, "true") => true,
                        (true, "false") => false,
                        _ => return None,
                    });
            }
        }
    }
    seen[0].then_some(q)
}

fn relevant(v: Node, q: &mut FastQuery) -> Option<()> {
    match v {
        Node::Map(entries) => {
            for (k, g) in entries {
                let grade = i32::try_from(int_of(&g)?).ok()?;
                q.labels.push(Label {
                    id: id_of(&k)?,
                    grade,
                });
            }
        }
        Node::Seq(items) => {
            for item in items {
                match item {
                    Node::Scalar(s) => q.labels.push(Label {
                        id: id_of(&s)?,
                        grade: 1,
                    }),
                    Node::Map(fields) => label_item(fields, q)?,
                    Node::Seq(_) => return None,
                }
            }
        }
        Node::Scalar(_) => return None,
    }
    Some(())
}

/// `{id, grade}` or `{doc, start, end, grade}`, as the reader's `LabelItem`
/// takes them; anything it would refuse is left to it.
fn label_item(fields: Vec<(Scalar, Node)>, q: &mut FastQuery) -> Option<()> {
    let (mut id, mut doc, mut start, mut end, mut grade) = (None, None, None, None, None);
    for (k, v) in fields {
        let slot = match field(&k)? {
            "id" => &mut id,
            "doc" => &mut doc,
            _ => {
                let n = int_of(&v)?;
                let slot = match k.text.as_ref() {
                    "start" => &mut start,
                    "end" => &mut end,
                    "grade" => &mut grade,
                    _ => return None,
                };
                if slot.replace(n).is_some() {
                    return None;
                }
                continue;
            }
        };
        if slot.replace(id_of(scalar(&v)?)?).is_some() {
            return None;
        }
    }
    let grade = i32::try_from(grade.unwrap_or(1)).ok()?;
    match (id, doc, start, end) {
        (Some(id), None, None, None) => q.labels.push(Label { id, grade }),
        (None, Some(doc), Some(start), Some(end)) if !doc.is_empty() && 0 <= start && start < end => {
            q.spans.push(SpanLabel {
                doc,
                start: start as u64,
                end: end as u64,
                grade,
            })
        }
        _ => return None,
    }
    Some(())
}

/// Chunk id to `{source, labeler, at, verified, prompt, opinions}`;
/// unknown fields are skipped, as serde skips them.
fn provenance(v: Node) -> Option<HashMap<String, Provenance>> {
    let Node::Map(entries) = v else { return None };
    let mut out = HashMap::with_capacity(entries.len());
    for (k, v) in entries {
        let Node::Map(fields) = v else { return None };
        let (mut source, mut labeler, mut at, mut verified) = (None, None, None, None);
        let (mut prompt, mut opinions) = (None, None);
        for (f, v) in fields {
            match field(&f)? {
                "source" if source.is_none() => source = Some(str_of(scalar(&v)?)?),
                "labeler" if labeler.is_none() => labeler = Some(str_of(scalar(&v)?)?),
                "at" if at.is_none() => at = Some(str_of(scalar(&v)?)?),
                "prompt" if prompt.is_none() => prompt = Some(str_of(scalar(&v)?)?),
                "opinions" if opinions.is_none() => opinions = Some(opinion_list(v)?),
                "verified" if verified.is_none() => {
                    let s = scalar(&v)?;
                    verified = Some(match (s.plain, s.text.as_ref()) {
                        (true, "true") => true,
                        (true, "false") => false,
                        _ => return None,
                    });
                }
                "source" | "labeler" | "at" | "verified" | "prompt" | "opinions" => return None,
                _ => {}
            }
        }
        let p = Provenance {
            source: source?,
            labeler,
            at,
            verified: verified.unwrap_or(false),
            prompt,
            opinions: opinions.unwrap_or_default(),
        };
        if out.insert(str_of(&k)?, p).is_some() {
            return None;
        }
    }
    Some(out)
}

/// A label's other grades: a list of `{grade, source, labeler, prompt,
/// at}`; unknown fields skipped, as serde skips them.
fn opinion_list(v: Node) -> Option<Vec<Opinion>> {
    let Node::Seq(items) = v else { return None };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let Node::Map(fields) = item else { return None };
        let (mut grade, mut source, mut labeler, mut prompt, mut at) = (None, None, None, None, None);
        for (f, v) in fields {
            match field(&f)? {
                "grade" if grade.is_none() => grade = Some(i32::try_from(int_of(&v)?).ok()?),
                "source" if source.is_none() => source = Some(str_of(scalar(&v)?)?),
                "labeler" if labeler.is_none() => labeler = Some(str_of(scalar(&v)?)?),
                "prompt" if prompt.is_none() => prompt = Some(str_of(scalar(&v)?)?),
                "at" if at.is_none() => at = Some(str_of(scalar(&v)?)?),
                "grade" | "source" | "labeler" | "prompt" | "at" => return None,
                _ => {}
            }
        }
        out.push(Opinion {
            grade: grade?,
            source: source?,
            labeler,
            prompt,
            at,
        });
    }
    Some(out)
}

/// `answer` and `meta` as JSON values: strings, plain integers, `true`,
/// `false`, `null`, and maps and lists of them.
fn value(v: Node) -> Option<Value> {
    Some(match v {
        Node::Scalar(s) if !s.plain => Value::String(s.text.into_owned()),
        Node::Scalar(s) => match s.text.as_ref() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "null" => Value::Null,
            t if surely_string(t) => Value::String(t.to_string()),
            t => Value::from(plain_int(t)?),
        },
        Node::Seq(items) => Value::Array(items.into_iter().map(value).collect::<Option<_>>()?),
        Node::Map(entries) => {
            let mut m = Map::new();
            for (k, v) in entries {
                if m.insert(str_of(&k)?, value(v)?).is_some() {
                    return None;
                }
            }
            Value::Object(m)
        }
    })
}
