//! A gold set built by a team: concurrent `gold import`s, two labelers and
//! a running `gold suggest` on one sheet, all through real processes; writes
//! through symbolic links keeping the mode; imports refused when they would
//! write a gold set the readers refuse. Expected values are counted from
//! the small inputs written here.

use crate::cli_goldbuild::Tmux;
use crate::common::{self, rgate, run};

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p
}

fn jsonl(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn row(q: &str, c: &str, stratum: &str, grade: Option<i32>, by: Option<(&str, &str)>) -> String {
    json!({
        "query_id": q, "query": format!("text of {q}"), "stratum": stratum, "chunk_id": c,
        "text": format!("chunk {c}"), "grade": grade,
        "source": by.map(|b| b.0), "labeler": by.map(|b| b.1),
        "verified": by.is_some_and(|b| b.0 == "person"),
    })
    .to_string()
        + "\n"
}

fn gold_ids(path: &Path) -> Vec<String> {
    let doc: Value = serde_saphyr::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    doc["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["id"].as_str().unwrap().to_string())
        .collect()
}

fn import(sheet: &Path, into: &Path, extra: &[&str]) -> common::Out {
    let mut c = rgate();
    c.args(["gold", "import"])
        .arg(sheet)
        .arg("--into")
        .arg(into)
        .args(extra);
    run(c)
}

fn wait_for_file(p: &Path) {
    let start = Instant::now();
    while !p.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{} never appeared",
            p.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A child stopped (by its id) if the test fails before it ends.
struct KillOnDrop(Option<std::process::Child>);

impl KillOnDrop {
    fn wait(mut self) -> std::process::Output {
        self.0.take().unwrap().wait_with_output().unwrap()
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Four imports of disjoint sheets into one gold file at once, three
/// rounds: every query of every sheet is in the gold set (each import used
/// to write back the copy it read first, keeping about one sheet's worth).
#[test]
fn concurrent_imports_of_disjoint_sheets_keep_every_query() {
    let dir = tempfile::tempdir().unwrap();
    let (sheets, per) = (4, 100);
    let paths: Vec<PathBuf> = (0..sheets)
        .map(|s| {
            let text: String = (0..per)
                .map(|i| {
                    row(
                        &format!("s{s}-q{i}"),
                        "c1",
                        "how-to",
                        Some(1),
                        Some(("person", "ana")),
                    )
                })
                .collect();
            write(dir.path(), &format!("sheet{s}.jsonl"), &text)
        })
        .collect();
    for round in 0..3 {
        let gold = dir.path().join(format!("gold{round}.yaml"));
        let children: Vec<_> = paths
            .iter()
            .map(|p| {
                common::command()
                    .args(["gold", "import"])
                    .arg(p)
                    .arg("--into")
                    .arg(&gold)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let o = c.wait_with_output().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        let mut ids = gold_ids(&gold);
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), sheets * per, "round {round}: queries kept");
        assert!(!dir.path().join(format!(".gold{round}.yaml.lock")).exists());
    }
}

/// Two labelers and a `gold suggest` on one sheet: ana grades rows 1-5 and
/// quits, bo (whose session opened before ana saved anything) grades rows
/// 6-10, and the suggester, which read the sheet before either of them,
/// finishes last. Every person's grade stays; the model fills the other ten
/// rows, and says how many rows it left to a person.
#[test]
fn two_labelers_and_a_suggester_share_a_sheet() {
    if crate::cli_goldbuild::tmux_missing("two_labelers_and_a_suggester_share_a_sheet") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let n = 20;
    let text: String = (1..=n)
        .map(|i| row(&format!("q{i:02}"), "c1", "s", None, None))
        .collect();
    let sheet = write(dir.path(), "sheet.jsonl", &text);
    let started = dir.path().join("started");
    let go = dir.path().join("go");
    // Answers grade 1 for every row asked, once told to go.
    let judge = write(
        dir.path(),
        "judge.py",
        &format!(
            "import sys, json, os, time\nrows = [json.loads(l) for l in sys.stdin]\nopen({started:?}, 'w').close()\nwhile not os.path.exists({go:?}):\n    time.sleep(0.02)\nfor r in rows:\n    print(json.dumps({{'query_id': r['query_id'], 'chunk_id': r['chunk_id'], 'grade': 1}}))\n",
            started = started.display().to_string(),
            go = go.display().to_string()
        ),
    );
    let suggest = KillOnDrop(Some(
        common::command()
            .args(["gold", "suggest"])
            .arg(&sheet)
            .args(["--timeout-s", "60", "--", "python3"])
            .arg(&judge)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    wait_for_file(&started);

    let bin = env!("CARGO_BIN_EXE_rgate");
    let session = |who: &str| {
        format!(
            "env NO_COLOR=1 {bin} gold label --labeler {who} {}",
            sheet.display()
        )
    };
    let bo = Tmux::start(&session("bo"));
    bo.wait_for("0/20 labeled");
    let ana = Tmux::start(&session("ana"));
    ana.wait_for("0/20 labeled");
    for k in 1..=5 {
        ana.keys("2");
        ana.wait_for(&format!("{k}/20 labeled"));
    }
    ana.keys("q");
    ana.wait_exit();
    // Bo still sees every row ungraded: skips to row 6 and grades five.
    for r in 2..=6 {
        bo.keys("s");
        bo.wait_for(&format!("row {r}/20"));
    }
    for k in 1..=5 {
        bo.keys("3");
        // The first save shows ana's five as well.
        bo.wait_for(&format!("{}/20 labeled", 5 + k));
    }
    fs::write(&go, "").unwrap();
    let o = suggest.wait();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(
            "judge.py suggested grades for 20 of 20 rows asked (stored as unverified, source model)\n"
        ),
        "{err}"
    );
    assert!(
        err.contains("10 rows a person graded while the command ran kept the person's grade"),
        "{err}"
    );
    bo.keys("q");
    bo.wait_exit();

    let rows = jsonl(&fs::read_to_string(&sheet).unwrap());
    let got: Vec<(i64, &str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["grade"].as_i64().unwrap(),
                r["source"].as_str().unwrap(),
                r["labeler"].as_str().unwrap(),
            )
        })
        .collect();
    let mut want = vec![(2, "person", "ana"); 5];
    want.extend(vec![(3, "person", "bo"); 5]);
    want.extend(vec![(1, "model", "judge.py"); 10]);
    assert_eq!(got, want);
}

/// Two people grading one row differently: the grade saved first stays,
/// the second labeler's screen says so, and the session ends with exit 1
/// listing the conflict, as `gold import` does.
#[test]
fn two_labelers_grading_one_row_differently_is_a_conflict() {
    if crate::cli_goldbuild::tmux_missing("two_labelers_grading_one_row_differently_is_a_conflict") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sheet = write(
        dir.path(),
        "sheet.jsonl",
        &(row("q1", "c1", "s", None, None) + &row("q1", "c2", "s", None, None)),
    );
    let bin = env!("CARGO_BIN_EXE_rgate");
    let err = dir.path().join("bo.err");
    let code = dir.path().join("bo.code");
    let bo = Tmux::start(&format!(
        "sh -c 'NO_COLOR=1 {bin} gold label --labeler bo {} 2>{}; echo $? >{}'",
        sheet.display(),
        err.display(),
        code.display()
    ));
    bo.wait_for("0/2 labeled");
    let ana = Tmux::start(&format!(
        "env NO_COLOR=1 {bin} gold label --labeler ana {}",
        sheet.display()
    ));
    ana.wait_for("0/2 labeled");
    ana.keys("2");
    ana.wait_for("1/2 labeled");
    ana.keys("q");
    ana.wait_exit();
    bo.keys("3");
    let s = bo.wait_for("not saved:");
    assert!(
        s.contains("not saved: `q1/c1`: ana graded it 2, bo graded it 3; ana's grade, saved first, stays"),
        "{s}"
    );
    // The same grade twice is no conflict.
    bo.keys("p");
    bo.keys("n");
    bo.keys("0");
    bo.wait_for("2/2 labeled");
    bo.keys("q");
    bo.wait_exit();
    wait_for_file(&code);
    assert_eq!(fs::read_to_string(&code).unwrap().trim(), "1");
    let err = fs::read_to_string(&err).unwrap();
    assert!(
        err.contains("conflict: `q1/c1`: ana graded it 2, bo graded it 3; ana's grade, saved first, stays\n"),
        "{err}"
    );
    assert!(
        err.contains("not saved for 1 row; settle them with the other labeler"),
        "{err}"
    );
    let rows = jsonl(&fs::read_to_string(&sheet).unwrap());
    assert_eq!(
        (rows[0]["grade"].clone(), rows[0]["labeler"].clone()),
        (json!(2), json!("ana"))
    );
    assert_eq!(
        (rows[1]["grade"].clone(), rows[1]["labeler"].clone()),
        (json!(0), json!("bo"))
    );
}

/// Import and suggest write through a symbolic link to the real file (the
/// link stays a link), keep a 0600 mode, and remove the temp file a killed
/// run left beside the real file.
#[cfg(unix)]
#[test]
fn writes_go_through_links_keep_the_mode_and_clear_leftovers() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let real_dir = dir.path().join("shared");
    fs::create_dir_all(&real_dir).unwrap();
    let real_gold = real_dir.join("gold.yaml");
    let first = write(
        dir.path(),
        "a.jsonl",
        &row("q1", "c1", "s", Some(2), Some(("person", "ana"))),
    );
    assert_eq!(import(&first, &real_gold, &[]).code, 0);
    fs::set_permissions(&real_gold, fs::Permissions::from_mode(0o600)).unwrap();
    let link = dir.path().join("gold.yaml");
    std::os::unix::fs::symlink(&real_gold, &link).unwrap();
    let leftover = real_dir.join(".gold.yaml.999999.tmp");
    fs::write(&leftover, "queries: [half").unwrap();
    let second = write(
        dir.path(),
        "b.jsonl",
        &row("q2", "c2", "s", Some(1), Some(("person", "bo"))),
    );
    let o = import(&second, &link, &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(gold_ids(&real_gold), ["q1", "q2"]);
    assert_eq!(
        fs::metadata(&real_gold).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(!leftover.exists(), "the leftover temp file is removed");
    // Migrate writes the same way.
    let chunks = write(
        dir.path(),
        "chunks.jsonl",
        "{\"id\": \"c1\", \"doc\": \"d.md\", \"start\": 0, \"end\": 10}\n{\"id\": \"c2\", \"doc\": \"d.md\", \"start\": 10, \"end\": 20}\n",
    );
    let mut c = rgate();
    c.args(["gold", "migrate", "--gold"])
        .arg(&link)
        .arg("--chunks")
        .arg(&chunks);
    let o = run(c);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(fs::read_to_string(&real_gold).unwrap().contains("doc: d.md"));
    assert_eq!(
        fs::metadata(&real_gold).unwrap().permissions().mode() & 0o777,
        0o600
    );

    let real_sheet = real_dir.join("sheet.jsonl");
    fs::write(&real_sheet, row("q1", "c1", "s", None, None)).unwrap();
    fs::set_permissions(&real_sheet, fs::Permissions::from_mode(0o600)).unwrap();
    let sheet_link = dir.path().join("sheet.jsonl");
    std::os::unix::fs::symlink(&real_sheet, &sheet_link).unwrap();
    let leftover = real_dir.join(".sheet.jsonl.4242.tmp");
    fs::write(&leftover, "{").unwrap();
    let judge = write(
        dir.path(),
        "judge.py",
        "import sys, json\nfor l in sys.stdin:\n    r = json.loads(l)\n    print(json.dumps({'query_id': r['query_id'], 'chunk_id': r['chunk_id'], 'grade': 3}))\n",
    );
    let mut c = rgate();
    c.args(["gold", "suggest"])
        .arg(&sheet_link)
        .args(["--", "python3"])
        .arg(&judge);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(fs::symlink_metadata(&sheet_link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(jsonl(&fs::read_to_string(&real_sheet).unwrap())[0]["grade"], 3);
    assert_eq!(
        fs::metadata(&real_sheet).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(!leftover.exists());
}

/// What the readers refuse, import refuses before writing: exit 2, the
/// gold file untouched (or not created).
#[test]
fn import_refuses_a_gold_set_the_readers_would_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let gold = dir.path().join("gold.yaml");
    let cases: [(&str, String, &str); 5] = [
        (
            "all",
            row("q1", "c1", "all", Some(1), Some(("person", "ana"))),
            "stratum name `all` is reserved",
        ),
        (
            "macro",
            row("q1", "c1", "macro", Some(1), Some(("person", "ana"))),
            "stratum name `macro` is reserved",
        ),
        (
            "space",
            row("q 1", "c1", "s", Some(1), Some(("person", "ana"))),
            "q 1",
        ),
        (
            "newline",
            row("q\n1", "c1", "s", Some(1), Some(("person", "ana"))),
            "white space",
        ),
        (
            "two strata",
            row("q1", "c1", "how-to", Some(1), Some(("person", "ana")))
                + &row("q1", "c2", "multi-hop", Some(0), Some(("person", "ana"))),
            "query `q1` has two strata in the sheet: `how-to` and `multi-hop`",
        ),
    ];
    for (name, text, says) in &cases {
        let sheet = write(dir.path(), "bad.jsonl", text);
        let o = import(&sheet, &gold, &[]);
        assert_eq!(o.code, 2, "{name}: {}{}", o.stdout, o.stderr);
        assert!(o.stderr.contains(says), "{name}: {}", o.stderr);
        assert!(o.stderr.contains("nothing was written"), "{name}: {}", o.stderr);
        assert!(!gold.exists(), "{name}");
    }
    // Only model suggestions nobody verified: no `queries: []` file.
    let sheet = write(
        dir.path(),
        "model.jsonl",
        &row("q1", "c1", "s", Some(1), Some(("model", "judge"))),
    );
    let o = import(&sheet, &gold, &[]);
    assert_eq!(o.code, 2, "{}", o.stdout);
    assert!(
        o.stderr.contains("nothing to import into")
            && o.stderr
                .contains("the sheet has no verified grades (1 model suggestion no person verified)"),
        "{}",
        o.stderr
    );
    assert!(!gold.exists());
    // Into an existing gold set, a bad row leaves the file as it was.
    let good = write(
        dir.path(),
        "good.jsonl",
        &row("q1", "c1", "s", Some(1), Some(("person", "ana"))),
    );
    assert_eq!(import(&good, &gold, &[]).code, 0);
    let before = fs::read(&gold).unwrap();
    let sheet = write(dir.path(), "bad.jsonl", &cases[0].1.replace("q1", "q2"));
    assert_eq!(import(&sheet, &gold, &[]).code, 2);
    assert_eq!(fs::read(&gold).unwrap(), before);
    // Whatever import writes, validate reads.
    let mut c = rgate();
    c.args(["gold", "validate", "--gold"]).arg(&gold);
    assert_eq!(run(c).code, 0);
}

/// A person's grade wins over a model's on either side of an import; two
/// people's different grades are a conflict naming both (exit 1).
#[test]
fn import_lets_a_person_beat_a_model_and_names_both_people_in_a_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let gold = dir.path().join("gold.yaml");
    let model = write(
        dir.path(),
        "m.jsonl",
        &row("q1", "c1", "s", Some(1), Some(("model", "judge"))),
    );
    assert_eq!(import(&model, &gold, &["--accept-unverified"]).code, 0);
    // The person's 3 replaces the model's 1: no conflict.
    let ana = write(
        dir.path(),
        "ana.jsonl",
        &row("q1", "c1", "s", Some(3), Some(("person", "ana"))),
    );
    let o = import(&ana, &gold, &[]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert!(o.stdout.contains("0 labels added, 1 changed"), "{}", o.stdout);
    // A model's 0 does not replace the person's 3.
    let model0 = write(
        dir.path(),
        "m0.jsonl",
        &row("q1", "c1", "s", Some(0), Some(("model", "judge"))),
    );
    let before = fs::read(&gold).unwrap();
    let o = import(&model0, &gold, &["--accept-unverified"]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert_eq!(fs::read(&gold).unwrap(), before);
    // Another person's 2: a conflict naming ana and bo, nothing written.
    let bo = write(
        dir.path(),
        "bo.jsonl",
        &row("q1", "c1", "s", Some(2), Some(("person", "bo"))),
    );
    let o = import(&bo, &gold, &[]);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(
        o.stdout.contains("q1 c1: sheet 2 (bo), gold 3 (ana)"),
        "{}",
        o.stdout
    );
    assert_eq!(fs::read(&gold).unwrap(), before);
    // Within one sheet, a person's row settles it over a model's row.
    let mixed = write(
        dir.path(),
        "mixed.jsonl",
        &(row("q2", "c1", "s", Some(2), Some(("person", "ana")))
            + &row("q2", "c1", "s", Some(0), Some(("model", "judge")))),
    );
    let o = import(&mixed, &gold, &["--accept-unverified"]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    let doc: Value = serde_saphyr::from_str(&fs::read_to_string(&gold).unwrap()).unwrap();
    assert_eq!(doc["queries"][1]["relevant"], json!({"c1": 2}));
}

/// A suggester that answers each row twice grades each row once (not "4
/// of 2 rows"); one that gives a row two different grades is refused.
#[test]
fn repeated_suggestions_count_once_and_contradicting_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = row("q1", "c1", "s", None, None) + &row("q2", "c2", "s", None, None);
    let sheet = write(dir.path(), "sheet.jsonl", &text);
    let twice = write(
        dir.path(),
        "twice.py",
        "import sys, json\nrows = [json.loads(l) for l in sys.stdin]\nfor g in (1, 1):\n    for r in rows:\n        print(json.dumps({'query_id': r['query_id'], 'chunk_id': r['chunk_id'], 'grade': g}))\n",
    );
    let mut c = rgate();
    c.args(["gold", "suggest"])
        .arg(&sheet)
        .args(["--", "python3"])
        .arg(&twice);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr.contains("suggested grades for 2 of 2 rows asked"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr
            .contains("note: 2 output lines repeated a grade already given; counted once"),
        "{}",
        o.stderr
    );

    let sheet = write(dir.path(), "sheet.jsonl", &text);
    let differ = write(
        dir.path(),
        "differ.py",
        &fs::read_to_string(&twice).unwrap().replace("(1, 1)", "(1, 2)"),
    );
    let mut c = rgate();
    c.args(["gold", "suggest"])
        .arg(&sheet)
        .args(["--", "python3"])
        .arg(&differ);
    let o = run(c);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("graded `q1/c1` twice, 1 on line 1 and 2 on line 3 of its output"),
        "{}",
        o.stderr
    );
    assert_eq!(fs::read_to_string(&sheet).unwrap(), text);
}

/// `gold pool --output` onto a sheet people already label merges: every
/// graded row stays as it was, only the pairs the sheet lacks are added
/// after their query's rows. It used to replace the sheet, grades and all.
#[test]
fn pooling_again_into_a_labeled_sheet_adds_rows_and_keeps_grades() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let queries = write(
        d,
        "queries.jsonl",
        "{\"id\": \"q1\", \"text\": \"rotate a key\", \"stratum\": \"how-to\"}\n\
         {\"id\": \"q2\", \"text\": \"find err 42\", \"stratum\": \"lookup\"}\n",
    );
    let a = write(d, "a.tsv", "q1 Q0 c1 1 9 a\nq2 Q0 c3 1 9 a\n");
    let b = write(d, "b.tsv", "q1 Q0 c2 1 9 b\nq2 Q0 c3 1 9 b\nq2 Q0 c4 2 8 b\n");
    let sheet = d.join("sheet.jsonl");
    let pool = |runs: &[&Path]| {
        let mut c = rgate();
        c.args(["gold", "pool", "--depth", "2", "--queries"])
            .arg(&queries);
        for r in runs {
            c.arg("--run").arg(r);
        }
        c.arg("--output").arg(&sheet);
        run(c)
    };
    let o = pool(&[&a]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // A person grades both rows of the first pool (q1/c1, q2/c3).
    let graded: String = fs::read_to_string(&sheet)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v["grade"] = json!(2);
            v["source"] = json!("person");
            v["labeler"] = json!("ana");
            v["verified"] = json!(true);
            v.to_string() + "\n"
        })
        .collect();
    fs::write(&sheet, graded).unwrap();
    let o = pool(&[&a, &b]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("kept its 2 rows as they were and added 2 new candidates"),
        "{}",
        o.stderr
    );
    let rows = jsonl(&fs::read_to_string(&sheet).unwrap());
    let got: Vec<(&str, &str, Option<i64>)> = rows
        .iter()
        .map(|r| {
            (
                r["query_id"].as_str().unwrap(),
                r["chunk_id"].as_str().unwrap(),
                r["grade"].as_i64(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("q1", "c1", Some(2)),
            ("q1", "c2", None),
            ("q2", "c3", Some(2)),
            ("q2", "c4", None),
        ]
    );
    // `--format csv` into a file whose name says JSONL would write a sheet
    // no reader takes: refused, the sheet unchanged.
    let before = fs::read_to_string(&sheet).unwrap();
    let mut c = rgate();
    c.args(["gold", "pool", "--depth", "2", "--format", "csv", "--queries"])
        .arg(&queries)
        .arg("--run")
        .arg(&a)
        .arg("--output")
        .arg(&sheet);
    let o = run(c);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("does not end in .csv"), "{}", o.stderr);
    assert_eq!(fs::read_to_string(&sheet).unwrap(), before);
}
