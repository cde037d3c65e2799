//! Pairing: the baseline's per-query values aligned with the current gold
//! set by query id, re-scored from the stored rankings where the stored
//! values no longer hold (another gold set, relevance level or metric).

use std::collections::HashMap;

use super::RetrieverOutcome;
use crate::baseline::Baseline;
use crate::gold::GoldSet;
use crate::judge::{Place, Ranking};
use crate::metrics::Metric;
use crate::prepared::Prepared;

/// Baseline values aligned with the current gold set: `values[m][q]`,
/// `None` where the baseline has no value for that query or metric.
pub(super) struct Paired {
    pub(super) values: Vec<Option<Vec<f64>>>,
    /// Per current query: is it in the baseline?
    pub(super) in_baseline: Vec<bool>,
    /// judged@k of the baseline's stored ranking, for the coverage warning.
    pub(super) judged: Option<Vec<f64>>,
    /// The baseline's stored final rankings judged on the current gold set.
    pub(super) rescored: Vec<Ranking>,
    /// Its stored candidate lists judged likewise, when it has them and the
    /// current run has candidates too.
    pub(super) rescored_candidates: Option<Vec<Ranking>>,
}

/// Aligns a baseline with the current gold set, re-scoring its stored
/// rankings when the gold set, the relevance level or the metric set changed.
pub(super) fn pair(
    prep: &Prepared,
    b: &Baseline,
    metrics: &[Metric],
    judged_metric: Metric,
    two_stage: bool,
    warnings: &mut Vec<String>,
) -> Paired {
    let stored = b.positions();
    let in_baseline: Vec<bool> = prep
        .gold
        .queries
        .iter()
        .map(|q| stored.contains_key(q.id.as_str()))
        .collect();
    let reuse = Reuse::of(prep, b);
    let rescored = rescore(prep, &stored, |s| {
        let q = &b.queries[s];
        Some((q.ranking.as_slice(), q.spans.as_slice()))
    });
    let wants_candidates = two_stage || metrics.iter().any(Metric::is_candidates);
    let rescored_candidates =
        (wants_candidates && b.has_candidates() && reuse.candidates_locatable).then(|| {
            rescore(prep, &stored, |s| {
                let q = &b.queries[s];
                Some((q.candidates.as_deref()?, q.candidate_spans.as_slice()))
            })
        });
    let mut values = Vec::with_capacity(metrics.len());
    // The final metrics skipped, by reason: one warning a reason, naming
    // each metric, rather than one a metric (`all_trec` against a baseline
    // recorded with four metrics would print seventy).
    let mut skipped: Vec<(Skip, Vec<String>)> = Vec::new();
    for m in metrics {
        values.push(if m.is_candidates() {
            candidate_values(
                prep,
                b,
                &stored,
                &reuse,
                m,
                rescored_candidates.as_deref(),
                warnings,
            )
        } else {
            match final_values(prep, b, &stored, &reuse, m, &rescored) {
                Ok(v) => Some(v),
                Err(why) => {
                    match skipped.iter_mut().find(|(w, _)| *w == why) {
                        Some((_, names)) => names.push(m.name()),
                        None => skipped.push((why, vec![m.name()])),
                    }
                    None
                }
            }
        });
    }
    let depth = b.depth.map_or("all".to_string(), |d| d.to_string());
    for (why, names) in skipped {
        warnings.push(why.warning(&names, &depth));
    }
    let judged = reuse
        .covers(b, &judged_metric)
        .then(|| computed(prep, &judged_metric, &rescored));
    Paired {
        values,
        in_baseline,
        judged,
        rescored,
        rescored_candidates,
    }
}

/// What of a baseline still holds on the current gold set.
struct Reuse {
    /// Same gold set, relevance level and span coverage: the stored values
    /// stand as they are.
    same_gold: bool,
    /// Span labels are judged by where the ranked chunks lie: a baseline
    /// re-scores against them only when it stored the places of its ranked
    /// chunks (one recorded while the gold set had spans).
    locatable: bool,
    /// The same for its candidate lists.
    candidates_locatable: bool,
}

