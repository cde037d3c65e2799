//! `eval`: one run's metrics on a gold set, and with its candidate list,
//! what each stage lost.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;

use super::{prepare, GoldInput, RunSource};
use crate::chunks::ChunkMap;
use crate::diag::{usage_error, Warnings};
use crate::eval::{MeanIntervals, Scores, Summary};
use crate::prepared::Prepared;
use crate::run::{JudgedRun, KeepIds, RunFormat, RunOptions};
use crate::stages::{self, Stages};

/// What to evaluate.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    pub gold: GoldInput,
    pub run: RunSource,
    /// The run format, when detection from content is not wanted.
    pub run_format: Option<RunFormat>,
    /// Chunk map of the run's chunking, for gold sets with span labels.
    pub chunks: Option<PathBuf>,
    /// The candidate list the run was reranked from.
    pub candidates: Option<RunSource>,
    /// The final stage's cutoff for loss attribution (default: the
    /// smallest cutoff among the final metrics).
    pub cutoff: Option<u32>,
    /// The results will be shown in trec_eval's measure names: every metric
    /// must have one.
    pub trec_names: bool,
    /// Bootstrap resamples for the 95% intervals on the means: `None` for
    /// [`crate::eval::default_interval_resamples`]; `Some(0)` computes none
    /// (the trec format shows none: trec_eval's layout has no place for
    /// them).
    pub interval_resamples: Option<u32>,
    /// Seed of the intervals' resampling stream.
    pub seed: u64,
}

/// The candidate list, and what the two stages say.
pub struct StageRun {
    pub run: JudgedRun,
    pub stages: Stages,
    /// Warnings about the two stages together (chunks the reranker added).
    pub warnings: Warnings,
}

/// An evaluated run.
pub struct EvalRun {
    pub prep: Prepared,
    pub run: JudgedRun,
    pub candidates: Option<StageRun>,
    pub scores: Scores,
    pub summary: Summary,
    /// 95% intervals on the summary's means, unless none were asked for
    /// (or the means are PPI estimates, whose intervals are in `ppi`).
    pub intervals: Option<MeanIntervals>,
    /// With `labels: ppi`: the run scored on the model's grades, and the
    /// estimates (the summary's means are these).
    pub ppi: Option<PpiEval>,
}

/// The model side of a `labels: ppi` evaluation.
pub struct PpiEval {
    /// The run's values on the model's grades, over the model side's
    /// queries ([`crate::prepared::PpiSide::model`]).
    pub scores: Scores,
    pub summary: crate::ppi::PpiSummary,
}

/// Reads, judges and scores the run (and its candidate list); the loading
/// and reading warnings go into `warnings`, in the order found.
pub fn eval(opts: &EvalOptions, warnings: &mut Warnings) -> Result<EvalRun> {
    let prep = prepare(&opts.gold)?;
    check_metrics(&prep, opts)?;
    let chunks = match &opts.chunks {
        Some(p) => Some(Arc::new(ChunkMap::load(p)?)),
        None => None,
    };
    // The ids of both stages are kept only to check that the reranker did
    // not add chunks: a run without candidates reads no more than before.
    // Both stages come from one chunking, so one chunk map serves both.
    let run_opts = RunOptions {
        format: opts.run_format,
        chunks,
        keep_ids: if opts.candidates.is_some() {
            KeepIds::All
        } else {
            KeepIds::None
        },
    };
    let (judged, candidates) = prep.hashing_beside(|| -> Result<_> {
        let judged = opts.run.read(&prep, &run_opts)?;
        let candidates = match &opts.candidates {
            Some(source) => {
                let c = source.read(&prep, &run_opts)?;
                stages::check_same_queries(&prep.gold, &judged.path, &judged.present, &c.path, &c.present)?;
                Some(c)
            }
            None => None,
        };
        Ok((judged, candidates))
    })?;
    let mut judged = judged;
    if prep.metrics.iter().any(|m| m.kind == crate::metrics::Kind::RunId) {
        judged.run_tag = Some(run_tag(&judged));
    }
    warnings.0.extend(prep.warnings.iter().cloned());
    warnings.0.extend(judged.warnings.iter().cloned());
    let candidates = candidates.map(|c| stage_run(&prep, &judged, c, opts.cutoff));
    if let Some(c) = &candidates {
        warnings.0.extend(c.run.warnings.iter().cloned());
        warnings.0.extend(c.warnings.iter().cloned());
    }
    let scores = Scores::compute_stages(
        &prep.metrics,
        &judged.rankings,
        candidates.as_ref().map(|c| c.run.rankings.as_slice()),
        &prep.contexts,
    );
    let mut summary = Summary::new(&scores, &prep.gold);
    let ppi = match &prep.ppi {
        Some(side) => {
            let model = side_scores(opts, &prep, side, &run_opts)?;
            let est = crate::ppi::PpiSummary::compute(side, &prep.gold, &scores, &model);
            est.apply(&mut summary);
            Some(PpiEval {
                scores: model,
                summary: est,
            })
        }
        None => None,
    };
    let resamples = opts
        .interval_resamples
        .unwrap_or_else(|| crate::eval::default_interval_resamples(prep.gold.len()));
    let intervals = (resamples > 0 && ppi.is_none())
        .then(|| MeanIntervals::compute(&scores, &prep.gold, resamples, opts.seed));
    Ok(EvalRun {
        prep,
        run: judged,
        candidates,
        scores,
        summary,
        intervals,
        ppi,
    })
}

