//! `rgate compare` with many variants (issue 31 items 1 and 5; SPEC
//! "Tuning knobs"): one correction family across variants x metrics x
//! scopes, the ranking and the one sentence, checked by simulation through
//! the library (eight null variants; eight of which two are better), and
//! end to end for the correction's values, the effect sizes and the JSON
//! keys.

use crate::common::{fixture, TestProject};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rgate::compare::{compare, family, Correction};
use rgate::config::{GateSettings, TestKind};
use rgate::eval::Scores;
use rgate::gold::{GoldFormat, GoldQuery, GoldSet};
use rgate::metrics::Metric;
use rgate::stats::Alternative;
use serde_json::Value;

fn gold(n: usize) -> GoldSet {
    let queries = (0..n)
        .map(|i| GoldQuery {
            id: format!("q{i:04}"),
            text: None,
            stratum: 0,
            spans: Vec::new(),
            labels: Default::default(),
        })
        .collect();
    GoldSet::from_parts("sim", GoldFormat::Yaml, queries, vec!["s".into()]).unwrap()
}

/// One simulated compare: a baseline and `lifts.len()` variants, each
/// query a hit with probability p_q (shared, U(0.3, 0.7)) plus the
/// variant's lift, drawn afresh per run. Returns the best variant's index
/// (1-based) when one is named.
fn simulate(g: &GoldSet, lifts: &[f64], correction: Correction, rng: &mut ChaCha8Rng) -> Option<usize> {
    let metric: Metric = "hit_rate@1".parse().unwrap();
    let latent: Vec<f64> = (0..g.len()).map(|_| rng.gen_range(0.3..0.7)).collect();
    let mut draw = |lift: f64| Scores {
        metrics: vec![metric],
        values: vec![latent
            .iter()
            .map(|p| f64::from(u8::from(rng.gen::<f64>() < p + lift)))
            .collect()],
    };
    let base = draw(0.0);
    let variants: Vec<Scores> = lifts.iter().map(|&l| draw(l)).collect();
    // The t-test: the family's logic does not depend on the test, and it
    // keeps hundreds of repetitions quick.
    let settings = GateSettings {
        test: TestKind::TTest,
        ..GateSettings::default()
    };
    let mut rows: Vec<_> = variants
        .iter()
        .map(|v| compare(g, &base, v, &settings, Alternative::TwoSided, false))
        .collect();
    let mut runs = vec![&base];
    runs.extend(variants.iter());
    let f = family(g, &runs, &mut rows, correction, &settings);
    assert_eq!(f.tests, lifts.len());
    assert_eq!(f.ranking.len(), lifts.len());
    f.best
}

/// Eight variants of no real difference, 300 repetitions: with the family
/// corrected as one (Holm or BH), rgate says none beats the baseline at
/// least 90% of the time (nominally 1 - 0.025: only a rise counts). Left
/// uncorrected, as a correction per variant of one metric was, one of the
/// eight looks better about 1 - 0.975^8 = 18% of the time, which the same
/// threshold catches.
#[test]
fn eight_null_variants_rarely_beat_the_baseline() {
    let g = gold(60);
    let reps = 300;
    let mut rng = ChaCha8Rng::seed_from_u64(3101);
    let none = |c: Correction, rng: &mut ChaCha8Rng| {
        (0..reps)
            .filter(|_| simulate(&g, &[0.0; 8], c, rng).is_none())
            .count() as f64
            / reps as f64
    };
    let holm = none(Correction::Holm, &mut rng);
    let bh = none(Correction::Bh, &mut rng);
    let uncorrected = none(Correction::None, &mut rng);
    assert!(holm >= 0.9, "holm: none in {holm}");
    assert!(bh >= 0.9, "bh: none in {bh}");
    assert!(uncorrected < 0.9, "uncorrected: none in {uncorrected}");
}

/// Eight variants of which two (the 3rd and the 6th) are truly better by
/// 0.2 in hit rate, 200 queries: the best variant named is one of the two
/// most of the time (here at least 80% of 200 repetitions).
#[test]
fn of_eight_variants_the_best_named_is_one_of_the_two_better() {
    let g = gold(200);
    let lifts = [0.0, 0.0, 0.2, 0.0, 0.0, 0.2, 0.0, 0.0];
    let reps = 200;
    let mut rng = ChaCha8Rng::seed_from_u64(3102);
    for c in [Correction::Holm, Correction::Bh] {
        let right = (0..reps)
            .filter(|_| matches!(simulate(&g, &lifts, c, &mut rng), Some(3 | 6)))
            .count() as f64
            / reps as f64;
        assert!(right >= 0.8, "{c:?}: the best is one of the two in {right}");
    }
}

fn compare_json(p: &TestProject, args: &[&str]) -> Value {
    let (code, v) = p.json(args);
    assert_eq!(code, 0, "{v}");
    v
}

