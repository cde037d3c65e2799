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

use std::collections::{HashMap, HashSet};

use crate::baseline::Baseline;
use crate::compare::{self, Comparison};
use crate::config::{Correction, Decision, GateSettings, StrataSel, TestKind, Weighting};
use crate::eval::{mean_of, Scores};
use crate::judge::Ranking;
use crate::metrics::{Kind, Metric};
use crate::prepared::Prepared;
use crate::stages::{self, Fate, Lost, LostIn};
use crate::stats::{self, TestOutcome};

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

/// The null hypothesis a check's `p_value` is about, per decision mode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Hypothesis {
    /// H0 "drop <= margin": the margin test (`confident-drop`, margin =
    /// tolerance) and `significant-drop` / `threshold` / not gated (0).
    DropAtMost(f64),
    /// H0 "drop >= tolerance": non-inferiority; rejecting it passes.
    DropAtLeast(f64),
}

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

#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// The comparison: `delta` and the two-sided (1 - alpha) CI; `p_value`
    /// is the one-sided p of [`Check::hypothesis`] and `p_adjusted` its
    /// corrected value (NaN when not gated).
    pub cmp: Comparison,
    pub hypothesis: Hypothesis,
    /// One-sided bounds of delta at `bound_level` (1 - alpha/m, the level
    /// Holm's first step and Bonferroni use; 1 - alpha without correction).
    pub lower_bound: f64,
    pub upper_bound: f64,
    pub bound_level: f64,
    /// One-sided p-value for a drop below 0 (what `significant-drop` uses).
    pub p_drop: f64,
    /// One-sided p-value for a rise, and its corrected value.
    pub p_rise: f64,
    pub p_rise_adjusted: f64,
    /// Absolute tolerance in metric units (`None` when not gated).
    pub tolerance: Option<f64>,
    pub power: Power,
    /// The test that ran: a small scope gets the sign-flip test in place of
    /// the bootstrap.
    pub test: TestKind,
    /// Whether the p-values carry Monte Carlo error (bootstrap, or a
    /// randomization test with too many non-zero deltas to enumerate).
    pub monte_carlo: bool,
    pub verdict: CheckVerdict,
}

impl Check {
    /// Minimum detectable drop, for reports (`None`: see [`Power::mde`]).
    pub fn mde(&self) -> Option<f64> {
        self.power.mde
    }
}

/// A query that a gated metric found (value > 0) in the baseline and lost.
#[derive(Debug, Clone, PartialEq)]
pub struct Flip {
    pub query_id: String,
    pub stratum: String,
    pub text: Option<String>,
    pub lost: Vec<String>,
    /// For a two-stage retriever, the stage that lost it (SPEC's rule, see
    /// [`stages::lost_in`]); `None` without candidates, or when the
    /// baseline's run held no relevant chunk to follow.
    pub lost_in: Option<LostIn>,
}

/// One scope's queries by stage at the final cutoff, in the baseline
/// (re-scored on the current gold set; `None` when it stores no candidate
/// lists) and now, over the paired queries.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopeLost {
    pub scope: String,
    pub n: usize,
    pub baseline: Option<Lost>,
    pub current: Lost,
}

/// A final metric beside what a perfect reranker of the current candidates
/// would reach, in one scope.
#[derive(Debug, Clone, PartialEq)]
pub struct CeilingRow {
    pub metric: Metric,
    pub scope: String,
    pub current: f64,
    pub ceiling: f64,
    /// current / ceiling; `None` when the ceiling is 0.
    pub ratio: Option<f64>,
}

/// A stage that lost more queries than in the baseline: `more` overall,
/// and the strata where its count grew, the largest growth first.
#[derive(Debug, Clone, PartialEq)]
pub struct StageLoss {
    pub stage: LostIn,
    pub more: usize,
    pub strata: Vec<(String, usize)>,
}

