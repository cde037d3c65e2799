//! `rgate compare`: A/B (and A/B/C...) with paired significance tests.
//! Every run after the first is compared with the first, query by query.

use anyhow::Result;

use super::Prepared;
use crate::cli::{AlternativeArg, CompareArgs, Format, Global};
use crate::config::{GateSettings, Weighting};
use crate::diag::usage_error;
use crate::eval::{mean_of, members_by_stratum, Scores};
use crate::fsutil::emit;
use crate::gate::test_deltas;
use crate::report::compare::{CompareRow, CompareView, RunColumn};
use crate::run::{self, RunOptions};
use crate::stats::{self, Alternative, Strata};

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
    let gold = &prep.gold;
    let n_metrics = prep.metrics.len();
    let members = members_by_stratum(gold);
    let mut scopes: Vec<(String, Vec<usize>)> = vec![("all".into(), (0..gold.len()).collect())];
    if args.by_stratum {
        for (name, m) in gold.strata.iter().zip(&members) {
            if !m.is_empty() {
                scopes.push((name.clone(), m.clone()));
            }
        }
    }
    let base = &columns[0].scores;
    let mut comparisons: Vec<Vec<CompareRow>> = Vec::new();
    for cand in columns.iter().skip(1) {
        let mut rows = Vec::new();
        for (si, (scope, idx)) in scopes.iter().enumerate() {
            let mut deltas = Vec::with_capacity(idx.len() * n_metrics);
            for &q in idx {
                for m in 0..n_metrics {
                    deltas.push(cand.scores.values[m][q] - base.values[m][q]);
                }
            }
            let strata = if si == 0 {
                Strata::from_labels(&gold.stratum_labels())
            } else {
                Strata::single(idx.len())
            };
            let tests = test_deltas(&deltas, n_metrics, &strata, &settings);
            for (m, t) in tests.into_iter().enumerate() {
                let (mut wins, mut ties, mut losses) = (0, 0, 0);
                for &q in idx {
                    let d = cand.scores.values[m][q] - base.values[m][q];
                    if d > 0.0 {
                        wins += 1;
                    } else if d < 0.0 {
                        losses += 1;
                    } else {
                        ties += 1;
                    }
                }
                let (b_mean, c_mean) = if si == 0 && args.weighting == Weighting::Macro {
                    let macro_of = |v: &[f64]| {
                        let ms: Vec<f64> = members
                            .iter()
                            .filter(|m| !m.is_empty())
                            .map(|m| mean_of(v, m.iter().copied()))
                            .collect();
                        stats::mean(&ms)
                    };
                    (macro_of(&base.values[m]), macro_of(&cand.scores.values[m]))
                } else {
                    (
                        mean_of(&base.values[m], idx.iter().copied()),
                        mean_of(&cand.scores.values[m], idx.iter().copied()),
                    )
                };
                rows.push(CompareRow {
                    metric: prep.metrics[m],
                    stratum: scope.clone(),
                    n: idx.len(),
                    baseline: b_mean,
                    current: c_mean,
                    delta: t.mean_delta,
                    ci_low: t.ci_low,
                    ci_high: t.ci_high,
                    p_value: t.p(alternative),
                    p_adjusted: f64::NAN,
                    wins,
                    ties,
                    losses,
                });
            }
        }
        let adjusted = stats::holm(&rows.iter().map(|r| r.p_value).collect::<Vec<_>>());
        for (r, a) in rows.iter_mut().zip(adjusted) {
            r.p_adjusted = a;
        }
        comparisons.push(rows);
    }
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
