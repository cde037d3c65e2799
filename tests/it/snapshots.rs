//! Snapshots of the shipped demo's reports, every format the command
//! prints: exit code, stdout and stderr together in one file each (as uv's
//! CLI tests keep them), so that a change to a report is reviewed as a diff
//! of `tests/it/snapshots/`. Update after a deliberate change with
//! `INSTA_UPDATE=always cargo test --test it snapshots::` (or `cargo insta
//! review`), then read the diff before committing it.
//!
//! What varies from run to run or machine to machine is masked: the
//! scratch directory of a test, the clock (`created_at`), and rgate's
//! version. Everything else is the demo's own, fixed by its seed.

use std::path::Path;

use crate::common::{command, repo};

/// The regressed run the demo ships, gated in place of `hybrid`'s.
const REGRESSED: &str = "hybrid=config/demo/runs/hybrid-regressed.jsonl";

/// `rgate ARGS` in `dir` with `env`, as one text: the exit code, then
/// stdout, then stderr.
fn transcript(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut c = command();
    c.current_dir(dir).args(args).env("COLUMNS", "120");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    format!(
        "exit: {}\n----- stdout -----\n{}\n----- stderr -----\n{}",
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Filters for what is not the demo's: `dir` (a scratch copy), the clock,
/// the version.
fn filters(dir: &Path) -> Vec<(String, String)> {
    let mut f = vec![
        (
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z".to_string(),
            "[TIME]".to_string(),
        ),
        (
            regex_escape(env!("CARGO_PKG_VERSION")),
            "[VERSION]".to_string(),
        ),
    ];
    let shown = dir.display().to_string();
    if !shown.is_empty() {
        f.insert(0, (regex_escape(&shown), "[DIR]".to_string()));
    }
    f
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '/' || c == '-' {
                c.to_string()
            } else {
                format!("\\{c}")
            }
        })
        .collect()
}

fn assert_snap(name: &str, dir: &Path, text: &str) {
    let mut settings = insta::Settings::clone_current();
    for (re, with) in filters(dir) {
        settings.add_filter(&re, with);
    }
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(name, text));
}

/// The gate on the shipped demo in place: `--config config/rgate.yaml`
/// from the repository's root, as the README runs it.
fn demo(name: &str, args: &[&str], env: &[(&str, &str)]) {
    let root = repo("");
    let mut all = vec!["--config", "config/rgate.yaml"];
    all.extend_from_slice(args);
    let t = transcript(&root, &all, env);
    assert_snap(name, &root, &t);
}

const GATE_FORMATS: [&str; 5] = ["table", "json", "markdown", "csv", "junit"];

#[test]
fn gate_pass_in_every_format() {
    for f in GATE_FORMATS {
        demo(&format!("gate_pass_{f}"), &["gate", "--format", f], &[]);
    }
}

#[test]
fn gate_fail_in_every_format() {
    for f in GATE_FORMATS {
        demo(
            &format!("gate_fail_{f}"),
            &["gate", "--run", REGRESSED, "--format", f],
            &[],
        );
    }
}

#[test]
fn gate_fail_in_a_narrow_terminal_and_quiet() {
    demo(
        "gate_fail_table_80",
        &["gate", "--run", REGRESSED],
        &[("COLUMNS", "80")],
    );
    demo("gate_fail_quiet", &["gate", "-q", "--run", REGRESSED], &[]);
}

/// The job summary and annotations of the failing gate in GitHub Actions.
#[test]
fn gate_fail_job_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let summary = tmp.path().join("summary.md");
    let root = repo("");
    let t = transcript(
        &root,
        &[
            "--config",
            "config/rgate.yaml",
            "gate",
            "--run",
            REGRESSED,
            "--format",
            "json",
            "--output",
            tmp.path().join("report.json").to_str().unwrap(),
        ],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
            ("RUNNER_TEMP", tmp.path().to_str().unwrap()),
        ],
    );
    let text = format!(
        "{t}\n----- job summary -----\n{}",
        std::fs::read_to_string(&summary).unwrap()
    );
    assert_snap("gate_fail_job_summary", tmp.path(), &text);
}

#[test]
fn compare_and_eval_on_the_demo() {
    let runs = [
        "bm25=config/demo/runs/bm25.jsonl",
        "hybrid=config/demo/runs/hybrid.jsonl",
    ];
    for f in ["table", "markdown", "json", "csv"] {
        let mut args = vec!["compare", "--gold", "config/demo/gold.yaml", "--by-stratum"];
        args.extend_from_slice(&runs);
        args.extend_from_slice(&["--format", f]);
        let root = repo("");
        assert_snap(&format!("compare_{f}"), &root, &transcript(&root, &args, &[]));
    }
    for f in ["table", "markdown", "json", "csv"] {
        let args = [
            "eval",
            "--gold",
            "config/demo/gold.yaml",
            "--run",
            "config/demo/runs/hybrid.jsonl",
            "--by-stratum",
            "--format",
            f,
        ];
        let root = repo("");
        assert_snap(&format!("eval_{f}"), &root, &transcript(&root, &args, &[]));
    }
}

/// A copy of the demo's config and data in a scratch directory, for the
/// commands that write baselines.
fn demo_copy() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&repo("config"), &tmp.path().join("config"));
    tmp
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn baseline_update_accepting_a_regression() {
    for f in ["table", "markdown", "json", "csv", "junit"] {
        let tmp = demo_copy();
        let t = transcript(
            tmp.path(),
            &[
                "--config",
                "config/rgate.yaml",
                "baseline",
                "update",
                "hybrid",
                "--run",
                REGRESSED,
                "--allow-regression",
                "--note",
                "tokenizer change reviewed in #12",
                "--format",
                f,
            ],
            &[],
        );
        assert_snap(&format!("baseline_update_allow_regression_{f}"), tmp.path(), &t);
    }
}
