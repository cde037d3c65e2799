//! `eval --curve METRIC@A..B`: a cutoff metric at every depth from A to B,
//! overall and per stratum, each mean with its 95% interval; with
//! `--target T`, per scope the smallest depth whose mean reaches T with 95%
//! confidence (SPEC "Tuning knobs": the depth to hand a reranker); with a
//! candidate list, the ceiling a perfect reranker of it could reach at
//! every depth.
//!
//! Each point is the metric `METRIC@k` scored and averaged exactly as
//! `eval --metrics METRIC@k` does, and its interval is the one `eval`
//! prints for that metric (the same resamples, seed and method; the draws
//! do not depend on which metrics ride along), so a curve is the per-cutoff
//! evals side by side.
//!
//! # The target depth
//! The two-sided interval says what a mean is worth; the target needs a
//! promise in one direction, "the mean is at least T", so each point also
//! carries a one-sided 95% lower bound from the binomial distribution
//! ([`crate::stats::binomial`] says which bound and why not a bootstrap or
//! a conformal one). The depth named is found by fixed-sequence testing
//! (Maurer, Hothorn & Lehmacher 1995): from the deepest cutoff down, each
//! depth is accepted while its bound reaches T, and the search stops at the
//! first that does not. The first false acceptance would have to happen at
//! the deepest depth whose true mean is below T, so the depth named holds
//! with 95% confidence although many depths were looked at; no correction
//! for the number of cutoffs is needed. For a metric that can only grow
//! with k (recall, hit rate) it is simply the smallest depth whose bound
//! reaches T. The promise is per scope: across several strata each holds
//! at 95% on its own.
//!
//! # References
//! - W. Maurer, L. A. Hothorn, W. Lehmacher (1995). Multiple comparisons in
//!   drug clinical trials and preclinical assays: a-priori ordered
//!   hypotheses. In *Biometrie in der chemisch-pharmazeutischen Industrie*
//!   6, 3-18.

use anyhow::Result;

use crate::compare::{scopes, Scope};
use crate::diag::usage_error;
use crate::eval::{MeanIntervals, RowScope, Scores, Summary};
use crate::gold::GoldSet;
use crate::judge::{QueryContext, Ranking};
use crate::metrics::{Kind, Metric};
use crate::stages;
use crate::stats::binomial;
use crate::stats::interval::{Interval, IntervalSettings};

/// At most this many cutoffs in one curve: each is a metric scored on every
/// query and resampled with the others, so the work grows with it.
pub const MAX_POINTS: usize = 1000;

/// The confidence of the target's one-sided bound.
pub const TARGET_LEVEL: f64 = 0.95;

/// A parsed `--curve` argument: one metric per cutoff, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct CurveSpec {
    pub metrics: Vec<Metric>,
}

impl CurveSpec {
    /// Parses `recall@1..100`, `candidates:R@10..50`, `nDCG@1..20`: any
    /// metric name that takes a cutoff, with a range `A..B` (1 <= A <= B,
    /// at most [`MAX_POINTS`] cutoffs) in place of k.
    pub fn parse(text: &str) -> Result<CurveSpec> {
        let raw = text.trim();
        let example = "for example --curve recall@1..100";
        let Some((head, range)) = raw.rsplit_once('@') else {
            return Err(usage_error(
                format!("--curve `{raw}` has no cutoff range"),
                format!("write the metric with a range of cutoffs: {example}"),
            ));
        };
        let Some((a, b)) = range.split_once("..") else {
            return Err(usage_error(
                format!("--curve `{raw}`: `{range}` is not a range A..B"),
                example,
            ));
        };
        let cutoff = |s: &str| s.trim().parse::<u32>().ok().filter(|&k| k > 0);
        let (Some(a), Some(b)) = (cutoff(a), cutoff(b)) else {
            return Err(usage_error(
                format!("--curve `{raw}`: the cutoffs of `{range}` must be positive integers"),
                example,
            ));
        };
        if a > b {
            return Err(usage_error(
                format!("--curve `{raw}`: the range runs backwards"),
                format!("write the smaller cutoff first: {head}@{b}..{a}"),
            ));
        }
        let points = (b - a) as usize + 1;
        if points > MAX_POINTS {
            return Err(usage_error(
                format!("--curve `{raw}` asks for {points} cutoffs, more than {MAX_POINTS}"),
                format!("narrow the range to at most {MAX_POINTS} cutoffs"),
            ));
        }
        let first: Metric = format!("{head}@{a}").parse()?;
        if first.cutoff != Some(a) {
            return Err(usage_error(
                format!("--curve `{raw}`: {head} takes no cutoff"),
                example,
            ));
        }
        let metrics = (a..=b)
            .map(|k| Metric {
                cutoff: Some(k),
                ..first
            })
            .collect();
        Ok(CurveSpec { metrics })
    }

