//! The measures beyond the first eight can be gated, compared and stored
//! (issue 30 items 3 and 4): every expected value here is trec_eval's own
//! output for its test suite (tests/fixtures/trec_eval/README.md), or a
//! name list read from those outputs and from ir_measures' fixtures.

use crate::common;

use std::collections::HashMap;
use std::fs;

use common::{fixture, TestProject};
use serde_json::Value;

/// trec_eval's measures and the rgate metrics that equal them, each
/// outside the eight families the gate had before.
const MEASURES: &[(&str, &str)] = &[
    ("bpref", "bpref"),
    ("infAP", "infap"),
    ("set_F", "set_f"),
    ("num_rel_ret", "num_rel_ret"),
    ("utility", "utility"),
    ("iprec_at_recall_0.50", "iprec_at_recall@0.50"),
    ("11pt_avg", "11pt_avg"),
    ("relative_P_5", "relative_p@5"),
    ("rbp", "rbp"),
    ("Rprec_mult_0.60", "rprec_mult@0.60"),
];

/// trec_eval's geometric means (printed only on the `all` line), gated on
/// the log scale and shown in their own units.
const GEOMETRIC: &[(&str, &str)] = &[("gm_map", "gm_map"), ("gm_bpref", "gm_bpref")];

/// `measure -> query -> value` from a trec_eval output file.
fn trec_values(name: &str) -> HashMap<(String, String), f64> {
    fs::read_to_string(fixture(name))
        .unwrap()
        .lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            let (m, q, v) = (f.next()?.trim(), f.next()?, f.next()?);
            Some(((m.to_string(), q.to_string()), v.parse().ok()?))
        })
        .collect()
}

/// A project gating every measure of [`MEASURES`] on trec_eval's test
/// collection, the run `run`; `extra` goes at the top of the config.
fn project(run: &str, metrics: &str, extra: &str) -> TestProject {
    let rules: String = MEASURES
        .iter()
        .chain(GEOMETRIC)
        .map(|(_, m)| format!("    - {{metric: \"{m}\", max_drop: 0.01}}\n"))
        .collect();
    TestProject::new()
        .with_copy("qrels.test", fixture("trec_eval/qrels.test"))
        .with_copy("results.test", fixture("trec_eval/results.test"))
        .with_copy("results.trunc", fixture("trec_eval/results.trunc"))
        .with_file(
            "rgate.yaml",
            format!(
                "{extra}gold: qrels.test\nbaselines: store\nmetrics: [{metrics}]\nretrievers:\n  - name: sys\n    run: {run}\ngate:\n  resamples: 200\n  max_missing: 0.5\n  rules:\n{rules}"
            ),
        )
        .with_args(&["--config", "rgate.yaml"])
}

fn check<'a>(v: &'a Value, metric: &str) -> &'a Value {
    v["retrievers"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == metric && c["stratum"] == "all")
        .unwrap_or_else(|| panic!("no check of {metric}: {v}"))
}

fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// The baseline stores each measure's per-query values and means at
/// trec_eval's; gated against the truncated run (query 302 missing), each
/// check's two means are trec_eval's on results.test and, with `-c`, on
/// results.trunc.
#[test]
fn every_new_measure_is_stored_and_gated_at_trec_eval_values() {
    let p = project("results.test", "recall@10", "");
    let o = p.run(&["baseline", "update"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let stored: Value = serde_json::from_str(&p.read("store/sys.json")).unwrap();
    let aq = trec_values("trec_eval/out.test.aq");
    let aqc = trec_values("trec_eval/out.test.aqc");
    for (trec, m) in MEASURES {
        for q in ["301", "302", "303"] {
            let got = stored["queries"][q]["values"][m].as_f64().unwrap();
            let want = aq[&(trec.to_string(), q.to_string())];
            assert_eq!(round4(got), want, "{m} on {q}");
        }
        let mean = stored["aggregates"]["all"][m].as_f64().unwrap();
        assert_eq!(round4(mean), aq[&(trec.to_string(), "all".to_string())], "{m}");
    }
    for (trec, m) in GEOMETRIC {
        let mean = stored["aggregates"]["all"][m].as_f64().unwrap();
        assert_eq!(round4(mean), aq[&(trec.to_string(), "all".to_string())], "{m}");
    }

    let p2 = project("results.trunc", "recall@10", "");
    fs::create_dir_all(p2.path("store")).unwrap();
    fs::write(p2.path("store/sys.json"), p.read("store/sys.json")).unwrap();
    let o = p2.run(&["--format", "json", "gate"]);
    assert!(o.code == 0 || o.code == 1, "{}", o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    for (trec, m) in MEASURES.iter().chain(GEOMETRIC) {
        let c = check(&v, m);
        let all = |t: &HashMap<(String, String), f64>| t[&(trec.to_string(), "all".to_string())];
        // trec_eval sums num_rel_ret over the 3 queries; the gate tests
        // the mean a query.
        let per = if *m == "num_rel_ret" { 3.0 } else { 1.0 };
        assert_eq!(round4(c["baseline"].as_f64().unwrap() * per), all(&aq), "{m}");
        assert_eq!(round4(c["current"].as_f64().unwrap() * per), all(&aqc), "{m}");
        assert_eq!(c["tolerance"], 0.01, "{m}");
        assert!(c["p_adjusted"].as_f64().is_some(), "{m} was gated: {c}");
    }
    assert!(
        v["warnings"].to_string().contains(
            "num_rel_ret compared as the mean a query (rgate eval prints trec_eval's sum over the queries)"
        ),
        "{}",
        v["warnings"]
    );
}

/// A baseline recorded before a measure was in the config: re-scored from
/// whole stored rankings (to trec_eval's value), and with rankings cut at
/// depth 10 skipped, all in one warning naming them.
#[test]
fn a_baseline_from_before_a_measure_is_re_scored_where_its_depth_allows() {
    let aq = trec_values("trec_eval/out.test.aq");
    for (depth, rescored) in [("baseline_depth: all\n", true), ("", false)] {
        // Recorded with recall@10 alone.
        let p = TestProject::new()
            .with_copy("qrels.test", fixture("trec_eval/qrels.test"))
            .with_copy("results.test", fixture("trec_eval/results.test"))
            .with_file(
                "rgate.yaml",
                format!("{depth}gold: qrels.test\nbaselines: store\nmetrics: [recall@10]\nretrievers:\n  - name: sys\n    run: results.test\n"),
            )
            .with_args(&["--config", "rgate.yaml"]);
        assert_eq!(p.run(&["baseline", "update"]).code, 0);
        let later = project("results.test", "recall@10", depth);
        fs::create_dir_all(later.path("store")).unwrap();
        fs::write(later.path("store/sys.json"), p.read("store/sys.json")).unwrap();
        let o = later.run(&["--format", "json", "gate"]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        let v: Value = serde_json::from_str(&o.stdout).unwrap();
        let warnings = v["retrievers"][0]["warnings"].to_string();
        if rescored {
            for (trec, m) in MEASURES.iter().chain(GEOMETRIC) {
                let b = check(&v, m)["baseline"].as_f64().unwrap();
                let per = if *m == "num_rel_ret" { 3.0 } else { 1.0 };
                assert_eq!(round4(b * per), aq[&(trec.to_string(), "all".to_string())], "{m}");
            }
            assert!(!warnings.contains("the baseline has no"), "{warnings}");
        } else {
            // relative_p@5 reads the top 5 only: re-scored from 10 ids.
            let b = check(&v, "relative_p@5")["baseline"].as_f64().unwrap();
            assert_eq!(round4(b), aq[&("relative_P_5".to_string(), "all".to_string())]);
            let whole: Vec<&str> = MEASURES
                .iter()
                .chain(GEOMETRIC)
                .map(|(_, m)| *m)
                .filter(|m| *m != "relative_p@5")
                .collect();
            let want = format!(
                "the baseline has no {} and stores rankings only to depth 10: their checks are skipped; record a new baseline to gate them",
                whole.join(", ")
            );
            assert!(warnings.contains(&want), "{warnings}");
        }
    }
}

/// Text measures cannot be compared by a paired test: named, they are
/// refused at their config line (exit 2); brought by all_trec, they are
/// left out and the rest (the geometric means too) is gated.
#[test]
fn text_measures_are_refused_by_name_and_left_out_of_all_trec() {
    for m in ["runid", "relstring"] {
        let p = project("results.test", m, "");
        let o = p.run(&["gate"]);
        assert_eq!(o.code, 2, "{m}: {}", o.stderr);
        assert!(
            o.stderr.contains(&format!("rgate.yaml:3: {m} is text")),
            "{}",
            o.stderr
        );
        assert!(o.stderr.contains("\nhint: "), "{}", o.stderr);
    }
    let p = project("results.test", "all_trec", "baseline_depth: all\n");
    let o = p.run(&["baseline", "update"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let stored: Value = serde_json::from_str(&p.read("store/sys.json")).unwrap();
    let names: Vec<&str> = stored["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    for gone in ["runid", "relstring"] {
        assert!(!names.contains(&gone), "{names:?}");
    }
    for kept in ["bpref", "ndcg@1000", "gm_map", "gm_bpref"] {
        assert!(names.contains(&kept), "{kept}: {names:?}");
    }
    let o = p.bare(&[
        "compare",
        "--gold",
        "qrels.test",
        "--metrics",
        "relstring",
        "results.test",
        "results.trunc",
    ]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("relstring is text"), "{}", o.stderr);
}

/// compare on gm_map with the t-test is a paired t-test of the logs of
/// each query's AP (floored at 0.00001), told in gm_map's units. Expected
/// values from an independent computation (Python, scipy 1.17.1): AP per
/// query from the demo gold set and runs by its definition, then
/// `scipy.stats.ttest_rel(log_regressed, log_hybrid)`: p 0.0032477556545,
/// geometric means 0.4573594678 and 0.1830741821, the t interval of the
/// mean log difference mapped by GM_b (e^x - 1): [-0.3570230437,
/// -0.1233216899].
#[test]
fn compare_tests_a_geometric_mean_on_the_log_scale() {
    let p = TestProject::demo(&["hybrid", "hybrid-regressed"]);
    let (code, v) = p.json(&[
        "compare",
        "--gold",
        "demo/gold.yaml",
        "--metrics",
        "gm_map",
        "--test",
        "t-test",
        "demo/runs/hybrid.jsonl",
        "demo/runs/hybrid-regressed.jsonl",
    ]);
    assert_eq!(code, 0, "{v}");
    let c = &v["runs"][0]["checks"][0];
    let close = |key: &str, want: f64| {
        let got = c[key].as_f64().unwrap();
        assert!((got - want).abs() < 1e-9, "{key}: {got} vs {want}");
    };
    close("p_value", 0.003_247_755_654_5);
    close("baseline", 0.457_359_467_8);
    close("current", 0.183_074_182_1);
    close("delta", 0.183_074_182_1 - 0.457_359_467_8);
    close("ci_low", -0.357_023_043_7);
    close("ci_high", -0.123_321_689_9);
    assert_eq!(
        v["runs"][0]["means"]["gm_map"]
            .as_f64()
            .map(|x| (x * 1e4).round() / 1e4),
        Some(0.1831)
    );

    // Under `--test bootstrap` a geometric mean gets the sign-flip test
    // (its log deltas are heavy-tailed: a query whose AP falls to 0 moves
    // by up to 11.5), and the test column says so; map keeps the
    // bootstrap. The sign-flip row is the one `--test randomization`
    // prints, to the bit.
    let row = |test: &str| {
        let (code, v) = p.json(&[
            "compare",
            "--gold",
            "demo/gold.yaml",
            "--metrics",
            "gm_map,map",
            "--test",
            test,
            "demo/runs/hybrid.jsonl",
            "demo/runs/hybrid-regressed.jsonl",
        ]);
        assert_eq!(code, 0, "{v}");
        v["runs"][0]["checks"].clone()
    };
    let (boot, flip) = (row("bootstrap"), row("randomization"));
    assert_eq!(boot[0]["metric"], "gm_map");
    assert_eq!(boot[0]["test"], "randomization");
    assert_eq!(boot[0]["p_value"], flip[0]["p_value"]);
    assert!(boot[0]["p_value"].as_f64().unwrap() < 0.01, "{boot}");
    assert_eq!(boot[1]["metric"], "map");
    assert_eq!(boot[1]["test"], "bootstrap");
}

/// `eval --list-metrics` stands alone (no --gold or --run), and names
/// every measure trec_eval prints for `-m all_trec` and every ir_measures
/// measure of the fixtures; every form it lists is one rgate reads.
#[test]
fn list_metrics_names_every_trec_eval_and_ir_measures_measure() {
    let p = TestProject::new();
    let o = p.bare(&["--format", "json", "eval", "--list-metrics"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let rows: Vec<Value> = serde_json::from_str(&o.stdout).unwrap();
    let names = |key: &str| -> Vec<String> {
        rows.iter()
            .flat_map(|r| {
                r[key]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| n.as_str().unwrap().to_string())
            })
            .collect()
    };
    // A listed pattern's k (after `_` or `@`) is a whole number, its x a
    // decimal.
    let matches = |pattern: &str, name: &str| -> bool {
        let head = ["_k", "_x", "@k", "@x"]
            .iter()
            .find_map(|p| pattern.strip_suffix(p).map(|h| &pattern[..h.len() + 1]));
        let Some(head) = head else {
            return pattern == name;
        };
        match name.strip_prefix(head) {
            Some(tail) => !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit() || c == '.'),
            None => false,
        }
    };
    let trec = names("trec_eval");
    let aq = fs::read_to_string(fixture("trec_eval/out.test.aq")).unwrap();
    let mut trec_names: Vec<&str> = aq
        .lines()
        .filter_map(|l| l.split('\t').next())
        .map(str::trim)
        .collect();
    trec_names.dedup();
    assert!(trec_names.len() > 100, "{}", trec_names.len());
    for n in &trec_names {
        assert!(trec.iter().any(|t| matches(t, n)), "{n} not listed: {trec:?}");
    }
    // ir_measures' names with their parameters taken out: `P(rel=2)@10`
    // is `P()@10`, listed as `P(rel=l)@k`.
    let strip = |s: &str| -> String {
        let mut out = String::new();
        let mut depth = 0;
        for c in s.chars() {
            match c {
                '(' => {
                    depth += 1;
                    out.push(c);
                }
                ')' => {
                    depth -= 1;
                    out.push(c);
                }
                _ if depth > 0 => {}
                _ => out.push(c),
            }
        }
        out
    };
    let ir = names("ir_measures");
    let mut seen = 0;
    for f in ["ties.tsv", "trunc.tsv", "rel_level.tsv"] {
        let text = fs::read_to_string(fixture(&format!("ir_measures/{f}"))).unwrap();
        for n in text.lines().filter_map(|l| l.split('\t').next()) {
            seen += 1;
            assert!(
                ir.iter().any(|i| matches(&strip(i), &strip(n))),
                "{n} not listed: {ir:?}"
            );
        }
    }
    assert!(seen > 0);
    // Every form listed, with k = 10 and x = 0.5, evaluates.
    let forms: Vec<String> = rows
        .iter()
        .flat_map(|r| {
            let mut v: Vec<String> = r["metric"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap().to_string())
                .collect();
            v.extend(
                r["aliases"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| n.as_str().unwrap().to_string()),
            );
            v
        })
        .map(|f| f.replace("@k", "@10").replace("@x", "@0.5"))
        .filter(|f| !f.ends_with("@x"))
        .collect();
    let o = p.bare(&[
        "--format",
        "trec",
        "eval",
        "--gold",
        fixture("trec_eval/qrels.test").to_str().unwrap(),
        "--run",
        fixture("trec_eval/results.test").to_str().unwrap(),
        "--metrics",
        &forms.join(","),
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // And the flag stands alone.
    let o = p.bare(&["eval", "--list-metrics", "--run", "x"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("--list-metrics"), "{}", o.stderr);
    let o = p.bare(&["eval", "--run", "x"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("--gold"), "{}", o.stderr);
}
