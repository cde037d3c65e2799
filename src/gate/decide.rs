//! Decisions: one [`Check`] per tested (metric, scope), the multiplicity
//! correction across one family of gated checks (every retriever of the
//! gate by default, SPEC "Statistics, second edition"), the verdict under
//! the decision rule of SPEC "Gate rules", and the re-test of a borderline
//! Monte Carlo result.
//!
//! A check is decided by the bound it prints: under Holm, check i of the
//! family (in order of p) is held to alpha / (m - i + 1) once every check
//! before it was rejected, and its one-sided bound is read from the same
//! test at that level (`Inference::upper`), so "fail" holds exactly when
//! the printed bound lies beyond the tolerance. The corrected p-values are
//! printed beside it; they reject the same checks (the bound is the test
//! inverted), up to a tie within rounding of alpha.

use std::collections::HashMap;

use super::checks::{tolerances, Tested, Want};
use super::pair::Paired;
use super::power::{drop_spread, power, DropSpread};
use super::{Check, CheckVerdict, Current, Hypothesis, Power, SidePlan};
use crate::compare::{self, Comparison};
use crate::config::{Correction, CorrectionScope, Decision, GateSettings};
use crate::prepared::Prepared;
use crate::stats::{self, Inference};

fn adjust(p: &[f64], c: Correction) -> Vec<f64> {
    match c {
        Correction::Holm => stats::holm(p),
        Correction::Bonferroni => stats::bonferroni(p),
        Correction::None => p.to_vec(),
    }
}

/// One retriever's checks, tested but not yet decided: the family they
/// belong to decides them (see [`decide_family`]).
pub(super) struct Pending {
    pub(super) checks: Vec<Check>,
    /// The test behind each check, in check order.
    inferences: Vec<Inference>,
    /// Each check's spread model, for the power.
    spreads: Vec<DropSpread>,
    /// Each spread's unit in the check's units: 1, or for a geometric
    /// mean the log scale's span (its spread is modelled on [0, 1]).
    scales: Vec<f64>,
    /// A geometric mean's tolerance as the rule gives it, in the metric's
    /// units (its check holds the log-scale margin until the end).
    pub(super) shown_tolerances: Vec<Option<f64>>,
    /// Under `labels: ppi`: each check's PPI estimate, whose standard error
    /// its power is computed from.
    ppi: Vec<Option<crate::stats::ppi::PpiCombined>>,
}

impl Pending {
    /// A retriever without a baseline: nothing to decide.
    pub(super) fn empty() -> Pending {
        Pending {
            checks: Vec::new(),
            inferences: Vec::new(),
            spreads: Vec::new(),
            scales: Vec::new(),
            shown_tolerances: Vec::new(),
            ppi: Vec::new(),
        }
    }
}

/// Tests and summarizes every want of one retriever.
pub(super) fn pending(
    prep: &Prepared,
    settings: &GateSettings,
    cur: &Current,
    paired: &Paired,
    scopes: &[compare::Scope],
    wants: &[Want],
    side: Option<&SidePlan>,
) -> Pending {
    let tolerances = tolerances(settings, &cur.scores.metrics, paired, scopes, wants);
    let tested = super::checks::test(prep, settings, cur, paired, scopes, wants);
    let mut out = summarize(
        &prep.gold,
        settings,
        cur,
        paired,
        scopes,
        wants,
        &tolerances,
        &tested,
    );
    if let (Some(ppi), Some(side)) = (&prep.ppi, side) {
        estimate_checks(&mut out, prep, ppi, side, settings, cur, paired, scopes, wants);
    }
    out
}

/// A `labels: ppi` check without an estimate: no information, so no
/// verdict but a pass (the people-side test it was given first would be
/// biased by the model's grades on the unverified queries).
fn unestimated(out: &mut Pending, i: usize) {
    let c = &mut out.checks[i];
    out.inferences[i] = Inference::no_information(c.cmp.delta);
    c.monte_carlo = false;
    c.cmp.p_value = 1.0;
    c.p_drop = 1.0;
    c.p_rise = 1.0;
    let (lo, hi) = (f64::NEG_INFINITY, f64::INFINITY);
    c.cmp.ci_low = lo;
    c.cmp.ci_high = hi;
    c.lower_bound = lo;
    c.upper_bound = hi;
}

