//! Power: the drop each check can detect, the standard error behind it,
//! and the warnings when the gold set is too small for the tolerances.

use super::checks::{corrected_alpha, plan};
use super::pair::stored_values;
use super::Check;
use crate::baseline::Baseline;
use crate::compare;
use crate::config::{Decision, GateSettings, TestKind, Weighting};
use crate::metrics::Metric;
use crate::stats;

/// Power at which the minimum detectable drop is stated.
pub const POWER: f64 = 0.8;

/// How the minimum detectable drop was found, for the reader of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    /// The spread of the per-query deltas.
    Deltas,
    /// No delta varies yet: the baseline's per-query spread in the scope
    /// stands in (a run-to-run correlation of 0.5).
    Baseline,
    /// Every baseline value in the scope is equal too: the spread of the
    /// metric over the whole gold set stands in.
    Overall,
    /// No spread anywhere: only the floor the query count imposes.
    Floor,
}

impl Spread {
    pub fn name(self) -> &'static str {
        match self {
            Spread::Deltas => "deltas",
            Spread::Baseline => "baseline",
            Spread::Overall => "overall",
            Spread::Floor => "floor",
        }
    }
}

/// What a check can detect, at the level and in the mode the decision uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Power {
    /// Standard error of the scope's statistic.
    pub se: f64,
    pub spread: Spread,
    /// The true drop failed with 80% probability; `None` when the mode
    /// fails even an unchanged retriever that often (non-inferiority on a
    /// small gold set) or nothing is known.
    pub mde: Option<f64>,
    /// False when a drop of twice the tolerance (for `threshold`: no drop
    /// at all) would get the wrong verdict more than 20% (alpha) of the time.
    pub enforceable: bool,
    /// Queries in this scope that would make it enforceable.
    pub queries_needed: Option<usize>,
    /// Estimated chance that an unchanged retriever fails this check
    /// (`non-inferiority` and `threshold`, where it can be large).
    pub unchanged_fails: Option<f64>,
}

