//! The gate on a two-stage retriever (issue 14), end to end. The project
//! is built here so every expectation follows from its construction:
//!
//! - 40 queries, `how-to` q00-q19 and `lookup` q20-q39; query qNN has one
//!   relevant chunk `rNN`.
//! - Candidates: 20 per query, `n1`..`n4`, then `rNN` at rank 5, then
//!   `n5`..`n19`. Final run: `rNN, n1, n2`: every query reached at 3.
//! - A broken reranker: for q00-q11 the final run is `n1, n2, n3`, the
//!   candidates unchanged: 12 more queries `dropped_by_rerank` in how-to,
//!   hit_rate@3 drops by 12/20 there (12/40 overall), candidates:recall@20
//!   does not move, and every flip is lost in the rerank (rNN, which the
//!   baseline ranked first, is still among the candidates).
//! - A broken retrieval: for q00-q11 `rNN` is also gone from the
//!   candidates (`n20` in its place): candidates:recall@20 drops by the
//!   same amounts, and every flip is lost in retrieval.

use crate::common;

use std::fs;

use common::TestProject;
use serde_json::Value;

const CONFIG: &str = "gold: gold.yaml
baselines: baselines
metrics: [hit_rate@3, candidates:recall@20]
retrievers:
  - name: plain
    run: final.json
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

fn id(q: usize) -> String {
    format!("q{q:02}")
}

fn gold(relevant: impl Fn(usize) -> String) -> String {
    let mut s = String::from("version: 1\nqueries:\n");
    for q in 0..40 {
        let stratum = if q < 20 { "how-to" } else { "lookup" };
        s += &format!(
            "  - id: {}\n    stratum: {stratum}\n    relevant: [{}]\n",
            id(q),
            relevant(q)
        );
    }
    s
}

fn candidates(lose: impl Fn(usize) -> bool) -> String {
    let rows: Vec<String> = (0..40)
        .map(|q| {
            let mut ids: Vec<String> = (1..=4).map(|i| format!("n{i}")).collect();
            ids.push(if lose(q) { "n20".into() } else { format!("r{q:02}") });
            ids.extend((5..=19).map(|i| format!("n{i}")));
            format!("{:?}: {:?}", id(q), ids)
        })
        .collect();
    format!("{{{}}}\n", rows.join(",\n"))
}

fn final_run(drop: impl Fn(usize) -> bool) -> String {
    let rows: Vec<String> = (0..40)
        .map(|q| {
            let ids: Vec<String> = if drop(q) {
                vec!["n1".into(), "n2".into(), "n3".into()]
            } else {
                vec![format!("r{q:02}"), "n1".into(), "n2".into()]
            };
            format!("{:?}: {:?}", id(q), ids)
        })
        .collect();
    format!("{{{}}}\n", rows.join(",\n"))
}

fn project() -> TestProject {
    TestProject::new()
        .with_file("rgate.yaml", CONFIG)
        .with_file("gold.yaml", gold(|q| format!("r{q:02}")))
        .with_file("candidates.json", candidates(|_| false))
        .with_file("final.json", final_run(|_| false))
        .with_config("rgate.yaml")
        .with_env("SOURCE_DATE_EPOCH", "1795996800")
}

