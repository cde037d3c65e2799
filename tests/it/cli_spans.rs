//! Span labels end to end: `eval --chunks`, located results, the coverage
//! setting, and the errors a broken setup gets. The fixture
//! (`fixtures/spans/`) is one small corpus under two chunkings: A cuts
//! auth.md and keys.md into 200-character chunks, B into 100-character
//! ones. Values by hand, per query (recall@1):
//!
//! | query | span(s) | run A, top chunk | A | run B, top chunk | B |
//! |---|---|---|---|---|---|
//! | q1 | auth [250,350) | auth#1 [200,400): all of it | 1 | [200,300): half | 1 |
//! | q2 | auth [150,250) | auth#0 [0,200): half | 1 | [300,400): none (rank 2 [0,100): none) | 0 |
//! | q3 | keys [420,580) | keys#2 [400,600): all | 1 | [400,500): 80 of 160 | 1 |
//! | q4 | keys [100,300), auth [900,1000) | keys#0 [0,200): half of one | 0.5 | [100,200): half of one | 0.5 |
//!
//! Means: A 0.875, B 0.625. precision@1: every top chunk of A carries at
//! least half a span (1.0); B's top chunk of q2 touches none (0.75).

use crate::common;

use common::{fixture, rgate, run, TestProject};

fn eval(extra: &[&str]) -> common::Out {
    let mut c = rgate();
    c.arg("eval")
        .arg("--gold")
        .arg(fixture("spans/gold.yaml"))
        .args(extra)
        // Means only: these tests read the CSV's columns of means.
        .args(["--resamples", "0"]);
    run(c)
}

fn csv(extra: &[&str]) -> String {
    let mut args = vec!["--format", "csv", "-m", "recall@1,recall@2,precision@1"];
    args.extend_from_slice(extra);
    let o = eval(&args);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stderr, "");
    o.stdout
}

#[test]
fn eval_through_each_chunking_map() {
    let a = fixture("spans/run_a.trec");
    let chunks_a = fixture("spans/chunks_a.jsonl");
    assert_eq!(
        csv(&[
            "--run",
            a.to_str().unwrap(),
            "--chunks",
            chunks_a.to_str().unwrap()
        ]),
        "scope,n,recall@1,recall@2,precision@1\nall,4,0.8750,0.8750,1.0000\n"
    );
    let b = fixture("spans/run_b.jsonl");
    let chunks_b = fixture("spans/chunks_b.jsonl");
    assert_eq!(
        csv(&[
            "--run",
            b.to_str().unwrap(),
            "--chunks",
            chunks_b.to_str().unwrap()
        ]),
        "scope,n,recall@1,recall@2,precision@1\nall,4,0.6250,0.6250,0.7500\n"
    );
    // The same run with each result carrying its location needs no map.
    let located = fixture("spans/run_b_located.jsonl");
    assert_eq!(
        csv(&["--run", located.to_str().unwrap()]),
        "scope,n,recall@1,recall@2,precision@1\nall,4,0.6250,0.6250,0.7500\n"
    );
}

#[test]
fn span_coverage_flag() {
    // At 0.6, half a span is not enough: q2 and q4 of run A score 0.
    let a = fixture("spans/run_a.trec");
    let chunks_a = fixture("spans/chunks_a.jsonl");
    let out = csv(&[
        "--run",
        a.to_str().unwrap(),
        "--chunks",
        chunks_a.to_str().unwrap(),
        "--span-coverage",
        "0.6",
    ]);
    assert_eq!(
        out,
        "scope,n,recall@1,recall@2,precision@1\nall,4,0.5000,0.5000,0.5000\n"
    );
    for bad in ["0", "1.5", "x"] {
        let o = eval(&["--run", a.to_str().unwrap(), "--span-coverage", bad]);
        assert_eq!(o.code, 2, "{bad}: {}", o.stderr);
        assert!(o.stderr.contains("--span-coverage"), "{}", o.stderr);
    }
}

