//! `gold sample`: a stratified random sample of real queries from a log.
//!
//! Near-duplicates (the same text after case and whitespace folding) count
//! once, so a query asked a thousand times is one candidate, not a thousand:
//! the gold set should cover the kinds of queries, and the strata carry the
//! mix. Within each stratum, queries are taken in the order of a seeded
//! hash of their folded text (bottom-k sampling): uniformly random for a
//! seed, identical on every machine, and a larger sample extends a smaller
//! one instead of reshuffling it.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;

use super::{excerpt, fold, query_id, seeded_key};
use crate::diag::{input_error, input_error_hint, line_of};
use crate::gold::DEFAULT_STRATUM;

/// One distinct query of the log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogQuery {
    pub id: String,
    /// The text as the log spells it most often (ties: first seen).
    pub text: String,
    pub stratum: String,
    /// How often the folded text occurs in the log.
    pub count: usize,
}

/// Which fields of a log row hold the text and the stratum.
#[derive(Debug, Clone)]
pub struct LogFields {
    pub text: String,
    /// `None`: detect one ([`STRATUM_FIELDS`]).
    pub stratum: Option<String>,
}

impl Default for LogFields {
    fn default() -> Self {
        LogFields {
            text: "text".into(),
            stratum: None,
        }
    }
}

/// The field names taken for a stratum when none is named, in this order
/// (matched without regard to case): `stratum`, SPEC's field, whenever a
/// row holds it; else the first that holds a string in at least half of
/// the log's rows, with 2 to [`MAX_STRATA`] distinct values
/// and at most one distinct value per two rows that have it. A field with
/// one value splits nothing; one with a value per row is an id, not a
/// kind of query.
pub const STRATUM_FIELDS: [&str; 10] = [
    "stratum",
    "strata",
    "segment",
    "type",
    "query_type",
    "category",
    "intent",
    "kind",
    "class",
    "topic",
];
const MAX_STRATA: usize = 50;

/// Where the strata of a log came from.
#[derive(Debug, Clone, PartialEq)]
pub enum StratumSource {
    /// The field named (`found`: whether any row holds it).
    Named { field: String, found: bool },
    /// Found by the rule of [`STRATUM_FIELDS`].
    Detected(String),
    /// None named, none found: every query is in the default stratum.
    /// `fields`: the names the log's rows hold, for the hint.
    Missing { fields: Vec<String> },
}

impl StratumSource {
    /// Whether the strata mean something (a field was found).
    pub fn found(&self) -> bool {
        matches!(
            self,
            StratumSource::Named { found: true, .. } | StratumSource::Detected(_)
        )
    }

    /// One line for stderr saying where the strata came from, when the
    /// user should hear it: a field detected, or every query in
    /// `default` (and how to choose the field).
    pub fn note(&self) -> Option<String> {
        let fields = |f: &[String]| {
            if f.is_empty() {
                String::new()
            } else {
                format!(
                    " (the log's fields: {})",
                    f.iter().map(|x| excerpt(x)).collect::<Vec<_>>().join(", ")
                )
            }
        };
        match self {
            StratumSource::Named { found: true, .. } => None,
            // The field SPEC documents: nothing to say.
            StratumSource::Detected(f) if f == "stratum" => None,
            StratumSource::Named { field, found: false } => Some(format!(
                "no log row has a `{}` field: every query went to stratum `{DEFAULT_STRATUM}`; name the stratum field with --stratum-field",
                excerpt(field)
            )),
            StratumSource::Detected(f) => Some(format!(
                "strata taken from the log's `{}` field (pass --stratum-field to choose another)",
                excerpt(f)
            )),
            StratumSource::Missing { fields: f } => Some(format!(
                "the log has no stratum field (looked for {}): every query went to stratum `{DEFAULT_STRATUM}`; name one with --stratum-field F{}",
                STRATUM_FIELDS.join(", "),
                fields(f)
            )),
        }
    }
}

