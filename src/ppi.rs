//! Prediction-powered estimates of scored runs (SPEC "Gating on model
//! labels"): every query's metric computed twice by the same code, with the
//! model's grades on every model-graded query and with people's on the
//! verified ones ([`crate::prepared::PpiSide`]), then PPI++ per stratum
//! ([`crate::stats::ppi`]) and the strata combined by their weights.
//!
//! The same function estimates a mean (per-query values) and a paired delta
//! (per-query differences, current minus baseline): PPI is linear in the
//! values at a fixed lambda, so estimating both sides of a delta at the
//! delta's own lambdas ([`estimate_at`]) makes current minus baseline equal
//! the delta's estimate exactly, and a report never shows a delta its two
//! means contradict.
//!
//! A stratum's queries that have people's labels and no model grades are a
//! part of their own, estimated from their values alone (lambda 0), and
//! weighted by their share of the stratum: they are graded already, and the
//! model has nothing to add there.

use crate::config::Weighting;
use crate::eval::{Scores, Summary};
use crate::gold::GoldSet;
use crate::metrics::Agg;
use crate::prepared::PpiSide;
use crate::stats::ppi::{self, PpiCombined, PpiError, PpiEstimate, PpiInput};

/// One scope's estimate, and the lambda each of its parts used (in the
/// order [`estimate`] forms them), so other values of the same queries can
/// be estimated at the same lambdas.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopeEstimate {
    pub combined: PpiCombined,
    pub lambdas: Vec<f64>,
}

/// The PPI estimate over `members` (primary positions): `people[q]` is the
/// primary scoring's value of query q (people's labels where verified),
/// `model[j]` the model side's value of its query j. Strata weigh by their
/// share of `members` (micro) or equally (macro); within a stratum, its
/// model-graded part and its people-only part by their sizes.
pub fn estimate(
    side: &PpiSide,
    gold: &GoldSet,
    people: &[f64],
    model: &[f64],
    members: &[usize],
    weighting: Weighting,
) -> Result<ScopeEstimate, PpiError> {
    run(side, gold, people, model, members, weighting, None)
}

/// [`estimate`] with each part's lambda given (from another estimate over
/// the same members).
pub fn estimate_at(
    side: &PpiSide,
    gold: &GoldSet,
    people: &[f64],
    model: &[f64],
    members: &[usize],
    weighting: Weighting,
    lambdas: &[f64],
) -> Result<ScopeEstimate, PpiError> {
    run(side, gold, people, model, members, weighting, Some(lambdas))
}

fn run(
    side: &PpiSide,
    gold: &GoldSet,
    people: &[f64],
    model: &[f64],
    members: &[usize],
    weighting: Weighting,
    lambdas: Option<&[f64]>,
) -> Result<ScopeEstimate, PpiError> {
    let strata = side.split(gold, members);
    let non_empty = strata.iter().filter(|s| !s.is_empty()).count();
    let total = members.len();
    let mut parts: Vec<(f64, PpiEstimate)> = Vec::new();
    let mut used: Vec<f64> = Vec::new();
    for s in strata.iter().filter(|s| !s.is_empty()) {
        let w = match weighting {
            Weighting::Micro => s.len() as f64 / total as f64,
            Weighting::Macro => 1.0 / non_empty as f64,
        };
        if !s.model.is_empty() {
            let of = |q: &usize| side.model_of[*q].map_or(f64::NAN, |j| model[j]);
            let model_all: Vec<f64> = s.model.iter().map(of).collect();
            let model_verified: Vec<f64> = s.verified.iter().map(of).collect();
            let people_verified: Vec<f64> = s.verified.iter().map(|&q| people[q]).collect();
            let input = PpiInput {
                model_all: &model_all,
                model_verified: &model_verified,
                people_verified: &people_verified,
            };
            let e = match lambdas {
                Some(l) => {
                    ppi::try_ppi_mean_with_lambda(&input, *l.get(used.len()).ok_or(PpiError::Weights)?)?
                }
                None => ppi::try_ppi_mean(&input)?,
            };
            used.push(e.lambda);
            parts.push((w * s.model.len() as f64 / s.len() as f64, e));
        }
        if !s.people.is_empty() {
            let y: Vec<f64> = s.people.iter().map(|&q| people[q]).collect();
            let input = PpiInput {
                model_all: &y,
                model_verified: &y,
                people_verified: &y,
            };
            // Graded by people already: the model has no part in it.
            let mut e = ppi::try_ppi_mean_with_lambda(&input, 0.0)?;
            used.push(0.0);
            // No model grade among them: counted as people-labeled only.
            e.n_model = 0;
            parts.push((w * s.people.len() as f64 / s.len() as f64, e));
        }
    }
    let combined = ppi::try_combine(&parts)?;
    Ok(ScopeEstimate {
        combined,
        lambdas: used,
    })
}

