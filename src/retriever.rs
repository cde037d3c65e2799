//! Retrievers run as commands (`command:` in the config, SPEC "Retrievers
//! in the config"): the gold queries go to the command's stdin as JSON
//! lines `{"query_id", "text", "stratum"}`, and its stdout is the run, as
//! JSON lines.
//!
//! The command runs without a shell, in the config file's directory. Its
//! stdin is written, and its stdout and stderr read, each on its own thread:
//! a command that answers before it has read all its input would otherwise
//! fill a pipe and wait on rgate forever. stdout streams to a temporary
//! file, so a run of any size costs no memory here; of stderr only a tail
//! is kept, read in fixed blocks, so a flood without a newline costs none
//! either.
//!
//! The command leads its own process group. The command has ended when
//! that leader has exited, not when its pipes close: a background child can
//! hold them open for as long as it likes. When the leader exits, or at the
//! timeout, the whole group is killed, so a wrapper script's children do
//! not outlive it, and the readers get a short grace to drain what is left
//! in the pipes. A process that left the group (`setsid`) survives the kill
//! and may keep a pipe open: rgate stops waiting for it after the grace and
//! never joins a thread that may be blocked on such a pipe (a reader that
//! wakes later keeps nothing; the writer stops at its next block).

use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

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

/// How long, once the command has ended (and its process group has been
/// killed), the readers get to reach the end of its pipes. Only processes
/// that left the group can still hold them; what the command itself wrote
/// is already in the pipe and drains in well under this.
const GRACE: Duration = Duration::from_millis(500);

/// How often the leader's exit is polled while it runs.
const POLL: Duration = Duration::from_millis(10);

/// How often `progress` is called while the command runs.
const TICK: Duration = Duration::from_millis(200);

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

/// The command's output, in a temporary file that is removed when this is
/// dropped. The file comes from the `tempfile` crate: created exclusively
/// (`O_EXCL`, so a file or symlink planted at its name is never opened or
/// followed), mode 0600, under a random name in the temporary directory
/// (`TMPDIR`); a name made of the pid could be guessed and planted ahead.
pub struct Output {
    file: tempfile::NamedTempFile,
    pub stderr_tail: String,
}

impl Output {
    /// Where the output is, for a reader that takes a path.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The output, read from the start: a new handle on the same file
    /// (`tempfile` checks it is still the file it created).
    pub fn reader(&self) -> std::io::Result<BufReader<std::fs::File>> {
        Ok(BufReader::new(self.file.reopen()?))
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
/// whether it was stopped at the timeout, its exit status, whether its
/// stdout was stored whole, and whether a process it started still held
/// one of its pipes when rgate stopped waiting.
pub struct Finished {
    pub output: Output,
    pub timed_out: bool,
    pub status: std::io::Result<std::process::ExitStatus>,
    pub stored: std::io::Result<()>,
    /// A process that left the command's process group (`setsid`) kept its
    /// stdout or stderr open past the grace, or its stdin unread: it was not
    /// killed, and anything it writes later is not read.
    pub strays: bool,
}

impl Finished {
    /// ` (a process it started left its process group ...)`, or nothing.
    pub fn strays_note(&self) -> &'static str {
        if self.strays {
            "; a process it started left its process group (setsid) and still holds its pipes, so it was not stopped"
        } else {
            ""
        }
    }
}

/// What a pipe reader has kept, shared with the thread that runs the
/// command. `closed` is set, under the lock, when that thread stops
/// waiting: a reader that wakes after that keeps nothing and drops the pipe.
struct Kept<T> {
    value: T,
    closed: bool,
}

fn lock<T>(m: &Mutex<Kept<T>>) -> MutexGuard<'_, Kept<T>> {
    // A reader that panicked left plain data behind; it is still the tail.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Reads `pipe` in blocks of 64 KiB until its end, handing each to `keep`
/// under the lock; stops when `keep` fails or the runner has stopped
/// waiting. Signals `done` at the end of the pipe.
fn spawn_reader<P, T>(
    mut pipe: P,
    kept: Arc<Mutex<Kept<T>>>,
    done: mpsc::Sender<()>,
    keep: fn(&mut T, &[u8]) -> bool,
) where
    P: Read + Send + 'static,
    T: Send + 'static,
{
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match pipe.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // A pipe that cannot be read has ended, as far as anyone can tell.
                Err(_) => 0,
            };
            let mut k = lock(&kept);
            if k.closed {
                return;
            }
            // At the end, or when `keep` fails: stop reading (a command
            // still writing then fails on a closed pipe).
            if n == 0 || !keep(&mut k.value, &buf[..n]) {
                break;
            }
        }
        let _ = done.send(());
    });
}

