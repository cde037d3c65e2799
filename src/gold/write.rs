//! The one reader-for-editing and writer of native gold files: `gold
//! import`, `gold migrate` and the provenance reader all go through
//! [`GoldDoc`], so a gold file is parsed and written the same way by each.
//!
//! YAML is written by hand in the block style serde_yaml (libyaml's
//! emitter) wrote, so files rgate rewrote before read the same and diff
//! cleanly now: the scalar styles follow libyaml's `analyze_scalar` and
//! `select_scalar_style` (plain where it reads back as the same string,
//! single-quoted where a plain scalar would read as a number, boolean or
//! null, a literal block for text with line breaks, double-quoted with
//! escapes otherwise). One deliberate difference: U+0085, U+2028 and
//! U+2029 are line breaks to YAML 1.1 but text to YAML 1.2 (which rgate
//! reads), so a string holding one is always double-quoted, escaped.

use std::path::Path;

use anyhow::Result;
use serde_json::{Map, Value};

use super::native::{yaml_error, yaml_options};
use super::GoldFormat;
use crate::diag::input_error;

/// A native gold file as a document: its top-level map (YAML, JSON) and
/// its queries, every field kept.
#[derive(Debug, Clone, PartialEq)]
pub struct GoldDoc {
    pub format: GoldFormat,
    /// The map around `queries` (YAML and JSON; for JSONL, which has no
    /// top level, `verify_sample` alone, written as a line of its own).
    top: Option<Map<String, Value>>,
    pub queries: Vec<Value>,
}

impl GoldDoc {
    /// A gold set with no queries yet, in `format`.
    pub fn empty(format: GoldFormat) -> GoldDoc {
        let top = match format {
            GoldFormat::Jsonl => None,
            _ => {
                let mut m = Map::new();
                m.insert("version".into(), Value::from(1));
                Some(m)
            }
        };
        GoldDoc {
            format,
            top,
            queries: Vec::new(),
        }
    }

    /// Reads the gold file at `path`, in `format` (not qrels).
    pub fn read(path: &Path, format: GoldFormat) -> Result<GoldDoc> {
        let raw = crate::input::read(
            path,
            "gold set",
            crate::input::GOLD_LIMIT,
            "check the path of the gold set",
        )?;
        let bytes = crate::diag::strip_bom(&raw);
        let text = String::from_utf8_lossy(bytes);
        GoldDoc::parse(path, &text, format)
    }

    /// [`GoldDoc::read`] of a text already read.
    pub fn parse(path: &Path, text: &str, format: GoldFormat) -> Result<GoldDoc> {
        if format == GoldFormat::Jsonl {
            let mut queries = Vec::new();
            let mut top = None;
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let v: Value = serde_json::from_str(line)
                    .map_err(|e| input_error(path, Some(i + 1), format!("not a JSON object: {e}")))?;
                match v {
                    Value::Object(m) if m.len() == 1 && m.contains_key("verify_sample") => top = Some(m),
                    v => queries.push(v),
                }
            }
            return Ok(GoldDoc { format, top, queries });
        }
        if format == GoldFormat::Yaml {
            // rgate's own YAML (and hand edits of it) through the fast
            // reader: serde-saphyr took 21 s for 20,000 queries with
            // provenance, and more than linearly longer for more.
            if let Some((top, queries)) = super::fast_yaml::document(text) {
                return Ok(GoldDoc {
                    format,
                    top: Some(top),
                    queries,
                });
            }
        }
        let doc: Value = if format == GoldFormat::Json {
            serde_json::from_str(text)
                .map_err(|e| input_error(path, Some(e.line()), format!("invalid gold set: {e}")))?
        } else {
            serde_saphyr::from_str_with_options(text, yaml_options()).map_err(|e| {
                let (line, msg) = yaml_error(&e);
                input_error(path, line, format!("invalid gold set: {msg}"))
            })?
        };
        let mut top = match doc {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        let queries = match top.get_mut("queries").map(Value::take) {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        };
        Ok(GoldDoc {
            format,
            top: Some(top),
            queries,
        })
    }

