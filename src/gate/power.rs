//! Power: the drop each check can detect, the standard error behind it,
//! and the warnings when the gold set is too small for the tolerances.

use super::checks::{corrected_alpha, plan};
use super::pair::stored_values;
use super::Check;
use crate::baseline::Baseline;
use crate::compare;
use crate::config::{Correction, Decision, GateSettings, TestKind, Weighting};
use crate::metrics::Metric;
use crate::stats;

/// Power at which the minimum detectable drop is stated.
pub const POWER: f64 = 0.8;

/// Where the spread behind a check's minimum detectable drop comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    /// The deltas show churn (queries winning and losing beyond what the
    /// drop explains): that churn, plus the spread a drop adds.
    Churn,
    /// No churn (an unchanged deterministic run, or a pure loss): the
    /// spread a drop of that size adds on its own.
    Drop,
    /// Every value in the scope is 0: there is nothing to lose.
    Nothing,
}

impl Spread {
    pub fn name(self) -> &'static str {
        match self {
            Spread::Churn => "churn",
            Spread::Drop => "drop",
            Spread::Nothing => "nothing-to-lose",
        }
    }
}

/// How the standard error of a scope's statistic grows with a true drop:
/// `se(drop)^2 = churn + slope * drop - weight2 * drop^2`.
///
/// The model (a mixture of losses): a drop of size `drop` arrives as some
/// queries losing part of what they scored, so the per-query deltas gain
/// `E[L^2]/E[L] * drop - drop^2` of variance on top of the churn a change
/// brings anyway (for a binary metric every loss is 1 and this is
/// `drop (1 - drop)`, the Bernoulli variance). `slope` carries
/// `E[L^2]/E[L]`, estimated from the runs (see [`drop_spread`]); `weight2`
/// is the sum of the squared query weights (1/n micro,
/// `sum_h 1/(n_h H^2)` macro). A spread estimated from an unchanged run
/// misses this term, and a drop equal to such an mde was caught 64% of the
/// time, not 80% (issue 26).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DropSpread {
    pub churn: f64,
    pub slope: f64,
    pub weight2: f64,
    /// The largest drop possible: the scope's baseline mean.
    pub max_drop: f64,
    pub n: usize,
    pub spread: Spread,
}

impl DropSpread {
    /// Standard error of the statistic under a true drop `drop`.
    pub fn se(&self, drop: f64) -> f64 {
        (self.churn + self.slope * drop - self.weight2 * drop * drop)
            .max(0.0)
            .sqrt()
    }

    /// The same scope with `n` queries in the same proportions: every term
    /// scales as 1 / n.
    fn scaled(&self, n: usize) -> DropSpread {
        let f = self.n as f64 / n.max(1) as f64;
        DropSpread {
            churn: self.churn * f,
            slope: self.slope * f,
            weight2: self.weight2 * f,
            n,
            ..*self
        }
    }
}

