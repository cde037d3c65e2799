//! One line of a retriever's history (`NAME.history.jsonl`): a baseline
//! update or a recorded gate, with the means it saw.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::format::{num, ScopeMeans};
use crate::metrics::Metric;

// ---- history -------------------------------------------------------------------

/// The kind of the entry a gate report adds for the run it reports on:
/// not recorded, drawn at the end of the trend so the chart shows the
/// result under review beside the ones before it.
pub const THIS_RUN: &str = "this run";

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

#[cfg(test)]
mod tests {
    use super::*;

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
