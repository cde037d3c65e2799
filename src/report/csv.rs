//! `--format csv`: one table, RFC 4180, numbers at full precision (a
//! spreadsheet or a script reads them, not a person).

use anyhow::Result;

use super::baseline::{HistoryView, ShowView};
use super::compare::CompareView;
use super::eval::EvalView;
use super::gate::{skew_cell, GateView};
use super::table::Table;
use super::{Exporter, Report};
use crate::compare::Comparison;

pub struct Csv;

impl Exporter for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }

    fn reports(&self) -> &'static [Report] {
        Report::ALL
    }

    fn gate(&self, v: &GateView) -> Result<String> {
        let headers = row_headers(
            &["retriever"],
            &[
                "tolerance",
                "mde",
                "test",
                "resamples",
                "seed",
                "verdict",
                "skewness",
                "skew_queries",
            ],
        );
        let mut t = Table::new(headers, 3);
        for r in &v.outcome.retrievers {
            for c in &r.checks {
                let mut row = vec![r.name.clone()];
                row.extend(row_cells(&c.cmp));
                row.extend([
                    c.tolerance.map(csv_num).unwrap_or_default(),
                    c.mde().map(csv_num).unwrap_or_default(),
                    c.test_name().to_string(),
                    r.resamples.to_string(),
                    v.outcome.settings.seed.to_string(),
                    c.verdict.name().to_string(),
                    c.skew.as_ref().map(|s| csv_num(s.skewness)).unwrap_or_default(),
                    skew_cell(c.skew.as_ref()),
                ]);
                t.push(row);
            }
        }
        Ok(t.csv())
    }

    fn compare(&self, v: &CompareView) -> Result<String> {
        let headers = row_headers(
            &["run", "baseline_run"],
            &[
                "wins",
                "ties",
                "losses",
                "test",
                "resamples",
                "seed",
                "skewness",
                "skew_queries",
                "effect_size",
                "correction",
            ],
        );
        let mut t = Table::new(headers, 4);
        for (k, rows) in v.comparisons.iter().enumerate() {
            for r in rows {
                let mut row = vec![v.runs[k + 1].name.clone(), v.runs[0].name.clone()];
                row.extend(row_cells(&r.cmp));
                row.extend([
                    r.wins.to_string(),
                    r.ties.to_string(),
                    r.losses.to_string(),
                    r.test_name().to_string(),
                    v.settings.resamples.to_string(),
                    v.settings.seed.to_string(),
                    r.skew.as_ref().map(|s| csv_num(s.skewness)).unwrap_or_default(),
                    skew_cell(r.skew.as_ref()),
                    csv_num(r.effect_size),
                    v.family.correction.name().to_string(),
                ]);
                t.push(row);
            }
        }
        Ok(t.csv())
    }

    /// One table: the curves' points with `--curve`, else per-query rows
    /// when asked for, else the means with their intervals.
    fn eval(&self, v: &EvalView) -> Result<String> {
        Ok(if !v.curves.is_empty() {
            v.curve_csv_table().csv()
        } else if v.per_query {
            v.query_table().csv()
        } else {
            v.means_csv_table().csv()
        })
    }

    fn baseline_show(&self, v: &ShowView) -> Result<String> {
        Ok(v.table().csv())
    }

    fn baseline_history(&self, v: &HistoryView) -> Result<String> {
        Ok(v.table().csv())
    }
}

/// The CSV columns every comparison row carries, in SPEC's order.
const ROW_COLUMNS: [&str; 10] = [
    "metric",
    "stratum",
    "n",
    "baseline",
    "current",
    "delta",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
];

/// A number for CSV: full precision, empty when it does not exist.
fn csv_num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

/// The cells under [`ROW_COLUMNS`].
fn row_cells(c: &Comparison) -> Vec<String> {
    vec![
        c.metric.name(),
        c.stratum.clone(),
        c.n.to_string(),
        csv_num(c.baseline),
        csv_num(c.current),
        csv_num(c.delta),
        csv_num(c.ci_low),
        csv_num(c.ci_high),
        csv_num(c.p_value),
        csv_num(c.p_adjusted),
    ]
}

/// Headers: `lead`, then [`ROW_COLUMNS`], then `tail`.
fn row_headers(lead: &[&str], tail: &[&str]) -> Vec<String> {
    lead.iter()
        .chain(ROW_COLUMNS.iter())
        .chain(tail.iter())
        .map(|s| s.to_string())
        .collect()
}
