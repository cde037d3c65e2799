//! A simulated GitHub Actions run: environment variables and temp files
//! stand in for the runner, and the test reads back what rgate wrote.

use crate::common;

use std::path::Path;

use common::{rgate, run, TestProject};

const HEAD: &str = "0123456789abcdef0123456789abcdef01234567";

/// Four queries in one stratum whose name needs escaping in a workflow
/// command property (`:` `,` `%`). Baseline: every query hit at rank 1.
/// Candidate: q1 and q2 missed, q3 hit, q4 absent (a warning). recall@10
/// falls from 1 to 1/4, by hand.
fn project() -> TestProject {
    let mut gold = String::from("version: 1\nqueries:\n");
    for q in 1..=4 {
        gold +=
            &format!("  - id: q{q}\n    text: t{q}\n    stratum: \"ops: a,b 100%\"\n    relevant: [d{q}]\n");
    }
    let p = TestProject::new()
        .with_file(
            "config/rgate.yaml",
            "gold: gold.yaml\nbaselines: baselines\nmetrics: [recall@10]\nretrievers:\n  - name: r\n    run: good.json\ngate:\n  max_missing: 0.25\n  decision: threshold\n  rules:\n    - metric: recall@10\n      max_drop: 0.1\n",
        )
        .with_file("config/gold.yaml", gold)
        .with_file(
            "config/good.json",
            r#"{"q1": ["d1"], "q2": ["d2"], "q3": ["d3"], "q4": ["d4"]}"#,
        )
        .with_file("config/bad.json", r#"{"q1": ["x"], "q2": ["x"], "q3": ["d3"]}"#)
        .with_file(
            "event.json",
            format!(
                r#"{{"pull_request": {{"head": {{"sha": "{HEAD}"}}, "merge_commit_sha": "ffffffffffffffffffffffffffffffffffffffff"}}}}"#
            ),
        );
    let o = p.run(&["baseline", "update", "--note", "first"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    p
}

fn actions(dir: &Path) -> assert_cmd::Command {
    let mut c = rgate();
    c.current_dir(dir)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
        .env("GITHUB_OUTPUT", dir.join("output.txt"))
        .env("RUNNER_TEMP", dir.join("tmp"))
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", dir.join("event.json"))
        .env("GITHUB_SHA", "ffffffffffffffffffffffffffffffffffffffff");
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    c
}

/// `name<<DELIM` / value lines / `DELIM`, as the runner reads the file.
fn read_outputs(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(head) = lines.next() {
        let (name, delim) = head.split_once("<<").expect("heredoc form");
        let mut value = Vec::new();
        for l in lines.by_ref() {
            if l == delim {
                break;
            }
            value.push(l);
        }
        out.push((name.to_string(), value.join("\n")));
    }
    out
}

#[test]
fn a_failing_gate_in_actions() {
    let tmp = project();
    let dir = tmp.root();
    let o = run({
        let mut c = actions(dir);
        c.args([
            "gate",
            "--run",
            "r=config/bad.json",
            "--record",
            "--format",
            "json",
        ]);
        c
    });
    assert_eq!(o.code, 1, "{}", o.stderr);
    // stdout is the JSON report, untouched by workflow commands.
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("stdout is pure JSON");
    assert_eq!(v["verdict"], "fail");

    // Annotations: one error per failed check (overall and the stratum),
    // property text escaped (: , %), data keeping : and , but not %.
    let errors: Vec<&str> = o.stderr.lines().filter(|l| l.starts_with("::error")).collect();
    assert_eq!(errors.len(), 2, "{}", o.stderr);
    assert!(
        errors[0].starts_with("::error title=rgate%3A r regressed on recall@10 (all)::r: recall@10 on all fell 0.75: 1.0000 -> 0.2500 (delta -0.7500, tolerance 0.1, p_adj "),
        "{}",
        errors[0]
    );
    assert!(
        errors[1].starts_with(
            "::error title=rgate%3A r regressed on recall@10 (ops%3A a%2Cb 100%25)::r: recall@10 on ops: a,b 100%25 fell 0.75"
        ),
        "{}",
        errors[1]
    );
    let warnings: Vec<&str> = o.stderr.lines().filter(|l| l.starts_with("::warning")).collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("::warning title=rgate%3A r::") && w.contains("q4")),
        "the absent query is a warning: {}",
        o.stderr
    );
    assert!(o
        .stderr
        .lines()
        .all(|l| !l.starts_with("::") || !l.contains('\r')));

    // The summary: the Markdown report, which leads with the headline
    // naming the failed check (recall@10 1 -> 0.25: fell 0.75, tolerance
    // 0.1), then the failed checks, then the report's path.
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.starts_with(
            "## ❌ rgate gate: **FAIL** · r: recall@10 fell 0.75 (tolerance 0.1), +1 more check\n"
        ),
        "{summary}"
    );
    assert!(summary.contains("| recall@10 | all | "), "{summary}");
    assert!(summary.contains("(the `report` output)"), "{summary}");

    // Outputs: verdict and the report's path, and the report is there.
    let outputs = read_outputs(&std::fs::read_to_string(dir.join("output.txt")).unwrap());
    assert_eq!(outputs[0], ("verdict".into(), "fail".into()));
    assert_eq!(outputs[1].0, "report");
    let report = std::fs::read_to_string(&outputs[1].1).unwrap();
    assert!(report.contains("recall@10"), "{report}");
    assert_eq!(Path::new(&outputs[1].1), dir.join("tmp/rgate-report.md"));

    // History records the PR head, not the merge commit GITHUB_SHA names.
    let history = std::fs::read_to_string(dir.join("config/baselines/r.history.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(history.lines().last().unwrap()).unwrap();
    assert_eq!(last["commit"], HEAD);
    assert_eq!(last["kind"], "gate");
}

#[test]
fn a_passing_gate_in_actions_appends_and_names_the_report_dir() {
    let tmp = project();
    let dir = tmp.root();
    std::fs::write(dir.join("summary.md"), "earlier step\n").unwrap();
    let o = run({
        let mut c = actions(dir);
        c.args(["gate", "--report-dir", "out"]);
        c
    });
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!o.stderr.contains("::error"), "{}", o.stderr);
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.starts_with("earlier step\n## ✅ rgate gate: **PASS** (0 of 1 retriever regressed)\n"),
        "{summary}"
    );
    let outputs = read_outputs(&std::fs::read_to_string(dir.join("output.txt")).unwrap());
    assert_eq!(outputs[0], ("verdict".into(), "pass".into()));
    assert_eq!(outputs[1], ("report".into(), "out/report.md".into()));
}

#[test]
fn nothing_of_it_outside_actions() {
    let tmp = project();
    let dir = tmp.root();
    let o = run({
        let mut c = actions(dir);
        c.env_remove("GITHUB_ACTIONS")
            .args(["gate", "--run", "r=config/bad.json"]);
        c
    });
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(!o.stderr.contains("::"), "{}", o.stderr);
    assert!(!dir.join("summary.md").exists());
    assert!(!dir.join("output.txt").exists());
}
