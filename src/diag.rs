//! Diagnostics shared by every command: warnings collected while loading
//! inputs (so reports can list them), and errors that carry a `hint:` line.
//!
//! Loaders never print: they return warnings, and the command decides whether
//! they go to stderr, into a report, or both. That keeps stdout clean for data.

use std::fmt;
use std::path::Path;

/// A problem the user can fix, with the next step spelled out (uv's habit:
/// every error ends with what to do).
#[derive(Debug)]
pub struct UserError {
    pub message: String,
    pub hint: Option<String>,
}

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\nhint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for UserError {}

/// An error located in a file, optionally at a line (1-based).
pub fn input_error(path: &Path, line: Option<usize>, msg: impl fmt::Display) -> anyhow::Error {
    anyhow::Error::new(UserError {
        message: match line {
            Some(l) => format!("{}:{l}: {msg}", crate::escape::path(path)),
            None => format!("{}: {msg}", crate::escape::path(path)),
        },
        hint: None,
    })
}

/// Like [`input_error`], with a hint line.
pub fn input_error_hint(
    path: &Path,
    line: Option<usize>,
    msg: impl fmt::Display,
    hint: impl Into<String>,
) -> anyhow::Error {
    anyhow::Error::new(UserError {
        message: match line {
            Some(l) => format!("{}:{l}: {msg}", crate::escape::path(path)),
            None => format!("{}: {msg}", crate::escape::path(path)),
        },
        hint: Some(hint.into()),
    })
}

/// An error not tied to a file (usage, configuration values).
pub fn usage_error(msg: impl Into<String>, hint: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UserError {
        message: msg.into(),
        hint: Some(hint.into()),
    })
}

/// Warnings gathered while loading and evaluating, in the order found.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Warnings(pub Vec<String>);

impl Warnings {
    pub fn push(&mut self, w: impl Into<String>) {
        self.0.push(w.into());
    }
    pub fn iter(&self) -> impl Iterator<Item = &String> {
        self.0.iter()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Writes each warning to stderr as `warning: ...`, unless quiet.
    pub fn emit(&self, quiet: bool) {
        if quiet {
            return;
        }
        for w in &self.0 {
            eprintln!("warning: {}", crate::escape::terminal(w));
        }
    }
}

/// Lists up to `max` names, then how many more: keeps a warning about 5,000
/// missing queries readable.
pub fn name_some(names: &[&str], max: usize) -> String {
    let mut s = names
        .iter()
        .take(max)
        .map(|n| format!("`{}`", crate::escape::terminal(n)))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > max {
        s.push_str(&format!(" and {} more", names.len() - max));
    }
    s
}

/// `1 query`, `2 queries`: a count with its noun in the right number.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The 1-based line number of byte offset `pos` in `text`.
pub fn line_of(text: &[u8], pos: usize) -> usize {
    memchr::memchr_iter(b'\n', &text[..pos.min(text.len())]).count() + 1
}

/// Values longer than this are cut in messages.
const EXCERPT_CHARS: usize = 60;

/// A value as an error message may quote it: at most [`EXCERPT_CHARS`]
/// characters, control characters escaped, and the full length named when
/// cut. A bad 50 MB field must not come back whole on stderr, and a value
/// from a file must not move the reader's terminal cursor.
pub fn excerpt(s: &str) -> String {
    excerpt_of(s, s.len())
}

/// [`excerpt`] of the start `s` of a value `total` bytes long.
fn excerpt_of(s: &str, total: usize) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == EXCERPT_CHARS {
            out.push_str(&format!("... ({total} bytes in all)"));
            return out;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if total > s.len() {
        out.push_str(&format!("... ({total} bytes in all)"));
    }
    out
}

/// [`excerpt`] of raw bytes (TREC fields are read as bytes).
pub fn excerpt_bytes(b: &[u8]) -> String {
    let head = &b[..b.len().min(4 * EXCERPT_CHARS)];
    excerpt_of(&String::from_utf8_lossy(head), b.len())
}

/// A parser's message (serde's quote the offending value) with every quoted
/// value longer than an excerpt cut to one, and the whole capped.
pub fn clip_message(msg: &str) -> String {
    let mut out = String::new();
    let mut rest = msg;
    while let Some(open) = rest.find(['`', '"']) {
        let q = rest.as_bytes()[open] as char;
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        match rest.find(q) {
            Some(close) => {
                out.push_str(&excerpt(&rest[..close]));
                out.push(q);
                rest = &rest[close + 1..];
            }
            None => {
                out.push_str(&excerpt(rest));
                rest = "";
            }
        }
    }
    out.push_str(rest);
    if out.chars().count() > 4 * EXCERPT_CHARS {
        let cut: String = out.chars().take(4 * EXCERPT_CHARS).collect();
        return format!("{cut}...");
    }
    out
}

/// The UTF-8 byte order mark some Windows tools write at the start of a
/// text file. It is not part of the first line's first field.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `bytes` without a leading byte order mark.
pub fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(BOM).unwrap_or(bytes)
}

