//! Two stages, retrieve then rerank (SPEC "Two stages"): what a perfect
//! reranker could reach from the candidates (the ceiling), and at which
//! stage each query lost its answer.
//!
//! The ceiling of a final metric is its value on the candidates reordered
//! as trec_eval orders its ideal ranking: labels by grade, highest first.
//! Relevance only grows with the grade, so that order also puts every
//! relevant candidate before every other one, which is the best order for
//! the set and rank metrics too; nDCG's ideal is the grade order itself.
//! Candidates without a label keep their count (`num_ret`) and come last.

use std::collections::HashSet;

use anyhow::Result;

use crate::diag::{input_error_hint, name_some};
use crate::eval::{Scores, Summary};
use crate::gold::GoldSet;
use crate::judge::{Hit, QueryContext, QueryLabels, Ranking};
use crate::metrics::{Kind, Metric};

/// The cutoff of the final stage when none is given: the smallest cutoff
/// among the final metrics (the reader's window), `None` (the whole run)
/// when no final metric has one. judged@k measures the gold set's
/// coverage, not the reader's window, so it does not count.
pub fn default_cutoff(metrics: &[Metric]) -> Option<u32> {
    metrics
        .iter()
        .filter(|m| !m.is_candidates() && m.kind != Kind::Judged)
        .filter_map(|m| m.cutoff)
        .min()
}

/// The final metrics that have a ceiling: all but judged@k, which a
/// reordering cannot meaningfully raise.
pub fn ceiling_metrics(metrics: &[Metric]) -> Vec<Metric> {
    metrics
        .iter()
        .copied()
        .filter(|m| !m.is_candidates() && m.kind != Kind::Judged)
        .collect()
}

/// The candidates as a perfect reranker orders them: labeled ones by grade,
/// highest first (ties keep their order), then the rest. Under span labels
/// the credited spans and the relevant chunks are each moved up the same
/// way, as if every span could be covered by one chunk: a bound, as a
/// ceiling should be.
pub fn ceiling_ranking(candidates: &Ranking) -> Ranking {
    let best_first = |hits: &[Hit]| {
        let mut hits = hits.to_vec();
        hits.sort_by_key(|h| std::cmp::Reverse(h.grade));
        for (i, h) in hits.iter_mut().enumerate() {
            h.rank = i as u32 + 1;
        }
        hits
    };
    Ranking {
        num_ret: candidates.num_ret,
        hits: best_first(&candidates.hits),
        chunks: candidates.chunks.as_deref().map(best_first),
    }
}

/// Where one query's answer ended up at the final cutoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// A relevant chunk is in the final top k.
    Reached,
    /// Not reached, though a relevant chunk is among the candidates.
    DroppedByRerank,
    /// No relevant chunk among the candidates.
    MissedByRetrieval,
}

impl Fate {
    pub fn name(self) -> &'static str {
        match self {
            Fate::Reached => "reached",
            Fate::DroppedByRerank => "dropped_by_rerank",
            Fate::MissedByRetrieval => "missed_by_retrieval",
        }
    }
}

pub fn fate(final_run: &Ranking, candidates: &Ranking, ctx: &QueryContext, cutoff: Option<u32>) -> Fate {
    let k = cutoff.unwrap_or(u32::MAX);
    if final_run
        .hits
        .iter()
        .any(|h| h.rank <= k && ctx.relevant(h.grade))
    {
        Fate::Reached
    } else if candidates.hits.iter().any(|h| ctx.relevant(h.grade)) {
        Fate::DroppedByRerank
    } else {
        Fate::MissedByRetrieval
    }
}

/// Queries of one scope by [`Fate`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lost {
    pub reached: usize,
    pub dropped_by_rerank: usize,
    pub missed_by_retrieval: usize,
}

impl Lost {
    fn add(&mut self, f: Fate) {
        match f {
            Fate::Reached => self.reached += 1,
            Fate::DroppedByRerank => self.dropped_by_rerank += 1,
            Fate::MissedByRetrieval => self.missed_by_retrieval += 1,
        }
    }
}