impl Reuse {
    fn of(prep: &Prepared, b: &Baseline) -> Reuse {
        let spans = prep.gold.has_spans();
        Reuse {
            same_gold: b.gold_fingerprint == prep.fingerprint()
                && b.relevance_level == prep.relevance_level
                && (!spans || b.span_coverage == Some(prep.span_coverage)),
            locatable: !spans
                || b.queries
                    .iter()
                    .all(|q| q.ranking.is_empty() || !q.spans.is_empty()),
            candidates_locatable: !spans
                || b.queries.iter().all(|q| {
                    q.candidates.as_ref().is_none_or(|c| c.is_empty()) || !q.candidate_spans.is_empty()
                }),
        }
    }

    /// Whether the stored final rankings reach deep enough to re-score `m`.
    fn covers(&self, b: &Baseline, m: &Metric) -> bool {
        self.locatable
            && match (b.depth, m.depth()) {
                (None, _) => true,
                (Some(_), None) => false,
                (Some(d), Some(k)) => k <= d,
            }
    }
}

/// One stored list per current gold query (`list` of the query's position
/// in the baseline: its ids and, when stored, their places), judged on the
/// current labels; an empty ranking where the baseline has none.
fn rescore<'b>(
    prep: &Prepared,
    stored: &HashMap<&str, usize>,
    list: impl Fn(usize) -> Option<(&'b [String], &'b [Option<Place>])>,
) -> Vec<Ranking> {
    prep.gold
        .queries
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let labels = &prep.labels[i];
            match stored.get(q.id.as_str()).and_then(|&s| list(s)) {
                Some((ids, places)) if !places.is_empty() => Ranking::from_located(
                    ids.iter()
                        .zip(places)
                        .map(|(id, p)| (id.as_str(), p.as_ref().map(|p| p.located()))),
                    labels,
                ),
                Some((ids, _)) => Ranking::from_ordered(ids.iter().map(String::as_str), labels),
                None => Ranking::default(),
            }
        })
        .collect()
}

/// The baseline's stored values of metric `mi` per current gold query (0
/// where the baseline lacks the query).
pub(super) fn stored_values(
    gold: &GoldSet,
    b: &Baseline,
    stored: &HashMap<&str, usize>,
    mi: usize,
) -> Vec<f64> {
    gold.queries
        .iter()
        .map(|q| {
            stored
                .get(q.id.as_str())
                .map_or(0.0, |&s| b.queries[s].values[mi])
        })
        .collect()
}

/// `m` over re-scored rankings, per current gold query.
fn computed(prep: &Prepared, m: &Metric, rankings: &[Ranking]) -> Vec<f64> {
    rankings
        .iter()
        .zip(&prep.contexts)
        .map(|(r, c)| m.compute(r, c))
        .collect()
}

/// A candidates metric's baseline values: stored, else re-scored from the
/// stored candidate lists (stored whole, so any candidates metric can be),
/// else none, with a warning saying why.
fn candidate_values(
    prep: &Prepared,
    b: &Baseline,
    stored: &HashMap<&str, usize>,
    reuse: &Reuse,
    m: &Metric,
    rescored_candidates: Option<&[Ranking]>,
    warnings: &mut Vec<String>,
) -> Option<Vec<f64>> {
    match (b.metric_index(m), rescored_candidates) {
        (Some(mi), _) if reuse.same_gold => Some(stored_values(&prep.gold, b, stored, mi)),
        (_, Some(rc)) => Some(computed(prep, m, rc)),
        _ if !reuse.candidates_locatable => {
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
    }
}

/// Why a final metric's baseline values are missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Skip {
    /// Stored, but the gold set changed and the stored chunks have no
    /// locations to judge spans by.
    StoredUnlocatable,
    /// Stored, but the gold set changed and the rankings are too shallow.
    StoredShallow,
    /// Not stored, and the stored chunks have no locations.
    AbsentUnlocatable,
    /// Not stored (recorded before the metric was used), and the rankings
    /// are too shallow to re-score it.
    AbsentShallow,
}

