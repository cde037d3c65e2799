//! Issue 26 items 6 and 7: results that do not depend on the order of the
//! gold file, and the skew diagnostic that names the few queries carrying
//! a check's change.

use crate::common;

use common::TestProject;
use serde_json::Value;

/// The demo gold file with its queries in reverse order: the same queries,
/// labels and strata (the same fingerprint), but the strata first appear
/// in another order (multi-hop no longer first).
fn reversed_demo_gold(text: &str) -> String {
    let mut blocks: Vec<&str> = text.split("\n  - id: ").collect();
    let head = blocks.remove(0);
    let last = blocks.len() - 1;
    // The last block ends with the file's final newline; move it out so
    // every block joins the same way.
    let tail_trimmed: Vec<String> = blocks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if i == last {
                b.trim_end().to_string()
            } else {
                b.to_string()
            }
        })
        .collect();
    let mut out = head.to_string();
    for b in tail_trimmed.iter().rev() {
        out += "\n  - id: ";
        out += b;
    }
    out + "\n"
}

/// The first `stratum:` value in a gold file.
fn first_stratum(text: &str) -> &str {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("stratum: "))
        .unwrap()
}

/// Every check row by (metric, stratum), with every number as the JSON
/// report gives it (full precision). Sorted: the strata are listed in the
/// file's order, which is presentation; the numbers must not move.
fn rows(list: &Value) -> Vec<(String, Value)> {
    let mut rows: Vec<(String, Value)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (format!("{} {}", c["metric"], c["stratum"]), c.clone()))
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows
}