/// Counts per scope, `all` first, then each stratum in gold order, over the
/// queries `idx` (indices into the gold set and `fates`).
pub fn lost_by_scope(gold: &GoldSet, fates: &[Fate], idx: &[usize]) -> Vec<(String, Lost)> {
    let mut all = Lost::default();
    let mut strata = vec![Lost::default(); gold.strata.len()];
    for &q in idx {
        all.add(fates[q]);
        strata[gold.queries[q].stratum as usize].add(fates[q]);
    }
    std::iter::once(("all".to_string(), all))
        .chain(gold.strata.iter().cloned().zip(strata))
        .collect()
}

/// The two-stage view of one run: its fates at the cutoff, the count per
/// scope, and the ceiling of each final metric per query and per scope.
#[derive(Debug, Clone)]
pub struct Stages {
    pub cutoff: Option<u32>,
    pub fates: Vec<Fate>,
    pub lost: Vec<(String, Lost)>,
    /// Values of [`ceiling_metrics`] on the reordered candidates.
    pub ceiling: Scores,
    pub ceiling_summary: Summary,
    /// Per gold query (index), the final run's ids absent from its
    /// candidates, for queries that have any.
    pub absent: Vec<(usize, Vec<String>)>,
}

impl Stages {
    pub fn compute(
        gold: &GoldSet,
        contexts: &[QueryContext],
        metrics: &[Metric],
        final_run: &[Ranking],
        candidates: &[Ranking],
        cutoff: Option<u32>,
    ) -> Stages {
        let fates: Vec<Fate> = final_run
            .iter()
            .zip(candidates)
            .zip(contexts)
            .map(|((f, c), ctx)| fate(f, c, ctx, cutoff))
            .collect();
        let all: Vec<usize> = gold.id_order();
        let lost = lost_by_scope(gold, &fates, &all);
        let ideal: Vec<Ranking> = candidates.iter().map(ceiling_ranking).collect();
        let ceiling = Scores::compute(&ceiling_metrics(metrics), &ideal, contexts);
        let ceiling_summary = Summary::new(&ceiling, gold);
        Stages {
            cutoff,
            fates,
            lost,
            ceiling,
            ceiling_summary,
            absent: Vec::new(),
        }
    }
}

/// Final/ceiling for one scope: `None` when the ceiling is 0 (no candidate
/// list holds anything relevant, so there is nothing to rerank).
pub fn ratio(final_mean: f64, ceiling_mean: f64) -> Option<f64> {
    (ceiling_mean > 0.0).then(|| final_mean / ceiling_mean)
}

/// The candidates must answer the same gold queries as the final run:
/// otherwise a query's loss would be blamed on a stage that never ran
/// for it.
pub fn check_same_queries(
    gold: &GoldSet,
    run: &std::path::Path,
    run_present: &[bool],
    candidates: &std::path::Path,
    cand_present: &[bool],
) -> Result<()> {
    let only = |a: &[bool], b: &[bool]| -> Vec<&str> {
        a.iter()
            .zip(b)
            .enumerate()
            .filter(|(_, (x, y))| **x && !**y)
            .map(|(i, _)| gold.queries[i].id.as_str())
            .collect()
    };
    let run_only = only(run_present, cand_present);
    let cand_only = only(cand_present, run_present);
    if run_only.is_empty() && cand_only.is_empty() {
        return Ok(());
    }
    let mut parts = Vec::new();
    if !run_only.is_empty() {
        parts.push(format!(
            "{} quer{} of the final run {} has no candidates: {}",
            run_only.len(),
            if run_only.len() == 1 { "y" } else { "ies" },
            run.display(),
            name_some(&run_only, 5)
        ));
    }
    if !cand_only.is_empty() {
        parts.push(format!(
            "{} quer{} with candidates {} absent from the final run: {}",
            cand_only.len(),
            if cand_only.len() == 1 { "y" } else { "ies" },
            if cand_only.len() == 1 { "is" } else { "are" },
            name_some(&cand_only, 5)
        ));
    }
    Err(input_error_hint(
        candidates,
        None,
        format!("the candidates cover other queries than the final run: {}", parts.join("; ")),
        "write both stages' results for the same gold queries (the candidates the reranker saw, and what it returned)",
    ))
}

/// Per gold query, the final run's ids that its candidate list lacks.
pub fn absent_from_candidates(
    final_ids: &[Vec<String>],
    cand_ids: &[Vec<String>],
) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    for (q, (f, c)) in final_ids.iter().zip(cand_ids).enumerate() {
        if f.is_empty() {
            continue;
        }
        let have: HashSet<&str> = c.iter().map(String::as_str).collect();
        let absent: Vec<String> = f
            .iter()
            .filter(|id| !have.contains(id.as_str()))
            .cloned()
            .collect();
        if !absent.is_empty() {
            out.push((q, absent));
        }
    }
    out
}