/// Churn and loss scale of one group of queries, per query:
/// - the loss scale `lambda = (sum c^2 - 2 sum d c) / sum c` is how much
///   `E[d^2]` grows per unit of drop when a drop takes the whole current
///   value of some queries (derivative of `E[(d - c)^2]`; for a binary
///   metric it is `(n11 - n01) / (n11 + n01)` over the queries the
///   candidate hits, 1 for an unchanged run). Whole losses are the drop
///   shape with the most spread per unit of drop, so the mde holds
///   whatever shape the drop takes. The share lost was once estimated
///   from the queries that lost in the runs at hand; an ANN-style re-run
///   loses small shares (adjacent swaps), that estimate put the loss scale
///   near 0, and a drop equal to the printed mde on ERR@10 was caught 0.62
///   of the time, not 0.80 (issue 49);
/// - the churn, `mean(d^2) - lambda * observed drop`: the deltas' second
///   moment with the drop's own spread taken out, so an unchanged run and
///   the same run after a drop give the same figure.
fn churn_and_slope(members: &[usize], d: &[f64], base: &[f64], cur: &[f64]) -> (f64, f64) {
    let n = members.len();
    if n == 0 {
        return (0.0, 0.0);
    }
    let (mut m1, mut m2) = (0.0, 0.0);
    let (mut sc, mut sc2, mut sdc, mut sb, mut sb2) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &q in members {
        let (dq, bq, cq) = (d[q], base[q], cur[q]);
        m1 += dq;
        m2 += dq * dq;
        sc += cq;
        sc2 += cq * cq;
        sdc += dq * cq;
        sb += bq;
        sb2 += bq * bq;
    }
    let nf = n as f64;
    let slope = if sc > 0.0 {
        (sc2 - 2.0 * sdc) / sc
    } else if sb > 0.0 {
        sb2 / sb
    } else {
        0.0
    };
    let slope = if slope.is_finite() {
        slope.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let observed_drop = -m1 / nf;
    let churn = (m2 / nf - slope * observed_drop).max(0.0);
    // Rounding leaves ~1e-17 where a pure loss has no churn at all.
    let churn = if churn < 1e-12 { 0.0 } else { churn };
    (churn, slope)
}

/// The [`DropSpread`] of one scope from its per-query deltas `d`, baseline
/// and current values (all indexed like the gold set). Under macro
/// weighting the overall scope adds the strata's terms with weights
/// 1/(n_h H^2); a stratum of one query takes the overall scope's per-query
/// figures.
pub fn drop_spread(
    d: &[f64],
    base: &[f64],
    cur: &[f64],
    scopes: &[compare::Scope],
    scope: usize,
    weighting: Weighting,
) -> DropSpread {
    let members = &scopes[scope].members;
    let n = members.len();
    let max_drop = compare::scope_mean(base, scopes, scope, weighting).max(0.0);
    let (churn, slope, weight2) = if scope == 0 && weighting == Weighting::Macro {
        let strata: Vec<&compare::Scope> = scopes[1..].iter().filter(|s| !s.members.is_empty()).collect();
        let h2 = (strata.len() as f64).powi(2);
        let all = churn_and_slope(members, d, base, cur);
        let (mut a, mut b, mut c) = (0.0, 0.0, 0.0);
        for s in strata {
            let nh = s.members.len() as f64;
            let (ch, sl) = if s.members.len() >= 2 {
                churn_and_slope(&s.members, d, base, cur)
            } else {
                all
            };
            a += ch / (nh * h2);
            b += sl / (nh * h2);
            c += 1.0 / (nh * h2);
        }
        (a, b, c)
    } else {
        let (ch, sl) = churn_and_slope(members, d, base, cur);
        let nf = n.max(1) as f64;
        (ch / nf, sl / nf, 1.0 / nf)
    };
    let spread = if max_drop <= 0.0 || (churn == 0.0 && slope == 0.0) {
        Spread::Nothing
    } else if churn > 0.0 {
        Spread::Churn
    } else {
        Spread::Drop
    };
    DropSpread {
        churn,
        slope,
        weight2,
        max_drop,
        n,
        spread,
    }
}

/// What a check can detect, at the level and in the mode the decision uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Power {
    /// Standard error of the scope's statistic under a true drop of `mde`
    /// (the spread the mde was solved with; without an mde, under no drop).
    pub se: f64,
    /// Standard error under no drop: the churn alone.
    pub se_no_change: f64,
    pub spread: Spread,
    /// The true drop failed with 80% probability when it happens; `None`
    /// when the check cannot fail on its own at the level it is held to
    /// (a sign-flip scope too small for it), no possible drop is caught that
    /// often, or the mode fails even an unchanged retriever that often
    /// (non-inferiority on a small gold set).
    pub mde: Option<f64>,
    /// False when a drop of twice the tolerance would pass more than 20%
    /// of the time (non-inferiority: an unchanged run would fail more than
    /// 20%; threshold: more than alpha).
    pub enforceable: bool,
    /// Queries in this scope that would make it enforceable.
    pub queries_needed: Option<usize>,
    /// Estimated chance that an unchanged retriever fails this check
    /// (`non-inferiority` and `threshold`, where it can be large).
    pub unchanged_fails: Option<f64>,
    /// False when not even a loss on every query can reach the level the
    /// check is held to alone (sign-flip p >= 2^-n).
    pub can_fail_alone: bool,
}

impl Power {
    /// Before the family is known: nothing claimed.
    pub fn unknown() -> Power {
        Power {
            se: f64::NAN,
            se_no_change: f64::NAN,
            spread: Spread::Nothing,
            mde: None,
            enforceable: false,
            queries_needed: None,
            unchanged_fails: None,
            can_fail_alone: false,
        }
    }
}

/// What one gated check can detect before any candidate exists.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedPower {
    pub metric: Metric,
    pub stratum: String,
    pub n: usize,
    pub tolerance: f64,
    pub power: Power,
}

