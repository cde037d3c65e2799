//! `rgate eval`'s 95% interval on every mean (issue 26 item 9; SPEC
//! "Statistics, second edition": intervals on means), end to end: the JSON
//! keys, the other formats, and the promises the interval makes (its width
//! where a formula gives it, order-free, repeatable at any thread count, by
//! seed).

use crate::common::TestProject;

use serde_json::Value;

/// A gold set of `n` queries in strata (`stratum(i)`), one relevant
/// document each, and a run that ranks it first when `hit(i)` (else a miss):
/// hit_rate@1 is then 1 or 0 per query.
fn project(
    n: usize,
    stratum: impl Fn(usize) -> &'static str,
    hit: impl Fn(usize) -> bool,
    order: &[usize],
) -> TestProject {
    let mut gold = String::new();
    let mut run = String::new();
    for &i in order.iter().take(n) {
        gold += &format!(
            "{{\"id\": \"q{i:04}\", \"stratum\": \"{}\", \"relevant\": [\"d{i}\"]}}\n",
            stratum(i)
        );
        let first = if hit(i) { format!("d{i}") } else { "x".to_string() };
        run += &format!("{{\"query_id\": \"q{i:04}\", \"results\": [\"{first}\", \"y\"]}}\n");
    }
    TestProject::new()
        .with_file("gold.jsonl", gold)
        .with_file("run.jsonl", run)
}

fn eval_json(p: &TestProject, extra: &[&str]) -> Value {
    let mut args = vec![
        "eval",
        "--gold",
        "gold.jsonl",
        "--run",
        "run.jsonl",
        "-m",
        "hit_rate@1",
    ];
    args.extend_from_slice(extra);
    let (code, v) = p.json(&args);
    assert_eq!(code, 0, "{v}");
    v
}

fn bounds(v: &Value, scope: &str) -> (f64, f64) {
    let i = &v["intervals"]["hit_rate@1"][scope];
    (
        i["ci_low"].as_f64().unwrap_or_else(|| panic!("{scope}: {i}")),
        i["ci_high"].as_f64().unwrap_or_else(|| panic!("{scope}: {i}")),
    )
}

/// 400 queries, half of them hits: the mean's standard error is
/// sqrt(0.25 / 400) = 0.025, so a 95% interval is 0.5 -/+ 1.96 * 0.025 =
/// [0.451, 0.549] (the normal approximation, which at n = 400 is within the
/// bootstrap's Monte Carlo error of 1,000 resamples: about 0.002 per end).
#[test]
fn interval_on_a_proportion_has_the_normal_width() {
    let order: Vec<usize> = (0..400).collect();
    let p = project(400, |_| "s", |i| i.is_multiple_of(2), &order);
    let v = eval_json(&p, &[]);
    assert_eq!(v["metrics"]["hit_rate@1"]["all"], 0.5);
    let (lo, hi) = bounds(&v, "all");
    let half = 1.96 * (0.25f64 / 400.0).sqrt();
    assert!((lo - (0.5 - half)).abs() < 0.008, "low {lo}");
    assert!((hi - (0.5 + half)).abs() < 0.008, "high {hi}");
    assert_eq!(v["interval_settings"]["level"], 0.95);
    assert_eq!(v["interval_settings"]["resamples"], 1000);
    assert_eq!(v["interval_settings"]["seed"], 20261129);
    // #49: the method says what this interval is: every value 0 or 1, so
    // Clopper & Pearson's (src/stats/interval.rs), not the bootstrap.
    assert_eq!(v["interval_settings"]["method"], "clopper-pearson");
    assert_eq!(v["interval_settings"]["methods"]["hit_rate@1"], "clopper-pearson");
    // A graded metric in [0, 1] (mrr@10: 1 or 1/2 here) gets Wilson's; a
    // count (num_ret) the expanded percentile bootstrap; the summary
    // names each.
    let mut run = String::new();
    for i in 0..40 {
        let first = if i % 2 == 0 {
            format!("d{i}")
        } else {
            "x".to_string()
        };
        let second = if i % 2 == 0 {
            "y".to_string()
        } else {
            format!("d{i}")
        };
        run += &format!("{{\"query_id\": \"q{i:04}\", \"results\": [\"{first}\", \"{second}\"]}}\n");
    }
    let q = project(40, |_| "s", |_| true, &order).with_file("run.jsonl", run);
    let (code, v) = q.json(&[
        "eval",
        "--gold",
        "gold.jsonl",
        "--run",
        "run.jsonl",
        "-m",
        "hit_rate@1,mrr@10,num_ret",
    ]);
    assert_eq!(code, 0, "{v}");
    let m = &v["interval_settings"]["methods"];
    assert_eq!(m["hit_rate@1"], "clopper-pearson", "{v}");
    assert_eq!(
        m["mrr@10"], "wilson score (clopper-pearson on a stratum of 0/1 values)",
        "{v}"
    );
    assert_eq!(m["num_ret"], "stratified bootstrap, expanded percentile", "{v}");
    let summary = v["interval_settings"]["method"].as_str().unwrap();
    assert!(summary.contains("clopper-pearson for hit_rate@1"), "{summary}");
    assert!(
        summary.contains("stratified bootstrap, expanded percentile for num_ret"),
        "{summary}"
    );
}

