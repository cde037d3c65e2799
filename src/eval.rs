//! Per-query metric values and their means: overall (micro, over gold
//! queries, as trec_eval `-c`), per stratum, and the macro mean of stratum
//! means.
//!
//! Values are kept per metric as one vector over the gold queries in gold
//! order: that vector is exactly what the paired statistics resample.

use crate::baseline::ScopeMeans;
use crate::gold::GoldSet;
use crate::judge::{QueryContext, Ranking};
use crate::metrics::{Metric, Stage};
use crate::stats::interval::{mean_intervals, Interval, IntervalSettings};

#[derive(Debug, Clone, PartialEq)]
pub struct Scores {
    pub metrics: Vec<Metric>,
    /// `values[m][q]`: metric `m` on gold query `q`.
    pub values: Vec<Vec<f64>>,
}

impl Scores {
    pub fn compute(metrics: &[Metric], rankings: &[Ranking], contexts: &[QueryContext]) -> Scores {
        Scores::compute_stages(metrics, rankings, None, contexts)
    }

    /// Scores each metric on its stage's rankings: `candidates:` metrics on
    /// the candidate lists, the others on the final run. A `candidates:`
    /// metric without candidate lists scores 0 on every query (the commands
    /// refuse such a metric before anything is read).
    pub fn compute_stages(
        metrics: &[Metric],
        rankings: &[Ranking],
        candidates: Option<&[Ranking]>,
        contexts: &[QueryContext],
    ) -> Scores {
        use rayon::prelude::*;
        // Query by query, every metric at once: a query's ranking and
        // context are read once instead of once per metric (70,000 queries'
        // rankings do not stay in cache between metrics), and blocks of
        // queries go to different threads. Each value is computed by the
        // same call as before, so the values are the same bits.
        const BLOCK: usize = 4096;
        let m_count = metrics.len();
        let mut by_query = vec![0.0; contexts.len() * m_count];
        by_query
            .par_chunks_mut(BLOCK * m_count.max(1))
            .enumerate()
            .for_each(|(b, out)| {
                let first = b * BLOCK;
                for (i, row) in out.chunks_mut(m_count.max(1)).enumerate() {
                    let q = first + i;
                    for (m, v) in metrics.iter().zip(row.iter_mut()) {
                        *v = match (m.stage, candidates) {
                            (Stage::Final, _) => m.compute(&rankings[q], &contexts[q]),
                            (Stage::Candidates, Some(c)) => m.compute(&c[q], &contexts[q]),
                            (Stage::Candidates, None) => 0.0,
                        };
                    }
                }
            });
        let values = (0..m_count)
            .map(|m| by_query.iter().skip(m).step_by(m_count).copied().collect())
            .collect();
        Scores {
            metrics: metrics.to_vec(),
            values,
        }
    }
}

/// Kept here for the callers that average scores; it lives with the
/// metrics, whose `all` lines it forms.
pub use crate::metrics::mean_of;

/// One row of means: a scope (all, a stratum, macro) and a mean per metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub scope: String,
    pub n: usize,
    pub means: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub all: Row,
    pub strata: Vec<Row>,
    pub macro_mean: Row,
}

impl Summary {
    /// The rows as the baseline store keeps them: `all`, then strata.
    pub fn scope_means(&self) -> Vec<ScopeMeans> {
        std::iter::once(&self.all)
            .chain(self.strata.iter())
            .map(|r| ScopeMeans {
                scope: r.scope.clone(),
                n: r.n,
                means: r.means.clone(),
            })
            .collect()
    }

    pub fn new(scores: &Scores, gold: &GoldSet) -> Summary {
        let n = gold.len();
        let order = gold.id_order();
        let all = Row {
            scope: "all".into(),
            n,
            means: scores
                .values
                .iter()
                .zip(&scores.metrics)
                .map(|(v, m)| crate::metrics::aggregate(m, v, order.iter().copied()))
                .collect(),
        };
        let members = members_by_stratum(gold, &order);
        let strata: Vec<Row> = gold
            .strata
            .iter()
            .zip(&members)
            .map(|(name, idx)| Row {
                scope: name.clone(),
                n: idx.len(),
                means: scores
                    .values
                    .iter()
                    .zip(&scores.metrics)
                    .map(|(v, m)| crate::metrics::aggregate(m, v, idx.iter().copied()))
                    .collect(),
            })
            .collect();
        let non_empty: Vec<&Row> = strata.iter().filter(|r| r.n > 0).collect();
        let macro_mean = Row {
            scope: "macro".into(),
            n,
            means: (0..scores.metrics.len())
                .map(|m| {
                    if non_empty.is_empty() {
                        0.0
                    } else {
                        non_empty.iter().map(|r| r.means[m]).sum::<f64>() / non_empty.len() as f64
                    }
                })
                .collect(),
        };
        Summary {
            all,
            strata,
            macro_mean,
        }
    }
}

