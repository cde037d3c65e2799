//! The baseline file: its schema and versions, the typed reader and the
//! writer (fixed key order, one query per line).

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer as _};
use serde_json::{json, Map, Value};

use crate::diag::input_error_hint;
use crate::judge::Place;
use crate::metrics::Metric;

/// The newest baseline schema this rgate reads. A file is written at the
/// oldest version that holds it: 1 unless it stores two stages or span
/// places (2) or the depth of a run it stores cut (3), so a baseline
/// or the model's values of a `labels: ppi` gate (4), or a labels mode
/// the rest of the file does not imply (5: `gold.labels`), so a baseline
/// without them stays readable by an rgate that predates them, and one
/// with them is refused by that rgate as newer (SPEC "Baseline store")
/// instead of misread as corrupt.
pub const SCHEMA_VERSION: u32 = 5;

#[derive(Debug, Clone, PartialEq)]
pub struct StoredQuery {
    pub id: String,
    pub stratum: String,
    /// Aligned with [`Baseline::metrics`].
    pub values: Vec<f64>,
    /// Ranked ids to [`Baseline::depth`] (all of them when `None`).
    pub ranking: Vec<String>,
    /// The whole candidate list the ranking was reranked from, for a
    /// two-stage retriever (SPEC "Two stages"): its ceilings and loss
    /// attribution look at every candidate.
    pub candidates: Option<Vec<String>>,
    /// [`text_sha`] of the query's text when recorded, so the gate can warn
    /// when a paired query now asks something else (absent in older files).
    pub text_sha: Option<String>,
    /// Where each ranked id lies, aligned with `ranking` (`None` where the
    /// run did not say): stored only for gold sets with span labels, whose
    /// re-scoring needs the text of the ranked chunks. Empty otherwise.
    pub spans: Vec<Option<Place>>,
    /// Where each candidate lies, aligned with `candidates`, likewise.
    pub candidate_spans: Vec<Option<Place>>,
    /// With `labels: ppi`, a model-graded query's values on the model's
    /// grades (aligned with [`Baseline::metrics`]); `values` then hold the
    /// primary scoring's (people's labels where verified, the model's
    /// elsewhere). SPEC: the store keeps both.
    pub model_values: Option<Vec<f64>>,
}

/// Places as stored: `[doc, start, end]` or null each.
type RawPlaces = Option<Vec<Option<(String, u64, u64)>>>;

/// Stored places, checked: one per id of the list they describe, and no
/// empty or reversed span.
fn places(raw: RawPlaces, ids: usize, what: &str) -> std::result::Result<Vec<Option<Place>>, String> {
    let raw = raw.unwrap_or_default();
    if !raw.is_empty() && raw.len() != ids {
        return Err(format!("stores {} span locations for {ids} {what}", raw.len()));
    }
    if let Some((doc, start, end)) = raw.iter().flatten().find(|(d, s, e)| d.is_empty() || s >= e) {
        return Err(format!(
            "stores the span {start}..{end} of `{doc}`, which is empty or reversed"
        ));
    }
    Ok(raw
        .into_iter()
        .map(|p| p.map(|(doc, start, end)| Place { doc, start, end }))
        .collect())
}

fn places_json(places: &[Option<Place>]) -> Value {
    Value::Array(
        places
            .iter()
            .map(|p| p.as_ref().map_or(Value::Null, |p| json!([p.doc, p.start, p.end])))
            .collect(),
    )
}