#[test]
fn a_run_that_locates_nothing_is_an_error() {
    let a = fixture("spans/run_a.trec");
    let o = eval(&["--run", a.to_str().unwrap()]);
    assert_eq!(o.code, 2);
    assert_eq!(o.stdout, "");
    assert!(
        o.stderr
            .contains("has span labels, but this run's results carry no location and no chunk map was given"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr
            .contains("hint: pass the chunking's map with --chunks FILE"),
        "{}",
        o.stderr
    );
}

/// A run under the wrong chunking's map locates none of its ids: every
/// result is counted once in one warning, and the spans score 0. Both
/// readers count: chunking A's TREC run under B's map, and B's JSONL run
/// under A's.
#[test]
fn a_run_under_the_wrong_map_counts_every_unlocated_result() {
    for (run_file, wrong) in [
        ("spans/run_a.trec", "spans/chunks_b.jsonl"),
        ("spans/run_b.jsonl", "spans/chunks_a.jsonl"),
    ] {
        let (r, m) = (fixture(run_file), fixture(wrong));
        let o = eval(&[
            "--run",
            r.to_str().unwrap(),
            "--chunks",
            m.to_str().unwrap(),
            "--format",
            "csv",
            "-m",
            "recall@2",
        ]);
        assert_eq!(o.code, 0, "{run_file}: {}", o.stderr);
        assert_eq!(o.stdout, "scope,n,recall@2\nall,4,0.0000\n", "{run_file}");
        assert!(
            o.stderr
                .contains("8 results of queries with span labels have no location"),
            "{run_file}: {}",
            o.stderr
        );
    }
}

#[test]
fn a_bad_chunk_map_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let map = dir.path().join("chunks.jsonl");
    std::fs::write(
        &map,
        "{\"id\": \"auth#0\", \"doc\": \"auth.md\", \"start\": 0, \"end\": 200}\n{\"id\": \"auth#1\", \"doc\": \"auth.md\", \"start\": 300, \"end\": 200}\n",
    )
    .unwrap();
    let a = fixture("spans/run_a.trec");
    let o = eval(&["--run", a.to_str().unwrap(), "--chunks", map.to_str().unwrap()]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("chunks.jsonl:2: chunk `auth#1` has start 300 and end 200"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("hint:"), "{}", o.stderr);
}

fn compare(args: &[&str]) -> common::Out {
    let mut c = rgate();
    c.arg("compare")
        .arg("--gold")
        .arg(fixture("spans/gold.yaml"))
        .args(args);
    run(c)
}

fn f(rel: &str) -> String {
    fixture(rel).to_str().unwrap().to_string()
}

#[test]
fn compare_two_chunkings_pairs_by_query() {
    // The 200-character chunking (A, a TREC run) against the 100-character
    // one (B, plain ids): per query recall@1 deltas 0, -1, 0, 0 (only q2's
    // span is lost, see the table above). t-test by hand: mean -0.25, sd
    // 0.5, se 0.25, t = -1 on 3 degrees of freedom: two-sided p 0.3910022
    // (scipy.stats.ttest_rel), 95% interval -0.25 +/- 3.1824463 * 0.25.
    let (a, b) = (
        format!("a={}", f("spans/run_a.trec")),
        format!("b={}", f("spans/run_b.jsonl")),
    );
    let (ca, cb) = (
        format!("a={}", f("spans/chunks_a.jsonl")),
        format!("b={}", f("spans/chunks_b.jsonl")),
    );
    let o = compare(&[
        &a, &b, "--chunks", &cb, "--chunks", &ca, "-m", "recall@1", "--test", "t-test", "--format", "json",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let row = &v["runs"][0]["checks"][0];
    assert_eq!(v["runs"][0]["name"], "b");
    assert_eq!(row["metric"], "recall@1");
    assert_eq!(row["n"], 4);
    assert_eq!(row["baseline"], 0.875);
    assert_eq!(row["current"], 0.625);
    assert_eq!(row["delta"], -0.25);
    assert!(
        (row["p_value"].as_f64().unwrap() - 0.3910022189557705).abs() < 1e-9,
        "{row}"
    );
    // scipy's t interval, -0.25 -+ 3.1824 x 0.25, reaches past what a
    // recall mean of 0.875 can do (fall by 0.875, rise by 0.125): it is
    // printed within those ends.
    let half = 3.182446305284263 * 0.25;
    assert!(-0.25 - half < -0.875 && -0.25 + half > 0.125);
    assert_eq!(row["ci_low"].as_f64(), Some(-0.875), "{row}");
    assert_eq!(row["ci_high"].as_f64(), Some(0.125), "{row}");
    assert_eq!(
        (row["wins"].clone(), row["ties"].clone(), row["losses"].clone()),
        (0.into(), 3.into(), 1.into())
    );

    // Bare maps pair with the runs in order; the same numbers.
    let o = compare(&[
        &f("spans/run_a.trec"),
        &f("spans/run_b.jsonl"),
        "--chunks",
        &f("spans/chunks_a.jsonl"),
        "--chunks",
        &f("spans/chunks_b.jsonl"),
        "-m",
        "recall@1",
        "--test",
        "t-test",
        "--format",
        "csv",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("\nrun_b,run_a,recall@1,all,4,0.875,0.625,-0.25,"),
        "{}",
        o.stdout
    );

    // The located run needs no map: one map, named, for the other run.
    let o = compare(&[
        &a,
        &format!("b={}", f("spans/run_b_located.jsonl")),
        "--chunks",
        &ca,
        "-m",
        "recall@1",
        "--format",
        "json",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["runs"][0]["checks"][0]["delta"], -0.25);
}

#[test]
fn compare_chunks_arguments_that_do_not_fit_are_usage_errors() {
    let (a, b) = (
        format!("a={}", f("spans/run_a.trec")),
        format!("b={}", f("spans/run_b.jsonl")),
    );
    let cases: [(&[&str], &str); 3] = [
        (&["--chunks", "c=x.jsonl"], "--chunks c=...: no run is named `c`"),
        (
            &["--chunks", "a=x.jsonl", "--chunks", "a=y.jsonl"],
            "--chunks names run `a` twice",
        ),
        (
            &[
                "--chunks", "x.jsonl", "--chunks", "y.jsonl", "--chunks", "z.jsonl",
            ],
            "3 unnamed --chunks maps for 2 runs",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec![a.as_str(), b.as_str()];
        args.extend_from_slice(extra);
        let o = compare(&args);
        assert_eq!(o.code, 2, "{}", o.stderr);
        assert!(o.stderr.contains(want), "{}", o.stderr);
        assert!(o.stderr.contains("hint:"), "{}", o.stderr);
    }
}

fn migrate(gold: &std::path::Path, chunks: &str, extra: &[&str]) -> common::Out {
    let mut c = rgate();
    c.args(["gold", "migrate", "--gold"])
        .arg(gold)
        .args(["--chunks", chunks])
        .args(extra);
    run(c)
}

fn copy_to_temp(rel: &str, name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::copy(fixture(rel), &p).unwrap();
    (dir, p)
}

#[test]
fn migrate_turns_chunk_ids_into_spans_and_keeps_the_rest() {
    let (_dir, gold) = copy_to_temp("spans/gold_ids.yaml", "gold.yaml");
    let o = migrate(&gold, &f("spans/chunks_a.jsonl"), &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stderr, "");
    assert!(
        o.stdout
            .starts_with("gold migrate: 4 labels of 3 queries now span labels in "),
        "{}",
        o.stdout
    );
    // q3's keys#2 is [400, 600), not the span it already had: both stay.
    assert!(!o.stdout.contains("fell"), "{}", o.stdout);
    let (g, _) = rgate::gold::GoldSet::load(&gold, None).unwrap();
    let spans = |i: usize| -> Vec<(String, u64, u64, i32)> {
        g.queries[i]
            .spans
            .iter()
            .map(|s| (s.doc.clone(), s.start, s.end, s.grade))
            .collect()
    };
    assert!(g.queries.iter().all(|q| q.labels.is_empty()));
    assert_eq!(
        spans(0),
        [("auth.md".into(), 200, 400, 2), ("keys.md".into(), 200, 400, 0)]
    );
    assert_eq!(spans(1), [("auth.md".into(), 0, 200, 1)]);
    assert_eq!(
        spans(2),
        [("keys.md".into(), 400, 600, 1), ("keys.md".into(), 420, 580, 2)]
    );
    // Everything else of each query is kept.
    assert_eq!(g.queries[0].text.as_deref(), Some("How do I rotate an API key?"));
    assert_eq!(g.stratum_name(0), "how-to");
    assert_eq!(g.stratum_name(2), "default");
    assert!(g.extras.contains_key(&0));

    // Run A, whose chunking the labels came from, scores as it did on the
    // id labels: its chunks are the spans now (all 1: each top chunk is a
    // labeled one).
    let chunks_a = f("spans/chunks_a.jsonl");
    let ids = eval_on(
        &fixture("spans/gold_ids.yaml"),
        "spans/run_a.trec",
        &["--chunks", &chunks_a],
    );
    let spans_eval = eval_on(&gold, "spans/run_a.trec", &["--chunks", &chunks_a]);
    assert_eq!(ids, spans_eval);
    assert_eq!(
        ids,
        "scope,n,recall@1,precision@1,ndcg@2,map\nall,3,1.0000,1.0000,1.0000,1.0000\n"
    );
    // The 100-character chunking is judged on the migrated spans by hand:
    // q1 half of auth [200,400) at rank 1; q2 half of auth [0,200) only at
    // rank 2 (recall@1 0, nDCG@2 1/log2 3, AP 1/2); q3 both spans half
    // covered at rank 1. Means: 2/3, 2/3, (2 + 1/log2 3)/3, 2.5/3.
    assert_eq!(
        eval_on(&gold, "spans/run_b_located.jsonl", &[]),
        "scope,n,recall@1,precision@1,ndcg@2,map\nall,3,0.6667,0.6667,0.8770,0.8333\n"
    );

    // A second run finds no chunk-id label left.
    let o = migrate(&gold, &f("spans/chunks_a.jsonl"), &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("has no chunk-id labels; nothing to do"),
        "{}",
        o.stdout
    );
}

fn eval_on(gold: &std::path::Path, run_file: &str, extra: &[&str]) -> String {
    let mut c = rgate();
    c.arg("eval")
        .arg("--gold")
        .arg(gold)
        .args([
            "--run",
            &f(run_file),
            "--format",
            "csv",
            "-m",
            "recall@1,precision@1,ndcg@2,map",
            "--resamples",
            "0",
        ])
        .args(extra);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    o.stdout
}

#[test]
fn migrate_refuses_ids_the_map_lacks_and_writes_nothing() {
    let (_dir, gold) = copy_to_temp("spans/gold_ids.yaml", "gold.yaml");
    let before = std::fs::read(&gold).unwrap();
    // The 100-character chunking's map knows none of these ids.
    let o = migrate(&gold, &f("spans/chunks_b.jsonl"), &[]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stdout.contains("gold migrate: 4 labels' chunk ids are not in "),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("nothing written to"), "{}", o.stdout);
    for line in ["  q1 auth#1\n", "  q1 keys#1\n", "  q2 auth#0\n", "  q3 keys#2\n"] {
        assert!(o.stdout.contains(line), "{}", o.stdout);
    }
    assert!(
        o.stdout.contains("hint: pass the chunk map of the chunking"),
        "{}",
        o.stdout
    );
    assert_eq!(std::fs::read(&gold).unwrap(), before);
    let o = migrate(&gold, &f("spans/chunks_b.jsonl"), &["--format", "json"]);
    assert_eq!(o.code, 1);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["written"], false);
    assert_eq!(
        v["missing"][3],
        serde_json::json!({"query_id": "q3", "chunk_id": "keys#2"})
    );
    assert_eq!(std::fs::read(&gold).unwrap(), before);
}

#[test]
fn migrate_jsonl_merges_labels_that_land_on_one_span() {
    let dir = tempfile::tempdir().unwrap();
    let gold = dir.path().join("gold.jsonl");
    // Two ids of one location in the map: one span, at the higher grade.
    std::fs::write(
        &gold,
        "{\"id\": \"q1\", \"relevant\": {\"a\": 1, \"b\": 3}, \"meta\": {\"k\": 1}}\n{\"id\": 7, \"relevant\": [\"c\"]}\n",
    )
    .unwrap();
    let map = dir.path().join("map.jsonl");
    std::fs::write(
        &map,
        "{\"id\": \"a\", \"doc\": \"d\", \"start\": 0, \"end\": 9}\n{\"id\": \"b\", \"doc\": \"d\", \"start\": 0, \"end\": 9}\n{\"id\": \"c\", \"doc\": \"e\", \"start\": 3, \"end\": 4}\n",
    )
    .unwrap();
    let o = migrate(&gold, map.to_str().unwrap(), &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("1 label fell onto a span the query had already"),
        "{}",
        o.stdout
    );
    assert_eq!(
        std::fs::read_to_string(&gold).unwrap(),
        "{\"id\":\"q1\",\"relevant\":[{\"doc\":\"d\",\"start\":0,\"end\":9,\"grade\":3}],\"meta\":{\"k\":1}}\n{\"id\":7,\"relevant\":[{\"doc\":\"e\",\"start\":3,\"end\":4,\"grade\":1}]}\n"
    );
}

#[test]
fn migrate_refuses_qrels() {
    let dir = tempfile::tempdir().unwrap();
    let gold = dir.path().join("qrels.txt");
    std::fs::write(&gold, "q1 0 auth#1 1\n").unwrap();
    let o = migrate(&gold, &f("spans/chunks_a.jsonl"), &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("TREC qrels cannot hold span labels"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("hint:"), "{}", o.stderr);
}

/// A scratch project: the span fixture, one retriever `search` whose run
/// and chunk map the test picks, a baselines directory.
fn project(run_file: &str, chunks: &str) -> TestProject {
    let mut p = TestProject::new().with_config("rgate.yaml");
    for name in [
        "gold.yaml",
        "chunks_a.jsonl",
        "chunks_b.jsonl",
        "run_a.trec",
        "run_b.jsonl",
    ] {
        p = p.with_copy(name, fixture(&format!("spans/{name}")));
    }
    std::fs::create_dir_all(p.path("baselines")).unwrap();
    set_retriever(&p, run_file, chunks);
    p
}

fn set_retriever(p: &TestProject, run_file: &str, chunks: &str) {
    p.write(
        "rgate.yaml",
        format!(
            "gold: gold.yaml\nbaselines: baselines\nmetrics: [recall@1]\nretrievers:\n  - name: search\n    run: {run_file}\n    chunks: {chunks}\ngate:\n  test: t-test\n  decision: threshold\n  rules:\n    - metric: recall@1\n      max_drop: 0.1\n      strata: overall\n"
        ),
    );
}

fn check(o: &common::Out) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.stdout));
    v["retrievers"][0]["checks"][0].clone()
}

#[test]
fn gate_pairs_a_new_chunking_with_the_old_by_query() {
    // Baseline: chunking A (recall@1 0.875); the pull request switches the
    // retriever to chunking B (0.625, q2 lost): a drop of 0.25, more than
    // the 0.1 allowed, paired over the 4 queries.
    let dir = project("run_a.trec", "chunks_a.jsonl");
    let o = dir.run(&["baseline", "update", "--note", "chunking A"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let stored = std::fs::read_to_string(dir.root().join("baselines/search.json")).unwrap();
    // The places of the ranked chunks are stored, with the coverage used.
    assert!(stored.contains("\"span_coverage\": 0.5,"), "{stored}");
    // Ranked ids are kept to the deepest cutoff in use (1), each with its place.
    assert!(
        stored.contains(
            "\"ranking\":[\"auth#1\"],\"text_sha\":\"49846b8ad452ac1d\",\"spans\":[[\"auth.md\",200,400]]}"
        ),
        "{stored}"
    );
    assert!(
        stored.contains("\"ranking\":[\"keys#0\"],\"spans\":[[\"keys.md\",0,200]]}"),
        "{stored}"
    );
    // The new run and its map on the command line ...
    let o = dir.run(&[
        "gate",
        "--run",
        "search=run_b.jsonl",
        "--chunks",
        "search=chunks_b.jsonl",
        "--format",
        "json",
    ]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let c = check(&o);
    assert_eq!(
        (c["n"].clone(), c["baseline"].clone(), c["current"].clone()),
        (4.into(), 0.875.into(), 0.625.into())
    );
    assert_eq!(c["delta"], -0.25);
    assert_eq!(c["verdict"], "fail");
    // ... or in the config, as the pull request would change it.
    set_retriever(&dir, "run_b.jsonl", "chunks_b.jsonl");
    let o = dir.run(&["gate", "--format", "json"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_eq!(check(&o)["delta"], -0.25);
    // A map for a retriever that is not there is a usage error.
    let o = dir.run(&["gate", "--chunks", "other=chunks_b.jsonl"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("no retriever named `other`"), "{}", o.stderr);
}

#[test]
fn a_baseline_with_stored_places_is_rescored_after_a_span_changes() {
    let dir = project("run_a.trec", "chunks_a.jsonl");
    assert_eq!(dir.run(&["baseline", "update"]).code, 0);
    // Drop q4's second span (auth [900,1000), never retrieved): q4's
    // recall@1 becomes 1, so the baseline re-scored from its stored places
    // is 1.0, not the 0.875 it recorded; the same run gates with delta 0.
    let gold = dir.root().join("gold.yaml");
    let text = std::fs::read_to_string(&gold).unwrap();
    std::fs::write(
        &gold,
        text.replace("      - {doc: auth.md, start: 900, end: 1000}\n", ""),
    )
    .unwrap();
    let o = dir.run(&["gate", "--format", "json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let c = check(&o);
    assert_eq!(
        (c["baseline"].clone(), c["current"].clone(), c["delta"].clone()),
        (1.0.into(), 1.0.into(), 0.0.into())
    );

    // A baseline that stores no places (recorded by an rgate without span
    // support) cannot be re-scored: the check is skipped, with a warning.
    let path = dir.root().join("baselines/search.json");
    let stored = std::fs::read_to_string(&path).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&stored).unwrap();
    for q in v["queries"].as_object_mut().unwrap().values_mut() {
        q.as_object_mut().unwrap().remove("spans");
    }
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let o = dir.run(&["gate", "--format", "json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("recall@1 cannot be re-scored: the gold set has span labels and the baseline stores no locations of its ranked chunks; its checks are skipped"),
        "{}",
        o.stdout
    );
    assert_eq!(check(&o), serde_json::Value::Null, "{}", o.stdout);
}

#[test]
fn candidate_lists_rescore_through_their_stored_places_too() {
    // A two-stage retriever: candidates run_a.trec (two per query), the
    // final run its top 1 (the same file). Chunking A serves both stages.
    let dir = project("run_a.trec", "chunks_a.jsonl");
    std::fs::write(
        dir.root().join("rgate.yaml"),
        "gold: gold.yaml\nbaselines: baselines\nmetrics: [recall@1, candidates:recall@2]\nretrievers:\n  - name: search\n    run: run_a.trec\n    candidates: run_a.trec\n    chunks: chunks_a.jsonl\ngate:\n  decision: threshold\n  rules:\n    - metric: candidates:recall@2\n      max_drop: 0.1\n      strata: overall\n",
    )
    .unwrap();
    let o = dir.run(&["baseline", "update"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let stored = std::fs::read_to_string(dir.root().join("baselines/search.json")).unwrap();
    assert!(
        stored.contains("\"candidate_spans\":[[\"keys.md\",0,200],[\"auth.md\",400,600]]"),
        "{stored}"
    );
    // candidates:recall@2 recorded 0.875 (q4 finds one of its two spans);
    // without q4's auth span it is 1.0, re-scored from the stored places.
    let gold = dir.root().join("gold.yaml");
    let text = std::fs::read_to_string(&gold).unwrap();
    std::fs::write(
        &gold,
        text.replace("      - {doc: auth.md, start: 900, end: 1000}\n", ""),
    )
    .unwrap();
    let o = dir.run(&["gate", "--format", "json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let c = check(&o);
    assert_eq!(c["metric"], "candidates:recall@2");
    assert_eq!(
        (c["baseline"].clone(), c["current"].clone()),
        (1.0.into(), 1.0.into())
    );
}

#[test]
fn gold_validate_and_stats_count_span_labels() {
    let mut c = rgate();
    c.args(["gold", "validate", "--gold"])
        .arg(fixture("spans/gold.yaml"));
    let o = run(c);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(!o.stdout.contains("can never be hit"), "{}", o.stdout);
    let mut c = rgate();
    c.args(["gold", "stats", "--gold"])
        .arg(fixture("spans/gold.yaml"));
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // 5 spans over 4 queries, all relevant, q4 with 2, q1 graded 2.
    assert!(
        o.stdout
            .contains("\nall            4      1.25        1.25        1        2       1\n"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("labels by grade: grade 1: 4, grade 2: 1"),
        "{}",
        o.stdout
    );
}

#[test]
fn pooling_over_a_gold_set_with_spans_needs_no_chunk_map() {
    // Pooling reads top ids only; before, the span labels made the run an
    // error ("no location and no chunk map").
    let mut c = rgate();
    c.args(["gold", "pool", "--queries"])
        .arg(fixture("spans/gold.yaml"))
        .args(["--run", &f("spans/run_b.jsonl"), "--depth", "1"]);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let ids: Vec<String> = o
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["chunk_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ids, ["auth.md:200", "auth.md:300", "keys.md:400", "keys.md:100"]);
}
