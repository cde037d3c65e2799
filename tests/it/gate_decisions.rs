//! The gate's decisions through the library, against values computed
//! without rgate: `tests/fixtures/gate/decisions.py` (scipy's t
//! distribution, Holm and Bonferroni by their definitions) printed every
//! expected number below; the rest are counted by hand in the comments.
//! The t-test makes the p-values exact, so each mode's boundary can be
//! placed a hair either side.

use crate::sim;

use rgate::config::{Correction, Decision, GateSettings, Rule, StrataSel, TestKind, Tolerance};
use rgate::gate::{Check, CheckVerdict, RetrieverOutcome, Verdict};
use rgate::judge::Ranking;

/// The pattern of deltas behind most cases: mean -0.055, se 0.0201 (n = 30).
const PATTERN: [f64; 10] = [-0.2, 0.1, -0.1, 0.0, -0.15, 0.05, -0.05, -0.1, 0.1, -0.2];

fn deltas(shift: f64) -> Vec<f64> {
    PATTERN.iter().cycle().take(30).map(|d| d + shift).collect()
}

fn settings(decision: Decision, tol: f64, strata: StrataSel) -> GateSettings {
    GateSettings {
        test: TestKind::TTest,
        decision,
        rules: vec![Rule {
            metric: "hit_rate@3".parse().unwrap(),
            tolerance: Tolerance::Absolute(tol),
            strata,
        }],
        ..GateSettings::default()
    }
}

/// One stratum of 30 queries, baseline 0.5 everywhere, candidate 0.5 + d.
fn gate_one(decision: Decision, tol: f64, d: &[f64]) -> RetrieverOutcome {
    let w = sim::world_of(&[d.len()], &["hit_rate@3"]);
    let base = vec![vec![0.5; d.len()]];
    let cur = vec![d.iter().map(|x| 0.5 + x).collect()];
    sim::gate_values(&w, &settings(decision, tol, StrataSel::Overall), &base, &cur)
}

fn only(o: &RetrieverOutcome) -> &Check {
    let gated: Vec<&Check> = o.checks.iter().filter(|c| c.tolerance.is_some()).collect();
    assert_eq!(gated.len(), 1, "{:?}", o.checks);
    gated[0]
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 1e-9, "{what}: {a} vs expected {b}");
}

#[test]
fn margin_test_is_the_default_and_fails_only_beyond_the_tolerance() {
    assert_eq!(GateSettings::default().decision, Decision::ConfidentDrop);
    // Upper 95% bound of delta: -0.0208349; a tolerance below 0.0208 fails.
    let o = gate_one(Decision::ConfidentDrop, 0.02, &deltas(0.0));
    let c = only(&o);
    close(c.cmp.p_value, 0.046173941621399615, "margin p at 0.02");
    close(c.cmp.p_adjusted, 0.046173941621399615, "one check: Holm = p");
    close(c.upper_bound, -0.020834854497916673, "upper bound");
    assert_eq!(c.verdict, CheckVerdict::Fail);
    assert_eq!(o.verdict(), Verdict::Fail);
    let o = gate_one(Decision::ConfidentDrop, 0.025, &deltas(0.0));
    close(only(&o).cmp.p_value, 0.07325155890576003, "margin p at 0.025");
    // Not beyond 0.025, and not shown within it either: the lower bound,
    // -0.055 - (-0.020835 + 0.055) = -0.089165, lies beyond -0.025.
    close(only(&o).lower_bound, -0.08916514550208333, "lower bound");
    assert_eq!(only(&o).verdict, CheckVerdict::Inconclusive);
    // Tolerance 0: the margin test is significant-drop's test.
    let o = gate_one(Decision::ConfidentDrop, 0.0, &deltas(0.0));
    close(only(&o).cmp.p_value, 0.00526041153911692, "p at tolerance 0");
    assert_eq!(only(&o).verdict, CheckVerdict::Fail);
}

#[test]
fn significant_drop_needs_both_the_size_and_the_significance() {
    // Observed drop 0.055, p 0.00526.
    let o = gate_one(Decision::SignificantDrop, 0.054, &deltas(0.0));
    close(only(&o).cmp.p_value, 0.00526041153911692, "p drop");
    assert_eq!(only(&o).verdict, CheckVerdict::Fail);
    let o = gate_one(Decision::SignificantDrop, 0.056, &deltas(0.0));
    // Significant but inside the tolerance: no fail; its interval
    // [-0.0892, -0.0208] holds -0.056, so inconclusive.
    assert_eq!(
        only(&o).verdict,
        CheckVerdict::Inconclusive,
        "significant but inside the tolerance"
    );
    // Drop 0.02 > tolerance 0, but p 0.164: not significant (the interval
    // holds 0 and drops beyond it alike).
    let o = gate_one(Decision::SignificantDrop, 0.0, &deltas(0.035));
    close(only(&o).cmp.p_value, 0.16406568978112382, "weak p");
    assert_eq!(only(&o).verdict, CheckVerdict::Inconclusive);
}

