//! What `eval`'s JSON report says about the run itself: the format rgate
//! detected (one per form in the README's run table; a mislabelled format
//! sends a user debugging the wrong parser) and the gold queries it missed.

use crate::common;

use std::path::PathBuf;

use common::{fixture, rgate, run};
use serde_json::Value;

fn eval_json(gold: PathBuf, run_file: PathBuf, extra: &[&str]) -> Value {
    let mut c = rgate();
    c.args(["eval", "--format", "json", "-m", "mrr", "--gold"])
        .arg(gold)
        .arg("--run")
        .arg(run_file)
        .args(extra);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.stdout))
}

fn demo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("config/demo")
        .join(rel)
}

/// The stderr of `eval` on a JSON run with this text, which must fail
/// with exit 2.
fn json_run_error(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    std::fs::write(&path, text).unwrap();
    let mut c = rgate();
    c.args(["eval", "-m", "mrr", "--gold"])
        .arg(fixture("seed/gold.json"))
        .arg("--run")
        .arg(&path);
    let o = run(c);
    assert_eq!(o.code, 2, "{}", o.stderr);
    o.stderr
}

#[test]
fn detected_format_is_reported() {
    let trec = eval_json(
        fixture("trec_eval/qrels.test"),
        fixture("trec_eval/results.test"),
        &[],
    );
    assert_eq!(trec["run_format"], "trec", "{trec}");
    let json = eval_json(fixture("seed/gold.json"), fixture("seed/run_a.json"), &[]);
    assert_eq!(json["run_format"], "json", "{json}");
    let jsonl = eval_json(demo("gold.yaml"), demo("runs/bm25.jsonl"), &[]);
    assert_eq!(jsonl["run_format"], "jsonl", "{jsonl}");
}

/// `missing_queries` lists the gold queries the run never answered:
/// results.trunc has rankings for 301 and 303 of qrels.test's 301-303.
#[test]
fn missing_queries_are_listed() {
    let gold = || fixture("trec_eval/qrels.test");
    let trunc = eval_json(gold(), fixture("trec_eval/results.trunc"), &[]);
    assert_eq!(trunc["missing_queries"], serde_json::json!(["302"]), "{trunc}");
    let full = eval_json(gold(), fixture("trec_eval/results.test"), &[]);
    assert_eq!(full["missing_queries"], serde_json::json!([]), "{full}");
}

/// Without a telling extension the form is read from the content: the
/// first bytes of the file decide (README "Runs": detected from content).
#[test]
fn format_is_detected_from_content_without_an_extension() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("trec.txt", fixture("trec_eval/results.test"), "trec"),
        ("map.txt", fixture("seed/run_a.json"), "json"),
        ("lines.txt", demo("runs/bm25.jsonl"), "jsonl"),
    ];
    for (name, from, want) in cases {
        let to = dir.path().join(name);
        std::fs::copy(&from, &to).unwrap();
        let gold = match want {
            "trec" => fixture("trec_eval/qrels.test"),
            "json" => fixture("seed/gold.json"),
            _ => demo("gold.yaml"),
        };
        let by_content = eval_json(gold.clone(), to, &[]);
        assert_eq!(by_content["run_format"], want, "{by_content}");
        let by_name = eval_json(gold, from, &[]);
        assert_eq!(by_content["metrics"], by_name["metrics"], "{name}");
    }
}

/// A bad ranking in a JSON run is reported at the line of its query id.
#[test]
fn json_run_errors_name_the_line_of_the_query() {
    let err = json_run_error("{\n  \"q1\": [\"c1\"],\n  \"q2\": 5\n}\n");
    assert!(err.contains("run.json:3:"), "{err}");
}

/// A directory is not a run: an error, not a hang or a panic.
#[test]
fn a_directory_as_run_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = rgate();
    c.args(["eval", "-m", "mrr", "--gold"])
        .arg(fixture("seed/gold.json"))
        .arg("--run")
        .arg(dir.path())
        .timeout(std::time::Duration::from_secs(20));
    let o = run(c);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("hint:"), "{}", o.stderr);
}

/// A JSON run with no white space at all and no telling extension is still
/// JSON: detection skips leading white space to find the `{`, it does not
/// require any.
#[test]
fn compact_json_without_an_extension_is_json() {
    let dir = tempfile::tempdir().unwrap();
    let compact = dir.path().join("run.out");
    std::fs::write(&compact, r#"{"q1":["c7","c1"],"q2":["c2"]}"#).unwrap();
    let v = eval_json(fixture("seed/gold.json"), compact, &[]);
    assert_eq!(v["run_format"], "json", "{v}");
    // q1: c1 at rank 2 (1/2), q2: c2 at rank 1 (1), q3-q5 unanswered (0).
    assert_eq!(v["metrics"]["mrr"]["all"], 0.3, "{v}");
    let padded = dir.path().join("padded.out");
    std::fs::write(&padded, " \n\t{\"q1\": [\"c1\"]}\n").unwrap();
    let v = eval_json(fixture("seed/gold.json"), padded, &[]);
    assert_eq!(v["run_format"], "json", "{v}");
    assert_eq!(v["metrics"]["mrr"]["all"], 0.2, "{v}");
}

/// Repeated ids, in both readers (the TREC one handles MS MARCO-sized
/// files): the first occurrence counts, and the warning counts every
/// dropped repeat and names each query that had one.
#[test]
fn repeated_ids_are_counted_per_repeat() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        (
            "run.json",
            r#"{"q1": ["c7", "c7", "c1", "c7"], "q2": ["c2", "c2"], "q3": ["c3"]}"#,
        ),
        (
            "run.trec",
            "q1 Q0 c7 1 0.9 t\nq1 Q0 c7 2 0.8 t\nq1 Q0 c1 3 0.7 t\n\
             q2 Q0 c2 1 0.9 t\nq2 Q0 c2 2 0.5 t\nq2 Q0 c2 3 0.4 t\nq3 Q0 c3 1 0.9 t\n",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let v = eval_json(fixture("seed/gold.json"), path, &[]);
        // q1: c1 at rank 2 once the repeats are gone (1/2), q2 1, q3 1,
        // q4 and q5 unanswered.
        assert_eq!(v["metrics"]["mrr"]["all"], 0.5, "{name}: {v}");
        let warnings = v["warnings"].to_string();
        assert!(
            warnings.contains(
                "3 repeated document ids within a query's ranking (first occurrence counts), in `q1`, `q2`"
            ),
            "{name}: {warnings}"
        );
    }
}

/// A located result whose `doc` is the empty string names no document: an
/// input error at that result, not a location nothing can match.
#[test]
fn a_located_result_with_an_empty_doc_is_refused() {
    let err =
        json_run_error("{\n\"q1\": [\"c7\", {\"id\": \"c1\", \"doc\": \"\", \"start\": 0, \"end\": 5}]\n}\n");
    assert!(
        err.contains("run.json:2: query `q1`, result 2: `doc` is empty"),
        "{err}"
    );
}

/// The line of a query in a JSON run is that of its key, even when the
/// same text appears earlier as a document id.
#[test]
fn json_run_errors_skip_earlier_mentions_of_the_query_id() {
    let err = json_run_error("{\n \"q1\": [\"q2\"],\n \"q3\": [\"q2\", \"q2\"],\n \"q2\" : 5\n}\n");
    assert!(
        err.contains("run.json:4: query `q2`: results must be a list"),
        "{err}"
    );
}
