//! `compare`: A/B (and A/B/C...) with paired significance tests. Every run
//! after the first is compared with the first, query by query.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;

use super::{prepare, GoldInput, RunSource};
use crate::chunks::ChunkMap;
use crate::compare::{compare as compare_scores, CompareRow, Correction, Family};
use crate::config::{check_alpha, check_resamples, valid_retriever_name, GateSettings, TestKind, Weighting};
use crate::diag::{count, usage_error, Warnings};
use crate::escape;
use crate::eval::Scores;
use crate::metrics::Metric;
use crate::prepared::Prepared;
use crate::run::{JudgedRun, RunFormat, RunOptions};
use crate::stats::Alternative;

/// The metrics a paired test can compare: one that cannot is refused when
/// named, and left out (and said so) when `all_trec` brought it.
fn comparable_only(mut prep: Prepared, asked: &[String], warnings: &mut Warnings) -> Result<Prepared> {
    let group = asked
        .iter()
        .any(|a| a.to_ascii_lowercase().contains(crate::metrics::ALL_TREC));
    let refused: Vec<Metric> = prep
        .metrics
        .iter()
        .copied()
        .filter(|m| m.paired_refusal().is_some())
        .collect();
    let Some(first) = refused.first() else {
        return Ok(prep);
    };
    if !group {
        let (msg, hint) = first.paired_refusal().unwrap_or_default();
        return Err(usage_error(msg, hint));
    }
    prep.metrics.retain(|m| m.paired_refusal().is_none());
    let names: Vec<String> = refused.iter().map(Metric::name).collect();
    warnings.0.push(format!(
        "all_trec's {} left out: {} text, where a paired test compares numbers",
        names.join(", "),
        if names.len() == 1 { "it is" } else { "they are" }
    ));
    Ok(prep)
}

/// Below this many queries the bootstrap understates the spread (it
/// resamples from the few values it has, and a sample of 5 rarely shows the
/// tails), so its intervals are too narrow; a warning says so.
const SMALL_SAMPLE: usize = 20;

/// One run to compare; unnamed runs are named after their files.
#[derive(Debug, Clone)]
pub struct CompareInput {
    pub name: Option<String>,
    pub source: RunSource,
}

/// What to compare, and how.
#[derive(Debug, Clone)]
pub struct CompareOptions {
    pub gold: GoldInput,
    /// Two or more; each after the first is compared with the first.
    pub runs: Vec<CompareInput>,
    /// Chunk maps: one for the run named, or, unnamed, either one for every
    /// run not named or one per run in order.
    pub chunks: Vec<(Option<String>, PathBuf)>,
    pub run_format: Option<RunFormat>,
    pub test: TestKind,
    pub resamples: u32,
    pub seed: u64,
    pub alternative: Alternative,
    /// Significance level; intervals are at 1 - alpha.
    pub alpha: f64,
    /// Also compare within each stratum.
    pub by_stratum: bool,
    pub weighting: Weighting,
    /// The correction across every row of every variant (one family).
    pub correction: Correction,
}

/// A run read and scored, as compare shows it.
pub struct RunColumn {
    pub name: String,
    pub path: String,
    pub scores: Scores,
    /// Under `labels: ppi`: the run scored on the model's grades.
    pub model: Option<Scores>,
    /// Under `labels: ppi`: each metric's PPI estimate of the mean over
    /// every query (`None` where there is none).
    pub ppi_means: Option<Vec<Option<f64>>>,
}

impl RunColumn {
    /// Metric `m`'s mean over every query as reports show it: the PPI
    /// estimate under `labels: ppi`, else the paired mean of its values.
    pub fn mean(&self, metrics: &[Metric], m: usize) -> f64 {
        if let Some(v) = self.ppi_means.as_ref().and_then(|p| p[m]) {
            return v;
        }
        let v = &self.scores.values[m];
        crate::metrics::paired_mean(&metrics[m], v, 0..v.len())
    }
}

