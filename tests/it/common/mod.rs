//! What the test modules share: fixture paths, the `rgate` binary in a
//! clean environment, and [`TestProject`], a scratch project to run it in.

#![allow(dead_code)]

mod project;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

pub use project::TestProject;

/// A JSON array of numbers from a reference fixture (scipy's, ppi-python's).
pub fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

pub fn fixture(rel: &str) -> PathBuf {
    repo("tests/fixtures").join(rel)
}

/// A path in this repository (`config/demo/gold.yaml`, ...).
pub fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Whether a variable of the test process's environment would change what
/// a child `rgate` (or the git it runs) does, so that it must not pass
/// through: under GitHub Actions (`GITHUB_*`, `RUNNER_*`, `CI`) the gate
/// writes annotations and step summaries and reads the pull request's
/// event; `RGATE_CONFIG` picks the config; `SOURCE_DATE_EPOCH` fixes the
/// clock; `CLICOLOR*` override `NO_COLOR`; `USER` is the default labeler;
/// `GIT_*` (set while a git hook runs) point git at another repository.
/// A test that wants one sets it on the command.
fn leaks_into_rgate(key: &OsStr) -> bool {
    let Some(key) = key.to_str() else {
        return false;
    };
    ["GITHUB_", "RUNNER_", "RGATE_", "GIT_"]
        .iter()
        .any(|p| key.starts_with(p))
        || matches!(
            key,
            "CI" | "SOURCE_DATE_EPOCH" | "CLICOLOR" | "CLICOLOR_FORCE" | "USER"
        )
}

/// Removes from a command every variable [`leaks_into_rgate`] names, as the
/// test process has them now, and sets `NO_COLOR`: for a command that runs
/// rgate itself (`script`, `tmux`).
pub fn clean_env(c: &mut std::process::Command) {
    for (key, _) in std::env::vars_os() {
        if leaks_into_rgate(&key) {
            c.env_remove(key);
        }
    }
    c.env("NO_COLOR", "1");
}

/// The `rgate` binary in a clean environment, as a plain command (for
/// `spawn`).
pub fn command() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_rgate"));
    clean_env(&mut c);
    c
}

/// The `rgate` binary in a clean environment.
pub fn rgate() -> assert_cmd::Command {
    assert_cmd::Command::from_std(command())
}

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(mut cmd: assert_cmd::Command) -> Out {
    let o = cmd.output().unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Runs git in `dir` with a throwaway identity; a failure fails the test.
pub fn git(dir: &Path, args: &[&str]) {
    let mut c = std::process::Command::new("git");
    clean_env(&mut c);
    let o = c
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}
