//! Chunk maps: where each chunk of one chunking lies in its source
//! documents (SPEC "Span labels"). A JSONL file, one chunk per line,
//! `{"id": "auth#3", "doc": "docs/auth.md", "start": 1200, "end": 1650}`;
//! other keys (a chunker may add `text`) are left alone.
//!
//! A run of plain ids is judged against span labels through its chunking's
//! map; `gold migrate` turns chunk-id labels into spans with the map of the
//! chunking they were written against.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;

use crate::diag::{clip_message, excerpt, input_error, input_error_hint, looks_binary};
use crate::judge::Located;

const LINE_HINT: &str =
    "a chunk map has one chunk per line: {\"id\": \"c7\", \"doc\": \"docs/auth.md\", \"start\": 1200, \"end\": 1650}";

/// One chunking: chunk id -> (document, start, end).
pub struct ChunkMap {
    path: PathBuf,
    /// Document names, each stored once.
    docs: Vec<String>,
    chunks: HashMap<String, (u32, u64, u64)>,
}

impl fmt::Debug for ChunkMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ChunkMap({}, {} chunks)",
            self.path.display(),
            self.chunks.len()
        )
    }
}

#[derive(Deserialize)]
struct Line {
    id: Value,
    doc: Value,
    start: Value,
    end: Value,
}

/// A chunk map line's offset: an integer, 0 or more.
fn offset(v: &Value, key: &str) -> std::result::Result<u64, String> {
    v.as_u64().ok_or_else(|| {
        if v.as_i64().is_some_and(|i| i < 0) {
            format!("`{key}` is negative; offsets count from 0")
        } else {
            format!("`{key}` must be an integer offset")
        }
    })
}

/// An id or document name written as a string or a number.
fn name(v: &Value, key: &str) -> std::result::Result<String, String> {
    match v {
        Value::String(s) if !s.is_empty() => Ok(s.clone()),
        Value::String(_) => Err(format!("`{key}` is empty")),
        Value::Number(n) => Ok(n.to_string()),
        _ => Err(format!("`{key}` must be a string")),
    }
}

