//! The judge's cache: one JSONL line per answered (prompt, pair), so a
//! repeated run sends nothing for what it already paid for, and a killed
//! run loses at most the answer in flight.
//!
//! The key is the sha256 of everything that decides the answer: provider,
//! base URL, model, the prompt's hash, the query text and the passage text.
//! A cache keyed without the model serves one model's grades as another's
//! (opensearch-project/search-relevance#525); without the URL, a local
//! test server's grades as the real endpoint's. Keyed on texts, not ids, a
//! pair re-pooled under a new chunk id is still a hit, and an edited
//! passage is a miss.
//!
//! Written by appending one whole line at a time under an OS lock on the
//! file itself, so two judges sharing a cache interleave whole lines; a
//! line torn by a kill is ignored on reading (and fenced off by a newline
//! before the next append), never fatal: the cache only saves requests.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::diag::{input_error, input_error_hint};

const HINT: &str =
    "give the cache as the path of a regular file with --cache, or remove what is at this path";

/// Refuses a symbolic link at the cache's path.
fn refuse_link(path: &Path) -> Result<()> {
    crate::fsutil::refuse_link(
        path,
        "is a symbolic link; rgate does not read or append to the judge cache through links",
        "replace the link with a regular file (or remove it), or give another path with --cache",
    )
}

/// What decides an answer; its [`Key::digest`] is the cache key.
pub struct Key<'a> {
    pub provider: &'a str,
    pub base_url: &'a str,
    pub model: &'a str,
    pub prompt_hash: &'a str,
    pub query: &'a str,
    pub passage: &'a str,
}

impl Key<'_> {
    /// sha256 over the parts, each length-prefixed so no two different
    /// tuples hash the same bytes.
    pub fn digest(&self) -> String {
        let mut h = Sha256::new();
        for p in [
            self.provider,
            self.base_url,
            self.model,
            self.prompt_hash,
            self.query,
            self.passage,
        ] {
            h.update((p.len() as u64).to_le_bytes());
            h.update(p.as_bytes());
        }
        super::super::hex(&h.finalize())
    }
}

/// One cached answer. No key, no prompt text, no passage: only the grade
/// and what says where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub key: String,
    pub grade: i32,
    pub provider: String,
    pub model: String,
    pub prompt: String,
    pub at: String,
}

/// The cache file's answers by key.
pub struct Cache {
    path: PathBuf,
    pub entries: HashMap<String, Entry>,
    /// Lines that could not be read (a torn last line, a hand edit).
    pub unreadable: usize,
}

impl Cache {
    /// Reads `path` (none yet is an empty cache) as every input is read
    /// ([`crate::input::read`]): a regular file of at most
    /// [`crate::input::JUDGE_CACHE_LIMIT`], never a FIFO (which would
    /// block), a device (`/dev/zero` never ends) or a symbolic link (the
    /// cache is appended to: a link committed at the default path would
    /// make every run append to whatever file it points at).
    pub fn open(path: &Path) -> Result<Cache> {
        let mut cache = Cache {
            path: path.to_path_buf(),
            entries: HashMap::new(),
            unreadable: 0,
        };
        refuse_link(path)?;
        let Some(bytes) =
            crate::input::read_if_exists(path, "judge cache", crate::input::JUDGE_CACHE_LIMIT, HINT)?
        else {
            return Ok(cache);
        };
        for line in bytes.split(|&b| b == b'\n') {
            let line = line.trim_ascii();
            if line.is_empty() {
                continue;
            }
            match serde_json::from_slice::<Entry>(line) {
                Ok(e) if (0..=3).contains(&e.grade) => {
                    cache.entries.insert(e.key.clone(), e);
                }
                _ => cache.unreadable += 1,
            }
        }
        Ok(cache)
    }

    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key)
    }

    /// Appends one answer as one line, under an exclusive lock on the file.
    pub fn append(&mut self, e: Entry) -> Result<()> {
        let err = |m: String| input_error(&self.path, None, m);
        refuse_link(&self.path)?;
        let mut opts = OpenOptions::new();
        opts.read(true).append(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // No link followed, no FIFO waited on, even if the path was
            // swapped since it was read; the type is checked just below.
            opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        }
        let mut f = opts.open(&self.path).map_err(|e| {
            // A link put there since the check: O_NOFOLLOW's ELOOP.
            #[cfg(unix)]
            if e.raw_os_error() == Some(libc::ELOOP) {
                if let Err(link) = refuse_link(&self.path) {
                    return link;
                }
            }
            err(format!("cannot open the judge cache: {e}"))
        })?;
        if !f.metadata().is_ok_and(|m| m.is_file()) {
            return Err(input_error_hint(
                &self.path,
                None,
                "is not a regular file; rgate appends the judge cache only to a regular file",
                HINT,
            ));
        }
        fs4::FileExt::lock(&f).map_err(|e| err(format!("cannot lock the judge cache: {e}")))?;
        let mut line = serde_json::to_string(&e)?;
        line.push('\n');
        // A line torn by a kill has no newline: start ours on a line of its
        // own, or both would be lost.
        let len = f.seek(SeekFrom::End(0)).unwrap_or(0);
        if len > 0 {
            let mut last = [0u8];
            if f.seek(SeekFrom::End(-1)).is_ok() && f.read_exact(&mut last).is_ok() && last[0] != b'\n' {
                line.insert(0, '\n');
            }
        }
        let written = f.write_all(line.as_bytes());
        let _ = fs4::FileExt::unlock(&f);
        written.map_err(|e| err(format!("cannot write the judge cache: {e}")))?;
        self.entries.insert(e.key.clone(), e);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(model: &str) -> String {
        Key {
            provider: "openai",
            base_url: "http://x/v1",
            model,
            prompt_hash: "ab",
            query: "q",
            passage: "p",
        }
        .digest()
    }

    fn entry(k: &str, grade: i32) -> Entry {
        Entry {
            key: k.into(),
            grade,
            provider: "openai".into(),
            model: "m".into(),
            prompt: "ab".into(),
            at: "2026-12-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn the_model_is_in_the_key() {
        assert_ne!(key("gpt-a"), key("gpt-b"));
        assert_eq!(key("gpt-a"), key("gpt-a"));
        // Length prefixes: moving a byte between two parts changes the key.
        let a = Key {
            provider: "ab",
            base_url: "c",
            model: "",
            prompt_hash: "",
            query: "",
            passage: "",
        };
        let b = Key {
            provider: "a",
            base_url: "bc",
            model: "",
            prompt_hash: "",
            query: "",
            passage: "",
        };
        assert_ne!(a.digest(), b.digest());
    }

    #[test]
    fn a_torn_last_line_is_ignored_and_fenced_off() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.jsonl");
        let mut c = Cache::open(&p).unwrap();
        c.append(entry("k1", 2)).unwrap();
        // A kill in the middle of the next line.
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"{\"key\":\"k2\",\"gra").unwrap();
        let mut c = Cache::open(&p).unwrap();
        assert_eq!((c.entries.len(), c.unreadable), (1, 1));
        c.append(entry("k3", 1)).unwrap();
        let c = Cache::open(&p).unwrap();
        assert_eq!(c.get("k1").map(|e| e.grade), Some(2));
        assert_eq!(c.get("k3").map(|e| e.grade), Some(1));
        assert_eq!(c.unreadable, 1);
    }
}