/// The two stages of a reranked retriever, baseline vs current.
#[derive(Debug, Clone, PartialEq)]
pub struct StageOutcome {
    /// The current candidate list.
    pub candidates: String,
    pub cutoff: Option<u32>,
    /// `all` first, then each stratum.
    pub lost: Vec<ScopeLost>,
    pub ceilings: Vec<CeilingRow>,
    /// What the summary leads with: the larger loss first; empty when no
    /// stage lost queries, or the baseline has no candidate lists.
    pub losses: Vec<StageLoss>,
    /// Queries whose final results include chunks absent from their
    /// candidates, with those ids.
    pub absent: Vec<(String, Vec<String>)>,
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
    /// Resamples behind the p-values: the configured B, or more where a
    /// borderline result was re-tested.
    pub resamples: u32,
    pub flips: Vec<Flip>,
    /// Queries where some gated metric went from miss (0) to hit: the
    /// mirror image of [`Flip`].
    pub gained: usize,
    pub added_queries: Vec<String>,
    pub removed_queries: Vec<String>,
    pub gold_changed: bool,
    pub warnings: Vec<String>,
    /// Present when the retriever has a candidate list.
    pub stages: Option<StageOutcome>,
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
    /// The candidate list of a two-stage retriever.
    pub candidates: Option<CurrentCandidates<'a>>,
}

/// The candidate list the current run was reranked from.
pub struct CurrentCandidates<'a> {
    pub path: String,
    pub rankings: &'a [Ranking],
    /// Every candidate id, per gold query.
    pub ids: &'a [Vec<String>],
}

/// Baseline values aligned with the current gold set: `values[m][q]`,
/// `None` where the baseline has no value for that query or metric.
struct Paired {
    values: Vec<Option<Vec<f64>>>,
    /// Per current query: is it in the baseline?
    in_baseline: Vec<bool>,
    /// judged@k of the baseline's stored ranking, for the coverage warning.
    judged: Option<Vec<f64>>,
    /// The baseline's stored final rankings judged on the current gold set.
    rescored: Vec<Ranking>,
    /// Its stored candidate lists judged likewise, when it has them and the
    /// current run has candidates too.
    rescored_candidates: Option<Vec<Ranking>>,
}

