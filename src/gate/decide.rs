//! Decisions: one [`Check`] per tested (metric, scope), the multiplicity
//! correction across a retriever's gated checks, the verdict under the
//! decision rule of SPEC "Gate rules", and the re-test of a borderline
//! Monte Carlo result.

use std::collections::HashMap;

use super::checks::{corrected_alpha, test, tolerances, Tested, Want};
use super::pair::Paired;
use super::power::{power, spread_se};
use super::{Check, CheckVerdict, Current, Hypothesis};
use crate::compare::{self, Comparison};
use crate::config::{Correction, Decision, GateSettings};
use crate::prepared::Prepared;
use crate::stats;

fn adjust(p: &[f64], c: Correction) -> Vec<f64> {
    match c {
        Correction::Holm => stats::holm(p),
        Correction::Bonferroni => stats::bonferroni(p),
        Correction::None => p.to_vec(),
    }
}

/// Tests, corrects and decides every want.
pub(super) fn decided_checks(
    prep: &Prepared,
    settings: &GateSettings,
    cur: &Current,
    paired: &Paired,
    scopes: &[compare::Scope],
    wants: &[Want],
) -> Vec<Check> {
    let tolerances = tolerances(settings, paired, scopes, wants);
    let m = (0..wants.len()).filter(|&k| tolerances[k].is_some()).count();
    let tested = test(prep, settings, cur, paired, scopes, wants, &tolerances, m);
    let mut checks = summarize(
        &prep.gold,
        settings,
        cur,
        paired,
        scopes,
        wants,
        &tolerances,
        &tested,
        m,
    );
    correct(&mut checks, settings.correction);
    decide(&mut checks, settings);
    checks
}

/// One [`Check`] per tested want: means, the test's numbers, the tolerance
/// and the power. Verdicts come later.
#[allow(clippy::too_many_arguments)]
fn summarize(
    gold: &crate::gold::GoldSet,
    settings: &GateSettings,
    cur: &Current,
    paired: &Paired,
    scopes: &[compare::Scope],
    wants: &[Want],
    tolerances: &[Option<f64>],
    tested: &HashMap<(usize, usize), Tested>,
    m: usize,
) -> Vec<Check> {
    let metrics = &cur.scores.metrics;
    let alpha_m = corrected_alpha(settings, m);
    let mut checks: Vec<Check> = Vec::new();
    for (w, &tolerance) in wants.iter().zip(tolerances) {
        let Some(t) = tested.get(&(w.metric, w.scope)) else {
            continue;
        };
        let scope = &scopes[w.scope];
        let Some(base_vals) = paired.values[w.metric].as_ref() else {
            continue;
        };
        let cur_vals = &cur.scores.values[w.metric];
        let baseline_mean = compare::scope_mean(base_vals, scopes, w.scope, settings.weighting);
        let current_mean = compare::scope_mean(cur_vals, scopes, w.scope, settings.weighting);
        let d: Vec<f64> = cur_vals.iter().zip(base_vals).map(|(c, b)| c - b).collect();
        let (se, spread) = spread_se(&d, base_vals, scopes, w.scope, settings.weighting);
        let tol = tolerance.unwrap_or(0.0);
        let power = power(settings.decision, tol, se, spread, scope.members.len(), alpha_m);
        let (hypothesis, p_value) = match settings.decision {
            _ if tolerance.is_none() => (Hypothesis::DropAtMost(0.0), t.plain.p_less),
            Decision::ConfidentDrop => (Hypothesis::DropAtMost(tol), t.margin.p_less),
            Decision::NonInferiority => (Hypothesis::DropAtLeast(tol), t.margin.p_greater),
            Decision::SignificantDrop | Decision::Threshold => (Hypothesis::DropAtMost(0.0), t.plain.p_less),
        };
        checks.push(Check {
            cmp: Comparison {
                metric: metrics[w.metric],
                stratum: scope.name.clone(),
                n: scope.members.len(),
                baseline: baseline_mean,
                current: current_mean,
                delta: t.plain.mean_delta,
                ci_low: t.plain.ci_low,
                ci_high: t.plain.ci_high,
                p_value,
                p_adjusted: f64::NAN,
            },
            hypothesis,
            lower_bound: t.margin.lower_bound,
            upper_bound: t.margin.upper_bound,
            bound_level: 1.0 - alpha_m,
            p_drop: t.plain.p_less,
            p_rise: t.plain.p_greater,
            p_rise_adjusted: f64::NAN,
            tolerance,
            power,
            test: t.test,
            monte_carlo: t.monte_carlo,
            skew: compare::skew_of(&d, gold, scopes, w.scope, settings.weighting),
            verdict: CheckVerdict::NotGated,
        });
    }
    checks
}

/// Largest B a borderline re-test goes to.
pub const MAX_RESAMPLES: u32 = 200_000;

/// When a gated decision's corrected p lies within two Monte Carlo standard
/// errors of alpha, the B to re-test with (ten times more, up to
/// [`MAX_RESAMPLES`]); the seed stays, so the re-test is deterministic too.
pub(super) fn borderline_resamples(checks: &[Check], settings: &GateSettings) -> Option<u32> {
    if settings.decision == Decision::Threshold || settings.resamples >= MAX_RESAMPLES {
        return None;
    }
    let b = f64::from(settings.resamples.max(1));
    let borderline = checks.iter().any(|c| {
        let (p, pa) = (c.cmp.p_value, c.cmp.p_adjusted);
        if c.tolerance.is_none() || !c.monte_carlo || !(p > 0.0 && pa.is_finite()) {
            return false;
        }
        let mult = pa / p;
        let p_near = (settings.alpha / mult).min(1.0);
        let se = mult * (p_near * (1.0 - p_near) / b).sqrt();
        (pa - settings.alpha).abs() < 2.0 * se
    });
    borderline.then(|| settings.resamples.saturating_mul(10).min(MAX_RESAMPLES))
}

/// The multiplicity correction across the retriever's gated checks, for the
/// decision's p and for rises alike; a check that is not gated has no
/// corrected p (NaN, `null` in JSON).
fn correct(checks: &mut [Check], correction: Correction) {
    let gated: Vec<usize> = (0..checks.len())
        .filter(|&i| checks[i].tolerance.is_some())
        .collect();
    let p: Vec<f64> = gated.iter().map(|&i| checks[i].cmp.p_value).collect();
    let p_rise: Vec<f64> = gated.iter().map(|&i| checks[i].p_rise).collect();
    let adj = adjust(&p, correction);
    let adj_rise = adjust(&p_rise, correction);
    for (k, &i) in gated.iter().enumerate() {
        checks[i].cmp.p_adjusted = adj[k];
        checks[i].p_rise_adjusted = adj_rise[k];
    }
}

/// Each gated check's verdict under the decision rule of SPEC "Gate rules".
/// A rise is "improved" on its corrected one-sided p.
fn decide(checks: &mut [Check], settings: &GateSettings) {
    for c in checks.iter_mut() {
        let Some(tol) = c.tolerance else {
            continue;
        };
        let drop = -c.cmp.delta;
        let significant = c.cmp.p_adjusted < settings.alpha;
        let fail = match settings.decision {
            Decision::ConfidentDrop => significant,
            Decision::SignificantDrop => drop > tol && significant,
            Decision::NonInferiority => !significant,
            Decision::Threshold => drop > tol,
        };
        c.verdict = if fail {
            CheckVerdict::Fail
        } else if c.cmp.delta > 0.0 && c.p_rise_adjusted < settings.alpha {
            CheckVerdict::Improved
        } else {
            CheckVerdict::Pass
        };
    }
}
