//! `gate.judge` end to end (SPEC "Gating on model labels", judge
//! calibration): the fixture's model agrees with people at kappa 4/25 =
//! 0.16 on its 2 verified queries (worked by hand in
//! tests/fixtures/judge/gold.yaml, checked with scikit-learn), so
//! `min_kappa: 0.6` fails the gate under `on_low: fail` and only warns
//! under `on_low: warn`, every retriever passing.

use crate::common;

use common::{fixture, TestProject};

const REASON: &str = "the judge disagrees with people: kappa 0.16 < 0.6 on 2 verified queries";

fn project(judge: &str) -> TestProject {
    let config = format!(
        "gold: gold.yaml\nbaselines: baselines\nmetrics: [hit_rate@3]\nretrievers:\n  - name: r\n    run: run.jsonl\ngate:\n{judge}"
    );
    TestProject::new()
        .with_copy("gold.yaml", fixture("judge/gold.yaml"))
        .with_copy("run.jsonl", fixture("judge/run.jsonl"))
        .with_file("rgate.yaml", config)
        .with_config("rgate.yaml")
        .with_env("SOURCE_DATE_EPOCH", "1795996800")
}

#[test]
fn a_judge_below_min_kappa_fails_the_gate_under_on_low_fail() {
    let p = project("  judge:\n    min_kappa: 0.6\n    on_low: fail\n");
    // A baseline, so the retriever itself passes: only the judge fails.
    // Recording is no gate: the judge neither refuses nor fails it.
    let o = p.run(&["baseline", "update", "r"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(!o.stdout.contains("judge"), "{}", o.stdout);
    let o = p.run(&["gate"]);
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout
            .starts_with("rgate gate: FAIL · the judge failed: kappa 0.1600 below min_kappa 0.6\n"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains(&format!("judge: fail (on_low: fail): {REASON}")),
        "{}",
        o.stdout
    );
    let (code, v) = p.json(&["gate"]);
    assert_eq!(code, 1);
    assert_eq!(v["verdict"], "fail");
    assert_eq!(v["retrievers"][0]["verdict"], "pass");
    let j = &v["judge"];
    assert!((j["kappa"].as_f64().unwrap() - 0.16).abs() < 1e-12, "{j}");
    assert_eq!(j["n_verified"], 2);
    assert_eq!(j["pairs"], 7);
    assert_eq!(j["min_kappa"], 0.6);
    assert_eq!(j["on_low"], "fail");
    assert_eq!(j["verdict"], "fail");
    assert_eq!(j["reason"], REASON);
    // JUnit: the judge is a failing test case of its own.
    let o = p.run(&["--format", "junit", "gate"]);
    assert_eq!(o.code, 1);
    assert!(
        o.stdout
            .contains("<testcase classname=\"rgate.judge\" name=\"kappa\">"),
        "{}",
        o.stdout
    );
    let escaped = REASON.replace('<', "&lt;");
    assert!(
        o.stdout.contains(&format!(
            "<failure message=\"judge: fail (on_low: fail): {escaped} (kappa&apos;s 95% bootstrap interval over queries -0.50 to 1.00)\"/>"
        )),
        "{}",
        o.stdout
    );
    // Markdown: one line under the retrievers.
    let o = p.run(&["--format", "markdown", "gate"]);
    assert!(
        o.stdout
            .contains(&format!("**Judge**: judge: fail (on_low: fail): {escaped} (kappa's 95% bootstrap interval over queries -0.50 to 1.00)\n")),
        "{}",
        o.stdout
    );
    let o = p.run(&["--format", "html", "gate"]);
    assert!(
        o.stdout.contains("<p class=\"judge fail\">judge: fail"),
        "{}",
        o.stdout
    );
}

#[test]
fn on_low_warn_passes_with_the_reason_as_a_warning() {
    let p = project("  judge:\n    min_kappa: 0.6\n");
    assert_eq!(p.run(&["baseline", "update", "r"]).code, 0);
    let o = p.run(&["gate"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains(&format!("warning: {REASON}")), "{}", o.stdout);
    let (code, v) = p.json(&["gate"]);
    assert_eq!(code, 0);
    assert_eq!(v["verdict"], "pass");
    assert_eq!(v["judge"]["verdict"], "warn");
    assert_eq!(v["judge"]["on_low"], "warn");
    assert_eq!(v["judge"]["reason"], REASON);
    assert!(
        v["warnings"].as_array().unwrap().iter().any(|w| w == REASON),
        "{v}"
    );
    let o = p.run(&["--format", "junit", "gate"]);
    assert!(o.stdout.contains("failures=\"0\""), "{}", o.stdout);
}

#[test]
fn without_min_kappa_the_kappa_is_information() {
    let p = project("  alpha: 0.05\n");
    assert_eq!(p.run(&["baseline", "update", "r"]).code, 0);
    let (code, v) = p.json(&["gate"]);
    assert_eq!(code, 0);
    let j = &v["judge"];
    assert_eq!(j["verdict"], "none");
    assert_eq!(j["min_kappa"], serde_json::Value::Null);
    assert_eq!(j["reason"], serde_json::Value::Null);
    assert_eq!(j["n_verified"], 2);
    // Issue 48: the kappa's bootstrap interval over the two verified
    // queries: each drawn twice gives -1/2 (q1) or 1 (q2), a quarter of
    // the resamples each (src/gate/judge.rs works it out).
    assert_eq!(
        (j["kappa_ci_low"].as_f64(), j["kappa_ci_high"].as_f64()),
        (Some(-0.5), Some(1.0))
    );
    let o = p.run(&["gate"]);
    assert!(
        o.stdout.contains(
            "judge: kappa 0.1600 (95% bootstrap interval over queries -0.50 to 1.00) on 2 verified queries (7 pairs, relevant = grade >= 1); not gated"
        ),
        "{}",
        o.stdout
    );
}

#[test]
fn a_bad_judge_setting_exits_2_naming_the_config() {
    let p = project("  judge:\n    min_kappa: 2\n");
    let o = p.run(&["gate"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("rgate.yaml:9"), "{}", o.stderr);
    assert!(
        o.stderr.contains("judge min_kappa 2 is outside [-1, 1]"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("hint:"), "{}", o.stderr);
}

#[test]
fn a_gold_set_without_model_grades_has_no_judge_check() {
    let p = TestProject::demo(&["bm25"])
        .with_file(
            "rgate.yaml",
            "gold: demo/gold.yaml\nbaselines: b\nretrievers:\n  - name: bm25\n    run: demo/runs/bm25.jsonl\n",
        )
        .with_config("rgate.yaml");
    assert_eq!(p.run(&["baseline", "update"]).code, 0);
    let (code, v) = p.json(&["gate"]);
    assert_eq!(code, 0);
    assert_eq!(v["judge"], serde_json::Value::Null);
    assert!(!p.run(&["gate"]).stdout.contains("judge"));
    // Asking for a judge the gold set cannot show fails under on_low: fail.
    p.write(
        "rgate.yaml",
        "gold: demo/gold.yaml\nbaselines: b\nretrievers:\n  - name: bm25\n    run: demo/runs/bm25.jsonl\ngate:\n  judge: {min_kappa: 0.5, on_low: fail}\n",
    );
    let (code, v) = p.json(&["gate"]);
    assert_eq!(code, 1);
    assert_eq!(v["judge"]["n_verified"], 0);
    assert_eq!(
        v["judge"]["reason"],
        "the judge cannot be checked: no verified query has model grades (min_kappa 0.5; no pairs)"
    );
}

/// The kappa is the gold set's, whichever labels score the runs: under
/// `labels: model` the gate scores a view of the gold set, and the judge
/// is still measured on the gold set as loaded (4/25 on 7 pairs).
#[test]
fn the_judge_is_the_same_whatever_the_labels_mode() {
    for labels in ["people", "model"] {
        let p = project("  judge:\n    min_kappa: 0.6\n    on_low: fail\n");
        let text = p.read("rgate.yaml");
        p.write("rgate.yaml", format!("labels: {labels}\n{text}"));
        assert_eq!(p.run(&["baseline", "update", "r"]).code, 0, "{labels}");
        let (code, v) = p.json(&["gate"]);
        assert_eq!(code, 1, "{labels}: {v}");
        assert_eq!(
            (v["judge"]["n_verified"].as_u64(), v["judge"]["pairs"].as_u64()),
            (Some(2), Some(7)),
            "{labels}"
        );
        assert_eq!(v["judge"]["reason"], REASON, "{labels}");
    }
}
