//! Inputs as they arrive in practice: byte order marks, other tools'
//! spellings, empty and hostile files. Each case checks the exit code and
//! what the user reads; values are the demo's and the seed fixture's known
//! means (seed run_a: MRR 0.6667, P@3 0.4000, worked out by hand in
//! tests/it/cli_eval.rs; demo hybrid recall@10 0.8861).

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{fixture, rgate, run, Out};

const BOM: &str = "\u{feff}";

fn demo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("config/demo")
        .join(rel)
}

fn write(dir: &tempfile::TempDir, name: &str, content: &str) -> PathBuf {
    let p = dir.path().join(name);
    fs::write(&p, content).unwrap();
    p
}

fn eval(gold: &Path, run_file: &Path, extra: &[&str]) -> Out {
    let mut c = rgate();
    c.arg("eval")
        .arg("--gold")
        .arg(gold)
        .arg("--run")
        .arg(run_file)
        .args(extra)
        // Means only: these tests read the CSV's columns of means.
        .args(["--resamples", "0"]);
    run(c)
}

/// `all` row of `--format csv` for the given metrics.
fn all_row(o: &Out) -> String {
    assert_eq!(o.code, 0, "stderr: {}", o.stderr);
    o.stdout
        .lines()
        .find(|l| l.starts_with("all,"))
        .unwrap_or_else(|| panic!("no all row: {}", o.stdout))
        .to_string()
}

/// The demo gold set as TREC qrels plus a strata file, written from the
/// YAML by this test (not by rgate).
fn demo_as_qrels(dir: &tempfile::TempDir) -> (String, String) {
    let y: serde_json::Value =
        serde_saphyr::from_str(&fs::read_to_string(demo("gold.yaml")).unwrap()).unwrap();
    let mut qrels = String::new();
    let mut strata = String::new();
    for q in y["queries"].as_array().unwrap() {
        let id = q["id"].as_str().unwrap();
        strata.push_str(&format!("{id}\t{}\n", q["stratum"].as_str().unwrap()));
        match &q["relevant"] {
            serde_json::Value::Array(s) => {
                for d in s {
                    qrels.push_str(&format!("{id} 0 {} 1\n", d.as_str().unwrap()));
                }
            }
            serde_json::Value::Object(m) => {
                for (d, g) in m {
                    qrels.push_str(&format!("{id} 0 {} {}\n", d, g.as_i64().unwrap()));
                }
            }
            other => panic!("unexpected relevant: {other:?}"),
        }
    }
    let _ = dir;
    (qrels, strata)
}

/// The demo hybrid run as TREC lines, written by this test.
fn demo_hybrid_as_trec() -> String {
    let mut out = String::new();
    for line in fs::read_to_string(demo("runs/hybrid.jsonl")).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let qid = v["query_id"].as_str().unwrap();
        for (i, r) in v["results"].as_array().unwrap().iter().enumerate() {
            // Scores strictly decreasing in list order: the TREC ranking is
            // the list's.
            out.push_str(&format!(
                "{qid} Q0 {} {} {} demo\n",
                r["id"].as_str().unwrap(),
                i + 1,
                1000 - i
            ));
        }
    }
    out
}

