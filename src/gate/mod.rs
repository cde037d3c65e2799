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

//!
//! The steps live in their own files: [`pair`] aligns the baseline with
//! the current gold set, [`checks`] plans and tests the (metric, scope)
//! checks, [`decide`] corrects and decides them, [`power`] says what each
//! can detect, and [`flips`] finds the queries lost and the stage that
//! lost them.

mod checks;
mod decide;
mod flips;
mod judge;
mod pair;
mod power;

use crate::baseline::Baseline;
use crate::compare::{self, Comparison};
use crate::config::{GateSettings, TestKind};
use crate::eval::Scores;
use crate::judge::Ranking;
use crate::metrics::{Kind, Metric};
use crate::prepared::Prepared;
use crate::stages::{self, Lost, LostIn};

pub use checks::corrected_alpha;
pub use decide::MAX_RESAMPLES;
pub use flips::COVERAGE_DROP_WARN;
pub use judge::{JudgeCheck, JudgeVerdict};
pub use power::{
    baseline_power, can_reach, drop_spread, lenient_alpha, power, standard_error, DropSpread, PlannedPower,
    Power, Spread, POWER,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckVerdict {
    Fail,
    Pass,
    Improved,
    /// Neither shown within the tolerance nor beyond it: the interval at
    /// the check's level holds both. Passes unless `on_inconclusive: fail`.
    Inconclusive,
    NotGated,
}

impl CheckVerdict {
    pub fn name(self) -> &'static str {
        match self {
            CheckVerdict::Fail => "fail",
            CheckVerdict::Pass => "pass",
            CheckVerdict::Improved => "improved",
            CheckVerdict::Inconclusive => "inconclusive",
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

#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// The comparison: `delta` and the two-sided (1 - alpha) CI; `p_value`
    /// is the one-sided p of [`Check::hypothesis`] and `p_adjusted` its
    /// corrected value (NaN when not gated).
    pub cmp: Comparison,
    pub hypothesis: Hypothesis,
    /// One-sided bounds of delta at `bound_level`: for a gated check, the
    /// level it was decided at (Holm: 1 - alpha over its step; Bonferroni:
    /// 1 - alpha/m; none: 1 - alpha), from the same test as its p, so it
    /// fails exactly when the bound the mode reads lies beyond the
    /// tolerance; for a check that is not gated (and under `threshold`),
    /// 1 - alpha.
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
    /// Set when a few queries carry most of the change
    /// ([`compare::skew_of`]).
    pub skew: Option<compare::Skew>,
    /// No query of the scope lost anything (every delta >= 0; a run
    /// identical to its baseline among them): the check passes under every
    /// decision mode. The margin and significance modes could not fail it
    /// anyway; non-inferiority, which fails what it cannot prove within
    /// the tolerance, would fail a small scope's identical run and pass a
    /// worse one no better proven. The set of such runs is closed upwards,
    /// so the rule keeps every verdict monotone in the loss.
    pub no_loss: bool,
    pub verdict: CheckVerdict,
    /// Under `labels: ppi`: the PPI estimate of the delta this check was
    /// tested on (its mean is `cmp.delta`; the people-only estimate, the
    /// counts and lambda ride along for reports). For a geometric mean, on
    /// the log scale it was tested on.
    pub ppi: Option<crate::stats::ppi::PpiCombined>,
}

impl Check {
    /// The test that decided, as reports name it: `ppi` for a check tested
    /// on its prediction-powered estimate.
    pub fn test_name(&self) -> &'static str {
        if self.ppi.is_some() {
            self.test.ppi_name()
        } else {
            self.test.name()
        }
    }

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
    /// [`stages::lost_in`]; `retrieval` when only `candidates:` metrics
    /// lost it); `None` without candidates, or when the baseline's run held
    /// no relevant chunk to follow.
    pub lost_in: Option<LostIn>,
    /// The query's top k in the baseline and now, when the caller kept the
    /// current run's ids (the HTML report shows what came back instead).
    pub top: Option<FlipTop>,
    /// The rank of the first relevant result (grade at the relevance
    /// level) in the baseline's stored ranking, judged on the current gold
    /// set, and in the current run; `None` where no relevant result is in
    /// the ranking (for the baseline: or it stored no ranking). What a
    /// reviewer reads first about a lost query: "rank 1 -> none".
    pub ranks: (Option<u32>, Option<u32>),
    /// Under `labels: ppi`: whether a person graded this query (verified
    /// in the sample, or people's labels only), `false` when it rests on
    /// the model's grades alone; `None` under the other label modes.
    pub verified: Option<bool>,
}

/// A lost query's top `k` ids, baseline beside current, with the ones the
/// gold set counts relevant: what the retriever returned instead.
#[derive(Debug, Clone, PartialEq)]
pub struct FlipTop {
    pub k: usize,
    pub baseline: Vec<String>,
    pub current: Vec<String>,
    /// The ids of `baseline` and `current` the gold set labels relevant.
    pub relevant: Vec<String>,
    /// The text of each shown id a corpus holds, when one was given.
    pub texts: std::collections::BTreeMap<String, String>,
}

impl FlipTop {
    /// Ids in the baseline's top k that the current top k lacks.
    pub fn lost(&self) -> Vec<&str> {
        self.baseline
            .iter()
            .filter(|id| !self.current.contains(id))
            .map(String::as_str)
            .collect()
    }

    /// Ids in the current top k that the baseline's lacked.
    pub fn gained(&self) -> Vec<&str> {
        self.current
            .iter()
            .filter(|id| !self.baseline.contains(id))
            .map(String::as_str)
            .collect()
    }
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

/// Checks by verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VerdictCounts {
    pub fail: usize,
    pub pass: usize,
    pub improved: usize,
    pub inconclusive: usize,
    pub not_gated: usize,
}

impl VerdictCounts {
    pub fn gated(&self) -> usize {
        self.fail + self.pass + self.improved + self.inconclusive
    }
}

/// Under `labels: ppi`, what the two-stage table is on: one estimand
/// for its counts, ceilings and the final figure beside them (the labels
/// each query was scored with), which is not the checks' PPI estimate.
pub const PPI_STAGES: &str = "labels: ppi: the two-stage table (queries by stage, each ceiling and the final figure beside it) is on the labels each query was scored with (people's where verified, the model's elsewhere), not a PPI estimate; the checks' deltas are PPI estimates";

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
    /// Gated checks in the correction family this retriever's checks
    /// belong to (every retriever's under `correction_scope: gate`).
    pub family_size: usize,
    /// `on_inconclusive: fail`: an inconclusive check fails the retriever.
    pub inconclusive_fails: bool,
    /// The baseline's recorded history (`gate --record`, `baseline
    /// update`), when the caller read it for a report that draws the trend.
    pub history: Vec<crate::baseline::HistoryEntry>,
    /// The paired queries per stratum, in the gold set's stratum order
    /// (empty without a baseline): what "12 of 30" counts against.
    pub strata: Vec<(String, usize)>,
    /// This run's means as `gate --record` would append them (kind
    /// [`crate::baseline::THIS_RUN`], not recorded), read with
    /// [`Self::history`], so a trend ends at the result being reviewed.
    pub current: Option<crate::baseline::HistoryEntry>,
}

