//! Every command rgate runs (a gate's command retriever, `gold suggest
//! --command`) ends within its timeout whatever its descendants do, keeps
//! bounded memory whatever it writes, and has its output stored in a file
//! no one can plant ahead (issue #25, items 2, 3 and 7).
//!
//! Each case runs the built binary on small shell scripts. rgate itself
//! runs under a watchdog ([`within`]): before the fix some of these hung
//! for good, and a test must fail then, not hang.
#![cfg(unix)]

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Out, TestProject};

/// A config (in `config/`) naming one command retriever `cmd` running
/// `sh -c <script>`, and a gold set of `n` queries q1..qn, each answered
/// by d<i> alone.
fn project(p: &TestProject, n: usize, script: &str, timeout_s: u32) {
    p.write(
        "config/rgate.yaml",
        format!(
            "gold: gold.jsonl\nbaselines: baselines\nmetrics: [recall@10]\nretrievers:\n  - name: cmd\n    command: [sh, -c, {}]\n    timeout_s: {timeout_s}\n",
            serde_json::to_string(script).unwrap()
        ),
    );
    let mut gold = String::new();
    for i in 1..=n {
        gold += &format!(
            "{{\"id\": \"q{i}\", \"text\": \"the text of query number {i}\", \"stratum\": \"s\", \"relevant\": [\"d{i}\"]}}\n"
        );
    }
    p.write("config/gold.jsonl", gold);
    fs::create_dir_all(p.path("config/baselines")).unwrap();
}

/// Answers every query read on stdin with d<i>, except q3 (answered x):
/// with three queries recall@10 is 2/3.
const ANSWER: &str =
    r#"sed -E 's/.*"query_id":"q([0-9]+)".*/{"query_id":"q\1","results":["d\1"]}/' | sed 's/"d3"/"x"/'"#;

/// Starts a process that leaves the command's process group (`setsid`),
/// records its pid in `stray.pid` and sleeps for a minute with the
/// command's stdout and stderr.
const STRAY: &str = r#"setsid sh -c 'echo $$ > stray.pid; exec sleep 60' &"#;

/// Kills, when dropped, the stray whose pid is in `pidfile` (a process the
/// test started, by its id).
struct Stray(PathBuf);

