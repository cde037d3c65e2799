//! rgate's PPI++ estimator (`stats::ppi`) against ppi-python on the same
//! per-query values: `tests/fixtures/ppi/reference.json`, written by
//! `scripts/ppi_reference.py` (its `about` key names the ppi-python version
//! and the calls). Issue 40 asks for 1e-3; these hold to 1e-6.

use rgate::stats::ppi::{power_tuned_lambda, ppi_mean, ppi_mean_with_lambda, PpiInput, MIN_VERIFIED};
use serde_json::Value;

use crate::common::floats;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ppi/reference.json");
const TOL: f64 = 1e-6;

fn close(case: &str, what: &str, got: f64, want: f64) {
    assert!(
        (got - want).abs() <= TOL,
        "{case}: {what} = {got}, ppi-python {want}"
    );
}

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string(FIXTURE).expect("read ppi fixture");
    let doc: Value = serde_json::from_str(&text).expect("parse ppi fixture");
    doc["cases"].as_array().expect("cases").clone()
}

#[test]
fn ppi_matches_ppi_python() {
    let cases = cases();
    assert!(cases.len() >= 10);
    for c in &cases {
        let name = c["name"].as_str().expect("name");
        let model_all = floats(&c["model_all"]);
        let model_verified = floats(&c["model_verified"]);
        let people_verified = floats(&c["people_verified"]);
        assert!(
            people_verified.len() >= MIN_VERIFIED,
            "{name}: fixture below the people-only rule"
        );
        let input = PpiInput {
            model_all: &model_all,
            model_verified: &model_verified,
            people_verified: &people_verified,
        };
        let e = ppi_mean(&input).expect("estimate");
        assert!(!e.people_only);
        assert_eq!(
            (e.n_model, e.n_verified),
            (model_all.len(), people_verified.len())
        );
        close(name, "lambda", e.lambda, c["lambda"].as_f64().unwrap());
        close(
            name,
            "lambda alone",
            power_tuned_lambda(&input).unwrap(),
            e.lambda,
        );
        close(name, "mean", e.mean, c["mean"].as_f64().unwrap());
        close(
            name,
            "people mean",
            e.people_mean,
            c["people_mean"].as_f64().unwrap(),
        );
        for (level, want) in c["ci"].as_object().unwrap() {
            let level: f64 = level.parse().unwrap();
            let want = floats(want);
            let (lo, hi) = e.interval(level);
            close(name, &format!("lower at {level}"), lo, want[0]);
            close(name, &format!("upper at {level}"), hi, want[1]);
        }
        for (level, want) in c["people_ci"].as_object().unwrap() {
            let level: f64 = level.parse().unwrap();
            let want = floats(want);
            let (lo, hi) = e.people_interval(level);
            close(name, &format!("people lower at {level}"), lo, want[0]);
            close(name, &format!("people upper at {level}"), hi, want[1]);
        }
        let classic = ppi_mean_with_lambda(&input, 1.0).expect("classic PPI");
        for (level, want) in c["classic_ci"].as_object().unwrap() {
            let level: f64 = level.parse().unwrap();
            let want = floats(want);
            let (lo, hi) = classic.interval(level);
            close(name, &format!("lam=1 lower at {level}"), lo, want[0]);
            close(name, &format!("lam=1 upper at {level}"), hi, want[1]);
        }
        for pair in c["p_smaller"].as_array().unwrap() {
            let pair = floats(pair);
            close(name, &format!("p below {}", pair[0]), e.p_below(pair[0]), pair[1]);
            // The same test the other way round.
            close(
                name,
                &format!("p above {}", pair[0]),
                e.p_above(pair[0]),
                1.0 - pair[1],
            );
        }
    }
}