/// A log as read: its distinct queries in order of first appearance, the
/// number of rows read, and where the strata came from.
#[derive(Debug, Clone)]
pub struct Log {
    pub queries: Vec<LogQuery>,
    pub rows: usize,
    pub stratum: StratumSource,
}

/// Picks the stratum field by the rule of [`STRATUM_FIELDS`]; `values`
/// holds each row's value of every candidate field present.
fn detect(values: &[Vec<(usize, String)>], rows: usize) -> Option<usize> {
    (0..STRATUM_FIELDS.len()).find(|&c| {
        let vals: Vec<&str> = values
            .iter()
            .filter_map(|row| row.iter().find(|(i, _)| *i == c).map(|(_, v)| v.trim()))
            .filter(|v| !v.is_empty())
            .collect();
        if c == 0 {
            return !vals.is_empty();
        }
        let distinct: std::collections::HashSet<&str> = vals.iter().copied().collect();
        2 * vals.len() >= rows
            && (2..=MAX_STRATA).contains(&distinct.len())
            && 2 * distinct.len() <= vals.len()
    })
}

/// The candidate a field name is, if any.
fn candidate(name: &str) -> Option<usize> {
    STRATUM_FIELDS.iter().position(|c| c.eq_ignore_ascii_case(name))
}

/// Reads a log (JSONL objects, or CSV with a header): see [`Log`].
pub fn read_log(path: &Path, fields: &LogFields) -> Result<Log> {
    let bytes = crate::input::read(path, "query log", crate::input::LOG_LIMIT, "check the path")?;
    let bytes = crate::diag::strip_bom(&bytes);
    let text = std::str::from_utf8(bytes)
        .map_err(|e| input_error(path, Some(line_of(bytes, e.valid_up_to())), "not valid UTF-8"))?;
    let is_csv = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
        || !text.trim_start().starts_with('{');
    let mut rows: Vec<(usize, String, Option<String>)> = Vec::new();
    // Each row's values of the candidate stratum fields (see `detect`),
    // the field names seen, and whether the named field occurs.
    let mut values: Vec<Vec<(usize, String)>> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut found = false;
    // The candidates' names as the log spells them.
    let mut spelled: Vec<Option<String>> = vec![None; STRATUM_FIELDS.len()];
    if is_csv {
        let mut r = csv::ReaderBuilder::new()
            .flexible(true)
            .from_reader(text.as_bytes());
        let headers = r
            .headers()
            .map_err(|e| input_error(path, Some(1), format!("not a CSV log: {e}")))?
            .clone();
        let ti = headers.iter().position(|h| h == fields.text).ok_or_else(|| {
            input_error_hint(
                path,
                Some(1),
                format!("the header has no `{}` column", excerpt(&fields.text)),
                format!(
                    "name the text column with --text-field; the columns are: {}",
                    headers.iter().map(excerpt).collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
        let si = fields
            .stratum
            .as_ref()
            .and_then(|f| headers.iter().position(|h| h == f));
        // Candidate columns (by name), when none is named.
        let cands: Vec<(usize, usize)> = if fields.stratum.is_none() {
            headers
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != ti)
                .filter_map(|(i, h)| candidate(h).map(|c| (c, i)))
                .inspect(|&(c, i)| spelled[c] = Some(headers[i].to_string()))
                .collect()
        } else {
            Vec::new()
        };
        names = headers.iter().map(str::to_string).collect();
        for rec in r.records() {
            let rec = rec.map_err(|e| {
                input_error(
                    path,
                    e.position().map(|p| p.line() as usize),
                    format!("bad CSV row: {e}"),
                )
            })?;
            let line = rec.position().map_or(0, |p| p.line() as usize);
            let t = rec.get(ti).unwrap_or("").to_string();
            let s = si.and_then(|i| rec.get(i)).map(str::to_string);
            found |= s.as_deref().is_some_and(|s| !s.trim().is_empty());
            values.push(
                cands
                    .iter()
                    .filter_map(|&(c, i)| rec.get(i).map(|v| (c, v.to_string())))
                    .collect(),
            );
            rows.push((line, t, s));
        }
    } else {
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            if l.is_empty() {
                continue;
            }
            let v: serde_json::Value = serde_json::from_str(l).map_err(|e| {
                input_error_hint(
                    path,
                    Some(i + 1),
                    format!("not a JSON object: {e}"),
                    "a JSONL log has one object per line",
                )
            })?;
            let obj = v
                .as_object()
                .ok_or_else(|| input_error(path, Some(i + 1), "not a JSON object"))?;
            let t = match obj.get(&fields.text) {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(_) => {
                    return Err(input_error(
                        path,
                        Some(i + 1),
                        format!("field `{}` is not a string", excerpt(&fields.text)),
                    ))
                }
                None => {
                    return Err(input_error_hint(
                        path,
                        Some(i + 1),
                        format!("no `{}` field", excerpt(&fields.text)),
                        format!(
                            "name the text field with --text-field; this row has: {}",
                            obj.keys().map(|k| excerpt(k)).collect::<Vec<_>>().join(", ")
                        ),
                    ))
                }
            };
            let value = |v: &serde_json::Value| match v {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Null => None,
                other => Some(other.to_string()),
            };
            let s = fields.stratum.as_ref().and_then(|f| obj.get(f)).and_then(value);
            found |= s.as_deref().is_some_and(|s| !s.trim().is_empty());
            if fields.stratum.is_none() {
                values.push(
                    obj.iter()
                        .filter(|(k, _)| **k != fields.text)
                        .filter_map(|(k, v)| {
                            let c = candidate(k)?;
                            spelled[c].get_or_insert_with(|| k.clone());
                            Some((c, value(v)?))
                        })
                        .collect(),
                );
                for k in obj.keys() {
                    if names.len() < 20 && !names.contains(k) {
                        names.push(k.clone());
                    }
                }
            }
            rows.push((i + 1, t, s));
        }
    }
    let total = rows.len();
    let stratum = match &fields.stratum {
        Some(f) => StratumSource::Named {
            field: f.clone(),
            found,
        },
        None => match detect(&values, total) {
            Some(c) => {
                // Each row's value of the detected field becomes its stratum.
                for (row, vals) in rows.iter_mut().zip(&values) {
                    row.2 = vals.iter().find(|(i, _)| *i == c).map(|(_, v)| v.clone());
                }
                StratumSource::Detected(
                    spelled[c]
                        .clone()
                        .unwrap_or_else(|| STRATUM_FIELDS[c].to_string()),
                )
            }
            None => StratumSource::Missing { fields: names },
        },
    };
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<LogQuery> = Vec::new();
    // Per distinct query, each spelling of it (trimmed text) with its
    // count, in the order first seen: the text kept is the most frequent
    // one (ties: the first seen), so "ALLI" typed once in capitals does
    // not stand for the "alli" the log holds a hundred times.
    // (count, order first seen) per spelling: a map, since one query may
    // come in many spellings (whitespace variants) in a large log.
    let mut spellings: Vec<HashMap<String, (usize, usize)>> = Vec::new();
    for (_, t, s) in rows {
        let folded = fold(&t);
        if folded.is_empty() {
            continue;
        }
        let text = t.trim();
        match seen.get(&folded) {
            Some(&i) => {
                out[i].count += 1;
                let sp = &mut spellings[i];
                let next = sp.len();
                sp.entry(text.to_string()).or_insert((0, next)).0 += 1;
            }
            None => {
                seen.insert(folded, out.len());
                let stratum = s
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| DEFAULT_STRATUM.to_string());
                out.push(LogQuery {
                    id: query_id(&t),
                    text: text.to_string(),
                    stratum,
                    count: 1,
                });
                spellings.push(HashMap::from([(text.to_string(), (1, 0))]));
            }
        }
    }
    for (q, sp) in out.iter_mut().zip(spellings) {
        // The most frequent; among equals the earliest seen.
        if let Some((text, _)) = sp
            .into_iter()
            .max_by_key(|(_, (c, first))| (*c, std::cmp::Reverse(*first)))
        {
            q.text = text;
        }
    }
    Ok(Log {
        queries: out,
        rows: total,
        stratum,
    })
}

/// How many to take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Size {
    /// Up to N from every stratum.
    PerStratum(usize),
    /// N in all, split across strata in proportion to their distinct
    /// queries (largest remainders), at least one per stratum while N allows.
    Total(usize),
}

