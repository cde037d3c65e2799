#![no_main]
//! Any bytes as a gold set (YAML, JSON, JSONL, TREC qrels): an error or a
//! gold set, never a panic, and a loaded set can be fingerprinted.

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Some((ext, body)) = common::split(data, &["yaml", "json", "jsonl", "txt", "qrels"]) else {
        return;
    };
    let path = common::scratch(ext, body);
    if let Ok((gold, _)) = rgate::gold::GoldSet::load(&path, None) {
        let _ = gold.fingerprint();
        let _ = gold.stratum_sizes();
    }
});