/// One warning line for all of [`absent_from_candidates`]; the ids go to
/// the JSON report.
pub fn absent_warning(
    gold: &GoldSet,
    run: &std::path::Path,
    candidates: &std::path::Path,
    absent: &[(usize, Vec<String>)],
) -> Option<String> {
    if absent.is_empty() {
        return None;
    }
    let chunks: usize = absent.iter().map(|(_, ids)| ids.len()).sum();
    let names: Vec<&str> = absent.iter().map(|(q, _)| gold.queries[*q].id.as_str()).collect();
    Some(format!(
        "{}: {chunks} chunk{} in {} quer{} {} not among the candidates {} (a reranker reorders its candidates; it is not expected to add any): {}; the JSON report lists them",
        run.display(),
        if chunks == 1 { "" } else { "s" },
        names.len(),
        if names.len() == 1 { "y" } else { "ies" },
        if chunks == 1 { "is" } else { "are" },
        candidates.display(),
        name_some(&names, 5)
    ))
}

/// Which stage lost a query that went from hit to miss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LostIn {
    Retrieval,
    Rerank,
    Both,
}

impl LostIn {
    pub fn name(self) -> &'static str {
        match self {
            LostIn::Retrieval => "retrieval",
            LostIn::Rerank => "rerank",
            LostIn::Both => "both",
        }
    }
}