/// Per-query pseudo-deltas whose mean over `members` is the PPI estimate
/// at `lambdas` (from [`estimate`] on the same values): micro, and under
/// macro weighting the mean of the strata's means, as the gate's tests
/// form them. For query q of stratum h (|h| queries, N of them model-graded,
/// n verified):
/// - model-graded: `lambda dm_q + (N / n) [q verified] (dp_q - lambda dm_q)`,
///   or `(N / n) [q verified] dp_q` in a stratum people-only for want of
///   verified queries;
/// - graded by people only: `dp_q`.
///
/// The PPI estimate is linear in the per-query values at fixed lambdas, so
/// it is exactly a mean of such terms (an inverse-probability weighting of
/// the verified sample's corrections), and a per-query test (sign-flip, t,
/// bootstrap) can run on them. Flipping a query's sign flips its term, so
/// under the sign-flip test's null (each query's pair of changes as likely
/// negated) the test stays exact, where the normal interval on a few
/// verified queries that moved is not (see the module docs of
/// [`crate::stats::ppi`]).
pub fn pseudo_deltas(
    side: &PpiSide,
    gold: &GoldSet,
    people: &[f64],
    model: &[f64],
    members: &[usize],
    lambdas: &[f64],
) -> Vec<f64> {
    let mut out = vec![0.0; gold.len()];
    let mut k = 0;
    for s in side.split(gold, members).iter().filter(|s| !s.is_empty()) {
        if !s.model.is_empty() {
            let lambda = lambdas.get(k).copied().unwrap_or(0.0);
            k += 1;
            let (big_n, n) = (s.model.len() as f64, s.verified.len() as f64);
            let people_only = s.verified.len() < ppi::MIN_VERIFIED;
            for &q in &s.model {
                let dm = side.model_of[q].map_or(0.0, |j| model[j]);
                out[q] = if people_only { 0.0 } else { lambda * dm };
            }
            for &q in &s.verified {
                let dm = side.model_of[q].map_or(0.0, |j| model[j]);
                let r = if people_only {
                    people[q]
                } else {
                    people[q] - lambda * dm
                };
                out[q] += big_n / n * r;
            }
        }
        if !s.people.is_empty() {
            k += 1;
            for &q in &s.people {
                out[q] = people[q];
            }
        }
    }
    out
}

/// Eval's estimates: per metric, for `all`, each stratum (gold order) and
/// the macro mean; `None` where there is none (a metric whose `all` line is
/// not a mean of per-query values: a count's sum, a geometric mean).
#[derive(Debug, Clone, PartialEq)]
pub struct PpiSummary {
    pub all: Vec<Option<PpiCombined>>,
    pub strata: Vec<Vec<Option<PpiCombined>>>,
    pub macro_mean: Vec<Option<PpiCombined>>,
}

impl PpiSummary {
    /// `primary` scored on the primary gold set, `model` on the model side.
    pub fn compute(side: &PpiSide, gold: &GoldSet, primary: &Scores, model: &Scores) -> PpiSummary {
        let all: Vec<usize> = (0..gold.len()).collect();
        let mut by_stratum: Vec<Vec<usize>> = vec![Vec::new(); gold.strata.len()];
        for (i, q) in gold.queries.iter().enumerate() {
            by_stratum[q.stratum as usize].push(i);
        }
        let est = |m: usize, members: &[usize], w: Weighting| -> Option<PpiCombined> {
            if members.is_empty() || primary.metrics[m].family().agg != Agg::Mean {
                return None;
            }
            estimate(side, gold, &primary.values[m], &model.values[m], members, w)
                .ok()
                .map(|e| PpiCombined {
                    range: primary.metrics[m].family().range(),
                    ..e.combined
                })
        };
        let metrics = 0..primary.metrics.len();
        PpiSummary {
            all: metrics.clone().map(|m| est(m, &all, Weighting::Micro)).collect(),
            strata: by_stratum
                .iter()
                .map(|members| {
                    metrics
                        .clone()
                        .map(|m| est(m, members, Weighting::Micro))
                        .collect()
                })
                .collect(),
            macro_mean: metrics.map(|m| est(m, &all, Weighting::Macro)).collect(),
        }
    }

