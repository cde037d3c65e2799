//! What a change did to single queries: the ones a gated metric lost (and
//! for a two-stage retriever, the stage that lost them), the stages' counts
//! beside the baseline's, and the coverage and added/removed warnings.

use std::collections::HashSet;

use super::pair::Paired;
use super::{
    CeilingRow, Current, CurrentCandidates, Flip, RetrieverOutcome, ScopeLost, StageLoss, StageOutcome,
};
use crate::baseline::Baseline;
use crate::compare;
use crate::config::GateSettings;
use crate::eval::{mean_of, Scores};
use crate::judge::Ranking;
use crate::metrics::Metric;
use crate::prepared::Prepared;
use crate::stages::{self, Fate, Lost, LostIn};

/// A fall in judged@k coverage larger than this is worth a warning.
pub const COVERAGE_DROP_WARN: f64 = 0.05;

/// Queries that a gated metric found (value > 0) in the baseline and lost,
/// in stratum order, and, defined the same way the other way round, how
/// many queries some gated metric missed in the baseline and now finds.
pub(super) fn flips(
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
    // The query of each flip, for the sort by stratum below.
    let mut flip_q: Vec<usize> = Vec::new();
    let mut gained = 0;
    for &q in paired_idx {
        let mut lost = Vec::new();
        let mut lost_final = false;
        let mut won = false;
        for &m in &gated_metrics {
            let bv = paired.values[m].as_ref().map_or(0.0, |v| v[q]);
            let cv = cur.scores.values[m][q];
            if bv > 0.0 && cv == 0.0 {
                lost.push(metrics[m].name());
                lost_final |= !metrics[m].is_candidates();
            }
            won |= bv == 0.0 && cv > 0.0;
        }
        if !lost.is_empty() {
            let id = gold.queries[q].id.as_str();
            let lost_in = match (&cur.candidates, stored.get(id)) {
                // A `candidates:` metric measures the retrieval stage's
                // list, which no reranker changes: lost there and nowhere
                // else, the query was lost in retrieval (SPEC "Two
                // stages"), whatever the final run held.
                (Some(_), _) if !lost_final => Some(LostIn::Retrieval),
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
            flip_q.push(q);
            flips.push(Flip {
                query_id: id.to_string(),
                stratum: gold.stratum_name(q).to_string(),
                text: gold.queries[q].text.clone(),
                lost,
                lost_in,
                top: None,
                ranks: (
                    first_relevant(&paired.rescored[q], &prep.contexts[q]),
                    first_relevant(&cur.rankings[q], &prep.contexts[q]),
                ),
                verified: prep
                    .ppi
                    .as_ref()
                    .map(|side| side.verified[q] || side.model_of[q].is_none()),
            });
        }
        if won {
            gained += 1;
        }
    }
    // Stable, by stratum position: the flips were pushed in `paired_idx`
    // order, each with its query's stratum (looking the name up among the
    // strata per comparison was quadratic with a stratum per query).
    let mut keyed: Vec<(u32, Flip)> = flips
        .into_iter()
        .zip(flip_q)
        .map(|(f, q)| (gold.queries[q].stratum, f))
        .collect();
    keyed.sort_by_key(|(s, _)| *s);
    (keyed.into_iter().map(|(_, f)| f).collect(), gained)
}

/// The rank of the first result at the query's relevance level.
fn first_relevant(r: &Ranking, ctx: &crate::judge::QueryContext) -> Option<u32> {
    r.hits
        .iter()
        .find(|h| h.grade >= ctx.relevance_level)
        .map(|h| h.rank)
}

/// Each gold query's fate in the baseline, from its stored rankings judged
/// on the current gold set; `None` when it stores no candidate lists, or
/// its final rankings stop short of the cutoff.
pub(super) fn baseline_fates(
    prep: &Prepared,
    b: &Baseline,
    cutoff: Option<u32>,
    paired: &Paired,
) -> Option<Vec<Fate>> {
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
pub(super) fn stage_outcome(
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
pub(super) fn coverage(
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
        // The remedy as one command: `gold pool --holes` lists exactly the
        // chunks this judged@k counts as unjudged.
        let k = judged_metric.depth().unwrap_or(10);
        // Quoted as a shell would need them; a command retriever's run has
        // no file (its "path" is `command: ...`) and is named RUN.
        let quote = |s: String| shlex::try_quote(&s).map_or(s.clone(), |q| q.into_owned());
        let gold = quote(crate::escape::path(&prep.gold.path));
        let run = if cur.run.starts_with("command: ") {
            "RUN".to_string()
        } else {
            quote(cur.run.clone())
        };
        let chunks = if prep.gold.has_spans() {
            " --chunks MAP"
        } else {
            ""
        };
        warnings.push(format!(
            "{judged_metric} fell from {b_mean:.4} to {c_mean:.4}: more of the new top results carry no label, and unlabeled chunks may hide relevant ones; label them before trusting a drop: `rgate gold pool --holes --gold {gold} --run {run} --depth {k}{chunks} --corpus CORPUS --output holes.jsonl` lists exactly those chunks; grade them (`rgate gold judge holes.jsonl --model M`, verified in `rgate gold label holes.jsonl`), `rgate gold import holes.jsonl --into {gold}`, and gate again"
        ));
    }
}

pub(super) fn warn_added_removed(out: &mut RetrieverOutcome) {
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
