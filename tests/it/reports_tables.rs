//! Issue 29's table and warning fixes: the depth warning, the tolerance and
//! test columns, one precision per column, the B that decided, `--quiet`.

use crate::common;

use common::TestProject;
use serde_json::Value;

fn project(metrics: &str) -> TestProject {
    TestProject::demo(&["hybrid"])
        .with_file(
            "rgate.yaml",
            format!(
                "gold: demo/gold.yaml\nbaselines: store\nmetrics: [{metrics}]\nretrievers:\n  - name: hybrid\n    run: demo/runs/hybrid.jsonl\ngate:\n  resamples: 200\n  rules:\n    - metric: recall@10\n      max_drop: 0.05\n"
            ),
        )
        .with_args(&["--config", "rgate.yaml"])
        .with_env("GITHUB_SHA", "0123456789abcdef")
}

/// Keeps the first `k` results of every query of the demo's hybrid run.
fn truncate_run(p: &TestProject, k: usize) {
    let text = p.read("demo/runs/hybrid.jsonl");
    let mut out = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut v: Value = serde_json::from_str(line).unwrap();
        v["results"].as_array_mut().unwrap().truncate(k);
        out += &serde_json::to_string(&v).unwrap();
        out.push('\n');
    }
    p.write("demo/runs/hybrid.jsonl", out);
}

fn retriever_warnings(v: &Value) -> Vec<String> {
    v["retrievers"][0]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_run_shallower_than_its_baseline_at_a_depth_in_use_is_warned_about() {
    // The demo run ranks 20 chunks a query. The baseline stores rankings
    // to the deepest cutoff, 10, and, as map reads the whole ranking, the
    // run's depth beside them; a 10-deep run then loses map to depth.
    let p = project("recall@10, map");
    assert_eq!(p.run(&["baseline", "update"]).code, 0);
    let stored: Value = serde_json::from_str(&p.read("store/hybrid.json")).unwrap();
    assert_eq!(
        (stored["depth"].clone(), stored["run_depth"].clone()),
        (Value::from(10), Value::from(20))
    );
    assert_eq!(stored["schema_version"], 3);
    truncate_run(&p, 10);
    let (_, v) = p.json(&["gate"]);
    let want = "the run demo/runs/hybrid.jsonl ranks at most 10 results a query, the baseline's ranked 20: map reads deeper than 10, so part of any change is depth alone; rerun the retriever to depth 20 (or record a new baseline if the shallower run is meant)";
    let w = retriever_warnings(&v);
    assert!(w.iter().any(|w| w == want), "{w:#?}");

    // recall@10 reads 10 deep: a 10-deep run loses nothing to depth there,
    // and with map gone nothing is warned about.
    let p = project("recall@10");
    assert_eq!(p.run(&["baseline", "update"]).code, 0);
    let stored: Value = serde_json::from_str(&p.read("store/hybrid.json")).unwrap();
    assert_eq!(
        stored["run_depth"],
        Value::Null,
        "only where rankings are cut and a metric reads them whole"
    );
    assert_eq!(stored["schema_version"], 1);
    truncate_run(&p, 10);
    let (_, v) = p.json(&["gate"]);
    let w = retriever_warnings(&v);
    assert!(!w.iter().any(|w| w.contains("depth alone")), "{w:#?}");

    // 5 deep: recall@10 now reads past the run's end.
    truncate_run(&p, 5);
    let (_, v) = p.json(&["gate"]);
    let w = retriever_warnings(&v);
    assert!(
        w.iter().any(|w| w.contains("ranks at most 5 results a query, the baseline's ranked at least 10: recall@10 reads deeper than 5")),
        "{w:#?}"
    );
}

/// The shipped demo's config, read in place (the gate writes nothing).
fn demo() -> TestProject {
    TestProject::new().with_args(&[
        "--config",
        concat!(env!("CARGO_MANIFEST_DIR"), "/config/rgate.yaml"),
    ])
}

const REGRESSED: &str = concat!(
    "hybrid=",
    env!("CARGO_MANIFEST_DIR"),
    "/config/demo/runs/hybrid-regressed.jsonl"
);

/// The cells of each check table of a terminal report, by header.
fn tables(text: &str) -> Vec<Vec<std::collections::HashMap<String, String>>> {
    let split = |l: &str| -> Vec<String> {
        l.trim()
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(String::from)
            .collect()
    };
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        if !l.trim_start().starts_with("metric ") || !l.contains("verdict") {
            continue;
        }
        let head = split(l);
        lines.next(); // the rule
        let mut rows = Vec::new();
        while let Some(row) = lines.peek().filter(|r| !r.trim().is_empty()) {
            let cells = split(row);
            assert_eq!(cells.len(), head.len(), "{row}");
            rows.push(head.iter().cloned().zip(cells).collect());
            lines.next();
        }
        out.push(rows);
    }
    out
}

