//! `rgate gate` checked against values computed without rgate: per-metric
//! p-values of the t-test and the randomization test (from
//! `tests/fixtures/compare/make.py`: scipy and brute-force enumeration), and
//! a baseline recorded at one relevance level gated at another (means by
//! hand).

use crate::common;

use common::{fixture, TestProject};
use serde_json::Value;

/// `gate --format json`: the exit code and the report.
fn gate(p: &TestProject, args: &[&str]) -> (i32, Value) {
    let mut a = vec!["--format", "json", "gate"];
    a.extend_from_slice(args);
    let o = p.run(&a);
    let v = serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", o.stdout, o.stderr));
    (o.code, v)
}

fn check<'a>(v: &'a Value, metric: &str, stratum: &str) -> &'a Value {
    v["retrievers"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == metric && c["stratum"] == stratum)
        .unwrap_or_else(|| panic!("no check {metric}/{stratum} in {v}"))
}

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

fn compare_project(test: &str) -> TestProject {
    let p = TestProject::new()
        .with_copy("gold.json", fixture("compare/gold.json"))
        .with_copy("base.json", fixture("compare/base.json"))
        .with_copy("cand.json", fixture("compare/cand.json"))
        .with_config("rgate.yaml")
        .with_env("SOURCE_DATE_EPOCH", "1795996800");
    p.write(
        "rgate.yaml",
        format!(
            "gold: gold.json
baselines: baselines
metrics: [mrr, hit_rate@1]
retrievers:
  - name: r
    run: base.json
gate:
  test: {test}
  # p_value is then the one-sided p of H0 \"drop <= 0\" (the margin
  # test, the default, would test against each tolerance).
  decision: significant-drop
  rules:
    - metric: mrr
      max_drop: 0.5
      strata: all
    - metric: hit_rate@1
      max_drop: 0.6
      strata: all
"
        ),
    );
    let o = p.run(&["baseline", "update"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    p
}

/// (metric, stratum, one-sided p for a drop, Holm over the six checks).
type Expected = [(&'static str, &'static str, f64, f64); 6];

fn assert_checks(test: &str, want: &Expected, tol: f64) {
    let p = compare_project(test);
    let (code, v) = gate(&p, &["--run", "r=cand.json"]);
    assert_eq!(code, 0, "every drop is within its tolerance: {v}");
    for &(metric, stratum, pv, adj) in want {
        let c = check(&v, metric, stratum);
        assert_eq!(c["test"], test, "{c}");
        assert!((f(c, "p_value") - pv).abs() < tol, "{c}: expected p {pv}");
        assert!(
            (f(c, "p_adjusted") - adj).abs() < tol,
            "{c}: expected p_adj {adj}"
        );
        assert_eq!(c["verdict"], "pass", "{c}");
    }
}

#[test]
fn t_test_p_per_metric_and_stratum() {
    // scipy.stats.ttest_1samp(d, 0, alternative="less") per check; Holm.
    assert_checks(
        "t-test",
        &[
            ("mrr", "all", 0.15917009876315746, 0.6366803950526299),
            ("hit_rate@1", "all", 0.22166592508483007, 0.6649977752544902),
            ("mrr", "a", 0.43030630306049483, 0.8606126061209897),
            ("hit_rate@1", "a", 0.5, 0.8606126061209897),
            ("mrr", "b", 0.11540896600125787, 0.5770448300062894),
            ("hit_rate@1", "b", 0.09084505690810468, 0.5450703414486281),
        ],
        1e-9,
    );
}

#[test]
fn randomization_p_per_metric_and_stratum() {
    // Share of the 2^k sign patterns at or below the observed sum; Holm.
    assert_checks(
        "randomization",
        &[
            ("mrr", "all", 0.162109375, 0.810546875),
            ("hit_rate@1", "all", 0.34375, 1.0),
            ("mrr", "a", 0.4375, 1.0),
            ("hit_rate@1", "a", 0.6875, 1.0),
            ("mrr", "b", 0.125, 0.75),
            ("hit_rate@1", "b", 0.25, 1.0),
        ],
        1e-12,
    );
}

/// Graded labels: grade 1 counts at relevance level 1 only, grade 2 at both.
const GRADED_GOLD: &str = r#"{"version": 1, "queries": [
  {"id": "q1", "relevant": {"d1": 1, "d2": 2}},
  {"id": "q2", "relevant": {"d3": 1, "d4": 2}},
  {"id": "q3", "relevant": {"d5": 2}},
  {"id": "q4", "relevant": {"d6": 1, "d7": 2}}
]}"#;

