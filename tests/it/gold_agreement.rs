//! Issue 27 items 5 and 8: `gold pool --holes` against a hand-computed
//! set (and through the command the gate's judged@k warning prints), and
//! `gold suggest --command` keeping rgate's own flags.

use crate::common;

use std::collections::BTreeSet;

use common::TestProject;
use serde_json::{json, Value};

// ---- gold pool --holes ------------------------------------------------------

/// q1: labels a (1), b (0: judged not relevant), n (-1: pooled, not
/// judged). q2: x. q3: one span of d.md, [0, 100).
const HOLES_GOLD: &str = "version: 1\nqueries:\n  - id: q1\n    stratum: s\n    relevant: {a: 1, b: 0, n: -1}\n  - id: q2\n    relevant: {x: 2}\n  - id: q3\n    relevant:\n      - {doc: d.md, start: 0, end: 100, grade: 1}\n";

fn holes_project() -> TestProject {
    TestProject::new()
        .with_file("gold.yaml", HOLES_GOLD)
        .with_file(
            "r1.jsonl",
            concat!(
                "{\"query_id\": \"q1\", \"results\": [\"a\", \"c\", \"n\", \"d\"]}\n",
                "{\"query_id\": \"q2\", \"results\": [\"y\", \"x\", \"z\"]}\n",
                "{\"query_id\": \"q3\", \"results\": [{\"id\": \"s1\", \"doc\": \"d.md\", \"start\": 0, \"end\": 80},",
                " {\"id\": \"s2\", \"doc\": \"d.md\", \"start\": 90, \"end\": 200}, {\"id\": \"s3\", \"doc\": \"e.md\", \"start\": 0, \"end\": 50}]}\n",
                "{\"query_id\": \"q9\", \"results\": [\"k\"]}\n",
            ),
        )
        .with_file(
            "r2.jsonl",
            concat!(
                "{\"query_id\": \"q1\", \"results\": [\"b\", \"e\", \"c\", \"f\"]}\n",
                "{\"query_id\": \"q2\", \"results\": [\"x\", \"w\"]}\n",
                "{\"query_id\": \"q3\", \"results\": [{\"id\": \"s1\", \"doc\": \"d.md\", \"start\": 0, \"end\": 80}]}\n",
            ),
        )
}

