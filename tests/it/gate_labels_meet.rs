//! #49: a gold set whose chunk ids no longer meet the runs (re-cased,
//! renamed, another chunking) is an error naming the likely cause, not a
//! gate that reads 0 against 0 and passes anything.

use crate::common;

use common::TestProject;

const CONFIG: &str = "gold: demo/gold.yaml
baselines: baselines
metrics: [recall@10, ndcg@10]
retrievers:
  - name: hybrid
    run: demo/runs/hybrid.jsonl
gate:
  rules:
    - metric: recall@10
      max_drop: 0.07
      strata: overall
";

fn project() -> TestProject {
    let p = TestProject::demo(&["hybrid"])
        .with_file("rgate.yaml", CONFIG)
        .with_config("rgate.yaml");
    let o = p.run(&["baseline", "update", "--note", "first"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    p
}

/// The demo gold set with every chunk id of its `relevant:` lines in
/// capitals (query ids, texts and strata as they were).
fn recased(gold: &str) -> String {
    gold.lines()
        .map(|l| match l.split_once("relevant:") {
            Some((head, ids)) => format!("{head}relevant:{}", ids.to_uppercase()),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// One JSON line per query of `run`, every result id replaced by one no
/// gold set labels.
fn junk(run: &str) -> String {
    run.lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let n = v["results"].as_array().unwrap().len();
            v["results"] = (0..n).map(|i| format!("nowhere/{i}.md#0")).collect();
            v.to_string() + "\n"
        })
        .collect()
}

#[test]
fn recased_gold_ids_make_the_gate_refuse() {
    let p = project();
    // The ordinary demo passes.
    let o = p.run(&["gate"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let before = p.read("baselines/hybrid.json");

    let gold = p.read("demo/gold.yaml");
    let upper = recased(&gold);
    assert_ne!(gold, upper);
    assert!(upper.contains("\"DOCS/ERRORS.MD#6\": 2"), "{upper}");
    p.write("demo/gold.yaml", &upper);
    let o = p.run(&["gate"]);
    assert_eq!(o.code, 2, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.is_empty(), "{}", o.stdout);
    for needle in [
        "no chunk the run retrieved carries a label",
        "ids renamed, re-cased, or another chunking",
        "the gold set changed since the baseline was recorded",
        "a case-insensitive match would hit",
        "the ids were re-cased",
        "hint:",
    ] {
        assert!(o.stderr.contains(needle), "{needle}: {}", o.stderr);
    }
    // Refused, not recorded: the baseline is as it was.
    assert_eq!(p.read("baselines/hybrid.json"), before);

    // With the ids spelled as the runs spell them again, it passes.
    p.write("demo/gold.yaml", &gold);
    assert_eq!(p.run(&["gate"]).code, 0);
}

#[test]
fn a_run_meeting_no_label_is_refused_without_a_case_hint() {
    let p = project();
    p.write("junk.jsonl", junk(&p.read("demo/runs/hybrid.jsonl")));
    let o = p.run(&["gate", "--run", "hybrid=junk.jsonl"]);
    assert_eq!(o.code, 2, "{}{}", o.stdout, o.stderr);
    assert!(
        o.stderr.contains("no chunk the run retrieved carries a label"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("junk.jsonl"), "{}", o.stderr);
    assert!(!o.stderr.contains("case-insensitive"), "{}", o.stderr);
}

/// 12 labelled queries; the baseline retrieves the labelled chunk of the
/// first `met` of them, the current run of none: recall@10 met/12 -> 0.
fn sparse(met: usize) -> common::Out {
    let mut gold = String::from("version: 1\nqueries:\n");
    let (mut base, mut cur) = (String::new(), String::new());
    for q in 0..12 {
        gold += &format!("  - id: q{q}\n    text: t{q}\n    relevant: [d{q}]\n");
        let first = if q < met { format!("d{q}") } else { format!("x{q}") };
        base += &format!("{{\"query_id\": \"q{q}\", \"results\": [\"{first}\", \"y{q}\"]}}\n");
        cur += &format!("{{\"query_id\": \"q{q}\", \"results\": [\"x{q}\", \"y{q}\"]}}\n");
    }
    let p = TestProject::new()
        .with_file("gold.yaml", gold)
        .with_file("base.jsonl", base)
        .with_file("cur.jsonl", cur)
        .with_file(
            "rgate.yaml",
            "gold: gold.yaml\nbaselines: baselines\nmetrics: [recall@10]\nretrievers:\n  - name: r\n    run: base.jsonl\ngate:\n  rules:\n    - metric: recall@10\n      max_drop: 0\n",
        )
        .with_config("rgate.yaml");
    assert_eq!(p.run(&["baseline", "update", "--note", "n"]).code, 0);
    p.run(&["gate", "--run", "r=cur.jsonl"])
}

/// A sparse gold set keeps its verdict: a baseline that met labels on 9
/// queries (one fewer than the check needs) and a run meeting none is a
/// regression (exit 1); from 10 the run is refused (exit 2).
#[test]
fn the_threshold_leaves_sparse_gold_sets_their_verdict() {
    let o = sparse(9);
    assert_eq!(o.code, 1, "{}{}", o.stdout, o.stderr);
    assert!(!o.stderr.contains("no longer meet"), "{}", o.stderr);
    let o = sparse(10);
    assert_eq!(o.code, 2, "{}{}", o.stdout, o.stderr);
    assert!(
        o.stderr.contains("where the baseline met labels on 10"),
        "{}",
        o.stderr
    );
}