impl Power {
    /// Before the family is known: nothing claimed.
    pub fn unknown() -> Power {
        Power {
            se: f64::NAN,
            spread: Spread::Floor,
            mde: None,
            enforceable: false,
            queries_needed: None,
            unchanged_fails: None,
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
/// as the gate computes it for an unchanged run (no delta varies, so the
/// baseline's spread stands in), so `gold stats` and `gate` agree.
pub fn baseline_power(
    gold: &crate::gold::GoldSet,
    settings: &GateSettings,
    b: &Baseline,
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
    let m = wants.iter().filter(|w| w.rule.is_some()).count();
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
            let (se, spread) = spread_se(&zeros, &values, &scopes, w.scope, settings.weighting);
            let n = scopes[w.scope].members.len();
            Some(PlannedPower {
                metric: metrics[w.metric],
                stratum: scopes[w.scope].name.clone(),
                n,
                tolerance,
                power: power(settings.decision, tolerance, se, spread, n, alpha_m),
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

/// Power of one check: the drop the decision in force catches with 80%
/// probability, at the corrected level `alpha_m`, from the statistic's
/// standard error `se` (normal approximation; Cohen 1988, ch. 2):
/// - margin test: tolerance + (z(1-alpha_m) + z(0.8)) se;
/// - significant-drop: max(tolerance, z(1-alpha_m) se) + z(0.8) se;
/// - non-inferiority: tolerance + (z(0.8) - z(1-alpha_m)) se, or none when
///   that is not positive (an unchanged retriever fails 80% of the time);
/// - threshold: tolerance + z(0.8) se.
///
/// Without any spread (`se` not positive), only the floor the query count
/// imposes is known: k equal losses of at most 1 reach the exact sign-flip
/// p = 2^-k, so no drop below k/n can be detected, k = floor(log2(1/alpha_m)) + 1.
pub fn power(decision: Decision, tol: f64, se: f64, spread: Spread, n: usize, alpha_m: f64) -> Power {
    let za = stats::z_quantile(1.0 - alpha_m);
    let zp = stats::z_quantile(POWER);
    let none = Power {
        se,
        spread,
        mde: None,
        enforceable: false,
        queries_needed: None,
        unchanged_fails: None,
    };
    if n == 0 || !za.is_finite() || !zp.is_finite() || !tol.is_finite() {
        return none;
    }
    if !(se.is_finite() && se > 0.0) {
        let k = (1.0 / alpha_m).log2().floor() + 1.0;
        let step = k / n as f64;
        let mde = match decision {
            Decision::ConfidentDrop => Some(tol + step),
            Decision::SignificantDrop => Some(tol.max(step)),
            Decision::Threshold => Some(tol + 1.0 / n as f64),
            Decision::NonInferiority => None,
        };
        return Power {
            spread: Spread::Floor,
            mde,
            enforceable: tol == 0.0 || step <= tol,
            ..none
        };
    }
    // Queries that would bring z * se down to the tolerance: se scales as
    // 1 / sqrt(n) under either weighting.
    let needed = |z: f64| -> Option<usize> {
        if tol <= 0.0 {
            return None;
        }
        let q = (n as f64 * (z * se / tol).powi(2)).ceil();
        (q.is_finite() && q < 1e12).then_some((q as usize).max(2))
    };
    let normal_sf = |x: f64| 1.0 - stats::normal_cdf(x);
    let (mde, enforceable, queries_needed, unchanged_fails) = match decision {
        Decision::ConfidentDrop | Decision::SignificantDrop => {
            let mde = if decision == Decision::ConfidentDrop {
                tol + (za + zp) * se
            } else {
                tol.max(za * se) + zp * se
            };
            let ok = tol == 0.0 || (za + zp) * se <= tol;
            (Some(mde), ok, if ok { None } else { needed(za + zp) }, None)
        }
        Decision::NonInferiority => {
            let mde = tol + (zp - za) * se;
            let fails = stats::normal_cdf(za - tol / se);
            let ok = tol / se >= za + zp;
            (
                (mde > 0.0).then_some(mde),
                ok,
                if ok { None } else { needed(za + zp) },
                Some(fails),
            )
        }
        Decision::Threshold => {
            let fails = normal_sf(tol / se);
            let ok = tol >= za * se;
            (
                Some(tol + zp * se),
                ok,
                if ok { None } else { needed(za) },
                Some(fails),
            )
        }
    };
    Power {
        se,
        spread,
        mde,
        enforceable,
        queries_needed,
        unchanged_fails,
    }
}

/// The spread behind a check's power: its deltas, else the baseline's
/// values in the scope, else the metric over the whole gold set.
pub fn spread_se(
    deltas: &[f64],
    baseline: &[f64],
    scopes: &[compare::Scope],
    scope: usize,
    weighting: Weighting,
) -> (f64, Spread) {
    let se = standard_error(deltas, scopes, scope, weighting);
    if se.is_finite() {
        return (se, Spread::Deltas);
    }
    let se = standard_error(baseline, scopes, scope, weighting);
    if se.is_finite() {
        return (se, Spread::Baseline);
    }
    // The whole gold set's spread, scaled to this scope's size.
    let sd = stats::sample_sd(&scopes[0].members.iter().map(|&q| baseline[q]).collect::<Vec<_>>());
    let se = sd / (scopes[scope].members.len() as f64).sqrt();
    if se.is_finite() && se > 0.0 {
        (se, Spread::Overall)
    } else {
        (f64::NAN, Spread::Floor)
    }
}

/// One warning, not one per check, when the gold set is too small for the
/// tolerances (details per check in the report's JSON), and for the modes
/// that fail unchanged retrievers, how often they would.
pub(super) fn warn_power(checks: &[Check], settings: &GateSettings, warnings: &mut Vec<String>) {
    let gated: Vec<&Check> = checks.iter().filter(|c| c.tolerance.is_some()).collect();
    let weak: Vec<&&Check> = gated.iter().filter(|c| !c.power.enforceable).collect();
    if weak.is_empty() {
        return;
    }
    let worst = weak
        .iter()
        .filter_map(|c| c.power.queries_needed.map(|n| (n, *c)))
        .max_by_key(|(n, _)| *n);
    let need = worst
        .map(|(n, c)| {
            format!(
                "; {} on {} would need about {n} queries (it has {})",
                c.cmp.metric, c.cmp.stratum, c.cmp.n
            )
        })
        .unwrap_or_default();
    match settings.decision {
        Decision::ConfidentDrop | Decision::SignificantDrop => warnings.push(format!(
            "{} of {} checks cannot enforce their tolerance with this gold set: a drop of twice the tolerance would pass more than 20% of the time (mde column){need}; add queries or widen those tolerances",
            weak.len(),
            gated.len()
        )),
        Decision::NonInferiority | Decision::Threshold => {
            let fails: Vec<f64> = gated.iter().filter_map(|c| c.power.unchanged_fails).collect();
            let family = 1.0 - fails.iter().map(|p| 1.0 - p).product::<f64>();
            warnings.push(format!(
                "{}: an unchanged retriever would fail about {:.0}% of the time with this gold set ({} of {} checks too noisy for their tolerance){need}; add queries, widen the tolerances, or use confident-drop",
                settings.decision.name(),
                100.0 * family,
                weak.len(),
                gated.len()
            ));
        }
    }
}

/// Names the scopes so small that no result can fail (or, under
/// non-inferiority, pass) them: the exact sign-flip p of n equal losses is
/// 2^-n, which must be below the corrected level.
pub(super) fn warn_too_small(
    checks: &[Check],
    settings: &GateSettings,
    m: usize,
    warnings: &mut Vec<String>,
) {
    if settings.decision == Decision::Threshold {
        return;
    }
    let alpha_m = corrected_alpha(settings, m);
    let mut small: Vec<String> = Vec::new();
    for c in checks
        .iter()
        .filter(|c| c.tolerance.is_some() && c.test != TestKind::Bootstrap)
    {
        let p_min = 0.5f64.powi(i32::try_from(c.cmp.n).unwrap_or(i32::MAX));
        let name = format!(
            "{} ({} quer{})",
            c.cmp.stratum,
            c.cmp.n,
            if c.cmp.n == 1 { "y" } else { "ies" }
        );
        if p_min >= alpha_m && !small.contains(&name) {
            small.push(name);
        }
    }
    if small.is_empty() {
        return;
    }
    let need = (1.0 / alpha_m).log2().floor() as usize + 1;
    let effect = if settings.decision == Decision::NonInferiority {
        "its checks fail whatever the results"
    } else {
        "its checks can never fail"
    };
    warnings.push(format!(
        "too small to gate at all: {}: even a drop on every query cannot reach p < {:.4} (alpha over {m} checks), so {effect}; give each at least {need} queries, or gate it in the overall check only",
        small.join(", "),
        alpha_m
    ));
}
