//! `rgate gate --baseline-ref`: a branch that edited its own baseline is
//! still gated against the baseline of the ref it names.

use crate::common;

use std::path::Path;

use common::{git, rgate, run, TestProject};

/// Main: a baseline where all four queries are hit (recall@10 = 1). The
/// branch: a run that misses three of them (recall@10 = 1/4, a drop of
/// 0.75 against a tolerance of 0.1: a failure under the threshold rule),
/// and a baseline re-recorded from that run with --allow-regression.
fn repo() -> TestProject {
    let mut gold = String::from("version: 1\nqueries:\n");
    for q in 1..=4 {
        gold += &format!("  - id: q{q}\n    text: t{q}\n    relevant: [d{q}]\n");
    }
    let p = TestProject::new()
        .git_init()
        .with_file(
            "config/rgate.yaml",
            "gold: ../eval/gold.yaml\nbaselines: ../eval/baselines\nmetrics: [recall@10]\nretrievers:\n  - name: r\n    run: ../eval/run.json\ngate:\n  decision: threshold\n  rules:\n    - metric: recall@10\n      max_drop: 0.1\n      strata: overall\n",
        )
        .with_file("eval/gold.yaml", gold)
        .with_file(
            "eval/run.json",
            r#"{"q1": ["d1"], "q2": ["d2"], "q3": ["d3"], "q4": ["d4"]}"#,
        );
    let dir = p.root();
    let o = p.run(&["baseline", "update", "--note", "main"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "main"]);
    git(dir, &["checkout", "-qb", "pr"]);
    p.write(
        "eval/run.json",
        r#"{"q1": ["x"], "q2": ["x"], "q3": ["x"], "q4": ["d4"]}"#,
    );
    let o = p.run(&["baseline", "update", "--allow-regression", "--note", "sneaky"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    git(dir, &["commit", "-qam", "worse, with its own baseline"]);
    p
}

fn gate(dir: &Path, args: &[&str]) -> common::Out {
    run({
        let mut c = rgate();
        c.arg("gate").args(args).current_dir(dir);
        c
    })
}

#[test]
fn the_target_branch_baseline_decides() {
    let tmp = repo();
    let dir = tmp.root();
    // Against its own edited baseline the branch passes...
    let o = gate(dir, &["--format", "json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // ...against main's it fails: 1.0 -> 0.25.
    let o = gate(dir, &["--baseline-ref", "main", "--format", "json"]);
    assert_eq!(o.code, 1, "{}{}", o.stdout, o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let check = &v["retrievers"][0]["checks"][0];
    assert_eq!(check["baseline"], 1.0);
    assert_eq!(check["current"], 0.25);
    assert_eq!(check["verdict"], "fail");
    // From a subdirectory, and by commit id, the same.
    std::fs::create_dir_all(dir.join("eval/sub")).unwrap();
    let o = gate(&dir.join("eval/sub"), &["--baseline-ref", "main~0"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    // The working tree's baseline is untouched by reading main's.
    let b = std::fs::read_to_string(dir.join("eval/baselines/r.json")).unwrap();
    assert!(b.contains("sneaky"));
}

#[test]
fn a_ref_without_the_baseline_means_no_baseline_yet() {
    let tmp = repo();
    let dir = tmp.root();
    git(dir, &["checkout", "-q", "--orphan", "empty"]);
    git(dir, &["rm", "-rqf", "--cached", "eval/baselines"]);
    git(dir, &["commit", "-qm", "no baselines here"]);
    git(dir, &["checkout", "-qf", "pr"]);
    let o = gate(dir, &["--baseline-ref", "empty"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("no baseline"), "{}", o.stdout);
}

#[test]
fn unknown_refs_and_missing_repositories_are_errors() {
    let tmp = repo();
    let dir = tmp.root();
    let o = gate(dir, &["--baseline-ref", "origin/nope"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("--baseline-ref origin/nope: no such commit"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("hint: fetch it first"), "{}", o.stderr);
    let o = gate(dir, &["--baseline-ref", "--upload-pack=x"]);
    assert_eq!(o.code, 2, "{}", o.stderr);

    // The same project outside any repository.
    let plain = TestProject::new();
    for f in [
        "config/rgate.yaml",
        "eval/gold.yaml",
        "eval/run.json",
        "eval/baselines/r.json",
    ] {
        plain.write(f, std::fs::read_to_string(dir.join(f)).unwrap());
    }
    let o = run({
        let mut c = rgate();
        c.args(["gate", "--baseline-ref", "main"])
            .current_dir(plain.root())
            .env("GIT_CEILING_DIRECTORIES", plain.root().parent().unwrap());
        c
    });
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("not inside a git repository"), "{}", o.stderr);
    assert!(o.stderr.contains("hint:"), "{}", o.stderr);
}
