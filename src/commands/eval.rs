//! `rgate eval`: one run's metrics on a gold set.

use anyhow::Result;

use crate::cli::{EvalArgs, Global, NamesArg};
use crate::curve::{Curve, CurveSpec};
use crate::diag::{usage_error, Warnings};
use crate::fsutil::emit;
use crate::metrics::{Metric, Value};
use crate::pipeline::{self, EvalOptions, EvalRun, GoldInput, RunSource};
use crate::report::eval::{EvalView, StageView};
use crate::report::Format;

/// The report's view of an evaluated run.
fn view<'a>(run: &'a EvalRun, args: &EvalArgs, trec_names: bool, curves: &'a [Curve]) -> EvalView<'a> {
    EvalView {
        prep: &run.prep,
        run: &run.run,
        candidates: run.candidates.as_ref().map(|c| StageView {
            run: &c.run,
            stages: &c.stages,
            warnings: &c.warnings,
        }),
        scores: &run.scores,
        summary: &run.summary,
        intervals: run.intervals.as_ref(),
        per_query: args.per_query,
        by_stratum: args.by_stratum,
        trec_names,
        curves,
        ppi: run.ppi.as_ref().map(|p| &p.summary),
    }
}

pub fn run(args: &EvalArgs, global: &Global) -> Result<u8> {
    if args.list_metrics {
        emit(
            global.output.as_deref(),
            &crate::report::metrics::list(&crate::metrics::metric_table(), global.format())?,
        )?;
        return Ok(0);
    }
    let trec_names = args.names == NamesArg::TrecEval;
    if trec_names && global.format() != Format::Trec {
        return Err(usage_error(
            "--names trec_eval names measures in --format trec output",
            "add --format trec",
        ));
    }
    let specs = args
        .curves
        .iter()
        .map(|c| CurveSpec::parse(c))
        .collect::<Result<Vec<_>>>()?;
    if !specs.is_empty() && global.format() == Format::Trec {
        return Err(usage_error(
            "--curve prints in --format table, json, markdown, csv or html",
            "drop --format trec, or list the cutoffs with --metrics",
        ));
    }
    if let Some(t) = args.target {
        Curve::check_target(t)?;
    }
    let run_path = args.run_path()?;
    let mut guard = super::gold_guard(&args.gold)?;
    guard
        .file(run_path, "the run")
        .maybe(args.chunks.as_ref(), "the chunk map")
        .maybe(args.candidates.as_ref(), "the candidate list");
    guard.check(global.output.as_deref())?;
    let mut warnings = Warnings::default();
    let opts = EvalOptions {
        gold: numbers_only(super::gold_input(&args.gold)?, global.format(), &mut warnings)?,
        run: RunSource::File(run_path.to_path_buf()),
        run_format: args.gold.run_format.map(Into::into),
        chunks: args.chunks.clone(),
        candidates: args.candidates.clone().map(RunSource::File),
        cutoff: args.cutoff,
        trec_names,
        // trec_eval's lines have no place for an interval: none is computed.
        interval_resamples: if global.format() == Format::Trec {
            Some(0)
        } else {
            args.resamples
        },
        seed: args.seed,
    };
    let evaluated = pipeline::eval(&opts, &mut warnings);
    warnings.emit(global.quiet);
    let evaluated = evaluated?;
    let curves = pipeline::eval::curves(
        &evaluated,
        &specs,
        args.target,
        opts.interval_resamples,
        args.seed,
    )?;
    emit(
        global.output.as_deref(),
        &view(&evaluated, args, trec_names, &curves).render(global.format())?,
    )?;
    // The process ends after this: freeing the gold set and the rankings
    // one allocation at a time would only delay the exit.
    std::mem::forget(evaluated);
    Ok(0)
}

/// trec_eval's text measures (runid, relstring: `-m all_trec` has both)
/// print only as `--format trec` lines; another format has no place for a
/// string where a number goes, so they are left out, and said so.
fn numbers_only(mut gold: GoldInput, format: Format, warnings: &mut Warnings) -> Result<GoldInput> {
    if format == Format::Trec || gold.metrics.is_empty() {
        return Ok(gold);
    }
    let metrics = crate::metrics::parse_list(&gold.metrics)?;
    let (text, numbers): (Vec<Metric>, Vec<Metric>) =
        metrics.into_iter().partition(|m| m.family().value == Value::Text);
    if text.is_empty() {
        return Ok(gold);
    }
    let names: Vec<String> = text.iter().map(|m| format!("`{m}`")).collect();
    if numbers.is_empty() {
        return Err(usage_error(
            format!(
                "{} {} text, which only --format trec prints",
                names.join(", "),
                if names.len() == 1 { "is" } else { "are" }
            ),
            "add --format trec, or name a metric with a number",
        ));
    }
    warnings.push(format!(
        "{} left out: trec_eval's text measures print only with --format trec",
        names.join(", ")
    ));
    gold.metrics = numbers.iter().map(Metric::name).collect();
    Ok(gold)
}
