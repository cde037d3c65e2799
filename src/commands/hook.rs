//! `rgate hook install`: a git pre-push hook that runs the gate, so the
//! verdict CI would give is known before the push.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::cli::{Global, HookCommand};
use crate::diag::{input_error, input_error_hint, usage_error};

/// The first lines of every hook rgate writes: how it knows a hook is its
/// own (and may be rewritten) rather than someone else's.
pub const MARKER: &str = "# rgate pre-push hook";

pub const PRE_PUSH: &str = "#!/bin/sh
# rgate pre-push hook, written by `rgate hook install`. It runs the
# retrieval-quality gate before a push; `git push --no-verify` skips it once,
# deleting this file removes it.
if ! command -v rgate >/dev/null 2>&1; then
  echo \"rgate pre-push: rgate is not on PATH (install it, or push with --no-verify)\" >&2
  exit 1
fi
exec rgate gate --quiet
";

pub fn run(cmd: &HookCommand, global: &Global) -> Result<u8> {
    match cmd {
        HookCommand::Install { force } => install(*force, global),
    }
}

/// Where git looks for hooks: `git rev-parse --git-path hooks` honours
/// `core.hooksPath` and linked work trees.
fn hooks_dir() -> Result<PathBuf> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--git-path", "hooks"])
        .output()
        .map_err(|e| {
            usage_error(
                format!("cannot run git: {e}"),
                "install git, or run this inside a git repository",
            )
        })?;
    if !out.status.success() {
        return Err(usage_error(
            "not inside a git repository",
            "run `rgate hook install` from the repository whose pushes it should gate",
        ));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// Writes the hook when there is none, or when the one there is exactly
/// what rgate writes. Any other hook is refused without `--force`: one rgate
/// did not write belongs to someone else, and one it wrote but that differs
/// now was edited (replacing it silently would throw the edits away). With
/// `--force` the old hook is kept as `pre-push.old`.
fn install(force: bool, global: &Global) -> Result<u8> {
    let dir = hooks_dir()?;
    let path = dir.join("pre-push");
    let existing = crate::input::read_if_exists(
        &path,
        "git hook",
        crate::input::SMALL_LIMIT,
        "replace it with a regular file, or remove it",
    )?;
    let mut kept = None;
    if let Some(existing) = existing {
        if existing == PRE_PUSH.as_bytes() {
            if !global.quiet {
                eprintln!("{} is installed already", path.display());
            }
            return Ok(0);
        }
        let ours = String::from_utf8_lossy(&existing).contains(MARKER);
        if !force {
            let (what, hint) = if ours {
                (
                    "the rgate pre-push hook there was edited since `rgate hook install` wrote it; left unchanged",
                    "keep it as it is, or run `rgate hook install --force` to replace it with rgate's (the edited one is kept as pre-push.old)",
                )
            } else {
                (
                    "a pre-push hook exists that rgate did not write; left unchanged",
                    "add `rgate gate --quiet` to it yourself, or run `rgate hook install --force` to replace it (the old one is kept as pre-push.old)",
                )
            };
            return Err(input_error_hint(&path, None, what, hint));
        }
        let old = dir.join("pre-push.old");
        crate::fsutil::write_atomic(&old, &existing)?;
        kept = Some(old);
    }
    crate::fsutil::write_atomic(&path, PRE_PUSH.as_bytes())?;
    make_executable(&path)?;
    if !global.quiet {
        eprintln!("wrote {}: `git push` now runs `rgate gate`", path.display());
        if let Some(old) = kept {
            eprintln!("the hook it replaced is kept as {}", old.display());
        }
    }
    Ok(0)
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| input_error(path, None, format!("cannot make executable: {e}")))
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> Result<()> {
    Ok(())
}
