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
    /// Its 95% percentile bootstrap interval over the verified queries
    /// ([`kappa_interval`]); None when the kappa is undefined, on fewer
    /// than two queries, or when too few resamples define one.
    pub kappa_interval: Option<(f64, f64)>,
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
        let kappa_interval = kappa
            .value()
            .and_then(|k| kappa_interval(&per_query_counts(gold, relevance_level), k));
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
            kappa_interval,
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

/// Relevant/not counts of one verified query's pairs: `[both relevant,
/// model only, people only, neither]`.
type Counts = [u64; 4];

/// Per verified query with model grades, its pairs' counts, paired as
/// [`agreement::from_labeling`] pairs them: each model-graded chunk
/// against people's grade of it, a chunk their `relevant` does not list
/// counting as their 0. The bootstrap resamples queries, not pairs: a
/// query's pairs share its topic and its judge's mood, and resampling
/// pairs would read them as independent (too narrow an interval).
fn per_query_counts(gold: &GoldSet, level: i32) -> Vec<Counts> {
    let mut out = Vec::new();
    for &qi in &gold.labeling.verified {
        let qi = qi as usize;
        let (Some(model), Some(q)) = (gold.labeling.model_labels(qi), gold.queries.get(qi)) else {
            continue;
        };
        let people: std::collections::HashMap<&str, i32> = q.labels.iter().map(|l| (l.id, l.grade)).collect();
        let mut c = [0u64; 4];
        for m in model {
            let (by_model, by_people) = (m.grade >= level, people.get(m.id).copied().unwrap_or(0) >= level);
            let k = match (by_model, by_people) {
                (true, true) => 0,
                (true, false) => 1,
                (false, true) => 2,
                (false, false) => 3,
            };
            c[k] += 1;
        }
        out.push(c);
    }
    out
}

/// Cohen's kappa of pooled relevant/not counts (Cohen, 1960):
/// `(po - pe) / (1 - pe)`, `po` the share agreeing, `pe` the agreement the
/// two sides' rates of "relevant" give by chance. None where `pe` is 1
/// (one class only) or there is no pair.
fn kappa_of(c: &Counts) -> Option<f64> {
    let n = c.iter().sum::<u64>() as f64;
    if n == 0.0 {
        return None;
    }
    let [a, b, p, d] = c.map(|x| x as f64);
    let po = (a + d) / n;
    let pe = ((a + b) * (a + p) + (p + d) * (b + d)) / (n * n);
    (pe < 1.0).then(|| (po - pe) / (1.0 - pe))
}

/// Resamples of the kappa's bootstrap: the interval's ends move by about
/// 0.005 between seeds at this count, below the two decimals printed.
const KAPPA_RESAMPLES: usize = 2000;
/// Fixed, so the same gold set always prints the same interval.
const KAPPA_SEED: u64 = 0x006b_6170_7061;