/// 95% intervals on the means of a [`Summary`], row for row: what a single
/// run's number is worth (SPEC "Statistics, second edition": intervals on
/// means). A stratified bootstrap of the per-query values (micro: resampled
/// within strata; macro: the mean of the resampled stratum means), the
/// expanded percentile interval of [`crate::stats::interval`].
#[derive(Debug, Clone, PartialEq)]
pub struct MeanIntervals {
    pub settings: IntervalSettings,
    /// Per metric, for [`Summary::all`].
    pub all: Vec<Option<Interval>>,
    /// `strata[s][m]`, in the gold set's stratum order, as [`Summary::strata`].
    pub strata: Vec<Vec<Option<Interval>>>,
    /// Per metric, for [`Summary::macro_mean`].
    pub macro_mean: Vec<Option<Interval>>,
}

/// The coverage of [`MeanIntervals`]: SPEC asks for 95%.
pub const INTERVAL_LEVEL: f64 = 0.95;

/// Resamples for [`MeanIntervals`] unless asked otherwise, for a gold set
/// of `n` queries: 1,000 while that costs at most [`INTERVAL_DRAW_BUDGET`]
/// query draws, fewer beyond, never under 200.
///
/// A resample costs one draw per query (about 7 ns of CPU on the
/// development machine), so a fixed B made the interval cost grow with the
/// gold set: 1,000 resamples of 70,000 queries took a second of CPU, four
/// times the rest of `eval`. The Monte Carlo error of a percentile endpoint
/// is, in units of the mean's standard error, about
/// sqrt(a (1 - a) / B) / phi(z_a) for the point a = 0.025: 0.085 at B =
/// 1,000 and 0.19 at B = 200, which moves the coverage of a 95% interval
/// by well under a point (README "Performance" has the measurements).
pub fn default_interval_resamples(n: usize) -> u32 {
    let fit = INTERVAL_DRAW_BUDGET.div_ceil(n.max(1) as u64);
    fit.clamp(200, 1000) as u32
}

/// Query draws the default intervals may spend (see
/// [`default_interval_resamples`]): 4 million, about 30 ms of CPU.
pub const INTERVAL_DRAW_BUDGET: u64 = 4_000_000;

impl MeanIntervals {
    /// Resamples the queries in a canonical order, so that the intervals do
    /// not depend on the order of queries or of strata in the gold file:
    /// strata by name, queries by id within each (the stratum numbers of a
    /// gold set follow first appearance in the file, so they cannot serve).
    pub fn compute(scores: &Scores, gold: &GoldSet, resamples: u32, seed: u64) -> MeanIntervals {
        let m = scores.metrics.len();
        let members = members_by_stratum(gold, &gold.id_order());
        let mut by_name: Vec<usize> = (0..gold.strata.len()).collect();
        by_name.sort_by(|&a, &b| gold.strata[a].as_bytes().cmp(gold.strata[b].as_bytes()));
        let mut rows = Vec::with_capacity(gold.len() * m);
        for &s in &by_name {
            for &q in &members[s] {
                rows.extend(scores.values.iter().map(|v| v[q]));
            }
        }
        let sizes: Vec<usize> = by_name.iter().map(|&s| members[s].len()).collect();
        let settings = IntervalSettings {
            resamples,
            seed,
            level: INTERVAL_LEVEL,
        };
        let unit: Vec<bool> = scores.metrics.iter().map(in_unit_interval).collect();
        let r = mean_intervals(&rows, m, &sizes, &unit, &settings);
        let mut strata = vec![Vec::new(); gold.strata.len()];
        for (k, &s) in by_name.iter().enumerate() {
            strata[s] = r.strata[k].clone();
        }
        MeanIntervals {
            settings,
            all: r.micro,
            strata,
            macro_mean: r.macro_mean,
        }
    }

    /// The intervals of one row of the [`Summary`].
    pub fn row(&self, scope: RowScope) -> &[Option<Interval>] {
        match scope {
            RowScope::All => &self.all,
            RowScope::Stratum(s) => &self.strata[s],
            RowScope::Macro => &self.macro_mean,
        }
    }
}

/// How [`MeanIntervals`] finds the interval on metric `m`'s means, in the
/// words reports print (the rules are [`crate::stats::interval`]'s): a
/// metric whose values lie in [0, 1] gets Clopper & Pearson's interval
/// where they are all 0 or 1 (hit rate, success, a recall with one label
/// per query), else Wilson's score interval (Clopper & Pearson's still, in
/// a stratum whose values happen to be all 0 or 1); any other metric the
/// expanded percentile bootstrap.
pub fn interval_method(scores: &Scores, m: usize) -> &'static str {
    let Some(metric) = scores.metrics.get(m) else {
        return BOOTSTRAP_METHOD;
    };
    if !in_unit_interval(metric) {
        return BOOTSTRAP_METHOD;
    }
    let binary = scores
        .values
        .get(m)
        .is_some_and(|v| v.iter().all(|&x| x == 0.0 || x == 1.0));
    if binary {
        "clopper-pearson"
    } else {
        "wilson score (clopper-pearson on a stratum of 0/1 values)"
    }
}

