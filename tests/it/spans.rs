//! Span labels (SPEC "Span labels"): hand-computed cases of the matching
//! rule, and the two invariants the rule must keep — chunk-id labels seen
//! through the identity chunk map score exactly as plain id labels, and the
//! same retrieved text under two chunkings has the same recall.

use std::io::Write;
use std::sync::Arc;

use proptest::prelude::*;
use rgate::chunks::ChunkMap;
use rgate::eval::Scores;
use rgate::gold::{GoldFormat, GoldQuery, GoldSet, Label, SpanLabel};
use rgate::judge::{self, Located, QueryContext, QueryLabels, Ranking};
use rgate::metrics::Metric;
use rgate::run::{self, KeepIds, RunFormat, RunOptions};

fn span(doc: &str, start: u64, end: u64, grade: i32) -> SpanLabel {
    SpanLabel {
        doc: doc.into(),
        start,
        end,
        grade,
    }
}

fn query(labels: Vec<Label>, spans: Vec<SpanLabel>) -> GoldQuery {
    GoldQuery {
        id: "q".into(),
        text: None,
        stratum: 0,
        labels: labels.into(),
        spans,
    }
}

/// Judges chunks given as (id, doc, start, end) in rank order.
fn judge(q: &GoldQuery, coverage: f64, chunks: &[(&str, &str, u64, u64)]) -> Ranking {
    let labels = QueryLabels::with_coverage(q, coverage);
    Ranking::from_located(
        chunks
            .iter()
            .map(|&(id, doc, start, end)| (id, Some(Located { doc, start, end }))),
        &labels,
    )
}