impl RetrieverOutcome {
    /// An outcome with nothing checked yet.
    pub fn new(name: &str, run: String, resamples: u32) -> RetrieverOutcome {
        RetrieverOutcome {
            name: name.to_string(),
            run,
            baseline: None,
            checks: Vec::new(),
            resamples,
            flips: Vec::new(),
            gained: 0,
            added_queries: Vec::new(),
            removed_queries: Vec::new(),
            gold_changed: false,
            warnings: Vec::new(),
            stages: None,
            family_size: 0,
            inconclusive_fails: false,
            history: Vec::new(),
            strata: Vec::new(),
            current: None,
        }
    }

    /// Whether `c` fails this retriever: a failed check, or an
    /// inconclusive one under `on_inconclusive: fail`.
    pub fn fails(&self, c: &Check) -> bool {
        c.verdict == CheckVerdict::Fail
            || (self.inconclusive_fails && c.verdict == CheckVerdict::Inconclusive)
    }

    /// How many checks got each verdict, for the reports that count them.
    pub fn counts(&self) -> VerdictCounts {
        let mut n = VerdictCounts::default();
        for c in &self.checks {
            match c.verdict {
                CheckVerdict::Fail => n.fail += 1,
                CheckVerdict::Pass => n.pass += 1,
                CheckVerdict::Improved => n.improved += 1,
                CheckVerdict::Inconclusive => n.inconclusive += 1,
                CheckVerdict::NotGated => n.not_gated += 1,
            }
        }
        n
    }

