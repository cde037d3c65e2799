//! Properties of evaluation on random gold sets and TREC runs.

use std::io::Write;

use proptest::prelude::*;
use rgate::eval::Scores;
use rgate::gold::{GoldFormat, GoldQuery, GoldSet, Label};
use rgate::judge::{self, Hit, Ranking};
use rgate::metrics::{Kind, Metric};
use rgate::run::{self, KeepIds, RunFormat, RunOptions};

#[derive(Debug, Clone)]
struct Case {
    /// Per query: labels (doc number, grade).
    labels: Vec<Vec<(u32, i32)>>,
    /// Run lines: (query, doc number, score in tenths; few values, many ties).
    lines: Vec<(usize, u32, i32)>,
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..5).prop_flat_map(|nq| {
        let labels = prop::collection::vec(prop::collection::vec((0u32..30, -1i32..4), 0..8), nq);
        let lines = prop::collection::vec((0..nq, 0u32..30, 0i32..12), 0..120);
        (labels, lines).prop_map(|(labels, lines)| Case { labels, lines })
    })
}

fn gold_of(c: &Case) -> GoldSet {
    let queries = c
        .labels
        .iter()
        .enumerate()
        .map(|(i, ls)| {
            let mut seen = std::collections::HashSet::new();
            GoldQuery {
                id: format!("q{i}"),
                text: None,
                stratum: (i % 2) as u32,
                spans: Vec::new(),
                labels: ls
                    .iter()
                    .filter(|(d, _)| seen.insert(*d))
                    .map(|(d, g)| Label {
                        id: format!("d{d}"),
                        grade: *g,
                    })
                    .collect(),
            }
        })
        .collect();
    GoldSet::from_parts("gold", GoldFormat::Yaml, queries, vec!["a".into(), "b".into()]).unwrap()
}

fn write_run(lines: &[(usize, u32, i32)]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    for (q, d, s) in lines {
        writeln!(f, "q{q} Q0 d{d} 0 {}.{} run", s / 10, s % 10).unwrap();
    }
    f.flush().unwrap();
    f
}

fn judged(gold: &GoldSet, lines: &[(usize, u32, i32)]) -> run::JudgedRun {
    let f = write_run(lines);
    let labels = judge::label_index(gold);
    let opts = RunOptions {
        format: Some(RunFormat::Trec),
        keep_ids: KeepIds::All,
        chunks: None,
    };
    run::read(f.path(), gold, &labels, &opts).unwrap()
}

fn all_metrics() -> Vec<Metric> {
    let mut ms = Vec::new();
    for k in [1, 2, 3, 5, 10, 1000] {
        for kind in [
            Kind::Recall,
            Kind::HitRate,
            Kind::Precision,
            Kind::Judged,
            Kind::Ndcg,
            Kind::Map,
            Kind::Mrr,
        ] {
            ms.push(Metric::new(kind, Some(k)));
        }
    }
    for kind in [Kind::Ndcg, Kind::Map, Kind::Mrr, Kind::RPrecision] {
        ms.push(Metric::new(kind, None));
    }
    ms
}