    /// The file's text: JSONL one compact query a line, JSON pretty-printed,
    /// YAML in block style (see the module doc).
    pub fn render(&self) -> String {
        self.clone().into_text()
    }

    /// [`GoldDoc::render`], consuming the document: its queries go into
    /// the text without a copy of the whole tree (a gold set of 100,000
    /// queries with provenance is a few hundred MB of values).
    pub fn into_text(self) -> String {
        self.into_text_with(|_, _| {})
    }

    /// [`GoldDoc::into_text`], handing each query (by position) to `each`
    /// just before it is written and dropping it after: a writer can add
    /// what it holds compactly (`gold import` its provenance records) one
    /// query at a time, so the values of only one query are ever held
    /// beside the text. The text is the one [`GoldDoc::render`] gives for
    /// the queries as `each` leaves them.
    pub fn into_text_with(self, mut each: impl FnMut(usize, &mut Value)) -> String {
        let mut out = String::new();
        let queries = self.queries.into_iter().enumerate().map(|(i, mut q)| {
            each(i, &mut q);
            q
        });
        if self.format == GoldFormat::Jsonl {
            // No top level: the draw (`verify_sample`) is a line of its own,
            // first.
            if let Some(top) = self.top.filter(|t| !t.is_empty()) {
                out.push_str(&Value::Object(top).to_string());
                out.push('\n');
            }
            for q in queries {
                out.push_str(&q.to_string());
                out.push('\n');
            }
            return out;
        }
        let top = self.top.unwrap_or_default();
        let json = self.format == GoldFormat::Json;
        let mut queries = queries.peekable();
        if queries.peek().is_none() {
            let mut top = top;
            top.insert("queries".into(), Value::Array(Vec::new()));
            let doc = Value::Object(top);
            return match json {
                // A Value always serialises.
                true => serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n",
                false => to_yaml(&doc),
            };
        }
        // The entries around `queries`, in their order; `queries` is
        // written where it stands (last when the document had none).
        let mut before = Map::new();
        let mut after = Map::new();
        let mut seen = false;
        for (k, v) in top {
            match k.as_str() {
                "queries" => seen = true,
                _ if seen => {
                    after.insert(k, v);
                }
                _ => {
                    before.insert(k, v);
                }
            }
        }
        if json {
            // serde_json's pretty form, two spaces a level: a query is two
            // levels down. JSON text holds no raw line break inside a
            // string, so indenting after each line break is exact.
            let indented = |v: &Value, pad: &str| {
                serde_json::to_string_pretty(v)
                    .unwrap_or_default()
                    .replace('\n', &format!("\n{pad}"))
            };
            out.push('{');
            let mut first = true;
            let mut entry = |out: &mut String, k: &str, v: &str| {
                out.push_str(if first { "\n  " } else { ",\n  " });
                first = false;
                out.push_str(&Value::from(k).to_string());
                out.push_str(": ");
                out.push_str(v);
            };
            for (k, v) in &before {
                entry(&mut out, k, &indented(v, "  "));
            }
            entry(&mut out, "queries", "[");
            for (i, q) in queries.enumerate() {
                out.push_str(if i == 0 { "\n    " } else { ",\n    " });
                out.push_str(&indented(&q, "    "));
            }
            out.push_str("\n  ]");
            for (k, v) in &after {
                entry(&mut out, k, &indented(v, "  "));
            }
            out.push_str("\n}\n");
            return out;
        }
        if !before.is_empty() {
            write_map(&mut out, &before, 0, false);
        }
        out.push_str("queries:\n");
        for q in queries {
            write_seq(&mut out, std::slice::from_ref(&q), 0, false);
        }
        if !after.is_empty() {
            write_map(&mut out, &after, 0, false);
        }
        out
    }
}

