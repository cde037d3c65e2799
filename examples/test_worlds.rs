//! Which paired test the gate should default to: each candidate's rate of
//! "fail" (one-sided p of H0 "drop <= tolerance" below alpha) and of
//! "improved" (one-sided p of "delta <= 0" below alpha) on simulated
//! per-query deltas, in worlds the gate's own tests were not tuned to.
//! One check at a time, no correction: the rates are the test's own.
//!
//! ```sh
//! cargo run --release --example test_worlds -- [TRIALS] [B]
//! ```
//!
//! Worlds (per query; `n` queries; every world's true mean delta is set by
//! construction, so a "null" row's fail rate is a false-alarm rate):
//! - `bin-rerun`: a 0/1 metric, each query's hit chance u ~ U(0.3, 1);
//!   baseline and current drawn alike, the current redrawn on a share c of
//!   the queries (sparse re-run noise; exchangeable).
//! - `bin-margin`: the same, then each hit lost with the chance that makes
//!   the expected drop exactly the tolerance (the margin's boundary).
//! - `graded-rerun` / `graded-margin`: a graded value (0 with chance 0.25,
//!   else the mean of two uniforms, a triangular bump), redrawn on a share
//!   c; the margin world scales a share pi of the current values by
//!   U(0, 1) so that the expected drop is the tolerance.
//! - `rr-heavy`: reciprocal rank with a geometric rank; re-run noise moves
//!   a query's rank by +-1..3 on a share c (heavy tails: 1 -> 1/4).
//! - `skew-null`: half the queries lose 0.02, a share 0.02 gain 0.5, mean
//!   0 (not exchangeable: a skewed null).
//! - `skew-margin`: the same shifted so the mean is minus the tolerance.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rgate::stats::{self, BootstrapSettings, Inference, Strata, Weighting};

#[derive(Clone, Copy)]
enum World {
    BinRerun { c: f64 },
    BinMargin { c: f64 },
    GradedRerun { c: f64 },
    GradedMargin { c: f64 },
    RrHeavy { c: f64 },
    SkewNull,
    SkewMargin,
}

fn graded(rng: &mut ChaCha8Rng) -> f64 {
    if rng.gen::<f64>() < 0.25 {
        0.0
    } else {
        0.5 * (rng.gen::<f64>() + rng.gen::<f64>())
    }
}

fn rr(rng: &mut ChaCha8Rng, p: f64) -> u32 {
    let mut r = 1;
    while rng.gen::<f64>() > p && r < 20 {
        r += 1;
    }
    r
}

/// Per-query deltas of one trial.
fn deltas(w: World, n: usize, tol: f64, rng: &mut ChaCha8Rng) -> Vec<f64> {
    match w {
        World::BinRerun { c } | World::BinMargin { c } => {
            let us: Vec<f64> = (0..n).map(|_| rng.gen_range(0.3..1.0)).collect();
            let mean_u: f64 = 0.65;
            let pi = if matches!(w, World::BinMargin { .. }) {
                tol / mean_u
            } else {
                0.0
            };
            us.iter()
                .map(|&u| {
                    let b = f64::from(u8::from(rng.gen::<f64>() < u));
                    let mut cur = if rng.gen::<f64>() < c {
                        f64::from(u8::from(rng.gen::<f64>() < u))
                    } else {
                        b
                    };
                    // Loss applied to the current draw: E[cur] = u, so
                    // E[delta] = -pi u, averaging -pi * 0.65 = -tol.
                    if cur == 1.0 && rng.gen::<f64>() < pi {
                        cur = 0.0;
                    }
                    cur - b
                })
                .collect()
        }
        World::GradedRerun { c } | World::GradedMargin { c } => {
            // E[graded] = 0.75 * 0.5 = 0.375; scaling by U(0,1) on a share
            // pi removes pi * 0.375 / 2 in expectation.
            let pi = if matches!(w, World::GradedMargin { .. }) {
                (tol / (0.375 * 0.5)).min(1.0)
            } else {
                0.0
            };
            (0..n)
                .map(|_| {
                    let b = graded(rng);
                    let mut cur = if rng.gen::<f64>() < c { graded(rng) } else { b };
                    if rng.gen::<f64>() < pi {
                        cur *= rng.gen::<f64>();
                    }
                    cur - b
                })
                .collect()
        }
        World::RrHeavy { c } => (0..n)
            .map(|_| {
                let p = rng.gen_range(0.2..0.9);
                let r = rr(rng, p);
                let cur = if rng.gen::<f64>() < c {
                    let step = rng.gen_range(1..=3);
                    if rng.gen::<bool>() {
                        r + step
                    } else {
                        r.saturating_sub(step).max(1)
                    }
                } else {
                    r
                };
                // Symmetric in law only where r > 3; the run-to-run noise
                // of a retriever is as likely to help as to hurt.
                let (b, cu) = if rng.gen::<bool>() { (r, cur) } else { (cur, r) };
                1.0 / f64::from(cu) - 1.0 / f64::from(b)
            })
            .collect(),
        World::SkewNull | World::SkewMargin => {
            let shift = if matches!(w, World::SkewMargin) { -tol } else { 0.0 };
            (0..n)
                .map(|_| {
                    let x: f64 = rng.gen();
                    let d = if x < 0.5 {
                        -0.02
                    } else if x < 0.52 {
                        0.5
                    } else {
                        0.0
                    };
                    // The shift arrives as a loss on a share of queries,
                    // as a drop does, not as a constant on every query.
                    if shift < 0.0 && rng.gen::<f64>() < -shift / 0.2 {
                        d - 0.2
                    } else {
                        d
                    }
                })
                .collect()
        }
    }
}