#[test]
fn drops_are_decided_on_the_one_sided_p() {
    // One-sided p 0.035, two-sided 0.07: a drop.
    let o = gate_one(Decision::SignificantDrop, 0.0, &deltas(0.017171091536069688));
    close(only(&o).cmp.p_value, 0.035, "one-sided p");
    assert_eq!(only(&o).verdict, CheckVerdict::Fail);
}

#[test]
fn non_inferiority_passes_only_a_proven_bound() {
    // Lower 95% bound -0.0891651: tolerance 0.09 is proven, 0.08 is not.
    let o = gate_one(Decision::NonInferiority, 0.09, &deltas(0.0));
    close(only(&o).cmp.p_value, 0.04617394162139967, "ni p at 0.09");
    close(only(&o).lower_bound, -0.08916514550208335, "lower bound");
    assert_eq!(only(&o).verdict, CheckVerdict::Pass);
    let o = gate_one(Decision::NonInferiority, 0.08, &deltas(0.0));
    close(only(&o).cmp.p_value, 0.1118541557276471, "ni p at 0.08");
    assert_eq!(only(&o).verdict, CheckVerdict::Fail);
    // An unchanged run with a wide enough tolerance passes.
    let o = gate_one(Decision::NonInferiority, 0.09, &deltas(0.055));
    assert_eq!(only(&o).verdict, CheckVerdict::Pass);
}

#[test]
fn threshold_compares_the_observed_drop_only() {
    let o = gate_one(Decision::Threshold, 0.054, &deltas(0.0));
    assert_eq!(only(&o).verdict, CheckVerdict::Fail);
    let o = gate_one(Decision::Threshold, 0.056, &deltas(0.0));
    assert_eq!(only(&o).verdict, CheckVerdict::Pass);
}

/// Two strata of 30: s0 with the pattern, s1 with it shifted by +0.03; one
/// rule on every scope, tolerance 0: three checks (all, s0, s1).
fn gate_two(correction: Correction, s0: &[f64], s1: &[f64]) -> RetrieverOutcome {
    let w = sim::world_of(&[30, 30], &["hit_rate@3"]);
    let base = vec![vec![0.5; 60]];
    let cur = vec![s0.iter().chain(s1).map(|x| 0.5 + x).collect()];
    let s = GateSettings {
        correction,
        ..settings(Decision::ConfidentDrop, 0.0, StrataSel::All)
    };
    sim::gate_values(&w, &s, &base, &cur)
}

fn by_scope<'a>(o: &'a RetrieverOutcome, scope: &str) -> &'a Check {
    o.checks.iter().find(|c| c.cmp.stratum == scope).unwrap()
}

#[test]
fn every_correction_gives_its_exact_adjusted_p() {
    let p = [
        ("all", 0.0033498581271973154),
        ("s0", 0.00526041153911692),
        ("s1", 0.11185415572764697),
    ];
    let want = [
        (
            Correction::Holm,
            [0.010049574381591946, 0.01052082307823384, 0.11185415572764697],
        ),
        (
            Correction::Bonferroni,
            [0.010049574381591946, 0.01578123461735076, 0.3355624671829409],
        ),
        (Correction::None, [p[0].1, p[1].1, p[2].1]),
    ];
    for (correction, adj) in want {
        let o = gate_two(correction, &deltas(0.0), &deltas(0.03));
        for (k, (scope, raw)) in p.iter().enumerate() {
            let c = by_scope(&o, scope);
            close(c.cmp.p_value, *raw, &format!("{correction:?} {scope} p"));
            close(c.cmp.p_adjusted, adj[k], &format!("{correction:?} {scope} p_adj"));
        }
        // The bounds are at 1 - alpha/3 with a correction, 1 - alpha without.
        let level = if correction == Correction::None {
            0.95
        } else {
            1.0 - 0.05 / 3.0
        };
        close(by_scope(&o, "all").bound_level, level, "bound level");
        // And the bounds themselves are taken at that level (scipy:
        // mean -0.04 +/- t(level, 59) * se over all 60 queries).
        let (lo, hi) = if correction == Correction::None {
            (-0.06378255858114035, -0.016217441418859665)
        } else {
            (-0.07101167810414985, -0.008988321895850162)
        };
        close(by_scope(&o, "all").lower_bound, lo, "lower bound");
        close(by_scope(&o, "all").upper_bound, hi, "upper bound");
    }
}