fn value(name: &str, r: &Ranking, q: &GoldQuery, level: i32) -> f64 {
    let m: Metric = name.parse().unwrap();
    m.compute(r, &QueryContext::new(q, level))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn partial_coverage_counts_from_the_threshold_on() {
    // Span [100, 200); the chunk [150, 260) covers 50 of its 100 characters.
    let q = query(vec![], vec![span("d", 100, 200, 1)]);
    let chunks = [("c1", "d", 150, 260)];
    let half = judge(&q, 0.5, &chunks);
    assert_eq!(value("recall@1", &half, &q, 1), 1.0);
    // It carries half of the span: relevant for precision at 0.5 ...
    assert_eq!(value("precision@1", &half, &q, 1), 1.0);
    let more = judge(&q, 0.6, &chunks);
    assert_eq!(value("recall@1", &more, &q, 1), 0.0);
    // ... but at 0.6 it neither carries 0.6 of the span nor lies 0.6 inside
    // it (50 of its 110 characters).
    assert_eq!(value("precision@1", &more, &q, 1), 0.0);
    // A chunk that lies inside the span counts for precision even when it
    // covers little of it: [120, 140) is 20% of the span, 100% inside it.
    let inside = judge(&q, 0.5, &[("c2", "d", 120, 140)]);
    assert_eq!(value("precision@1", &inside, &q, 1), 1.0);
    assert_eq!(value("recall@1", &inside, &q, 1), 0.0);
    // Another document's text at the same offsets covers nothing.
    let elsewhere = judge(&q, 0.5, &[("c3", "e", 100, 200)]);
    assert_eq!(value("recall@10", &elsewhere, &q, 1), 0.0);
    assert_eq!(value("judged@10", &elsewhere, &q, 1), 0.0);
}

#[test]
fn several_small_chunks_cover_one_span() {
    // Span [0, 100). Chunks [0,30) and [10,40) overlap: together they cover
    // 40, not 60. [40,50) brings the union to 50: credited at rank 3.
    let q = query(vec![], vec![span("d", 0, 100, 1)]);
    let r = judge(
        &q,
        0.5,
        &[
            ("a", "d", 0, 30),
            ("b", "d", 10, 40),
            ("c", "d", 40, 50),
            ("x", "d", 500, 600),
        ],
    );
    assert_eq!(value("recall@2", &r, &q, 1), 0.0);
    assert_eq!(value("recall@3", &r, &q, 1), 1.0);
    assert_eq!(value("hit_rate@2", &r, &q, 1), 0.0);
    assert_eq!(value("hit_rate@3", &r, &q, 1), 1.0);
    assert_eq!(value("mrr", &r, &q, 1), 1.0 / 3.0);
    // Each of a, b, c lies wholly inside the span; x does not touch it.
    assert_eq!(value("precision@3", &r, &q, 1), 1.0);
    assert_eq!(value("precision@4", &r, &q, 1), 0.75);
    assert_eq!(value("judged@4", &r, &q, 1), 0.75);
    // AP: one span, credited at rank 3 where precision is 3/3.
    assert_eq!(value("map", &r, &q, 1), 1.0);
    // R = 1: one relevant chunk in the top 1.
    assert_eq!(value("r_precision", &r, &q, 1), 1.0);
    // nDCG: gain 1 at rank 3 over the ideal gain 1 at rank 1.
    assert!(close(value("ndcg@10", &r, &q, 1), 1.0 / 4f64.log2()));
    assert_eq!(value("ndcg@2", &r, &q, 1), 0.0);
}

#[test]
fn one_big_chunk_covers_two_spans() {
    let q = query(vec![], vec![span("d", 100, 200, 2), span("d", 300, 400, 1)]);
    // At rank 1 the chunk [0, 1000) credits both spans.
    let r = judge(&q, 0.5, &[("big", "d", 0, 1000)]);
    assert_eq!(value("recall@1", &r, &q, 1), 1.0);
    assert_eq!(value("precision@1", &r, &q, 1), 1.0);
    assert_eq!(value("map", &r, &q, 1), 1.0);
    // The second span counts at rank max(1, 2) = 2, beyond a cutoff of 1:
    // nDCG@1 = 2 / 2; in full (2 + 1/log2 3) / (2 + 1/log2 3).
    assert_eq!(value("ndcg@1", &r, &q, 1), 1.0);
    assert_eq!(value("ndcg", &r, &q, 1), 1.0);
    // Behind an unrelated chunk, both spans are credited at rank 2 and both
    // count at rank 2: (2 + 1) / log2 3 over the ideal 2 + 1 / log2 3.
    let r = judge(&q, 0.5, &[("x", "e", 0, 10), ("big", "d", 0, 1000)]);
    assert_eq!(value("recall@1", &r, &q, 1), 0.0);
    assert_eq!(value("recall@2", &r, &q, 1), 1.0);
    assert_eq!(value("precision@2", &r, &q, 1), 0.5);
    assert!(close(
        value("ndcg", &r, &q, 1),
        (3.0 / 3f64.log2()) / (2.0 + 1.0 / 3f64.log2())
    ));
    // AP: both spans credited at rank 2, where precision is 1/2.
    assert_eq!(value("map", &r, &q, 1), 0.5);
    assert_eq!(value("mrr", &r, &q, 1), 0.5);
}

#[test]
fn grades_and_mixed_labels() {
    // A chunk-id label (grade 1), a span of grade 3, a span judged not
    // relevant (grade 0).
    let q = query(
        vec![Label {
            id: "c-id".into(),
            grade: 1,
        }],
        vec![span("d", 0, 100, 3), span("d", 200, 300, 0)],
    );
    let r = judge(
        &q,
        0.5,
        &[("n", "d", 200, 300), ("c-id", "z", 0, 5), ("s", "d", 0, 60)],
    );
    // Relevant labels: c-id and the grade-3 span (2); both within rank 3.
    assert_eq!(value("recall@2", &r, &q, 1), 0.5);
    assert_eq!(value("recall@3", &r, &q, 1), 1.0);
    // Rank 1 is judged (grade 0) but not relevant.
    assert_eq!(value("precision@3", &r, &q, 1), 2.0 / 3.0);
    assert_eq!(value("judged@3", &r, &q, 1), 1.0);
    assert_eq!(value("mrr", &r, &q, 1), 0.5);
    // Gains 1 at rank 2 and 3 at rank 3; ideal 3 then 1.
    let dcg = 1.0 / 3f64.log2() + 3.0 / 4f64.log2();
    let idcg = 3.0 + 1.0 / 3f64.log2();
    assert!(close(value("ndcg@3", &r, &q, 1), dcg / idcg));
    // AP: (P@2 + P@3) / 2 = (1/2 + 2/3) / 2.
    assert!(close(value("map", &r, &q, 1), (0.5 + 2.0 / 3.0) / 2.0));
    // At relevance level 2 only the span is relevant.
    assert_eq!(value("recall@2", &r, &q, 2), 0.0);
    assert_eq!(value("recall@3", &r, &q, 2), 1.0);
    assert_eq!(value("precision@3", &r, &q, 2), 1.0 / 3.0);
}

// ---- invariant 1: the identity chunk map ------------------------------------

#[derive(Debug, Clone)]
struct Case {
    labels: Vec<Vec<(u32, i32)>>,
    lines: Vec<(usize, u32, i32)>,
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..5).prop_flat_map(|nq| {
        let labels = prop::collection::vec(prop::collection::vec((0u32..30, -1i32..4), 0..8), nq);
        let lines = prop::collection::vec((0..nq, 0u32..30, 0i32..12), 0..120);
        (labels, lines).prop_map(|(labels, lines)| Case { labels, lines })
    })
}

