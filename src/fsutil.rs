//! File writes that never leave a half-written file behind: write a temp file
//! beside the target, fsync it, rename it over the target, fsync the
//! directory. A crash at any point leaves either the old file or the new one.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::diag::input_error;

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
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
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