#[test]
fn improved_is_decided_on_the_corrected_p() {
    // s0 unchanged, s1 rises with one-sided p 0.02; overall p 0.0206. Holm
    // lifts both to 0.06: not improved, though each raw p is below 0.05.
    let o = gate_two(Correction::Holm, &[0.0; 30], &deltas(0.09823759692797362));
    for scope in ["all", "s1"] {
        let c = by_scope(&o, scope);
        close(c.p_rise_adjusted, 0.06, &format!("{scope} p_rise_adjusted"));
        // Not improved, and at Holm's first level (0.05/3, where the
        // step-down stops: no drop p is small) a one-sided p_rise of 0.02
        // leaves 0 inside the interval: tolerance 0 is neither met nor
        // exceeded, so the check is inconclusive.
        assert_eq!(c.verdict, CheckVerdict::Inconclusive, "{scope}");
    }
    close(by_scope(&o, "s1").p_rise, 0.02, "raw p_rise");
    let o = gate_two(Correction::None, &[0.0; 30], &deltas(0.09823759692797362));
    assert_eq!(by_scope(&o, "s1").verdict, CheckVerdict::Improved);
}

#[test]
fn a_stratum_list_checks_exactly_the_listed_strata() {
    let w = sim::world_of(&[30, 30, 30], &["hit_rate@3"]);
    let base = vec![vec![0.5; 90]];
    let s = settings(
        Decision::ConfidentDrop,
        0.0,
        StrataSel::List(vec!["s1".into(), "s2".into()]),
    );
    let o = sim::gate_values(&w, &s, &base, &base);
    let scopes: Vec<&str> = o.checks.iter().map(|c| c.cmp.stratum.as_str()).collect();
    assert_eq!(scopes, ["s1", "s2"]);
}

#[test]
fn two_equal_losses_are_not_significant_under_any_test() {
    // Two queries each losing 0.5: the exact sign-flip p is 1/4.
    for test in [TestKind::Bootstrap, TestKind::TTest, TestKind::Randomization] {
        let w = sim::world_of(&[2], &["hit_rate@3"]);
        let s = GateSettings {
            test,
            ..settings(Decision::ConfidentDrop, 0.0, StrataSel::Overall)
        };
        let o = sim::gate_values(&w, &s, &[vec![1.0, 1.0]], &[vec![0.5, 0.5]]);
        let c = only(&o);
        assert_eq!(c.cmp.p_value, 0.25, "{test:?}");
        // 2^-2 is above every level: the interval is unbounded, so it holds
        // no drop and any drop alike.
        assert_eq!(c.verdict, CheckVerdict::Inconclusive, "{test:?}");
        // The bootstrap gives way to the sign-flip test below 30 queries.
        let ran = if test == TestKind::Bootstrap {
            TestKind::Randomization
        } else {
            test
        };
        assert_eq!(c.test, ran);
        // And the report says it cannot gate such a stratum at all, where
        // that is true: the sign-flip p is at least 2^-2; a t-test of two
        // unequal losses can reach any p (-1 and -0.999: p = 0.0002).
        assert_eq!(
            o.warnings.iter().any(|w| w.contains("too small to gate at all")),
            ran == TestKind::Randomization,
            "{test:?}: {:?}",
            o.warnings
        );
    }
}

#[test]
fn small_scopes_get_the_exact_sign_flip_test() {
    // Five queries, deltas -1 -1 -1 -1 +1 (sum -3): of the 32 sign
    // patterns, those with sum <= -3 are all-minus (-5) and the five with
    // one plus (-3): 6/32.
    let w = sim::world_of(&[5], &["hit_rate@3"]);
    let s = GateSettings {
        test: TestKind::Bootstrap,
        ..settings(Decision::ConfidentDrop, 0.0, StrataSel::Overall)
    };
    let o = sim::gate_values(
        &w,
        &s,
        &[vec![1.0, 1.0, 1.0, 1.0, 0.0]],
        &[vec![0.0, 0.0, 0.0, 0.0, 1.0]],
    );
    let c = only(&o);
    assert_eq!(c.test, TestKind::Randomization);
    assert!(!c.monte_carlo);
    assert_eq!(c.cmp.p_value, 6.0 / 32.0);
}