    pub fn verdict(&self) -> Verdict {
        if self.checks.iter().any(|c| self.fails(c)) {
            Verdict::Fail
        } else {
            Verdict::Pass
        }
    }
}

#[derive(Debug, Clone)]
pub struct GateOutcome {
    pub settings: GateSettings,
    /// The labels the runs were scored with (`labels:` / `--labels`).
    pub labels: crate::config::LabelMode,
    pub retrievers: Vec<RetrieverOutcome>,
    /// About the gold set, for every retriever.
    pub warnings: Vec<String>,
    /// The model's agreement with people on the verified queries
    /// (`gate.judge`), once per gate: `None` when the gold set has no
    /// verified query with model grades and no `min_kappa` asks for one.
    pub judge: Option<JudgeCheck>,
    /// Set by `baseline update` once it wrote the baselines: the reports
    /// then say "recorded", and, when the gate failed and the regression
    /// was accepted (`--allow-regression`), with the note that accepted it.
    pub recorded: Option<Recorded>,
}

/// What `baseline update` recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The note of an accepted regression; `None` when nothing regressed.
    pub accepted: Option<String>,
}

impl GateOutcome {
    /// Fails when a retriever regressed or the judge fails the gate.
    pub fn verdict(&self) -> Verdict {
        if self.judge.as_ref().is_some_and(JudgeCheck::fails)
            || self.retrievers.iter().any(|r| r.verdict() == Verdict::Fail)
        {
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
    /// Under `labels: ppi`: the run scored on the model's grades, over the
    /// model side's queries.
    pub ppi: Option<&'a Scores>,
}

/// The candidate list the current run was reranked from.
pub struct CurrentCandidates<'a> {
    pub path: String,
    pub rankings: &'a [Ranking],
    /// Every candidate id, per gold query.
    pub ids: &'a [Vec<String>],
}

/// One retriever to gate: its current run and its baseline, if any.
pub struct Input<'a> {
    pub current: Current<'a>,
    pub baseline: Option<&'a Baseline>,
}

/// Compares one retriever's current run with its baseline, alone in its
/// correction family (see [`evaluate_all`]).
pub fn evaluate(
    prep: &Prepared,
    settings: &GateSettings,
    cur: &Current,
    baseline: Option<&Baseline>,
) -> RetrieverOutcome {
    let mut out = evaluate_each(prep, settings, &[(cur, baseline)]);
    out.swap_remove(0)
}

/// Compares every retriever's current run with its baseline and decides
/// them together: the correction runs over one family, every gated check
/// of every retriever under `correction_scope: gate` (the exit code is one
/// promise), or each retriever's own under `retriever`. A retriever without
/// a baseline has nothing to compare and passes (the command decides
/// whether that is an error).
pub fn evaluate_all(prep: &Prepared, settings: &GateSettings, inputs: &[Input]) -> Vec<RetrieverOutcome> {
    let pairs: Vec<(&Current, Option<&Baseline>)> = inputs.iter().map(|i| (&i.current, i.baseline)).collect();
    evaluate_each(prep, settings, &pairs)
}

/// What a retriever's checks are planned on, kept for a re-test.
struct Planned {
    /// The baseline's values, a geometric mean's as logs (what the tests
    /// read; see [`compare::geo`]).
    paired: pair::Paired,
    scopes: Vec<compare::Scope>,
    wants: Vec<checks::Want>,
    /// The current values with a geometric mean's as logs; `None` when no
    /// metric is one.
    logged: Option<Scores>,
    /// A geometric mean's baseline values as stored (for its skew, told in
    /// the metric's units), by metric.
    raw: Vec<Option<Vec<f64>>>,
    /// Under `labels: ppi`: the model side's baseline values (logs for a
    /// geometric mean) and current scores likewise.
    side: Option<SidePlan>,
}