/// Whether the start of a file looks like binary data rather than text: a
/// NUL byte, which no text format rgate reads may contain.
pub fn looks_binary(head: &[u8]) -> bool {
    memchr::memchr(0, head).is_some()
}

/// How deeply a YAML input may nest. Gold sets and configs need about five
/// levels. serde-saphyr's own budget stops at 64 levels too (its
/// `Budget::max_depth` default), but [`yaml_guard`] says so first, in one
/// message for every YAML input, and refuses aliases outright.
pub const MAX_YAML_DEPTH: usize = 64;

/// Refuses YAML that would make the parser do unbounded work, before the
/// parser sees it: aliases (`*name`: each copies its anchor, and nested
/// anchors multiply, so a 1 MB file can expand to gigabytes) and nesting
/// beyond [`MAX_YAML_DEPTH`]. A linear scan that knows quotes, comments and
/// block scalars well enough not to mistake text for structure; it may
/// over-count nesting in exotic layouts, never under-count aliases.
/// Returns the 1-based line and the reason.
pub fn yaml_guard(text: &str) -> Result<(), (usize, String)> {
    // Open block indentation levels, and flow brackets (`[`, `{`).
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    // Inside a quoted scalar that spans lines.
    let mut quote: Option<u8> = None;
    // Inside a block scalar (`|` or `>`): lines indented deeper than this.
    let mut block_scalar: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let b = line.as_bytes();
        let indent = b.iter().take_while(|&&c| c == b' ').count();
        let blank = b[indent..].iter().all(|c| c.is_ascii_whitespace());
        if let Some(parent) = block_scalar {
            if blank || indent > parent {
                continue;
            }
            block_scalar = None;
        }
        let mut j = indent;
        if quote.is_none() && flow == 0 {
            if blank || b[indent] == b'#' {
                continue;
            }
            while indents.last().is_some_and(|&top| top >= indent) {
                indents.pop();
            }
            indents.push(indent);
            // Compact nesting on one line: `- - - x`, `? - x`.
            while j + 1 < b.len() && matches!(b[j], b'-' | b'?') && b[j + 1] == b' ' {
                if indents.len() > MAX_YAML_DEPTH {
                    break;
                }
                indents.push(j + 2);
                j += 2;
                while j < b.len() && b[j] == b' ' {
                    j += 1;
                }
            }
        }
        let mut prev = b' ';
        let mut last_token_start = j;
        while j < b.len() {
            let c = b[j];
            if let Some(q) = quote {
                if q == b'"' && c == b'\\' {
                    j += 2;
                    continue;
                }
                if c == q {
                    if q == b'\'' && b.get(j + 1) == Some(&b'\'') {
                        j += 2;
                        continue;
                    }
                    quote = None;
                }
                prev = c;
                j += 1;
                continue;
            }
            let token_start = prev == b' ' || prev == b'\t' || matches!(prev, b'[' | b'{' | b',');
            match c {
                b'#' if prev == b' ' || prev == b'\t' => break,
                b'"' | b'\'' if token_start || prev == b':' => quote = Some(c),
                b'*' if token_start
                    && b.get(j + 1)
                        .is_some_and(|n| !n.is_ascii_whitespace() && !matches!(n, b',' | b']' | b'}')) =>
                {
                    return Err((
                        line_no,
                        "YAML aliases (`*name`) are not accepted: each copies its anchor, and a small file can expand without bound".into(),
                    ));
                }
                b'[' | b'{' if token_start || prev == b':' => {
                    flow += 1;
                    if indents.len() + flow > MAX_YAML_DEPTH {
                        return Err((line_no, format!("nested more than {MAX_YAML_DEPTH} levels deep")));
                    }
                }
                b']' | b'}' if flow > 0 => flow -= 1,
                _ => {}
            }
            if !c.is_ascii_whitespace() && (prev == b' ' || prev == b'\t') {
                last_token_start = j;
            }
            prev = c;
            j += 1;
        }
        if indents.len() + flow > MAX_YAML_DEPTH {
            return Err((line_no, format!("nested more than {MAX_YAML_DEPTH} levels deep")));
        }
        if quote.is_none() && flow == 0 {
            // `key: |`, `- >-`: the lines after belong to a block scalar.
            let tail = line[last_token_start..].trim_end();
            let tail = tail.split(" #").next().unwrap_or(tail).trim_end();
            if tail.starts_with(['|', '>'])
                && tail[1..].bytes().all(|c| matches!(c, b'-' | b'+' | b'0'..=b'9'))
            {
                block_scalar = Some(indent);
            }
        }
    }
    Ok(())
}

