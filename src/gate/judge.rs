//! Judge calibration (SPEC "Gating on model labels", `gate.judge`): before
//! a gate trusts a gold set whose labels lean on a model, it measures how
//! far the model agrees with people where both graded, on the verified
//! queries, and, given `min_kappa`, fails (or warns) when the agreement is
//! too low.
//!
//! The measure is Cohen's kappa (Cohen, 1960) on relevant/not at the
//! config's relevance level, as `gold agreement` computes it
//! ([`agreement::stats`]); the pairs are [`agreement::from_labeling`]'s.
//! Why gate on it at all: a model's agreement with people moves with the
//! prompt and the data (see `goldbuild::agreement`), and PPI's interval,
//! though valid whatever the model's errors (Angelopoulos et al., Science
//! 2023), is narrower than people's alone only when the model is
//! informative; a judge that drifted should show in the gate, not be
//! found later.
//!
//! Computed once per gate from the gold set, whatever the labels mode.

use crate::config::{JudgeSettings, OnLow};
use crate::gold::GoldSet;
use crate::goldbuild::agreement::{self, Measure, Side};

/// What the judge check did to the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JudgeVerdict {
    /// The kappa reached `min_kappa`.
    Pass,
    /// Below `min_kappa` (or not measurable) under `on_low: fail`.
    Fail,
    /// Below `min_kappa` (or not measurable) under `on_low: warn`.
    Warn,
    /// No `min_kappa`: the kappa is information.
    None,
}

impl JudgeVerdict {
    pub fn name(self) -> &'static str {
        match self {
            JudgeVerdict::Pass => "pass",
            JudgeVerdict::Fail => "fail",
            JudgeVerdict::Warn => "warn",
            JudgeVerdict::None => "none",
        }
    }
}

/// The model against people on the verified queries, and the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeCheck {
    /// Cohen's kappa on relevant/not, or why there is none.
    pub kappa: Measure,
    /// Verified queries that carry model grades.
    pub n_verified: usize,
    /// Pairs compared: the model-graded chunks of those queries.
    pub pairs: u64,
    pub relevance_level: i32,
    pub min_kappa: Option<f64>,
    pub on_low: OnLow,
    pub verdict: JudgeVerdict,
    /// Why the check did not pass, in words: set for `fail` and `warn`.
    pub reason: Option<String>,
}

impl JudgeCheck {
    /// The check for `gold`, when there is one: the gold set holds
    /// verified queries with model grades, or `min_kappa` is set.
    ///
    /// With `min_kappa` set, a judge that cannot be measured (no verified
    /// query with model grades, or a kappa that is undefined) is treated as
    /// one below it: under `on_low: fail` the gate fails, saying why, since
    /// a judge nobody can check should not pass a gate that asked for one.
    pub fn of(gold: &GoldSet, relevance_level: i32, settings: &JudgeSettings) -> Option<JudgeCheck> {
        let (pairs, n_verified) = agreement::from_labeling(gold);
        if n_verified == 0 && settings.min_kappa.is_none() {
            return None;
        }
        let a = agreement::agreement(&pairs, &Side::Model, &Side::Person, relevance_level);
        let kappa = a.all.kappa;
        let low = match (settings.min_kappa, &kappa) {
            (None, _) => None,
            // The kappa is a ratio of counts worked in floating point: one
            // equal to the threshold in exact arithmetic (4/25 against
            // 0.16) must not fail on its last bit.
            (Some(k), Measure::Value(v)) if *v >= k - KAPPA_SLACK => None,
            (Some(k), Measure::Value(v)) => Some(format!(
                "the judge disagrees with people: kappa {} < {} on {}",
                below(*v, k),
                crate::diag::number(k),
                verified_words(n_verified)
            )),
            (Some(k), Measure::Undefined(why)) if n_verified == 0 => Some(format!(
                "the judge cannot be checked: no verified query has model grades (min_kappa {}; {why})",
                crate::diag::number(k)
            )),
            (Some(k), Measure::Undefined(why)) => Some(format!(
                "the judge cannot be checked: kappa is undefined on {} ({why}; min_kappa {})",
                verified_words(n_verified),
                crate::diag::number(k)
            )),
        };
        let verdict = match (settings.min_kappa, &low, settings.on_low) {
            (None, _, _) => JudgeVerdict::None,
            (Some(_), None, _) => JudgeVerdict::Pass,
            (Some(_), Some(_), OnLow::Fail) => JudgeVerdict::Fail,
            (Some(_), Some(_), OnLow::Warn) => JudgeVerdict::Warn,
        };
        Some(JudgeCheck {
            kappa,
            n_verified,
            pairs: a.all.n,
            relevance_level,
            min_kappa: settings.min_kappa,
            on_low: settings.on_low,
            verdict,
            reason: low,
        })
    }

    /// Whether the judge fails the gate.
    pub fn fails(&self) -> bool {
        self.verdict == JudgeVerdict::Fail
    }

    /// The warning the gate carries for a low judge under `on_low: warn`.
    pub fn warning(&self) -> Option<&str> {
        match self.verdict {
            JudgeVerdict::Warn => self.reason.as_deref(),
            _ => None,
        }
    }
}

