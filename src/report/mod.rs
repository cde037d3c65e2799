//! Reports: each command builds a view of its results and renders it in the
//! requested format. Nothing here decides anything; verdicts arrive decided.

pub mod baseline;
pub mod compare;
pub mod eval;
pub mod gate;
pub mod table;

use serde_json::{json, Map, Value};

use crate::metrics::Metric;

/// A finite number, or `null`: JSON has no NaN, and a missing statistic
/// should read as missing.
pub fn num(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

/// The numbers every comparison row carries, in both `compare` and `gate`.
pub struct RowNumbers<'a> {
    pub metric: &'a Metric,
    pub stratum: &'a str,
    pub n: usize,
    pub baseline: f64,
    pub current: f64,
    pub delta: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub p_value: f64,
    pub p_adjusted: f64,
}

/// A `checks[]` row with exactly SPEC's keys; callers add their own after.
pub fn check_row(r: &RowNumbers, test: &str, verdict: &str) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("metric".into(), json!(r.metric.name()));
    o.insert("stratum".into(), json!(r.stratum));
    o.insert("n".into(), json!(r.n));
    o.insert("baseline".into(), num(r.baseline));
    o.insert("current".into(), num(r.current));
    o.insert("delta".into(), num(r.delta));
    o.insert("ci_low".into(), num(r.ci_low));
    o.insert("ci_high".into(), num(r.ci_high));
    o.insert("p_value".into(), num(r.p_value));
    o.insert("p_adjusted".into(), num(r.p_adjusted));
    o.insert("test".into(), json!(test));
    o.insert("verdict".into(), json!(verdict));
    o
}