/// Where chunk `d{n}` lies: side by side in one of five documents, so the
/// per-document index is exercised and no two chunks overlap.
fn place(n: u32) -> (String, u64, u64) {
    let start = u64::from(n / 5) * 100;
    (format!("doc{}", n % 5), start, start + 100)
}

fn gold(c: &Case, as_spans: bool) -> GoldSet {
    let queries = c
        .labels
        .iter()
        .enumerate()
        .map(|(i, ls)| {
            let mut seen = std::collections::HashSet::new();
            let unique: Vec<(u32, i32)> = ls.iter().copied().filter(|(d, _)| seen.insert(*d)).collect();
            let (labels, spans) = if as_spans {
                let spans = unique
                    .iter()
                    .map(|&(d, g)| {
                        let (doc, start, end) = place(d);
                        span(&doc, start, end, g)
                    })
                    .collect();
                (Vec::new(), spans)
            } else {
                let labels = unique
                    .iter()
                    .map(|&(d, g)| Label {
                        id: format!("d{d}"),
                        grade: g,
                    })
                    .collect();
                (labels, Vec::new())
            };
            GoldQuery {
                id: format!("q{i}"),
                text: None,
                stratum: (i % 2) as u32,
                labels: labels.into(),
                spans,
            }
        })
        .collect();
    GoldSet::from_parts("gold", GoldFormat::Yaml, queries, vec!["a".into(), "b".into()]).unwrap()
}

fn identity_map() -> Arc<ChunkMap> {
    let places: Vec<(String, String, u64, u64)> = (0..30)
        .map(|n| {
            let (doc, s, e) = place(n);
            (format!("d{n}"), doc, s, e)
        })
        .collect();
    Arc::new(ChunkMap::from_chunks(
        "identity.jsonl",
        places.iter().map(|(id, doc, start, end)| {
            (
                id.as_str(),
                Located {
                    doc,
                    start: *start,
                    end: *end,
                },
            )
        }),
    ))
}

fn metrics() -> Vec<Metric> {
    [
        "recall@5",
        "recall@20",
        "precision@3",
        "precision@10",
        "hit_rate@1",
        "mrr",
        "mrr@3",
        "ndcg",
        "ndcg@5",
        "map",
        "map@4",
        "r_precision",
        "judged@5",
    ]
    .iter()
    .map(|m| m.parse().unwrap())
    .collect()
}

