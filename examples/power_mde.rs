//! Power at the printed mde, measured through the library on the ranking
//! model of issue 26 (the one `scripts/calibrate_binary.py` drives through
//! the binary): a query has a latent quality u ~ U(0.15, 0.95) and 1-3
//! graded relevant chunks; a run places the first at a Geometric(u)
//! position (none past 20), the others 1-3 below in random order. "No
//! change" redraws a share `churn` of the queries; a regression moves the
//! top relevant chunk down k ranks with probability pi, pi solved by exact
//! enumeration so the expected drop is the printed mde.
//!
//! ```sh
//! cargo run --release --example power_mde -- [TRIALS] [CHURN] [CASE]
//! cargo run --release --example power_mde -- threshold [TRIALS]
//! ```
//! Per case: the mean mde printed over 20 unchanged pilots, then TRIALS
//! (default 200) gates with that true drop; the share caught with its 95%
//! Wilson interval, and the mean mde printed during the drop.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use rgate::baseline::{Baseline, StoredQuery};
use rgate::config::{GateSettings, Rule, StrataSel, Tolerance};
use rgate::diag::Warnings;
use rgate::eval::Scores;
use rgate::gate::{self, CheckVerdict, Current};
use rgate::gold::{GoldFormat, GoldQuery, GoldSet, Label};
use rgate::judge::Ranking;
use rgate::metrics::Metric;
use rgate::prepared::Prepared;

struct Q {
    u: f64,
    grades: Vec<u32>,
    stratum: usize,
}

type Placed = Vec<(usize, usize)>;

fn placed(state: &(Option<usize>, Vec<usize>, Vec<usize>)) -> Placed {
    let (o, pm, g) = state;
    let Some(o) = *o else { return Vec::new() };
    let mut out = vec![(o, pm[0])];
    let mut p = o;
    for (j, gap) in pm[1..].iter().zip(g) {
        p += gap;
        out.push((p, *j));
    }
    out
}

fn draw(q: &Q, rng: &mut ChaCha8Rng) -> Placed {
    let r = q.grades.len();
    let mut o = None;
    for i in 0..20 {
        if rng.gen::<f64>() < q.u {
            o = Some(i);
            break;
        }
    }
    let mut pm: Vec<usize> = (0..r).collect();
    for i in (1..r).rev() {
        let j = rng.gen_range(0..=i);
        pm.swap(i, j);
    }
    let g: Vec<usize> = (1..r).map(|_| rng.gen_range(1..=3)).collect();
    placed(&(o, pm, g))
}

fn states(q: &Q) -> Vec<(f64, Placed)> {
    let r = q.grades.len();
    let perms: Vec<Vec<usize>> = match r {
        1 => vec![vec![0]],
        2 => vec![vec![0, 1], vec![1, 0]],
        _ => vec![
            vec![0, 1, 2],
            vec![0, 2, 1],
            vec![1, 0, 2],
            vec![1, 2, 0],
            vec![2, 0, 1],
            vec![2, 1, 0],
        ],
    };
    let mut gaps: Vec<Vec<usize>> = vec![vec![]];
    for _ in 1..r {
        gaps = gaps
            .into_iter()
            .flat_map(|g| (1..=3).map(move |x| [g.clone(), vec![x]].concat()))
            .collect();
    }
    let sub = 1.0 / (perms.len() * gaps.len()) as f64;
    let mut out = Vec::new();
    for o in (0..20).map(Some).chain([None]) {
        let po = match o {
            Some(i) => (1.0 - q.u).powi(i as i32) * q.u,
            None => (1.0 - q.u).powi(20),
        };
        for pm in &perms {
            for g in &gaps {
                out.push((po * sub, placed(&(o, pm.clone(), g.clone()))));
            }
        }
    }
    out
}

fn value(metric: &str, q: &Q, pl: &Placed) -> f64 {
    match metric {
        "ndcg@10" => {
            let dcg: f64 = pl
                .iter()
                .filter(|(p, _)| *p < 10)
                .map(|&(p, j)| f64::from(q.grades[j]) / ((p + 2) as f64).log2())
                .sum();
            let mut ideal = q.grades.clone();
            ideal.sort_unstable_by(|a, b| b.cmp(a));
            let idcg: f64 = ideal
                .iter()
                .enumerate()
                .map(|(i, &g)| f64::from(g) / ((i + 2) as f64).log2())
                .sum();
            dcg / idcg
        }
        _ => f64::from(u8::from(pl.iter().any(|(p, _)| *p < 3))),
    }
}

fn move_down(pl: &Placed, k: usize) -> Placed {
    if pl.is_empty() {
        return pl.clone();
    }
    let (tp, tj) = pl[0];
    let np = (tp + k).min(29);
    let mut out: Placed = pl[1..]
        .iter()
        .map(|&(p, j)| if tp < p && p <= np { (p - 1, j) } else { (p, j) })
        .collect();
    out.push((np, tj));
    out.sort_unstable();
    out
}

