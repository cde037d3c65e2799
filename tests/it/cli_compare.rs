//! `rgate compare` end to end.

use crate::common;

use common::{fixture, rgate, run, Out};
use serde_json::Value;

fn compare(args: &[&str], runs: &[&str], gold: &str) -> Out {
    let mut c = rgate();
    c.arg("compare").arg("--gold").arg(fixture(gold)).args(args);
    for r in runs {
        c.arg(fixture(r));
    }
    run(c)
}

fn json(args: &[&str], runs: &[&str], gold: &str) -> Value {
    let mut a = vec!["--format", "json"];
    a.extend_from_slice(args);
    let o = compare(&a, runs, gold);
    assert_eq!(o.code, 0, "{}", o.stderr);
    serde_json::from_str(&o.stdout).unwrap()
}

fn row<'a>(v: &'a Value, metric: &str) -> &'a Value {
    v["runs"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == metric && c["stratum"] == "all")
        .unwrap()
}

const SPEC_KEYS: [&str; 12] = [
    "metric",
    "stratum",
    "n",
    "baseline",
    "current",
    "delta",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "test",
    "verdict",
];

#[test]
fn seed_example_json_carries_spec_keys_and_values() {
    let v = json(
        &["-m", "hit_rate@1,mrr,ndcg@3"],
        &["seed/run_a.json", "seed/run_b.json"],
        "seed/gold.json",
    );
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["verdict"], "none");
    assert_eq!(v["settings"]["seed"], 20261129);
    assert_eq!(v["settings"]["resamples"], 10000);
    assert_eq!(v["baseline_run"]["name"], "run_a");
    assert_eq!(v["runs"][0]["name"], "run_b");
    for c in v["runs"][0]["checks"].as_array().unwrap() {
        for k in SPEC_KEYS {
            assert!(c.get(k).is_some(), "{k} missing in {c}");
        }
        // Five queries: below the small-scope size, the exact sign-flip
        // test replaces the bootstrap, and the row says so.
        assert_eq!(c["test"], "randomization");
        assert_eq!(c["verdict"], "not-gated");
    }
    let h = row(&v, "hit_rate@1");
    assert!((h["delta"].as_f64().unwrap() - 0.4).abs() < 1e-12);
    assert_eq!(h["baseline"], 0.4);
    assert_eq!(h["current"], 0.8);
    assert_eq!(
        (h["wins"].as_u64(), h["ties"].as_u64(), h["losses"].as_u64()),
        (Some(3), Some(1), Some(1))
    );
    // Deltas +1, +1, +1, -1, 0: of the 16 sign patterns of the four
    // non-zero ones, 10 have |sum| >= 2 (sums 4, 2 x4, -2 x4, -4). The
    // other values are from tests/fixtures/compare/seed_randomization.py
    // (brute-force sign patterns; scipy's t interval, which the sign-flip
    // test reports): mrr and ndcg@3 each 8/16, so Holm over the three
    // metrics gives 1 everywhere (uncorrected, hit_rate@1 would stay 0.625).
    let p = h["p_value"].as_f64().unwrap();
    assert_eq!(p, 10.0 / 16.0);
    assert_eq!(h["p_adjusted"].as_f64().unwrap(), 1.0, "{h}");
    // The interval is the sign-flip test inverted: shifted by any margin,
    // the 5 deltas give at best p = 2^-5 = 0.031, above the 0.025 each tail
    // of a 95% interval allows, so the test excludes no margin, and the
    // interval is all the metric allows: a 0/1 mean of 0.4 can move by
    // -0.4 to +0.6.
    assert_eq!(h["ci_low"].as_f64(), Some(-0.4), "{h}");
    assert_eq!(h["ci_high"].as_f64(), Some(0.6), "{h}");
    for (metric, delta) in [("mrr", 0.23333333333333334), ("ndcg@3", 0.16131471927654584)] {
        let r = row(&v, metric);
        assert!((r["delta"].as_f64().unwrap() - delta).abs() < 1e-12, "{r}");
        assert_eq!(r["p_value"].as_f64().unwrap(), 0.5, "{r}");
        assert_eq!(r["p_adjusted"].as_f64().unwrap(), 1.0, "{r}");
    }
}

