//! The gate: rules become checks, checks get paired statistics, and the
//! verdict is decided here, once. Reports only render a [`GateOutcome`]
//! (criterion re-implements its threshold in two renderers; uv decides
//! `exit_status()` apart from `render()`: we follow uv).
//!
//! Per retriever: pair the current run with its baseline by query id (a
//! baseline scored against an older gold set is re-scored from its stored
//! ranking first), test every (metric, scope) check with the configured
//! test, correct across the retriever's checks (Holm by default), and apply
//! the decision rule of SPEC "Gate rules".

use std::collections::HashMap;

use crate::baseline::Baseline;
use crate::compare::{self, Comparison};
use crate::config::{Correction, Decision, GateSettings, StrataSel, TestKind};
use crate::eval::{mean_of, Scores};
use crate::judge::Ranking;
use crate::metrics::{Kind, Metric};
use crate::prepared::Prepared;
use crate::stats::{self, Alternative, TestOutcome};

/// Power at which the minimum detectable drop is stated.
pub const POWER: f64 = 0.8;

/// A fall in judged@k coverage larger than this is worth a warning.
pub const COVERAGE_DROP_WARN: f64 = 0.05;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckVerdict {
    Fail,
    Pass,
    Improved,
    NotGated,
}

impl CheckVerdict {
    pub fn name(self) -> &'static str {
        match self {
            CheckVerdict::Fail => "fail",
            CheckVerdict::Pass => "pass",
            CheckVerdict::Improved => "improved",
            CheckVerdict::NotGated => "not-gated",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// The comparison; `p_value` is the one-sided p for a drop.
    pub cmp: Comparison,
    /// One-sided (1 - alpha) bounds of delta.
    pub lower_bound: f64,
    pub upper_bound: f64,
    /// One-sided p-value for a rise, and its corrected value.
    pub p_rise: f64,
    pub p_rise_adjusted: f64,
    /// Absolute tolerance in metric units (`None` when not gated).
    pub tolerance: Option<f64>,
    /// Smallest drop this check detects with 80% power.
    pub mde: f64,
    pub test: TestKind,
    pub verdict: CheckVerdict,
}

/// A query that a gated metric found (value > 0) in the baseline and lost.
#[derive(Debug, Clone, PartialEq)]
pub struct Flip {
    pub query_id: String,
    pub stratum: String,
    pub text: Option<String>,
    pub lost: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BaselineInfo {
    pub created_at: String,
    pub commit: Option<String>,
    pub note: Option<String>,
}

#[derive(Debug, Clone)]
pub struct RetrieverOutcome {
    pub name: String,
    pub run: String,
    pub baseline: Option<BaselineInfo>,
    pub checks: Vec<Check>,
    pub flips: Vec<Flip>,
    /// Queries the baseline missed (every gated metric 0) and now finds.
    pub gained: usize,
    pub added_queries: Vec<String>,
    pub removed_queries: Vec<String>,
    pub gold_changed: bool,
    pub warnings: Vec<String>,
}

impl RetrieverOutcome {
    pub fn verdict(&self) -> Verdict {
        if self.checks.iter().any(|c| c.verdict == CheckVerdict::Fail) {
            Verdict::Fail
        } else {
            Verdict::Pass
        }
    }
}

#[derive(Debug, Clone)]
pub struct GateOutcome {
    pub settings: GateSettings,
    pub retrievers: Vec<RetrieverOutcome>,
    /// About the gold set, for every retriever.
    pub warnings: Vec<String>,
}

impl GateOutcome {
    pub fn verdict(&self) -> Verdict {
        if self.retrievers.iter().any(|r| r.verdict() == Verdict::Fail) {
            Verdict::Fail
        } else {
            Verdict::Pass
        }
    }