/// The options rgate reads YAML with (serde-saphyr), chosen so the files
/// accepted stay those serde_yaml 0.9 accepted, which configs were written
/// against: `key:` read into a text field is `""` (and `~` is `"~"`);
/// `1_000` and `017` are text, not numbers, and `yes`, `on`, `off` text,
/// not booleans (YAML 1.2's core schema; serde-saphyr's default takes the
/// YAML 1.1 forms too);
/// `<<` is a plain key, not a merge; `.inf` reaches the range checks
/// rather than failing as a type error. No snippets: rgate prints its own
/// `file:line:` messages.
pub fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        null_as_string: true,
        strict_booleans: true,
        underscored_numbers_as_strings: true,
        leading_zero_numbers_as_strings: true,
        merge_keys: serde_saphyr::MergeKeyPolicy::AsOrdinary,
        non_finite_float_policy: serde_saphyr::NonFiniteFloatPolicy::PassThrough,
        with_snippet: false,
    }
}

/// A serde-saphyr error as the 1-based line it names and a message without
/// the parser's own "at line L, column C" (rgate puts the line in front, as
/// `file:line:`). Serde's own wording is kept where rgate reads it back
/// ([`unknown_key_hint`] finds the valid keys between backticks); the
/// parser's terms ("sequence start") become the user's ("a list").
pub fn yaml_error(err: &serde_saphyr::Error, text: &str) -> (Option<usize>, String) {
    use serde_saphyr::Error as E;
    let mut err = err.without_snippet();
    while let E::AliasError { error, .. } = err {
        err = error.without_snippet();
    }
    let loc = err.location();
    let line = loc.map(|l| l.line() as usize).filter(|&l| l > 0);
    let quoted = |names: &[&str]| -> String {
        // serde's `OneOf` wording: `a`; `a` or `b`; one of `a`, `b`, `c`.
        let q: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        match q.len() {
            0 => "nothing".into(),
            1 => q[0].clone(),
            2 => format!("{} or {}", q[0], q[1]),
            _ => format!("one of {}", q.join(", ")),
        }
    };
    let msg = match err {
        E::SerdeUnknownField { field, expected, .. } if expected.is_empty() => {
            format!("unknown field `{field}`, there are no fields")
        }
        E::SerdeUnknownField { field, expected, .. } => {
            format!("unknown field `{field}`, expected {}", quoted(expected))
        }
        E::SerdeUnknownVariant {
            variant, expected, ..
        } => {
            format!("unknown variant `{variant}`, expected {}", quoted(expected))
        }
        E::DuplicateMappingKey { key: Some(k), .. } => format!("duplicate key `{k}`"),
        E::InvalidScalar { ty, location } => {
            let span = location.span();
            let source = span
                .byte_offset()
                .zip(span.byte_len())
                .and_then(|(o, n)| text.get(o as usize..(o + n) as usize))
                .unwrap_or("");
            let what = match *ty {
                "floating point" => "a number".to_string(),
                "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a whole number, 0 or more".to_string(),
                "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number".to_string(),
                other => other.to_string(),
            };
            format!("`{}` is not {what}", excerpt(source))
        }
        E::Unexpected { expected, .. } => match *expected {
            "sequence start" => "expected a list here".into(),
            "mapping start" => "expected a map (`key: value` lines) here".into(),
            "string scalar" => "expected a single value here, not a list or map".into(),
            other => format!("expected {other}"),
        },
        E::Eof { .. } => "the file has no YAML document (it is empty or only comments)".into(),
        other => {
            use serde_saphyr::MessageFormatter;
            serde_saphyr::UserMessageFormatter
                .format_message(other)
                .into_owned()
        }
    };
    (line, msg)
}

/// A number as a message quotes it: as Rust prints it (`0.05`, `1.5`),
/// unless that runs past 20 characters, as `1e300` (301 digits) and
/// `1e-320` (325) do; then in exponent form. The echo of a bad value must
/// stay readable.
pub fn number(x: f64) -> String {
    let plain = x.to_string();
    if plain.len() > 20 {
        format!("{x:e}")
    } else {
        plain
    }
}