#[test]
fn byte_order_marks_change_no_number() {
    let dir = tempfile::tempdir().unwrap();
    let (qrels, strata) = demo_as_qrels(&dir);
    let strata_p = write(&dir, "strata.tsv", &format!("{BOM}{strata}"));
    let plain = write(&dir, "plain.qrels", &qrels);
    let bom = write(&dir, "bom.qrels", &format!("{BOM}{qrels}"));
    let want = "all,90,0.8861";
    let m = ["-m", "recall@10", "--format", "csv"];
    assert_eq!(all_row(&eval(&plain, &demo("runs/hybrid.jsonl"), &m)), want);
    let o = eval(&bom, &demo("runs/hybrid.jsonl"), &m);
    assert_eq!(all_row(&o), want);
    assert!(o.stderr.is_empty(), "no phantom query: {}", o.stderr);
    // With the strata file (itself BOM-prefixed): the first query keeps its stratum.
    let mut c = rgate();
    c.args([
        "eval",
        "--by-stratum",
        "--format",
        "csv",
        "-m",
        "recall@10",
        "--gold",
    ])
    .arg(&bom)
    .arg("--strata")
    .arg(&strata_p)
    .arg("--run")
    .arg(demo("runs/hybrid.jsonl"));
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("identifier-lookup,30,1.0000"), "{}", o.stdout);
    assert!(!o.stdout.contains("default"), "{}", o.stdout);

    // TREC run with a BOM: the first line is read, not dropped.
    let trec = demo_hybrid_as_trec();
    let run_plain = write(&dir, "plain.trec", &trec);
    let run_bom = write(&dir, "bom.trec", &format!("{BOM}{trec}"));
    assert_eq!(all_row(&eval(&plain, &run_plain, &m)), want);
    let o = eval(&plain, &run_bom, &m);
    assert_eq!(all_row(&o), want);
    assert!(o.stderr.is_empty(), "{}", o.stderr);

    // YAML gold, JSONL run.
    let gold_bom = write(
        &dir,
        "gold.yaml",
        &format!("{BOM}{}", fs::read_to_string(demo("gold.yaml")).unwrap()),
    );
    let jsonl_bom = write(
        &dir,
        "hybrid.jsonl",
        &format!("{BOM}{}", fs::read_to_string(demo("runs/hybrid.jsonl")).unwrap()),
    );
    assert_eq!(all_row(&eval(&gold_bom, &jsonl_bom, &m)), want);

    // JSON gold and JSON run (the seed fixture).
    let g = write(
        &dir,
        "seed.json",
        &format!("{BOM}{}", fs::read_to_string(fixture("seed/gold.json")).unwrap()),
    );
    let r = write(
        &dir,
        "run_a.json",
        &format!("{BOM}{}", fs::read_to_string(fixture("seed/run_a.json")).unwrap()),
    );
    let o = eval(&g, &r, &["-m", "mrr,P@3", "--format", "csv"]);
    assert_eq!(all_row(&o), "all,5,0.6667,0.4000");
}

#[test]
fn a_gold_set_without_queries_is_an_error_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let run_p = fixture("seed/run_a.json");
    for (name, content, says) in [
        ("empty.yaml", "version: 1\nqueries: []\n", "has no queries"),
        ("blank.yaml", "# nothing yet\n\n", "is empty"),
        ("empty.qrels", "\n\n", "is empty"),
        ("empty.jsonl", "", "is empty"),
        ("noqueries.json", "{\"version\": 1}", "no `queries:` list"),
    ] {
        let g = write(&dir, name, content);
        let o = eval(&g, &run_p, &[]);
        assert_eq!(o.code, 2, "{name}: {}", o.stderr);
        assert!(o.stderr.contains(says), "{name}: {}", o.stderr);
        assert!(o.stderr.contains("hint:"), "{name}: {}", o.stderr);
        assert!(!o.stderr.contains("missing field"), "{name}: {}", o.stderr);

        let mut c = rgate();
        c.args(["compare", "--gold"]).arg(&g).arg(&run_p).arg(&run_p);
        assert_eq!(run(c).code, 2, "{name}: compare");
        let mut c = rgate();
        c.args(["gold", "validate", "--gold"]).arg(&g);
        let o = run(c);
        assert_eq!(o.code, 2, "{name}: gold validate: {}{}", o.stdout, o.stderr);
    }
    // gate and baseline update, through a config.
    write(&dir, "g.yaml", "version: 1\nqueries: []\n");
    fs::copy(&run_p, dir.path().join("r.json")).unwrap();
    fs::create_dir(dir.path().join("b")).unwrap();
    let conf = write(
        &dir,
        "rgate.yaml",
        "gold: g.yaml\nbaselines: b\nretrievers:\n  - name: r\n    run: r.json\n",
    );
    for args in [&["gate"][..], &["baseline", "update", "--note", "x"][..]] {
        let mut c = rgate();
        c.arg("--config").arg(&conf).args(args);
        let o = run(c);
        assert_eq!(o.code, 2, "{args:?}: {}{}", o.stdout, o.stderr);
        assert!(o.stderr.contains("has no queries"), "{args:?}: {}", o.stderr);
    }
    assert!(
        !dir.path().join("b/r.json").exists(),
        "no empty baseline is recorded"
    );
}

