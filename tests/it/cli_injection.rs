//! Text from a gold set reaches every report: hostile ids, texts and
//! stratum names must not drive a terminal, forge GitHub workflow commands,
//! inject Markdown or HTML, or break the JUnit XML (issue 10, item 2).
//!
//! A line is a workflow command for the Actions runner when it starts with
//! `::` after leading white space, or holds `##[` anywhere
//! (actions/runner, `ActionCommand.TryParseV2` and `TryParse`).

use crate::common;

use std::fs;

use common::{run, TestProject};
use serde_json::json;

const FORGED_TEXT: &str =
    "hello\n::error::forged ##[warning]legacy <script>alert(1)</script> [x](http://e) \x1b[2J";
/// A bell inside, a table pipe and emphasis: a stratum name is free text.
const STRATUM: &str = "how\x07to|*x*";
const IDS: [&str; 5] = [
    "q\x1b[2J",
    "::error::id",
    "<script>",
    "[x](http://e)",
    "q\u{202E}rtl",
];

/// Ten queries in two strata; the five hostile ones are hit by `base` and
/// missed by `cur`, and `cur` leaves out one query with an escape in its id.
fn project() -> TestProject {
    let mut queries = Vec::new();
    let mut base = String::new();
    let mut cur = String::new();
    for i in 0..10 {
        let id = match IDS.get(i) {
            Some(id) => id.to_string(),
            None if i < 9 => format!("q{i}"),
            // The query `cur` leaves out: a terminal title escape in its id.
            None => "q9\x1b]0;pwned\x07".to_string(),
        };
        let stratum = if i % 2 == 0 { STRATUM } else { "s2" };
        queries
            .push(json!({"id": id, "text": FORGED_TEXT, "stratum": stratum, "relevant": [format!("d{i}")]}));
        let hit = json!({"query_id": id, "results": [{"id": format!("d{i}"), "score": 1.0}]});
        base += &format!("{hit}\n");
        if i == 9 {
            continue;
        }
        let doc = if i < 5 {
            "other".to_string()
        } else {
            format!("d{i}")
        };
        cur += &format!(
            "{}\n",
            json!({"query_id": id, "results": [{"id": doc, "score": 1.0}]})
        );
    }
    let gold = json!({"version": 1, "queries": queries});
    TestProject::new()
        .with_file("gold.json", gold.to_string())
        .with_file("base.jsonl", base)
        .with_file("cur.jsonl", cur)
        .with_file(
            "rgate.yaml",
            "gold: gold.json\nbaselines: baselines\nmetrics: [recall@10]\nretrievers:\n  - name: r\n    run: cur.jsonl\ngate:\n  resamples: 1000\n  rules:\n    - metric: recall@10\n      max_drop: 0.01\n      strata: all\n",
        )
        .with_args(&["--config", "rgate.yaml"])
        .with_env("SOURCE_DATE_EPOCH", "1795996800")
}

/// No raw control or bidi character (bar the report's own line breaks and,
/// where `tabs`, its tab separators), and no line a runner reads as a command.
fn assert_neutral(what: &str, text: &str, tabs: bool) {
    for c in text.chars() {
        let allowed = c == '\n' || (tabs && c == '\t');
        assert!(
            allowed || !rgate::escape::is_hostile(c),
            "{what}: raw {c:?} in\n{text}"
        );
    }
    for line in text.lines() {
        let t = line.trim_start();
        assert!(
            !t.starts_with("::") && !line.contains("##["),
            "{what}: command line {line:?}"
        );
    }
}