#[test]
fn overall_bootstrap_is_stratified_and_macro_weights_strata() {
    // Strata of 20 and 15 (35 queries: the bootstrap runs; neither stratum
    // is pooled). Every query of s0 loses 0.5, s1 is unchanged. Resampled
    // within strata, every resample has the observed mean: the bound is the
    // point and p = 1/(B+1). Unstratified, the count of s0 queries drawn
    // would vary and so would the mean.
    let w = sim::world_of(&[20, 15], &["hit_rate@3"]);
    let base = vec![vec![1.0; 35]];
    let cur = vec![(0..35).map(|i| if i < 20 { 0.5 } else { 1.0 }).collect()];
    let s = GateSettings {
        test: TestKind::Bootstrap,
        resamples: 2000,
        ..settings(Decision::SignificantDrop, 0.0, StrataSel::Overall)
    };
    let o = sim::gate_values(&w, &s, &base, &cur);
    let c = only(&o);
    assert_eq!(c.test, TestKind::Bootstrap);
    // micro: 20 * -0.5 / 35
    close(c.cmp.delta, -10.0 / 35.0, "micro delta");
    assert_eq!((c.cmp.ci_low, c.cmp.ci_high), (c.cmp.delta, c.cmp.delta));
    // The share of resamples at or above 0, 1/(B+1), read at Hesterberg's
    // expanded level for n = 35: 1 - F_t34(z(1 - 1/2001) / sqrt(35/34)),
    // by scipy 1.17.
    assert!(
        (c.cmp.p_value / 0.0013248611896917728 - 1.0).abs() < 1e-9,
        "{c:?}"
    );
    // macro: the mean of stratum means, (-0.5 + 0) / 2; baseline 1, current 0.75.
    let s = GateSettings {
        weighting: rgate::config::Weighting::Macro,
        ..s
    };
    let o = sim::gate_values(&w, &s, &base, &cur);
    let c = only(&o);
    close(c.cmp.delta, -0.25, "macro delta");
    close(c.cmp.current, 0.75, "macro current");
    assert_eq!((c.cmp.ci_low, c.cmp.ci_high), (c.cmp.delta, c.cmp.delta));
}

/// Macro weighting under the t-test: the test runs on the deltas weighted
/// by n / (strata x stratum size), so its mean is the mean of stratum
/// means. Strata of 30 (half lose 1) and 10 (all lose 1): weights 2/3 and
/// 2, mean (-0.5 - 1) / 2 = -0.75. scipy's
/// `ttest_1samp([-2/3]*15 + [0]*15 + [-2]*10, 0, alternative="less")`
/// gives p = 2.384e-07; the gate's t-test is monotone in the loss, the
/// smallest p of the runs no worse on any query (`stats::envelope`): the
/// same test on `max(d, L)` minimised over L, which scipy (a grid of
/// 200,001 levels, then `minimize_scalar`) puts at L = -0.66637, p =
/// 3.909441534656461e-10: the -2s raised to the -2/3s' level.
#[test]
fn macro_weighting_reaches_the_t_test() {
    let w = sim::world_of(&[30, 10], &["hit_rate@3"]);
    let base = vec![vec![1.0; 40]];
    let cur = vec![(0..40)
        .map(|i| if (15..30).contains(&i) { 1.0 } else { 0.0 })
        .collect()];
    let s = GateSettings {
        test: TestKind::TTest,
        weighting: rgate::config::Weighting::Macro,
        ..settings(Decision::SignificantDrop, 0.0, StrataSel::Overall)
    };
    let o = sim::gate_values(&w, &s, &base, &cur);
    let c = only(&o);
    assert_eq!(c.test, TestKind::TTest);
    close(c.cmp.delta, -0.75, "macro delta");
    let p = c.cmp.p_value;
    assert!((p / 3.909441534656461e-10 - 1.0).abs() < 1e-6, "p {p}");
}

#[test]
fn tiny_strata_are_pooled_in_the_overall_bootstrap() {
    // One stratum of 40 unchanged and one of 2 that each lose 1: stratified
    // as given, the 2-query stratum would be drawn whole every time, a
    // zero-width interval and p = 1/(B+1). Pooled with the large stratum,
    // the two losses are drawn 0, 1, 2, ... times and the interval spreads.
    let w = sim::world_of(&[40, 2], &["hit_rate@3"]);
    let base = vec![vec![1.0; 42]];
    let cur = vec![(0..42).map(|i| if i < 40 { 1.0 } else { 0.0 }).collect()];
    let s = GateSettings {
        test: TestKind::Bootstrap,
        resamples: 2000,
        ..settings(Decision::SignificantDrop, 0.0, StrataSel::Overall)
    };
    let o = sim::gate_values(&w, &s, &base, &cur);
    let c = only(&o);
    assert!(c.cmp.ci_high > c.cmp.ci_low, "{c:?}");
    // Two moved queries are too few for a bootstrap's spread: the sign-flip
    // test decides. Deltas -1, -1 and 40 zeros: both losses negative in a
    // quarter of the sign patterns, p = 1/4 (Monte Carlo, B = 2000).
    assert_eq!(c.test, TestKind::Randomization);
    assert!((0.22..0.28).contains(&c.cmp.p_value), "{c:?}");
    assert_eq!(c.verdict, CheckVerdict::Inconclusive);
}