/// Recorded as the baseline: a grade-1 chunk at rank 1 everywhere.
const BEFORE: &str =
    r#"{"q1": ["d1", "x", "d2"], "q2": ["d3", "d4"], "q3": ["d5"], "q4": ["d6", "x1", "x2", "d7"]}"#;

/// Gated later: grade-2 chunks at ranks 1, 3, 2, 1.
const AFTER: &str = r#"{"q1": ["d2", "d1"], "q2": ["d3", "x", "d4"], "q3": ["x", "d5"], "q4": ["d7"]}"#;

/// A baseline recorded at relevance level 1 and gated at level 2 must be
/// re-scored from its stored rankings at level 2. Reusing its stored values
/// (mrr 1 on every query) would report a drop of 0.29 and fail.
#[test]
fn relevance_level_change_rescores_the_baseline() {
    let p = TestProject::new()
        .with_config("rgate.yaml")
        .with_env("SOURCE_DATE_EPOCH", "1795996800");
    p.write("gold.json", GRADED_GOLD);
    p.write("before.json", BEFORE);
    p.write("after.json", AFTER);
    let config = |level: i32| {
        format!(
            "gold: gold.json
baselines: baselines
# mrr has no cutoff: re-scoring it needs whole rankings.
baseline_depth: all
relevance_level: {level}
metrics: [mrr, recall@2]
retrievers:
  - name: r
    run: before.json
gate:
  decision: threshold
  rules:
    - metric: mrr
      max_drop: 0.05
      strata: overall
    - metric: recall@2
      max_drop: 0.05
      strata: overall
"
        )
    };
    p.write("rgate.yaml", config(1));
    let o = p.run(&["baseline", "update"]);
    assert_eq!(o.code, 0, "{}", o.stderr);

    // At level 1 the new run is worse on mrr (1 -> (1 + 1 + 1/2 + 1) / 4):
    // the gate sees the drop, so the baseline's level-1 values are real.
    let (code, v) = gate(&p, &["--run", "r=after.json"]);
    assert_eq!(code, 1, "{v}");
    let c = check(&v, "mrr", "all");
    assert!((f(c, "baseline") - 1.0).abs() < 1e-12, "{c}");
    assert!((f(c, "current") - 0.875).abs() < 1e-12, "{c}");

    // At level 2, by hand (one relevant chunk per query, the grade-2 one):
    // baseline mrr (1/3 + 1/2 + 1 + 1/4) / 4 = 0.5208, current
    // (1 + 1/3 + 1/2 + 1) / 4 = 0.7083; recall@2 (0 + 1 + 1 + 0) / 4 = 0.5
    // before, (1 + 0 + 1 + 1) / 4 = 0.75 after.
    p.write("rgate.yaml", config(2));
    let (code, v) = gate(&p, &["--run", "r=after.json"]);
    assert_eq!(code, 0, "{v}");
    let c = check(&v, "mrr", "all");
    let base = (1.0 / 3.0 + 0.5 + 1.0 + 0.25) / 4.0;
    let cur = (1.0 + 1.0 / 3.0 + 0.5 + 1.0) / 4.0;
    assert!((f(c, "baseline") - base).abs() < 1e-12, "{c}");
    assert!((f(c, "current") - cur).abs() < 1e-12, "{c}");
    assert!((f(c, "delta") - (cur - base)).abs() < 1e-12, "{c}");
    let r = check(&v, "recall@2", "all");
    assert!((f(r, "baseline") - 0.5).abs() < 1e-12, "{r}");
    assert!((f(r, "current") - 0.75).abs() < 1e-12, "{r}");
    assert_eq!(v["verdict"], "pass", "{v}");
}