/// A short hash of a query's text: the first 16 hex digits of its sha256.
pub fn text_sha(text: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Means of one scope (`all` or a stratum) per metric.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopeMeans {
    pub scope: String,
    pub n: usize,
    pub means: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    pub retriever: String,
    pub created_at: String,
    pub rgate_version: String,
    pub commit: Option<String>,
    pub note: Option<String>,
    pub gold_path: String,
    pub gold_fingerprint: String,
    pub relevance_level: i32,
    pub metrics: Vec<Metric>,
    pub depth: Option<u32>,
    /// The longest ranking of the run the baseline was recorded from, kept
    /// only where the stored rankings cannot show it: cut at `depth` while
    /// a metric reads the whole ranking (map on a 1,000-deep run stored to
    /// 10). The gate warns when a current run is shallower where a metric
    /// reads ([`crate::gate`]'s depth warning).
    pub run_depth: Option<u32>,
    /// The span coverage the values were computed at; only for gold sets
    /// with span labels (a change of it re-scores, as a relevance level does).
    pub span_coverage: Option<f64>,
    /// `all` first, then each stratum.
    pub aggregates: Vec<ScopeMeans>,
    pub queries: Vec<StoredQuery>,
    /// With `labels: ppi`: the fingerprint of the model's side of the gold
    /// set (its grades), under which `model_values` hold.
    pub model_fingerprint: Option<String>,
    /// The labels mode the values were scored under (`gold.labels` in the
    /// file, written when it is not `people`; a file without it is
    /// `people`, or `ppi` when it holds a model fingerprint). The gold
    /// fingerprint is of the gold set as the mode sees it, so a switch of
    /// mode alone moves it: the gate names the switch for what it is
    /// rather than "the gold set changed".
    pub labels: crate::gold::LabelMode,
}

// ---- the file format ---------------------------------------------------------
//
// Parsed in one pass straight into typed values (no intermediate JSON tree),
// so a 7,000-query baseline loads in milliseconds. Values are checked as they
// are read, so serde_json's position gives the line of a bad value for free;
// the few checks made afterwards look their line up only when they fail.

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a baseline object")]
struct RawBaseline {
    /// Checked by the probe before this parse.
    #[allow(dead_code)]
    schema_version: u32,
    retriever: String,
    created_at: String,
    rgate_version: String,
    commit: Option<String>,
    note: Option<String>,
    gold: RawGold,
    relevance_level: i32,
    metrics: Vec<String>,
    depth: Option<u32>,
    #[serde(default)]
    run_depth: Option<u32>,
    #[serde(default)]
    span_coverage: Option<f64>,
    aggregates: Keyed<RawScope>,
    queries: Keyed<RawQuery>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an object with path, fingerprint and queries"
)]
struct RawGold {
    path: String,
    fingerprint: String,
    queries: usize,
    #[serde(default)]
    model_fingerprint: Option<String>,
    #[serde(default)]
    labels: Option<crate::gold::LabelMode>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object with stratum, values and ranking")]
struct RawQuery {
    stratum: String,
    values: MetricValues,
    ranking: Vec<String>,
    #[serde(default)]
    candidates: Option<Vec<String>>,
    #[serde(default)]
    text_sha: Option<String>,
    /// `[doc, start, end]` or null per ranked id.
    #[serde(default)]
    spans: RawPlaces,
    #[serde(default)]
    candidate_spans: RawPlaces,
    #[serde(default)]
    model_values: Option<MetricValues>,
}

/// A JSON object read in file order, refusing a key given twice (serde_json
/// would keep the last one silently: a tampered file could hide a value).
struct Keyed<T>(Vec<(String, T)>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Keyed<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Keyed<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Keyed<T>, A::Error> {
                let mut seen = HashSet::new();
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some(key) = map.next_key::<String>()? {
                    if !seen.insert(key.clone()) {
                        return Err(de::Error::custom(format!("`{key}` is given twice")));
                    }
                    let value = map.next_value::<T>()?;
                    out.push((key, value));
                }
                Ok(Keyed(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// `{"recall@10": 0.5, ...}`: every value a number in its metric's range
/// ([0, 1] but for the counts, gains and utility), no name twice.
struct MetricValues(Vec<(String, f64)>);

impl<'de> Deserialize<'de> for MetricValues {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MetricValues;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of metric values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<MetricValues, A::Error> {
                let mut out: Vec<(String, f64)> = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    if out.iter().any(|(k, _)| *k == key) {
                        return Err(de::Error::custom(format!("`{key}` is given twice")));
                    }
                    let v = map.next_value::<Value>()?;
                    let x = metric_value(&key, &v).map_err(de::Error::custom)?;
                    out.push((key, x));
                }
                Ok(MetricValues(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// One scope's aggregate row: `n` and a mean per metric.
struct RawScope {
    n: u64,
    means: MetricValues,
}

impl<'de> Deserialize<'de> for RawScope {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawScope;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object with n and a mean per metric")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<RawScope, A::Error> {
                let mut n = None;
                let mut means: Vec<(String, f64)> = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "n" {
                        if n.is_some() {
                            return Err(de::Error::custom("`n` is given twice"));
                        }
                        let v = map.next_value::<Value>()?;
                        n = Some(v.as_u64().ok_or_else(|| {
                            de::Error::custom(format!("`n` is {}, not a query count", excerpt(&v)))
                        })?);
                        continue;
                    }
                    if means.iter().any(|(k, _)| *k == key) {
                        return Err(de::Error::custom(format!("`{key}` is given twice")));
                    }
                    let v = map.next_value::<Value>()?;
                    let x = metric_value(&key, &v).map_err(de::Error::custom)?;
                    means.push((key, x));
                }
                let n = n.ok_or_else(|| de::Error::custom("an aggregate row lacks `n`"))?;
                Ok(RawScope {
                    n,
                    means: MetricValues(means),
                })
            }
        }
        d.deserialize_map(V)
    }
}

/// A stored metric value, or why it is not one. JSON has no NaN: rgate
/// never writes one, and serde_json turns a NaN into `null`, so a `null`
/// here is named as what it most likely is.
fn metric_value(metric: &str, v: &Value) -> std::result::Result<f64, String> {
    match v {
        Value::Number(n) => {
            let (lo, hi) = value_range(metric);
            match n.as_f64() {
                Some(x) if (lo..=hi).contains(&x) => Ok(x),
                _ => Err(format!("{metric} is {n}, outside {}", range_text(lo, hi))),
            }
        }
        Value::Null => Err(format!("{metric} is null, not a number (a NaN?)")),
        other => Err(format!("{metric} is {}, not a number", excerpt(other))),
    }
}

/// The range of the metric a stored name spells ([`Family::range`]): a
/// baseline holds each name once per query, so the few names are parsed
/// once each. A name that does not parse is refused later, by the
/// `metrics` list it must match; here it is only asked to be a number.
///
/// [`Family::range`]: crate::metrics::Family::range
fn value_range(metric: &str) -> (f64, f64) {
    use std::cell::RefCell;
    thread_local! {
        static SEEN: RefCell<Vec<(String, (f64, f64))>> = const { RefCell::new(Vec::new()) };
    }
    SEEN.with(|seen| {
        if let Some((_, r)) = seen.borrow().iter().find(|(n, _)| n == metric) {
            return *r;
        }
        let r = metric
            .parse::<Metric>()
            .map_or((f64::MIN, f64::MAX), |m| m.family().range());
        let mut seen = seen.borrow_mut();
        // Bounded: a hostile file could name a million metrics.
        if seen.len() < 256 {
            seen.push((metric.to_string(), r));
        }
        r
    })
}

fn range_text(lo: f64, hi: f64) -> String {
    match (lo, hi) {
        (0.0, 1.0) => "[0, 1], the range of its metric".into(),
        (0.0, _) => "[0, inf), the range of its metric (a count or a gain)".into(),
        _ => "the finite numbers".into(),
    }
}

/// A bad value as the message quotes it: at most a short excerpt.
fn excerpt(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(40) {
        Some((cut, _)) => format!("{}...", &s[..cut]),
        None => s,
    }
}

/// Reads only `schema_version`, skipping everything else unbuilt, so a file
/// from a newer rgate is refused for its version rather than for a field
/// this rgate does not know.
struct Probe;

impl<'de> Visitor<'de> for Probe {
    type Value = Option<Value>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Option<Value>, A::Error> {
        let mut version = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "schema_version" {
                version = Some(map.next_value::<Value>()?);
            } else {
                map.next_value::<de::IgnoredAny>()?;
            }
        }
        Ok(version)
    }
}

pub(super) fn corrupt(path: &Path, line: Option<usize>, what: impl std::fmt::Display) -> anyhow::Error {
    input_error_hint(
        path,
        line,
        format!("corrupt baseline: {what}"),
        "restore it from git (`git checkout -- <file>`) or record a new one with `rgate baseline update`",
    )
}

/// A serde_json error as a located message: the line goes where every rgate
/// error puts it, and Rust type names become words.
fn json_error(path: &Path, e: &serde_json::Error) -> anyhow::Error {
    let msg = e.to_string();
    let msg = match msg.rsplit_once(" at line ") {
        Some((head, _)) if e.line() > 0 => head.to_string(),
        _ => msg,
    };
    let msg = msg
        .replace("expected u32", "expected a non-negative integer")
        .replace("expected u64", "expected a non-negative integer")
        .replace("expected usize", "expected a non-negative integer")
        .replace("expected i32", "expected an integer")
        .replace("expected f64", "expected a number");
    corrupt(path, (e.line() > 0).then_some(e.line()), msg)
}

pub(super) fn num(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

impl Baseline {
    /// Each stored query's position, by id: how the gate pairs a baseline
    /// with the current gold set.
    pub fn positions(&self) -> std::collections::HashMap<&str, usize> {
        self.queries
            .iter()
            .enumerate()
            .map(|(i, q)| (q.id.as_str(), i))
            .collect()
    }

    pub fn parse(path: &Path, text: &str) -> Result<Baseline> {
        // Editors on Windows save a byte-order mark; it is not content.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        check_version(path, text)?;
        let mut de = serde_json::Deserializer::from_str(text);
        let raw = RawBaseline::deserialize(&mut de).and_then(|r| de.end().map(|_| r));
        let raw = raw.map_err(|e| json_error(path, &e))?;
        let metrics = parse_metrics(path, &raw.metrics)?;
        let names: Vec<String> = metrics.iter().map(Metric::name).collect();
        let mut aggregates = Vec::with_capacity(raw.aggregates.0.len());
        for (scope, a) in &raw.aggregates.0 {
            let means = align(&names, &a.means)
                .map_err(|e| corrupt(path, None, format!("aggregates.{scope} {e}")))?;
            aggregates.push(ScopeMeans {
                scope: scope.clone(),
                n: a.n as usize,
                means,
            });
        }
        if raw.gold.queries != raw.queries.0.len() {
            return Err(corrupt(
                path,
                None,
                format!(
                    "gold.queries says {} but {} queries are stored",
                    raw.gold.queries,
                    raw.queries.0.len()
                ),
            ));
        }
        let mut queries = Vec::with_capacity(raw.queries.0.len());
        for (id, q) in raw.queries.0 {
            let query = stored_query(&names, raw.depth, id, q)
                .map_err(|(id, e)| corrupt(path, line_of_query(text, &id), format!("query `{id}` {e}")))?;
            queries.push(query);
        }
        Ok(Baseline {
            retriever: raw.retriever,
            created_at: raw.created_at,
            rgate_version: raw.rgate_version,
            commit: raw.commit,
            note: raw.note,
            gold_path: raw.gold.path,
            gold_fingerprint: raw.gold.fingerprint,
            relevance_level: raw.relevance_level,
            metrics,
            depth: raw.depth,
            run_depth: raw.run_depth,
            span_coverage: raw.span_coverage,
            aggregates,
            queries,
            labels: raw
                .gold
                .labels
                .unwrap_or_else(|| Baseline::implied_labels(raw.gold.model_fingerprint.as_ref())),
            model_fingerprint: raw.gold.model_fingerprint,
        })
    }

    /// Pretty JSON with one query per line: reviewers read the diff.
    pub fn to_json_text(&self) -> String {
        let names: Vec<String> = self.metrics.iter().map(Metric::name).collect();
        let s = |v: &dyn erased::Ser| v.ser();
        let mut out = String::from("{\n");
        let _ = writeln!(out, "  \"schema_version\": {},", self.schema_version());
        let _ = writeln!(out, "  \"retriever\": {},", s(&self.retriever));
        let _ = writeln!(out, "  \"created_at\": {},", s(&self.created_at));
        let _ = writeln!(out, "  \"rgate_version\": {},", s(&self.rgate_version));
        let _ = writeln!(out, "  \"commit\": {},", s(&self.commit));
        let _ = writeln!(out, "  \"note\": {},", s(&self.note));
        let _ = writeln!(out, "  \"gold\": {},", {
            let mut gold = json!({"path": self.gold_path, "fingerprint": self.gold_fingerprint, "queries": self.queries.len()});
            if let Some(mf) = &self.model_fingerprint {
                gold["model_fingerprint"] = json!(mf);
            }
            if let Some(l) = self.labels_key() {
                gold["labels"] = json!(l.name());
            }
            gold
        });
        let _ = writeln!(out, "  \"relevance_level\": {},", self.relevance_level);
        let _ = writeln!(out, "  \"metrics\": {},", s(&names));
        let _ = writeln!(out, "  \"depth\": {},", s(&self.depth));
        if let Some(d) = self.run_depth {
            let _ = writeln!(out, "  \"run_depth\": {d},");
        }
        if let Some(c) = self.span_coverage {
            let _ = writeln!(out, "  \"span_coverage\": {},", json!(c));
        }
        out.push_str("  \"aggregates\": {\n");
        for (i, a) in self.aggregates.iter().enumerate() {
            let mut o = Map::new();
            o.insert("n".into(), json!(a.n));
            for (m, v) in names.iter().zip(&a.means) {
                o.insert(m.clone(), json!(v));
            }
            let comma = if i + 1 < self.aggregates.len() { "," } else { "" };
            let _ = writeln!(out, "    {}: {}{comma}", s(&a.scope), Value::Object(o));
        }
        out.push_str("  },\n  \"queries\": {\n");
        for (i, q) in self.queries.iter().enumerate() {
            let mut values = Map::new();
            for (m, v) in names.iter().zip(&q.values) {
                values.insert(m.clone(), json!(v));
            }
            let mut row =
                json!({"stratum": q.stratum, "values": Value::Object(values), "ranking": q.ranking});
            if let Some(o) = row.as_object_mut() {
                if let Some(c) = &q.candidates {
                    o.insert("candidates".into(), json!(c));
                }
                if let Some(h) = &q.text_sha {
                    o.insert("text_sha".into(), json!(h));
                }
            }
            if let Some(o) = row.as_object_mut() {
                if !q.spans.is_empty() {
                    o.insert("spans".into(), places_json(&q.spans));
                }
                if !q.candidate_spans.is_empty() {
                    o.insert("candidate_spans".into(), places_json(&q.candidate_spans));
                }
                if let Some(mv) = &q.model_values {
                    let mut values = Map::new();
                    for (m, v) in names.iter().zip(mv) {
                        values.insert(m.clone(), json!(v));
                    }
                    o.insert("model_values".into(), Value::Object(values));
                }
            }
            let comma = if i + 1 < self.queries.len() { "," } else { "" };
            let _ = writeln!(out, "    {}: {row}{comma}", s(&q.id));
        }
        out.push_str("  }\n}\n");
        out
    }

    pub fn metric_index(&self, m: &Metric) -> Option<usize> {
        self.metrics.iter().position(|x| x == m)
    }

    /// Whether the baseline stores its candidate lists (a two-stage
    /// retriever recorded since rgate stores both stages).
    /// The version [`Baseline::to_json_text`] writes: see [`SCHEMA_VERSION`].
    pub fn schema_version(&self) -> u32 {
        if self.labels_key().is_some() {
            return 5;
        }
        if self.model_fingerprint.is_some() || self.queries.iter().any(|q| q.model_values.is_some()) {
            return 4;
        }
        if self.run_depth.is_some() {
            return 3;
        }
        let v2 = self.span_coverage.is_some()
            || self
                .queries
                .iter()
                .any(|q| q.candidates.is_some() || !q.spans.is_empty() || !q.candidate_spans.is_empty());
        if v2 {
            2
        } else {
            1
        }
    }

    /// The labels mode a file without `gold.labels` is read as: `ppi`
    /// when it holds the model side's fingerprint, else `people`.
    fn implied_labels(model_fingerprint: Option<&String>) -> crate::gold::LabelMode {
        if model_fingerprint.is_some() {
            crate::gold::LabelMode::Ppi
        } else {
            crate::gold::LabelMode::People
        }
    }

    /// `gold.labels` as written: only where the file does not imply it
    /// (`labels: model`), so the baselines of the other modes keep the
    /// text and the schema version they always had.
    fn labels_key(&self) -> Option<crate::gold::LabelMode> {
        (self.labels != Self::implied_labels(self.model_fingerprint.as_ref())).then_some(self.labels)
    }

    pub fn has_candidates(&self) -> bool {
        !self.queries.is_empty() && self.queries.iter().all(|q| q.candidates.is_some())
    }
}

/// Refuses a file of a newer schema (left as it is) and one without a
/// version rgate ever wrote, before anything else is read.
fn check_version(path: &Path, text: &str) -> Result<()> {
    let version = serde_json::Deserializer::from_str(text)
        .deserialize_map(Probe)
        .map_err(|e| json_error(path, &e))?;
    match version.as_ref().map(|v| (v, v.as_u64())) {
        Some((_, Some(s))) if s > u64::from(SCHEMA_VERSION) => Err(input_error_hint(
            path,
            None,
            format!("baseline schema_version {s} is newer than this rgate reads ({SCHEMA_VERSION})"),
            "upgrade rgate; the file is left as it is",
        )),
        Some((_, Some(s))) if s >= 1 => Ok(()),
        Some((v, _)) => Err(corrupt(
            path,
            None,
            format!("schema_version {} is not a version rgate ever wrote", excerpt(v)),
        )),
        None => Err(corrupt(path, None, "no schema_version")),
    }
}

/// The file's metric list, each named once.
fn parse_metrics(path: &Path, raw: &[String]) -> Result<Vec<Metric>> {
    let mut metrics: Vec<Metric> = Vec::with_capacity(raw.len());
    for m in raw {
        let metric: Metric = m.parse().map_err(|e| corrupt(path, None, e))?;
        if metrics.contains(&metric) {
            return Err(corrupt(path, None, format!("metric {metric} is listed twice")));
        }
        metrics.push(metric);
    }
    Ok(metrics)
}

/// Stored values in the order of the metric `names`.
fn align(names: &[String], vals: &MetricValues) -> std::result::Result<Vec<f64>, String> {
    names
        .iter()
        .map(|m| {
            vals.0
                .iter()
                .find(|(k, _)| k == m)
                .map(|(_, v)| *v)
                .ok_or_else(|| format!("lacks a value for {m}"))
        })
        .collect()
}

/// Where a query is, for the checks made after the parse; searched only
/// when one fails.
fn line_of_query(text: &str, id: &str) -> Option<usize> {
    text.find(&format!(
        "\n    {}:",
        serde_json::to_string(id).unwrap_or_default()
    ))
    .map(|p| crate::diag::line_of(text.as_bytes(), p + 1))
}

/// One stored query, checked against the file's metrics and depth; an
/// error gives back the id with what is wrong.
fn stored_query(
    names: &[String],
    depth: Option<u32>,
    id: String,
    q: RawQuery,
) -> std::result::Result<StoredQuery, (String, String)> {
    let values = match align(names, &q.values) {
        Ok(v) => v,
        Err(e) => return Err((id, e)),
    };
    let model_values = match q.model_values.as_ref().map(|mv| align(names, mv)) {
        None => None,
        Some(Ok(v)) => Some(v),
        Some(Err(e)) => return Err((id, format!("model_values: {e}"))),
    };
    if let Some(d) = depth {
        if q.ranking.len() > d as usize {
            let e = format!(
                "stores {} ranked ids, more than the file's depth {d}",
                q.ranking.len()
            );
            return Err((id, e));
        }
    }
    let spans = match places(q.spans, q.ranking.len(), "ranked ids") {
        Ok(p) => p,
        Err(e) => return Err((id, e)),
    };
    let n_cand = q.candidates.as_ref().map_or(0, Vec::len);
    let candidate_spans = match places(q.candidate_spans, n_cand, "candidates") {
        Ok(p) => p,
        Err(e) => return Err((id, e)),
    };
    Ok(StoredQuery {
        id,
        stratum: q.stratum,
        values,
        ranking: q.ranking,
        candidates: q.candidates,
        text_sha: q.text_sha,
        spans,
        candidate_spans,
        model_values,
    })
}

/// Tiny helper so the writer above can serialize any value inline.
mod erased {
    pub trait Ser {
        fn ser(&self) -> String;
    }
    impl<T: serde::Serialize> Ser for T {
        fn ser(&self) -> String {
            serde_json::to_string(self).unwrap_or_else(|_| "null".into())
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::baseline) fn sample() -> Baseline {
        Baseline {
            retriever: "hybrid".into(),
            created_at: "2026-11-30T00:00:00Z".into(),
            rgate_version: "0.1.0".into(),
            commit: Some("abc".into()),
            note: None,
            gold_path: "demo/gold.yaml".into(),
            gold_fingerprint: "sha256:00".into(),
            relevance_level: 1,
            metrics: vec!["recall@10".parse().unwrap(), "mrr@10".parse().unwrap()],
            depth: Some(10),
            run_depth: None,
            span_coverage: None,
            aggregates: vec![ScopeMeans {
                scope: "all".into(),
                n: 2,
                means: vec![0.75, 0.1 + 0.2],
            }],
            queries: vec![
                StoredQuery {
                    id: "q1".into(),
                    stratum: "how-to".into(),
                    values: vec![1.0, 1.0 / 3.0],
                    ranking: vec!["a#1".into(), "b\"x".into()],
                    candidates: Some(vec!["c#9".into(), "a#1".into(), "b\"x".into()]),
                    text_sha: Some(text_sha("what is a#1?")),
                    spans: Vec::new(),
                    candidate_spans: Vec::new(),
                    model_values: None,
                },
                StoredQuery {
                    id: "q2".into(),
                    stratum: "default".into(),
                    values: vec![0.5, 0.0],
                    ranking: vec![],
                    candidates: None,
                    text_sha: None,
                    spans: Vec::new(),
                    candidate_spans: Vec::new(),
                    model_values: None,
                },
            ],
            model_fingerprint: None,
            labels: crate::gold::LabelMode::People,
        }
    }

    #[test]
    fn round_trips_exactly() {
        let b = sample();
        let text = b.to_json_text();
        assert!(text.contains("\n    \"q1\": {\"stratum\":\"how-to\""), "{text}");
        let back = Baseline::parse(Path::new("b.json"), &text).unwrap();
        assert_eq!(back, b);
    }

    /// Version 1 unless the file holds what version 1 cannot say, so an
    /// older rgate reads plain baselines and calls the others newer.
    #[test]
    fn writes_the_oldest_schema_that_holds_the_file() {
        let mut b = sample();
        b.queries[0].candidates = None;
        assert!(b.to_json_text().starts_with("{\n  \"schema_version\": 1,\n"));
        assert!(sample()
            .to_json_text()
            .starts_with("{\n  \"schema_version\": 2,\n"));
        b.span_coverage = Some(0.5);
        assert!(b.to_json_text().starts_with("{\n  \"schema_version\": 2,\n"));
        // The depth of a run stored cut: version 3, read back as written.
        b.run_depth = Some(1000);
        let text = b.to_json_text();
        assert!(text.starts_with("{\n  \"schema_version\": 3,\n"), "{text}");
        assert!(
            text.contains("\n  \"depth\": 10,\n  \"run_depth\": 1000,\n"),
            "{text}"
        );
        assert_eq!(Baseline::parse(Path::new("b.json"), &text).unwrap(), b);
        // The model's values of a `labels: ppi` baseline: version 4, read
        // back as written, and a plain query beside them keeps none.
        b.model_fingerprint = Some("sha256:11".into());
        b.labels = crate::gold::LabelMode::Ppi;
        b.queries[0].model_values = Some(vec![0.0, 0.25]);
        let text = b.to_json_text();
        assert!(text.starts_with("{\n  \"schema_version\": 4,\n"), "{text}");
        assert!(text.contains("\"model_fingerprint\":\"sha256:11\""), "{text}");
        assert!(
            text.contains("\"model_values\":{\"recall@10\":0.0,\"mrr@10\":0.25}"),
            "{text}"
        );
        assert_eq!(Baseline::parse(Path::new("b.json"), &text).unwrap(), b);
        // A ppi baseline says its mode by its model fingerprint; a labels
        // mode nothing else implies is written out: version 5.
        assert!(!text.contains("\"labels\""), "{text}");
        b.labels = crate::gold::LabelMode::Model;
        b.model_fingerprint = None;
        b.queries[0].model_values = None;
        let text = b.to_json_text();
        assert!(text.starts_with("{\n  \"schema_version\": 5,\n"), "{text}");
        assert!(text.contains("\"labels\":\"model\""), "{text}");
        assert_eq!(Baseline::parse(Path::new("b.json"), &text).unwrap(), b);
        // What this rgate writes, it reads; one version past it, it refuses.
        let newer = text.replace("\"schema_version\": 5", "\"schema_version\": 6");
        let e = Baseline::parse(Path::new("b.json"), &newer)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("schema_version 6 is newer than this rgate reads (5)"),
            "{e}"
        );
    }

    #[test]
    fn candidate_places_round_trip_and_are_checked() {
        let mut b = sample();
        b.span_coverage = Some(0.5);
        let at = Place {
            doc: "d".into(),
            start: 3,
            end: 9,
        };
        b.queries[0].candidate_spans = vec![None, Some(at), None];
        let text = b.to_json_text();
        assert!(
            text.contains(",\"candidate_spans\":[null,[\"d\",3,9],null]}"),
            "{text}"
        );
        assert_eq!(Baseline::parse(Path::new("b.json"), &text).unwrap(), b);
        let short = text.replace("[null,[\"d\",3,9],null]", "[null]");
        let e = Baseline::parse(Path::new("b.json"), &short)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("query `q1` stores 1 span locations for 3 candidates"),
            "{e}"
        );
    }

    #[test]
    fn span_places_round_trip_and_are_checked() {
        let mut b = sample();
        b.span_coverage = Some(0.6);
        b.queries[0].spans = vec![
            Some(Place {
                doc: "docs/a.md".into(),
                start: 0,
                end: 120,
            }),
            None,
        ];
        let text = b.to_json_text();
        assert!(text.contains("\n  \"span_coverage\": 0.6,\n"), "{text}");
        assert!(
            text.contains(",\"spans\":[[\"docs/a.md\",0,120],null]}"),
            "{text}"
        );
        assert_eq!(Baseline::parse(Path::new("b.json"), &text).unwrap(), b);
        // Without spans nothing is written: older files read the same.
        assert!(!sample().to_json_text().contains("span"));
        // One place per ranked id, and no empty span.
        let short = text.replace("[[\"docs/a.md\",0,120],null]", "[null]");
        let e = Baseline::parse(Path::new("b.json"), &short)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("query `q1` stores 1 span locations for 2 ranked ids"),
            "{e}"
        );
        let empty = text.replace("[\"docs/a.md\",0,120]", "[\"docs/a.md\",120,120]");
        let e = Baseline::parse(Path::new("b.json"), &empty)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("stores the span 120..120 of `docs/a.md`, which is empty or reversed"),
            "{e}"
        );
    }

    #[test]
    fn newer_schema_is_refused() {
        let text = sample()
            .to_json_text()
            .replace("\"schema_version\": 2", "\"schema_version\": 7");
        let e = Baseline::parse(Path::new("b.json"), &text)
            .unwrap_err()
            .to_string();
        assert!(e.contains("b.json: baseline schema_version 7 is newer"), "{e}");
    }

    #[test]
    fn corrupt_files_name_the_file() {
        let e = Baseline::parse(Path::new("b.json"), "{\"schema_version\": 1, \"retriever\": ")
            .unwrap_err()
            .to_string();
        assert!(e.contains("b.json:1: corrupt baseline"), "{e}");
        let e = Baseline::parse(Path::new("b.json"), "[]")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("b.json:1: corrupt baseline: invalid type: sequence, expected a JSON object"),
            "{e}"
        );
        let e = Baseline::parse(Path::new("b.json"), "{}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("b.json: corrupt baseline: no schema_version"), "{e}");
    }

    fn parse_err(text: &str) -> String {
        Baseline::parse(Path::new("b.json"), text)
            .unwrap_err()
            .to_string()
    }

    /// The line of q1 in [`sample`]'s file: `{`, 10 fields, the 3-line
    /// `aggregates` block and `"queries": {` come first, so 16 (counted by
    /// hand; the test checks the count).
    fn q1_line(text: &str) -> usize {
        text.lines().position(|l| l.starts_with("    \"q1\"")).unwrap() + 1
    }

    #[test]
    fn a_byte_order_mark_is_not_content() {
        let b = sample();
        let text = format!("\u{feff}{}", b.to_json_text());
        assert_eq!(Baseline::parse(Path::new("b.json"), &text).unwrap(), b);
    }

    #[test]
    fn tampered_values_are_errors_naming_file_and_line() {
        let text = sample().to_json_text();
        let line = q1_line(&text);
        assert_eq!(line, 16);
        let e = parse_err(&text.replace("\"recall@10\":1.0", "\"recall@10\":1.5"));
        assert!(
            e.starts_with("b.json:16: corrupt baseline: recall@10 is 1.5, outside [0, 1]"),
            "{e}"
        );
        assert!(e.contains("\nhint: restore it from git"), "{e}");
        let e = parse_err(&text.replace("\"recall@10\":1.0", "\"recall@10\":-0.25"));
        assert!(
            e.contains("b.json:16: corrupt baseline: recall@10 is -0.25, outside [0, 1]"),
            "{e}"
        );
        let e = parse_err(&text.replace("\"recall@10\":1.0", "\"recall@10\":null"));
        assert!(
            e.contains("b.json:16: corrupt baseline: recall@10 is null, not a number (a NaN?)"),
            "{e}"
        );
        let e = parse_err(&text.replace("\"recall@10\":1.0", "\"recall@10\":\"NaN\""));
        assert!(
            e.contains("b.json:16: corrupt baseline: recall@10 is \"NaN\", not a number"),
            "{e}"
        );
        // A bare NaN is not JSON at all.
        let e = parse_err(&text.replace("\"recall@10\":1.0", "\"recall@10\":NaN"));
        assert!(
            e.starts_with("b.json:16: corrupt baseline: expected value"),
            "{e}"
        );
        // An aggregate too.
        let e = parse_err(&text.replace("\"recall@10\":0.75", "\"recall@10\":7.5"));
        assert!(
            e.contains("b.json:13: corrupt baseline: recall@10 is 7.5, outside [0, 1]"),
            "{e}"
        );
    }

    #[test]
    fn a_key_given_twice_is_an_error() {
        let text = sample().to_json_text();
        let e = parse_err(&text.replace(
            "\"values\":{\"recall@10\":1.0",
            "\"values\":{\"recall@10\":0.0,\"recall@10\":1.0",
        ));
        assert!(
            e.contains("b.json:16: corrupt baseline: `recall@10` is given twice"),
            "{e}"
        );
        let e = parse_err(&text.replace("\n    \"q2\":", "\n    \"q1\":"));
        assert!(
            e.contains("b.json:17: corrupt baseline: `q1` is given twice"),
            "{e}"
        );
        let e = parse_err(&text.replace("\"note\": null,", "\"note\": null,\n  \"note\": \"x\","));
        assert!(e.contains("corrupt baseline: duplicate field `note`"), "{e}");
        let e = parse_err(&text.replace("{\"n\":2,", "{\"n\":2,\"n\":3,"));
        assert!(
            e.contains("b.json:13: corrupt baseline: `n` is given twice"),
            "{e}"
        );
    }

    #[test]
    fn schema_version_zero_and_odd_versions_are_refused() {
        let text = sample().to_json_text();
        for (v, shown) in [("0", "0"), ("-1", "-1"), ("\"1\"", "\"1\""), ("1.5", "1.5")] {
            let e = parse_err(&text.replace("\"schema_version\": 2", &format!("\"schema_version\": {v}")));
            assert!(
                e.contains(&format!(
                    "b.json: corrupt baseline: schema_version {shown} is not a version rgate ever wrote"
                )),
                "{e}"
            );
        }
    }

    #[test]
    fn messages_show_no_rust_type_names() {
        let text = sample().to_json_text();
        for (from, to, want) in [
            ("\"gold\": {", "\"gold\": 5, \"x\": {", "expected an object with path, fingerprint and queries"),
            ("\"depth\": 10", "\"depth\": \"ten\"", "expected a non-negative integer"),
            ("\"relevance_level\": 1", "\"relevance_level\": []", "expected an integer"),
            (
                "\"q2\": {\"stratum\":\"default\",\"values\":{\"recall@10\":0.5,\"mrr@10\":0.0},\"ranking\":[]}",
                "\"q2\": 7",
                "expected an object with stratum, values and ranking",
            ),
        ] {
            let e = parse_err(&text.replacen(from, to, 1));
            assert!(e.contains(want), "{e}");
            for internal in ["struct", "Raw", "u32", "i32", "usize", "Keyed"] {
                assert!(!e.contains(internal), "{internal} in {e}");
            }
        }
    }

    #[test]
    fn a_missing_value_names_the_query_and_its_line() {
        let text = sample().to_json_text();
        let e = parse_err(&text.replace("\"values\":{\"recall@10\":1.0,", "\"values\":{"));
        assert!(
            e.contains("b.json:16: corrupt baseline: query `q1` lacks a value for recall@10"),
            "{e}"
        );
        let e = parse_err(&text.replace(
            "\"ranking\":[\"a#1\",",
            "\"ranking\":[\"a#1\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",",
        ));
        assert!(
            e.contains(
                "b.json:16: corrupt baseline: query `q1` stores 11 ranked ids, more than the file's depth 10"
            ),
            "{e}"
        );
    }
    /// Two stages are recorded only when every query holds its candidates.
    #[test]
    fn has_candidates_needs_every_query_to_hold_them() {
        let mut b = sample();
        assert!(!b.has_candidates(), "q2 holds none");
        b.queries[1].candidates = Some(Vec::new());
        assert!(b.has_candidates());
        b.queries.clear();
        assert!(!b.has_candidates());
    }
}
