//! The native gold set forms: YAML, JSON and JSONL (SPEC "Gold set").

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use anyhow::Result;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_saphyr::{MessageFormatter, Spanned};

use super::builder::Builder;
use super::fast_yaml;
use super::{
    DrawSize, EarlierDraw, Eligible, GoldFormat, GoldQuery, GoldSet, Label, Provenance, QueryExtra,
    SpanLabel, VerifySample, DEFAULT_STRATUM,
};
use crate::diag::{clip_message, excerpt, input_error, input_error_hint, line_of, yaml_guard};

// ---- native YAML / JSON / JSONL ------------------------------------------

#[derive(Deserialize)]
#[serde(
    bound(deserialize = "P: Deserialize<'de>"),
    deny_unknown_fields,
    expecting = "a gold set: a map with `version: 1` and a `queries:` list"
)]
struct NativeFile<P> {
    #[serde(default)]
    version: Option<Version>,
    queries: Vec<NativeQuery<P>>,
    #[serde(default)]
    verify_sample: Option<Spanned<RawSample>>,
}

/// `verify_sample:` as written (SPEC "Gating on model labels"); checked
/// against the queries by [`Builder::set_verify_sample`], and against its
/// seed by [`super::draw`].
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a verification draw: a map with `seed`, `ids` and `drawn_at`"
)]
pub(super) struct RawSample {
    seed: u64,
    #[serde(default)]
    per_stratum: Option<u64>,
    #[serde(default)]
    fraction: Option<f64>,
    #[serde(default)]
    show_model: Option<bool>,
    #[serde(default)]
    eligible: Vec<RawEligible>,
    ids: Vec<IdValue>,
    drawn_at: String,
    #[serde(default)]
    history: Vec<RawEarlier>,
}

/// One stratum of `eligible:`.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an eligible stratum: a map with `stratum`, `queries` and `sha256`"
)]
struct RawEligible {
    stratum: String,
    queries: u64,
    sha256: String,
}

/// One draw of `history:`.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an earlier draw: a map with `seed`, `drawn_at` and `queries`"
)]
struct RawEarlier {
    seed: u64,
    drawn_at: String,
    #[serde(default)]
    per_stratum: Option<u64>,
    #[serde(default)]
    fraction: Option<f64>,
    #[serde(default)]
    show_model: Option<bool>,
    queries: u64,
}

/// `per_stratum` or `fraction`, at most one, each in its range.
fn draw_size(per_stratum: Option<u64>, fraction: Option<f64>) -> Result<Option<DrawSize>, String> {
    match (per_stratum, fraction) {
        (Some(_), Some(_)) => Err("`per_stratum` and `fraction` both: a draw has one size".into()),
        (Some(0), None) => Err("`per_stratum` is 0".into()),
        (Some(k), None) => Ok(Some(DrawSize::PerStratum(
            usize::try_from(k).unwrap_or(usize::MAX),
        ))),
        (None, Some(f)) if f > 0.0 && f <= 1.0 => Ok(Some(DrawSize::Fraction(f))),
        (None, Some(f)) => Err(format!("`fraction` {f} is not in (0, 1]")),
        (None, None) => Ok(None),
    }
}

impl RawSample {
    /// The record, or what is wrong with it (its line is the caller's).
    pub(super) fn into_sample(self, line: Option<usize>) -> Result<VerifySample, String> {
        let size = draw_size(self.per_stratum, self.fraction)?;
        let history = self
            .history
            .into_iter()
            .map(|h| {
                Ok(EarlierDraw {
                    seed: h.seed,
                    size: draw_size(h.per_stratum, h.fraction).map_err(|e| format!("history: {e}"))?,
                    drawn_at: h.drawn_at,
                    show_model: h.show_model,
                    queries: usize::try_from(h.queries).unwrap_or(usize::MAX),
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(VerifySample {
            seed: self.seed,
            ids: self.ids.into_iter().map(|i| i.0).collect(),
            drawn_at: self.drawn_at,
            size,
            show_model: self.show_model,
            eligible: self
                .eligible
                .into_iter()
                .map(|e| Eligible {
                    stratum: e.stratum,
                    queries: usize::try_from(e.queries).unwrap_or(usize::MAX),
                    sha256: e.sha256,
                })
                .collect(),
            history,
            line,
        })
    }
}

/// A JSONL gold set has no top level: its draw is a line of its own,
/// `{"verify_sample": {...}}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonlSample {
    verify_sample: RawSample,
}

/// Where a JSON gold set's `verify_sample` is (only for an error).
#[derive(Deserialize)]
struct JsonSamplePlace<'t> {
    #[serde(borrow, default)]
    verify_sample: Option<&'t RawValue>,
}

/// A JSON gold set, each query kept as its text: where that text starts
/// gives the query's line (serde_json reports positions of errors only).
/// Read only to locate a query the builder found wrong ([`json_lines`]);
/// the file has parsed as [`JsonQueries`] already.
#[derive(Deserialize)]
struct JsonFile<'t> {
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
    bound(deserialize = "P: Deserialize<'de>"),
    deny_unknown_fields,
    expecting = "a gold query: a map with `id`, `text`, `stratum`, `relevant`"
)]
struct NativeQuery<P> {
    /// Spanned: a YAML reader gives the line of each; JSON gives none
    /// (line 0) and the JSON reader finds them through [`JsonPlaces`].
    id: Spanned<IdValue>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    stratum: Option<Spanned<String>>,
    #[serde(default)]
    relevant: Option<Relevant>,
    /// Who gave each label ([`crate::goldbuild::provenance`]): read as a
    /// [`ProvenanceField`], or skipped unread when the caller has no use
    /// for it (metrics ignore it).
    #[serde(default)]
    provenance: Option<P>,
    /// A reference answer (RAG gold sets): kept, never scored.
    #[serde(default)]
    answer: Option<serde_json::Value>,
    #[serde(default, alias = "metadata")]
    meta: Option<serde_json::Value>,
    /// A model's grades of the query's pooled pairs (chunk id -> 0..3).
    #[serde(default)]
    model: Option<ModelGrades>,
    /// People graded every pooled pair of the query (`relevant`).
    #[serde(default)]
    verified: Option<bool>,
}