/// PPI's model side of one retriever: baseline and current values on the
/// model's grades, by model-side query.
pub(super) struct SidePlan {
    pub(super) base: Vec<Option<Vec<f64>>>,
    pub(super) cur: Scores,
}

fn evaluate_each(
    prep: &Prepared,
    settings: &GateSettings,
    inputs: &[(&Current, Option<&Baseline>)],
) -> Vec<RetrieverOutcome> {
    let mut outs = Vec::with_capacity(inputs.len());
    let mut planned: Vec<Option<Planned>> = Vec::with_capacity(inputs.len());
    for &(cur, baseline) in inputs {
        let (out, plan) = prepare(prep, settings, cur, baseline);
        outs.push(out);
        planned.push(plan);
    }
    let test_all = |run: &GateSettings| -> Vec<decide::Pending> {
        inputs
            .iter()
            .zip(&planned)
            .map(|(&(cur, _), plan)| match plan {
                Some(p) => {
                    let tested = Current {
                        name: cur.name,
                        run: cur.run.clone(),
                        rankings: cur.rankings,
                        scores: p.logged.as_ref().unwrap_or(cur.scores),
                        candidates: None,
                        ppi: None,
                    };
                    decide::pending(
                        prep,
                        run,
                        &tested,
                        &p.paired,
                        &p.scopes,
                        &p.wants,
                        p.side.as_ref(),
                    )
                }
                None => decide::Pending::empty(),
            })
            .collect()
    };
    let mut run = settings.clone();
    let mut pendings = test_all(&run);
    let mut sizes = decide::decide_family(&mut pendings, &run);
    let borderline: Vec<Option<u32>> = pendings
        .iter()
        .map(|p| decide::borderline_resamples(&p.checks, &run))
        .collect();
    if let Some(more) = borderline.iter().flatten().copied().max() {
        for (out, b) in outs.iter_mut().zip(&borderline) {
            if b.is_some() {
                out.warnings.push(format!(
                    "a result lay within Monte Carlo error of alpha at B={}: re-tested with B={more}",
                    run.resamples
                ));
            }
        }
        run.resamples = more;
        pendings = test_all(&run);
        sizes = decide::decide_family(&mut pendings, &run);
    }
    for (((out, mut pend), m), (plan, &(cur, _))) in outs
        .iter_mut()
        .zip(pendings)
        .zip(sizes)
        .zip(planned.iter().zip(inputs))
    {
        let Some(plan) = plan else {
            continue;
        };
        out.resamples = run.resamples;
        out.family_size = m;
        out.inconclusive_fails = settings.on_inconclusive == crate::config::OnInconclusive::Fail;
        let alpha_m = checks::corrected_alpha(&run, m);
        let family = power::unchanged_fails_jointly(
            &mut pend.checks,
            &run,
            &cur.scores.metrics,
            &plan.paired.values,
            &plan.logged.as_ref().unwrap_or(cur.scores).values,
            &plan.scopes,
            alpha_m,
        );
        if plan.logged.is_some() {
            in_metric_units(&mut pend.checks, &pend.shown_tolerances, prep, &run, cur, plan);
        }
        for c in &mut pend.checks {
            let (metric, base) = (c.cmp.metric, c.cmp.baseline);
            let fit = |x: f64| compare::within_range(&metric, base, x);
            c.lower_bound = fit(c.lower_bound);
            c.upper_bound = fit(c.upper_bound);
            c.cmp.ci_low = fit(c.cmp.ci_low);
            c.cmp.ci_high = fit(c.cmp.ci_high);
        }
        power::warn_power(&pend.checks, &run, family, &mut out.warnings);
        power::warn_too_small(&pend.checks, &run, alpha_m, &mut out.warnings);
        out.checks = pend.checks;
    }
    outs
}

