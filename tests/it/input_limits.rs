//! Issue 25 items 7 and 10: every input rgate reads is a regular file of a
//! bounded size (or, read line by line, of bounded lines); FIFOs and
//! devices are refused at once instead of blocking or never ending; and
//! the messages for a bad qrels grade, a duplicate key and a duplicate
//! corpus id say what is wrong, where.
//!
//! The hang cases run the built binary as a child with a deadline: a FIFO
//! with no writer used to block rgate forever, so a test that simply waited
//! would hang with it.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::common::TestProject;

/// The limits of src/input.rs, restated (the README documents them).
const MIB: u64 = 1 << 20;
const CONFIG_LIMIT: u64 = 16 * MIB;
const GOLD_LIMIT: u64 = 512 * MIB;
const SHEET_LIMIT: u64 = 1024 * MIB;
const LOG_LIMIT: u64 = 1024 * MIB;
const LINE_LIMIT: usize = 4 * MIB as usize;

const GOLD: &str =
    "version: 1\nqueries:\n  - id: q1\n    text: how to x\n    stratum: s\n    relevant: {a: 1}\n";
const SHEET: &str = "{\"query_id\":\"q1\",\"query\":\"how to x\",\"stratum\":\"s\",\"chunk_id\":\"b\",\"text\":\"bbb\",\"grade\":1,\"source\":\"person\",\"labeler\":\"ana\",\"verified\":true}\n";

fn project() -> TestProject {
    TestProject::new()
        .with_file("g.yaml", GOLD)
        .with_file("run.txt", "q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\n")
        .with_file(
            "corpus.jsonl",
            "{\"id\":\"a\",\"text\":\"aaa\"}\n{\"id\":\"b\",\"text\":\"bbb\"}\n",
        )
        .with_file("log.jsonl", "{\"text\":\"how to x\",\"stratum\":\"s\"}\n")
        .with_file("sheet.jsonl", SHEET)
        .with_file(
            "c.yaml",
            "gold: g.yaml\nmetrics: [mrr]\nretrievers:\n  - name: a\n    run: run.txt\n",
        )
}

/// Every input rgate reads, as the arguments that hand it `path`.
fn readers(path: &str) -> Vec<(&'static str, Vec<String>)> {
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        ("gold set", s(&["eval", "--gold", path, "--run", "run.txt"])),
        ("config", s(&["--config", path, "gate"])),
        ("run", s(&["eval", "--gold", "g.yaml", "--run", path])),
        (
            "chunk map",
            s(&["eval", "--gold", "g.yaml", "--run", "run.txt", "--chunks", path]),
        ),
        (
            "strata file",
            s(&["eval", "--gold", "q.txt", "--run", "run.txt", "--strata", path]),
        ),
        (
            "corpus",
            s(&[
                "gold",
                "pool",
                "--queries",
                "g.yaml",
                "--run",
                "run.txt",
                "--depth",
                "5",
                "--corpus",
                path,
                "--output",
                "out.jsonl",
            ]),
        ),
        ("query log", s(&["gold", "sample", "--log", path, "--total", "1"])),
        (
            "labeling sheet",
            s(&["gold", "import", path, "--into", "into.yaml"]),
        ),
        (
            "gold import --into",
            s(&["gold", "import", "sheet.jsonl", "--into", path]),
        ),
    ]
}

/// Waits for `child` at most `secs`; kills it and fails the test if it is
/// still running then. Returns the exit code and stderr.
fn finish_within(mut child: Child, secs: u64, what: &str) -> (i32, String) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            return (status.code().unwrap_or(-1), err);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: rgate was still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn spawn(p: &TestProject, args: &[String]) -> Child {
    p.command()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(ok.success(), "mkfifo {}", path.display());
}

#[test]
fn a_fifo_with_no_writer_is_refused_at_once_as_any_input() {
    let p = project()
        .with_file("q.txt", "q1 0 a 1\n")
        .with_file("into.yaml", GOLD);
    mkfifo(&p.path("pipe"));
    for (what, args) in readers("pipe") {
        let (code, err) = finish_within(spawn(&p, &args), 10, what);
        assert_eq!(code, 2, "{what}: {err}");
        assert!(
            err.contains("pipe: not a regular file but a named pipe (FIFO)"),
            "{what}: {err}"
        );
    }
}