/// Scopes over queries 0..n: `all`, then the given strata.
fn scopes_of(strata: &[&[usize]]) -> Vec<rgate::compare::Scope> {
    let mut all: Vec<usize> = strata.iter().flat_map(|s| s.iter().copied()).collect();
    all.sort_unstable();
    let mut out = vec![rgate::compare::Scope {
        name: "all".into(),
        members: all,
    }];
    for (i, s) in strata.iter().enumerate() {
        out.push(rgate::compare::Scope {
            name: format!("s{i}"),
            members: s.to_vec(),
        });
    }
    out
}

/// The standard error behind mde and "queries needed", by hand:
/// values 1,2,3,4 have sample sd sqrt(5/3), so micro se = sqrt(5/3)/2;
/// macro over strata {1,2},{3,4}: sqrt(0.5/2 + 0.5/2)/2; a one-query
/// stratum borrows the overall sd: sqrt(5/3/1 + 1/3)/2.
#[test]
fn standard_error_by_hand() {
    use rgate::config::Weighting::{Macro, Micro};
    use rgate::gate::standard_error;
    let v = [1.0, 2.0, 3.0, 4.0];
    let even = scopes_of(&[&[0, 1], &[2, 3]]);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    assert!(close(
        standard_error(&v, &even, 0, Micro),
        (5.0f64 / 3.0).sqrt() / 2.0
    ));
    assert!(close(standard_error(&v, &even, 0, Macro), 0.5f64.sqrt() / 2.0));
    // A stratum scope is sd/sqrt(n) under either weighting: sd(1,2) = sqrt(0.5).
    assert!(close(
        standard_error(&v, &even, 1, Macro),
        0.5f64.sqrt() / 2f64.sqrt()
    ));
    let lone = scopes_of(&[&[0], &[1, 2, 3]]);
    assert!(close(
        standard_error(&v, &lone, 0, Macro),
        (5.0f64 / 3.0 + 1.0 / 3.0).sqrt() / 2.0
    ));
    // Nothing varies: no standard error at all (not 0, which would promise
    // infinite power).
    assert!(standard_error(&[2.0; 4], &even, 0, Micro).is_nan());
    assert!(standard_error(&[2.0; 4], &even, 0, Macro).is_nan());
}

/// Which spread stands in, in order: the deltas, the baseline's values in
/// the scope, the whole gold set's baseline values scaled to the scope, the floor.
#[test]
fn spread_se_falls_back_in_order() {
    use rgate::config::Weighting::Micro;
    use rgate::gate::spread_se;
    let sc = scopes_of(&[&[0, 1], &[2, 3]]);
    let (se, s) = spread_se(&[0.0, 1.0, 0.0, 1.0], &[5.0; 4], &sc, 0, Micro);
    assert_eq!(
        (s.name(), (se - (1.0f64 / 3.0).sqrt() / 2.0).abs() < 1e-12),
        ("deltas", true)
    );
    let (se, s) = spread_se(&[0.5; 4], &[1.0, 2.0, 3.0, 4.0], &sc, 0, Micro);
    assert_eq!(
        (s.name(), (se - (5.0f64 / 3.0).sqrt() / 2.0).abs() < 1e-12),
        ("baseline", true)
    );
    // Stratum 1's baseline values are equal (1, 1); the gold set's sd of
    // 1,1,3,5 is sqrt(11/3), over sqrt(2) queries.
    let (se, s) = spread_se(&[0.5; 4], &[1.0, 1.0, 3.0, 5.0], &sc, 1, Micro);
    assert_eq!(
        (
            s.name(),
            (se - (11.0f64 / 3.0).sqrt() / 2f64.sqrt()).abs() < 1e-12
        ),
        ("overall", true)
    );
    let (se, s) = spread_se(&[0.5; 4], &[1.0; 4], &sc, 1, Micro);
    assert_eq!((s.name(), se.is_nan()), ("floor", true));
}