/// `model:`: a map of chunk id to grade, in the order written.
struct ModelGrades(Vec<Label>);

impl<'de> Deserialize<'de> for ModelGrades {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ModelGrades;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of chunk id to the model's grade (0..3)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<ModelGrades, A::Error> {
                let mut out = Vec::new();
                while let Some((id, grade)) = map.next_entry::<IdValue, Grade>()? {
                    out.push(Label {
                        id: id.0,
                        grade: grade.0,
                    });
                }
                Ok(ModelGrades(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// What a query's `provenance:` is read as: skipped ([`de::IgnoredAny`]),
/// or chunk id to [`Provenance`].
trait ProvenanceField {
    fn into_map(self) -> Option<HashMap<String, Provenance>>;
}

impl ProvenanceField for de::IgnoredAny {
    fn into_map(self) -> Option<HashMap<String, Provenance>> {
        None
    }
}

impl ProvenanceField for HashMap<String, Provenance> {
    fn into_map(self) -> Option<HashMap<String, Provenance>> {
        Some(self)
    }
}

/// A JSON gold set read in one pass, every query typed.
#[derive(Deserialize)]
#[serde(
    bound(deserialize = "P: Deserialize<'de>"),
    deny_unknown_fields,
    expecting = "a gold set: a map with `version: 1` and a `queries:` list"
)]
struct JsonQueries<P> {
    #[serde(default)]
    version: Option<Version>,
    queries: Vec<NativeQuery<P>>,
    #[serde(default)]
    verify_sample: Option<RawSample>,
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

/// The byte offset of `inner` in `outer`, which it is a slice of.
fn offset_in(outer: &str, inner: &str) -> usize {
    (inner.as_ptr() as usize).saturating_sub(outer.as_ptr() as usize)
}

/// What a reader does with each query's `provenance:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProvenanceUse {
    /// Skipped unread (the metrics): it is never made into records.
    Skip,
    /// Read and checked, then dropped query by query: a writer checking
    /// what it is about to write needs the errors, not the records.
    Check,
    /// Read, checked and kept in [`GoldSet::provenance`].
    Keep,
}

/// Reads a native gold set, its provenance as `provenance` says.
pub(super) fn parse_native(
    path: &Path,
    bytes: &[u8],
    format: GoldFormat,
    provenance: ProvenanceUse,
) -> Result<GoldSet> {
    match provenance {
        ProvenanceUse::Skip => parse_native_as::<de::IgnoredAny>(path, bytes, format, provenance),
        _ => parse_native_as::<HashMap<String, Provenance>>(path, bytes, format, provenance),
    }
}

fn parse_native_as<P>(
    path: &Path,
    bytes: &[u8],
    format: GoldFormat,
    provenance: ProvenanceUse,
) -> Result<GoldSet>
where
    P: ProvenanceField + for<'de> Deserialize<'de>,
{
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
    // The draw is checked once every query is in (its ids name them).
    let mut sample: Option<(Result<VerifySample, String>, Option<usize>)> = None;
    b.keep_provenance = provenance == ProvenanceUse::Keep;
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
                let opens_sample = t
                    .strip_prefix('{')
                    .is_some_and(|r| r.trim_start().starts_with("\"verify_sample\""));
                if opens_sample {
                    let f = serde_json::from_str::<JsonlSample>(t).map_err(|e| {
                        let msg = e.to_string();
                        input_error_hint(
                            path,
                            Some(i + 1),
                            format!("not a verification draw: {}", native_message(&msg)),
                            "the draw's line is {\"verify_sample\": {\"seed\": S, \"ids\": [...], \"drawn_at\": \"RFC 3339\"}}, as `gold verify-sample` writes it",
                        )
                    })?;
                    if sample.is_some() {
                        return Err(input_error_hint(
                            path,
                            Some(i + 1),
                            "a second `verify_sample` line",
                            "a gold set records one verification draw; keep the one `gold verify-sample` wrote last",
                        ));
                    }
                    sample = Some((f.verify_sample.into_sample(Some(i + 1)), Some(i + 1)));
                    continue;
                }
                let q: NativeQuery<P> = serde_json::from_str(t).map_err(|e| {
                    let msg = e.to_string();
                    input_error_hint(
                        path,
                        Some(i + 1),
                        format!("not a gold query object: {}", native_message(&msg)),
                        field_hint(&msg),
                    )
                })?;
                let at = Some(i + 1);
                add_native(&mut b, q, || Lines { id: at, stratum: at })?;
            }
        }
        GoldFormat::Json => {
            // One typed pass: serde_json's errors carry the line already.
            // Where a query's id and stratum are is found only for an error
            // the builder finds ([`json_lines`]): finding it for every
            // query parsed each one twice more.
            let file: JsonQueries<P> =
                serde_json::from_str(text).map_err(|e| invalid(Some(e.line()), e.to_string()))?;
            check_version(file.version)?;
            for (i, q) in file.queries.into_iter().enumerate() {
                add_native(&mut b, q, || json_lines(text, i))?;
            }
            if let Some(raw) = file.verify_sample {
                let line = serde_json::from_str::<JsonSamplePlace>(text)
                    .ok()
                    .and_then(|p| p.verify_sample)
                    .map(|v| line_of(text.as_bytes(), offset_in(text, v.get())));
                sample = Some((raw.into_sample(line), line));
            }
        }
        GoldFormat::Yaml => {
            // rgate's own block YAML (and hand edits of it) first; anything
            // else, and every error, is serde-saphyr's.
            if let Some(file) = fast_yaml::parse(text, provenance) {
                for q in file.queries {
                    let lines = Lines {
                        id: Some(q.id_line),
                        stratum: Some(q.stratum.as_ref().map_or(q.id_line, |s| s.1)),
                    };
                    let labeling = q.labeling.map(|l| *l).unwrap_or_default();
                    let read = ReadQuery {
                        id: q.id,
                        text: q.text,
                        stratum: q.stratum.map(|s| s.0),
                        labels: q.labels,
                        spans: q.spans,
                        provenance: q.provenance,
                        answer: q.answer,
                        meta: q.meta,
                        model: labeling.model,
                        verified: labeling.verified.unwrap_or(false),
                    };
                    add_read(&mut b, read, || lines)?;
                }
                if let Some((raw, line)) = file.verify_sample {
                    b.set_verify_sample(Ok(raw), Some(line))?;
                }
                return Ok(b.finish(format));
            }
            let file: NativeFile<P> =
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
            let known = |l: u64| Some(l as usize).filter(|&l| l > 0);
            for q in file.queries {
                let id = known(q.id.referenced.line());
                let stratum = q.stratum.as_ref().and_then(|s| known(s.referenced.line())).or(id);
                add_native(&mut b, q, || Lines { id, stratum })?;
            }
            if let Some(raw) = file.verify_sample {
                let line = known(raw.referenced.line());
                sample = Some((raw.value.into_sample(line), line));
            }
        }
        GoldFormat::Qrels => unreachable!("qrels are parsed by parse_qrels"),
    }
    if let Some((raw, line)) = sample {
        b.set_verify_sample(raw, line)?;
    }
    Ok(b.finish(format))
}

