//! `rgate eval --curve METRIC@A..B [--target T]` (issue 31 items 2, 3 and
//! 5; SPEC "Tuning knobs"): the curve equals per-cutoff `eval`, the target
//! depth equals a hand computation, a candidate list gives the ceiling
//! curve, and every format carries it.

use crate::common::TestProject;

use serde_json::Value;

fn ok_json(p: &TestProject, args: &[&str]) -> Value {
    let (code, v) = p.json(args);
    assert_eq!(code, 0, "{v}");
    v
}

/// The scope named `scope` of the first curve.
fn scope<'a>(v: &'a Value, scope: &str) -> &'a Value {
    v["curves"][0]["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scope"] == scope)
        .unwrap_or_else(|| panic!("no scope {scope}: {v}"))
}

/// Every point of `recall@1..12` on the demo's hybrid run, overall and per
/// stratum, is the mean and the 95% interval that `eval -m recall@k
/// --by-stratum` prints for that k (same resamples, same seed).
#[test]
fn the_curve_is_the_per_cutoff_evals_side_by_side() {
    let p = TestProject::demo(&["hybrid"]);
    let base = [
        "eval",
        "--gold",
        "demo/gold.yaml",
        "--run",
        "demo/runs/hybrid.jsonl",
    ];
    let mut args = base.to_vec();
    args.extend(["--curve", "recall@1..12"]);
    let curve = ok_json(&p, &args);
    assert_eq!(curve["curves"][0]["metric"], "recall@1..12");
    let strata = ["all", "identifier-lookup", "how-to", "multi-hop"];
    for k in 1..=12 {
        let metric = format!("recall@{k}");
        let mut args = base.to_vec();
        args.extend(["-m", &metric, "--by-stratum"]);
        let one = ok_json(&p, &args);
        for s in strata {
            let point = &scope(&curve, s)["points"][k - 1];
            assert_eq!(point["k"], k, "{s}");
            assert_eq!(point["mean"], one["metrics"][&metric][s], "{metric} {s}");
            assert_eq!(
                point["ci_low"], one["intervals"][&metric][s]["ci_low"],
                "{metric} {s}"
            );
            assert_eq!(
                point["ci_high"], one["intervals"][&metric][s]["ci_high"],
                "{metric} {s}"
            );
            assert_eq!(point["ceiling"], Value::Null);
        }
    }
}

/// Stratum `a`: 20 queries with one relevant document each, found at rank
/// 1 (10 queries), 2 (5), 3 (4) and 5 (1). Stratum `b`: 30 queries with two
/// relevant documents, found at ranks 1 and 2 (27 queries) or 1 and 4 (3).
fn depth_project() -> TestProject {
    let mut gold = String::new();
    let mut run = String::new();
    let filler = |n: usize| (0..n).map(|i| format!("\"x{i}\"")).collect::<Vec<_>>();
    for i in 0..20 {
        let rank = match i {
            0..=9 => 1,
            10..=14 => 2,
            15..=18 => 3,
            _ => 5,
        };
        gold += &format!("{{\"id\": \"a{i:02}\", \"stratum\": \"a\", \"relevant\": [\"a{i}\"]}}\n");
        let mut results = filler(rank - 1);
        results.push(format!("\"a{i}\""));
        results.extend(filler(8).into_iter().skip(rank));
        run += &format!(
            "{{\"query_id\": \"a{i:02}\", \"results\": [{}]}}\n",
            results.join(", ")
        );
    }
    for i in 0..30 {
        gold +=
            &format!("{{\"id\": \"b{i:02}\", \"stratum\": \"b\", \"relevant\": [\"b{i}-1\", \"b{i}-2\"]}}\n");
        let results = if i < 27 {
            format!("\"b{i}-1\", \"b{i}-2\", \"x0\", \"x1\", \"x2\"")
        } else {
            format!("\"b{i}-1\", \"x0\", \"x1\", \"b{i}-2\", \"x2\"")
        };
        run += &format!("{{\"query_id\": \"b{i:02}\", \"results\": [{results}]}}\n");
    }
    TestProject::new()
        .with_file("gold.jsonl", gold)
        .with_file("run.jsonl", run)
}