/// The power of every gated check from a baseline alone, computed exactly
/// as the gate computes it for an unchanged run (every delta 0), so
/// `gold stats` and `gate` agree.
/// `family_m`: the gated checks of the correction family this baseline's
/// checks belong to (every retriever's under `correction_scope: gate`);
/// `None` counts this baseline's own.
pub fn baseline_power(
    gold: &crate::gold::GoldSet,
    settings: &GateSettings,
    b: &Baseline,
    family_m: Option<usize>,
) -> Vec<PlannedPower> {
    let stored = b.positions();
    let paired_idx: Vec<usize> = (0..gold.len())
        .filter(|&i| stored.contains_key(gold.queries[i].id.as_str()))
        .collect();
    let scopes = compare::scopes(gold, &paired_idx);
    let mut metrics: Vec<Metric> = Vec::new();
    for r in &settings.rules {
        if b.metric_index(&r.metric).is_some() && !metrics.contains(&r.metric) {
            metrics.push(r.metric);
        }
    }
    let wants = plan(gold, settings, &metrics, &scopes, &mut Vec::new());
    let m = family_m.unwrap_or_else(|| wants.iter().filter(|w| w.rule.is_some()).count());
    let alpha_m = corrected_alpha(settings, m);
    let zeros = vec![0.0; gold.len()];
    wants
        .iter()
        .filter_map(|w| {
            let rule = &settings.rules[w.rule?];
            let mi = b.metric_index(&metrics[w.metric])?;
            let values = stored_values(gold, b, &stored, mi);
            let mean = compare::scope_mean(&values, &scopes, w.scope, settings.weighting);
            let tolerance = rule.tolerance.resolve(mean);
            let model = drop_spread(&zeros, &values, &values, &scopes, w.scope, settings.weighting);
            let n = scopes[w.scope].members.len();
            Some(PlannedPower {
                metric: metrics[w.metric],
                stratum: scopes[w.scope].name.clone(),
                n,
                tolerance,
                power: power(settings.decision, settings.test, tolerance, &model, alpha_m),
            })
        })
        .collect()
}

/// Standard error of a scope's statistic from per-query values `v`
/// (indexed like the gold set): sd / sqrt(n), or for the overall scope under
/// macro weighting sqrt(sum_h sd_h^2 / n_h) / H, a stratum too small for
/// its own sd taking the scope's. NaN when nothing varies or n < 2.
pub fn standard_error(v: &[f64], scopes: &[compare::Scope], scope: usize, weighting: Weighting) -> f64 {
    let vals = |s: &compare::Scope| -> Vec<f64> { s.members.iter().map(|&q| v[q]).collect() };
    let all = vals(&scopes[scope]);
    let sd = stats::sample_sd(&all);
    if scope == 0 && weighting == Weighting::Macro {
        let strata: Vec<&compare::Scope> = scopes[1..].iter().filter(|s| !s.members.is_empty()).collect();
        let h = strata.len() as f64;
        let var: f64 = strata
            .iter()
            .map(|s| {
                let own = stats::sample_sd(&vals(s));
                let sd_h = if s.members.len() >= 2 { own } else { sd };
                sd_h * sd_h / s.members.len() as f64
            })
            .sum();
        let se = var.sqrt() / h;
        return if se > 0.0 { se } else { f64::NAN };
    }
    let se = sd / (all.len() as f64).sqrt();
    if se > 0.0 {
        se
    } else {
        f64::NAN
    }
}

/// The quantiles and null spread of the test a scope of `n` queries gets.
struct Test {
    sign_flip: bool,
    /// Quantile at the check's level and at the power, Student's t with
    /// n - 1 degrees of freedom.
    q_alpha: f64,
    q_power: f64,
    weight2: f64,
}

impl Test {
    fn new(configured: TestKind, n: usize, alpha_m: f64) -> Test {
        let df = (n.max(2) - 1) as f64;
        Test {
            sign_flip: compare::test_for(configured, n) == TestKind::Randomization,
            q_alpha: stats::t_quantile(1.0 - alpha_m, df),
            q_power: stats::t_quantile(POWER, df),
            weight2: 0.0,
        }
    }

    /// The spread of the test's reference distribution when the mean of the
    /// tested deltas (the deltas plus `shift`) is `shift - drop`: the
    /// resampled spread itself for the bootstrap and the t-test; for the
    /// sign-flip test, whose flips are about 0, the uncentred second moment,
    /// which the drop inflates by `weight2 (drop - shift)^2` (Lehmann &
    /// Romano 2005, ch. 15.2, on the randomization distribution under an
    /// alternative).
    fn null_se(&self, model: &DropSpread, drop: f64, shift: f64) -> f64 {
        let se = model.se(drop);
        if self.sign_flip {
            (se * se + self.weight2 * (drop - shift).powi(2)).sqrt()
        } else {
            se
        }
    }
}

