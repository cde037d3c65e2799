//! What `eval`'s JSON report says about the run itself: the format rgate
//! detected (one per form in the README's run table; a mislabelled format
//! sends a user debugging the wrong parser) and the gold queries it missed.

mod common;

use std::path::PathBuf;

use common::{fixture, rgate, run};
use serde_json::Value;

fn eval_json(gold: PathBuf, run_file: PathBuf, extra: &[&str]) -> Value {
    let mut c = rgate();
    c.args(["eval", "--format", "json", "-m", "mrr", "--gold"])
        .arg(gold)
        .arg("--run")
        .arg(run_file)
        .args(extra);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.stdout))
}

fn demo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("config/demo")
        .join(rel)
}

#[test]
fn detected_format_is_reported() {
    let trec = eval_json(
        fixture("trec_eval/qrels.test"),
        fixture("trec_eval/results.test"),
        &[],
    );
    assert_eq!(trec["run_format"], "trec", "{trec}");
    let json = eval_json(fixture("seed/gold.json"), fixture("seed/run_a.json"), &[]);
    assert_eq!(json["run_format"], "json", "{json}");
    let jsonl = eval_json(demo("gold.yaml"), demo("runs/bm25.jsonl"), &[]);
    assert_eq!(jsonl["run_format"], "jsonl", "{jsonl}");
}

/// `missing_queries` lists the gold queries the run never answered:
/// results.trunc has rankings for 301 and 303 of qrels.test's 301-303.
#[test]
fn missing_queries_are_listed() {
    let gold = || fixture("trec_eval/qrels.test");
    let trunc = eval_json(gold(), fixture("trec_eval/results.trunc"), &[]);
    assert_eq!(trunc["missing_queries"], serde_json::json!(["302"]), "{trunc}");
    let full = eval_json(gold(), fixture("trec_eval/results.test"), &[]);
    assert_eq!(full["missing_queries"], serde_json::json!([]), "{full}");
}
