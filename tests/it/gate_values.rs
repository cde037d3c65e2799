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
        // Every drop is within its tolerance; where the interval at the
        // check's level still reaches beyond it, the check is inconclusive.
        let lower = c["lower_bound"].as_f64().unwrap_or(f64::NEG_INFINITY);
        let within = lower > -f(c, "tolerance");
        assert_eq!(c["verdict"], if within { "pass" } else { "inconclusive" }, "{c}");
    }
}

#[test]
fn t_test_p_per_metric_and_stratum() {
    // scipy.stats.ttest_1samp(d, 0, alternative="less") per check, made
    // monotone as the gate's t-test is (make.py's `envelope_less`: the
    // smallest p of max(d, L) over L, searched by scipy); Holm. Only mrr
    // on b moves: its -1 among four deltas is raised (scipy's own p there
    // is 0.11540896600125787).
    assert_checks(
        "t-test",
        &[
            ("mrr", "all", 0.15917009876315746, 0.6366803950526299),
            ("hit_rate@1", "all", 0.22166592508483007, 0.6649977752544902),
            ("mrr", "a", 0.43030630306049483, 0.8606126061209897),
            ("hit_rate@1", "a", 0.5, 0.8606126061209897),
            ("mrr", "b", 0.11189983694084411, 0.5594991847042206),
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

/// The spread a drop adds, by hand (`drop_spread`): a pure loss on an
/// unchanged binary run has no churn and loss scale 1; a churn of one win
/// and one loss has a loss scale (n11 - n01)/(n11 + n01) = 0 and churn
/// mean(d^2) = 0.5; an unchanged graded run has loss scale sum c^2 / sum c.
#[test]
fn drop_spread_by_hand() {
    use rgate::config::Weighting::{Macro, Micro};
    use rgate::gate::drop_spread;
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    let sub = |c: &[f64], b: &[f64]| -> Vec<f64> { c.iter().zip(b).map(|(c, b)| c - b).collect() };
    // 30 queries, 28 hits, 12 of them lost.
    let all: Vec<usize> = (0..30).collect();
    let sc = scopes_of(&[&all]);
    let b: Vec<f64> = (0..30).map(|i| f64::from(u8::from(i < 28))).collect();
    let c: Vec<f64> = (0..30)
        .map(|i| f64::from(u8::from((12..28).contains(&i))))
        .collect();
    let m = drop_spread(&sub(&c, &b), &b, &c, &sc, 0, Micro);
    assert!(
        close(m.churn, 0.0) && close(m.slope, 1.0 / 30.0) && close(m.weight2, 1.0 / 30.0),
        "{m:?}"
    );
    assert!(close(m.max_drop, 28.0 / 30.0));
    assert_eq!((m.spread.name(), m.n), ("drop", 30));
    // Before the loss the same model: the same mde before and after.
    let same = drop_spread(&[0.0; 30], &b, &b, &sc, 0, Micro);
    assert!(close(same.churn, 0.0) && close(same.slope, 1.0 / 30.0));
    // One win, one loss, two ties.
    let sc4 = scopes_of(&[&[0, 1], &[2, 3]]);
    let (b, c) = ([1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0]);
    let m = drop_spread(&sub(&c, &b), &b, &c, &sc4, 0, Micro);
    assert!(close(m.churn, 0.5 / 4.0) && close(m.slope, 0.0), "{m:?}");
    assert_eq!(m.spread.name(), "churn");
    // Graded, unchanged: lambda = (0.25 + 1 + 0.25) / 2 = 0.75.
    let g = [0.5, 1.0, 0.0, 0.5];
    let m = drop_spread(&[0.0; 4], &g, &g, &sc4, 0, Micro);
    assert!(close(m.slope, 0.75 / 4.0) && close(m.churn, 0.0));
    // Macro: strata {0.5, 1} (lambda 1.25/1.5) and {0, 0.5} (lambda 0.5),
    // each over n_h H^2 = 8.
    let m = drop_spread(&[0.0; 4], &g, &g, &sc4, 0, Macro);
    assert!(
        close(m.slope, (1.25 / 1.5 + 0.5) / 8.0) && close(m.weight2, 2.0 / 8.0),
        "{m:?}"
    );
    // Nothing to lose.
    let z = [0.0; 4];
    assert_eq!(
        drop_spread(&z, &z, &z, &sc4, 0, Micro).spread.name(),
        "nothing-to-lose"
    );
}

/// A model with churn 0.16 and loss scale 1 per query, n queries.
fn model(n: usize, churn: f64, slope: f64) -> rgate::gate::DropSpread {
    let nf = n as f64;
    rgate::gate::DropSpread {
        churn: churn / nf,
        slope: slope / nf,
        weight2: 1.0 / nf,
        max_drop: 0.9,
        n,
        spread: rgate::gate::Spread::Churn,
    }
}

/// `power` against its defining equations, solved here by fixed point with
/// Student's t quantiles from a table: t(0.95; 99) = 1.6603911,
/// t(0.8; 99) = 0.8452670, t(0.95; 19) = 1.7291328, t(0.8; 19) = 0.8609506.
#[test]
fn power_solves_its_equations() {
    use rgate::config::Decision::*;
    use rgate::config::TestKind::*;
    use rgate::gate::power;
    let fixed = |f: &dyn Fn(f64) -> f64| {
        let mut x = 0.1;
        for _ in 0..200 {
            x = f(x);
        }
        x
    };
    let near = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 2e-6);
    // Margin test, n = 100: m = 0.05 + (t_a + t_p) sqrt((0.16 + m - m^2) / 100).
    let mde = fixed(&|m| 0.05 + (1.660_391_1 + 0.845_267_0) * ((0.16 + m - m * m) / 100.0).sqrt());
    let p = power(ConfidentDrop, Bootstrap, 0.05, &model(100, 0.16, 1.0), 0.05);
    assert!(near(p.mde, mde), "{:?} vs {mde}", p.mde);
    assert!((p.se - ((0.16 + mde - mde * mde) / 100.0).sqrt()).abs() < 1e-6);
    assert!((p.se_no_change - 0.04).abs() < 1e-12);
    // The t-test takes the same quantiles.
    assert!(near(
        power(ConfidentDrop, TTest, 0.05, &model(100, 0.16, 1.0), 0.05).mde,
        mde
    ));
    // Sign-flip, n = 20: the flips' spread is the uncentred second moment,
    // se^2 + (m - tol)^2 / 20.
    let se = |m: f64| ((0.16 + m - m * m) / 20.0).sqrt();
    let sf = fixed(&|m| {
        0.05 + 1.729_132_8 * (se(m).powi(2) + (m - 0.05f64).powi(2) / 20.0).sqrt() + 0.860_950_6 * se(m)
    });
    let p = power(ConfidentDrop, Bootstrap, 0.05, &model(20, 0.16, 1.0), 0.05);
    assert!(near(p.mde, sf), "{:?} vs {sf}", p.mde);
    // significant-drop: m = max(tol, t_a se) + t_p se.
    let sig = fixed(&|m| {
        let s = ((0.16 + m - m * m) / 100.0).sqrt();
        (0.01f64).max(1.660_391_1 * s) + 0.845_267_0 * s
    });
    assert!(near(
        power(SignificantDrop, TTest, 0.01, &model(100, 0.16, 1.0), 0.05).mde,
        sig
    ));
    // threshold: m = tol + t_p se(m); an unchanged run fails Phi(-tol/se0).
    let th = fixed(&|m| 0.02 + 0.845_267_0 * ((0.16 + m - m * m) / 100.0).sqrt());
    let p = power(Threshold, TTest, 0.02, &model(100, 0.16, 1.0), 0.05);
    assert!(near(p.mde, th));
    // 1 - Phi(0.02 / 0.04) = 1 - Phi(0.5) = 0.3085375.
    assert!(p.unchanged_fails.is_some_and(|f| (f - 0.308_537_5).abs() < 1e-6));
    assert!(!p.enforceable);
}

/// `queries_needed` is the first size at which the check is enforceable
/// (a drop of twice the tolerance caught 80% of the time), and never one
/// the check already has.
#[test]
fn queries_needed_is_the_first_enforceable_size() {
    use rgate::config::Decision::*;
    use rgate::config::TestKind::*;
    use rgate::gate::power;
    let m = model(100, 0.16, 1.0);
    let p = power(ConfidentDrop, Bootstrap, 0.02, &m, 0.05);
    assert!(!p.enforceable);
    let need = p.queries_needed.unwrap();
    let at = |n: usize| power(ConfidentDrop, Bootstrap, 0.02, &model(n, 0.16, 1.0), 0.05);
    assert!(at(need).enforceable && !at(need - 1).enforceable, "{need}");
    // By hand: n = (t_a + t_p)^2 (0.16 + 0.04 - 0.0016) / 0.02^2, about 3,100.
    assert!((3000..3200).contains(&need), "{need}");
    assert!(at(need).mde.is_some_and(|m| m <= 0.04));
}

/// A check that cannot fail on its own has no mde: 4 queries under the
/// sign-flip test (2^-4 = 0.0625 >= 0.05), or 8 at alpha/15 (0.0039 >=
/// 0.0033); nor one that no possible drop fails 80% of the time (5
/// queries at 0.05: only a loss on all five reaches p = 1/32); nothing to
/// lose, no mde; no number for a tolerance that is not one.
#[test]
fn no_mde_where_no_drop_can_fail() {
    use rgate::config::Decision::*;
    use rgate::config::TestKind::*;
    use rgate::gate::power;
    let p = power(ConfidentDrop, Bootstrap, 0.0, &model(4, 0.16, 1.0), 0.05);
    assert_eq!((p.mde, p.enforceable, p.can_fail_alone), (None, false, false));
    let p = power(
        ConfidentDrop,
        Randomization,
        0.0,
        &model(8, 0.16, 1.0),
        0.05 / 15.0,
    );
    assert_eq!((p.mde, p.can_fail_alone), (None, false));
    assert!(
        power(ConfidentDrop, Randomization, 0.0, &model(8, 0.16, 1.0), 0.05)
            .mde
            .is_some()
    );
    let p = power(ConfidentDrop, Randomization, 0.0, &model(5, 0.16, 1.0), 0.05);
    assert_eq!((p.mde, p.can_fail_alone), (None, true));
    // Under non-inferiority such a scope fails whatever happens: no mde either.
    assert_eq!(
        power(NonInferiority, Bootstrap, 0.1, &model(4, 0.16, 1.0), 0.05).mde,
        None
    );
    let mut nothing = model(50, 0.0, 0.0);
    nothing.max_drop = 0.0;
    assert_eq!(power(ConfidentDrop, Bootstrap, 0.02, &nothing, 0.05).mde, None);
    for tol in [f64::INFINITY, f64::NAN] {
        let p = power(ConfidentDrop, Bootstrap, tol, &model(50, 0.16, 1.0), 0.05);
        assert_eq!((p.mde, p.enforceable), (None, false), "{tol}");
    }
    assert_eq!(
        power(ConfidentDrop, Bootstrap, 0.02, &model(0, 0.16, 1.0), 0.05).mde,
        None
    );
}
