//! `rgate compare`: A/B (and A/B/C...) with paired significance tests.
//! Every run after the first is compared with the first, query by query.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;

use crate::chunks::ChunkMap;
use crate::cli::{AlternativeArg, CompareArgs, Global};
use crate::compare::{compare, CompareRow};
use crate::config::{valid_retriever_name, GateSettings};
use crate::diag::{count, usage_error};
use crate::escape;
use crate::eval::Scores;
use crate::fsutil::emit;
use crate::report::compare::{CompareView, RunColumn};
use crate::run::{self, RunOptions};
use crate::stats::Alternative;

/// Below this many queries the bootstrap understates the spread (it
/// resamples from the few values it has, and a sample of 5 rarely shows the
/// tails), so its intervals are too narrow; a warning says so.
const SMALL_SAMPLE: usize = 20;

pub fn run(args: &CompareArgs, global: &Global) -> Result<u8> {
    let format = global.format();
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(usage_error(
            format!("--alpha {} is outside (0, 1)", args.alpha),
            "0.05 is the usual choice",
        ));
    }
    if let Err((msg, hint)) = crate::config::check_resamples(args.resamples) {
        return Err(usage_error(format!("--{msg}"), hint));
    }
    let prep = super::prepare(&args.gold)?;
    if let Some(m) = prep.metrics.iter().find(|m| m.is_candidates()) {
        return Err(usage_error(
            format!("{m} scores a candidate list, and compare takes runs only"),
            format!(
                "to compare candidate lists, pass them as the runs and name the metric without the prefix ({})",
                m.of_final()
            ),
        ));
    }
    prep.warnings.emit(global.quiet);
    let (paths, names) = name_runs(&args.runs)?;
    let maps = chunk_maps(&args.chunks, &names)?;
    // Chunk maps first, one load per file. A failed load ends the list,
    // and is reported after the errors of the runs before it, as when each
    // run was read in turn.
    let mut loaded: Vec<(PathBuf, Arc<ChunkMap>)> = Vec::new();
    let mut run_chunks: Vec<Option<Arc<ChunkMap>>> = Vec::new();
    let mut map_error = None;
    for map in maps {
        let chunks = match map {
            None => None,
            Some(m) => match loaded.iter().find(|(p, _)| *p == m) {
                Some((_, c)) => Some(c.clone()),
                None => match ChunkMap::load(&m) {
                    Ok(c) => {
                        let c = Arc::new(c);
                        loaded.push((m, c.clone()));
                        Some(c)
                    }
                    Err(e) => {
                        map_error = Some(e);
                        break;
                    }
                },
            },
        };
        run_chunks.push(chunks);
    }
    // The runs are read side by side: each read splits a large file across
    // the threads already, and two at once keep both cores busy through
    // each one's serial parts (the split, the merge, the scores).
    let read: Vec<Result<(run::JudgedRun, Scores)>> = {
        use rayon::prelude::*;
        paths
            .par_iter()
            .zip(run_chunks.par_iter())
            .map(|(path, chunks)| {
                let opts = RunOptions {
                    format: args.gold.run_format.map(Into::into),
                    chunks: chunks.clone(),
                    ..Default::default()
                };
                let judged = run::read(path, &prep.gold, &prep.labels, &opts)?;
                let scores = Scores::compute(&prep.metrics, &judged.rankings, &prep.contexts);
                Ok((judged, scores))
            })
            .collect()
    };
    let mut columns: Vec<RunColumn> = Vec::new();
    for ((path, name), result) in paths.iter().zip(names).zip(read) {
        let (judged, scores) = result?;
        judged.warnings.emit(global.quiet);
        columns.push(RunColumn {
            name,
            path: path.display().to_string(),
            scores,
        });
    }
    if let Some(e) = map_error {
        return Err(e);
    }

    let settings = GateSettings {
        alpha: args.alpha,
        resamples: args.resamples,
        seed: args.seed,
        test: args.test.into(),
        weighting: args.weighting.into(),
        ..GateSettings::default()
    };
    let alternative = match args.alternative {
        AlternativeArg::TwoSided => Alternative::TwoSided,
        AlternativeArg::Less => Alternative::Less,
        AlternativeArg::Greater => Alternative::Greater,
    };
    if !global.quiet {
        let n = prep.gold.len();
        if n < SMALL_SAMPLE {
            eprintln!(
                "warning: only {}: resampling tests understate the uncertainty of so few; read the p-values as rough",
                count(n, "query", "queries")
            );
        } else if args.by_stratum {
            for (name, size) in prep.gold.strata.iter().zip(prep.gold.stratum_sizes()) {
                if size < SMALL_SAMPLE && size > 0 {
                    eprintln!(
                        "warning: stratum `{}` has only {}: its p-values are rough",
                        crate::escape::terminal(name),
                        count(size, "query", "queries")
                    );
                }
            }
        }
    }
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
    emit(global.output.as_deref(), &view.render(format)?)?;
    Ok(0)
}

