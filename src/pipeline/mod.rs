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
//! Runs are named by a [`RunSource`]: a file today; in-memory rankings (a
//! Python dict) become one more variant, read by the same judging code.

pub mod baseline;
pub mod compare;
pub mod eval;
pub mod gate;
pub mod gold;

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::prepared::Prepared;
use crate::run::{self, JudgedRun, RunOptions};

pub use baseline::{baseline_update, BaselineUpdate, UpdateOptions};
pub use compare::{compare, CompareInput, CompareOptions, CompareRun};
pub use eval::{eval, EvalOptions, EvalRun};
pub use gate::{gate, Evaluated, GateOptions, GateRun, Overrides};
pub use gold::{gold_stats, gold_validate, GoldOptions, GoldStats, Validation};

/// Where a run (or a candidate list) comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunSource {
    /// A TREC, JSON or JSONL run file.
    File(PathBuf),
}

impl RunSource {
    /// Reads and judges the run against the prepared gold set.
    pub fn read(&self, prep: &Prepared, opts: &RunOptions) -> Result<JudgedRun> {
        match self {
            RunSource::File(path) => run::read(path, &prep.gold, &prep.labels, opts),
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
}

/// Loads the gold set and parses the metrics for `eval` and `compare`.
pub fn prepare(input: &GoldInput) -> Result<Prepared> {
    Prepared::load(
        &input.path,
        input.strata.as_deref(),
        &input.metrics,
        input.relevance_level.unwrap_or(1),
    )
    .map(|p| p.with_span_coverage(input.span_coverage.unwrap_or(crate::judge::DEFAULT_SPAN_COVERAGE)))
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

    #[test]
    fn the_gate_fails_the_regressed_run_on_hit_rate_at_3_for_identifier_lookup() {
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
            [("hybrid", "hit_rate@3".to_string(), "identifier-lookup")]
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
