//! The labeling workflow as a new user meets it (issue #27, items 6 and 9):
//! `gold label --blind` and its accept key driven in a real terminal
//! (tmux), `gold sample` finding the stratum field, `gold import` and the
//! template queries `rgate init` writes, the YAML it writes, `gold pool`'s
//! warning about queries a run lacks, and `gold stats --log`'s drift.
//! Expected values are worked out by hand from the small inputs here.

use crate::cli_goldbuild::Tmux;
#[allow(unused_imports)]
use crate::common::{rgate, run};

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p
}

fn jsonl(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// A sheet of three rows: ana's grade 3, a model's suggestion 1, ungraded.
fn three_rows(dir: &Path) -> PathBuf {
    let rows = [
        json!({"query_id": "q1", "query": "rotate a key", "stratum": "how-to", "chunk_id": "c1", "text": "first chunk",
               "grade": 3, "source": "person", "labeler": "ana", "verified": true}),
        json!({"query_id": "q1", "query": "rotate a key", "stratum": "how-to", "chunk_id": "c2", "text": "second chunk",
               "grade": 1, "source": "model", "labeler": "judge-model", "verified": false}),
        json!({"query_id": "q2", "query": "quota error", "stratum": "lookup", "chunk_id": "c3", "text": "third chunk",
               "grade": null, "source": null, "labeler": null, "verified": false}),
    ];
    let text: String = rows.iter().map(|r| r.to_string() + "\n").collect();
    write(dir, "sheet.jsonl", &text)
}

/// What a blind labeler must not see: any other source's grade or name.
fn assert_blind(screen: &str) {
    for hidden in ["ana", "judge-model", "grade 3", "grade 1", "suggested"] {
        assert!(!screen.contains(hidden), "{hidden:?} shown to a blind labeler:\n{screen}");
    }
}

#[test]
fn a_blind_second_labeler_sees_no_other_grade_and_adds_an_opinion() {
    let dir = tempfile::tempdir().unwrap();
    let sheet = three_rows(dir.path());
    let bin = env!("CARGO_BIN_EXE_rgate");
    let cmd = format!("env NO_COLOR=1 {bin} gold label --blind --labeler bo {}", sheet.display());
    let t = Tmux::start(&cmd);
    // Blind, the first row (ana's) still waits for bo: 0 of 3 are bo's.
    let s = t.wait_for("0/3 labeled");
    assert!(s.contains("blind: other grades hidden") && s.contains("not labeled by you"), "{s}");
    assert!(s.contains("chunk   c1"), "{s}");
    assert_blind(&s);
    // A key that means nothing says so; `a` has no suggestion to take.
    t.keys("x");
    t.wait_for("key `x` does nothing here");
    t.keys("a");
    let s = t.wait_for("a blind session shows no suggestion to accept");
    assert_blind(&s);
    t.keys("0");
    let s = t.wait_for("1/3 labeled");
    // The model's row, its suggestion hidden.
    assert!(s.contains("chunk   c2"), "{s}");
    assert_blind(&s);
    t.keys("2");
    t.wait_for("2/3 labeled");
    t.keys("1");
    t.wait_for("3/3 labeled");
    t.keys("q");
    t.wait_exit();
    let rows = jsonl(&fs::read_to_string(&sheet).unwrap());
    // Ana's grade stands; bo's is an opinion beside it.
    assert_eq!((&rows[0]["grade"], &rows[0]["labeler"]), (&json!(3), &json!("ana")));
    assert_eq!(rows[0]["opinions"][0]["grade"], 0);
    assert_eq!(rows[0]["opinions"][0]["source"], "person");
    assert_eq!(rows[0]["opinions"][0]["labeler"], "bo");
    assert_eq!(rows[0]["opinions"].as_array().unwrap().len(), 1);
    // A person displaces the model's suggestion, which is kept.
    assert_eq!(
        (&rows[1]["grade"], &rows[1]["labeler"], &rows[1]["verified"]),
        (&json!(2), &json!("bo"), &json!(true))
    );
    assert_eq!(rows[1]["opinions"][0]["grade"], 1);
    assert_eq!(rows[1]["opinions"][0]["source"], "model");
    assert_eq!((&rows[2]["grade"], &rows[2]["labeler"]), (&json!(1), &json!("bo")));
    drop(t);

    // Bo again: every row holds bo's grade, so the session resumes done.
    let t = Tmux::start(&cmd);
    let s = t.wait_for("3/3 labeled");
    assert!(s.contains("your grade 0"), "{s}");
    assert_blind(&s);
    t.keys("q");
    t.wait_exit();
}

/// On a 50-column terminal: the progress count shows (the header wrapped,
/// not cut), `a` takes the model's suggestion as the person's verified
/// grade, and the model's grade is kept beside it.
#[test]
fn accept_takes_the_models_suggestion_on_a_narrow_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let sheet = three_rows(dir.path());
    let bin = env!("CARGO_BIN_EXE_rgate");
    let cmd = format!("env NO_COLOR=1 {bin} gold label --labeler cy {}", sheet.display());
    let t = Tmux::start_sized(&cmd, 50, 20);
    // Starts on the model's row, the first no person graded.
    let s = t.wait_for("1/3 labeled");
    assert!(s.contains("row 2/3"), "{s}");
    assert!(s.contains("grade 1 (suggested by judge-model, not verified)"), "{s}");
    assert!(s.contains("q save and quit") && s.contains("a/Enter accept suggestion"), "{s}");
    for line in s.lines() {
        assert!(line.chars().count() <= 50, "{line:?}");
    }
    t.keys("a");
    let s = t.wait_for("2/3 labeled");
    // On to the ungraded row: no suggestion there.
    assert!(s.contains("chunk   c3") && s.contains("not labeled"), "{s}");
    t.keys("a");
    t.wait_for("no model suggestion on this row to accept");
    t.keys("q");
    t.wait_exit();
    let rows = jsonl(&fs::read_to_string(&sheet).unwrap());
    assert_eq!(
        (&rows[1]["grade"], &rows[1]["source"], &rows[1]["labeler"], &rows[1]["verified"]),
        (&json!(1), &json!("person"), &json!("cy"), &json!(true))
    );
    assert_eq!(rows[1]["opinions"][0]["labeler"], "judge-model");
    assert_eq!(rows[1]["opinions"][0]["source"], "model");
    assert_eq!(rows[2]["grade"], Value::Null);
}