/// Where the `i`th query of a JSON gold set has its id and stratum: the
/// text is read again as raw queries (only for an error message), and
/// each query's start gives its line.
fn json_lines(text: &str, i: usize) -> Lines {
    let none = Lines {
        id: None,
        stratum: None,
    };
    let Ok(file) = serde_json::from_str::<JsonFile>(text) else {
        return none;
    };
    let Some(raw) = file.queries.get(i) else {
        return none;
    };
    let raw = raw.get();
    let base = line_of(text.as_bytes(), offset_in(text, raw));
    let places: JsonPlaces = serde_json::from_str(raw).unwrap_or(JsonPlaces {
        id: None,
        stratum: None,
    });
    let within = |v: Option<&RawValue>| {
        v.map(|v| base + memchr::memchr_iter(b'\n', &raw.as_bytes()[..offset_in(raw, v.get())]).count())
    };
    let id = within(places.id).or(Some(base));
    Lines {
        id,
        stratum: within(places.stratum).or(id),
    }
}

/// Where a query's id and stratum are, for the errors the builder finds.
#[derive(Clone, Copy)]
struct Lines {
    id: Option<usize>,
    stratum: Option<usize>,
}

/// A query as a reader found it, before the builder's checks.
struct ReadQuery {
    id: String,
    text: Option<String>,
    stratum: Option<String>,
    labels: Vec<Label>,
    spans: Vec<SpanLabel>,
    provenance: Option<HashMap<String, Provenance>>,
    answer: Option<serde_json::Value>,
    meta: Option<serde_json::Value>,
    model: Option<Vec<Label>>,
    verified: bool,
}

fn add_native<P: ProvenanceField>(
    b: &mut Builder,
    q: NativeQuery<P>,
    lines: impl Fn() -> Lines,
) -> Result<()> {
    let (labels, spans) = q.relevant.map(|r| (r.0, r.1)).unwrap_or_default();
    let read = ReadQuery {
        id: q.id.value.0,
        text: q.text,
        stratum: q.stratum.map(|s| s.value),
        labels,
        spans,
        provenance: q.provenance.and_then(ProvenanceField::into_map),
        answer: q.answer,
        meta: q.meta,
        model: q.model.map(|m| m.0),
        verified: q.verified.unwrap_or(false),
    };
    add_read(b, read, lines)
}

/// Why a query's provenance cannot be used (`gold agreement` would drop
/// it, or pick one of two grades silently): a source other than `person`
/// or `model`, an opinion's grade outside 0..3, two grades of one pair by
/// one author (source and labeler). Chunks in order, so the error named
/// is the same on every run.
pub(super) fn check_provenance(p: &HashMap<String, Provenance>) -> std::result::Result<(), String> {
    let mut chunks: Vec<&String> = p.keys().collect();
    chunks.sort();
    for c in chunks {
        let r = &p[c];
        let at = format!("provenance of `{}`", excerpt(c));
        let source_ok = |s: &str| s == "person" || s == "model";
        if !source_ok(&r.source) {
            return Err(format!(
                "{at}: source `{}` is neither person nor model",
                excerpt(&r.source)
            ));
        }
        let mut authors = vec![(r.source.as_str(), r.labeler.as_deref())];
        for o in &r.opinions {
            if !source_ok(&o.source) {
                return Err(format!(
                    "{at}: an opinion's source `{}` is neither person nor model",
                    excerpt(&o.source)
                ));
            }
            if !(0..=3).contains(&o.grade) {
                return Err(format!("{at}: an opinion's grade {} is outside 0..3", o.grade));
            }
            let who = (o.source.as_str(), o.labeler.as_deref());
            if authors.contains(&who) {
                return Err(format!(
                    "{at}: two grades by one {} labeler{}",
                    o.source,
                    o.labeler
                        .as_deref()
                        .map(|l| format!(" (`{}`)", excerpt(l)))
                        .unwrap_or_else(|| " (unnamed)".into())
                ));
            }
            authors.push(who);
        }
    }
    Ok(())
}

