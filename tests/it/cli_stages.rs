//! Two stages, retrieve then rerank (issue 14), end to end on
//! `tests/fixtures/stages`, every expected value worked out by hand:
//!
//! | query | stratum | labels       | candidates       | final (top 2) | fate at 2        |
//! |-------|---------|--------------|------------------|---------------|------------------|
//! | q1    | how-to  | a=2, b=1     | x1, b, x2, a     | b, x1         | reached          |
//! | q2    | how-to  | c=1          | x1, c            | x1, y9        | dropped_by_rerank|
//! | q3    | lookup  | d=1          | x1, x2           | x1, x2        | missed_by_retrieval |
//! | q4    | lookup  | e=3, f=0     | f, x1, e         | e, f          | reached          |
//!
//! - hit_rate@2: 1, 0, 0, 1 (all 0.5); its ceiling 1, 1, 0, 1 (0.75).
//! - ndcg@2, final: q1 = 1 / (2 + 1/log2 3) = 0.380094, q4 = 3/3 = 1, so
//!   all = 1.380094 / 4 = 0.345023, how-to 0.190047, lookup 0.5; ceiling:
//!   q1 reordered a, b is ideal (1), q2 c first (1), q4 e first (1): 0.75.
//! - candidates:recall@4: 1, 1, 0, 1 (f has grade 0): 0.75; how-to 1.
//! - y9 in q2's final run is not among its candidates: one warning.

use crate::common;

use common::{fixture, rgate, run};

fn eval(extra: &[&str]) -> common::Out {
    let mut c = rgate();
    c.arg("eval")
        .arg("--gold")
        .arg(fixture("stages/gold.yaml"))
        .arg("--run")
        .arg(fixture("stages/final.json"))
        .args(extra);
    run(c)
}

fn close(v: &serde_json::Value, want: f64) -> bool {
    (v.as_f64().unwrap() - want).abs() < 1e-6
}

#[test]
fn json_has_candidates_metrics_ceilings_and_the_stage_of_each_query() {
    let cands = fixture("stages/candidates.json");
    let o = eval(&[
        "--candidates",
        cands.to_str().unwrap(),
        "-m",
        "hit_rate@2,ndcg@2,candidates:R@4",
        "--format",
        "json",
        "--per-query",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let m = &v["metrics"];
    assert!(close(&m["hit_rate@2"]["all"], 0.5));
    assert!(close(&m["ndcg@2"]["all"], 0.345023));
    assert!(close(&m["ndcg@2"]["how-to"], 0.190047));
    assert!(close(&m["candidates:recall@4"]["all"], 0.75));
    assert!(close(&m["candidates:recall@4"]["how-to"], 1.0));
    let s = &v["stages"];
    assert_eq!(s["cutoff"], 2);
    assert_eq!(
        s["lost"]["all"],
        serde_json::json!({"reached": 2, "dropped_by_rerank": 1, "missed_by_retrieval": 1})
    );
    assert_eq!(
        s["lost"]["how-to"],
        serde_json::json!({"reached": 1, "dropped_by_rerank": 1, "missed_by_retrieval": 0})
    );
    assert_eq!(
        s["lost"]["lookup"],
        serde_json::json!({"reached": 1, "dropped_by_rerank": 0, "missed_by_retrieval": 1})
    );
    assert!(close(&s["ceiling"]["hit_rate@2"]["all"], 0.75));
    assert!(close(&s["ceiling"]["hit_rate@2"]["how-to"], 1.0));
    assert!(close(&s["ceiling"]["ndcg@2"]["all"], 0.75));
    assert!(close(&s["ceiling"]["ndcg@2"]["lookup"], 0.5));
    // Exactly SPEC's keys, and no ceiling for the first stage's metrics.
    let keys: Vec<&String> = s.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["cutoff", "lost", "ceiling"]);
    assert!(s["ceiling"].get("candidates:recall@4").is_none());
    let stages: Vec<&str> = v["per_query"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["stage"].as_str().unwrap())
        .collect();
    assert_eq!(
        stages,
        ["reached", "dropped_by_rerank", "missed_by_retrieval", "reached"]
    );
    assert_eq!(v["absent_from_candidates"], serde_json::json!({"q2": ["y9"]}));
    // The added chunk: one line on stderr, the ids only in the JSON.
    let warned: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.contains("not among the candidates"))
        .collect();
    assert_eq!(warned.len(), 1, "{}", o.stderr);
    assert!(warned[0].contains("1 chunk in 1 query"), "{}", warned[0]);
    assert!(!warned[0].contains("y9"), "{}", warned[0]);
}