#[test]
fn compare_gives_identical_numbers_for_a_reordered_gold_file() {
    let p = TestProject::demo(&["bm25", "hybrid"]);
    let text = p.read("demo/gold.yaml");
    let reversed = reversed_demo_gold(&text);
    assert_eq!(first_stratum(&text), "multi-hop");
    assert_ne!(first_stratum(&reversed), "multi-hop");
    p.write("reversed.yaml", &reversed);
    let args = |gold: &str, weighting: &str| {
        let o = p.bare(&[
            "compare",
            "--gold",
            gold,
            "demo/runs/bm25.jsonl",
            "demo/runs/hybrid.jsonl",
            "--by-stratum",
            "--weighting",
            weighting,
            "--format",
            "json",
        ]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        let v: Value = serde_json::from_str(&o.stdout).unwrap();
        rows(&v["runs"][0]["checks"])
    };
    for weighting in ["micro", "macro"] {
        let a = args("demo/gold.yaml", weighting);
        let b = args("reversed.yaml", weighting);
        assert_eq!(a.len(), 4 * 4, "{weighting}");
        // Bit for bit: the same p, bounds and means, row by row.
        assert_eq!(a, b, "{weighting}");
    }
}

/// A gate config over the demo's hybrid retriever, every stratum gated.
fn gate_project(weighting: &str) -> TestProject {
    TestProject::demo(&["hybrid", "hybrid-regressed"])
        .with_file(
            "rgate.yaml",
            format!(
                "gold: demo/gold.yaml\nbaselines: store\nmetrics: [recall@10, ndcg@10, hit_rate@3]\n\
                 retrievers:\n  - name: hybrid\n    run: demo/runs/hybrid.jsonl\n\
                 gate:\n  resamples: 2000\n  weighting: {weighting}\n  rules:\n\
                 \x20   - metric: ndcg@10\n      max_drop: 0.02\n      strata: all\n\
                 \x20   - metric: hit_rate@3\n      max_drop: 0.05\n      strata: all\n"
            ),
        )
        .with_args(&["--config", "rgate.yaml"])
}

#[test]
fn the_gate_gives_identical_checks_for_a_reordered_gold_file() {
    for weighting in ["micro", "macro"] {
        let p = gate_project(weighting);
        assert_eq!(p.run(&["baseline", "update"]).code, 0);
        let gate = |p: &TestProject| {
            let (code, v) = p.json(&["gate", "--run", "hybrid=demo/runs/hybrid-regressed.jsonl"]);
            assert_eq!(code, 1, "{v}");
            assert_eq!(v["retrievers"][0]["gold_changed"], false);
            rows(&v["retrievers"][0]["checks"])
        };
        let before = gate(&p);
        let reversed = reversed_demo_gold(&p.read("demo/gold.yaml"));
        p.write("demo/gold.yaml", reversed);
        let after = gate(&p);
        assert_eq!(before.len(), 2 * 4 + 1, "{weighting}");
        assert_eq!(before, after, "{weighting}");
    }
}

/// A gold set of `sizes[k]` queries in stratum `names[k]`, listed in the
/// order `names` gives, each with one relevant chunk `r`; and two runs
/// that put it at pseudo-random ranks, so the per-query deltas vary.
fn pooled_project(names: &[&str], sizes: &[usize], interleave: bool) -> TestProject {
    let mut queries: Vec<(String, &str)> = Vec::new();
    for (k, (&name, &size)) in names.iter().zip(sizes).enumerate() {
        for i in 0..size {
            queries.push((format!("q{k}-{i:03}"), name));
        }
    }
    if interleave {
        queries.reverse();
    }
    let mut gold = String::from("version: 1\nqueries:\n");
    for (id, stratum) in &queries {
        gold += &format!("  - id: {id}\n    stratum: {stratum}\n    relevant: [r]\n");
    }
    // Ranks from the query id alone (not the file position), so both files
    // get the same runs.
    let rank = |id: &str, salt: u64| {
        let h = id.bytes().fold(salt, |h, b| {
            h.wrapping_mul(6364136223846793005).wrapping_add(u64::from(b))
        });
        (h >> 33) % 12
    };
    let run = |salt: u64| {
        let mut sorted = queries.clone();
        sorted.sort();
        sorted
            .iter()
            .map(|(id, _)| {
                let r = rank(id, salt) as usize;
                let results: Vec<String> = (0..12)
                    .map(|k| {
                        if k == r {
                            "\"r\"".to_string()
                        } else {
                            format!("\"x{k}\"")
                        }
                    })
                    .collect();
                format!(
                    "{{\"query_id\": \"{id}\", \"results\": [{}]}}\n",
                    results.join(", ")
                )
            })
            .collect::<String>()
    };
    TestProject::new()
        .with_file("gold.yaml", gold)
        .with_file("a.jsonl", run(1))
        .with_file("b.jsonl", run(2))
}

#[test]
fn pooled_strata_join_the_same_stratum_whatever_the_order() {
    // Two strata of 40 tie for largest; the 4- and 3-query strata are
    // pooled (7 < 10 queries) into one of them. Which one used to follow
    // the file's order of first appearance.
    let names = ["b-large", "a-large", "z-small", "c-small"];
    let sizes = [40, 40, 4, 3];
    let p = pooled_project(&names, &sizes, false);
    let q = pooled_project(&names, &sizes, true);
    let numbers = |p: &TestProject, weighting: &str| {
        let o = p.bare(&[
            "compare",
            "--gold",
            "gold.yaml",
            "a.jsonl",
            "b.jsonl",
            "-m",
            "mrr@10,ndcg@10",
            "--weighting",
            weighting,
            "--format",
            "json",
        ]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        let v: Value = serde_json::from_str(&o.stdout).unwrap();
        rows(&v["runs"][0]["checks"])
    };
    for weighting in ["micro", "macro"] {
        assert_eq!(numbers(&p, weighting), numbers(&q, weighting), "{weighting}");
    }
}

/// 100 queries in one stratum, one relevant chunk each, found at rank 2 by
/// the baseline run (RR 1/2); the current run finds it at rank 3 for
/// q-000..q-034 (RR 1/3: 35 small losses) and at rank 1 for q-050, q-070
/// and q-090 (RR 1: 3 large gains), as issue 26's skewed scenario.
fn skewed_project() -> TestProject {
    let ids: Vec<String> = (0..100).map(|i| format!("q-{i:03}")).collect();
    let mut gold = String::from("version: 1\nqueries:\n");
    for id in &ids {
        gold += &format!("  - id: {id}\n    stratum: s\n    relevant: [r]\n");
    }
    let run = |rank_of: &dyn Fn(usize) -> usize| {
        ids.iter()
            .enumerate()
            .map(|(i, id)| {
                let r = rank_of(i);
                let results: Vec<String> = (1..=5)
                    .map(|k| {
                        if k == r {
                            "\"r\"".into()
                        } else {
                            format!("\"x{k}\"")
                        }
                    })
                    .collect();
                format!(
                    "{{\"query_id\": \"{id}\", \"results\": [{}]}}\n",
                    results.join(", ")
                )
            })
            .collect::<String>()
    };
    let current = |i: usize| match i {
        0..=34 => 3,
        50 | 70 | 90 => 1,
        _ => 2,
    };
    TestProject::new()
        .with_file("gold.yaml", gold)
        .with_file("base.jsonl", run(&|_| 2))
        .with_file("cur.jsonl", run(&current))
        .with_file(
            "rgate.yaml",
            "gold: gold.yaml\nbaselines: store\nmetrics: [mrr@10]\nretrievers:\n  - name: r\n    run: base.jsonl\n\
             gate:\n  resamples: 500\n  rules:\n    - metric: mrr@10\n      max_drop: 0.02\n      strata: overall\n",
        )
}

/// G1 of the scenario's deltas, from the formula (Joanes & Gill 1998),
/// apart from the code under test.
fn scenario_skewness() -> f64 {
    let d: Vec<f64> = (0..100)
        .map(|i| match i {
            0..=34 => 1.0 / 3.0 - 0.5,
            50 | 70 | 90 => 0.5,
            _ => 0.0,
        })
        .collect();
    let n = 100.0;
    let mean = d.iter().sum::<f64>() / n;
    let m2 = d.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    let m3 = d.iter().map(|v| (v - mean).powi(3)).sum::<f64>() / n;
    m3 / m2.powf(1.5) * (n * (n - 1.0)).sqrt() / (n - 2.0)
}

/// The skew of a check row as JSON gives it, checked against the scenario:
/// the 3 gainers carry all of the gain.
fn assert_skew(row: &Value) {
    let s = &row["skew"];
    assert_eq!(s["direction"], "gain", "{row}");
    assert_eq!(s["carriers"], 3);
    assert_eq!(s["movers"], 3);
    assert!((s["share"].as_f64().unwrap() - 1.0).abs() < 1e-12);
    let want = scenario_skewness();
    assert!(want > 2.0, "{want}");
    assert!(
        (s["skewness"].as_f64().unwrap() - want).abs() < 1e-9,
        "{s} vs {want}"
    );
    let named: Vec<(&str, f64)> = s["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| (q["query_id"].as_str().unwrap(), q["delta"].as_f64().unwrap()))
        .collect();
    assert_eq!(named, [("q-050", 0.5), ("q-070", 0.5), ("q-090", 0.5)]);
}

#[test]
fn a_few_large_gains_are_named_in_every_gate_format() {
    let p = skewed_project().with_args(&["--config", "rgate.yaml"]);
    assert_eq!(p.run(&["baseline", "update"]).code, 0);
    let (_, v) = p.json(&["gate", "--run", "r=cur.jsonl"]);
    let checks = v["retrievers"][0]["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 1);
    assert_skew(&checks[0]);
    let line = "mrr@10 on all: 3 of 100 queries carry 100% of the gain";
    let names = "q-050 +0.5000, q-070 +0.5000, q-090 +0.5000";
    for format in ["table", "markdown", "junit"] {
        let o = p.run(&["gate", "--run", "r=cur.jsonl", "--format", format]);
        assert!(
            o.stdout.contains("Skewed deltas: a few queries carry the change"),
            "{format}: {}",
            o.stdout
        );
        assert!(o.stdout.contains(line), "{format}: {}", o.stdout);
        assert!(o.stdout.contains(names), "{format}: {}", o.stdout);
    }
    let o = p.run(&["gate", "--run", "r=cur.jsonl", "--format", "csv"]);
    let header = o.stdout.lines().next().unwrap();
    assert!(header.ends_with(",skewness,skew_queries"), "{header}");
    assert!(
        o.stdout.contains("q-050 0.5; q-070 0.5; q-090 0.5"),
        "{}",
        o.stdout
    );
}

#[test]
fn a_few_large_gains_are_named_by_compare_and_unchanged_runs_are_not() {
    let p = skewed_project();
    let compare = |runs: [&str; 2], format: &str| {
        let o = p.bare(&[
            "compare",
            "--gold",
            "gold.yaml",
            runs[0],
            runs[1],
            "-m",
            "mrr@10",
            "--format",
            format,
        ]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        o.stdout
    };
    let v: Value = serde_json::from_str(&compare(["base.jsonl", "cur.jsonl"], "json")).unwrap();
    assert_skew(&v["runs"][0]["checks"][0]);
    for format in ["table", "markdown"] {
        let out = compare(["base.jsonl", "cur.jsonl"], format);
        assert!(
            out.contains("mrr@10 on all: 3 of 100 queries carry 100% of the gain"),
            "{out}"
        );
    }
    assert!(compare(["base.jsonl", "cur.jsonl"], "csv").contains("q-050 0.5; q-070 0.5; q-090 0.5"));
    // The same run against itself: every delta 0, nothing skewed.
    let v: Value = serde_json::from_str(&compare(["base.jsonl", "base.jsonl"], "json")).unwrap();
    assert_eq!(v["runs"][0]["checks"][0]["skew"], Value::Null);
    assert!(!compare(["base.jsonl", "base.jsonl"], "table").contains("Skewed"));
}