/// Under `labels: ppi`, every check tested on the PPI estimate of its
/// delta instead (SPEC "Gating on model labels"): per stratum PPI++ on the
/// per-query deltas, the model's on every model-graded query, people's on
/// the verified ones; the configured test on the per-query terms whose mean
/// is the estimate ([`crate::ppi::pseudo_deltas`]); the two
/// means estimated at the delta's lambdas, so current minus baseline is the
/// delta; a relative tolerance resolved on the baseline's estimate. A check
/// that cannot be estimated (a metric the baseline's model values miss, a
/// scope whose verified queries are not in the baseline) has no
/// information and cannot fail: a warning says why.
#[allow(clippy::too_many_arguments)]
fn estimate_checks(
    out: &mut Pending,
    prep: &Prepared,
    ppi: &crate::prepared::PpiSide,
    side: &SidePlan,
    settings: &GateSettings,
    cur: &Current,
    paired: &Paired,
    scopes: &[compare::Scope],
    wants: &[Want],
) {
    let metrics = &cur.scores.metrics;
    let mut k = 0;
    for w in wants {
        if k >= out.checks.len() {
            break;
        }
        let c = &out.checks[k];
        if c.cmp.metric != metrics[w.metric] || c.cmp.stratum != scopes[w.scope].name {
            continue;
        }
        let i = k;
        k += 1;
        let (Some(base), Some(base_m)) = (paired.values[w.metric].as_ref(), side.base[w.metric].as_ref())
        else {
            unestimated(out, i);
            continue;
        };
        let Some(t) = crate::ppi::test_delta(
            ppi,
            &prep.gold,
            scopes,
            w.scope,
            (base, base_m),
            (&cur.scores.values[w.metric], &side.cur.values[w.metric]),
            settings,
            true,
        ) else {
            unestimated(out, i);
            continue;
        };
        let geometric = compare::geo::is_geometric(&metrics[w.metric]);
        let c = &mut out.checks[i];
        // A relative tolerance is a share of the baseline's estimate.
        if let (Some(ri), Some(_)) = (w.rule, c.tolerance) {
            if !geometric {
                c.tolerance = Some(settings.rules[ri].tolerance.resolve(t.baseline));
            }
        }
        let inf = t.inference;
        let plain = inf.outcome(settings.alpha);
        let (hypothesis, p_value) = hypothesis_of(settings, c.tolerance, &inf, &plain);
        c.cmp.baseline = t.baseline;
        c.cmp.current = t.current;
        c.cmp.delta = t.estimate.mean;
        c.cmp.ci_low = plain.ci_low;
        c.cmp.ci_high = plain.ci_high;
        c.cmp.p_value = p_value;
        c.hypothesis = hypothesis;
        c.lower_bound = plain.lower_bound;
        c.upper_bound = plain.upper_bound;
        c.p_drop = plain.p_less;
        c.p_rise = plain.p_greater;
        c.test = t.test;
        c.monte_carlo = t.monte_carlo;
        c.no_loss = t.no_loss;
        let estimate = crate::ppi::with_delta_range(t.estimate, &metrics[w.metric], t.baseline);
        c.ppi = Some(estimate);
        out.inferences[i] = inf;
        out.ppi[i] = Some(estimate);
    }
}