/// `(drop - reach) / se` for a check that fails when the observed drop
/// exceeds `reach`: the power is about `Phi_t` of this; +inf when nothing
/// varies and the drop is past the reach.
fn z_of(drop: f64, reach: f64, se: f64) -> f64 {
    if se > 0.0 {
        (drop - reach) / se
    } else if drop > reach {
        f64::INFINITY
    } else {
        f64::NEG_INFINITY
    }
}

/// How far past 80% power a true drop `drop` is, in quantile units
/// (>= 0: caught at least 80% of the time), under each decision mode:
/// - margin test: fails when the observed drop exceeds
///   tolerance + q(1-alpha_m) se_null;
/// - significant-drop: when it exceeds max(tolerance, q(1-alpha_m) se_null);
/// - non-inferiority: when it exceeds tolerance - q(1-alpha_m) se_null;
/// - threshold: when it exceeds the tolerance.
fn margin_at(decision: Decision, t: &Test, tol: f64, model: &DropSpread, drop: f64) -> f64 {
    let se = model.se(drop);
    let reach = match decision {
        Decision::ConfidentDrop => tol + t.q_alpha * t.null_se(model, drop, tol),
        Decision::SignificantDrop => tol.max(t.q_alpha * t.null_se(model, drop, 0.0)),
        Decision::NonInferiority => tol - t.q_alpha * t.null_se(model, drop, tol),
        Decision::Threshold => tol,
    };
    z_of(drop, reach, se) - t.q_power
}

/// The smallest drop in `[from, max_drop]` caught with 80% probability:
/// a grid for the first crossing, then bisection.
fn solve(decision: Decision, t: &Test, tol: f64, model: &DropSpread, from: f64) -> Option<f64> {
    let hi = model.max_drop;
    if hi.is_nan() || hi <= from {
        return None;
    }
    let f = |x: f64| margin_at(decision, t, tol, model, x);
    let steps = 512;
    let mut prev = from;
    if f(from) >= 0.0 {
        return Some(from);
    }
    for i in 1..=steps {
        let x = from + (hi - from) * f64::from(i) / f64::from(steps);
        if f(x) >= 0.0 {
            let (mut lo, mut up) = (prev, x);
            for _ in 0..60 {
                let mid = 0.5 * (lo + up);
                if f(mid) >= 0.0 {
                    up = mid;
                } else {
                    lo = mid;
                }
            }
            return Some(up);
        }
        prev = x;
    }
    None
}

/// Whether a scope of `n` queries under the configured test can reach a
/// p below `level`: the sign-flip test's smallest p is 2^-n (every query
/// lost); a scope of fewer than 2 queries shows no variability under any
/// test.
pub fn can_reach(test: TestKind, n: usize, level: f64) -> bool {
    if n < 2 {
        return false;
    }
    if compare::test_for(test, n) != TestKind::Randomization {
        return true;
    }
    0.5f64.powi(i32::try_from(n).unwrap_or(i32::MAX)) < level
}