/// The candidate nearest to `name` by edit distance (case aside), when it
/// is near enough to be a typo: within a third of the candidate's length,
/// or 2 edits for short names.
pub fn suggest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    candidates
        .iter()
        .map(|c| (strsim::levenshtein(&lower, &c.to_ascii_lowercase()), *c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// serde says "unknown field `x`, expected one of `a`, `b`"; users want the
/// nearest valid key.
pub fn unknown_key_hint(msg: &str) -> Option<String> {
    let rest = msg.split("unknown field `").nth(1)?;
    let name = rest.split('`').next()?;
    let expected: Vec<&str> = rest
        .split("expected ")
        .nth(1)?
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s)
        .collect();
    Some(match suggest(name, &expected) {
        Some(s) => format!("did you mean `{s}`? Valid keys here: {}", expected.join(", ")),
        None => format!("valid keys here: {}", expected.join(", ")),
    })
}

/// Seconds since the epoch of an RFC 3339 time as rgate writes it
/// (`2026-11-30T12:00:00Z`), also with fractional seconds (dropped) or a
/// `+HH:MM` offset; `None` for anything else (history files are
/// hand-editable). The inverse of [`crate::origin::rfc3339`]. Here, not in `origin`, so
/// that readers of every layer (a gold set's `verify_sample.drawn_at`) check
/// times alike.
pub fn parse_rfc3339(t: &str) -> Option<i64> {
    let b = t.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |s: &str, from: usize, to: usize| -> Option<i64> {
        let d = s.get(from..to)?;
        d.bytes().all(|c| c.is_ascii_digit()).then(|| d.parse().ok())?
    };
    let (y, mo, d) = (num(t, 0, 4)?, num(t, 5, 7)?, num(t, 8, 10)?);
    let (h, mi, sec) = (num(t, 11, 13)?, num(t, 14, 16)?, num(t, 17, 19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut rest = &t[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        rest = &frac[n..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            sign * (num(rest, 1, 3)? * 3600 + num(rest, 4, 6)? * 60)
        }
    };
    Some(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec - offset)
}

/// Hinnant's `days_from_civil`, the inverse of `origin::civil_from_days` (both from "chrono-Compatible Low-Level Date Algorithms").
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_catch_typos_only() {
        assert_eq!(suggest("relevent", &["relevant", "stratum"]), Some("relevant"));
        assert_eq!(suggest("zzz", &["relevant", "stratum"]), None);
    }

    #[test]
    fn lines_are_one_based() {
        assert_eq!(line_of(b"a\nb\nc", 0), 1);
        assert_eq!(line_of(b"a\nb\nc", 2), 2);
        assert_eq!(line_of(b"a\nb\nc", 4), 3);
    }

    #[test]
    fn counts_agree_in_number() {
        assert_eq!(count(1, "query", "queries"), "1 query");
        assert_eq!(count(0, "query", "queries"), "0 queries");
        assert_eq!(count(2, "stratum", "strata"), "2 strata");
    }

    #[test]
    fn excerpts_cut_long_values_and_escape_controls() {
        assert_eq!(excerpt("short"), "short");
        assert_eq!(excerpt("a\x1b[2Jb"), "a\\u{1b}[2Jb");
        let long = "x".repeat(1000);
        assert_eq!(
            excerpt(&long),
            format!("{}... (1000 bytes in all)", "x".repeat(60))
        );
        assert_eq!(excerpt_bytes(long.as_bytes()), excerpt(&long));
        let msg = format!("invalid type: string \"{long}\", expected `an id`");
        assert_eq!(
            clip_message(&msg),
            format!(
                "invalid type: string \"{}... (1000 bytes in all)\", expected `an id`",
                "x".repeat(60)
            )
        );
    }

    #[test]
    fn yaml_guard_counts_nesting_and_aliases() {
        assert!(yaml_guard("a: &x 1\nb: [1, {c: 2}]\n# *no\nd: 'e*f'\n").is_ok());
        assert_eq!(yaml_guard("a: &x 1\nb: *x\n").unwrap_err().0, 2);
        let deep = format!("a: {}{}", "[".repeat(65), "]".repeat(65));
        assert!(yaml_guard(&deep).unwrap_err().1.contains("nested more than 64"));
        let ok = format!("a: {}{}", "[".repeat(60), "]".repeat(60));
        assert!(yaml_guard(&ok).is_ok());
        let mut block = String::new();
        for i in 0..70 {
            block.push_str(&format!("{}k{i}:\n", " ".repeat(i)));
        }
        assert!(yaml_guard(&block).is_err());
        // A block scalar's text is not structure.
        assert!(yaml_guard(&format!("t: |\n  {}\n  *x\nu: 1\n", "- ".repeat(100))).is_ok());
    }

    #[test]
    fn numbers_are_echoed_short() {
        assert_eq!(number(1.5), "1.5");
        assert_eq!(number(100000.0), "100000");
        assert_eq!(number(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(number(1e300), "1e300");
        assert_eq!(number(-1e-320), "-1e-320");
        assert_eq!(number(f64::INFINITY), "inf");
    }

    #[test]
    fn long_lists_are_cut() {
        assert_eq!(name_some(&["a", "b", "c"], 2), "`a`, `b` and 1 more");
    }
}