fn recorded() -> TestProject {
    let dir = project();
    let o = dir.run(&["baseline", "update", "--run", "r=base.jsonl"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    dir
}

#[test]
fn gate_table_shows_escapes() {
    let dir = recorded();
    let o = dir.run(&["gate"]);
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    assert_neutral("table", &o.stdout, false);
    assert_neutral("table stderr", &o.stderr, false);
    // The lost queries are listed, their escapes visible.
    assert!(o.stdout.contains("q\\u{1b}[2J"), "{}", o.stdout);
    assert!(o.stdout.contains("\"hello\\n::error::forged"), "{}", o.stdout);
    assert!(o.stdout.contains("how\\u{7}to|*x*"), "{}", o.stdout);
    assert!(o.stdout.contains("q\\u{202e}rtl"), "{}", o.stdout);
    // The absent query is named in the warning, escaped.
    assert!(o.stdout.contains("q9\\u{1b}]0;pwned\\u{7}"), "{}", o.stdout);
}

#[test]
fn gate_markdown_is_text_not_markup() {
    let dir = recorded();
    let o = dir.run(&["gate", "--format", "markdown"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_neutral("markdown", &o.stdout, false);
    let md = &o.stdout;
    // Raw markup only inside code spans, where it is text.
    let outside = md.replace("`<script>`", "").replace("`[x](http://e)`", "");
    assert!(!outside.contains("<script"), "{md}");
    assert!(!outside.contains("[x](http"), "{md}");
    // The query's text, clipped in the lost-query table, escaped.
    assert!(md.contains("&lt;script&gt;alert(1)&lt;/s…"), "{md}");
    assert!(md.contains("\\[x\\](http://e)"), "{md}");
    // The stratum's pipe cannot split a table cell, nor its stars emphasise.
    assert!(md.contains("| recall@10 | how\\u{7}to\\|\\*x\\* |"), "{md}");
    // Ids in the lost-query table are escaped text, where nothing is markup.
    assert!(
        md.contains("\n| &lt;script&gt; | how\\u{7}to\\|\\*x\\* |"),
        "{md}"
    );
    assert!(md.contains("\n| \\[x\\](http://e) | s2 |"), "{md}");
}

#[test]
fn gate_junit_is_well_formed() {
    let dir = recorded();
    let o = dir.run(&["gate", "--format", "junit"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_neutral("junit", &o.stdout, false);
    let doc = roxmltree::Document::parse(&o.stdout).unwrap_or_else(|e| panic!("{e}\n{}", o.stdout));
    let names: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .filter_map(|n| n.attribute("name"))
        .collect();
    assert!(names.contains(&"recall@10 [how\\u{7}to|*x*]"), "{names:?}");
    // CSV and JUnit carry no warnings, so they go to stderr, escaped.
    assert_neutral("junit stderr", &o.stderr, false);
    assert!(o.stderr.contains("q9\\u{1b}]0;pwned\\u{7}"), "{}", o.stderr);
}

#[test]
fn gate_csv_and_json_keep_values_safe() {
    let dir = recorded();
    let o = dir.run(&["gate", "--format", "csv"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_neutral("csv", &o.stdout, false);
    assert!(o.stdout.contains(",how\\u{7}to|*x*,"), "{}", o.stdout);
    let o = dir.run(&["gate", "--format", "json"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_neutral("json", &o.stdout, false);
    // JSON is data: the values come back exactly.
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let flips = v["retrievers"][0]["flips"].as_array().unwrap();
    let ids: Vec<&str> = flips.iter().map(|f| f["query_id"].as_str().unwrap()).collect();
    for id in IDS {
        assert!(ids.contains(&id), "{id:?} in {ids:?}");
    }
    assert_eq!(flips[0]["text"], FORGED_TEXT);
}

#[test]
fn report_dir_files_are_neutral() {
    let dir = recorded();
    let o = dir.run(&["gate", "--report-dir", "out"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let read = |f: &str| fs::read_to_string(dir.root().join("out").join(f)).unwrap();
    assert_neutral("report.md", &read("report.md"), false);
    assert_neutral("report.json", &read("report.json"), false);
    roxmltree::Document::parse(&read("junit.xml")).unwrap();
}

#[test]
fn eval_per_query_in_every_format() {
    let dir = project();
    for format in ["table", "markdown", "csv", "trec", "json"] {
        let mut c = common::rgate();
        c.current_dir(dir.root()).args([
            "eval",
            "--gold",
            "gold.json",
            "--run",
            "cur.jsonl",
            "--per-query",
            "--by-stratum",
            "--format",
            format,
        ]);
        let o = run(c);
        assert_eq!(o.code, 0, "{format}: {}", o.stderr);
        assert_neutral(format, &o.stdout, format == "trec");
        // The absent query's warning goes to stderr, escaped.
        assert_neutral("eval stderr", &o.stderr, false);
        assert!(o.stderr.contains("q9\\u{1b}]0;pwned\\u{7}"), "{}", o.stderr);
    }
    let mut c = common::rgate();
    c.current_dir(dir.root()).args([
        "eval",
        "--gold",
        "gold.json",
        "--run",
        "cur.jsonl",
        "--per-query",
        "--format",
        "trec",
    ]);
    let o = run(c);
    assert!(
        o.stdout.contains("recall@10\t\\u{3a}:error::id\t0.0000\n"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("recall@10\tq\\u{1b}[2J\t0.0000\n"),
        "{}",
        o.stdout
    );
}

#[test]
fn errors_quoting_a_value_are_neutral() {
    let dir = tempfile::tempdir().unwrap();
    // A query id with white space is refused; the error quotes it.
    fs::write(
        dir.path().join("gold.json"),
        json!({"version": 1, "queries": [{"id": "a\n::error::forged", "relevant": ["d"]}]}).to_string(),
    )
    .unwrap();
    fs::write(dir.path().join("run.jsonl"), "").unwrap();
    let mut c = common::rgate();
    c.current_dir(dir.path())
        .args(["eval", "--gold", "gold.json", "--run", "run.jsonl"]);
    let o = run(c);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert_neutral("error", &o.stderr, false);
    // The quoted value is an excerpt (diag::excerpt): its line break is
    // shown as `\n`, so no line of the message starts with the forgery.
    assert!(o.stderr.contains("`a\\n::error::forged`"), "{}", o.stderr);
    assert!(
        !o.stderr.lines().any(|l| l.trim_start().starts_with("::")),
        "{}",
        o.stderr
    );
}

#[test]
fn notes_and_history_are_neutral() {
    let dir = project();
    let note = "fine\n::error::note <b>x</b> \x1b[2J";
    let o = dir.run(&["baseline", "update", "--run", "r=base.jsonl", "--note", note]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    for args in [
        &["baseline", "show", "r"][..],
        &["baseline", "history", "r"],
        &["--format", "markdown", "baseline", "history", "r"],
        &["--format", "csv", "baseline", "history", "r"],
        &["--format", "json", "baseline", "history", "r"],
    ] {
        let o = dir.run(args);
        assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
        assert_neutral(&format!("{args:?}"), &o.stdout, false);
    }
    let o = dir.run(&["baseline", "history", "r"]);
    assert!(
        o.stdout.contains("fine\\n::error::note <b>x</b> \\u{1b}[2J"),
        "{}",
        o.stdout
    );
    let o = dir.run(&["--format", "markdown", "baseline", "history", "r"]);
    assert!(
        o.stdout.contains("fine\\n::error::note &lt;b&gt;x&lt;/b&gt;"),
        "{}",
        o.stdout
    );
    let o = dir.run(&["gate", "--run", "r=base.jsonl", "--format", "markdown"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_neutral("gate markdown", &o.stdout, false);
    // A passing retriever is one line in the PR comment; its baseline's note
    // shows in the terminal report and in a failing retriever's fold.
    let o = dir.run(&["gate", "--run", "r=base.jsonl"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_neutral("gate terminal", &o.stdout, false);
    assert!(
        o.stdout.contains("(fine\\n::error::note <b>x</b> \\u{1b}[2J"),
        "{}",
        o.stdout
    );
    let o = dir.run(&["gate", "--run", "r=cur.jsonl", "--format", "markdown"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_neutral("gate markdown, failing", &o.stdout, false);
    assert!(
        o.stdout.contains("(fine\\n::error::note &lt;b&gt;x&lt;/b&gt;"),
        "{}",
        o.stdout
    );
}