#[test]
fn flips_list_lost_metrics_and_count_gains_symmetrically() {
    let metrics = ["hit_rate@3", "mrr@10", "recall@10"];
    let w = sim::world_of(&[30], &metrics);
    let mut base = vec![vec![1.0; 30]; 3];
    let mut cur = base.clone();
    // q0 loses the first metric, q1 the last.
    cur[0][0] = 0.0;
    cur[2][1] = 0.0;
    // q2 gains the last metric (baseline missed all), q3 the first only.
    for m in 0..3 {
        base[m][2] = 0.0;
        cur[m][2] = 0.0;
    }
    cur[2][2] = 1.0;
    base[0][3] = 0.0;
    let s = GateSettings {
        rules: metrics
            .iter()
            .map(|m| Rule {
                metric: m.parse().unwrap(),
                tolerance: Tolerance::Absolute(0.1),
                strata: StrataSel::Overall,
            })
            .collect(),
        ..GateSettings::default()
    };
    let o = sim::gate_values(&w, &s, &base, &cur);
    let lost: Vec<(&str, Vec<String>)> = o
        .flips
        .iter()
        .map(|f| (f.query_id.as_str(), f.lost.clone()))
        .collect();
    assert_eq!(
        lost,
        [
            ("q0-0000", vec!["hit_rate@3".to_string()]),
            ("q0-0001", vec!["recall@10".to_string()])
        ]
    );
    assert_eq!(o.gained, 2);
}

#[test]
fn coverage_warning_fires_on_a_fall_not_on_a_rise() {
    // judged@3 (the deepest cutoff in use): the labeled chunk in the top 3
    // gives 1/3, an unlabeled top 3 gives 0.
    let w = sim::world_of(&[30], &["hit_rate@3"]);
    let s = settings(Decision::ConfidentDrop, 0.1, StrataSel::Overall);
    let values = vec![vec![1.0; 30]];
    let labeled: Vec<Vec<String>> = (0..30)
        .map(|i| vec![format!("d0-{i}"), "x".into(), "y".into()])
        .collect();
    let unlabeled: Vec<Vec<String>> = (0..30)
        .map(|_| vec!["x".into(), "y".into(), "z".into()])
        .collect();
    let judged = |ids: &[Vec<String>]| -> Vec<Ranking> {
        ids.iter()
            .enumerate()
            .map(|(i, r)| Ranking::from_ordered(r.iter().map(String::as_str), &w.prep.labels[i]))
            .collect()
    };
    let fall = sim::gate_full(
        &w,
        &s,
        &values,
        &values,
        Some(labeled.clone()),
        Some(judged(&unlabeled)),
    );
    assert!(
        fall.warnings
            .iter()
            .any(|x| x.contains("judged@3 fell from 0.3333 to 0.0000")),
        "{:?}",
        fall.warnings
    );
    let rise = sim::gate_full(&w, &s, &values, &values, Some(unlabeled), Some(judged(&labeled)));
    assert!(
        !rise.warnings.iter().any(|x| x.contains("judged@3")),
        "{:?}",
        rise.warnings
    );
}

/// Solves `m = tol + (t_a + t_p) sqrt((m - m^2) w2)` by fixed point: the
/// mde of a binary metric with no churn, where a drop of m adds m(1 - m)
/// of variance per query.
fn binary_mde(tol: f64, q: f64, w2: f64) -> f64 {
    let mut m = 0.1;
    for _ in 0..300 {
        m = tol + q * ((m - m * m) * w2).sqrt();
    }
    m
}

#[test]
fn mde_is_never_zero_and_uses_the_corrected_level() {
    // Baseline all hits, no change: no delta varies, yet a drop would
    // bring its own spread: m(1 - m) per query. t(0.95; 29) = 1.6991270,
    // t(0.975; 29) = 2.0452296, t(0.8; 29) = 0.8541920 (t tables).
    let w = sim::world_of(&[30], &["hit_rate@3"]);
    let all = vec![vec![1.0; 30]];
    let o = sim::gate_values(
        &w,
        &settings(Decision::ConfidentDrop, 0.05, StrataSel::Overall),
        &all,
        &all,
    );
    let c = only(&o);
    let want = binary_mde(0.05, 1.699_127_0 + 0.854_192_0, 1.0 / 30.0);
    assert!((c.mde().unwrap() - want).abs() < 1e-6, "{:?} vs {want}", c.mde());
    assert_eq!(c.power.spread.name(), "drop");
    // Two gated checks (overall and its one stratum): alpha/2 each.
    let two = settings(
        Decision::ConfidentDrop,
        0.05,
        StrataSel::List(vec!["all".into(), "s0".into()]),
    );
    let o = sim::gate_values(&w, &two, &all, &all);
    let want = binary_mde(0.05, 2.045_229_6 + 0.854_192_0, 1.0 / 30.0);
    for c in &o.checks {
        assert!((c.mde().unwrap() - want).abs() < 1e-6, "{:?} vs {want}", c.mde());
    }
}

