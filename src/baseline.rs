//! The baseline store: one JSON file per retriever plus a JSONL history,
//! committed to git and reviewed like code (SPEC "Baseline store").
//!
//! A baseline keeps raw per-query values, not just means (criterion keeps
//! its raw samples for the same reason: a paired test needs them), and each
//! query's ranked ids to the deepest cutoff in use, so that when gold labels
//! are fixed later the stored run can be re-scored instead of raising a
//! false alarm.
//!
//! Files are written for review: fixed key order and one query per line, so
//! a baseline update shows up in a pull request as a readable diff. Writes
//! are atomic and serialized by a lock file; a newer schema or a corrupt file
//! is refused and never overwritten.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Result;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer as _};
use serde_json::{json, Map, Value};

use crate::diag::{input_error, input_error_hint};
use crate::metrics::Metric;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq)]
pub struct StoredQuery {
    pub id: String,
    pub stratum: String,
    /// Aligned with [`Baseline::metrics`].
    pub values: Vec<f64>,
    /// Ranked ids to [`Baseline::depth`] (all of them when `None`).
    pub ranking: Vec<String>,
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
    /// `all` first, then each stratum.
    pub aggregates: Vec<ScopeMeans>,
    pub queries: Vec<StoredQuery>,
}

/// Where a retriever's files live.
#[derive(Debug, Clone)]
pub struct Store {
    pub dir: PathBuf,
}

impl Store {
    pub fn new(dir: impl Into<PathBuf>) -> Store {
        Store { dir: dir.into() }
    }

    pub fn baseline_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.json"))
    }

    pub fn history_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.history.jsonl"))
    }

    /// The stored baseline, `None` when there is none yet.
    pub fn load(&self, name: &str) -> Result<Option<Baseline>> {
        let path = self.baseline_path(name);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(input_error(&path, None, format!("cannot read baseline: {e}"))),
        };
        let b = Baseline::parse(&path, &text)?;
        if b.retriever != name {
            return Err(corrupt(
                &path,
                None,
                format!("it holds the baseline of `{}`, not of `{name}`", b.retriever),
            ));
        }
        Ok(Some(b))
    }

    /// Writes the baseline atomically. The caller holds the lock.
    pub fn save(&self, b: &Baseline) -> Result<PathBuf> {
        let path = self.baseline_path(&b.retriever);
        crate::fsutil::write_atomic(&path, b.to_json_text().as_bytes())?;
        Ok(path)
    }

    /// Appends one history line. The line is written with a single `write`
    /// on an append-mode file, then synced.
    pub fn append_history(&self, name: &str, entry: &HistoryEntry) -> Result<()> {
        let path = self.history_path(name);
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| input_error(&self.dir, None, format!("cannot create directory: {e}")))?;
        let mut line = serde_json::to_string(&entry.to_json()).unwrap_or_default();
        line.push('\n');
        let r = (|| -> std::io::Result<()> {
            let mut f = OpenOptions::new().create(true).append(true).open(&path)?;
            f.write_all(line.as_bytes())?;
            f.sync_all()
        })();
        r.map_err(|e| input_error(&path, None, format!("cannot append history: {e}")))
    }

    pub fn history(&self, name: &str) -> Result<Vec<HistoryEntry>> {
        let path = self.history_path(name);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(input_error(&path, None, format!("cannot read history: {e}"))),
        };
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(line).map_err(|e| {
                input_error_hint(
                    &path,
                    Some(i + 1),
                    format!("corrupt history line: {e}"),
                    "history lines are JSON objects; fix or remove the line (git shows what changed)",
                )
            })?;
            out.push(HistoryEntry::from_json(&v).ok_or_else(|| {
                input_error_hint(
                    &path,
                    Some(i + 1),
                    "history line lacks `time`, `kind` or `aggregates`",
                    "fix or remove the line",
                )
            })?);
        }
        Ok(out)
    }

    /// Serializes read-modify-write of one retriever's files.
    pub fn lock(&self, name: &str) -> Result<Lock> {
        Lock::acquire(&self.dir, name, Duration::from_secs(10))
    }
}

/// A lock file beside the baseline, created exclusively and removed on drop.
#[derive(Debug)]
pub struct Lock {
    path: PathBuf,
}