/// Aligns a baseline with the current gold set, re-scoring its stored
/// rankings when the gold set, the relevance level or the metric set changed.
fn pair(
    prep: &Prepared,
    b: &Baseline,
    metrics: &[Metric],
    judged_metric: Metric,
    two_stage: bool,
    warnings: &mut Vec<String>,
) -> Paired {
    let gold = &prep.gold;
    let stored = b.positions();
    let in_baseline: Vec<bool> = gold
        .queries
        .iter()
        .map(|q| stored.contains_key(q.id.as_str()))
        .collect();
    let spans = gold.has_spans();
    let same_gold = b.gold_fingerprint == prep.fingerprint()
        && b.relevance_level == prep.relevance_level
        && (!spans || b.span_coverage == Some(prep.span_coverage));
    // Span labels are judged by where the ranked chunks lie: a baseline
    // re-scores against them only when it stored the places of its ranked
    // chunks (one recorded while the gold set had spans).
    let locatable = !spans
        || b.queries
            .iter()
            .all(|q| q.ranking.is_empty() || !q.spans.is_empty());
    let covers = |m: &Metric| {
        locatable
            && match (b.depth, m.depth()) {
                (None, _) => true,
                (Some(_), None) => false,
                (Some(d), Some(k)) => k <= d,
            }
    };
    let rescored: Vec<Ranking> = gold
        .queries
        .iter()
        .enumerate()
        .map(|(i, q)| match stored.get(q.id.as_str()) {
            Some(&s) if !b.queries[s].spans.is_empty() => Ranking::from_located(
                b.queries[s]
                    .ranking
                    .iter()
                    .zip(&b.queries[s].spans)
                    .map(|(id, p)| (id.as_str(), p.as_ref().map(|p| p.located()))),
                &prep.labels[i],
            ),
            Some(&s) => {
                Ranking::from_ordered(b.queries[s].ranking.iter().map(String::as_str), &prep.labels[i])
            }
            None => Ranking::default(),
        })
        .collect();
    let cand_locatable = !spans
        || b.queries
            .iter()
            .all(|q| q.candidates.as_ref().is_none_or(|c| c.is_empty()) || !q.candidate_spans.is_empty());
    let rescored_candidates: Option<Vec<Ranking>> =
        ((two_stage || metrics.iter().any(Metric::is_candidates)) && b.has_candidates() && cand_locatable)
            .then(|| {
                gold.queries
                    .iter()
                    .enumerate()
                    .map(|(i, q)| {
                        match stored
                            .get(q.id.as_str())
                            .and_then(|&s| b.queries[s].candidates.as_ref())
                        {
                            Some(c) => {
                                let s = stored[q.id.as_str()];
                                let places = &b.queries[s].candidate_spans;
                                if places.is_empty() {
                                    Ranking::from_ordered(c.iter().map(String::as_str), &prep.labels[i])
                                } else {
                                    Ranking::from_located(
                                        c.iter()
                                            .zip(places)
                                            .map(|(id, p)| (id.as_str(), p.as_ref().map(|p| p.located()))),
                                        &prep.labels[i],
                                    )
                                }
                            }
                            None => Ranking::default(),
                        }
                    })
                    .collect()
            });
    let mut values = Vec::with_capacity(metrics.len());
    for m in metrics {
        let stored_idx = b.metric_index(m);
        if m.is_candidates() {
            // Candidate lists are stored whole: any candidates metric can
            // be re-scored from them.
            let v = match (stored_idx, &rescored_candidates) {
                (Some(mi), _) if same_gold => Some(
                    gold.queries
                        .iter()
                        .map(|q| {
                            stored
                                .get(q.id.as_str())
                                .map_or(0.0, |&s| b.queries[s].values[mi])
                        })
                        .collect(),
                ),
                (_, Some(rc)) => Some(
                    rc.iter()
                        .zip(&prep.contexts)
                        .map(|(r, c)| m.compute(r, c))
                        .collect(),
                ),
                _ if !cand_locatable => {
                    warnings.push(format!(
                        "{m} cannot be re-scored: the gold set has span labels and the baseline stores no locations of its candidates; its checks are skipped; record a new baseline to gate it"
                    ));
                    None
                }
                _ => {
                    warnings.push(format!(
                        "the baseline stores no candidate lists, so {m} has nothing to compare with: its checks are skipped; record a new baseline (it stores both stages) to gate it"
                    ));
                    None
                }
            };
            values.push(v);
            continue;
        }
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
                let depth = b.depth.map_or("all".to_string(), |d| d.to_string());
                warnings.push(match stored_idx {
                    Some(_) if !locatable => format!(
                        "the gold set or relevance level changed since the baseline, and {m} cannot be re-scored: the gold set has span labels and the baseline stores no locations of its ranked chunks; its checks are skipped; record a new baseline to gate it"
                    ),
                    Some(_) => format!(
                        "the gold set or relevance level changed since the baseline, and {m} cannot be re-scored from rankings stored to depth {depth}: its checks are skipped; record a new baseline to gate it (or set baseline_depth: all)"
                    ),
                    None if !locatable => format!(
                        "the baseline has no {m}, and cannot be re-scored: the gold set has span labels and the baseline stores no locations of its ranked chunks; its checks are skipped; record a new baseline to gate it"
                    ),
                    None => format!(
                        "the baseline has no {m} and stores rankings only to depth {depth}: its checks are skipped; record a new baseline to gate it"
                    ),
                });
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
        rescored,
        rescored_candidates,
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
        resamples: settings.resamples,
        flips: Vec::new(),
        gained: 0,
        added_queries: Vec::new(),
        removed_queries: Vec::new(),
        gold_changed: false,
        warnings: Vec::new(),
        stages: None,
    };
    let Some(b) = baseline else {
        if let Some(c) = &cur.candidates {
            let all: Vec<usize> = (0..prep.gold.len()).collect();
            let scopes = compare::scopes(&prep.gold, &all);
            out.stages = Some(stage_outcome(prep, settings, cur, c, None, &scopes));
        }
        return out;
    };
    out.baseline = Some(BaselineInfo {
        created_at: b.created_at.clone(),
        commit: b.commit.clone(),
        note: b.note.clone(),
    });
    let metrics = &cur.scores.metrics;
    let judged_metric = coverage_metric(metrics);
    let paired = pair(
        prep,
        b,
        metrics,
        judged_metric,
        cur.candidates.is_some(),
        &mut out.warnings,
    );
    gold_changes(prep, b, &paired, &mut out);

    // Scopes over the paired queries only.
    let paired_idx: Vec<usize> = (0..prep.gold.len()).filter(|&i| paired.in_baseline[i]).collect();
    let scopes = compare::scopes(&prep.gold, &paired_idx);
    let wants = plan(&prep.gold, settings, metrics, &scopes, &mut out.warnings);
    let mut run = settings.clone();
    let mut checks = decided_checks(prep, &run, cur, &paired, &scopes, &wants);
    if let Some(more) = borderline_resamples(&checks, &run) {
        out.warnings.push(format!(
            "a result lay within Monte Carlo error of alpha at B={}: re-tested with B={more}",
            run.resamples
        ));
        run.resamples = more;
        checks = decided_checks(prep, &run, cur, &paired, &scopes, &wants);
    }
    out.resamples = run.resamples;
    warn_power(&checks, &run, &mut out.warnings);
    warn_too_small(&checks, &run, &mut out.warnings);
    out.checks = checks;
    let cutoff = stages::default_cutoff(metrics);
    let (flips, gained) = flips(prep, settings, cur, b, cutoff, &paired, &paired_idx);
    out.flips = flips;
    out.gained = gained;
    if let Some(c) = &cur.candidates {
        let base = baseline_fates(prep, b, cutoff, &paired);
        out.stages = Some(stage_outcome(prep, settings, cur, c, base.as_deref(), &scopes));
    }
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
    out.gold_changed = b.gold_fingerprint != prep.fingerprint();
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
    // Pairing is by id; a query whose text changed since the baseline is
    // paired with the answer to another question.
    let stored: HashMap<&str, &crate::baseline::StoredQuery> =
        b.queries.iter().map(|q| (q.id.as_str(), q)).collect();
    let reworded: Vec<&str> = gold
        .queries
        .iter()
        .filter(|q| {
            let was = stored.get(q.id.as_str()).and_then(|s| s.text_sha.as_deref());
            matches!((was, q.text.as_deref()), (Some(h), Some(t)) if crate::baseline::text_sha(t) != h)
        })
        .map(|q| q.id.as_str())
        .collect();
    if !reworded.is_empty() {
        out.warnings.push(format!(
            "{} paired quer{} changed text since the baseline ({}): each is compared with the baseline's results for the old wording; record a new baseline once the new texts are final",
            reworded.len(),
            if reworded.len() == 1 { "y" } else { "ies" },
            crate::diag::name_some(&reworded, 5)
        ));
    }
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
            let values: Vec<f64> = gold
                .queries
                .iter()
                .map(|q| {
                    stored
                        .get(q.id.as_str())
                        .map_or(0.0, |&s| b.queries[s].values[mi])
                })
                .collect();
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

/// Both tests of one (metric, scope): the plain one at alpha (delta, CI,
/// p for a drop and for a rise) and the one against the margin at the
/// corrected level (the decision's p and the bounds).
struct Tested {
    plain: TestOutcome,
    margin: TestOutcome,
    test: TestKind,
    monte_carlo: bool,
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

/// Tests, corrects and decides every want.
fn decided_checks(
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
    let mut checks = summarize(settings, cur, paired, scopes, wants, &tolerances, &tested, m);
    correct(&mut checks, settings.correction);
    decide(&mut checks, settings);
    checks
}

/// Each want's tolerance in metric units (`None`: not gated, or no
/// baseline values to test against).
fn tolerances(
    settings: &GateSettings,
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
            Some(settings.rules[ri].tolerance.resolve(mean))
        })
        .collect()
}

