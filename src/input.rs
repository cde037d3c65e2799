//! Opening and reading the files rgate is given, within limits.
//!
//! Every input goes through [`open`], which refuses anything but a regular
//! file: a named pipe (FIFO) would block the reader until some writer
//! appears, which in CI is never, and a device such as `/dev/zero` or
//! `/dev/urandom` never ends. The file is opened with `O_NONBLOCK`, so even
//! a path swapped for a FIFO between a check and the open does not block:
//! the refusal looks at the opened file itself (`fstat`), not at the path.
//! `O_NONBLOCK` has no effect on reads of a regular file (POSIX `open(2)`:
//! "the behavior for other file types is unspecified"; Linux and the BSDs
//! ignore it), so nothing changes for real inputs. rgate reads no input
//! from stdin (`-`), and that stays so: every input is a named file.
//!
//! Two kinds of reader, and a limit for each (README "Input limits"):
//!
//! - Files parsed whole (config, gold set, strata file, labeling sheet,
//!   query log, a JSON-map run) are read by [`read`], at most their limit:
//!   a larger file is refused before any of it is parsed, and a file that
//!   grows while read (or lies about its size, as `/proc` files do) stops
//!   at the limit too. The limits sit far above any real file of the kind,
//!   so that only a wrong path meets them.
//! - Files read line by line (JSONL and TREC runs, the chunk map, the
//!   corpus) have no size limit at all; [`Lines`] caps the length of one
//!   line instead, since a line is what such a reader holds in memory.
//!
//! The limits are constants, not settings: the library reads no
//! environment, and a file past them is not a gold set or a config anyone
//! writes by hand or by a tool.

use std::fs::File;
use std::io::{BufRead, Read};
use std::path::Path;

use anyhow::Result;

use crate::diag::{input_error, input_error_hint, looks_binary, BOM};

const MIB: u64 = 1 << 20;

/// A config: a few kilobytes in practice (the demo's is 1.5 KB); 16 MiB is
/// ten thousand times that.
pub const CONFIG_LIMIT: u64 = 16 * MIB;
/// A gold set (any form), its strata file, and the gold file `gold import`
/// merges into: 100,000 queries with two labels and their provenance are
/// 45 MB of YAML and 80 MB of indented JSON (`scripts/gold_load_sets.py`);
/// 512 MiB holds six times that.
pub const GOLD_LIMIT: u64 = 512 * MIB;
/// A labeling sheet: one row per pooled (query, chunk) pair with the
/// chunk's text; 100,000 rows of 2 KB of text are 200 MB.
pub const SHEET_LIMIT: u64 = 1024 * MIB;
/// A query log sampled by `gold sample`: ten million 100-byte rows.
pub const LOG_LIMIT: u64 = 1024 * MIB;
/// A run written as one JSON map (`{"q1": [...]}`), which has no lines to
/// stream by: 7,000 queries of 1,000 ids are about 100 MB. Each query's
/// ranking is parsed on its own, so memory stays near the file's size.
pub const JSON_RUN_LIMIT: u64 = 2048 * MIB;
/// One line of a file read line by line (JSONL or TREC run, chunk map,
/// corpus). A JSONL run line holds a query's whole ranking: 1,000 results
/// with their locations are about 110 KB, 10,000 about 1.1 MB, so 4 MiB is
/// 37 times the first. Judging a line costs twenty-odd times its length
/// (a 59 MB line took 1.15 GB, a 15 MB one 380 MB), so this cap is what
/// bounds a streamed reader's memory: about 100 MB at worst.
pub const LINE_LIMIT: usize = 4 * MIB as usize;

/// A stored baseline: per-query values and each query's ranked ids to the
/// deepest cutoff; 100,000 queries of 100 ids are about 250 MB.
pub const BASELINE_LIMIT: u64 = 2048 * MIB;
/// A baseline's history, one line per recorded result (a few KB each).
pub const HISTORY_LIMIT: u64 = 1024 * MIB;
/// The judge's answer cache (`gold judge --cache`), one line of about 250
/// bytes per answered prompt: a million answers are 250 MB.
pub const JUDGE_CACHE_LIMIT: u64 = 512 * MIB;
/// Files of a few lines rgate writes itself (an update journal, a git
/// hook) and the GitHub event payload (a few hundred KB at most).
pub const SMALL_LIMIT: u64 = 64 * MIB;

/// `n` bytes for a message: `16 MiB`, `1.5 GiB`, `912 bytes`.
pub fn size(n: u64) -> String {
    const GIB: u64 = 1 << 30;
    let (unit, name) = if n >= GIB {
        (GIB, "GiB")
    } else if n >= MIB {
        (MIB, "MiB")
    } else if n >= 1 << 10 {
        (1 << 10, "KiB")
    } else {
        return format!("{n} bytes");
    };
    let x = n as f64 / unit as f64;
    if n.is_multiple_of(unit) {
        format!("{} {name}", n / unit)
    } else {
        format!("{x:.1} {name}")
    }
}

