//! End-to-end properties of the gate, through the binary (issue 10): any
//! valid gold set and runs give exit 0 or 1, never 2 and never a panic; and
//! a run gated against a baseline recorded from itself has delta 0 on every
//! check and passes, under every decision (a check where no query moved
//! passes; non-inferiority refuses a tolerance of 0).

use crate::common;

use std::fs;
use std::path::Path;

use common::TestProject;
use proptest::prelude::*;
use serde_json::{json, Value};

const DECISIONS: [&str; 4] = [
    "confident-drop",
    "significant-drop",
    "threshold",
    "non-inferiority",
];
const TESTS: [&str; 3] = ["bootstrap", "t-test", "randomization"];

#[derive(Debug, Clone)]
struct Case {
    /// Per query: stratum index and graded labels (doc, grade).
    queries: Vec<(usize, Vec<(u8, u8)>)>,
    /// Two runs: per query, ranked doc numbers.
    runs: [Vec<Vec<u8>>; 2],
    decision: usize,
    test: usize,
    tolerance: f64,
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..20)
        .prop_flat_map(|n| {
            let query = (0usize..3, prop::collection::vec((0u8..12, 0u8..3), 1..4));
            let ranking = prop::collection::vec(0u8..12, 0..8);
            (
                prop::collection::vec(query, n),
                prop::collection::vec(ranking.clone(), n),
                prop::collection::vec(ranking, n),
                0usize..4,
                0usize..3,
                0.0f64..0.2,
            )
        })
        .prop_map(|(queries, a, b, decision, test, tolerance)| Case {
            queries,
            runs: [a, b],
            decision,
            test,
            tolerance,
        })
}

fn write(dir: &Path, c: &Case) {
    let queries: Vec<Value> = c
        .queries
        .iter()
        .enumerate()
        .map(|(i, (s, labels))| {
            // Later duplicates of a doc are dropped: a gold set judges a
            // document once.
            let mut rel = serde_json::Map::new();
            for (d, g) in labels {
                rel.entry(format!("d{d}")).or_insert(json!(g));
            }
            let stratum = ["s-a", "s-b", "s-c"][*s];
            json!({"id": format!("q{i}"), "stratum": stratum, "relevant": rel})
        })
        .collect();
    fs::write(
        dir.join("gold.json"),
        json!({"version": 1, "queries": queries}).to_string(),
    )
    .unwrap();
    for (k, r) in c.runs.iter().enumerate() {
        let mut text = String::new();
        for (i, ranking) in r.iter().enumerate() {
            let mut seen = Vec::new();
            let results: Vec<Value> = ranking
                .iter()
                .filter(|d| {
                    let new = !seen.contains(*d);
                    seen.push(**d);
                    new
                })
                .enumerate()
                .map(|(rank, d)| json!({"id": format!("d{d}"), "score": 100 - rank as i64}))
                .collect();
            text += &format!("{}\n", json!({"query_id": format!("q{i}"), "results": results}));
        }
        fs::write(dir.join(format!("run{k}.jsonl")), text).unwrap();
    }
    // Non-inferiority needs a tolerance above 0 (at 0 it refuses the
    // config: it would fail the baseline itself).
    let non_inferiority = DECISIONS[c.decision] == "non-inferiority";
    let tolerance = if non_inferiority {
        c.tolerance.max(0.01)
    } else {
        c.tolerance
    };
    let zero = if non_inferiority { 0.01 } else { 0.0 };
    fs::write(
        dir.join("rgate.yaml"),
        format!(
            "gold: gold.json\nbaselines: baselines\nmetrics: [recall@5, ndcg@5, mrr, P@3]\nretrievers:\n  - name: r\n    run: run0.jsonl\ngate:\n  resamples: 200\n  decision: {}\n  test: {}\n  rules:\n    - metric: recall@5\n      max_drop: {}\n      strata: all\n    - metric: ndcg@5\n      max_drop_pct: 10\n      strata: overall\n    - metric: mrr\n      max_drop: {}\n",
            DECISIONS[c.decision], TESTS[c.test], tolerance, zero
        ),
    )
    .unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn valid_inputs_never_error_and_self_gates_pass(c in case()) {
        let dir = TestProject::new()
            .with_args(&["--config", "rgate.yaml", "--format", "json"])
            .with_env("SOURCE_DATE_EPOCH", "1795996800");
        write(dir.root(), &c);
        let o = dir.run(&["baseline", "update"]);
        prop_assert_eq!(o.code, 0, "update: {}", o.stderr);

        // Another run: a verdict, never an error.
        let o = dir.run(&["gate", "--run", "r=run1.jsonl"]);
        prop_assert!(o.code == 0 || o.code == 1, "gate: exit {}: {}", o.code, o.stderr);
        let v: Value = serde_json::from_str(&o.stdout).unwrap();
        prop_assert_eq!(&v["verdict"], if o.code == 0 { "pass" } else { "fail" });

        // The baseline's own run: no change anywhere.
        let o = dir.run(&["gate"]);
        prop_assert!(o.code == 0 || o.code == 1, "self gate: exit {}: {}", o.code, o.stderr);
        let v: Value = serde_json::from_str(&o.stdout).unwrap();
        let checks = v["retrievers"][0]["checks"].as_array().unwrap();
        prop_assert!(!checks.is_empty());
        for ch in checks {
            prop_assert_eq!(ch["delta"].as_f64(), Some(0.0), "{}", ch);
            prop_assert_eq!(&ch["baseline"], &ch["current"], "{}", ch);
        }
        // Under every decision: nothing moved, nothing to fail.
        prop_assert_eq!(o.code, 0, "an unchanged run failed: {}", o.stdout);
    }
}