    /// rgate's spelling: `recall@1..100`, `candidates:recall@10..50`.
    pub fn name(&self) -> String {
        let first = self.metrics[0];
        let last = self.metrics[self.metrics.len() - 1].cutoff.unwrap_or(0);
        format!("{first}..{last}")
    }

    /// The metric the curve is of, at its first cutoff.
    pub fn first(&self) -> Metric {
        self.metrics[0]
    }

    pub fn cutoffs(&self) -> Vec<u32> {
        self.metrics.iter().filter_map(|m| m.cutoff).collect()
    }
}

/// How a scope's one-sided bounds were computed (see
/// [`crate::stats::binomial`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundMethod {
    /// Every value is 0 or 1 by construction: exact binomial.
    ClopperPearson,
    /// Values anywhere in [0, 1].
    Chernoff,
}

impl BoundMethod {
    pub fn name(self) -> &'static str {
        match self {
            BoundMethod::ClopperPearson => "clopper-pearson",
            BoundMethod::Chernoff => "chernoff",
        }
    }
}

/// The metric at one cutoff in one scope.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub k: u32,
    /// The mean, as `eval` prints it for `METRIC@k`.
    pub mean: f64,
    /// Its 95% interval, as `eval` computes it (none under `--resamples
    /// 0`, or where the scope has fewer than two queries).
    pub interval: Option<Interval>,
    /// One-sided 95% lower bound of the mean (none where a value lies
    /// outside [0, 1]).
    pub lower_bound: Option<f64>,
    /// The ceiling's mean at k: the metric on the candidates reordered as
    /// a perfect reranker would ([`stages::ceiling_ranking`]); none
    /// without candidates or for a metric without a ceiling.
    pub ceiling: Option<f64>,
}

/// Where a scope's curve reaches the target.
#[derive(Debug, Clone, PartialEq)]
pub struct Depth {
    /// The depth whose mean is at least the target with 95% confidence
    /// (fixed-sequence, see the module docs); none within the range.
    pub k: Option<u32>,
    /// The smallest depth whose observed mean reaches the target: what the
    /// sample shows, without the confidence.
    pub k_mean: Option<u32>,
}

/// One scope's curve: `all`, or a stratum.
#[derive(Debug, Clone, PartialEq)]
pub struct CurveScope {
    pub scope: String,
    pub n: usize,
    pub bound_method: BoundMethod,
    pub points: Vec<Point>,
    /// Set when a target was given.
    pub depth: Option<Depth>,
}

/// A curve over every scope with queries.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub spec: CurveSpec,
    /// The intervals' resampling (none when none were computed).
    pub intervals: Option<IntervalSettings>,
    /// `--target`, when given.
    pub target: Option<f64>,
    /// Whether the points carry a ceiling.
    pub has_ceiling: bool,
    /// `all` first, then each stratum with queries, in the gold set's order.
    pub scopes: Vec<CurveScope>,
}

impl Curve {
    /// Rejects a target no mean in [0, 1] could have a bound at or above.
    pub fn check_target(target: f64) -> Result<()> {
        if target > 0.0 && target <= 1.0 {
            Ok(())
        } else {
            Err(usage_error(
                format!("--target {target} is not in (0, 1]"),
                "give the mean the curve must reach, for example --target 0.9",
            ))
        }
    }
}

/// What a curve is computed from: the gold set and the judged rankings of
/// the run (and of its candidate list).
pub struct CurveInputs<'a> {
    pub gold: &'a GoldSet,
    pub contexts: &'a [QueryContext],
    pub rankings: &'a [Ranking],
    pub candidates: Option<&'a [Ranking]>,
    /// Bootstrap resamples for the intervals (0: none) and their seed.
    pub resamples: u32,
    pub seed: u64,
}

/// Cutoffs scored at a time: the values of every cutoff on every query
/// were held at once, three times over (by query, by metric, and in the
/// order the bootstrap reads), 1.85 GB for 1,000 cutoffs of 70,000
/// queries. A block of this many holds about 1/30 of that; each point
/// comes out the same, as neither a mean nor its interval's draws depend
/// on which metrics ride along.
pub const CUTOFF_BLOCK: usize = 32;