/// The null hypothesis a check's p is about under the decision rule, and
/// that p: the margin test's at the tolerance, non-inferiority's, or a
/// drop below 0 (significant-drop, threshold, a check not gated).
fn hypothesis_of(
    settings: &GateSettings,
    tolerance: Option<f64>,
    inf: &Inference,
    plain: &stats::TestOutcome,
) -> (Hypothesis, f64) {
    let tol = tolerance.unwrap_or(0.0);
    match settings.decision {
        _ if tolerance.is_none() => (Hypothesis::DropAtMost(0.0), plain.p_less),
        Decision::ConfidentDrop => (Hypothesis::DropAtMost(tol), inf.p_less(-tol)),
        Decision::NonInferiority => (Hypothesis::DropAtLeast(tol), inf.p_greater(-tol)),
        Decision::SignificantDrop | Decision::Threshold => (Hypothesis::DropAtMost(0.0), plain.p_less),
    }
}

/// One [`Check`] per tested want: means, the test's numbers at margin 0
/// and at the check's margin, the tolerance. Levels, bounds, power and
/// verdicts come with the family.
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
) -> Pending {
    let metrics = &cur.scores.metrics;
    let mut out = Pending {
        checks: Vec::new(),
        inferences: Vec::new(),
        spreads: Vec::new(),
        scales: Vec::new(),
        shown_tolerances: Vec::new(),
        ppi: Vec::new(),
    };
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
        let geometric = crate::compare::geo::is_geometric(&metrics[w.metric]);
        let (spread, scale) = if geometric {
            let span = crate::compare::geo::log_span();
            let dz: Vec<f64> = d.iter().map(|x| x / span).collect();
            let (bz, cz) = (
                crate::compare::geo::unit_scaled(base_vals),
                crate::compare::geo::unit_scaled(cur_vals),
            );
            (
                drop_spread(&dz, &bz, &cz, scopes, w.scope, settings.weighting),
                span,
            )
        } else {
            (
                drop_spread(&d, base_vals, cur_vals, scopes, w.scope, settings.weighting),
                1.0,
            )
        };
        let inf = &t.inference;
        let plain = inf.outcome(settings.alpha);
        let (hypothesis, p_value) = hypothesis_of(settings, tolerance, inf, &plain);
        out.checks.push(Check {
            cmp: Comparison {
                metric: metrics[w.metric],
                stratum: scope.name.clone(),
                n: scope.members.len(),
                baseline: baseline_mean,
                current: current_mean,
                delta: plain.mean_delta,
                ci_low: plain.ci_low,
                ci_high: plain.ci_high,
                p_value,
                p_adjusted: f64::NAN,
            },
            hypothesis,
            lower_bound: plain.lower_bound,
            upper_bound: plain.upper_bound,
            bound_level: 1.0 - settings.alpha,
            p_drop: plain.p_less,
            p_rise: plain.p_greater,
            p_rise_adjusted: f64::NAN,
            tolerance,
            power: Power::unknown(),
            test: t.test,
            monte_carlo: t.monte_carlo,
            skew: compare::skew_of(&d, gold, scopes, w.scope, settings.weighting),
            no_loss: scope.members.iter().all(|&q| d[q] >= 0.0),
            verdict: CheckVerdict::NotGated,
            ppi: None,
        });
        out.inferences.push(t.inference.clone());
        out.spreads.push(spread);
        out.scales.push(scale);
        out.ppi.push(None);
        out.shown_tolerances.push(match w.rule {
            Some(ri) if tolerance.is_some() && geometric => {
                Some(settings.rules[ri].tolerance.resolve(baseline_mean.exp()))
            }
            _ => None,
        });
    }
    out
}

pub use crate::stats::MAX_RESAMPLES;

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

/// The families of gated checks, as (retriever, check) positions: one for
/// the whole gate, or one per retriever.
fn families(pendings: &[Pending], scope: CorrectionScope) -> Vec<Vec<(usize, usize)>> {
    let gated = |r: usize| {
        (0..pendings[r].checks.len())
            .filter(move |&i| pendings[r].checks[i].tolerance.is_some())
            .map(move |i| (r, i))
    };
    match scope {
        CorrectionScope::Gate => vec![(0..pendings.len()).flat_map(gated).collect()],
        CorrectionScope::Retriever => (0..pendings.len()).map(|r| gated(r).collect()).collect(),
    }
}