#[test]
fn identical_runs_give_no_change() {
    let v = json(&[], &["seed/run_a.json", "seed/run_a.json"], "seed/gold.json");
    for c in v["runs"][0]["checks"].as_array().unwrap() {
        assert_eq!(c["delta"], 0.0);
        assert_eq!(c["p_value"], 1.0);
    }
}

#[test]
fn every_test_and_alternative() {
    let runs = ["trec_eval/results.test", "trec_eval/results.trunc"];
    for test in ["bootstrap", "t-test", "randomization"] {
        let v = json(&["--test", test, "-m", "map,P@10"], &runs, "trec_eval/qrels.test");
        // Three queries: the bootstrap gives way to the exact sign-flip test.
        let ran = if test == "bootstrap" {
            "randomization"
        } else {
            test
        };
        assert_eq!(row(&v, "map")["test"], ran);
        assert_eq!(v["settings"]["test"], test);
    }
    // results.trunc lost query 302 entirely: map fell.
    let less = json(
        &["--alternative", "less", "-m", "map"],
        &runs,
        "trec_eval/qrels.test",
    );
    let greater = json(
        &["--alternative", "greater", "-m", "map"],
        &runs,
        "trec_eval/qrels.test",
    );
    assert!(row(&less, "map")["delta"].as_f64().unwrap() < 0.0);
    assert!(
        row(&less, "map")["p_value"].as_f64().unwrap() < row(&greater, "map")["p_value"].as_f64().unwrap()
    );
}

#[test]
fn trec_eval_runs_print_a_readable_table() {
    let o = compare(
        &["-m", "map,ndcg@10,recall@100"],
        &["trec_eval/results.test", "trec_eval/results.trunc"],
        "trec_eval/qrels.test",
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert!(lines[0].starts_with("rgate compare · gold "), "{}", o.stdout);
    assert!(
        lines[0].ends_with("(3 queries) · seed 20261129, B=10000"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("results.trunc vs results.test"), "{}", o.stdout);
    let map_line = o.stdout.lines().find(|l| l.starts_with("map ")).unwrap();
    assert!(
        map_line.contains(" 0.1785 ") && map_line.contains(" 0.1016 "),
        "{map_line}"
    );
    assert!(o.stderr.contains("only 3 queries"), "{}", o.stderr);
    assert!(o.stderr.contains("`302`"), "{}", o.stderr);
}

#[test]
fn fixed_seed_repeats_and_seed_matters() {
    let runs = ["seed/run_a.json", "seed/run_b.json"];
    let a = compare(&["--format", "csv"], &runs, "seed/gold.json");
    let b = compare(&["--format", "csv"], &runs, "seed/gold.json");
    let c = compare(&["--format", "csv", "--seed", "7"], &runs, "seed/gold.json");
    assert_eq!(a.stdout, b.stdout);
    assert_ne!(a.stdout, c.stdout);
    assert!(a
        .stdout
        .lines()
        .next()
        .unwrap()
        .ends_with(",test,resamples,seed,skewness,skew_queries,effect_size,correction"));
}

#[test]
fn by_stratum_and_markdown() {
    let mut c = rgate();
    c.args([
        "compare",
        "--by-stratum",
        "--format",
        "markdown",
        "-m",
        "recall@10",
        "--gold",
    ])
    .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/demo/gold.yaml"))
    .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/demo/runs/bm25.jsonl"))
    .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/demo/runs/hybrid.jsonl"));
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("**hybrid vs bm25**"), "{}", o.stdout);
    assert!(
        o.stdout.contains("| recall@10 | multi-hop | 30 |"),
        "{}",
        o.stdout
    );
}

#[test]
fn bad_arguments_exit_2() {
    let runs = ["seed/run_a.json", "seed/run_b.json"];
    let o = compare(&["--resamples", "10"], &runs, "seed/gold.json");
    assert_eq!(o.code, 2);
    // Read by config::resamples_from_word, as Python's `resamples=` is.
    assert!(
        o.stderr.contains("resamples 10 is too few for a p-value"),
        "{}",
        o.stderr
    );
    let o = compare(&["--resamples", "-1"], &runs, "seed/gold.json");
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("'--resamples <B>': resamples -1 is too few for a p-value\nhint: "),
        "{}",
        o.stderr
    );
    let o = compare(&["--seed", "-1"], &runs, "seed/gold.json");
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("seed -1 is not a whole number from 0 to 18446744073709551615\nhint: "),
        "{}",
        o.stderr
    );
    let o = compare(&["--alpha", "1.5"], &runs, "seed/gold.json");
    assert_eq!(o.code, 2);
    let o = compare(&[], &["seed/run_a.json"], "seed/gold.json");
    assert_eq!(o.code, 2, "one run is not a comparison");
    // The pipeline's message, the one the Python module gives (issue 41,
    // item 6), not the argument parser's.
    assert!(
        o.stderr.contains(
            "error: compare takes two or more runs, and got 1: each run after the first is compared with the first\nhint: "
        ),
        "{}",
        o.stderr
    );
}

