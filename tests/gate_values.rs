//! `rgate gate` checked against values computed without rgate: per-metric
//! p-values of the t-test and the randomization test (from
//! `tests/fixtures/compare/make.py`: scipy and brute-force enumeration), and
//! a baseline recorded at one relevance level gated at another (means by
//! hand).

mod common;

use std::fs;
use std::path::Path;

use common::{fixture, run};
use serde_json::Value;

/// A scratch project holding the given files, with a config written later.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new(files: &[(&str, &Path)]) -> Project {
        let dir = tempfile::tempdir().unwrap();
        for (name, from) in files {
            fs::copy(from, dir.path().join(name)).unwrap();
        }
        Project { dir }
    }

    fn write(&self, name: &str, text: &str) {
        fs::write(self.dir.path().join(name), text).unwrap();
    }

    fn rgate(&self, args: &[&str]) -> common::Out {
        let mut c = common::rgate();
        c.current_dir(self.dir.path())
            .env("SOURCE_DATE_EPOCH", "1795996800")
            .arg("--config")
            .arg(self.dir.path().join("rgate.yaml"))
            .args(args);
        run(c)
    }

    /// `gate --format json`: the exit code and the report.
    fn gate(&self, args: &[&str]) -> (i32, Value) {
        let mut a = vec!["--format", "json", "gate"];
        a.extend_from_slice(args);
        let o = self.rgate(&a);
        let v = serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", o.stdout, o.stderr));
        (o.code, v)
    }
}

fn check<'a>(v: &'a Value, metric: &str, stratum: &str) -> &'a Value {
    v["retrievers"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == metric && c["stratum"] == stratum)
        .unwrap_or_else(|| panic!("no check {metric}/{stratum} in {v}"))
}

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

fn compare_project(test: &str) -> Project {
    let p = Project::new(&[
        ("gold.json", &fixture("compare/gold.json")),
        ("base.json", &fixture("compare/base.json")),
        ("cand.json", &fixture("compare/cand.json")),
    ]);
    p.write(
        "rgate.yaml",
        &format!(
            "gold: gold.json
baselines: baselines
metrics: [mrr, hit_rate@1]
retrievers:
  - name: r
    run: base.json
gate:
  test: {test}
  # p_value is then the one-sided p of H0 \"drop <= 0\" (the margin
  # test, the default, would test against each tolerance).
  decision: significant-drop
  rules:
    - metric: mrr
      max_drop: 0.5
      strata: all
    - metric: hit_rate@1
      max_drop: 0.6
      strata: all
"
        ),
    );
    let o = p.rgate(&["baseline", "update"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    p
}

/// (metric, stratum, one-sided p for a drop, Holm over the six checks).
type Expected = [(&'static str, &'static str, f64, f64); 6];

fn assert_checks(test: &str, want: &Expected, tol: f64) {
    let p = compare_project(test);
    let (code, v) = p.gate(&["--run", "r=cand.json"]);
    assert_eq!(code, 0, "every drop is within its tolerance: {v}");
    for &(metric, stratum, pv, adj) in want {
        let c = check(&v, metric, stratum);
        assert_eq!(c["test"], test, "{c}");
        assert!((f(c, "p_value") - pv).abs() < tol, "{c}: expected p {pv}");
        assert!(
            (f(c, "p_adjusted") - adj).abs() < tol,
            "{c}: expected p_adj {adj}"
        );
        assert_eq!(c["verdict"], "pass", "{c}");
    }
}

#[test]
fn t_test_p_per_metric_and_stratum() {
    // scipy.stats.ttest_1samp(d, 0, alternative="less") per check; Holm.
    assert_checks(
        "t-test",
        &[
            ("mrr", "all", 0.15917009876315746, 0.6366803950526299),
            ("hit_rate@1", "all", 0.22166592508483007, 0.6649977752544902),
            ("mrr", "a", 0.43030630306049483, 0.8606126061209897),
            ("hit_rate@1", "a", 0.5, 0.8606126061209897),
            ("mrr", "b", 0.11540896600125787, 0.5770448300062894),
            ("hit_rate@1", "b", 0.09084505690810468, 0.5450703414486281),
        ],
        1e-9,
    );
}

#[test]
fn randomization_p_per_metric_and_stratum() {
    // Share of the 2^k sign patterns at or below the observed sum; Holm.
    assert_checks(
        "randomization",
        &[
            ("mrr", "all", 0.162109375, 0.810546875),
            ("hit_rate@1", "all", 0.34375, 1.0),
            ("mrr", "a", 0.4375, 1.0),
            ("hit_rate@1", "a", 0.6875, 1.0),
            ("mrr", "b", 0.125, 0.75),
            ("hit_rate@1", "b", 0.25, 1.0),
        ],
        1e-12,
    );
}

/// Graded labels: grade 1 counts at relevance level 1 only, grade 2 at both.
const GRADED_GOLD: &str = r#"{"version": 1, "queries": [
  {"id": "q1", "relevant": {"d1": 1, "d2": 2}},
  {"id": "q2", "relevant": {"d3": 1, "d4": 2}},
  {"id": "q3", "relevant": {"d5": 2}},
  {"id": "q4", "relevant": {"d6": 1, "d7": 2}}
]}"#;