impl Lock {
    pub fn acquire(dir: &Path, name: &str, wait: Duration) -> Result<Lock> {
        std::fs::create_dir_all(dir)
            .map_err(|e| input_error(dir, None, format!("cannot create directory: {e}")))?;
        let path = dir.join(format!(".{name}.lock"));
        let start = Instant::now();
        loop {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    let _ = writeln!(f, "{}", std::process::id());
                    return Ok(Lock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && start.elapsed() < wait => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Err(input_error_hint(
                        &path,
                        None,
                        "another rgate is updating this baseline (the lock file exists)",
                        "wait for it to finish; if no rgate is running, remove the lock file",
                    ))
                }
                Err(e) => return Err(input_error(&path, None, format!("cannot create lock file: {e}"))),
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
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
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object with stratum, values and ranking")]
struct RawQuery {
    stratum: String,
    values: MetricValues,
    ranking: Vec<String>,
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

/// `{"recall@10": 0.5, ...}`: every value a number in [0, 1] (the range of
/// every rgate metric), no name twice.
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
        Value::Number(n) => match n.as_f64() {
            Some(x) if (0.0..=1.0).contains(&x) => Ok(x),
            _ => Err(format!("{metric} is {n}, outside [0, 1] where every metric lies")),
        },
        Value::Null => Err(format!("{metric} is null, not a number (a NaN?)")),
        other => Err(format!("{metric} is {}, not a number", excerpt(other))),
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

fn corrupt(path: &Path, line: Option<usize>, what: impl std::fmt::Display) -> anyhow::Error {
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

fn num(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

impl Baseline {
    pub fn parse(path: &Path, text: &str) -> Result<Baseline> {
        // Editors on Windows save a byte-order mark; it is not content.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let version = serde_json::Deserializer::from_str(text)
            .deserialize_map(Probe)
            .map_err(|e| json_error(path, &e))?;
        match version.as_ref().map(|v| (v, v.as_u64())) {
            Some((_, Some(s))) if s > u64::from(SCHEMA_VERSION) => {
                return Err(input_error_hint(
                    path,
                    None,
                    format!("baseline schema_version {s} is newer than this rgate reads ({SCHEMA_VERSION})"),
                    "upgrade rgate; the file is left as it is",
                ))
            }
            Some((_, Some(s))) if s >= 1 => {}
            Some((v, _)) => {
                return Err(corrupt(
                    path,
                    None,
                    format!("schema_version {} is not a version rgate ever wrote", excerpt(v)),
                ))
            }
            None => return Err(corrupt(path, None, "no schema_version")),
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let raw = RawBaseline::deserialize(&mut de).and_then(|r| de.end().map(|_| r));
        let raw = raw.map_err(|e| json_error(path, &e))?;
        // Where a query is, for the checks made after the parse; searched
        // only when one fails.
        let line_of_query = |id: &str| {
            text.find(&format!(
                "\n    {}:",
                serde_json::to_string(id).unwrap_or_default()
            ))
            .map(|p| crate::diag::line_of(text.as_bytes(), p + 1))
        };
        let mut metrics: Vec<Metric> = Vec::with_capacity(raw.metrics.len());
        for m in &raw.metrics {
            let metric: Metric = m.parse().map_err(|e| corrupt(path, None, e))?;
            if metrics.contains(&metric) {
                return Err(corrupt(path, None, format!("metric {metric} is listed twice")));
            }
            metrics.push(metric);
        }
        let names: Vec<String> = metrics.iter().map(Metric::name).collect();
        let align = |vals: &MetricValues| -> std::result::Result<Vec<f64>, String> {
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
        };
        let mut aggregates = Vec::with_capacity(raw.aggregates.0.len());
        for (scope, a) in &raw.aggregates.0 {
            let means =
                align(&a.means).map_err(|e| corrupt(path, None, format!("aggregates.{scope} {e}")))?;
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
            let values = align(&q.values)
                .map_err(|e| corrupt(path, line_of_query(&id), format!("query `{id}` {e}")))?;
            if let Some(d) = raw.depth {
                if q.ranking.len() > d as usize {
                    return Err(corrupt(
                        path,
                        line_of_query(&id),
                        format!(
                            "query `{id}` stores {} ranked ids, more than the file's depth {d}",
                            q.ranking.len()
                        ),
                    ));
                }
            }
            queries.push(StoredQuery {
                id,
                stratum: q.stratum,
                values,
                ranking: q.ranking,
            });
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
            aggregates,
            queries,
        })
    }

    /// Pretty JSON with one query per line: reviewers read the diff.
    pub fn to_json_text(&self) -> String {
        let names: Vec<String> = self.metrics.iter().map(Metric::name).collect();
        let s = |v: &dyn erased::Ser| v.ser();
        let mut out = String::from("{\n");
        let _ = writeln!(out, "  \"schema_version\": {SCHEMA_VERSION},");
        let _ = writeln!(out, "  \"retriever\": {},", s(&self.retriever));
        let _ = writeln!(out, "  \"created_at\": {},", s(&self.created_at));
        let _ = writeln!(out, "  \"rgate_version\": {},", s(&self.rgate_version));
        let _ = writeln!(out, "  \"commit\": {},", s(&self.commit));
        let _ = writeln!(out, "  \"note\": {},", s(&self.note));
        let _ = writeln!(
            out,
            "  \"gold\": {},",
            json!({"path": self.gold_path, "fingerprint": self.gold_fingerprint, "queries": self.queries.len()})
        );
        let _ = writeln!(out, "  \"relevance_level\": {},", self.relevance_level);
        let _ = writeln!(out, "  \"metrics\": {},", s(&names));
        let _ = writeln!(out, "  \"depth\": {},", s(&self.depth));
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
            let row = json!({"stratum": q.stratum, "values": Value::Object(values), "ranking": q.ranking});
            let comma = if i + 1 < self.queries.len() { "," } else { "" };
            let _ = writeln!(out, "    {}: {row}{comma}", s(&q.id));
        }
        out.push_str("  }\n}\n");
        out
    }

    pub fn metric_index(&self, m: &Metric) -> Option<usize> {
        self.metrics.iter().position(|x| x == m)
    }
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

// ---- history -------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
pub struct HistoryEntry {
    pub time: String,
    pub commit: Option<String>,
    /// `baseline-update` or `gate`.
    pub kind: String,
    pub note: Option<String>,
    pub gold_fingerprint: Option<String>,
    pub verdict: Option<String>,
    /// The run file that was evaluated, as named on the command line or in
    /// the config; absent in lines written before rgate recorded it.
    pub run: Option<String>,
    /// scope -> metric -> mean
    pub aggregates: BTreeMap<String, BTreeMap<String, f64>>,
}

impl HistoryEntry {
    pub fn to_json(&self) -> Value {
        json!({
            "time": self.time,
            "commit": self.commit,
            "kind": self.kind,
            "note": self.note,
            "gold_fingerprint": self.gold_fingerprint,
            "verdict": self.verdict,
            "run": self.run,
            "aggregates": self.aggregates,
        })
    }

    pub fn from_json(v: &Value) -> Option<HistoryEntry> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let mut aggregates = BTreeMap::new();
        for (scope, ms) in v.get("aggregates")?.as_object()? {
            let mut row = BTreeMap::new();
            for (m, x) in ms.as_object()? {
                if let Some(x) = num(x) {
                    row.insert(m.clone(), x);
                }
            }
            aggregates.insert(scope.clone(), row);
        }
        Some(HistoryEntry {
            time: s("time")?,
            commit: s("commit"),
            kind: s("kind")?,
            note: s("note"),
            gold_fingerprint: s("gold_fingerprint"),
            verdict: s("verdict"),
            run: s("run"),
            aggregates,
        })
    }

    pub fn aggregates_of(
        metrics: &[Metric],
        scopes: &[ScopeMeans],
    ) -> BTreeMap<String, BTreeMap<String, f64>> {
        scopes
            .iter()
            .map(|s| {
                (
                    s.scope.clone(),
                    metrics
                        .iter()
                        .zip(&s.means)
                        .map(|(m, v)| (m.name(), *v))
                        .collect(),
                )
            })
            .collect()
    }
}

// ---- provenance ----------------------------------------------------------------

/// The commit being evaluated: on a pull request in Actions, the PR's head
/// commit (`GITHUB_SHA` there is a merge commit that exists nowhere after
/// the run); else `GITHUB_SHA`; else `git rev-parse HEAD` run beside the
/// config; else unknown.
pub fn current_commit(dir: &Path) -> Option<String> {
    if let (Ok(event), Ok(path)) = (
        std::env::var("GITHUB_EVENT_NAME"),
        std::env::var("GITHUB_EVENT_PATH"),
    ) {
        let payload = std::fs::read_to_string(path).unwrap_or_default();
        if let Some(sha) = pr_head_sha(&event, &payload) {
            return Some(sha);
        }
    }
    if let Ok(sha) = std::env::var("GITHUB_SHA") {
        if !sha.trim().is_empty() {
            return Some(sha.trim().to_string());
        }
    }
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// `pull_request.head.sha` of a `pull_request` or `pull_request_target`
/// event payload (the JSON file at `GITHUB_EVENT_PATH`).
pub fn pr_head_sha(event_name: &str, payload: &str) -> Option<String> {
    if !matches!(event_name, "pull_request" | "pull_request_target") {
        return None;
    }
    let v: Value = serde_json::from_str(payload).ok()?;
    let sha = v.pointer("/pull_request/head/sha")?.as_str()?.trim();
    (sha.len() >= 7 && sha.bytes().all(|b| b.is_ascii_hexdigit())).then(|| sha.to_string())
}

/// UTC now as RFC 3339, or `SOURCE_DATE_EPOCH` when set (reproducible
/// builds' convention; tests use it for byte-identical files).
pub fn now_utc() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0)
        });
    rfc3339(secs)
}

/// Seconds since the epoch to `YYYY-MM-DDTHH:MM:SSZ` (Hinnant's civil-from-
/// days algorithm; no date crate needed for one format).
pub fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_requests_record_their_head_not_the_merge_commit() {
        let payload = r#"{"pull_request": {"head": {"sha": "0123456789abcdef0123456789abcdef01234567"}, "merge_commit_sha": "ffffffffffffffffffffffffffffffffffffffff"}}"#;
        let head = Some("0123456789abcdef0123456789abcdef01234567".to_string());
        assert_eq!(pr_head_sha("pull_request", payload), head);
        assert_eq!(pr_head_sha("pull_request_target", payload), head);
        assert_eq!(pr_head_sha("push", payload), None);
        assert_eq!(pr_head_sha("pull_request", "not json"), None);
        assert_eq!(
            pr_head_sha("pull_request", r#"{"pull_request": {"head": {"sha": "x; rm"}}}"#),
            None
        );
    }

    fn sample() -> Baseline {
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
                },
                StoredQuery {
                    id: "q2".into(),
                    stratum: "default".into(),
                    values: vec![0.5, 0.0],
                    ranking: vec![],
                },
            ],
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

    #[test]
    fn newer_schema_is_refused() {
        let text = sample()
            .to_json_text()
            .replace("\"schema_version\": 1", "\"schema_version\": 7");
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
            let e = parse_err(&text.replace("\"schema_version\": 1", &format!("\"schema_version\": {v}")));
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

    #[test]
    fn a_file_holding_another_retrievers_baseline_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::new(d.path());
        std::fs::write(s.baseline_path("bm25"), sample().to_json_text()).unwrap();
        let e = s.load("bm25").unwrap_err().to_string();
        assert!(
            e.contains("bm25.json: corrupt baseline: it holds the baseline of `hybrid`, not of `bm25`"),
            "{e}"
        );
        std::fs::write(s.baseline_path("hybrid"), sample().to_json_text()).unwrap();
        assert_eq!(s.load("hybrid").unwrap(), Some(sample()));
    }

    #[test]
    fn lock_is_exclusive_and_released() {
        let d = tempfile::tempdir().unwrap();
        let a = Lock::acquire(d.path(), "x", Duration::from_millis(0)).unwrap();
        let e = Lock::acquire(d.path(), "x", Duration::from_millis(100))
            .unwrap_err()
            .to_string();
        assert!(e.contains("another rgate is updating"), "{e}");
        drop(a);
        Lock::acquire(d.path(), "x", Duration::from_millis(0)).unwrap();
    }

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_795_998_000), "2026-11-30T00:20:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn history_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::new(d.path());
        let b = sample();
        let e = HistoryEntry {
            time: "t".into(),
            commit: None,
            kind: "gate".into(),
            note: Some("n".into()),
            gold_fingerprint: Some("f".into()),
            verdict: Some("pass".into()),
            run: Some("runs/hybrid.jsonl".into()),
            aggregates: HistoryEntry::aggregates_of(&b.metrics, &b.aggregates),
        };
        s.append_history("hybrid", &e).unwrap();
        s.append_history("hybrid", &e).unwrap();
        assert_eq!(s.history("hybrid").unwrap(), vec![e.clone(), e]);
    }

    #[test]
    fn history_lines_without_run_still_load() {
        let v: Value = serde_json::from_str(
            r#"{"time":"t","commit":null,"kind":"gate","verdict":"pass","aggregates":{"all":{"mrr":0.5}}}"#,
        )
        .unwrap();
        let e = HistoryEntry::from_json(&v).unwrap();
        assert_eq!(e.run, None);
        assert_eq!(e.aggregates["all"]["mrr"], 0.5);
    }
}