/// `--correction bh` adjusts the p of every row of every run as one
/// family: recomputed here from the printed raw p's by the definition
/// (sorted ascending, m p_(i) / i, running minimum from the top); Holm's
/// are recomputed the same way (max of (m - i + 1) p_(i) from the bottom).
#[test]
fn the_correction_runs_over_every_row_of_every_variant() {
    let p = TestProject::demo(&["bm25", "hybrid", "hybrid-regressed"]);
    let runs = [
        "demo/runs/bm25.jsonl",
        "demo/runs/hybrid.jsonl",
        "demo/runs/hybrid-regressed.jsonl",
    ];
    for (name, adjust) in [
        ("bh", bh as fn(&[f64]) -> Vec<f64>),
        ("holm", holm),
        ("none", |p: &[f64]| p.to_vec()),
    ] {
        let mut args = vec![
            "compare",
            "--gold",
            "demo/gold.yaml",
            "--by-stratum",
            "--resamples",
            "2000",
            "--correction",
            name,
        ];
        args.extend(runs);
        let v = compare_json(&p, &args);
        assert_eq!(v["settings"]["correction"], name);
        let rows: Vec<&Value> = v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["checks"].as_array().unwrap())
            .collect();
        // Two variants x four metrics x four scopes.
        assert_eq!(rows.len(), 32);
        assert_eq!(v["settings"]["family_tests"], 32);
        let raw: Vec<f64> = rows.iter().map(|r| r["p_value"].as_f64().unwrap()).collect();
        let want = adjust(&raw);
        for (r, w) in rows.iter().zip(want) {
            let got = r["p_adjusted"].as_f64().unwrap();
            assert!((got - w).abs() < 1e-12, "{name}: {got} vs {w} in {r}");
            assert_eq!(r["significant"], got < 0.05);
        }
    }
}

fn order(p: &[f64]) -> Vec<usize> {
    let mut o: Vec<usize> = (0..p.len()).collect();
    o.sort_by(|&a, &b| p[a].partial_cmp(&p[b]).unwrap());
    o
}

fn bh(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let o = order(p);
    let mut out = vec![0.0; m];
    let mut run = 1.0f64;
    for i in (0..m).rev() {
        run = run.min(m as f64 * p[o[i]] / (i + 1) as f64).min(1.0);
        out[o[i]] = run;
    }
    out
}

fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let o = order(p);
    let mut out = vec![0.0; m];
    let mut run = 0.0f64;
    for i in 0..m {
        run = run.max(((m - i) as f64 * p[o[i]]).min(1.0));
        out[o[i]] = run;
    }
    out
}

/// The ranking and the sentence on the demo: against bm25, hybrid ranks
/// above hybrid-regressed on recall@10; against hybrid, neither bm25 nor
/// the regressed run is better, and the sentence says none is.
#[test]
fn the_ranking_and_the_statement() {
    let p = TestProject::demo(&["bm25", "hybrid", "hybrid-regressed"]);
    let v = compare_json(
        &p,
        &[
            "compare",
            "--gold",
            "demo/gold.yaml",
            "demo/runs/hybrid.jsonl",
            "demo/runs/bm25.jsonl",
            "demo/runs/hybrid-regressed.jsonl",
        ],
    );
    let ranking = v["ranking"].as_array().unwrap();
    assert_eq!(ranking.len(), 2);
    assert_eq!(ranking[0]["rank"], 1);
    assert_eq!(ranking[0]["metric"], "recall@10");
    assert!(ranking[0]["mean"].as_f64() >= ranking[1]["mean"].as_f64());
    for r in ranking {
        assert_eq!(r["better"], false, "{r}");
        for k in [
            "name",
            "delta",
            "ci_low",
            "ci_high",
            "p_adjusted",
            "effect_size",
            "test",
        ] {
            assert!(r.get(k).is_some(), "{k} in {r}");
        }
    }
    let s = &v["statement"];
    assert_eq!(s["best"], Value::Null);
    assert_eq!(s["runner_up"], Value::Null);
    let text = s["text"].as_str().unwrap();
    assert!(
        text.starts_with("No variant is significantly better than hybrid on recall@10"),
        "{text}"
    );
    let table = p.run(&[
        "compare",
        "--gold",
        "demo/gold.yaml",
        "demo/runs/hybrid.jsonl",
        "demo/runs/bm25.jsonl",
        "demo/runs/hybrid-regressed.jsonl",
    ]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert!(table.stdout.contains(text), "{}", table.stdout);
    assert!(table.stdout.contains("ranking by recall@10"), "{}", table.stdout);
}

/// Effect size by hand on the seed example: hit_rate@1 deltas +1, +1, +1,
/// -1, 0 have mean 0.4 and sample sd sqrt(3.2 / 4) = 0.8944, so d_z =
/// 0.4472; the table shows it and the test that gave the row's p and
/// interval (five queries: the exact sign-flip test).
#[test]
fn effect_sizes_and_tests_stand_beside_p() {
    let p = TestProject::new()
        .with_copy("gold.json", fixture("seed/gold.json"))
        .with_copy("a.json", fixture("seed/run_a.json"))
        .with_copy("b.json", fixture("seed/run_b.json"));
    let v = compare_json(
        &p,
        &[
            "compare",
            "--gold",
            "gold.json",
            "-m",
            "hit_rate@1",
            "a.json",
            "b.json",
        ],
    );
    let row = &v["runs"][0]["checks"][0];
    let d = row["effect_size"].as_f64().unwrap();
    assert!((d - 0.4 / 0.8f64.sqrt()).abs() < 1e-12, "{d}");
    let o = p.run(&[
        "compare",
        "--gold",
        "gold.json",
        "-m",
        "hit_rate@1",
        "a.json",
        "b.json",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let header = o.stdout.lines().find(|l| l.starts_with("metric")).unwrap();
    assert!(header.contains("d_z") && header.contains("test"), "{header}");
    let line = o.stdout.lines().find(|l| l.starts_with("hit_rate@1")).unwrap();
    assert!(line.contains("+0.45") && line.contains("randomization"), "{line}");
    let o = p.run(&[
        "compare",
        "--gold",
        "gold.json",
        "--correction",
        "bonferroni",
        "a.json",
        "b.json",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
}