    /// The means the summary's rows show, replaced by these estimates where
    /// there is one.
    pub fn apply(&self, summary: &mut Summary) {
        let put = |row: &mut Vec<f64>, est: &[Option<PpiCombined>]| {
            for (v, e) in row.iter_mut().zip(est) {
                if let Some(e) = e {
                    *v = e.mean;
                }
            }
        };
        put(&mut summary.all.means, &self.all);
        for (row, est) in summary.strata.iter_mut().zip(&self.strata) {
            put(&mut row.means, est);
        }
        put(&mut summary.macro_mean.means, &self.macro_mean);
    }
}

/// Per part of [`estimate`] (same order), the lambda for the test that
/// runs on the terms of [`pseudo_deltas`], in place of PPI++'s lambda for
/// the estimator: the one that makes the test's reference spread smallest
/// ([`ppi::spread_lambda`]; `centered` for a t-test or a bootstrap, which
/// read the terms' spread around their mean, not for the sign-flip test,
/// which reads their sum of squares). In a stratum of N model-graded
/// queries, n verified, the terms are `lambda a_q + b_q` with
/// `a_q = dm_q`, `b_q = 0` on an unverified query and
/// `a_q = (1 - N/n) dm_q`, `b_q = (N/n) dp_q` on a verified one. Each
/// stratum's terms depend on its own lambda only, so each is chosen apart
/// (a stratum weight scales all its terms alike and moves no minimum;
/// centered, the spread is taken within the stratum, as the stratified
/// bootstrap resamples it). A stratum people-only for want of verified
/// queries, and a part graded by people only, get 0.
pub fn test_lambdas(
    side: &PpiSide,
    gold: &GoldSet,
    people: &[f64],
    model: &[f64],
    members: &[usize],
    centered: bool,
) -> Vec<f64> {
    let mut out = Vec::new();
    for s in side.split(gold, members).iter().filter(|s| !s.is_empty()) {
        if !s.model.is_empty() {
            let lambda = if s.verified.len() < ppi::MIN_VERIFIED {
                0.0
            } else {
                let scale = s.model.len() as f64 / s.verified.len() as f64;
                let dm = |q: usize| side.model_of[q].map_or(0.0, |j| model[j]);
                let verified: std::collections::HashSet<usize> = s.verified.iter().copied().collect();
                let (mut a, mut b) = (
                    Vec::with_capacity(s.model.len()),
                    Vec::with_capacity(s.model.len()),
                );
                for &q in &s.model {
                    if verified.contains(&q) {
                        a.push((1.0 - scale) * dm(q));
                        b.push(scale * people[q]);
                    } else {
                        a.push(dm(q));
                        b.push(0.0);
                    }
                }
                ppi::spread_lambda(&a, &b, centered)
            };
            out.push(lambda);
        }
        if !s.people.is_empty() {
            out.push(0.0);
        }
    }
    out
}