/// Power of one check under `decision` at the corrected level `alpha_m`
/// (the level a check that must stand on its own faces: alpha/m for Holm's
/// first step and Bonferroni, alpha without correction; the caller passes
/// it for the family in force), for the test a scope of this size gets,
/// with the spread a drop adds ([`DropSpread`]) and Student's t quantiles
/// for n - 1 degrees of freedom.
///
/// `mde` solves "caught with 80% probability" (Cohen 1988, ch. 2, with the
/// variance a function of the drop): the margin test's
/// `drop = tol + q(1-alpha_m) se_null(drop) + q(0.8) se(drop)`, and the
/// analogues in [`margin_at`]. `queries_needed` is the smallest scope, in the
/// same proportions, that would make the check enforceable.
pub fn power(decision: Decision, test: TestKind, tol: f64, model: &DropSpread, alpha_m: f64) -> Power {
    let n = model.n;
    let mut t = Test::new(test, n, alpha_m);
    t.weight2 = model.weight2;
    let can_fail_alone = can_reach(test, n, alpha_m);
    let mut out = Power {
        se: model.se(0.0),
        se_no_change: model.se(0.0),
        spread: model.spread,
        mde: None,
        enforceable: false,
        queries_needed: None,
        unchanged_fails: None,
        can_fail_alone,
    };
    if n == 0 || !t.q_alpha.is_finite() || !t.q_power.is_finite() || !tol.is_finite() || tol < 0.0 {
        return out;
    }
    out.enforceable = enforceable(decision, test, tol, model, alpha_m);
    if !out.enforceable && tol > 0.0 {
        out.queries_needed = queries_needed(decision, test, tol, model, alpha_m);
    }
    let se0 = model.se(0.0);
    match decision {
        Decision::NonInferiority => {
            let reach = tol - t.q_alpha * t.null_se(model, 0.0, tol);
            out.unchanged_fails = Some(stats::normal_cdf(z_of(0.0, reach, se0)));
        }
        Decision::Threshold => {
            out.unchanged_fails = Some(stats::normal_cdf(z_of(0.0, tol, se0)));
        }
        _ => {}
    }
    if !can_fail_alone && decision != Decision::Threshold {
        return out;
    }
    let from = if decision == Decision::NonInferiority {
        0.0
    } else {
        tol
    };
    out.mde = solve(decision, &t, tol, model, from)
        // An unchanged run already fails that often: no drop to name.
        .filter(|&m| !(decision == Decision::NonInferiority && m <= 0.0));
    if let Some(m) = out.mde {
        out.se = model.se(m);
    }
    out
}

/// SPEC's "enforceable": a drop of twice the tolerance caught 80% of the
/// time (any significant drop, at tolerance 0); for non-inferiority, an
/// unchanged run failing at most 20%; for threshold, at most alpha_m.
fn enforceable(decision: Decision, test: TestKind, tol: f64, model: &DropSpread, alpha_m: f64) -> bool {
    if !can_reach(test, model.n, alpha_m) && decision != Decision::Threshold {
        return false;
    }
    let mut t = Test::new(test, model.n, alpha_m);
    t.weight2 = model.weight2;
    match decision {
        Decision::ConfidentDrop | Decision::SignificantDrop => {
            tol == 0.0
                || (2.0 * tol <= model.max_drop && margin_at(decision, &t, tol, model, 2.0 * tol) >= 0.0)
        }
        Decision::NonInferiority => {
            let reach = tol - t.q_alpha * t.null_se(model, 0.0, tol);
            z_of(0.0, reach, model.se(0.0)) <= -t.q_power
        }
        Decision::Threshold => z_of(0.0, tol, model.se(0.0)) <= -t.q_alpha,
    }
}

/// The smallest scope size (strata in the same proportions) at which the
/// check would be enforceable; `None` beyond 10^12 queries.
fn queries_needed(
    decision: Decision,
    test: TestKind,
    tol: f64,
    model: &DropSpread,
    alpha_m: f64,
) -> Option<usize> {
    let ok = |n: usize| enforceable(decision, test, tol, &model.scaled(n), alpha_m);
    let mut hi = model.n.max(2);
    while !ok(hi) {
        if hi > 1_000_000_000_000 {
            return None;
        }
        hi = hi.saturating_mul(2);
    }
    let mut lo = hi / 2;
    while lo + 1 < hi {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi.max(2))
}

/// Resamples behind the joint chance that an unchanged retriever fails
/// (Monte Carlo error under 0.011 at any rate).
const UNCHANGED_RESAMPLES: u32 = 2000;