/// `n` with its thousands grouped: `536,870,913`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What a path that is not a regular file is, for the refusal.
fn kind(ft: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a named pipe (FIFO), which would block until something writes to it";
        }
        if ft.is_char_device() {
            return "a character device, which may never end";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    if ft.is_dir() {
        return "a directory";
    }
    "not a regular file"
}

/// Opens `path` for reading, refusing anything but a regular file (after
/// symlinks). `what` names the input ("gold set"); `hint` follows an error
/// opening it.
pub fn open(path: &Path, what: &str, hint: &str) -> Result<File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening a FIFO for reading blocks until a writer opens it,
        // unless O_NONBLOCK; the file type is checked right after.
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let file = opts
        .open(path)
        .map_err(|e| input_error_hint(path, None, format!("cannot read {what}: {e}"), hint.to_string()))?;
    let meta = file
        .metadata()
        .map_err(|e| input_error_hint(path, None, format!("cannot read {what}: {e}"), hint.to_string()))?;
    if !meta.is_file() {
        return Err(input_error_hint(
            path,
            None,
            format!("not a regular file but {}", kind(meta.file_type())),
            format!("give the {what} as the path of a regular file (rgate reads no pipe or device)"),
        ));
    }
    Ok(file)
}

/// Reads a whole file of at most `limit` bytes, through [`open`]. A larger
/// file is refused without reading it; one that grows past the limit while
/// read is refused when it gets there, having held at most `limit + 1`
/// bytes.
pub fn read(path: &Path, what: &str, limit: u64, hint: &str) -> Result<Vec<u8>> {
    let file = open_within(path, what, limit, hint)?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut out = Vec::with_capacity(len as usize);
    file.take(limit + 1)
        .read_to_end(&mut out)
        .map_err(|e| input_error_hint(path, None, format!("cannot read {what}: {e}"), hint.to_string()))?;
    if out.len() as u64 > limit {
        return Err(grew_past(path, what, limit));
    }
    Ok(out)
}

/// [`open`], refusing a file larger than `limit` before reading any of
/// it: for a whole-file input read in pieces (a sheet read a row at a
/// time), which reads through `take(limit + 1)` and calls [`grew_past`]
/// when it got more than `limit` bytes.
pub fn open_within(path: &Path, what: &str, limit: u64, hint: &str) -> Result<File> {
    let file = open(path, what, hint)?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > limit {
        return Err(too_large(
            path,
            what,
            format!(
                "{} bytes is more than the {} a {what} may be",
                grouped(len),
                size(limit)
            ),
        ));
    }
    Ok(file)
}

/// The refusal of a file that grew past its limit while read.
pub fn grew_past(path: &Path, what: &str, limit: u64) -> anyhow::Error {
    too_large(
        path,
        what,
        format!("grew past the {} a {what} may be while read", size(limit)),
    )
}

fn too_large(path: &Path, what: &str, msg: String) -> anyhow::Error {
    input_error_hint(
        path,
        None,
        msg,
        format!("check the path: no {what} is this large (README, \"Input limits\"), so this is likely another file"),
    )
}

/// [`read`], but `None` when nothing is at `path` (a dangling link counts
/// as nothing): for the store's own files, which need not exist yet.
pub fn read_if_exists(path: &Path, what: &str, limit: u64, hint: &str) -> Result<Option<Vec<u8>>> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        _ => read(path, what, limit, hint).map(Some),
    }
}

/// [`read`], refusing a file that is not text (a NUL byte in its first 64
/// KiB), so every loader says the same when pointed at the wrong file.
/// `read_hint` follows a read error, `binary_hint` a binary file. The byte
/// order mark, if any, is left for the caller's [`crate::diag::strip_bom`].
pub fn read_text(path: &Path, what: &str, limit: u64, read_hint: &str, binary_hint: &str) -> Result<Vec<u8>> {
    let raw = read(path, what, limit, read_hint)?;
    if looks_binary(&raw[..raw.len().min(64 * 1024 + BOM.len())]) {
        return Err(input_error_hint(
            path,
            None,
            format!("not a text file (it contains NUL bytes), so not a {what}"),
            binary_hint.to_string(),
        ));
    }
    Ok(raw)
}

/// A file read line by line, one line at most [`LINE_LIMIT`] bytes (or the
/// limit given), without the line ending (`\n` or `\r\n`) and, on the
/// first line, without a byte order mark. Line numbers count from 1.
pub struct Lines<R> {
    reader: R,
    path: std::path::PathBuf,
    what: String,
    limit: usize,
    line_no: usize,
}

impl Lines<std::io::BufReader<File>> {
    /// Opens `path` through [`open`] and reads it in 64 KiB blocks.
    pub fn open(path: &Path, what: &str, hint: &str) -> Result<Self> {
        let file = open(path, what, hint)?;
        Ok(Lines::new(
            std::io::BufReader::with_capacity(64 << 10, file),
            path,
            what,
        ))
    }
}

