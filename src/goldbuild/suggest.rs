//! `gold suggest`: a first-pass labeler (a script calling a model, say) grades
//! the rows no person has graded. Its grades are stored as suggestions, with
//! their source, and never replace a person's grade or count as verified.
//!
//! Protocol: the command reads `{"query_id", "query", "chunk_id", "text"}`
//! lines on stdin and writes `{"query_id", "chunk_id", "grade"}` lines on
//! stdout, in any order, any subset.

use std::collections::HashMap;
use std::io::{BufRead, Read};
use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use serde::Deserialize;
use serde_json::json;

use super::excerpt;
use super::sheet::{Opinion, SheetRow, MODEL};
use crate::diag::usage_error;
use crate::retriever::{self, stderr_note};

/// The longest answer line read: an answer is three short fields, and a
/// line is read whole before it is parsed, so a command writing megabytes
/// without a newline must not be read whole.
pub const MAX_ANSWER: usize = 64 * 1024;

/// What the command answered.
#[derive(Debug, Default, PartialEq)]
pub struct Suggested {
    pub asked: usize,
    /// The rows it graded, each once: (query id, chunk id, grade).
    pub grades: Vec<(String, String, i32)>,
    /// Lines naming a (query, chunk) that was not asked about.
    pub unknown: usize,
    /// Lines repeating a row's grade already given (counted once).
    pub repeated: usize,
}

/// What storing the answers did to the sheet as it was by then.
#[derive(Debug, Default, PartialEq)]
pub struct Stored {
    /// Rows given the model's grade.
    pub stored: usize,
    /// Rows a person graded while the command ran: left alone.
    pub left_alone: usize,
    /// Rows no longer in the sheet.
    pub gone: usize,
}

/// The rows to ask about: those no person has graded.
pub fn requests(rows: &[SheetRow]) -> Vec<usize> {
    (0..rows.len()).filter(|&i| !rows[i].is_persons()).collect()
}

/// Programs that run a script named in their arguments (and launchers that
/// run such a program), by file name, lowercased, without `.exe` and a
/// trailing version (`python3.12` is `python`).
const INTERPRETERS: &[&str] = &[
    "python",
    "pythonw",
    "py",
    "pypy",
    "node",
    "nodejs",
    "deno",
    "bun",
    "bunx",
    "tsx",
    "ts-node",
    "ruby",
    "perl",
    "php",
    "bash",
    "sh",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "pwsh",
    "powershell",
    "rscript",
    "julia",
    "lua",
    "luajit",
    "java",
    "dotnet",
    "env",
    "uv",
    "uvx",
    "npx",
    "pipx",
    "poetry",
    "pdm",
    "pixi",
    "conda",
    "nice",
    "nohup",
    "timeout",
    "time",
    "sudo",
];

/// Words a launcher takes before the program (`uv run`, `poetry run`).
const LAUNCHER_WORDS: &[&str] = &["run", "exec", "x"];

/// What `gold suggest` records a command's grades under when `--name` is
/// not given: the grades of `python3 judge.py` are judge.py's, not
/// python3's. The rule: when the program is an interpreter or a launcher
/// ([`INTERPRETERS`]), the name is the module of `-m MODULE`, else the file
/// name of the first argument that looks like a script (a path, or a name
/// with an extension such as `.py`, `.js`, `.sh`), else the first argument
/// that is no option, no `VAR=value` and no launcher word (`run`), else
/// (inline code, `-c`) the program's; any other program is named by its
/// own file name (`./judge` is `judge`).
pub fn default_name(cmd: &[String]) -> String {
    let file_name = |w: &str| -> String {
        w.rsplit(['/', '\\'])
            .find(|s| !s.is_empty())
            .unwrap_or(w)
            .to_string()
    };
    let Some(program) = cmd.first() else {
        return String::new();
    };
    if !is_interpreter(&file_name(program)) {
        return file_name(program);
    }
    let mut rest = &cmd[1..];
    if let Some(i) = rest.iter().position(|w| w == "-m") {
        if let Some(module) = rest.get(i + 1) {
            return module.clone();
        }
    }
    // Code given inline (`python3 -c CODE`, `node -e CODE`) names nothing.
    if let Some(i) = rest.iter().position(|w| w == "-c" || w == "-e") {
        rest = &rest[..i];
    }
    let plain = |w: &&String| !w.starts_with('-') && !w.contains('=');
    let script = rest.iter().filter(plain).find(|w| {
        let f = file_name(w);
        w.contains(['/', '\\'])
            || f.rsplit_once('.').is_some_and(|(stem, ext)| {
                !stem.is_empty() && ext.starts_with(|c: char| c.is_ascii_alphabetic())
            })
    });
    if let Some(w) = script {
        return file_name(w);
    }
    rest.iter()
        .filter(plain)
        .find(|w| !is_interpreter(&file_name(w)) && !LAUNCHER_WORDS.contains(&w.as_str()))
        .map_or_else(|| file_name(program), |w| file_name(w))
}

