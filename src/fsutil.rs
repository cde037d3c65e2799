//! File writes that never leave a half-written file behind: write a temp file
//! beside the target, fsync it, rename it over the target, fsync the
//! directory. A crash at any point leaves either the old file or the new one,
//! and at worst a `.NAME.PID.tmp` file that the next locked writer of that
//! file removes ([`remove_stale_temps`]).
//!
//! [`FileLock`] serializes the writers of one file across processes, and
//! [`Rewrite`] is the whole read-modify-write of a file people edit (a gold
//! set, a labeling sheet): locked, links resolved, mode kept.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
    write_atomic_mode(target, bytes, None)
}

/// [`write_atomic`], giving the new file `mode` (the replaced file's
/// permissions, so a 0600 file stays 0600).
fn write_atomic_mode(target: &Path, bytes: &[u8], mode: Option<fs::Permissions>) -> Result<()> {
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
        if let Some(mode) = mode {
            f.set_permissions(mode)?;
        }
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
    refuse_link(
        path,
        "is a symbolic link; rgate does not write the baseline store through links",
        "replace the link with a regular file (or remove it), or point `baselines:` at the real directory",
    )
}

/// [`refuse_symlink`] for any file rgate writes in place, with the
/// message and hint to give.
pub fn refuse_link(path: &Path, msg: &str, hint: &str) -> Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(input_error_hint(path, None, msg, hint.to_string())),
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

/// Removes the `.NAME.PID.tmp` files [`write_atomic`] left beside
/// `target` when its process was killed (`NAME` is the target's file name,
/// `PID` digits). Only for a caller holding the target's lock, when no
/// write of it can be under way.
pub fn remove_stale_temps(target: &Path) {
    let (Some(dir), Some(name)) = (target.parent(), target.file_name().and_then(|n| n.to_str())) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let stem = format!(".{name}.");
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(file) = file.to_str() else { continue };
        let stale = file
            .strip_prefix(stem.as_str())
            .and_then(|r| r.strip_suffix(".tmp"))
            .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()));
        if stale {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// What a [`FileLock`] is for, in the words its messages use.
pub struct LockUse<'a> {
    /// Shown in backticks: "the lock on `NAME`".
    pub name: &'a str,
    /// "waiting for another rgate (pid 7) to finish with WHAT".
    pub what: &'a str,
    /// When the holder took it (RFC 3339), written into the lock file.
    pub now: &'a str,
    /// What to do when the wait runs out.
    pub hint: &'a str,
    pub wait: Duration,
}

/// An OS advisory lock (`flock` on Unix, `LockFileEx` on Windows) on a lock
/// file. The kernel releases it when the process ends, however it ends, so
/// a killed writer never blocks the next. The file carries the holder's pid,
/// for the message of whoever waits.
///
/// The file is removed on release, so the directory holds only what belongs
/// in git. Removing a lock file races with a waiter that already opened it,
/// so after locking we check that the path still names the file we locked,
/// and start over when it does not.
#[derive(Debug)]
pub struct FileLock {
    path: PathBuf,
    file: File,
}

impl FileLock {
    /// Locks `path` (created if missing), waiting up to `u.wait`; `on_wait`
    /// hears once that we wait and for whom.
    pub fn acquire(path: &Path, u: &LockUse, on_wait: &mut dyn FnMut(&str)) -> Result<FileLock> {
        // A lock file is rgate's own and lives beside what it guards; a
        // link in its place would have rgate create or truncate its target.
        if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(input_error_hint(
                path,
                None,
                "is a symbolic link where rgate keeps a lock file; rgate does not write through it",
                "remove the link (rgate makes the lock file itself and removes it when done)",
            ));
        }
        let start = Instant::now();
        let mut told = false;
        loop {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
                .map_err(|e| input_error(path, None, format!("cannot open lock file: {e}")))?;
            match fs4::FileExt::try_lock(&file) {
                Ok(()) => {
                    if !is_same_file(&file, path) {
                        continue;
                    }
                    let mut lock = FileLock {
                        path: path.to_path_buf(),
                        file,
                    };
                    let _ = lock.file.set_len(0);
                    let _ = writeln!(lock.file, "pid {} since {}", std::process::id(), u.now);
                    return Ok(lock);
                }
                Err(fs4::TryLockError::WouldBlock) => {
                    if start.elapsed() >= u.wait {
                        return Err(input_error_hint(
                            path,
                            None,
                            format!(
                                "another rgate ({}) has held the lock on `{}` for longer than {} s",
                                holder(path),
                                u.name,
                                u.wait.as_secs_f64()
                            ),
                            u.hint,
                        ));
                    }
                    if !told {
                        told = true;
                        on_wait(&format!(
                            "waiting for another rgate ({}) to finish with {} (lock {}; up to {} s)",
                            holder(path),
                            u.what,
                            path.display(),
                            u.wait.as_secs_f64()
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(fs4::TryLockError::Error(e)) => {
                    return Err(input_error(path, None, format!("cannot lock: {e}")))
                }
            }
        }
    }

    /// The open lock file (for tests of the same-file check).
    pub fn file(&self) -> &File {
        &self.file
    }
}

/// Who holds a lock, as its file says (`pid N since TIME`).
fn holder(path: &Path) -> String {
    fs::read_to_string(path)
        .ok()
        .and_then(|s| s.lines().next().map(str::to_string))
        .filter(|s| s.starts_with("pid ") && s.len() < 80)
        .unwrap_or_else(|| "holder unknown".to_string())
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Removed while still held: a waiter that opened it sees it gone
        // (the inode check) and starts over on a fresh file.
        let _ = fs::remove_file(&self.path);
        let _ = fs4::FileExt::unlock(&self.file);
    }
}

/// How long a writer of a gold file or sheet waits for another: their
/// writes take milliseconds (a label session holds the lock only while it
/// saves one grade, `gold suggest` only while it merges its answers), so a
/// longer wait means a stuck process.
pub const REWRITE_WAIT: Duration = Duration::from_secs(60);

/// One read-modify-write of a file that people and several rgate commands
/// edit (a gold set, a labeling sheet), while it holds the file's lock:
/// everyone who rewrites the file re-reads it under the lock and merges
/// their change into what is there now, so no one's work is lost to a
/// write that started from an older copy.
///
/// A symbolic link is followed to the real file, which is what gets
/// replaced (a repository that keeps its gold set elsewhere and links it
/// keeps its link), and the replaced file's permissions are kept. The lock
/// file `.NAME.lock` sits beside the real file, so two links to one file
/// share one lock.
pub struct Rewrite {
    target: PathBuf,
    real: PathBuf,
    _lock: FileLock,
}

impl Rewrite {
    /// Locks `target`'s real file (which need not exist yet), and removes
    /// the temp files a killed writer left beside it.
    pub fn begin(target: &Path, now: &str, on_wait: &mut dyn FnMut(&str)) -> Result<Rewrite> {
        let real = real_path(target)?;
        let name = real
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(dir) = real.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir)
                .map_err(|e| input_error(dir, None, format!("cannot create directory: {e}")))?;
        }
        let shown = target.display().to_string();
        let lock = FileLock::acquire(
            &real.with_file_name(format!(".{name}.lock")),
            &LockUse {
                name: &shown,
                what: &format!("`{shown}`"),
                now,
                hint: "let it finish and retry; if no rgate is running, the lock file is stale: remove it",
                wait: REWRITE_WAIT,
            },
            on_wait,
        )?;
        remove_stale_temps(&real);
        Ok(Rewrite {
            target: target.to_path_buf(),
            real,
            _lock: lock,
        })
    }

