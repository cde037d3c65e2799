//! The store: one retriever's baseline and history in a directory,
//! replaced as one step under its lock, and put back in order after a
//! killed rgate.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use serde_json::{json, Value};

use super::format::{corrupt, Baseline};
use super::history::HistoryEntry;
use super::lock::Lock;
use crate::diag::{input_error, input_error_hint};
use crate::fsutil::{refuse_symlink, remove_stale_temps, write_atomic};
use crate::input;

/// Where a retriever's files live.
#[derive(Debug, Clone)]
pub struct Store {
    pub dir: PathBuf,
}

impl Store {
    pub fn new(dir: impl Into<PathBuf>) -> Store {
        Store { dir: dir.into() }
    }

    pub fn baseline_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.json"))
    }

    pub fn history_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.history.jsonl"))
    }

    /// The stored baseline, `None` when there is none yet.
    pub fn load(&self, name: &str) -> Result<Option<Baseline>> {
        let path = self.baseline_path(name);
        let Some(bytes) = input::read_if_exists(&path, "baseline", input::BASELINE_LIMIT, BASELINE_HINT)?
        else {
            return Ok(None);
        };
        let text = utf8(&path, bytes)?;
        let b = Baseline::parse(&path, &text)?;
        if b.retriever != name {
            return Err(corrupt(
                &path,
                None,
                format!("it holds the baseline of `{}`, not of `{name}`", b.retriever),
            ));
        }
        Ok(Some(b))
    }

    /// Replaces the baseline and appends its history line as one step: a
    /// journal naming both is written first and removed last, so a kill at
    /// any point leaves the old baseline and history, or the new ones (the
    /// next locked operation completes the step, see [`Store::recover`]).
    pub fn record(&self, lock: &Lock, b: &Baseline, entry: &HistoryEntry) -> Result<PathBuf> {
        let name = lock.name.as_str();
        debug_assert_eq!(name, b.retriever);
        let path = self.baseline_path(name);
        let history = self.history_path(name);
        let journal = self.journal_path(name);
        for p in [&path, &history, &journal] {
            refuse_symlink(p)?;
        }
        let text = b.to_json_text();
        let line = history_line(entry);
        let j = json!({"baseline_sha256": sha256_hex(text.as_bytes()), "history": line});
        write_atomic(&journal, format!("{j}\n").as_bytes())?;
        write_atomic(&path, text.as_bytes())?;
        append_line(&history, &line)?;
        remove_quietly(&journal);
        Ok(path)
    }

    /// Appends one history line (`gate --record`) under the lock.
    pub fn append_history(&self, lock: &Lock, entry: &HistoryEntry) -> Result<()> {
        let path = self.history_path(&lock.name);
        refuse_symlink(&path)?;
        append_line(&path, &history_line(entry))
    }

    fn journal_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!(".{name}.journal"))
    }

    /// Puts a retriever's files back in order after a killed rgate; called
    /// with the lock held, before anything else reads or writes them.
    /// Leftover temp files are removed; a torn last history line is cut
    /// off; a journal whose baseline made it to disk gets its history line
    /// (unless the line is already there), and one whose baseline did not
    /// is dropped, the old baseline and history being intact.
    fn recover(&self, name: &str) -> Result<()> {
        // write_atomic's temp files: `.` + target name + `.PID.tmp`.
        remove_stale_temps(&self.baseline_path(name));
        remove_stale_temps(&self.journal_path(name));
        let history = self.history_path(name);
        refuse_symlink(&history)?;
        cut_torn_tail(&history)?;
        let journal = self.journal_path(name);
        let Some(bytes) =
            input::read_if_exists(&journal, "update journal", input::SMALL_LIMIT, JOURNAL_HINT)?
        else {
            return Ok(());
        };
        let text = String::from_utf8_lossy(&bytes);
        let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let (Some(sha), Some(line)) = (
            v.get("baseline_sha256").and_then(Value::as_str),
            v.get("history").and_then(Value::as_str),
        ) else {
            return Err(input_error_hint(
                &journal,
                None,
                "unreadable update journal (rgate writes it whole, so it was edited)",
                "remove it; check the baseline and its history with `git diff`",
            ));
        };
        let on_disk = input::read_if_exists(
            &self.baseline_path(name),
            "baseline",
            input::BASELINE_LIMIT,
            BASELINE_HINT,
        )?;
        if on_disk.as_deref().map(sha256_hex).as_deref() == Some(sha) {
            let existing = input::read_if_exists(&history, "history", input::HISTORY_LIMIT, HISTORY_HINT)?
                .unwrap_or_default();
            if String::from_utf8_lossy(&existing).lines().last() != Some(line) {
                append_line(&history, line)?;
            }
        }
        remove_quietly(&journal);
        Ok(())
    }

    pub fn history(&self, name: &str) -> Result<Vec<HistoryEntry>> {
        let path = self.history_path(name);
        let Some(bytes) = input::read_if_exists(&path, "history", input::HISTORY_LIMIT, HISTORY_HINT)? else {
            return Ok(Vec::new());
        };
        let text = utf8(&path, bytes)?;
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(line).map_err(|e| {
                input_error_hint(
                    &path,
                    Some(i + 1),
                    format!("corrupt history line: {e}"),
                    "history lines are JSON objects; fix or remove the line (git shows what changed)",
                )
            })?;
            out.push(HistoryEntry::from_json(&v).ok_or_else(|| {
                input_error_hint(
                    &path,
                    Some(i + 1),
                    "history line lacks `time`, `kind` or `aggregates`",
                    "fix or remove the line",
                )
            })?);
        }
        Ok(out)
    }

    /// Serializes read-modify-write of one retriever's files, waiting up to
    /// `wait` for another rgate to finish; `on_wait` hears once that we wait
    /// and for whom.
    pub fn lock(&self, name: &str, wait: Duration, on_wait: &mut dyn FnMut(&str)) -> Result<Lock> {
        self.refuse_linked_dir()?;
        let lock = Lock::acquire(&self.dir, name, wait, on_wait)?;
        self.recover(name)?;
        Ok(lock)
    }
}

