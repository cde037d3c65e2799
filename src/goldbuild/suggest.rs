//! `gold suggest`: a first-pass labeler (a script calling a model, say) grades
//! the rows no person has graded. Its grades are stored as suggestions, with
//! their source, and never replace a person's grade or count as verified.
//!
//! Protocol: the command reads `{"query_id", "query", "chunk_id", "text"}`
//! lines on stdin and writes `{"query_id", "chunk_id", "grade"}` lines on
//! stdout, in any order, any subset.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Result;
use serde::Deserialize;
use serde_json::json;

use super::excerpt;
use super::sheet::{SheetRow, MODEL};
use crate::diag::usage_error;

/// How much of the command's stderr an error shows.
const STDERR_TAIL: usize = 2000;

/// What the command did to the sheet.
#[derive(Debug, Default, PartialEq)]
pub struct Suggested {
    pub asked: usize,
    pub graded: usize,
    /// Lines naming a (query, chunk) that was not asked about.
    pub unknown: usize,
}

/// The rows to ask about: those no person has graded.
pub fn requests(rows: &[SheetRow]) -> Vec<usize> {
    (0..rows.len()).filter(|&i| !rows[i].is_persons()).collect()
}

/// Runs `cmd` (no shell) on the rows no person graded and stores its grades
/// as unverified model suggestions labeled `name`.
pub fn suggest(
    rows: &mut [SheetRow],
    cmd: &[String],
    name: &str,
    timeout: Duration,
    now: &str,
) -> Result<Suggested> {
    let asked = requests(rows);
    let mut input = String::new();
    for &i in &asked {
        let r = &rows[i];
        input.push_str(
            &json!({"query_id": r.query_id, "query": r.query, "chunk_id": r.chunk_id, "text": r.text})
                .to_string(),
        );
        input.push('\n');
    }
    let out = run(cmd, input.into_bytes(), timeout)?;
    let index: HashMap<(&str, &str), usize> = asked
        .iter()
        .map(|&i| ((rows[i].query_id.as_str(), rows[i].chunk_id.as_str()), i))
        .collect();
    #[derive(Deserialize)]
    struct Answer {
        query_id: String,
        chunk_id: String,
        grade: i32,
    }
    let mut grades: Vec<(usize, i32)> = Vec::new();
    let mut unknown = 0;
    for (n, line) in out.stdout.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let a: Answer = serde_json::from_str(line).map_err(|e| {
            usage_error(
                format!(
                    "`{}` wrote a bad line {} on stdout: {e}: {}{}",
                    cmd[0],
                    n + 1,
                    excerpt(line),
                    stderr_note(&out.stderr_tail)
                ),
                "each output line is {\"query_id\", \"chunk_id\", \"grade\"} with grade 0..3",
            )
        })?;
        if !(0..=3).contains(&a.grade) {
            return Err(usage_error(
                format!(
                    "`{}` gave grade {} on line {}; grades are 0..3",
                    cmd[0],
                    a.grade,
                    n + 1
                ),
                "fix the command's output",
            ));
        }
        match index.get(&(a.query_id.as_str(), a.chunk_id.as_str())) {
            Some(&i) => grades.push((i, a.grade)),
            None => unknown += 1,
        }
    }
    let graded = grades.len();
    for (i, g) in grades {
        let r = &mut rows[i];
        r.grade = Some(g);
        r.source = Some(MODEL.into());
        r.labeler = Some(name.to_string());
        r.verified = false;
        r.labeled_at = Some(now.to_string());
    }
    Ok(Suggested {
        asked: asked.len(),
        graded,
        unknown,
    })
}

struct Output {
    stdout: String,
    stderr_tail: String,
}

fn stderr_note(tail: &str) -> String {
    if tail.trim().is_empty() {
        String::new()
    } else {
        format!("\nits stderr ends with:\n{}", tail.trim_end())
    }
}

/// Runs the command with `input` on stdin, reading stdout and stderr at the
/// same time (a command that writes more than a pipe holds before reading
/// all its input would otherwise deadlock), within `timeout`.
fn run(cmd: &[String], input: Vec<u8>, timeout: Duration) -> Result<Output> {
    let (prog, args) = cmd
        .split_first()
        .ok_or_else(|| usage_error("--command is empty", "name the program and its arguments"))?;
    let mut c = Command::new(prog);
    c.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        c.process_group(0);
    }
    let mut child = c.spawn().map_err(|e| {
        usage_error(
            format!("cannot run `{prog}`: {e}"),
            "check the command: it runs without a shell",
        )
    })?;
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let writer = std::thread::spawn(move || {
        // A command that exits without reading everything closes the pipe;
        // that is its business, and its exit status says how it went.
        let _ = stdin.write_all(&input);
    });
    let err_reader = std::thread::spawn(move || {
        let mut tail: Vec<u8> = Vec::new();
        let mut r = BufReader::new(stderr);
        let mut buf = Vec::new();
        while r.read_until(b'\n', &mut buf).map(|n| n > 0).unwrap_or(false) {
            tail.extend_from_slice(&buf);
            buf.clear();
            if tail.len() > 4 * STDERR_TAIL {
                tail.drain(..tail.len() - STDERR_TAIL);
            }
        }
        let s = String::from_utf8_lossy(&tail).into_owned();
        let mut start = s.len().saturating_sub(STDERR_TAIL);
        while !s.is_char_boundary(start) {
            start += 1;
        }
        s[start..].to_string()
    });
    let (tx, rx) = mpsc::channel();
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let r = stdout.read_to_end(&mut s);
        let _ = tx.send(());
        r.map(|_| s)
    });
    let timed_out = rx.recv_timeout(timeout).is_err();
    if timed_out {
        kill_group(&mut child);
    }
    let status = child.wait()?;
    let _ = writer.join();
    let stdout = out_reader
        .join()
        .map_err(|_| anyhow::anyhow!("reader thread failed"))??;
    let stderr_tail = err_reader.join().unwrap_or_default();
    if timed_out {
        return Err(usage_error(
            format!(
                "`{prog}` did not finish within {} s and was stopped{}",
                timeout.as_secs(),
                stderr_note(&stderr_tail)
            ),
            "raise --timeout-s, or grade fewer rows at a time",
        ));
    }
    if !status.success() {
        return Err(usage_error(
            format!("`{prog}` failed ({status}){}", stderr_note(&stderr_tail)),
            "the sheet is unchanged; fix the command and run again",
        ));
    }
    Ok(Output {
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr_tail,
    })
}

/// Stops the command and everything it started.
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        // The child leads its own process group (see `process_group(0)`);
        // `kill -KILL -PGID` reaches its children too.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
}