/// Splits `NAME=PATH` arguments. An argument that names an existing file is
/// a path even when it holds `=`, and so is one whose part before `=` could
/// not be a name (`dir/a=b.jsonl`). Unnamed runs get [`run_names`].
fn name_runs(args: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<String>)> {
    let split: Vec<(Option<String>, PathBuf)> = args
        .iter()
        .map(|a| match a.to_str().and_then(|s| s.split_once('=')) {
            Some((name, path)) if !a.exists() && !path.is_empty() && valid_retriever_name(name) => {
                (Some(name.to_string()), PathBuf::from(path))
            }
            _ => (None, a.clone()),
        })
        .collect();
    let paths: Vec<PathBuf> = split.iter().map(|(_, p)| p.clone()).collect();
    let unnamed: Vec<PathBuf> = split
        .iter()
        .filter(|(n, _)| n.is_none())
        .map(|(_, p)| p.clone())
        .collect();
    let mut derived = run_names(&unnamed).into_iter();
    let explicit: Vec<String> = split.iter().filter_map(|(n, _)| n.clone()).collect();
    let names: Vec<String> = split
        .into_iter()
        .map(|(n, _)| n.unwrap_or_else(|| derived.next().unwrap_or_default()))
        .collect();
    // The same file twice is a fair sanity check; a name given twice is not.
    if let Some(dup) = explicit
        .iter()
        .find(|e| names.iter().filter(|n| n == e).count() > 1)
    {
        return Err(usage_error(
            format!("two runs are named `{dup}`"),
            "name each run: rgate compare --gold G v1=a.jsonl v2=b.jsonl",
        ));
    }
    Ok((paths, names))
}

/// The chunk map of each run, from `--chunks` arguments: `NAME=PATH` for
/// the run of that name; bare paths either one for every run not named, or
/// one per run in order (two chunkings compared side by side).
fn chunk_maps(args: &[PathBuf], names: &[String]) -> Result<Vec<Option<PathBuf>>> {
    let mut out: Vec<Option<PathBuf>> = vec![None; names.len()];
    let mut bare: Vec<PathBuf> = Vec::new();
    for a in args {
        match a.to_str().and_then(|s| s.split_once('=')) {
            Some((name, path)) if !a.exists() && !path.is_empty() && valid_retriever_name(name) => {
                let Some(i) = names.iter().position(|n| n == name) else {
                    return Err(usage_error(
                        format!(
                            "--chunks {}=...: no run is named `{}`",
                            escape::terminal(name),
                            escape::terminal(name)
                        ),
                        format!("the runs are named {}; name a run as NAME=PATH", names.join(", ")),
                    ));
                };
                if out[i].is_some() {
                    return Err(usage_error(
                        format!("--chunks names run `{}` twice", escape::terminal(name)),
                        "give each run one chunk map",
                    ));
                }
                out[i] = Some(PathBuf::from(path));
            }
            _ => bare.push(a.clone()),
        }
    }
    let unnamed = out.iter().filter(|m| m.is_none()).count();
    match bare.len() {
        0 => {}
        1 => {
            for m in out.iter_mut().filter(|m| m.is_none()) {
                *m = Some(bare[0].clone());
            }
        }
        n if n == names.len() && unnamed == names.len() => {
            out = bare.into_iter().map(Some).collect();
        }
        n => return Err(usage_error(
            format!("{n} unnamed --chunks maps for {} runs", names.len()),
            "give one map for every run, one per run in the runs' order, or name them: --chunks NAME=PATH",
        )),
    }
    Ok(out)
}

/// Short, distinct names for the runs: file stems (`bm25`), else file
/// names (`results.test`), else the paths as given.
fn run_names(paths: &[PathBuf]) -> Vec<String> {
    let distinct = |v: &Vec<String>| {
        let mut seen = HashSet::new();
        v.iter().all(|n| seen.insert(n.as_str()))
    };
    let stems: Vec<String> = paths
        .iter()
        .map(|p| {
            p.file_stem()
                .map_or_else(|| p.display().to_string(), |s| s.to_string_lossy().into_owned())
        })
        .collect();
    if distinct(&stems) {
        return stems;
    }
    let files: Vec<String> = paths
        .iter()
        .map(|p| {
            p.file_name()
                .map_or_else(|| p.display().to_string(), |s| s.to_string_lossy().into_owned())
        })
        .collect();
    if distinct(&files) {
        return files;
    }
    paths.iter().map(|p| p.display().to_string()).collect()
}