/// The level each p of a family is decided at, and whether the step-down
/// reached it with every earlier check rejected, given `rejects(k, level)`
/// (check k's test rejects its null at that level). Holm: in order of p,
/// check i (from 0) is held to alpha / (m - i) while every earlier one was
/// rejected; from the first check that is not, every later one is accepted
/// and printed at that step's level. Bonferroni: alpha / m; none: alpha.
fn levels(p: &[f64], correction: Correction, alpha: f64, rejects: impl Fn(usize, f64) -> bool) -> Vec<f64> {
    let m = p.len();
    match correction {
        Correction::None => vec![alpha; m],
        Correction::Bonferroni => vec![alpha / m.max(1) as f64; m],
        Correction::Holm => {
            let mut order: Vec<usize> = (0..m).collect();
            order.sort_by(|&a, &b| p[a].total_cmp(&p[b]).then(a.cmp(&b)));
            let mut out = vec![alpha; m];
            let mut stopped: Option<f64> = None;
            for (step, &k) in order.iter().enumerate() {
                let level = stopped.unwrap_or(alpha / (m - step) as f64);
                out[k] = level;
                if stopped.is_none() && !rejects(k, level) {
                    stopped = Some(level);
                }
            }
            out
        }
    }
}

/// Corrects, bounds and decides every family of gated checks, then the
/// power of each at its family's level. Returns each retriever's family
/// size m.
pub(super) fn decide_family(pendings: &mut [Pending], settings: &GateSettings) -> Vec<usize> {
    let mut family_size = vec![0usize; pendings.len()];
    for fam in families(pendings, settings.correction_scope) {
        let m = fam.len();
        for &(r, _) in &fam {
            family_size[r] = m;
        }
        let p: Vec<f64> = fam
            .iter()
            .map(|&(r, i)| pendings[r].checks[i].cmp.p_value)
            .collect();
        let p_rise: Vec<f64> = fam.iter().map(|&(r, i)| pendings[r].checks[i].p_rise).collect();
        let adj = adjust(&p, settings.correction);
        let adj_rise = adjust(&p_rise, settings.correction);
        let rejects = |k: usize, level: f64| {
            let (r, i) = fam[k];
            rejected(
                &pendings[r].checks[i],
                &pendings[r].inferences[i],
                settings,
                level,
            )
        };
        let lv = levels(&p, settings.correction, settings.alpha, rejects);
        for (k, &(r, i)) in fam.iter().enumerate() {
            let pend = &mut pendings[r];
            let c = &mut pend.checks[i];
            c.cmp.p_adjusted = adj[k];
            c.p_rise_adjusted = adj_rise[k];
            decide(c, &pend.inferences[i], settings, lv[k]);
        }
    }
    for (r, pend) in pendings.iter_mut().enumerate() {
        let alpha_m = super::checks::corrected_alpha(settings, family_size[r]);
        for (((c, model), &scale), ppi) in pend
            .checks
            .iter_mut()
            .zip(&pend.spreads)
            .zip(&pend.scales)
            .zip(&pend.ppi)
        {
            let tol = c.tolerance.unwrap_or(0.0);
            // An estimate without spread (an unchanged run) says nothing of
            // what a drop would add: the people side's model of it stands.
            if let Some(e) = ppi.as_ref().filter(|e| e.se > 0.0) {
                c.power = super::power::ppi_power(settings.decision, tol, e, settings.alpha, alpha_m);
                continue;
            }
            c.power = power(settings.decision, c.test, tol / scale, model, alpha_m);
            c.power.mde = c.power.mde.map(|m| m * scale);
            c.power.se *= scale;
            c.power.se_no_change *= scale;
        }
    }
    family_size
}

