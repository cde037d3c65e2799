//! `rgate eval`: one run's metrics on a gold set.

use anyhow::Result;

use crate::chunks::ChunkMap;
use crate::cli::{EvalArgs, Global, NamesArg};
use crate::diag::{usage_error, Warnings};
use crate::eval::{Scores, Summary};
use crate::fsutil::emit;
use crate::report::eval as report;
use crate::report::Format;
use crate::run::{self, KeepIds, RunOptions};
use crate::stages;

pub fn run(args: &EvalArgs, global: &Global) -> Result<u8> {
    let trec_names = args.names == NamesArg::TrecEval;
    if trec_names && global.format() != Format::Trec {
        return Err(usage_error(
            "--names trec_eval names measures in --format trec output",
            "add --format trec",
        ));
    }
    let prep = super::prepare(&args.gold)?;
    if trec_names {
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
    if args.candidates.is_none() {
        if let Some(m) = prep.metrics.iter().find(|m| m.is_candidates()) {
            return Err(usage_error(
                format!("{m} scores the candidate list, and none was given"),
                "add --candidates FILE (the list the reranker was given), or drop the `candidates:` metrics",
            ));
        }
    }
    let chunks = match &args.chunks {
        Some(p) => Some(std::sync::Arc::new(ChunkMap::load(p)?)),
        None => None,
    };
    // The ids of both stages are kept only to check that the reranker did
    // not add chunks: a run without candidates reads no more than before.
    // Both stages come from one chunking, so one chunk map serves both.
    let opts = RunOptions {
        format: args.gold.run_format.map(Into::into),
        chunks,
        keep_ids: if args.candidates.is_some() {
            KeepIds::All
        } else {
            KeepIds::None
        },
    };
    let (judged, candidates) = prep.hashing_beside(|| -> Result<_> {
        let judged = run::read(&args.run, &prep.gold, &prep.labels, &opts)?;
        let candidates = match &args.candidates {
            Some(path) => {
                let c = run::read(path, &prep.gold, &prep.labels, &opts)?;
                stages::check_same_queries(&prep.gold, &judged.path, &judged.present, &c.path, &c.present)?;
                Some(c)
            }
            None => None,
        };
        Ok((judged, candidates))
    })?;
    let stages = candidates.as_ref().map(|c| {
        let cutoff = args.cutoff.or_else(|| stages::default_cutoff(&prep.metrics));
        let mut s = stages::Stages::compute(
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
        s
    });
    prep.warnings.emit(global.quiet);
    judged.warnings.emit(global.quiet);
    let mut stage_warnings = Warnings::default();
    if let (Some(c), Some(s)) = (&candidates, &stages) {
        c.warnings.emit(global.quiet);
        if let Some(w) = stages::absent_warning(&prep.gold, &judged.path, &c.path, &s.absent) {
            stage_warnings.push(w);
        }
        stage_warnings.emit(global.quiet);
    }
    let scores = Scores::compute_stages(
        &prep.metrics,
        &judged.rankings,
        candidates.as_ref().map(|c| c.rankings.as_slice()),
        &prep.contexts,
    );
    let summary = Summary::new(&scores, &prep.gold);
    let view = report::EvalView {
        prep: &prep,
        run: &judged,
        candidates: candidates
            .as_ref()
            .zip(stages.as_ref())
            .map(|(c, s)| report::StageView {
                run: c,
                stages: s,
                warnings: &stage_warnings,
            }),
        scores: &scores,
        summary: &summary,
        per_query: args.per_query,
        by_stratum: args.by_stratum,
        trec_names,
    };
    emit(global.output.as_deref(), &view.render(global.format())?)?;
    // The process ends after this: freeing the gold set and the rankings
    // one allocation at a time would only delay the exit.
    std::mem::forget((prep, judged, scores, candidates, stages));
    Ok(0)
}