/// `power` for every decision, by hand from z(0.95) = 1.6448536 and
/// z(0.8) = 0.8416212 (Python's statistics.NormalDist), n = 100, alpha 0.05:
/// the mde, whether the tolerance is enforceable, the queries that would
/// make it so, and how often an unchanged retriever fails.
#[test]
fn power_by_hand() {
    use rgate::config::Decision::*;
    use rgate::gate::{power, Spread};
    let near = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-9);
    let d = Spread::Deltas;
    let p = power(ConfidentDrop, 0.05, 0.01, d, 100, 0.05);
    assert!(near(p.mde, 0.074864748605), "{:?}", p.mde);
    assert!(p.enforceable && p.queries_needed.is_none() && p.unchanged_fails.is_none());
    let p = power(ConfidentDrop, 0.01, 0.01, d, 100, 0.05);
    assert!(near(p.mde, 0.034864748605));
    assert_eq!((p.enforceable, p.queries_needed), (false, Some(619)));
    // tolerance 0 is always enforceable: any significant drop fails.
    assert!(power(ConfidentDrop, 0.0, 0.01, d, 100, 0.05).enforceable);
    let p = power(SignificantDrop, 0.01, 0.01, d, 100, 0.05);
    assert!(near(p.mde, 0.024864748605));
    assert_eq!((p.enforceable, p.queries_needed), (false, Some(619)));
    assert!(near(
        power(SignificantDrop, 0.05, 0.01, d, 100, 0.05).mde,
        0.058416212336
    ));
    let p = power(NonInferiority, 0.05, 0.01, d, 100, 0.05);
    assert!(near(p.mde, 0.041967676066));
    assert!(near(p.unchanged_fails, 0.000396615005));
    assert!(p.enforceable && p.queries_needed.is_none());
    let p = power(NonInferiority, 0.005, 0.01, d, 100, 0.05);
    assert_eq!(p.mde, None, "an unchanged run fails 87% of the time: no mde");
    assert!(near(p.unchanged_fails, 0.873865101807));
    assert_eq!((p.enforceable, p.queries_needed), (false, Some(2474)));
    let p = power(Threshold, 0.02, 0.01, d, 100, 0.05);
    assert!(near(p.mde, 0.028416212336));
    assert!(near(p.unchanged_fails, 0.022750131948));
    assert!(p.enforceable && p.queries_needed.is_none());
    let p = power(Threshold, 0.01, 0.01, d, 100, 0.05);
    assert_eq!((p.enforceable, p.queries_needed), (false, Some(271)));
}

/// Without any spread only the query count bounds the mde: 20 queries at
/// alpha 0.05 need k = floor(log2 20) + 1 = 5 equal losses, a step of 0.25.
#[test]
fn power_floor_by_hand() {
    use rgate::config::Decision::*;
    use rgate::gate::{power, Spread};
    let f = |dec, tol| power(dec, tol, f64::NAN, Spread::Deltas, 20, 0.05);
    let p = f(ConfidentDrop, 0.1);
    assert_eq!(
        (p.mde, p.enforceable, p.spread.name()),
        (Some(0.35), false, "floor")
    );
    // A zero standard error is no spread either (not infinite power).
    let zero = power(ConfidentDrop, 0.1, 0.0, Spread::Deltas, 20, 0.05);
    assert_eq!((zero.mde, zero.spread.name()), (Some(0.35), "floor"));
    assert!(f(ConfidentDrop, 0.0).enforceable);
    assert!(f(ConfidentDrop, 0.25).enforceable);
    assert_eq!(f(SignificantDrop, 0.1).mde, Some(0.25));
    assert_eq!(f(SignificantDrop, 0.3).mde, Some(0.3));
    assert_eq!(f(Threshold, 0.1).mde, Some(0.1 + 1.0 / 20.0));
    assert_eq!(f(NonInferiority, 0.1).mde, None);
    let none = power(ConfidentDrop, 0.1, 0.01, Spread::Deltas, 0, 0.05);
    assert_eq!((none.mde, none.enforceable), (None, false));
    // Nor anything for a tolerance that is not a number.
    for tol in [f64::INFINITY, f64::NAN] {
        let p = power(ConfidentDrop, tol, 0.01, Spread::Deltas, 20, 0.05);
        assert_eq!((p.mde, p.enforceable), (None, false), "{tol}");
    }
}