#[test]
fn yaml_alias_bombs_and_deep_nesting_are_refused_fast() {
    let dir = tempfile::tempdir().unwrap();
    // 2,000 aliases of one 500 KB anchor: about 1 GB once expanded.
    let mut bomb = String::from("version: 1\nqueries:\n  - id: q1\n    text: &big \"");
    bomb.push_str(&"x".repeat(500_000));
    bomb.push_str("\"\n    relevant: [a]\n");
    for i in 0..2000 {
        bomb.push_str(&format!(
            "  - id: q{}\n    text: *big\n    relevant: [a]\n",
            i + 2
        ));
    }
    let deep_flow = format!(
        "version: 1\nqueries: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let deep_block = format!("version: 1\nqueries:\n{}x\n", "- ".repeat(100_000));
    let run_p = fixture("seed/run_a.json");
    for (name, content, says) in [
        ("bomb.yaml", bomb.as_str(), "aliases"),
        ("flow.yaml", deep_flow.as_str(), "nested more than 64 levels"),
        ("block.yaml", deep_block.as_str(), "nested more than 64 levels"),
    ] {
        let g = write(&dir, name, content);
        let t = Instant::now();
        let o = eval(&g, &run_p, &[]);
        assert!(t.elapsed() < Duration::from_secs(5), "{name}: {:?}", t.elapsed());
        assert_eq!(o.code, 2, "{name}: {}", o.stderr);
        assert!(o.stderr.contains(says), "{name}: {}", o.stderr);
        assert!(o.stderr.len() < 1000, "{name}: {}", o.stderr);
    }
    // The config is guarded the same way.
    let conf = write(&dir, "rgate.yaml", "gold: &g g.yaml\nstrata: *g\n");
    let mut c = rgate();
    c.arg("--config").arg(&conf).arg("gate");
    let o = run(c);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("rgate.yaml:2: refused: YAML aliases"),
        "{}",
        o.stderr
    );
    // JSON nesting: serde_json's own limit, said plainly.
    let g = write(
        &dir,
        "deep.json",
        &format!(
            "{{\"queries\": [{{\"id\": \"q1\", \"answer\": {}1{}}}]}}",
            "[".repeat(200),
            "]".repeat(200)
        ),
    );
    let o = eval(&g, &run_p, &[]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("nested too deeply"), "{}", o.stderr);
    let g = write(
        &dir,
        "deepv.json",
        &format!(
            "{{\"version\": {}1{}, \"queries\": []}}",
            "[".repeat(200),
            "]".repeat(200)
        ),
    );
    let o = eval(&g, &run_p, &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("expected the format version, 1"),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("u32"), "{}", o.stderr);
}

#[test]
fn yaml_that_only_looks_structural_is_accepted() {
    // `*`, brackets and dashes inside quotes, comments and block scalars are
    // text, not aliases or nesting.
    let dir = tempfile::tempdir().unwrap();
    let g = write(
        &dir,
        "g.yaml",
        "version: 1 # *not an alias\nqueries:\n  - id: q1\n    text: \"*star [[[[ {{{{\"\n    relevant: [c1]\n  - id: q2\n    text: |\n      - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - x\n      *alias? [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n    relevant: [c2]\n  - id: q3\n    text: 'it''s 5 * 3'\n    relevant: [c3, c9]\n  - id: q4\n    relevant: [c4]\n  - id: q5\n    relevant: [c5]\n",
    );
    let o = eval(
        &g,
        &fixture("seed/run_a.json"),
        &["-m", "mrr,P@3", "--format", "csv"],
    );
    assert_eq!(all_row(&o), "all,5,0.6667,0.4000");
}

