//! The labeling workflow as a new user meets it (issue #27, items 6 and 9):
//! `gold label --blind` and its accept key driven in a real terminal
//! (tmux), `gold sample` finding the stratum field, `gold import` and the
//! template queries `rgate init` writes, the YAML it writes, `gold pool`'s
//! warning about queries a run lacks, and `gold stats --log`'s drift.
//! Expected values are worked out by hand from the small inputs here.

use crate::cli_goldbuild::Tmux;
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
        assert!(
            !screen.contains(hidden),
            "{hidden:?} shown to a blind labeler:\n{screen}"
        );
    }
}

#[test]
fn a_blind_second_labeler_sees_no_other_grade_and_adds_an_opinion() {
    if crate::cli_goldbuild::tmux_missing("a_blind_second_labeler_sees_no_other_grade_and_adds_an_opinion") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sheet = three_rows(dir.path());
    let bin = env!("CARGO_BIN_EXE_rgate");
    let cmd = format!(
        "env NO_COLOR=1 {bin} gold label --blind --labeler bo {}",
        sheet.display()
    );
    let t = Tmux::start(&cmd);
    // Blind, the first row (ana's) still waits for bo: 0 of 3 are bo's.
    let s = t.wait_for("0/3 labeled");
    assert!(
        s.contains("blind: other grades hidden") && s.contains("not labeled by you"),
        "{s}"
    );
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
    assert_eq!(
        (&rows[0]["grade"], &rows[0]["labeler"]),
        (&json!(3), &json!("ana"))
    );
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
    assert_eq!(
        (&rows[2]["grade"], &rows[2]["labeler"]),
        (&json!(1), &json!("bo"))
    );
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
    if crate::cli_goldbuild::tmux_missing("accept_takes_the_models_suggestion_on_a_narrow_terminal") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sheet = three_rows(dir.path());
    let bin = env!("CARGO_BIN_EXE_rgate");
    let cmd = format!("env NO_COLOR=1 {bin} gold label --labeler cy {}", sheet.display());
    let t = Tmux::start_sized(&cmd, 50, 20);
    // Starts on the model's row, the first no person graded.
    let s = t.wait_for("1/3 labeled");
    assert!(s.contains("row 2/3"), "{s}");
    assert!(
        s.contains("grade 1 (suggested by judge-model, not verified)"),
        "{s}"
    );
    assert!(
        s.contains("q save and quit") && s.contains("a/Enter accept suggestion"),
        "{s}"
    );
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
        (
            &rows[1]["grade"],
            &rows[1]["source"],
            &rows[1]["labeler"],
            &rows[1]["verified"]
        ),
        (&json!(1), &json!("person"), &json!("cy"), &json!(true))
    );
    assert_eq!(rows[1]["opinions"][0]["labeler"], "judge-model");
    assert_eq!(rows[1]["opinions"][0]["source"], "model");
    assert_eq!(rows[2]["grade"], Value::Null);
}

/// A log whose kind of query is in `type`: 6 how-to, 3 lookup, 1 other.
fn typed_log(dir: &Path, field: &str) -> PathBuf {
    let mut s = String::new();
    for i in 0..10 {
        let kind = match i {
            0..=5 => "how-to",
            6..=8 => "lookup",
            _ => "multi-hop",
        };
        s += &format!("{{\"text\": \"query {i}\", \"{field}\": \"{kind}\", \"user\": \"u{i}\"}}\n");
    }
    write(dir, "log.jsonl", &s)
}

#[test]
fn sample_takes_the_strata_from_a_type_field_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let log = typed_log(dir.path(), "type");
    let mut c = rgate();
    c.args(["gold", "sample", "--total", "10", "--log"]).arg(&log);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut strata: Vec<String> = jsonl(&o.stdout)
        .iter()
        .map(|r| r["stratum"].as_str().unwrap().to_string())
        .collect();
    strata.sort();
    strata.dedup();
    assert_eq!(strata, ["how-to", "lookup", "multi-hop"]);
    assert!(
        o.stderr.contains(
            "note: strata taken from the log's `type` field (pass --stratum-field to choose another)"
        ),
        "{}",
        o.stderr
    );
    // No field that looks like a stratum: said, with the fields to choose from.
    let log = typed_log(dir.path(), "flavour");
    let mut c = rgate();
    c.args(["gold", "sample", "--total", "10", "--log"]).arg(&log);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(jsonl(&o.stdout).iter().all(|r| r["stratum"] == "default"));
    assert!(
        o.stderr.contains("every query went to stratum `default`; name one with --stratum-field F (the log's fields: text, flavour, user)"),
        "{}",
        o.stderr
    );
}