fn record(p: &TestProject) {
    let o = p.run(&["baseline", "update"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
}

fn gate_json(p: &TestProject, args: &[&str]) -> (i32, Value) {
    let mut a = vec!["gate", "--format", "json"];
    a.extend_from_slice(args);
    let o = p.run(&a);
    assert!(o.code == 0 || o.code == 1, "{}", o.stderr);
    (o.code, serde_json::from_str(&o.stdout).unwrap())
}

fn retriever<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["retrievers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap()
}

fn failed(r: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "fail")
        .map(|c| {
            (
                c["metric"].as_str().unwrap().to_string(),
                c["stratum"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

fn lost_in(r: &Value) -> Vec<String> {
    r["flips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["lost_in"].as_str().unwrap_or("null").to_string())
        .collect()
}

fn pair(m: &str, s: &str) -> (String, String) {
    (m.to_string(), s.to_string())
}

#[test]
fn a_broken_reranker_fails_only_final_checks_and_says_so_first() {
    let p = project();
    record(&p);
    p.write("final.json", final_run(|q| q < 12));
    let (code, v) = gate_json(&p, &["reranked"]);
    assert_eq!(code, 1);
    let r = retriever(&v, "reranked");
    assert_eq!(
        failed(r),
        vec![pair("hit_rate@3", "all"), pair("hit_rate@3", "how-to")]
    );
    assert_eq!(lost_in(r), vec!["rerank"; 12]);
    let st = &r["stages"];
    assert_eq!(st["cutoff"], 3);
    assert_eq!(
        st["lost"]["how-to"],
        serde_json::json!({"n": 20,
            "baseline": {"reached": 20, "dropped_by_rerank": 0, "missed_by_retrieval": 0},
            "current": {"reached": 8, "dropped_by_rerank": 12, "missed_by_retrieval": 0}})
    );
    assert_eq!(
        st["losses"],
        serde_json::json!([{"stage": "rerank", "more": 12, "strata": {"how-to": 12}}])
    );
    // The ceiling: rNN is among every query's candidates, so a perfect
    // reranker reaches all 40: 1.0, against 28/40 now.
    assert_eq!(st["ceiling"]["hit_rate@3"]["all"]["ceiling"], 1.0);
    assert_eq!(st["ceiling"]["hit_rate@3"]["all"]["current"], 0.7);
    assert_eq!(st["ceiling"]["hit_rate@3"]["all"]["ratio"], 0.7);

    // The summary's first words name the stage, in every report.
    let o = p.run(&["gate", "reranked"]);
    assert_eq!(o.code, 1);
    let line = o
        .stdout
        .lines()
        .find(|l| l.starts_with("FAIL reranked:"))
        .unwrap();
    assert!(
        line.starts_with("FAIL reranked: 12 more queries dropped by the reranker (how-to); 2 checks failed"),
        "{line}"
    );
    assert!(o.stdout.contains("  lost in rerank (12):\n"), "{}", o.stdout);
    assert!(!o.stdout.contains("lost in retrieval"), "{}", o.stdout);
    let row: Vec<&str> = o
        .stdout
        .lines()
        .find(|l| l.starts_with("  how-to  20  "))
        .unwrap()
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(row, ["how-to", "20", "20 -> 8", "0 -> 12", "0 -> 0"]);
    // The terminal keeps the ceilings to the overall scope (28/40 of a
    // possible 40/40); markdown has every stratum's too.
    let ceiling_rows = |text: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.contains("current/ceiling"))
            .skip(2)
            .take_while(|l| !l.trim().is_empty())
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert_eq!(
        ceiling_rows(&o.stdout),
        ["hit_rate@3 all 0.7000 1.0000 0.7000"],
        "{}",
        o.stdout
    );
    let o = p.run(&["gate", "reranked", "--format", "markdown"]);
    assert!(o.stdout.contains("| hit_rate@3 | how-to |"), "{}", o.stdout);
    assert!(
        // Issue 47: the failing retriever's block opens with the stage.
        o.stdout
            .contains("### ❌ reranked\n\n12 more queries dropped by the reranker (how-to).\n"),
        "{}",
        o.stdout
    );
    // The comment's lost-query list is one table (issue 47); the stage's
    // count is the block's first sentence, checked above.
    assert!(o.stdout.contains("(12 went from hit to miss;"), "{}", o.stdout);

    // The retriever without candidates scores no candidates: metric and
    // has no stages; its flips carry no lost_in.
    let (_, v) = gate_json(&p, &["plain"]);
    let plain = retriever(&v, "plain");
    assert!(plain["stages"].is_null());
    assert!(plain["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["metric"] == "hit_rate@3"));
    assert!(plain["flips"][0].get("lost_in").is_none());
}

#[test]
fn a_broken_retrieval_fails_candidates_checks_with_flips_lost_in_retrieval() {
    let p = project();
    record(&p);
    p.write("candidates.json", candidates(|q| q < 12));
    p.write("final.json", final_run(|q| q < 12));
    let (code, v) = gate_json(&p, &["reranked"]);
    assert_eq!(code, 1);
    let r = retriever(&v, "reranked");
    let f = failed(r);
    assert!(f.contains(&pair("candidates:recall@20", "all")), "{f:?}");
    assert!(f.contains(&pair("candidates:recall@20", "how-to")), "{f:?}");
    assert!(!f.iter().any(|(_, s)| s == "lookup"), "{f:?}");
    assert_eq!(lost_in(r), vec!["retrieval"; 12]);
    assert_eq!(
        r["stages"]["losses"],
        serde_json::json!([{"stage": "retrieval", "more": 12, "strata": {"how-to": 12}}])
    );
    let o = p.run(&["gate", "reranked"]);
    assert!(
        o.stdout
            .contains("FAIL reranked: 12 more queries missed by retrieval (how-to); "),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("  lost in retrieval (12):\n"), "{}", o.stdout);
}

#[test]
fn the_baseline_stores_both_stages_and_is_rescored_after_a_gold_change() {
    let p = project();
    record(&p);
    let b: Value =
        serde_json::from_str(&fs::read_to_string(p.path("baselines/reranked.json")).unwrap()).unwrap();
    // The final ranking to the final metrics' depth, the candidates whole.
    assert_eq!(b["depth"], 3);
    let q = &b["queries"]["q00"];
    assert_eq!(q["ranking"], serde_json::json!(["r00", "n1", "n2"]));
    assert_eq!(q["candidates"].as_array().unwrap().len(), 20);
    assert_eq!(q["candidates"][4], "r00");
    assert_eq!(b["aggregates"]["all"]["candidates:recall@20"], 1.0);
    let plain: Value =
        serde_json::from_str(&fs::read_to_string(p.path("baselines/plain.json")).unwrap()).unwrap();
    assert!(plain["queries"]["q00"].get("candidates").is_none());
    // History keeps both stages' aggregates.
    let h = fs::read_to_string(p.path("baselines/reranked.history.jsonl")).unwrap();
    let line: Value = serde_json::from_str(h.lines().next().unwrap()).unwrap();
    assert_eq!(line["aggregates"]["how-to"]["candidates:recall@20"], 1.0);
    assert_eq!(line["aggregates"]["how-to"]["hit_rate@3"], 1.0);

    // The gold set is fixed: q00-q09's answer is really `z`, which neither
    // stage ever returned. Runs unchanged. Re-scored from the stored
    // rankings, the baseline misses those 10 too (30/40 = 0.75 in both
    // stages), so nothing flips and the gate passes; compared with the
    // stored values it would report 10 flips and fail.
    p.write(
        "gold.yaml",
        gold(|q| if q < 10 { "z".into() } else { format!("r{q:02}") }),
    );
    let (code, v) = gate_json(&p, &["reranked"]);
    assert_eq!(code, 0, "{v:#}");
    let r = retriever(&v, "reranked");
    assert_eq!(r["gold_changed"], true);
    assert_eq!(r["flips"], serde_json::json!([]));
    for metric in ["hit_rate@3", "candidates:recall@20"] {
        let c = r["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["metric"] == metric && c["stratum"] == "all")
            .unwrap();
        assert_eq!(c["baseline"], 0.75, "{metric}");
        assert_eq!(c["current"], 0.75, "{metric}");
    }
    assert_eq!(
        r["stages"]["lost"]["all"]["baseline"],
        serde_json::json!({"reached": 30, "dropped_by_rerank": 0, "missed_by_retrieval": 10})
    );
    assert_eq!(r["stages"]["losses"], serde_json::json!([]));
}

#[test]
fn candidates_overrides_and_their_errors() {
    let p = project();
    p.write("cands2.json", candidates(|q| q < 12));
    record(&p);
    let (code, v) = gate_json(&p, &["reranked", "--candidates", "reranked=cands2.json"]);
    assert_eq!(code, 1);
    let r = retriever(&v, "reranked");
    assert!(r["stages"]["candidates"]
        .as_str()
        .unwrap()
        .ends_with("cands2.json"));
    // The final run still ranks rNN first: 12 chunks not among candidates.
    assert_eq!(
        r["stages"]["absent_from_candidates"].as_object().unwrap().len(),
        12
    );
    let warned: Vec<&Value> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w.as_str().unwrap().contains("not among the candidates"))
        .collect();
    assert_eq!(warned.len(), 1, "{:#}", r["warnings"]);
    assert!(warned[0].as_str().unwrap().contains("12 chunks in 12 queries"));

    let o = p.run(&["gate", "reranked", "--candidates", "plain=cands2.json"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("--candidates plain=...: `plain` is not among the retrievers selected"),
        "{}",
        o.stderr
    );

    // Candidates for fewer queries than the run: exit 2, naming them.
    let few: Value = serde_json::from_str(&candidates(|_| false)).unwrap();
    let mut few = few.as_object().unwrap().clone();
    few.remove("q07");
    p.write("few.json", Value::Object(few).to_string());
    let o = p.run(&["gate", "reranked", "--candidates", "reranked=few.json"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("few.json: the candidates cover other queries than the final run"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("`q07`"), "{}", o.stderr);
    assert!(o.stderr.contains("hint:"), "{}", o.stderr);
}

/// A candidate list produced by a command, run like a command retriever:
/// the gold queries on stdin, JSONL on stdout. It answers each qNN with
/// `x1, rNN`: candidates:recall@20 is 1 everywhere, and the final run's
/// n1 and n2 are not among its candidates (2 x 40 chunks).
#[cfg(unix)]
#[test]
fn candidates_from_a_command() {
    let p = project();
    let script = r#"sed -E 's/.*"query_id":"q([0-9]+)".*/{"query_id":"q\1","results":["x1","r\1"]}/'"#;
    p.write(
        "rgate.yaml",
        CONFIG.replace(
            "    candidates: candidates.json\n",
            &format!(
                "    candidates: [sh, -c, {}]\n    timeout_s: 30\n",
                serde_json::to_string(script).unwrap()
            ),
        ),
    );
    let o = p.run(&["baseline", "update", "reranked", "--format", "json"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    let r = retriever(&v, "reranked");
    assert!(
        r["stages"]["candidates"]
            .as_str()
            .unwrap()
            .starts_with("command: sh -c"),
        "{:#}",
        r["stages"]
    );
    assert_eq!(
        r["stages"]["absent_from_candidates"].as_object().unwrap().len(),
        40
    );
    assert!(r["warnings"]
        .to_string()
        .contains("80 chunks in 40 queries are not among the candidates"));
    let b: Value =
        serde_json::from_str(&fs::read_to_string(p.path("baselines/reranked.json")).unwrap()).unwrap();
    assert_eq!(
        b["queries"]["q07"]["candidates"],
        serde_json::json!(["x1", "r07"])
    );
    assert_eq!(b["aggregates"]["all"]["candidates:recall@20"], 1.0);
    let o = p.run(&["baseline", "show", "reranked"]);
    assert!(
        o.stdout
            .contains("rankings kept to depth 3 · candidate lists kept whole\n"),
        "{}",
        o.stdout
    );
}