#[test]
fn the_cutoff_defaults_to_the_smallest_final_cutoff() {
    let cands = fixture("stages/candidates.json");
    let o = eval(&[
        "--candidates",
        cands.to_str().unwrap(),
        "-m",
        "ndcg@1,hit_rate@2",
        "--format",
        "json",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["stages"]["cutoff"], 1);
    // ndcg@1 ceiling: every query with a relevant candidate puts its best
    // grade first: q1 a (2/2), q2 c, q4 e: 3 of 4.
    assert!(close(&v["stages"]["ceiling"]["ndcg@1"]["all"], 0.75));
    let o = eval(&[
        "--candidates",
        cands.to_str().unwrap(),
        "-m",
        "ndcg@1,hit_rate@2",
        "--cutoff",
        "2",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["stages"]["cutoff"], 2);
}

#[test]
fn table_shows_final_ceiling_and_ratio() {
    let cands = fixture("stages/candidates.json");
    let o = eval(&["--candidates", cands.to_str().unwrap(), "-m", "hit_rate@2,ndcg@2"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("· cutoff 2\n"), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("\nall     4        2                  1                    1\n"),
        "{}",
        o.stdout
    );
    // 0.5 / 0.75 and 0.345023 / 0.75.
    assert!(
        o.stdout
            .contains("hit_rate@2  all    0.5000   0.7500         0.6667"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("ndcg@2      all    0.3450   0.7500         0.4600"),
        "{}",
        o.stdout
    );
}

#[test]
fn trec_lines_name_the_candidates_stage() {
    let cands = fixture("stages/candidates.json");
    let o = eval(&[
        "--candidates",
        cands.to_str().unwrap(),
        "-m",
        "P@2,candidates:recall@4",
        "--format",
        "trec",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // precision@2: q1 1/2, q4 1/2 (f is not relevant): 0.25.
    assert_eq!(
        o.stdout,
        "precision@2\tall\t0.2500\ncandidates:recall@4\tall\t0.7500\n"
    );
    let o = eval(&[
        "--candidates",
        cands.to_str().unwrap(),
        "-m",
        "P@2,candidates:recall@4",
        "--format",
        "trec",
        "--names",
        "trec_eval",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("candidates:recall_4   \tall\t0.7500\n"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("P_2                   \tall\t0.2500\n"),
        "{}",
        o.stdout
    );
}

#[test]
fn candidates_metrics_need_candidates() {
    let o = eval(&["-m", "candidates:recall@4"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("candidates:recall@4 scores the candidate list, and none was given"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("hint: add --candidates FILE"), "{}", o.stderr);
    assert_eq!(o.stdout, "");
}

#[test]
fn candidates_for_other_queries_are_an_error() {
    let cands = fixture("stages/candidates_partial.json");
    let o = eval(&["--candidates", cands.to_str().unwrap()]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("candidates_partial.json: the candidates cover other queries than the final run: 1 query of the final run"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("has no candidates: `q3`"), "{}", o.stderr);
    assert!(o.stderr.contains("hint:"), "{}", o.stderr);
    assert_eq!(o.stdout, "");
}

#[test]
fn compare_refuses_candidates_metrics() {
    let mut c = rgate();
    c.arg("compare")
        .arg("--gold")
        .arg(fixture("stages/gold.yaml"))
        .arg(fixture("stages/final.json"))
        .arg(fixture("stages/candidates.json"))
        .args(["-m", "candidates:recall@4"]);
    let o = run(c);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("compare takes runs only"), "{}", o.stderr);
    assert!(o.stderr.contains("(recall@4)"), "{}", o.stderr);
}