fn is_interpreter(file_name: &str) -> bool {
    let lower = file_name.to_ascii_lowercase();
    let base = lower.strip_suffix(".exe").unwrap_or(&lower);
    let base = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    INTERPRETERS.contains(&base)
}

/// Runs `cmd` (no shell) on the rows no person graded and returns its
/// grades, one per row; [`store`] puts them into the sheet as it is when
/// the command is done (a person may have graded some rows meanwhile).
/// `progress` gets the number of answers so far.
pub fn suggest(
    rows: &[SheetRow],
    cmd: &[String],
    timeout: Duration,
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
                "`{prog}` did not finish within {} s and was stopped{}{}",
                timeout.as_secs(),
                f.strays_note(),
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
    let mut stdout = f.output.reader()?;
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
    // Per row: its grade and the line that gave it.
    let mut given: HashMap<usize, (i32, usize)> = HashMap::new();
    let mut grades: Vec<(String, String, i32)> = Vec::new();
    let (mut unknown, mut repeated) = (0, 0);
    // Line by line from the file, each at most MAX_ANSWER bytes read: the
    // command's output costs no more memory than its longest allowed line.
    let mut buf = Vec::new();
    for n in 0.. {
        buf.clear();
        (&mut stdout)
            .take(MAX_ANSWER as u64 + 1)
            .read_until(b'\n', &mut buf)?;
        if buf.is_empty() {
            break;
        }
        if buf.len() > MAX_ANSWER {
            return Err(usage_error(
                format!(
                    "`{}` wrote a line {} on stdout longer than {} bytes: {}{}",
                    cmd[0],
                    n + 1,
                    MAX_ANSWER,
                    excerpt(&String::from_utf8_lossy(&buf[..200])),
                    stderr_note(tail)
                ),
                "each output line is {\"query_id\", \"chunk_id\", \"grade\"} with grade 0..3",
            ));
        }
        let line = String::from_utf8_lossy(&buf);
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
        let Some(&i) = index.get(&(a.query_id.as_str(), a.chunk_id.as_str())) else {
            unknown += 1;
            continue;
        };
        match given.get(&i) {
            Some(&(g, _)) if g == a.grade => repeated += 1,
            // Which of two grades it meant is not ours to guess.
            Some(&(g, first)) => {
                return Err(usage_error(
                    format!(
                        "`{}` graded `{}/{}` twice, {g} on line {first} and {} on line {} of its output",
                        cmd[0],
                        excerpt(&a.query_id),
                        excerpt(&a.chunk_id),
                        a.grade,
                        n + 1
                    ),
                    "the sheet is unchanged; make the command answer each row once",
                ))
            }
            None => {
                given.insert(i, (a.grade, n + 1));
                grades.push((a.query_id, a.chunk_id, a.grade));
            }
        }
    }
    Ok(Suggested {
        asked: asked.len(),
        grades,
        unknown,
        repeated,
    })
}

/// Stores `answers` in `rows` (the sheet as it is now) as unverified model
/// suggestions labeled `name`, except on rows a person graded meanwhile:
/// those are left alone, and counted, so the report can say so truly.
pub fn store(rows: &mut [SheetRow], answers: &Suggested, name: &str, now: &str) -> Stored {
    let index: HashMap<(&str, &str), usize> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.query_id.as_str(), r.chunk_id.as_str()), i))
        .collect();
    let mut out = Stored::default();
    let mut set: Vec<(usize, i32)> = Vec::new();
    for (q, c, g) in &answers.grades {
        match index.get(&(q.as_str(), c.as_str())) {
            None => out.gone += 1,
            Some(&i) if rows[i].is_persons() => out.left_alone += 1,
            Some(&i) => set.push((i, *g)),
        }
    }
    out.stored = set.len();
    for (i, g) in set {
        rows[i].give(Opinion {
            grade: g,
            source: MODEL.into(),
            labeler: Some(name.to_string()),
            prompt: None,
            labeled_at: Some(now.to_string()),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(cmd: &str) -> String {
        default_name(&cmd.split(' ').map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn the_default_name_is_the_scripts_not_the_interpreters() {
        for (cmd, want) in [
            ("python3 judge.py", "judge.py"),
            (
                "python3.12 -u scripts/grade_with_llm.py --model gpt-4o",
                "grade_with_llm.py",
            ),
            ("/usr/bin/python3 -m rgate_judge.cli --model m", "rgate_judge.cli"),
            ("uv run --with openai judge.py", "judge.py"),
            ("env OPENAI_BASE_URL=http://x python judge.py", "judge.py"),
            ("node dist/judge.mjs", "judge.mjs"),
            ("bash ./grade", "grade"),
            ("C:\\Python312\\python.exe C:\\tools\\judge.py", "judge.py"),
            ("npx my-judge --fast", "my-judge"),
            ("./judge --model gpt-4o.mini", "judge"),
            ("/opt/bin/rgate-judge", "rgate-judge"),
            ("python3", "python3"),
            ("python3 -c", "python3"),
            ("python3 -c print(1)", "python3"),
        ] {
            assert_eq!(name(cmd), want, "{cmd}");
        }
    }
}
