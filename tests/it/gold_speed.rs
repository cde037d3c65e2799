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

// ---- item 4: gold sets read once, the same through every path ----------

/// Three queries, five labels, each with its provenance; two unverified
/// (q1/b by a model, q3/e by a person, `verified` left out); q2's two
/// labels both by `ana` (a single labeler), q1's by ana and a model. By
/// hand: 5 labels with provenance, 2 unverified, single-labeler queries
/// [q2].
const BLOCK: &str = "version: 1
queries:
- id: q1
  text: first
  stratum: s1
  relevant:
    a: 1
    b: 2
  provenance:
    a:
      source: person
      labeler: ana
      at: 2026-11-30T10:00:00Z
      verified: true
    b:
      source: model
      verified: false
- id: q2
  text: second
  stratum: s2
  relevant:
    c: 1
    d: 1
  provenance:
    c:
      source: person
      labeler: ana
      verified: true
    d:
      source: person
      labeler: ana
      verified: true
- id: q3
  text: third
  relevant:
    e: 1
  provenance:
    e:
      source: person
      labeler: bo
";

/// The same gold set in flow style (read by serde-saphyr, not the fast
/// path) and as JSON.
const FLOW: &str = "version: 1
queries:
- {id: q1, text: first, stratum: s1, relevant: {a: 1, b: 2}, provenance: {a: {source: person, labeler: ana, at: '2026-11-30T10:00:00Z', verified: true}, b: {source: model, verified: false}}}
- {id: q2, text: second, stratum: s2, relevant: {c: 1, d: 1}, provenance: {c: {source: person, labeler: ana, verified: true}, d: {source: person, labeler: ana, verified: true}}}
- {id: q3, text: third, relevant: {e: 1}, provenance: {e: {source: person, labeler: bo}}}
";

const JSON: &str = r#"{"version": 1, "queries": [
 {"id": "q1", "text": "first", "stratum": "s1", "relevant": {"a": 1, "b": 2}, "provenance": {"a": {"source": "person", "labeler": "ana", "at": "2026-11-30T10:00:00Z", "verified": true}, "b": {"source": "model", "verified": false}}},
 {"id": "q2", "text": "second", "stratum": "s2", "relevant": {"c": 1, "d": 1}, "provenance": {"c": {"source": "person", "labeler": "ana", "verified": true}, "d": {"source": "person", "labeler": "ana", "verified": true}}},
 {"id": "q3", "text": "third", "relevant": {"e": 1}, "provenance": {"e": {"source": "person", "labeler": "bo"}}}
]}
"#;

#[test]
fn provenance_counts_are_the_same_through_every_reader() {
    let p = TestProject::new()
        .with_file("block.yaml", BLOCK)
        .with_file("flow.yaml", FLOW)
        .with_file("g.json", JSON);
    let want = serde_json::json!({
        "labels_with_provenance": 5,
        "unverified_labels": 2,
        "single_labeler_queries": ["q2"],
        "log_drift": null,
    });
    let mut fingerprints = Vec::new();
    for f in ["block.yaml", "flow.yaml", "g.json"] {
        for cmd in ["stats", "validate"] {
            let o = p.bare(&["gold", cmd, "--gold", f, "--format", "json"]);
            assert_eq!(o.code, 0, "{f} {cmd}: {}\n{}", o.stdout, o.stderr);
            let v: Value = serde_json::from_str(&o.stdout).unwrap();
            assert_eq!(v["provenance"], want, "{f} {cmd}");
        }
        let o = p.bare(&["gold", "stats", "--gold", f, "--format", "json"]);
        let v: Value = serde_json::from_str(&o.stdout).unwrap();
        fingerprints.push(v.to_string().replace(f, "GOLD"));
    }
    assert_eq!(fingerprints[0], fingerprints[1]);
    assert_eq!(fingerprints[0], fingerprints[2]);
}

/// Provenance is read with the labels now, so a bad one is named with
/// its file and line (it was "bad provenance" without a line, from a
/// second parse): `verified: maybe` is line 14.
#[test]
fn a_bad_provenance_names_its_line() {
    let bad = BLOCK.replace(
        "      at: 2026-11-30T10:00:00Z\n      verified: true\n",
        "      at: 2026-11-30T10:00:00Z\n      verified: maybe\n",
    );
    assert_eq!(bad.lines().nth(13), Some("      verified: maybe"));
    let p = TestProject::new().with_file("g.yaml", &bad);
    for cmd in ["stats", "validate"] {
        let o = p.bare(&["gold", cmd, "--gold", "g.yaml"]);
        assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
        assert!(o.stderr.contains("g.yaml:14:"), "{}", o.stderr);
    }
    // The metrics need no provenance: eval reads past it, as before.
    let p = p.with_file(
        "run.json",
        "{\"q1\": [\"a\"], \"q2\": [\"c\"], \"q3\": [\"e\"]}\n",
    );
    let o = p.bare(&["eval", "--gold", "g.yaml", "--run", "run.json", "-m", "recall@10"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
}

// ---- item 7: a stratum per query ---------------------------------------

/// 60 queries, each its own stratum: stats lists every stratum with one
/// query, in file order, and compare has a row per stratum (by hand: 60
/// strata, each n = 1; q07 won, the rest tied).
#[test]
fn a_stratum_per_query_is_reported_in_full() {
    let mut gold = String::from("version: 1\nqueries:\n");
    let mut base = Vec::new();
    let mut cand = Vec::new();
    for q in 0..60 {
        gold += &format!("- id: q{q:02}\n  stratum: s{q:02}\n  relevant:\n    r{q}: 1\n");
        base.push(format!("\"q{q:02}\": [\"x\"]"));
        cand.push(format!(
            "\"q{q:02}\": [\"{}\"]",
            if q == 7 { format!("r{q}") } else { "x".into() }
        ));
    }
    let p = TestProject::new()
        .with_file("g.yaml", gold)
        .with_file("a.json", format!("{{{}}}\n", base.join(", ")))
        .with_file("b.json", format!("{{{}}}\n", cand.join(", ")));
    let o = p.bare(&["gold", "stats", "--gold", "g.yaml", "--format", "json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    let strata: Vec<(String, u64)> = v["strata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["queries"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, u64)> = (0..60).map(|q| (format!("s{q:02}"), 1)).collect();
    assert_eq!(strata, want);
    let o = p.bare(&[
        "compare",
        "--gold",
        "g.yaml",
        "a.json",
        "b.json",
        "-m",
        "recall@10",
        "--by-stratum",
        "--format",
        "json",
    ]);
    assert!(o.code == 0 || o.code == 1, "{}\n{}", o.stdout, o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    let rows = v["runs"][0]["checks"].as_array().unwrap_or_else(|| panic!("{v}"));
    let per: Vec<(String, u64, f64)> = rows
        .iter()
        .filter(|r| r["stratum"] != "all")
        .map(|r| {
            (
                r["stratum"].as_str().unwrap().to_string(),
                r["n"].as_u64().unwrap(),
                r["delta"].as_f64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, u64, f64)> = (0..60)
        .map(|q| (format!("s{q:02}"), 1, if q == 7 { 1.0 } else { 0.0 }))
        .collect();
    assert_eq!(per, want);
}
