//! The recorded commit outside GitHub Actions (issue 24): a `pull_request`
//! event's variables in the environment, without `GITHUB_ACTIONS=true`,
//! are not a workflow run, and the commit comes from git.

use std::path::Path;

use crate::common::{git, rgate, run};

/// A one-commit repository holding a config, a one-query gold set and its
/// run, and a `pull_request` event naming another head.
fn project(dir: &Path) {
    let w = |p: &str, t: &str| std::fs::write(dir.join(p), t).unwrap();
    w(
        "rgate.yaml",
        "gold: gold.yaml\nbaselines: baselines\nmetrics: [recall@10]\nretrievers:\n  - name: r\n    run: run.json\n",
    );
    w(
        "gold.yaml",
        "version: 1\nqueries:\n  - id: q1\n    text: t1\n    relevant: [d1]\n",
    );
    w("run.json", r#"{"q1": ["d1"]}"#);
    w(
        "event.json",
        r#"{"pull_request": {"head": {"sha": "0123456789abcdef0123456789abcdef01234567"}}}"#,
    );
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "fixture"]);
}

fn head(dir: &Path) -> String {
    let o = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

#[test]
fn github_event_variables_outside_actions_are_not_the_commit() {
    let d = tempfile::tempdir().unwrap();
    project(d.path());
    let o = run({
        let mut c = rgate();
        c.current_dir(d.path())
            .env_remove("GITHUB_ACTIONS")
            .env("GITHUB_EVENT_NAME", "pull_request")
            .env("GITHUB_EVENT_PATH", d.path().join("event.json"))
            .env("GITHUB_SHA", "ffffffffffffffffffffffffffffffffffffffff")
            .args(["--config", "rgate.yaml", "baseline", "update"]);
        c
    });
    assert_eq!(o.code, 0, "{}", o.stderr);
    let b: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("baselines/r.json")).unwrap()).unwrap();
    let want = head(d.path());
    assert_eq!(want.len(), 40, "git rev-parse HEAD: {want}");
    assert_eq!(b["commit"], want.as_str());
}