/// A geometric mean's checks, tested on the log scale, told in the
/// metric's units ([`compare::geo`]): means, delta, interval, bounds,
/// tolerance and mde mapped back about the baseline's geometric mean (the
/// standard errors by the delta method), and the skew of the per-query
/// changes the metric's values show. p-values and verdicts stand: the map
/// is increasing, so every bound keeps its side of every margin.
///
/// The tolerance is the rule's own (`shown`, by check): mapped back, one
/// beyond the baseline's geometric mean would read as the most it can
/// lose instead.
fn in_metric_units(
    checks: &mut [Check],
    shown: &[Option<f64>],
    prep: &Prepared,
    settings: &GateSettings,
    cur: &Current,
    plan: &Planned,
) {
    for (c, shown) in checks.iter_mut().zip(shown) {
        if !compare::geo::is_geometric(&c.cmp.metric) {
            continue;
        }
        let back = compare::geo::to_units(&mut c.cmp);
        c.lower_bound = back.delta(c.lower_bound);
        c.upper_bound = back.delta(c.upper_bound);
        let tol = |t: f64| shown.unwrap_or_else(|| back.drop(t));
        c.tolerance = c.tolerance.map(tol);
        c.hypothesis = match c.hypothesis {
            Hypothesis::DropAtMost(0.0) => Hypothesis::DropAtMost(0.0),
            Hypothesis::DropAtMost(t) => Hypothesis::DropAtMost(tol(t)),
            Hypothesis::DropAtLeast(t) => Hypothesis::DropAtLeast(tol(t)),
        };
        c.power.mde = c.power.mde.map(|m| back.drop(m));
        c.power.se *= back.gm_b;
        c.power.se_no_change *= back.gm_b;
        let mi = cur.scores.metrics.iter().position(|m| *m == c.cmp.metric);
        let si = plan.scopes.iter().position(|s| s.name == c.cmp.stratum);
        if let (Some(mi), Some(si)) = (mi, si) {
            if let Some(base) = &plan.raw[mi] {
                let d: Vec<f64> = cur.scores.values[mi]
                    .iter()
                    .zip(base)
                    .map(|(c, b)| c - b)
                    .collect();
                c.skew = compare::skew_of(&d, &prep.gold, &plan.scopes, si, settings.weighting);
            }
        }
    }
}

/// Everything about one retriever that does not depend on its family:
/// pairing, the plan of checks, the queries lost and gained, the stages.
fn prepare(
    prep: &Prepared,
    settings: &GateSettings,
    cur: &Current,
    baseline: Option<&Baseline>,
) -> (RetrieverOutcome, Option<Planned>) {
    let mut out = RetrieverOutcome::new(cur.name, cur.run.clone(), settings.resamples);
    let Some(b) = baseline else {
        if let Some(c) = &cur.candidates {
            let all: Vec<usize> = (0..prep.gold.len()).collect();
            let scopes = compare::scopes(&prep.gold, &all);
            out.stages = Some(flips::stage_outcome(prep, settings, cur, c, None, &scopes));
            if prep.ppi.is_some() {
                out.warnings.push(PPI_STAGES.to_string());
            }
        }
        return (out, None);
    };
    out.baseline = Some(BaselineInfo {
        created_at: b.created_at.clone(),
        commit: b.commit.clone(),
        note: b.note.clone(),
    });
    let metrics = &cur.scores.metrics;
    let judged_metric = coverage_metric(metrics);
    let paired = pair::pair(
        prep,
        b,
        metrics,
        judged_metric,
        cur.candidates.is_some(),
        &mut out.warnings,
    );
    pair::gold_changes(prep, b, &paired, &mut out);
    pair::depth_warnings(cur, b, metrics, &mut out.warnings);

    // Scopes over the paired queries only.
    let paired_idx: Vec<usize> = (0..prep.gold.len()).filter(|&i| paired.in_baseline[i]).collect();
    let scopes = compare::scopes(&prep.gold, &paired_idx);
    let wants = checks::plan(&prep.gold, settings, metrics, &scopes, &mut out.warnings);
    let cutoff = stages::default_cutoff(metrics);
    let (flips, gained) = flips::flips(prep, settings, cur, b, cutoff, &paired, &paired_idx);
    out.flips = flips;
    out.strata = scopes
        .iter()
        .skip(1)
        .map(|s| (s.name.clone(), s.members.len()))
        .collect();
    out.gained = gained;
    if let Some(c) = &cur.candidates {
        let base = flips::baseline_fates(prep, b, cutoff, &paired);
        out.stages = Some(flips::stage_outcome(
            prep,
            settings,
            cur,
            c,
            base.as_deref(),
            &scopes,
        ));
        if prep.ppi.is_some() {
            out.warnings.push(PPI_STAGES.to_string());
        }
    }
    flips::coverage(prep, cur, &paired, &paired_idx, judged_metric, &mut out.warnings);
    flips::warn_added_removed(&mut out);
    let side = side_plan(prep, cur, b, metrics, judged_metric, &mut out.warnings);
    // A geometric mean is tested on the log scale: its values turn to logs
    // here, after everything above has read them as they are.
    let mut paired = paired;
    let logged = compare::geo::logged(cur.scores);
    let raw: Vec<Option<Vec<f64>>> = metrics
        .iter()
        .zip(paired.values.iter_mut())
        .map(|(m, v)| {
            if !compare::geo::is_geometric(m) {
                return None;
            }
            let raw = v.clone();
            if let Some(v) = v {
                *v = compare::geo::log_values(v);
            }
            raw
        })
        .collect();
    (
        out,
        Some(Planned {
            paired,
            scopes,
            wants,
            logged,
            raw,
            side,
        }),
    )
}

