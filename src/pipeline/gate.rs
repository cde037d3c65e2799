//! The gate: every selected retriever's current run, read (or produced by
//! its command), judged, scored and decided against its baseline.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;

use super::{RunSource, Watch};
use crate::baseline::{Baseline, HistoryEntry, Store, THIS_RUN};
use crate::chunks::ChunkMap;
use crate::config::{Candidates, Config, Retriever};
use crate::diag::{input_error_hint, name_some, usage_error};
use crate::eval::{Scores, Summary};
use crate::gate::{self, Current, GateOutcome};
use crate::gitref::GitRef;
use crate::gold::GoldSet;
use crate::origin::{current_commit, now_utc, Ci};
use crate::prepared::Prepared;
use crate::retriever;
use crate::retriever::RetrieverCommand;
use crate::run::{JudgedRun, KeepIds, RunFormat, RunOptions};
use crate::stages;

/// One retriever's current run, judged and scored.
pub struct Evaluated {
    pub name: String,
    pub judged: JudgedRun,
    /// The candidate list the run was reranked from, with every id kept.
    pub candidates: Option<JudgedRun>,
    pub scores: Scores,
    /// Per gold query, final results absent from the candidates.
    pub absent: Vec<(usize, Vec<String>)>,
    /// With `labels: ppi`: the run scored on the model's grades, over the
    /// model side's queries ([`crate::prepared::PpiSide`]).
    pub ppi: Option<Scores>,
}

/// What replaces a retriever's configured run, candidate list and chunk
/// map (the command line's `--run`, `--candidates` and `--chunks
/// NAME=PATH`); the last entry for a name wins.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub runs: Vec<(String, RunSource)>,
    pub candidates: Vec<(String, RunSource)>,
    pub chunks: Vec<(String, PathBuf)>,
}

/// What to gate.
#[derive(Debug, Clone, Default)]
pub struct GateOptions {
    /// Retrievers to gate; none means every configured one.
    pub names: Vec<String>,
    pub overrides: Overrides,
    /// Read the baselines as they are at this git ref.
    pub baseline_ref: Option<String>,
    /// A retriever without a baseline is an error instead of a pass.
    pub require_baseline: bool,
    /// The CI job this runs in (`--record` stores its commit), built by the
    /// caller: the library reads no environment.
    pub ci: Option<Ci>,
    /// For a report that shows what came back instead of each lost query
    /// and the trend (HTML): keep each run's top ids and read each
    /// retriever's history. Off by default: a run's ids cost memory
    /// (700,000 strings for 7,000 queries at depth 100).
    pub detail: bool,
    /// With `detail`: chunk texts (JSONL `{"id", "text"}`) to show beside
    /// each lost query's top ids.
    pub corpus: Option<PathBuf>,
}

/// A finished gate: its decision, and what it was decided from (kept for
/// [`GateRun::record`]).
pub struct GateRun {
    pub prep: Prepared,
    pub runs: Vec<Evaluated>,
    pub outcome: GateOutcome,
    ci: Option<Ci>,
}

/// Gates the selected retrievers against their baselines.
pub fn gate(config: &Config, opts: &GateOptions, watch: &dyn Watch) -> Result<GateRun> {
    let selected = config.select(&opts.names)?;
    check_baseline_dir(config)?;
    let prep = prepare(config)?;
    let runs = evaluate_runs(config, &prep, &selected, &opts.overrides, opts.detail, watch)?;
    let at_ref = match &opts.baseline_ref {
        Some(rev) => Some(GitRef::resolve(&config.baselines, rev)?),
        None => None,
    };
    let outcome = decide(
        config,
        &prep,
        &runs,
        opts.require_baseline,
        false,
        at_ref.as_ref(),
    )?;
    let mut outcome = outcome;
    if opts.detail {
        attach_history(config, &prep, &runs, &mut outcome);
        if let Some(corpus) = &opts.corpus {
            attach_texts(corpus, &mut outcome)?;
        }
    }
    Ok(GateRun {
        prep,
        runs,
        outcome,
        ci: opts.ci.clone(),
    })
}

