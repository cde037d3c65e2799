//! Retrievers run as commands (`command:` in the config, SPEC "Retrievers
//! in the config"): the gold queries go to the command's stdin as JSON
//! lines `{"query_id", "text", "stratum"}`, and its stdout is the run, as
//! JSON lines.
//!
//! The command runs without a shell, in the config file's directory. Its
//! stdin is written, and its stdout and stderr read, each on its own thread:
//! a command that answers before it has read all its input would otherwise
//! fill a pipe and wait on rgate forever. stdout streams to a temporary
//! file, so a run of any size costs no memory here. The command leads its
//! own process group; on timeout the whole group is killed, so a wrapper
//! script's children do not outlive it.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use anyhow::Result;

use crate::diag::usage_error;
use crate::gold::GoldSet;

/// A retriever run as a command, without a shell. It lives here, with the
/// code that runs it, rather than in the config that names it: the config
/// is the layer above and builds one.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrieverCommand {
    pub argv: Vec<String>,
    pub timeout: Duration,
    /// The config file's directory: where the command runs.
    pub dir: PathBuf,
}

/// How much of the command's stderr an error shows.
pub const STDERR_TAIL: usize = 2048;

/// The gold queries as the command reads them.
pub fn queries_jsonl(gold: &GoldSet) -> Vec<u8> {
    let mut out = Vec::new();
    for q in &gold.queries {
        let line = serde_json::json!({
            "query_id": q.id,
            "text": q.text,
            "stratum": gold.strata[q.stratum as usize],
        });
        out.extend_from_slice(line.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

/// The command's output, written to a temporary file that is removed when
/// this is dropped.
pub struct Output {
    pub path: PathBuf,
    pub stderr_tail: String,
}

impl Drop for Output {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// `its stderr ends with: ...`, or nothing when it wrote none.
pub fn stderr_note(tail: &str) -> String {
    if tail.trim().is_empty() {
        " (it wrote nothing on stderr)".into()
    } else {
        format!("\nits stderr ends with:\n{}", tail.trim_end())
    }
}

/// How a command ended: its stdout (in a temporary file) and stderr tail,
/// whether it was stopped at the timeout, its exit status, and whether its
/// stdout was stored whole.
pub struct Finished {
    pub output: Output,
    pub timed_out: bool,
    pub status: std::io::Result<std::process::ExitStatus>,
    pub stored: std::io::Result<()>,
}

/// Runs `argv` (no shell) in `dir` with `input` on stdin, reading stdout
/// into a temporary file named after `tag` and keeping the tail of stderr,
/// each on its own thread; stops the whole process group at `timeout`.
/// `Err` only when the program cannot be started (or no temporary file made).
/// `progress` is called about five times a second with the number of lines
/// the command has written so far, and once at the end.
pub fn execute(
    argv: &[String],
    dir: &Path,
    input: Vec<u8>,
    timeout: Duration,
    tag: &str,
    progress: &mut dyn FnMut(u64),
) -> std::io::Result<Finished> {
    let Some((prog, args)) = argv.split_first() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the command is empty",
        ));
    };
    let path = std::env::temp_dir().join(format!("rgate-{tag}-{}.jsonl", std::process::id()));
    let file = std::fs::File::create(&path)?;
    let output = Output {
        path,
        stderr_tail: String::new(),
    };
    let mut c = Command::new(prog);
    c.args(args)
        .current_dir(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        })
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        c.process_group(0);
    }
    let mut child = c.spawn()?;
    let (mut stdin, mut stdout, stderr) = match (child.stdin.take(), child.stdout.take(), child.stderr.take())
    {
        (Some(i), Some(o), Some(e)) => (i, o, e),
        _ => {
            kill_group(&mut child);
            return Err(std::io::Error::other("cannot open pipes to the command"));
        }
    };
    let writer = std::thread::spawn(move || {
        // A command that exits without reading all of it closes the pipe;
        // its exit status says how it went.
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
    let lines = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&lines);
    let out_reader = std::thread::spawn(move || {
        let mut file = file;
        let mut buf = vec![0u8; 64 * 1024];
        let r = (|| -> std::io::Result<()> {
            loop {
                let n = match stdout.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                file.write_all(&buf[..n])?;
                counted.fetch_add(
                    memchr::memchr_iter(b'\n', &buf[..n]).count() as u64,
                    Ordering::Relaxed,
                );
            }
            file.flush()
        })();
        let _ = tx.send(());
        r
    });
    let deadline = std::time::Instant::now() + timeout;
    let timed_out = loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left.min(Duration::from_millis(200))) {
            Err(mpsc::RecvTimeoutError::Timeout) if left.is_zero() => break true,
            Err(mpsc::RecvTimeoutError::Timeout) => progress(lines.load(Ordering::Relaxed)),
            _ => break false,
        }
    };
    if timed_out {
        kill_group(&mut child);
    }
    progress(lines.load(Ordering::Relaxed));
    let status = child.wait();
    let _ = writer.join();
    let stored = out_reader
        .join()
        .unwrap_or_else(|_| Err(std::io::Error::other("the reader thread failed")));
    let mut output = output;
    output.stderr_tail = err_reader.join().unwrap_or_default();
    Ok(Finished {
        output,
        timed_out,
        status,
        stored,
    })
}