impl Store {
    /// The store's directory itself must not be a symbolic link either: its
    /// lock, baselines, journal and history would be written wherever the
    /// link points (a link committed to the repository could aim it at any
    /// directory the job can write). Checked before the lock, the first
    /// thing any write creates; reading through a link stays allowed.
    fn refuse_linked_dir(&self) -> Result<()> {
        match std::fs::symlink_metadata(&self.dir) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&self.dir)
                    .map(|t| format!(" (to {})", t.display()))
                    .unwrap_or_default();
                Err(input_error_hint(
                    &self.dir,
                    None,
                    format!(
                        "the baselines directory is a symbolic link{target}; rgate does not write the baseline store through links"
                    ),
                    "make it a real directory (move the files in, remove the link), or point `baselines:` in the config at the real directory",
                ))
            }
            _ => Ok(()),
        }
    }
}

/// One history line, newline excluded.
fn history_line(entry: &HistoryEntry) -> String {
    serde_json::to_string(&entry.to_json()).unwrap_or_default()
}

/// Appends `line` and a newline with a single `write` on an append-mode
/// file, then syncs it.
fn append_line(path: &Path, line: &str) -> Result<()> {
    let r = (|| -> std::io::Result<()> {
        let mut f = OpenOptions::new().create(true).append(true).open(path)?;
        f.write_all(format!("{line}\n").as_bytes())?;
        f.sync_all()
    })();
    r.map_err(|e| input_error(path, None, format!("cannot append history: {e}")))
}

const BASELINE_HINT: &str = "check the baselines directory; `rgate baseline update` writes a baseline";
const HISTORY_HINT: &str = "check the baselines directory; rgate appends one line per recorded result";
const JOURNAL_HINT: &str = "rgate writes it for the length of one update; remove it if no rgate is running";

/// A store file's text; rgate writes UTF-8 only, so anything else is a
/// damaged or foreign file, named.
fn utf8(path: &Path, bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        corrupt(
            path,
            Some(crate::diag::line_of(e.as_bytes(), e.utf8_error().valid_up_to())),
            "not valid UTF-8".to_string(),
        )
    })
}