/// Far below any difference between two kappas of real counts, far above
/// the rounding of one.
const KAPPA_SLACK: f64 = 1e-12;

fn verified_words(n: usize) -> String {
    crate::diag::count(n, "verified query", "verified queries")
}

/// `v` with two decimals, or as many more as it takes (up to 6) for the
/// printed value to read as below `k`: "0.599 < 0.6", never "0.60 < 0.6".
fn below(v: f64, k: f64) -> String {
    for d in 2..=6 {
        let s = format!("{v:.d$}");
        if s.parse::<f64>().is_ok_and(|p| p < k) {
            return s;
        }
    }
    format!("{v}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gold::{parse_native_text, GoldFormat};
    use std::path::Path;

    /// The fixture's kappas are worked by hand in its comment (4/25 at
    /// level 1, 16/23 at level 2) and agree with scikit-learn's
    /// `cohen_kappa_score` on the relevant flags.
    fn gold() -> GoldSet {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/judge/gold.yaml");
        let text = std::fs::read_to_string(&path).unwrap();
        parse_native_text(&path, &text, GoldFormat::Yaml).unwrap()
    }

    fn settings(min_kappa: Option<f64>, on_low: OnLow) -> JudgeSettings {
        JudgeSettings { min_kappa, on_low }
    }

    #[test]
    fn kappa_is_the_hand_computed_one_on_the_pooled_pairs() {
        let g = gold();
        let j = JudgeCheck::of(&g, 1, &JudgeSettings::default()).unwrap();
        let k = j.kappa.value().unwrap();
        assert!((k - 4.0 / 25.0).abs() < 1e-12, "{k}");
        // q1 and q2; q3 (not verified) and q4 (no model grades) are out.
        assert_eq!((j.n_verified, j.pairs), (2, 7));
        assert_eq!((j.verdict, j.reason.as_deref()), (JudgeVerdict::None, None));
        let j = JudgeCheck::of(&g, 2, &JudgeSettings::default()).unwrap();
        let k = j.kappa.value().unwrap();
        assert!((k - 16.0 / 23.0).abs() < 1e-12, "{k}");
    }

    #[test]
    fn below_min_kappa_fails_or_warns_with_the_reason() {
        let g = gold();
        let want = "the judge disagrees with people: kappa 0.16 < 0.6 on 2 verified queries";
        let j = JudgeCheck::of(&g, 1, &settings(Some(0.6), OnLow::Fail)).unwrap();
        assert_eq!((j.verdict, j.reason.as_deref()), (JudgeVerdict::Fail, Some(want)));
        assert!(j.fails() && j.warning().is_none());
        let j = JudgeCheck::of(&g, 1, &settings(Some(0.6), OnLow::Warn)).unwrap();
        assert_eq!((j.verdict, j.warning()), (JudgeVerdict::Warn, Some(want)));
        assert!(!j.fails());
        // At level 2 the kappa is 16/23 = 0.696: it reaches 0.6, and equal
        // to the threshold passes.
        let j = JudgeCheck::of(&g, 2, &settings(Some(0.6), OnLow::Fail)).unwrap();
        assert_eq!((j.verdict, j.reason), (JudgeVerdict::Pass, None));
        let j = JudgeCheck::of(&g, 1, &settings(Some(0.16), OnLow::Fail)).unwrap();
        assert_eq!(j.verdict, JudgeVerdict::Pass, "{:?}", j.kappa);
    }

    #[test]
    fn a_judge_that_cannot_be_measured_meets_on_low() {
        // No verified query with model grades: no check unless asked for.
        let text = "version: 1\nqueries:\n- id: q\n  relevant:\n    a: 1\n  verified: true\n- id: r\n  model:\n    b: 1\n";
        let g = parse_native_text(Path::new("g.yaml"), text, GoldFormat::Yaml).unwrap();
        assert_eq!(JudgeCheck::of(&g, 1, &JudgeSettings::default()), None);
        let j = JudgeCheck::of(&g, 1, &settings(Some(0.6), OnLow::Fail)).unwrap();
        assert_eq!((j.n_verified, j.pairs, j.verdict), (0, 0, JudgeVerdict::Fail));
        assert_eq!(
            j.reason.as_deref(),
            Some("the judge cannot be checked: no verified query has model grades (min_kappa 0.6; no pairs)")
        );
        // Both sides call every pair relevant: kappa is undefined.
        let text =
            "version: 1\nqueries:\n- id: q\n  relevant:\n    a: 1\n  model:\n    a: 2\n  verified: true\n";
        let g = parse_native_text(Path::new("g.yaml"), text, GoldFormat::Yaml).unwrap();
        let j = JudgeCheck::of(&g, 1, &settings(Some(0.6), OnLow::Warn)).unwrap();
        assert_eq!(j.verdict, JudgeVerdict::Warn);
        assert_eq!(
            j.warning(),
            Some("the judge cannot be checked: kappa is undefined on 1 verified query (one class only: both sides called every pair relevant; min_kappa 0.6)")
        );
    }

    #[test]
    fn the_printed_kappa_reads_as_below_the_threshold() {
        assert_eq!(below(0.41, 0.6), "0.41");
        assert_eq!(below(0.5996, 0.6), "0.5996");
        assert_eq!(below(-0.2, 0.0), "-0.20");
    }
}
