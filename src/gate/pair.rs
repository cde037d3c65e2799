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
            final_values(prep, b, &stored, &reuse, m, &rescored, warnings)
        });
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

/// A final metric's baseline values: stored, else re-scored from the
/// stored rankings when they reach deep enough, else none, with a warning
/// saying why.
fn final_values(
    prep: &Prepared,
    b: &Baseline,
    stored: &HashMap<&str, usize>,
    reuse: &Reuse,
    m: &Metric,
    rescored: &[Ranking],
    warnings: &mut Vec<String>,
) -> Option<Vec<f64>> {
    let stored_idx = b.metric_index(m);
    match stored_idx {
        Some(mi) if reuse.same_gold => return Some(stored_values(&prep.gold, b, stored, mi)),
        _ if reuse.covers(b, m) => return Some(computed(prep, m, rescored)),
        _ => {}
    }
    let depth = b.depth.map_or("all".to_string(), |d| d.to_string());
    warnings.push(match stored_idx {
        Some(_) if !reuse.locatable => format!(
            "the gold set or relevance level changed since the baseline, and {m} cannot be re-scored: the gold set has span labels and the baseline stores no locations of its ranked chunks; its checks are skipped; record a new baseline to gate it"
        ),
        Some(_) => format!(
            "the gold set or relevance level changed since the baseline, and {m} cannot be re-scored from rankings stored to depth {depth}: its checks are skipped; record a new baseline to gate it (or set baseline_depth: all)"
        ),
        None if !reuse.locatable => format!(
            "the baseline has no {m}, and cannot be re-scored: the gold set has span labels and the baseline stores no locations of its ranked chunks; its checks are skipped; record a new baseline to gate it"
        ),
        None => format!(
            "the baseline has no {m} and stores rankings only to depth {depth}: its checks are skipped; record a new baseline to gate it"
        ),
    });
    None
}

/// Records whether the gold set changed since the baseline, and which
/// queries were added or removed.
pub(super) fn gold_changes(prep: &Prepared, b: &Baseline, paired: &Paired, out: &mut RetrieverOutcome) {
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
