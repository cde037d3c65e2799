//! Calibration of the default gate, measured on simulated gates through the
//! library (model in `tests/it/sim/mod.rs`; the full-size measurement is
//! `cargo run --release --example calibrate`). Deterministic seeds, so the
//! rates are fixed numbers; each bound fails for a gate that is not
//! calibrated (the bootstrap on a 3-query stratum alone false-alarms about
//! a quarter of the time; a significance test against 0 fails a drop inside
//! the tolerance far more often than alpha on large gold sets).

use crate::sim;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rgate::config::{GateSettings, Rule, StrataSel, Tolerance};
use rgate::gate::{CheckVerdict, Verdict};

/// Default settings but B = 2,000 (to keep the suite quick), rules on both
/// simulated metrics, every stratum and overall.
fn settings(tol: f64) -> GateSettings {
    GateSettings {
        resamples: 2000,
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

fn family_fail_rate(w: &sim::World, s: &GateSettings, drop: f64, trials: usize, seed: u64) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let fails = (0..trials)
        .filter(|_| sim::gate_once(w, s, drop, &mut rng).verdict() == Verdict::Fail)
        .count();
    fails as f64 / trials as f64
}

#[test]
fn no_change_false_alarms_stay_near_alpha_with_a_3_query_stratum() {
    // Tolerance 0 (the no-rules default) is the hardest case: any drop
    // that looks significant fails. 8 gated checks.
    let w = sim::world(&[40, 40, 3], 11);
    let rate = family_fail_rate(&w, &settings(0.0), 0.0, 300, 1);
    assert!(rate <= 0.085, "false alarms {rate}");
}

#[test]
fn a_drop_inside_the_tolerance_rarely_fails() {
    // 400 queries in one stratum, tolerance 0.05, true drop 0.04 (0.8 x
    // tolerance): a test against 0 would fail this about a third of the time.
    let w = sim::world(&[400], 12);
    let rate = family_fail_rate(&w, &settings(0.05), 0.04, 150, 2);
    assert!(rate <= 0.085, "drop inside the tolerance failed {rate}");
}

#[test]
fn a_drop_equal_to_the_printed_mde_is_caught_about_80_percent() {
    let w = sim::world(&[40, 40, 3], 13);
    let s = settings(0.05);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let overall = |o: &rgate::gate::RetrieverOutcome| {
        o.checks
            .iter()
            .find(|c| c.cmp.metric.name() == "hit_rate@3" && c.cmp.stratum == "all")
            .cloned()
            .unwrap()
    };
    // The mde a PR report prints under no change, averaged over pilots.
    let pilots = 40;
    let mde: f64 = (0..pilots)
        .map(|_| overall(&sim::gate_once(&w, &s, 0.0, &mut rng)).mde().unwrap())
        .sum::<f64>()
        / pilots as f64;
    assert!(mde > 0.05 && mde < 0.4, "mde {mde}");
    let trials = 200;
    let caught = (0..trials)
        .filter(|_| overall(&sim::gate_once(&w, &s, mde, &mut rng)).verdict == CheckVerdict::Fail)
        .count() as f64
        / trials as f64;
    assert!((0.65..=0.95).contains(&caught), "caught {caught} at mde {mde}");
}