/// The 95% percentile bootstrap interval of the kappa over the verified
/// queries (Efron and Tibshirani 1993, ch. 13): queries drawn with
/// replacement, their pairs' counts pooled, the kappa computed again;
/// the 2.5% and 97.5% quantiles of the resampled kappas (resamples where
/// it is undefined left out). None on fewer than two queries, when a tenth
/// of the resamples or more have no kappa, or when the pooled counts do
/// not give `point` (the pairs were not formed as the kappa's were: no
/// interval rather than one about another figure). Seeded: the same gold
/// set gives the same interval on every run.
fn kappa_interval(per_query: &[Counts], point: f64) -> Option<(f64, f64)> {
    use rand::{Rng, SeedableRng};
    let n = per_query.len();
    if n < 2 {
        return None;
    }
    let pooled = per_query.iter().fold([0u64; 4], |mut t, c| {
        for k in 0..4 {
            t[k] += c[k];
        }
        t
    });
    if kappa_of(&pooled).is_none_or(|k| (k - point).abs() > 1e-9) {
        return None;
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(KAPPA_SEED);
    let mut kappas = Vec::with_capacity(KAPPA_RESAMPLES);
    for _ in 0..KAPPA_RESAMPLES {
        let mut t = [0u64; 4];
        for _ in 0..n {
            let c = &per_query[rng.gen_range(0..n)];
            for k in 0..4 {
                t[k] += c[k];
            }
        }
        if let Some(k) = kappa_of(&t) {
            kappas.push(k);
        }
    }
    if kappas.len() * 10 < KAPPA_RESAMPLES * 9 {
        return None;
    }
    kappas.sort_by(f64::total_cmp);
    let at = |q: f64| kappas[((q * (kappas.len() - 1) as f64).round() as usize).min(kappas.len() - 1)];
    Some((at(0.025), at(0.975)))
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

    /// Cohen's kappa by hand: [1, 1, 0, 2] (4 pairs): po = 3/4; the
    /// model calls 2/4 relevant, people 1/4; pe = (1/2)(1/4) + (1/2)(3/4)
    /// = 1/2; kappa = (3/4 - 1/2) / (1/2) = 1/2. One class only: none.
    #[test]
    fn kappa_of_counts_by_hand() {
        assert!((kappa_of(&[1, 1, 0, 2]).unwrap() - 0.5).abs() < 1e-15);
        assert_eq!(kappa_of(&[0, 0, 0, 5]), None);
        assert_eq!(kappa_of(&[0, 0, 0, 0]), None);
    }

    /// The bootstrap over queries, by hand. Query A = [1, 0, 0, 1] (kappa
    /// 1 alone), B = [0, 1, 1, 2]. Two queries resample to AA (1/4: kappa
    /// 1), AB or BA (1/2: [1, 1, 1, 3], po 4/6, pe 1/9 + 4/9, kappa 1/4,
    /// the point) or BB (1/4: [0, 2, 2, 4], po 1/2, pe 1/16 + 9/16, kappa
    /// -1/3). With a quarter of the mass at each end, the 2.5% and 97.5%
    /// quantiles are -1/3 and 1. Queries all alike: every resample is the
    /// point. One query: no interval. A point the counts do not give: none.
    #[test]
    fn kappa_interval_by_hand() {
        let (a, b) = ([1, 0, 0, 1], [0, 1, 1, 2]);
        let (lo, hi) = kappa_interval(&[a, b], 0.25).unwrap();
        assert!(
            (lo + 1.0 / 3.0).abs() < 1e-12 && (hi - 1.0).abs() < 1e-12,
            "{lo} {hi}"
        );
        let same = vec![[1, 1, 0, 2]; 7];
        assert_eq!(kappa_interval(&same, 0.5), Some((0.5, 0.5)));
        assert_eq!(kappa_interval(&[a], 1.0), None);
        assert_eq!(kappa_interval(&[a, b], 0.3), None);
        // Seeded: the same input gives the same interval.
        assert_eq!(
            kappa_interval(&[a, b, b, a, b], kappa_of(&[2, 3, 3, 8]).unwrap()),
            kappa_interval(&[a, b, b, a, b], kappa_of(&[2, 3, 3, 8]).unwrap())
        );
    }

    /// The gate's check carries the interval of its own kappa. At level 1
    /// the fixture's q1 counts [1, 2, 1, 0] (a both, c and d the model
    /// only, b people only) and q2 [1, 0, 0, 2]: pooled, 4/25 (the point).
    /// Resampled: q1 twice [2, 4, 2, 0], po 1/4, pe (6/8)(4/8) + (2/8)(4/8)
    /// = 1/2, kappa -1/2 (a quarter of the resamples); q2 twice, kappa 1 (a
    /// quarter); so the interval is [-1/2, 1].
    #[test]
    fn the_check_has_an_interval_over_its_queries() {
        let g = gold();
        assert_eq!(per_query_counts(&g, 1), vec![[1, 2, 1, 0], [1, 0, 0, 2]]);
        let j = JudgeCheck::of(&g, 1, &JudgeSettings::default()).unwrap();
        let (lo, hi) = j.kappa_interval.unwrap();
        assert!((lo + 0.5).abs() < 1e-12 && (hi - 1.0).abs() < 1e-12, "{lo} {hi}");
    }

    #[test]
    fn the_printed_kappa_reads_as_below_the_threshold() {
        assert_eq!(below(0.41, 0.6), "0.41");
        assert_eq!(below(0.5996, 0.6), "0.5996");
        assert_eq!(below(-0.2, 0.0), "-0.20");
    }
}
