//! `rgate compare`: A/B (and A/B/C...) with paired significance tests.

use anyhow::Result;

use crate::cli::{CompareArgs, Global};
use crate::diag::Warnings;
use crate::fsutil::emit;
use crate::pipeline::compare::split_named;
use crate::pipeline::{self, CompareInput, CompareOptions, CompareRun, RunSource};
use crate::report::compare::CompareView;

fn options(args: &CompareArgs) -> Result<CompareOptions> {
    Ok(CompareOptions {
        gold: super::gold_input(&args.gold)?,
        runs: args
            .runs
            .iter()
            .map(|a| {
                let (name, path) = split_named(a)?;
                Ok(CompareInput {
                    name,
                    source: RunSource::File(path),
                })
            })
            .collect::<Result<_>>()?,
        chunks: args
            .chunks
            .iter()
            .map(|a| split_named(a))
            .collect::<Result<_>>()?,
        run_format: args.gold.run_format.map(Into::into),
        test: args.test.into(),
        resamples: args.resamples,
        seed: args.seed,
        alternative: args.alternative.into(),
        alpha: args.alpha,
        by_stratum: args.by_stratum,
        weighting: args.weighting.into(),
        correction: args.correction.into(),
    })
}

fn view(c: &CompareRun) -> CompareView<'_> {
    CompareView {
        prep: &c.prep,
        runs: &c.columns,
        comparisons: &c.comparisons,
        settings: &c.settings,
        alternative: c.alternative,
        family: &c.family,
    }
}

pub fn run(args: &CompareArgs, global: &Global) -> Result<u8> {
    let opts = options(args)?;
    let mut guard = super::gold_guard(&args.gold)?;
    for r in &opts.runs {
        if let RunSource::File(p) = &r.source {
            guard.file(p, "a run");
        }
    }
    for (_, p) in &opts.chunks {
        guard.file(p, "a chunk map");
    }
    guard.check(global.output.as_deref())?;
    let mut warnings = Warnings::default();
    let compared = pipeline::compare(&opts, &mut warnings);
    warnings.emit(global.quiet);
    emit(
        global.output.as_deref(),
        &view(&compared?).render(global.format())?,
    )?;
    Ok(0)
}
