//! Input policy at the gate (issue 10, items 1 and 8): a broken retriever
//! step or a config typo is an error (exit 2), never a pass and never a
//! "regression".

mod common;

use std::fs;
use std::path::Path;

use common::{run, Out};

/// Ten queries, q0..q9, in strata `how-to` (even) and `multi-hop` (odd);
/// `full.jsonl` hits every one at rank 1.
fn project(dir: &Path, gate_extra: &str) {
    let mut gold = String::from("version: 1\nqueries:\n");
    let mut full = String::new();
    for i in 0..10 {
        let stratum = if i % 2 == 0 { "how-to" } else { "multi-hop" };
        gold += &format!("  - id: q{i}\n    text: t{i}\n    stratum: {stratum}\n    relevant: [d{i}]\n");
        full += &format!("{{\"query_id\": \"q{i}\", \"results\": [{{\"id\": \"d{i}\", \"score\": 1}}]}}\n");
    }
    fs::write(dir.join("gold.yaml"), gold).unwrap();
    fs::write(dir.join("full.jsonl"), &full).unwrap();
    // Leaves out the first `k` queries.
    for k in [1, 2, 10] {
        let part: String = full.lines().skip(k).map(|l| format!("{l}\n")).collect();
        fs::write(dir.join(format!("without{k}.jsonl")), part).unwrap();
    }
    fs::write(dir.join("empty.jsonl"), "").unwrap();
    fs::write(
        dir.join("rgate.yaml"),
        format!(
            "gold: gold.yaml\nbaselines: baselines\nmetrics: [recall@10]\nretrievers:\n  - name: r\n    run: full.jsonl\ngate:\n  resamples: 1000\n{gate_extra}  rules:\n    - metric: recall@10\n      max_drop: 0.05\n      strata: all\n"
        ),
    )
    .unwrap();
}

fn rgate(dir: &Path, args: &[&str]) -> Out {
    let mut c = common::rgate();
    c.current_dir(dir)
        .env("SOURCE_DATE_EPOCH", "1795996800")
        .args(["--config", "rgate.yaml"])
        .args(args);
    run(c)
}

fn recorded(gate_extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), gate_extra);
    let o = rgate(dir.path(), &["baseline", "update"]);
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
        let o = rgate(dir.path(), &["gate", "--run", &format!("r={run}")]);
        assert_error(&o, &[run, "the run covers none of the 10 gold queries"]);
        let o = rgate(dir.path(), &["baseline", "update", "--run", &format!("r={run}")]);
        assert_error(&o, &["the run covers none of the 10 gold queries"]);
    }
}

#[test]
fn missing_more_than_max_missing_is_an_error_fewer_a_warning() {
    let dir = recorded("");
    // 2 of 10 = 20% > 10%.
    let o = rgate(dir.path(), &["gate", "--run", "r=without2.jsonl"]);
    assert_error(
        &o,
        &["the run misses 2 of the 10 gold queries (20.0%, more than gate.max_missing 0.1 allows): `q0`, `q1`", "gate.max_missing"],
    );
    // A refused update leaves the recorded baseline as it was.
    let before = fs::read(dir.path().join("baselines/r.json")).unwrap();
    let o = rgate(dir.path(), &["baseline", "update", "--run", "r=without2.jsonl"]);
    assert_error(&o, &["misses 2 of the 10 gold queries"]);
    assert_eq!(fs::read(dir.path().join("baselines/r.json")).unwrap(), before);
    // 1 of 10 = 10%: allowed; q0 scores 0 and the report says why.
    let o = rgate(
        dir.path(),
        &["gate", "--run", "r=without1.jsonl", "--format", "json"],
    );
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
    let o = rgate(dir.path(), &["gate", "--run", "r=without2.jsonl"]);
    assert!(o.code == 0 || o.code == 1, "{}", o.stderr);
    assert!(
        o.stdout.contains("2 of 10 gold queries are absent"),
        "{}",
        o.stdout
    );
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), "  max_missing: 1.5\n");
    let o = rgate(dir.path(), &["gate"]);
    assert_error(&o, &["rgate.yaml:", "max_missing 1.5 is outside [0, 1]"]);
}

#[test]
fn a_rule_naming_an_unknown_stratum_is_an_error() {
    let dir = recorded("");
    let config = fs::read_to_string(dir.path().join("rgate.yaml")).unwrap();
    fs::write(
        dir.path().join("rgate.yaml"),
        config.replace("strata: all", "strata: [overall, how_to]"),
    )
    .unwrap();
    for args in [&["gate"][..], &["baseline", "update"]] {
        let o = rgate(dir.path(), args);
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
        dir.path().join("rgate.yaml"),
        config.replace("strata: all", "strata: zzzzzz"),
    )
    .unwrap();
    let o = rgate(dir.path(), &["gate"]);
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
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), "");
    // A typo'd or never-created directory would let every retriever pass.
    let o = rgate(dir.path(), &["gate"]);
    assert_error(
        &o,
        &[
            "baselines: the baseline directory does not exist",
            "rgate baseline update",
        ],
    );
    assert!(!dir.path().join("baselines").exists());
    // The first update creates it; then the gate runs.
    let o = rgate(dir.path(), &["baseline", "update"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = rgate(dir.path(), &["gate"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.starts_with("rgate gate: PASS"), "{}", o.stdout);
}