/// Under `non-inferiority` and `threshold`, the chance that an unchanged
/// retriever fails each check and any: one stratified resample of the
/// retriever's per-query deltas serves every gated check, so the checks'
/// correlation (an overall check and its strata share queries, two metrics
/// share a query) is kept, where `1 - prod(1 - p_j)` assumed independence
/// and overstated it (98% printed, 0.907 measured; issue 26). The deltas
/// are centred per stratum (no true change) and scaled to the churn of
/// [`drop_spread`] (a drop's own spread taken out). Each check's
/// `unchanged_fails` becomes its share of the same resamples.
#[allow(clippy::too_many_arguments)]
pub(super) fn unchanged_fails_jointly(
    checks: &mut [Check],
    settings: &GateSettings,
    metrics: &[Metric],
    base: &[Option<Vec<f64>>],
    cur: &[Vec<f64>],
    scopes: &[compare::Scope],
    alpha_m: f64,
) -> Option<f64> {
    if !matches!(settings.decision, Decision::NonInferiority | Decision::Threshold) {
        return None;
    }
    let strata: Vec<usize> = (1..scopes.len())
        .filter(|&s| !scopes[s].members.is_empty())
        .collect();
    let gated: Vec<usize> = (0..checks.len())
        .filter(|&i| checks[i].tolerance.is_some())
        .collect();
    let mut columns: Vec<usize> = Vec::new();
    for &i in &gated {
        if let Some(mi) = metrics.iter().position(|m| *m == checks[i].cmp.metric) {
            if base[mi].is_some() && !columns.contains(&mi) {
                columns.push(mi);
            }
        }
    }
    let queries: Vec<usize> = strata
        .iter()
        .flat_map(|&s| scopes[s].members.iter().copied())
        .collect();
    if columns.is_empty() || queries.is_empty() {
        return None;
    }
    let k = columns.len();
    // Query-major values, queries in stratum order; each stratum's deltas
    // centred and scaled to its churn.
    let mut values = vec![0.0; queries.len() * k];
    let mut labels = Vec::with_capacity(queries.len());
    let mut row = 0;
    for (g, &s) in strata.iter().enumerate() {
        let members = &scopes[s].members;
        for (j, &mi) in columns.iter().enumerate() {
            let (Some(b), c) = (base[mi].as_ref(), &cur[mi]) else {
                continue;
            };
            let d: Vec<f64> = (0..c.len()).map(|q| c[q] - b[q]).collect();
            let mean = members.iter().map(|&q| d[q]).sum::<f64>() / members.len() as f64;
            let m2 = members.iter().map(|&q| (d[q] - mean).powi(2)).sum::<f64>() / members.len() as f64;
            let (churn, _) = churn_and_slope(members, &d, b, c);
            let scale = if m2 > 0.0 {
                (churn / m2).sqrt().min(1.0)
            } else {
                0.0
            };
            for (r, &q) in members.iter().enumerate() {
                values[(row + r) * k + j] = (d[q] - mean) * scale;
            }
        }
        row += members.len();
        labels.extend(std::iter::repeat_n(g as u32, members.len()));
    }
    let groups = stats::Strata::from_labels(&labels);
    let total = queries.len() as f64;
    let h = strata.len() as f64;
    let mut watches = Vec::new();
    let mut watched = Vec::new();
    for &i in &gated {
        let c = &checks[i];
        let Some(j) = columns.iter().position(|&mi| metrics[mi] == c.cmp.metric) else {
            continue;
        };
        let weights: Vec<f64> = if c.cmp.stratum == "all" {
            strata
                .iter()
                .map(|&s| match settings.weighting {
                    Weighting::Macro => 1.0 / h,
                    Weighting::Micro => scopes[s].members.len() as f64 / total,
                })
                .collect()
        } else {
            strata
                .iter()
                .map(|&s| f64::from(u8::from(scopes[s].name == c.cmp.stratum)))
                .collect()
        };
        let tol = c.tolerance.unwrap_or(0.0);
        // Fails when the statistic falls below this: threshold at -tol;
        // non-inferiority unless the lower bound clears -tol.
        let limit = if settings.decision == Decision::Threshold {
            -tol
        } else {
            let n = c.cmp.n;
            let q = stats::t_quantile(1.0 - alpha_m, (n.max(2) - 1) as f64);
            let sign_flip = compare::test_for(settings.test, n) == TestKind::Randomization;
            let se = c.power.se_no_change;
            let w2 = if c.cmp.stratum == "all" && settings.weighting == Weighting::Macro {
                strata
                    .iter()
                    .map(|&s| 1.0 / (scopes[s].members.len() as f64 * h * h))
                    .sum()
            } else {
                1.0 / n.max(1) as f64
            };
            let null = if sign_flip {
                (se * se + w2 * tol * tol).sqrt()
            } else {
                se
            };
            -tol + q * null
        };
        watches.push(stats::Watch {
            column: j,
            weights,
            limit,
        });
        watched.push(i);
    }
    let (each, any) =
        stats::chance_any_below(&values, k, &groups, &watches, UNCHANGED_RESAMPLES, settings.seed);
    for (&i, p) in watched.iter().zip(each) {
        checks[i].power.unchanged_fails = Some(p);
    }
    Some(any)
}

