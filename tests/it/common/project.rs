//! A scratch project for the CLI tests: a temporary directory holding what
//! a user's repository would (a config, a gold set, runs, baselines), and
//! `rgate` run in it. One builder, so each test says only what its project
//! holds and how `rgate` is called there.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use super::{git, repo, run, Out};

pub struct TestProject {
    dir: tempfile::TempDir,
    /// Arguments every run starts with (`--config ...`).
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
}

impl TestProject {
    /// An empty project.
    pub fn new() -> TestProject {
        TestProject {
            dir: tempfile::tempdir().unwrap(),
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    /// The shipped demo's gold set at `demo/gold.yaml` and the named runs
    /// at `demo/runs/<name>.jsonl`; no config.
    pub fn demo(runs: &[&str]) -> TestProject {
        let mut p = TestProject::new().with_copy("demo/gold.yaml", repo("config/demo/gold.yaml"));
        for r in runs {
            p = p.with_copy(
                &format!("demo/runs/{r}.jsonl"),
                repo(&format!("config/demo/runs/{r}.jsonl")),
            );
        }
        p
    }

    /// Writes a file (its directories made as needed).
    pub fn with_file(self, rel: &str, text: impl AsRef<[u8]>) -> TestProject {
        self.write(rel, text);
        self
    }

    /// Copies a file in (its directories made as needed).
    pub fn with_copy(self, rel: &str, from: impl AsRef<Path>) -> TestProject {
        let to = self.path(rel);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(from.as_ref(), &to).unwrap_or_else(|e| panic!("{}: {e}", from.as_ref().display()));
        self
    }

    /// Every run reads this config, by its absolute path (`--config
    /// <project>/<rel>`).
    pub fn with_config(self, rel: &str) -> TestProject {
        let path = self.path(rel);
        self.with_args(&[std::ffi::OsStr::new("--config"), path.as_os_str()])
    }

    /// Arguments every run starts with, as given (a relative path is read
    /// from the project directory, where rgate runs).
    pub fn with_args<S: AsRef<std::ffi::OsStr>>(mut self, args: &[S]) -> TestProject {
        self.args.extend(args.iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// A variable every run gets (the environment is otherwise clean: see
    /// [`super::rgate`]).
    pub fn with_env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> TestProject {
        self.env.push((key.into(), value.as_ref().to_owned()));
        self
    }

    /// The project as a fresh git repository (nothing committed).
    pub fn git_init(self) -> TestProject {
        git(self.root(), &["init", "-q"]);
        self
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes a file (its directories made as needed).
    pub fn write(&self, rel: &str, text: impl AsRef<[u8]>) {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    /// `rgate` in the project directory with the project's leading
    /// arguments and variables, as a plain command (for `spawn`).
    pub fn command(&self) -> std::process::Command {
        let mut c = super::command();
        c.current_dir(self.root()).args(&self.args);
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    /// `rgate` in the project directory with the project's leading
    /// arguments and variables; add the rest.
    pub fn rgate(&self) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.command())
    }

    /// Runs `rgate <leading arguments> <args>` in the project.
    pub fn run(&self, args: &[&str]) -> Out {
        let mut c = self.rgate();
        c.args(args);
        run(c)
    }

    /// Runs `rgate <leading arguments> --format json <args>`: the exit code
    /// and the report.
    pub fn json(&self, args: &[&str]) -> (i32, serde_json::Value) {
        let mut a = vec!["--format", "json"];
        a.extend_from_slice(args);
        let o = self.run(&a);
        (
            o.code,
            serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", o.stdout, o.stderr)),
        )
    }

    /// Runs `rgate <args>` in the project, without its leading arguments
    /// and variables (no config named).
    pub fn bare(&self, args: &[&str]) -> Out {
        let mut c = super::rgate();
        c.current_dir(self.root()).args(args);
        run(c)
    }
}
