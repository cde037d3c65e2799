#![no_main]
//! Any bytes as a run (TREC, JSON, JSONL) against a small fixed gold set:
//! an error or a judged run whose metrics compute, never a panic; then
//! the same against span labels and a chunk map.

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use rgate::chunks::ChunkMap;
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
        chunks: None,
    };
    if let Ok(run) = rgate::run::read(&path, &prep.gold, &prep.labels, &opts) {
        let scores = Scores::compute(&prep.metrics, &run.rankings, &prep.contexts);
        for v in scores.values.iter().flatten() {
            assert!((0.0..=1.0).contains(v), "metric value {v} outside [0, 1]");
        }
    }
    // The same bytes against span labels, located by the results
    // themselves or through a small chunk map.
    let (prep, chunks) = spans();
    let opts = RunOptions {
        chunks: Some(chunks.clone()),
        ..opts
    };
    if let Ok(run) = rgate::run::read(&path, &prep.gold, &prep.labels, &opts) {
        let scores = Scores::compute(&prep.metrics, &run.rankings, &prep.contexts);
        for v in scores.values.iter().flatten() {
            assert!((0.0..=1.0).contains(v), "metric value {v} outside [0, 1] with spans");
        }
    }
});

const SPAN_GOLD: &str = "version: 1\nqueries:\n  - id: q1\n    relevant: [d1, {doc: a, start: 0, end: 100, grade: 2}, {doc: a, start: 50, end: 60}]\n  - id: q2\n    relevant: [{doc: b, start: 10, end: 20, grade: 0}, {doc: a, start: 90, end: 400}]\n";

const CHUNKS: &str = "{\"id\": \"d1\", \"doc\": \"a\", \"start\": 0, \"end\": 40}\n{\"id\": \"d2\", \"doc\": \"a\", \"start\": 40, \"end\": 120}\n{\"id\": \"d3\", \"doc\": \"b\", \"start\": 0, \"end\": 15}\n{\"id\": \"d4\", \"doc\": \"a\", \"start\": 100, \"end\": 500}\n";

fn spans() -> &'static (Prepared, Arc<ChunkMap>) {
    static PREP: OnceLock<(Prepared, Arc<ChunkMap>)> = OnceLock::new();
    PREP.get_or_init(|| {
        let path = common::scratch("spans.yaml", SPAN_GOLD.as_bytes());
        let (gold, warnings) = GoldSet::load(&path, None).unwrap();
        let metrics =
            rgate::metrics::parse_list(&["recall@10", "precision@3", "ndcg@5", "mrr", "map", "r_precision", "judged@5"])
                .unwrap();
        let map = ChunkMap::load(&common::scratch("chunks.jsonl", CHUNKS.as_bytes())).unwrap();
        (Prepared::new(gold, warnings, metrics, 1), Arc::new(map))
    })
}
