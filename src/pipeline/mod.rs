//! The pipeline every front end calls: load the inputs, read and judge the
//! runs, score, compare, decide, record. The command line maps its
//! arguments onto the option structs here and renders what comes back; a
//! Python module, a test or another front end calls the same functions and
//! gets the same values, with no process, clap or terminal involved.
//!
//! Nothing here prints or exits. Warnings come back as data: the gate's in
//! its [`GateOutcome`](crate::gate::GateOutcome) (its reports carry them),
//! eval's and compare's in a [`Warnings`](crate::diag::Warnings) list the
//! caller passes in, filled as they are found, so the warnings found before
//! an error are still there to show beside it. What must be shown while the
//! work goes on (a retriever command's progress, a wait for a lock, a
//! baseline written) goes to a [`Watch`].
//!
//! Runs are named by a [`RunSource`]: a file, or rankings in memory (a
//! Python dict), judged by the same code; a gold set is a file or a
//! [`MemoryGold`] (see [`GoldInput::memory`]), checked by the same
//! builder. The Python module reaches every command this way, with no file
//! written and no process started.

pub mod baseline;
pub mod compare;
pub mod eval;
pub mod gate;
pub mod gold;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;

use crate::gold::MemoryGold;
use crate::prepared::Prepared;
use crate::run::memory::MemoryRun;
use crate::run::{self, JudgedRun, RunOptions};

pub use baseline::{baseline_update, BaselineUpdate, UpdateOptions};
pub use compare::{compare, CompareInput, CompareOptions, CompareRun};
pub use eval::{eval, EvalOptions, EvalRun};
pub use gate::{gate, Evaluated, GateOptions, GateRun, Overrides};
pub use gold::{gold_stats, gold_validate, GoldOptions, GoldStats, Validation};

/// Where a run (or a candidate list) comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum RunSource {
    /// A TREC, JSON or JSONL run file.
    File(PathBuf),
    /// Rankings in memory; its name stands for a path in messages.
    Memory(Arc<MemoryRun>),
}

impl RunSource {
    /// Reads and judges the run against the prepared gold set.
    pub fn read(&self, prep: &Prepared, opts: &RunOptions) -> Result<JudgedRun> {
        match self {
            RunSource::File(path) => run::read(path, &prep.gold, &prep.labels, opts),
            RunSource::Memory(m) => m.judge(&prep.gold, &prep.labels, opts),
        }
    }

    /// The file, or the in-memory run's name, as messages and reports name
    /// the run.
    pub fn path(&self) -> &Path {
        match self {
            RunSource::File(path) => path,
            RunSource::Memory(m) => Path::new(&m.name),
        }
    }
}

/// The gold set and how to judge with it, for `eval` and `compare` (the
/// gate takes these from its config).
#[derive(Debug, Clone, Default)]
pub struct GoldInput {
    /// YAML, JSON, JSONL, or TREC qrels.
    pub path: PathBuf,
    /// Strata for TREC qrels: `qid<TAB>stratum` per line.
    pub strata: Option<PathBuf>,
    /// Metric names, each possibly a comma-separated list; none means the
    /// default metrics.
    pub metrics: Vec<String>,
    /// trec_eval's `-l` (default 1).
    pub relevance_level: Option<i32>,
    /// See [`crate::judge::DEFAULT_SPAN_COVERAGE`].
    pub span_coverage: Option<f64>,
    /// A gold set in memory, used instead of `path` and `strata`.
    pub memory: Option<Arc<MemoryGold>>,
    /// Which labels score the runs (`--labels`).
    pub labels: crate::config::LabelMode,
}

