//! Paired comparison of two runs' per-query values: the rows `rgate
//! compare` prints, and the numbers every gate check starts from.
//!
//! Pairing is by position: both score vectors follow the gold set's query
//! order. The overall scope is resampled within strata (stratum sizes
//! fixed); a stratum's own scope is resampled as one group.

use crate::config::{GateSettings, TestKind, Weighting};
use crate::eval::{mean_of, Scores};
use crate::gold::GoldSet;
use crate::metrics::Metric;
use crate::stats::{self, Alternative, BootstrapSettings, Strata, TestOutcome};

/// One metric compared in one scope.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub metric: Metric,
    /// `all` for overall, else a stratum name.
    pub stratum: String,
    pub n: usize,
    pub baseline: f64,
    pub current: f64,
    pub delta: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub p_value: f64,
    pub p_adjusted: f64,
}

/// A `compare` row: the comparison and how many queries won, tied, lost.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRow {
    pub cmp: Comparison,
    /// One-sided (1 - alpha) bounds of delta.
    pub lower_bound: f64,
    pub upper_bound: f64,
    pub wins: usize,
    pub ties: usize,
    pub losses: usize,
}

/// A set of query positions, named.
#[derive(Debug, Clone, PartialEq)]
pub struct Scope {
    pub name: String,
    pub members: Vec<usize>,
}

/// `all` (every given query), then each stratum's share of them, members
/// in id order so means round as in `eval` (and trec_eval).
pub fn scopes(gold: &GoldSet, queries: &[usize]) -> Vec<Scope> {
    let mut sorted = queries.to_vec();
    sorted.sort_by(|&a, &b| gold.queries[a].id.as_bytes().cmp(gold.queries[b].id.as_bytes()));
    let queries = &sorted;
    let mut out = vec![Scope {
        name: "all".into(),
        members: queries.to_vec(),
    }];
    for (s, name) in gold.strata.iter().enumerate() {
        out.push(Scope {
            name: name.clone(),
            members: queries
                .iter()
                .copied()
                .filter(|&q| gold.queries[q].stratum as usize == s)
                .collect(),
        });
    }
    out
}

/// The mean a scope reports: the micro mean, except the overall scope under
/// macro weighting, which is the mean of stratum means like the statistic
/// tested.
pub fn scope_mean(values: &[f64], scopes: &[Scope], scope: usize, weighting: Weighting) -> f64 {
    if scope == 0 && weighting == Weighting::Macro {
        let per: Vec<f64> = scopes[1..]
            .iter()
            .filter(|s| !s.members.is_empty())
            .map(|s| mean_of(values, s.members.iter().copied()))
            .collect();
        stats::mean(&per)
    } else {
        mean_of(values, scopes[scope].members.iter().copied())
    }
}

fn to_stats_weighting(w: Weighting) -> stats::Weighting {
    match w {
        Weighting::Micro => stats::Weighting::Micro,
        Weighting::Macro => stats::Weighting::Macro,
    }
}

/// Runs the configured test on query-major deltas of several metrics. The
/// bootstrap draws each resample's indices once for all of them; the
/// t-test and randomization test take one metric at a time.
pub fn test_deltas(deltas: &[f64], n_metrics: usize, strata: &Strata, s: &GateSettings) -> Vec<TestOutcome> {
    match s.test {
        TestKind::Bootstrap => stats::bootstrap(
            deltas,
            n_metrics,
            strata,
            &BootstrapSettings {
                resamples: s.resamples,
                seed: s.seed,
                weighting: to_stats_weighting(s.weighting),
                alpha: s.alpha,
            },
        ),
        TestKind::TTest | TestKind::Randomization => (0..n_metrics)
            .map(|m| {
                let d: Vec<f64> = deltas.iter().skip(m).step_by(n_metrics.max(1)).copied().collect();
                if s.test == TestKind::TTest {
                    stats::t_test(&d, s.alpha)
                } else {
                    stats::randomization(&d, s.resamples, s.seed, s.alpha)
                }
            })
            .collect(),
    }
}

/// Tests every metric of `metrics` (indices into the score vectors) in one
/// scope: returns one outcome per metric, in order.
pub fn test_scope(
    gold: &GoldSet,
    scopes: &[Scope],
    scope: usize,
    metrics: &[usize],
    base: &dyn Fn(usize, usize) -> f64,
    cur: &dyn Fn(usize, usize) -> f64,
    settings: &GateSettings,
) -> Vec<TestOutcome> {
    let members = &scopes[scope].members;
    let mut deltas = Vec::with_capacity(members.len() * metrics.len());
    for &q in members {
        for &m in metrics {
            deltas.push(cur(m, q) - base(m, q));
        }
    }
    let strata = if scope == 0 {
        let labels: Vec<u32> = members.iter().map(|&q| gold.queries[q].stratum).collect();
        Strata::from_labels(&labels)
    } else {
        Strata::single(members.len())
    };
    test_deltas(&deltas, metrics.len(), &strata, settings)
}

/// `candidate` against `baseline` on every metric, overall and (with
/// `by_stratum`) per stratum; Holm across all the rows.
pub fn compare(
    gold: &GoldSet,
    baseline: &Scores,
    candidate: &Scores,
    settings: &GateSettings,
    alternative: Alternative,
    by_stratum: bool,
) -> Vec<CompareRow> {
    let all: Vec<usize> = (0..gold.len()).collect();
    let scopes = scopes(gold, &all);
    let metrics: Vec<usize> = (0..baseline.metrics.len()).collect();
    let mut rows = Vec::new();
    for si in 0..scopes.len() {
        if (si > 0 && !by_stratum) || scopes[si].members.is_empty() {
            continue;
        }
        let tests = test_scope(
            gold,
            &scopes,
            si,
            &metrics,
            &|m, q| baseline.values[m][q],
            &|m, q| candidate.values[m][q],
            settings,
        );
        for (m, t) in tests.into_iter().enumerate() {
            let (mut wins, mut ties, mut losses) = (0, 0, 0);
            for &q in &scopes[si].members {
                let d = candidate.values[m][q] - baseline.values[m][q];
                if d > 0.0 {
                    wins += 1;
                } else if d < 0.0 {
                    losses += 1;
                } else {
                    ties += 1;
                }
            }
            rows.push(CompareRow {
                cmp: Comparison {
                    metric: baseline.metrics[m],
                    stratum: scopes[si].name.clone(),
                    n: scopes[si].members.len(),
                    baseline: scope_mean(&baseline.values[m], &scopes, si, settings.weighting),
                    current: scope_mean(&candidate.values[m], &scopes, si, settings.weighting),
                    delta: t.mean_delta,
                    ci_low: t.ci_low,
                    ci_high: t.ci_high,
                    p_value: t.p(alternative),
                    p_adjusted: f64::NAN,
                },
                lower_bound: t.lower_bound,
                upper_bound: t.upper_bound,
                wins,
                ties,
                losses,
            });
        }
    }
    let adjusted = stats::holm(&rows.iter().map(|r| r.cmp.p_value).collect::<Vec<_>>());
    for (r, a) in rows.iter_mut().zip(adjusted) {
        r.cmp.p_adjusted = a;
    }
    rows
}