fn decimals(cell: &str) -> Option<usize> {
    let c = cell.trim_start_matches('<');
    c.split_once('.').map(|(_, d)| d.len())
}

#[test]
fn gate_tables_show_tolerance_and_test_at_one_precision_per_column() {
    let o = demo().run(&["gate", "--run", REGRESSED]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let tables = tables(&o.stdout);
    assert_eq!(tables.len(), 3, "{}", o.stdout);
    // The failing retriever comes first.
    let hybrid = &tables[0];
    let row = |metric: &str| hybrid.iter().find(|r| r["metric"] == metric).unwrap();
    // max_drop 0.2 in config/rgate.yaml; ndcg@10's 10% of its baseline
    // 0.7046 is 0.07046.
    assert_eq!(row("hit_rate@3")["tolerance"], "0.2000");
    assert_eq!(row("ndcg@10")["tolerance"], "0.0705");
    assert_eq!(row("mrr@10")["tolerance"], "-");
    assert_eq!(row("hit_rate@3")["test"], "randomization");
    assert_eq!(row("hit_rate@3")["verdict"], "fail");
    for t in &tables {
        for col in [
            "upper bound",
            "p (1-sided)",
            "p_adj",
            "baseline",
            "delta",
            "tolerance",
            "mde",
        ] {
            let d: std::collections::BTreeSet<usize> = t.iter().filter_map(|r| decimals(&r[col])).collect();
            assert_eq!(d.len(), 1, "{col}: {d:?}\n{}", o.stdout);
        }
    }
    let md = demo().run(&["--format", "markdown", "gate", "--run", REGRESSED]);
    // The comment's failed-checks table and the fold's full table both
    // show the tolerance; the full table also names the test.
    let heads: Vec<&str> = md
        .stdout
        .lines()
        .filter(|l| l.starts_with("| metric |"))
        .collect();
    assert!(heads.len() >= 2, "{}", md.stdout);
    assert!(heads.iter().all(|h| h.contains("| tolerance |")), "{heads:?}");
    assert!(heads[1..].iter().all(|h| h.contains("| test |")), "{heads:?}");
}

#[test]
fn quiet_keeps_the_verdict_and_the_failures() {
    let o = demo().run(&["gate", "--quiet"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stdout, "rgate gate: PASS (0 of 3 retrievers regressed)\n");
    assert_eq!(o.stderr, "");
    let o = demo().run(&["gate", "-q", "--run", REGRESSED]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    // Headline, the failures, the queries lost, the pointer to the full
    // report, then the next steps (a blank line, a title, two commands with
    // their labels).
    assert_eq!(lines.len(), 10, "{}", o.stdout);
    // Drops from the demo's baselines (0.8861 -> 0.7861, 0.7046 -> 0.5911,
    // 0.9333 -> 0.5333 on identifier-lookup); tolerances from
    // config/rgate.yaml (max_drop 0.07, 10% of 0.7046, max_drop 0.2).
    assert_eq!(
        lines[0],
        "rgate gate: FAIL · hybrid: recall@10 fell 0.1 (tolerance 0.07), +2 more checks"
    );
    assert_eq!(
        lines[1],
        "FAIL hybrid: recall@10 fell 0.1 (tolerance 0.07), ndcg@10 fell 0.1135 (tolerance 0.0705), hit_rate@3 on identifier-lookup fell 0.4 (tolerance 0.2)"
    );
    assert!(
        lines[2].contains("12 of 30 identifier-lookup queries lost their answer"),
        "{}",
        lines[2]
    );
    assert_eq!(
        lines[3],
        "(the full report, with the queries lost: rerun without --quiet)"
    );
    assert_eq!(lines[5], "Next steps:");
    assert!(lines[9].contains("--allow-regression"), "{}", lines[9]);
    // The test's long reason stays in the full report.
    assert!(!o.stdout.contains("p_adj"), "{}", o.stdout);
    assert!(
        !o.stdout.contains("Warnings") && !o.stdout.contains("warning"),
        "{}",
        o.stdout
    );
}

/// The job summary and the annotation write a check's p_adj and tolerance
/// as the report does.
#[test]
fn the_job_summary_and_the_report_agree_digit_for_digit() {
    let p = demo();
    std::fs::create_dir_all(p.path("tmp")).unwrap();
    let o = p
        .rgate()
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", p.path("summary.md"))
        .env("GITHUB_OUTPUT", p.path("output.txt"))
        .env("RUNNER_TEMP", p.path("tmp"))
        .args(["gate", "--run", REGRESSED])
        .output()
        .unwrap();
    let stdout = String::from_utf8(o.stdout).unwrap();
    let stderr = String::from_utf8(o.stderr).unwrap();
    let tables = tables(&stdout);
    let row = tables[0].iter().find(|r| r["metric"] == "hit_rate@3").unwrap();
    let p_adj = &row["p_adj"];
    let summary = p.read("summary.md");
    // Every markdown table row of hit_rate@3, by its table's header: the
    // failed-checks table (tolerance) and the full table in the fold
    // (tolerance and p_adj).
    let cells = |l: &str| -> Vec<String> {
        l.trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let mut head = Vec::new();
    let mut rows = Vec::new();
    for l in summary.lines() {
        if l.starts_with("| metric |") {
            head = cells(l);
        } else if l.starts_with("| hit_rate@3 | identifier-lookup |") {
            let r: std::collections::HashMap<String, String> = head.iter().cloned().zip(cells(l)).collect();
            rows.push(r);
        }
    }
    assert_eq!(rows.len(), 2, "{summary}");
    for r in &rows {
        assert_eq!(r["tolerance"], row["tolerance"], "{summary}");
    }
    assert!(!rows[0].contains_key("p_adj"), "{summary}");
    assert_eq!(&rows[1]["p_adj"], p_adj, "{summary}");
    assert!(
        summary.contains(&format!(" and {p_adj} below alpha 0.05")),
        "{summary}"
    );
    let error = stderr
        .lines()
        .find(|l| l.starts_with("::error") && l.contains("hit_rate@3"))
        .unwrap();
    assert!(
        error.contains(&format!("tolerance 0.2, p_adj {p_adj})")),
        "{error}"
    );
    assert!(
        stdout.contains(&format!(
            "more than the 0.2 allowed, and significantly: p_adj {p_adj} "
        )),
        "{stdout}"
    );
}

/// After the automatic re-test of a borderline result, the header gives
/// the B that decided. The pattern is gate_decisions.rs's: deltas with mean
/// -0.035 over 30 queries put the sign-flip test's significant-drop p near
/// 0.05 at B = 1000.
#[test]
fn the_header_names_the_resamples_that_decided() {
    use rgate::config::{Decision, GateSettings, Rule, StrataSel, TestKind, Tolerance};
    use rgate::gate::GateOutcome;
    use rgate::report::{gate::GateView, Format};
    const PATTERN: [f64; 10] = [-0.2, 0.1, -0.1, 0.0, -0.15, 0.05, -0.05, -0.1, 0.1, -0.2];
    let header = |shift: f64| {
        let settings = GateSettings {
            test: TestKind::Randomization,
            resamples: 1000,
            decision: Decision::SignificantDrop,
            rules: vec![Rule {
                metric: "hit_rate@3".parse().unwrap(),
                tolerance: Tolerance::Absolute(0.0),
                strata: StrataSel::Overall,
            }],
            ..GateSettings::default()
        };
        let d: Vec<f64> = PATTERN.iter().cycle().take(30).map(|d| d + shift).collect();
        let w = crate::sim::world_of(&[30], &["hit_rate@3"]);
        let base = vec![vec![0.5; 30]];
        let cur = vec![d.iter().map(|x| 0.5 + x).collect()];
        let r = crate::sim::gate_values(&w, &settings, &base, &cur);
        let outcome = GateOutcome {
            settings,
            labels: rgate::config::LabelMode::People,
            retrievers: vec![r],
            warnings: vec![],
            judge: None,
            recorded: None,
        };
        let text = GateView {
            outcome: &outcome,
            command: "gate",
            color: false,
            quiet: false,
            invocation: None,
            width: usize::MAX,
        }
        .render(Format::Table)
        .unwrap();
        text.lines().nth(1).unwrap().to_string()
    };
    let h = header(0.02);
    assert!(
        h.starts_with(
            "sign-flip randomization (exact up to 16 queries, else B=10000 after a borderline re-test, 1000 configured, seed "
        ),
        "{h}"
    );
    let h = header(0.0);
    assert!(
        h.starts_with("sign-flip randomization (exact up to 16 queries, else B=1000, seed "),
        "{h}"
    );
}

/// The HTML compare page carries the sentence and the ranking the other
/// formats give (the JSON's `statement`).
#[test]
fn html_compare_states_the_best_variant() {
    let p = TestProject::demo(&["bm25", "hybrid", "reranked"]);
    let args = [
        "compare",
        "--gold",
        "demo/gold.yaml",
        "demo/runs/bm25.jsonl",
        "demo/runs/hybrid.jsonl",
        "demo/runs/reranked.jsonl",
        "--resamples",
        "500",
    ];
    let (code, v) = p.json(&args);
    assert_eq!(code, 0);
    let statement = v["statement"]["text"].as_str().unwrap().to_string();
    let mut html_args = vec!["--format", "html"];
    html_args.extend_from_slice(&args);
    let o = p.run(&html_args);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let escaped = statement
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    assert!(
        o.stdout.contains(&escaped) || o.stdout.contains(&statement),
        "{statement}"
    );
    assert!(
        o.stdout.contains("The variants ranked by"),
        "ranking table missing"
    );
}
