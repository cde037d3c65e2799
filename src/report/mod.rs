//! Reports: each command builds a view of its results and renders it in the
//! requested format. Nothing here decides anything; verdicts arrive decided.

pub mod baseline;
pub mod compare;
pub mod eval;
pub mod gate;
pub mod table;

use serde_json::{json, Map, Value};

use crate::compare::Comparison;

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