/// One warning, not one per check, when the gold set is too small for the
/// tolerances (details per check in the report's JSON), and for the modes
/// that fail unchanged retrievers, how often they would (`family`: the joint
/// chance from [`unchanged_fails_jointly`]).
pub(super) fn warn_power(
    checks: &[Check],
    settings: &GateSettings,
    family: Option<f64>,
    warnings: &mut Vec<String>,
) {
    let gated: Vec<&Check> = checks.iter().filter(|c| c.tolerance.is_some()).collect();
    let weak: Vec<&&Check> = gated.iter().filter(|c| !c.power.enforceable).collect();
    if weak.is_empty() {
        return;
    }
    let worst = weak
        .iter()
        .filter_map(|c| c.power.queries_needed.map(|n| (n, *c)))
        .max_by_key(|(n, _)| *n);
    let need = worst.map(|(n, c)| need_words(n, c)).unwrap_or_default();
    match settings.decision {
        Decision::ConfidentDrop | Decision::SignificantDrop => warnings.push(format!(
            "{} of {} checks cannot enforce their tolerance with this gold set: a drop of twice the tolerance would pass more than 20% of the time (mde column){need}; add queries or widen those tolerances",
            weak.len(),
            gated.len()
        )),
        Decision::NonInferiority | Decision::Threshold => {
            let family = family.unwrap_or_else(|| {
                gated.iter().filter_map(|c| c.power.unchanged_fails).fold(0.0, f64::max)
            });
            warnings.push(format!(
                "{}: an unchanged retriever would fail about {:.0}% of the time with this gold set (its checks resampled together from this run's churn; {} of {} checks too noisy for their tolerance){need}; add queries, widen the tolerances, or use confident-drop",
                settings.decision.name(),
                100.0 * family,
                weak.len(),
                gated.len()
            ));
        }
    }
}

/// "X on S would need about N queries (it has M)": under `labels: ppi`
/// the count is of verified queries ([`ppi_power`]) and is set against the
/// verified count, and a count beyond the scope's queries says the gold
/// set itself must grow (verifying every query would not be enough).
fn need_words(n: usize, c: &Check) -> String {
    let Some(e) = &c.ppi else {
        return format!(
            "; {} on {} would need about {n} queries (it has {})",
            c.cmp.metric, c.cmp.stratum, c.cmp.n
        );
    };
    let beyond = if n > c.cmp.n {
        format!(
            ", more than the {} queries it has: verifying them all would not do, the gold set must grow",
            c.cmp.n
        )
    } else {
        String::new()
    };
    format!(
        "; {} on {} would need about {n} verified queries (it has {}){beyond}",
        c.cmp.metric, c.cmp.stratum, e.n_verified
    )
}

/// The level the most lenient step of the correction holds a check to:
/// alpha for Holm's last step (and without correction), alpha/m for
/// Bonferroni.
pub fn lenient_alpha(settings: &GateSettings, alpha_m: f64) -> f64 {
    match settings.correction {
        Correction::Bonferroni => alpha_m,
        Correction::Holm | Correction::None => settings.alpha,
    }
}

/// Names the scopes where not even a loss on every query reaches the
/// level a check is held to (the sign-flip test's smallest p is 2^-n; a
/// scope under 2 queries shows no variability): "can never fail" only when
/// no step of the correction could let it (2^-n >= alpha under Holm, alpha/m
/// under Bonferroni); a scope that can fail only at a later Holm step, once
/// other checks have failed, is named apart, in those words.
pub(super) fn warn_too_small(
    checks: &[Check],
    settings: &GateSettings,
    alpha_m: f64,
    warnings: &mut Vec<String>,
) {
    if settings.decision == Decision::Threshold {
        return;
    }
    let lenient = lenient_alpha(settings, alpha_m);
    let m = checks.iter().filter(|c| c.tolerance.is_some()).count();
    let (mut never, mut later): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    for c in checks.iter().filter(|c| c.tolerance.is_some()) {
        let name = format!(
            "{} ({} quer{})",
            c.cmp.stratum,
            c.cmp.n,
            if c.cmp.n == 1 { "y" } else { "ies" }
        );
        let list = if !can_reach(c.test, c.cmp.n, lenient) {
            &mut never
        } else if !can_reach(c.test, c.cmp.n, alpha_m) {
            &mut later
        } else {
            continue;
        };
        if !list.contains(&name) {
            list.push(name);
        }
    }
    let need = |level: f64| (1.0 / level).log2().floor() as usize + 1;
    let ni = settings.decision == Decision::NonInferiority;
    if !never.is_empty() {
        let effect = if ni {
            "its checks fail whatever the results"
        } else {
            "its checks can never fail"
        };
        warnings.push(format!(
            "too small to gate at all: {}: even a drop on every query cannot reach p < {:.4} (the most lenient level of {} over {m} checks), so {effect}; give each at least {} queries, or gate it in the overall check only",
            never.join(", "),
            lenient,
            settings.correction.name(),
            need(lenient)
        ));
    }
    if !later.is_empty() {
        let effect = if ni {
            "its checks pass only once other checks have passed at earlier Holm steps"
        } else {
            "its checks fail only once other checks have failed at earlier Holm steps, never on their own (no mde)"
        };
        warnings.push(format!(
            "too small to gate on its own: {}: even a drop on every query cannot reach p < {:.4} (alpha over {m} checks, Holm's first step), so {effect}; give each at least {} queries",
            later.join(", "),
            alpha_m,
            need(alpha_m)
        ));
    }
}