    /// The file to read as it is now: the path as the user gave it (a link
    /// reads as its target), so messages name it.
    pub fn path(&self) -> &Path {
        &self.target
    }

    pub fn exists(&self) -> bool {
        self.real.exists()
    }

    /// Replaces the real file atomically, keeping its permissions.
    pub fn write(&self, bytes: &[u8]) -> Result<()> {
        let mode = fs::metadata(&self.real).ok().map(|m| m.permissions());
        write_atomic_mode(&self.real, bytes, mode)
    }
}

/// `target` with symbolic links resolved, for a file that may not exist
/// yet: an existing path is canonicalized; a link to a missing file is an
/// error (writing would create a file wherever it points, or fail
/// obscurely); a missing plain path is itself.
pub fn real_path(target: &Path) -> Result<PathBuf> {
    match fs::symlink_metadata(target) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(target).map_err(|e| {
            input_error_hint(
                target,
                None,
                format!("is a symbolic link rgate cannot follow: {e}"),
                "point the link at an existing file, or replace it with the file",
            )
        }),
        _ => Ok(target.to_path_buf()),
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

    #[cfg(unix)]
    #[test]
    fn a_rewrite_goes_through_a_link_keeps_the_mode_and_clears_leftovers() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real/gold.yaml");
        fs::create_dir_all(real.parent().unwrap()).unwrap();
        fs::write(&real, "old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o600)).unwrap();
        let leftover = dir.path().join("real/.gold.yaml.4242.tmp");
        let other = dir.path().join("real/.gold.yaml.x.tmp");
        fs::write(&leftover, "half").unwrap();
        fs::write(&other, "not ours").unwrap();
        let link = dir.path().join("gold.yaml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let w = Rewrite::begin(&link, "t", &mut |_: &str| {}).unwrap();
        assert!(!leftover.exists(), "a killed writer's temp file is removed");
        assert!(other.exists());
        assert!(dir.path().join("real/.gold.yaml.lock").exists());
        assert_eq!(fs::read_to_string(w.path()).unwrap(), "old");
        w.write(b"new").unwrap();
        drop(w);
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(!dir.path().join("real/.gold.yaml.lock").exists());
        // A link to nothing is refused, not replaced by a file.
        let dangling = dir.path().join("d.yaml");
        std::os::unix::fs::symlink(dir.path().join("missing/x.yaml"), &dangling).unwrap();
        let e = Rewrite::begin(&dangling, "t", &mut |_: &str| {})
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("d.yaml: is a symbolic link rgate cannot follow"),
            "{e}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_place_of_a_lock_file_is_refused_as_a_lock_file() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        fs::write(&victim, "keep").unwrap();
        let lock = d.path().join(".gold.yaml.lock");
        std::os::unix::fs::symlink(&victim, &lock).unwrap();
        let u = LockUse {
            name: "gold.yaml",
            what: "`gold.yaml`",
            now: "2026-01-01T00:00:00Z",
            hint: "",
            wait: Duration::from_secs(1),
        };
        let e = FileLock::acquire(&lock, &u, &mut |_| {}).unwrap_err().to_string();
        assert!(
            e.contains("is a symbolic link where rgate keeps a lock file"),
            "{e}"
        );
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
    }
}
