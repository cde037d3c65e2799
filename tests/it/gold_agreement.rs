//! Issue 27 items 5, 6 (agreement) and 8: `gold agreement` against values
//! computed independently, `gold pool --holes` against a hand-computed set
//! (and through the command the gate's judged@k warning prints), and
//! `gold suggest --command` keeping rgate's own flags.

use crate::common;

use std::collections::BTreeSet;

use common::TestProject;
use serde_json::{json, Value};

/// Ten (model, person) grade pairs in two strata, each a sheet row graded by
/// ana (a person) with gpt-4o's grade kept as an opinion (as `give` leaves
/// a row a person graded after the model), and one row only the model
/// graded. The pairs are those of the unit test in
/// src/goldbuild/agreement.rs, worked by hand there.
const PAIRS: [(&str, &str, i32, i32); 10] = [
    ("q1", "how-to", 0, 0),
    ("q1", "how-to", 0, 0),
    ("q1", "how-to", 0, 1),
    ("q2", "how-to", 1, 1),
    ("q2", "how-to", 1, 2),
    ("q3", "lookup", 2, 2),
    ("q3", "lookup", 2, 2),
    ("q3", "lookup", 3, 2),
    ("q4", "lookup", 3, 3),
    ("q4", "lookup", 1, 0),
];

fn sheet() -> String {
    let mut s = String::new();
    for (i, (q, stratum, model, person)) in PAIRS.iter().enumerate() {
        let row = json!({"query_id": q, "query": format!("text of {q}"), "stratum": stratum,
            "chunk_id": format!("c{i}"), "text": "chunk", "grade": person, "source": "person",
            "labeler": "ana", "verified": true,
            "opinions": [{"grade": model, "source": "model", "labeler": "gpt-4o", "prompt": "ab12"}]});
        s.push_str(&format!("{row}\n"));
    }
    s.push_str(&format!(
        "{}\n",
        json!({"query_id": "q5", "stratum": "lookup", "chunk_id": "c99", "grade": 2,
            "source": "model", "labeler": "gpt-4o", "verified": false})
    ));
    s
}

/// Values from scikit-learn 1.9.1, computed once (the test does not need
/// it):
///
/// ```text
/// from sklearn.metrics import cohen_kappa_score as k
/// # a = model grades, b = person grades of PAIRS (all, or one stratum)
/// k([int(x >= L) for x in a], [int(y >= L) for y in b])        # kappa
/// k(a, b, weights="quadratic", labels=[0, 1, 2, 3])            # weighted
/// ```
///
/// (level, stratum, kappa, weighted kappa):
const SKLEARN: [(i32, &str, f64, f64); 6] = [
    (1, "all", 0.5238095238095238, 0.8198198198198198),
    (1, "how-to", 0.6153846153846154, 0.5833333333333333),
    (1, "lookup", 0.0, 0.7619047619047619),
    (2, "all", 0.8, 0.8198198198198198),
    (2, "how-to", 0.0, 0.5833333333333333),
    (2, "lookup", 1.0, 0.7619047619047619),
];

fn scope<'a>(v: &'a Value, stratum: &str) -> &'a Value {
    if stratum == "all" {
        return &v["all"];
    }
    v["strata"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stratum"] == stratum)
        .unwrap_or_else(|| panic!("no stratum {stratum} in {v}"))
}

fn close(v: &Value, want: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - want).abs() < 1e-12)
}