/// The compared runs.
pub struct CompareRun {
    pub prep: Prepared,
    pub columns: Vec<RunColumn>,
    /// One list of rows per run after the first.
    pub comparisons: Vec<Vec<CompareRow>>,
    pub settings: GateSettings,
    pub alternative: Alternative,
    /// The family's correction, the ranking and the best variant.
    pub family: Family,
}

/// A `NAME=PATH` argument split into its name and path. An argument that
/// names an existing file is a path even when it holds `=`, and so is one
/// whose part before `=` holds a path separator (`dir/a=b.jsonl`). Any
/// other part before `=` is meant as a name, and one that is not allowed
/// is named in the error (issue 47: `a<b>=run.jsonl` was read as a path,
/// and the error said "cannot read run").
pub fn split_named(arg: &Path) -> Result<(Option<String>, PathBuf)> {
    match arg.to_str().and_then(|s| s.split_once('=')) {
        Some((name, path)) if !arg.exists() && !path.is_empty() && !name.is_empty() => {
            if valid_retriever_name(name) {
                return Ok((Some(name.to_string()), PathBuf::from(path)));
            }
            if name.contains(['/', '\\']) {
                return Ok((None, arg.to_path_buf()));
            }
            Err(usage_error(
                format!(
                    "run name `{}` in `{}` is not allowed",
                    escape::terminal(name),
                    escape::terminal(&arg.to_string_lossy())
                ),
                "names match [A-Za-z0-9][A-Za-z0-9._-]{0,63}; to pass a file whose name holds `=`, write it as ./PATH",
            ))
        }
        _ => Ok((None, arg.to_path_buf())),
    }
}