/// The interval of a metric that is not confined to [0, 1].
pub const BOOTSTRAP_METHOD: &str = "stratified bootstrap, expanded percentile";

/// Whether a metric's per-query values can only lie in [0, 1]: the
/// family's table entry says (counts and utility do not).
fn in_unit_interval(m: &Metric) -> bool {
    m.family().unit
}

/// Which row of a [`Summary`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowScope {
    All,
    /// A stratum, by its index in the gold set.
    Stratum(usize),
    Macro,
}

/// Query indices of each stratum, in stratum order; within a stratum in
/// `order`, the id order (see [`GoldSet::id_order`]).
fn members_by_stratum(gold: &GoldSet, order: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); gold.strata.len()];
    for &i in order {
        out[gold.queries[i].stratum as usize].push(i);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gold::{GoldFormat, GoldQuery, Labels};

    #[test]
    fn means_sum_in_trec_evals_query_order() {
        // Float addition is not associative: in file order (c, a, b) the 1.0
        // is absorbed by 1e16; in id order (a, b, c), as trec_eval sums, it
        // survives.
        let q = |id: &str| GoldQuery {
            id: id.into(),
            text: None,
            stratum: 0,
            spans: Vec::new(),
            labels: Labels::default(),
        };
        let gold = GoldSet::from_parts(
            "g",
            GoldFormat::Yaml,
            vec![q("c"), q("a"), q("b")],
            vec!["s".into()],
        )
        .unwrap();
        let scores = Scores {
            metrics: vec![crate::metrics::Metric::new(crate::metrics::Kind::Mrr, None)],
            values: vec![vec![1.0, 1e16, -1e16]],
        };
        let s = Summary::new(&scores, &gold);
        assert_eq!(s.all.means[0], 1.0 / 3.0);
        assert_eq!(s.strata[0].means[0], 1.0 / 3.0);
    }

    #[test]
    fn default_resamples_follow_the_draw_budget() {
        assert_eq!(default_interval_resamples(0), 1000);
        assert_eq!(default_interval_resamples(90), 1000);
        assert_eq!(default_interval_resamples(4000), 1000);
        // 4,000,000 / 7,000 = 571.4: the next whole resample.
        assert_eq!(default_interval_resamples(7000), 572);
        assert_eq!(default_interval_resamples(20_000), 200);
        assert_eq!(default_interval_resamples(70_000), 200);
    }

    /// Values are computed in blocks of queries, every metric at once: each
    /// must land in its metric's row at its query, across block edges, and
    /// a `candidates:` metric must read the candidate lists.
    #[test]
    fn every_value_is_its_metrics_value_on_its_query() {
        use crate::judge::{Hit, QueryContext, Ranking};
        let n = 10_000;
        let ranking = |q: usize, shift: usize| Ranking {
            num_ret: 100,
            hits: (0..q % 4)
                .map(|i| Hit {
                    // Ascending, as the readers give hits.
                    rank: (i * 20 + (q * 7 + shift) % 20) as u32 + 1,
                    grade: ((i + 1) % 3) as i32,
                })
                .collect(),
            chunks: None,
        };
        let finals: Vec<Ranking> = (0..n).map(|q| ranking(q, 0)).collect();
        let candidates: Vec<Ranking> = (0..n).map(|q| ranking(q, 50)).collect();
        let contexts: Vec<QueryContext> = (0..n)
            .map(|q| QueryContext {
                num_rel: (q % 5) as u32,
                ideal: vec![2.0; q % 3],
                relevance_level: 1,
                zeros: 0,
            })
            .collect();
        let metrics = crate::metrics::parse_list(&["recall@10,AP,candidates:recall@100,nDCG@10"]).unwrap();
        assert_eq!(metrics.len(), 4);
        let s = Scores::compute_stages(&metrics, &finals, Some(&candidates), &contexts);
        for (m, metric) in metrics.iter().enumerate() {
            let of = if metric.stage == Stage::Candidates {
                &candidates
            } else {
                &finals
            };
            for q in 0..n {
                assert_eq!(
                    s.values[m][q].to_bits(),
                    metric.compute(&of[q], &contexts[q]).to_bits(),
                    "{metric} query {q}"
                );
            }
        }
        // Without candidate lists a `candidates:` metric scores 0.
        let s = Scores::compute_stages(&metrics, &finals, None, &contexts);
        assert!(s.values[2].iter().all(|&v| v == 0.0));
        assert!(s.values[0].iter().any(|&v| v > 0.0));
    }
}