/// Scores the curve's metrics on every query and summarises them per
/// scope. A `candidates:` curve needs `candidates` (the caller checks).
pub fn compute(spec: &CurveSpec, input: &CurveInputs, target: Option<f64>) -> Curve {
    compute_in_blocks(spec, input, target, CUTOFF_BLOCK)
}

/// [`compute`], `block` cutoffs at a time.
fn compute_in_blocks(spec: &CurveSpec, input: &CurveInputs, target: Option<f64>, block: usize) -> Curve {
    let gold = input.gold;
    let all: Vec<usize> = (0..gold.len()).collect();
    let scoped = scopes(gold, &all);
    let has_ceiling =
        input.candidates.is_some() && stages::ceiling_metrics(&spec.metrics).len() == spec.metrics.len();
    let methods: Vec<BoundMethod> = scoped
        .iter()
        .map(|scope| bound_method(spec.first(), scope, input.contexts))
        .collect();
    let mut points: Vec<Vec<Point>> = vec![Vec::with_capacity(spec.metrics.len()); scoped.len()];
    // The candidate lists as a perfect reranker would order them, once.
    let ideal: Option<Vec<Ranking>> = match input.candidates {
        Some(c) if has_ceiling => Some(c.iter().map(stages::ceiling_ranking).collect()),
        _ => None,
    };
    let mut settings = None;
    for metrics in spec.metrics.chunks(block.max(1)) {
        let scores = Scores::compute_stages(metrics, input.rankings, input.candidates, input.contexts);
        let summary = Summary::new(&scores, gold);
        let intervals =
            (input.resamples > 0).then(|| MeanIntervals::compute(&scores, gold, input.resamples, input.seed));
        let ceiling = ideal
            .as_ref()
            .map(|ideal| Summary::new(&Scores::compute(metrics, ideal, input.contexts), gold));
        for (si, scope) in scoped.iter().enumerate() {
            if scope.members.is_empty() {
                continue;
            }
            let (row_scope, row) = if si == 0 {
                (RowScope::All, &summary.all)
            } else {
                (RowScope::Stratum(si - 1), &summary.strata[si - 1])
            };
            let ceiling_row = ceiling
                .as_ref()
                .map(|c| if si == 0 { &c.all } else { &c.strata[si - 1] });
            for (m, metric) in metrics.iter().enumerate() {
                let values: Vec<f64> = scope.members.iter().map(|&q| scores.values[m][q]).collect();
                points[si].push(Point {
                    k: metric.cutoff.unwrap_or(0),
                    mean: row.means[m],
                    interval: intervals.as_ref().and_then(|i| i.row(row_scope)[m]),
                    lower_bound: binomial::mean_lower_bound(
                        &values,
                        methods[si] == BoundMethod::ClopperPearson,
                        1.0 - TARGET_LEVEL,
                    ),
                    ceiling: ceiling_row.map(|r| r.means[m]),
                });
            }
        }
        settings = intervals.map(|i| i.settings);
    }
    let out = scoped
        .iter()
        .zip(points)
        .zip(methods)
        .filter(|((scope, _), _)| !scope.members.is_empty())
        .map(|((scope, points), method)| CurveScope {
            scope: scope.name.clone(),
            n: scope.members.len(),
            bound_method: method,
            depth: target.map(|t| depth_of(&points, t)),
            points,
        })
        .collect();
    Curve {
        spec: spec.clone(),
        intervals: settings,
        target,
        has_ceiling,
        scopes: out,
    }
}

/// Whether the metric's value on every query of the scope can only be 0
/// or 1: a hit rate always, recall where no query has more than one
/// relevant label. Decided from the metric and the gold set, never from
/// the values a run happened to get (a sample of recalls that came out 0
/// or 1 by chance does not make Clopper-Pearson valid for them).
fn bound_method(metric: Metric, scope: &Scope, contexts: &[QueryContext]) -> BoundMethod {
    let binary = match metric.kind {
        Kind::HitRate => true,
        Kind::Recall => scope.members.iter().all(|&q| contexts[q].num_rel <= 1),
        _ => false,
    };
    if binary {
        BoundMethod::ClopperPearson
    } else {
        BoundMethod::Chernoff
    }
}

