//! `rgate eval`: one run's metrics on a gold set.

use anyhow::Result;

use crate::cli::{EvalArgs, Global};
use crate::eval::{Scores, Summary};
use crate::fsutil::emit;
use crate::report::eval as report;
use crate::run::{self, RunOptions};

pub fn run(args: &EvalArgs, global: &Global) -> Result<u8> {
    let prep = super::prepare(&args.gold)?;
    let opts = RunOptions {
        format: args.gold.run_format.map(Into::into),
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
    };
    emit(global.output.as_deref(), &view.render(global.format()))?;
    // The process ends after this: freeing the gold set and the rankings
    // one allocation at a time would only delay the exit.
    std::mem::forget((prep, judged, scores));
    Ok(0)
}
