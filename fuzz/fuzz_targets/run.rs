#![no_main]
//! Any bytes as a run (TREC, JSON, JSONL) against a small fixed gold set:
//! an error or a judged run whose metrics compute, never a panic.

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rgate::eval::Scores;
use rgate::gold::GoldSet;
use rgate::prepared::Prepared;
use rgate::run::{KeepIds, RunOptions};

#[path = "common.rs"]
mod common;

const GOLD: &str = "version: 1\nqueries:\n  - id: q1\n    stratum: a\n    relevant: [d1, d2]\n  - id: q2\n    stratum: b\n    relevant: {d3: 2, d4: 1, d5: 0}\n  - id: \"3\"\n    relevant: [d1]\n";

fn prepared() -> &'static Prepared {
    static PREP: OnceLock<Prepared> = OnceLock::new();
    PREP.get_or_init(|| {
        let path = common::scratch("gold.yaml", GOLD.as_bytes());
        let (gold, warnings) = GoldSet::load(&path, None).unwrap();
        let metrics = rgate::metrics::parse_list(&["recall@10", "ndcg@5", "mrr", "map"]).unwrap();
        Prepared::new(gold, warnings, metrics, 1)
    })
}

fuzz_target!(|data: &[u8]| {
    let prep = prepared();
    let Some((ext, body)) = common::split(data, &["trec", "json", "jsonl", "txt"]) else {
        return;
    };
    let path = common::scratch(ext, body);
    let opts = RunOptions {
        format: None,
        keep_ids: KeepIds::Depth(10),
    };
    if let Ok(run) = rgate::run::read(&path, &prep.gold, &prep.labels, &opts) {
        let scores = Scores::compute(&prep.metrics, &run.rankings, &prep.contexts);
        for v in scores.values.iter().flatten() {
            assert!((0.0..=1.0).contains(v), "metric value {v} outside [0, 1]");
        }
    }
});