impl<R: BufRead> Lines<R> {
    pub fn new(reader: R, path: &Path, what: &str) -> Self {
        Lines {
            reader,
            path: path.to_path_buf(),
            what: what.to_string(),
            limit: LINE_LIMIT,
            line_no: 0,
        }
    }

    /// The same reader with another line limit (tests).
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// The next line into `buf` (cleared first) and its number; `None` at
    /// the end of the file. A line longer than the limit is an error,
    /// found having read at most the limit and one block more.
    pub fn next_line(&mut self, buf: &mut Vec<u8>) -> Result<Option<usize>> {
        buf.clear();
        let mut any = false;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(input_error(
                        &self.path,
                        Some(self.line_no + 1),
                        format!("cannot read {}: {e}", self.what),
                    ))
                }
            };
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (take, done) = match memchr::memchr(b'\n', chunk) {
                Some(p) => (p + 1, true),
                None => (chunk.len(), false),
            };
            if buf.len() + take > self.limit + 2 {
                return Err(self.too_long());
            }
            buf.extend_from_slice(&chunk[..take]);
            self.reader.consume(take);
            if done {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        }
        if buf.len() > self.limit {
            return Err(self.too_long());
        }
        if self.line_no == 0 && buf.starts_with(BOM) {
            buf.drain(..BOM.len());
        }
        self.line_no += 1;
        Ok(Some(self.line_no))
    }

    fn too_long(&self) -> anyhow::Error {
        input_error_hint(
            &self.path,
            Some(self.line_no + 1),
            format!("line longer than {}, the most a {} line may hold", size(self.limit as u64), self.what),
            format!(
                "check the path; a {} is read line by line, and its lines are far shorter (README, \"Input limits\")",
                self.what
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(text: &[u8], limit: usize) -> Result<Vec<(usize, Vec<u8>)>> {
        let mut l =
            Lines::new(std::io::BufReader::with_capacity(4, text), Path::new("f"), "run").with_limit(limit);
        let mut out = Vec::new();
        let mut buf = Vec::new();
        while let Some(n) = l.next_line(&mut buf)? {
            out.push((n, buf.clone()));
        }
        Ok(out)
    }

    #[test]
    fn lines_drop_endings_and_the_bom_and_count_from_one() {
        let got = lines_of(b"\xEF\xBB\xBFab\r\n\ncd\nef", 100).unwrap();
        let want: Vec<(usize, Vec<u8>)> = vec![
            (1, b"ab".to_vec()),
            (2, vec![]),
            (3, b"cd".to_vec()),
            (4, b"ef".to_vec()),
        ];
        assert_eq!(got, want);
        assert!(lines_of(b"", 100).unwrap().is_empty());
    }

    #[test]
    fn a_line_at_the_limit_passes_and_one_past_it_names_its_line() {
        assert_eq!(lines_of(b"1234\n12345678\r\n", 8).unwrap().len(), 2);
        let e = lines_of(b"1234\n123456789\n", 8).unwrap_err().to_string();
        assert!(
            e.starts_with("f:2: line longer than 8 bytes, the most a run line may hold\n"),
            "{e}"
        );
        // Without a newline at all (an endless input), too.
        let e = lines_of(&[b'x'; 1000], 8).unwrap_err().to_string();
        assert!(e.starts_with("f:1: line longer than 8 bytes"), "{e}");
    }

    #[test]
    fn sizes_read_plainly() {
        assert_eq!(size(912), "912 bytes");
        assert_eq!(size(16 << 20), "16 MiB");
        assert_eq!(size(3 << 29), "1.5 GiB");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(grouped(536_870_913), "536,870,913");
        assert_eq!(grouped(912), "912");
        assert_eq!(grouped(1000), "1,000");
    }

    #[test]
    fn whole_reads_stop_at_the_limit() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("g.yaml");
        std::fs::write(&p, b"0123456789").unwrap();
        assert_eq!(read(&p, "gold set", 10, "h").unwrap(), b"0123456789");
        let e = read(&p, "gold set", 9, "h").unwrap_err().to_string();
        assert!(
            e.contains("g.yaml: 10 bytes is more than the 9 bytes a gold set may be\n"),
            "{e}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn devices_directories_and_fifos_are_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let e = read(d.path(), "config", 10, "h").unwrap_err().to_string();
        assert!(e.contains(": not a regular file but a directory\n"), "{e}");
        let e = read(Path::new("/dev/zero"), "config", 10, "h")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a regular file but a character device"), "{e}");
        let fifo = d.path().join("p");
        let ok = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(ok.success());
        // No writer: a blocking open would never return.
        let e = read(&fifo, "gold set", 10, "h").unwrap_err().to_string();
        assert!(e.contains("not a regular file but a named pipe (FIFO)"), "{e}");
        let e = Lines::open(&fifo, "run", "h").err().unwrap().to_string();
        assert!(e.contains("not a regular file but a named pipe (FIFO)"), "{e}");
    }
}