impl GoldDoc {
    /// Sets the top-level `verify_sample` (SPEC "Gating on model labels"):
    /// after `queries` in YAML and JSON, the first line of a JSONL file.
    pub fn set_verify_sample(&mut self, draw: Value) {
        self.top
            .get_or_insert_with(Map::new)
            .insert("verify_sample".into(), draw);
    }
}

/// A query's id as text: a string as it is, a number as written.
pub fn id_of(q: &Value) -> String {
    match q.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// `v` as YAML, in serde_yaml's block style.
pub fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Object(m) if !m.is_empty() => write_map(&mut out, m, 0, false),
        Value::Array(a) if !a.is_empty() => write_seq(&mut out, a, 0, false),
        other => {
            write_scalar(&mut out, other, 0);
            out.push('\n');
        }
    }
    out
}

fn pad(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// A map's entries at column `indent`; `inline_first`: the first key goes
/// where the cursor is (after a sequence's `- `).
fn write_map(out: &mut String, m: &Map<String, Value>, indent: usize, inline_first: bool) {
    for (i, (k, v)) in m.iter().enumerate() {
        if i > 0 || !inline_first {
            pad(out, indent);
        }
        // libyaml's check_simple_key: one line, at most 128 bytes.
        if !k.chars().any(is_break) && k.len() <= 128 {
            write_str(out, k, indent + 2, true);
            out.push(':');
            match v {
                Value::Object(records) if k == "provenance" && flow_records(records) => {
                    out.push('\n');
                    for (ck, cv) in records {
                        pad(out, indent + 2);
                        write_str(out, ck, indent + 4, true);
                        out.push_str(": ");
                        write_flow(out, cv);
                        out.push('\n');
                    }
                }
                _ => write_after_key(out, v, indent, false),
            }
        } else {
            out.push_str("? ");
            write_str(out, k, indent + 2, false);
            if !out.ends_with('\n') {
                out.push('\n');
            }
            pad(out, indent);
            out.push(':');
            write_after_key(out, v, indent, true);
        }
    }
}

/// Whether a provenance map can be written a record a line: not empty,
/// every key a simple key (see `write_map`), every record a map.
fn flow_records(m: &Map<String, Value>) -> bool {
    !m.is_empty()
        && m.iter()
            .all(|(k, v)| !k.chars().any(is_break) && k.len() <= 128 && v.is_object())
}

/// `v` in flow style, on one line: a string plain where it reads back the
/// same in flow context (block-plain, and no flow indicator `,[]{}` in it),
/// double-quoted with escapes otherwise.
fn write_flow(out: &mut String, v: &Value) {
    match v {
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_flow_str(out, k);
                out.push_str(": ");
                write_flow(out, x);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_flow(out, x);
            }
            out.push(']');
        }
        Value::String(s) => write_flow_str(out, s),
        other => write_scalar(out, other, 0),
    }
}

fn write_flow_str(out: &mut String, s: &str) {
    // A quoted scalar may hold the flow indicators; only a plain one
    // cannot.
    match style_of(s, true) {
        Style::Plain if !s.contains([',', '[', ']', '{', '}']) => out.push_str(s),
        Style::Plain | Style::Single => {
            out.push('\'');
            out.push_str(&s.replace('\'', "''"));
            out.push('\'');
        }
        _ => write_double(out, s),
    }
}

fn write_after_key(out: &mut String, v: &Value, indent: usize, complex: bool) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            write_map(out, m, indent + 2, false);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            // Sequences in a mapping are not indented (libyaml's
            // indentless sequences), except after an explicit `:`.
            write_seq(out, a, if complex { indent + 2 } else { indent }, false);
        }
        other => {
            out.push(' ');
            write_scalar(out, other, indent + 2);
            if !out.ends_with('\n') {
                out.push('\n');
            }
        }
    }
}