/// Recorded as the baseline: a grade-1 chunk at rank 1 everywhere.
const BEFORE: &str =
    r#"{"q1": ["d1", "x", "d2"], "q2": ["d3", "d4"], "q3": ["d5"], "q4": ["d6", "x1", "x2", "d7"]}"#;

/// Gated later: grade-2 chunks at ranks 1, 3, 2, 1.
const AFTER: &str = r#"{"q1": ["d2", "d1"], "q2": ["d3", "x", "d4"], "q3": ["x", "d5"], "q4": ["d7"]}"#;

/// A baseline recorded at relevance level 1 and gated at level 2 must be
/// re-scored from its stored rankings at level 2. Reusing its stored values
/// (mrr 1 on every query) would report a drop of 0.29 and fail.
#[test]
fn relevance_level_change_rescores_the_baseline() {
    let p = Project::new(&[]);
    p.write("gold.json", GRADED_GOLD);
    p.write("before.json", BEFORE);
    p.write("after.json", AFTER);
    let config = |level: i32| {
        format!(
            "gold: gold.json
baselines: baselines
# mrr has no cutoff: re-scoring it needs whole rankings.
baseline_depth: all
relevance_level: {level}
metrics: [mrr, recall@2]
retrievers:
  - name: r
    run: before.json
gate:
  decision: threshold
  rules:
    - metric: mrr
      max_drop: 0.05
      strata: overall
    - metric: recall@2
      max_drop: 0.05
      strata: overall
"
        )
    };
    p.write("rgate.yaml", &config(1));
    let o = p.rgate(&["baseline", "update"]);
    assert_eq!(o.code, 0, "{}", o.stderr);

    // At level 1 the new run is worse on mrr (1 -> (1 + 1 + 1/2 + 1) / 4):
    // the gate sees the drop, so the baseline's level-1 values are real.
    let (code, v) = p.gate(&["--run", "r=after.json"]);
    assert_eq!(code, 1, "{v}");
    let c = check(&v, "mrr", "all");
    assert!((f(c, "baseline") - 1.0).abs() < 1e-12, "{c}");
    assert!((f(c, "current") - 0.875).abs() < 1e-12, "{c}");

    // At level 2, by hand (one relevant chunk per query, the grade-2 one):
    // baseline mrr (1/3 + 1/2 + 1 + 1/4) / 4 = 0.5208, current
    // (1 + 1/3 + 1/2 + 1) / 4 = 0.7083; recall@2 (0 + 1 + 1 + 0) / 4 = 0.5
    // before, (1 + 0 + 1 + 1) / 4 = 0.75 after.
    p.write("rgate.yaml", &config(2));
    let (code, v) = p.gate(&["--run", "r=after.json"]);
    assert_eq!(code, 0, "{v}");
    let c = check(&v, "mrr", "all");
    let base = (1.0 / 3.0 + 0.5 + 1.0 + 0.25) / 4.0;
    let cur = (1.0 + 1.0 / 3.0 + 0.5 + 1.0) / 4.0;
    assert!((f(c, "baseline") - base).abs() < 1e-12, "{c}");
    assert!((f(c, "current") - cur).abs() < 1e-12, "{c}");
    assert!((f(c, "delta") - (cur - base)).abs() < 1e-12, "{c}");
    let r = check(&v, "recall@2", "all");
    assert!((f(r, "baseline") - 0.5).abs() < 1e-12, "{r}");
    assert!((f(r, "current") - 0.75).abs() < 1e-12, "{r}");
    assert_eq!(v["verdict"], "pass", "{v}");
}