/// Five queries, three hits: a 0/1 metric gets Clopper & Pearson's
/// interval, the beta quantiles Beta(3, 3) at 0.025 and Beta(4, 2) at
/// 0.975: [0.1466, 0.9473] (scipy.stats.beta.ppf; its coverage is at least
/// 0.95 at every true rate, where Wilson's dips to 0.896 at n = 5). A
/// stratum of one query has no interval. One whose ten queries all hit
/// shows no spread, and a bootstrap would say [1, 1]; a hit rate lies in
/// [0, 1], so the binomial interval holds: [0.025^(1/10), 1] = [0.6915, 1]
/// (with a true hit rate of 0.9, ten of ten hit 35% of the time). The
/// other strata have theirs, and macro and all theirs.
#[test]
fn small_strata_get_honest_intervals() {
    let stratum = |i: usize| match i {
        0..=4 => "five",
        5 => "one",
        6..=15 => "all-hit",
        _ => "big",
    };
    let hit = |i: usize| matches!(i, 0..=2 | 5..=15) || (i > 15 && i.is_multiple_of(3));
    let order: Vec<usize> = (0..60).collect();
    let p = project(60, stratum, hit, &order);
    let v = eval_json(&p, &[]);
    let (lo, hi) = bounds(&v, "five");
    assert!((lo - 0.14663279963467313).abs() < 1e-9, "{lo}");
    assert!((hi - 0.9472550494736831).abs() < 1e-9, "{hi}");
    assert_eq!(
        v["intervals"]["hit_rate@1"]["one"],
        serde_json::json!({"ci_low": null, "ci_high": null})
    );
    let (lo, hi) = bounds(&v, "all-hit");
    assert!((lo - 0.025f64.powf(0.1)).abs() < 1e-12, "{lo}");
    assert_eq!(hi, 1.0);
    for scope in ["big", "all", "macro"] {
        let (lo, hi) = bounds(&v, scope);
        let mean = v["metrics"]["hit_rate@1"][scope].as_f64().unwrap();
        assert!(lo < mean && mean < hi, "{scope}: {lo} {mean} {hi}");
    }
}