fn write_seq(out: &mut String, a: &[Value], indent: usize, inline_first: bool) {
    for (i, item) in a.iter().enumerate() {
        if i > 0 || !inline_first {
            pad(out, indent);
        }
        out.push_str("- ");
        match item {
            Value::Object(m) if !m.is_empty() => write_map(out, m, indent + 2, true),
            Value::Array(a) if !a.is_empty() => write_seq(out, a, indent + 2, true),
            other => {
                write_scalar(out, other, indent + 2);
                if !out.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
    }
}

/// A scalar or an empty collection; `indent`: where a literal block's
/// lines go.
fn write_scalar(out: &mut String, v: &Value, indent: usize) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // serde_json writes floats with ryu, as serde_yaml did.
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_str(out, s, indent, false),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// libyaml's IS_PRINTABLE.
fn is_printable(c: char) -> bool {
    matches!(c, '\n' | ' '..='~' | '\u{A0}'..='\u{D7FF}' | '\u{10000}'..)
        || (('\u{E000}'..='\u{FFFD}').contains(&c) && c != '\u{FEFF}')
}

/// What libyaml's analyze_scalar finds, for block context.
struct Analysis {
    block_plain: bool,
    single: bool,
    block: bool,
}

fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            block_plain: true,
            single: true,
            block: false,
        };
    }
    let chars: Vec<char> = s.chars().collect();
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let (mut special, mut line_breaks) = (false, false);
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_ws = true;
    let blankz = |c: Option<&char>| c.is_none_or(|&c| c == ' ' || c == '\t' || is_break(c));
    for (i, &c) in chars.iter().enumerate() {
        let followed_by_ws = blankz(chars.get(i + 1));
        let (first, last) = (i == 0, i + 1 == chars.len());
        if first {
            if "#,[]{}&*!|>'\"%@`".contains(c) {
                block_indicators = true;
            }
            if (c == '?' || c == ':' || c == '-') && followed_by_ws {
                block_indicators = true;
            }
        } else {
            if c == ':' && followed_by_ws {
                block_indicators = true;
            }
            if c == '#' && preceded_by_ws {
                block_indicators = true;
            }
        }
        if !is_printable(c) {
            special = true;
        }
        if is_break(c) {
            line_breaks = true;
        }
        if c == ' ' {
            leading_space |= first;
            trailing_space |= last;
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            leading_break |= first;
            trailing_break |= last;
            space_break |= previous_space;
            previous_break = true;
            previous_space = false;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_ws = c == ' ' || c == '\t' || is_break(c);
    }
    let mut a = Analysis {
        block_plain: true,
        single: true,
        block: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain = false;
    }
    if trailing_space {
        a.block = false;
    }
    if break_space {
        a.block_plain = false;
        a.single = false;
    }
    if space_break || special {
        a = Analysis {
            block_plain: false,
            single: false,
            block: false,
        };
    }
    if line_breaks || block_indicators {
        a.block_plain = false;
    }
    a
}

fn style_of(s: &str, simple_key: bool) -> Style {
    // The YAML 1.1 breaks that YAML 1.2 reads as text: escaped.
    if s.contains(['\u{85}', '\u{2028}', '\u{2029}']) {
        return Style::Double;
    }
    let a = analyze(s);
    let mut style = if s.contains('\n') {
        Style::Literal
    } else if s.is_empty() || reads_as_non_string(s) {
        Style::Single
    } else {
        Style::Plain
    };
    if style == Style::Plain && !a.block_plain {
        style = Style::Single;
    }
    if style == Style::Single && !a.single {
        style = Style::Double;
    }
    if style == Style::Literal && (!a.block || simple_key) {
        style = Style::Double;
    }
    style
}

fn write_str(out: &mut String, s: &str, indent: usize, simple_key: bool) {
    match style_of(s, simple_key) {
        Style::Plain => out.push_str(s),
        Style::Single => {
            out.push('\'');
            out.push_str(&s.replace('\'', "''"));
            out.push('\'');
        }
        Style::Double => write_double(out, s),
        Style::Literal => {
            out.push('|');
            if s.starts_with([' ', '\n']) {
                out.push('2');
            }
            let body = s.strip_suffix('\n');
            match body {
                None => out.push('-'),
                Some(b) if b.is_empty() || b.ends_with('\n') => out.push('+'),
                Some(_) => {}
            }
            out.push('\n');
            let parts: Vec<&str> = s.split('\n').collect();
            for (i, part) in parts.iter().enumerate() {
                if !part.is_empty() {
                    pad(out, indent);
                    out.push_str(part);
                }
                if i + 1 < parts.len() {
                    out.push('\n');
                }
            }
            if !s.ends_with('\n') {
                out.push('\n');
            }
        }
    }
}