/// Reads and scores the runs, compares each after the first with the
/// first, and corrects every row of every variant as one family (SPEC
/// "Tuning knobs": with eight variants of no real difference, a correction
/// per variant would let one of them look better far more often than
/// alpha). Warnings go into `warnings` as they are found.
pub fn compare(opts: &CompareOptions, warnings: &mut Warnings) -> Result<CompareRun> {
    // Checked here, not only by the command line's parser: every front end
    // (the Python module's `compare(gold, {})`) reaches this, and with no
    // run there is no baseline to compare with (issue 41, item 6: it was
    // an index out of bounds).
    if opts.runs.len() < 2 {
        return Err(usage_error(
            format!(
                "compare takes two or more runs, and got {}: each run after the first is compared with the first",
                opts.runs.len()
            ),
            "pass the baseline's run first, then each run to compare with it",
        ));
    }
    if let Err((msg, hint)) = check_alpha(opts.alpha) {
        return Err(usage_error(format!("--{msg}"), hint));
    }
    if let Err((msg, hint)) = check_resamples(opts.resamples) {
        return Err(usage_error(format!("--{msg}"), hint));
    }
    let prep = prepare(&opts.gold)?;
    if let Some(m) = prep.metrics.iter().find(|m| m.is_candidates()) {
        return Err(usage_error(
            format!("{m} scores a candidate list, and compare takes runs only"),
            format!(
                "to compare candidate lists, pass them as the runs and name the metric without the prefix ({})",
                m.of_final()
            ),
        ));
    }
    let prep = comparable_only(prep, &opts.gold.metrics, warnings)?;
    warnings.0.extend(prep.warnings.iter().cloned());
    warnings.0.extend(crate::metrics::sum_note(&prep.metrics));
    let names = name_runs(&opts.runs)?;
    let columns = read_runs(&prep, opts, names, warnings)?;
    let settings = GateSettings {
        alpha: opts.alpha,
        resamples: opts.resamples,
        seed: opts.seed,
        test: opts.test,
        weighting: opts.weighting,
        ..GateSettings::default()
    };
    small_sample_warnings(&prep, opts.by_stratum, warnings);
    // One column per run, and there are two or more (checked above); an
    // error rather than an index, should that ever change.
    let Some((base, candidates)) = columns.split_first() else {
        anyhow::bail!("compare read no run");
    };
    let base = &base.scores;
    let mut comparisons: Vec<Vec<CompareRow>> = candidates
        .iter()
        .map(|cand| {
            compare_scores(
                &prep.gold,
                base,
                &cand.scores,
                &settings,
                opts.alternative,
                opts.by_stratum,
            )
        })
        .collect();
    if let Some(side) = &prep.ppi {
        for (cand, rows) in candidates.iter().zip(comparisons.iter_mut()) {
            if let (Some(bm), Some(cm)) = (&columns[0].model, &cand.model) {
                crate::ppi::compare_rows(
                    side,
                    &prep.gold,
                    (base, bm),
                    (&cand.scores, cm),
                    rows,
                    &settings,
                    opts.alternative,
                );
            }
        }
    }
    let scores: Vec<&Scores> = columns.iter().map(|c| &c.scores).collect();
    // Under `labels: ppi` the rows' tests ran on PPI terms, which the
    // re-test at a larger B would replace with plain ones: not re-run.
    let retest = if prep.ppi.is_some() {
        None
    } else {
        crate::compare::retest_at_floor(
            &prep.gold,
            base,
            &scores[1..],
            &mut comparisons,
            &settings,
            opts.alternative,
            opts.by_stratum,
        )
    };
    if let Some(r) = retest {
        let m: usize = comparisons.iter().map(Vec::len).sum();
        if r.rows > 0 {
            warnings.0.push(format!(
                "{} whose p sat at the Monte Carlo floor of B={} re-tested with B={} (in a family of {m} tests the smallest p must be below {})",
                count(r.rows, "row", "rows"),
                settings.resamples,
                r.resamples,
                crate::diag::number(opts.alpha / m as f64)
            ));
        }
        if r.still_bound {
            warnings.0.push(format!(
                "a family of {m} tests needs p below {}, and a Monte Carlo p cannot go below {} even at B={}: rows at that floor cannot be significant; use --test t-test, or fewer variants, metrics or strata",
                crate::diag::number(opts.alpha / m as f64),
                crate::diag::number(r.floor),
                r.resamples
            ));
        }
    }
    let mut family =
        crate::compare::family(&prep.gold, &scores, &mut comparisons, opts.correction, &settings);
    if prep.ppi.is_some() && family.runner_up.is_some() {
        // The runner-up claim re-tests the two best runs on their values as
        // scored, which under `labels: ppi` hold the model's unverified
        // grades: not claimed.
        family.runner_up = None;
        warnings.0.push(
            "labels: ppi: the best variant is not compared with the runner-up (that test has no PPI form here); each variant's rows against the baseline are PPI estimates".into(),
        );
    }
    Ok(CompareRun {
        prep,
        columns,
        comparisons,
        settings,
        alternative: opts.alternative,
        family,
    })
}

/// The file a run was read from.
fn path_of(source: &RunSource) -> &Path {
    source.path()
}

/// Reads and scores every run.
fn read_runs(
    prep: &Prepared,
    opts: &CompareOptions,
    names: Vec<String>,
    warnings: &mut Warnings,
) -> Result<Vec<RunColumn>> {
    let maps = chunk_maps(&opts.chunks, &names)?;
    let (run_chunks, map_error) = load_chunk_maps(maps);
    // The runs are read side by side: each read splits a large file across
    // the threads already, and two at once keep both cores busy through
    // each one's serial parts (the split, the merge, the scores).
    let read: Vec<Result<(JudgedRun, Scores, Option<Scores>)>> = {
        use rayon::prelude::*;
        opts.runs
            .par_iter()
            .zip(run_chunks.par_iter())
            .map(|(input, chunks)| {
                let run_opts = RunOptions {
                    format: opts.run_format,
                    chunks: chunks.clone(),
                    ..Default::default()
                };
                let judged = input.source.read(prep, &run_opts)?;
                let scores = Scores::compute(&prep.metrics, &judged.rankings, &prep.contexts);
                let model = match &prep.ppi {
                    Some(side) => {
                        let m = input.source.read(&side.model, &run_opts)?;
                        Some(Scores::compute(&prep.metrics, &m.rankings, &side.model.contexts))
                    }
                    None => None,
                };
                Ok((judged, scores, model))
            })
            .collect()
    };
    let mut columns: Vec<RunColumn> = Vec::new();
    for ((input, name), result) in opts.runs.iter().zip(names).zip(read) {
        let (judged, scores, model) = result?;
        warnings.0.extend(judged.warnings.iter().cloned());
        let ppi_means = match (&prep.ppi, &model) {
            (Some(side), Some(m)) => Some(
                crate::ppi::PpiSummary::compute(side, &prep.gold, &scores, m)
                    .all
                    .iter()
                    .map(|e| e.map(|e| e.mean))
                    .collect(),
            ),
            _ => None,
        };
        columns.push(RunColumn {
            name,
            path: path_of(&input.source).display().to_string(),
            scores,
            model,
            ppi_means,
        });
    }
    match map_error {
        Some(e) => Err(e),
        None => Ok(columns),
    }
}

