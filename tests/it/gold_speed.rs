//! Issue 25 items 4, 7 (strata) and 11: a flip lost only on the candidate
//! list is lost in retrieval; gold sets load the same through every path;
//! a stratum per query is reported in full.

use crate::common;

use common::TestProject;
use serde_json::Value;

// ---- item 11: a flip lost only on a `candidates:` metric ----------------

/// 40 queries, qNN with one relevant chunk `rNN`. The rules gate
/// hit_rate@3 and candidates:recall@20, as tests/it/gate_stages.rs does.
const STAGES: &str = "gold: gold.yaml
baselines: baselines
metrics: [hit_rate@3, candidates:recall@20]
retrievers:
  - name: reranked
    run: final.json
    candidates: candidates.json
gate:
  resamples: 2000
  rules:
    - metric: hit_rate@3
      max_drop: 0.05
      strata: all
    - metric: candidates:recall@20
      max_drop: 0.05
      strata: all
";

fn qid(q: usize) -> String {
    format!("q{q:02}")
}

/// Candidates: `n1`..`n4`, then `rNN` (or `n20` for a lost query), then
/// `n5`..`n19`.
fn candidates(lose: impl Fn(usize) -> bool) -> String {
    let rows: Vec<String> = (0..40)
        .map(|q| {
            let mut ids: Vec<String> = (1..=4).map(|i| format!("n{i}")).collect();
            ids.push(if lose(q) { "n20".into() } else { format!("r{q:02}") });
            ids.extend((5..=19).map(|i| format!("n{i}")));
            format!("{:?}: {:?}", qid(q), ids)
        })
        .collect();
    format!("{{{}}}\n", rows.join(",\n"))
}

/// Final run: `rNN, n1, n2`, or for a missed query `n1, n2, n3`.
fn final_run(miss: impl Fn(usize) -> bool) -> String {
    let rows: Vec<String> = (0..40)
        .map(|q| {
            let ids: Vec<String> = if miss(q) {
                vec!["n1".into(), "n2".into(), "n3".into()]
            } else {
                vec![format!("r{q:02}"), "n1".into(), "n2".into()]
            };
            format!("{:?}: {:?}", qid(q), ids)
        })
        .collect();
    format!("{{{}}}\n", rows.join(",\n"))
}

/// The baseline's reranker already missed q00-q11 (its final run holds no
/// relevant chunk for them, at any rank), while their candidates held
/// `rNN`. Now the retrieval loses `rNN` for the same twelve: hit_rate@3 is
/// 0 before and after, candidates:recall@20 goes 1 -> 0. The only metric
/// lost is a candidates one, so each of the twelve flips was lost in
/// retrieval (before: `lost_in: null`, since SPEC's rule follows the
/// baseline's final run, which had nothing relevant to follow).
#[test]
fn a_flip_lost_only_on_the_candidates_is_lost_in_retrieval() {
    let mut gold = String::from("version: 1\nqueries:\n");
    for q in 0..40 {
        gold += &format!("  - id: {}\n    relevant: [r{q:02}]\n", qid(q));
    }
    let p = TestProject::new()
        .with_file("rgate.yaml", STAGES)
        .with_file("gold.yaml", gold)
        .with_file("candidates.json", candidates(|_| false))
        .with_file("final.json", final_run(|q| q < 12))
        .with_config("rgate.yaml")
        .with_env("SOURCE_DATE_EPOCH", "1795996800");
    let o = p.run(&["baseline", "update"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    p.write("candidates.json", candidates(|q| q < 12));
    let o = p.run(&["gate", "--format", "json", "reranked"]);
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    let flips = v["retrievers"][0]["flips"].as_array().unwrap();
    let got: Vec<(String, Value, Value)> = flips
        .iter()
        .map(|f| {
            (
                f["query_id"].as_str().unwrap().to_string(),
                f["lost"].clone(),
                f["lost_in"].clone(),
            )
        })
        .collect();
    let want: Vec<(String, Value, Value)> = (0..12)
        .map(|q| {
            (
                qid(q),
                serde_json::json!(["candidates:recall@20"]),
                Value::from("retrieval"),
            )
        })
        .collect();
    assert_eq!(got, want);
}
