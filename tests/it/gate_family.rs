//! One correction family per gate, bounds that are the rule, and the
//! inconclusive verdict (SPEC "Statistics, second edition"), through the
//! library with simulated retrievers (model in `sim`) and through the
//! binary for the config keys and the reports.

use crate::common::TestProject;
use crate::sim;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rgate::config::{
    Correction, CorrectionScope, Decision, GateSettings, OnInconclusive, Rule, StrataSel, TestKind, Tolerance,
};
use rgate::eval::Scores;
use rgate::gate::{self, CheckVerdict, Current, Input, RetrieverOutcome, Verdict};
use rgate::judge::Ranking;

fn settings(tol: f64) -> GateSettings {
    GateSettings {
        resamples: 999,
        rules: sim::metrics()
            .into_iter()
            .map(|metric| Rule {
                metric,
                tolerance: Tolerance::Absolute(tol),
                strata: StrataSel::All,
            })
            .collect(),
        ..GateSettings::default()
    }
}

/// Gates one fresh baseline/candidate pair per drop, all in one family.
fn gate_many(w: &sim::World, s: &GateSettings, drops: &[f64], rng: &mut ChaCha8Rng) -> Vec<RetrieverOutcome> {
    let baselines: Vec<_> = drops
        .iter()
        .map(|_| sim::baseline(w, &sim::draw(w, 0.0, rng)))
        .collect();
    let scores: Vec<Scores> = drops
        .iter()
        .map(|&d| Scores {
            metrics: w.metrics.clone(),
            values: sim::draw(w, d, rng),
        })
        .collect();
    let rankings = vec![Ranking::default(); w.latent.len()];
    let names: Vec<String> = (0..drops.len()).map(|i| format!("r{i}")).collect();
    let inputs: Vec<Input> = scores
        .iter()
        .zip(&baselines)
        .zip(&names)
        .map(|((sc, b), name)| Input {
            current: Current {
                name,
                run: "sim.jsonl".into(),
                rankings: &rankings,
                scores: sc,
                candidates: None,
                ppi: None,
            },
            baseline: Some(b),
        })
        .collect();
    gate::evaluate_all(&w.prep, s, &inputs)
}

/// For every mode, test and correction: a gated check fails exactly when
/// the bound it prints lies beyond what the mode compares it with, and the
/// corrected p rejects the same checks.
#[test]
fn fail_holds_exactly_when_the_printed_bound_is_beyond_the_tolerance() {
    // Strata under 30 queries (sign-flip, enumerated exactly) and an
    // overall scope of 57 (bootstrap; Monte Carlo sign flips).
    let w = sim::world(&[25, 20, 12], 5);
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let tol = 0.05;
    let mut fails = 0;
    let mut checked = 0;
    for decision in [
        Decision::ConfidentDrop,
        Decision::SignificantDrop,
        Decision::NonInferiority,
    ] {
        for test in [TestKind::Bootstrap, TestKind::TTest, TestKind::Randomization] {
            for correction in [Correction::Holm, Correction::Bonferroni, Correction::None] {
                let s = GateSettings {
                    decision,
                    test,
                    correction,
                    ..settings(tol)
                };
                for r in gate_many(&w, &s, &[0.0, 0.1, 0.2], &mut rng) {
                    for c in r.checks.iter().filter(|c| c.tolerance.is_some()) {
                        let failed = c.verdict == CheckVerdict::Fail;
                        let by_bound = match decision {
                            Decision::ConfidentDrop => c.upper_bound < -tol,
                            Decision::SignificantDrop => -c.cmp.delta > tol && c.upper_bound < 0.0,
                            _ => c.lower_bound.is_nan() || c.lower_bound <= -tol,
                        };
                        let by_p = match decision {
                            Decision::NonInferiority => c.cmp.p_adjusted >= s.alpha,
                            Decision::SignificantDrop => -c.cmp.delta > tol && c.cmp.p_adjusted < s.alpha,
                            _ => c.cmp.p_adjusted < s.alpha,
                        };
                        let what = format!(
                            "{decision:?} {test:?} {correction:?} {} {}: {:?} bounds [{}, {}] at {} p_adj {}",
                            c.cmp.metric,
                            c.cmp.stratum,
                            c.verdict,
                            c.lower_bound,
                            c.upper_bound,
                            c.bound_level,
                            c.cmp.p_adjusted
                        );
                        assert_eq!(failed, by_bound, "{what}");
                        assert_eq!(failed, by_p, "{what}");
                        fails += usize::from(failed);
                        checked += 1;
                    }
                }
            }
        }
    }
    // The drops of 2 and 4 tolerances make the comparison mean something.
    assert!(fails > 20 && fails < checked - 20, "{fails} of {checked} failed");
}

