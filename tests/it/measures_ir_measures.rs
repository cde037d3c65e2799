//! ir_measures' syntax and values: each measure name of
//! tests/fixtures/ir_measures/*.tsv parses, and rgate's per-query values and
//! means equal the ones ir_measures computed (make.py beside the fixtures
//! is the command that produced them, run once; these tests need no
//! Python).

use crate::common;

use std::collections::BTreeMap;
use std::fs;

use common::{fixture, rgate, run};
use rgate::metrics::Metric;

/// How close a value must be. pytrec_eval runs trec_eval's own C, so its
/// values agree to rounding; gdeval.pl prints ERR with 5 decimals; cwl_eval
/// (RBP) orders tied scores its own way (rgate keeps trec_eval's order), so
/// a relevant document tied with others may sit a few ranks apart, which
/// moves RBP by p^rank.
fn tolerance(measure: &str) -> f64 {
    if measure.starts_with("ERR") {
        5e-6 + 1e-12
    } else if measure.starts_with("RBP") {
        1e-6
    } else {
        1e-12
    }
}

/// `(measure, query) -> value` from a fixture.
fn expected(case: &str) -> BTreeMap<(String, String), f64> {
    let text = fs::read_to_string(fixture(&format!("ir_measures/{case}.tsv"))).unwrap();
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            ((f[0].to_string(), f[1].to_string()), f[2].parse().unwrap())
        })
        .collect()
}

/// The number of values compared: the fixture's lines less the measures
/// skipped below (counted from the .tsv files with a line filter, not by
/// this code), so a skip that swallowed a whole measure would show.
fn check(case: &str, gold: &str, results: &str) -> usize {
    let want = expected(case);
    let mut names: Vec<String> = Vec::new();
    for (m, _) in want.keys() {
        if !names.contains(m) {
            names.push(m.clone());
        }
    }
    let mut c = rgate();
    c.args([
        "eval",
        "--format",
        "json",
        "--per-query",
        "--resamples",
        "0",
        "--metrics",
    ])
    .arg(names.join(","))
    .arg("--gold")
    .arg(fixture(gold))
    .arg("--run")
    .arg(fixture(results));
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let mut compared = 0;
    for ((measure, qid), w) in &want {
        // ir_measures' NumQ counts the queries the run answered; rgate's
        // num_q counts every gold query, as trec_eval -c does (a missing
        // query is evaluated on an empty ranking).
        if measure == "NumQ" {
            continue;
        }
        // Likewise NumRel: ir_measures gives a query the run lacks 0,
        // trec_eval -c (and rgate) its relevant count.
        if measure == "NumRel" && case != "rel_level" {
            continue;
        }
        // cwl_eval orders tied scores its own way (query 2 of the ties
        // fixture has three documents tied at 2.0); rgate keeps trec_eval's
        // order, as pytrec_eval does for every other measure here.
        if measure.starts_with("RBP") && case == "ties" {
            continue;
        }
        let m: Metric = measure.parse().unwrap_or_else(|e| panic!("{measure}: {e}"));
        let key = m.name();
        let got = if qid == "all" {
            v["metrics"][&key]["all"].as_f64()
        } else {
            v["per_query"]
                .as_array()
                .unwrap()
                .iter()
                .find(|q| q["query_id"] == qid.as_str())
                .and_then(|q| q[&key].as_f64())
        };
        let got = got.unwrap_or_else(|| panic!("rgate printed no {key} for {qid}"));
        assert!(
            (got - w).abs() <= tolerance(measure),
            "{case}: {measure} ({key}) for query {qid}: rgate {got}, ir_measures {w}"
        );
        compared += 1;
    }
    compared
}

/// Grades -1 to 4 (negative: pooled, unjudged), deep runs.
#[test]
fn graded_qrels_with_negative_grades() {
    assert_eq!(
        check("rel_level", "trec_eval/qrels.rel_level", "trec_eval/results.test"),
        108
    );
}

/// A query the run lacks scores 0, as in ir_measures' output.
#[test]
fn a_missing_query() {
    assert_eq!(
        check("trunc", "trec_eval/qrels.test", "trec_eval/results.trunc"),
        112
    );
}

/// Tied scores (broken by document id, descending, as trec_eval does),
/// grades -2 to 3, a labeled query with no results.
#[test]
fn ties_and_a_query_without_results() {
    assert_eq!(
        check("ties", "ir_measures/qrels.ties", "ir_measures/run.ties"),
        96
    );
}

/// ir_measures' spellings name rgate's metrics.
#[test]
fn ir_measures_spellings() {
    for (typed, name) in [
        ("P(rel=2)@10", "precision(rel=2)@10"),
        ("RR(rel=2)", "mrr(rel=2)"),
        ("nDCG@10", "ndcg@10"),
        ("nDCG(dcg='log2')@10", "ndcg@10"),
        ("ERR@10", "err@10"),
        ("RBP(rel=1,p=0.8)", "rbp(rel=1,p=0.8)"),
        ("Bpref", "bpref"),
        ("infAP", "infap"),
        ("Judged@10", "judged@10"),
        ("NumRet", "num_ret"),
        ("NumRel", "num_rel"),
        ("SetP", "set_p"),
        ("SetR", "set_recall"),
        ("SetF", "set_f"),
        ("Success@5", "hit_rate@5"),
        ("R@1000", "recall@1000"),
        ("AP@100", "map@100"),
        ("IPrec@0.5", "iprec_at_recall@0.50"),
    ] {
        let m: Metric = typed.parse().unwrap_or_else(|e| panic!("{typed}: {e}"));
        assert_eq!(m.name(), name, "{typed}");
        assert_eq!(m.name().parse::<Metric>().unwrap(), m, "{typed}");
    }
}
