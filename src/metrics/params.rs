//! Measure parameters (trec_eval's `-m utility.2,-1,0,0`, `-m ndcg.1=3,2=9`,
//! `-m iprec_at_recall..25`; ir_measures' `P(rel=2)@10`, `RBP(p=0.8)`),
//! interned so that a [`super::Metric`] stays a small `Copy` key that is
//! `Eq + Hash + Ord` for the baseline store, the gate and compare.
//!
//! A parameter set is interned once per distinct spelling and lives for the
//! process (the few a command line or config names); [`Param`] is its index.
//! Ordering compares the spellings, so sorted metrics do not depend on the
//! order they were parsed in.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::RwLock;

/// The parsed parameters of one metric.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Params {
    /// The spelling rgate writes inside the parentheses of its name:
    /// `2,-1,0,0`, `1=3,2=9`, `rel=2`, `p=0.8`, or a float cutoff `0.10`.
    pub text: String,
    /// Plain numbers, in the order given (utility's coefficients, 11pt_avg's
    /// recall levels, a float cutoff).
    pub nums: Vec<f64>,
    /// `name=value` pairs in the order given (ndcg's gains by grade, `rel`,
    /// `p`).
    pub pairs: Vec<(String, f64)>,
    /// How trec_eval spells the parameters after its measure name and `_`,
    /// where that differs from `text` (a float cutoff `0.10` is `0.10`;
    /// 11pt_avg keeps the string as typed).
    pub trec: String,
}

impl Params {
    /// The value of pair `name`, if given.
    pub fn pair(&self, name: &str) -> Option<f64> {
        self.pairs.iter().find(|(n, _)| n == name).map(|&(_, v)| v)
    }

    /// ir_measures' `rel=`: the relevance level the metric counts from.
    pub fn rel(&self) -> Option<i32> {
        self.pair("rel").map(|v| v as i32)
    }

    /// Gains by grade (pairs whose name is an integer), as trec_eval's
    /// `setup_gains` reads them.
    pub fn gains(&self) -> impl Iterator<Item = (i64, f64)> + '_ {
        self.pairs
            .iter()
            .filter_map(|(n, v)| n.parse::<i64>().ok().map(|g| (g, *v)))
    }
}

/// An interned parameter set; `Param::NONE` for a metric without any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Param(u32);

static TABLE: RwLock<Vec<&'static Params>> = RwLock::new(Vec::new());

static EMPTY: Params = Params {
    text: String::new(),
    nums: Vec::new(),
    pairs: Vec::new(),
    trec: String::new(),
};

impl Param {
    pub const NONE: Param = Param(0);

    /// The id of `p`, interning it on first sight (by its spelling).
    pub fn intern(p: Params) -> Param {
        if p.text.is_empty() {
            return Param::NONE;
        }
        if let Some(i) = TABLE
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .position(|q| q.text == p.text)
        {
            return Param(i as u32 + 1);
        }
        let mut t = TABLE.write().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = t.iter().position(|q| q.text == p.text) {
            return Param(i as u32 + 1);
        }
        t.push(Box::leak(Box::new(p)));
        Param(t.len() as u32)
    }

    pub fn is_none(self) -> bool {
        self.0 == 0
    }

    /// The parameters (empty for [`Param::NONE`]).
    pub fn get(self) -> &'static Params {
        if self.0 == 0 {
            return &EMPTY;
        }
        TABLE.read().unwrap_or_else(|e| e.into_inner())[self.0 as usize - 1]
    }
}

impl Hash for Param {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl PartialOrd for Param {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Param {
    /// By spelling (no parameters first), not by interning order.
    fn cmp(&self, other: &Self) -> Ordering {
        if self.0 == other.0 {
            return Ordering::Equal;
        }
        self.get().text.cmp(&other.get().text)
    }
}

/// Parses a number as C's `atof` would for trec_eval's parameters, refusing
/// what is not one.
pub fn number(s: &str) -> Option<f64> {
    let t = s.trim();
    let v: f64 = t.parse().ok()?;
    v.is_finite().then_some(v)
}

/// Parameters from ir_measures' `name=value,...` or trec_eval's list.
pub fn parse(text: &str) -> Option<Params> {
    let mut p = Params {
        text: text.to_string(),
        trec: text.to_string(),
        ..Params::default()
    };
    for item in text.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return None;
        }
        match item.split_once('=') {
            Some((n, v)) => {
                let v = v.trim().trim_matches(['\'', '"']);
                p.pairs.push((n.trim().to_ascii_lowercase(), number(v)?));
            }
            None => p.nums.push(number(item)?),
        }
    }
    Some(p)
}

/// A float cutoff (iprec_at_recall's recall level, Rprec_mult's multiple):
/// spelled as trec_eval prints it, two decimals.
pub fn float_cutoff(v: f64) -> Params {
    let text = format!("{v:.2}");
    Params {
        trec: text.clone(),
        text,
        nums: vec![v],
        ..Params::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_gives_one_id_per_spelling_and_orders_by_it() {
        let a = Param::intern(parse("p=0.8").unwrap());
        let b = Param::intern(parse("p=0.8").unwrap());
        let c = Param::intern(parse("2,-1,0,0").unwrap());
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.get().pair("p"), Some(0.8));
        assert_eq!(c.get().nums, [2.0, -1.0, 0.0, 0.0]);
        assert!(c < a, "by spelling: `2` sorts before `p`");
        assert!(Param::NONE < c);
        assert!(parse("1=,2").is_none());
        assert!(parse("").is_none());
    }
}