/// The effective number of verified queries of the test on `terms`
/// (at the lambdas chosen) against the same test on `people_terms` (at
/// lambda 0: the people-only test on the same verified queries, strata
/// weighted alike): `n_verified x spread(people) / spread(terms)`, the
/// spread being what the test reads (sum of squared terms for the
/// sign-flip test, centered within strata for the t-test and bootstrap),
/// each term weighted as the scope's mean weighs it. People-only needs
/// about that many verified queries for the reference spread the PPI test
/// has (the spread of a mean falls as 1/n). n_verified when the two
/// spreads are equal (both 0 included), +inf when only the PPI one is 0.
#[allow(clippy::too_many_arguments)]
fn test_effective_n(
    gold: &GoldSet,
    members: &[usize],
    weighting: Weighting,
    terms: &[f64],
    people_terms: &[f64],
    centered: bool,
    n_verified: usize,
) -> f64 {
    let mut size = vec![0usize; gold.strata.len()];
    for &q in members {
        size[gold.queries[q].stratum as usize] += 1;
    }
    let strata = size.iter().filter(|&&n| n > 0).count().max(1) as f64;
    let weight = |q: usize| match weighting {
        Weighting::Micro => 1.0,
        Weighting::Macro => 1.0 / (strata * size[gold.queries[q].stratum as usize] as f64),
    };
    let spread = |t: &[f64]| -> f64 {
        let mut sum = vec![0.0; gold.strata.len()];
        let mut sq = vec![0.0; gold.strata.len()];
        for &q in members {
            let h = gold.queries[q].stratum as usize;
            let x = weight(q) * t[q];
            sum[h] += x;
            sq[h] += x * x;
        }
        (0..size.len())
            .filter(|&h| size[h] > 0)
            .map(|h| {
                if centered {
                    (sq[h] - sum[h] * sum[h] / size[h] as f64).max(0.0)
                } else {
                    sq[h]
                }
            })
            .sum()
    };
    let (with, without) = (spread(terms), spread(people_terms));
    let n = n_verified as f64;
    if with == without {
        n
    } else if with == 0.0 {
        f64::INFINITY
    } else {
        without / with * n
    }
}

/// A paired delta tested under `labels: ppi`, as the gate and compare test
/// it: its PPI estimate at the lambdas chosen for the test
/// ([`test_lambdas`]), the configured test run on the per-query terms
/// whose mean is that estimate ([`pseudo_deltas`]), and the two means at
/// the same lambdas (so current minus baseline is the delta).
pub struct TestedDelta {
    /// The estimate at the test's lambdas; `test_effective_n` is the
    /// test's effective number of verified queries.
    pub estimate: PpiCombined,
    pub inference: crate::stats::Inference,
    pub test: crate::config::TestKind,
    pub monte_carlo: bool,
    pub baseline: f64,
    pub current: f64,
    /// No query of the scope lost anything on either label set.
    pub no_loss: bool,
}

/// Tests scope `scope`'s delta of `cur` against `base`, each given as
/// (primary values by primary query, model values by model-side query), in
/// the units tested (a geometric mean's as logs). None when the scope
/// cannot be estimated (see [`estimate`]).
///
/// Lambda is chosen for the test that runs, not for the estimator's
/// variance (PPI++): with lambda 0 among the candidates, the test's
/// reference spread is never wider than the people-only test's on the same
/// verified queries (SPEC "Gating on model labels"). The mean, standard
/// error and normal interval reported beside the test are PPI's at those
/// lambdas; eval's means keep PPI++'s lambda.
#[allow(clippy::too_many_arguments)]
pub fn test_delta(
    side: &PpiSide,
    gold: &GoldSet,
    scopes: &[crate::compare::Scope],
    scope: usize,
    base: (&[f64], &[f64]),
    cur: (&[f64], &[f64]),
    settings: &crate::config::GateSettings,
    monotone: bool,
) -> Option<TestedDelta> {
    let members = &scopes[scope].members;
    let diff = |a: &[f64], b: &[f64]| -> Vec<f64> { a.iter().zip(b).map(|(x, y)| x - y).collect() };
    let (d, dm) = (diff(cur.0, base.0), diff(cur.1, base.1));
    let centered =
        crate::compare::test_for(settings.test, members.len()) != crate::config::TestKind::Randomization;
    let lambdas = test_lambdas(side, gold, &d, &dm, members, centered);
    let mut est = estimate_at(side, gold, &d, &dm, members, settings.weighting, &lambdas).ok()?;
    let at = |(p, m): (&[f64], &[f64])| {
        estimate_at(side, gold, p, m, members, settings.weighting, &est.lambdas)
            .map_or(f64::NAN, |e| e.combined.mean)
    };
    let terms = pseudo_deltas(side, gold, &d, &dm, members, &est.lambdas);
    let zeros = vec![0.0; est.lambdas.len()];
    let people_terms = pseudo_deltas(side, gold, &d, &dm, members, &zeros);
    est.combined.test_effective_n = Some(test_effective_n(
        gold,
        members,
        settings.weighting,
        &terms,
        &people_terms,
        centered,
        est.combined.n_verified,
    ));
    let t = crate::compare::test_scope(
        gold,
        scopes,
        scope,
        &[0],
        &[false],
        &|_, _| 0.0,
        &|_, q| terms[q],
        settings,
        monotone,
    );
    Some(TestedDelta {
        estimate: est.combined,
        inference: t.inferences[0].clone(),
        test: t.tests[0],
        monte_carlo: t.monte_carlo[0],
        baseline: at(base),
        current: at(cur),
        no_loss: members
            .iter()
            .all(|&q| d[q] >= 0.0 && side.model_of[q].is_none_or(|j| dm[j] >= 0.0)),
    })
}

