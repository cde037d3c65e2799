//! The composite action's `comment: on-failure`, its report artifact and
//! the link to it (issue 29, item 5), run as the runner runs them against
//! the fake `gh` of [`crate::action_comment`].
#![cfg(unix)]

use std::process::Command;

use crate::action_comment::{
    action_dir, calls, comment, comments, lgtm, ours, setup, which, words, write_exec, MARKER,
};

const ON_FAILURE: (&str, &str) = ("COMMENT", "on-failure");

/// A passing gate with no comment yet writes none; a failing one writes
/// it; a later pass updates it, so the fixed pull request no longer shows
/// the failure; and a pass after that keeps updating the same comment.
#[test]
fn on_failure_comments_only_when_the_gate_fails_then_updates_it_when_it_passes() {
    let tmp = setup();
    let dir = tmp.path();
    let (code, out) = comment(dir, "## PASS\n", &[ON_FAILURE, ("VERDICT", "pass")]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("none written (comment: on-failure)"), "{out}");
    assert_eq!(comments(dir), vec![lgtm()]);

    let (code, out) = comment(dir, "## FAIL\n", &[ON_FAILURE, ("VERDICT", "fail")]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(comments(dir), vec![lgtm(), ours("201", "## FAIL\n")]);

    for _ in 0..2 {
        let (code, out) = comment(dir, "## PASS\n", &[ON_FAILURE, ("VERDICT", "pass")]);
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("updated comment 201"), "{out}");
        assert_eq!(comments(dir), vec![lgtm(), ours("201", "## PASS\n")]);
    }
    let calls = calls(dir);
    assert_eq!(
        calls.lines().filter(|l| l.contains("--method POST")).count(),
        1,
        "{calls}"
    );
    assert_eq!(
        calls.lines().filter(|l| l.contains("--method PATCH")).count(),
        2,
        "{calls}"
    );
}

/// `always` (and `true`, today's spelling) comment on a pass too; a mode
/// the action does not know writes nothing and says which values it takes.
#[test]
fn always_comments_on_a_pass_and_an_unknown_mode_is_named() {
    for mode in ["always", "true"] {
        let tmp = setup();
        let dir = tmp.path();
        let (code, out) = comment(dir, "## PASS\n", &[("COMMENT", mode), ("VERDICT", "pass")]);
        assert_eq!(code, 0, "{out}");
        assert_eq!(comments(dir), vec![lgtm(), ours("201", "## PASS\n")], "{mode}");
    }
    let tmp = setup();
    let dir = tmp.path();
    let (code, out) = comment(dir, "## FAIL\n", &[("COMMENT", "yes"), ("VERDICT", "fail")]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("::warning title=rgate::comment: `yes` is not one of always, on-failure or never"),
        "{out}"
    );
    assert_eq!(comments(dir), vec![lgtm()]);
    assert_eq!(calls(dir), "", "gh is not called");
}

/// The uploaded report is linked at the end of the comment, and from the
/// note of a comment cut to GitHub's limit, which stays within it.
#[test]
fn the_comment_links_the_report_artifact_whole_or_cut() {
    const URL: &str = "https://github.com/o/r/actions/runs/42/artifacts/9";
    let link = [("ARTIFACT", "rgate-report"), ("ARTIFACT_URL", URL)];
    let tmp = setup();
    let dir = tmp.path();
    let (code, out) = comment(dir, "## FAIL\n", &link);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        comments(dir)[1].2,
        format!(
            "{MARKER}\n## FAIL\n\n---\nFull report (report.html to open in a browser): the artifact [rgate-report]({URL}) of this run.\n"
        )
    );

    let limit = 4096;
    let report: String = (0..400).map(|i| format!("| q-{i:04} | lost |\n")).collect();
    assert!(report.len() > limit);
    let lim = limit.to_string();
    let env = [link[0], link[1], ("RGATE_COMMENT_LIMIT", lim.as_str())];
    let (code, out) = comment(dir, &report, &env);
    assert_eq!(code, 0, "{out}");
    let body = &comments(dir)[1].2;
    assert!(body.len() <= limit, "{} bytes", body.len());
    assert!(body.contains("**Report truncated**"), "{body}");
    assert!(
        body.contains(&format!(
            "the summary says where and in the artifact rgate-report ({URL})."
        )),
        "{body}"
    );
}

/// The gate step of action.yml, run as the runner runs it with a fake
/// `rgate` recording its arguments; returns the arguments and the step's
/// outputs.
fn gate_step(args: &str, report_dir: Option<&str>) -> (Vec<String>, String, tempfile::TempDir) {
    let action: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(action_dir().join("action.yml")).unwrap()).unwrap();
    let step = action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "gate")
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    write_exec(
        &dir.join("bin/rgate"),
        "#!/usr/bin/env bash\nprintf '%s\\0' \"$@\" > \"$FAKE_RGATE_ARGS\"\nexit 0\n",
    );
    std::fs::write(dir.join("step.sh"), step["run"].as_str().unwrap()).unwrap();
    std::fs::write(dir.join("output"), "").unwrap();
    let path = std::env::join_paths(std::iter::once(dir.join("bin")).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let mut c = Command::new(which("bash"));
    c.args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(dir.join("step.sh"))
        .current_dir(dir)
        .env("PATH", &path)
        .env("GITHUB_ACTION_PATH", action_dir())
        .env("GITHUB_OUTPUT", dir.join("output"))
        .env("FAKE_RGATE_ARGS", dir.join("argv"))
        .env("INPUT_CONFIG", "")
        .env("INPUT_ARGS", args)
        .env_remove("INPUT_REPORT_DIR");
    if let Some(d) = report_dir {
        c.env("INPUT_REPORT_DIR", d);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let argv = words(&std::fs::read(dir.join("argv")).unwrap());
    let output = std::fs::read_to_string(dir.join("output")).unwrap();
    (argv, output, tmp)
}

/// The action's report directory reaches the gate as `--report-dir` and
/// becomes the step's `report-dir` output, the artifact's path; a
/// `--report-dir` of the user's own args is used instead, made absolute
/// (the upload resolves paths from the workspace, not from
/// working-directory), and not given twice.
#[test]
fn the_gate_step_writes_the_report_dir_it_uploads() {
    let (argv, output, _tmp) = gate_step("--baseline-ref origin/main", Some("/tmp/runner/rgate-report"));
    assert_eq!(
        argv,
        [
            "gate",
            "--report-dir",
            "/tmp/runner/rgate-report",
            "--baseline-ref",
            "origin/main"
        ]
    );
    assert_eq!(output, "report-dir=/tmp/runner/rgate-report\nexit-code=0\n");

    for args in ["--report-dir out/r --record", "--report-dir=out/r --record"] {
        let (argv, output, tmp) = gate_step(args, Some("/tmp/runner/rgate-report"));
        let mut want = vec!["gate"];
        want.extend(args.split(' '));
        assert_eq!(argv, want);
        assert_eq!(
            output,
            format!("report-dir={}/out/r\nexit-code=0\n", tmp.path().display())
        );
    }
}
