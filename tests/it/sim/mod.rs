//! Simulated gates through the library, for the calibration test and
//! `examples/calibrate.rs`: a gold set of strata (sizes given), a baseline
//! and a candidate whose per-query values are drawn from a model with a
//! known true drop, gated with `rgate::gate::evaluate` at the given settings.
//!
//! The model: every query has a latent success rate p_q ~ U(0.3, 0.95),
//! shared by both runs (which is what pairs them, as a hard query is hard
//! for every retriever). `hit_rate@3` is a Bernoulli(p_q) draw, and `mrr@10`
//! is 1/r for a hit with r uniform on 1..=5 (0 for a miss). The candidate
//! draws afresh from p_q - drop, so the true drop of `hit_rate@3` in every
//! scope is exactly `drop` (p_q - drop stays in [0.1, 0.95] for drops up to
//! 0.2), and "no change" still changes individual queries.

#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use rgate::baseline::{Baseline, StoredQuery};
use rgate::config::GateSettings;
use rgate::diag::Warnings;
use rgate::eval::Scores;
use rgate::gate::{self, Current, RetrieverOutcome};
use rgate::gold::{GoldFormat, GoldQuery, GoldSet, Label};
use rgate::judge::Ranking;
use rgate::metrics::Metric;
use rgate::prepared::Prepared;

pub struct World {
    pub prep: Prepared,
    pub latent: Vec<f64>,
    pub metrics: Vec<Metric>,
}

pub fn metrics() -> Vec<Metric> {
    vec!["hit_rate@3".parse().unwrap(), "mrr@10".parse().unwrap()]
}

/// A gold set with strata `s0`, `s1`, ... of the given sizes; latent rates
/// drawn from `seed`.
pub fn world(sizes: &[usize], seed: u64) -> World {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut queries = Vec::new();
    let mut strata = Vec::new();
    for (s, &n) in sizes.iter().enumerate() {
        strata.push(format!("s{s}"));
        for i in 0..n {
            queries.push(GoldQuery {
                id: format!("q{s}-{i:04}"),
                text: None,
                stratum: s as u32,
                spans: Vec::new(),
                labels: vec![Label {
                    id: format!("d{s}-{i}"),
                    grade: 1,
                }]
                .into(),
            });
        }
    }
    let latent = (0..queries.len()).map(|_| rng.gen_range(0.3..0.95)).collect();
    let gold = GoldSet::from_parts("sim.yaml", GoldFormat::Yaml, queries, strata).unwrap();
    let prep = Prepared::new(gold, Warnings::default(), metrics(), 1);
    World {
        prep,
        latent,
        metrics: metrics(),
    }
}

/// `[hit_rate@3 values, mrr@10 values]` for one run with the given drop.
pub fn draw(w: &World, drop: f64, rng: &mut ChaCha8Rng) -> Vec<Vec<f64>> {
    let mut hit = Vec::with_capacity(w.latent.len());
    let mut mrr = Vec::with_capacity(w.latent.len());
    for &p in &w.latent {
        let h = rng.gen_bool((p - drop).clamp(0.0, 1.0));
        hit.push(if h { 1.0 } else { 0.0 });
        mrr.push(if h {
            1.0 / f64::from(rng.gen_range(1u32..=5))
        } else {
            0.0
        });
    }
    vec![hit, mrr]
}

/// A baseline holding `values` for the world's gold set.
pub fn baseline(w: &World, values: &[Vec<f64>]) -> Baseline {
    Baseline {
        retriever: "sim".into(),
        created_at: "2026-01-01T00:00:00Z".into(),
        rgate_version: "sim".into(),
        commit: None,
        note: None,
        gold_path: "sim.yaml".into(),
        gold_fingerprint: w.prep.fingerprint().to_string(),
        relevance_level: 1,
        metrics: w.metrics.clone(),
        depth: None,
        run_depth: None,
        span_coverage: None,
        aggregates: Vec::new(),
        queries: w
            .prep
            .gold
            .queries
            .iter()
            .enumerate()
            .map(|(i, q)| StoredQuery {
                id: q.id.clone(),
                stratum: w.prep.gold.stratum_name(i).to_string(),
                values: values.iter().map(|v| v[i]).collect(),
                ranking: Vec::new(),
                candidates: None,
                text_sha: None,
                spans: Vec::new(),
                candidate_spans: Vec::new(),
                model_values: None,
            })
            .collect(),
        model_fingerprint: None,
        labels: rgate::gold::LabelMode::People,
    }
}

/// One gate of a candidate with true drop `drop` against a fresh baseline.
pub fn gate_once(w: &World, settings: &GateSettings, drop: f64, rng: &mut ChaCha8Rng) -> RetrieverOutcome {
    let b = baseline(w, &draw(w, 0.0, rng));
    let scores = Scores {
        metrics: w.metrics.clone(),
        values: draw(w, drop, rng),
    };
    let rankings = vec![Ranking::default(); w.latent.len()];
    let cur = Current {
        name: "sim",
        run: "sim.jsonl".into(),
        rankings: &rankings,
        scores: &scores,
        candidates: None,
        ppi: None,
    };
    gate::evaluate(&w.prep, settings, &cur, Some(&b))
}

/// Gates given per-query values (`values[metric][query]`, gold order) of a
/// candidate against a baseline holding `base`; rankings are empty unless
/// given (`base_rankings` as stored ids, `cur_rankings` as judged).
pub fn gate_values(
    w: &World,
    settings: &GateSettings,
    base: &[Vec<f64>],
    cur: &[Vec<f64>],
) -> RetrieverOutcome {
    gate_full(w, settings, base, cur, None, None)
}

pub fn gate_full(
    w: &World,
    settings: &GateSettings,
    base: &[Vec<f64>],
    cur: &[Vec<f64>],
    base_rankings: Option<Vec<Vec<String>>>,
    cur_rankings: Option<Vec<Ranking>>,
) -> RetrieverOutcome {
    let mut b = baseline(w, base);
    if let Some(r) = base_rankings {
        for (q, ids) in b.queries.iter_mut().zip(r) {
            q.ranking = ids;
        }
    }
    let scores = Scores {
        metrics: w.metrics.clone(),
        values: cur.to_vec(),
    };
    let rankings = cur_rankings.unwrap_or_else(|| vec![Ranking::default(); w.prep.gold.len()]);
    let cur = Current {
        name: "sim",
        run: "sim.jsonl".into(),
        rankings: &rankings,
        scores: &scores,
        candidates: None,
        ppi: None,
    };
    gate::evaluate(&w.prep, settings, &cur, Some(&b))
}

/// A world whose metrics are the given ones (values supplied by the test).
pub fn world_of(sizes: &[usize], metrics: &[&str]) -> World {
    let mut w = world(sizes, 0);
    w.metrics = metrics.iter().map(|m| m.parse().unwrap()).collect();
    w.prep.metrics = w.metrics.clone();
    w
}