#[test]
fn an_endless_device_is_refused_at_once_as_any_input() {
    let p = project()
        .with_file("q.txt", "q1 0 a 1\n")
        .with_file("into.yaml", GOLD);
    for (what, args) in readers("/dev/zero") {
        let (code, err) = finish_within(spawn(&p, &args), 10, what);
        assert_eq!(code, 2, "{what}: {err}");
        assert!(
            err.contains("/dev/zero: not a regular file but a character device, which may never end"),
            "{what}: {err}"
        );
    }
    // A directory is no input either.
    let o = p.run(&["eval", "--gold", ".", "--run", "run.txt"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains(": not a regular file but a directory"),
        "{}",
        o.stderr
    );
}

/// A file one byte over its limit (sparse: no disk, no time) is refused by
/// its size, before a byte of it is read.
#[test]
fn a_file_over_its_size_limit_is_refused_by_its_size() {
    let p = project().with_file("into.yaml", GOLD);
    let sparse = |rel: &str, len: u64| {
        let f = std::fs::File::create(p.path(rel)).unwrap();
        f.set_len(len).unwrap();
    };
    let cases: [(&str, u64, &str, Vec<&str>); 5] = [
        (
            "big.yaml",
            GOLD_LIMIT,
            "gold set",
            vec!["eval", "--gold", "big.yaml", "--run", "run.txt"],
        ),
        (
            "big-config.yaml",
            CONFIG_LIMIT,
            "config",
            vec!["--config", "big-config.yaml", "gate"],
        ),
        (
            "big-sheet.jsonl",
            SHEET_LIMIT,
            "labeling sheet",
            vec!["gold", "import", "big-sheet.jsonl", "--into", "into.yaml"],
        ),
        (
            "big-log.jsonl",
            LOG_LIMIT,
            "query log",
            vec!["gold", "sample", "--log", "big-log.jsonl", "--total", "1"],
        ),
        (
            "big-into.yaml",
            GOLD_LIMIT,
            "gold set",
            vec!["gold", "import", "sheet.jsonl", "--into", "big-into.yaml"],
        ),
    ];
    for (rel, limit, what, args) in cases {
        sparse(rel, limit + 1);
        let o = p.run(&args);
        assert_eq!(o.code, 2, "{rel}: {}", o.stderr);
        let bytes = (limit + 1).to_string();
        let mut grouped = String::new();
        for (i, c) in bytes.chars().enumerate() {
            if i > 0 && (bytes.len() - i) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(c);
        }
        let limit_text = if limit >= 1024 * MIB {
            format!("{} GiB", limit / (1024 * MIB))
        } else {
            format!("{} MiB", limit / MIB)
        };
        let want = format!("{rel}: {grouped} bytes is more than the {limit_text} a {what} may be");
        assert!(o.stderr.contains(&want), "{rel}: want {want}\n{}", o.stderr);
    }
    // At the limit itself a file is read (and then refused for what it
    // holds, here NULs, not for its size).
    sparse("big-config.yaml", CONFIG_LIMIT);
    let o = p.run(&["--config", "big-config.yaml", "gate"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(!o.stderr.contains("is more than"), "{}", o.stderr);
}

/// A run is streamed whatever its size, but one line may hold at most 4
/// MiB: a line past that is refused with its line number, having read
/// little more than the limit.
#[test]
fn a_run_line_past_the_line_limit_is_refused_at_its_line() {
    let p = project();
    let ids = LINE_LIMIT / 6 + 1;
    let mut line = String::from("{\"query_id\":\"q1\",\"results\":[");
    for i in 0..ids {
        if i > 0 {
            line.push(',');
        }
        line.push_str(&format!("\"{:03}\"", i % 1000));
    }
    line.push_str("]}\n");
    assert!(line.len() > LINE_LIMIT + 2);
    p.write(
        "long.jsonl",
        format!("{{\"query_id\":\"q0\",\"results\":[\"a\"]}}\n{line}"),
    );
    let o = p.run(&["eval", "--gold", "g.yaml", "--run", "long.jsonl"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("long.jsonl:2: line longer than 4 MiB, the most a JSONL run line may hold"),
        "{}",
        o.stderr
    );
    // The same cap on a TREC line, the chunk map's lines and the corpus's.
    let endless = "x".repeat(LINE_LIMIT + 10);
    p.write("long.txt", format!("q1 Q0 a 1 2.0 t\n{endless}\n"));
    let o = p.run(&["eval", "--gold", "g.yaml", "--run", "long.txt"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("long.txt:2: line longer than 4 MiB"),
        "{}",
        o.stderr
    );
    p.write("chunks.jsonl", format!("{endless}\n"));
    let o = p.run(&[
        "eval",
        "--gold",
        "g.yaml",
        "--run",
        "run.txt",
        "--chunks",
        "chunks.jsonl",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("chunks.jsonl:1: line longer than 4 MiB"),
        "{}",
        o.stderr
    );
    p.write(
        "corpus.jsonl",
        format!("{{\"id\":\"a\",\"text\":\"aaa\"}}\n{endless}"),
    );
    let o = p.run(&[
        "gold",
        "pool",
        "--queries",
        "g.yaml",
        "--run",
        "run.txt",
        "--depth",
        "5",
        "--corpus",
        "corpus.jsonl",
        "--output",
        "out.jsonl",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("corpus.jsonl:2: line longer than 4 MiB"),
        "{}",
        o.stderr
    );
}

#[test]
fn a_key_given_twice_in_a_run_is_refused_at_its_line() {
    let p = project();
    let cases = [
        (
            "twice.jsonl",
            "{\"query_id\":\"q0\",\"results\":[\"b\"]}\n{\"query_id\":\"q1\",\"results\":[\"b\"],\"results\":[\"a\"]}\n",
            "twice.jsonl:2: not a JSON object: the key `results` is given twice in one object",
        ),
        (
            "item.jsonl",
            "{\"query_id\":\"q1\",\"results\":[{\"id\":\"b\",\"id\":\"a\"}]}\n",
            "item.jsonl:1: not a JSON object: the key `id` is given twice in one object",
        ),
        (
            "twice.json",
            "{\n  \"q1\": [\"b\"],\n  \"q1\": [\"a\"]\n}\n",
            "twice.json:3: query `q1` appears again (first at line 2)",
        ),
        (
            // Lines counted across entries that span lines, and blank ones.
            "spread.json",
            "{\n  \"q1\": [\n    \"b\"\n  ],\n\n  \"q2\": [\"b\"],\n  \"q2\": [\"a\"]\n}\n",
            "spread.json:7: query `q2` appears again (first at line 6)",
        ),
    ];
    for (rel, text, want) in cases {
        p.write(rel, text);
        let o = p.run(&["eval", "--gold", "g.yaml", "--run", rel]);
        assert_eq!(o.code, 2, "{rel}: {}", o.stderr);
        assert!(o.stderr.contains(want), "{rel}: want {want}\n{}", o.stderr);
    }
    // A JSON run still reads, its errors at their line.
    p.write("ok.json", "{\n  \"q1\": [\"b\", \"a\"]\n}\n");
    let o = p.run(&[
        "eval", "--gold", "g.yaml", "--run", "ok.json", "-m", "mrr", "--format", "csv",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("all,1,0.5000"), "{}", o.stdout);
    p.write("bad.json", "{\n  \"q1\": [\"b\"],\n  \"q2\": [\n    7\n  ]\n}\n");
    let o = p.run(&["eval", "--gold", "g.yaml", "--run", "bad.json"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("bad.json:3: query `q2`, result 1: expected an id or an object"),
        "{}",
        o.stderr
    );
}

#[test]
fn a_corpus_id_given_twice_is_refused_at_its_line() {
    let p = project().with_file(
        "corpus.jsonl",
        "{\"id\":\"a\",\"text\":\"aaa\"}\n{\"id\":\"z\",\"text\":\"zzz\"}\n{\"id\":\"a\",\"text\":\"other\"}\n",
    );
    let o = p.run(&[
        "gold",
        "pool",
        "--queries",
        "g.yaml",
        "--run",
        "run.txt",
        "--depth",
        "5",
        "--corpus",
        "corpus.jsonl",
        "--output",
        "out.jsonl",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("corpus.jsonl:3: corpus id `a` appears again (first at line 1)"),
        "{}",
        o.stderr
    );
    assert!(!p.path("out.jsonl").exists());
    // An id no run retrieved counts too: the corpus is malformed either way.
    p.write(
        "corpus.jsonl",
        "{\"id\":\"a\",\"text\":\"aaa\"}\n{\"id\":\"z\",\"text\":\"zzz\"}\n{\"id\":\"z\",\"text\":\"zz\"}\n",
    );
    let o = p.run(&[
        "gold",
        "pool",
        "--queries",
        "g.yaml",
        "--run",
        "run.txt",
        "--depth",
        "5",
        "--corpus",
        "corpus.jsonl",
        "--output",
        "out.jsonl",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("corpus.jsonl:3: corpus id `z` appears again (first at line 2)"),
        "{}",
        o.stderr
    );
}

#[test]
fn messages_say_what_is_wrong_at_the_right_line() {
    let p = project();
    // A one-line qrels file with a bad grade is qrels, not failed YAML.
    for (text, want) in [
        ("q1 0 a x\n", "q.txt:1: grade `x` is not an integer"),
        ("q1 0 a 1e3\n", "q.txt:1: grade `1e3` is a decimal number"),
        (
            "q1 0 a 99999999999\n",
            "q.txt:1: grade `99999999999` is out of range",
        ),
        (
            "q1 0 a\n",
            "q.txt:1: expected 4 fields `qid iter docid grade`, found 3",
        ),
    ] {
        p.write("q.txt", text);
        let o = p.run(&["eval", "--gold", "q.txt", "--run", "run.txt"]);
        assert_eq!(o.code, 2, "{text}: {}", o.stderr);
        assert!(o.stderr.contains(want), "{text}: want {want}\n{}", o.stderr);
    }
    // A whole grade written as a decimal number: said so, not "1000 is not
    // an integer".
    p.write(
        "g2.yaml",
        "version: 1\nqueries:\n  - id: q1\n    relevant: {a: 1e3}\n",
    );
    let o = p.run(&["eval", "--gold", "g2.yaml", "--run", "run.txt"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("g2.yaml:4: invalid gold set: grade 1000.0 is written as a decimal number (as 1e3 or 1000.0 are); grades are integers: write 1000"),
        "{}",
        o.stderr
    );
    // A tiny alpha is echoed in a few characters, not 320 digits.
    let o = p.run(&[
        "compare", "--gold", "g.yaml", "run.txt", "run.txt", "--alpha", "1e-320",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("alpha 1e-320;"), "{}", o.stdout);
    assert!(o.stdout.contains("adjusted p < 1e-320."), "{}", o.stdout);
    assert!(!o.stdout.contains("0.0000000000"), "{}", o.stdout);
    // baseline_depth: -1 at its own line, saying it is negative.
    p.write(
        "c2.yaml",
        "gold: g.yaml\nmetrics: [mrr]\n# how deep\nbaseline_depth: -1\nretrievers:\n  - name: a\n    run: run.txt\n",
    );
    let o = p.run(&["--config", "c2.yaml", "gate"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("c2.yaml:4: invalid config: baseline_depth -1 is negative"),
        "{}",
        o.stderr
    );
}

/// The baseline store's own files and the GitHub event payload are inputs
/// too: a FIFO planted as a baseline or a history (in a pull request's
/// tree), or named by `GITHUB_EVENT_PATH`, blocked rgate forever.
#[test]
fn a_fifo_in_the_baseline_store_or_as_the_event_payload_does_not_block() {
    let p = project();
    std::fs::create_dir_all(p.path("baselines")).unwrap();
    mkfifo(&p.path("baselines/a.json"));
    let args = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let (code, err) = finish_within(spawn(&p, &args(&["--config", "c.yaml", "gate"])), 10, "baseline");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("baselines/a.json: not a regular file but a named pipe (FIFO)"),
        "{err}"
    );
    std::fs::remove_file(p.path("baselines/a.json")).unwrap();
    mkfifo(&p.path("baselines/a.history.jsonl"));
    let (code, err) = finish_within(
        spawn(&p, &args(&["--config", "c.yaml", "baseline", "history", "a"])),
        10,
        "history",
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("baselines/a.history.jsonl: not a regular file but a named pipe (FIFO)"),
        "{err}"
    );
    std::fs::remove_file(p.path("baselines/a.history.jsonl")).unwrap();
    // The event payload is read for the commit to record; a FIFO there is
    // passed over for GITHUB_SHA.
    mkfifo(&p.path("event.json"));
    let child = p
        .command()
        .args(["--config", "c.yaml", "baseline", "update", "a", "--note", "first"])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", p.path("event.json"))
        .env("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (code, err) = finish_within(child, 10, "event payload");
    assert_eq!(code, 0, "{err}");
    let history = std::fs::read_to_string(p.path("baselines/a.history.jsonl")).unwrap();
    assert!(
        history.contains("0123456789abcdef0123456789abcdef01234567"),
        "{history}"
    );
}
