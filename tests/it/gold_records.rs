//! Issue 41 (judge and gold set): provenance a hand edit made unusable is
//! refused by every reader of provenance (`gold validate` first) at its
//! file and line; `gold agreement` counts and reports what it cannot use;
//! a NUL in an id never reaches a gold set.

use crate::common::TestProject;

/// A YAML gold set of one query whose label `c1` carries `record` as its
/// provenance (a flow map, as rgate writes it), and a clean second query.
fn gold_with(record: &str) -> String {
    format!(
        "version: 1\nqueries:\n- id: q0\n  relevant:\n    c0: 1\n- id: q1\n  relevant:\n    c1: 2\n  provenance:\n    c1: {record}\n"
    )
}

#[test]
fn gold_validate_refuses_opinions_agreement_could_not_use() {
    for (record, said) in [
        (
            "{source: person, labeler: ana, verified: true, opinions: [{grade: 7, source: model, labeler: gpt}]}",
            "an opinion's grade 7 is outside 0..3",
        ),
        (
            "{source: person, labeler: ana, verified: true, opinions: [{grade: -1, source: model, labeler: gpt}]}",
            "an opinion's grade -1 is outside 0..3",
        ),
        (
            "{source: person, labeler: ana, verified: true, opinions: [{grade: 1, source: robot, labeler: gpt}]}",
            "an opinion's source `robot` is neither person nor model",
        ),
        ("{source: robot, labeler: ana}", "source `robot` is neither person nor model"),
        (
            "{source: person, labeler: ana, verified: true, opinions: [{grade: 1, source: model, labeler: gpt}, {grade: 3, source: model, labeler: gpt}]}",
            "two grades by one model labeler (`gpt`)",
        ),
    ] {
        let p = TestProject::new().with_file("gold.yaml", gold_with(record));
        let o = p.bare(&["gold", "validate", "--gold", "gold.yaml"]);
        assert_eq!(o.code, 2, "{record}: {}", o.stderr);
        // Line 6 is `- id: q1`.
        let want = format!("gold.yaml:6: query `q1`: provenance of `c1`: {said}");
        assert!(o.stderr.contains(&want), "{record}: want {want:?} in\n{}", o.stderr);
        // The readers that use provenance refuse it alike.
        let o = p.bare(&["gold", "agreement", "gold.yaml"]);
        assert_eq!(o.code, 2, "{record}: {}", o.stderr);
        assert!(o.stderr.contains(&want), "{record}: {}", o.stderr);
        // eval, which skips provenance unread, is not stopped by it.
    }
    // A clean record passes.
    let p = TestProject::new().with_file(
        "gold.yaml",
        gold_with("{source: person, labeler: ana, verified: true, opinions: [{grade: 1, source: model, labeler: gpt}]}"),
    );
    let o = p.bare(&["gold", "validate", "--gold", "gold.yaml"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
}

#[test]
fn agreement_reports_the_grades_it_could_not_use() {
    // Three pairs: q1/c1 usable; q1/c2 listed twice by a hand edit, ana
    // grading it twice (her second grade dropped); q2/c1 graded in a gold
    // set with a negative (unjudged) grade on the person's side.
    let row = |c: &str, person: i32, model: i32| {
        serde_json::json!({"query_id": "q1", "query": "t", "stratum": "s", "chunk_id": c, "text": "x",
            "grade": person, "source": "person", "labeler": "ana", "verified": true,
            "opinions": [{"grade": model, "source": "model", "labeler": "gpt"}]})
        .to_string()
    };
    let sheet = [row("c1", 1, 1), row("c2", 2, 2), row("c2", 0, 2)].join("\n") + "\n";
    let p = TestProject::new().with_file("sheet.jsonl", sheet);
    let (code, v) = p.json(&["gold", "agreement", "sheet.jsonl"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!((v["pairs"].clone(), v["all"]["n"].clone()), (2.into(), 2.into()));
    // Ana's second grade of c2 (0) and gpt's repeated 2.
    assert_eq!(v["dropped"], 2, "{v}");
    let o = p.run(&["gold", "agreement", "sheet.jsonl"]);
    assert!(
        o.stdout
            .contains("2 grades dropped: a labeler's second grade of a pair they had graded"),
        "{}",
        o.stdout
    );

    let gold = "version: 1\nqueries:\n- id: q1\n  relevant:\n    c1: 1\n    c2: -1\n  provenance:\n    c1: {source: person, labeler: ana, verified: true, opinions: [{grade: 1, source: model, labeler: gpt}]}\n    c2: {source: person, labeler: ana, verified: true, opinions: [{grade: 2, source: model, labeler: gpt}]}\n";
    let p = TestProject::new().with_file("gold.yaml", gold);
    let (code, v) = p.json(&["gold", "agreement", "gold.yaml"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        (v["all"]["n"].clone(), v["unusable"].clone()),
        (1.into(), 1.into()),
        "{v}"
    );
    let o = p.run(&["gold", "agreement", "gold.yaml"]);
    assert!(
        o.stdout
            .contains("left out: 1 pair both sides graded, one of them outside 0..3"),
        "{}",
        o.stdout
    );
}

#[test]
fn a_nul_in_an_id_is_refused_at_its_line_and_nothing_is_written() {
    let row = |q: &str, c: &str| {
        serde_json::json!({"query_id": q, "query": "t", "stratum": "s", "chunk_id": c, "text": "x",
            "grade": 2, "source": "person", "labeler": "ana", "verified": true})
        .to_string()
    };
    for (bad, name) in [
        (row("q\u{0}1", "c1"), "query_id"),
        (row("q1", "c\u{0}1"), "chunk_id"),
    ] {
        let sheet = [row("q0", "c0"), bad].join("\n") + "\n";
        let p = TestProject::new().with_file("sheet.jsonl", sheet);
        let o = p.bare(&["gold", "import", "sheet.jsonl", "--into", "gold.yaml"]);
        assert_eq!(o.code, 2, "{}", o.stderr);
        assert!(
            o.stderr.contains(&format!("sheet.jsonl:2: {name} `"))
                && o.stderr.contains("holds a NUL character"),
            "{}",
            o.stderr
        );
        assert!(!p.path("gold.yaml").exists());
    }
    // In a gold set itself, at the query's line.
    let p = TestProject::new().with_file(
        "gold.json",
        "{\"version\": 1, \"queries\": [\n{\"id\": \"q\\u00001\", \"relevant\": {\"c\": 1}}]}\n",
    );
    let o = p.bare(&["gold", "validate", "--gold", "gold.json"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("gold.json:2: query id `q\\u{0}1` holds a NUL character"),
        "{}",
        o.stderr
    );
}
