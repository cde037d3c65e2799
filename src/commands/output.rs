//! `--output` never replaces what the same command reads or writes: `eval
//! --output gold.yaml` wrote the report over the gold set, `gate --output
//! baselines/bm25.json` over a baseline (which the next gate called
//! corrupt). Each command lists its inputs and other outputs in a
//! [`Guard`], checked before any work starts, so a refusal writes nothing.
//!
//! Files are compared by identity, not by spelling: `./gold.yaml`,
//! `eval/../gold.yaml`, a symbolic link to it and a hard link of it are all
//! the gold set. An existing file is known by its device and inode (the
//! file itself, whatever names it has); a path that does not exist yet (a
//! gold set `gold import` is about to create, a baseline not yet recorded)
//! by its directory's canonical path and its name.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::diag::input_error_hint;

/// What a command reads and writes besides its report.
#[derive(Debug, Default)]
pub struct Guard {
    files: Vec<(PathBuf, String)>,
    dirs: Vec<(PathBuf, String)>,
}

impl Guard {
    /// A file the command reads or writes, with what it is to the command
    /// ("the gold set", "the run of `bm25`").
    pub fn file(&mut self, path: impl AsRef<Path>, role: impl Into<String>) -> &mut Guard {
        self.files.push((path.as_ref().to_path_buf(), role.into()));
        self
    }

    pub fn maybe(&mut self, path: Option<impl AsRef<Path>>, role: impl Into<String>) -> &mut Guard {
        if let Some(p) = path {
            self.file(p, role);
        }
        self
    }

    /// A directory no report may be written into (the baseline store: any
    /// `NAME.json` there is a baseline, or will be).
    pub fn dir(&mut self, path: impl AsRef<Path>, role: impl Into<String>) -> &mut Guard {
        self.dirs.push((path.as_ref().to_path_buf(), role.into()));
        self
    }

    /// Refuses (exit 2) an `--output` that is one of the files, or lies in
    /// one of the directories. `None` and `-` are stdout.
    pub fn check(&self, output: Option<&Path>) -> Result<()> {
        self.check_as(output, "--output", "the report")
    }

    /// [`Guard::check`] for another option that names a file to write
    /// (`--plot`), and what it writes.
    pub fn check_as(&self, output: Option<&Path>, flag: &str, what: &str) -> Result<()> {
        let Some(out) = output.filter(|p| p.as_os_str() != "-") else {
            return Ok(());
        };
        let Some(id) = identity(out) else {
            return Ok(());
        };
        let hint = if flag == "--output" {
            "write the report to another file, or leave --output off to print it".to_string()
        } else {
            format!("write {what} to another file")
        };
        for (path, role) in &self.files {
            if identity(path).as_ref() == Some(&id) {
                let same = if path == out {
                    String::new()
                } else {
                    format!(" ({})", path.display())
                };
                return Err(input_error_hint(
                    out,
                    None,
                    format!(
                        "{flag} names {role} of this command{same}; {what} would replace it; nothing written"
                    ),
                    hint,
                ));
            }
        }
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let parent_id = identity(parent);
        for (dir, role) in &self.dirs {
            let dir_id = identity(dir);
            if dir_id.is_none() {
                continue;
            }
            if dir_id == parent_id || dir_id.as_ref() == Some(&id) {
                return Err(input_error_hint(
                    out,
                    None,
                    format!(
                        "{flag} is inside {role} ({}), which holds only what rgate keeps there; nothing written",
                        dir.display()
                    ),
                    hint,
                ));
            }
        }
        Ok(())
    }
}

/// What makes two paths the same file; `None` when it cannot be told (a
/// directory that cannot be read), and then nothing is refused.
#[derive(Debug, PartialEq, Eq)]
enum Identity {
    #[cfg(unix)]
    Inode(u64, u64),
    #[cfg(not(unix))]
    Canonical(PathBuf),
    /// Not there yet: where it would be created.
    Missing(PathBuf),
}

fn identity(path: &Path) -> Option<Identity> {
    match std::fs::metadata(path) {
        Ok(m) => existing(path, &m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // The nearest directory that exists, canonical, and the rest of
            // the path as written (`--report-dir out` may not exist yet).
            let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
            let mut at = path;
            loop {
                rest.push(at.file_name()?);
                at = match at.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                if let Ok(base) = std::fs::canonicalize(at) {
                    return Some(Identity::Missing(rest.iter().rev().fold(base, |b, n| b.join(n))));
                }
                if at == Path::new(".") || at.parent().is_none() {
                    return None;
                }
            }
        }
        Err(_) => None,
    }
}

#[cfg(unix)]
fn existing(_path: &Path, m: &std::fs::Metadata) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    Some(Identity::Inode(m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn existing(path: &Path, _m: &std::fs::Metadata) -> Option<Identity> {
    std::fs::canonicalize(path).ok().map(Identity::Canonical)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(g: &Guard, out: &Path) -> String {
        g.check(Some(out)).unwrap_err().to_string()
    }

    #[test]
    fn the_same_file_under_any_name_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let gold = d.path().join("gold.yaml");
        std::fs::write(&gold, "x").unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        let mut g = Guard::default();
        g.file(&gold, "the gold set");
        let e = refused(&g, &d.path().join("sub/../gold.yaml"));
        assert!(e.contains("--output names the gold set of this command ("), "{e}");
        assert!(e.contains("nothing written"), "{e}");
        #[cfg(unix)]
        {
            let hard = d.path().join("hard.yaml");
            std::fs::hard_link(&gold, &hard).unwrap();
            refused(&g, &hard);
            let soft = d.path().join("soft.yaml");
            std::os::unix::fs::symlink(&gold, &soft).unwrap();
            refused(&g, &soft);
        }
        // Another file, and stdout, are fine.
        g.check(Some(&d.path().join("report.md"))).unwrap();
        g.check(Some(Path::new("-"))).unwrap();
        g.check(None).unwrap();
    }

    #[test]
    fn a_file_not_there_yet_is_known_by_where_it_would_be() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        let mut g = Guard::default();
        g.file(d.path().join("new.yaml"), "the gold set it writes");
        refused(&g, &d.path().join("sub/../new.yaml"));
        g.check(Some(&d.path().join("sub/new.yaml"))).unwrap();
    }

    #[test]
    fn nothing_goes_into_a_guarded_directory() {
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join("baselines");
        std::fs::create_dir(&store).unwrap();
        let mut g = Guard::default();
        g.dir(&store, "the baselines directory");
        let e = refused(&g, &store.join("bm25.json"));
        assert!(e.contains("--output is inside the baselines directory"), "{e}");
        refused(&g, &store);
        g.check(Some(&d.path().join("report.md"))).unwrap();
    }
}