impl Drop for Stray {
    fn drop(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            if let Ok(pid) = fs::read_to_string(&self.0) {
                let _ = Command::new("kill").args(["-9", pid.trim()]).status();
                return;
            }
            if Instant::now() > deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Runs `c` for at most `limit`: its exit code and output, or `None` (it
/// is then killed) when it is still running.
fn within(mut c: Command, limit: Duration, dir: &Path) -> Option<Out> {
    let (out, err) = (dir.join("rgate.stdout"), dir.join("rgate.stderr"));
    c.stdin(Stdio::null())
        .stdout(fs::File::create(&out).unwrap())
        .stderr(fs::File::create(&err).unwrap());
    let mut child = c.spawn().unwrap();
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Some(Out {
        code: status.code().unwrap_or(-1),
        stdout: fs::read_to_string(out).unwrap(),
        stderr: String::from_utf8_lossy(&fs::read(err).unwrap()).into_owned(),
    })
}

fn gate(p: &TestProject, limit: Duration) -> (Option<Out>, Duration) {
    let mut c = p.command();
    c.args(["--config", p.path("config/rgate.yaml").to_str().unwrap()])
        .args(["baseline", "update", "--note", "x"]);
    let t = Instant::now();
    let o = within(c, limit, p.root());
    (o, t.elapsed())
}

/// The recorded baseline's overall recall@10.
fn recall(p: &TestProject) -> f64 {
    let b: serde_json::Value = serde_json::from_str(&p.read("config/baselines/cmd.json")).unwrap();
    let agg = &b["aggregates"];
    agg["all"]["recall@10"]
        .as_f64()
        .or_else(|| agg[0]["means"]["recall@10"].as_f64())
        .unwrap_or_else(|| panic!("no overall recall@10 in {b}"))
}

/// Gone, or a zombie nobody has reaped yet.
fn alive(pid: &str) -> bool {
    match fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

#[test]
fn a_setsid_grandchild_holding_stdout_does_not_outlast_the_timeout() {
    let p = TestProject::new();
    // The command hangs too: the timeout is what ends it.
    project(&p, 3, &format!("{STRAY} exec sleep 60"), 2);
    let _stray = Stray(p.path("config/stray.pid"));
    let (o, took) = gate(&p, Duration::from_secs(9));
    let o = o.unwrap_or_else(|| panic!("still running after {took:?}"));
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("did not finish within 2 s"), "{}", o.stderr);
    assert!(
        o.stderr.contains("left its process group (setsid)"),
        "{}",
        o.stderr
    );
    assert!(took >= Duration::from_secs(2), "{took:?}");
}

#[test]
fn a_setsid_grandchild_holding_unread_stdin_does_not_outlast_the_timeout() {
    let p = TestProject::new();
    // 3,000 queries: ~200 KB of input, more than a pipe holds, so writing
    // it blocks while the stray holds stdin without reading.
    project(
        &p,
        3000,
        r#"exec 3<&0; setsid sh -c 'echo $$ > stray.pid; exec sleep 60 <&3 >/dev/null 2>&1' & exec 3<&-; exec sleep 60"#,
        2,
    );
    let _stray = Stray(p.path("config/stray.pid"));
    let (o, took) = gate(&p, Duration::from_secs(9));
    let o = o.unwrap_or_else(|| panic!("still running after {took:?}"));
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("did not finish within 2 s"), "{}", o.stderr);
}

#[test]
fn a_background_child_left_in_the_group_does_not_hold_the_result() {
    let p = TestProject::new();
    // Answers every query, exits 0, and leaves a child holding stdout
    // (and stderr) for 30 s. The timeout is 8 s: waiting for the pipe
    // would end in "did not finish".
    project(&p, 3, &format!("{ANSWER}; sleep 30 & echo $! > bg.pid"), 8);
    let (o, took) = gate(&p, Duration::from_secs(20));
    let o = o.unwrap_or_else(|| panic!("still running after {took:?}"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!((recall(&p) - 2.0 / 3.0).abs() < 1e-12, "{}", recall(&p));
    // The group was killed once its leader had exited.
    let pid = p.read("config/bg.pid");
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(&pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(&pid), "background child {pid} survived");
}

/// A command that exits at once, a grandchild that left its group keeping
/// stdout: the command's own output is the result.
#[test]
fn a_setsid_grandchild_of_a_finished_command_does_not_hold_the_result() {
    let p = TestProject::new();
    project(&p, 3, &format!("{ANSWER}; {STRAY}"), 20);
    let _stray = Stray(p.path("config/stray.pid"));
    let (o, took) = gate(&p, Duration::from_secs(15));
    let o = o.unwrap_or_else(|| panic!("still running after {took:?}"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!((recall(&p) - 2.0 / 3.0).abs() < 1e-12, "{}", recall(&p));
}

/// A stderr flood without a newline: rgate's peak memory (VmHWM, read
/// while the command still runs) stays far below the flood, and the error
/// shows exactly the last 2,048 bytes.
#[cfg(target_os = "linux")]
#[test]
fn a_stderr_flood_without_a_newline_keeps_only_a_tail() {
    let p = TestProject::new();
    project(
        &p,
        3,
        r#"cat > /dev/null; head -c 150000000 /dev/zero | tr '\0' x >&2; : > flooded; sleep 1; printf 'the end' >&2; exit 3"#,
        60,
    );
    let mut c = p.command();
    c.args(["--config", p.path("config/rgate.yaml").to_str().unwrap()])
        .args(["baseline", "update", "--note", "x"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(p.path("rgate.stderr")).unwrap());
    let mut child = c.spawn().unwrap();
    let flooded = p.path("config/flooded");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !flooded.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(flooded.exists(), "the flood did not end");
    let status = fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let hwm_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM in {status}"));
    let code = child.wait().unwrap().code();
    // 150 MB went by; rgate alone is ~20 MB.
    assert!(hwm_kb < 80_000, "peak RSS {hwm_kb} kB");
    assert_eq!(code, Some(2));
    let err = p.read("rgate.stderr");
    let tail = format!("its stderr ends with:\n{}the end\nhint:", "x".repeat(2048 - 7));
    assert!(err.contains(&tail), "{}", &err[..err.len().min(3000)]);
}

/// `rgate gold suggest <sheet> --timeout-s <t> -- sh -c <script>`
/// in `p`, under the watchdog.
fn suggest(p: &TestProject, script: &str, timeout_s: u32, limit: Duration) -> (Option<Out>, Duration) {
    let mut c = p.command();
    c.args(["gold", "suggest", "sheet.jsonl", "--timeout-s"])
        .arg(timeout_s.to_string())
        .args(["--", "sh", "-c", script]);
    let t = Instant::now();
    let o = within(c, limit, p.root());
    (o, t.elapsed())
}

const SHEET: &str = "{\"query_id\":\"q1\",\"query\":\"text of q1\",\"stratum\":\"s\",\"chunk_id\":\"c1\",\"text\":\"chunk c1\",\"grade\":null,\"source\":null,\"labeler\":null,\"verified\":false}\n";

/// Grades every row it is asked about 1.
const GRADE: &str = r#"sed -E 's/.*"query_id":"([^"]*)".*"chunk_id":"([^"]*)".*/{"query_id":"\1","chunk_id":"\2","grade":1}/'"#;

#[test]
fn suggest_ends_at_its_timeout_whatever_its_grandchildren_do() {
    let p = TestProject::new().with_file("sheet.jsonl", SHEET);
    let _stray = Stray(p.path("stray.pid"));
    let (o, took) = suggest(&p, &format!("{STRAY} exec sleep 60"), 2, Duration::from_secs(9));
    let o = o.unwrap_or_else(|| panic!("still running after {took:?}"));
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("did not finish within 2 s"), "{}", o.stderr);
    assert_eq!(p.read("sheet.jsonl"), SHEET);
}

#[test]
fn suggest_is_not_held_by_a_background_child() {
    let p = TestProject::new().with_file("sheet.jsonl", SHEET);
    let (o, took) = suggest(&p, &format!("{GRADE}; sleep 30 &"), 8, Duration::from_secs(20));
    let o = o.unwrap_or_else(|| panic!("still running after {took:?}"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let row: serde_json::Value = serde_json::from_str(&p.read("sheet.jsonl")).unwrap();
    assert_eq!(
        (row["grade"].clone(), row["source"].clone()),
        (1.into(), "model".into())
    );
}

/// An answer line with no end is refused after 64 KiB, not read whole.
#[test]
fn suggest_refuses_an_endless_output_line() {
    let p = TestProject::new().with_file("sheet.jsonl", SHEET);
    let (o, took) = suggest(
        &p,
        r#"cat > /dev/null; head -c 1000000 /dev/zero | tr '\0' x"#,
        30,
        Duration::from_secs(20),
    );
    let o = o.unwrap_or_else(|| panic!("still running after {took:?}"));
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("wrote a line 1 on stdout longer than 65536 bytes"),
        "{}",
        o.stderr
    );
    assert_eq!(p.read("sheet.jsonl"), SHEET);
}

/// The names the output file had before (`rgate-<name>-<pid>.jsonl` in
/// TMPDIR) planted ahead, a symlink to a victim for the gate and a plain
/// file for suggest: rgate's pid is known ahead because a shell plants
/// them and then `exec`s rgate. Neither is written, followed or removed;
/// the file rgate uses is its own, mode 0600, and gone afterwards.
#[test]
fn a_planted_temp_file_is_never_written() {
    let p = TestProject::new();
    let tmp = p.path("tmp");
    fs::create_dir_all(&tmp).unwrap();
    p.write("victim", "precious\n");
    project(&p, 3, &format!("ls -l \"$TMPDIR\" > listing; {ANSWER}"), 20);
    p.write("sheet.jsonl", SHEET);
    let plant = r#"ln -s "$VICTIM" "$TMPDIR/rgate-cmd-$$.jsonl" && echo planted > "$TMPDIR/rgate-suggest-$$.jsonl" && exec "$@""#;
    let rgate = env!("CARGO_BIN_EXE_rgate");
    let config = p.path("config/rgate.yaml");
    let runs: [Vec<&str>; 2] = [
        vec![
            "--config",
            config.to_str().unwrap(),
            "baseline",
            "update",
            "--note",
            "x",
        ],
        vec!["gold", "suggest", "sheet.jsonl", "--", "sh", "-c", GRADE],
    ];
    for args in runs {
        let mut c = Command::new("sh");
        common::clean_env(&mut c);
        c.current_dir(p.root())
            .env("TMPDIR", &tmp)
            .env("VICTIM", p.path("victim"))
            .args(["-c", plant, "sh", rgate])
            .args(&args);
        let o = within(c, Duration::from_secs(20), p.root()).expect("rgate hung");
        assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
        assert_eq!(p.read("victim"), "precious\n");
        // What is left in TMPDIR is what was planted, as planted.
        let mut left: Vec<String> = fs::read_dir(&tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left.len(), 2, "{left:?}");
        for name in left {
            let path = tmp.join(&name);
            if name.starts_with("rgate-cmd-") {
                assert_eq!(fs::read_link(&path).unwrap(), p.path("victim"));
            } else {
                assert!(name.starts_with("rgate-suggest-"), "{name}");
                assert_eq!(fs::read_to_string(&path).unwrap(), "planted\n");
            }
            fs::remove_file(path).unwrap();
        }
    }
    assert!((recall(&p) - 2.0 / 3.0).abs() < 1e-12, "{}", recall(&p));
    let row: serde_json::Value = serde_json::from_str(&p.read("sheet.jsonl")).unwrap();
    assert_eq!(row["grade"], 1);
    // While the retriever ran, its output file was the one other entry:
    // a random name, readable and writable by rgate alone.
    let listing = p.read("config/listing");
    let own: Vec<&str> = listing
        .lines()
        .filter(|l| l.contains("rgate-cmd-") && !l.contains(" -> "))
        .collect();
    assert_eq!(own.len(), 1, "{listing}");
    assert!(own[0].starts_with("-rw------- "), "{listing}");
}