/// The obvious way: dedupe keeping the best-ranked, sort everything by
/// (score desc, docid desc), number the ranks.
fn reference_ranking(gold: &GoldSet, q: usize, lines: &[(usize, u32, i32)]) -> Ranking {
    let mut best: std::collections::HashMap<String, i32> = std::collections::HashMap::new();
    for (lq, d, s) in lines {
        if *lq == q {
            let e = best.entry(format!("d{d}")).or_insert(*s);
            *e = (*e).max(*s);
        }
    }
    let mut docs: Vec<(String, i32)> = best.into_iter().collect();
    docs.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
    let mut r = Ranking {
        num_ret: docs.len() as u32,
        hits: Vec::new(),
        chunks: None,
    };
    for (i, (d, _)) in docs.iter().enumerate() {
        if let Some(l) = gold.queries[q].labels.iter().find(|l| l.id == d) {
            r.hits.push(Hit {
                rank: i as u32 + 1,
                grade: l.grade,
            });
        }
    }
    r
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn rankings_match_a_full_sort(c in case()) {
        let gold = gold_of(&c);
        let run = judged(&gold, &c.lines);
        for q in 0..gold.len() {
            prop_assert_eq!(&run.rankings[q], &reference_ranking(&gold, q, &c.lines));
        }
    }

    #[test]
    fn values_lie_in_unit_interval(c in case(), level in 0i32..3) {
        let gold = gold_of(&c);
        let run = judged(&gold, &c.lines);
        let ctx = judge::contexts(&gold, level);
        let s = Scores::compute(&all_metrics(), &run.rankings, &ctx);
        for (m, v) in s.metrics.iter().zip(&s.values) {
            for x in v {
                prop_assert!((0.0..=1.0).contains(x), "{} = {}", m, x);
            }
        }
    }

    #[test]
    fn recall_never_falls_with_depth(c in case()) {
        let gold = gold_of(&c);
        let run = judged(&gold, &c.lines);
        let ctx = judge::contexts(&gold, 1);
        let ks: Vec<Metric> = (1..=40).map(|k| Metric::new(Kind::Recall, Some(k))).collect();
        let s = Scores::compute(&ks, &run.rankings, &ctx);
        for q in 0..gold.len() {
            for k in 1..ks.len() {
                prop_assert!(s.values[k][q] >= s.values[k - 1][q]);
            }
        }
    }

    #[test]
    fn shuffling_lines_changes_nothing(c in case(), seed in any::<u64>()) {
        let gold = gold_of(&c);
        let mut shuffled = c.lines.clone();
        // Fisher-Yates with a tiny LCG: the order is all that matters.
        let mut x = seed | 1;
        for i in (1..shuffled.len()).rev() {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            shuffled.swap(i, (x >> 33) as usize % (i + 1));
        }
        let a = judged(&gold, &c.lines);
        let b = judged(&gold, &shuffled);
        let ctx = judge::contexts(&gold, 1);
        let ms = all_metrics();
        prop_assert_eq!(Scores::compute(&ms, &a.rankings, &ctx), Scores::compute(&ms, &b.rankings, &ctx));
        prop_assert_eq!(a.top_ids, b.top_ids);
    }
}

/// Pieces of almost-valid input: parsers must answer with an error, never
/// a panic.
fn token() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "q0",
        "q1",
        "Q0",
        "d1",
        "d2",
        "1",
        "-1",
        "2.5",
        "1e400",
        "nan",
        "-inf",
        "",
        " ",
        "\t",
        "{",
        "}",
        "[",
        "]",
        "\"",
        ":",
        ",",
        "\"query_id\"",
        "\"results\"",
        "\"id\"",
        "\"score\"",
        "queries:",
        "- id:",
        "relevant:",
        "#",
        "é",
        "\u{0}",
        "\r",
    ])
    .prop_map(str::to_string)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_input_makes_a_parser_panic(
        raw in prop::collection::vec(any::<u8>(), 0..300),
        lines in prop::collection::vec(prop::collection::vec(token(), 0..8), 0..12),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let text: String = lines.iter().map(|l| l.join(" ")).collect::<Vec<_>>().join("\n");
        let gold = gold_of(&Case { labels: vec![vec![(1, 1)], vec![(2, 0)]], lines: vec![] });
        let labels = judge::label_index(&gold);
        for (i, content) in [raw.clone(), text.into_bytes()].iter().enumerate() {
            for ext in ["yaml", "json", "jsonl", "txt"] {
                let p = dir.path().join(format!("in{i}.{ext}"));
                std::fs::write(&p, content).unwrap();
                let _ = GoldSet::load(&p, None);
                for fmt in [None, Some(RunFormat::Trec), Some(RunFormat::Json), Some(RunFormat::Jsonl)] {
                    let opts = RunOptions { format: fmt, keep_ids: KeepIds::Depth(3), chunks: None };
                    let _ = run::read(&p, &gold, &labels, &opts);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn config_and_baseline_parsers_never_panic(
        lines in prop::collection::vec(prop::collection::vec(token(), 0..6), 0..10),
        raw in ".{0,200}",
    ) {
        let text: String = lines.iter().map(|l| l.join(" ")).collect::<Vec<_>>().join("\n");
        for t in [&text, &raw] {
            let _ = rgate::config::Config::parse(std::path::Path::new("c.yaml"), t);
            let _ = rgate::baseline::Baseline::parse(std::path::Path::new("b.json"), t);
        }
    }
}