#[test]
fn stats_log_drift_uses_the_detected_field_and_never_a_spurious_one() {
    let dir = tempfile::tempdir().unwrap();
    // Gold: 2 how-to, 1 lookup, 1 multi-hop = 50/25/25 against the log's
    // 60/30/10: (|.5-.6| + |.25-.3| + |.25-.1|) / 2 = 0.15.
    let gold = write(
        dir.path(),
        "gold.yaml",
        "queries:\n  - {id: a, stratum: how-to, relevant: [x]}\n  - {id: b, stratum: how-to, relevant: [x]}\n  - {id: c, stratum: lookup, relevant: [x]}\n  - {id: d, stratum: multi-hop, relevant: [x]}\n",
    );
    let log = typed_log(dir.path(), "type");
    let mut c = rgate();
    c.args(["gold", "stats", "--gold"])
        .arg(&gold)
        .arg("--log")
        .arg(&log);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("(its `type` field): distance 0.15 (0 = same mix)"),
        "{}",
        o.stdout
    );
    // A log with no stratum field: no distance at all (it was 1.00: every
    // log query in `default`, a stratum the gold set does not have).
    let log = typed_log(dir.path(), "flavour");
    let mut c = rgate();
    c.args(["gold", "stats", "--gold"])
        .arg(&gold)
        .arg("--log")
        .arg(&log);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!o.stdout.contains("distance"), "{}", o.stdout);
    assert!(
        o.stdout.contains("not measured: the log has no stratum field"),
        "{}",
        o.stdout
    );
    let mut c = rgate();
    c.args(["--format", "json", "gold", "stats", "--gold"])
        .arg(&gold)
        .arg("--log")
        .arg(&log);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let j: Value = serde_json::from_str(&o.stdout).unwrap();
    let drift = j
        .pointer("/provenance/log_drift")
        .unwrap_or_else(|| panic!("{}", o.stdout));
    assert_eq!(drift["distance"], Value::Null);
}

/// A sheet of 20 queries, 5 graded chunks each (grades 0-3 by position),
/// every row a person's.
fn twenty_queries(dir: &Path) -> PathBuf {
    let mut s = String::new();
    for q in 0..20 {
        for c in 0..5 {
            s += &(json!({"query_id": format!("q-{q:02}"), "query": format!("query number {q}"), "stratum": "how-to",
                   "chunk_id": format!("docs/page-{q}.md#{c}"), "grade": (c % 4), "source": "person", "labeler": "ana",
                   "verified": true, "labeled_at": "2026-12-01T10:00:00Z"})
                .to_string()
                + "\n");
        }
    }
    write(dir, "sheet.jsonl", &s)
}

/// The YAML an import writes: `relevant` before `provenance`, one line per
/// chunk's record. 20 queries of 5 labels: per query 1 (id) + 1 (text) + 1
/// (stratum) + 1 + 5 (relevant) + 1 + 5 (provenance) = 15 lines, 300 in
/// all, plus `version` and `queries`: 302. Before, a record took 5 lines
/// (its key, then source, labeler, at, verified): 3 + 6 + 1 + 25 = 35 per
/// query, 702 in all, with `provenance` before `relevant`.
#[test]
fn imported_yaml_is_compact_and_reads_labels_first() {
    let dir = tempfile::tempdir().unwrap();
    let sheet = twenty_queries(dir.path());
    let gold = dir.path().join("gold.yaml");
    let mut c = rgate();
    c.args(["gold", "import"]).arg(&sheet).arg("--into").arg(&gold);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let text = fs::read_to_string(&gold).unwrap();
    assert_eq!(text.lines().count(), 302, "{text}");
    let first: String = text.lines().take(16).map(|l| l.to_string() + "\n").collect();
    assert_eq!(
        first,
        "version: 1\nqueries:\n- id: q-00\n  text: query number 0\n  stratum: how-to\n  relevant:\n    docs/page-0.md#0: 0\n    docs/page-0.md#1: 1\n    docs/page-0.md#2: 2\n    docs/page-0.md#3: 3\n    docs/page-0.md#4: 0\n  provenance:\n    docs/page-0.md#0: {source: person, labeler: ana, at: 2026-12-01T10:00:00Z, verified: true}\n    docs/page-0.md#1: {source: person, labeler: ana, at: 2026-12-01T10:00:00Z, verified: true}\n    docs/page-0.md#2: {source: person, labeler: ana, at: 2026-12-01T10:00:00Z, verified: true}\n    docs/page-0.md#3: {source: person, labeler: ana, at: 2026-12-01T10:00:00Z, verified: true}\n"
    );
    // Every reader takes it: the provenance counts come back.
    let mut c = rgate();
    c.args(["--format", "json", "gold", "stats", "--gold"]).arg(&gold);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let j: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(
        j.pointer("/provenance/labels_with_provenance"),
        Some(&json!(100)),
        "{}",
        o.stdout
    );
}