/// The target depth of one scope's points (see the module docs).
pub fn depth_of(points: &[Point], target: f64) -> Depth {
    let mut k = None;
    for p in points.iter().rev() {
        match p.lower_bound {
            Some(b) if b >= target => k = Some(p.k),
            _ => break,
        }
    }
    Depth {
        k,
        k_mean: points.iter().find(|p| p.mean >= target).map(|p| p.k),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_name_themselves() {
        let s = CurveSpec::parse("R@1..20").unwrap();
        assert_eq!(s.name(), "recall@1..20");
        assert_eq!(s.cutoffs(), (1..=20).collect::<Vec<u32>>());
        let s = CurveSpec::parse("candidates:recall@10..12").unwrap();
        assert_eq!(s.name(), "candidates:recall@10..12");
        assert!(s.first().is_candidates());
        assert_eq!(CurveSpec::parse("ndcg@5..5").unwrap().metrics.len(), 1);
        for bad in [
            "recall",
            "recall@10",
            "recall@0..5",
            "recall@9..3",
            "r_precision@1..3",
            "recall@1..2000",
            "bogus@1..3",
        ] {
            let e = CurveSpec::parse(bad).unwrap_err();
            assert!(
                e.downcast_ref::<crate::diag::UserError>().is_some(),
                "{bad}: {e:#}"
            );
        }
    }

    /// A curve scored a block of cutoffs at a time is the curve scored
    /// all at once, point for point, intervals and ceilings included.
    #[test]
    fn blocks_of_cutoffs_give_the_whole_curve() {
        use crate::gold::{GoldFormat, GoldQuery, Label};
        use crate::judge::Hit;
        let queries: Vec<GoldQuery> = (0..40usize)
            .map(|q| GoldQuery {
                id: format!("q{q:02}"),
                text: None,
                stratum: (q % 3) as u32,
                spans: Vec::new(),
                labels: (0..1 + q % 3)
                    .map(|l| Label {
                        id: format!("d{l}"),
                        grade: 1 + (l % 2) as i32,
                    })
                    .collect(),
            })
            .collect();
        let strata = vec!["a".into(), "b".into(), "c".into()];
        let gold = GoldSet::from_parts("g.yaml", GoldFormat::Yaml, queries, strata).unwrap();
        let contexts = crate::judge::contexts(&gold, 1);
        // Label l of query q at a rank that moves with q, l and the shift;
        // labels that meet at one rank keep the first.
        let ranking = |q: usize, shift: usize| {
            let mut hits: Vec<Hit> = Vec::new();
            for l in 0..1 + q % 3 {
                let rank = 1 + ((q * 7 + l * 11 + shift) % 30) as u32;
                if !hits.iter().any(|h| h.rank == rank) {
                    hits.push(Hit {
                        rank,
                        grade: 1 + (l % 2) as i32,
                    });
                }
            }
            hits.sort_by_key(|h| h.rank);
            Ranking {
                num_ret: 30,
                hits,
                chunks: None,
            }
        };
        let rankings: Vec<Ranking> = (0..40).map(|q| ranking(q, 0)).collect();
        let candidates: Vec<Ranking> = (0..40).map(|q| ranking(q, 5)).collect();
        let input = CurveInputs {
            gold: &gold,
            contexts: &contexts,
            rankings: &rankings,
            candidates: Some(&candidates),
            resamples: 200,
            seed: 7,
        };
        for spec in ["recall@1..25", "ndcg@3..20", "candidates:recall@1..12"] {
            let spec = CurveSpec::parse(spec).unwrap();
            let whole = compute_in_blocks(&spec, &input, Some(0.5), usize::MAX);
            assert!(whole.scopes[0].points.iter().all(|p| p.interval.is_some()));
            for block in [1, 7, CUTOFF_BLOCK] {
                assert_eq!(
                    compute_in_blocks(&spec, &input, Some(0.5), block),
                    whole,
                    "{block}"
                );
            }
        }
    }

    fn point(k: u32, mean: f64, bound: f64) -> Point {
        Point {
            k,
            mean,
            interval: None,
            lower_bound: Some(bound),
            ceiling: None,
        }
    }

    /// Fixed-sequence from the top: the bound reaches 0.9 at k = 3 and
    /// stays above; the mean first reaches it at k = 2.
    #[test]
    fn the_target_depth_is_the_last_accepted_from_the_top() {
        let pts = [
            point(1, 0.5, 0.3),
            point(2, 0.92, 0.85),
            point(3, 0.95, 0.91),
            point(4, 0.97, 0.93),
        ];
        assert_eq!(
            depth_of(&pts, 0.9),
            Depth {
                k: Some(3),
                k_mean: Some(2)
            }
        );
        // A dip at the top stops the search at once, whatever lies below.
        let dip = [point(1, 0.95, 0.92), point(2, 0.85, 0.8)];
        assert_eq!(
            depth_of(&dip, 0.9),
            Depth {
                k: None,
                k_mean: Some(1)
            }
        );
        assert_eq!(
            depth_of(&pts, 0.99),
            Depth {
                k: None,
                k_mean: None
            }
        );
    }
}
