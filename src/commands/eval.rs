//! `rgate eval`: one run's metrics on a gold set.

use anyhow::Result;

use crate::chunks::ChunkMap;
use crate::cli::{EvalArgs, Global, NamesArg};
use crate::diag::usage_error;
use crate::eval::{Scores, Summary};
use crate::fsutil::emit;
use crate::report::eval as report;
use crate::report::Format;
use crate::run::{self, RunOptions};

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
                "trec_eval measures: map, map@k, r_precision, mrr (recip_rank, no cutoff), precision@k, recall@k, ndcg, ndcg@k, hit_rate@k (success); pass those with --metrics, or drop --names trec_eval",
            ));
        }
    }
    let chunks = match &args.chunks {
        Some(p) => Some(std::sync::Arc::new(ChunkMap::load(p)?)),
        None => None,
    };
    let opts = RunOptions {
        format: args.gold.run_format.map(Into::into),
        chunks,
        ..Default::default()
    };
    let judged = run::read(&args.run, &prep.gold, &prep.labels, &opts)?;
    prep.warnings.emit(global.quiet);
    judged.warnings.emit(global.quiet);
    let scores = Scores::compute(&prep.metrics, &judged.rankings, &prep.contexts);
    let summary = Summary::new(&scores, &prep.gold);
    let view = report::EvalView {
        prep: &prep,
        run: &judged,
        scores: &scores,
        summary: &summary,
        per_query: args.per_query,
        by_stratum: args.by_stratum,
        trec_names,
    };
    emit(global.output.as_deref(), &view.render(global.format()))?;
    // The process ends after this: freeing the gold set and the rankings
    // one allocation at a time would only delay the exit.
    std::mem::forget((prep, judged, scores));
    Ok(0)
}