/// The configured test on every scope that has a check, all metrics of a
/// scope at once (one draw of resampled indices serves them all): plain,
/// and shifted by each gated metric's margin for the margin modes.
#[allow(clippy::too_many_arguments)]
fn test(
    prep: &Prepared,
    settings: &GateSettings,
    cur: &Current,
    paired: &Paired,
    scopes: &[compare::Scope],
    wants: &[Want],
    tolerances: &[Option<f64>],
    m: usize,
) -> HashMap<(usize, usize), Tested> {
    let usable: Vec<usize> = (0..cur.scores.metrics.len())
        .filter(|&m| paired.values[m].is_some())
        .collect();
    let mut tested = HashMap::new();
    let base_of = |m: usize, q: usize| paired.values[m].as_ref().map_or(0.0, |v| v[q]);
    let cur_of = |m: usize, q: usize| cur.scores.values[m][q];
    let margin_alpha = corrected_alpha(settings, m);
    let uses_margin = matches!(
        settings.decision,
        Decision::ConfidentDrop | Decision::NonInferiority
    );
    let mut overall: Option<(Vec<f64>, compare::ScopeTest, compare::ScopeTest)> = None;
    for (si, scope) in scopes.iter().enumerate() {
        if scope.members.is_empty() || !wants.iter().any(|w| w.scope == si) {
            continue;
        }
        let shift: Vec<f64> = usable
            .iter()
            .map(|&mi| {
                wants
                    .iter()
                    .zip(tolerances)
                    .find(|(w, _)| w.metric == mi && w.scope == si)
                    .and_then(|(_, t)| *t)
                    .filter(|_| uses_margin)
                    .unwrap_or(0.0)
            })
            .collect();
        let variants = [
            compare::Variant {
                alpha: settings.alpha,
                shift: &[],
            },
            compare::Variant {
                alpha: margin_alpha,
                shift: &shift,
            },
        ];
        // A stratum holding every query (a gold set with one stratum) is
        // the overall scope again: one group, the same deltas, the same
        // draws, so the same outcomes bit for bit; not tested twice.
        let (plain, margin) = match &overall {
            Some((s0, p0, m0)) if si > 0 && scope.members == scopes[0].members && *s0 == shift => {
                (p0.clone(), m0.clone())
            }
            _ => {
                let mut both = compare::test_scope_variants(
                    &prep.gold, scopes, si, &usable, &base_of, &cur_of, settings, &variants,
                );
                let (margin, plain) = (both.swap_remove(1), both.swap_remove(0));
                (plain, margin)
            }
        };
        for (k, &mi) in usable.iter().enumerate() {
            tested.insert(
                (mi, si),
                Tested {
                    plain: plain.outcomes[k].clone(),
                    margin: margin.outcomes[k].clone(),
                    test: plain.test,
                    monte_carlo: plain.monte_carlo,
                },
            );
        }
        if si == 0 {
            overall = Some((shift, plain, margin));
        }
    }
    tested
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

/// One [`Check`] per tested want: means, the test's numbers, the tolerance
/// and the power. Verdicts come later.
#[allow(clippy::too_many_arguments)]
fn summarize(
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
fn borderline_resamples(checks: &[Check], settings: &GateSettings) -> Option<u32> {
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

/// One warning, not one per check, when the gold set is too small for the
/// tolerances (details per check in the report's JSON), and for the modes
/// that fail unchanged retrievers, how often they would.
fn warn_power(checks: &[Check], settings: &GateSettings, warnings: &mut Vec<String>) {
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
fn warn_too_small(checks: &[Check], settings: &GateSettings, warnings: &mut Vec<String>) {
    if settings.decision == Decision::Threshold {
        return;
    }
    let m = checks.iter().filter(|c| c.tolerance.is_some()).count();
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

/// Queries that a gated metric found (value > 0) in the baseline and lost,
/// in stratum order, and, defined the same way the other way round, how
/// many queries some gated metric missed in the baseline and now finds.
fn flips(
    prep: &Prepared,
    settings: &GateSettings,
    cur: &Current,
    b: &Baseline,
    cutoff: Option<u32>,
    paired: &Paired,
    paired_idx: &[usize],
) -> (Vec<Flip>, usize) {
    // Only a two-stage retriever's flips look up the baseline's rankings.
    let stored = cur.candidates.as_ref().map(|_| b.positions()).unwrap_or_default();
    let gold = &prep.gold;
    let metrics = &cur.scores.metrics;
    let gated_metrics: Vec<usize> = (0..metrics.len())
        .filter(|&m| paired.values[m].is_some() && settings.rules.iter().any(|r| r.metric == metrics[m]))
        .collect();
    let mut flips = Vec::new();
    let mut gained = 0;
    for &q in paired_idx {
        let mut lost = Vec::new();
        let mut won = false;
        for &m in &gated_metrics {
            let bv = paired.values[m].as_ref().map_or(0.0, |v| v[q]);
            let cv = cur.scores.values[m][q];
            if bv > 0.0 && cv == 0.0 {
                lost.push(metrics[m].name());
            }
            won |= bv == 0.0 && cv > 0.0;
        }
        if !lost.is_empty() {
            let id = gold.queries[q].id.as_str();
            let lost_in = match (&cur.candidates, stored.get(id)) {
                (Some(c), Some(&s)) => {
                    let now: HashSet<&str> = c.ids[q].iter().map(String::as_str).collect();
                    stages::lost_in(
                        &b.queries[s].ranking,
                        &prep.labels[q],
                        &prep.contexts[q],
                        cutoff,
                        &now,
                    )
                }
                _ => None,
            };
            flips.push(Flip {
                query_id: id.to_string(),
                stratum: gold.stratum_name(q).to_string(),
                text: gold.queries[q].text.clone(),
                lost,
                lost_in,
            });
        }
        if won {
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

/// Each gold query's fate in the baseline, from its stored rankings judged
/// on the current gold set; `None` when it stores no candidate lists, or
/// its final rankings stop short of the cutoff.
fn baseline_fates(prep: &Prepared, b: &Baseline, cutoff: Option<u32>, paired: &Paired) -> Option<Vec<Fate>> {
    let cands = paired.rescored_candidates.as_ref()?;
    let deep_enough = match (b.depth, cutoff) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(d), Some(k)) => k <= d,
    };
    if !deep_enough {
        return None;
    }
    Some(
        paired
            .rescored
            .iter()
            .zip(cands)
            .zip(&prep.contexts)
            .map(|((f, c), ctx)| stages::fate(f, c, ctx, cutoff))
            .collect(),
    )
}

/// The two stages of a reranked retriever over `scopes`: queries by stage
/// now and in the baseline (`base`, per gold query), the ceilings of the
/// current candidates, and which stage lost more queries than before.
fn stage_outcome(
    prep: &Prepared,
    settings: &GateSettings,
    cur: &Current,
    c: &CurrentCandidates,
    base: Option<&[Fate]>,
    scopes: &[compare::Scope],
) -> StageOutcome {
    let metrics = &cur.scores.metrics;
    let cutoff = stages::default_cutoff(metrics);
    let now: Vec<Fate> = cur
        .rankings
        .iter()
        .zip(c.rankings)
        .zip(&prep.contexts)
        .map(|((f, cand), ctx)| stages::fate(f, cand, ctx, cutoff))
        .collect();
    let count = |fates: &[Fate], members: &[usize]| {
        let mut l = Lost::default();
        for &q in members {
            match fates[q] {
                Fate::Reached => l.reached += 1,
                Fate::DroppedByRerank => l.dropped_by_rerank += 1,
                Fate::MissedByRetrieval => l.missed_by_retrieval += 1,
            }
        }
        l
    };
    let lost: Vec<ScopeLost> = scopes
        .iter()
        .map(|s| ScopeLost {
            scope: s.name.clone(),
            n: s.members.len(),
            baseline: base.map(|b| count(b, &s.members)),
            current: count(&now, &s.members),
        })
        .collect();
    let ideal: Vec<Ranking> = c.rankings.iter().map(stages::ceiling_ranking).collect();
    let ceiling_metrics = stages::ceiling_metrics(metrics);
    let ceiling = Scores::compute(&ceiling_metrics, &ideal, &prep.contexts);
    let mut ceilings = Vec::new();
    for (cm, metric) in ceiling_metrics.iter().enumerate() {
        let Some(m) = metrics.iter().position(|x| x == metric) else {
            continue;
        };
        for (si, s) in scopes.iter().enumerate() {
            if s.members.is_empty() {
                continue;
            }
            let current = compare::scope_mean(&cur.scores.values[m], scopes, si, settings.weighting);
            let ceil = compare::scope_mean(&ceiling.values[cm], scopes, si, settings.weighting);
            ceilings.push(CeilingRow {
                metric: *metric,
                scope: s.name.clone(),
                current,
                ceiling: ceil,
                ratio: stages::ratio(current, ceil),
            });
        }
    }
    StageOutcome {
        candidates: c.path.clone(),
        cutoff,
        losses: stage_losses(&lost),
        lost,
        ceilings,
        absent: Vec::new(),
    }
}

/// The stages whose count of lost queries grew since the baseline: the
/// reranker by its `dropped_by_rerank`, retrieval by `missed_by_retrieval`.
fn stage_losses(lost: &[ScopeLost]) -> Vec<StageLoss> {
    let grew = |s: &ScopeLost, stage: LostIn| -> usize {
        let Some(b) = s.baseline else { return 0 };
        let (was, now) = match stage {
            LostIn::Rerank => (b.dropped_by_rerank, s.current.dropped_by_rerank),
            LostIn::Retrieval | LostIn::Both => (b.missed_by_retrieval, s.current.missed_by_retrieval),
        };
        now.saturating_sub(was)
    };
    let Some(all) = lost.first() else {
        return Vec::new();
    };
    let mut out: Vec<StageLoss> = [LostIn::Rerank, LostIn::Retrieval]
        .into_iter()
        .filter_map(|stage| {
            let more = grew(all, stage);
            let mut strata: Vec<(String, usize)> = lost[1..]
                .iter()
                .map(|s| (s.scope.clone(), grew(s, stage)))
                .filter(|(_, n)| *n > 0)
                .collect();
            strata.sort_by_key(|s| std::cmp::Reverse(s.1));
            (more > 0).then_some(StageLoss { stage, more, strata })
        })
        .collect();
    out.sort_by_key(|l| std::cmp::Reverse(l.more));
    out
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