/// libyaml's double-quoted writer, without line folding (serde_yaml set
/// no width).
fn write_double(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        if !is_printable(c) || c == '\u{FEFF}' || is_break(c) || c == '"' || c == '\\' {
            match c {
                '\0' => out.push_str("\\0"),
                '\u{7}' => out.push_str("\\a"),
                '\u{8}' => out.push_str("\\b"),
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\u{b}' => out.push_str("\\v"),
                '\u{c}' => out.push_str("\\f"),
                '\r' => out.push_str("\\r"),
                '\u{1b}' => out.push_str("\\e"),
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\u{85}' => out.push_str("\\N"),
                '\u{2028}' => out.push_str("\\L"),
                '\u{2029}' => out.push_str("\\P"),
                c if (c as u32) <= 0xFF => out.push_str(&format!("\\x{:02X}", c as u32)),
                c if (c as u32) <= 0xFFFF => out.push_str(&format!("\\u{:04X}", c as u32)),
                c => out.push_str(&format!("\\U{:08X}", c as u32)),
            }
        } else {
            out.push(c);
        }
    }
    out.push('"');
}

/// Whether a plain `s` would read as a null, a boolean or a number (YAML
/// 1.2 core schema as serde_yaml resolved it), or is one of the leading-zero
/// numbers serde_yaml quoted all the same, so must be quoted to stay a
/// string.
fn reads_as_non_string(s: &str) -> bool {
    matches!(s, "~" | "null" | "Null" | "NULL")
        || matches!(s, "true" | "True" | "TRUE" | "false" | "False" | "FALSE")
        || is_int(s)
        || digits_but_not_number(s)
        || is_float(s)
}

/// Leading zeros then digits: a string in YAML 1.2 (`001`).
fn digits_but_not_number(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    s.len() > 1 && s.starts_with('0') && s[1..].bytes().all(|b| b.is_ascii_digit())
}

fn is_int(s: &str) -> bool {
    let (neg, unsigned) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if unsigned.starts_with(['+', '-']) {
        return false;
    }
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = unsigned.strip_prefix(prefix) {
            if rest.starts_with(['+', '-']) {
                return false;
            }
            if u128::from_str_radix(rest, radix).is_ok() {
                return true;
            }
        }
    }
    if digits_but_not_number(s) {
        return false;
    }
    let _ = neg;
    unsigned.parse::<u128>().is_ok()
}