#[test]
fn mde_under_macro_weighting_uses_the_stratum_spreads() {
    // Strata of 30 and 10, all hits, no change: under macro weighting each
    // query weighs 1/(n_h H), so the drop's variance sums (m - m^2) over
    // sum_h 1/(n_h H^2) = 1/120 + 1/40; micro: 1/40. t(0.95; 39) =
    // 1.6848751, t(0.8; 39) = 0.8509350.
    let w = sim::world_of(&[30, 10], &["hit_rate@3"]);
    let all = vec![vec![1.0; 40]];
    let mut s = settings(Decision::ConfidentDrop, 0.02, StrataSel::Overall);
    s.weighting = rgate::config::Weighting::Macro;
    let q = 1.684_875_1 + 0.850_935_0;
    let o = sim::gate_values(&w, &s, &all, &all);
    let want = binary_mde(0.02, q, 1.0 / 120.0 + 1.0 / 40.0);
    assert!(
        (only(&o).mde().unwrap() - want).abs() < 1e-6,
        "macro {:?} vs {want}",
        only(&o).mde()
    );
    s.weighting = rgate::config::Weighting::Micro;
    let o = sim::gate_values(&w, &s, &all, &all);
    let want = binary_mde(0.02, q, 1.0 / 40.0);
    assert!(
        (only(&o).mde().unwrap() - want).abs() < 1e-6,
        "micro {:?} vs {want}",
        only(&o).mde()
    );
}

#[test]
fn a_paired_query_whose_text_changed_is_named() {
    // sha256("abc") = ba7816bf8f01cfea414140de5dae2223...
    assert_eq!(rgate::baseline::text_sha("abc"), "ba7816bf8f01cfea");
    let mut w = sim::world_of(&[30], &["hit_rate@3"]);
    for (i, q) in w.prep.gold.queries.iter_mut().enumerate() {
        q.text = Some(format!("question {i}"));
    }
    let values = vec![vec![1.0; 30]];
    let mut b = sim::baseline(&w, &values);
    for (i, q) in b.queries.iter_mut().enumerate() {
        q.text_sha = Some(rgate::baseline::text_sha(&format!("question {i}")));
    }
    b.queries[4].text_sha = Some(rgate::baseline::text_sha("the old wording"));
    let scores = rgate::eval::Scores {
        metrics: w.metrics.clone(),
        values: values.clone(),
    };
    let rankings = vec![Ranking::default(); 30];
    let cur = rgate::gate::Current {
        name: "sim",
        run: "sim.jsonl".into(),
        rankings: &rankings,
        scores: &scores,
        candidates: None,
        ppi: None,
    };
    let s = settings(Decision::ConfidentDrop, 0.1, StrataSel::Overall);
    let o = rgate::gate::evaluate(&w.prep, &s, &cur, Some(&b));
    let hits: Vec<&String> = o.warnings.iter().filter(|x| x.contains("changed text")).collect();
    assert_eq!(hits.len(), 1, "{:?}", o.warnings);
    assert!(
        hits[0].starts_with("1 paired query changed text since the baseline (`q0-0004`)"),
        "{}",
        hits[0]
    );
    // Unchanged texts and baselines without hashes give no warning.
    b.queries[4].text_sha = None;
    let o = rgate::gate::evaluate(&w.prep, &s, &cur, Some(&b));
    assert!(
        !o.warnings.iter().any(|x| x.contains("changed text")),
        "{:?}",
        o.warnings
    );
}

