//! Issue 48: the verified sample is the recorded draw, and the draw can be
//! audited (SPEC "Gating on model labels"). Each test is one of the
//! issue's attacks, run through the commands a user runs: padding the
//! sample, editing the record, a sheet of another draw, a refused draw, a
//! model shown to people, model grades added after people verified,
//! conflicting model grades. Expected values are counted by hand from the
//! world written here, or are the estimate before the attack (an attack
//! that cannot change it).

use crate::common;

use common::TestProject;
use serde_json::{json, Value};

/// Stratum a: a00..a39; stratum b: b00..b29. Each query pools 4 chunks;
/// people's grade of chunk k of query i is [`truth`], the model's
/// [`model`] (it errs on a pattern of pairs).
fn truth(i: usize, k: usize) -> i32 {
    match k {
        0 => i32::from(i.is_multiple_of(2)),
        1 => i32::from(i.is_multiple_of(3)),
        2 => 0,
        _ => i32::from(i.is_multiple_of(5)),
    }
}

fn model(i: usize, k: usize) -> i32 {
    let t = truth(i, k);
    if (i + k).is_multiple_of(4) {
        1 - t
    } else {
        t
    }
}

fn strata() -> [(&'static str, usize); 2] {
    [("a", 40), ("b", 30)]
}

/// The gold set before any person graded: model grades on every query.
fn world_gold() -> String {
    let mut g = String::from("version: 1\nqueries:\n");
    for (s, n) in strata() {
        for i in 0..n {
            g += &format!("- id: {s}{i:02}\n  stratum: {s}\n  model:\n");
            for k in 0..4 {
                g += &format!("    {s}{i}-{k}: {}\n", model(i, k));
            }
        }
    }
    g
}

/// A run: chunk (i + r) % 4 at rank r + 1.
fn world_run() -> String {
    let mut out = String::new();
    for (s, n) in strata() {
        for i in 0..n {
            let results: Vec<Value> = (0..4)
                .map(|r| json!({"id": format!("{s}{i}-{}", (i + r) % 4), "score": 10 - r}))
                .collect();
            out += &format!(
                "{}\n",
                json!({"query_id": format!("{s}{i:02}"), "results": results})
            );
        }
    }
    out
}

/// People's grade of a (query id, chunk id) pair of the world.
fn truth_of(q: &str, c: &str) -> i32 {
    let i: usize = q[1..].parse().unwrap();
    let k: usize = c.rsplit('-').next().unwrap().parse().unwrap();
    truth(i, k)
}

fn project() -> TestProject {
    TestProject::new()
        .with_file("g.yaml", world_gold())
        .with_file("run.jsonl", world_run())
}

fn verify_sample(p: &TestProject, seed: &str, out: &str, extra: &[&str]) -> common::Out {
    let mut a = vec![
        "gold",
        "verify-sample",
        "--gold",
        "g.yaml",
        "--per-stratum",
        "10",
        "--seed",
        seed,
        "--output",
        out,
    ];
    a.extend_from_slice(extra);
    p.bare(&a)
}

fn sheet_rows(p: &TestProject, sheet: &str) -> Vec<Value> {
    p.read(sheet)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every row of `sheet` graded by a person with the world's truth, written
/// to `graded`.
fn grade(p: &TestProject, sheet: &str, graded: &str) {
    let mut out = String::new();
    for mut r in sheet_rows(p, sheet) {
        let g = truth_of(r["query_id"].as_str().unwrap(), r["chunk_id"].as_str().unwrap());
        r["grade"] = json!(g);
        r["source"] = json!("person");
        r["labeler"] = json!("ana");
        r["verified"] = json!(true);
        out += &format!("{r}\n");
    }
    p.write(graded, out);
}

fn import(p: &TestProject, sheet: &str) -> common::Out {
    p.bare(&["gold", "import", "--with-model", sheet, "--into", "g.yaml"])
}

/// A drawn and verified world: seed 42, 10 per stratum.
fn verified_world() -> TestProject {
    let p = project();
    let o = verify_sample(&p, "42", "v.jsonl", &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    grade(&p, "v.jsonl", "v-graded.jsonl");
    let o = import(&p, "v-graded.jsonl");
    assert_eq!(o.code, 0, "{}", o.stderr);
    p
}

fn eval_ppi(p: &TestProject) -> (common::Out, Value) {
    let o = p.bare(&[
        "eval",
        "--gold",
        "g.yaml",
        "--run",
        "run.jsonl",
        "--labels",
        "ppi",
        "--metrics",
        "hit_rate@1,recall@2",
        "--format",
        "json",
    ]);
    let v = serde_json::from_str(&o.stdout).unwrap_or(Value::Null);
    (o, v)
}

fn drawn_ids(p: &TestProject) -> Vec<String> {
    let doc: Value = serde_saphyr::from_str(&p.read("g.yaml")).unwrap();
    doc["verify_sample"]["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// The 1-based line of the record's first field (where every reader
/// places the `verify_sample` map).
fn record_line(text: &str) -> usize {
    text.lines().position(|l| l == "verify_sample:").unwrap() + 2
}

/// Done-when 1: queries verified outside the draw (here 30, with their
/// true labels, chosen where the model erred least) are people's labels
/// under `labels: people` and never part of PPI: the estimate is the one
/// before, to the bit, and the report says they were left out.
#[test]
fn padding_the_verified_sample_does_not_move_the_ppi_estimate() {
    let p = verified_world();
    let (o, before) = eval_ppi(&p);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // 10 drawn per stratum: n_verified 20 over the 70 model-graded.
    assert_eq!(
        before["ppi"]["hit_rate@1"]["all"]["n_verified"],
        json!(20),
        "{before}"
    );
    let drawn = drawn_ids(&p);
    let mut pad = String::new();
    let mut padded = 0;
    for (s, n) in strata() {
        for i in 0..n {
            let id = format!("{s}{i:02}");
            if drawn.contains(&id) || padded == 30 {
                continue;
            }
            padded += 1;
            for k in 0..4 {
                pad += &format!(
                    "{}\n",
                    json!({"query_id": id, "stratum": s, "chunk_id": format!("{s}{i}-{k}"), "grade": truth(i, k), "source": "person", "labeler": "bo", "verified": true})
                );
            }
        }
    }
    p.write("pad.jsonl", pad);
    let o = import(&p, "pad.jsonl");
    assert_eq!(o.code, 0, "{}", o.stderr);
    let (o, after) = eval_ppi(&p);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(after["ppi"], before["ppi"]);
    assert_eq!(after["metrics"], before["metrics"]);
    assert!(
        o.stderr.contains(
            "30 verified queries with model grades outside the recorded draw are not part of the PPI estimate"
        ),
        "{}",
        o.stderr
    );
    // Under `labels: people` they count: 20 drawn + 30 padded.
    let (code, v) = p.json(&[
        "eval",
        "--gold",
        "g.yaml",
        "--run",
        "run.jsonl",
        "--labels",
        "people",
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["queries"], json!(50));
    // gold stats counts them apart.
    let (_, v) = p.json(&["gold", "stats", "--gold", "g.yaml"]);
    assert_eq!(v["labeling"][0]["verified"], json!(50), "{v}");
    assert_eq!(v["labeling"][0]["verified_not_drawn"], json!(30), "{v}");
}

/// Done-when 2: an edited seed, a swapped, removed or added id, a renamed
/// stratum and a query added after the draw are each refused by
/// validate and by `eval --labels ppi`: exit 2, the record's line, a hint.
#[test]
fn a_record_the_seed_does_not_reproduce_is_refused_at_its_line() {
    let p = verified_world();
    let good = p.read("g.yaml");
    let line = record_line(&good);
    let drawn = drawn_ids(&p);
    let a_drawn = drawn.iter().find(|d| d.starts_with('a')).unwrap().clone();
    let a_other = (0..40)
        .map(|i| format!("a{i:02}"))
        .find(|id| !drawn.contains(id))
        .unwrap();
    let seed_line = good.lines().nth(line - 1).unwrap().to_string();
    assert_eq!(seed_line, "  seed: 42");
    let later = good.replace(
        "verify_sample:\n",
        "- id: a40\n  stratum: a\n  model:\n    a40-0: 1\nverify_sample:\n",
    );
    let attacks: Vec<(&str, String, &str)> = vec![
        (
            "edited seed",
            good.replace("\n  seed: 42\n", "\n  seed: 43\n"),
            "seed 43 does not draw the recorded queries",
        ),
        (
            "swapped id",
            good.replace(&format!("\n  - {a_drawn}\n"), &format!("\n  - {a_other}\n")),
            "1 recorded and not drawn",
        ),
        (
            "removed id",
            good.replace(&format!("\n  - {a_drawn}\n"), "\n"),
            "1 drawn and not recorded",
        ),
        (
            "renamed stratum",
            good.replace("\n  stratum: b\n", "\n  stratum: c\n"),
            "stratum `b`",
        ),
        (
            "later query",
            later,
            "the model-graded queries of stratum `a` changed after the draw (40 then, 41 now)",
        ),
    ];
    for (what, text, said) in attacks {
        assert_ne!(text, good, "{what}: the edit did nothing");
        p.write("g.yaml", &text);
        // The added query moves the record down a few lines.
        let at = format!("g.yaml:{}:", record_line(&text));
        let o = p.bare(&["gold", "validate", "--gold", "g.yaml"]);
        assert_eq!(o.code, 2, "{what}: {}", o.stderr);
        assert!(o.stderr.contains(&at), "{what}: {}", o.stderr);
        assert!(o.stderr.contains(said), "{what}: {}", o.stderr);
        assert!(o.stderr.contains("hint:"), "{what}: {}", o.stderr);
        let (o, _) = eval_ppi(&p);
        assert_eq!(o.code, 2, "{what}: {}", o.stderr);
        assert!(o.stderr.contains(said), "{what}: {}", o.stderr);
    }
    p.write("g.yaml", &good);
    let o = p.bare(&["gold", "validate", "--gold", "g.yaml"]);
    assert_ne!(o.code, 2, "{}", o.stderr);
}

/// Done-when 3: a refused verify-sample writes nothing (no sheet, the gold
/// file unchanged); a sheet of a discarded draw is refused by import; the
/// record comes before the sheet, so a lost sheet is written again by the
/// same command, for the same draw.
#[test]
fn a_refused_draw_writes_nothing_and_a_sheet_of_another_draw_is_refused() {
    let p = project();
    let o = verify_sample(&p, "42", "v42.jsonl", &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let recorded = p.read("g.yaml");
    let o = verify_sample(&p, "43", "v43.jsonl", &[]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("records a draw already (seed 42"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("nothing was written"), "{}", o.stderr);
    assert!(!p.path("v43.jsonl").exists());
    assert_eq!(p.read("g.yaml"), recorded);
    // The sheet lost (a kill after the record): the same command writes it
    // again, for the same draw, and the record stands.
    let first = p.read("v42.jsonl");
    std::fs::remove_file(p.path("v42.jsonl")).unwrap();
    let o = verify_sample(&p, "42", "v42.jsonl", &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(p.read("v42.jsonl"), first);
    assert_eq!(p.read("g.yaml"), recorded);
    // Every row carries the draw's id.
    let id = sheet_rows(&p, "v42.jsonl")[0]["draw"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(id.starts_with("42-"), "{id}");
    assert!(sheet_rows(&p, "v42.jsonl").iter().all(|r| r["draw"] == json!(id)));
    // Redrawn twice: the record keeps both discarded seeds, and says which
    // draw this is.
    let o = verify_sample(&p, "43", "v43.jsonl", &["--replace"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = verify_sample(&p, "44", "v44.jsonl", &["--replace"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.contains("draw 3 of 3"), "{}", o.stderr);
    let doc: Value = serde_saphyr::from_str(&p.read("g.yaml")).unwrap();
    let seeds: Vec<&Value> = doc["verify_sample"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| &h["seed"])
        .collect();
    assert_eq!(seeds, [&json!(42), &json!(43)]);
    let o = p.bare(&["gold", "stats", "--gold", "g.yaml"]);
    assert!(o.stdout.contains("draw 3 of 3"), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("earlier seeds discarded with --replace: 42, 43"),
        "{}",
        o.stdout
    );
    // The sheet of draw 42, graded: refused, nothing written.
    grade(&p, "v42.jsonl", "v42-graded.jsonl");
    let before = p.read("g.yaml");
    let o = import(&p, "v42-graded.jsonl");
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains(&format!("the sheet was written for verification draw `{id}`")),
        "{}",
        o.stderr
    );
    assert_eq!(p.read("g.yaml"), before);
    // The current draw's sheet imports.
    grade(&p, "v44.jsonl", "v44-graded.jsonl");
    let o = import(&p, "v44-graded.jsonl");
    assert_eq!(o.code, 0, "{}", o.stderr);
    let (o, _) = eval_ppi(&p);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.contains("draw 3 of 3"), "{}", o.stderr);
}

/// Done-when 4: `--show-model` is recorded in the draw, and every PPI
/// report says people saw the model's grades.
#[test]
fn show_model_is_recorded_and_reported() {
    let p = project();
    let o = verify_sample(&p, "42", "v.jsonl", &["--show-model"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let doc: Value = serde_saphyr::from_str(&p.read("g.yaml")).unwrap();
    assert_eq!(doc["verify_sample"]["show_model"], json!(true));
    assert!(sheet_rows(&p, "v.jsonl")
        .iter()
        .all(|r| r["source"] == json!("model")));
    grade(&p, "v.jsonl", "g1.jsonl");
    assert_eq!(import(&p, "g1.jsonl").code, 0);
    let (o, v) = eval_ppi(&p);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let said = "people saw the model's grades when they verified the draw";
    assert!(o.stderr.contains(said), "{}", o.stderr);
    assert!(v.to_string().contains(said), "{v}");
    // Hidden by default, and said so.
    let q = project();
    assert_eq!(verify_sample(&q, "42", "v.jsonl", &[]).code, 0);
    let doc: Value = serde_saphyr::from_str(&q.read("g.yaml")).unwrap();
    assert_eq!(doc["verify_sample"]["show_model"], json!(false));
}

/// Done-when 5 (and item 5 of the issue): model grades added later to a
/// verified query stay model grades; PPI refuses until people grade them
/// (the same draw's command writes a sheet of just those pairs);
/// `gold pool --holes` lists no pair the model graded.
#[test]
fn verification_is_per_pair() {
    let p = verified_world();
    let q = drawn_ids(&p)[0].clone();
    let s = &q[..1];
    // A model grades a new chunk of a drawn, verified query.
    p.write(
        "more.jsonl",
        format!(
            "{}\n",
            json!({"query_id": q, "stratum": s, "chunk_id": "new-1", "grade": 2, "source": "model", "labeler": "m"})
        ),
    );
    let o = import(&p, "more.jsonl");
    assert_eq!(o.code, 0, "{}", o.stderr);
    let (_, v) = p.json(&["gold", "stats", "--gold", "g.yaml"]);
    assert_eq!(v["labeling"][0]["model_only_pairs_on_verified"], json!(1), "{v}");
    assert_eq!(v["labeling"][0]["verified"], json!(20), "{v}");
    let (o, _) = eval_ppi(&p);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("1 pair only the model graded"), "{}", o.stderr);
    // The same draw again: a sheet of that one pair.
    let o = verify_sample(&p, "42", "rest.jsonl", &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let rows = sheet_rows(&p, "rest.jsonl");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0]["query_id"].as_str(), rows[0]["chunk_id"].as_str()),
        (Some(q.as_str()), Some("new-1"))
    );
    let mut r = rows[0].clone();
    r["grade"] = json!(0);
    r["source"] = json!("person");
    r["verified"] = json!(true);
    p.write("rest-graded.jsonl", format!("{r}\n"));
    assert_eq!(import(&p, "rest-graded.jsonl").code, 0);
    let (o, _) = eval_ppi(&p);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // --holes: a run ranking `new-1` and an unlabeled `x`: only `x` is a
    // hole (people graded `new-1` now; before, the model had).
    p.write(
        "holes-run.jsonl",
        format!(
            "{}\n",
            json!({"query_id": q, "results": [{"id": "x", "score": 2}, {"id": "new-1", "score": 1}]})
        ),
    );
    let o = p.bare(&[
        "gold",
        "pool",
        "--holes",
        "--gold",
        "g.yaml",
        "--run",
        "holes-run.jsonl",
        "--depth",
        "5",
        "--output",
        "holes.jsonl",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let holes: Vec<String> = sheet_rows(&p, "holes.jsonl")
        .iter()
        .filter(|r| r["query_id"] == json!(q))
        .map(|r| r["chunk_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(holes, ["x"]);
    // A model-only query: the pairs the model graded are no holes.
    let other = (0..40)
        .map(|i| format!("a{i:02}"))
        .find(|id| !drawn_ids(&p).contains(id))
        .unwrap();
    let i: usize = other[1..].parse().unwrap();
    p.write(
        "holes-run2.jsonl",
        format!(
            "{}\n",
            json!({"query_id": other, "results": [{"id": format!("a{i}-0"), "score": 2}, {"id": "y", "score": 1}]})
        ),
    );
    let o = p.bare(&[
        "gold",
        "pool",
        "--holes",
        "--gold",
        "g.yaml",
        "--run",
        "holes-run2.jsonl",
        "--depth",
        "5",
        "--output",
        "holes2.jsonl",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let holes: Vec<String> = sheet_rows(&p, "holes2.jsonl")
        .iter()
        .filter(|r| r["query_id"] == json!(other))
        .map(|r| r["chunk_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(holes, ["y"]);
}

/// Item 11: two model grades of one pair in a sheet are a conflict (exit 1,
/// nothing written), as two people's are; another model's grade replacing
/// one the gold set holds is reported as changed.
#[test]
fn conflicting_model_grades_are_a_conflict_and_a_new_grade_a_change() {
    let p = project();
    let before = p.read("g.yaml");
    let m = |g: i32, who: &str| {
        format!(
            "{}\n",
            json!({"query_id": "a01", "stratum": "a", "chunk_id": "a1-0", "grade": g, "source": "model", "labeler": who})
        )
    };
    p.write("two.jsonl", m(1, "m1") + &m(3, "m2"));
    let o = import(&p, "two.jsonl");
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(o.stdout.contains("1 conflict found"), "{}", o.stdout);
    assert!(o.stdout.contains("a01 a1-0"), "{}", o.stdout);
    assert_eq!(p.read("g.yaml"), before);
    // a01's a1-0 holds the model's 0 (truth 0, (1 + 0) % 4 != 0): a 3 from
    // another model is one changed grade.
    assert_eq!(model(1, 0), 0);
    p.write("one.jsonl", m(3, "m2"));
    let (code, v) = p.json(&["gold", "import", "--with-model", "one.jsonl", "--into", "g.yaml"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["model_grades_changed"], json!(1), "{v}");
    let o = p.bare(&["gold", "import", "--with-model", "one.jsonl", "--into", "g.yaml"]);
    assert_eq!(o.code, 0);
    assert!(!o.stdout.contains("changed)"), "{}", o.stdout);
}

/// Item 10: a draw too small for PPI is warned of when it is drawn, with
/// what it means (2 strata, 1 each: 2 queries, no test can fail).
#[test]
fn a_small_draw_is_warned_of_at_draw_time() {
    let p = project();
    let o = p.bare(&[
        "gold",
        "verify-sample",
        "--gold",
        "g.yaml",
        "--per-stratum",
        "1",
        "--seed",
        "1",
        "--output",
        "v.jsonl",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("a small draw: strata have fewer than 10 queries drawn"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("2 queries drawn in all"), "{}", o.stderr);
    assert!(o.stderr.contains("a gate on them cannot fail"), "{}", o.stderr);
}
