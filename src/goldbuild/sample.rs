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
    /// The text as first seen.
    pub text: String,
    pub stratum: String,
    /// How often the folded text occurs in the log.
    pub count: usize,
}

/// Which fields of a log row hold the text and the stratum.
#[derive(Debug, Clone)]
pub struct LogFields {
    pub text: String,
    pub stratum: String,
}

impl Default for LogFields {
    fn default() -> Self {
        LogFields {
            text: "text".into(),
            stratum: "stratum".into(),
        }
    }
}

/// The distinct queries of a log (JSONL objects, or CSV with a header), in
/// order of first appearance, and the number of log rows read.
pub fn read_log(path: &Path, fields: &LogFields) -> Result<(Vec<LogQuery>, usize)> {
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
        let si = headers.iter().position(|h| h == fields.stratum);
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
            let s = match obj.get(&fields.stratum) {
                Some(serde_json::Value::String(s)) => Some(s.clone()),
                Some(serde_json::Value::Null) | None => None,
                Some(other) => Some(other.to_string()),
            };
            rows.push((i + 1, t, s));
        }
    }
    let total = rows.len();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<LogQuery> = Vec::new();
    for (_, t, s) in rows {
        let folded = fold(&t);
        if folded.is_empty() {
            continue;
        }
        match seen.get(&folded) {
            Some(&i) => out[i].count += 1,
            None => {
                seen.insert(folded, out.len());
                let stratum = s
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| DEFAULT_STRATUM.to_string());
                out.push(LogQuery {
                    id: query_id(&t),
                    text: t.trim().to_string(),
                    stratum,
                    count: 1,
                });
            }
        }
    }
    Ok((out, total))
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