/// Cuts a history file back to its last complete line: an append killed
/// mid-write is the only way to get a line without its newline.
fn cut_torn_tail(path: &Path) -> Result<()> {
    let Some(bytes) = input::read_if_exists(path, "history", input::HISTORY_LIMIT, HISTORY_HINT)? else {
        return Ok(());
    };
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(());
    }
    let keep = memchr::memrchr(b'\n', &bytes).map_or(0, |p| p + 1);
    let r = OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|f| f.set_len(keep as u64).and_then(|_| f.sync_all()));
    r.map_err(|e| input_error(path, None, format!("cannot repair the torn last line: {e}")))
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    format!("{:x}", Sha256::digest(bytes))
}

fn remove_quietly(path: &Path) {
    let _ = std::fs::remove_file(path);
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::baseline::format::tests::sample;

    #[test]
    fn a_file_holding_another_retrievers_baseline_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::new(d.path());
        std::fs::write(s.baseline_path("bm25"), sample().to_json_text()).unwrap();
        let e = s.load("bm25").unwrap_err().to_string();
        assert!(
            e.contains("bm25.json: corrupt baseline: it holds the baseline of `hybrid`, not of `bm25`"),
            "{e}"
        );
        std::fs::write(s.baseline_path("hybrid"), sample().to_json_text()).unwrap();
        assert_eq!(s.load("hybrid").unwrap(), Some(sample()));
    }

    /// No history yet is an empty history; a history that cannot be read
    /// (here: a directory where the file should be) is an error naming it.
    #[test]
    fn a_missing_history_is_empty_and_an_unreadable_one_an_error() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::new(d.path());
        assert!(s.history("bm25").unwrap().is_empty());
        std::fs::create_dir(s.history_path("bm25")).unwrap();
        let e = s.history("bm25").unwrap_err().to_string();
        assert!(
            e.contains("bm25.history.jsonl: not a regular file but a directory"),
            "{e}"
        );
    }

    fn no_wait() -> impl FnMut(&str) {
        |_: &str| {}
    }

    fn entry(note: &str) -> HistoryEntry {
        HistoryEntry {
            time: "2026-11-30T00:00:00Z".into(),
            commit: None,
            kind: "baseline-update".into(),
            note: Some(note.into()),
            gold_fingerprint: None,
            verdict: None,
            run: None,
            aggregates: BTreeMap::new(),
        }
    }

    fn lock(s: &Store, name: &str) -> Lock {
        s.lock(name, Duration::ZERO, &mut no_wait()).unwrap()
    }

    #[test]
    fn record_writes_baseline_and_history_and_no_journal() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::new(d.path());
        let b = sample();
        let l = lock(&s, "hybrid");
        s.record(&l, &b, &entry("one")).unwrap();
        // Hard-link the file: an atomic replace leaves the old inode as it
        // was, an in-place write would change it under the link.
        let old = d.path().join("old.json");
        std::fs::hard_link(s.baseline_path("hybrid"), &old).unwrap();
        let mut b2 = b.clone();
        b2.note = Some("two".into());
        s.record(&l, &b2, &entry("two")).unwrap();
        drop(l);
        assert_eq!(std::fs::read_to_string(&old).unwrap(), b.to_json_text());
        assert_eq!(s.load("hybrid").unwrap(), Some(b2));
        let notes: Vec<_> = s
            .history("hybrid")
            .unwrap()
            .into_iter()
            .map(|e| e.note.unwrap())
            .collect();
        assert_eq!(notes, ["one", "two"]);
        let mut names: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["hybrid.history.jsonl", "hybrid.json", "old.json"]);
    }

    /// The state a kill leaves between the journal and its removal, and
    /// what the next locked operation makes of it.
    #[test]
    fn the_next_lock_completes_or_drops_an_interrupted_record() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::new(d.path());
        let b = sample();
        let l = lock(&s, "hybrid");
        s.record(&l, &b, &entry("one")).unwrap();
        drop(l);
        let line = |note: &str| serde_json::to_string(&entry(note).to_json()).unwrap();
        let journal = |text: &str, note: &str| {
            let j = json!({"baseline_sha256": sha256_hex(text.as_bytes()), "history": line(note)});
            std::fs::write(d.path().join(".hybrid.journal"), format!("{j}\n")).unwrap();
        };
        let notes = || -> Vec<String> {
            s.history("hybrid")
                .unwrap()
                .into_iter()
                .map(|e| e.note.unwrap())
                .collect()
        };

        // Killed after the rename, before the history append.
        let mut b2 = b.clone();
        b2.note = Some("two".into());
        std::fs::write(s.baseline_path("hybrid"), b2.to_json_text()).unwrap();
        journal(&b2.to_json_text(), "two");
        drop(lock(&s, "hybrid"));
        assert_eq!(notes(), ["one", "two"]);
        assert!(!d.path().join(".hybrid.journal").exists());

        // Killed after the append, before the journal's removal: no second line.
        journal(&b2.to_json_text(), "two");
        drop(lock(&s, "hybrid"));
        assert_eq!(notes(), ["one", "two"]);

        // Killed before the rename: the old baseline stands, no line added.
        let mut b3 = b.clone();
        b3.note = Some("three".into());
        journal(&b3.to_json_text(), "three");
        std::fs::write(d.path().join(".hybrid.json.4242.tmp"), "{half").unwrap();
        drop(lock(&s, "hybrid"));
        assert_eq!(notes(), ["one", "two"]);
        assert_eq!(s.load("hybrid").unwrap(), Some(b2));
        assert!(!d.path().join(".hybrid.json.4242.tmp").exists());
    }

    #[test]
    fn stale_temps_and_torn_lines_are_cleaned_only_for_their_retriever() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::new(d.path());
        let touch = |n: &str| std::fs::write(d.path().join(n), "x").unwrap();
        for n in [
            ".hybrid.json.17.tmp",
            "..hybrid.journal.9.tmp",
            ".hybrid.x.json.17.tmp",
            ".hybrid.json.tmp",
            "keep.tmp",
        ] {
            touch(n);
        }
        let h = s.history_path("hybrid");
        std::fs::write(&h, "{\"a\":1}\n{\"tor").unwrap();
        drop(lock(&s, "hybrid"));
        let mut names: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                ".hybrid.json.tmp",
                ".hybrid.x.json.17.tmp",
                "hybrid.history.jsonl",
                "keep.tmp"
            ]
        );
        assert_eq!(std::fs::read_to_string(&h).unwrap(), "{\"a\":1}\n");
    }

    #[cfg(unix)]
    #[test]
    fn the_store_never_writes_through_a_symlink() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::new(d.path().join("store"));
        std::fs::create_dir_all(&s.dir).unwrap();
        let outside = d.path().join("outside.txt");
        std::fs::write(&outside, "mine\n").unwrap();
        std::os::unix::fs::symlink(&outside, s.history_path("hybrid")).unwrap();
        let e = s
            .lock("hybrid", Duration::ZERO, &mut no_wait())
            .unwrap_err()
            .to_string();
        assert!(e.contains("hybrid.history.jsonl: is a symbolic link; rgate does not write the baseline store through links"), "{e}");
        assert!(e.contains("\nhint: "), "{e}");
        std::fs::remove_file(s.history_path("hybrid")).unwrap();
        std::os::unix::fs::symlink(&outside, s.baseline_path("hybrid")).unwrap();
        let l = lock(&s, "hybrid");
        let e = s.record(&l, &sample(), &entry("x")).unwrap_err().to_string();
        assert!(e.contains("hybrid.json: is a symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "mine\n");
        assert!(!s.history_path("hybrid").exists());
    }

    #[test]
    fn history_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::new(d.path());
        let b = sample();
        let e = HistoryEntry {
            time: "t".into(),
            commit: None,
            kind: "gate".into(),
            note: Some("n".into()),
            gold_fingerprint: Some("f".into()),
            verdict: Some("pass".into()),
            run: Some("runs/hybrid.jsonl".into()),
            aggregates: HistoryEntry::aggregates_of(&b.metrics, &b.aggregates),
        };
        let l = lock(&s, "hybrid");
        s.append_history(&l, &e).unwrap();
        s.append_history(&l, &e).unwrap();
        assert_eq!(s.history("hybrid").unwrap(), vec![e.clone(), e]);
    }
}
