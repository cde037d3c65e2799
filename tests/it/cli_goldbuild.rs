//! Building a gold set end to end: sample, pool, label (in a real
//! pseudo-terminal under tmux), suggest, import, and the result evaluated.
//! Expected values are counted by hand from the small inputs written here.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{rgate, run};
use serde_json::Value;

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p
}

fn jsonl(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// A log of 100 distinct queries, 60/30/10 over three strata, where every
/// fifth query appears again with other case and spacing.
fn log(dir: &Path) -> std::path::PathBuf {
    let mut s = String::new();
    for i in 0..100 {
        let stratum = if i < 60 {
            "how-to"
        } else if i < 90 {
            "identifier-lookup"
        } else {
            "multi-hop"
        };
        s += &format!("{{\"text\": \"query number {i}\", \"stratum\": \"{stratum}\"}}\n");
        if i % 5 == 0 {
            s += &format!("{{\"text\": \"  Query  NUMBER {i} \", \"stratum\": \"{stratum}\"}}\n");
        }
    }
    write(dir, "log.jsonl", &s)
}

#[test]
fn sample_is_stratified_folded_and_seeded() {
    let dir = tempfile::tempdir().unwrap();
    let log = log(dir.path());
    let mut c = rgate();
    c.args(["gold", "sample", "--total", "10", "--seed", "7", "--log"])
        .arg(&log);
    let a = run(c);
    assert_eq!(a.code, 0, "{}", a.stderr);
    let rows = jsonl(&a.stdout);
    // 100 distinct of 120 rows; 10 in proportion 60/30/10: 6, 3, 1.
    let mut per: BTreeMap<String, usize> = BTreeMap::new();
    for r in &rows {
        *per.entry(r["stratum"].as_str().unwrap().to_string()).or_default() += 1;
        let text = r["text"].as_str().unwrap();
        assert!(text.starts_with("query number "), "{text}");
    }
    assert_eq!(
        per,
        BTreeMap::from([
            ("how-to".into(), 6),
            ("identifier-lookup".into(), 3),
            ("multi-hop".into(), 1)
        ])
    );
    assert!(
        a.stderr
            .contains("sampled 10 queries of 100 distinct (120 log rows, seed 7)"),
        "{}",
        a.stderr
    );
    // Ids are q- and 8 hex digits (checked by value in the next test).
    for r in &rows {
        let id = r["id"].as_str().unwrap();
        assert!(id.len() == 10 && id.starts_with("q-"), "{id}");
    }
    // The same seed gives the same sample; another seed another.
    let mut c = rgate();
    c.args(["gold", "sample", "--total", "10", "--seed", "7", "--log"])
        .arg(&log);
    assert_eq!(run(c).stdout, a.stdout);
    let mut c = rgate();
    c.args(["gold", "sample", "--total", "10", "--seed", "8", "--log"])
        .arg(&log);
    assert_ne!(run(c).stdout, a.stdout);
    // Per stratum: up to N each.
    let mut c = rgate();
    c.args(["gold", "sample", "--per-stratum", "20", "--log"])
        .arg(&log);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(jsonl(&o.stdout).len(), 20 + 20 + 10);
}

#[test]
fn sample_ids_are_hashes_of_the_folded_text() {
    let dir = tempfile::tempdir().unwrap();
    let log = write(
        dir.path(),
        "log.csv",
        "text,stratum\n\"Rotate an  API key\",how-to\nrotate an api key,how-to\n",
    );
    let mut c = rgate();
    c.args(["gold", "sample", "--total", "5", "--log"]).arg(&log);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // printf 'rotate an api key' | sha256sum -> 956fee24...
    assert_eq!(
        o.stdout,
        "{\"id\":\"q-956fee24\",\"text\":\"Rotate an  API key\",\"stratum\":\"how-to\"}\n"
    );
}

#[test]
fn sample_names_a_missing_text_field() {
    let dir = tempfile::tempdir().unwrap();
    let log = write(dir.path(), "log.jsonl", "{\"query\": \"a\"}\n");
    let mut c = rgate();
    c.args(["gold", "sample", "--total", "5", "--log"]).arg(&log);
    let o = run(c);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("log.jsonl:1: no `text` field"), "{}", o.stderr);
    assert!(
        o.stderr.contains("--text-field; this row has: query"),
        "{}",
        o.stderr
    );
}

