//! Retrievers run as commands: success, failure, timeout (the whole
//! process group killed), and outputs of megabytes on both pipes.
#![cfg(unix)]

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::TestProject;

/// A project whose config (in `config/`) names one command retriever and
/// whose gold set has `n` queries q1..qn, each answered by d<i>.
fn project(p: &TestProject, n: usize, command: &str, timeout_s: f64) {
    p.write(
        "config/rgate.yaml",
        format!(
            "gold: gold.jsonl\nbaselines: baselines\nmetrics: [recall@10]\nretrievers:\n  - name: cmd\n    command: {command}\n    timeout_s: {timeout_s}\n"
        ),
    );
    let mut gold = String::new();
    for i in 1..=n {
        gold += &format!(
            "{{\"id\": \"q{i}\", \"text\": \"t {i}\", \"stratum\": \"s{}\", \"relevant\": [\"d{i}\"]}}\n",
            i % 2
        );
    }
    p.write("config/gold.jsonl", gold);
}

fn record(p: &TestProject) -> common::Out {
    p.run(&["baseline", "update", "--note", "x"])
}

fn recall(dir: &Path) -> f64 {
    let b: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config/baselines/cmd.json")).unwrap())
            .unwrap();
    let text = b.to_string();
    let agg = &b["aggregates"];
    agg["all"]["recall@10"]
        .as_f64()
        .or_else(|| agg[0]["means"]["recall@10"].as_f64())
        .unwrap_or_else(|| panic!("no overall recall@10 in {text}"))
}

#[test]
fn queries_in_results_out_in_the_config_directory() {
    let tmp = TestProject::new();
    let dir = tmp.root();
    // Keeps what it read (in its working directory), answers q1 and q2
    // right and q3 wrong: recall@10 = 2/3.
    let script = r#"tee seen.jsonl | sed -E 's/.*"query_id":"q([0-9]+)".*/{"query_id":"q\1","results":["d\1"]}/' | sed 's/"d3"/"x"/'"#;
    project(
        &tmp,
        3,
        &format!("[sh, -c, {}]", serde_json::to_string(script).unwrap()),
        10.0,
    );
    let o = record(&tmp);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!((recall(dir) - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(
        std::fs::read_to_string(dir.join("config/seen.jsonl")).unwrap(),
        "{\"query_id\":\"q1\",\"text\":\"t 1\",\"stratum\":\"s1\"}\n\
         {\"query_id\":\"q2\",\"text\":\"t 2\",\"stratum\":\"s0\"}\n\
         {\"query_id\":\"q3\",\"text\":\"t 3\",\"stratum\":\"s1\"}\n"
    );
}

#[test]
fn a_failing_command_is_exit_2_with_its_stderr() {
    let tmp = TestProject::new();
    project(
        &tmp,
        2,
        r#"[sh, -c, "cat > /dev/null; echo first >&2; echo 'model not found' >&2; exit 3"]"#,
        10.0,
    );
    let o = record(&tmp);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("failed (exit status: 3)"), "{}", o.stderr);
    assert!(
        o.stderr.contains("its stderr ends with:\nfirst\nmodel not found"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("hint:"), "{}", o.stderr);

    // Malformed output is an error too, with the stderr tail.
    project(
        &tmp,
        2,
        r#"[sh, -c, "cat > /dev/null; echo warming up >&2; echo not a run"]"#,
        10.0,
    );
    let o = record(&tmp);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("is not a run"), "{}", o.stderr);
    assert!(o.stderr.contains("warming up"), "{}", o.stderr);

    // A program that does not exist.
    project(&tmp, 2, "[no-such-program-rgate-test]", 10.0);
    let o = record(&tmp);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("cannot run `no-such-program-rgate-test`"),
        "{}",
        o.stderr
    );
}

/// Gone, or a zombie nobody has reaped yet: either way, killed.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
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
fn a_timeout_kills_the_command_and_its_children() {
    let tmp = TestProject::new();
    let dir = tmp.root();
    // The command starts a grandchild that holds stdout open, then waits.
    project(
        &tmp,
        2,
        r#"[sh, -c, "sleep 30 & echo $! > grandchild.pid; wait"]"#,
        1.0,
    );
    let t = Instant::now();
    let o = record(&tmp);
    let took = t.elapsed();
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(o.stderr.contains("did not finish within 1 s"), "{}", o.stderr);
    let pid: u32 = std::fs::read_to_string(dir.join("config/grandchild.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(pid), "grandchild {pid} survived the timeout");
}

#[test]
fn megabytes_on_every_pipe_do_not_deadlock() {
    let tmp = TestProject::new();
    let dir = tmp.root();
    // 5,000 queries (~300 KB on stdin, more than a pipe holds). Before
    // reading any of it the command writes ~5 MB on stderr and a ~4 MB
    // ranking for q1 whose one relevant chunk comes last; then it answers
    // every other query right. recall@10 = 4999/5000.
    let script = r#"head -c 5000000 /dev/zero | tr '\0' e >&2; awk 'BEGIN { printf "{\"query_id\":\"q1\",\"results\":["; for (i = 0; i < 400000; i++) printf "\"x%d\",", i; print "\"d1\"]}" }'; sed -E 's/.*"query_id":"q([0-9]+)".*/{"query_id":"q\1","results":["d\1"]}/' | grep -v '"q1"'"#;
    project(
        &tmp,
        5000,
        &format!("[sh, -c, {}]", serde_json::to_string(script).unwrap()),
        60.0,
    );
    let o = record(&tmp);
    assert_eq!(o.code, 0, "{}", &o.stderr[..o.stderr.len().min(2000)]);
    assert!((recall(dir) - 4999.0 / 5000.0).abs() < 1e-12, "{}", recall(dir));
}