impl Skip {
    fn warning(self, names: &[String], depth: &str) -> String {
        let (list, its, them) = match names {
            [one] => (one.clone(), "its checks are", "it"),
            many => (many.join(", "), "their checks are", "them"),
        };
        match self {
            Skip::StoredUnlocatable => format!(
                "the gold set or relevance level changed since the baseline, and {list} cannot be re-scored: the gold set has span labels and the baseline stores no locations of its ranked chunks; {its} skipped; record a new baseline to gate {them}"
            ),
            Skip::StoredShallow => format!(
                "the gold set or relevance level changed since the baseline, and {list} cannot be re-scored from rankings stored to depth {depth}: {its} skipped; record a new baseline to gate {them} (or set baseline_depth: all)"
            ),
            Skip::AbsentUnlocatable => format!(
                "the baseline has no {list}, and cannot be re-scored: the gold set has span labels and the baseline stores no locations of its ranked chunks; {its} skipped; record a new baseline to gate {them}"
            ),
            Skip::AbsentShallow => format!(
                "the baseline has no {list} and stores rankings only to depth {depth}: {its} skipped; record a new baseline to gate {them}"
            ),
        }
    }
}

/// A final metric's baseline values: stored, else re-scored from the
/// stored rankings when they reach deep enough, else why not.
fn final_values(
    prep: &Prepared,
    b: &Baseline,
    stored: &HashMap<&str, usize>,
    reuse: &Reuse,
    m: &Metric,
    rescored: &[Ranking],
) -> Result<Vec<f64>, Skip> {
    let stored_idx = b.metric_index(m);
    match stored_idx {
        Some(mi) if reuse.same_gold => return Ok(stored_values(&prep.gold, b, stored, mi)),
        _ if reuse.covers(b, m) => return Ok(computed(prep, m, rescored)),
        _ => {}
    }
    Err(match (stored_idx.is_some(), reuse.locatable) {
        (true, false) => Skip::StoredUnlocatable,
        (true, true) => Skip::StoredShallow,
        (false, false) => Skip::AbsentUnlocatable,
        (false, true) => Skip::AbsentShallow,
    })
}

/// A warning for each stage whose current run ranks fewer results a query
/// than the baseline's run did, at a depth a metric in use reads. A metric
/// cannot count what a run does not return, so such a drop is depth alone:
/// on Cranfield a 100-deep run against a 1,000-deep baseline lost 0.0066 of
/// map to depth, a fifth of the drop the gate reported, and nothing said so.
///
/// Depths are the longest ranking of any query: a query with fewer results
/// than the rest says nothing about the depth the retriever was asked for.
/// A baseline's depth is its `run_depth` where it stored one (rankings cut
/// while a metric reads them whole), else its longest stored ranking: one
/// cut at `depth` ranked at least that deep, which is all a metric at a
/// cutoff within it needs.
pub(super) fn depth_warnings(
    cur: &super::Current,
    b: &Baseline,
    metrics: &[Metric],
    warnings: &mut Vec<String>,
) {
    let deepest = |lists: &mut dyn Iterator<Item = usize>| lists.max().unwrap_or(0);
    let mut stages: Vec<(bool, usize, usize, &str)> = vec![(
        false,
        deepest(&mut cur.rankings.iter().map(|r| r.num_ret as usize)),
        b.run_depth.map_or_else(
            || deepest(&mut b.queries.iter().map(|q| q.ranking.len())),
            |d| d as usize,
        ),
        cur.run.as_str(),
    )];
    if let Some(c) = &cur.candidates {
        if b.has_candidates() {
            stages.push((
                true,
                deepest(&mut c.rankings.iter().map(|r| r.num_ret as usize)),
                deepest(
                    &mut b
                        .queries
                        .iter()
                        .map(|q| q.candidates.as_ref().map_or(0, Vec::len)),
                ),
                c.path.as_str(),
            ));
        }
    }
    for (candidates, now, then, path) in stages {
        if now >= then {
            continue;
        }
        let short: Vec<String> = metrics
            .iter()
            .filter(|m| m.is_candidates() == candidates)
            .filter(|m| m.depth().is_none_or(|k| now < (k as usize).min(then)))
            .map(|m| m.name())
            .collect();
        if short.is_empty() {
            continue;
        }
        let (list, verb) = match short.as_slice() {
            [one] => (one.clone(), "reads"),
            many => (many.join(", "), "read"),
        };
        let what = if candidates { "candidate lists" } else { "run" };
        // A baseline stored cut ranked at least what it kept.
        let at_least = if !candidates && b.run_depth.is_none() && b.depth == Some(then as u32) {
            "at least "
        } else {
            ""
        };
        warnings.push(format!(
            "the {what} {path} ranks at most {now} results a query, the baseline's ranked {at_least}{then}: {list} {verb} deeper than {now}, so part of any change is depth alone; rerun the retriever to depth {then} (or record a new baseline if the shallower run is meant)"
        ));
    }
}