/// Two queries, two runs, a gold set that already grades one chunk.
fn pool_inputs(
    dir: &Path,
) -> (
    std::path::PathBuf,
    std::path::PathBuf,
    std::path::PathBuf,
    std::path::PathBuf,
) {
    let queries = write(
        dir,
        "queries.jsonl",
        "{\"id\": \"q1\", \"text\": \"rotate a key\", \"stratum\": \"how-to\"}\n{\"id\": \"q2\", \"text\": \"LMN-4010\", \"stratum\": \"id\"}\n",
    );
    let a = write(
        dir,
        "a.jsonl",
        "{\"query_id\": \"q1\", \"results\": [\"c1\", \"c2\", \"c3\"]}\n{\"query_id\": \"q2\", \"results\": [\"c7\", \"c8\"]}\n",
    );
    let b = write(
        dir,
        "b.jsonl",
        "{\"query_id\": \"q1\", \"results\": [\"c2\", \"c4\", \"c1\"]}\n{\"query_id\": \"q2\", \"results\": [\"c9\"]}\n",
    );
    let corpus = write(dir, "corpus.jsonl", "{\"id\": \"c1\", \"text\": \"Keys rotate in place.\"}\n{\"id\": \"c4\", \"text\": \"Rotate with two keys.\"}\n");
    (queries, a, b, corpus)
}