/// Strata in order of first appearance, with their distinct queries.
pub fn strata(queries: &[LogQuery]) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, q) in queries.iter().enumerate() {
        match out.iter_mut().find(|(s, _)| *s == q.stratum) {
            Some((_, v)) => v.push(i),
            None => out.push((q.stratum.clone(), vec![i])),
        }
    }
    out
}

/// Each stratum's quota under `size`.
pub fn quotas(sizes: &[usize], size: Size) -> Vec<usize> {
    match size {
        Size::PerStratum(n) => sizes.iter().map(|&s| s.min(n)).collect(),
        Size::Total(n) => {
            let total: usize = sizes.iter().sum();
            if n >= total {
                return sizes.to_vec();
            }
            let mut q: Vec<usize> = vec![0; sizes.len()];
            let mut left = n;
            // A stratum left out of the sample cannot be measured at all:
            // one each first, while there are enough to go round.
            if n >= sizes.iter().filter(|&&s| s > 0).count() {
                for (qi, &s) in q.iter_mut().zip(sizes) {
                    if s > 0 {
                        *qi = 1;
                        left -= 1;
                    }
                }
            }
            // Then in proportion, by largest remainder of the exact shares.
            let exact: Vec<f64> = sizes
                .iter()
                .map(|&s| n as f64 * s as f64 / total as f64)
                .collect();
            for (i, e) in exact.iter().enumerate() {
                let want = (e.floor() as usize).min(sizes[i]);
                let add = want.saturating_sub(q[i]).min(left);
                q[i] += add;
                left -= add;
            }
            let mut order: Vec<usize> = (0..sizes.len()).collect();
            order.sort_by(|&a, &b| {
                let ra = exact[a] - q[a] as f64;
                let rb = exact[b] - q[b] as f64;
                rb.total_cmp(&ra).then(a.cmp(&b))
            });
            while left > 0 {
                let mut moved = false;
                for &i in &order {
                    if left > 0 && q[i] < sizes[i] {
                        q[i] += 1;
                        left -= 1;
                        moved = true;
                    }
                }
                if !moved {
                    break;
                }
            }
            q
        }
    }
}

