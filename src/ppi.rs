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
                .map(|e| e.combined)
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

/// A paired delta tested under `labels: ppi`, as the gate and compare test
/// it: its PPI estimate, the configured test run on the per-query terms
/// whose mean is that estimate ([`pseudo_deltas`]), and the two means at
/// the delta's lambdas (so current minus baseline is the delta).
pub struct TestedDelta {
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
    let est = estimate(side, gold, &d, &dm, members, settings.weighting).ok()?;
    let at = |(p, m): (&[f64], &[f64])| {
        estimate_at(side, gold, p, m, members, settings.weighting, &est.lambdas)
            .map_or(f64::NAN, |e| e.combined.mean)
    };
    let terms = pseudo_deltas(side, gold, &d, &dm, members, &est.lambdas);
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
        r.ppi = tested.map(|t| t.estimate);
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
}
