//! Conformance against the reference vectors in
//! `tests/fixtures/stats/vectors.json` (a copy of `conformance/stats/`): bootstrap
//! at B = 100,000 within Monte Carlo error (0.01); t-test, exact
//! randomization and the summaries within half a unit of the 4th decimal the
//! vectors are rounded to; Holm exactly.

use rgate::stats::{
    bootstrap, holm, mean, randomization, sample_sd, t_test, Alternative, BootstrapSettings, Strata,
    Weighting,
};
use serde_json::Value;

use crate::common::floats;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/stats/vectors.json");

fn vectors() -> Value {
    let text = std::fs::read_to_string(FIXTURE).expect("read stats fixture");
    serde_json::from_str(&text).expect("parse stats fixture")
}

fn num(expected: &Value, key: &str) -> f64 {
    expected[key].as_f64().unwrap_or_else(|| panic!("missing {key}"))
}

/// The vectors' exact values are rounded to 4 decimals: a correct value is
/// within half a unit of the last one (plus float slack).
const ROUNDED_4: f64 = 0.5e-4 + 1e-12;

fn close(case: &str, what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol,
        "{case}: {what} = {got}, expected {want} (tolerance {tol})"
    );
}

/// Every case, every reference value.
#[test]
fn reference_vectors() {
    let v = vectors();
    let cases = v["cases"].as_object().expect("cases");
    assert!(!cases.is_empty());
    for (name, case) in cases {
        let baseline = floats(&case["baseline"]);
        let candidate = floats(&case["candidate"]);
        assert_eq!(baseline.len(), candidate.len(), "{name}");
        let deltas: Vec<f64> = candidate.iter().zip(&baseline).map(|(c, b)| c - b).collect();
        let e = &case["expected"];

        close(name, "mean_delta", mean(&deltas), num(e, "mean_delta"), ROUNDED_4);
        close(name, "sd_diff", sample_sd(&deltas), num(e, "sd_diff"), ROUNDED_4);

        let settings = BootstrapSettings {
            resamples: 100_000,
            seed: 20261129,
            weighting: Weighting::Micro,
            alpha: 0.05,
        };
        let b = bootstrap(&deltas, 1, &Strata::single(deltas.len()), &settings).remove(0);
        close(
            name,
            "bootstrap mean_delta",
            b.mean_delta,
            num(e, "mean_delta"),
            ROUNDED_4,
        );
        close(
            name,
            "bootstrap p_less",
            b.p(Alternative::Less),
            num(e, "boot_mean_p_less"),
            0.01,
        );
        let two = num(e, "boot_mean_p_two-sided");
        close(name, "bootstrap p_two_sided", b.p_two_sided, two, 0.01);
        let ci = floats(&e["ci95_percentile"]);
        close(name, "bootstrap ci_low", b.ci_low, ci[0], 0.01);
        close(name, "bootstrap ci_high", b.ci_high, ci[1], 0.01);
        close(
            name,
            "bootstrap lower_bound",
            b.lower_bound,
            num(e, "lower95_one_sided"),
            0.01,
        );
        close(
            name,
            "bootstrap upper_bound",
            b.upper_bound,
            num(e, "upper95_one_sided"),
            0.01,
        );

        let t = t_test(&deltas, 0.05);
        close(name, "t p_less", t.p_less, num(e, "t_p_less"), ROUNDED_4);
        close(
            name,
            "t p_two_sided",
            t.p_two_sided,
            num(e, "t_p_two-sided"),
            ROUNDED_4,
        );

        let r = randomization(&deltas, 10_000, 20261129, 0.05);
        close(
            name,
            "randomization p_less",
            r.p_less,
            num(e, "rand_exact_p_less"),
            ROUNDED_4,
        );
        let two = num(e, "rand_exact_p_two-sided");
        close(name, "randomization p_two_sided", r.p_two_sided, two, ROUNDED_4);
    }
}

#[test]
fn holm_reference() {
    let v = vectors();
    let p = floats(&v["holm"]["p"]);
    let want = floats(&v["holm"]["adjusted"]);
    let got = holm(&p);
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-12, "holm({p:?}) = {got:?}, expected {want:?}");
    }
}

/// The smallest sample a t-test can use: two deltas, one degree of freedom.
/// scipy.stats.ttest_1samp([0.1, 0.3], 0): p = 0.2951672353008665 two-sided,
/// 0.8524163823495667 for "less"; t.ppf(0.975, 1) = 12.706204736174694.
#[test]
fn t_test_on_two_deltas_matches_scipy() {
    let t = t_test(&[0.1, 0.3], 0.05);
    close("n=2", "t p_two_sided", t.p_two_sided, 0.2951672353008665, 1e-9);
    close("n=2", "t p_less", t.p_less, 0.8524163823495667, 1e-9);
    // sd = 0.1 * sqrt(2), se = 0.1: the interval is 0.2 -+ 12.7062 * 0.1.
    close("n=2", "t ci_high", t.ci_high, 0.2 + 1.2706204736174694, 1e-9);
}