#[test]
fn pool_is_the_union_of_top_k_with_gold_labels_prefilled() {
    let dir = tempfile::tempdir().unwrap();
    let (queries, a, b, corpus) = pool_inputs(dir.path());
    let gold = write(
        dir.path(),
        "gold.yaml",
        "version: 1\nqueries:\n  - id: q1\n    text: rotate a key\n    stratum: how-to\n    relevant: {c4: 2}\n",
    );
    let mut c = rgate();
    c.args(["gold", "pool", "--depth", "2", "--queries"])
        .arg(&queries)
        .arg("--run")
        .arg(&a)
        .arg("--run")
        .arg(&b)
        .arg("--corpus")
        .arg(&corpus)
        .arg("--gold")
        .arg(&gold);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let rows = jsonl(&o.stdout);
    // Top 2: q1 {c1, c2} ∪ {c2, c4} = {c1, c2, c4}; q2 {c7, c8} ∪ {c9}.
    let got: BTreeSet<(String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["query_id"].as_str().unwrap().into(),
                r["chunk_id"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want: BTreeSet<(String, String)> = [
        ("q1", "c1"),
        ("q1", "c2"),
        ("q1", "c4"),
        ("q2", "c7"),
        ("q2", "c8"),
        ("q2", "c9"),
    ]
    .iter()
    .map(|(q, c)| (q.to_string(), c.to_string()))
    .collect();
    assert_eq!(got, want);
    assert_eq!(rows.len(), 6, "each candidate once");
    for r in &rows {
        let keys: BTreeSet<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        for k in [
            "query_id", "query", "stratum", "chunk_id", "text", "grade", "source", "labeler", "verified",
        ] {
            assert!(keys.contains(k), "{k} missing in {r}");
        }
        match r["chunk_id"].as_str().unwrap() {
            "c4" => {
                assert_eq!(r["grade"], 2);
                assert_eq!(r["source"], "person");
                assert_eq!(r["verified"], true);
                assert_eq!(r["text"], "Rotate with two keys.");
            }
            "c1" => {
                assert_eq!(r["grade"], Value::Null);
                assert_eq!(r["text"], "Keys rotate in place.");
            }
            _ => assert_eq!(r["grade"], Value::Null),
        }
    }
    assert!(
        o.stderr
            .contains("pooled 6 candidates for 2 queries from 2 runs (depth 2); 1 pre-filled"),
        "{}",
        o.stderr
    );
    // CSV carries the same rows.
    let mut c = rgate();
    c.args(["gold", "pool", "--depth", "2", "--format", "csv", "--queries"])
        .arg(&queries)
        .arg("--run")
        .arg(&a);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o
        .stdout
        .starts_with("query_id,query,stratum,chunk_id,text,grade,source,labeler,verified"));
    assert_eq!(o.stdout.lines().count(), 1 + 4);
}

fn sheet_row(q: &str, c: &str, grade: Option<i32>, source: Option<&str>, verified: bool) -> String {
    serde_json::json!({
        "query_id": q, "query": format!("text of {q}"), "stratum": "s", "chunk_id": c, "text": format!("chunk {c}"),
        "grade": grade, "source": source, "labeler": source.map(|s| if s == "person" { "ana" } else { "judge.py" }), "verified": verified,
    })
    .to_string()
        + "\n"
}

#[test]
fn suggestions_come_from_a_command_and_never_replace_a_person() {
    let dir = tempfile::tempdir().unwrap();
    let sheet = write(
        dir.path(),
        "sheet.jsonl",
        &(sheet_row("q1", "c1", Some(2), Some("person"), true)
            + &sheet_row("q1", "c2", None, None, false)
            + &sheet_row("q2", "c3", None, None, false)),
    );
    // Grades every row it is asked about 1, and echoes how many it saw on stderr.
    let judge = write(
        dir.path(),
        "judge.py",
        "import sys, json\nn = 0\nfor l in sys.stdin:\n    r = json.loads(l)\n    n += 1\n    print(json.dumps({'query_id': r['query_id'], 'chunk_id': r['chunk_id'], 'grade': 1}))\nprint('asked', n, file=sys.stderr)\n",
    );
    let mut c = rgate();
    c.args(["gold", "suggest"])
        .arg(&sheet)
        .arg("--")
        .arg("python3")
        .arg(&judge);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let rows = jsonl(&fs::read_to_string(&sheet).unwrap());
    assert_eq!(
        (rows[0]["grade"].clone(), rows[0]["source"].clone()),
        (Value::from(2), Value::from("person"))
    );
    for r in &rows[1..] {
        assert_eq!(r["grade"], 1);
        assert_eq!(r["source"], "model");
        assert_eq!(r["verified"], false);
        // Named by the script, not the interpreter (issue 27 item 8).
        assert_eq!(r["labeler"], "judge.py");
    }
    assert!(
        o.stderr.contains("suggested grades for 2 of 2 rows asked"),
        "{}",
        o.stderr
    );

    // A failing command changes nothing and shows its stderr.
    let before = fs::read_to_string(&sheet).unwrap();
    let bad = write(
        dir.path(),
        "bad.py",
        "import sys\nprint('model quota exceeded', file=sys.stderr)\nsys.exit(3)\n",
    );
    let mut c = rgate();
    c.args(["gold", "suggest"])
        .arg(&sheet)
        .arg("--")
        .arg("python3")
        .arg(&bad);
    let o = run(c);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("model quota exceeded"), "{}", o.stderr);
    assert_eq!(fs::read_to_string(&sheet).unwrap(), before);
}

#[test]
fn a_hung_suggester_is_stopped_at_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let sheet = write(
        dir.path(),
        "sheet.jsonl",
        &sheet_row("q1", "c1", None, None, false),
    );
    let start = Instant::now();
    let mut c = rgate();
    c.args(["gold", "suggest"])
        .arg(&sheet)
        .args(["--timeout-s", "1", "--command", "sleep 30"]);
    let o = run(c);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("did not finish within 1 s"), "{}", o.stderr);
    assert!(start.elapsed() < Duration::from_secs(15));
}