/// Under `labels: ppi`, the baseline's values on the model's grades,
/// aligned with the model side's queries: its stored `model_values` where
/// they were recorded on the same model grades, else re-scored from its
/// stored rankings (as the people side is when the gold set changed).
fn side_plan(
    prep: &Prepared,
    cur: &Current,
    b: &Baseline,
    metrics: &[Metric],
    judged_metric: Metric,
    warnings: &mut Vec<String>,
) -> Option<SidePlan> {
    let (side, cur_model) = (prep.ppi.as_ref()?, cur.ppi?);
    // The baseline as the model side sees it: its model values in place of
    // its values, under the fingerprint they were recorded on. A baseline
    // without them (recorded under `labels: people` or `model`) gets a
    // fingerprint no gold set has, so every value is re-scored.
    let stored = b.model_fingerprint.is_some() && b.queries.iter().any(|q| q.model_values.is_some());
    let mut shadow = b.clone();
    shadow.gold_fingerprint = match (&b.model_fingerprint, stored) {
        (Some(f), true) => f.clone(),
        _ => String::new(),
    };
    for q in &mut shadow.queries {
        if let Some(mv) = q.model_values.take() {
            q.values = mv;
        }
    }
    let mut quiet = Vec::new();
    let paired = pair::pair(&side.model, &shadow, metrics, judged_metric, false, &mut quiet);
    let lost: Vec<String> = metrics
        .iter()
        .zip(&paired.values)
        .filter(|(_, v)| v.is_none())
        .map(|(m, _)| m.name())
        .collect();
    if !lost.is_empty() {
        warnings.push(format!(
            "labels: ppi: the baseline holds no values on the model's grades for {} and its stored rankings cannot re-score them: those checks cannot be estimated; record the baseline again under labels: ppi",
            lost.join(", ")
        ));
    }
    let mut base = paired.values;
    for (m, v) in metrics.iter().zip(base.iter_mut()) {
        if compare::geo::is_geometric(m) {
            if let Some(v) = v {
                *v = compare::geo::log_values(v);
            }
        }
    }
    let cur = compare::geo::logged(cur_model).unwrap_or_else(|| cur_model.clone());
    Some(SidePlan { base, cur })
}

/// The judged@k that watches coverage: at the deepest cutoff in use.
fn coverage_metric(metrics: &[Metric]) -> Metric {
    Metric::new(
        Kind::Judged,
        Some(crate::metrics::max_depth(metrics).unwrap_or(10)),
    )
}