    /// SPEC "Exit codes": 0 pass, 1 regression.
    pub fn exit_code(&self) -> u8 {
        match self.verdict() {
            Verdict::Pass => 0,
            Verdict::Fail => 1,
        }
    }
}

/// The current side of a comparison: a run judged on the current gold set.
pub struct Current<'a> {
    pub name: &'a str,
    pub run: String,
    pub rankings: &'a [Ranking],
    pub scores: &'a Scores,
}

/// Baseline values aligned with the current gold set: `values[m][q]`,
/// `None` where the baseline has no value for that query or metric.
struct Paired {
    values: Vec<Option<Vec<f64>>>,
    /// Per current query: is it in the baseline?
    in_baseline: Vec<bool>,
    /// judged@k of the baseline's stored ranking, for the coverage warning.
    judged: Option<Vec<f64>>,
}

/// Aligns a baseline with the current gold set, re-scoring its stored
/// rankings when the gold set, the relevance level or the metric set changed.
fn pair(
    prep: &Prepared,
    b: &Baseline,
    metrics: &[Metric],
    judged_metric: Metric,
    warnings: &mut Vec<String>,
) -> Paired {
    let gold = &prep.gold;
    let stored: HashMap<&str, usize> = b
        .queries
        .iter()
        .enumerate()
        .map(|(i, q)| (q.id.as_str(), i))
        .collect();
    let in_baseline: Vec<bool> = gold
        .queries
        .iter()
        .map(|q| stored.contains_key(q.id.as_str()))
        .collect();
    let same_gold = b.gold_fingerprint == prep.fingerprint && b.relevance_level == prep.relevance_level;
    let covers = |m: &Metric| match (b.depth, m.depth()) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(d), Some(k)) => k <= d,
    };
    let rescored: Vec<Ranking> = gold
        .queries
        .iter()
        .enumerate()
        .map(|(i, q)| match stored.get(q.id.as_str()) {
            Some(&s) => {
                Ranking::from_ordered(b.queries[s].ranking.iter().map(String::as_str), &prep.labels[i])
            }
            None => Ranking::default(),
        })
        .collect();
    let mut values = Vec::with_capacity(metrics.len());
    for m in metrics {
        let stored_idx = b.metric_index(m);
        let v = match stored_idx {
            Some(mi) if same_gold => Some(
                gold.queries
                    .iter()
                    .map(|q| {
                        stored
                            .get(q.id.as_str())
                            .map_or(0.0, |&s| b.queries[s].values[mi])
                    })
                    .collect(),
            ),
            _ if covers(m) => Some(
                rescored
                    .iter()
                    .zip(&prep.contexts)
                    .map(|(r, c)| m.compute(r, c))
                    .collect(),
            ),
            _ => {
                warnings.push(format!(
                    "the baseline has no {m} and stores rankings only to depth {}: its checks are skipped; record a new baseline to gate it",
                    b.depth.map_or("all".to_string(), |d| d.to_string())
                ));
                None
            }
        };
        values.push(v);
    }
    let judged = covers(&judged_metric).then(|| {
        rescored
            .iter()
            .zip(&prep.contexts)
            .map(|(r, c)| judged_metric.compute(r, c))
            .collect()
    });
    Paired {
        values,
        in_baseline,
        judged,
    }
}

fn adjust(p: &[f64], c: Correction) -> Vec<f64> {
    match c {
        Correction::Holm => stats::holm(p),
        Correction::Bonferroni => stats::bonferroni(p),
        Correction::None => p.to_vec(),
    }
}