/// The runs are read side by side; when two are broken, the message is
/// still the first one's, as if they were read in turn.
#[test]
fn the_first_broken_run_is_the_one_reported() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.trec");
    let second = dir.path().join("second.trec");
    std::fs::write(&first, "q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 high tag\n").unwrap();
    std::fs::write(&second, "q1 Q0 d1 1\n").unwrap();
    for _ in 0..5 {
        let mut c = rgate();
        c.arg("compare")
            .arg("--gold")
            .arg(fixture("seed/gold.json"))
            .arg(&first)
            .arg(&second);
        let o = run(c);
        assert_eq!(o.code, 2, "{}", o.stderr);
        assert!(o.stderr.contains("first.trec:2"), "{}", o.stderr);
        assert!(o.stderr.contains("score `high` is not a number"), "{}", o.stderr);
        assert!(!o.stderr.contains("second.trec"), "{}", o.stderr);
    }
}

/// A run named with characters a name may not hold is refused naming the
/// name, neutralised for the terminal, not read as a path (issue 47: it
/// said "cannot read run"). A part before `=` holding a path separator is
/// still a path.
#[test]
fn a_bad_run_name_is_named() {
    let named = |arg: String| {
        let mut c = rgate();
        c.arg("compare")
            .arg("--gold")
            .arg(fixture("seed/gold.json"))
            .arg(arg)
            .arg(fixture("seed/run_b.json"));
        run(c)
    };
    let o = named(format!("a<b>={}", fixture("seed/run_a.json").display()));
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert_eq!(o.stdout, "");
    assert_eq!(
        o.stderr,
        format!(
            "error: run name `a<b>` in `a<b>={}` is not allowed\nhint: names match [A-Za-z0-9][A-Za-z0-9._-]{{0,63}}; to pass a file whose name holds `=`, write it as ./PATH\n",
            fixture("seed/run_a.json").display()
        )
    );
    let o = named("a\u{1b}[2J=run.jsonl".to_string());
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert_eq!(
        o.stderr,
        "error: run name `a\\u{1b}[2J` in `a\\u{1b}[2J=run.jsonl` is not allowed\nhint: names match [A-Za-z0-9][A-Za-z0-9._-]{0,63}; to pass a file whose name holds `=`, write it as ./PATH\n"
    );
    let o = named("no/such=run.jsonl".to_string());
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .starts_with("error: no/such=run.jsonl: cannot read run: "),
        "{}",
        o.stderr
    );
}
