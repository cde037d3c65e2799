//! `rgate init`: a commented config, a gold-set template and a pull-request
//! workflow, written into the repository so a team starts from something
//! that runs. It never overwrites: when any of the files exists, nothing is
//! written; when a write fails partway, the files and directories this run
//! made are removed again.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::cli::Global;
use crate::diag::{input_error, input_error_hint};

const CONFIG: &str = include_str!("../templates/rgate.yaml");
const GOLD: &str = include_str!("../templates/gold.yaml");
const WORKFLOW: &str = include_str!("../templates/workflow.yml");

/// What `init` writes, relative to the repository root.
pub fn files() -> [(&'static str, String); 3] {
    [
        (crate::config::DEFAULT_CONFIG, CONFIG.to_string()),
        ("eval/gold.yaml", GOLD.to_string()),
        (
            ".github/workflows/rgate.yml",
            WORKFLOW.replace("{{VERSION}}", env!("CARGO_PKG_VERSION")),
        ),
    ]
}

/// The top of the git work tree around the working directory, else the
/// working directory itself: the workflow must sit at the repository root.
pub fn repo_root() -> Result<PathBuf> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .stderr(std::process::Stdio::null())
        .output();
    if let Ok(o) = out {
        if o.status.success() {
            let top = String::from_utf8_lossy(&o.stdout).trim().to_string();
            if !top.is_empty() {
                return Ok(PathBuf::from(top));
            }
        }
    }
    std::env::current_dir().map_err(|e| {
        input_error(
            Path::new("."),
            None,
            format!("cannot read the working directory: {e}"),
        )
    })
}

pub fn run(global: &Global) -> Result<u8> {
    let root = repo_root()?;
    let files = files();
    let existing: Vec<String> = files
        .iter()
        .map(|(rel, _)| root.join(rel))
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if !existing.is_empty() {
        return Err(input_error_hint(
            &root,
            None,
            format!("not written, these exist already: {}", existing.join(", ")),
            "rgate init never overwrites; move them aside to start afresh, or edit them",
        ));
    }
    let mut written: Vec<PathBuf> = Vec::new();
    let mut made: Vec<PathBuf> = Vec::new();
    for (rel, text) in &files {
        let path = root.join(rel);
        if let Err(e) = create_new(&path, text.as_bytes(), &mut made) {
            // All or nothing: take back what this run wrote, files first,
            // then the directories it made, deepest first (each only if
            // empty: someone may have put a file there meanwhile).
            for p in &written {
                let _ = std::fs::remove_file(p);
            }
            for d in made.iter().rev() {
                let _ = std::fs::remove_dir(d);
            }
            return Err(e);
        }
        written.push(path);
    }
    if !global.quiet {
        for p in &written {
            eprintln!("wrote {}", p.display());
        }
        eprintln!(
            "next: put real queries in eval/gold.yaml (`rgate gold validate` checks it), make your retriever write \
eval/runs/search.jsonl, then `rgate baseline update --note \"first baseline\"` and commit"
        );
    }
    Ok(0)
}

/// Writes a file that must not exist yet (no race with another writer),
/// making its directories as needed; the ones it made are added to `made`,
/// outermost first, so a failed `init` can take them back.
fn create_new(path: &Path, bytes: &[u8], made: &mut Vec<PathBuf>) -> Result<()> {
    if let Some(dir) = path.parent() {
        let mut missing: Vec<&Path> = dir
            .ancestors()
            .take_while(|d| !d.as_os_str().is_empty() && std::fs::symlink_metadata(d).is_err())
            .collect();
        missing.reverse();
        for d in missing {
            match std::fs::create_dir(d) {
                Ok(()) => made.push(d.to_path_buf()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(input_error(d, None, format!("cannot create directory: {e}"))),
            }
        }
    }
    let r = (|| -> std::io::Result<()> {
        let mut f = OpenOptions::new().write(true).create_new(true).open(path)?;
        f.write_all(bytes)?;
        f.sync_all()
    })();
    r.map_err(|e| input_error(path, None, format!("cannot write: {e}")))
}
