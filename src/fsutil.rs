//! File writes that never leave a half-written file behind: write a temp file
//! beside the target, fsync it, rename it over the target, fsync the
//! directory. A crash at any point leaves either the old file or the new one,
//! and at worst a `.NAME.PID.tmp` file that the baseline store removes on its
//! next locked operation.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::diag::{input_error, input_error_hint};

fn temp_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Replaces `target` with `bytes` atomically.
pub fn write_atomic(target: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)
            .map_err(|e| input_error(dir, None, format!("cannot create directory: {e}")))?;
    }
    let tmp = temp_path(target);
    let result = (|| -> std::io::Result<()> {
        // A temp file of our pid can only be a leftover of a killed process
        // that had the same pid: no live process shares it.
        let mut f = match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                fs::remove_file(&tmp)?;
                OpenOptions::new().write(true).create_new(true).open(&tmp)?
            }
            other => other?,
        };
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, target)?;
        if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
            // Makes the rename itself durable; not possible on every platform.
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(input_error(target, None, format!("cannot write: {e}")));
    }
    Ok(())
}

/// Refuses to write through a symbolic link: the store's files are written
/// in place of what the path names, never to wherever a link points (a link
/// committed to the repository could otherwise make rgate append to any file
/// the job can write).
pub fn refuse_symlink(path: &Path) -> Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(input_error_hint(
            path,
            None,
            "is a symbolic link; rgate does not write the baseline store through links",
            "replace the link with a regular file (or remove it), or point `baselines:` at the real directory",
        )),
        _ => Ok(()),
    }
}

/// Whether `path` still names the file `f` is open on (it may have been
/// removed or replaced since it was opened).
pub fn is_same_file(f: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (f.metadata(), fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        // Windows refuses to remove a file another process holds open, so
        // the race this guards against cannot happen there.
        let _ = (f, path);
        true
    }
}

/// Writes a report to `path`, or to stdout for `None` and `-`.
pub fn emit(path: Option<&Path>, text: &str) -> Result<()> {
    match path {
        Some(p) if p.as_os_str() != "-" => write_atomic(p, text.as_bytes()),
        _ => {
            let mut out = std::io::stdout().lock();
            // A closed pipe (`rgate ... | head`) is not an error worth a
            // message; anything else is.
            match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(anyhow::anyhow!("cannot write to stdout: {e}"))
                }
                _ => Ok(()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/b.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1);
    }
}