/// What a `labels: ppi` check can detect, in the normal approximation
/// SPEC gives the mde on the PPI standard error (the test that decides is
/// the configured one on per-query PPI terms, [`crate::ppi::test_delta`]).
/// Read as a normal test, each decision fails when the estimate lies below
/// a fixed point, and the chance of that under a true drop D is a normal
/// tail:
/// - confident-drop fails when `d + z_a se < -tol`: mde `tol + (z_a + z_b) se`;
/// - significant-drop when `-d > tol` and `d + z_a se < 0`, i.e. `d <
///   -max(tol, z_a se)`: mde `max(tol, z_a se) + z_b se`;
/// - non-inferiority when `d - z_a se <= -tol`: mde `tol - (z_a - z_b) se`,
///   and an unchanged run fails with probability `Phi(z_a - tol / se)`;
/// - threshold when `-d > tol`: mde `tol + z_b se`, unchanged `Phi(-tol / se)`,
///
/// with `z_a` at the level the check is held to (`alpha_m`) and `z_b` at
/// [`POWER`]. "Queries needed" becomes the verified queries that would make
/// the check enforceable (mde within twice the tolerance; for
/// non-inferiority also an unchanged run failing at most 20%, for threshold
/// at most alpha), by [`crate::stats::ppi::PpiCombined::verified_needed`].
pub fn ppi_power(
    decision: Decision,
    tol: f64,
    e: &crate::stats::ppi::PpiCombined,
    alpha: f64,
    alpha_m: f64,
) -> Power {
    let za = stats::z_quantile(1.0 - alpha_m);
    let zb = stats::z_quantile(POWER);
    let mde_at = |se: f64| -> Option<f64> {
        let m = match decision {
            Decision::ConfidentDrop => tol + (za + zb) * se,
            Decision::SignificantDrop => tol.max(za * se) + zb * se,
            Decision::NonInferiority => tol - (za - zb) * se,
            Decision::Threshold => tol + zb * se,
        };
        (m.is_finite() && m > 0.0).then_some(m)
    };
    let unchanged_at = |se: f64| -> Option<f64> {
        match decision {
            Decision::NonInferiority => Some(stats::normal_cdf(za - tol / se)),
            Decision::Threshold => Some(stats::normal_cdf(-tol / se)),
            _ => None,
        }
    };
    let ok = |se: f64| -> bool {
        let unchanged = unchanged_at(se);
        mde_at(se).is_some_and(|m| m <= 2.0 * tol)
            && match decision {
                Decision::NonInferiority => unchanged.is_some_and(|u| u <= 0.2),
                Decision::Threshold => unchanged.is_some_and(|u| u <= alpha),
                _ => true,
            }
    };
    let se = e.se;
    let usable = se.is_finite() && se >= 0.0 && tol.is_finite() && tol >= 0.0 && za.is_finite();
    let mut out = Power {
        se,
        se_no_change: se,
        spread: if se > 0.0 { Spread::Churn } else { Spread::Nothing },
        mde: None,
        enforceable: false,
        queries_needed: None,
        unchanged_fails: None,
        can_fail_alone: se.is_finite(),
    };
    if !usable {
        return out;
    }
    out.unchanged_fails = unchanged_at(se);
    out.mde = mde_at(se).filter(|_| out.unchanged_fails.is_none_or(|u| u <= 0.8));
    out.enforceable = ok(se);
    if !out.enforceable && tol > 0.0 {
        // ok() holds for every se below some point: find it by bisection.
        let (mut lo, mut hi) = (0.0, se.max(tol));
        if ok(lo) {
            for _ in 0..100 {
                let mid = 0.5 * (lo + hi);
                if ok(mid) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            out.queries_needed = e.verified_needed(lo);
        }
    }
    out
}
