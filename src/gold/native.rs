//! The native gold set forms: YAML, JSON and JSONL (SPEC "Gold set").

use std::fmt;
use std::path::Path;

use anyhow::Result;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_saphyr::{MessageFormatter, Spanned};

use super::builder::Builder;
use super::{GoldFormat, GoldQuery, GoldSet, Label, QueryExtra, SpanLabel, DEFAULT_STRATUM};
use crate::diag::{clip_message, excerpt, input_error, input_error_hint, line_of, yaml_guard};

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

/// A JSON gold set, each query kept as its text: where that text starts
/// gives the query's line (serde_json reports positions of errors only),
/// and each query is then read from it.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a gold set: a map with `version: 1` and a `queries:` list"
)]
struct JsonFile<'t> {
    #[serde(default)]
    version: Option<Version>,
    #[serde(borrow)]
    queries: Vec<&'t RawValue>,
}

/// Where a JSON query's `id` and `stratum` are, within its text.
#[derive(Deserialize)]
struct JsonPlaces<'t> {
    #[serde(borrow, default)]
    id: Option<&'t RawValue>,
    #[serde(borrow, default)]
    stratum: Option<&'t RawValue>,
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
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a gold query: a map with `id`, `text`, `stratum`, `relevant`"
)]
struct NativeQuery {
    /// Spanned: a YAML reader gives the line of each; JSON gives none
    /// (line 0) and the JSON reader finds them through [`JsonPlaces`].
    id: Spanned<IdValue>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    stratum: Option<Spanned<String>>,
    #[serde(default)]
    relevant: Option<Relevant>,
    /// Who gave each label ([`crate::goldbuild::provenance`]); metrics
    /// ignore it.
    #[serde(default)]
    #[allow(dead_code)]
    provenance: Option<de::IgnoredAny>,
    /// A reference answer (RAG gold sets): kept, never scored.
    #[serde(default)]
    answer: Option<serde_json::Value>,
    #[serde(default, alias = "metadata")]
    meta: Option<serde_json::Value>,
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
                // `1e3` and `1000.0` are decimal numbers to YAML and JSON
                // even when whole: say that, not "1000 is not an integer".
                Err(E::custom(if v.fract() != 0.0 || !v.is_finite() {
                    format!(
                        "grade {} is not an integer; grades are integers",
                        crate::diag::number(v)
                    )
                } else if i32::try_from(v as i64).is_ok() && v.abs() < 1e10 {
                    format!(
                        "grade {v:?} is written as a decimal number (as 1e3 or 1000.0 are); grades are integers: write {}",
                        v as i64
                    )
                } else {
                    format!("grade {} is out of range", crate::diag::number(v))
                }))
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
/// How rgate reads YAML: as YAML 1.2's core schema, the way serde_yaml
/// (the parser before) read it, so that every id and value reads as it
/// did: `yes`/`no`/`on` and leading-zero (`001`) or underscored (`1_000`)
/// numbers stay strings; a key given twice reaches the reader, which says
/// what is repeated (a label appears twice) rather than the parser's
/// "duplicate key"; `<<` is a key like any other, as it was. No budget: [`yaml_guard`] has refused aliases and deep
/// nesting already, and a budget of nodes would cap the gold set's size.
pub(crate) fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: None,
        strict_booleans: true,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
        non_finite_float_policy: serde_saphyr::NonFiniteFloatPolicy::PassThrough,
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::PassThrough,
        merge_keys: serde_saphyr::MergeKeyPolicy::AsOrdinary,
    }
}

/// A serde-saphyr error as (line, message): the message without the
/// parser's location suffix and source snippet (rgate prints its own
/// `path:line:`), and the field lists of "unknown field" in serde's
/// backquoted form, which [`crate::diag::unknown_key_hint`] reads.
pub(crate) fn yaml_error(e: &serde_saphyr::Error) -> (Option<usize>, String) {
    let line = e.location().map(|l| l.line() as usize).filter(|&l| l > 0);
    let msg = serde_saphyr::DefaultMessageFormatter
        .format_message(e.without_snippet())
        .into_owned();
    let msg = match msg.split_once(", expected one of ") {
        Some((head, list)) if head.starts_with("unknown field `") && !list.contains('`') => {
            let names: Vec<String> = list.split(", ").map(|n| format!("`{n}`")).collect();
            format!("{head}, expected one of {}", names.join(", "))
        }
        _ => msg,
    };
    (line, msg)
}

/// The 1-based line of each byte offset asked for, offsets ascending: one
/// pass over the text, however many queries.
struct LineCounter<'t> {
    text: &'t [u8],
    at: usize,
    line: usize,
}

impl LineCounter<'_> {
    fn line_at(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        if offset < self.at {
            return line_of(self.text, offset);
        }
        self.line += memchr::memchr_iter(b'\n', &self.text[self.at..offset]).count();
        self.at = offset;
        self.line
    }
}

