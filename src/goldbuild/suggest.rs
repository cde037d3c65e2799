//! `gold suggest`: a first-pass labeler (a script calling a model, say) grades
//! the rows no person has graded. Its grades are stored as suggestions, with
//! their source, and never replace a person's grade or count as verified.
//!
//! Protocol: the command reads `{"query_id", "query", "chunk_id", "text"}`
//! lines on stdin and writes `{"query_id", "chunk_id", "grade"}` lines on
//! stdout, in any order, any subset.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use serde::Deserialize;
use serde_json::json;

use super::excerpt;
use super::sheet::{SheetRow, MODEL};
use crate::diag::usage_error;
use crate::retriever::{self, stderr_note};

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
/// `progress` gets the number of answers so far.
pub fn suggest(
    rows: &mut [SheetRow],
    cmd: &[String],
    name: &str,
    timeout: Duration,
    now: &str,
    progress: &mut dyn FnMut(u64),
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
    // Echoed in messages: an argument may hold a newline.
    let prog = crate::escape::terminal(cmd.first().map(String::as_str).unwrap_or("")).into_owned();
    let f = retriever::execute(
        cmd,
        Path::new(""),
        input.into_bytes(),
        timeout,
        "suggest",
        progress,
    )
    .map_err(|e| {
        usage_error(
            format!("cannot run `{prog}`: {e}"),
            "check the command: it runs without a shell",
        )
    })?;
    let tail = &f.output.stderr_tail;
    if f.timed_out {
        return Err(usage_error(
            format!(
                "`{prog}` did not finish within {} s and was stopped{}",
                timeout.as_secs(),
                stderr_note(tail)
            ),
            "raise --timeout-s, or grade fewer rows at a time",
        ));
    }
    match &f.status {
        Ok(s) if s.success() => {}
        Ok(s) => {
            return Err(usage_error(
                format!("`{prog}` failed ({s}){}", stderr_note(tail)),
                "the sheet is unchanged; fix the command and run again",
            ))
        }
        Err(e) => return Err(usage_error(format!("cannot wait for `{prog}`: {e}"), "try again")),
    }
    if let Err(e) = &f.stored {
        return Err(usage_error(
            format!("cannot read the output of `{prog}`: {e}"),
            "check free space in TMPDIR",
        ));
    }
    let stdout = std::fs::read(&f.output.path)?;
    let stdout = String::from_utf8_lossy(&stdout);
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
    for (n, line) in stdout.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let a: Answer = serde_json::from_str(line).map_err(|e| {
            usage_error(
                format!(
                    "`{}` wrote a bad line {} on stdout: {e}: {}{}",
                    prog,
                    n + 1,
                    excerpt(line),
                    stderr_note(tail)
                ),
                "each output line is {\"query_id\", \"chunk_id\", \"grade\"} with grade 0..3",
            )
        })?;
        if !(0..=3).contains(&a.grade) {
            return Err(usage_error(
                format!(
                    "`{}` gave grade {} on line {}; grades are 0..3",
                    prog,
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