fn scores(
    gold: &GoldSet,
    path: &std::path::Path,
    format: RunFormat,
    chunks: Option<Arc<ChunkMap>>,
) -> Scores {
    let labels = judge::label_index(gold);
    let opts = RunOptions {
        format: Some(format),
        keep_ids: KeepIds::None,
        chunks,
    };
    let judged = run::read(path, gold, &labels, &opts).unwrap();
    Scores::compute(&metrics(), &judged.rankings, &judge::contexts(gold, 1))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Chunk-id labels turned into spans of the identity map, the run's ids
    /// located through that map, give exactly (bit for bit) the values of
    /// plain id labels: TREC through the map, and JSONL results that carry
    /// their own locations.
    #[test]
    fn identity_chunk_map_gives_the_numbers_of_id_labels(c in case()) {
        let ids = gold(&c, false);
        let spans = gold(&c, true);
        let mut trec = tempfile::NamedTempFile::new().unwrap();
        for (q, d, s) in &c.lines {
            writeln!(trec, "q{q} Q0 d{d} 0 {}.{} run", s / 10, s % 10).unwrap();
        }
        trec.flush().unwrap();
        let want = scores(&ids, trec.path(), RunFormat::Trec, None);
        let got = scores(&spans, trec.path(), RunFormat::Trec, Some(identity_map()));
        prop_assert_eq!(&got.values, &want.values);

        // The same ranking as JSONL with located results (trec_eval's order:
        // score descending, ties by id descending).
        let mut jsonl = tempfile::NamedTempFile::new().unwrap();
        let nq = c.labels.len();
        for q in 0..nq {
            let mut mine: Vec<(u32, i32)> = c.lines.iter().filter(|l| l.0 == q).map(|l| (l.1, l.2)).collect();
            mine.sort_by(|a, b| b.1.cmp(&a.1).then(format!("d{}", b.0).cmp(&format!("d{}", a.0))));
            let results: Vec<String> = mine
                .iter()
                .map(|&(d, _)| {
                    let (doc, s, e) = place(d);
                    format!("{{\"id\": \"d{d}\", \"doc\": \"{doc}\", \"start\": {s}, \"end\": {e}}}")
                })
                .collect();
            if !mine.is_empty() {
                writeln!(jsonl, "{{\"query_id\": \"q{q}\", \"results\": [{}]}}", results.join(", ")).unwrap();
            }
        }
        jsonl.flush().unwrap();
        // A run of no results locates nothing: an error of its own (see
        // cli_spans.rs), not a case of this property.
        if !c.lines.is_empty() {
            let got = scores(&spans, jsonl.path(), RunFormat::Jsonl, None);
            prop_assert_eq!(&got.values, &want.values);
        }
    }
}

// ---- invariant 2: the same text under two chunkings --------------------------

/// The text retrieved: [0, 100) of `a` and [200, 250) of `b`, cut into
/// chunks of `size` characters (the last one of each range shorter).
fn chunked(size: u64) -> Vec<(String, &'static str, u64, u64)> {
    let mut out = Vec::new();
    for (doc, from, to) in [("a", 0u64, 100u64), ("b", 200, 250)] {
        let mut s = from;
        while s < to {
            let e = (s + size).min(to);
            out.push((format!("{doc}@{s}"), doc, s, e));
            s = e;
        }
    }
    out
}

#[test]
fn the_same_text_under_any_chunking_has_the_same_recall() {
    // Spans: [30, 70) of a, wholly retrieved; [90, 130) of a, a quarter
    // retrieved; [210, 260) of b, four fifths retrieved; [0, 10) of c,
    // not retrieved. At coverage 0.5, two of four are credited.
    let q = query(
        vec![],
        vec![
            span("a", 30, 70, 1),
            span("a", 90, 130, 2),
            span("b", 210, 260, 1),
            span("c", 0, 10, 1),
        ],
    );
    for size in [1u64, 3, 7, 10, 25, 50, 100] {
        let chunks = chunked(size);
        let view: Vec<(&str, &str, u64, u64)> = chunks
            .iter()
            .map(|(id, doc, s, e)| (id.as_str(), *doc, *s, *e))
            .collect();
        let r = judge(&q, 0.5, &view);
        let k = format!("recall@{}", view.len());
        assert_eq!(value(&k, &r, &q, 1), 0.5, "chunks of {size}");
        // Reversed order: the same text, so the same recall at full depth.
        let reversed: Vec<_> = view.iter().rev().copied().collect();
        let r = judge(&q, 0.5, &reversed);
        assert_eq!(value(&k, &r, &q, 1), 0.5, "chunks of {size}, reversed");
    }
}