impl GateRun {
    /// Appends each retriever's result to its history (`gate --record`).
    pub fn record(&self, config: &Config, watch: &dyn Watch) -> Result<()> {
        let store = Store::new(&config.baselines);
        // Asked of git before any lock: see `BaselineUpdate`'s `commit`.
        let commit = current_commit(self.ci.as_ref(), config.path.parent().unwrap_or(Path::new(".")));
        for (e, r) in self.runs.iter().zip(&self.outcome.retrievers) {
            let lock = store.lock(&e.name, config.gate.lock_timeout, &mut |m: &str| {
                watch.lock_wait(m)
            })?;
            store.append_history(
                &lock,
                &history_entry(
                    &self.prep,
                    e,
                    "gate",
                    None,
                    Some(r.verdict().name()),
                    commit.clone(),
                ),
            )?;
        }
        Ok(())
    }
}

/// The config's gold set, checked against its rules, with its metrics.
pub fn prepare(config: &Config) -> Result<Prepared> {
    let (gold, mut warnings) = GoldSet::load(&config.gold, config.strata.as_deref())?;
    config.check_against_gold(&gold.path, &gold.strata)?;
    warnings.0.extend(crate::metrics::sum_note(&config.metrics));
    Ok(Prepared::labeled(
        gold,
        warnings,
        config.metrics.clone(),
        config.relevance_level,
        config.labels,
    )?
    .with_span_coverage(config.span_coverage))
}

/// What a retriever's run (or candidate list) is read from.
struct Source<'a> {
    name: &'a str,
    file: Option<&'a RunSource>,
    cmd: Option<&'a RetrieverCommand>,
    /// "run" or "candidate list".
    what: &'a str,
}

/// Reads a run, or runs a retriever command and reads its output; under
/// `labels: ppi` judged a second time on the model's grades (the same
/// file or output: a command runs once).
fn read_source(
    src: &Source,
    prep: &Prepared,
    opts: &RunOptions,
    watch: &dyn Watch,
) -> Result<(JudgedRun, Option<JudgedRun>)> {
    let side = |source: &RunSource, opts: &RunOptions| -> Result<Option<JudgedRun>> {
        match &prep.ppi {
            Some(side) => {
                let quiet = RunOptions {
                    keep_ids: KeepIds::None,
                    ..opts.clone()
                };
                Ok(Some(source.read(&side.model, &quiet)?))
            }
            None => Ok(None),
        }
    };
    let (name, what) = (src.name, src.what);
    let cmd = match (src.file, src.cmd) {
        (Some(file), _) => return Ok((file.read(prep, opts)?, side(file, opts)?)),
        (None, Some(cmd)) => cmd,
        (None, None) => {
            return Err(usage_error(
                format!("retriever `{name}` has no {what} to read"),
                "give it a file or a command in the config",
            ))
        }
    };
    let label = if what == "run" {
        format!("retriever {name}")
    } else {
        format!("retriever {name} ({what})")
    };
    let mut tick = watch.command_started(&label, prep.gold.len());
    let out = retriever::run(name, cmd, &prep.gold, &mut |n| tick(n));
    drop(tick);
    let out = out?;
    let opts = RunOptions {
        format: Some(opts.format.unwrap_or(RunFormat::Jsonl)),
        ..opts.clone()
    };
    let output = RunSource::File(out.path().to_path_buf());
    let mut judged = output.read(prep, &opts).map_err(|e| {
        usage_error(
            format!(
                "retriever `{name}`: the output of `{}` is not a {what}: {e}{}",
                cmd.argv.join(" "),
                retriever::stderr_note(&out.stderr_tail)
            ),
            "the command must write JSON lines {\"query_id\": ..., \"results\": [...]} on stdout, and nothing else",
        )
    })?;
    judged.path = PathBuf::from(format!("command: {}", cmd.argv.join(" ")));
    let model = side(&output, &opts)?;
    Ok((judged, model))
}