fn is_float(s: &str) -> bool {
    let unpositive = match s.strip_prefix('+') {
        Some(r) if r.starts_with(['+', '-']) => return false,
        Some(r) => r,
        None => s,
    };
    if matches!(unpositive, ".inf" | ".Inf" | ".INF")
        || matches!(s, "-.inf" | "-.Inf" | "-.INF" | ".nan" | ".NaN" | ".NAN")
    {
        return true;
    }
    // serde_yaml took only finite values for floats and wrote `1e400` or
    // `inf` plain; YAML 1.2 readers take them as infinities: quoted.
    unpositive.parse::<f64>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// What serde_yaml 0.9 wrote for these values (captured from it).
    #[test]
    fn writes_what_serde_yaml_wrote() {
        let v = json!({
            "version": 1,
            "queries": [
                {"id": "q1", "text": "How do I rotate an API key?", "stratum": "how-to",
                 "relevant": {"c0": 1, "c2": 0},
                 "provenance": {"c1": {"source": "person", "labeler": "ana", "at": "2026-11-30T10:00:00Z", "verified": true}},
                 "answer": "multi\nline\n", "meta": {"k": [1, 2.5, null, true], "e": {}, "l": []}},
                {"id": "001", "relevant": ["a", "yes", "null", "~", "1e3", "x: y", "#c", " lead", "'q'", "\"d\"", "", "-", "a\tb", "trail ", "0x1F", "a,b", "a #b", "\u{7f}", "\u{feff}x", "line\r\nx", "x\n", "\n"]},
                {"id": "q3", "relevant": [{"doc": "auth.md", "start": 200, "end": 400, "grade": 2}], "m": [[1, [2]], {"k": {"j": []}}], "f": " lead\nx", "e": "x\n\ny\n\n"},
            ]
        });
        let want = "version: 1\nqueries:\n- id: q1\n  text: How do I rotate an API key?\n  stratum: how-to\n  relevant:\n    c0: 1\n    c2: 0\n  provenance:\n    c1: {source: person, labeler: ana, at: 2026-11-30T10:00:00Z, verified: true}\n  answer: |\n    multi\n    line\n  meta:\n    k:\n    - 1\n    - 2.5\n    - null\n    - true\n    e: {}\n    l: []\n- id: '001'\n  relevant:\n  - a\n  - yes\n  - 'null'\n  - '~'\n  - '1e3'\n  - 'x: y'\n  - '#c'\n  - ' lead'\n  - '''q'''\n  - '\"d\"'\n  - ''\n  - '-'\n  - \"a\\tb\"\n  - 'trail '\n  - '0x1F'\n  - a,b\n  - 'a #b'\n  - \"\\x7F\"\n  - \"\\uFEFFx\"\n  - \"line\\r\\nx\"\n  - |\n    x\n  - |2+\n\n- id: q3\n  relevant:\n  - doc: auth.md\n    start: 200\n    end: 400\n    grade: 2\n  m:\n  - - 1\n    - - 2\n  - k:\n      j: []\n  f: |2-\n     lead\n    x\n  e: |+\n    x\n\n    y\n\n";
        assert_eq!(to_yaml(&v), want);
    }

    /// Written a query at a time, a document is the text it was as one
    /// tree (`serde_json::to_string_pretty` and [`to_yaml`] of the whole),
    /// whatever stands around `queries`; and `each` sees every query once,
    /// in order, before it is written.
    #[test]
    fn a_query_at_a_time_writes_the_whole_documents_text() {
        let queries = json!([
            {"id": "q1", "relevant": {"a": 2}, "provenance": {"a": {"source": "person", "verified": true}}},
            {"id": 7, "text": "two\nlines", "relevant": ["b", {"doc": "d", "start": 1, "end": 2}], "meta": {"k": [], "e": {}}},
        ]);
        let tops = [
            json!({"version": 1, "queries": queries.clone()}),
            json!({"queries": queries.clone(), "version": 1}),
            json!({"version": 1}),
        ];
        for format in [GoldFormat::Yaml, GoldFormat::Json, GoldFormat::Jsonl] {
            for top in &tops {
                let Value::Object(mut top) = top.clone() else {
                    unreachable!()
                };
                let qs = match top.get_mut("queries").map(Value::take) {
                    Some(Value::Array(a)) => a,
                    _ => Vec::new(),
                };
                let whole = {
                    let mut t = top.clone();
                    t.insert("queries".into(), Value::Array(qs.clone()));
                    match format {
                        GoldFormat::Json => serde_json::to_string_pretty(&Value::Object(t)).unwrap() + "\n",
                        GoldFormat::Jsonl => qs.iter().map(|q| q.to_string() + "\n").collect(),
                        _ => to_yaml(&Value::Object(t)),
                    }
                };
                let doc = GoldDoc {
                    format,
                    top: (format != GoldFormat::Jsonl).then_some(top),
                    queries: qs.clone(),
                };
                let mut seen = Vec::new();
                let text = doc.into_text_with(|i, q| seen.push((i, q["id"].clone())));
                assert_eq!(text, whole, "{format:?}");
                let want: Vec<(usize, Value)> =
                    qs.iter().enumerate().map(|(i, q)| (i, q["id"].clone())).collect();
                assert_eq!(seen, want);
            }
        }
    }

    fn read_back(yaml: &str) -> Value {
        serde_saphyr::from_str_with_options(yaml, yaml_options()).unwrap()
    }

    #[test]
    fn hostile_strings_read_back_as_written() {
        let hostile = [
            "",
            " ",
            "  lead",
            "trail  ",
            "'",
            "''",
            "\"",
            "a'b\"c",
            "a: b",
            "a:",
            ":a",
            "- a",
            "-",
            "--- x",
            "...",
            "#",
            "a #b",
            "a#b",
            "?",
            "? a",
            "[a]",
            "{a: b}",
            "&a",
            "*a",
            "!t",
            "|",
            ">",
            "%",
            "@",
            "`",
            "yes",
            "no",
            "on",
            "off",
            "y",
            "n",
            "true",
            "False",
            "null",
            "Null",
            "~",
            "NaN",
            "nan",
            ".nan",
            ".inf",
            "-.inf",
            "inf",
            "Infinity",
            "1e3",
            "1e400",
            "1E3",
            "001",
            "-001",
            "+1",
            "0x1F",
            "0o17",
            "0b101",
            "1_000",
            "1.5",
            ".5",
            "5.",
            "-0",
            "12345678901234567890123",
            "2001-12-14",
            "12:30",
            "é",
            "日本",
            "😀",
            "a\u{2028}b",
            "a\u{2029}",
            "\u{85}x",
            "\u{feff}x",
            "\u{7f}",
            "\u{1}",
            "\t",
            "a\tb",
            "line\nnext",
            "x\n",
            "\n",
            "\n\n",
            " \n",
            "a \nb",
            "a\n b",
            "a\r\nb",
            "\r",
            "a\n\n",
            "k".repeat(129).leak(),
            "multi\nkey\n ",
            "\\",
            "\\n",
            "=",
            "<<",
        ];
        for s in hostile {
            let doc = json!({"version": 1, "queries": [{"id": s, "text": s, "relevant": {s: 2}, "l": [s, [s]], "provenance": {s: {"source": s, s: [s, {s: s}]}, "c": {"at": s}}}]});
            let yaml = to_yaml(&doc);
            assert_eq!(read_back(&yaml), doc, "{s:?} written as\n{yaml}");
        }
    }

    proptest! {
        #[test]
        fn any_string_reads_back_as_written(s in "(\\PC|[ \t\n\r\u{85}\u{2028}\u{feff}'\":#\\-?|>~]){0,12}") {
            let doc = json!({"queries": [{"id": s.clone(), "relevant": {s.clone(): 1}, "x": [s.clone()], "provenance": {"c": {"labeler": s.clone(), s.clone(): [s.clone()]}}}]});
            let yaml = to_yaml(&doc);
            prop_assert_eq!(read_back(&yaml), doc, "{}", yaml);
        }
    }

    #[test]
    fn documents_keep_every_field_and_their_form() {
        let p = Path::new("g.yaml");
        let text = "version: 1\nqueries:\n- id: q1\n  text: t\n  relevant:\n  - a\n  answer: x\n";
        let d = GoldDoc::parse(p, text, GoldFormat::Yaml).unwrap();
        assert_eq!(d.queries.len(), 1);
        assert_eq!(id_of(&d.queries[0]), "q1");
        assert_eq!(d.render(), text);
        let d = GoldDoc::parse(p, "{\"id\": 7, \"relevant\": [\"a\"]}\n", GoldFormat::Jsonl).unwrap();
        assert_eq!(id_of(&d.queries[0]), "7");
        assert_eq!(d.render(), "{\"id\":7,\"relevant\":[\"a\"]}\n");
        assert_eq!(
            GoldDoc::empty(GoldFormat::Yaml).render(),
            "version: 1\nqueries: []\n"
        );
    }
}