/// `correction_scope: gate` (the default) puts every retriever's gated
/// checks in one family; `retriever` keeps one per retriever. Three
/// retrievers with 2 metrics x 4 scopes each: m = 24 against 8, and the
/// first Holm step is held to 1 - 0.05/24.
#[test]
fn the_family_spans_every_retriever_by_default() {
    let w = sim::world(&[40, 35, 12], 5);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let s = settings(0.05);
    assert_eq!(s.correction_scope, CorrectionScope::Gate);
    let outs = gate_many(&w, &s, &[0.0, 0.0, 0.0], &mut rng);
    assert!(outs.iter().all(|r| r.family_size == 24));
    let strictest = outs
        .iter()
        .flat_map(|r| &r.checks)
        .map(|c| c.bound_level)
        .fold(0.0, f64::max);
    assert!((strictest - (1.0 - 0.05 / 24.0)).abs() < 1e-12, "{strictest}");
    let per = GateSettings {
        correction_scope: CorrectionScope::Retriever,
        ..settings(0.05)
    };
    let outs = gate_many(&w, &per, &[0.0, 0.0, 0.0], &mut rng);
    assert!(outs.iter().all(|r| r.family_size == 8));
}

/// Inconclusive by hand (t-test, one check, level 0.95): 4 of 40 queries
/// lose a hit, delta -0.1, sd of the deltas sqrt(3.6 / 39) = 0.30382, se
/// 0.048038, t(0.95, 39) = 1.684875: bounds -0.1 -/+ 0.080938, so
/// [-0.1809, -0.0191] holds both -0.05 (the tolerance) and 0: neither
/// within nor beyond. `on_inconclusive: fail` fails it.
#[test]
fn an_interval_holding_both_sides_of_the_tolerance_is_inconclusive() {
    let w = sim::world_of(&[40], &["hit_rate@3"]);
    let base = vec![vec![1.0; 40]];
    let cur = vec![(0..40)
        .map(|i| if i < 4 { 0.0 } else { 1.0 })
        .collect::<Vec<f64>>()];
    let mut s = GateSettings {
        test: TestKind::TTest,
        rules: vec![Rule {
            metric: "hit_rate@3".parse().unwrap(),
            tolerance: Tolerance::Absolute(0.05),
            strata: StrataSel::Overall,
        }],
        ..GateSettings::default()
    };
    let o = sim::gate_values(&w, &s, &base, &cur);
    let c = &o.checks[0];
    assert_eq!(c.verdict, CheckVerdict::Inconclusive);
    assert!((c.upper_bound - -0.019062).abs() < 1e-5, "{}", c.upper_bound);
    assert!((c.lower_bound - -0.180938).abs() < 1e-5, "{}", c.lower_bound);
    assert_eq!(o.verdict(), Verdict::Pass);
    assert_eq!(o.counts().inconclusive, 1);
    s.on_inconclusive = OnInconclusive::Fail;
    let o = sim::gate_values(&w, &s, &base, &cur);
    assert_eq!(o.checks[0].verdict, CheckVerdict::Inconclusive);
    assert_eq!(o.verdict(), Verdict::Fail);
    // An unchanged run is shown within the tolerance: pass, not inconclusive.
    let o = sim::gate_values(&w, &s, &base, &base);
    assert_eq!(o.checks[0].verdict, CheckVerdict::Pass);
}

/// The config keys reach the gate and every report states them: the
/// regressed demo run under `correction_scope: retriever` and
/// `on_inconclusive: fail`.
#[test]
fn config_keys_and_reports_state_the_family_and_inconclusive_checks() {
    // The repository's demo config, its paths made absolute (the gate
    // reads the baselines, never writes them).
    let demo = crate::common::repo("config/demo");
    let cfg = std::fs::read_to_string(crate::common::repo("config/rgate.yaml"))
        .unwrap()
        .replace(" demo/", &format!(" {}/", demo.display()))
        .replace(
            "  correction: holm",
            "  correction: holm\n  correction_scope: retriever\n  on_inconclusive: fail",
        )
        // The margin test: the regressed run's drops are significant but
        // not shown beyond their tolerances, so inconclusive.
        .replace("  decision: significant-drop", "  decision: confident-drop");
    let p = TestProject::new()
        .with_file("rgate.yaml", cfg)
        .with_config("rgate.yaml");
    let regressed = format!("hybrid={}/runs/hybrid-regressed.jsonl", demo.display());
    let (code, j) = p.json(&["gate", "--run", &regressed]);
    assert_eq!(code, 1);
    assert_eq!(j["settings"]["correction_scope"], "retriever");
    assert_eq!(j["settings"]["on_inconclusive"], "fail");
    let hybrid = j["retrievers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "hybrid")
        .unwrap();
    assert_eq!(hybrid["correction_m"], 3);
    let counts = &hybrid["counts"];
    assert!(counts["inconclusive"].as_u64().unwrap() >= 1, "{counts}");
    let text = p.run(&["gate", "--run", &regressed]);
    assert!(
        text.stdout
            .contains("within each retriever's gated checks, inconclusive checks fail"),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("inconclusive: delta"), "{}", text.stdout);
}
