//! `--format trec`: trec_eval's `measure<TAB>query<TAB>value` lines
//! (`eval` only), optionally in trec_eval's own names and order.
//!
//! With `--names trec_eval` the layout is trec_eval's to the byte
//! (`meas_print_single.c`, `meas_print_final.c`): names left-aligned in 22
//! columns, queries in trec_eval's order (byte order of the ids, as it
//! sorts them), counts printed whole, runid and relstring as text, and each
//! measure on the lines trec_eval prints it on (gm_map only in `all`,
//! relstring only per query).

use anyhow::Result;

use super::eval::EvalView;
use super::table::f4;
use super::{Exporter, Report};
use crate::escape;
use crate::metrics::{gain, Metric, Shown, Stage, Value};

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
            order.sort_by_key(|&m| metrics[m].trec_eval_sort_key());
            metrics
                .iter()
                .map(|m| m.trec_eval_name().unwrap_or_else(|| m.name()))
                .map(|n| format!("{n:<22}"))
                .collect()
        } else {
            v.metric_names()
        };
        let queries: Vec<usize> = if v.trec_names {
            v.prep.gold.id_order()
        } else {
            (0..v.prep.gold.queries.len()).collect()
        };
        let mut out = String::new();
        if v.per_query {
            for i in queries {
                let id = escape::terminal(&v.prep.gold.queries[i].id);
                for &m in &order {
                    let metric = &metrics[m];
                    if metric.family().shown == Shown::Summary {
                        continue;
                    }
                    let value = match metric.family().value {
                        Value::Text => format!("'{}'", relstring(v, metric, i)),
                        Value::Int => format!("{}", v.scores.values[m][i] as i64),
                        Value::Float => f4(v.scores.values[m][i]),
                    };
                    out.push_str(&format!("{}\t{id}\t{value}\n", names[m]));
                }
            }
        }
        for &m in &order {
            let metric = &metrics[m];
            if metric.family().shown == Shown::PerQuery {
                continue;
            }
            let mean = v.summary.all.means[m];
            let value = match metric.family().value {
                Value::Text => escape::terminal(v.run.run_tag.as_deref().unwrap_or("run")).into_owned(),
                Value::Int => format!("{}", mean as i64),
                Value::Float => f4(mean),
            };
            out.push_str(&format!("{}\tall\t{value}\n", names[m]));
        }
        Ok(out)
    }
}

/// A text measure's per-query value: relstring over the stage's ranking.
fn relstring(v: &EvalView, m: &Metric, q: usize) -> String {
    let rankings = match (m.stage, &v.candidates) {
        (Stage::Candidates, Some(c)) => &c.run.rankings,
        _ => &v.run.rankings,
    };
    rankings
        .get(q)
        .map_or_else(String::new, |r| gain::relstring(r, m.relstring_len()))
}