#[test]
fn import_records_provenance_refuses_unverified_and_stops_at_conflicts() {
    let dir = tempfile::tempdir().unwrap();
    let gold = write(
        dir.path(),
        "gold.yaml",
        "version: 1\nqueries:\n  - id: q1\n    text: text of q1\n    stratum: s\n    relevant: [c0]\n",
    );
    let sheet = write(
        dir.path(),
        "sheet.jsonl",
        &(sheet_row("q1", "c1", Some(1), Some("person"), true)
            + &sheet_row("q1", "c2", Some(0), Some("person"), true)
            + &sheet_row("q1", "c3", Some(2), Some("model"), false)
            + &sheet_row("q2", "c4", Some(2), Some("person"), true)
            + &sheet_row("q2", "c5", None, None, false)),
    );
    let mut c = rgate();
    c.args(["gold", "import"]).arg(&sheet).arg("--into").arg(&gold);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("3 labels added, 0 changed, 0 already there, 1 query added"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("skipped 1 model suggestion no person verified"),
        "{}",
        o.stdout
    );
    let doc: serde_json::Value = serde_saphyr::from_str(&fs::read_to_string(&gold).unwrap()).unwrap();
    // Labels in file order, as (id, grade).
    let labels = |v: &serde_json::Value| -> Vec<(String, i64)> {
        v.as_object()
            .unwrap()
            .iter()
            .map(|(k, g)| (k.clone(), g.as_i64().unwrap()))
            .collect()
    };
    let l = |pairs: &[(&str, i64)]| -> Vec<(String, i64)> {
        pairs.iter().map(|(k, g)| (k.to_string(), *g)).collect()
    };
    let q1 = &doc["queries"][0];
    // c0 (grade 1) kept; c1 1, c2 0 added; c3 (unverified) not.
    assert_eq!(labels(&q1["relevant"]), l(&[("c0", 1), ("c1", 1), ("c2", 0)]));
    assert_eq!(q1["provenance"]["c1"]["source"], "person");
    assert_eq!(q1["provenance"]["c1"]["labeler"], "ana");
    assert_eq!(q1["provenance"]["c1"]["verified"], true);
    assert!(q1["provenance"].get("c3").is_none());
    let q2 = &doc["queries"][1];
    assert_eq!(q2["id"], "q2");
    assert_eq!(q2["text"], "text of q2");
    assert_eq!(labels(&q2["relevant"]), l(&[("c4", 2)]));

    // The imported gold set evaluates: q1 has c0, c1 relevant; q2 has c4.
    let run_file = write(
        dir.path(),
        "run.jsonl",
        "{\"query_id\": \"q1\", \"results\": [\"c1\", \"c9\"]}\n{\"query_id\": \"q2\", \"results\": [\"c8\", \"c4\"]}\n",
    );
    let mut c = rgate();
    c.args(["eval", "--metrics", "recall@1,mrr", "--format", "json", "--gold"])
        .arg(&gold)
        .arg("--run")
        .arg(&run_file);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let j: Value = serde_json::from_str(&o.stdout).unwrap();
    // recall@1: q1 1/2, q2 0/1 -> 0.25; mrr: q1 1, q2 1/2 -> 0.75.
    assert_eq!(j["metrics"]["recall@1"]["all"], 0.25);
    assert_eq!(j["metrics"]["mrr"]["all"], 0.75);

    // A conflict: the sheet now says c1 is 0 where the gold set says 1.
    let before = fs::read_to_string(&gold).unwrap();
    let conflict = write(
        dir.path(),
        "conflict.jsonl",
        &sheet_row("q1", "c1", Some(0), Some("person"), true),
    );
    let mut c = rgate();
    c.args(["gold", "import"]).arg(&conflict).arg("--into").arg(&gold);
    let o = run(c);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(
        o.stdout.contains("1 conflict found, nothing written"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("q1 c1: sheet 0 (ana), gold 1"), "{}", o.stdout);
    assert_eq!(fs::read_to_string(&gold).unwrap(), before);
    let mut c = rgate();
    c.args(["gold", "import"])
        .arg(&conflict)
        .arg("--into")
        .arg(&gold)
        .args(["--prefer", "sheet"]);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert!(o.stdout.contains("0 labels added, 1 changed"), "{}", o.stdout);

    // Unverified suggestions go in when asked, and validate says so.
    let mut c = rgate();
    c.args(["gold", "import"])
        .arg(&sheet)
        .arg("--into")
        .arg(&gold)
        .args(["--accept-unverified", "--prefer", "gold"]);
    assert_eq!(run(c).code, 0);
    let mut c = rgate();
    c.args(["gold", "validate", "--gold"]).arg(&gold);
    let o = run(c);
    assert!(
        o.stdout
            .contains("note: 1 label no person verified (model suggestions): `q1/c3`"),
        "{}",
        o.stdout
    );
}

#[test]
fn two_sheet_rows_that_disagree_are_a_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let sheet = write(
        dir.path(),
        "sheet.jsonl",
        &(sheet_row("q1", "c1", Some(1), Some("person"), true)
            + &sheet_row("q1", "c1", Some(3), Some("person"), true)),
    );
    let gold = dir.path().join("new.yaml");
    let mut c = rgate();
    c.args(["gold", "import"]).arg(&sheet).arg("--into").arg(&gold);
    let o = run(c);
    assert_eq!(o.code, 1);
    assert!(
        o.stdout.contains("q1 c1: sheet rows say 1 (ana) and 3 (ana)"),
        "{}",
        o.stdout
    );
    assert!(!gold.exists());
}