/// The sample: per stratum (in order of first appearance), its quota of
/// queries in seeded order.
pub fn sample(queries: &[LogQuery], size: Size, seed: u64) -> Vec<LogQuery> {
    let strata = strata(queries);
    let sizes: Vec<usize> = strata.iter().map(|(_, v)| v.len()).collect();
    let quotas = quotas(&sizes, size);
    let mut out = Vec::new();
    for ((_, members), quota) in strata.iter().zip(quotas) {
        let mut keyed: Vec<([u8; 32], usize)> = members
            .iter()
            .map(|&i| (seeded_key(seed, &[&fold(&queries[i].text)]), i))
            .collect();
        keyed.sort();
        out.extend(keyed.iter().take(quota).map(|&(_, i)| queries[i].clone()));
    }
    out
}

/// Each stratum's share of the log's distinct queries and of the sample.
pub fn mix(log: &[LogQuery], sampled: &[LogQuery]) -> Vec<(String, usize, usize)> {
    strata(log)
        .into_iter()
        .map(|(s, members)| {
            let n = sampled.iter().filter(|q| q.stratum == s).count();
            (s, members.len(), n)
        })
        .collect()
}

/// Each stratum's share of the gold set beside its share of the log's
/// distinct queries (strata of either, gold's first), and the total
/// variation distance between the two mixes: 0 when they match, 1 when
/// they share no stratum.
pub fn drift(gold_strata: &[(String, usize)], log: &[LogQuery]) -> (Vec<(String, f64, f64)>, f64) {
    let gold_n: usize = gold_strata.iter().map(|(_, n)| n).sum();
    let log_strata = strata(log);
    let mut names: Vec<String> = gold_strata.iter().map(|(s, _)| s.clone()).collect();
    for (s, _) in &log_strata {
        if !names.contains(s) {
            names.push(s.clone());
        }
    }
    let share = |n: usize, of: usize| if of == 0 { 0.0 } else { n as f64 / of as f64 };
    let rows: Vec<(String, f64, f64)> = names
        .into_iter()
        .map(|s| {
            let g = gold_strata.iter().find(|(n, _)| *n == s).map_or(0, |(_, n)| *n);
            let l = log_strata
                .iter()
                .find(|(n, _)| *n == s)
                .map_or(0, |(_, v)| v.len());
            let gs = share(g, gold_n);
            (s, gs, share(l, log.len()))
        })
        .collect();
    let tvd = rows.iter().map(|(_, g, l)| (g - l).abs()).sum::<f64>() / 2.0;
    (rows, tvd)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str, stratum: &str) -> LogQuery {
        LogQuery {
            id: query_id(text),
            text: text.into(),
            stratum: stratum.into(),
            count: 1,
        }
    }

    fn log_of(text: &str, name: &str, stratum: Option<&str>) -> Log {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        read_log(
            &p,
            &LogFields {
                text: "text".into(),
                stratum: stratum.map(str::to_string),
            },
        )
        .unwrap()
    }

    /// #49: the log's most frequent spelling of a query is kept, the first
    /// seen among equally frequent ones; the id (of the folded text) and
    /// the count do not depend on which.
    #[test]
    fn the_most_frequent_spelling_is_kept() {
        let rows = |texts: &[&str]| {
            texts
                .iter()
                .map(|t| format!("{{\"text\": \"{t}\"}}\n"))
                .collect::<String>()
        };
        // "ALLI" first, "alli" three times, " Alli " once.
        let l = log_of(
            &rows(&["ALLI", "alli", "alli", " Alli ", "alli", "orlistat"]),
            "log.jsonl",
            None,
        );
        assert_eq!(l.queries.len(), 2);
        assert_eq!(l.queries[0].text, "alli");
        assert_eq!(l.queries[0].count, 5);
        assert_eq!(l.queries[0].id, query_id("alli"));
        assert_eq!(l.queries[1].text, "orlistat");
        // A tie (two "ALLI", two "alli"): the first seen.
        let l = log_of(&rows(&["ALLI", "alli", "alli", "ALLI"]), "log.jsonl", None);
        assert_eq!(l.queries[0].text, "ALLI");
        let l = log_of(&rows(&["alli", "ALLI", "ALLI", "alli"]), "log.jsonl", None);
        assert_eq!(l.queries[0].text, "alli");
    }

    /// The rule of STRATUM_FIELDS, case by case: `type` found in JSONL and
    /// CSV; a field with one value, or a value per row, is no stratum; the
    /// earlier name in the list wins; a named field is taken as named.
    #[test]
    fn a_likely_stratum_field_is_detected() {
        let jsonl = "{\"text\": \"a\", \"type\": \"howto\", \"user\": \"u1\"}\n{\"text\": \"b\", \"type\": \"howto\"}\n{\"text\": \"c\", \"type\": \"lookup\"}\n{\"text\": \"d\", \"type\": \"lookup\"}\n";
        let l = log_of(jsonl, "log.jsonl", None);
        assert_eq!(l.stratum, StratumSource::Detected("type".into()));
        let strata: Vec<&str> = l.queries.iter().map(|q| q.stratum.as_str()).collect();
        assert_eq!(strata, ["howto", "howto", "lookup", "lookup"]);
        assert!(l
            .stratum
            .note()
            .unwrap()
            .contains("strata taken from the log's `type` field"));
        let csv = "text,Category,id\na,x,1\nb,x,2\nc,y,3\nd,y,4\n";
        let l = log_of(csv, "log.csv", None);
        assert_eq!(l.stratum, StratumSource::Detected("Category".into()));
        // `id`-like (a value per row) and one-valued fields are not strata.
        let csv = "text,type,kind\na,t1,k\nb,t2,k\nc,t3,k\nd,t4,k\n";
        let l = log_of(csv, "log.csv", None);
        assert_eq!(
            l.stratum,
            StratumSource::Missing {
                fields: vec!["text".into(), "type".into(), "kind".into()]
            }
        );
        assert!(l.queries.iter().all(|q| q.stratum == DEFAULT_STRATUM));
        assert!(l.stratum.note().unwrap().contains("every query went to stratum `default`; name one with --stratum-field F (the log's fields: text, type, kind)"));
        // Both present: `stratum` comes before `intent`.
        let jsonl = "{\"text\": \"a\", \"intent\": \"i1\", \"stratum\": \"s1\"}\n{\"text\": \"b\", \"intent\": \"i1\", \"stratum\": \"s1\"}\n{\"text\": \"c\", \"intent\": \"i2\", \"stratum\": \"s2\"}\n{\"text\": \"d\", \"intent\": \"i2\", \"stratum\": \"s2\"}\n";
        assert_eq!(
            log_of(jsonl, "l.jsonl", None).stratum,
            StratumSource::Detected("stratum".into())
        );
        let named = log_of(jsonl, "l.jsonl", Some("intent"));
        assert_eq!(named.queries[0].stratum, "i1");
        assert!(named.stratum.note().is_none());
        let absent = log_of(jsonl, "l.jsonl", Some("segment"));
        assert!(!absent.stratum.found());
        assert!(absent
            .stratum
            .note()
            .unwrap()
            .contains("no log row has a `segment` field"));
    }

    #[test]
    fn quotas_by_hand() {
        // 60/30/10 of 100 distinct queries, 10 wanted: 6/3/1.
        assert_eq!(quotas(&[60, 30, 10], Size::Total(10)), vec![6, 3, 1]);
        // 1 stratum of 97 and two of 1, 5 wanted: one each, then the rest to
        // the big one (its exact share is 4.85).
        assert_eq!(quotas(&[97, 1, 2], Size::Total(5)), vec![3, 1, 1]);
        // Exact shares 3.5/3.5/3: the tie goes to the first.
        assert_eq!(quotas(&[35, 35, 30], Size::Total(10)), vec![4, 3, 3]);
        assert_eq!(quotas(&[5, 2], Size::PerStratum(3)), vec![3, 2]);
        assert_eq!(quotas(&[5, 2], Size::Total(50)), vec![5, 2]);
    }

    #[test]
    fn sampling_is_seeded_and_extends() {
        let log: Vec<LogQuery> = (0..50)
            .map(|i| q(&format!("query {i}"), if i % 5 == 0 { "rare" } else { "common" }))
            .collect();
        let a = sample(&log, Size::Total(10), 7);
        let b = sample(&log, Size::Total(10), 7);
        assert_eq!(a, b);
        assert_ne!(a, sample(&log, Size::Total(10), 8));
        let per = |s: &[LogQuery], st: &str| s.iter().filter(|q| q.stratum == st).count();
        assert_eq!((per(&a, "common"), per(&a, "rare")), (8, 2));
        // A bigger sample keeps every query of the smaller one.
        let big = sample(&log, Size::Total(20), 7);
        assert!(a.iter().all(|x| big.contains(x)));
    }
}
