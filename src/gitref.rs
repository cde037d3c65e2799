//! Baselines as they are at a git ref (`rgate gate --baseline-ref
//! origin/main`): a pull request that edits its own baseline is still gated
//! against the target branch's.
//!
//! git is run without a shell, each argument passed as is; the ref is
//! resolved to a commit once, so every baseline is read from the same tree
//! even if the ref moves during the run.

use std::path::{Component, Path, PathBuf};
use std::process::Command;

use anyhow::Result;

use crate::baseline::{Baseline, Store};
use crate::diag::{input_error_hint, usage_error};

#[derive(Debug, Clone)]
pub struct GitRef {
    /// As the user wrote it, for messages.
    pub rev: String,
    pub commit: String,
    /// The work tree's top, canonical.
    toplevel: PathBuf,
}

fn git(dir: &Path, args: &[&str]) -> Result<std::process::Output> {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| usage_error(format!("cannot run git: {e}"), "--baseline-ref needs git on PATH"))
}

/// `dir` (which may not exist yet) made absolute with its existing part
/// canonical, so it compares with git's canonical `--show-toplevel`.
fn absolute(dir: &Path) -> Result<PathBuf> {
    let cwd = std::env::current_dir().map_err(|e| {
        usage_error(
            format!("cannot read the working directory: {e}"),
            "run from an existing directory",
        )
    })?;
    let mut full = PathBuf::new();
    for c in cwd.join(dir).components() {
        match c {
            Component::ParentDir => {
                full.pop();
            }
            Component::CurDir => {}
            other => full.push(other),
        }
    }
    let mut existing = full.as_path();
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        if let Ok(canon) = existing.canonicalize() {
            let mut out = canon;
            out.extend(rest.iter().rev());
            return Ok(out);
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return Ok(full),
        }
    }
}

impl GitRef {
    /// Resolves `rev` in the repository that holds `dir`.
    pub fn resolve(dir: &Path, rev: &str) -> Result<GitRef> {
        if rev.is_empty() || rev.starts_with('-') {
            return Err(usage_error(
                format!("--baseline-ref `{rev}` is not a git ref"),
                "name a branch, tag or commit, e.g. --baseline-ref origin/main",
            ));
        }
        let here = absolute(dir)?;
        let mut probe = here.as_path();
        while !probe.is_dir() {
            probe = probe.parent().unwrap_or(Path::new("/"));
        }
        let top = git(probe, &["rev-parse", "--show-toplevel"])?;
        if !top.status.success() {
            return Err(input_error_hint(
                &here,
                None,
                format!("--baseline-ref {rev}: not inside a git repository"),
                "run the gate in a clone of the repository, or drop --baseline-ref",
            ));
        }
        let toplevel = PathBuf::from(String::from_utf8_lossy(&top.stdout).trim());
        let toplevel = toplevel.canonicalize().unwrap_or(toplevel);
        let spec = format!("{rev}^{{commit}}");
        let out = git(&toplevel, &["rev-parse", "--verify", "--quiet", &spec])?;
        let commit = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || commit.is_empty() {
            return Err(usage_error(
                format!("--baseline-ref {rev}: no such commit, branch or tag in {}", toplevel.display()),
                format!(
                    "fetch it first (in Actions: git fetch --depth=1 origin \"+refs/heads/main:refs/remotes/origin/main\"), or check the spelling; `git rev-parse {rev}` must work"
                ),
            ));
        }
        Ok(GitRef {
            rev: rev.to_string(),
            commit,
            toplevel,
        })
    }

    /// The repository path of `file` (`eval/baselines/search.json`).
    fn repo_path(&self, file: &Path) -> Result<String> {
        let abs = absolute(file)?;
        let rel = abs.strip_prefix(&self.toplevel).map_err(|_| {
            input_error_hint(
                file,
                None,
                format!(
                    "--baseline-ref {}: this baseline lies outside the repository at {}",
                    self.rev,
                    self.toplevel.display()
                ),
                "keep the baselines directory inside the repository",
            )
        })?;
        Ok(rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/"))
    }

    /// The file's text at the ref; `None` when the ref has no such file.
    pub fn read(&self, file: &Path) -> Result<Option<(String, String)>> {
        let rel = self.repo_path(file)?;
        let object = format!("{}:{rel}", self.commit);
        let exists = git(&self.toplevel, &["cat-file", "-e", &object])?;
        let shown = format!("{}:{rel}", self.rev);
        if !exists.status.success() {
            return Ok(None);
        }
        let out = git(&self.toplevel, &["cat-file", "blob", &object])?;
        if !out.status.success() {
            return Err(input_error_hint(
                Path::new(&shown),
                None,
                format!(
                    "cannot read from git: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
                "the path must be a file at that ref",
            ));
        }
        match String::from_utf8(out.stdout) {
            Ok(text) => Ok(Some((shown, text))),
            Err(_) => Err(input_error_hint(
                Path::new(&shown),
                None,
                "not UTF-8",
                "a baseline is a JSON file written by rgate",
            )),
        }
    }

    /// A retriever's baseline as the ref has it (`None`: no baseline there).
    pub fn load_baseline(&self, store: &Store, name: &str) -> Result<Option<Baseline>> {
        match self.read(&store.baseline_path(name))? {
            None => Ok(None),
            Some((shown, text)) => Baseline::parse(Path::new(&shown), &text).map(Some),
        }
    }
}