/// The figures of every scope, checked against scikit-learn and by hand.
fn check_figures(p: &TestProject, input: &str) {
    for level in [1, 2] {
        let (code, v) = p.json(&[
            "gold",
            "agreement",
            input,
            "--relevance-level",
            &level.to_string(),
        ]);
        assert_eq!(code, 0, "{v}");
        assert_eq!(v["between"], json!(["model", "person"]));
        assert_eq!(v["all"]["n"], 10, "{v}");
        // 6 of 10 pairs share their grade; by stratum 3 of 5 each.
        assert!(close(&v["all"]["agreement"], 0.6), "{v}");
        assert!(close(&scope(&v, "how-to")["agreement"], 0.6), "{v}");
        for (l, stratum, kappa, weighted) in SKLEARN.iter().filter(|s| s.0 == level) {
            let s = scope(&v, stratum);
            assert!(close(&s["kappa"], *kappa), "level {l} {stratum}: {s}");
            assert!(close(&s["weighted_kappa"], *weighted), "level {l} {stratum}: {s}");
            assert_eq!(s["kappa_undefined"], Value::Null);
        }
        // Rows: the model's grade; columns: the person's (counted from PAIRS).
        assert_eq!(
            v["all"]["confusion"],
            json!([[2, 1, 0, 0], [1, 1, 1, 0], [0, 0, 2, 0], [0, 0, 1, 1]])
        );
        assert_eq!(v["labelers"], json!({"a": {"gpt-4o": 10}, "b": {"ana": 10}}));
    }
}