/// Every override names a configured retriever among those selected.
fn check_overrides(config: &Config, selected: &[&Retriever], overrides: &Overrides) -> Result<()> {
    let runs = overrides.runs.iter().map(|(n, _)| n);
    let candidates = overrides.candidates.iter().map(|(n, _)| n);
    let chunks = overrides.chunks.iter().map(|(n, _)| n);
    let named: [(&str, Vec<&String>); 3] = [
        ("--run", runs.collect()),
        ("--candidates", candidates.collect()),
        ("--chunks", chunks.collect()),
    ];
    for (flag, list) in named {
        for name in list {
            config.retriever(name)?;
            if !selected.iter().any(|r| &r.name == name) {
                return Err(usage_error(
                    format!(
                        "{flag} {0}=...: `{0}` is not among the retrievers selected",
                        crate::escape::terminal(name)
                    ),
                    "name it as a positional argument too, or drop the override",
                ));
            }
        }
    }
    Ok(())
}

/// The last override for `name`.
fn pick<'a, T>(list: &'a [(String, T)], name: &str) -> Option<&'a T> {
    list.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v)
}

/// Reads the selected retrievers' runs (with their overrides), keeping
/// ranked ids to the depth a baseline stores when `for_baseline`, and their
/// candidate lists where they name one, keeping every id. The gate alone
/// reads a run's ids only to compare them with its candidate list; a run
/// without one keeps none (700,000 strings for 7,000 queries at depth 100)
/// unless `for_baseline` asks for them (a baseline stores them; a detailed
/// report shows them).
pub fn evaluate_runs(
    config: &Config,
    prep: &Prepared,
    selected: &[&Retriever],
    overrides: &Overrides,
    for_baseline: bool,
    watch: &dyn Watch,
) -> Result<Vec<Evaluated>> {
    check_overrides(config, selected, overrides)?;
    prep.hashing_beside(|| {
        selected
            .iter()
            .map(|r| evaluate_one(config, prep, r, overrides, for_baseline, watch))
            .collect()
    })
}

