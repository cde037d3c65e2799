//! Where each label of a gold set came from: who graded it (a person or a
//! model), when, and whether a person verified it. Kept beside the labels
//! in the native gold file, per query:
//!
//! ```yaml
//! provenance:
//!   docs/auth.md#3: {source: person, labeler: ana, at: "2026-11-30T10:00:00Z", verified: true}
//! ```
//!
//! Metrics ignore it; `gold validate` and `gold stats` read it to warn about
//! unverified labels and queries judged by a single labeler.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::diag::{input_error, input_error_hint};
use crate::gold::{detect_format, GoldFormat};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labeler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    #[serde(default)]
    pub verified: bool,
}

/// Query id -> chunk id -> provenance; empty for TREC qrels, which have no
/// place for it.
pub type ProvenanceMap = HashMap<String, HashMap<String, Provenance>>;

/// The provenance recorded in a native gold file (the file is assumed to
/// have loaded as a gold set already, so only this key is checked here).
pub fn read(path: &Path) -> Result<ProvenanceMap> {
    let bytes = std::fs::read(path).map_err(|e| input_error(path, None, format!("cannot read: {e}")))?;
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    let text = String::from_utf8_lossy(bytes);
    let mut out = ProvenanceMap::new();
    let mut add = |q: &serde_yaml::Value, line: Option<usize>| -> Result<()> {
        let Some(p) = q.get("provenance") else {
            return Ok(());
        };
        let id = match q.get("id") {
            Some(serde_yaml::Value::String(s)) => s.clone(),
            Some(serde_yaml::Value::Number(n)) => n.to_string(),
            _ => return Ok(()),
        };
        let m: HashMap<String, Provenance> = serde_yaml::from_value(p.clone()).map_err(|e| {
            input_error_hint(
                path,
                line,
                format!("query `{id}`: bad provenance: {e}"),
                "provenance maps a chunk id to {source: person|model, labeler, at, verified}",
            )
        })?;
        out.insert(id, m);
        Ok(())
    };
    match detect_format(path, bytes) {
        GoldFormat::Qrels => {}
        GoldFormat::Jsonl => {
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let v: serde_yaml::Value = serde_json::from_str(line)
                    .map_err(|e| input_error(path, Some(i + 1), format!("not a JSON object: {e}")))?;
                add(&v, Some(i + 1))?;
            }
        }
        GoldFormat::Yaml | GoldFormat::Json => {
            let v: serde_yaml::Value = serde_yaml::from_str(&text).map_err(|e| {
                input_error(
                    path,
                    e.location().map(|l| l.line()),
                    format!("invalid gold set: {e}"),
                )
            })?;
            if let Some(serde_yaml::Value::Sequence(qs)) = v.get("queries") {
                for q in qs {
                    add(q, None)?;
                }
            }
        }
    }
    Ok(out)
}

/// What a gold set's provenance says about how far to trust it.
#[derive(Debug, Default, PartialEq)]
pub struct Trust {
    /// (query, chunk) of labels no person verified.
    pub unverified: Vec<(String, String)>,
    /// Queries whose recorded labels all come from one labeler: nobody
    /// second-guessed them.
    pub single_labeler: Vec<String>,
    /// Labels with a recorded provenance, and all labels.
    pub recorded: usize,
    pub labels: usize,
}

pub fn trust(gold: &crate::gold::GoldSet, prov: &ProvenanceMap) -> Trust {
    let mut t = Trust::default();
    for q in &gold.queries {
        t.labels += q.labels.len();
        let Some(p) = prov.get(&q.id) else {
            continue;
        };
        let mut labelers: Vec<&str> = Vec::new();
        for l in &q.labels {
            let Some(lp) = p.get(l.id) else {
                continue;
            };
            t.recorded += 1;
            if !lp.verified {
                t.unverified.push((q.id.clone(), l.id.to_string()));
            }
            let who = lp.labeler.as_deref().unwrap_or(lp.source.as_str());
            if !labelers.contains(&who) {
                labelers.push(who);
            }
        }
        if labelers.len() == 1 && q.labels.len() > 1 {
            t.single_labeler.push(q.id.clone());
        }
    }
    t
}