#[test]
fn agreement_on_a_sheet_equals_scikit_learns_kappas() {
    let p = TestProject::new().with_file("sheet.jsonl", sheet());
    check_figures(&p, "sheet.jsonl");
    let (_, v) = p.json(&["gold", "agreement", "sheet.jsonl"]);
    // The row only the model graded is counted, not compared.
    assert_eq!((v["pairs"].clone(), v["only_a"].clone()), (json!(11), json!(1)));
    assert_eq!(v["kind"], "sheet");

    let o = p.run(&["gold", "agreement", "sheet.jsonl"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.starts_with(
            "gold agreement: model vs person on the 10 of 11 pairs both graded, in sheet.jsonl (relevant = grade >= 1)\n"
        ),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("all      10      0.600  0.524           0.820           0.700            0.700"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("model: gpt-4o (10); person: ana (10)"),
        "{}",
        o.stdout
    );
    let md = p.run(&["gold", "agreement", "sheet.jsonl", "--format", "markdown"]);
    assert!(
        md.stdout.contains("| all | 10 | 0.600 | 0.524 | 0.820 |"),
        "{}",
        md.stdout
    );
    // A CSV copy of the sheet (opinions in their JSON cell) reads the same.
    let rows = rgate::goldbuild::sheet::read(&p.path("sheet.jsonl")).unwrap();
    p.write(
        "sheet.csv",
        rgate::goldbuild::sheet::render(&rows, rgate::goldbuild::sheet::SheetFormat::Csv).unwrap(),
    );
    check_figures(&p, "sheet.csv");
}

/// `gold import` carries the sheet's other grades into the gold set's
/// provenance, so the agreement can be read from the gold set too, with the
/// same figures.
#[test]
fn agreement_on_an_imported_gold_set_is_the_sheets() {
    let p = TestProject::new().with_file("sheet.jsonl", sheet());
    let o = p.run(&["gold", "import", "sheet.jsonl", "--into", "gold.yaml"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let gold = p.read("gold.yaml");
    assert!(gold.contains("opinions"), "{gold}");
    assert!(gold.contains("gpt-4o"), "{gold}");
    check_figures(&p, "gold.yaml");
    let (_, v) = p.json(&["gold", "agreement", "gold.yaml"]);
    assert_eq!(v["kind"], "gold");
    // The unverified model row was not imported: 10 labels, all compared.
    assert_eq!((v["pairs"].clone(), v["only_a"].clone()), (json!(10), json!(0)));
    // And the gold set still validates and evaluates as before.
    let o = p.run(&["gold", "validate", "--gold", "gold.yaml"]);
    assert!(o.code == 0 || o.code == 1, "{}", o.stderr);
}

#[test]
fn two_people_and_named_labelers() {
    // ana's own grade, bo's blind second opinion beside it, a model's too.
    let rows = [("c1", 2, 2, 3), ("c2", 0, 1, 0), ("c3", 1, 1, 1), ("c4", 3, 2, 3)];
    let mut s = String::new();
    for (c, ana, bo, model) in rows {
        s.push_str(&format!(
            "{}\n",
            json!({"query_id": "q1", "stratum": "s", "chunk_id": c, "grade": ana, "source": "person",
                "labeler": "ana", "verified": true, "opinions": [
                    {"grade": model, "source": "model", "labeler": "m1"},
                    {"grade": bo, "source": "person", "labeler": "bo"}]})
        ));
    }
    let p = TestProject::new().with_file("sheet.jsonl", s);
    // person,person: ana (the row's own) against bo.
    let (code, v) = p.json(&["gold", "agreement", "sheet.jsonl", "--between", "person,person"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["labelers"], json!({"a": {"ana": 4}, "b": {"bo": 4}}));
    assert_eq!(
        v["all"]["confusion"],
        json!([[0, 1, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 0]])
    );
    // By hand: 2 of 4 the same. Relevant (>= 1): ana's 2,0,1,3 -> 3; bo's
    // 2,1,1,2 -> 4; the two agree on 3 of 4; p_e = 0.75·1 + 0.25·0 =
    // 0.75; kappa = (0.75 - 0.75) / 0.25 = 0.
    assert!(close(&v["all"]["agreement"], 0.5), "{v}");
    assert!(close(&v["all"]["kappa"], 0.0), "{v}");
    // Named: the model m1 against bo.
    let (_, v) = p.json(&["gold", "agreement", "sheet.jsonl", "--between", "m1,bo"]);
    assert_eq!(v["labelers"], json!({"a": {"m1": 4}, "b": {"bo": 4}}));
    assert_eq!(v["all"]["confusion"][0][1], 1);
    // The same name twice is refused.
    let o = p.run(&["gold", "agreement", "sheet.jsonl", "--between", "bo,bo"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("--between names bo twice"), "{}", o.stderr);
    let o = p.run(&["gold", "agreement", "sheet.jsonl", "--between", "model"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("is not two sources A,B"), "{}", o.stderr);
}

#[test]
fn an_undefined_kappa_is_null_with_its_reason() {
    // Both call every pair not relevant: chance agreement is total.
    let mut s = String::new();
    for c in ["c1", "c2"] {
        s.push_str(&format!(
            "{}\n",
            json!({"query_id": "q1", "chunk_id": c, "grade": 0, "source": "person", "labeler": "ana",
                "verified": true, "opinions": [{"grade": 0, "source": "model", "labeler": "m"}]})
        ));
    }
    let p = TestProject::new().with_file("sheet.jsonl", s);
    let (code, v) = p.json(&["gold", "agreement", "sheet.jsonl"]);
    assert_eq!(code, 0, "{v}");
    let all = &v["all"];
    assert_eq!(all["kappa"], Value::Null);
    assert_eq!(
        all["kappa_undefined"],
        "one class only: both sides called every pair not relevant"
    );
    assert_eq!(all["weighted_kappa"], Value::Null);
    assert_eq!(
        all["weighted_kappa_undefined"],
        "one grade only: both sides gave every pair grade 0"
    );
    assert!(close(&all["agreement"], 1.0));
    // A row with no stratum is in "default".
    assert_eq!(v["strata"][0]["stratum"], "default");
    let o = p.run(&["gold", "agreement", "sheet.jsonl"]);
    assert!(
        o.stdout
            .contains("kappa on all is undefined: one class only: both sides called every pair not relevant"),
        "{}",
        o.stdout
    );
    assert!(!o.stdout.contains("NaN"), "{}", o.stdout);
}

#[test]
fn no_pair_graded_by_both_is_an_error_that_says_how_to_get_some() {
    let p = TestProject::new().with_file(
        "sheet.jsonl",
        "{\"query_id\":\"q1\",\"chunk_id\":\"c1\",\"grade\":1,\"source\":\"person\",\"labeler\":\"ana\",\"verified\":true}\n",
    );
    let o = p.run(&["gold", "agreement", "sheet.jsonl"]);
    assert_eq!(o.code, 2, "{}", o.stdout);
    assert!(
        o.stderr.contains(
            "sheet.jsonl: no pair was graded by both model and person (1 pair in all; 0 by model only, 1 by person only)"
        ),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("hint: grade the same pairs twice"),
        "{}",
        o.stderr
    );
    assert_eq!(o.stdout, "");
}

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