struct World {
    qs: Vec<Q>,
    prep: Prepared,
}

fn world(sizes: &[usize], seed: u64) -> World {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut qs = Vec::new();
    let mut gq = Vec::new();
    for (s, &n) in sizes.iter().enumerate() {
        for i in 0..n {
            let x: f64 = rng.gen();
            let r = if x < 0.5 {
                1
            } else if x < 0.8 {
                2
            } else {
                3
            };
            let mut grades = vec![2];
            grades.extend((1..r).map(|_| rng.gen_range(1..=2)));
            qs.push(Q {
                u: rng.gen_range(0.15..0.95),
                grades,
                stratum: s,
            });
            gq.push(GoldQuery {
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
    let strata = (0..sizes.len()).map(|s| format!("s{s}")).collect();
    let gold = GoldSet::from_parts("sim.yaml", GoldFormat::Yaml, gq, strata).unwrap();
    let metrics: Vec<Metric> = vec!["ndcg@10".parse().unwrap(), "hit_rate@3".parse().unwrap()];
    let prep = Prepared::new(gold, Warnings::default(), metrics, 1);
    World { qs, prep }
}

fn in_scope(q: &Q, scope: Option<usize>) -> bool {
    scope.is_none_or(|s| q.stratum == s)
}

/// Expected drop of `metric` over the scope when every query's top chunk
/// moves down k ranks.
fn expected_drop(w: &World, metric: &str, scope: Option<usize>, k: usize) -> f64 {
    let qs: Vec<&Q> = w.qs.iter().filter(|q| in_scope(q, scope)).collect();
    let tot: f64 = qs
        .iter()
        .map(|q| {
            states(q)
                .iter()
                .map(|(p, pl)| p * (value(metric, q, pl) - value(metric, q, &move_down(pl, k))))
                .sum::<f64>()
        })
        .sum();
    tot / qs.len() as f64
}

fn solve_down(w: &World, metric: &str, scope: Option<usize>, drop: f64) -> (usize, f64, f64) {
    for k in [3, 5, 8, 12, 20] {
        let d = expected_drop(w, metric, scope, k);
        if d > 0.0 && drop / d <= 0.9 {
            return (k, drop / d, d);
        }
    }
    let d = expected_drop(w, metric, scope, 20);
    (20, (drop / d).min(1.0), d)
}

fn gate_pair(
    w: &World,
    s: &GateSettings,
    churn: f64,
    regress: Option<(Option<usize>, usize, f64)>,
    rng: &mut ChaCha8Rng,
) -> gate::RetrieverOutcome {
    let mut base = [Vec::new(), Vec::new()];
    let mut cur = vec![Vec::new(), Vec::new()];
    for q in &w.qs {
        let pb = draw(q, rng);
        let mut pc = if rng.gen::<f64>() < churn {
            draw(q, rng)
        } else {
            pb.clone()
        };
        if let Some((scope, k, pi)) = regress {
            if in_scope(q, scope) && rng.gen::<f64>() < pi {
                pc = move_down(&pc, k);
            }
        }
        for (m, name) in ["ndcg@10", "hit_rate@3"].iter().enumerate() {
            base[m].push(value(name, q, &pb));
            cur[m].push(value(name, q, &pc));
        }
    }
    let b = Baseline {
        retriever: "sim".into(),
        created_at: "2026-01-01T00:00:00Z".into(),
        rgate_version: "sim".into(),
        commit: None,
        note: None,
        gold_path: "sim.yaml".into(),
        gold_fingerprint: w.prep.fingerprint().to_string(),
        relevance_level: 1,
        metrics: w.prep.metrics.clone(),
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
                values: base.iter().map(|v| v[i]).collect(),
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
    };
    let scores = Scores {
        metrics: w.prep.metrics.clone(),
        values: cur,
    };
    let rankings = vec![Ranking::default(); w.qs.len()];
    let c = Current {
        name: "sim",
        run: "sim.jsonl".into(),
        rankings: &rankings,
        scores: &scores,
        candidates: None,
        ppi: None,
    };
    gate::evaluate(&w.prep, s, &c, Some(&b))
}

fn wilson(k: usize, n: usize) -> (f64, f64) {
    let z = 1.959_963_984_540_054;
    let (p, n) = (k as f64 / n as f64, n as f64);
    let d = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / d;
    let h = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / d;
    ((c - h).max(0.0), (c + h).min(1.0))
}

/// `threshold` mode, strata 60/25/8/4, both metrics on every scope (10
/// checks), churn 1: the mean chance the warning prints that an unchanged
/// retriever fails, against how often it does.
fn threshold_family(trials: usize) {
    let w = world(&[60, 25, 8, 4], 27);
    let s = GateSettings {
        resamples: 2000,
        decision: rgate::config::Decision::Threshold,
        rules: ["ndcg@10", "hit_rate@3"]
            .iter()
            .map(|m| Rule {
                metric: m.parse().unwrap(),
                tolerance: Tolerance::Absolute(0.05),
                strata: StrataSel::All,
            })
            .collect(),
        ..GateSettings::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let (mut fails, mut printed, mut product) = (0, 0.0, 0.0);
    for _ in 0..trials {
        let o = gate_pair(&w, &s, 1.0, None, &mut rng);
        fails += usize::from(o.verdict() == gate::Verdict::Fail);
        let p: f64 = o
            .warnings
            .iter()
            .find_map(|w| {
                let at = w.find("fail about ")? + "fail about ".len();
                w[at..].split('%').next()?.parse::<f64>().ok()
            })
            .unwrap_or(0.0);
        printed += p / 100.0;
        let each: Vec<f64> = o.checks.iter().filter_map(|c| c.power.unchanged_fails).collect();
        product += 1.0 - each.iter().map(|p| 1.0 - p).product::<f64>();
    }
    let (lo, hi) = wilson(fails, trials);
    let t = trials as f64;
    println!(
        "threshold, 10 checks, strata 60/25/8/4, tolerance 0.05, churn 1: unchanged fails {:.3} [{lo:.3}, {hi:.3}] ({fails}/{trials}); printed (joint) {:.3}; product of the per-check rates {:.3}",
        fails as f64 / t,
        printed / t,
        product / t
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let first = args.next();
    if first.as_deref() == Some("threshold") {
        threshold_family(args.next().and_then(|a| a.parse().ok()).unwrap_or(200));
        return;
    }
    let trials: usize = first.and_then(|a| a.parse().ok()).unwrap_or(200);
    let churn: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1.0);
    let only: Option<String> = args.next();
    let w = world(&[120, 60, 25], 26);
    let cases: [(&str, &str, Option<usize>); 6] = [
        ("ndcg@10 overall (205 q)", "ndcg@10", None),
        ("ndcg@10 stratum s1 (60 q)", "ndcg@10", Some(1)),
        ("ndcg@10 sign-flip stratum s2 (25 q)", "ndcg@10", Some(2)),
        ("hit_rate@3 overall (205 q)", "hit_rate@3", None),
        ("hit_rate@3 stratum s1 (60 q)", "hit_rate@3", Some(1)),
        ("hit_rate@3 sign-flip stratum s2 (25 q)", "hit_rate@3", Some(2)),
    ];
    println!("churn {churn}, {trials} trials per case, tolerance 0.02, one gated check, B = 2000");
    for (ci, (label, metric, scope)) in cases.iter().enumerate() {
        if only.as_deref().is_some_and(|o| !label.contains(o)) {
            continue;
        }
        let strata = match scope {
            None => StrataSel::Overall,
            Some(s) => StrataSel::List(vec![format!("s{s}")]),
        };
        let s = GateSettings {
            resamples: 2000,
            rules: vec![Rule {
                metric: metric.parse().unwrap(),
                tolerance: Tolerance::Absolute(0.02),
                strata,
            }],
            ..GateSettings::default()
        };
        let name = scope.map_or("all".to_string(), |s| format!("s{s}"));
        let check = |o: &gate::RetrieverOutcome| {
            o.checks
                .iter()
                .find(|c| c.cmp.metric.name() == *metric && c.cmp.stratum == name)
                .cloned()
                .unwrap()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(100 + ci as u64);
        let pilots = 20;
        let mdes: Vec<f64> = (0..pilots)
            .filter_map(|_| check(&gate_pair(&w, &s, churn, None, &mut rng)).mde())
            .collect();
        if mdes.is_empty() {
            println!("{label}: no mde printed");
            continue;
        }
        let mde = mdes.iter().sum::<f64>() / mdes.len() as f64;
        let (k, pi, d) = solve_down(&w, metric, *scope, mde);
        let true_drop = pi * d;
        let (mut caught, mut during, mut nd) = (0, 0.0, 0);
        let mut test = String::new();
        for _ in 0..trials {
            let c = check(&gate_pair(&w, &s, churn, Some((*scope, k, pi)), &mut rng));
            caught += usize::from(c.verdict == CheckVerdict::Fail);
            if let Some(m) = c.mde() {
                during += m;
                nd += 1;
            }
            test = c.test.name().to_string();
        }
        let (lo, hi) = wilson(caught, trials);
        println!(
            "{label} [{test}]: printed mde {mde:.4}; true drop {true_drop:.4} (k={k}, pi={pi:.3}): caught {:.3} [{lo:.3}, {hi:.3}] ({caught}/{trials}); mde during the drop {:.4}",
            caught as f64 / trials as f64,
            during / nd.max(1) as f64
        );
    }
}
