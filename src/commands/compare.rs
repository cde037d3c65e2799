//! `rgate compare`: A/B (and A/B/C...) with paired significance tests.
//! Every run after the first is compared with the first, query by query.

use anyhow::Result;

use super::Prepared;
use crate::cli::{AlternativeArg, CompareArgs, Format, Global};
use crate::compare::{compare, CompareRow};
use crate::config::GateSettings;
use crate::diag::usage_error;
use crate::eval::Scores;
use crate::fsutil::emit;
use crate::report::compare::{CompareView, RunColumn};
use crate::run::{self, RunOptions};
use crate::stats::Alternative;

pub fn run(args: &CompareArgs, global: &Global) -> Result<u8> {
    let format = global.format.unwrap_or(Format::Table);
    if matches!(format, Format::Trec | Format::Junit) {
        return Err(usage_error(
            "compare prints table, json, markdown or csv",
            "use --format json for the stable machine-readable form",
        ));
    }
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(usage_error(
            format!("--alpha {} is outside (0, 1)", args.alpha),
            "0.05 is the usual choice",
        ));
    }
    if args.resamples < 100 {
        return Err(usage_error(
            format!("--resamples {} is too few for a p-value", args.resamples),
            "use 10000 (the default); at least 1000",
        ));
    }
    let prep = Prepared::from_args(&args.gold)?;
    prep.warnings.emit(global.quiet);
    let opts = RunOptions {
        format: args.gold.run_format,
        ..Default::default()
    };
    let mut columns: Vec<RunColumn> = Vec::new();
    for path in &args.runs {
        let judged = run::read(path, &prep.gold, &prep.labels, &opts)?;
        judged.warnings.emit(global.quiet);
        let scores = Scores::compute(&prep.metrics, &judged.rankings, &prep.contexts);
        let mut name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "run".into());
        if columns.iter().any(|c| c.name == name) {
            name = path.display().to_string();
        }
        columns.push(RunColumn {
            name,
            path: path.display().to_string(),
            scores,
        });
    }

    let settings = GateSettings {
        alpha: args.alpha,
        resamples: args.resamples,
        seed: args.seed,
        test: args.test,
        weighting: args.weighting,
        ..GateSettings::default()
    };
    let alternative = match args.alternative {
        AlternativeArg::TwoSided => Alternative::TwoSided,
        AlternativeArg::Less => Alternative::Less,
        AlternativeArg::Greater => Alternative::Greater,
    };
    let base = &columns[0].scores;
    let comparisons: Vec<Vec<CompareRow>> = columns
        .iter()
        .skip(1)
        .map(|cand| {
            compare(
                &prep.gold,
                base,
                &cand.scores,
                &settings,
                alternative,
                args.by_stratum,
            )
        })
        .collect();
    let view = CompareView {
        prep: &prep,
        runs: &columns,
        comparisons: &comparisons,
        settings: &settings,
        alternative,
    };
    emit(global.output.as_deref(), &view.render(format))?;
    Ok(0)
}