impl ChunkMap {
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Where chunk `id` lies, if the map knows it.
    #[inline]
    pub fn get(&self, id: &str) -> Option<Located<'_>> {
        self.chunks.get(id).map(|&(d, start, end)| Located {
            doc: &self.docs[d as usize],
            start,
            end,
        })
    }

    /// [`ChunkMap::get`] for an id read as bytes (TREC runs).
    #[inline]
    pub fn get_bytes(&self, id: &[u8]) -> Option<Located<'_>> {
        std::str::from_utf8(id).ok().and_then(|s| self.get(s))
    }

    /// Builds a map from parts (tests, and callers that made one).
    pub fn from_chunks<'a>(
        path: impl Into<PathBuf>,
        chunks: impl IntoIterator<Item = (&'a str, Located<'a>)>,
    ) -> ChunkMap {
        let mut m = ChunkMap {
            path: path.into(),
            docs: Vec::new(),
            chunks: HashMap::new(),
        };
        let mut doc_index: HashMap<String, u32> = HashMap::new();
        for (id, loc) in chunks {
            let d = *doc_index.entry(loc.doc.to_string()).or_insert_with(|| {
                m.docs.push(loc.doc.to_string());
                m.docs.len() as u32 - 1
            });
            m.chunks.insert(id.to_string(), (d, loc.start, loc.end));
        }
        m
    }

    /// Reads a JSONL chunk map. Every line is checked: ids unique, offsets
    /// integers with start < end. An error names the file and line.
    pub fn load(path: &Path) -> Result<ChunkMap> {
        // Read line by line: a chunk map grows with the corpus, and only
        // its lines need a limit (README "Input limits").
        let mut lines = crate::input::Lines::open(
            path,
            "chunk map",
            "check the path; a chunk map is JSONL, one {\"id\", \"doc\", \"start\", \"end\"} per line",
        )?;
        let mut m = ChunkMap {
            path: path.to_path_buf(),
            docs: Vec::new(),
            chunks: HashMap::new(),
        };
        let mut doc_index: HashMap<String, u32> = HashMap::new();
        let mut first_line: HashMap<String, usize> = HashMap::new();
        let mut buf = Vec::new();
        while let Some(line_no) = lines.next_line(&mut buf)? {
            if looks_binary(&buf) {
                return Err(input_error_hint(
                    path,
                    Some(line_no),
                    "not a text file (it contains NUL bytes), so not a chunk map",
                    LINE_HINT,
                ));
            }
            let line =
                std::str::from_utf8(&buf).map_err(|_| input_error(path, Some(line_no), "not valid UTF-8"))?;
            let t = line.trim();
            if t.is_empty() {
                continue;
            }
            let bad = |msg: String| input_error_hint(path, Some(line_no), msg, LINE_HINT);
            let l: Line = serde_json::from_str(t)
                .map_err(|e| bad(format!("not a chunk: {}", clip_message(&e.to_string()))))?;
            let id = name(&l.id, "id").map_err(bad)?;
            let doc = name(&l.doc, "doc").map_err(bad)?;
            let start = offset(&l.start, "start").map_err(bad)?;
            let end = offset(&l.end, "end").map_err(bad)?;
            if start >= end {
                return Err(bad(format!(
                    "chunk `{}` has start {start} and end {end}; end is exclusive and must be greater than start",
                    excerpt(&id)
                )));
            }
            if let Some(&first) = first_line.get(&id) {
                return Err(input_error_hint(
                    path,
                    Some(line_no),
                    format!("chunk `{}` appears again (first at line {first})", excerpt(&id)),
                    "a chunk map lists each chunk id once",
                ));
            }
            first_line.insert(id.clone(), line_no);
            let d = match doc_index.get(&doc) {
                Some(&d) => d,
                None => {
                    m.docs.push(doc.clone());
                    doc_index.insert(doc, m.docs.len() as u32 - 1);
                    m.docs.len() as u32 - 1
                }
            };
            m.chunks.insert(id, (d, start, end));
        }
        if m.chunks.is_empty() {
            return Err(input_error_hint(
                path,
                None,
                "the chunk map has no chunks",
                "check that the chunker wrote it completely",
            ));
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_str(content: &str) -> Result<ChunkMap> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("chunks.jsonl");
        std::fs::write(&p, content).unwrap();
        ChunkMap::load(&p)
    }

    #[test]
    fn reads_chunks_and_ignores_other_keys() {
        let m = load_str(
            "{\"id\": \"a#0\", \"doc\": \"a.md\", \"start\": 0, \"end\": 10, \"text\": \"...\"}\n\n{\"id\": 7, \"doc\": \"a.md\", \"start\": 10, \"end\": 25}\n",
        )
        .unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(
            m.get("7"),
            Some(Located {
                doc: "a.md",
                start: 10,
                end: 25
            })
        );
        assert_eq!(m.get_bytes(b"a#0").map(|l| l.end), Some(10));
        assert_eq!(m.get("b"), None);
    }

    #[test]
    fn bad_lines_are_named() {
        let cases = [
            (
                "{\"id\": \"a\", \"doc\": \"d\", \"start\": 5, \"end\": 5}\n",
                "chunks.jsonl:1: chunk `a` has start 5 and end 5",
            ),
            (
                "{\"id\": \"a\", \"doc\": \"d\", \"start\": 0, \"end\": 5}\n{\"id\": \"b\", \"doc\": \"d\", \"start\": -1, \"end\": 5}\n",
                "chunks.jsonl:2: `start` is negative",
            ),
            (
                "{\"id\": \"a\", \"doc\": \"d\", \"start\": 0, \"end\": 5}\n{\"id\": \"a\", \"doc\": \"d\", \"start\": 5, \"end\": 9}\n",
                "chunks.jsonl:2: chunk `a` appears again (first at line 1)",
            ),
            (
                "{\"id\": \"a\", \"doc\": \"d\", \"start\": 0}\n",
                "chunks.jsonl:1: not a chunk: missing field `end`",
            ),
            (
                "{\"id\": \"a\", \"doc\": \"\", \"start\": 0, \"end\": 1}\n",
                "chunks.jsonl:1: `doc` is empty",
            ),
            ("\n", "the chunk map has no chunks"),
        ];
        for (text, want) in cases {
            let err = format!("{:#}", load_str(text).unwrap_err());
            assert!(err.contains(want), "{err}");
            assert!(err.contains("hint:"), "{err}");
        }
    }
}