/// The text [0, 100) of `a` and [200, 250) of `b`, cut at `cuts` (offsets
/// inside those ranges), as located chunks in the given order of pieces.
fn cut(cuts: &[u64], order_seed: u64) -> Vec<(String, &'static str, u64, u64)> {
    let mut out = Vec::new();
    for (doc, from, to) in [("a", 0u64, 100u64), ("b", 200, 250)] {
        let mut points: Vec<u64> = cuts.iter().copied().filter(|&c| c > from && c < to).collect();
        points.sort_unstable();
        points.dedup();
        let mut s = from;
        for e in points.into_iter().chain(std::iter::once(to)) {
            out.push((format!("{doc}@{s}"), doc, s, e));
            s = e;
        }
    }
    // Some fixed shuffle: rank order does not matter at full depth.
    let n = out.len();
    for i in 0..n {
        let j = ((order_seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(i as u64))
            % n as u64) as usize;
        out.swap(i, j);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Any two chunkings of the same retrieved text, in any rank order,
    /// give the same recall at full depth, and it is the share of spans
    /// whose overlap with that text reaches the coverage.
    #[test]
    fn two_chunkings_of_the_same_text_have_the_same_recall(
        cuts_1 in prop::collection::vec(0u64..260, 0..12),
        cuts_2 in prop::collection::vec(0u64..260, 0..30),
        seeds in (0u64..1000, 0u64..1000),
        spans in prop::collection::vec((prop::bool::ANY, 0u64..300, 1u64..80), 1..6),
        coverage in prop::sample::select(vec![0.25, 0.5, 0.75, 1.0]),
    ) {
        let mut seen = std::collections::HashSet::new();
        let labels: Vec<SpanLabel> = spans
            .iter()
            .map(|&(in_a, start, len)| span(if in_a { "a" } else { "b" }, start, start + len, 1))
            .filter(|s| seen.insert((s.doc.clone(), s.start, s.end)))
            .collect();
        let q = query(vec![], labels.clone());
        // By hand: the text retrieved of each span, against the coverage.
        let want = labels
            .iter()
            .filter(|s| {
                let (from, to) = if s.doc == "a" { (0, 100) } else { (200, 250) };
                let shared = s.end.min(to).saturating_sub(s.start.max(from));
                shared as f64 >= coverage * (s.end - s.start) as f64
            })
            .count() as f64
            / labels.len() as f64;
        for (cuts, seed) in [(&cuts_1, seeds.0), (&cuts_2, seeds.1)] {
            let chunks = cut(cuts, seed);
            let view: Vec<(&str, &str, u64, u64)> =
                chunks.iter().map(|(id, doc, s, e)| (id.as_str(), *doc, *s, *e)).collect();
            let r = judge(&q, coverage, &view);
            prop_assert_eq!(value(&format!("recall@{}", view.len()), &r, &q, 1), want);
        }
    }
}

#[test]
fn hand_built_empty_or_reversed_spans_do_not_panic() {
    // The loaders refuse these; a library caller may still build them.
    let q = query(vec![], vec![span("a", 5, 5, 1), span("a", 9, 3, 1)]);
    let r = judge(&q, 0.5, &[("c", "a", 0, 10), ("d", "a", 4, 4)]);
    for m in [
        "recall@2",
        "precision@2",
        "ndcg",
        "map",
        "mrr",
        "r_precision",
        "judged@2",
    ] {
        let v = value(m, &r, &q, 1);
        assert!((0.0..=1.0).contains(&v), "{m} = {v}");
    }
}
