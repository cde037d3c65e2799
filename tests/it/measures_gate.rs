//! Measures beyond the common six can be gated, stored in a baseline and
//! compared: bpref, ir_measures' `P(rel=1)@10`, a parameterised utility and
//! ERR, on trec_eval's test collection, baseline `results.test` and
//! candidate `results.trunc` (query 302 missing). The means gated against
//! are trec_eval's own `all` lines (out.test.aq, out.test.aqc).

use crate::common;

use common::{fixture, TestProject};

fn project() -> TestProject {
    let p = TestProject::new()
        .with_copy("qrels", fixture("trec_eval/qrels.test"))
        .with_copy("base.trec", fixture("trec_eval/results.test"))
        .with_copy("cand.trec", fixture("trec_eval/results.trunc"))
        .with_config("rgate.yaml")
        .with_env("SOURCE_DATE_EPOCH", "1795996800");
    p.write(
        "rgate.yaml",
        "gold: qrels
baselines: baselines
metrics: [bpref, \"utility(2,-1,0,0)\", err@10, set_f]
retrievers:
  - name: r
    run: base.trec
gate:
  rules:
    - metric: bpref
      max_drop: 0.5
      strata: all
    - metric: set_f
      max_drop: 0.5
      strata: all
",
    );
    let o = p.run(&["baseline", "update"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    p
}

#[test]
fn bpref_and_set_f_are_gated_against_trec_evals_means() {
    let p = project();
    let o = p.run(&["--format", "json", "gate", "--run", "r=cand.trec"]);
    let v: serde_json::Value =
        serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.stderr));
    let checks = v["retrievers"][0]["checks"].as_array().unwrap();
    for (metric, base, cur) in [("bpref", "0.1981", "0.1510"), ("set_f", "0.1194", "0.0912")] {
        let c = checks
            .iter()
            .find(|c| c["metric"] == metric && c["stratum"] == "all")
            .unwrap_or_else(|| panic!("no {metric} check in {v}"));
        assert_eq!(format!("{:.4}", c["baseline"].as_f64().unwrap()), base, "{c}");
        assert_eq!(format!("{:.4}", c["current"].as_f64().unwrap()), cur, "{c}");
    }
}

#[test]
fn parameterised_measures_are_stored_and_compared_by_name() {
    let p = project();
    let stored = p.read("baselines/r.json");
    assert!(stored.contains("utility(2,-1,0,0)"), "{stored}");
    assert!(stored.contains("err@10"), "{stored}");
    let o = p.run(&[
        "--format",
        "json",
        "compare",
        "--gold",
        "qrels",
        "-m",
        "utility(2,-1,0,0),bpref",
        "base.trec",
        "cand.trec",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("utility(2,-1,0,0)"), "{}", o.stdout);
}
