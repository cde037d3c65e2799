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

    /// The file, where the run is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            RunSource::File(p) => Some(p),
        }
    }
}

impl From<PathBuf> for RunSource {
    fn from(p: PathBuf) -> RunSource {
        RunSource::File(p)
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