/// Adds a query; `lines` is asked only when the builder finds an error.
fn add_read(b: &mut Builder, q: ReadQuery, lines: impl Fn() -> Lines) -> Result<()> {
    let stratum = b.stratum_at(q.stratum.as_deref().unwrap_or(DEFAULT_STRATUM), || {
        lines().stratum
    })?;
    if let Some(p) = &q.provenance {
        if let Err(msg) = check_provenance(p) {
            return Err(input_error_hint(
                b.path,
                lines().id,
                format!("query `{}`: {msg}", excerpt(&q.id)),
                "a grade is 0..3, a source `person` or `model`, and each labeler gives a pair one grade (its own or one opinion); fix the hand edit, or import the pair again",
            ));
        }
    }
    let pos = b.queries.len();
    let key = q
        .provenance
        .as_ref()
        .filter(|_| b.keep_provenance)
        .map(|_| q.id.clone());
    b.add_at(
        GoldQuery {
            id: q.id,
            text: q.text,
            stratum,
            labels: q.labels.into(),
            spans: q.spans,
        },
        || lines().id,
        false,
    )?;
    if q.model.is_some() || q.verified {
        b.add_labeling(q.model, q.verified, || lines().id)?;
    }
    if let (Some(key), Some(p), true) = (key, q.provenance, b.keep_provenance) {
        b.provenance.insert(key, p);
    }
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

    // ---- the fast YAML path agrees with serde-saphyr ---------------------

    use super::super::fast_yaml::{self, FastFile, FastLabeling, FastQuery};
    use super::{yaml_options, NativeFile, ProvenanceUse};
    use crate::gold::{to_yaml, Provenance};
    use proptest::prelude::*;
    use serde_json::json;
    use std::collections::HashMap;

    /// What serde-saphyr reads from `text`, in the fast path's terms (the
    /// general reader's own types, converted field by field).
    fn general(text: &str) -> Result<FastFile, String> {
        crate::diag::yaml_guard(text).map_err(|e| e.1)?;
        let f: NativeFile<HashMap<String, Provenance>> =
            serde_saphyr::from_str_with_options(text, yaml_options()).map_err(|e| e.to_string())?;
        if f.version.is_some_and(|v| v.0 != 1) {
            return Err("version".into());
        }
        let verify_sample = f.verify_sample.map(|s| {
            let line = s.referenced.line() as usize;
            (s.value.into_sample(Some(line)).unwrap(), line)
        });
        let queries = f
            .queries
            .into_iter()
            .map(|q| {
                let (labels, spans) = q.relevant.map(|r| (r.0, r.1)).unwrap_or_default();
                FastQuery {
                    id: q.id.value.0,
                    id_line: q.id.referenced.line() as usize,
                    text: q.text,
                    stratum: q.stratum.map(|s| (s.value, s.referenced.line() as usize)),
                    labels,
                    spans,
                    provenance: q.provenance,
                    answer: q.answer,
                    meta: q.meta,
                    labeling: (q.model.is_some() || q.verified.is_some()).then(|| {
                        Box::new(FastLabeling {
                            model: q.model.map(|m| m.0),
                            verified: q.verified,
                        })
                    }),
                }
            })
            .collect();
        Ok(FastFile {
            queries,
            verify_sample,
        })
    }

    /// The fast path's answer, which must be serde-saphyr's whenever it
    /// gives one; `None` when it declined.
    fn agree(text: &str) -> Option<Vec<FastQuery>> {
        agree_file(text).map(|f| f.queries)
    }

    fn agree_file(text: &str) -> Option<FastFile> {
        let fast = fast_yaml::parse(text, ProvenanceUse::Keep)?;
        assert_eq!(Ok(fast.clone()), general(text), "on\n{text}");
        // As values (`gold import`'s document), too.
        let (top, queries) = fast_yaml::document(text).expect("the document reads as its queries do");
        let mut whole: serde_json::Value = serde_saphyr::from_str_with_options(text, yaml_options()).unwrap();
        let want_queries = whole["queries"].take();
        assert_eq!(serde_json::Value::Object(top), whole, "on\n{text}");
        assert_eq!(serde_json::Value::Array(queries), want_queries, "on\n{text}");
        // Without provenance: the same queries, provenance left out.
        let mut without = fast.clone();
        for q in &mut without.queries {
            q.provenance = None;
        }
        assert_eq!(
            fast_yaml::parse(text, ProvenanceUse::Skip),
            Some(without),
            "on\n{text}"
        );
        Some(fast)
    }

    fn prov(labeler: &str, verified: bool) -> serde_json::Value {
        json!({"source": "person", "labeler": labeler, "at": "2026-11-30T10:00:00Z", "verified": verified})
    }

    /// A gold set as `gold import` writes it, through rgate's writer: the
    /// fast path reads it, and reads it as serde-saphyr does.
    #[test]
    fn the_fast_path_reads_what_rgate_writes() {
        let doc = json!({"version": 1, "queries": [
            {"id": "q1", "text": "How do I rotate an API key?", "stratum": "how-to",
             "relevant": {"docs/auth.md#0": 1, "docs/auth.md#1": 2, "c#3": 0},
             "provenance": {"docs/auth.md#0": prov("ana", true), "c#3": {"source": "model", "verified": false}}},
            {"id": "42", "text": "multi\nline\n", "relevant": {"x": -1},
             "answer": "  lead\nand more", "meta": {"count": 3, "tags": ["a", "b"], "ok": true, "none": null, "e": {}, "l": []}},
            {"id": "q3", "text": "it's \"quoted\": yes #1", "stratum": "s: odd",
             "relevant": [{"doc": "auth.md", "start": 200, "end": 400, "grade": 2}, {"id": "c7", "grade": 3}, "c9"]},
            {"id": "q4", "text": "keep\n\n", "relevant": {}, "answer": "strip"},
            {"id": "q5", "text": "tab\there, \u{7f}, \u{e9}t\u{e9}, \u{1F600}", "relevant": []},
        ]});
        let yaml = to_yaml(&doc);
        let qs = agree(&yaml).expect("the fast path reads rgate's own output");
        assert_eq!(qs.len(), 5);
        // Known answers, by hand from the document above.
        assert_eq!(
            (
                qs[0].id.as_str(),
                qs[0].id_line,
                qs[0].stratum.as_ref().unwrap().1
            ),
            ("q1", 3, 5)
        );
        assert_eq!(qs[0].labels.len(), 3);
        assert_eq!(qs[0].provenance.as_ref().unwrap()["c#3"].source, "model");
        assert_eq!(qs[1].id, "42");
        assert_eq!(qs[1].text.as_deref(), Some("multi\nline\n"));
        assert_eq!(qs[1].answer, Some(json!("  lead\nand more")));
        assert_eq!(qs[2].text.as_deref(), Some("it's \"quoted\": yes #1"));
        assert_eq!(qs[2].spans.len(), 1);
        assert_eq!(qs[3].text.as_deref(), Some("keep\n\n"));
        assert_eq!(
            qs[4].text.as_deref(),
            Some("tab\there, \u{7f}, \u{e9}t\u{e9}, \u{1F600}")
        );
    }

    /// A label's other grades (`opinions`, as `gold import` carries them
    /// from the sheet) and a model's prompt hash: read by the fast path as
    /// serde-saphyr reads them, and a bad one declined.
    #[test]
    fn the_fast_path_reads_opinions_as_saphyr_does() {
        let doc = json!({"version": 1, "queries": [
            {"id": "q1", "relevant": {"a": 2, "b": 0},
             "provenance": {
                "a": {"source": "person", "labeler": "ana", "verified": true, "opinions": [
                    {"grade": 3, "source": "model", "labeler": "gpt-4o", "prompt": "ab12", "at": "2026-12-01T10:00:00Z"},
                    {"grade": 1, "source": "person", "labeler": "bo"}]},
                "b": {"source": "model", "labeler": "gpt-4o", "prompt": "ab12", "verified": false}}},
        ]});
        let yaml = to_yaml(&doc);
        let qs = agree(&yaml).expect("the fast path reads opinions");
        let p = qs[0].provenance.as_ref().unwrap();
        assert_eq!(p["b"].prompt.as_deref(), Some("ab12"));
        let o = &p["a"].opinions;
        assert_eq!(
            o.iter()
                .map(|o| (o.grade, o.source.as_str(), o.labeler.as_deref()))
                .collect::<Vec<_>>(),
            [(3, "model", Some("gpt-4o")), (1, "person", Some("bo"))]
        );
        assert_eq!(o[0].at.as_deref(), Some("2026-12-01T10:00:00Z"));
        // An opinion without a grade is not one: left to serde-saphyr, which
        // refuses it.
        let bad = to_yaml(&json!({"queries": [{"id": "q1", "relevant": {"a": 2},
            "provenance": {"a": {"source": "person", "opinions": [{"source": "model"}]}}}]}));
        assert_eq!(fast_yaml::parse(&bad, ProvenanceUse::Keep), None);
        assert!(general(&bad).is_err());
    }

    /// Hand edits the fast path takes: indented lists, comments, blank
    /// lines, quoted keys, wider `- `, block scalars written by hand.
    #[test]
    fn the_fast_path_reads_hand_edits_as_saphyr_does() {
        let texts = [
            "# a gold set\nversion: 1\nqueries:\n  - id: q1   \n    relevant:\n      a: 1\n\n      # a comment\n      'b c': 2\n  -   id: \"q\\u00e92\"\n      stratum: lookup\n      relevant: [] \n".to_string(),
            "queries:\n- id: q1\n  text: |-\n    one\n\n    two\n  relevant:\n  - a\n  - 7\n  - {}\n".replace("  - {}\n", ""),
            "queries:\n- id: q1\n  text: |2\n     lead\n    x\n  relevant:\n    \"a\": 1\n- id: 2026-01-01T00:00Z\n  relevant:\n    x: 2\n".into(),
            "queries:\n- id: q1\n  relevant:\n    a: 1\n  provenance: {}\n- id: q2\n  relevant:\n    a: 1\n  provenance:\n    a:\n      source: person\n      extra: x\n".into(),
            "version: 1\nqueries: []\n".into(),
            "queries:\n- id: q1\n  text: 'it''s'\n  relevant:\n    a: 1\n  meta:\n    k:\n    - x\n    - 'y'\n".into(),
        ];
        for t in &texts {
            assert!(agree(t).is_some(), "declined:\n{t}");
        }
    }

    /// Gold sets written by hand in flow style, on one line or run on over
    /// several: the fast path reads them (it left every flow list, and
    /// every collection over more than one line, to serde-saphyr, which
    /// read 100,000 such queries about 7 times slower), as serde-saphyr
    /// does.
    #[test]
    fn the_fast_path_reads_flow_style_as_saphyr_does() {
        let texts = [
            "queries:\n- {id: q1, relevant: [a]}\n",
            "queries:\n- id: q1\n  relevant: [a, b]\n",
            "queries:\n- id: q1\n  relevant: [\"a,b\", 'c d', 7, a:b, x#1]\n",
            "queries:\n- {id: q1, text: first, stratum: s1, relevant: {a: 1, b: 2}, provenance: {a: {source: person, labeler: ana, at: '2026-11-30T10:00:00Z', verified: true, opinions: [{grade: 2, source: model, labeler: m}]}, b: {source: model, verified: false}}}\n",
            "queries:\n- id: q1\n  relevant: {a: 1,\n    b: 2}\n  provenance: {\n      a: {source: person, labeler: ana},\n\n      b: {source: model,\n        verified: false}\n    }\n- id: q2\n  relevant: [\n    c,\n    {id: d, grade: 2}]\n",
            "queries:\n  - {id: q1,\n     relevant: [a, b],\n     provenance: {a: {source: person}}}\n  - {id: q2, relevant: {}}\n",
            "version: 1\nqueries: [{id: q1, relevant: [a]}, {id: q2,\n  relevant: [b]}]\n",
        ];
        for t in &texts {
            assert!(agree(t).is_some(), "declined:\n{t}");
        }
        // Lines as written: q2's id on line 11, its label list over two.
        let qs = agree(texts[4]).unwrap();
        assert_eq!((qs[1].id.as_str(), qs[1].id_line), ("q2", 11));
        assert_eq!(qs[1].labels.len(), 2);
        assert!(!qs[0].provenance.as_ref().unwrap()["b"].verified);
    }

    /// A provenance the caller does not want is not made into records:
    /// one whose records would not parse (`verified: maybe`, an opinion
    /// without a grade) is skipped by the fast path as serde-saphyr skips
    /// it (the fast path used to build every record and drop it, and
    /// declined on these, handing the file to serde-saphyr).
    #[test]
    fn an_unwanted_provenance_is_skipped_unbuilt() {
        for prov in [
            "  provenance:\n    a:\n      source: person\n      verified: maybe\n",
            "  provenance: {a: {source: person, opinions: [{source: model}]}}\n",
            "  provenance: [not, a, map]\n",
        ] {
            let t = format!("queries:\n- id: q1\n  relevant:\n    a: 1\n{prov}");
            assert_eq!(fast_yaml::parse(&t, ProvenanceUse::Keep), None, "{t}");
            let qs = fast_yaml::parse(&t, ProvenanceUse::Skip)
                .expect("read without its provenance")
                .queries;
            assert_eq!((qs[0].labels.len(), qs[0].provenance.is_none()), (1, true));
            // And it is what serde-saphyr reads when told to skip it.
            let f: NativeFile<serde::de::IgnoredAny> =
                serde_saphyr::from_str_with_options(&t, yaml_options()).unwrap();
            assert_eq!(f.queries.len(), 1);
        }
    }

    /// What the fast path leaves to serde-saphyr: everything outside its
    /// subset, and every error.
    #[test]
    fn the_fast_path_declines_what_it_does_not_fully_understand() {
        let base = "queries:\n- id: q1\n  relevant:\n    a: 1\n";
        let declined = [
            "queries:\n- {id: q1, relevant: [a] # one\n  }\n".to_string(),
            "queries:\n- id: q1\n  relevant: [a, b,]\n".into(),
            "queries:\n- id: q1\n  relevant: {a: 1,\n  b: 2}\n".into(),
            "queries:\n- id: q1\n  relevant: {\"a\":1}\n".into(),
            "queries:\n- id: q1\n  relevant: {a, b: 1}\n".into(),
            "queries:\n- id: q1\n  relevant: [a, b] x\n".into(),
            "queries:\n- id: q1\n  relevant: [\"a\n    b\"]\n".into(),
            "queries:\n- id: q1\n  relevant: [a\n    b]\n".into(),
            "queries:\n- id: q1\n  relevant: [a, yes]\n".into(),
            "queries:\n- id: &x q1\n  relevant:\n    a: 1\n".into(),
            "queries:\n- id: !t q1\n  relevant:\n    a: 1\n".into(),
            "queries:\n- id: q1\n  relevant:\n\ta: 1\n".into(),
            base.replace('\n', "\r\n"),
            "queries:\n- id: q1\n  text: two\n    lines\n  relevant:\n    a: 1\n".into(),
            "queries:\n- id: q1\n  text: \"two\n    lines\"\n  relevant:\n    a: 1\n".into(),
            "queries:\n- id: q1\n  text: null\n  relevant:\n    a: 1\n".into(),
            "queries:\n- id: q1\n  text:\n  relevant:\n    a: 1\n".into(),
            "queries:\n- id: 0x1F\n  relevant:\n    a: 1\n".into(),
            "queries:\n- id: 001\n  relevant:\n    a: 1\n".into(),
            "queries:\n- id: yes\n  relevant:\n    a: 1\n".into(),
            "queries:\n- id: 1e3\n  relevant:\n    a: 1\n".into(),
            "queries:\n- id: q1\n  relevant:\n    a: 1.5\n".into(),
            "queries:\n- id: q1\n  relevent:\n    a: 1\n".into(),
            "queries:\n- id: q1\n  id: q2\n  relevant:\n    a: 1\n".into(),
            "queries:\n- id: q1\n  relevant:\n    a: 1 # one\n".into(),
            "version: 2\nqueries:\n- id: q1\n".into(),
            "---\nqueries:\n- id: q1\n".into(),
            "queries:\n- id: q1\n  relevant:\n  - doc: d\n    start: 5\n    end: 2\n".into(),
            "queries:\n- id: q1\n  relevant:\n    a: 1\n  provenance:\n    a:\n      source: person\n      verified: maybe\n".into(),
            "queries:\n- id: q1\n  text: |\n    no final line break".into(),
            "queries:\n- id: q1\n  relevant:\n    a: 1\n  answer: 2.5\n".into(),
            "queries:\n-\n  id: q1\n".into(),
            "queries:\n- id: q1\n  relevant:\n    a: 1\n   b: 2\n".into(),
            "queries:\n- id: q1\n    relevant:\n    a: 1\n".into(),
        ];
        assert!(agree(base).is_some());
        for t in &declined {
            assert_eq!(fast_yaml::parse(t, ProvenanceUse::Keep), None, "accepted:\n{t}");
        }
    }

    // ---- model labels, verified queries, the verification draw ----------

    /// One gold set with both label sets, written by hand: q1 model-only,
    /// q2 verified with model grades, q3 people's only (as every gold set
    /// before), q4 verified without model grades; q2 and q4 drawn.
    fn both_labels() -> serde_json::Value {
        json!({"version": 1, "queries": [
            {"id": "q1", "stratum": "a", "model": {"c1": 3, "c2": 0}},
            {"id": "q2", "stratum": "a", "relevant": {"c3": 2, "c4": 0}, "model": {"c3": 1, "c4": 2}, "verified": true},
            {"id": "q3", "stratum": "b", "relevant": {"c5": 1}},
            {"id": "q4", "stratum": "b", "relevant": {}, "verified": true},
        ], "verify_sample": {"seed": 7, "ids": ["q2", "q4"], "drawn_at": "2026-12-07T01:00:00Z"}})
    }

    /// The labeling of `both_labels`, by hand.
    fn check_both(g: &crate::gold::GoldSet) {
        let l = &g.labeling;
        let model = |q: usize| -> Option<Vec<(&str, i32)>> {
            l.model_labels(q)
                .map(|m| m.iter().map(|x| (x.id, x.grade)).collect())
        };
        assert_eq!(model(0), Some(vec![("c1", 3), ("c2", 0)]));
        assert_eq!(model(1), Some(vec![("c3", 1), ("c4", 2)]));
        assert_eq!((model(2), model(3)), (None, None));
        assert_eq!(l.verified, [1, 3]);
        assert!(l.is_model_only(0) && !l.is_model_only(1) && !l.is_model_only(2));
        assert!(g.queries[0].labels.is_empty());
        assert_eq!(g.queries[1].labels.len(), 2);
        let s = l.verify_sample.as_ref().unwrap();
        assert_eq!(
            (s.seed, s.ids.as_slice(), s.drawn_at.as_str()),
            (
                7,
                &["q2".to_string(), "q4".to_string()][..],
                "2026-12-07T01:00:00Z"
            )
        );
    }

    /// Every reader reads the model grades, the verified marks and the
    /// draw alike: block YAML (the fast path, which agrees with
    /// serde-saphyr on it), flow YAML (both paths), JSON, JSONL (the draw
    /// a line of its own), and the writer's output reads back the same.
    #[test]
    fn both_label_sets_read_the_same_through_every_reader() {
        let doc = both_labels();
        let yaml = to_yaml(&doc);
        let fast = agree_file(&yaml).expect("the fast path reads rgate's own output");
        // The draw's line is its first field's, as serde-saphyr places a map.
        assert_eq!(
            fast.verify_sample.as_ref().map(|s| s.1),
            Some(
                yaml.lines()
                    .position(|l| l.starts_with("verify_sample:"))
                    .unwrap()
                    + 2
            )
        );
        let (g, _) = load_str("g.yaml", &yaml).unwrap();
        check_both(&g);
        let flow = "queries:\n- {id: q1, stratum: a, model: {c1: 3, c2: 0}}\n- {id: q2, stratum: a, relevant: {c3: 2, c4: 0}, model: {c3: 1, c4: 2}, verified: true}\n- {id: q3, stratum: b, relevant: {c5: 1}}\n- {id: q4, stratum: b, relevant: {}, verified: true}\nverify_sample: {seed: 7, ids: [q2, q4], drawn_at: '2026-12-07T01:00:00Z'}\n";
        // The fast path reads flow style too (main's reader), as
        // serde-saphyr does, the draw's line included (its key's: 6).
        let fast = agree_file(flow).expect("the fast path reads flow style");
        assert_eq!(fast.verify_sample.as_ref().map(|s| s.1), Some(6));
        check_both(&load_str("g.yaml", flow).unwrap().0);
        // A flow draw over several lines is placed where its map opens.
        let runs_on = flow.replace("{seed: 7, ", "{\n  seed: 7,\n  ");
        let fast = agree_file(&runs_on).expect("the fast path reads a flow map over lines");
        assert_eq!(fast.verify_sample.as_ref().map(|s| s.1), Some(6));
        check_both(&load_str("g.yaml", &runs_on).unwrap().0);
        // serde-saphyr's reading of the same (a comment inside a flow map
        // is outside the fast path's subset).
        let commented = flow.replace("{id: q1, ", "{id: q1, # model only\n  ");
        assert_eq!(fast_yaml::parse(&commented, ProvenanceUse::Keep), None);
        check_both(&load_str("g.yaml", &commented).unwrap().0);
        check_both(
            &load_str("g.json", &serde_json::to_string_pretty(&doc).unwrap())
                .unwrap()
                .0,
        );
        let mut jsonl = String::from("{\"verify_sample\": {\"seed\": 7, \"ids\": [\"q2\", \"q4\"], \"drawn_at\": \"2026-12-07T01:00:00Z\"}}\n");
        for q in doc["queries"].as_array().unwrap() {
            jsonl += &format!("{q}\n");
        }
        check_both(&load_str("g.jsonl", &jsonl).unwrap().0);
        // The writer keeps what it does not know as it was: through GoldDoc.
        for (name, text) in [
            ("g.yaml", yaml.clone()),
            ("g.json", serde_json::to_string_pretty(&doc).unwrap()),
        ] {
            let format = if name.ends_with("yaml") {
                crate::gold::GoldFormat::Yaml
            } else {
                crate::gold::GoldFormat::Json
            };
            let again = crate::gold::GoldDoc::parse(std::path::Path::new(name), &text, format)
                .unwrap()
                .render();
            check_both(&load_str(name, &again).unwrap().0);
        }
        // `verified: false` is no mark; a gold set without any of this has
        // an empty labeling.
        let (g, _) = load_str(
            "g.yaml",
            "queries:\n- id: q1\n  relevant:\n    a: 1\n  verified: false\n",
        )
        .unwrap();
        assert!(g.labeling.is_empty());
        let (g, _) = load_str("g.yaml", "queries:\n- id: q1\n  relevant:\n    a: 1\n").unwrap();
        assert!(g.labeling.is_empty());
    }

    /// Bad model grades, marks and draws: refused with the file's line and
    /// a hint, by every reader.
    #[test]
    fn bad_model_labels_and_draws_name_their_line() {
        let q = |extra: &str| format!("queries:\n- id: q0\n  relevant:\n    a: 1\n- id: q1\n{extra}");
        let cases: Vec<(String, &str)> = vec![
            (q("  model:\n    c: 4\n"), "g.yaml:5: query `q1`: the model's grade 4 of `c` is outside 0..3"),
            (q("  model:\n    c: -1\n"), "g.yaml:5: query `q1`: the model's grade -1 of `c` is outside 0..3"),
            (q("  model:\n    \"\": 1\n"), "g.yaml:5: query `q1`: an empty chunk id in `model`"),
            (q("  model:\n    \"c\\0d\": 1\n"), "g.yaml:5: query `q1`: chunk id `c\\u{0}d` in `model` holds a NUL character"),
            (q("  model: {c: 1, c: 2}\n"), "g.yaml:5: query `q1`: chunk `c` appears twice in `model`"),
            (q("  model: [c]\n"), "g.yaml:6: invalid gold set: invalid type: sequence, expected a map of chunk id to the model's grade"),
            (q("  relevant:\n    c: 1\n  model:\n    c: 1\n"), "g.yaml:5: query `q1` has model grades and people's labels (`relevant`) but is not `verified`"),
            (q("  verified: yes\n"), "g.yaml:6: invalid gold set"),
            (q("  relevant:\n    c: 1\n") + "verify_sample:\n  seed: 1\n  ids:\n  - q9\n  drawn_at: 2026-12-07T01:00:00Z\n", "g.yaml:9: verify_sample: query `q9` is not in the gold set"),
            (q("  relevant:\n    c: 1\n") + "verify_sample:\n  seed: 1\n  ids:\n  - q1\n  - q1\n  drawn_at: 2026-12-07T01:00:00Z\n", "g.yaml:9: verify_sample: query `q1` is drawn twice"),
            (q("  relevant:\n    c: 1\n") + "verify_sample:\n  seed: 1\n  ids: []\n  drawn_at: 2026-12-07T01:00:00Z\n", "g.yaml:9: verify_sample: `ids` is empty"),
            (q("  relevant:\n    c: 1\n") + "verify_sample:\n  seed: 1\n  ids:\n  - q1\n  drawn_at: yesterday\n", "g.yaml:9: verify_sample: `drawn_at` `yesterday` is not an RFC 3339 time"),
            (q("  relevant:\n    c: 1\n") + "verify_sample:\n  seed: -1\n  ids:\n  - q1\n  drawn_at: 2026-12-07T01:00:00Z\n", "g.yaml:9: invalid gold set"),
            (q("  relevant:\n    c: 1\n") + "verify_sample:\n  seed: 1\n  ids:\n  - q1\n  drawn_at: 2026-12-07T01:00:00Z\n  by: me\n", "invalid gold set: unknown field `by`"),
        ];
        for (text, want) in &cases {
            let err = load_str("g.yaml", text).unwrap_err();
            let chain = format!("{err:#}");
            assert!(chain.contains(want), "want {want:?}, got {chain}\non\n{text}");
            assert!(
                format!("{err:?}").contains("hint:") || chain.contains("hint"),
                "no hint: {err:?}"
            );
        }
        // JSON: the line of the query, and of the draw.
        let json = "{\"queries\": [\n {\"id\": \"q0\", \"relevant\": {\"a\": 1}},\n {\"id\": \"q1\",\n  \"model\": {\"c\": 9}}\n],\n \"verify_sample\": {\"seed\": 1, \"ids\": [\"q0\"], \"drawn_at\": \"2026-12-07T01:00:00Z\"}}\n";
        let err = load_str("g.json", json).unwrap_err().to_string();
        assert!(
            err.contains("g.json:3: query `q1`: the model's grade 9 of `c` is outside 0..3"),
            "{err}"
        );
        let json = json.replace("9}", "1}").replace("[\"q0\"]", "[\"q7\"]");
        let err = load_str("g.json", &json).unwrap_err().to_string();
        assert!(
            err.contains("g.json:6: verify_sample: query `q7` is not in the gold set"),
            "{err}"
        );
        // JSONL: a second draw, a bad one, a bad grade on its line.
        let draw =
            "{\"verify_sample\": {\"seed\": 1, \"ids\": [\"q0\"], \"drawn_at\": \"2026-12-07T01:00:00Z\"}}\n";
        let line = "{\"id\": \"q0\", \"relevant\": {\"a\": 1}}\n";
        let err = load_str("g.jsonl", &format!("{draw}{line}{draw}"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("g.jsonl:3: a second `verify_sample` line"), "{err}");
        let err = load_str(
            "g.jsonl",
            &format!("{line}{{ \"verify_sample\": {{\"seed\": 1}}}}\n"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("g.jsonl:2: not a verification draw: missing field `ids`"),
            "{err}"
        );
        let err = load_str(
            "g.jsonl",
            &format!("{line}{{\"id\": \"q1\", \"model\": {{\"c\": 1}}, \"relevant\": [\"c\"]}}\n"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("g.jsonl:2: query `q1` has model grades and people's labels"),
            "{err}"
        );
    }

    proptest! {
        /// Any text through rgate's writer, in every place a gold query
        /// holds text: when the fast path reads it, it reads what
        /// serde-saphyr reads.
        #[test]
        fn the_fast_path_agrees_on_any_written_string(
            s in "(\\PC|[ \t\n\r\u{85}\u{2028}\u{feff}'\":#\\-?|>~0-9.]){0,12}",
            t in "(\\PC|[ \n'\":#\\-?|>~0-9.eExo_]){0,12}",
        ) {
            let doc = json!({"queries": [
                {"id": format!("q{t}"), "text": s.clone(), "stratum": t.clone(),
                 "relevant": {s.clone(): 1, t.clone(): 2},
                 "provenance": {s.clone(): {"source": t.clone(), "at": s.clone(), "verified": true}},
                 "answer": s.clone(), "meta": {t.clone(): [s.clone()]},
                 "model": {s.clone(): 3, t.clone(): 0}, "verified": true},
                {"id": t.clone(), "relevant": [s.clone(), {"id": t.clone(), "grade": 0}]},
            ]});
            let yaml = to_yaml(&doc);
            // The loader refuses what the guard refuses before either path.
            let guarded = crate::diag::yaml_guard(&yaml).is_ok();
            if let Some(fast) = fast_yaml::parse(&yaml, ProvenanceUse::Keep).filter(|_| guarded) {
                prop_assert_eq!(Ok(fast), general(&yaml), "{}", yaml);
            }
        }
    }
}