/// Records whether the gold set changed since the baseline, and which
/// queries were added or removed. A switch of labels mode alone (people ->
/// ppi, no file changed) moves the fingerprint and the queries scored (the
/// modes score different queries of the same file): that is said as a
/// switch of mode, with the queries each side scored alone counted in the
/// same line, not as a changed gold set with added and removed queries.
pub(super) fn gold_changes(prep: &Prepared, b: &Baseline, paired: &Paired, out: &mut RetrieverOutcome) {
    let gold = &prep.gold;
    out.gold_changed = b.gold_fingerprint != prep.fingerprint();
    if b.labels != prep.label_mode {
        let current_ids: std::collections::HashSet<&str> =
            gold.queries.iter().map(|q| q.id.as_str()).collect();
        let only_now = paired.in_baseline.iter().filter(|inb| !**inb).count();
        let only_then = b
            .queries
            .iter()
            .filter(|q| !current_ids.contains(q.id.as_str()))
            .count();
        out.warnings.push(format!(
            "the labels mode changed since the baseline was recorded ({}): labels: {} then, labels: {} now; the stored rankings were re-scored under labels: {}{}; record a new baseline under labels: {} to compare like with like",
            b.created_at,
            b.labels.name(),
            prep.label_mode.name(),
            prep.label_mode.name(),
            if only_now + only_then > 0 {
                format!(
                    " ({} scored now that the baseline's mode left out, {} the other way: the modes score different queries of the same gold set)",
                    crate::diag::count(only_now, "query", "queries"),
                    only_then
                )
            } else {
                String::new()
            },
            prep.label_mode.name()
        ));
        return;
    }
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

#[cfg(test)]
mod tests {
    //! Every expected value below is worked out by hand from the labels
    //! and stored rankings written out in [`world`].

    use super::*;
    use crate::baseline::StoredQuery;
    use crate::diag::Warnings;
    use crate::gold::{GoldFormat, GoldQuery, Label};

    fn m(name: &str) -> Metric {
        name.parse().unwrap()
    }

    fn query(id: &str, stratum: u32, labels: &[(&str, i32)]) -> GoldQuery {
        GoldQuery {
            id: id.into(),
            text: None,
            stratum,
            labels: labels
                .iter()
                .map(|&(id, grade)| Label { id: id.into(), grade })
                .collect::<Vec<_>>()
                .into(),
            spans: Vec::new(),
        }
    }

    fn stored(id: &str, stratum: &str, values: &[f64], ranking: &[&str]) -> StoredQuery {
        StoredQuery {
            id: id.into(),
            stratum: stratum.into(),
            values: values.to_vec(),
            ranking: ranking.iter().map(|s| s.to_string()).collect(),
            candidates: None,
            text_sha: None,
            spans: Vec::new(),
            candidate_spans: Vec::new(),
            model_values: None,
        }
    }

    /// The current gold set: q1 (easy: d1 relevant, d2 judged not
    /// relevant), q2 and q4 (hard: d3, d4 relevant); q4 is new. The
    /// baseline, stored in another order, holds q3 (since removed), q2
    /// (then in `easy`) and q1, with values for [hit_rate@3, mrr@10] that
    /// differ from what its rankings score on purpose for q2 (stored 0
    /// for mrr@10, whose ranking scores 1/4), so a test can tell stored
    /// values from re-scored ones.
    fn world() -> (Prepared, Baseline) {
        let gold = GoldSet::from_parts(
            "gold.yaml",
            GoldFormat::Yaml,
            vec![
                query("q1", 0, &[("d1", 1), ("d2", 0)]),
                query("q2", 1, &[("d3", 1)]),
                query("q4", 1, &[("d4", 1)]),
            ],
            vec!["easy".into(), "hard".into()],
        )
        .unwrap();
        let metrics = vec![m("hit_rate@3"), m("mrr@10")];
        let prep = Prepared::new(gold, Warnings::default(), metrics.clone(), 1);
        let b = Baseline {
            retriever: "r".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            rgate_version: "test".into(),
            commit: None,
            note: None,
            gold_path: "gold.yaml".into(),
            gold_fingerprint: prep.fingerprint().to_string(),
            relevance_level: 1,
            metrics,
            depth: None,
            run_depth: None,
            span_coverage: None,
            aggregates: Vec::new(),
            queries: vec![
                stored("q3", "easy", &[1.0, 1.0], &["d9"]),
                stored("q2", "easy", &[0.0, 0.0], &["x", "y", "z", "d3"]),
                stored("q1", "easy", &[1.0, 0.5], &["d2", "d1"]),
            ],
            model_fingerprint: None,
            labels: crate::gold::LabelMode::People,
        };
        (prep, b)
    }

    fn run_pair(prep: &Prepared, b: &Baseline) -> (Paired, Vec<String>) {
        let mut warnings = Vec::new();
        let metrics = prep.metrics.clone();
        let p = pair(prep, b, &metrics, m("judged@10"), false, &mut warnings);
        (p, warnings)
    }

    fn outcome() -> RetrieverOutcome {
        RetrieverOutcome::new("r", "run.jsonl".into(), 0)
    }

    #[test]
    fn an_unchanged_gold_set_pairs_the_stored_values_by_id() {
        let (prep, b) = world();
        let (p, warnings) = run_pair(&prep, &b);
        assert!(warnings.is_empty(), "{warnings:?}");
        // Gold order q1, q2, q4: q1 and q2 from the baseline, q4 new (0).
        assert_eq!(p.in_baseline, [true, true, false]);
        assert_eq!(p.values[0].as_deref(), Some(&[1.0, 0.0, 0.0][..]));
        // q2's stored 0, not the 1/4 its ranking would score.
        assert_eq!(p.values[1].as_deref(), Some(&[0.5, 0.0, 0.0][..]));
        // judged@10 over what was retrieved: q1 2 of 2 labelled, q2 1 of 4
        // (d3), q4 retrieved nothing.
        assert_eq!(p.judged.as_deref(), Some(&[1.0, 0.25, 0.0][..]));
        assert!(p.rescored_candidates.is_none());

        let mut out = outcome();
        gold_changes(&prep, &b, &p, &mut out);
        assert!(!out.gold_changed);
        assert_eq!(out.added_queries, ["q4"]);
        assert_eq!(out.removed_queries, ["q3"]);
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    }

    #[test]
    fn a_changed_gold_set_re_scores_the_stored_rankings() {
        let (prep, mut b) = world();
        b.gold_fingerprint = "an older gold set".into();
        let (p, warnings) = run_pair(&prep, &b);
        assert!(warnings.is_empty(), "{warnings:?}");
        // hit_rate@3: q1's d1 at rank 2; q2's d3 at rank 4, past 3.
        assert_eq!(p.values[0].as_deref(), Some(&[1.0, 0.0, 0.0][..]));
        // mrr@10: 1/2 and 1/4.
        assert_eq!(p.values[1].as_deref(), Some(&[0.5, 0.25, 0.0][..]));
        let mut out = outcome();
        gold_changes(&prep, &b, &p, &mut out);
        assert!(out.gold_changed);
        assert_eq!(
            out.warnings,
            ["the gold set changed since the baseline was recorded (2026-01-01T00:00:00Z): the stored ranking was re-scored against the current labels"]
        );
    }

    /// Issue 48: a baseline recorded under another labels mode (here
    /// `ppi`, the gate now `people`) with the gold set's fingerprint as
    /// that mode saw it: the switch is named, not "the gold set changed",
    /// and the queries only one side scored (q4 now, q3 then) are counted
    /// in that line, not listed as added or removed.
    #[test]
    fn a_switch_of_labels_mode_is_named_as_such() {
        let (prep, mut b) = world();
        b.gold_fingerprint = "the gold set as labels: ppi saw it".into();
        b.labels = crate::gold::LabelMode::Ppi;
        let (p, _) = run_pair(&prep, &b);
        let mut out = outcome();
        gold_changes(&prep, &b, &p, &mut out);
        assert!(out.added_queries.is_empty() && out.removed_queries.is_empty());
        assert_eq!(
            out.warnings,
            ["the labels mode changed since the baseline was recorded (2026-01-01T00:00:00Z): labels: ppi then, labels: people now; the stored rankings were re-scored under labels: people (1 query scored now that the baseline's mode left out, 1 the other way: the modes score different queries of the same gold set); record a new baseline under labels: people to compare like with like"]
        );
    }

    #[test]
    fn another_relevance_level_re_scores_without_calling_the_gold_set_changed() {
        let (prep, mut b) = world();
        b.relevance_level = 2;
        let (p, _) = run_pair(&prep, &b);
        assert_eq!(p.values[1].as_deref(), Some(&[0.5, 0.25, 0.0][..]));
        let mut out = outcome();
        gold_changes(&prep, &b, &p, &mut out);
        assert!(!out.gold_changed);
    }

    #[test]
    fn rankings_stored_too_shallow_re_score_only_the_metrics_they_reach() {
        let (prep, mut b) = world();
        b.gold_fingerprint = "an older gold set".into();
        b.depth = Some(3);
        b.queries[1].ranking.truncate(3);
        let (p, warnings) = run_pair(&prep, &b);
        // hit_rate@3 reaches depth 3: q1 hit at 2, q2 no hit in x, y, z.
        assert_eq!(p.values[0].as_deref(), Some(&[1.0, 0.0, 0.0][..]));
        assert_eq!(p.values[1], None);
        // judged@10 cannot be known either: no coverage warning source.
        assert_eq!(p.judged, None);
        assert_eq!(
            warnings,
            ["the gold set or relevance level changed since the baseline, and mrr@10 cannot be re-scored from rankings stored to depth 3: its checks are skipped; record a new baseline to gate it (or set baseline_depth: all)"]
        );
    }

    #[test]
    fn a_metric_the_baseline_lacks_is_scored_from_its_rankings() {
        let (prep, mut b) = world();
        b.metrics.truncate(1);
        for q in &mut b.queries {
            q.values.truncate(1);
        }
        let (p, warnings) = run_pair(&prep, &b);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(p.values[0].as_deref(), Some(&[1.0, 0.0, 0.0][..]));
        assert_eq!(p.values[1].as_deref(), Some(&[0.5, 0.25, 0.0][..]));
        b.depth = Some(3);
        let (p, warnings) = run_pair(&prep, &b);
        assert_eq!(p.values[1], None);
        assert_eq!(
            warnings,
            ["the baseline has no mrr@10 and stores rankings only to depth 3: its checks are skipped; record a new baseline to gate it"]
        );
    }

    #[test]
    fn pairing_is_by_id_whatever_stratum_the_baseline_stored() {
        // q2 was stored under `easy` and is `hard` now: it pairs all the
        // same, and its value lands at its place in the current gold set.
        let (prep, b) = world();
        let (p, _) = run_pair(&prep, &b);
        assert_eq!(prep.gold.stratum_name(1), "hard");
        assert!(p.in_baseline[1]);
        // Its re-scored ranking is its own (mrr 1/4 from d3 at rank 4).
        assert_eq!(m("mrr@10").compute(&p.rescored[1], &prep.contexts[1]), 0.25);
        assert_eq!(p.rescored[2], Ranking::default());
    }

    #[test]
    fn candidate_lists_pair_when_every_query_stored_them() {
        let (prep, mut b) = world();
        b.gold_fingerprint = "an older gold set".into();
        let metrics = vec![m("hit_rate@3"), m("candidates:hit_rate@3")];
        let mut warnings = Vec::new();
        let p = pair(&prep, &b, &metrics, m("judged@10"), true, &mut warnings);
        assert_eq!(p.rescored_candidates, None);
        assert_eq!(p.values[1], None);
        assert_eq!(
            warnings,
            ["the baseline stores no candidate lists, so candidates:hit_rate@3 has nothing to compare with: its checks are skipped; record a new baseline (it stores both stages) to gate it"]
        );
        let lists: [&[&str]; 3] = [&["d9"], &["a", "b", "c", "d", "d3"], &["d1"]];
        for (q, list) in b.queries.iter_mut().zip(lists) {
            q.candidates = Some(list.iter().map(|s| s.to_string()).collect());
        }
        let mut warnings = Vec::new();
        let p = pair(&prep, &b, &metrics, m("judged@10"), true, &mut warnings);
        assert!(warnings.is_empty(), "{warnings:?}");
        // q1's candidates hold d1 first; q2's hold d3 fifth, past 3.
        assert_eq!(p.values[1].as_deref(), Some(&[1.0, 0.0, 0.0][..]));
        assert_eq!(p.rescored_candidates.map(|r| r.len()), Some(3));
    }
}
