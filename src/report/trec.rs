//! `--format trec`: trec_eval's `measure<TAB>query<TAB>value` lines
//! (`eval` only), optionally in trec_eval's own names and order.

use anyhow::Result;

use super::eval::EvalView;
use super::table::f4;
use super::{Exporter, Report};
use crate::escape;

pub struct Trec;

impl Exporter for Trec {
    fn name(&self) -> &'static str {
        "trec"
    }

    fn reports(&self) -> &'static [Report] {
        &[Report::Eval]
    }

    fn eval(&self, v: &EvalView) -> Result<String> {
        let metrics = &v.scores.metrics;
        let mut order: Vec<usize> = (0..metrics.len()).collect();
        let names: Vec<String> = if v.trec_names {
            order.sort_by_key(|&m| (metrics[m].trec_eval_order(), metrics[m].cutoff));
            metrics
                .iter()
                .map(|m| m.trec_eval_name().unwrap_or_else(|| m.name()))
                .map(|n| format!("{n:<22}"))
                .collect()
        } else {
            v.metric_names()
        };
        let mut out = String::new();
        if v.per_query {
            for (i, q) in v.prep.gold.queries.iter().enumerate() {
                let id = escape::terminal(&q.id);
                for &m in &order {
                    out.push_str(&format!("{}\t{id}\t{}\n", names[m], f4(v.scores.values[m][i])));
                }
            }
        }
        for &m in &order {
            out.push_str(&format!("{}\tall\t{}\n", names[m], f4(v.summary.all.means[m])));
        }
        Ok(out)
    }
}