fn name(w: World) -> String {
    match w {
        World::BinRerun { c } => format!("bin-rerun c={c}"),
        World::BinMargin { c } => format!("bin-margin c={c}"),
        World::GradedRerun { c } => format!("graded-rerun c={c}"),
        World::GradedMargin { c } => format!("graded-margin c={c}"),
        World::RrHeavy { c } => format!("rr-heavy c={c}"),
        World::SkewNull => "skew-null".into(),
        World::SkewMargin => "skew-margin".into(),
    }
}

const TESTS: [&str; 5] = ["sign-flip", "t-env", "percentile", "boot-t", "old-default"];

fn infer(test: &str, d: &[f64], b: u32, seed: u64) -> Inference {
    match test {
        "sign-flip" => Inference::randomization(d, b, seed),
        "t-test" => Inference::t_test(d),
        "t-env" => Inference::t_test_monotone(d),
        "percentile" => {
            let s = BootstrapSettings {
                resamples: b,
                seed,
                weighting: Weighting::Micro,
                alpha: 0.05,
            };
            stats::bootstrap_percentile(d, 1, &Strata::single(d.len()), &s).remove(0)
        }
        "boot-t" | "old-default" => {
            let n = d.len();
            let moved = d.iter().filter(|&&x| x != 0.0).count();
            if test == "old-default" && n < 30 {
                return Inference::randomization(d, b, seed);
            }
            if test == "old-default" && moved > 0 && moved < 10 {
                return Inference::t_test(d);
            }
            let s = BootstrapSettings {
                resamples: b,
                seed,
                weighting: Weighting::Micro,
                alpha: 0.05,
            };
            stats::bootstrap_t(d, 1, &Strata::single(n), &s).remove(0)
        }
        _ => unreachable!(),
    }
}

fn wilson(k: usize, n: usize) -> (f64, f64) {
    let z = 1.959_964;
    let p = k as f64 / n as f64;
    let nf = n as f64;
    let d = 1.0 + z * z / nf;
    let c = (p + z * z / (2.0 * nf)) / d;
    let h = z * (p * (1.0 - p) / nf + z * z / (4.0 * nf * nf)).sqrt() / d;
    (c - h, c + h)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let trials: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let b: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(2000);
    let only: Option<String> = args.next();
    let alpha = 0.05;
    // (world, tolerance it is built at, margin it is tested at): a drop
    // row tests a world built with a true drop against margin 0 (power).
    let worlds: Vec<(World, f64, f64)> = vec![
        (World::BinMargin { c: 0.3 }, 0.045, 0.0),
        (World::GradedMargin { c: 0.3 }, 0.02, 0.0),
        (World::BinMargin { c: 0.05 }, 0.045, 0.0),
        (World::BinRerun { c: 0.05 }, 0.0, 0.0),
        (World::BinRerun { c: 0.3 }, 0.0, 0.0),
        (World::BinMargin { c: 0.05 }, 0.05, 0.05),
        (World::BinMargin { c: 0.3 }, 0.1, 0.1),
        (World::GradedRerun { c: 0.05 }, 0.0, 0.0),
        (World::GradedRerun { c: 0.5 }, 0.0, 0.0),
        (World::GradedMargin { c: 0.05 }, 0.03, 0.03),
        (World::GradedMargin { c: 0.5 }, 0.05, 0.05),
        (World::RrHeavy { c: 0.1 }, 0.0, 0.0),
        (World::SkewNull, 0.0, 0.0),
        (World::SkewMargin, 0.03, 0.03),
    ];
    println!("{trials} trials a row, B = {b}, alpha {alpha}; fail = p_less(-tol) < alpha, improved = p_greater(0) < alpha");
    for (w, tol, margin) in worlds {
        if let Some(o) = &only {
            if !name(w).contains(o.as_str()) {
                continue;
            }
        }
        for n in [10usize, 30, 90, 200] {
            let mut line = format!("{:<22} tol {:<5} margin {:<5} n {:>3}:", name(w), tol, margin, n);
            for test in TESTS {
                let mut rng = ChaCha8Rng::seed_from_u64(7 + n as u64);
                let (mut fail, mut improved) = (0, 0);
                for t in 0..trials {
                    let d = deltas(w, n, tol, &mut rng);
                    let inf = infer(test, &d, b, 1000 + t as u64);
                    fail += usize::from(inf.p_less(-margin) < alpha);
                    improved += usize::from(inf.p_greater(0.0) < alpha);
                }
                let (lo, hi) = wilson(fail, trials);
                line.push_str(&format!(
                    "  {test} {:.3} [{:.3},{:.3}] imp {:.3}",
                    fail as f64 / trials as f64,
                    lo,
                    hi,
                    improved as f64 / trials as f64
                ));
            }
            println!("{line}");
        }
    }
}