/// The target depth by hand. Means of recall@1..5: `a` 0.5, 0.75, 0.95,
/// 0.95, 1; `b` 0.5, 0.95, 0.95, 1, 1; all (50 queries) 0.5, 0.87, 0.95,
/// 0.98, 1. Lower bounds, computed once in Python by bisection
/// (`a`: Clopper-Pearson, the binomial tail `sum(comb(20, j) p^j (1 -
/// p)^(20 - j), j >= s) = 0.05`; `b` and all: Chernoff, `n KL(mean || q) =
/// ln 20`): `a` 0.3020, 0.5444, 0.7839, 0.7839, 0.8609; `b` 0.2873, 0.7937,
/// 0.7937, 0.9050, 0.9050; all 0.3320, 0.7268, 0.8386, 0.8904, 0.9418. At
/// target 0.85, from k = 5 down: `a` accepts 5 and stops at 4; `b` accepts
/// 5 and 4 and stops at 3; all accepts 5 and 4 and stops at 3. The means
/// first reach 0.85 at k = 3 (`a`), 2 (`b`) and 2 (all).
#[test]
fn the_target_depth_matches_a_hand_computation() {
    let p = depth_project();
    let v = ok_json(
        &p,
        &[
            "eval",
            "--gold",
            "gold.jsonl",
            "--run",
            "run.jsonl",
            "--curve",
            "recall@1..5",
            "--target",
            "0.85",
        ],
    );
    let c = &v["curves"][0];
    assert_eq!(c["target"], 0.85);
    let want = [
        (
            "all",
            50,
            "chernoff",
            [0.5, 0.87, 0.95, 0.98, 1.0],
            [0.3320, 0.7268, 0.8386, 0.8904, 0.9418],
            4,
            2,
        ),
        (
            "a",
            20,
            "clopper-pearson",
            [0.5, 0.75, 0.95, 0.95, 1.0],
            [0.3020, 0.5444, 0.7839, 0.7839, 0.8609],
            5,
            3,
        ),
        (
            "b",
            30,
            "chernoff",
            [0.5, 0.95, 0.95, 1.0, 1.0],
            [0.2873, 0.7937, 0.7937, 0.9050, 0.9050],
            4,
            2,
        ),
    ];
    let names: Vec<&str> = c["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["scope"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["all", "a", "b"]);
    for (name, n, method, means, bounds, k, k_mean) in want {
        let s = scope(&v, name);
        assert_eq!(s["n"], n, "{name}");
        assert_eq!(s["bound_method"], method, "{name}");
        for (j, (m, b)) in means.iter().zip(bounds).enumerate() {
            let pt = &s["points"][j];
            assert!(
                (pt["mean"].as_f64().unwrap() - m).abs() < 1e-12,
                "{name} k {}: {pt}",
                j + 1
            );
            assert!(
                (pt["lower_bound"].as_f64().unwrap() - b).abs() < 5e-5,
                "{name} k {}: {pt}",
                j + 1
            );
        }
        assert_eq!(s["depth"]["k"], k, "{name}");
        assert_eq!(s["depth"]["k_mean"], k_mean, "{name}");
    }
    // A target no depth reaches within the range: null, and the words say so.
    let v = ok_json(
        &p,
        &[
            "eval",
            "--gold",
            "gold.jsonl",
            "--run",
            "run.jsonl",
            "--curve",
            "recall@1..5",
            "--target",
            "0.95",
        ],
    );
    assert_eq!(scope(&v, "a")["depth"]["k"], Value::Null);
    assert_eq!(scope(&v, "a")["depth"]["k_mean"], 3);
    let o = p.run(&[
        "eval",
        "--gold",
        "gold.jsonl",
        "--run",
        "run.jsonl",
        "--curve",
        "recall@1..5",
        "--target",
        "0.85",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("a (20): k = 5 (mean 1.0000, lower bound 0.8609; the mean reaches it at k = 3)"),
        "{}",
        o.stdout
    );
    let o = p.run(&[
        "eval",
        "--gold",
        "gold.jsonl",
        "--run",
        "run.jsonl",
        "--curve",
        "recall@1..5",
        "--target",
        "0.95",
    ]);
    assert!(
        o.stdout.contains("a (20): not within recall@1..5"),
        "{}",
        o.stdout
    );
}

/// With a candidate list each point carries the ceiling: what `eval`
/// reports as `stages.ceiling` for that metric, k by k (the demo's
/// reranked run over hybrid's top 20).
#[test]
fn candidates_give_the_ceiling_curve() {
    let p = TestProject::demo(&["reranked", "hybrid"]);
    let base = [
        "eval",
        "--gold",
        "demo/gold.yaml",
        "--run",
        "demo/runs/reranked.jsonl",
        "--candidates",
        "demo/runs/hybrid.jsonl",
    ];
    let mut args = base.to_vec();
    args.extend(["--curve", "recall@1..10"]);
    let curve = ok_json(&p, &args);
    assert_eq!(curve["curves"][0]["ceiling"], true);
    for k in [1usize, 2, 3, 5, 10] {
        let metric = format!("recall@{k}");
        let mut args = base.to_vec();
        args.extend(["-m", &metric]);
        let one = ok_json(&p, &args);
        for s in ["all", "identifier-lookup", "how-to", "multi-hop"] {
            let point = &scope(&curve, s)["points"][k - 1];
            assert_eq!(
                point["ceiling"], one["stages"]["ceiling"][&metric][s],
                "{metric} {s}"
            );
            assert_eq!(point["mean"], one["metrics"][&metric][s], "{metric} {s}");
        }
    }
    // The ceiling of the final run is above it somewhere (the reranker is
    // not perfect), and never below.
    let all = scope(&curve, "all")["points"].as_array().unwrap();
    assert!(all
        .iter()
        .all(|p| p["ceiling"].as_f64().unwrap() >= p["mean"].as_f64().unwrap()));
    // A `candidates:` curve needs the list.
    let o = p.run(&[
        "eval",
        "--gold",
        "demo/gold.yaml",
        "--run",
        "demo/runs/reranked.jsonl",
        "--curve",
        "candidates:recall@1..5",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("--candidates"), "{}", o.stderr);
}

/// Table, markdown and CSV carry the curve and the target's answer; the
/// trec format, a malformed range and a target out of (0, 1] are usage
/// errors (exit 2).
#[test]
fn every_format_shows_the_curve_and_bad_asks_are_refused() {
    let p = depth_project();
    let args = [
        "eval",
        "--gold",
        "gold.jsonl",
        "--run",
        "run.jsonl",
        "--curve",
        "recall@1..5",
        "--target",
        "0.85",
    ];
    let table = p.run(&args);
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert!(table.stdout.contains("curve recall@1..5"), "{}", table.stdout);
    assert!(
        table.stdout.contains("target recall@k >= 0.85"),
        "{}",
        table.stdout
    );
    let mut md_args = vec!["--format", "markdown"];
    md_args.extend(args);
    let md = p.run(&md_args);
    assert_eq!(md.code, 0, "{}", md.stderr);
    assert!(md.stdout.contains("| scope | n | k | mean |"), "{}", md.stdout);
    assert!(md.stdout.contains("- b (30): k = 4"), "{}", md.stdout);
    let mut csv_args = vec!["--format", "csv"];
    csv_args.extend(args);
    let csv = p.run(&csv_args);
    assert_eq!(csv.code, 0, "{}", csv.stderr);
    let lines: Vec<&str> = csv.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "curve,scope,n,k,mean,ci_low,ci_high,lower_bound,bound_method,ceiling,target,target_k,target_k_mean"
    );
    // 3 scopes x 5 cutoffs.
    assert_eq!(lines.len(), 1 + 15);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("recall@1..5,a,20,5,1,") && l.ends_with(",0.85,5,3")),
        "{}",
        csv.stdout
    );
    let refused = [
        vec![
            "--format",
            "trec",
            "eval",
            "--gold",
            "gold.jsonl",
            "--run",
            "run.jsonl",
            "--curve",
            "recall@1..5",
        ],
        vec![
            "eval",
            "--gold",
            "gold.jsonl",
            "--run",
            "run.jsonl",
            "--curve",
            "recall@5..1",
        ],
        vec![
            "eval",
            "--gold",
            "gold.jsonl",
            "--run",
            "run.jsonl",
            "--curve",
            "recall@1..x",
        ],
        vec![
            "eval",
            "--gold",
            "gold.jsonl",
            "--run",
            "run.jsonl",
            "--curve",
            "mrr",
        ],
        vec![
            "eval",
            "--gold",
            "gold.jsonl",
            "--run",
            "run.jsonl",
            "--curve",
            "recall@1..5",
            "--target",
            "1.5",
        ],
        vec![
            "eval",
            "--gold",
            "gold.jsonl",
            "--run",
            "run.jsonl",
            "--target",
            "0.9",
        ],
    ];
    for a in refused {
        let o = p.run(&a);
        assert_eq!(o.code, 2, "{a:?}: {}", o.stderr);
        assert!(o.stdout.is_empty(), "{a:?}: {}", o.stdout);
    }
}