/// A delta's estimate with the range its intervals are clipped to: what
/// the metric's range leaves from the baseline's estimate (held within
/// that range), as [`crate::compare::within_range`] clips the test's own
/// interval. A geometric mean's delta is tested in logs: left unbounded.
pub fn with_delta_range(e: PpiCombined, metric: &crate::metrics::Metric, baseline: f64) -> PpiCombined {
    if crate::compare::geo::is_geometric(metric) || !baseline.is_finite() {
        return e;
    }
    let (lo, hi) = metric.family().range();
    let b = baseline.max(lo).min(hi);
    PpiCombined {
        range: (lo - b, hi - b),
        ..e
    }
}

/// Under `labels: ppi`, `compare`'s rows of one variant against the
/// baseline run, each tested instead as [`test_delta`] tests it, at the
/// row's alternative: the two-sided (1 - alpha) interval and one-sided
/// bounds from that test, the two means at the delta's lambdas. A
/// geometric mean is estimated on the log scale it is tested on and told
/// back in its units. A row that cannot be estimated says nothing (p = 1,
/// no interval). The family's correction runs after, on these p-values.
pub fn compare_rows(
    side: &PpiSide,
    gold: &GoldSet,
    base: (&Scores, &Scores),
    cand: (&Scores, &Scores),
    rows: &mut [crate::compare::CompareRow],
    settings: &crate::config::GateSettings,
    alternative: crate::stats::Alternative,
) {
    use crate::compare::{geo, scopes, within_range};
    let all: Vec<usize> = (0..gold.len()).collect();
    let sc = scopes(gold, &all);
    let logged = |s: &Scores| geo::logged(s).unwrap_or_else(|| s.clone());
    let (bp, bm, cp, cm) = (logged(base.0), logged(base.1), logged(cand.0), logged(cand.1));
    for r in rows.iter_mut() {
        let (Some(m), Some(si)) = (
            bp.metrics.iter().position(|x| *x == r.cmp.metric),
            sc.iter().position(|s| s.name == r.cmp.stratum),
        ) else {
            continue;
        };
        let tested = test_delta(
            side,
            gold,
            &sc,
            si,
            (&bp.values[m], &bm.values[m]),
            (&cp.values[m], &cm.values[m]),
            settings,
            false,
        );
        let inf = match &tested {
            Some(t) => {
                r.test = t.test;
                t.inference.clone()
            }
            None => crate::stats::Inference::undefined(f64::NAN),
        };
        let t = inf.outcome(settings.alpha);
        let (b_mean, c_mean) = tested
            .as_ref()
            .map_or((f64::NAN, f64::NAN), |t| (t.baseline, t.current));
        r.cmp.baseline = b_mean;
        r.cmp.current = c_mean;
        r.cmp.delta = t.mean_delta;
        r.cmp.ci_low = t.ci_low;
        r.cmp.ci_high = t.ci_high;
        r.cmp.p_value = t.p(alternative);
        let (mut lower, mut upper) = (t.lower_bound, t.upper_bound);
        if geo::is_geometric(&r.cmp.metric) && tested.is_some() {
            let back = geo::to_units(&mut r.cmp);
            lower = back.delta(lower);
            upper = back.delta(upper);
        }
        let (metric, b) = (r.cmp.metric, r.cmp.baseline);
        let fit = |x: f64| within_range(&metric, b, x);
        r.lower_bound = fit(lower);
        r.upper_bound = fit(upper);
        r.cmp.ci_low = fit(r.cmp.ci_low);
        r.cmp.ci_high = fit(r.cmp.ci_high);
        r.ppi = tested.map(|t| with_delta_range(t.estimate, &metric, t.baseline));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Warnings;
    use crate::gold::tests::load_str;
    use crate::prepared::Prepared;

    /// Stratum a: q1..q12 model-graded, q1..q10 verified; stratum b: p1, p2
    /// people's labels only.
    fn gold() -> Prepared {
        let mut y = String::from("queries:\n");
        for i in 1..=12 {
            y.push_str(&format!("- id: q{i}\n  stratum: a\n  model:\n    c{i}: 1\n"));
            if i <= 10 {
                y.push_str(&format!("  relevant:\n    c{i}: 1\n  verified: true\n"));
            }
        }
        y.push_str("- id: p1\n  stratum: b\n  relevant:\n    d1: 1\n- id: p2\n  stratum: b\n  relevant:\n    d2: 1\n");
        y.push_str("verify_sample:\n  seed: 1\n  ids: [q1, q2, q3, q4, q5, q6, q7, q8, q9, q10]\n  drawn_at: 2026-12-07T01:00:00Z\n");
        let (g, _) = load_str("g.yaml", &y).unwrap();
        Prepared::labeled(
            g,
            Warnings::default(),
            crate::metrics::default_metrics(),
            1,
            crate::config::LabelMode::Ppi,
        )
        .unwrap()
    }

    /// Hand computation. Stratum a: Y (people, verified q1..q10) =
    /// 1,1,1,1,1,0,0,0,0,0; Yh (model, same queries) = 1,1,1,1,0,0,0,0,0,1;
    /// Yu (model, q1..q12) = Yh then 1, 0. With N = 12, n = 10:
    /// cov0(Y, Yh) = mean(Y Yh) - mean(Y) mean(Yh) = 0.4 - 0.25 = 0.15;
    /// var of the 22 model values (7 of 22 ones... Yh has 5 ones, Yu 6):
    /// 11 ones in 22, sample variance = 22/21 * 0.25 = 0.261905;
    /// lambda = 0.15 / ((22/12) (22/21) 0.25) = 0.15 * 1008/484 = 0.3124;
    /// mean = lambda 6/12 + mean(Y - lambda Yh) = lambda/2 + 0.5 - lambda/2
    /// = 0.5. Stratum b: p values 1, 0.5 -> 0.75. Micro over 14 queries:
    /// 12/14 * 0.5 + 2/14 * 0.75 = 0.535714.
    #[test]
    fn strata_and_people_only_parts_combine_by_their_shares() {
        let p = gold();
        let side = p.ppi.as_ref().unwrap();
        assert_eq!(p.gold.len(), 14);
        assert_eq!(side.model.gold.len(), 12);
        let mut people = vec![0.0; 14];
        for (q, v) in [
            (0, 1.0),
            (1, 1.0),
            (2, 1.0),
            (3, 1.0),
            (4, 1.0),
            (12, 1.0),
            (13, 0.5),
        ] {
            people[q] = v;
        }
        let mut model = vec![0.0; 12];
        for j in [0, 1, 2, 3, 9, 10] {
            model[j] = 1.0;
        }
        let all: Vec<usize> = (0..14).collect();
        let e = estimate(side, &p.gold, &people, &model, &all, Weighting::Micro).unwrap();
        assert!(
            (e.lambdas[0] - 0.15 * 1008.0 / 484.0).abs() < 1e-12,
            "{:?}",
            e.lambdas
        );
        assert_eq!(e.lambdas[1], 0.0);
        assert!((e.combined.mean - (12.0 / 14.0 * 0.5 + 2.0 / 14.0 * 0.75)).abs() < 1e-12);
        let m = estimate(side, &p.gold, &people, &model, &all, Weighting::Macro).unwrap();
        assert!((m.combined.mean - 0.625).abs() < 1e-12);
        // At the same lambdas, the estimate is linear in the values.
        let shifted: Vec<f64> = people.iter().map(|v| v * 2.0).collect();
        let model2: Vec<f64> = model.iter().map(|v| v * 2.0).collect();
        let d = estimate_at(
            side,
            &p.gold,
            &shifted,
            &model2,
            &all,
            Weighting::Micro,
            &e.lambdas,
        )
        .unwrap();
        assert!((d.combined.mean - 2.0 * e.combined.mean).abs() < 1e-12);
    }

    /// Lambda for the sign-flip test, by hand. Stratum a: N = 12
    /// model-graded, n = 10 verified (N/n = 1.2). The terms are
    /// `lambda a_q + b_q` with, on a verified query, `a = -0.2 dm`,
    /// `b = 1.2 dp`, and on q11, q12 `a = dm`, `b = 0`. With dp = dm = 1 on
    /// q1..q5, 0 on q6..q10, dm = 1 on q11 and q12:
    /// sum a b = 5 (-0.2)(1.2) = -1.2, sum a^2 = 5 (0.04) + 2 = 2.2, so
    /// lambda = 1.2 / 2.2 = 6/11. The terms are then 1.2 - 0.2 lambda =
    /// 12/11 on q1..q5, lambda on q11, q12: sum of squares 5 (144/121) +
    /// 2 (36/121) = 792/121; at lambda 0, 5 (1.44) = 7.2. The test's
    /// effective n is n_verified x 7.2 / (792/121) = 1.1 n_verified, with
    /// n_verified 12 (stratum a's 10 and stratum b's two people-only
    /// queries, whose deltas of 0 add nothing to either spread).
    #[test]
    fn test_lambda_and_effective_n_by_hand() {
        let p = gold();
        let side = p.ppi.as_ref().unwrap();
        let mut dp = vec![0.0; 14];
        let mut dm = vec![0.0; 12];
        for q in 0..5 {
            dp[q] = 1.0;
            dm[q] = 1.0;
        }
        dm[10] = 1.0;
        dm[11] = 1.0;
        let all: Vec<usize> = (0..14).collect();
        let l = test_lambdas(side, &p.gold, &dp, &dm, &all, false);
        assert_eq!(l.len(), 2);
        assert!((l[0] - 6.0 / 11.0).abs() < 1e-12, "{l:?}");
        assert_eq!(l[1], 0.0);
        let terms = pseudo_deltas(side, &p.gold, &dp, &dm, &all, &l);
        let zero = pseudo_deltas(side, &p.gold, &dp, &dm, &all, &[0.0, 0.0]);
        let n = test_effective_n(&p.gold, &all, Weighting::Micro, &terms, &zero, false, 12);
        assert!((n - 12.0 * 7.2 / (792.0 / 121.0)).abs() < 1e-9, "{n}");
        // The mean of the terms is the estimate at that lambda.
        let e = estimate_at(side, &p.gold, &dp, &dm, &all, Weighting::Micro, &l).unwrap();
        let mean = terms.iter().sum::<f64>() / 14.0;
        assert!((e.combined.mean - mean).abs() < 1e-12);
    }

    /// A judge whose grades moved where people's did not: every model delta
    /// is +1 and every verified people delta 0. The model's terms would only
    /// add spread (sum a b = 0): lambda 0, the people-only test, effective n
    /// = n verified. PPI++'s lambda here is 0 too (no covariance); with
    /// people's deltas -1 on the verified queries instead (the model's
    /// offset moving against them), sum a b = 10 (-0.2)(-1.2) > 0 pushes
    /// lambda below 0, clipped to 0.
    #[test]
    fn a_moving_bias_gets_lambda_zero() {
        let p = gold();
        let side = p.ppi.as_ref().unwrap();
        let all: Vec<usize> = (0..14).collect();
        let dm = vec![1.0; 12];
        for v in [0.0, -1.0] {
            let mut dp = vec![0.0; 14];
            for q in dp.iter_mut().take(10) {
                *q = v;
            }
            for centered in [false, true] {
                let l = test_lambdas(side, &p.gold, &dp, &dm, &all, centered);
                assert_eq!(l[0], 0.0, "{v} {centered}");
            }
        }
    }
}