/// stdout as it is stored: the file, the lines written so far, and the
/// first error writing it.
struct Stdout {
    file: std::fs::File,
    lines: u64,
    stored: std::io::Result<()>,
}

fn keep_stdout(s: &mut Stdout, block: &[u8]) -> bool {
    match s.file.write_all(block) {
        Ok(()) => {
            s.lines += memchr::memchr_iter(b'\n', block).count() as u64;
            true
        }
        Err(e) => {
            s.stored = Err(e);
            false
        }
    }
}

/// Keeps the last [`STDERR_TAIL`] bytes (at most twice that between trims),
/// whatever the lines' lengths.
fn keep_tail(tail: &mut Vec<u8>, block: &[u8]) -> bool {
    if block.len() >= STDERR_TAIL {
        tail.clear();
        tail.extend_from_slice(&block[block.len() - STDERR_TAIL..]);
    } else {
        tail.extend_from_slice(block);
        if tail.len() > 2 * STDERR_TAIL {
            tail.drain(..tail.len() - STDERR_TAIL);
        }
    }
    true
}

/// The last [`STDERR_TAIL`] bytes as text, starting at a character.
fn tail_text(tail: &[u8]) -> String {
    let s = String::from_utf8_lossy(tail);
    let mut start = s.len().saturating_sub(STDERR_TAIL);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s[start..].to_string()
}