/// The gold file's queries reversed (so strata appear in another order too)
/// give the same intervals: resampling runs over strata by name and queries
/// by id, not over the file's order. The same seed gives the same bits at
/// 1 and 3 threads; another seed other bits; `--resamples 0` none.
#[test]
fn intervals_are_order_free_thread_free_and_follow_the_seed() {
    let stratum = |i: usize| ["b", "a", "c"][i % 3];
    let hit = |i: usize| (i * 7) % 5 < 2;
    let forward: Vec<usize> = (0..90).collect();
    let reversed: Vec<usize> = (0..90).rev().collect();
    let a = project(90, stratum, hit, &forward);
    let b = project(90, stratum, hit, &reversed);
    let va = eval_json(&a, &[]);
    let vb = eval_json(&b, &[]);
    assert_eq!(va["intervals"], vb["intervals"]);
    assert_eq!(va["metrics"], vb["metrics"]);

    let threads = |n: &str| {
        let p = project(90, stratum, hit, &forward).with_env("RAYON_NUM_THREADS", n);
        p.run(&[
            "--format",
            "json",
            "eval",
            "--gold",
            "gold.jsonl",
            "--run",
            "run.jsonl",
            "--resamples",
            "3000",
        ])
        .stdout
    };
    let one = threads("1");
    assert!(one.contains("\"ci_low\""), "{one}");
    assert_eq!(one, threads("3"));

    // A 0/1 metric's interval is Clopper & Pearson's, in closed form: no seed moves
    // it. A count's is the expanded percentile bootstrap, which follows
    // the seed.
    let other = eval_json(&a, &["--seed", "5"]);
    assert_eq!(other["intervals"], va["intervals"]);
    assert_eq!(other["interval_settings"]["seed"], 5);
    let counts = |p: &TestProject, seed: &str| {
        let o = p.run(&[
            "--format",
            "json",
            "eval",
            "--gold",
            "gold.jsonl",
            "--run",
            "run.jsonl",
            "-m",
            "num_rel_ret",
            "--seed",
            seed,
        ]);
        let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
        v["intervals"]["num_rel_ret"]["all"].clone()
    };
    assert!(counts(&a, "20261129")["ci_low"].is_f64());
    assert_ne!(counts(&a, "20261129"), counts(&a, "5"));
    let none = eval_json(&a, &["--resamples", "0"]);
    assert_eq!(
        none["intervals"]["hit_rate@1"]["all"],
        serde_json::json!({"ci_low": null, "ci_high": null})
    );
    assert_eq!(none["interval_settings"], Value::Null);
}

/// Every format that shows means shows the interval beside them, and the
/// same numbers; the trec format shows none.
#[test]
fn every_means_format_shows_the_interval() {
    let order: Vec<usize> = (0..40).collect();
    let p = project(
        40,
        |i| if i < 20 { "x" } else { "y" },
        |i| !i.is_multiple_of(4),
        &order,
    );
    let v = eval_json(&p, &[]);
    let (lo, hi) = bounds(&v, "all");
    let cell = format!("0.7500 [{lo:.4}, {hi:.4}]");
    let base = [
        "eval",
        "--gold",
        "gold.jsonl",
        "--run",
        "run.jsonl",
        "-m",
        "hit_rate@1",
        "--by-stratum",
    ];
    let with = |format: &str| {
        let mut a = vec!["--format", format];
        a.extend_from_slice(&base);
        let o = p.run(&a);
        assert_eq!(o.code, 0, "{}", o.stderr);
        o.stdout
    };
    let table = with("table");
    assert!(table.contains(&cell), "{table}");
    assert!(table.contains("95% interval on each mean"), "{table}");
    assert!(table.contains("1000 resamples, seed 20261129"), "{table}");
    let md = with("markdown");
    assert!(
        md.contains(&format!("| all | 40 | 0.7500 \\[{lo:.4}, {hi:.4}\\] |"))
            || md.contains(&format!("| all | 40 | {cell} |")),
        "{md}"
    );
    let csv = with("csv");
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("scope,n,hit_rate@1,hit_rate@1_ci_low,hit_rate@1_ci_high")
    );
    assert_eq!(
        lines.next(),
        Some(format!("all,40,0.7500,{lo:.4},{hi:.4}").as_str())
    );
    assert_eq!(csv.lines().count(), 5, "all, x, y, macro: {csv}");
    let trec = with("trec");
    assert_eq!(trec, "hit_rate@1\tall\t0.7500\n");
}