#[test]
fn stats_show_the_drift_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = log(dir.path());
    // Gold: 3 how-to, 1 multi-hop = 75% / 0% / 25% vs the log's 60/30/10:
    // distance (|.75-.6| + |0-.3| + |.25-.1|) / 2 = 0.30.
    let gold = write(
        dir.path(),
        "gold.yaml",
        "queries:\n  - {id: a, stratum: how-to, relevant: [x]}\n  - {id: b, stratum: how-to, relevant: [x]}\n  - {id: c, stratum: how-to, relevant: [x]}\n  - {id: d, stratum: multi-hop, relevant: [x]}\n",
    );
    let mut c = rgate();
    c.args(["gold", "stats", "--gold"])
        .arg(&gold)
        .arg("--log")
        .arg(&log);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("distance 0.30 (0 = same mix); most off: `identifier-lookup` is 0% of the gold set and 30% of the log"), "{}", o.stdout);
}

/// True, after saying so on stderr, when tmux cannot be run: a test that
/// drives the labeler in a pseudo-terminal then skips (the README's test
/// command asks only for a Rust toolchain; `.ci/run` installs tmux so CI
/// runs them). Checked before the test starts anything, so a skipped test
/// leaves no process behind.
pub(crate) fn tmux_missing(test: &str) -> bool {
    let found = std::process::Command::new("tmux")
        .arg("-V")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        eprintln!("SKIPPED {test}: no tmux on PATH (.ci/run installs it)");
    }
    !found
}

/// Drives `rgate gold label` in a real pseudo-terminal.
pub(crate) struct Tmux {
    socket: String,
}

impl Tmux {
    pub(crate) fn start(cmd: &str) -> Tmux {
        Tmux::start_sized(cmd, 100, 30)
    }

    /// In a window `w` columns by `h` lines.
    pub(crate) fn start_sized(cmd: &str, w: u16, h: u16) -> Tmux {
        let socket = format!("rgate-test-{}-{}", std::process::id(), rand_suffix());
        // A new server (its own socket), so the command gets this
        // environment, cleaned.
        let mut tmux = std::process::Command::new("tmux");
        common::clean_env(&mut tmux);
        let ok = tmux
            .args([
                "-L",
                &socket,
                "new-session",
                "-d",
                "-x",
                &w.to_string(),
                "-y",
                &h.to_string(),
                cmd,
            ])
            .status()
            .expect("tmux is needed for the labeler test (.ci/run installs it)");
        assert!(ok.success());
        Tmux { socket }
    }

    pub(crate) fn screen(&self) -> String {
        let o = std::process::Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    pub(crate) fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(text) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "waited for {text:?}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub(crate) fn keys(&self, keys: &str) {
        let ok = std::process::Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-l", keys])
            .status()
            .unwrap();
        assert!(ok.success());
    }