/// Chunk maps, one load per file. A failed load ends the list, and is
/// reported after the errors of the runs before it, as when each run was
/// read in turn.
fn load_chunk_maps(maps: Vec<Option<PathBuf>>) -> (Vec<Option<Arc<ChunkMap>>>, Option<anyhow::Error>) {
    let mut loaded: Vec<(PathBuf, Arc<ChunkMap>)> = Vec::new();
    let mut run_chunks: Vec<Option<Arc<ChunkMap>>> = Vec::new();
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
                    Err(e) => return (run_chunks, Some(e)),
                },
            },
        };
        run_chunks.push(chunks);
    }
    (run_chunks, None)
}

/// Resampling tests on few queries give rough p-values.
fn small_sample_warnings(prep: &Prepared, by_stratum: bool, warnings: &mut Warnings) {
    let n = prep.gold.len();
    if n < SMALL_SAMPLE {
        warnings.push(format!(
            "only {}: resampling tests understate the uncertainty of so few; read the p-values as rough",
            count(n, "query", "queries")
        ));
    } else if by_stratum {
        for (name, size) in prep.gold.strata.iter().zip(prep.gold.stratum_sizes()) {
            if size < SMALL_SAMPLE && size > 0 {
                warnings.push(format!(
                    "stratum `{}` has only {}: its p-values are rough",
                    escape::terminal(name),
                    count(size, "query", "queries")
                ));
            }
        }
    }
}

/// The runs' names: as given, else [`run_names`] of the unnamed ones.
fn name_runs(runs: &[CompareInput]) -> Result<Vec<String>> {
    let unnamed: Vec<PathBuf> = runs
        .iter()
        .filter(|r| r.name.is_none())
        .map(|r| path_of(&r.source).to_path_buf())
        .collect();
    let mut derived = run_names(&unnamed).into_iter();
    let explicit: Vec<&String> = runs.iter().filter_map(|r| r.name.as_ref()).collect();
    let names: Vec<String> = runs
        .iter()
        .map(|r| {
            r.name
                .clone()
                .unwrap_or_else(|| derived.next().unwrap_or_default())
        })
        .collect();
    // The same file twice is a fair sanity check; a name given twice is not.
    if let Some(dup) = explicit
        .iter()
        .find(|e| names.iter().filter(|n| n == *e).count() > 1)
    {
        return Err(usage_error(
            format!("two runs are named `{dup}`"),
            "name each run: rgate compare --gold G v1=a.jsonl v2=b.jsonl",
        ));
    }
    Ok(names)
}

/// The chunk map of each run: a named one for the run of that name; bare
/// paths either one for every run not named, or one per run in order (two
/// chunkings compared side by side).
fn chunk_maps(args: &[(Option<String>, PathBuf)], names: &[String]) -> Result<Vec<Option<PathBuf>>> {
    let mut out: Vec<Option<PathBuf>> = vec![None; names.len()];
    let mut bare: Vec<PathBuf> = Vec::new();
    for (name, path) in args {
        let Some(name) = name else {
            bare.push(path.clone());
            continue;
        };
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
        out[i] = Some(path.clone());
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
