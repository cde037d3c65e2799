//! Issue 25, item 8: text from users' files must not run as a spreadsheet
//! formula, notify anyone from a pull-request comment, forge a CI line, or
//! hide from the reader of a terminal.
//!
//! - CSV: OWASP "CSV Injection": no cell may begin with `=`, `+`, `-`, `@`,
//!   tab or CR; rgate prefixes a `'` (numbers it writes itself, such as a
//!   delta of `-1`, stay numbers). The labeling sheet reads back what was
//!   written.
//! - Markdown: GitHub links `@name` / `@org/team` where the `@` follows no
//!   word character and is followed by a letter or digit.
//! - CI logs: a line that starts with `::` is a workflow command; a
//!   newline inside an echoed value would start one.
//! - Terminals: bidi controls and other invisible format characters are
//!   shown as `\u{..}` escapes, in reports and in the labeler.

use crate::cli_goldbuild::Tmux;
use crate::common;

use std::fs;

use common::{run, TestProject};
use serde_json::json;

const FORMULA: &str = "=cmd|' /C calc'!A0";

/// Five queries: three hostile strata, a query id that opens a formula and
/// one with a zero-width space; `base` finds every query, `cur` misses the
/// first three (a delta of -1 in each of their strata).
fn project() -> TestProject {
    let qs = [
        ("q1", "ask @ana and @org/team", FORMULA, "d1"),
        ("q2", "t2", "@org/team", "d2"),
        ("q3", "t3", "a;=1+1", "d3"),
        ("+q4", "t4", "s", "d4"),
        ("q\u{200B}5", "t5", "s", "d5"),
    ];
    let mut queries = Vec::new();
    let (mut base, mut cur) = (String::new(), String::new());
    for (i, (id, text, stratum, doc)) in qs.iter().enumerate() {
        queries.push(json!({"id": id, "text": text, "stratum": stratum, "relevant": [doc]}));
        base += &format!(
            "{}\n",
            json!({"query_id": id, "results": [{"id": doc, "score": 1.0}]})
        );
        let got = if i < 3 { "other" } else { doc };
        cur += &format!(
            "{}\n",
            json!({"query_id": id, "results": [{"id": got, "score": 1.0}]})
        );
    }
    TestProject::new()
        .with_file("gold.json", json!({"version": 1, "queries": queries}).to_string())
        .with_file("base.jsonl", &base)
        .with_file("cur.jsonl", &cur)
        .with_file("=x.jsonl", &cur)
        .with_file(
            "rgate.yaml",
            "gold: gold.json\nbaselines: baselines\nmetrics: [recall@10]\nretrievers:\n  - name: r\n    run: cur.jsonl\ngate:\n  resamples: 200\n  decision: threshold\n  rules:\n    - metric: recall@10\n      max_drop: 0.01\n      strata: all\n",
        )
        .with_args(&["--config", "rgate.yaml"])
        .with_env("SOURCE_DATE_EPOCH", "1795996800")
}

fn recorded() -> TestProject {
    let dir = project();
    let o = dir.run(&["baseline", "update", "--run", "r=base.jsonl"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    dir
}

/// Every cell of a CSV, parsed as a spreadsheet would split it.
fn cells(text: &str) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes());
    r.records()
        .map(|rec| rec.unwrap().iter().map(str::to_string).collect())
        .collect()
}

/// No cell a spreadsheet would run: none starts with `=`, `+`, `@`, tab or
/// CR, and one starting with `-` is a plain number or a lone dash.
fn assert_no_formula(what: &str, text: &str) {
    let number = |s: &str| {
        let b = &s[1..];
        b.is_empty()
            || (b.chars().all(|c| c.is_ascii_digit() || c == '.')
                && b.chars().next().is_some_and(|c| c.is_ascii_digit()))
    };
    for row in cells(text) {
        for c in row {
            let bad = c.starts_with(['=', '+', '@', '\t', '\r']) || (c.starts_with('-') && !number(&c));
            assert!(!bad, "{what}: cell {c:?} opens a formula in\n{text}");
        }
    }
}