    pub(crate) fn wait_exit(&self) {
        let start = Instant::now();
        while std::process::Command::new("tmux")
            .args(["-L", &self.socket, "has-session"])
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
            .success()
        {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the labeler did not quit:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .stderr(std::process::Stdio::null())
            .status();
    }
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

#[test]
fn the_terminal_labeler_labels_undoes_quits_and_resumes() {
    if crate::cli_goldbuild::tmux_missing("the_terminal_labeler_labels_undoes_quits_and_resumes") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sheet = write(
        dir.path(),
        "sheet.jsonl",
        &(sheet_row("q1", "c1", None, None, false)
            + &sheet_row("q1", "c2", Some(1), Some("model"), false)
            + &sheet_row("q2", "c3", None, None, false)),
    );
    let bin = env!("CARGO_BIN_EXE_rgate");
    let cmd = format!("env NO_COLOR=1 {bin} gold label --labeler bo {}", sheet.display());
    let t = Tmux::start(&cmd);
    let s = t.wait_for("0/3 labeled");
    assert!(s.contains("query   q1  [s]") && s.contains("chunk c1"), "{s}");
    t.keys("2");
    let s = t.wait_for("1/3 labeled");
    // The model's suggestion is shown as such, on the next row.
    assert!(s.contains("grade 1 (suggested by judge.py, not verified)"), "{s}");
    t.keys("u");
    t.wait_for("0/3 labeled");
    t.keys("3");
    t.wait_for("1/3 labeled");
    t.keys("s");
    t.wait_for("row 3/3");
    t.keys("0");
    t.wait_for("2/3 labeled");
    t.keys("q");
    t.wait_exit();
    let rows = jsonl(&fs::read_to_string(&sheet).unwrap());
    assert_eq!(rows[0]["grade"], 3);
    assert_eq!(rows[0]["labeler"], "bo");
    assert_eq!(rows[0]["verified"], true);
    assert_eq!(rows[1]["source"], "model");
    assert_eq!(rows[2]["grade"], 0);
    drop(t);

    // Resume: starts at the one row no person graded, the skipped one.
    let t = Tmux::start(&cmd);
    let s = t.wait_for("2/3 labeled");
    assert!(s.contains("row 2/3"), "{s}");
    t.keys("1");
    t.wait_for("3/3 labeled");
    t.keys("q");
    t.wait_exit();
    let rows = jsonl(&fs::read_to_string(&sheet).unwrap());
    assert_eq!(
        (
            rows[1]["grade"].clone(),
            rows[1]["source"].clone(),
            rows[1]["verified"].clone()
        ),
        (Value::from(1), Value::from("person"), Value::from(true))
    );
}

#[test]
fn the_labeler_needs_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let sheet = write(
        dir.path(),
        "sheet.jsonl",
        &sheet_row("q1", "c1", None, None, false),
    );
    let mut c = rgate();
    c.args(["gold", "label"]).arg(&sheet);
    let o = run(c);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("gold label needs a terminal"), "{}", o.stderr);
}

/// A pre-filled row carries the gold label's recorded provenance (a
/// model's unverified grade stays a model's, unverified), not "verified
/// by a person".
#[test]
fn pool_prefills_with_the_gold_sets_recorded_provenance() {
    let dir = tempfile::tempdir().unwrap();
    let (queries, a, b, corpus) = pool_inputs(dir.path());
    let gold = write(
        dir.path(),
        "gold.yaml",
        "version: 1\nqueries:\n  - id: q1\n    text: rotate a key\n    stratum: how-to\n    relevant: {c4: 2}\n    provenance:\n      c4: {source: model, labeler: gpt, at: \"2026-11-30T10:00:00Z\", verified: false}\n",
    );
    let mut c = rgate();
    c.args(["gold", "pool", "--depth", "2", "--queries"])
        .arg(&queries)
        .arg("--run")
        .arg(&a)
        .arg("--run")
        .arg(&b)
        .arg("--corpus")
        .arg(&corpus)
        .arg("--gold")
        .arg(&gold);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let rows = jsonl(&o.stdout);
    let c4 = rows
        .iter()
        .find(|r| r["query_id"] == "q1" && r["chunk_id"] == "c4")
        .expect("c4 pooled for q1");
    assert_eq!(c4["grade"], 2);
    assert_eq!(c4["source"], "model");
    assert_eq!(c4["labeler"], "gpt");
    assert_eq!(c4["verified"], false);
    assert_eq!(c4["labeled_at"], "2026-11-30T10:00:00Z");
}