/// Compares one retriever's current run with its baseline: the steps below,
/// in order. Without a baseline there is nothing to compare, and the
/// retriever passes (the command decides whether that is an error).
pub fn evaluate(
    prep: &Prepared,
    settings: &GateSettings,
    cur: &Current,
    baseline: Option<&Baseline>,
) -> RetrieverOutcome {
    let mut out = RetrieverOutcome {
        name: cur.name.to_string(),
        run: cur.run.clone(),
        baseline: None,
        checks: Vec::new(),
        flips: Vec::new(),
        gained: 0,
        added_queries: Vec::new(),
        removed_queries: Vec::new(),
        gold_changed: false,
        warnings: Vec::new(),
    };
    let Some(b) = baseline else {
        return out;
    };
    out.baseline = Some(BaselineInfo {
        created_at: b.created_at.clone(),
        commit: b.commit.clone(),
        note: b.note.clone(),
    });
    let metrics = &cur.scores.metrics;
    let judged_metric = coverage_metric(metrics);
    let paired = pair(prep, b, metrics, judged_metric, &mut out.warnings);
    gold_changes(prep, b, &paired, &mut out);

    // Scopes over the paired queries only.
    let paired_idx: Vec<usize> = (0..prep.gold.len()).filter(|&i| paired.in_baseline[i]).collect();
    let scopes = compare::scopes(&prep.gold, &paired_idx);
    let wants = plan(&prep.gold, settings, metrics, &scopes, &mut out.warnings);
    let tested = test(prep, settings, cur, &paired, &scopes, &wants);
    let mut checks = summarize(
        settings,
        cur,
        &paired,
        &scopes,
        &wants,
        &tested,
        &mut out.warnings,
    );
    correct(&mut checks, settings.correction);
    decide(&mut checks, settings);
    out.checks = checks;
    let (flips, gained) = flips(prep, settings, cur, &paired, &paired_idx);
    out.flips = flips;
    out.gained = gained;
    coverage(prep, cur, &paired, &paired_idx, judged_metric, &mut out.warnings);
    warn_added_removed(&mut out);
    out
}

/// The judged@k that watches coverage: at the deepest cutoff in use.
fn coverage_metric(metrics: &[Metric]) -> Metric {
    Metric::new(
        Kind::Judged,
        Some(crate::metrics::max_depth(metrics).unwrap_or(10)),
    )
}

/// Records whether the gold set changed since the baseline, and which
/// queries were added or removed.
fn gold_changes(prep: &Prepared, b: &Baseline, paired: &Paired, out: &mut RetrieverOutcome) {
    let gold = &prep.gold;
    out.gold_changed = b.gold_fingerprint != prep.fingerprint;
    if out.gold_changed {
        out.warnings.push(format!(
            "the gold set changed since the baseline was recorded ({}): the stored ranking was re-scored against the current labels",
            b.created_at
        ));
    }
    out.added_queries = gold
        .queries
        .iter()
        .zip(&paired.in_baseline)
        .filter(|(_, inb)| !**inb)
        .map(|(q, _)| q.id.clone())
        .collect();
    let current_ids: std::collections::HashSet<&str> = gold.queries.iter().map(|q| q.id.as_str()).collect();
    out.removed_queries = b
        .queries
        .iter()
        .filter(|q| !current_ids.contains(q.id.as_str()))
        .map(|q| q.id.clone())
        .collect();
}

/// One (metric, scope) pair to check, with the rule that gates it.
struct Want {
    metric: usize,
    scope: usize,
    rule: Option<usize>,
}