/// A corrected p within two Monte Carlo standard errors of alpha is
/// re-tested at ten times B (here sqrt(0.05 * 0.95 / 1000) = 0.0069, so
/// p in 0.036..0.064 at B = 1000); a clear result, the threshold mode
/// (no p involved) and a B already at the maximum are not.
#[test]
fn borderline_results_are_retested_at_ten_times_b() {
    // The default test, the sign-flip test, is Monte Carlo beyond 16
    // queries.
    let bootstrap = |decision, b| GateSettings {
        test: TestKind::Randomization,
        resamples: b,
        ..settings(decision, 0.0, StrataSel::Overall)
    };
    // Mean -0.035: the sign-flip p is 0.050 (40,000 random sign patterns
    // in Python), the t-test's 0.046.
    let near = deltas(0.02);
    let o = gate_world(&bootstrap(Decision::SignificantDrop, 1000), &near);
    assert_eq!(o.resamples, 10_000, "{:?}", only(&o).cmp);
    let p = only(&o).cmp.p_value;
    assert!((0.036..0.064).contains(&p), "p at 10,000 resamples: {p}");
    // Mean -0.055, z = 2.8: p about 0.003, clear of alpha.
    let o = gate_world(&bootstrap(Decision::SignificantDrop, 1000), &deltas(0.0));
    assert_eq!(o.resamples, 1000, "{:?}", only(&o).cmp);
    let o = gate_world(&bootstrap(Decision::Threshold, 1000), &near);
    assert_eq!(o.resamples, 1000);
    // The t-test's p is exact: nothing to re-test.
    let t = GateSettings {
        test: TestKind::TTest,
        ..bootstrap(Decision::SignificantDrop, 1000)
    };
    let o = gate_world(&t, &near);
    assert_eq!(o.resamples, 1000);
    assert!(
        (0.036..0.064).contains(&only(&o).cmp.p_value),
        "{:?}",
        only(&o).cmp
    );
    let o = gate_world(
        &bootstrap(Decision::SignificantDrop, rgate::gate::MAX_RESAMPLES),
        &near,
    );
    assert_eq!(o.resamples, rgate::gate::MAX_RESAMPLES);
}

fn gate_world(s: &GateSettings, d: &[f64]) -> RetrieverOutcome {
    let w = sim::world_of(&[d.len()], &["hit_rate@3"]);
    let base = vec![vec![0.5; d.len()]];
    let cur = vec![d.iter().map(|x| 0.5 + x).collect()];
    sim::gate_values(&w, s, &base, &cur)
}

/// The too-small warning names the scope, the queries it would need
/// (k = floor(log2(1 / 0.05)) + 1 = 5 equal losses reach p = 1/32 < 0.05)
/// and what the mode does with it.
#[test]
fn too_small_warning_says_how_many_queries_and_what_fails() {
    let w = sim::world_of(&[2], &["hit_rate@3"]);
    for (decision, effect) in [
        (Decision::ConfidentDrop, "its checks can never fail"),
        (Decision::NonInferiority, "its checks fail whatever the results"),
    ] {
        let s = GateSettings {
            test: TestKind::Randomization,
            ..settings(decision, 0.1, StrataSel::Overall)
        };
        let o = sim::gate_values(&w, &s, &[vec![1.0, 1.0]], &[vec![0.5, 0.5]]);
        let warn = o
            .warnings
            .iter()
            .find(|w| w.contains("too small to gate at all"))
            .unwrap();
        assert!(warn.contains("all (2 queries)"), "{warn}");
        assert!(warn.contains("give each at least 5 queries"), "{warn}");
        assert!(warn.contains(effect), "{decision:?}: {warn}");
    }
}

/// Under threshold and non-inferiority the power warning gives the chance
/// that an unchanged retriever fails some check, from one resampling of
/// all its checks together: here the overall check and its only stratum
/// hold the same queries, so they fail together and the family's chance
/// is each one's, not 1 - (1 - p)^2.
#[test]
fn power_warning_gives_the_joint_chance_an_unchanged_run_fails() {
    let w = sim::world_of(&[30], &["hit_rate@3"]);
    let base: Vec<f64> = (0..30).map(|i| f64::from(u8::from(i % 2 == 0))).collect();
    // Churn: 6 wins and 6 losses, no net change.
    let cur: Vec<f64> = (0..30)
        .map(|i| match i {
            0..=11 if i % 2 == 0 => 0.0,
            0..=11 => 1.0,
            _ => base[i],
        })
        .collect();
    let s = settings(Decision::Threshold, 0.05, StrataSel::All);
    let o = sim::gate_values(&w, &s, std::slice::from_ref(&base), std::slice::from_ref(&cur));
    let fails: Vec<f64> = o.checks.iter().filter_map(|c| c.power.unchanged_fails).collect();
    assert_eq!(fails.len(), 2);
    assert_eq!(fails[0], fails[1]);
    // Resampled 30 deltas of +-1 (12 of them) and 0: the mean is below
    // -0.05 about P(N(0, 0.4/30) < -0.05) = 0.33.
    assert!((0.25..0.42).contains(&fails[0]), "{fails:?}");
    let want = format!("would fail about {:.0}% of the time", 100.0 * fails[0]);
    assert!(
        o.warnings.iter().any(|w| w.contains(&want)),
        "{want} in {:?}",
        o.warnings
    );
}