/// Runs `argv` (no shell) in `dir` with `input` on stdin, reading stdout
/// into a temporary file named after `tag` and keeping the tail of stderr,
/// each on its own thread. Returns when the command's leader has exited
/// (the group is then killed) or at `timeout` (the group killed first),
/// plus at most [`GRACE`] for the pipes to drain, whatever its other
/// descendants do.
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
    let file = tempfile::Builder::new()
        .prefix(&format!("rgate-{tag}-"))
        .suffix(".jsonl")
        .tempfile()?;
    let out_file = file.as_file().try_clone()?;
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
    let (mut stdin, stdout, stderr) = match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
        (Some(i), Some(o), Some(e)) => (i, o, e),
        _ => {
            kill_group(&mut child);
            let _ = child.wait();
            return Err(std::io::Error::other("cannot open pipes to the command"));
        }
    };
    // Every thread signals `done` when it has finished with its pipe.
    let (done, ended) = mpsc::channel();
    // Set when rgate stops waiting: the writer then stops at its next block
    // rather than feed a process that outlived the command.
    let stop = Arc::new(AtomicBool::new(false));
    {
        let (stop, done) = (Arc::clone(&stop), done.clone());
        std::thread::spawn(move || {
            // A command that exits without reading all of it closes the
            // pipe; its exit status says how it went.
            for block in input.chunks(64 * 1024) {
                if stop.load(Ordering::Relaxed) || stdin.write_all(block).is_err() {
                    break;
                }
            }
            drop(stdin);
            let _ = done.send(());
        });
    }
    let out = Arc::new(Mutex::new(Kept {
        value: Stdout {
            file: out_file,
            lines: 0,
            stored: Ok(()),
        },
        closed: false,
    }));
    let err = Arc::new(Mutex::new(Kept {
        value: Vec::new(),
        closed: false,
    }));
    spawn_reader(stdout, Arc::clone(&out), done.clone(), keep_stdout);
    spawn_reader(stderr, Arc::clone(&err), done, keep_tail);
    let lines = || lock(&out).value.lines;

    let start = Instant::now();
    // `--timeout-s` can be any u64: past what an Instant holds, no deadline.
    let deadline = start
        .checked_add(timeout)
        .unwrap_or_else(|| start + Duration::from_secs(u64::from(u32::MAX)));
    let mut tick = start + TICK;
    let (status, timed_out) = loop {
        match child.try_wait() {
            Ok(Some(s)) => break (Ok(s), false),
            Ok(None) => {}
            Err(e) => {
                kill_group(&mut child);
                let _ = child.wait();
                break (Err(e), false);
            }
        }
        let now = Instant::now();
        if now >= deadline {
            kill_group(&mut child);
            break (child.wait(), true);
        }
        if now >= tick {
            progress(lines());
            tick = now + TICK;
        }
        std::thread::sleep(POLL.min(deadline - now));
    };
    // The leader is gone: whatever it left running in its group goes too.
    // A background child holding stdout would otherwise keep the pipe open
    // until it pleased. The group outlives its leader while a member is
    // left, and Linux does not hand out a pid still in use as a group id,
    // so the id still names that group; with no member left the signal
    // finds no one (short of the pid space wrapping around in between).
    kill_group(&mut child);
    let grace = Instant::now() + GRACE;
    let mut open = 3;
    while open > 0 {
        let left = grace.saturating_duration_since(Instant::now());
        if left.is_zero() || ended.recv_timeout(left).is_err() {
            break;
        }
        open -= 1;
    }
    stop.store(true, Ordering::Relaxed);
    let stored = {
        let mut k = lock(&out);
        k.closed = true;
        std::mem::replace(&mut k.value.stored, Ok(()))
    };
    let stderr_tail = {
        let mut k = lock(&err);
        k.closed = true;
        tail_text(&k.value)
    };
    progress(lines());
    // A pipe still open after the grace is held by a process outside the
    // group; what the command itself wrote has been read by now.
    let strays = open > 0;
    Ok(Finished {
        output: Output { file, stderr_tail },
        timed_out,
        status,
        stored,
        strays,
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
                "retriever `{name}`: `{shown}` did not finish within {} s and was stopped, with every process in its process group{}{}",
                cmd.timeout.as_secs_f64(),
                f.strays_note(),
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
                f.output.path().display()
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
        assert_eq!(std::fs::read_to_string(f.output.path()).unwrap(), "a\nb\nc\n");
    }

    #[test]
    fn the_stderr_tail_is_the_last_bytes_whatever_the_blocks() {
        // Blocks of every size from 1 to 5,000 bytes, no newline anywhere.
        let mut all = Vec::new();
        let mut tail = Vec::new();
        for n in 1..=5000usize {
            let block: Vec<u8> = (0..n).map(|i| b'a' + ((n + i) % 26) as u8).collect();
            all.extend_from_slice(&block);
            assert!(keep_tail(&mut tail, &block));
            assert!(tail.len() <= 2 * STDERR_TAIL, "{} bytes kept", tail.len());
            let want = &all[all.len().saturating_sub(STDERR_TAIL)..];
            assert_eq!(tail_text(&tail).as_bytes(), want, "after block {n}");
        }
    }

    #[test]
    fn the_tail_starts_at_a_character() {
        // 2,047 bytes of 'x' after a two-byte 'é': the last 2,048 bytes
        // start inside it, so the tail starts after it.
        let mut bytes = "é".as_bytes().to_vec();
        bytes.extend(std::iter::repeat_n(b'x', STDERR_TAIL - 1));
        assert_eq!(tail_text(&bytes), "x".repeat(STDERR_TAIL - 1));
    }

    #[test]
    fn a_child_left_holding_the_pipes_does_not_hold_the_result() {
        let argv: Vec<String> = ["sh", "-c", "echo a; sleep 30 &"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let t = std::time::Instant::now();
        let f = execute(
            &argv,
            Path::new(""),
            Vec::new(),
            Duration::from_secs(20),
            "group-test",
            &mut |_| {},
        )
        .unwrap();
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert!(!f.timed_out);
        assert!(f.status.unwrap().success());
        // Killed with its group, so no pipe was left open.
        assert!(!f.strays);
        assert_eq!(std::fs::read_to_string(f.output.path()).unwrap(), "a\n");
    }

    #[test]
    fn a_timeout_past_what_an_instant_holds_is_no_deadline() {
        let argv: Vec<String> = ["true"].iter().map(|s| s.to_string()).collect();
        let f = execute(
            &argv,
            Path::new(""),
            Vec::new(),
            Duration::MAX,
            "max-test",
            &mut |_| {},
        )
        .unwrap();
        assert!(f.status.unwrap().success());
    }
}