/// Loads the gold set and parses the metrics for `eval` and `compare`.
pub fn prepare(input: &GoldInput) -> Result<Prepared> {
    let level = input.relevance_level.unwrap_or(1);
    // The command line's parser and the config check the level too; this
    // is the check for every other front end (the Python module passed 0,
    // and grade-0 labels counted as relevant: issue 41, item 9).
    if let Err((msg, hint)) = crate::config::check_relevance_level(level) {
        return Err(crate::diag::usage_error(msg, hint));
    }
    let prep = match &input.memory {
        Some(m) => {
            let metrics = if input.metrics.is_empty() {
                crate::metrics::default_metrics()
            } else {
                crate::metrics::parse_list(&input.metrics)?
            };
            let (gold, warnings) = m.build()?;
            Prepared::labeled(gold, warnings, metrics, level, input.labels)
        }
        None => Prepared::load(
            &input.path,
            input.strata.as_deref(),
            &input.metrics,
            level,
            input.labels,
        ),
    };
    prep.map(|p| p.with_span_coverage(input.span_coverage.unwrap_or(crate::judge::DEFAULT_SPAN_COVERAGE)))
}

/// What a front end shows while the pipeline works. Every method has a
/// silent default; [`Unwatched`] is the watch that shows nothing.
pub trait Watch: Sync {
    /// A retriever command starts answering `total` gold queries; the
    /// callback returned gets the count answered so far, and is dropped when
    /// the command ends.
    fn command_started(&self, label: &str, total: usize) -> Box<dyn FnMut(u64) + '_> {
        let _ = (label, total);
        Box::new(|_| {})
    }

    /// Another rgate holds a retriever's lock; `message` says who and how
    /// long this one waits.
    fn lock_wait(&self, message: &str) {
        let _ = message;
    }

    /// A baseline was written.
    fn recorded(&self, retriever: &str, path: &Path) {
        let _ = (retriever, path);
    }
}

/// Shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unwatched;

impl Watch for Unwatched {}

