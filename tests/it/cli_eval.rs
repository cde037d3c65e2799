//! `rgate eval` end to end: exit code, stdout and stderr together.

use crate::common;

use std::fs;

use common::{fixture, rgate, run};

fn demo(rel: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("config/demo")
        .join(rel)
}

fn eval(gold: &std::path::Path, run_file: &std::path::Path, extra: &[&str]) -> common::Out {
    let mut c = rgate();
    c.arg("eval")
        .arg("--gold")
        .arg(gold)
        .arg("--run")
        .arg(run_file)
        .args(extra);
    run(c)
}

#[test]
fn table_on_the_demo_has_strata_and_macro() {
    // Without intervals (eval_ci.rs tests them), the columns of means.
    let o = eval(
        &demo("gold.yaml"),
        &demo("runs/hybrid.jsonl"),
        &["--by-stratum", "--resamples", "0"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stderr, "");
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert!(lines[0].starts_with("gold "), "{}", o.stdout);
    assert!(lines[2].starts_with("scope"), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("\nall                90     0.8861      0.8444  0.6716   0.7046\n"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("\nidentifier-lookup  30     1.0000      0.9333  0.7967   0.8456\n"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("\nmacro  "), "{}", o.stdout);
}

#[test]
fn json_carries_all_strata_and_per_query() {
    let o = eval(
        &demo("gold.yaml"),
        &demo("runs/bm25.jsonl"),
        &["--format", "json", "--per-query", "-m", "mrr@10"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["queries"], 90);
    let m = &v["metrics"]["mrr@10"];
    // The reference is printed to 4 decimals: it rounds to it.
    assert_eq!(format!("{:.4}", m["all"].as_f64().unwrap()), "0.4888");
    assert!(m["how-to"].is_number() && m["multi-hop"].is_number() && m["macro"].is_number());
    let pq = v["per_query"].as_array().unwrap();
    assert_eq!(pq.len(), 90);
    assert_eq!(pq[0]["query_id"], "q-001");
    assert!(pq[0]["mrr@10"].is_number());
}

#[test]
fn csv_and_markdown() {
    let o = eval(
        &fixture("seed/gold.json"),
        &fixture("seed/run_a.json"),
        &["--format", "csv", "-m", "mrr,P@3", "--resamples", "0"],
    );
    // Without intervals, the columns of means alone.
    assert_eq!(o.stdout, "scope,n,mrr,precision@3\nall,5,0.6667,0.4000\n");
    let o = eval(
        &fixture("seed/gold.json"),
        &fixture("seed/run_a.json"),
        &["--format", "csv", "-m", "mrr", "--per-query"],
    );
    assert_eq!(o.stdout.lines().next().unwrap(), "query,stratum,mrr");
    assert_eq!(o.stdout.lines().count(), 6);
    let o = eval(
        &fixture("seed/gold.json"),
        &fixture("seed/run_a.json"),
        &["--format", "markdown", "-m", "mrr"],
    );
    assert!(o.stdout.contains("| all | 5 | 0.6667 \\["), "{}", o.stdout);
}

#[test]
fn trec_lines_use_canonical_names() {
    let o = eval(
        &fixture("seed/gold.json"),
        &fixture("seed/run_b.json"),
        &["--format", "trec", "--per-query", "-m", "RR,nDCG@3"],
    );
    assert_eq!(o.code, 0);
    assert!(
        o.stdout.starts_with("mrr\tq1\t1.0000\nndcg@3\tq1\t1.0000\n"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.ends_with("mrr\tall\t0.9000\nndcg@3\tall\t0.9262\n"),
        "{}",
        o.stdout
    );
}

#[test]
fn output_flag_writes_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let o = eval(
        &fixture("seed/gold.json"),
        &fixture("seed/run_a.json"),
        &["--format", "json", "--output", out.to_str().unwrap()],
    );
    assert_eq!(o.code, 0);
    assert_eq!(o.stdout, "");
    assert!(fs::read_to_string(out).unwrap().contains("\"schema_version\": 1"));
}

fn write(dir: &tempfile::TempDir, name: &str, content: &str) -> std::path::PathBuf {
    let p = dir.path().join(name);
    fs::write(&p, content).unwrap();
    p
}

#[test]
fn malformed_trec_line_names_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let run_file = write(&d, "run.trec", "q1 Q0 c1 1 2.0 t\nq1 Q0 c2 2 abc t\n");
    let o = eval(&fixture("seed/gold.json"), &run_file, &[]);
    assert_eq!(o.code, 2);
    assert_eq!(o.stdout, "");
    assert!(
        o.stderr.contains("run.trec:2: score `abc` is not a number"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("hint:"), "{}", o.stderr);
}

#[test]
fn non_finite_score_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let run_file = write(&d, "run.trec", "q1 Q0 c1 1 inf t\n");
    let o = eval(&fixture("seed/gold.json"), &run_file, &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("run.trec:1: score `inf` is not finite"),
        "{}",
        o.stderr
    );
}

#[test]
fn qrels_passed_as_run_gets_a_hint() {
    let d = tempfile::tempdir().unwrap();
    let run_file = write(&d, "qrels.txt", "q1 0 c1 1\n");
    let o = eval(&fixture("seed/gold.json"), &run_file, &["--run-format", "trec"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("qrels.txt:1: expected `qid Q0 docid rank score tag`, found 4 fields"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("look like TREC qrels"), "{}", o.stderr);
}

#[test]
fn jsonl_errors_and_warnings() {
    let d = tempfile::tempdir().unwrap();
    let bad = write(
        &d,
        "run.jsonl",
        "{\"query_id\": \"q1\", \"results\": [\"c1\"]}\n{\"query_id\": \"q2\"}\n",
    );
    let o = eval(&fixture("seed/gold.json"), &bad, &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("run.jsonl:2: query `q2`: missing `results`"),
        "{}",
        o.stderr
    );

    let ok = write(
        &d,
        "ok.jsonl",
        "{\"query_id\": \"q1\", \"results\": [{\"id\": \"c7\", \"score\": 0.9}, \"c7\", \"c1\"]}\n{\"query_id\": \"zz\", \"results\": []}\n",
    );
    let o = eval(
        &fixture("seed/gold.json"),
        &ok,
        &["-m", "mrr", "--format", "trec", "--per-query"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    // The repeated c7 is dropped, so c1 sits at rank 2.
    assert!(o.stdout.starts_with("mrr\tq1\t0.5000\n"), "{}", o.stdout);
    assert!(
        o.stderr.contains("1 query is not in the gold set"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("1 repeated document id"), "{}", o.stderr);
    assert!(
        o.stderr.contains("4 of 5 gold queries are absent"),
        "{}",
        o.stderr
    );
}

#[test]
fn scored_json_map_uses_trec_ordering() {
    let d = tempfile::tempdir().unwrap();
    // Ties at 1.0: c9 before c1 (docid descending), so the relevant c1 is 2nd.
    let run_file = write(
        &d,
        "run.json",
        "{\"q1\": {\"c1\": 1.0, \"c9\": 1.0, \"c0\": 0.5}}",
    );
    let o = eval(
        &fixture("seed/gold.json"),
        &run_file,
        &["-m", "mrr", "--format", "trec", "--per-query", "-q"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.starts_with("mrr\tq1\t0.5000\n"), "{}", o.stdout);
    assert_eq!(o.stderr, "");
}

#[test]
fn missing_files_and_bad_metrics() {
    let o = eval(&fixture("seed/nope.yaml"), &fixture("seed/run_a.json"), &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("nope.yaml: cannot read gold set"),
        "{}",
        o.stderr
    );
    let o = eval(
        &fixture("seed/gold.json"),
        &fixture("seed/run_a.json"),
        &["-m", "ndgc@10"],
    );
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("unknown metric `ndgc@10`"), "{}", o.stderr);
    assert!(o.stderr.contains("did you mean `ndcg@10`"), "{}", o.stderr);
}

#[test]
fn shuffled_trec_run_is_read_twice_and_agrees() {
    let d = tempfile::tempdir().unwrap();
    let grouped = write(
        &d,
        "g.trec",
        "q1 Q0 c7 1 3 t\nq1 Q0 c1 2 2 t\nq3 Q0 c9 1 5 t\nq3 Q0 c3 2 4 t\n",
    );
    let shuffled = write(
        &d,
        "s.trec",
        "q3 Q0 c3 2 4 t\nq1 Q0 c1 2 2 t\nq3 Q0 c9 1 5 t\nq1 Q0 c7 1 3 t\n",
    );
    let a = eval(
        &fixture("seed/gold.json"),
        &grouped,
        &["--format", "trec", "--per-query", "-q"],
    );
    let b = eval(
        &fixture("seed/gold.json"),
        &shuffled,
        &["--format", "trec", "--per-query", "-q"],
    );
    assert_eq!(a.code, 0);
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn gold_errors_exit_2_with_line() {
    let d = tempfile::tempdir().unwrap();
    let gold = write(
        &d,
        "gold.yaml",
        "version: 1\nqueries:\n  - id: q1\n    relevant: [a]\n  - id: q1\n    relevant: [b]\n",
    );
    let o = eval(&gold, &fixture("seed/run_a.json"), &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("gold.yaml:5: duplicate query id `q1`"),
        "{}",
        o.stderr
    );
}

#[test]
fn qrels_with_strata_file() {
    let d = tempfile::tempdir().unwrap();
    let strata = write(&d, "strata.tsv", "301\tnews\n302\tnews\n303\tgov\n");
    let o = eval(
        &fixture("trec_eval/qrels.test"),
        &fixture("trec_eval/results.test"),
        &[
            "--strata",
            strata.to_str().unwrap(),
            "--by-stratum",
            "-m",
            "map",
            "--format",
            "csv",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    // Each mean, then its interval: none for the one-query stratum.
    assert!(lines[1].starts_with("all,3,0.1785,"), "{}", o.stdout);
    assert!(lines[2].starts_with("news,2,"), "{}", o.stdout);
    assert_eq!(lines[3], "gov,1,0.0858,,", "{}", o.stdout);
}
