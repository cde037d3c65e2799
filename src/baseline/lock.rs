//! The lock that serializes writers of one retriever's files: the
//! generic [`FileLock`] on the retriever's lock file.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use crate::diag::input_error;
use crate::fsutil::{FileLock, LockUse};
use crate::origin::now_utc;

/// The [`FileLock`] on `.NAME.lock` beside the baseline: taken for every
/// read-modify-write of a retriever's baseline and history.
#[derive(Debug)]
pub struct Lock {
    pub(super) name: String,
    /// Held for its `Drop`, which releases the lock.
    #[cfg_attr(not(test), allow(dead_code))]
    inner: FileLock,
}

impl Lock {
    pub fn acquire(dir: &Path, name: &str, wait: Duration, on_wait: &mut dyn FnMut(&str)) -> Result<Lock> {
        std::fs::create_dir_all(dir)
            .map_err(|e| input_error(dir, None, format!("cannot create directory: {e}")))?;
        let path = dir.join(format!(".{name}.lock"));
        let inner = FileLock::acquire(
            &path,
            &LockUse {
                name,
                what: &format!("the baseline of `{name}`"),
                now: &now_utc(),
                hint: "let it finish and retry, or raise gate.lock_timeout_s in the config",
                wait,
            },
            on_wait,
        )?;
        Ok(Lock {
            name: name.to_string(),
            inner,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::fs::OpenOptions;

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
        assert!(crate::fsutil::is_same_file(l.inner.file(), &path));
    }
}
