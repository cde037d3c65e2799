//! Timing of the statistics kernels at gold-set scale, without a benchmark
//! framework: `cargo run --release --example bench_stats [threads]`.
//!
//! The headline case is the SPEC's budget: a paired bootstrap of 7,000 queries
//! x 6 metrics x 10,000 resamples, which must take well under a second on two
//! cores.

use std::hint::black_box;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rgate::stats::{bootstrap, holm, randomization, t_test, BootstrapSettings, Strata, Weighting};

/// Best of `reps` runs: the least disturbed by other processes.
fn best<T>(reps: usize, mut f: impl FnMut() -> T) -> Duration {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let threads: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");

    let (n, m) = (7_000usize, 6usize);
    let mut gen = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    // Metric-like deltas: mostly ties, some binary flips, some graded changes.
    let deltas: Vec<f64> = (0..n * m)
        .map(|_| match gen.gen_range(0u32..10) {
            0..=5 => 0.0,
            6 => 1.0,
            7 => -1.0,
            _ => gen.gen::<f64>() - gen.gen::<f64>(),
        })
        .collect();
    let labels: Vec<u32> = (0..n).map(|_| gen.gen_range(0u32..8)).collect();
    let settings = BootstrapSettings {
        resamples: 10_000,
        seed: 20261129,
        weighting: Weighting::Micro,
        alpha: 0.05,
    };

    println!("threads: {threads}");
    pool.install(|| {
        let single = Strata::single(n);
        let t = best(5, || bootstrap(&deltas, m, &single, &settings));
        println!("bootstrap {n} queries x {m} metrics x 10000 resamples, unstratified: {t:.2?}");
        let strata = Strata::from_labels(&labels);
        let t = best(5, || bootstrap(&deltas, m, &strata, &settings));
        println!("bootstrap {n} x {m} x 10000, 8 strata, micro: {t:.2?}");
        let macro_ = BootstrapSettings {
            weighting: Weighting::Macro,
            ..settings
        };
        let t = best(5, || bootstrap(&deltas, m, &strata, &macro_));
        println!("bootstrap {n} x {m} x 10000, 8 strata, macro: {t:.2?}");

        let col: Vec<f64> = deltas.chunks_exact(m).map(|r| r[0]).collect();
        let t = best(5, || t_test(&col, 0.05));
        println!("t-test {n} queries: {t:.2?}");
        let t = best(3, || randomization(&col, 10_000, 1, 0.05));
        println!("randomization {n} queries, Monte Carlo 10000: {t:.2?}");
        let forty: Vec<f64> = col.iter().copied().filter(|&x| x != 0.0).take(40).collect();
        let t = best(3, || randomization(&forty, 10_000, 1, 0.05));
        println!("randomization exact, 40 non-zero deltas: {t:.2?}");
        let p: Vec<f64> = (0..1000).map(|i| f64::from(i) / 1000.0).collect();
        let t = best(5, || holm(&p));
        println!("holm 1000 p-values: {t:.2?}");
    });
}