/// The byte offset of `inner` in `outer`, which it is a slice of.
fn offset_in(outer: &str, inner: &str) -> usize {
    (inner.as_ptr() as usize).saturating_sub(outer.as_ptr() as usize)
}

pub(super) fn parse_native(path: &Path, bytes: &[u8], format: GoldFormat) -> Result<GoldSet> {
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
    let check_version = |version: Option<Version>| match version {
        Some(Version(v)) if v != 1 => Err(input_error_hint(
            path,
            None,
            format!("gold set version {v} is not supported"),
            "this rgate reads version 1; upgrade rgate",
        )),
        _ => Ok(()),
    };
    let invalid = |line: Option<usize>, msg: String| {
        input_error_hint(
            path,
            line,
            format!("invalid gold set: {}", native_message(&msg)),
            field_hint(&msg),
        )
    };
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
                let at = Some(i + 1);
                add_native(&mut b, q, Lines { id: at, stratum: at })?;
            }
        }
        GoldFormat::Json => {
            let file: JsonFile =
                serde_json::from_str(text).map_err(|e| invalid(Some(e.line()), e.to_string()))?;
            check_version(file.version)?;
            let mut lines = LineCounter {
                text: text.as_bytes(),
                at: 0,
                line: 1,
            };
            for raw in file.queries {
                let raw = raw.get();
                let base = lines.line_at(offset_in(text, raw));
                // serde_json counts lines from the query's own text.
                let q: NativeQuery = serde_json::from_str(raw)
                    .map_err(|e| invalid(Some(base + e.line().max(1) - 1), e.to_string()))?;
                let places: JsonPlaces = serde_json::from_str(raw).unwrap_or(JsonPlaces {
                    id: None,
                    stratum: None,
                });
                let within = |v: Option<&RawValue>| {
                    v.map(|v| {
                        base + memchr::memchr_iter(b'\n', &raw.as_bytes()[..offset_in(raw, v.get())]).count()
                    })
                };
                let id = within(places.id).or(Some(base));
                add_native(
                    &mut b,
                    q,
                    Lines {
                        id,
                        stratum: within(places.stratum).or(id),
                    },
                )?;
            }
        }
        GoldFormat::Yaml => {
            let file: NativeFile =
                serde_saphyr::from_str_with_options(text, yaml_options()).map_err(|e| {
                    let (line, mut msg) = yaml_error(&e);
                    // The parser's word for a struct that is not a map;
                    // serde's `expecting` says what was meant. Only the gold
                    // set itself starts on the first line holding anything.
                    if msg == "expected mapping start" {
                        let first = text
                            .lines()
                            .position(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
                            .map(|i| i + 1);
                        msg = match line == first {
                            true => "expected a gold set: a map with `version: 1` and a `queries:` list",
                            false => "expected a gold query: a map with `id`, `text`, `stratum`, `relevant`",
                        }
                        .into();
                    }
                    invalid(line, msg)
                })?;
            check_version(file.version)?;
            for q in file.queries {
                let known = |l: u64| Some(l as usize).filter(|&l| l > 0);
                let id = known(q.id.referenced.line());
                let stratum = q.stratum.as_ref().and_then(|s| known(s.referenced.line())).or(id);
                add_native(&mut b, q, Lines { id, stratum })?;
            }
        }
        GoldFormat::Qrels => unreachable!("qrels are parsed by parse_qrels"),
    }
    Ok(b.finish(format))
}

/// Where a query's id and stratum are, for the errors the builder finds.
struct Lines {
    id: Option<usize>,
    stratum: Option<usize>,
}