#[test]
fn huge_bad_values_are_quoted_as_excerpts() {
    let dir = tempfile::tempdir().unwrap();
    let big = "9".repeat(5_000_000) + "x";
    let cases = [
        (
            "q.qrels",
            format!("q1 0 c1 1\nq1 0 c2 {big}\n"),
            "q.qrels:2: grade `999",
        ),
        (
            "g.yaml",
            format!("queries:\n  - id: q1\n    relevant: {{c1: \"{big}\"}}\n"),
            "invalid gold set",
        ),
        (
            "g.json",
            format!("{{\"queries\": [{{\"id\": \"q1\", \"relevant\": [\"c1\"], \"textt\": \"{big}\"}}]}}"),
            "unknown field",
        ),
        (
            "g2.yaml",
            format!("queries:\n  - id: \"q {big}\"\n    relevant: [c1]\n"),
            "contains white space",
        ),
    ];
    for (name, content, says) in cases {
        let g = write(&dir, name, &content);
        let o = eval(&g, &fixture("seed/run_a.json"), &[]);
        assert_eq!(o.code, 2, "{name}");
        assert!(
            o.stderr.contains(says),
            "{name}: {}",
            &o.stderr[..o.stderr.len().min(500)]
        );
        assert!(
            o.stderr.len() < 1500,
            "{name}: {} bytes of stderr",
            o.stderr.len()
        );
    }
    let g = write(&dir, "g.jsonl", "{\"id\": \"q1\", \"relevant\": [\"c1\"]}\n");
    // A TREC line may hold at most 4 MiB (input_limits.rs tests the
    // refusal of a longer one), so the bad score here is 3 MB.
    let big = "9".repeat(3_000_000) + "x";
    let r = write(&dir, "r.trec", &format!("q1 Q0 c1 1 {big} t\n"));
    let o = eval(&g, &r, &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("r.trec:1: score `999"),
        "{}",
        &o.stderr[..o.stderr.len().min(500)]
    );
    assert!(
        o.stderr.contains("(3000001 bytes in all)"),
        "{}",
        &o.stderr[..o.stderr.len().min(500)]
    );
    assert!(o.stderr.len() < 1000, "{} bytes", o.stderr.len());
}

#[test]
fn resamples_are_capped_in_the_cli_and_the_config() {
    let mut c = rgate();
    c.args(["compare", "--resamples", "4294967295", "--gold"])
        .arg(fixture("seed/gold.json"))
        .arg(fixture("seed/run_a.json"))
        .arg(fixture("seed/run_b.json"));
    let o = run(c);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("more than the 1000000 rgate accepts"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("hint:"), "{}", o.stderr);
    let dir = tempfile::tempdir().unwrap();
    let conf = write(&dir, "rgate.yaml", "gold: g.yaml\ngate:\n  resamples: 2000000\n");
    let mut c = rgate();
    c.arg("--config").arg(&conf).arg("gate");
    let o = run(c);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("rgate.yaml:3: resamples 2000000 is more than"),
        "{}",
        o.stderr
    );
}

