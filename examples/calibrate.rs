//! Calibration of the gate's decisions, measured through the library with
//! simulated gold sets (model in `tests/it/sim/mod.rs`): how often an unchanged
//! retriever fails, how often a drop inside the tolerance fails, and how
//! often a true drop equal to the printed mde is caught.
//!
//! ```sh
//! cargo run --release --example calibrate -- [TRIALS] [DECISION]
//! ```
//! TRIALS defaults to 400; DECISION to the default (`confident-drop`).
//! Gold set: strata of 100, 100, 100 and 3 queries; rules `hit_rate@3` and
//! `mrr@10`, max_drop 0.05 on every stratum and overall (10 gated checks),
//! default alpha 0.05, B = 10,000, Holm.

#[path = "../tests/it/sim/mod.rs"]
mod sim;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rgate::config::{Decision, GateSettings, Rule, StrataSel, Tolerance};
use rgate::gate::{CheckVerdict, Verdict};

fn settings(tol: f64, decision: Decision) -> GateSettings {
    let mut s = GateSettings {
        decision,
        ..GateSettings::default()
    };
    s.rules = sim::metrics()
        .into_iter()
        .map(|metric| Rule {
            metric,
            tolerance: Tolerance::Absolute(tol),
            strata: StrataSel::All,
        })
        .collect();
    s
}

/// Family-wise failure rate over `trials` gates, and the mean printed mde
/// and failure rate of `hit_rate@3` overall.
fn rate(w: &sim::World, s: &GateSettings, drop: f64, trials: usize, seed: u64) -> (f64, f64, f64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut fails, mut check_fails, mut mde_sum) = (0, 0, 0.0);
    for _ in 0..trials {
        let o = sim::gate_once(w, s, drop, &mut rng);
        fails += usize::from(o.verdict() == Verdict::Fail);
        let c = o
            .checks
            .iter()
            .find(|c| c.cmp.metric.name() == "hit_rate@3" && c.cmp.stratum == "all")
            .expect("overall check");
        check_fails += usize::from(c.verdict == CheckVerdict::Fail);
        mde_sum += c.mde().expect("an mde");
    }
    let t = trials as f64;
    (fails as f64 / t, check_fails as f64 / t, mde_sum / t)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let trials: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(400);
    let decision = match args.next().as_deref() {
        Some("significant-drop") => Decision::SignificantDrop,
        Some("non-inferiority") => Decision::NonInferiority,
        Some("threshold") => Decision::Threshold,
        _ => Decision::ConfidentDrop,
    };
    let w = sim::world(&[100, 100, 100, 3], 7);
    let tol = 0.05;
    println!(
        "decision {}, {trials} trials per row, strata 100/100/100/3, 10 gated checks",
        decision.name()
    );
    let (f0, c0, mde) = rate(&w, &settings(tol, decision), 0.0, trials, 1);
    println!("no change, tolerance {tol}: family-wise fail rate {f0:.3} (hit_rate@3/all {c0:.3}); mean printed mde {mde:.4}");
    let (fz, _, _) = rate(&w, &settings(0.0, decision), 0.0, trials, 2);
    println!("no change, tolerance 0 (the no-rules default): family-wise fail rate {fz:.3}");
    let (fi, ci, _) = rate(&w, &settings(tol, decision), 0.8 * tol, trials, 3);
    println!(
        "true drop 0.8 x tolerance = {:.3}: family-wise fail rate {fi:.3} (hit_rate@3/all {ci:.3})",
        0.8 * tol
    );
    let (_, cp, mde_at) = rate(&w, &settings(tol, decision), mde, trials, 4);
    println!("true drop = printed mde {mde:.4}: hit_rate@3/all caught {cp:.3} (mde printed at that drop {mde_at:.4})");
}
