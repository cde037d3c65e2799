//! Per-query metric values and their means: overall (micro, over gold
//! queries, as trec_eval `-c`), per stratum, and the macro mean of stratum
//! means.
//!
//! Values are kept per metric as one vector over the gold queries in gold
//! order: that vector is exactly what the paired statistics resample.

use crate::gold::GoldSet;
use crate::judge::{QueryContext, Ranking};
use crate::metrics::Metric;

#[derive(Debug, Clone, PartialEq)]
pub struct Scores {
    pub metrics: Vec<Metric>,
    /// `values[m][q]`: metric `m` on gold query `q`.
    pub values: Vec<Vec<f64>>,
}

impl Scores {
    pub fn compute(metrics: &[Metric], rankings: &[Ranking], contexts: &[QueryContext]) -> Scores {
        let values = metrics
            .iter()
            .map(|m| {
                rankings
                    .iter()
                    .zip(contexts)
                    .map(|(r, c)| m.compute(r, c))
                    .collect()
            })
            .collect();
        Scores {
            metrics: metrics.to_vec(),
            values,
        }
    }

    pub fn index_of(&self, m: &Metric) -> Option<usize> {
        self.metrics.iter().position(|x| x == m)
    }
}

/// Mean of the values at `idx` (summed in order, as trec_eval sums).
pub fn mean_of(values: &[f64], idx: impl IntoIterator<Item = usize>) -> f64 {
    let mut sum = 0.0;
    let mut n = 0usize;
    for i in idx {
        sum += values[i];
        n += 1;
    }
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

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
    pub fn new(scores: &Scores, gold: &GoldSet) -> Summary {
        let n = gold.len();
        let all = Row {
            scope: "all".into(),
            n,
            means: scores.values.iter().map(|v| mean_of(v, 0..n)).collect(),
        };
        let members = members_by_stratum(gold);
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
                    .map(|v| mean_of(v, idx.iter().copied()))
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

/// Query indices of each stratum, in stratum order.
pub fn members_by_stratum(gold: &GoldSet) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); gold.strata.len()];
    for (i, q) in gold.queries.iter().enumerate() {
        out[q.stratum as usize].push(i);
    }
    out
}
