//! Input policy at the gate (issue 10, items 1 and 8): a broken retriever
//! step or a config typo is an error (exit 2), never a pass and never a
//! "regression".

use crate::common;

use std::fs;

use common::{Out, TestProject};

/// Ten queries, q0..q9, in strata `how-to` (even) and `multi-hop` (odd);
/// `full.jsonl` hits every one at rank 1.
fn project(gate_extra: &str) -> TestProject {
    let mut gold = String::from("version: 1\nqueries:\n");
    let mut full = String::new();
    for i in 0..10 {
        let stratum = if i % 2 == 0 { "how-to" } else { "multi-hop" };
        gold += &format!("  - id: q{i}\n    text: t{i}\n    stratum: {stratum}\n    relevant: [d{i}]\n");
        full += &format!("{{\"query_id\": \"q{i}\", \"results\": [{{\"id\": \"d{i}\", \"score\": 1}}]}}\n");
    }
    let mut p = TestProject::new()
        .with_file("gold.yaml", gold)
        .with_file("full.jsonl", &full);
    // Leaves out the first `k` queries.
    for k in [1, 2, 10] {
        let part: String = full.lines().skip(k).map(|l| format!("{l}\n")).collect();
        p = p.with_file(&format!("without{k}.jsonl"), part);
    }
    p.with_file("empty.jsonl", "")
        .with_file(
            "rgate.yaml",
            format!(
                "gold: gold.yaml\nbaselines: baselines\nmetrics: [recall@10]\nretrievers:\n  - name: r\n    run: full.jsonl\ngate:\n  resamples: 1000\n{gate_extra}  rules:\n    - metric: recall@10\n      max_drop: 0.05\n      strata: all\n"
            ),
        )
        .with_args(&["--config", "rgate.yaml"])
        .with_env("SOURCE_DATE_EPOCH", "1795996800")
}

fn recorded(gate_extra: &str) -> TestProject {
    let dir = project(gate_extra);
    let o = dir.run(&["baseline", "update"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    dir
}

fn assert_error(o: &Out, needles: &[&str]) {
    assert_eq!(o.code, 2, "stdout: {}\nstderr: {}", o.stdout, o.stderr);
    for n in needles {
        assert!(o.stderr.contains(n), "{n:?} not in\n{}", o.stderr);
    }
    assert!(o.stderr.contains("\nhint: "), "{}", o.stderr);
}

#[test]
fn a_run_covering_no_gold_query_is_an_error() {
    let dir = recorded("");
    for run in ["without10.jsonl", "empty.jsonl"] {
        let o = dir.run(&["gate", "--run", &format!("r={run}")]);
        assert_error(&o, &[run, "the run covers none of the 10 gold queries"]);
        let o = dir.run(&["baseline", "update", "--run", &format!("r={run}")]);
        assert_error(&o, &["the run covers none of the 10 gold queries"]);
    }
}

#[test]
fn missing_more_than_max_missing_is_an_error_fewer_a_warning() {
    let dir = recorded("");
    // 2 of 10 = 20% > 10%.
    let o = dir.run(&["gate", "--run", "r=without2.jsonl"]);
    assert_error(
        &o,
        &["the run misses 2 of the 10 gold queries (20.0%, more than gate.max_missing 0.1 allows): `q0`, `q1`", "gate.max_missing"],
    );
    // A refused update leaves the recorded baseline as it was.
    let before = fs::read(dir.root().join("baselines/r.json")).unwrap();
    let o = dir.run(&["baseline", "update", "--run", "r=without2.jsonl"]);
    assert_error(&o, &["misses 2 of the 10 gold queries"]);
    assert_eq!(fs::read(dir.root().join("baselines/r.json")).unwrap(), before);
    // 1 of 10 = 10%: allowed; q0 scores 0 and the report says why.
    let o = dir.run(&["gate", "--run", "r=without1.jsonl", "--format", "json"]);
    assert!(o.code == 0 || o.code == 1, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let warnings = v["retrievers"][0]["warnings"].to_string();
    assert!(warnings.contains("1 of 10 gold queries is absent"), "{warnings}");
    let all = v["retrievers"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["stratum"] == "all")
        .unwrap()
        .clone();
    // Nine hits of ten.
    assert_eq!(all["current"], 0.9);
}

#[test]
fn max_missing_is_configurable_and_checked() {
    let dir = recorded("  max_missing: 0.25\n");
    let o = dir.run(&["gate", "--run", "r=without2.jsonl"]);
    assert!(o.code == 0 || o.code == 1, "{}", o.stderr);
    assert!(
        o.stdout.contains("2 of 10 gold queries are absent"),
        "{}",
        o.stdout
    );
    let dir = project("  max_missing: 1.5\n");
    let o = dir.run(&["gate"]);
    assert_error(&o, &["rgate.yaml:", "max_missing 1.5 is outside [0, 1]"]);
}

#[test]
fn a_rule_naming_an_unknown_stratum_is_an_error() {
    let dir = recorded("");
    let config = fs::read_to_string(dir.root().join("rgate.yaml")).unwrap();
    fs::write(
        dir.root().join("rgate.yaml"),
        config.replace("strata: all", "strata: [overall, how_to]"),
    )
    .unwrap();
    for args in [&["gate"][..], &["baseline", "update"]] {
        let o = dir.run(args);
        assert_error(
            &o,
            &[
                "rgate.yaml:12: rule for recall@10: stratum `how_to` is not in the gold set gold.yaml",
                "did you mean `how-to`? its strata: how-to, multi-hop",
            ],
        );
    }
    // A name that is no typo of any stratum lists them.
    fs::write(
        dir.root().join("rgate.yaml"),
        config.replace("strata: all", "strata: zzzzzz"),
    )
    .unwrap();
    let o = dir.run(&["gate"]);
    assert_error(
        &o,
        &[
            "stratum `zzzzzz` is not in the gold set",
            "name one of its strata: how-to, multi-hop, or `overall`",
        ],
    );
}

#[test]
fn a_missing_baseline_directory_is_an_error_for_gate_only() {
    let dir = project("");
    // A typo'd or never-created directory would let every retriever pass.
    let o = dir.run(&["gate"]);
    assert_error(
        &o,
        &[
            "baselines: the baseline directory does not exist",
            "rgate baseline update",
        ],
    );
    assert!(!dir.root().join("baselines").exists());
    // The first update creates it; then the gate runs.
    let o = dir.run(&["baseline", "update"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = dir.run(&["gate"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.starts_with("rgate gate: PASS"), "{}", o.stdout);
}