fn add_native(b: &mut Builder, q: NativeQuery, lines: Lines) -> Result<()> {
    let stratum = b.stratum(
        q.stratum.as_ref().map_or(DEFAULT_STRATUM, |s| s.value.as_str()),
        lines.stratum,
    )?;
    let pos = b.queries.len();
    let (labels, spans) = q.relevant.map(|r| (r.0, r.1)).unwrap_or_default();
    b.add(
        GoldQuery {
            id: q.id.value.0,
            text: q.text,
            stratum,
            labels: labels.into(),
            spans,
        },
        lines.id,
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

#[cfg(test)]
mod tests {
    use crate::gold::{Label, SpanLabel};

    use crate::gold::tests::load_str;

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

    /// Every error names the line of the offending key or value, counted
    /// by hand in each text below.
    #[test]
    fn errors_name_the_line_of_what_is_wrong() {
        let cases = [
            // Duplicate query id: the second `id:` is line 6.
            ("g.yaml", "version: 1\nqueries:\n  - id: q1\n    relevant: [a]\n\n  - id: q1\n    relevant: [b]\n", "g.yaml:6: duplicate query id `q1`"),
            // A bad grade: `b: 1.5` on line 5.
            ("g.yaml", "queries:\n  - id: q1\n    relevant:\n      a: 1\n      b: 1.5\n", "g.yaml:5: invalid gold set: grade 1.5 is not an integer"),
            // A bad span: the item on line 6.
            ("g.yaml", "queries:\n  - id: q1\n    relevant: [a]\n  - id: q2\n    relevant:\n      - {doc: d, start: 5, end: 2}\n", "g.yaml:6: invalid gold set: span of `d` has start 5"),
            // An unknown key: `relevent` on line 4.
            ("g.yaml", "queries:\n  - id: q1\n    text: t\n    relevent: [a]\n", "g.yaml:4: invalid gold set: unknown field `relevent`"),
            // A reserved stratum: its value on line 5, not the id's line 3.
            ("g.yaml", "queries:\n  - id: q1\n    text: t\n    relevant: [a]\n    stratum: all\n", "g.yaml:5: stratum name `all` is reserved"),
            // White space in an id, in a flow map on line 3.
            ("g.yaml", "queries:\n  - {id: q0, relevant: [a]}\n  - {id: \"q 1\", relevant: [a]}\n", "g.yaml:3: query id `q 1` contains white space"),
            // JSON as `gold import` writes it: `"id"` one line below `{`.
            ("g.json", "{\n  \"version\": 1,\n  \"queries\": [\n    {\n      \"id\": \"q1\",\n      \"relevant\": [\"a\"]\n    },\n    {\n      \"id\": \"q1\",\n      \"relevant\": [\"b\"]\n    }\n  ]\n}\n", "g.json:9: duplicate query id `q1`"),
            // JSON: a bad grade inside the second query, line 10.
            ("g.json", "{\n  \"queries\": [\n    {\n      \"id\": \"q1\",\n      \"relevant\": {\"a\": 1}\n    },\n    {\n      \"id\": \"q2\",\n      \"relevant\": {\n        \"b\": 2.5\n      }\n    }\n  ]\n}\n", "g.json:10: invalid gold set: grade 2.5 is not an integer"),
            // JSON: the stratum on line 6.
            ("g.json", "{\"queries\": [\n  {\"id\": \"q0\", \"relevant\": [\"a\"]},\n  {\n    \"id\": \"q1\",\n    \"relevant\": [\"a\"],\n    \"stratum\": \"macro\"\n  }\n]}\n", "g.json:6: stratum name `macro` is reserved"),
        ];
        for (name, text, want) in cases {
            let err = load_str(name, text).unwrap_err().to_string();
            assert!(err.contains(want), "want {want:?}, got {err}");
        }
    }

    /// Ids and labels read as serde_yaml (YAML 1.2 core schema) read them:
    /// the strings and numbers below are what it gave, so fingerprints
    /// and query ids stay as they were.
    #[test]
    fn yaml_ids_read_as_they_always_have() {
        let text = "queries:\n  - id: 001\n    relevant: [yes, no, on, 007, 1_000, 0x1F, 12, ~x, '0o7']\n  - id: 0x1F\n    relevant: {y: 1, 010: 2}\n  - id: 1_000\n    relevant: [a]\n  - id: 42\n    relevant: [a]\n";
        let (g, _) = load_str("g.yaml", text).unwrap();
        let ids: Vec<&str> = g.queries.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["001", "31", "1_000", "42"]);
        let labels =
            |i: usize| -> Vec<(&str, i32)> { g.queries[i].labels.iter().map(|l| (l.id, l.grade)).collect() };
        assert_eq!(
            labels(0),
            [
                ("yes", 1),
                ("no", 1),
                ("on", 1),
                ("007", 1),
                ("1_000", 1),
                ("31", 1),
                ("12", 1),
                ("~x", 1),
                ("0o7", 1)
            ]
        );
        assert_eq!(labels(1), [("y", 1), ("010", 2)]);
        // A float is not an id, now as then.
        let err = load_str("g.yaml", "queries:\n  - id: 1e3\n    relevant: [a]\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("g.yaml:2: invalid gold set: invalid type: floating point"),
            "{err}"
        );
    }

    /// `answer` and `meta` are kept as JSON values: what YAML gold files
    /// hold there (text, numbers, lists, maps, null) comes through as it was.
    #[test]
    fn answers_and_meta_are_kept_as_written() {
        let (g, _) = load_str(
            "g.yaml",
            "queries:\n  - id: q1\n    relevant: [a]\n    answer: \"Rotate: then wait\"\n    meta: {n: 3, r: 0.5, tags: [a, b], none: null, ok: true, s: '010'}\n",
        )
        .unwrap();
        let e = &g.extras[&0];
        assert_eq!(e.answer, Some(serde_json::json!("Rotate: then wait")));
        assert_eq!(
            e.meta,
            Some(
                serde_json::json!({"n": 3, "r": 0.5, "tags": ["a", "b"], "none": null, "ok": true, "s": "010"})
            )
        );
    }
}