/// The entry points called directly on the shipped demo, no process.
#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::config::Config;
    use crate::diag::Warnings;
    use crate::gate::{CheckVerdict, Verdict};
    use crate::run::memory::MemoryRun;

    fn demo(rel: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("config").join(rel)
    }

    fn config() -> Config {
        Config::load(Some(&demo("rgate.yaml"))).unwrap()
    }

    #[test]
    fn the_gate_passes_the_demo_with_three_retrievers() {
        let run = gate(&config(), &GateOptions::default(), &Unwatched).unwrap();
        let names: Vec<&str> = run.outcome.retrievers.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["bm25", "hybrid", "reranked"]);
        assert_eq!(run.outcome.verdict(), Verdict::Pass);
        assert_eq!(run.outcome.exit_code(), 0);
    }

    /// The demo's rules (config/rgate.yaml, significant-drop): the
    /// regressed hybrid run fails recall@10 (0.8861 -> 0.7861, beyond the
    /// 0.07 allowed), nDCG@10 (down 0.1135, beyond 10% of 0.7046) and
    /// hit_rate@3 on identifier-lookup (12 of 30 lost, beyond 0.2).
    #[test]
    fn the_gate_fails_the_regressed_run_on_recall_ndcg_and_identifier_lookups() {
        let opts = GateOptions {
            overrides: Overrides {
                runs: vec![(
                    "hybrid".into(),
                    RunSource::File(demo("demo/runs/hybrid-regressed.jsonl")),
                )],
                ..Overrides::default()
            },
            ..GateOptions::default()
        };
        let run = gate(&config(), &opts, &Unwatched).unwrap();
        assert_eq!(run.outcome.exit_code(), 1);
        let failed: Vec<(&str, String, &str)> = run
            .outcome
            .retrievers
            .iter()
            .flat_map(|r| r.checks.iter().map(move |c| (r, c)))
            .filter(|(_, c)| c.verdict == CheckVerdict::Fail)
            .map(|(r, c)| (r.name.as_str(), c.cmp.metric.name(), c.cmp.stratum.as_str()))
            .collect();
        assert_eq!(
            failed,
            [
                ("hybrid", "recall@10".to_string(), "all"),
                ("hybrid", "ndcg@10".to_string(), "all"),
                ("hybrid", "hit_rate@3".to_string(), "identifier-lookup")
            ]
        );
    }

    #[test]
    fn eval_of_hybrid_gives_the_recall_the_cli_prints() {
        let opts = EvalOptions {
            gold: GoldInput {
                path: demo("demo/gold.yaml"),
                ..GoldInput::default()
            },
            run: RunSource::File(demo("demo/runs/hybrid.jsonl")),
            run_format: None,
            chunks: None,
            candidates: None,
            cutoff: None,
            trec_names: false,
            interval_resamples: Some(0),
            seed: crate::config::DEFAULT_SEED,
        };
        let mut warnings = Warnings::default();
        let run = eval(&opts, &mut warnings).unwrap();
        let i = run
            .scores
            .metrics
            .iter()
            .position(|m| m.name() == "recall@10")
            .unwrap();
        // `rgate eval --format json` on main at 02c105f printed
        // "recall@10": {"all": 0.8861111111111111, ...}.
        assert_eq!(run.summary.all.means[i], 0.8861111111111111);
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn compare_names_runs_after_their_files_and_refuses_an_alpha_of_one() {
        let input = |f: &str| CompareInput {
            name: None,
            source: RunSource::File(demo(&format!("demo/runs/{f}.jsonl"))),
        };
        let mut opts = CompareOptions {
            gold: GoldInput {
                path: demo("demo/gold.yaml"),
                ..GoldInput::default()
            },
            runs: vec![input("bm25"), input("hybrid")],
            chunks: Vec::new(),
            run_format: None,
            test: crate::config::TestKind::Bootstrap,
            resamples: 1000,
            seed: crate::config::DEFAULT_SEED,
            alternative: crate::stats::Alternative::TwoSided,
            alpha: 0.05,
            by_stratum: false,
            weighting: crate::config::Weighting::Micro,
            correction: crate::compare::Correction::Holm,
        };
        let mut warnings = Warnings::default();
        let run = compare(&opts, &mut warnings).unwrap();
        let names: Vec<&str> = run.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["bm25", "hybrid"]);
        assert_eq!(run.comparisons.len(), 1);
        opts.alpha = 1.0;
        let err = compare(&opts, &mut warnings).err().unwrap().to_string();
        assert!(err.contains("--alpha 1 is outside (0, 1)"), "{err}");
    }

    /// Issue 41, item 6: `compare` with no run was an index out of bounds
    /// (a panic through the Python module), and with one run it compared
    /// nothing; both are refused, with the message the command line gives
    /// one run.
    #[test]
    fn compare_refuses_fewer_than_two_runs() {
        let run = || CompareInput {
            name: Some("a".into()),
            source: RunSource::File(demo("demo/runs/bm25.jsonl")),
        };
        for runs in [vec![], vec![run()]] {
            let n = runs.len();
            let opts = CompareOptions {
                gold: GoldInput {
                    path: demo("demo/gold.yaml"),
                    ..GoldInput::default()
                },
                runs,
                chunks: Vec::new(),
                run_format: None,
                test: crate::config::TestKind::Bootstrap,
                resamples: 1000,
                seed: crate::config::DEFAULT_SEED,
                alternative: crate::stats::Alternative::TwoSided,
                alpha: 0.05,
                by_stratum: false,
                weighting: crate::config::Weighting::Micro,
                correction: crate::compare::Correction::Holm,
            };
            let err = compare(&opts, &mut Warnings::default()).err().unwrap();
            let user = err.downcast_ref::<crate::diag::UserError>().unwrap();
            assert_eq!(
                user.message,
                format!("compare takes two or more runs, and got {n}: each run after the first is compared with the first")
            );
            assert!(user.hint.is_some());
        }
    }

    /// Issue 41, item 9: a relevance level below 1 from a front end other
    /// than the command line (which checks it as it parses) is refused, not
    /// applied: at 0 a grade-0 label counted as relevant.
    #[test]
    fn a_relevance_level_below_one_is_refused_by_the_pipeline() {
        for level in [0, -5] {
            let opts = EvalOptions {
                gold: GoldInput {
                    memory: Some(Arc::new(MemoryGold {
                        name: "gold".into(),
                        queries: vec![("q1".into(), vec![("a".into(), 0)])],
                        strata: None,
                    })),
                    relevance_level: Some(level),
                    ..GoldInput::default()
                },
                run: RunSource::Memory(Arc::new(MemoryRun {
                    name: "run".into(),
                    queries: vec![("q1".into(), crate::run::memory::Ranked::Ids(vec!["a".into()]))],
                })),
                run_format: None,
                chunks: None,
                candidates: None,
                cutoff: None,
                trec_names: false,
                interval_resamples: Some(0),
                seed: 1,
            };
            let err = eval(&opts, &mut Warnings::default()).err().unwrap().to_string();
            assert!(
                err.starts_with(&format!("relevance level {level} is below 1")),
                "{err}"
            );
        }
    }

    fn trec_fixture(name: &str) -> (PathBuf, String) {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/trec_eval")
            .join(name);
        let text = std::fs::read_to_string(&p).unwrap();
        (p, text)
    }

    fn eval_means(gold: GoldInput, run: RunSource) -> (Vec<String>, Vec<f64>, Vec<f64>, Warnings) {
        let opts = EvalOptions {
            gold: GoldInput {
                metrics: vec!["ndcg@10,recall@100,map,P@5,RR,judged@10".into()],
                ..gold
            },
            run,
            run_format: None,
            chunks: None,
            candidates: None,
            cutoff: None,
            trec_names: false,
            interval_resamples: Some(0),
            seed: crate::config::DEFAULT_SEED,
        };
        let mut warnings = Warnings::default();
        let run = eval(&opts, &mut warnings).unwrap();
        let names = run.scores.metrics.iter().map(|m| m.name()).collect();
        let per_query = run.scores.values.iter().flatten().copied().collect();
        (names, run.summary.all.means.clone(), per_query, warnings)
    }

    /// The qrels and run of trec_eval's own test, read by the file readers,
    /// and the same lines handed over as rows in memory (as a DataFrame
    /// gives them): every mean and every per-query value bit-equal.
    #[test]
    fn in_memory_gold_and_run_score_exactly_as_the_files_they_came_from() {
        let (qrels_path, qrels) = trec_fixture("qrels.test");
        let (run_path, run_text) = trec_fixture("results.test");
        let gold_rows = qrels.lines().filter(|l| !l.trim().is_empty()).map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_string(), f[2].to_string(), f[3].parse::<i32>().unwrap())
        });
        let run_rows = run_text.lines().filter(|l| !l.trim().is_empty()).map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_string(), f[2].to_string(), f[4].parse::<f64>().unwrap())
        });
        let memory_gold = GoldInput {
            memory: Some(Arc::new(MemoryGold::from_rows("qrels", gold_rows))),
            ..GoldInput::default()
        };
        let memory_run = RunSource::Memory(Arc::new(MemoryRun::from_rows("run", run_rows)));
        let from_files = eval_means(
            GoldInput {
                path: qrels_path,
                ..GoldInput::default()
            },
            RunSource::File(run_path),
        );
        let from_memory = eval_means(memory_gold, memory_run);
        assert_eq!(from_files.0, from_memory.0);
        assert_eq!(from_files.1.len(), 6);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
        assert_eq!(bits(&from_files.1), bits(&from_memory.1));
        assert_eq!(bits(&from_files.2), bits(&from_memory.2));
    }

    /// Scored results rank by score descending, ties by id descending
    /// (trec_eval's rule); ranked lists keep their order; a query the gold
    /// set lacks and one it has but the run lacks are warned about.
    #[test]
    fn in_memory_runs_rank_ties_by_id_descending_and_warn_like_files() {
        use crate::run::memory::Ranked;
        let gold = GoldInput {
            memory: Some(Arc::new(MemoryGold {
                name: "gold".into(),
                queries: vec![
                    ("q1".into(), vec![("a".into(), 1)]),
                    ("q2".into(), vec![("b".into(), 1)]),
                ],
                strata: Some(vec![("q1".into(), "s1".into()), ("zz".into(), "s2".into())]),
            })),
            metrics: vec!["RR".into()],
            ..GoldInput::default()
        };
        // a and c tie at 0.5: c (the larger id) ranks first, a second.
        let run = RunSource::Memory(Arc::new(MemoryRun {
            name: "dict".into(),
            queries: vec![
                (
                    "q1".into(),
                    Ranked::Scored(vec![("a".into(), 0.5), ("c".into(), 0.5)]),
                ),
                ("q9".into(), Ranked::Ids(vec!["x".into()])),
            ],
        }));
        let opts = EvalOptions {
            gold,
            run,
            run_format: None,
            chunks: None,
            candidates: None,
            cutoff: None,
            trec_names: false,
            interval_resamples: Some(0),
            seed: crate::config::DEFAULT_SEED,
        };
        let mut warnings = Warnings::default();
        let r = eval(&opts, &mut warnings).unwrap();
        // q1: first relevant at rank 2 -> 0.5; q2 absent -> 0.
        assert_eq!(r.scores.values[0], vec![0.5, 0.0]);
        assert_eq!(r.prep.gold.strata, ["s1", "default"]);
        let w = warnings.0.join("\n");
        assert!(
            w.contains("the strata name 1 query absent from gold: `zz`"),
            "{w}"
        );
        assert!(w.contains("dict: 1 of 2 gold queries is absent"), "{w}");
        assert!(
            w.contains("dict: 1 query is not in the gold set gold; ignored"),
            "{w}"
        );
    }

    #[test]
    fn in_memory_inputs_refuse_what_files_refuse() {
        use crate::run::memory::Ranked;
        let gold = |queries: Vec<(String, Vec<(String, i32)>)>| GoldInput {
            memory: Some(Arc::new(MemoryGold {
                name: "gold".into(),
                queries,
                strata: None,
            })),
            ..GoldInput::default()
        };
        let err = |g: GoldInput, r: Vec<(String, Ranked)>| {
            let opts = EvalOptions {
                gold: g,
                run: RunSource::Memory(Arc::new(MemoryRun {
                    name: "run".into(),
                    queries: r,
                })),
                run_format: None,
                chunks: None,
                candidates: None,
                cutoff: None,
                trec_names: false,
                interval_resamples: Some(0),
                seed: 1,
            };
            eval(&opts, &mut Warnings::default()).err().unwrap().to_string()
        };
        let ok = || gold(vec![("q1".into(), vec![("a".into(), 1)])]);
        let e = err(
            ok(),
            vec![("q1".into(), Ranked::Scored(vec![("a".into(), f64::NAN)]))],
        );
        assert!(
            e.starts_with("run: query `q1`, document `a`: score NaN is not a finite number\nhint: "),
            "{e}"
        );
        let e = err(
            ok(),
            vec![
                ("q1".into(), Ranked::Ids(vec![])),
                ("q1".into(), Ranked::Ids(vec![])),
            ],
        );
        assert!(
            e.starts_with("run: query `q1` is given twice (entries 1 and 2)"),
            "{e}"
        );
        let e = err(gold(vec![("q 1".into(), vec![("a".into(), 1)])]), vec![]);
        assert!(e.starts_with("gold: query id `q 1` contains white space"), "{e}");
        let e = err(
            gold(vec![("q1".into(), vec![("a".into(), 1), ("a".into(), 2)])]),
            vec![],
        );
        assert!(e.starts_with("gold: query `q1`: label `a` appears twice"), "{e}");
        let e = err(gold(vec![]), vec![]);
        assert!(e.starts_with("gold: the gold set has no queries"), "{e}");
    }

    #[test]
    fn gold_stats_and_validate_read_the_demo_gold_set() {
        let opts = gold::GoldOptions {
            config: Some(demo("rgate.yaml")),
            ..gold::GoldOptions::default()
        };
        let v = gold_validate(&opts).unwrap();
        assert!(v.valid());
        assert_eq!(v.gold.len(), 90);
        let s = gold_stats(&opts).unwrap();
        assert_eq!(s.scopes[0].name, "all");
        assert_eq!(s.scopes[0].queries, 90);
        assert!(!s.power.is_empty());
    }
}