/// One retriever's run and candidate list, read, checked and scored.
fn evaluate_one(
    config: &Config,
    prep: &Prepared,
    r: &Retriever,
    overrides: &Overrides,
    for_baseline: bool,
    watch: &dyn Watch,
) -> Result<Evaluated> {
    let keep = match config.depth() {
        Some(d) => KeepIds::Depth(d),
        None => KeepIds::All,
    };
    // Only span labels need a chunk map; a gold set without them does not
    // pay for reading one.
    let chunks = match pick(&overrides.chunks, &r.name).or(r.chunks.as_ref()) {
        Some(p) if prep.gold.has_spans() => Some(Arc::new(ChunkMap::load(p)?)),
        _ => None,
    };
    let cand_override = pick(&overrides.candidates, &r.name);
    let two_stage = r.candidates.is_some() || cand_override.is_some();
    let opts = RunOptions {
        format: r.run_format,
        keep_ids: if for_baseline || two_stage {
            keep
        } else {
            KeepIds::None
        },
        chunks,
    };
    let configured = RunSource::File(r.run.clone());
    let file = pick(&overrides.runs, &r.name).or_else(|| r.command.is_none().then_some(&configured));
    let run = Source {
        name: &r.name,
        file,
        cmd: r.command.as_ref(),
        what: "run",
    };
    let (judged, judged_model) = read_source(&run, prep, &opts, watch)?;
    check_coverage(config, prep, &judged)?;
    let (candidates, candidates_model) = match read_candidates(prep, r, cand_override, &judged, &opts, watch)?
    {
        Some((c, m)) => (Some(c), m),
        None => (None, None),
    };
    // `candidates:` metrics apply only to a retriever that names its
    // candidate list.
    let metrics = match &candidates {
        Some(_) => prep.metrics.clone(),
        None => crate::metrics::final_only(&prep.metrics),
    };
    let scores = Scores::compute_stages(
        &metrics,
        &judged.rankings,
        candidates.as_ref().map(|c| c.rankings.as_slice()),
        &prep.contexts,
    );
    let absent = match (&candidates, &judged.top_ids) {
        (Some(c), Some(f)) => c
            .top_ids
            .as_ref()
            .map(|ci| stages::absent_from_candidates(f, ci))
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let ppi = match (&prep.ppi, judged_model) {
        (Some(side), Some(run)) => Some(Scores::compute_stages(
            &metrics,
            &run.rankings,
            candidates_model.as_ref().map(|c| c.rankings.as_slice()),
            &side.model.contexts,
        )),
        _ => None,
    };
    Ok(Evaluated {
        name: r.name.clone(),
        judged,
        candidates,
        scores,
        absent,
        ppi,
    })
}

/// A retriever's candidate list, where it names one (or one is given),
/// read with every id kept and checked to answer the run's queries.
fn read_candidates(
    prep: &Prepared,
    r: &Retriever,
    cand_override: Option<&RunSource>,
    judged: &JudgedRun,
    run_opts: &RunOptions,
    watch: &dyn Watch,
) -> Result<Option<(JudgedRun, Option<JudgedRun>)>> {
    let configured = match &r.candidates {
        Some(Candidates::File(p)) => Some(RunSource::File(p.clone())),
        _ => None,
    };
    let file = cand_override.or(configured.as_ref());
    let cmd = match &r.candidates {
        Some(Candidates::Command(c)) => Some(c),
        _ => None,
    };
    if file.is_none() && cmd.is_none() {
        return Ok(None);
    }
    // One chunking serves both stages.
    let opts = RunOptions {
        format: None,
        keep_ids: KeepIds::All,
        chunks: run_opts.chunks.clone(),
    };
    let src = Source {
        name: &r.name,
        file,
        cmd,
        what: "candidate list",
    };
    let (c, model) = read_source(&src, prep, &opts, watch)?;
    stages::check_same_queries(&prep.gold, &judged.path, &judged.present, &c.path, &c.present)?;
    Ok(Some((c, model)))
}

/// A run that answers none of the gold queries, or leaves out more than
/// `gate.max_missing` of them, means the retriever step broke (a crash, a
/// truncated file, the wrong query set): exit 2, not a "regression" that
/// sends someone hunting for a quality drop. Fewer absent queries score 0
/// with a warning, as trec_eval's `-c` does.
fn check_coverage(config: &Config, prep: &Prepared, run: &JudgedRun) -> Result<()> {
    let total = prep.gold.len();
    let missing: Vec<&str> = run.missing().map(|i| prep.gold.queries[i].id.as_str()).collect();
    if total == 0 || missing.is_empty() {
        return Ok(());
    }
    let max = config.gate.max_missing;
    let share = missing.len() as f64 / total as f64;
    let message = if missing.len() == total {
        format!("the run covers none of the {total} gold queries")
    } else if share > max {
        format!(
            "the run misses {} of the {total} gold queries ({:.1}%, more than gate.max_missing {max} allows): {}",
            missing.len(),
            share * 100.0,
            name_some(&missing, 5)
        )
    } else {
        return Ok(());
    };
    Err(input_error_hint(
        &run.path,
        None,
        message,
        format!(
            "check that the retriever step finished and ran on the gold set's queries ({}); to accept a partial run, raise gate.max_missing in {}",
            prep.gold.path.display(),
            config.path.display()
        ),
    ))
}

/// Labelled queries on which a baseline met the gold set's labels before
/// a run that meets (almost) none of them is taken to show ids that no
/// longer match: a real retriever that found a labelled chunk for this
/// many queries does not lose every one of them in one change. Fewer (a
/// sparse gold set, a young retriever) and a collapse to 0 stays a verdict.
pub const MEET_MIN_QUERIES: usize = 10;

/// How far a run's labelled coverage (queries where some retrieved chunk
/// carries a label) may collapse against its baseline's before the run
/// and the gold set are taken to have stopped meeting: to at most one
/// query in twenty of those the baseline met.
pub const MEET_COLLAPSE: usize = 20;

/// Metrics whose value is above 0 only when a retrieved chunk carries a
/// label: a baseline's stored value above 0 shows it met the gold set it
/// was recorded on.
fn needs_a_label(m: &crate::metrics::Metric) -> bool {
    use crate::metrics::Kind::*;
    !m.is_candidates()
        && matches!(
            m.kind,
            Recall | HitRate | Precision | Mrr | Ndcg | Map | RPrecision | Judged | NumRelRet | Err
        )
}

/// A gate whose run and gold set no longer spell chunks the same way (ids
/// renamed, re-cased, another chunking) scores every query 0 on both sides
/// of the comparison once the baseline is re-scored, and then passes
/// anything: 0 against 0 is "no change". Here that is an error (exit 2),
/// not a verdict: when the baseline met the labels (any grade, as judged@k
/// counts them) on at least [`MEET_MIN_QUERIES`] of the gold set's labelled
/// queries the run answers, as recorded or re-judged on the current gold
/// set, and the run meets them on at most one in [`MEET_COLLAPSE`] of
/// that many. Without a baseline nothing is checked (the gate passes with
/// a warning anyway).
fn check_labels_meet(prep: &Prepared, e: &Evaluated, baseline: Option<&Baseline>) -> Result<()> {
    let Some(b) = baseline else {
        return Ok(());
    };
    let labelled: Vec<usize> = (0..prep.gold.len())
        .filter(|&i| e.judged.present.get(i).copied().unwrap_or(false))
        .filter(|&i| prep.gold.queries[i].label_count() > 0)
        .collect();
    if labelled.len() < MEET_MIN_QUERIES {
        return Ok(());
    }
    let meets =
        |r: &crate::judge::Ranking| !r.hits.is_empty() || r.chunks.as_ref().is_some_and(|c| !c.is_empty());
    let met_now = labelled.iter().filter(|&&i| meets(&e.judged.rankings[i])).count();
    // The baseline's stored rankings, judged on the current labels (chunk
    // ids only: span labels are judged by where chunks lie, which the
    // current run's rankings above already account for).
    let pos = b.positions();
    let stored = |i: usize| pos.get(prep.gold.queries[i].id.as_str()).map(|&s| &b.queries[s]);
    let base_ids = |i: usize| -> Option<&[String]> { stored(i).map(|q| q.ranking.as_slice()) };
    let met_base = (!prep.gold.has_spans()).then(|| {
        labelled
            .iter()
            .filter(|&&i| {
                base_ids(i)
                    .is_some_and(|ids| ids.iter().any(|id| prep.labels[i].grade(id.as_bytes()).is_some()))
            })
            .count()
    });
    // As recorded: on the gold set of its own fingerprint, which may be
    // another one than today's.
    let telling: Vec<usize> = b
        .metrics
        .iter()
        .enumerate()
        .filter(|(_, m)| needs_a_label(m))
        .map(|(mi, _)| mi)
        .collect();
    let met_recorded = labelled
        .iter()
        .filter(|&&i| {
            stored(i).is_some_and(|q| {
                telling
                    .iter()
                    .any(|&mi| q.values.get(mi).is_some_and(|&v| v > 0.0))
            })
        })
        .count();
    let reference = met_base.unwrap_or(0).max(met_recorded);
    if reference < MEET_MIN_QUERIES || met_now * MEET_COLLAPSE > reference {
        return Ok(());
    }
    // Would the ids meet if case did not matter? Asked of the ids at hand:
    // the run's where it kept them, else the baseline's stored rankings.
    let folded_hit = |i: usize| -> Option<(String, String)> {
        let ids: &[String] = match &e.judged.top_ids {
            Some(t) => t.get(i)?,
            None => base_ids(i)?,
        };
        let q = &prep.gold.queries[i];
        q.labels.iter().find_map(|l| {
            let lower = l.id.to_lowercase();
            ids.iter()
                .find(|id| id.as_str() != l.id && id.to_lowercase() == lower)
                .map(|id| (id.clone(), l.id.to_string()))
        })
    };
    let folded: Vec<(String, String)> = labelled.iter().filter_map(|&i| folded_hit(i)).collect();
    let gold = crate::escape::path(&prep.gold.path);
    let n = labelled.len();
    let what = if met_now == 0 {
        "no chunk the run retrieved carries a label".to_string()
    } else {
        format!("the run retrieves a labelled chunk on only {met_now}")
    };
    let mut msg = format!(
        "{what} of the gold set {gold}, on the {n} labelled queries it answers, where the baseline met labels on {reference}: the run's chunk ids and the gold set's no longer meet (ids renamed, re-cased, or another chunking), and a gate on them would read about 0 against 0 and pass anything"
    );
    if b.gold_fingerprint != prep.fingerprint() {
        msg += &format!(
            "; the gold set changed since the baseline was recorded (it met labels on {met_recorded} then), and re-scored on it the baseline's stored rankings meet a label on {}",
            met_base.map_or("(not known: span labels)".to_string(), |m| m.to_string())
        );
    }
    if let Some((run_id, label_id)) = folded.first() {
        msg += &format!(
            "; a case-insensitive match would hit on {} of them (retrieved `{}`, labelled `{}`): the ids were re-cased",
            folded.len(),
            crate::escape::terminal(run_id),
            crate::escape::terminal(label_id)
        );
    }
    Err(input_error_hint(
        &e.judged.path,
        None,
        msg,
        format!(
            "spell the chunk ids the same way in the run and in {gold} (re-export the gold set with the ids the retriever returns, or map the run's ids back); if the chunking changed, label the new chunks (`rgate gold pool --holes`) and record new baselines with `rgate baseline update`"
        ),
    ))
}

/// `gate` compares against the baseline directory: when it does not exist,
/// every retriever would "have no baseline" and pass, so a typo in
/// `baselines:` would switch the gate off. `baseline update` creates it.
fn check_baseline_dir(config: &Config) -> Result<()> {
    if config.baselines.is_dir() {
        return Ok(());
    }
    Err(input_error_hint(
        &config.baselines,
        None,
        format!(
            "the baseline directory does not exist (`baselines:` in {})",
            config.path.display()
        ),
        "record the first baselines with `rgate baseline update` (it creates the directory) and commit them; or fix the `baselines:` path",
    ))
}

/// The gate's decision for already-evaluated runs.
/// `recording`: the caller is about to record baselines, so a missing one
/// needs no advice on how to record it.
pub fn decide(
    config: &Config,
    prep: &Prepared,
    runs: &[Evaluated],
    require_baseline: bool,
    recording: bool,
    at_ref: Option<&GitRef>,
) -> Result<GateOutcome> {
    let store = Store::new(&config.baselines);
    let mut baselines = Vec::with_capacity(runs.len());
    for e in runs {
        let baseline = match at_ref {
            Some(r) => r.load_baseline(&store, &e.name)?,
            None => store.load(&e.name)?,
        };
        if baseline.is_none() && require_baseline {
            return Err(input_error_hint(
                &store.baseline_path(&e.name),
                None,
                format!("no baseline for `{}` (--require-baseline)", e.name),
                format!("record one with `rgate baseline update {}`", e.name),
            ));
        }
        baselines.push(baseline);
    }
    if !recording {
        for (e, baseline) in runs.iter().zip(&baselines) {
            check_labels_meet(prep, e, baseline.as_ref())?;
        }
    }
    let inputs: Vec<gate::Input> = runs
        .iter()
        .zip(&baselines)
        .map(|(e, baseline)| gate::Input {
            current: Current {
                name: &e.name,
                run: e.judged.path.display().to_string(),
                rankings: &e.judged.rankings,
                scores: &e.scores,
                candidates: e.candidates.as_ref().and_then(|c| {
                    Some(gate::CurrentCandidates {
                        path: c.path.display().to_string(),
                        rankings: &c.rankings,
                        ids: c.top_ids.as_deref()?,
                    })
                }),
                ppi: e.ppi.as_ref(),
            },
            baseline: baseline.as_ref(),
        })
        .collect();
    let outcomes = gate::evaluate_all(prep, &config.gate, &inputs);
    let mut retrievers = Vec::with_capacity(runs.len());
    for ((e, baseline), mut outcome) in runs.iter().zip(&baselines).zip(outcomes) {
        outcome.warnings = run_warnings(prep, e, std::mem::take(&mut outcome.warnings));
        if let (Some(b), Some(ids)) = (baseline, &e.judged.top_ids) {
            attach_tops(config, prep, b, ids, &mut outcome.flips);
        }
        if let Some(st) = outcome.stages.as_mut() {
            st.absent = e
                .absent
                .iter()
                .map(|(q, ids)| (prep.gold.queries[*q].id.clone(), ids.clone()))
                .collect();
        }
        if baseline.is_none() && !recording {
            outcome.warnings.push(format!(
                "no baseline for `{}` at {}: it passes for now; record one with `rgate baseline update {}`",
                e.name,
                store.baseline_path(&e.name).display(),
                e.name
            ));
        }
        retrievers.push(outcome);
    }
    // The judge is about the gold set, not a run: it gates `gate`, and
    // leaves `baseline update` (recording) to the retrievers' verdicts.
    let judge = if recording {
        None
    } else {
        // The gold set as loaded: `prep.gold` is a view of it whenever it
        // holds model grades, and people's labels of the verified queries
        // are what the model is measured against, whatever the labels mode.
        let gold = prep.source.as_deref().unwrap_or(&prep.gold);
        gate::JudgeCheck::of(gold, config.relevance_level, &config.gate.judge)
    };
    let mut warnings = prep.warnings.0.clone();
    warnings.extend(judge.as_ref().and_then(|j| j.warning()).map(str::to_string));
    Ok(GateOutcome {
        settings: config.gate.clone(),
        labels: prep.label_mode,
        retrievers,
        warnings,
        judge,
        recorded: None,
    })
}

/// Each lost query's top k in the baseline and now: the ids a reviewer
/// compares to see what came back instead. k is the largest cutoff among
/// the final metrics that lost the query (a query lost on hit_rate@3 alone
/// shows its top 3), else the largest of a gated final metric, else 10.
fn attach_tops(
    config: &Config,
    prep: &Prepared,
    b: &Baseline,
    ids: &[Vec<String>],
    flips: &mut [gate::Flip],
) {
    let k = config
        .gate
        .rules
        .iter()
        .filter(|r| !r.metric.is_candidates())
        .filter_map(|r| r.metric.cutoff)
        .max()
        .unwrap_or(10) as usize;
    let stored = b.positions();
    let index: std::collections::HashMap<&str, usize> = prep
        .gold
        .queries
        .iter()
        .enumerate()
        .map(|(i, q)| (q.id.as_str(), i))
        .collect();
    for f in flips {
        let (Some(&q), Some(&s)) = (index.get(f.query_id.as_str()), stored.get(f.query_id.as_str())) else {
            continue;
        };
        let k = f
            .lost
            .iter()
            .filter_map(|m| m.parse::<crate::metrics::Metric>().ok())
            .filter(|m| !m.is_candidates())
            .filter_map(|m| m.cutoff)
            .max()
            .map_or(k, |c| c as usize);
        let top = |list: &[String]| list.iter().take(k).cloned().collect::<Vec<String>>();
        let baseline = top(&b.queries[s].ranking);
        let current = ids.get(q).map(|l| top(l)).unwrap_or_default();
        let mut relevant: Vec<String> = Vec::new();
        for id in baseline.iter().chain(&current) {
            let rel = prep.labels[q]
                .grade(id.as_bytes())
                .is_some_and(|g| crate::judge::is_relevant(g, prep.relevance_level));
            if rel && !relevant.contains(id) {
                relevant.push(id.clone());
            }
        }
        f.top = Some(gate::FlipTop {
            k,
            baseline,
            current,
            relevant,
            texts: Default::default(),
        });
    }
}

/// The corpus text of every id a lost query's top k shows, read in one pass
/// over the corpus (which may be larger than memory).
fn attach_texts(corpus: &Path, outcome: &mut GateOutcome) -> Result<()> {
    let texts = {
        let wanted: std::collections::HashSet<&str> = outcome
            .retrievers
            .iter()
            .flat_map(|r| &r.flips)
            .filter_map(|f| f.top.as_ref())
            .flat_map(|t| t.baseline.iter().chain(&t.current))
            .map(String::as_str)
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        crate::goldbuild::pool::corpus_texts(corpus, &wanted)?
    };
    for top in outcome
        .retrievers
        .iter_mut()
        .flat_map(|r| &mut r.flips)
        .filter_map(|f| f.top.as_mut())
    {
        for id in top.baseline.iter().chain(&top.current) {
            if let Some(t) = texts.get(id) {
                top.texts.insert(id.clone(), t.clone());
            }
        }
    }
    Ok(())
}

/// Each retriever's recorded history, for the report's trend, and this
/// run's entry to end it with (the one `--record` appends, which happens
/// after the report is built); a history that cannot be read becomes a
/// warning (the gate's verdict does not need it).
fn attach_history(config: &Config, prep: &Prepared, runs: &[Evaluated], outcome: &mut GateOutcome) {
    let store = Store::new(&config.baselines);
    for (e, r) in runs.iter().zip(&mut outcome.retrievers) {
        match store.history(&r.name) {
            Ok(h) => r.history = h,
            Err(err) => r.warnings.push(format!("no trend in this report: {err:#}")),
        }
        let verdict = r.verdict().name();
        r.current = Some(history_entry(prep, e, THIS_RUN, None, Some(verdict), None));
    }
}

/// What the run reader noticed (absent queries above all) belongs in the
/// report a reviewer reads, first; then the gate's own warnings.
fn run_warnings(prep: &Prepared, e: &Evaluated, mut gate_warnings: Vec<String>) -> Vec<String> {
    let mut out = e.judged.warnings.0.clone();
    if let Some(c) = &e.candidates {
        out.extend(c.warnings.0.iter().cloned());
        out.extend(stages::absent_warning(
            &prep.gold,
            &e.judged.path,
            &c.path,
            &e.absent,
        ));
    }
    out.append(&mut gate_warnings);
    out
}

/// A history line for a result.
pub fn history_entry(
    prep: &Prepared,
    e: &Evaluated,
    kind: &str,
    note: Option<String>,
    verdict: Option<&str>,
    commit: Option<String>,
) -> HistoryEntry {
    let summary = summary_of(prep, e);
    let scopes = summary.scope_means();
    HistoryEntry {
        time: now_utc(),
        commit,
        kind: kind.to_string(),
        note,
        gold_fingerprint: Some(prep.fingerprint().to_string()),
        verdict: verdict.map(str::to_string),
        run: Some(e.judged.path.display().to_string()),
        aggregates: HistoryEntry::aggregates_of(&e.scores.metrics, &scopes),
    }
}

/// A run's means as a baseline or its history records them: under
/// `labels: ppi`, the PPI estimates (what eval prints for the run).
pub fn summary_of(prep: &Prepared, e: &Evaluated) -> Summary {
    let mut summary = Summary::new(&e.scores, &prep.gold);
    if let (Some(side), Some(model)) = (&prep.ppi, &e.ppi) {
        crate::ppi::PpiSummary::compute(side, &prep.gold, &e.scores, model).apply(&mut summary);
    }
    summary
}