#[test]
fn relevance_levels_below_one_are_refused() {
    for level in ["-5", "0"] {
        let o = eval(
            &fixture("seed/gold.json"),
            &fixture("seed/run_a.json"),
            &["--relevance-level", level],
        );
        assert_eq!(o.code, 2, "{level}");
        assert!(
            o.stderr.contains(&format!("relevance level {level} is below 1")),
            "{}",
            o.stderr
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let conf = write(&dir, "rgate.yaml", "gold: g.yaml\nrelevance_level: 0\n");
    let mut c = rgate();
    c.arg("--config").arg(&conf).arg("gate");
    let o = run(c);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("rgate.yaml:2: relevance level 0 is below 1"),
        "{}",
        o.stderr
    );
}

#[test]
fn trec_lines_with_too_few_or_shifted_fields_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let g = write(&dir, "g.jsonl", "{\"id\": \"q1\", \"relevant\": [\"c1\"]}\n");
    let five = write(&dir, "five.trec", "q1 Q0 c1 1 2.5 t\nq1 Q0 c2 2 1.5\n");
    let o = eval(&g, &five, &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("five.trec:2: expected `qid Q0 docid rank score tag`, found 5 fields"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("run tag) is missing"), "{}", o.stderr);
    // An id with a space: the rank column holds text, the score the rank.
    let seven = write(&dir, "seven.trec", "q1 Q0 c2 1 2.5 t\nq1 Q0 my doc 2 1.5 t\n");
    let o = eval(&g, &seven, &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("seven.trec:2: expected `qid Q0 docid rank score tag`, found more than 6 fields"),
        "{}",
        o.stderr
    );
    // Text after the tag with the columns in place is read, as trec_eval
    // reads its own test file results.trunc: c1 at rank 2, MRR 0.5.
    let junk = write(
        &dir,
        "junk.trec",
        "q1 Q0 c2 1 2.5 t some comment\nq1 Q0 c1 2 1.5 t\n",
    );
    let o = eval(&g, &junk, &["-m", "mrr", "--format", "csv"]);
    assert_eq!(all_row(&o), "all,1,0.5000");
}

#[test]
fn binary_files_and_wrong_shapes_get_plain_messages() {
    let dir = tempfile::tempdir().unwrap();
    let mut garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    garbage[10] = 0;
    let bin = dir.path().join("run.bin");
    fs::write(&bin, &garbage).unwrap();
    let o = eval(&fixture("seed/gold.json"), &bin, &[]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("not a text file"), "{}", o.stderr);
    assert!(o.stderr.contains("not a run"), "{}", o.stderr);
    let o = eval(&bin, &fixture("seed/run_a.json"), &[]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("not a gold set"), "{}", o.stderr);
    // Non-UTF-8 bytes without NULs in a TREC run.
    let r = dir.path().join("latin1.trec");
    fs::write(&r, b"q1 Q0 c\xe91 1 \xff\xfe t\n").unwrap();
    let o = eval(&fixture("seed/gold.json"), &r, &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("latin1.trec:1: this line is not text"),
        "{}",
        o.stderr
    );
    // A YAML gold set that is a list, not a map: no internal type names.
    let g = write(&dir, "list.yaml", "- q1\n- q2\n");
    let o = eval(&g, &fixture("seed/run_a.json"), &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("a map with `version: 1` and a `queries:` list"),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("NativeFile"), "{}", o.stderr);
    let g = write(&dir, "q.yaml", "queries:\n  - just-a-string\n");
    let o = eval(&g, &fixture("seed/run_a.json"), &[]);
    assert_eq!(o.code, 2);
    assert!(!o.stderr.contains("NativeQuery"), "{}", o.stderr);
    let conf = write(&dir, "rgate.yaml", "- gold\n");
    let mut c = rgate();
    c.arg("--config").arg(&conf).arg("gate");
    let o = run(c);
    assert_eq!(o.code, 2);
    assert!(!o.stderr.contains("RawConfig"), "{}", o.stderr);
}

#[test]
fn other_tools_run_spellings_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let gold = fixture("seed/gold.json");
    let seed: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(fixture("seed/run_a.json")).unwrap()).unwrap();
    let seed = seed.as_object().unwrap();
    let want = "all,5,0.6667,0.4000";
    let m = ["-m", "mrr,P@3", "--format", "csv"];
    // (query key, ranking key, id key) per line, results as objects.
    for (qk, rk, ik) in [
        ("qid", "docs", "doc_id"),
        ("query_id", "hits", "docno"),
        ("qid", "results", "docid"),
    ] {
        let mut text = String::new();
        for (q, docs) in seed {
            let items: Vec<serde_json::Value> = docs
                .as_array()
                .unwrap()
                .iter()
                .map(|d| serde_json::json!({ ik: d }))
                .collect();
            text.push_str(&serde_json::json!({ qk: q, rk: items }).to_string());
            text.push('\n');
        }
        // No extension: the form is detected from the first line.
        let p = write(&dir, &format!("run_{qk}_{rk}_{ik}"), &text);
        assert_eq!(all_row(&eval(&gold, &p, &m)), want, "{qk}/{rk}/{ik}");
    }
    // ir_datasets' ScoredDoc: one document per line, lines of queries mixed.
    let mut lines = Vec::new();
    for (q, docs) in seed {
        for (i, d) in docs.as_array().unwrap().iter().enumerate() {
            lines.push(serde_json::json!({"query_id": q, "doc_id": d, "score": 10.0 - i as f64}).to_string());
        }
    }
    lines.reverse();
    let p = write(&dir, "scored.jsonl", &(lines.join("\n") + "\n"));
    assert_eq!(all_row(&eval(&gold, &p, &m)), want);
    // ranx's run JSON: {query: {doc: score}}.
    let mut ranx = serde_json::Map::new();
    for (q, docs) in seed {
        let scored: serde_json::Map<String, serde_json::Value> = docs
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, d)| (d.as_str().unwrap().to_string(), serde_json::json!(3 - i as i64)))
            .collect();
        ranx.insert(q.clone(), serde_json::Value::Object(scored));
    }
    let p = write(&dir, "ranx.json", &serde_json::Value::Object(ranx).to_string());
    assert_eq!(all_row(&eval(&gold, &p, &m)), want);
    // Two spellings of one field on a line: refused, not guessed.
    let p = write(
        &dir,
        "both.jsonl",
        "{\"qid\": \"q1\", \"query_id\": \"q1\", \"results\": [\"c1\"]}\n",
    );
    let o = eval(&gold, &p, &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("both.jsonl:1: both `query_id` and `qid` are given"),
        "{}",
        o.stderr
    );
    // `query` is a query's text in other tools, never its id.
    let p = write(
        &dir,
        "query.jsonl",
        "{\"query\": \"q1\", \"results\": [\"c1\"]}\n",
    );
    let o = eval(&gold, &p, &["--run-format", "jsonl"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("missing `query_id` (or `qid`)"), "{}", o.stderr);
    // A scored-document line needs its score.
    let p = write(&dir, "noscore.jsonl", "{\"qid\": \"q1\", \"docno\": \"c1\"}\n");
    let o = eval(&gold, &p, &[]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("needs a finite `score`"), "{}", o.stderr);
}

