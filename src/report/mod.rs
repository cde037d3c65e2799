//! Reports: each command builds a view of its results and renders it in the
//! requested format. Nothing here decides anything; verdicts arrive decided.

pub mod baseline;
pub mod compare;
pub mod eval;
pub mod gate;
pub mod gold;
pub mod goldbuild;
pub mod table;

use serde_json::{json, Map, Value};

use crate::compare::Comparison;

/// The forms a report takes. Each command renders the subset it can produce
/// and refuses the rest; the command line maps its `--format` onto these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Markdown,
    Csv,
    Junit,
    /// trec_eval-style `metric<TAB>qid<TAB>value` lines (eval only).
    Trec,
}

impl Format {
    /// The spelling of `--format`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Csv => "csv",
            Format::Junit => "junit",
            Format::Trec => "trec",
        }
    }
}

/// A finite number, or `null`: JSON has no NaN, and a missing statistic
/// should read as missing.
pub fn num(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

/// A `checks[]` row with exactly SPEC's keys; callers add their own after.
pub fn check_row(c: &Comparison, test: &str, verdict: &str) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("metric".into(), json!(c.metric.name()));
    o.insert("stratum".into(), json!(c.stratum));
    o.insert("n".into(), json!(c.n));
    o.insert("baseline".into(), num(c.baseline));
    o.insert("current".into(), num(c.current));
    o.insert("delta".into(), num(c.delta));
    o.insert("ci_low".into(), num(c.ci_low));
    o.insert("ci_high".into(), num(c.ci_high));
    o.insert("p_value".into(), num(c.p_value));
    o.insert("p_adjusted".into(), num(c.p_adjusted));
    o.insert("test".into(), json!(test));
    o.insert("verdict".into(), json!(verdict));
    o
}

/// The CSV columns every comparison row carries, in SPEC's order.
pub const ROW_COLUMNS: [&str; 10] = [
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
pub fn csv_num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

/// The cells under [`ROW_COLUMNS`].
pub fn row_cells(c: &Comparison) -> Vec<String> {
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
pub fn row_headers(lead: &[&str], tail: &[&str]) -> Vec<String> {
    lead.iter()
        .chain(ROW_COLUMNS.iter())
        .chain(tail.iter())
        .map(|s| s.to_string())
        .collect()
}