/// Two rules on one metric, overall at tolerance 0 and on stratum s1 at
/// 0.5: each check is tested against its own rule's margin. s1 drops
/// 0.055 (upper bound -0.0208, see above), far inside 0.5: it passes with a
/// margin p near 1; overall, the same drop against 0 fails.
#[test]
fn each_check_is_tested_against_its_own_rules_margin() {
    let w = sim::world_of(&[30, 30], &["hit_rate@3"]);
    let base = vec![vec![0.5; 60]];
    let cur = vec![deltas(0.0).iter().chain(&deltas(0.0)).map(|x| 0.5 + x).collect()];
    let rule = |tol: f64, strata| Rule {
        metric: "hit_rate@3".parse().unwrap(),
        tolerance: Tolerance::Absolute(tol),
        strata,
    };
    let s = GateSettings {
        rules: vec![
            rule(0.0, StrataSel::Overall),
            rule(0.5, StrataSel::List(vec!["s1".into()])),
        ],
        ..settings(Decision::ConfidentDrop, 0.0, StrataSel::Overall)
    };
    let o = sim::gate_values(&w, &s, &base, &cur);
    assert_eq!(by_scope(&o, "all").verdict, CheckVerdict::Fail);
    let s1 = by_scope(&o, "s1");
    assert_eq!(s1.verdict, CheckVerdict::Pass);
    assert!(s1.cmp.p_value > 0.999, "{:?}", s1.cmp);
}

/// Strata under 10 queries are pooled; when they add up to 10 they form
/// a resampled group of their own rather than joining the largest. Here
/// two strata of 5 each lose 1 on every query, the 40 others are
/// unchanged: resampled within {40} and {5 + 5}, every resample has the
/// observed mean, -10/50, so the interval is the point.
#[test]
fn small_strata_that_reach_ten_together_are_resampled_as_one_group() {
    let w = sim::world_of(&[40, 5, 5], &["hit_rate@3"]);
    let base = vec![vec![1.0; 50]];
    let cur = vec![(0..50).map(|i| if i < 40 { 1.0 } else { 0.0 }).collect()];
    let s = GateSettings {
        test: TestKind::Bootstrap,
        resamples: 2000,
        ..settings(Decision::SignificantDrop, 0.0, StrataSel::Overall)
    };
    let o = sim::gate_values(&w, &s, &base, &cur);
    let c = only(&o);
    close(c.cmp.delta, -0.2, "delta");
    assert_eq!((c.cmp.ci_low, c.cmp.ci_high), (-0.2, -0.2), "{c:?}");
}

/// Only strata below ten are pooled: one of exactly ten is resampled on its
/// own. Strata of 40, 10 and 3: the 3 join the 40 (their pool is under
/// ten), the 10 lose 1 on every query and form their own group, so every
/// resample has the observed mean, -10/53, and the interval is the point.
/// (Were the 10 pooled with the 3, the group {10 + 3} would mix losses and
/// ties and the interval would widen.)
#[test]
fn a_stratum_of_exactly_ten_is_resampled_on_its_own() {
    let w = sim::world_of(&[40, 10, 3], &["hit_rate@3"]);
    let base = vec![vec![1.0; 53]];
    let cur = vec![(0..53)
        .map(|i| if (40..50).contains(&i) { 0.0 } else { 1.0 })
        .collect()];
    let s = GateSettings {
        test: TestKind::Bootstrap,
        resamples: 2000,
        ..settings(Decision::SignificantDrop, 0.0, StrataSel::Overall)
    };
    let o = sim::gate_values(&w, &s, &base, &cur);
    let c = only(&o);
    let d = -10.0 / 53.0;
    close(c.cmp.delta, d, "delta");
    assert_eq!((c.cmp.ci_low, c.cmp.ci_high), (d, d), "{c:?}");
}

/// Which p-values carry Monte Carlo error (and so may be re-tested at ten
/// times B when borderline): every bootstrap; a randomization test only
/// beyond 16 queries (2^16 sign patterns are enumerated exactly); never a
/// t-test.
#[test]
fn monte_carlo_flag_follows_the_test_that_ran() {
    for (n, test, want) in [
        (16, TestKind::Randomization, false),
        (17, TestKind::Randomization, true),
        (12, TestKind::Randomization, false),
        (40, TestKind::Randomization, true),
        (60, TestKind::TTest, false),
        (60, TestKind::Bootstrap, true),
    ] {
        let w = sim::world_of(&[n], &["hit_rate@3"]);
        let base = vec![vec![1.0; n]];
        let cur = vec![(0..n).map(|i| if i % 3 == 0 { 0.0 } else { 0.5 }).collect()];
        let s = GateSettings {
            test,
            resamples: 500,
            ..settings(Decision::SignificantDrop, 0.0, StrataSel::Overall)
        };
        let o = sim::gate_values(&w, &s, &base, &cur);
        let c = only(&o);
        assert_eq!(c.test, test, "{n} {test:?}");
        assert_eq!(c.monte_carlo, want, "{n} {test:?}");
    }
}
