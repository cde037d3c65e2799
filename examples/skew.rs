//! The skew diagnostic (`rgate::stats::skew`, applied per check by `rgate::compare::skew_of`) and the paired tests on
//! skewed deltas, measured by simulation (issue 26 item 7):
//!
//! 1. how often the diagnostic flags a check on scenarios without a few
//!    queries carrying the change (no change, symmetric noise, symmetric
//!    churn of binary metrics, a drop spread over every query), and how
//!    often it flags issue 26's skewed scenario (about 35% of queries lose
//!    a little, 3% gain a lot, expected delta exactly 0);
//! 2. how often each test false-alarms on that scenario (one-sided p for a
//!    drop below alpha = 0.05, H0 "no drop"; the expected delta is 0, so
//!    every rejection is a false alarm), and how many of those false
//!    alarms the diagnostic flags.
//!
//! ```sh
//! cargo run --release --example skew -- [TRIALS]
//! ```
//! TRIALS defaults to 1,000 for the flag rates and a fifth of it for the
//! tests (B = 10,000 resamples each, the gate's default). Rates come with
//! 95% Wilson intervals.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rgate::stats::skew::detect;
use rgate::stats::{self, BootstrapSettings, Strata, Weighting};

/// 95% Wilson score interval of `k` successes in `n` trials.
fn wilson(k: usize, n: usize) -> (f64, f64) {
    let (k, n) = (k as f64, n as f64);
    let z = 1.959_963_984_540_054;
    let p = k / n;
    let den = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / den;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / den;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

fn rate(k: usize, n: usize) -> String {
    let (lo, hi) = wilson(k, n);
    format!("{:.3} [{lo:.3}, {hi:.3}] ({k}/{n})", k as f64 / n as f64)
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u: f64 = rng.gen_range(f64::EPSILON..1.0);
    let v: f64 = rng.gen();
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// Issue 26's skewed scenario: each query loses `LOSS` with probability
/// 0.35, gains `0.35 * LOSS / 0.03` with probability 0.03 (so the
/// expected delta is exactly 0), else stays.
const LOSS: f64 = 0.06;

fn skewed(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    let gain = 0.35 * LOSS / 0.03;
    (0..n)
        .map(|_| {
            let u: f64 = rng.gen();
            if u < 0.35 {
                -LOSS
            } else if u < 0.38 {
                gain
            } else {
                0.0
            }
        })
        .collect()
}

type Scenario = (&'static str, usize, fn(&mut ChaCha8Rng, usize) -> Vec<f64>);

fn scenarios() -> Vec<Scenario> {
    vec![
        ("unchanged (every delta 0)", 100, |_, n| vec![0.0; n]),
        ("symmetric normal noise, sd 0.1", 100, |r, n| {
            (0..n).map(|_| 0.1 * normal(r)).collect()
        }),
        ("symmetric Laplace noise, sd 0.1", 100, |r, n| {
            (0..n)
                .map(|_| {
                    let u: f64 = r.gen_range(-0.5..0.5);
                    -0.1 / 2f64.sqrt() * u.signum() * (1.0 - 2.0 * u.abs()).max(f64::MIN_POSITIVE).ln()
                })
                .collect()
        }),
        ("binary churn, 5% up and 5% down", 100, |r, n| {
            (0..n)
                .map(|_| {
                    let u: f64 = r.gen();
                    if u < 0.05 {
                        1.0
                    } else if u < 0.10 {
                        -1.0
                    } else {
                        0.0
                    }
                })
                .collect()
        }),
        ("graded jitter on 30%, uniform +-0.2", 100, |r, n| {
            (0..n)
                .map(|_| {
                    if r.gen::<f64>() < 0.3 {
                        r.gen_range(-0.2..0.2)
                    } else {
                        0.0
                    }
                })
                .collect()
        }),
        ("a drop on every query, -0.05 + N(0, 0.1)", 100, |r, n| {
            (0..n).map(|_| -0.05 + 0.1 * normal(r)).collect()
        }),
        ("binary churn, 5% up and 5% down", 400, |r, n| {
            (0..n)
                .map(|_| {
                    let u: f64 = r.gen();
                    if u < 0.05 {
                        1.0
                    } else if u < 0.10 {
                        -1.0
                    } else {
                        0.0
                    }
                })
                .collect()
        }),
        ("skewed: 35% lose 0.06, 3% gain 0.7", 60, skewed),
        ("skewed: 35% lose 0.06, 3% gain 0.7", 100, skewed),
        ("skewed: 35% lose 0.06, 3% gain 0.7", 200, skewed),
    ]
}

fn main() {
    let trials: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    println!("Flag rate of the skew diagnostic ({trials} trials each):");
    for (k, (name, n, gen)) in scenarios().into_iter().enumerate() {
        let mut rng = ChaCha8Rng::seed_from_u64(1000 + k as u64);
        let flagged = (0..trials)
            .filter(|_| detect(&gen(&mut rng, n)).is_some())
            .count();
        println!("  {name:<42} n={n:<4} flagged {}", rate(flagged, trials));
    }

    let test_trials = (trials / 5).max(1);
    let alpha = 0.05;
    for n in [60, 100, 200] {
        println!("\nSkewed scenario, n = {n}, expected delta 0: false-alarm rate at one-sided alpha {alpha} ({test_trials} trials):");
        let mut rng = ChaCha8Rng::seed_from_u64(7 + n as u64);
        let names = ["t-test", "sign-flip", "shift bootstrap", "studentized boot."];
        let mut alarms = [0usize; 4];
        let mut alarms_flagged = [0usize; 4];
        let mut flagged = 0;
        for t in 0..test_trials {
            let d = skewed(&mut rng, n);
            let skew = detect(&d).is_some();
            flagged += usize::from(skew);
            let seed = 20261129 + t as u64;
            let p = [
                stats::t_test(&d, alpha).p_less,
                stats::randomization(&d, 10_000, seed, alpha).p_less,
                stats::bootstrap(
                    &d,
                    1,
                    &Strata::single(d.len()),
                    &BootstrapSettings {
                        resamples: 10_000,
                        seed,
                        weighting: Weighting::Micro,
                        alpha,
                    },
                )[0]
                .p_less,
                stats::bootstrap_t(
                    &d,
                    1,
                    &Strata::single(d.len()),
                    &BootstrapSettings {
                        resamples: 10_000,
                        seed,
                        weighting: Weighting::Micro,
                        alpha,
                    },
                )[0]
                .p_less(0.0),
            ];
            for (j, &p) in p.iter().enumerate() {
                if p < alpha {
                    alarms[j] += 1;
                    alarms_flagged[j] += usize::from(skew);
                }
            }
        }
        println!("  flagged by the diagnostic: {}", rate(flagged, test_trials));
        for j in 0..4 {
            println!(
                "  {:<16} false alarms {}; of those flagged {}",
                names[j],
                rate(alarms[j], test_trials),
                if alarms[j] > 0 {
                    rate(alarms_flagged[j], alarms[j])
                } else {
                    "-".into()
                }
            );
        }
    }
}
