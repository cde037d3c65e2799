//! How deep a baseline stores each query's ranking (issue 17 item 2), and
//! what the gate can still re-score after a gold change when rankings are
//! stored cut. The demo runs hold 20 results per query.

use crate::common;

use std::fs;
use std::path::Path;

use common::TestProject;
use serde_json::Value;

fn project(extra: &str) -> TestProject {
    TestProject::demo(&["hybrid"])
        .with_file(
            "rgate.yaml",
            format!(
                "gold: demo/gold.yaml\nbaselines: store\nmetrics: [recall@10, map]\n{extra}retrievers:\n  - name: hybrid\n    run: demo/runs/hybrid.jsonl\ngate:\n  resamples: 200\n"
            ),
        )
        .with_args(&["--config", "rgate.yaml"])
        .with_env("GITHUB_SHA", "0123456789abcdef")
}

/// Ranking lengths per query, read from the stored file.
fn stored_lengths(dir: &Path) -> (Value, Vec<usize>) {
    let v: Value = serde_json::from_str(&fs::read_to_string(dir.join("store/hybrid.json")).unwrap()).unwrap();
    let lens = v["queries"]
        .as_object()
        .unwrap()
        .values()
        .map(|q| q["ranking"].as_array().unwrap().len())
        .collect();
    (v["depth"].clone(), lens)
}

#[test]
fn rankings_are_stored_as_deep_as_the_cut_metrics_need() {
    // recall@10 is the deepest cutoff; map has none: 10 ids a query.
    let p = project("");
    let o = p.run(&["baseline", "update"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let (depth, lens) = stored_lengths(p.root());
    assert_eq!(depth, 10);
    assert_eq!(lens, vec![10; 90]);

    let p = project("baseline_depth: all\n");
    assert_eq!(p.run(&["baseline", "update"]).code, 0);
    let (depth, lens) = stored_lengths(p.root());
    assert_eq!(depth, Value::Null);
    assert_eq!(lens, vec![20; 90]);

    let p = project("baseline_depth: 15\n");
    assert_eq!(p.run(&["baseline", "update"]).code, 0);
    assert_eq!(stored_lengths(p.root()), (Value::from(15), vec![15; 90]));

    for (bad, want) in [
        (
            "5",
            "rgate.yaml:4: baseline_depth 5 is below the deepest cutoff in use (10)",
        ),
        (
            "deep",
            "rgate.yaml:4: baseline_depth `deep` is neither a number nor `all`",
        ),
    ] {
        let p = project(&format!("baseline_depth: {bad}\n"));
        let o = p.run(&["baseline", "update"]);
        assert_eq!(o.code, 2);
        assert!(o.stderr.contains(want), "{}", o.stderr);
        assert!(o.stderr.contains("\nhint: "), "{}", o.stderr);
    }
}

/// Moves q-001's labels to chunks the run never returns.
fn change_gold(dir: &Path) {
    let path = dir.join("demo/gold.yaml");
    // Read by an independent YAML parser; written back as JSON, which is
    // YAML too.
    let mut v: serde_json::Value = serde_saphyr::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    for q in v["queries"].as_array_mut().unwrap() {
        if q["id"].as_str() == Some("q-001") {
            q["relevant"] = serde_json::json!(["docs/nowhere.md#0"]);
        }
    }
    fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

fn gated_metrics(v: &Value) -> Vec<String> {
    let mut m: Vec<String> = v["retrievers"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["metric"].as_str().unwrap().to_string())
        .collect();
    m.dedup();
    m
}

#[test]
fn after_a_gold_change_metrics_without_cutoff_need_whole_rankings() {
    let p = project("");
    assert_eq!(p.run(&["baseline", "update"]).code, 0);
    // Same gold set: the stored per-query values serve every metric.
    let o = p.run(&["--format", "json", "gate"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(gated_metrics(&v), ["recall@10", "map"]);

    // Changed gold set: recall@10 is re-scored from 10 stored ids; map
    // would need all 20 and is skipped, with a warning saying so.
    change_gold(p.root());
    let o = p.run(&["--format", "json", "gate"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(gated_metrics(&v), ["recall@10"]);
    let warnings = v["retrievers"][0]["warnings"].to_string();
    assert!(
        warnings.contains("map cannot be re-scored from rankings stored to depth 10: its checks are skipped"),
        "{warnings}"
    );

    // With whole rankings stored, map is re-scored too.
    let p = project("baseline_depth: all\n");
    assert_eq!(p.run(&["baseline", "update"]).code, 0);
    change_gold(p.root());
    let o = p.run(&["--format", "json", "gate"]);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(gated_metrics(&v), ["recall@10", "map"]);
    assert!(!v["retrievers"][0]["warnings"]
        .to_string()
        .contains("re-scored from rankings"));
}