#[test]
fn gold_queries_may_carry_an_answer_and_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let run_p = fixture("seed/run_a.json");
    let yaml = "version: 1\nqueries:\n  - id: q1\n    relevant: [c1]\n    answer: \"Rotate the key, then ...\"\n    meta: {source: support-log, tags: [a, b]}\n  - id: q2\n    relevant: [c2]\n    metadata: {difficulty: 3}\n  - {id: q3, relevant: [c3, c9], answer: [\"two\", \"answers\"]}\n  - {id: q4, relevant: [c4]}\n  - {id: q5, relevant: [c5]}\n";
    let g = write(&dir, "g.yaml", yaml);
    assert_eq!(
        all_row(&eval(&g, &run_p, &["-m", "mrr,P@3", "--format", "csv"])),
        "all,5,0.6667,0.4000"
    );
    let jsonl = "{\"id\": \"q1\", \"relevant\": [\"c1\"], \"answer\": \"x\", \"metadata\": {\"k\": 1}}\n{\"id\": \"q2\", \"relevant\": [\"c2\"]}\n{\"id\": \"q3\", \"relevant\": [\"c3\", \"c9\"]}\n{\"id\": \"q4\", \"relevant\": [\"c4\"]}\n{\"id\": \"q5\", \"relevant\": [\"c5\"]}\n";
    let g = write(&dir, "g.jsonl", jsonl);
    assert_eq!(
        all_row(&eval(&g, &run_p, &["-m", "mrr,P@3", "--format", "csv"])),
        "all,5,0.6667,0.4000"
    );
    // Other unknown keys stay errors, with the nearest valid one.
    let g = write(
        &dir,
        "bad.yaml",
        "queries:\n  - id: q1\n    relevant: [c1]\n    answr: x\n",
    );
    let o = eval(&g, &run_p, &[]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("did you mean `answer`"), "{}", o.stderr);
}