/// The run (and its candidate list) judged again on the model's grades:
/// the same files, read by the same code, against the model side's gold
/// set. Its warnings repeat the first reading's and are dropped.
fn side_scores(
    opts: &EvalOptions,
    prep: &Prepared,
    side: &crate::prepared::PpiSide,
    run_opts: &RunOptions,
) -> Result<Scores> {
    let run = opts.run.read(&side.model, run_opts)?;
    let candidates = match &opts.candidates {
        Some(source) => Some(source.read(&side.model, run_opts)?),
        None => None,
    };
    Ok(Scores::compute_stages(
        &prep.metrics,
        &run.rankings,
        candidates.as_ref().map(|c| c.rankings.as_slice()),
        &side.model.contexts,
    ))
}

/// The metrics asked for can be computed and shown as asked.
fn check_metrics(prep: &Prepared, opts: &EvalOptions) -> Result<()> {
    if opts.trec_names {
        let nameless: Vec<String> = prep
            .metrics
            .iter()
            .filter(|m| m.trec_eval_name().is_none())
            .map(|m| format!("`{m}`"))
            .collect();
        if !nameless.is_empty() {
            return Err(usage_error(
                format!(
                    "{} no trec_eval measure, so a script reading trec_eval's names would not find {}",
                    if nameless.len() == 1 {
                        format!("{} has", nameless[0])
                    } else {
                        format!("{} have", nameless.join(", "))
                    },
                    if nameless.len() == 1 { "it" } else { "them" }
                ),
                format!(
                    "trec_eval measures: {}; pass those with --metrics, or drop --names trec_eval",
                    crate::metrics::trec_eval_measures()
                ),
            ));
        }
    }
    if opts.candidates.is_none() {
        if let Some(m) = prep.metrics.iter().find(|m| m.is_candidates()) {
            return Err(usage_error(
                format!("{m} scores the candidate list, and none was given"),
                "add --candidates FILE (the list the reranker was given), or drop the `candidates:` metrics",
            ));
        }
    }
    Ok(())
}

/// What the two stages say about each query.
fn stage_run(prep: &Prepared, judged: &JudgedRun, c: JudgedRun, cutoff: Option<u32>) -> StageRun {
    let cutoff = cutoff.or_else(|| stages::default_cutoff(&prep.metrics));
    let mut s = Stages::compute(
        &prep.gold,
        &prep.contexts,
        &prep.metrics,
        &judged.rankings,
        &c.rankings,
        cutoff,
    );
    if let (Some(f), Some(ci)) = (&judged.top_ids, &c.top_ids) {
        s.absent = stages::absent_from_candidates(f, ci);
    }
    let mut warnings = Warnings::default();
    if let Some(w) = stages::absent_warning(&prep.gold, &judged.path, &c.path, &s.absent) {
        warnings.push(w);
    }
    StageRun {
        run: c,
        stages: s,
        warnings,
    }
}

/// `eval --curve`: each curve of `specs` on an evaluated run, with the
/// run's interval settings (`resamples` as [`EvalOptions::interval_resamples`]
/// says) and, with `target`, the depth each scope needs. A `candidates:`
/// curve needs the run's candidate list.
pub fn curves(
    run: &EvalRun,
    specs: &[crate::curve::CurveSpec],
    target: Option<f64>,
    resamples: Option<u32>,
    seed: u64,
) -> Result<Vec<crate::curve::Curve>> {
    use crate::curve::{compute, Curve, CurveInputs};
    if let Some(t) = target {
        Curve::check_target(t)?;
    }
    let candidates = run.candidates.as_ref().map(|c| c.run.rankings.as_slice());
    if candidates.is_none() {
        if let Some(s) = specs.iter().find(|s| s.first().is_candidates()) {
            return Err(usage_error(
                format!(
                    "--curve {} scores the candidate list, and none was given",
                    s.name()
                ),
                "add --candidates FILE, or drop the `candidates:` prefix",
            ));
        }
    }
    let inputs = CurveInputs {
        gold: &run.prep.gold,
        contexts: &run.prep.contexts,
        rankings: &run.run.rankings,
        candidates,
        resamples: resamples.unwrap_or_else(|| crate::eval::default_interval_resamples(run.prep.gold.len())),
        seed,
    };
    Ok(specs.iter().map(|s| compute(s, &inputs, target)).collect())
}

/// The run's tag, as trec_eval's `runid` prints it: the sixth field of a
/// TREC run's first line (trec_eval takes the tag of its first query's
/// results; a run keeps one tag throughout). Another run format, or a run
/// in memory, has none: its file name stands for it.
fn run_tag(run: &JudgedRun) -> String {
    use std::io::{BufRead, BufReader, Read};
    let stem = || {
        run.path
            .file_stem()
            .map_or_else(|| "run".to_string(), |s| s.to_string_lossy().into_owned())
    };
    if run.format != RunFormat::Trec {
        return stem();
    }
    let Ok(file) = std::fs::File::open(&run.path) else {
        return stem();
    };
    // One line, however long the file: at most 64 KiB of it.
    let mut line = String::new();
    if BufReader::new(file.take(1 << 16)).read_line(&mut line).is_err() {
        return stem();
    }
    line.split_whitespace().nth(5).map_or_else(stem, str::to_string)
}