fn pairs(sheet: &str) -> BTreeSet<(String, String)> {
    sheet
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["grade"], Value::Null, "a hole has no grade: {l}");
            (
                v["query_id"].as_str().unwrap().to_string(),
                v["chunk_id"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn set(items: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    items
        .iter()
        .map(|(q, c)| (q.to_string(), c.to_string()))
        .collect()
}

#[test]
fn holes_are_exactly_the_top_k_chunks_without_a_label() {
    let p = holes_project();
    let o = p.run(&[
        "gold",
        "pool",
        "--holes",
        "--gold",
        "gold.yaml",
        "--run",
        "r1.jsonl",
        "--run",
        "r2.jsonl",
        "--depth",
        "3",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // By hand, top 3 of each run:
    // q1: r1 a (labeled), c, n (-1 is not judged); r2 b (0 is judged), e, c.
    // q2: r1 y, x (labeled), z; r2 x, w.
    // q3: s1 covers 80 of the span's 100 (>= half): judged; s2 shares 10
    //     of its 110 and of the span's 100: a hole; s3 is in another doc.
    // q9 is in no gold set query list: not pooled without --queries.
    assert_eq!(
        pairs(&o.stdout),
        set(&[
            ("q1", "c"),
            ("q1", "n"),
            ("q1", "e"),
            ("q2", "y"),
            ("q2", "z"),
            ("q2", "w"),
            ("q3", "s2"),
            ("q3", "s3")
        ])
    );
    assert!(
        o.stderr
            .contains("pooled 8 holes for 3 queries from 2 runs (depth 3)"),
        "{}",
        o.stderr
    );

    // With --queries: those queries, with the gold set's labels; q9 has
    // none, so its whole top K is holes.
    p.write("queries.jsonl", "{\"id\": \"q2\"}\n{\"id\": \"q9\"}\n");
    let o = p.run(&[
        "gold",
        "pool",
        "--holes",
        "--gold",
        "gold.yaml",
        "--queries",
        "queries.jsonl",
        "--run",
        "r1.jsonl",
        "--depth",
        "3",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(pairs(&o.stdout), set(&[("q2", "y"), ("q2", "z"), ("q9", "k")]));

    // --holes needs the gold set it finds holes in.
    let o = p.run(&["gold", "pool", "--holes", "--run", "r1.jsonl", "--depth", "3"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("--gold"), "{}", o.stderr);
}

/// The gate's judged@k warning prints the command that lists the holes;
/// run as printed, it lists exactly the chunks that made judged@3 fall.
#[test]
fn the_coverage_warning_names_the_command_that_fills_the_holes() {
    let mut gold = String::from("version: 1\nqueries:\n");
    let (mut base, mut cur) = (String::new(), String::new());
    for i in 0..6 {
        gold.push_str(&format!("  - id: q{i}\n    relevant: {{l{i}: 1}}\n"));
        base.push_str(&format!(
            "{{\"query_id\": \"q{i}\", \"results\": [\"l{i}\", \"u{i}\", \"v{i}\"]}}\n"
        ));
        // The new run moved away from the labels: only q0 keeps one.
        let top = if i == 0 { format!("l{i}") } else { format!("w{i}") };
        cur.push_str(&format!(
            "{{\"query_id\": \"q{i}\", \"results\": [\"{top}\", \"u{i}\", \"v{i}\"]}}\n"
        ));
    }
    let p = TestProject::new()
        .with_file("gold.yaml", gold)
        .with_file("base.jsonl", base)
        .with_file("cur.jsonl", cur)
        .with_file("CORPUS", "")
        .with_file(
            "rgate.yaml",
            "gold: gold.yaml\nbaselines: store\nmetrics: [hit_rate@3]\nretrievers:\n  - name: r\n    run: base.jsonl\ngate:\n  resamples: 200\n",
        )
        .with_args(&["--config", "rgate.yaml"])
        .with_env("GITHUB_SHA", "0123456789abcdef");
    let o = p.run(&["baseline", "update", "--note", "first"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = p.run(&["gate", "--run", "r=cur.jsonl"]);
    let all = format!("{}{}", o.stdout, o.stderr);
    assert!(all.contains("judged@3 fell from 0.3333 to 0.0556"), "{all}");
    let start = all
        .find("`rgate gold pool --holes")
        .unwrap_or_else(|| panic!("{all}"));
    let cmd = &all[start + 1..];
    let cmd = &cmd[..cmd.find('`').unwrap()];
    assert!(cmd.contains("--depth 3"), "{cmd}");
    assert!(cmd.contains("--run cur.jsonl"), "{cmd}");
    assert!(
        all.contains("rgate gold import holes.jsonl --into gold.yaml"),
        "{all}"
    );
    let args: Vec<&str> = cmd.split_whitespace().skip(1).collect();
    let o = p.bare(&args);
    assert_eq!(o.code, 0, "{cmd}: {}", o.stderr);
    // By hand: every top-3 chunk of cur.jsonl but l0.
    let mut want = vec![("q0".to_string(), "u0".to_string()), ("q0".into(), "v0".into())];
    for i in 1..6 {
        for c in ["w", "u", "v"] {
            want.push((format!("q{i}"), format!("{c}{i}")));
        }
    }
    assert_eq!(pairs(&p.read("holes.jsonl")), want.into_iter().collect());
}

// ---- gold suggest --command ---------------------------------------------------

/// Grades every row 1 and writes the arguments it was given to args.json.
const ARGS_JUDGE: &str = "import sys, json\njson.dump(sys.argv[1:], open('args.json', 'w'))\nfor l in sys.stdin:\n    r = json.loads(l)\n    print(json.dumps({'query_id': r['query_id'], 'chunk_id': r['chunk_id'], 'grade': 1}))\n";

fn suggest_project() -> TestProject {
    TestProject::new()
        .with_file(
            "sheet.jsonl",
            "{\"query_id\":\"q1\",\"query\":\"t\",\"stratum\":\"s\",\"chunk_id\":\"c1\",\"grade\":null,\"source\":null,\"labeler\":null,\"verified\":false}\n",
        )
        .with_file("my judge.py", ARGS_JUDGE)
}

fn labeler(p: &TestProject) -> Value {
    let row: Value = serde_json::from_str(p.read("sheet.jsonl").lines().next().unwrap()).unwrap();
    row["labeler"].clone()
}

#[test]
fn rgates_flags_after_the_command_stay_rgates() {
    // A quoted command line: its own flags go to it, rgate's after it
    // stay rgate's (before the fix, `--timeout-s 5 --name gpt` reached the
    // script and rgate's timeout was silently the default).
    let p = suggest_project();
    let o = p.run(&[
        "gold",
        "suggest",
        "sheet.jsonl",
        "--command",
        "python3 'my judge.py' --model m",
        "--timeout-s",
        "5",
        "--name",
        "gpt",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let args: Value = serde_json::from_str(&p.read("args.json")).unwrap();
    assert_eq!(args, json!(["--model", "m"]));
    assert_eq!(labeler(&p), "gpt");

    // After `--`, everything is the command's, flags included; the default
    // name is the script's file name, not the interpreter's.
    let p = suggest_project();
    let o = p.run(&[
        "gold",
        "suggest",
        "sheet.jsonl",
        "--timeout-s",
        "5",
        "--",
        "python3",
        "my judge.py",
        "--timeout-s",
        "9",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let args: Value = serde_json::from_str(&p.read("args.json")).unwrap();
    assert_eq!(args, json!(["--timeout-s", "9"]));
    assert_eq!(labeler(&p), "my judge.py");
    assert!(
        o.stderr
            .contains("my judge.py suggested grades for 1 of 1 row asked"),
        "{}",
        o.stderr
    );

    // An unclosed quote is refused before anything runs.
    let o = p.run(&[
        "gold",
        "suggest",
        "sheet.jsonl",
        "--command",
        "python3 'my judge.py",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("has an unclosed quote"), "{}", o.stderr);
    // The old form, the command's words after --command, says what to do.
    let o = p.run(&[
        "gold",
        "suggest",
        "sheet.jsonl",
        "--command",
        "python3",
        "judge.py",
        "--timeout-s",
        "5",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains(
            "error: `judge.py` follows --command `python3`, which takes the whole command as one string\nhint: quote it, --command \"python3 judge.py\", or put it last: -- python3 judge.py\n"
        ),
        "{}",
        o.stderr
    );
    // Neither form: clap says one is needed.
    let o = p.run(&["gold", "suggest", "sheet.jsonl"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
}