/// Which (metric, scope) pairs are checked, with which rule: each rule's
/// scopes, then every metric without a rule on the overall scope (shown,
/// not gated).
fn plan(
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
                            "rule for {}: stratum `{n}` is not in the gold set; strata: {}",
                            rule.metric,
                            gold.strata.join(", ")
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

/// The configured test on every scope that has a check, all metrics of a
/// scope at once (one draw of resampled indices serves them all).
fn test(
    prep: &Prepared,
    settings: &GateSettings,
    cur: &Current,
    paired: &Paired,
    scopes: &[compare::Scope],
    wants: &[Want],
) -> HashMap<(usize, usize), TestOutcome> {
    let usable: Vec<usize> = (0..cur.scores.metrics.len())
        .filter(|&m| paired.values[m].is_some())
        .collect();
    let mut tested: HashMap<(usize, usize), TestOutcome> = HashMap::new();
    let base_of = |m: usize, q: usize| paired.values[m].as_ref().map_or(0.0, |v| v[q]);
    let cur_of = |m: usize, q: usize| cur.scores.values[m][q];
    for (si, scope) in scopes.iter().enumerate() {
        if scope.members.is_empty() || !wants.iter().any(|w| w.scope == si) {
            continue;
        }
        let results = compare::test_scope(&prep.gold, scopes, si, &usable, &base_of, &cur_of, settings);
        for (k, &m) in usable.iter().enumerate() {
            tested.insert((m, si), results[k].clone());
        }
    }
    tested
}

/// One [`Check`] per tested want: means, the test's numbers, the tolerance
/// and the minimum detectable drop, with one warning naming the checks whose
/// tolerance the gold set is too small to enforce. Verdicts come later.
fn summarize(
    settings: &GateSettings,
    cur: &Current,
    paired: &Paired,
    scopes: &[compare::Scope],
    wants: &[Want],
    tested: &HashMap<(usize, usize), TestOutcome>,
    warnings: &mut Vec<String>,
) -> Vec<Check> {
    let metrics = &cur.scores.metrics;
    let mut checks: Vec<Check> = Vec::new();
    let mut underpowered: Vec<String> = Vec::new();
    for w in wants {
        let Some(t) = tested.get(&(w.metric, w.scope)) else {
            continue;
        };
        let scope = &scopes[w.scope];
        let base_vals = paired.values[w.metric]
            .as_ref()
            .expect("tested metrics have baseline values");
        let baseline_mean = compare::scope_mean(base_vals, scopes, w.scope, settings.weighting);
        let current_mean =
            compare::scope_mean(&cur.scores.values[w.metric], scopes, w.scope, settings.weighting);
        let d: Vec<f64> = scope
            .members
            .iter()
            .map(|&q| cur.scores.values[w.metric][q] - base_vals[q])
            .collect();
        let mut sd = stats::sample_sd(&d);
        if sd.is_nan() || sd <= 0.0 {
            // Identical rankings say nothing about the spread a real change
            // would have; the baseline's own spread is a fair stand-in.
            let b: Vec<f64> = scope.members.iter().map(|&q| base_vals[q]).collect();
            sd = stats::sample_sd(&b);
        }
        let mde = stats::min_detectable_drop(sd, scope.members.len(), settings.alpha, POWER);
        let tolerance = w
            .rule
            .map(|ri| settings.rules[ri].tolerance.resolve(baseline_mean));
        if let Some(tol) = tolerance {
            if mde > tol && mde.is_finite() {
                let needed = stats::queries_needed(sd, tol, settings.alpha, POWER);
                underpowered.push(format!(
                    "{} {} {:.4} > {:.4}{}",
                    metrics[w.metric],
                    scope.name,
                    mde,
                    tol,
                    needed.map(|n| format!(" (~{n} queries)")).unwrap_or_default()
                ));
            }
        }
        checks.push(Check {
            cmp: Comparison {
                metric: metrics[w.metric],
                stratum: scope.name.clone(),
                n: scope.members.len(),
                baseline: baseline_mean,
                current: current_mean,
                delta: t.mean_delta,
                ci_low: t.ci_low,
                ci_high: t.ci_high,
                p_value: t.p(Alternative::Less),
                p_adjusted: f64::NAN,
            },
            lower_bound: t.lower_bound,
            upper_bound: t.upper_bound,
            p_rise: t.p(Alternative::Greater),
            p_rise_adjusted: f64::NAN,
            tolerance,
            mde,
            test: settings.test,
            verdict: CheckVerdict::NotGated,
        });
    }
    if !underpowered.is_empty() {
        let gated = checks.iter().filter(|c| c.tolerance.is_some()).count();
        warnings.push(format!(
            "the gold set is too small to enforce {} of {gated} tolerances: the smallest drop it detects at 80% power (mde) exceeds the tolerance for {}",
            underpowered.len(),
            underpowered.join("; ")
        ));
    }
    checks
}

/// The multiplicity correction across the retriever's gated checks, for
/// drops and for rises alike; a check that is not gated keeps its own p.
fn correct(checks: &mut [Check], correction: Correction) {
    let gated: Vec<usize> = (0..checks.len())
        .filter(|&i| checks[i].tolerance.is_some())
        .collect();
    let p_drop: Vec<f64> = gated.iter().map(|&i| checks[i].cmp.p_value).collect();
    let p_rise: Vec<f64> = gated.iter().map(|&i| checks[i].p_rise).collect();
    let adj_drop = adjust(&p_drop, correction);
    let adj_rise = adjust(&p_rise, correction);
    for (k, &i) in gated.iter().enumerate() {
        checks[i].cmp.p_adjusted = adj_drop[k];
        checks[i].p_rise_adjusted = adj_rise[k];
    }
    for c in checks.iter_mut().filter(|c| c.tolerance.is_none()) {
        c.cmp.p_adjusted = c.cmp.p_value;
    }
}

/// Each gated check's verdict under the decision rule of SPEC "Gate rules".
fn decide(checks: &mut [Check], settings: &GateSettings) {
    for c in checks.iter_mut() {
        let Some(tol) = c.tolerance else {
            continue;
        };
        let drop = -c.cmp.delta;
        let fail = match settings.decision {
            Decision::SignificantDrop => drop > tol && c.cmp.p_adjusted < settings.alpha,
            Decision::ConfidentDrop => c.upper_bound < -tol,
            Decision::NonInferiority => c.lower_bound <= -tol,
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

/// Queries that a gated metric found (value > 0) in the baseline and lost,
/// in stratum order, and how many the baseline missed on every gated metric
/// and the current run finds.
fn flips(
    prep: &Prepared,
    settings: &GateSettings,
    cur: &Current,
    paired: &Paired,
    paired_idx: &[usize],
) -> (Vec<Flip>, usize) {
    let gold = &prep.gold;
    let metrics = &cur.scores.metrics;
    let gated_metrics: Vec<usize> = (0..metrics.len())
        .filter(|&m| paired.values[m].is_some() && settings.rules.iter().any(|r| r.metric == metrics[m]))
        .collect();
    let mut flips = Vec::new();
    let mut gained = 0;
    for &q in paired_idx {
        let mut lost = Vec::new();
        let mut any_base = false;
        let mut any_cur = false;
        for &m in &gated_metrics {
            let bv = paired.values[m].as_ref().map_or(0.0, |v| v[q]);
            let cv = cur.scores.values[m][q];
            any_base |= bv > 0.0;
            any_cur |= cv > 0.0;
            if bv > 0.0 && cv == 0.0 {
                lost.push(metrics[m].name());
            }
        }
        if !lost.is_empty() {
            flips.push(Flip {
                query_id: gold.queries[q].id.clone(),
                stratum: gold.stratum_name(q).to_string(),
                text: gold.queries[q].text.clone(),
                lost,
            });
        }
        if !any_base && any_cur {
            gained += 1;
        }
    }
    flips.sort_by(|a, b| {
        let sa = gold.strata.iter().position(|s| *s == a.stratum);
        let sb = gold.strata.iter().position(|s| *s == b.stratum);
        sa.cmp(&sb)
    });
    (flips, gained)
}

/// Warns when the new results moved away from what the gold set labels:
/// a fall in judged@k makes a measured drop less trustworthy.
fn coverage(
    prep: &Prepared,
    cur: &Current,
    paired: &Paired,
    paired_idx: &[usize],
    judged_metric: Metric,
    warnings: &mut Vec<String>,
) {
    let Some(bj) = &paired.judged else {
        return;
    };
    let cj: Vec<f64> = cur
        .rankings
        .iter()
        .zip(&prep.contexts)
        .map(|(r, c)| judged_metric.compute(r, c))
        .collect();
    let b_mean = mean_of(bj, paired_idx.iter().copied());
    let c_mean = mean_of(&cj, paired_idx.iter().copied());
    if b_mean - c_mean > COVERAGE_DROP_WARN {
        warnings.push(format!(
            "{judged_metric} fell from {b_mean:.4} to {c_mean:.4}: more of the new top results carry no label, and unlabeled chunks may hide relevant ones; label them before trusting a drop"
        ));
    }
}

fn warn_added_removed(out: &mut RetrieverOutcome) {
    for (ids, verb) in [
        (
            &out.added_queries,
            "added to the gold set since the baseline; left out of the paired test",
        ),
        (
            &out.removed_queries,
            "removed from the gold set since the baseline",
        ),
    ] {
        if ids.is_empty() {
            continue;
        }
        let names: Vec<&str> = ids.iter().map(String::as_str).collect();
        out.warnings.push(format!(
            "{} quer{} {verb}: {}",
            ids.len(),
            if ids.len() == 1 { "y was" } else { "ies were" },
            crate::diag::name_some(&names, 5)
        ));
    }
}