#[test]
fn gate_compare_and_eval_csv_open_no_formula() {
    let dir = recorded();
    let o = dir.run(&["gate", "--format", "csv"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_no_formula("gate", &o.stdout);
    let gate = &o.stdout;
    // The strata are text, marked as such; `;` (Excel's separator where
    // the decimal mark is a comma) is quoted so it starts no cell.
    assert!(
        gate.contains(",recall@10,'=cmd|' /C calc'!A0,1,1,0,-1,"),
        "{gate}"
    );
    assert!(gate.contains(",recall@10,'@org/team,1,1,0,-1,"), "{gate}");
    assert!(gate.contains(",recall@10,\"a;=1+1\",1,1,0,-1,"), "{gate}");
    // The overall delta, a number rgate wrote: -3/5 of the queries lost.
    assert!(gate.contains("r,recall@10,all,5,1,0.4,-0.6,"), "{gate}");

    let o = dir.bare(&[
        "compare",
        "--gold",
        "gold.json",
        "base.jsonl",
        "=x.jsonl",
        "--by-stratum",
        "--format",
        "csv",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_no_formula("compare", &o.stdout);
    assert!(
        o.stdout.contains("\n'=x,base,recall@10,'=cmd|' /C calc'!A0,1,"),
        "{}",
        o.stdout
    );

    let o = dir.bare(&[
        "eval",
        "--gold",
        "gold.json",
        "--run",
        "cur.jsonl",
        "--per-query",
        "--format",
        "csv",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_no_formula("eval", &o.stdout);
    assert!(o.stdout.contains("\n'+q4,"), "{}", o.stdout);
}

#[test]
fn a_csv_sheet_opens_no_formula_and_reads_back_exactly() {
    let texts = [
        ("c1", "=HYPERLINK(\"http://x\")"),
        ("c2", "-1"),
        ("c3", "'quoted"),
        ("c4", "@x"),
        ("c5", "\tlead tab"),
        ("c6", "a;=1+1"),
        ("c7", "''=twice"),
        ("c8", "\rcr"),
    ];
    let corpus: String = texts
        .iter()
        .map(|(id, t)| format!("{}\n", json!({"id": id, "text": t})))
        .collect();
    let run_line = json!({"query_id": "=q1", "results": texts.iter().map(|(id, _)| json!({"id": id, "score": 1.0})).collect::<Vec<_>>()});
    let dir = TestProject::new()
        .with_file("corpus.jsonl", corpus)
        .with_file("queries.jsonl", format!("{}\n", json!({"id": "=q1", "text": "@ana -x", "stratum": "-s"})))
        .with_file("run.jsonl", format!("{run_line}\n"))
        // The judge records what rgate read from the sheet and grades 1.
        .with_file(
            "judge.py",
            "import json, sys\nseen = []\nfor line in sys.stdin:\n    d = json.loads(line)\n    seen.append([d['query_id'], d['query'], d['chunk_id'], d['text']])\n    print(json.dumps({'query_id': d['query_id'], 'chunk_id': d['chunk_id'], 'grade': 1}))\njson.dump(seen, open('seen.json', 'w'))\n",
        );
    let o = dir.bare(&[
        "gold",
        "pool",
        "--queries",
        "queries.jsonl",
        "--run",
        "run.jsonl",
        "--depth",
        "10",
        "--corpus",
        "corpus.jsonl",
        "--format",
        "csv",
        "--output",
        "sheet.csv",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let sheet = dir.read("sheet.csv");
    assert_no_formula("sheet", &sheet);
    // The scheme, as a spreadsheet and a person see it.
    assert!(
        sheet.contains("\n'=q1,'@ana -x,'-s,c1,\"'=HYPERLINK(\"\"http://x\"\")\",,"),
        "{sheet}"
    );
    assert!(sheet.contains(",c2,-1,,"), "{sheet}");
    assert!(sheet.contains(",c3,''quoted,,"), "{sheet}");
    assert!(sheet.contains(",c5,'\tlead tab,,"), "{sheet}");
    assert!(sheet.contains(",c6,\"a;=1+1\",,"), "{sheet}");

    let o = dir.bare(&[
        "gold",
        "suggest",
        "sheet.csv",
        "--name",
        "judge",
        "--",
        "python3",
        "judge.py",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let seen: Vec<Vec<String>> = serde_json::from_str(&dir.read("seen.json")).unwrap();
    let mut got: Vec<(String, String)> = seen
        .iter()
        .map(|r| {
            assert_eq!((r[0].as_str(), r[1].as_str()), ("=q1", "@ana -x"), "{r:?}");
            (r[2].clone(), r[3].clone())
        })
        .collect();
    got.sort();
    let want: Vec<(String, String)> = texts
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(got, want);
    // Saved again by suggest: still neutral, and read back the same.
    let again = dir.read("sheet.csv");
    assert_no_formula("sheet after suggest", &again);
    assert!(again.contains(",c3,''quoted,1,model,judge,false,"), "{again}");
}

/// Whether GitHub would link a mention: an `@` after no word character,
/// before a letter or digit.
fn mentions(text: &str) -> Vec<String> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    for i in 0..c.len() {
        let after_word = i > 0 && (c[i - 1].is_ascii_alphanumeric() || c[i - 1] == '_');
        if c[i] == '@' && !after_word && c.get(i + 1).is_some_and(|n| n.is_ascii_alphanumeric()) {
            out.push(c[i..(i + 12).min(c.len())].iter().collect());
        }
    }
    out
}

#[test]
fn markdown_reports_and_the_job_summary_mention_nobody() {
    let dir = recorded();
    let o = dir.run(&["gate", "--format", "markdown"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_eq!(mentions(&o.stdout), Vec::<String>::new(), "{}", o.stdout);
    // Still reads `@ana` to a reviewer: the break is a zero-width space.
    assert!(
        o.stdout.contains("ask @&#8203;ana and @&#8203;org/team"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("| @&#8203;org/team |"), "{}", o.stdout);
    // `recall@10` is no mention and stays as it is.
    assert!(o.stdout.contains("recall@10"), "{}", o.stdout);

    dir.write("event.json", "{}");
    let mut c = dir.rgate();
    c.args(["gate"])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", dir.path("summary.md"))
        .env("GITHUB_OUTPUT", dir.path("output.txt"))
        .env("RUNNER_TEMP", dir.path("tmp"))
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", dir.path("event.json"));
    fs::create_dir_all(dir.path("tmp")).unwrap();
    let o = run(c);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let summary = dir.read("summary.md");
    assert_eq!(mentions(&summary), Vec::<String>::new(), "{summary}");
    // The failed-check table at the top, before the folded report.
    let top = &summary[..summary.find("<details>").unwrap()];
    assert!(top.contains("| recall@10 | @&#8203;org/team |"), "{summary}");
}

fn assert_no_command_line(what: &str, text: &str) {
    for line in text.lines() {
        assert!(
            !line.trim_start().starts_with("::"),
            "{what}: command line {line:?} in\n{text}"
        );
    }
}

#[test]
fn echoed_names_stay_on_their_line() {
    let dir = TestProject::new()
        .with_file(
            "sheet.jsonl",
            format!("{}\n", json!({"query_id": "q1", "query": "q", "stratum": "s", "chunk_id": "c1", "text": "t"})),
        )
        .with_file(
            "judge.py",
            "import json, sys\nfor line in sys.stdin:\n    d = json.loads(line)\n    print(json.dumps({'query_id': d['query_id'], 'chunk_id': d['chunk_id'], 'grade': 2}))\n",
        )
        .with_file("g.json", json!({"version": 1, "queries": [{"id": "q1", "text": "t", "relevant": ["d"]}]}).to_string())
        .with_file("bad.yaml", "gold: g.json\nbaselines: baselines\nmetrics: [recall@10]\nretrievers:\n  - name: \"r\\n::error::forged\"\n    run: r.jsonl\n");
    // The case: a labeler name with a newline and a command.
    let o = dir.bare(&[
        "gold",
        "suggest",
        "sheet.jsonl",
        "--name",
        "x\n::error::y",
        "--",
        "python3",
        "judge.py",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_no_command_line("suggest", &o.stderr);
    assert!(
        o.stderr
            .contains("x\\n::error::y suggested grades for 1 of 1 row"),
        "{}",
        o.stderr
    );

    // A path with a newline, in a report and in an error.
    fs::copy(dir.path("g.json"), dir.path("g\n::error::p.json")).unwrap();
    let o = dir.bare(&["gold", "validate", "--gold", "g\n::error::p.json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_no_command_line("validate", &o.stdout);
    assert!(
        o.stdout.starts_with("gold g\\n::error::p.json: 1 query"),
        "{}",
        o.stdout
    );
    let o = dir.bare(&["gold", "stats", "--gold", "g\n::error::p.json"]);
    assert!(
        o.stdout.starts_with("gold g\\n::error::p.json · sha256:"),
        "{}",
        o.stdout
    );
    let o = dir.bare(&["eval", "--gold", "g.json", "--run", "none\n::error::r.jsonl"]);
    assert_eq!(o.code, 2);
    assert_no_command_line("eval error", &o.stderr);
    assert!(
        o.stderr
            .starts_with("error: none\\n::error::r.jsonl: cannot read run"),
        "{}",
        o.stderr
    );

    // A refused retriever name is quoted on its line.
    let o = dir.bare(&["--config", "bad.yaml", "gate"]);
    assert_eq!(o.code, 2);
    assert_no_command_line("config error", &o.stderr);
    assert!(
        o.stderr
            .contains("retriever name `r\\n::error::forged` is not allowed"),
        "{}",
        o.stderr
    );
}

#[test]
fn invisible_characters_are_shown_in_terminal_reports() {
    let dir = project();
    let o = dir.bare(&["eval", "--gold", "gold.json", "--run", "cur.jsonl", "--per-query"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!o.stdout.contains('\u{200B}'), "{}", o.stdout);
    assert!(o.stdout.contains("q\\u{200b}5"), "{}", o.stdout);
}

#[test]
fn the_labeler_shows_bidi_and_invisible_characters_escaped() {
    if crate::cli_goldbuild::tmux_missing("the_labeler_shows_bidi_and_invisible_characters_escaped") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sheet = dir.path().join("sheet.jsonl");
    let row = json!({"query_id": "q\u{202E}1", "query": "how \u{2066}x\u{2069}", "stratum": "s", "chunk_id": "c1",
        "text": "abc\u{202E}fed\u{200B}ghi\u{FEFF}", "grade": null});
    fs::write(&sheet, format!("{row}\n")).unwrap();
    let bin = env!("CARGO_BIN_EXE_rgate");
    let t = Tmux::start(&format!(
        "env NO_COLOR=1 {bin} gold label --labeler bo {}",
        sheet.display()
    ));
    let s = t.wait_for("0/1 labeled");
    assert!(s.contains("query   q\\u{202e}1  [s]"), "{s}");
    assert!(s.contains("how \\u{2066}x\\u{2069}"), "{s}");
    assert!(s.contains("abc\\u{202e}fed\\u{200b}ghi\\u{feff}"), "{s}");
    for c in ['\u{202E}', '\u{200B}', '\u{FEFF}', '\u{2066}'] {
        assert!(!s.contains(c), "raw {c:?} on the screen:\n{s}");
    }
    t.keys("q");
    t.wait_exit();
}

#[test]
fn sample_and_pool_json_lines_forge_no_legacy_command() {
    let text = "how ##[error]forged \u{202E}x";
    let dir = TestProject::new()
        .with_file("log.jsonl", format!("{}\n", json!({"text": text})))
        .with_file(
            "queries.jsonl",
            format!("{}\n", json!({"id": "q1", "text": text})),
        )
        .with_file(
            "run.jsonl",
            format!(
                "{}\n",
                json!({"query_id": "q1", "results": [{"id": "c1", "score": 1.0}]})
            ),
        )
        .with_file("corpus.jsonl", format!("{}\n", json!({"id": "c1", "text": text})));
    let o = dir.bare(&["gold", "sample", "--log", "log.jsonl", "--total", "1"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o2 = dir.bare(&[
        "gold",
        "pool",
        "--queries",
        "queries.jsonl",
        "--run",
        "run.jsonl",
        "--depth",
        "5",
        "--corpus",
        "corpus.jsonl",
    ]);
    assert_eq!(o2.code, 0, "{}", o2.stderr);
    for (what, out, key) in [("sample", &o.stdout, "text"), ("pool", &o2.stdout, "text")] {
        assert!(!out.contains("##[") && !out.contains('\u{202E}'), "{what}: {out}");
        let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        assert_eq!(v[key], text, "{what}");
    }
}
