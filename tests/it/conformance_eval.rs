//! rgate eval against known answers: the seed example and trec_eval's own
//! test suite (tests/fixtures/README.md says where each file came from).

use crate::common;

use std::collections::HashMap;

use common::{fixture, rgate, run};
use rgate::metrics::Metric;

fn eval_json(gold: &str, run_file: &str, metrics: &str) -> serde_json::Value {
    let mut c = rgate();
    c.args(["eval", "--format", "json", "--metrics", metrics, "--gold"])
        .arg(fixture(gold))
        .arg("--run")
        .arg(fixture(run_file));
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    serde_json::from_str(&o.stdout).unwrap()
}

#[test]
fn seed_example_run_a() {
    let v = eval_json(
        "seed/gold.json",
        "seed/run_a.json",
        "hit_rate@1,hit_rate@3,mrr,ndcg@3",
    );
    let m = &v["metrics"];
    assert_eq!(
        format!("{:.4}", m["hit_rate@1"]["all"].as_f64().unwrap()),
        "0.4000"
    );
    assert_eq!(
        format!("{:.4}", m["hit_rate@3"]["all"].as_f64().unwrap()),
        "1.0000"
    );
    assert_eq!(format!("{:.4}", m["mrr"]["all"].as_f64().unwrap()), "0.6667");
    assert_eq!(format!("{:.4}", m["ndcg@3"]["all"].as_f64().unwrap()), "0.7649");
}

#[test]
fn seed_example_run_b() {
    let v = eval_json(
        "seed/gold.json",
        "seed/run_b.json",
        "hit_rate@1,recall@1,mrr,ndcg@3",
    );
    let m = &v["metrics"];
    assert_eq!(
        format!("{:.4}", m["hit_rate@1"]["all"].as_f64().unwrap()),
        "0.8000"
    );
    // True recall: q3 has two relevant chunks and finds one at rank 1.
    assert_eq!(format!("{:.4}", m["recall@1"]["all"].as_f64().unwrap()), "0.7000");
    assert_eq!(format!("{:.4}", m["mrr"]["all"].as_f64().unwrap()), "0.9000");
    assert_eq!(format!("{:.4}", m["ndcg@3"]["all"].as_f64().unwrap()), "0.9262");
}

#[test]
fn seed_expected_json_matches_every_listed_metric() {
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("seed/expected.json")).unwrap()).unwrap();
    for (run_name, metrics) in expected.as_object().unwrap() {
        let names: Vec<&String> = metrics.as_object().unwrap().keys().collect();
        let list = names.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(",");
        let v = eval_json("seed/gold.json", &format!("seed/{run_name}"), &list);
        for (name, want) in metrics.as_object().unwrap() {
            let got = v["metrics"][name.as_str()]["all"].as_f64().unwrap();
            let want = want.as_f64().unwrap();
            if run_name == "run_b.json" && name == "recall@1" {
                // The seed's "recall" is the hit rate; SPEC's recall@1 is 0.7.
                assert!((got - 0.7).abs() < 1e-9);
                continue;
            }
            assert!((got - want).abs() < 5e-7, "{run_name} {name}: {got} vs {want}");
        }
    }
}

/// trec_eval measure name -> rgate metric, for the measures SPEC maps.
fn mapped(measure: &str) -> Option<Metric> {
    let m: Metric = measure.parse().ok()?;
    (m.trec_eval_name().as_deref() == Some(measure)).then_some(m)
}

/// Every mapped (measure, qid) value of a trec_eval output file equals
/// rgate's `--format trec --per-query` line to the 4 printed decimals.
fn check_trec_eval(expected: &str, qrels: &str, results: &str, extra: &[&str], min_measures: usize) -> usize {
    let text = std::fs::read_to_string(fixture(expected)).unwrap();
    let mut want: HashMap<(String, String), String> = HashMap::new();
    let mut metrics: Vec<Metric> = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').map(str::trim).collect();
        if let Some(m) = mapped(f[0]) {
            if !metrics.contains(&m) {
                metrics.push(m);
            }
            want.insert((f[0].to_string(), f[1].to_string()), f[2].to_string());
        }
    }
    assert!(
        metrics.len() >= min_measures,
        "expected many mapped measures, got {}",
        metrics.len()
    );
    let list: Vec<String> = metrics.iter().map(Metric::name).collect();
    let mut c = rgate();
    c.args([
        "eval",
        "--format",
        "trec",
        "--per-query",
        "--metrics",
        &list.join(","),
    ])
    .arg("--gold")
    .arg(fixture(qrels))
    .arg("--run")
    .arg(fixture(results))
    .args(extra);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut got: HashMap<(String, String), String> = HashMap::new();
    for line in o.stdout.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let m: Metric = f[0].parse().unwrap();
        got.insert((m.trec_eval_name().unwrap(), f[1].to_string()), f[2].to_string());
    }
    let mut compared = 0;
    for (key, w) in &want {
        let g = got.get(key).unwrap_or_else(|| panic!("rgate printed no {key:?}"));
        assert_eq!(g, w, "{} for query {}", key.0, key.1);
        compared += 1;
    }
    compared
}

#[test]
fn trec_eval_suite_all_trec() {
    let n = check_trec_eval(
        "trec_eval/out.test.aq",
        "trec_eval/qrels.test",
        "trec_eval/results.test",
        &[],
        90,
    );
    // Every line trec_eval printed: all_trec's 96 measures per query and
    // 99 in `all` (measures/trec_eval.rs checks the bytes).
    assert_eq!(n, 387);
}

#[test]
fn trec_eval_suite_missing_query_counts_as_zero() {
    // -c: query 302 is absent from results.trunc and scores 0 in the mean.
    let n = check_trec_eval(
        "trec_eval/out.test.aqc",
        "trec_eval/qrels.test",
        "trec_eval/results.trunc",
        &[],
        90,
    );
    assert_eq!(n, 387);
}

#[test]
fn trec_eval_suite_relevance_level_two() {
    let n = check_trec_eval(
        "trec_eval/out.test.aql",
        "trec_eval/qrels.rel_level",
        "trec_eval/results.test",
        &["--relevance-level", "2"],
        90,
    );
    assert_eq!(n, 387);
}

#[test]
fn trec_eval_suite_measure_parameters() {
    // Cutoffs and parameters other than trec_eval's defaults
    // (iprec_at_recall levels, P.5,7,3, Rprec_mult multiples, utility's
    // coefficients, 11pt_avg's levels, ndcg's gains, ...), per query and
    // the mean, in rgate's own spelling of each.
    let n = check_trec_eval(
        "trec_eval/out.test.meas_params",
        "trec_eval/qrels.test",
        "trec_eval/results.test",
        &[],
        22,
    );
    assert_eq!(n, 88, "22 measures, 4 rows each");
}

#[test]
fn missing_query_is_named_on_stderr() {
    let mut c = rgate();
    c.args(["eval", "--gold"])
        .arg(fixture("trec_eval/qrels.test"))
        .arg("--run")
        .arg(fixture("trec_eval/results.trunc"));
    let o = run(c);
    assert_eq!(o.code, 0);
    assert!(
        o.stderr
            .contains("1 of 3 gold queries is absent; it scores 0 on every metric: `302`"),
        "{}",
        o.stderr
    );
    assert!(!o.stdout.contains("warning"));
}