/// SPEC's rule: of the relevant chunks the baseline's final run ranked
/// within the cutoff, none among the current candidates is `retrieval`,
/// all of them `rerank`, some `both`. When the baseline had none within the
/// cutoff (the flip was on a deeper metric), its relevant chunks at any
/// stored rank stand in; `None` when it had none at all.
pub fn lost_in(
    baseline_final: &[String],
    labels: &QueryLabels,
    ctx: &QueryContext,
    cutoff: Option<u32>,
    current_candidates: &HashSet<&str>,
) -> Option<LostIn> {
    let relevant = |ids: &mut dyn Iterator<Item = &String>| -> Vec<String> {
        ids.filter(|id| labels.grade(id.as_bytes()).is_some_and(|g| ctx.relevant(g)))
            .cloned()
            .collect()
    };
    let k = cutoff.map_or(usize::MAX, |k| k as usize);
    let mut was = relevant(&mut baseline_final.iter().take(k));
    if was.is_empty() {
        was = relevant(&mut baseline_final.iter());
    }
    if was.is_empty() {
        return None;
    }
    let kept = was
        .iter()
        .filter(|id| current_candidates.contains(id.as_str()))
        .count();
    Some(if kept == 0 {
        LostIn::Retrieval
    } else if kept == was.len() {
        LostIn::Rerank
    } else {
        LostIn::Both
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gold::{GoldFormat, GoldQuery, Label};

    fn hit(rank: u32, grade: i32) -> Hit {
        Hit { rank, grade }
    }

    #[test]
    fn ceiling_orders_by_grade_and_keeps_the_count() {
        let c = Ranking {
            num_ret: 50,
            hits: vec![hit(4, 0), hit(9, 1), hit(20, 3), hit(33, -1), hit(40, 2)],
            chunks: None,
        };
        let r = ceiling_ranking(&c);
        assert_eq!(r.num_ret, 50);
        assert_eq!(
            r.hits,
            vec![hit(1, 3), hit(2, 2), hit(3, 1), hit(4, 0), hit(5, -1)]
        );
        assert_eq!(r.chunks, None);
        let spans = Ranking {
            num_ret: 9,
            hits: vec![hit(7, 1)],
            chunks: Some(vec![hit(5, 1), hit(7, 2)]),
        };
        let r = ceiling_ranking(&spans);
        assert_eq!(r.hits, vec![hit(1, 1)]);
        assert_eq!(r.chunks, Some(vec![hit(1, 2), hit(2, 1)]));
    }

    /// Hand-computed ceilings, graded. Labels: a=3, b=2, c=1, d=0; the
    /// candidates hold c, d, a (not b) among 20. Ideal order a(3), c(1),
    /// d(0).
    /// ndcg@3 = (3/log2 2 + 1/log2 3) / (3/log2 2 + 2/log2 3 + 1/log2 4)
    ///        = (3 + 0.630930) / (3 + 1.261860 + 0.5) = 0.762503;
    /// precision@3 (level 1) = 2/3; recall@3 = 2/3 (3 relevant: a, b, c);
    /// mrr = 1; map = (1/1 + 2/2) / 3 = 2/3.
    #[test]
    fn graded_ceiling_by_hand() {
        let q = GoldQuery {
            id: "q".into(),
            text: None,
            stratum: 0,
            labels: [("a", 3), ("b", 2), ("c", 1), ("d", 0)]
                .iter()
                .map(|(id, g)| Label {
                    id: id.to_string(),
                    grade: *g,
                })
                .collect(),
            spans: Vec::new(),
        };
        let labels = QueryLabels::new(&q);
        let ctx = QueryContext::new(&q, 1);
        let mut ids: Vec<String> = (0..20).map(|i| format!("x{i}")).collect();
        ids[2] = "c".into();
        ids[5] = "d".into();
        ids[11] = "a".into();
        let cand = Ranking::from_ordered(ids.iter().map(String::as_str), &labels);
        let ideal = ceiling_ranking(&cand);
        let m = |s: &str| s.parse::<Metric>().unwrap().compute(&ideal, &ctx);
        let ndcg3 = (3.0 + 1.0 / 3f64.log2()) / (3.0 + 2.0 / 3f64.log2() + 0.5);
        assert!((m("ndcg@3") - ndcg3).abs() < 1e-12, "{}", m("ndcg@3"));
        assert!((m("ndcg@3") - 0.762503).abs() < 1e-6);
        assert_eq!(m("precision@3"), 2.0 / 3.0);
        assert_eq!(m("recall@3"), 2.0 / 3.0);
        assert_eq!(m("mrr"), 1.0);
        assert_eq!(m("map"), 2.0 / 3.0);
        assert_eq!(m("hit_rate@1"), 1.0);
    }

    fn gold3() -> GoldSet {
        let q = |id: &str, stratum: u32, rel: &[&str]| GoldQuery {
            id: id.into(),
            text: None,
            stratum,
            labels: rel
                .iter()
                .map(|r| Label {
                    id: r.to_string(),
                    grade: 1,
                })
                .collect(),
            spans: Vec::new(),
        };
        GoldSet::from_parts(
            "g",
            GoldFormat::Yaml,
            vec![
                q("q1", 0, &["r1"]),
                q("q2", 0, &["r2", "r2b"]),
                q("q3", 1, &["r3"]),
            ],
            vec!["how-to".into(), "lookup".into()],
        )
        .unwrap()
    }

    /// Binary, three queries, final cutoff 2:
    /// q1: final [r1, x], candidates [x, y, r1] -> reached;
    /// q2: final [x, y, r2], candidates [x, y, r2] -> r2 is at rank 3 > 2,
    ///     but among the candidates -> dropped_by_rerank;
    /// q3: final [x], candidates [x, y] -> missed_by_retrieval.
    /// Ceilings: hit_rate@2 = 1, 1, 0 (mean 2/3); precision@2 = 1/2, 1/2,
    /// 0; the final hit_rate@2 = 1, 0, 0 (mean 1/3), so final/ceiling = 1/2.
    #[test]
    fn binary_fates_and_ceilings_by_hand() {
        let gold = gold3();
        let labels = crate::judge::label_index(&gold);
        let ctx = crate::judge::contexts(&gold, 1);
        let rank = |q: usize, ids: &[&str]| Ranking::from_ordered(ids.iter().copied(), &labels[q]);
        let fin = vec![rank(0, &["r1", "x"]), rank(1, &["x", "y", "r2"]), rank(2, &["x"])];
        let cand = vec![
            rank(0, &["x", "y", "r1"]),
            rank(1, &["x", "y", "r2"]),
            rank(2, &["x", "y"]),
        ];
        let metrics: Vec<Metric> = ["hit_rate@2", "precision@2", "judged@5", "candidates:recall@3"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        assert_eq!(default_cutoff(&metrics), Some(2));
        let s = Stages::compute(&gold, &ctx, &metrics, &fin, &cand, default_cutoff(&metrics));
        assert_eq!(
            s.fates,
            vec![Fate::Reached, Fate::DroppedByRerank, Fate::MissedByRetrieval]
        );
        let by = |name: &str| s.lost.iter().find(|(n, _)| n == name).unwrap().1;
        assert_eq!(
            by("all"),
            Lost {
                reached: 1,
                dropped_by_rerank: 1,
                missed_by_retrieval: 1
            }
        );
        assert_eq!(
            by("how-to"),
            Lost {
                reached: 1,
                dropped_by_rerank: 1,
                missed_by_retrieval: 0
            }
        );
        assert_eq!(
            by("lookup"),
            Lost {
                reached: 0,
                dropped_by_rerank: 0,
                missed_by_retrieval: 1
            }
        );
        let names: Vec<String> = s.ceiling.metrics.iter().map(Metric::name).collect();
        assert_eq!(names, ["hit_rate@2", "precision@2"]);
        assert_eq!(s.ceiling.values[0], vec![1.0, 1.0, 0.0]);
        assert_eq!(s.ceiling.values[1], vec![0.5, 0.5, 0.0]);
        assert_eq!(s.ceiling_summary.all.means[0], 2.0 / 3.0);
        assert_eq!(s.ceiling_summary.strata[0].means[0], 1.0);
        assert_eq!(ratio(1.0 / 3.0, 2.0 / 3.0), Some(0.5));
        assert_eq!(ratio(0.0, 0.0), None);
    }

    #[test]
    fn queries_the_stages_do_not_share_are_an_error() {
        let gold = gold3();
        let p = std::path::Path::new;
        assert!(
            check_same_queries(&gold, p("f"), &[true, true, false], p("c"), &[true, true, false]).is_ok()
        );
        let e = check_same_queries(&gold, p("f"), &[true, true, false], p("c"), &[true, false, true])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("c: the candidates cover other queries than the final run"),
            "{e}"
        );
        assert!(
            e.contains("1 query of the final run f has no candidates: `q2`"),
            "{e}"
        );
        assert!(
            e.contains("1 query with candidates is absent from the final run: `q3`"),
            "{e}"
        );
        assert!(e.contains("hint:"), "{e}");
    }

    #[test]
    fn chunks_the_reranker_added_are_named() {
        let gold = gold3();
        let v = |ids: &[&str]| ids.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let absent = absent_from_candidates(
            &[v(&["a", "b"]), v(&["c"]), v(&[])],
            &[v(&["b", "a"]), v(&["a"]), v(&["z"])],
        );
        assert_eq!(absent, vec![(1, v(&["c"]))]);
        let w = absent_warning(
            &gold,
            std::path::Path::new("f"),
            std::path::Path::new("c"),
            &absent,
        )
        .unwrap();
        assert!(
            w.starts_with("f: 1 chunk in 1 query is not among the candidates c"),
            "{w}"
        );
        assert!(w.contains("`q2`"), "{w}");
    }

    /// SPEC's rule with cutoff 2. The baseline ranked r2 and r2b (both
    /// relevant) in its top 2.
    #[test]
    fn lost_in_follows_the_baseline_relevant_chunks() {
        let gold = gold3();
        let labels = crate::judge::label_index(&gold);
        let ctx = crate::judge::contexts(&gold, 1);
        let base = vec!["r2".to_string(), "r2b".to_string(), "x".to_string()];
        let set = |ids: &[&'static str]| ids.iter().copied().collect::<HashSet<&str>>();
        let li = |cands: &[&'static str]| lost_in(&base, &labels[1], &ctx[1], Some(2), &set(cands));
        assert_eq!(li(&["r2", "r2b", "y"]), Some(LostIn::Rerank));
        assert_eq!(li(&["x", "y"]), Some(LostIn::Retrieval));
        assert_eq!(li(&["r2", "y"]), Some(LostIn::Both));
        // Cutoff 1: only r2 counts.
        assert_eq!(
            lost_in(&base, &labels[1], &ctx[1], Some(1), &set(&["r2"])),
            Some(LostIn::Rerank)
        );
        // Nothing relevant within the cutoff: the deeper stored ranks stand in.
        let deep = vec!["x".to_string(), "y".to_string(), "r2".to_string()];
        assert_eq!(
            lost_in(&deep, &labels[1], &ctx[1], Some(2), &set(&["y"])),
            Some(LostIn::Retrieval)
        );
        assert_eq!(
            lost_in(&["x".to_string()], &labels[1], &ctx[1], Some(2), &set(&[])),
            None
        );
    }
}
