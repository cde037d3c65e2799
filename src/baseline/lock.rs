//! The lock that serializes writers of one retriever's files.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::diag::{input_error, input_error_hint};
use crate::fsutil::refuse_symlink;
use crate::origin::now_utc;

/// An OS advisory lock (`flock` on Unix, `LockFileEx` on Windows) on
/// `.NAME.lock` beside the baseline. The kernel releases it when the
/// process ends, however it ends, so a killed update never blocks the next.
/// The file carries the holder's pid, for the message of whoever waits.
///
/// The file is removed on release so the store holds only what belongs in
/// git. Removing a lock file races with a waiter that already opened it, so
/// after locking we check that the path still names the file we locked, and
/// start over when it does not.
#[derive(Debug)]
pub struct Lock {
    pub(super) name: String,
    path: PathBuf,
    file: File,
}

impl Lock {
    pub fn acquire(dir: &Path, name: &str, wait: Duration, on_wait: &mut dyn FnMut(&str)) -> Result<Lock> {
        std::fs::create_dir_all(dir)
            .map_err(|e| input_error(dir, None, format!("cannot create directory: {e}")))?;
        let path = dir.join(format!(".{name}.lock"));
        refuse_symlink(&path)?;
        let start = Instant::now();
        let mut told = false;
        loop {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(|e| input_error(&path, None, format!("cannot open lock file: {e}")))?;
            match fs4::FileExt::try_lock(&file) {
                Ok(()) => {
                    if !crate::fsutil::is_same_file(&file, &path) {
                        continue;
                    }
                    let mut lock = Lock {
                        name: name.to_string(),
                        path,
                        file,
                    };
                    let _ = lock.file.set_len(0);
                    let _ = writeln!(lock.file, "pid {} since {}", std::process::id(), now_utc());
                    return Ok(lock);
                }
                Err(fs4::TryLockError::WouldBlock) => {
                    if start.elapsed() >= wait {
                        return Err(input_error_hint(
                            &path,
                            None,
                            format!(
                                "another rgate ({}) has held the lock on `{name}` for longer than {} s",
                                holder(&path),
                                wait.as_secs_f64()
                            ),
                            "let it finish and retry, or raise gate.lock_timeout_s in the config",
                        ));
                    }
                    if !told {
                        told = true;
                        on_wait(&format!(
                            "waiting for another rgate ({}) to finish with the baseline of `{name}` (lock {}; up to {} s)",
                            holder(&path),
                            path.display(),
                            wait.as_secs_f64()
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(fs4::TryLockError::Error(e)) => {
                    return Err(input_error(&path, None, format!("cannot lock: {e}")))
                }
            }
        }
    }
}

/// Who holds a lock, as its file says (`pid N since TIME`).
fn holder(path: &Path) -> String {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| s.lines().next().map(str::to_string))
        .filter(|s| s.starts_with("pid ") && s.len() < 80)
        .unwrap_or_else(|| "holder unknown".to_string())
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Removed while still held: a waiter that opened it sees it gone
        // (the inode check) and starts over on a fresh file.
        let _ = std::fs::remove_file(&self.path);
        let _ = fs4::FileExt::unlock(&self.file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_wait() -> impl FnMut(&str) {
        |_: &str| {}
    }

    #[test]
    fn lock_is_exclusive_says_who_holds_it_and_is_released() {
        let d = tempfile::tempdir().unwrap();
        let a = Lock::acquire(d.path(), "x", Duration::ZERO, &mut no_wait()).unwrap();
        let held = std::fs::read_to_string(d.path().join(".x.lock")).unwrap();
        assert!(
            held.starts_with(&format!("pid {} since ", std::process::id())),
            "{held}"
        );
        let mut told = Vec::new();
        let e = Lock::acquire(d.path(), "x", Duration::from_millis(200), &mut |m: &str| {
            told.push(m.to_string())
        })
        .unwrap_err()
        .to_string();
        assert_eq!(told.len(), 1, "{told:?}");
        assert!(
            told[0].starts_with(&format!(
                "waiting for another rgate (pid {} since ",
                std::process::id()
            )),
            "{told:?}"
        );
        assert!(
            told[0].contains(") to finish with the baseline of `x` (lock "),
            "{told:?}"
        );
        assert!(told[0].ends_with(".x.lock; up to 0.2 s)"), "{told:?}");
        assert!(
            e.contains("has held the lock on `x` for longer than 0.2 s"),
            "{e}"
        );
        assert!(
            e.contains("hint: let it finish and retry, or raise gate.lock_timeout_s"),
            "{e}"
        );
        // Another retriever's lock is independent.
        let _y = Lock::acquire(d.path(), "y", Duration::ZERO, &mut no_wait()).unwrap();
        drop(a);
        assert!(
            !d.path().join(".x.lock").exists(),
            "the lock file is removed on release"
        );
        Lock::acquire(d.path(), "x", Duration::ZERO, &mut no_wait()).unwrap();
    }

    #[test]
    fn a_waiter_on_a_removed_lock_file_starts_over() {
        // The holder opened the file, a second rgate opens the same file and
        // waits; the holder removes it and releases. The waiter must not
        // keep a lock on the orphaned file while a third rgate locks a new
        // one: after locking it checks the path still names its file.
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join(".x.lock");
        let orphan = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(!crate::fsutil::is_same_file(&orphan, &path));
        let l = Lock::acquire(d.path(), "x", Duration::ZERO, &mut no_wait()).unwrap();
        assert!(crate::fsutil::is_same_file(&l.file, &path));
    }
}