const TEMPLATE: &str = include_str!("../../src/templates/gold.yaml");

#[test]
fn import_warns_about_the_init_examples_and_drops_them_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let sheet = twenty_queries(dir.path());
    let gold = write(dir.path(), "gold.yaml", TEMPLATE);
    let mut c = rgate();
    c.args(["gold", "import"]).arg(&sheet).arg("--into").arg(&gold);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("still holds 3 example queries `rgate init` wrote (`q-001`, `q-002`, `q-003`)"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("--drop-template`"), "{}", o.stderr);
    // gold validate says so too.
    let mut c = rgate();
    c.args(["gold", "validate", "--gold"]).arg(&gold);
    let o = run(c);
    assert!(
        o.stdout
            .contains("3 queries are the examples `rgate init` wrote (`q-001`, `q-002`, `q-003`)"),
        "{}",
        o.stdout
    );
    // The remedy: the same import, with the flag, drops them (nothing new
    // to add, the drop alone is written).
    let mut c = rgate();
    c.args(["gold", "import"])
        .arg(&sheet)
        .arg("--into")
        .arg(&gold)
        .arg("--drop-template");
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!o.stderr.contains("example queries"), "{}", o.stderr);
    assert!(
        o.stdout
            .contains("dropped 3 example queries `rgate init` wrote: `q-001`, `q-002`, `q-003`"),
        "{}",
        o.stdout
    );
    let text = fs::read_to_string(&gold).unwrap();
    assert!(
        !text.contains("q-001") && !text.contains("ERR_QUOTA_EXCEEDED"),
        "{text}"
    );
    assert!(text.contains("- id: q-19"), "{text}");
    // A real query that is merely called q-001 is no example.
    let own = write(
        dir.path(),
        "own.yaml",
        "queries:\n  - {id: q-001, text: my own query, relevant: [x]}\n",
    );
    let mut c = rgate();
    c.args(["gold", "import"]).arg(&sheet).arg("--into").arg(&own);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!o.stderr.contains("example"), "{}", o.stderr);
}

#[test]
fn pool_says_what_a_query_absent_from_a_run_costs() {
    let dir = tempfile::tempdir().unwrap();
    let queries = write(
        dir.path(),
        "queries.jsonl",
        "{\"id\": \"q1\", \"text\": \"one\"}\n{\"id\": \"q2\", \"text\": \"two\"}\n{\"id\": \"q3\", \"text\": \"three\"}\n",
    );
    // Run a has q1 and q2; run b has q1; q3 is in neither.
    let a = write(
        dir.path(),
        "a.json",
        "{\"q1\": [\"c1\", \"c2\"], \"q2\": [\"c3\"]}",
    );
    let b = write(dir.path(), "b.json", "{\"q1\": [\"c2\", \"c4\"]}");
    let mut c = rgate();
    c.args(["gold", "pool", "--depth", "2", "--queries"])
        .arg(&queries)
        .arg("--run")
        .arg(&a)
        .arg("--run")
        .arg(&b);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!o.stderr.contains("score 0"), "{}", o.stderr);
    assert!(
        o.stderr.contains(
            "a.json: 1 of 3 queries is absent from this run, which adds no candidates for it: `q3`"
        ),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains(
            "b.json: 2 of 3 queries are absent from this run, which adds no candidates for them: `q2`, `q3`"
        ),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains(
            "1 query has no candidates in any run and no rows in the sheet: `q3`; no metric will score it"
        ),
        "{}",
        o.stderr
    );
    // q1: c1, c2, c4; q2: c3.
    assert_eq!(jsonl(&o.stdout).len(), 4);
}
