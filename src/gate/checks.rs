//! Checks: which (metric, scope) pairs are checked under which rule, their
//! tolerances, and the configured test run on each scope.

use std::collections::HashMap;

use super::pair::Paired;
use super::Current;
use crate::compare;
use crate::config::{Correction, GateSettings, StrataSel, TestKind};
use crate::metrics::Metric;
use crate::prepared::Prepared;
use crate::stats::Inference;

/// One (metric, scope) pair to check, with the rule that gates it.
pub(super) struct Want {
    pub(super) metric: usize,
    pub(super) scope: usize,
    pub(super) rule: Option<usize>,
}

/// Which (metric, scope) pairs are checked, with which rule: each rule's
/// scopes, then every metric without a rule on the overall scope (shown,
/// not gated).
pub(super) fn plan(
    gold: &crate::gold::GoldSet,
    settings: &GateSettings,
    metrics: &[Metric],
    scopes: &[compare::Scope],
    warnings: &mut Vec<String>,
) -> Vec<Want> {
    let mut wants: Vec<Want> = Vec::new();
    for (ri, rule) in settings.rules.iter().enumerate() {
        let Some(mi) = metrics.iter().position(|m| *m == rule.metric) else {
            continue;
        };
        let scope_ids: Vec<usize> = match &rule.strata {
            StrataSel::All => (0..scopes.len()).collect(),
            StrataSel::Overall => vec![0],
            StrataSel::List(names) => {
                let mut ids = Vec::new();
                for n in names {
                    let id = if n == "overall" || n == "all" {
                        Some(0)
                    } else {
                        scopes.iter().position(|s| &s.name == n)
                    };
                    match id {
                        Some(i) => ids.push(i),
                        None => warnings.push(format!(
                            "rule for {}: stratum `{}` is not in the gold set; strata: {}",
                            rule.metric,
                            crate::escape::terminal(n),
                            crate::escape::terminal(&gold.strata.join(", "))
                        )),
                    }
                }
                ids
            }
        };
        for si in scope_ids {
            if scopes[si].members.is_empty() {
                continue;
            }
            if !wants.iter().any(|w| w.metric == mi && w.scope == si) {
                wants.push(Want {
                    metric: mi,
                    scope: si,
                    rule: Some(ri),
                });
            }
        }
    }
    for (mi, _) in metrics.iter().enumerate() {
        if !wants.iter().any(|w| w.metric == mi) && !scopes[0].members.is_empty() {
            wants.push(Want {
                metric: mi,
                scope: 0,
                rule: None,
            });
        }
    }
    wants
}

/// One (metric, scope)'s test, kept whole: the decision reads its p at
/// the check's margin and its bound at the level the correction assigns.
pub(super) struct Tested {
    pub(super) inference: Inference,
    pub(super) test: TestKind,
    pub(super) monte_carlo: bool,
}

/// The level a single check is held to once alpha is shared across `m`
/// gated checks: alpha/m (Bonferroni, and Holm's strictest step, which a
/// check that must stand on its own faces), or alpha without correction.
pub fn corrected_alpha(settings: &GateSettings, m: usize) -> f64 {
    match settings.correction {
        Correction::None => settings.alpha,
        Correction::Holm | Correction::Bonferroni => settings.alpha / m.max(1) as f64,
    }
}

/// Each want's tolerance in the units it is tested in (`None`: not gated,
/// or no baseline values to test against): metric units, or for a
/// geometric mean, whose values arrive as logs, the log-scale margin of
/// the drop the rule allows ([`compare::geo`]).
pub(super) fn tolerances(
    settings: &GateSettings,
    metrics: &[Metric],
    paired: &Paired,
    scopes: &[compare::Scope],
    wants: &[Want],
) -> Vec<Option<f64>> {
    wants
        .iter()
        .map(|w| {
            let base = paired.values[w.metric].as_ref()?;
            let ri = w.rule?;
            let mean = compare::scope_mean(base, scopes, w.scope, settings.weighting);
            let tolerance = &settings.rules[ri].tolerance;
            Some(if compare::geo::is_geometric(&metrics[w.metric]) {
                let gm = mean.exp();
                compare::geo::log_tolerance(tolerance.resolve(gm), gm)
            } else {
                tolerance.resolve(mean)
            })
        })
        .collect()
}

/// The configured test on every scope that has a check, all metrics of a
/// scope at once (one draw of resampled indices serves them all).
pub(super) fn test(
    prep: &Prepared,
    settings: &GateSettings,
    cur: &Current,
    paired: &Paired,
    scopes: &[compare::Scope],
    wants: &[Want],
) -> HashMap<(usize, usize), Tested> {
    let usable: Vec<usize> = (0..cur.scores.metrics.len())
        .filter(|&m| paired.values[m].is_some())
        .collect();
    let geometric: Vec<bool> = usable
        .iter()
        .map(|&m| compare::geo::is_geometric(&cur.scores.metrics[m]))
        .collect();
    let mut tested = HashMap::new();
    let base_of = |m: usize, q: usize| paired.values[m].as_ref().map_or(0.0, |v| v[q]);
    let cur_of = |m: usize, q: usize| cur.scores.values[m][q];
    let mut overall: Option<compare::ScopeTest> = None;
    for (si, scope) in scopes.iter().enumerate() {
        if scope.members.is_empty() || !wants.iter().any(|w| w.scope == si) {
            continue;
        }
        // A stratum holding every query (a gold set with one stratum) is
        // the overall scope again: one group, the same deltas, the same
        // draws, so the same outcomes bit for bit; not tested twice.
        let t = match &overall {
            Some(t0) if si > 0 && scope.members == scopes[0].members => t0.clone(),
            _ => compare::test_scope(
                &prep.gold, scopes, si, &usable, &geometric, &base_of, &cur_of, settings, true,
            ),
        };
        for (k, &mi) in usable.iter().enumerate() {
            tested.insert(
                (mi, si),
                Tested {
                    inference: t.inferences[k].clone(),
                    test: t.tests[k],
                    monte_carlo: t.monte_carlo[k],
                },
            );
        }
        if si == 0 {
            overall = Some(t);
        }
    }
    tested
}