/// Whether a check's test rejects its null at `level`, read off its bound
/// (the test inverted): the margin test rejects "drop <= tolerance" when the
/// upper bound lies below -tolerance; non-inferiority rejects "drop >=
/// tolerance" when the lower bound lies above it; significant-drop rejects
/// "drop <= 0" when the upper bound lies below 0. Threshold has no test.
fn rejected(c: &Check, inf: &Inference, settings: &GateSettings, level: f64) -> bool {
    let tol = c.tolerance.unwrap_or(0.0);
    let fit = |x: f64| compare::within_tested_range(&c.cmp.metric, c.cmp.baseline, x);
    match settings.decision {
        Decision::ConfidentDrop => fit(inf.upper(level)) < -tol,
        Decision::SignificantDrop => fit(inf.upper(level)) < 0.0,
        Decision::NonInferiority => fit(inf.lower(level)) > -tol,
        Decision::Threshold => false,
    }
}

/// A gated check's verdict under the decision rule of SPEC "Gate rules",
/// with its bounds at the level it was decided at. A rise is "improved" on
/// its corrected one-sided p; a check whose interval at that level holds
/// both "within tolerance" and "beyond it" is inconclusive.
fn decide(c: &mut Check, inf: &Inference, settings: &GateSettings, level: f64) {
    let Some(tol) = c.tolerance else {
        return;
    };
    if settings.decision != Decision::Threshold {
        // Within what the metric can show, so the printed bound is the
        // one decided on (see `compare::within_range`).
        let (metric, base) = (c.cmp.metric, c.cmp.baseline);
        let fit = |x: f64| compare::within_tested_range(&metric, base, x);
        c.lower_bound = fit(inf.lower(level));
        c.upper_bound = fit(inf.upper(level));
        c.bound_level = 1.0 - level;
    }
    let drop = -c.cmp.delta;
    let fail = !c.no_loss
        && match settings.decision {
            Decision::ConfidentDrop => c.upper_bound < -tol,
            Decision::SignificantDrop => drop > tol && c.upper_bound < 0.0,
            // A NaN bound proves nothing: not shown within, so it fails.
            Decision::NonInferiority => c.lower_bound.partial_cmp(&-tol) != Some(std::cmp::Ordering::Greater),
            Decision::Threshold => drop > tol,
        };
    // Inconclusive: the interval holds a drop within the tolerance and one
    // beyond it, strictly: an interval ending at -tolerance holds no drop
    // beyond it (an identical run's point 0 at tolerance 0 is within).
    let undecided = matches!(
        settings.decision,
        Decision::ConfidentDrop | Decision::SignificantDrop
    ) && !c.no_loss
        && c.lower_bound < -tol
        && c.upper_bound >= -tol;
    c.verdict = if fail {
        CheckVerdict::Fail
    } else if c.cmp.delta > 0.0 && c.p_rise_adjusted < settings.alpha {
        CheckVerdict::Improved
    } else if undecided {
        CheckVerdict::Inconclusive
    } else {
        CheckVerdict::Pass
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Holm's step-down by hand: p = [0.01, 0.04, 0.03, 0.005] at alpha
    /// 0.05, m = 4. In order of p: 0.005 at 0.0125 (rejected), 0.01 at
    /// 0.05/3 (rejected), 0.03 at 0.025 (not rejected: Holm stops), 0.04
    /// accepted and printed at the stopping level 0.025.
    #[test]
    fn holm_levels_follow_the_step_down() {
        let p = [0.01, 0.04, 0.03, 0.005];
        let lv = levels(&p, Correction::Holm, 0.05, |k, level| p[k] < level);
        assert_eq!(lv, vec![0.05 / 3.0, 0.025, 0.025, 0.0125]);
        // Every check rejected: each at its own step.
        let all = levels(&p, Correction::Holm, 0.05, |_, _| true);
        assert_eq!(all, vec![0.05 / 3.0, 0.05, 0.025, 0.0125]);
        assert_eq!(
            levels(&p, Correction::Bonferroni, 0.05, |_, _| true),
            vec![0.0125; 4]
        );
        assert_eq!(levels(&p, Correction::None, 0.05, |_, _| false), vec![0.05; 4]);
    }
}