/// Runs retriever `name`'s command on the gold queries.
/// `progress` gets the number of run lines (queries answered) so far.
pub fn run(
    name: &str,
    cmd: &RetrieverCommand,
    gold: &GoldSet,
    progress: &mut dyn FnMut(u64),
) -> Result<Output> {
    if cmd.argv.is_empty() {
        return Err(usage_error(
            format!("retriever `{name}`: the command is empty"),
            "name the program and its arguments",
        ));
    }
    // Echoed in messages: an argument may hold a newline.
    let shown = crate::escape::terminal(&cmd.argv.join(" ")).into_owned();
    let f = execute(&cmd.argv, &cmd.dir, queries_jsonl(gold), cmd.timeout, name, progress).map_err(|e| {
        usage_error(
            format!("retriever `{name}`: cannot run `{shown}` in {}: {e}", cmd.dir.display()),
            "the command runs without a shell, in the config file's directory; check the program's name and path",
        )
    })?;
    if f.timed_out {
        return Err(usage_error(
            format!(
                "retriever `{name}`: `{shown}` did not finish within {} s and was stopped, with every process it started{}",
                cmd.timeout.as_secs_f64(),
                stderr_note(&f.output.stderr_tail)
            ),
            "raise timeout_s in the config, or make the retriever faster",
        ));
    }
    let status = f.status.map_err(|e| {
        usage_error(
            format!("retriever `{name}`: cannot wait for `{shown}`: {e}"),
            "try again",
        )
    })?;
    if !status.success() {
        return Err(usage_error(
            format!("retriever `{name}`: `{shown}` failed ({status}){}", stderr_note(&f.output.stderr_tail)),
            "fix the command; it reads gold queries as JSON lines on stdin and writes the run as JSON lines on stdout",
        ));
    }
    f.stored.map_err(|e| {
        usage_error(
            format!(
                "retriever `{name}`: cannot store the output of `{shown}` in {}: {e}",
                f.output.path.display()
            ),
            "check free space in the temporary directory (TMPDIR)",
        )
    })?;
    Ok(f.output)
}

/// Stops the command and everything it started: it leads its own process
/// group, so a signal to the negative pid reaches its children too.
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) takes plain integers and touches no memory of ours.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn progress_counts_lines_while_the_command_runs() {
        let argv: Vec<String> = ["sh", "-c", "printf 'a\\nb\\n'; sleep 1; printf 'c\\n'"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut seen = Vec::new();
        let f = execute(
            &argv,
            Path::new(""),
            Vec::new(),
            Duration::from_secs(20),
            "progress-test",
            &mut |n| seen.push(n),
        )
        .unwrap();
        assert!(f.status.unwrap().success());
        // Two lines while it sleeps, three at the end.
        assert!(seen.contains(&2), "{seen:?}");
        assert_eq!(seen.last(), Some(&3));
        assert_eq!(std::fs::read_to_string(&f.output.path).unwrap(), "a\nb\nc\n");
    }
}
