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
pub use power::{baseline_power, power, spread_se, standard_error, PlannedPower, Power, Spread, POWER};

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
    /// Set when a few queries carry most of the change
    /// ([`compare::skew_of`]).
    pub skew: Option<compare::Skew>,
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
    /// [`stages::lost_in`]; `retrieval` when only `candidates:` metrics
    /// lost it); `None` without candidates, or when the baseline's run held
    /// no relevant chunk to follow.
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
        }
    }

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

/// Compares one retriever's current run with its baseline: the steps below,
/// in order. Without a baseline there is nothing to compare, and the
/// retriever passes (the command decides whether that is an error).
pub fn evaluate(
    prep: &Prepared,
    settings: &GateSettings,
    cur: &Current,
    baseline: Option<&Baseline>,
) -> RetrieverOutcome {
    let mut out = RetrieverOutcome::new(cur.name, cur.run.clone(), settings.resamples);
    let Some(b) = baseline else {
        if let Some(c) = &cur.candidates {
            let all: Vec<usize> = (0..prep.gold.len()).collect();
            let scopes = compare::scopes(&prep.gold, &all);
            out.stages = Some(flips::stage_outcome(prep, settings, cur, c, None, &scopes));
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
    let paired = pair::pair(
        prep,
        b,
        metrics,
        judged_metric,
        cur.candidates.is_some(),
        &mut out.warnings,
    );
    pair::gold_changes(prep, b, &paired, &mut out);

    // Scopes over the paired queries only.
    let paired_idx: Vec<usize> = (0..prep.gold.len()).filter(|&i| paired.in_baseline[i]).collect();
    let scopes = compare::scopes(&prep.gold, &paired_idx);
    let wants = checks::plan(&prep.gold, settings, metrics, &scopes, &mut out.warnings);
    let mut run = settings.clone();
    let mut checks = decide::decided_checks(prep, &run, cur, &paired, &scopes, &wants);
    if let Some(more) = decide::borderline_resamples(&checks, &run) {
        out.warnings.push(format!(
            "a result lay within Monte Carlo error of alpha at B={}: re-tested with B={more}",
            run.resamples
        ));
        run.resamples = more;
        checks = decide::decided_checks(prep, &run, cur, &paired, &scopes, &wants);
    }
    out.resamples = run.resamples;
    power::warn_power(&checks, &run, &mut out.warnings);
    power::warn_too_small(&checks, &run, &mut out.warnings);
    out.checks = checks;
    let cutoff = stages::default_cutoff(metrics);
    let (flips, gained) = flips::flips(prep, settings, cur, b, cutoff, &paired, &paired_idx);
    out.flips = flips;
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
    }
    flips::coverage(prep, cur, &paired, &paired_idx, judged_metric, &mut out.warnings);
    flips::warn_added_removed(&mut out);
    out
}

/// The judged@k that watches coverage: at the deepest cutoff in use.
fn coverage_metric(metrics: &[Metric]) -> Metric {
    Metric::new(
        Kind::Judged,
        Some(crate::metrics::max_depth(metrics).unwrap_or(10)),
    )
}
